//! The memory layer: the bookkeeping of `MirroredTensor::read` on a current copy (the
//! goal is under 100 ns), and the caching pool's bookkeeping (host-side, over a backend
//! that hands out addresses without touching memory) against glibc's malloc/free of the
//! same mixed sizes, which says whether a host-side cache could pay (issue 17, item 5).

use std::hint::black_box;

use ctensor::base::alloc::pool::{Backend, Pool};
use ctensor::{DataType, DeviceType, MirroredTensor, Tensor};
use rand::rngs::StdRng;
use rand::Rng;

use crate::harness::{compare, Table};

/// Addresses only: a backend whose segments are never touched.
struct Addresses(u64);

impl Backend for Addresses {
    fn reserve(&mut self, bytes: usize) -> Result<u64, String> {
        self.0 += bytes as u64 + (2 << 20);
        Ok(self.0)
    }
    fn release(&mut self, _addr: u64, _bytes: usize) {}
}

/// The memory tables.
pub fn memory_tables(rng: &mut StdRng) -> String {
    let mut t = Table::new(
        "Memory layer (1 thread, median of interleaved samples)",
        ["ours", "reference", "ours / reference"],
    );
    let plain = Tensor::zeros(DataType::ComplexDouble, DeviceType::Cpu, &[1000, 8]).unwrap();
    let mut m = MirroredTensor::from_tensor(plain.try_clone().unwrap()).unwrap();
    t.row(
        "MirroredTensor::read(Cpu) of a current copy, then numel() vs numel() of a tensor",
        "[1000, 8] c64",
        compare(
            || {
                black_box(m.read(DeviceType::Cpu).unwrap().numel());
            },
            || {
                black_box(black_box(&plain).numel());
            },
        ),
    );
    // 64 live blocks, one of them replaced per step, sizes 64 B to 1 MiB (log-uniform).
    let sizes: Vec<usize> = (0..4096).map(|_| 1usize << rng.gen_range(6..=20)).collect();
    let mut pool = Pool::new(Addresses(0), DeviceType::Gpu);
    let mut live: Vec<u64> = (0..64)
        .map(|i| pool.allocate(sizes[i], 0).unwrap().0)
        .collect();
    let mut vecs: Vec<Vec<u8>> = (0..64).map(|i| Vec::with_capacity(sizes[i])).collect();
    let (mut i, mut j) = (0usize, 0usize);
    t.row(
        "caching pool allocate + free (bookkeeping) vs glibc malloc + free",
        "64 B - 1 MiB, 64 live",
        compare(
            || {
                i = (i + 1) % sizes.len();
                let k = i % live.len();
                pool.free(live[k]).unwrap();
                live[k] = pool.allocate(sizes[i], 0).unwrap().0;
            },
            || {
                j = (j + 1) % sizes.len();
                let k = j % vecs.len();
                vecs[k] = black_box(Vec::with_capacity(sizes[j]));
            },
        ),
    );
    t.out + &zeros_table() + &host_cache_table(rng)
}

/// A fresh zeroed block (`Tensor::zeros` with the host cache off, so the block comes
/// from the allocator) against Rust's `vec![0.0; n]`, each with one write per 4 KiB page
/// (what a first use costs at least): the zeroing must ride on the kernel's zeroed
/// pages, not write the block a second time.
fn zeros_table() -> String {
    use ctensor::base::alloc::host_cache::{set_limit, DEFAULT_LIMIT};
    let mut t = Table::new(
        "Fresh zeroed memory: `Tensor::zeros` (host cache off) vs `vec![0.0; n]`, one write per page, then freed (1 thread)",
        ["ours", "reference", "ours / reference"],
    );
    set_limit(0);
    for n in [1usize << 17, 10_000_000] {
        t.row(
            "`Tensor::zeros` vs `vec![0.0; n]`",
            &format!("{n} f64"),
            compare(
                || {
                    let mut z = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[n]).unwrap();
                    let mut d = z.data_mut::<f64>().unwrap();
                    d.iter_mut().step_by(512).for_each(|v| *v = 1.0);
                    black_box(&mut d[..]);
                },
                || {
                    let mut v = vec![0.0f64; n];
                    v.iter_mut().step_by(512).for_each(|v| *v = 1.0);
                    black_box(&mut v);
                },
            ),
        );
    }
    set_limit(DEFAULT_LIMIT);
    t.out
}

/// The host cache of large blocks (`ctensor::base::alloc::host_cache`), on and off in
/// one run: a fresh large result, and the temporaries of a block-eigensolver step at
/// plane-wave sizes (20 000 × 64 c64 blocks of 20 MB).
fn host_cache_table(rng: &mut StdRng) -> String {
    use ctensor::base::alloc::host_cache::{set_limit, DEFAULT_LIMIT};
    let mut t = Table::new(
        "Host cache of large blocks: on (1 GiB limit) vs off (2 threads; medians of 7 calls, the middle of 3 alternating rounds)",
        ["cache on", "cache off", "on / off"],
    );
    let n = 10_000_000;
    let x = Tensor::from_vec(crate::harness::random::<f64>(rng, n), &[n]).unwrap();
    let y = Tensor::from_vec(crate::harness::random::<f64>(rng, n), &[n]).unwrap();
    // Cache on and cache off in alternating rounds of consecutive calls (a round that
    // switches the cache on starts with a miss, which the warm-up call takes).
    let on_off = |f: &mut dyn FnMut()| {
        let (mut on, mut off) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            set_limit(DEFAULT_LIMIT);
            on.push(crate::harness::median_of(7, &mut *f));
            set_limit(0);
            off.push(crate::harness::median_of(7, &mut *f));
        }
        set_limit(DEFAULT_LIMIT);
        on.sort_by(f64::total_cmp);
        off.sort_by(f64::total_cmp);
        (on[1], off[1])
    };
    t.row(
        "fresh `&x + &y`",
        "1e7 f64",
        on_off(&mut || {
            black_box((&x + &y).unwrap());
        }),
    );
    // One step of a block solver's bookkeeping: X·C, the residual R = HX − X·Λ, a
    // scaled correction, and the small overlap matrices.
    let (npw, nb) = (20_000, 64);
    let block = |rng: &mut StdRng| {
        Tensor::from_vec(
            crate::harness::random::<ctensor::c64>(rng, npw * nb),
            &[npw, nb],
        )
        .unwrap()
    };
    let (xb, hx) = (block(rng), block(rng));
    let c = Tensor::from_vec(
        crate::harness::random::<ctensor::c64>(rng, nb * nb),
        &[nb, nb],
    )
    .unwrap();
    let mut step = || {
        let xc = ctensor::matmul(&xb, &c).unwrap();
        let r = (&hx - &xc).unwrap();
        let w = r.mul_scalar(0.5).unwrap();
        let s = ctensor::matmul_op(&xb, ctensor::Trans::C, &w, ctensor::Trans::N).unwrap();
        black_box((w, s));
    };
    t.row(
        "block-solver step: X·C, HX − X·C, scaled, Xᴴ·W",
        "20000×64 c64",
        on_off(&mut step),
    );
    t.out
}
