//! FFTs: ctensor's 3-D transform (rustfft underneath) on the grid sizes of plane-wave
//! codes against FFTW's own 3-D plan (`FFTW_MEASURE`, the library most DFT codes call)
//! and NumPy's `fftn`, one thread each; ours on two threads against ours on one; and the
//! overhead of ours over a direct rustfft call on the contiguous axis.

use std::hint::black_box;

use ctensor::base::c64;
use ctensor::{set_num_threads, DeviceType, FftNorm, Indices, SphereFft, Tensor};
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
        // Into a new tensor, as FFTW's plan: with rustfft a copy and the in-place
        // transform.
        let xr = Tensor::from_slice(&v, &dims).unwrap();
        let into_new = || {
            black_box(ctensor::fftn(&xr, &[0, 1, 2], FftNorm::Backward).unwrap());
        };
        let fftw = || plan.c2c(&mut a, &mut b).unwrap();
        t.row(
            "fftn into a new tensor vs FFTW's out-of-place 3-D plan (1 thread)",
            &size,
            compare(into_new, fftw),
        );
        // The same op with the FFTW backend (one guru plan of the 3-D block, in place),
        // planned before the timing.
        if ctensor::set_host_fft(ctensor::HostFft::Fftw).is_ok() {
            let mut xf = Tensor::from_slice(&v, &dims).unwrap();
            let mut with_fftw = || xf.fftn_(&[0, 1, 2], FftNorm::Backward).unwrap();
            with_fftw();
            let fftw = || plan.c2c(&mut a, &mut b).unwrap();
            t.row(
                "fftn over 3 axes with the FFTW backend vs FFTW's 3-D plan (1 thread)",
                &size,
                compare(&mut with_fftw, fftw),
            );
            // Out of place as FFTW's plan: `fftn` into a new tensor.
            let mut into_new = || {
                black_box(ctensor::fftn(&xf, &[0, 1, 2], FftNorm::Backward).unwrap());
            };
            into_new();
            let fftw = || plan.c2c(&mut a, &mut b).unwrap();
            t.row(
                "fftn into a new tensor with the FFTW backend vs FFTW's out-of-place 3-D plan (1 thread)",
                &size,
                compare(&mut into_new, fftw),
            );
            ctensor::set_host_fft(ctensor::HostFft::RustFft).unwrap();
        } else {
            println!("SKIP: the FFTW backend: FFTW cannot be loaded");
        }
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
        in_place_rows(&mut t, &v, n, &size, &mut plan, &mut a, &mut b);
        axis_rows(&mut t, &v, n, &size);
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
        set_num_threads(1).unwrap();
        sphere_rows(&mut t, rng, n, &mut plan, &mut a, &mut b);
    }
    set_num_threads(2).unwrap();
    t.out
}

/// Bands per block in the sphere rows.
const BANDS: usize = 8;

/// The plane-wave transform a DFT code runs: a local potential applied to 8 bands whose
/// coefficients fill the G-sphere of radius n/4 (the box holds twice the sphere's
/// diameter, as ABINIT's default grid), sphere → box → ×V → box → sphere. Ours through
/// `SphereFft::apply_potential` against the same through a scatter, two dense `fftn`
/// and a gather, and against FFTW's 3-D plan run twice per band (transforms alone, no
/// scatter, multiply or gather).
fn sphere_rows(
    t: &mut Table,
    rng: &mut StdRng,
    n: usize,
    plan: &mut C2CPlan64,
    a: &mut AlignedVec<c64>,
    b: &mut AlignedVec<c64>,
) {
    let r = n as f64 / 4.0;
    let h = n as i64 / 2;
    let w = |m: i64| m.rem_euclid(n as i64) as usize;
    let mut idx = Vec::new();
    for x in -h..h {
        for y in -h..h {
            for z in -h..h {
                if ((x * x + y * y + z * z) as f64) <= r * r {
                    idx.push((w(x) * n + w(y)) * n + w(z));
                }
            }
        }
    }
    let size = format!("{n}³, {} plane waves × {BANDS}", idx.len());
    let c =
        Tensor::from_slice(&random::<c64>(rng, idx.len() * BANDS), &[idx.len(), BANDS]).unwrap();
    let v = Tensor::from_slice(&random::<f64>(rng, n * n * n), &[n, n, n]).unwrap();
    let sphere = SphereFft::new([n, n, n], &idx, DeviceType::Cpu).unwrap();
    let ours = || {
        black_box(sphere.apply_potential(&v, &c).unwrap());
    };
    let ind = Indices::from_slice(&idx, n * n * n, DeviceType::Cpu).unwrap();
    let dense = || {
        let mut g = Tensor::zeros(c.dtype(), DeviceType::Cpu, &[BANDS, n * n * n]).unwrap();
        g.index_copy_with(1, &ind, &c.t().unwrap()).unwrap();
        let mut g = g
            .reshape(&[BANDS as i64, n as i64, n as i64, n as i64])
            .unwrap();
        g.ifftn_(&[1, 2, 3], FftNorm::Forward).unwrap();
        g.mul_(&v).unwrap();
        g.fftn_(&[1, 2, 3], FftNorm::Forward).unwrap();
        black_box(
            g.reshape(&[BANDS as i64, (n * n * n) as i64])
                .unwrap()
                .index_select_with(1, &ind)
                .unwrap(),
        );
    };
    let mut ours = ours;
    t.row("sphere → box → ×V → sphere, 8 bands: SphereFft vs scatter + dense fftn + gather (1 thread)", &size, compare(&mut ours, dense));
    let fftw = || {
        for _ in 0..2 * BANDS {
            plan.c2c(a, b).unwrap();
        }
    };
    let mut fftw = fftw;
    t.row(
        "sphere → box → ×V → sphere, 8 bands: SphereFft vs 16 of FFTW's 3-D plans alone (1 thread)",
        &size,
        compare(&mut ours, &mut fftw),
    );
    // The same plan with its 1-D passes in FFTW (`HostFft::Fftw` when it is made).
    if ctensor::set_host_fft(ctensor::HostFft::Fftw).is_ok() {
        let on_fftw = SphereFft::new([n, n, n], &idx, DeviceType::Cpu).unwrap();
        ctensor::set_host_fft(ctensor::HostFft::RustFft).unwrap();
        // The first call makes FFTW's plans.
        on_fftw.apply_potential(&v, &c).unwrap();
        let mut passes_in_fftw = || {
            black_box(on_fftw.apply_potential(&v, &c).unwrap());
        };
        t.row(
            "sphere → box → ×V → sphere, 8 bands: SphereFft with FFTW's 1-D passes vs 16 of FFTW's 3-D plans alone (1 thread)",
            &size,
            compare(&mut passes_in_fftw, &mut fftw),
        );
    }
}

/// In place against out of place, and what ctensor adds to FFTW's execution: the plan the
/// FFTW backend made for `fftn_` (in place, `FFTW_MEASURE`), recovered from FFTW's
/// in-process wisdom with `FFTW_WISDOM_ONLY` (which returns no plan unless that planning
/// left one), executed bare against FFTW's out-of-place 3-D plan (the reference of the rows
/// above), and `fftn_` with the FFTW backend against that bare execution of its own plan.
fn in_place_rows(
    t: &mut Table,
    v: &[c64],
    n: usize,
    size: &str,
    plan: &mut C2CPlan64,
    a: &mut AlignedVec<c64>,
    b: &mut AlignedVec<c64>,
) {
    use fftw_sys as ffi;
    if ctensor::set_host_fft(ctensor::HostFft::Fftw).is_err() {
        return;
    }
    let mut xf = Tensor::from_slice(v, &[n, n, n]).unwrap();
    let mut with_fftw = || xf.fftn_(&[0, 1, 2], FftNorm::Backward).unwrap();
    // Plans (or finds) the backend's plan of this layout.
    with_fftw();
    let mut buf = AlignedVec::<c64>::new(n * n * n);
    let p = buf.as_mut_ptr() as *mut ffi::fftw_complex;
    let m = n as i32;
    // SAFETY: `buf` holds n³ elements, the plan's one array; a plan made from wisdom
    // does not touch it.
    let same = unsafe {
        ffi::fftw_plan_dft_3d(
            m,
            m,
            m,
            p,
            p,
            ffi::FFTW_FORWARD,
            ffi::FFTW_MEASURE | ffi::FFTW_WISDOM_ONLY,
        )
    };
    if same.is_null() {
        println!("SKIP: {n}³: FFTW's wisdom holds no in-place plan of the FFTW backend's");
        ctensor::set_host_fft(ctensor::HostFft::RustFft).unwrap();
        return;
    }
    buf.copy_from_slice(v);
    // SAFETY: the plan was made for this buffer's size and alignment, in place.
    let run = || unsafe { ffi::fftw_execute_dft(same, p, p) };
    t.row(
        "FFTW: the FFTW backend's in-place 3-D plan, executed bare, vs FFTW's out-of-place 3-D plan (1 thread)",
        size,
        compare(run, || plan.c2c(a, b).unwrap()),
    );
    t.row(
        "fftn_ over 3 axes with the FFTW backend vs a bare execution of the same FFTW plan (1 thread)",
        size,
        compare(&mut with_fftw, run),
    );
    ctensor::set_host_fft(ctensor::HostFft::RustFft).unwrap();
    // SAFETY: made above, used no more.
    unsafe { ffi::fftw_destroy_plan(same) };
}

/// Where the 3-D transform's time goes: each axis alone, ours against FFTW's plan of the
/// same lines (the guru interface: `n` points at the axis's stride, a batch over the two
/// other axes, in place, `FFTW_MEASURE`), and FFTW's three one-axis plans against its
/// own 3-D plan.
fn axis_rows(t: &mut Table, v: &[c64], n: usize, size: &str) {
    use fftw_sys as ffi;
    if ![48, 64, 128].contains(&n) {
        return;
    }
    let mut buf = AlignedVec::<c64>::new(n * n * n);
    buf.copy_from_slice(v);
    let p = buf.as_mut_ptr() as *mut ffi::fftw_complex;
    let dim = |n: usize, s: usize| ffi::fftw_iodim64 {
        n: n as isize,
        is: s as isize,
        os: s as isize,
    };
    // (axis, outer count, stride of the lines)
    let axes = [(2usize, n * n, 1usize), (1, n, n), (0, 1, n * n)];
    let plans: Vec<ffi::fftw_plan> = axes
        .iter()
        .map(|&(_, outer, inner)| {
            let howmany = [dim(outer, n * inner), dim(inner, 1)];
            // SAFETY: `buf` holds n³ elements; the plan's lines (n points at stride
            // `inner`, `outer · inner` of them) cover exactly those; MEASURE overwrites
            // the buffer, which is refilled below.
            let plan = unsafe {
                ffi::fftw_plan_guru64_dft(
                    1,
                    &dim(n, inner),
                    2,
                    howmany.as_ptr(),
                    p,
                    p,
                    ffi::FFTW_FORWARD,
                    ffi::FFTW_MEASURE,
                )
            };
            assert!(!plan.is_null(), "FFTW could not plan axis lines of {n}");
            plan
        })
        .collect();
    buf.copy_from_slice(v);
    // SAFETY: each plan was made for this buffer's size and alignment.
    let run = |plan: ffi::fftw_plan| unsafe { ffi::fftw_execute_dft(plan, p, p) };
    let mut x = Tensor::from_slice(v, &[n, n, n]).unwrap();
    for (&(axis, _, inner), &plan) in axes.iter().zip(&plans) {
        t.row(
            &format!("fft of axis {axis} alone (lines at stride {inner}) vs FFTW's plan of the same lines (1 thread)"),
            size,
            compare(|| x.fftn_(&[axis], FftNorm::Backward).unwrap(), || run(plan)),
        );
    }
    let dims = [n, n, n];
    let mut plan3: C2CPlan64 = C2CPlan::aligned(&dims, Sign::Forward, Flag::MEASURE).unwrap();
    let (mut a, mut b) = (AlignedVec::new(n * n * n), AlignedVec::new(n * n * n));
    a.copy_from_slice(v);
    t.row(
        "FFTW: its three one-axis plans in place vs its 3-D plan (1 thread)",
        size,
        compare(
            || plans.iter().for_each(|&plan| run(plan)),
            || plan3.c2c(&mut a, &mut b).unwrap(),
        ),
    );
    for plan in plans {
        // SAFETY: made above, used no more.
        unsafe { ffi::fftw_destroy_plan(plan) };
    }
}
