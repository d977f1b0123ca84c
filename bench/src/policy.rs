//! The measurements behind `EigBackend::Auto`: every CPU backend of `eigh` (vectors) and
//! `eigvalsh` (values only) on random Hermitian matrices, f64 and c64, n = 64 to 1000,
//! all / the lowest 10 % / the lowest 50 %, on 1 and 2 threads (median of 3), with the
//! backend `Auto` picks and its time against the fastest.

use std::hint::black_box;

use ctensor::{eigh, eigvalsh, set_num_threads, DataType, EigBackend, EighRange, Tensor};
use rand::rngs::StdRng;

use crate::harness::{median_of, us};

pub fn eigh_policy(rng: &mut StdRng) -> String {
    let mut out = String::from(
        "\n### eigh policy: each backend, and `Auto` (the default) against the fastest (median of 3)\n\n\
         | dtype | n | threads | range | vectors | LapackEvd | LapackEvr | Faer | Auto | Auto / fastest |\n\
         |---|---:|---:|---|---|---:|---:|---:|---:|---:|\n",
    );
    print!("{out}");
    for dtype in [DataType::Double, DataType::ComplexDouble] {
        for n in [64usize, 200, 500, 1000] {
            let h = crate::harness::hermitian(rng, n);
            let a = Tensor::from_slice(&h, &[n, n])
                .unwrap()
                .cast(dtype)
                .unwrap();
            for threads in [1usize, 2] {
                set_num_threads(threads).unwrap();
                faer::set_global_parallelism(if threads > 1 {
                    faer::Par::rayon(threads)
                } else {
                    faer::Par::Seq
                });
                let ranges = [
                    ("all", EighRange::All),
                    ("lowest 10 %", EighRange::Index(0, n / 10)),
                    ("lowest 50 %", EighRange::Index(0, n / 2)),
                ];
                for (name, range) in ranges {
                    for vectors in [true, false] {
                        let time = |b: EigBackend| {
                            median_of(3, || {
                                if vectors {
                                    drop(black_box(eigh(&a, range, b).unwrap()))
                                } else {
                                    drop(black_box(eigvalsh(&a, range, b).unwrap()))
                                }
                            })
                        };
                        let t = [
                            EigBackend::LapackEvd,
                            EigBackend::LapackEvr,
                            EigBackend::Faer,
                        ]
                        .map(time);
                        let auto = time(EigBackend::Auto);
                        let best = t.iter().copied().fold(f64::MAX, f64::min);
                        let line = format!(
                            "| {dtype} | {n} | {threads} | {name} | {} | {} | {} | {} | {} | {:.3} |\n",
                            if vectors { "yes" } else { "no" },
                            us(t[0]),
                            us(t[1]),
                            us(t[2]),
                            us(auto),
                            auto / best
                        );
                        print!("{line}");
                        out.push_str(&line);
                    }
                }
            }
        }
    }
    set_num_threads(2).unwrap();
    out
}
