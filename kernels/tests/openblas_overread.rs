//! The OpenBLAS 0.3.21–0.3.23 `?gemv`/`?hemv` over-read (see `ctensor_kernels::openblas`)
//! must not crash a ctensor eigensolve.
//!
//! Each case runs the affected drivers in a loop in a child process (this test binary,
//! re-run on one test), with every matrix and vector placed flush against 1 MiB of
//! `PROT_NONE` memory: a read past the end faults every time instead of by luck of the
//! heap layout. On an affected OpenBLAS a second child runs the same loop with the guard
//! turned off and must die of SIGSEGV, which shows that the check can fail.
#![cfg(target_os = "linux")]

mod common;

use std::process::Command;

use common::{eps, random_vec, rng};
use ctensor_base::{c32, c64, CpuDevice, Result, Scalar};
use ctensor_kernels::blas::{BlasGemv, Trans};
use ctensor_kernels::lapack::{
    EigRange, Jobz, LapackGetrf, LapackGetrs, LapackHeevd, LapackHeevr, LapackHeevrValues,
    LapackHegvd, LapackHegvx, LapackPotrf, Uplo,
};
use ctensor_kernels::openblas;
use ctensor_kernels::qr::{LapackGeqrf, LapackOrgqr};
use ctensor_kernels::svd::{LapackSvd, SvdJob};

const CHILD: &str = "CTENSOR_OVERREAD_CHILD";
const GUARD_BYTES: usize = 1 << 20;

/// `len` elements of `T` whose last element ends exactly where `GUARD_BYTES` of
/// inaccessible memory begin.
struct Guarded<T> {
    base: *mut libc::c_void,
    total: usize,
    data: *mut T,
    len: usize,
}

impl<T: Scalar> Guarded<T> {
    fn new(values: &[T]) -> Guarded<T> {
        let page = 4096usize;
        let bytes = std::mem::size_of_val(values);
        let body = bytes.div_ceil(page) * page + page;
        let total = body + GUARD_BYTES;
        // SAFETY: an anonymous private mapping; checked for failure below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                total,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED, "mmap failed");
        // SAFETY: `body..total` lies inside the mapping just made.
        let rc = unsafe {
            libc::mprotect(
                base.cast::<u8>().add(body).cast(),
                GUARD_BYTES,
                libc::PROT_NONE,
            )
        };
        assert_eq!(rc, 0, "mprotect failed");
        // SAFETY: `body - bytes` is inside the mapping; element alignment holds because
        // `body` is page-aligned and `bytes` a multiple of the element size.
        let data = unsafe { base.cast::<u8>().add(body - bytes).cast::<T>() };
        // SAFETY: `data` is valid for `values.len()` writes (just mapped, readable and
        // writable), and does not overlap `values`.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), data, values.len()) };
        Guarded {
            base,
            total,
            data,
            len: values.len(),
        }
    }

    fn ptr(&self) -> *mut T {
        self.data
    }

    fn to_vec(&self) -> Vec<T> {
        // SAFETY: `data` holds `len` initialised elements.
        unsafe { std::slice::from_raw_parts(self.data, self.len) }.to_vec()
    }
}

impl<T> Drop for Guarded<T> {
    fn drop(&mut self) {
        // SAFETY: `base`/`total` are the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.base, self.total) };
    }
}

/// A random Hermitian `n × n` matrix (column-major, both triangles set) plus `shift · I`.
fn hermitian<T: Scalar>(seed: u64, n: usize, shift: f64) -> Vec<T> {
    let mut r = rng(seed);
    let g: Vec<T> = random_vec(&mut r, n * n);
    let mut a = vec![T::zero(); n * n];
    for j in 0..n {
        for i in 0..n {
            let v = (g[i + j * n].to_c64() + g[j + i * n].to_c64().conj()) * 0.5;
            let v = if i == j { v + shift * 1000.0 } else { v };
            a[i + j * n] = T::cast_from(if i == j {
                ctensor_base::c64::new(v.re, 0.0)
            } else {
                v
            });
        }
    }
    a
}

/// The affected drivers on guarded memory, `rounds` times, both triangles: heevd,
/// heevr (all and an index range), both also on operands with the caller's own tails,
/// hegvd, potrf, getrf + getrs, geqrf + orgqr, gesdd and
/// gemv 'N' with a
/// strided `x`. Results are checked loosely (eigenvalues sum to the trace), so a run
/// that survives also computed something.
fn drivers<T: Scalar>(rounds: usize, max_n: usize) -> Result<()>
where
    CpuDevice: LapackHeevd<T>
        + LapackHeevr<T>
        + LapackHeevrValues<T>
        + LapackHegvd<T>
        + LapackPotrf<T>
        + LapackGetrf<T>
        + LapackGetrs<T>
        + LapackGeqrf<T>
        + LapackOrgqr<T>
        + LapackSvd<T>
        + LapackHegvx<T>
        + BlasGemv<T>,
{
    let zr = <T::Real as Scalar>::zero();
    // `CTENSOR_OVERREAD_TRACE=1`: each step is named on stderr before it runs, so a
    // fault on another machine names its call.
    let trace = std::env::var_os("CTENSOR_OVERREAD_TRACE").is_some();
    let step = |what: &str, n: usize, uplo: Option<Uplo>| {
        if trace {
            eprintln!("overread step: {} {what} n={n} uplo={uplo:?}", T::DTYPE);
        }
    };
    for round in 0..rounds {
        for n in [2usize, 6, 10, 30, 66, 130, 298, 300]
            .into_iter()
            .filter(|&n| n <= max_n)
        {
            let a0 = hermitian::<T>(round as u64 * 1000 + n as u64, n, 0.0);
            let trace: f64 = (0..n).map(|i| a0[i + i * n].to_c64().re).sum();
            let tol = 1e3 * eps::<T>() * (n as f64) * 1000.0;
            for uplo in [Uplo::Upper, Uplo::Lower] {
                step("heevd", n, Some(uplo));
                let a = Guarded::new(&a0);
                let mut w = vec![zr; n];
                // SAFETY: `a` holds n·n elements (ld n), `w` n values.
                unsafe { CpuDevice::heevd(Jobz::Vectors, uplo, n, a.ptr(), n, w.as_mut_ptr())? };
                let s: f64 = w.iter().map(|x| x.to_c64().re).sum();
                assert!(
                    (s - trace).abs() <= tol * trace.abs().max(1.0),
                    "heevd n={n}"
                );

                for range in [EigRange::All, EigRange::Index(0..n.div_ceil(2))] {
                    let cols = match &range {
                        EigRange::Index(r) => r.len(),
                        _ => n,
                    };
                    step(&format!("heevr {range:?}"), n, Some(uplo));
                    let a = Guarded::new(&a0);
                    let z = Guarded::new(&vec![T::zero(); n * cols]);
                    let mut w = vec![zr; n];
                    // SAFETY: `a` n·n (ld n), `z` n·cols (ld n), `w` n values.
                    let m = unsafe {
                        CpuDevice::heevr(uplo, n, a.ptr(), n, range, w.as_mut_ptr(), z.ptr(), n)?
                    };
                    assert_eq!(m, cols, "heevr n={n}");
                }

                step("heevr values only", n, Some(uplo));
                let a = Guarded::new(&a0);
                // SAFETY: `a` n·n (ld n), `w` n values.
                let m = unsafe {
                    CpuDevice::heevr_values(
                        uplo,
                        n,
                        a.ptr(),
                        n,
                        EigRange::Index(0..n.div_ceil(2)),
                        w.as_mut_ptr(),
                    )?
                };
                assert_eq!(m, n.div_ceil(2), "heevr values n={n}");

                // The caller's own tails (`with_mapped_tails`, as `eigh` allocates its
                // operands): no padded copies, the tail of `operand_tail` elements is
                // all that stands between the kernels and the guard pages.
                // `CTENSOR_OVERREAD_SHORT_TAILS=1` leaves the tails out, which must fault.
                let tail = if std::env::var_os("CTENSOR_OVERREAD_SHORT_TAILS").is_some() {
                    0
                } else {
                    openblas::operand_tail(T::DTYPE, n)
                };
                let padded = |v: &[T]| {
                    let mut p = v.to_vec();
                    p.resize(v.len() + tail, T::zero());
                    Guarded::new(&p)
                };
                step("heevd, caller's tails", n, Some(uplo));
                let a = padded(&a0);
                let mut w = vec![zr; n];
                // SAFETY: `a` holds n·n elements (ld n) and the tail `operand_tail` asks
                // for after them (unless the negative test asked for none); `w` n values.
                unsafe {
                    openblas::with_mapped_tails(|| {
                        CpuDevice::heevd(Jobz::Vectors, uplo, n, a.ptr(), n, w.as_mut_ptr())
                    })?
                };
                let s: f64 = w.iter().map(|x| x.to_c64().re).sum();
                assert!(
                    (s - trace).abs() <= tol * trace.abs().max(1.0),
                    "heevd on the caller's tails n={n}"
                );
                step("heevr, caller's tails", n, Some(uplo));
                let (a, z) = (padded(&a0), padded(&vec![T::zero(); n * n.div_ceil(2)]));
                // SAFETY: as above; `z` n × ⌈n/2⌉ (ld n) with its tail.
                let m = unsafe {
                    openblas::with_mapped_tails(|| {
                        CpuDevice::heevr(
                            uplo,
                            n,
                            a.ptr(),
                            n,
                            EigRange::Index(0..n.div_ceil(2)),
                            w.as_mut_ptr(),
                            z.ptr(),
                            n,
                        )
                    })?
                };
                assert_eq!(m, n.div_ceil(2), "heevr on the caller's tails n={n}");

                let b0 = hermitian::<T>(round as u64 * 1000 + n as u64 + 7, n, n as f64);
                step("hegvd", n, Some(uplo));
                let (a, b) = (Guarded::new(&a0), Guarded::new(&b0));
                let mut w = vec![zr; n];
                // SAFETY: `a`, `b` n·n (ld n), `w` n values; distinct.
                unsafe {
                    CpuDevice::hegvd(
                        1,
                        Jobz::Vectors,
                        uplo,
                        n,
                        a.ptr(),
                        n,
                        b.ptr(),
                        n,
                        w.as_mut_ptr(),
                    )?
                };

                step("hegvx", n, Some(uplo));
                let (a, b, z) = (
                    Guarded::new(&a0),
                    Guarded::new(&b0),
                    Guarded::new(&vec![T::zero(); n * n]),
                );
                let mut w = vec![zr; n];
                // SAFETY: `a`, `b`, `z` n·n (ld n), `w` n values; distinct.
                let m = unsafe {
                    CpuDevice::hegvx(
                        1,
                        uplo,
                        n,
                        a.ptr(),
                        n,
                        b.ptr(),
                        n,
                        EigRange::Index(0..n.div_ceil(2)),
                        w.as_mut_ptr(),
                        z.ptr(),
                        n,
                    )?
                };
                assert_eq!(m, n.div_ceil(2), "hegvx n={n}");

                step("potrf", n, Some(uplo));
                let b = Guarded::new(&b0);
                // SAFETY: `b` n·n (ld n); B is diagonally dominant, so positive definite.
                unsafe { CpuDevice::potrf(uplo, n, b.ptr(), n)? };

                step("getrf+getrs", n, None);
                let (lu, x) = (Guarded::new(&b0), Guarded::new(&a0[..n]));
                let mut ipiv = vec![0i32; n];
                // SAFETY: `lu` n·n (ld n), `ipiv` n, `x` n × 1 (ld n).
                unsafe {
                    CpuDevice::getrf(n, n, lu.ptr(), n, ipiv.as_mut_ptr())?;
                    CpuDevice::getrs(Trans::N, n, 1, lu.ptr(), n, ipiv.as_ptr(), x.ptr(), n)?;
                }
                assert!(x.to_vec().iter().all(|v| v.to_c64().re.is_finite()));
            }
            step("geqrf+orgqr", n, None);
            let (qr, tau) = (Guarded::new(&a0), Guarded::new(&vec![T::zero(); n]));
            // SAFETY: `qr` n·n (ld n), `tau` n scale factors.
            unsafe {
                CpuDevice::geqrf(n, n, qr.ptr(), n, tau.ptr())?;
                CpuDevice::orgqr(n, n, n, qr.ptr(), n, tau.ptr())?;
            }
            step("gesdd", n, None);
            let (sa, u, vt) = (
                Guarded::new(&a0),
                Guarded::new(&vec![T::zero(); n * n]),
                Guarded::new(&vec![T::zero(); n * n]),
            );
            let mut sv = vec![zr; n];
            // SAFETY: `sa`, `u`, `vt` n·n (ld n), `sv` n values.
            unsafe {
                CpuDevice::svd(
                    SvdJob::Thin,
                    n,
                    n,
                    sa.ptr(),
                    n,
                    sv.as_mut_ptr(),
                    u.ptr(),
                    n,
                    vt.ptr(),
                    n,
                )?
            };
            assert!(sv[0].to_c64().re >= sv[n - 1].to_c64().re, "svd n={n}");
            // Q's first column has unit norm.
            let q = qr.to_vec();
            let norm: f64 = q[..n].iter().map(|v| v.to_c64().norm_sqr()).sum();
            assert!(
                (norm - 1.0).abs() <= 1e3 * eps::<T>() * n as f64,
                "orgqr n={n}"
            );
            // gemv 'N', m = n (≡ 2 mod 4 for most sizes above), x a row of a guarded
            // matrix (stride n), as ?latrd passes it.
            step("gemv N", n, None);
            let (a, xs) = (Guarded::new(&a0), Guarded::new(&a0));
            let mut y = vec![T::zero(); n];
            let row = n - 1;
            // SAFETY: `a` n·n (ld n); x = row `row` of `xs` spans (n-1)·n + 1 elements
            // from that row's first entry; `y` n values.
            unsafe {
                CpuDevice::gemv(
                    Trans::N,
                    n,
                    n,
                    T::one(),
                    a.ptr(),
                    n,
                    xs.ptr().add(row),
                    n as isize,
                    T::zero(),
                    y.as_mut_ptr(),
                    1,
                )?
            };
        }
    }
    Ok(())
}

/// The body run in the child process.
#[test]
fn child_runs_affected_drivers_on_guarded_memory() -> Result<()> {
    if std::env::var_os(CHILD).is_none() {
        println!("runs in a child process (started by the tests below)");
        return Ok(());
    }
    // `CTENSOR_OVERREAD_SMALL=1` (the valgrind run in tests/c/run.sh): one round up to
    // n = 66, which valgrind finishes in seconds.
    let small = std::env::var_os("CTENSOR_OVERREAD_SMALL").is_some();
    let (rounds, max_n) = if small { (1, 66) } else { (3, 300) };
    eprintln!(
        "overread child: OpenBLAS core {}, {} threads",
        openblas::corename(),
        ctensor_kernels::parallel::blas_num_threads()
    );
    // `CTENSOR_OVERREAD_REAL_ONLY=1`: only the real types (the `Prescott` leg below).
    if std::env::var_os("CTENSOR_OVERREAD_REAL_ONLY").is_none() {
        drivers::<c64>(rounds, max_n)?;
        drivers::<c32>(rounds, max_n)?;
    }
    drivers::<f64>(1, max_n)?;
    drivers::<f32>(1, max_n)?;
    Ok(())
}

/// Re-runs this binary on the child test with extra environment.
fn run_child(env: &[(&str, &str)]) -> std::process::ExitStatus {
    let exe = std::env::current_exe().expect("test binary path");
    let mut cmd = Command::new(exe);
    cmd.args([
        "child_runs_affected_drivers_on_guarded_memory",
        "--exact",
        "--test-threads=1",
        "--nocapture",
    ])
    .env(CHILD, "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.status()
        .expect("could not start the child test process")
}

#[test]
fn eigensolvers_survive_memory_that_ends_at_a_page_boundary() {
    // Several runs: thread scheduling inside OpenBLAS differs between them.
    for run in 0..3 {
        let status = run_child(&[]);
        assert!(
            status.success(),
            "run {run}: the drivers crashed or failed on guarded memory ({status}); OpenBLAS: {}",
            openblas::config()
        );
    }
}

/// The generic `Prescott` kernels, which DYNAMIC_ARCH builds fall back to on CPUs they do
/// not know (a GPU machine's virtual CPU got them), forced on this CPU.
#[test]
fn eigensolvers_survive_guarded_memory_on_the_prescott_kernels() {
    let config = openblas::config();
    if !config.contains("DYNAMIC_ARCH") {
        println!("SKIP: OpenBLAS cannot switch kernels (no DYNAMIC_ARCH): {config}");
        return;
    }
    let status = run_child(&[("OPENBLAS_CORETYPE", "Prescott")]);
    assert!(
        status.success(),
        "the drivers crashed or failed on guarded memory with the Prescott kernels ({status}); \
         OpenBLAS: {config}"
    );
}

#[test]
fn without_the_guard_an_affected_openblas_faults() {
    use std::os::unix::process::ExitStatusExt;
    let config = openblas::config();
    let affected = openblas::parse_version(&config)
        .is_some_and(|v| openblas::version_is_affected(v, cfg!(target_arch = "x86_64")));
    if !affected {
        println!("SKIP: the linked OpenBLAS is not affected: {config}");
        return;
    }
    let status = run_child(&[("CTENSOR_OPENBLAS_GUARD", "0")]);
    assert_eq!(
        status.signal(),
        Some(libc::SIGSEGV),
        "expected the unguarded drivers to fault on {config}, got {status}"
    );
    // The guard on, but callers vouching for tails they did not leave: the tails are what
    // keeps `with_mapped_tails` safe.
    let status = run_child(&[("CTENSOR_OVERREAD_SHORT_TAILS", "1")]);
    assert_eq!(
        status.signal(),
        Some(libc::SIGSEGV),
        "expected the drivers on tail-less memory to fault on {config}, got {status}"
    );
    // The real types under the Prescott kernels (measured on 0.3.21; `ssyevd` n = 6).
    if config.contains("DYNAMIC_ARCH") && openblas::parse_version(&config) == Some((0, 3, 21)) {
        let status = run_child(&[
            ("CTENSOR_OPENBLAS_GUARD", "0"),
            ("CTENSOR_OVERREAD_REAL_ONLY", "1"),
            ("OPENBLAS_CORETYPE", "Prescott"),
        ]);
        assert_eq!(
            status.signal(),
            Some(libc::SIGSEGV),
            "expected the unguarded real drivers to fault on the Prescott kernels of {config}, \
             got {status}"
        );
    }
}
