//! FFTs: ctensor's 3-D transform (rustfft underneath) on the grid sizes of plane-wave
//! codes against FFTW's own 3-D plan (`FFTW_MEASURE`, the library most DFT codes call)
//! and NumPy's `fftn`, one thread each; ours on two threads against ours on one; and the
//! overhead of ours over a direct rustfft call on the contiguous axis.

use std::hint::black_box;

use ctensor::base::c64;
use ctensor::{set_num_threads, FftNorm, Tensor};
use fftw::array::AlignedVec;
use fftw::plan::{C2CPlan, C2CPlan64};
use fftw::types::{Flag, Sign};
use rand::rngs::StdRng;
use rustfft::FftPlanner;

use crate::harness::{compare, median_of, python_fields, random, Table};

/// DFT grid sizes: products of 2, 3 and 5.
const GRIDS: [usize; 8] = [36, 45, 48, 60, 64, 72, 96, 128];

/// Samples of the NumPy peer and of the matching run of ours.
const PEER_SAMPLES: usize = 5;

/// The FFT table.
pub fn fft_tables(rng: &mut StdRng) -> String {
    let mut t = Table::new(
        "3-D FFT, c64, forward, in place (ours) (median of interleaved samples)",
        ["ours", "reference", "ours / reference"],
    );
    for n in GRIDS {
        let dims = [n, n, n];
        let v = random::<c64>(rng, n * n * n);
        let size = format!("{n}³");
        set_num_threads(1).unwrap();
        let mut x = Tensor::from_slice(&v, &dims).unwrap();
        let mut ours = || x.fftn_(&[0, 1, 2], FftNorm::Backward).unwrap();
        // FFTW: its 3-D plan, measured once, out of place on aligned buffers.
        let mut plan: C2CPlan64 = C2CPlan::aligned(&dims, Sign::Forward, Flag::MEASURE).unwrap();
        let mut a = AlignedVec::new(n * n * n);
        let mut b = AlignedVec::new(n * n * n);
        a.copy_from_slice(&v);
        let fftw = || plan.c2c(&mut a, &mut b).unwrap();
        t.row(
            "fftn over 3 axes vs FFTW's 3-D plan (1 thread)",
            &size,
            compare(&mut ours, fftw),
        );
        // NumPy on the same values.
        match python_fields(
            "fftn.py",
            &format!("fftn_{n}.bin"),
            &v,
            &[n, n, n, PEER_SAMPLES],
        )
        .and_then(|f| f("numpy_fftn"))
        {
            Ok(numpy) => {
                let mine = median_of(PEER_SAMPLES, &mut ours);
                t.row(
                    "fftn over 3 axes vs NumPy's numpy.fft.fftn (1 thread)",
                    &size,
                    (mine, numpy),
                );
            }
            Err(why) => println!("SKIP: NumPy's fftn: {why}"),
        }
        // The library itself: the contiguous axis through ours and through rustfft.
        let mut planner = FftPlanner::<f64>::new();
        let line = planner.plan_fft_forward(n);
        let mut scratch = vec![c64::default(); line.get_inplace_scratch_len()];
        let mut raw = v.clone();
        let direct = || line.process_with_scratch(black_box(&mut raw), &mut scratch);
        let mut y = Tensor::from_slice(&v, &dims).unwrap();
        let last = || y.fftn_(&[2], FftNorm::Backward).unwrap();
        t.row(
            "fft of the contiguous axis vs rustfft on the buffer (1 thread)",
            &size,
            compare(last, direct),
        );
        // Threads: ours on 2 against ours on 1.
        let mut z = Tensor::from_slice(&v, &dims).unwrap();
        set_num_threads(2).unwrap();
        let two = median_of(PEER_SAMPLES, || {
            z.fftn_(&[0, 1, 2], FftNorm::Backward).unwrap()
        });
        set_num_threads(1).unwrap();
        let one = median_of(PEER_SAMPLES, || {
            z.fftn_(&[0, 1, 2], FftNorm::Backward).unwrap()
        });
        t.row("fftn over 3 axes, 2 threads vs 1 thread", &size, (two, one));
    }
    set_num_threads(2).unwrap();
    t.out
}
