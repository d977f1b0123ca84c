//! Several threads of the application calling BLAS and LAPACK at once while OpenBLAS
//! itself runs more than one thread: every result must equal the one computed alone.
//!
//! Run without the host kernels' lock (`parallel::blas_call`) on Debian's OpenBLAS 0.3.21
//! with its `Prescott` kernels (this project's 2-core VM), this mix returned `ssyevr`
//! results with `m = 0` eigenpairs and `info = 0` in 16–27 % of those calls — a silent
//! wrong answer — with OpenBLAS at 4 threads, and also at one thread after it had run 4.
//! Among the calls: one whose LAPACK call fails (its error must come back the same) and
//! one with NaN in the triangle it must not read. The test has its own binary so that its
//! thread settings reach no other test.
#![deny(unused_must_use)]

use ctensor_base::{c32, c64, CpuDevice, Error, Result, Scalar};
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
    let mut out: Output = ipiv.iter().map(|&p| p as f64).collect();
    out.extend(flatten(&a));
    Ok(out)
}

/// `?potrf` of `a + shift·I` (`n × n`, lower): the factor's lower triangle; or, where
/// LAPACK finds the matrix not positive definite, minus the order of the failing minor
/// alone (an error, which must come back the same from concurrent calls).
fn potrf<T: FromParts>(a: &[T], n: usize, shift: f64) -> Result<Output>
where
    CpuDevice: LapackPotrf<T>,
{
    let mut a = a.to_vec();
    for i in 0..n {
        let (re, im) = a[i + i * n].parts();
        a[i + i * n] = T::from_parts(re + shift, im);
    }
    // SAFETY: `a` holds n·n elements.
    match unsafe { <CpuDevice as LapackPotrf<T>>::potrf(Uplo::Lower, n, a.as_mut_ptr(), n) } {
        Ok(()) => {}
        Err(Error::Lapack { info, .. }) if info > 0 => return Ok(vec![-(info as f64)]),
        Err(e) => return Err(e),
    }
    let lower: Vec<T> = (0..n)
        .flat_map(|j| (j..n).map(move |i| (i, j)))
        .map(|(i, j)| a[i + j * n])
        .collect();
    Ok(flatten(&lower))
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
    Ok(flatten(&c))
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
    let mut out = flatten(&[d]);
    out.extend(flatten(&y));
    Ok(out)
}

/// The real and imaginary parts of `v`, in order.
fn flatten<T: FromParts>(v: &[T]) -> Output {
    v.iter()
        .flat_map(|x| {
            let (re, im) = x.parts();
            [re, im]
        })
        .collect()
}

/// One job: a name, its tolerance relative to the largest reference value, and the call.
struct Job {
    name: &'static str,
    tol: f64,
    run: Box<dyn Fn() -> Result<Output> + Send + Sync>,
}

/// A [`Job`] on shared input.
fn job<I: Send + Sync + ?Sized + 'static>(
    name: &'static str,
    tol: f64,
    input: std::sync::Arc<I>,
    run: impl Fn(&I) -> Result<Output> + Send + Sync + 'static,
) -> Job {
    Job {
        name,
        tol,
        run: Box::new(move || run(&input)),
    }
}

/// The job whose LAPACK call fails (an indefinite matrix to `potrf`).
const INDEFINITE: &str = "c64 potrf n=200 indefinite";
/// The job that must give the first job's result although its unread triangle is NaN.
const UNREAD_NAN: &str = "f32 heevr n=300 all, NaN above the diagonal";

fn jobs() -> Vec<Job> {
    use std::sync::Arc;
    let mut rng = StdRng::seed_from_u64(31);
    let s300 = hermitian::<f32>(&mut rng, 300);
    // The same matrix with NaN above the diagonal, which `uplo = L` must not read.
    let mut upper_nan = s300.clone();
    for j in 1..300 {
        upper_nan[j * 300..j * 300 + j].fill(f32::NAN);
    }
    let s300: Arc<[f32]> = s300.into();
    let s300_upper_nan: Arc<[f32]> = upper_nan.into();
    let d300: Arc<[f64]> = hermitian::<f64>(&mut rng, 300).into();
    let d200: Arc<[f64]> = hermitian::<f64>(&mut rng, 200).into();
    let z200: Arc<[c64]> = hermitian::<c64>(&mut rng, 200).into();
    let c150: Arc<[c32]> = hermitian::<c32>(&mut rng, 150).into();
    let d257: Arc<[f64]> = hermitian::<f64>(&mut rng, 257).into();
    // Two vectors of 200 344 elements (OpenBLAS threads them) and two of 1 000 (level-1
    // calls that small skip the lock).
    let d_long: Arc<[f64]> = hermitian::<f64>(&mut rng, 633).into();
    let z_short: Arc<[c64]> = hermitian::<c64>(&mut rng, 45)[..2000].into();
    let (all, first) = (|| EigRange::All, || EigRange::Index(0..1));
    vec![
        job("f32 heevr n=300 all", 1e-4, s300.clone(), move |a| {
            heevr(a, 300, all())
        }),
        job("f32 heevr n=300 index 0..1", 1e-4, s300, move |a| {
            heevr(a, 300, first())
        }),
        job("f64 heevr n=300 index 10..40", 1e-12, d300.clone(), |a| {
            heevr(a, 300, EigRange::Index(10..40))
        }),
        job("f64 heevr n=200 all", 1e-12, d200, |a| {
            heevr(a, 200, EigRange::All)
        }),
        job("f64 getrf n=300", 1e-10, d300, |a| getrf(a, 300)),
        job("c64 potrf n=200", 1e-12, z200.clone(), |a| {
            potrf(a, 200, 200.0)
        }),
        job(INDEFINITE, 0.0, z200.clone(), |a| potrf(a, 200, 0.0)),
        job(UNREAD_NAN, 1e-4, s300_upper_nan, move |a| {
            heevr(a, 300, all())
        }),
        job("c32 heevr n=150 all", 1e-4, c150, |a| {
            heevr(a, 150, EigRange::All)
        }),
        job("f64 gemm n=257", 1e-12, d257, |a| gemm(a, 257)),
        job("c64 gemm n=200", 1e-12, z200, |a| gemm(a, 200)),
        job("f64 axpy and dot n=200344", 1e-12, d_long, axpy_dot),
        job("c64 axpy and dot n=1000", 1e-12, z_short, axpy_dot),
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
        if j.name.contains("heevr") && j.name.contains("all") {
            assert_eq!(w[0] as usize, w.len() - 1, "{}", j.name);
            assert!(w[0] > 0.0, "{}: no eigenpairs", j.name);
        }
    }
    let named = |name: &str| &want[jobs.iter().position(|j| j.name == name).unwrap()];
    let failure = named(INDEFINITE);
    assert!(
        failure.len() == 1 && failure[0] < 0.0,
        "potrf of an indefinite matrix gave {failure:?}"
    );
    assert_eq!(
        named(UNREAD_NAN),
        named("f32 heevr n=300 all"),
        "NaN in the unread triangle was read"
    );
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
