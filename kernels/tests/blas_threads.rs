//! Several threads of the application calling BLAS and LAPACK at once while OpenBLAS
//! itself runs more than one thread: every result must equal the one computed alone.
//!
//! Run without the host kernels' lock (`parallel::blas_call`) on Debian's OpenBLAS 0.3.21
//! with its `Prescott` kernels (this project's 2-core VM), this mix returned `ssyevr`
//! results with `m = 0` eigenpairs and `info = 0` in 16–27 % of those calls — a silent
//! wrong answer — with OpenBLAS at 4 threads, and also at one thread after it had run 4.
//! The test has its own binary so that its thread settings reach no other test.
#![deny(unused_must_use)]

use ctensor_base::{c32, c64, CpuDevice, Result, Scalar};
use ctensor_kernels::blas::{BlasAxpy, BlasDot, BlasGemm, Trans};
use ctensor_kernels::lapack::*;
use ctensor_kernels::parallel;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A random Hermitian `n × n` matrix, column-major with leading dimension `n`.
fn hermitian<T: FromParts>(rng: &mut StdRng, n: usize) -> Vec<T> {
    let mut a = vec![T::zero(); n * n];
    for j in 0..n {
        for i in j..n {
            let re: f64 = rng.gen_range(-1.0..1.0);
            let im: f64 = if i == j {
                0.0
            } else {
                rng.gen_range(-1.0..1.0)
            };
            a[i + j * n] = T::from_parts(re, im);
            a[j + i * n] = T::from_parts(re, -im);
        }
    }
    a
}

/// Builds an element from a real and an imaginary part (the latter dropped for reals).
trait FromParts: Scalar {
    fn from_parts(re: f64, im: f64) -> Self;
    fn parts(self) -> (f64, f64);
}

impl FromParts for f32 {
    fn from_parts(re: f64, _: f64) -> Self {
        re as f32
    }
    fn parts(self) -> (f64, f64) {
        (self as f64, 0.0)
    }
}
impl FromParts for f64 {
    fn from_parts(re: f64, _: f64) -> Self {
        re
    }
    fn parts(self) -> (f64, f64) {
        (self, 0.0)
    }
}
impl FromParts for c32 {
    fn from_parts(re: f64, im: f64) -> Self {
        c32::new(re as f32, im as f32)
    }
    fn parts(self) -> (f64, f64) {
        (self.re as f64, self.im as f64)
    }
}
impl FromParts for c64 {
    fn from_parts(re: f64, im: f64) -> Self {
        c64::new(re, im)
    }
    fn parts(self) -> (f64, f64) {
        (self.re, self.im)
    }
}

/// What one job computed, flattened to numbers (the count first where there is one).
type Output = Vec<f64>;

/// `?heevr` (`?syevr`) of `a` over `range`: the eigenpair count, then the eigenvalues.
fn heevr<T: FromParts>(a: &[T], n: usize, range: EigRange<T::Real>) -> Result<Output>
where
    CpuDevice: LapackHeevr<T>,
    T::Real: FromParts,
{
    let mut a = a.to_vec();
    let mut w = vec![<T::Real as Scalar>::zero(); n];
    let mut z = vec![T::zero(); n * n];
    // SAFETY: `a` and `z` hold n·n elements, `w` n values; none overlap.
    let m = unsafe {
        <CpuDevice as LapackHeevr<T>>::heevr(
            Uplo::Lower,
            n,
            a.as_mut_ptr(),
            n,
            range,
            w.as_mut_ptr(),
            z.as_mut_ptr(),
            n,
        )
    }?;
    let mut out = vec![m as f64];
    out.extend(w[..m].iter().map(|x| x.parts().0));
    Ok(out)
}

/// `?getrf` of `a` (`n × n`): the pivots, then the factors.
fn getrf<T: FromParts>(a: &[T], n: usize) -> Result<Output>
where
    CpuDevice: LapackGetrf<T>,
{
    let mut a = a.to_vec();
    let mut ipiv = vec![0i32; n];
    // SAFETY: `a` holds n·n elements, `ipiv` n.
    unsafe { <CpuDevice as LapackGetrf<T>>::getrf(n, n, a.as_mut_ptr(), n, ipiv.as_mut_ptr()) }?;
    Ok(flatten(ipiv.iter().map(|&p| p as f64), &a))
}

/// `?potrf` of `a + n·I` (`n × n`, lower): the factor's lower triangle.
fn potrf<T: FromParts>(a: &[T], n: usize) -> Result<Output>
where
    CpuDevice: LapackPotrf<T>,
{
    let mut a = a.to_vec();
    for i in 0..n {
        let (re, im) = a[i + i * n].parts();
        a[i + i * n] = T::from_parts(re + n as f64, im);
    }
    // SAFETY: `a` holds n·n elements.
    unsafe { <CpuDevice as LapackPotrf<T>>::potrf(Uplo::Lower, n, a.as_mut_ptr(), n) }?;
    let lower: Vec<T> = (0..n)
        .flat_map(|j| (j..n).map(move |i| (i, j)))
        .map(|(i, j)| a[i + j * n])
        .collect();
    Ok(flatten(std::iter::empty(), &lower))
}

/// `a · a` by `?gemm`.
fn gemm<T: FromParts>(a: &[T], n: usize) -> Result<Output>
where
    CpuDevice: BlasGemm<T>,
{
    let mut c = vec![T::zero(); n * n];
    // SAFETY: all three hold n·n elements; `c` overlaps neither operand.
    unsafe {
        <CpuDevice as BlasGemm<T>>::gemm(
            Trans::N,
            Trans::N,
            n,
            n,
            n,
            T::one(),
            a.as_ptr(),
            n,
            a.as_ptr(),
            n,
            T::zero(),
            c.as_mut_ptr(),
            n,
        )
    }?;
    Ok(flatten(std::iter::empty(), &c))
}

/// `y + 0.5·x` by `?axpy`, then `x·y` by `?dot` (`?dotc`), on the halves of `v`.
fn axpy_dot<T: FromParts>(v: &[T]) -> Result<Output>
where
    CpuDevice: BlasAxpy<T> + BlasDot<T>,
{
    let n = v.len() / 2;
    let (x, y) = v.split_at(n);
    let mut y = y[..n].to_vec();
    let half = T::from_parts(0.5, 0.0);
    // SAFETY: `x` and `y` hold n elements each, with unit strides; they do not overlap.
    let d = unsafe {
        <CpuDevice as BlasAxpy<T>>::axpy(n, half, x.as_ptr(), 1, y.as_mut_ptr(), 1)?;
        <CpuDevice as BlasDot<T>>::dot(n, x.as_ptr(), 1, y.as_ptr(), 1)?
    };
    Ok(flatten(std::iter::empty(), &[d])
        .into_iter()
        .chain(flatten(std::iter::empty(), &y))
        .collect())
}

fn flatten<T: FromParts>(head: impl Iterator<Item = f64>, v: &[T]) -> Output {
    head.chain(v.iter().flat_map(|x| {
        let (re, im) = x.parts();
        [re, im]
    }))
    .collect()
}

/// One job: a name, its tolerance relative to the largest reference value, and the call.
struct Job {
    name: &'static str,
    tol: f64,
    run: Box<dyn Fn() -> Result<Output> + Send + Sync>,
}

fn jobs() -> Vec<Job> {
    let mut rng = StdRng::seed_from_u64(31);
    let s300 = hermitian::<f32>(&mut rng, 300);
    let d300 = hermitian::<f64>(&mut rng, 300);
    let z200 = hermitian::<c64>(&mut rng, 200);
    let c150 = hermitian::<c32>(&mut rng, 150);
    let d257 = hermitian::<f64>(&mut rng, 257);
    let d3 = hermitian::<f64>(&mut rng, 200);
    let (s1, s2, d1, d2, z1, c1, dg) = (
        s300.clone(),
        s300,
        d300.clone(),
        d300,
        z200.clone(),
        c150,
        d257,
    );
    vec![
        Job {
            name: "f32 heevr n=300 all",
            tol: 1e-4,
            run: Box::new(move || heevr(&s1, 300, EigRange::All)),
        },
        Job {
            name: "f32 heevr n=300 index 0..1",
            tol: 1e-4,
            run: Box::new(move || heevr(&s2, 300, EigRange::Index(0..1))),
        },
        Job {
            name: "f64 heevr n=300 index 10..40",
            tol: 1e-12,
            run: Box::new(move || heevr(&d1, 300, EigRange::Index(10..40))),
        },
        Job {
            name: "f64 heevr n=200 all",
            tol: 1e-12,
            run: Box::new(move || heevr(&d3, 200, EigRange::All)),
        },
        Job {
            name: "f64 getrf n=300",
            tol: 1e-10,
            run: Box::new(move || getrf(&d2, 300)),
        },
        Job {
            name: "c64 potrf n=200",
            tol: 1e-12,
            run: Box::new(move || potrf(&z1, 200)),
        },
        Job {
            name: "c32 heevr n=150 all",
            tol: 1e-4,
            run: Box::new(move || heevr(&c1, 150, EigRange::All)),
        },
        Job {
            name: "f64 gemm n=257",
            tol: 1e-12,
            run: Box::new(move || gemm(&dg, 257)),
        },
        Job {
            name: "f64 axpy and dot n=200344 (threaded by OpenBLAS)",
            tol: 1e-12,
            run: Box::new({
                let v = hermitian::<f64>(&mut rng, 633);
                move || axpy_dot(&v)
            }),
        },
        Job {
            name: "c64 axpy and dot n=1000 (outside the lock)",
            tol: 1e-12,
            run: Box::new({
                let v = hermitian::<c64>(&mut rng, 45)[..2000].to_vec();
                move || axpy_dot(&v)
            }),
        },
        Job {
            name: "c64 gemm n=200",
            tol: 1e-12,
            run: Box::new(move || gemm(&z200, 200)),
        },
    ]
}

/// Where `got` differs from `want` by more than `tol` times the largest reference value.
fn mismatch(got: &Output, want: &Output, tol: f64) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!(
            "{} numbers (count {}), want {} (count {})",
            got.len(),
            got.first().copied().unwrap_or(f64::NAN),
            want.len(),
            want.first().copied().unwrap_or(f64::NAN)
        ));
    }
    let scale = want.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    got.iter()
        .zip(want)
        // NaN counts as a difference.
        .position(|(g, w)| (g - w).abs().is_nan() || (g - w).abs() > tol * scale)
        .map(|k| format!("entry {k}: {} against {}", got[k], want[k]))
}

/// The tests of this binary one at a time: each sets the process-wide thread counts.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs every job `rounds` times on each of `threads` threads (each walking the jobs from
/// its own start, so different routines overlap) and describes every result that differs
/// from `want`.
fn run_concurrently(jobs: &[Job], want: &[Output], threads: usize, rounds: usize) -> Vec<String> {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut bad = Vec::new();
                    for r in 0..rounds {
                        for k in 0..jobs.len() {
                            let i = (k + t * 3 + r) % jobs.len();
                            if let Some(m) = check(&jobs[i], &want[i]) {
                                bad.push(format!("thread {t} round {r} {m}"));
                            }
                        }
                    }
                    bad
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a worker panicked"))
            .collect()
    })
}

/// Runs `job` and describes how its result differs from `want`, if it does.
fn check(job: &Job, want: &Output) -> Option<String> {
    match (job.run)() {
        Ok(got) => mismatch(&got, want, job.tol).map(|m| format!("{}: {m}", job.name)),
        Err(e) => Some(format!("{}: {e}", job.name)),
    }
}

/// OpenBLAS at 4 threads (more than the application's, also on a one-core machine), and
/// every job's result computed alone, each checked for a full count where it asks for one.
fn serial_results(jobs: &[Job]) -> Result<Vec<Output>> {
    parallel::set_num_threads(4)?;
    assert_eq!(
        parallel::blas_num_threads(),
        4,
        "OpenBLAS refused 4 threads"
    );
    let want: Vec<Output> = jobs.iter().map(|j| (j.run)()).collect::<Result<_>>()?;
    for (j, w) in jobs.iter().zip(&want) {
        if j.name.contains("all") {
            assert_eq!(w[0] as usize, w.len() - 1, "{}", j.name);
            assert!(w[0] > 0.0, "{}: no eigenpairs", j.name);
        }
    }
    Ok(want)
}

#[test]
fn concurrent_calls_into_a_multithreaded_openblas_give_the_serial_results() -> Result<()> {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let jobs = jobs();
    let want = serial_results(&jobs)?;
    let (threads, rounds) = (4, 6);
    let failures = run_concurrently(&jobs, &want, threads, rounds);
    assert!(
        failures.is_empty(),
        "{} of {} concurrent calls differ from the serial result:\n{}",
        failures.len(),
        threads * rounds * jobs.len(),
        failures.join("\n")
    );
    Ok(())
}

/// A batch (`map_batch` sets OpenBLAS to one thread for its duration and restores it)
/// running while other threads call OpenBLAS at 4 threads: the thread count changes under
/// calls in flight on both sides.
#[test]
fn batches_overlapping_multithreaded_calls_give_the_serial_results() -> Result<()> {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let jobs = jobs();
    let want = serial_results(&jobs)?;
    let n = jobs.len();
    let (failures, batch_failures) = std::thread::scope(|s| {
        let others = s.spawn(|| run_concurrently(&jobs, &want, 2, 6));
        let mut batch = Vec::new();
        for r in 0..6 {
            let got = parallel::map_batch(n * 2, |i| check(&jobs[i % n], &want[i % n]));
            batch.extend(got.into_iter().flatten().map(|m| format!("batch {r}: {m}")));
        }
        (others.join().expect("a worker panicked"), batch)
    });
    let failures: Vec<String> = failures.into_iter().chain(batch_failures).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        parallel::blas_num_threads(),
        4,
        "the batches left OpenBLAS's count changed"
    );
    Ok(())
}
