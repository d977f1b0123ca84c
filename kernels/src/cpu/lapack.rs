//! LAPACK kernels on the host: the `lapack` crate (Fortran LAPACK) on OpenBLAS.
//!
//! The generic impls validate, run the workspace query, allocate exactly what LAPACK
//! asked for, make the call and translate `info`. [`Lapack`] is the per-type table of
//! entry points; the real types ignore the `rwork` arguments their routines lack.
//!
//! The per-type LAPACK tables are in `lapack_sys.rs`.

use ctensor_base::{CpuDevice, DataType, Error, Result, Scalar};

use super::lapack_sys::{Gecon, Lapack};
use super::{slice, slice_mut};
use crate::blas::Trans;
use crate::lapack::args::{
    evd_failure, getrf_failure, gvd_failure, info_result, plan_getrf, plan_getrs, plan_heevd,
    plan_heevr, plan_hegvd, plan_square, potrf_failure, potri_failure, trtri_failure, Select,
    Square,
};
use crate::lapack::*;
use crate::openblas::{self, on_padded, on_padded_read, Padded};

/// Stack that threaded OpenBLAS LU (`getrf_parallel`, also behind `getrs`) may need.
/// OpenBLAS 0.3.21 (Debian 12) keeps per-thread job tables on the stack there: measured
/// on a 2-core machine, `dgetrf` needed 4 MiB at n = 100 and 6 MiB at n = 300 and
/// n = 3000 (it does not grow with n), while `potrf`, `trtri` and the eigensolvers ran
/// in 1 MiB. Rust threads other than `main` get 2 MiB by default.
const LU_STACK_NEED: usize = 7 << 20;

/// Stack of the helper thread used when the caller's is too short.
const LU_HELPER_STACK: usize = 16 << 20;

/// Below this many matrix elements OpenBLAS runs LU single-threaded, with a small
/// stack footprint.
const THREADED_ELEMENTS: usize = 10_000;

thread_local! {
    /// Lowest address of this thread's stack, looked up once per thread (on the main
    /// thread glibc reads `/proc/self/maps` for it, far too slow for every call).
    static STACK_LOW: Option<usize> = stack_low();
}

/// Lowest address of the current thread's stack, where the platform can tell.
fn stack_low() -> Option<usize> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let mut size: libc::size_t = 0;
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        // SAFETY: `attr` is initialized by `pthread_getattr_np` before use and destroyed
        // after; `addr`/`size` are plain out-parameters.
        let rc = unsafe {
            let mut attr: libc::pthread_attr_t = std::mem::zeroed();
            if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
                return None;
            }
            let rc = libc::pthread_attr_getstack(&attr, &mut addr, &mut size);
            libc::pthread_attr_destroy(&mut attr);
            rc
        };
        (rc == 0).then_some(addr as usize)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        None
    }
}

/// Bytes of stack left below the current frame, where the platform can tell.
fn stack_remaining() -> Option<usize> {
    let low = STACK_LOW.with(|l| *l)?;
    let here = 0u8;
    Some((&here as *const u8 as usize).saturating_sub(low))
}

/// Runs `f` here when the matrix is small or this thread has stack to spare, otherwise
/// on a helper thread with [`LU_HELPER_STACK`] bytes of stack (a segfault in OpenBLAS is
/// not an error anyone can handle).
fn on_large_stack<R: Send>(
    routine: &'static str,
    elements: usize,
    f: impl FnOnce() -> R + Send,
) -> Result<R> {
    if elements < THREADED_ELEMENTS || stack_remaining().is_some_and(|s| s >= LU_STACK_NEED) {
        return Ok(f());
    }
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name(format!("ctensor-{routine}"))
            .stack_size(LU_HELPER_STACK)
            .spawn_scoped(scope, f)
            .map_err(|e| Error::Alloc {
                device: ctensor_base::DeviceType::Cpu,
                bytes: LU_HELPER_STACK,
                align: 1,
                reason: format!("could not start a thread with a large stack for {routine}: {e}"),
            })?;
        handle.join().map_err(|_| Error::Internal {
            op: routine,
            what: "the helper thread running the LAPACK call panicked".into(),
        })
    })
}

const POTRF: usize = 0;
const POTRI: usize = 1;
const TRTRI: usize = 2;
const HEEVD: usize = 3;
const HEEVR: usize = 4;
const HEGVD: usize = 5;
const GETRF: usize = 6;
const GETRS: usize = 7;

/// Workspace length from a query result; single-precision LAPACK reports it as a float
/// that may round below the true integer, so round up with a margin.
fn work_len<R: Scalar>(v: R) -> Result<i32> {
    let x = v.to_c64().re;
    let x = if R::DTYPE == ctensor_base::DataType::Float {
        x * (1.0 + 1e-6)
    } else {
        x
    };
    let len = x.ceil().max(1.0);
    if len > i32::MAX as f64 {
        return Err(Error::Overflow {
            op: "lapack workspace",
            what: format!("LAPACK asked for a workspace of {len} elements, more than i32::MAX"),
        });
    }
    Ok(len as i32)
}

/// Runs a divide-and-conquer or MRRR driver twice: first as the workspace query (`-1`
/// lengths), then with `work`, `rwork` and `iwork` of the sizes it reported. `call`
/// makes the LAPACK call and returns `info`; `check` turns an `info` into the error.
///
/// `ld` is the largest leading dimension of the problem: where the OpenBLAS `?gemv`
/// guard is on ([`crate::openblas`]), `work` and `rwork` get a tail of that many
/// elements, since LAPACK keeps panels with that leading dimension in them.
fn query_then_run<T: Lapack>(
    ld: usize,
    mut call: impl FnMut(&mut [T], i32, &mut [T::Real], i32, &mut [i32], i32) -> i32,
    check: impl Fn(i32) -> Result<()>,
) -> Result<()> {
    let mut work = [T::zero()];
    let mut rwork = [<T::Real as Scalar>::zero()];
    let mut iwork = [0i32];
    check(call(&mut work, -1, &mut rwork, -1, &mut iwork, -1))?;
    let (lw, lr, li) = (
        work_len(work[0].re())?,
        work_len(rwork[0])?,
        iwork[0].max(1),
    );
    let tail = if openblas::guard::<T>() {
        openblas::tail(ld)
    } else {
        0
    };
    let mut work = Padded::<T>::zeroed(lw as usize, tail);
    let mut rwork = Padded::<T::Real>::zeroed(lr as usize, tail);
    let mut iwork = vec![0i32; li as usize];
    check(call(
        work.as_mut_slice(),
        lw,
        rwork.as_mut_slice(),
        lr,
        &mut iwork,
        li,
    ))
}

fn uplo_u8(u: Uplo) -> u8 {
    u.as_char() as u8
}

impl<T: Scalar> FindNonFinite<T> for CpuDevice {
    unsafe fn find_non_finite(
        part: Part,
        m: usize,
        n: usize,
        a: *const T,
        lda: usize,
    ) -> Result<Option<(usize, usize, T)>> {
        if m == 0 || n == 0 || T::DTYPE.is_integer() {
            return Ok(None);
        }
        crate::args::leading_dim("find_non_finite", "lda", lda, m)?;
        let span = crate::args::matrix_span("find_non_finite", "a", m, n, lda)?;
        crate::args::non_null("find_non_finite", "a", a, span)?;
        // SAFETY: the caller vouches for the span checked above.
        let a = unsafe { slice(a, span) };
        for j in 0..n {
            let rows = match part {
                Part::Whole => 0..m,
                Part::Triangle(Uplo::Lower) => j.min(m)..m,
                Part::Triangle(Uplo::Upper) => 0..(j + 1).min(m),
            };
            let col = &a[rows.start + j * lda..rows.end + j * lda];
            if all_finite(col) {
                continue;
            }
            for (i, &v) in rows.zip(col) {
                let z = v.to_c64();
                if !(z.re.is_finite() && z.im.is_finite()) {
                    return Ok(Some((i, j, v)));
                }
            }
        }
        Ok(None)
    }
}

/// Whether every part of every element of `col` is finite: a fast pass over the real
/// parts in lanes (`x · 0` is ±0 for finite `x` and NaN for NaN and ±∞), which the
/// scan above runs before it looks for the position element by element.
fn all_finite<T: Scalar>(col: &[T]) -> bool {
    fn lanes<R: Copy + std::ops::Mul<Output = R> + std::ops::Add<Output = R> + PartialEq>(
        xs: &[R],
        zero: R,
    ) -> bool {
        let mut acc = [zero; 8];
        let chunks = xs.chunks_exact(8);
        let rest = chunks.remainder();
        for c in chunks {
            for k in 0..8 {
                acc[k] = acc[k] + c[k] * zero;
            }
        }
        for &x in rest {
            acc[0] = acc[0] + x * zero;
        }
        // NaN is the only value not equal to itself; finite parts leave every lane 0.
        acc.iter().all(|&v| v == zero)
    }
    let n = col.len();
    let p = col.as_ptr();
    // SAFETY: f32/f64 are themselves and c32/c64 are `{re, im}` pairs of f32/f64, so the
    // `n` elements are `n` or `2n` reals of that type, all initialised.
    unsafe {
        match T::DTYPE {
            DataType::Float => lanes(std::slice::from_raw_parts(p.cast::<f32>(), n), 0.0),
            DataType::Double => lanes(std::slice::from_raw_parts(p.cast::<f64>(), n), 0.0),
            DataType::ComplexFloat => {
                lanes(std::slice::from_raw_parts(p.cast::<f32>(), 2 * n), 0.0)
            }
            DataType::ComplexDouble => {
                lanes(std::slice::from_raw_parts(p.cast::<f64>(), 2 * n), 0.0)
            }
            // Half types and integers: the element-wise scan decides.
            _ => false,
        }
    }
}

impl<T: Scalar> SetMatrix<T> for CpuDevice {
    unsafe fn set_matrix(keep: Uplo, n: usize, a: *mut T, lda: usize) -> Result<()> {
        let Some(Square { span, .. }) = plan_square("set_matrix", "a", n, a, lda)? else {
            return Ok(());
        };
        // SAFETY: the caller vouches for the span checked above.
        let a = unsafe { slice_mut(a, span) };
        for j in 0..n {
            let col = j * lda;
            let rows = match keep {
                Uplo::Upper => j + 1..n,
                Uplo::Lower => 0..j,
            };
            a[col + rows.start..col + rows.end].fill(T::zero());
        }
        Ok(())
    }
}

/// `potrf` or `potri` (routine index `k` in [`Lapack::NAMES`]): the same arguments and
/// `info` convention, one LAPACK call.
///
/// # Safety
/// As for [`LapackPotrf::potrf`].
unsafe fn cholesky_family<T: Lapack>(
    (op, k): (&'static str, usize),
    routine: unsafe fn(u8, i32, &mut [T], i32, &mut i32),
    failure: fn(i32) -> String,
    (uplo, n, a, lda): (Uplo, usize, *mut T, usize),
) -> Result<()> {
    let Some(Square { n: n32, ld, span }) = plan_square(op, "a", n, a, lda)? else {
        return Ok(());
    };
    // SAFETY: the caller vouches for the span checked above.
    let a = unsafe { slice_mut(a, span) };
    let mut info = 0;
    // SAFETY: arguments checked; the caller vouches for the memory.
    on_padded(a, lda, |a| unsafe {
        routine(uplo_u8(uplo), n32, a, ld, &mut info)
    });
    info_result(T::NAMES[k], info, &["uplo", "n", "a", "lda"], failure)
}

impl<T: Lapack> LapackPotrf<T> for CpuDevice {
    unsafe fn potrf(uplo: Uplo, n: usize, a: *mut T, lda: usize) -> Result<()> {
        plan_square("potrf", "a", n, a, lda)?;
        // SAFETY: arguments checked; the caller vouches for the memory.
        unsafe {
            require_finite::<T, CpuDevice>(T::NAMES[POTRF], "a", Part::Triangle(uplo), n, n, a, lda)
        }?;
        // SAFETY: forwarded contract.
        unsafe { cholesky_family(("potrf", POTRF), T::potrf, potrf_failure, (uplo, n, a, lda)) }
    }
}

impl<T: Lapack> LapackPotri<T> for CpuDevice {
    unsafe fn potri(uplo: Uplo, n: usize, a: *mut T, lda: usize) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { cholesky_family(("potri", POTRI), T::potri, potri_failure, (uplo, n, a, lda)) }
    }
}

impl<T: Lapack> LapackTrtri<T> for CpuDevice {
    unsafe fn trtri(uplo: Uplo, diag: Diag, n: usize, a: *mut T, lda: usize) -> Result<()> {
        let Some(Square {
            n: n32,
            ld: lda32,
            span,
        }) = plan_square("trtri", "a", n, a, lda)?
        else {
            return Ok(());
        };
        let d = diag.as_char() as u8;
        // SAFETY: the caller vouches for the span checked above.
        let a = unsafe { slice_mut(a, span) };
        let info = {
            let mut info = 0;
            // SAFETY: arguments checked; the caller vouches for the memory.
            on_padded(a, lda, |a| unsafe {
                T::trtri(uplo_u8(uplo), d, n32, a, lda32, &mut info)
            });
            info
        };
        info_result(
            T::NAMES[TRTRI],
            info,
            &["uplo", "diag", "n", "a", "lda"],
            trtri_failure,
        )
    }
}

const EVD_ARGS: [&str; 12] = [
    "jobz", "uplo", "n", "a", "lda", "w", "work", "lwork", "rwork", "lrwork", "iwork", "liwork",
];

impl<T: Lapack> LapackHeevd<T> for CpuDevice {
    unsafe fn heevd(
        jobz: Jobz,
        uplo: Uplo,
        n: usize,
        a: *mut T,
        lda: usize,
        w: *mut T::Real,
    ) -> Result<()> {
        let Some(Square {
            n: n32,
            ld: lda32,
            span,
        }) = plan_heevd(n, a, lda, w)?
        else {
            return Ok(());
        };
        // SAFETY: arguments checked above; the caller vouches for the memory.
        unsafe {
            require_finite::<T, CpuDevice>(T::NAMES[HEEVD], "a", Part::Triangle(uplo), n, n, a, lda)
        }?;
        let (j, u) = (jobz.as_char() as u8, uplo_u8(uplo));
        // SAFETY: the caller vouches for `a` (span checked) and `w` (n values).
        let (a, w) = unsafe { (slice_mut(a, span), slice_mut(w, n)) };
        on_padded(a, lda, |a| {
            query_then_run::<T>(
                lda,
                |wk, lw, rw, lr, iw, li| {
                    let mut info = 0;
                    // SAFETY: arguments checked; the workspaces have the lengths passed
                    // (the query reads only the sizes).
                    unsafe { T::heevd(j, u, n32, a, lda32, w, wk, lw, rw, lr, iw, li, &mut info) };
                    info
                },
                |info| {
                    info_result(T::NAMES[HEEVD], info, &EVD_ARGS, |i| {
                        evd_failure(jobz, n, i)
                    })
                },
            )
        })
    }
}

impl<T: Lapack> LapackHeevr<T> for CpuDevice {
    unsafe fn heevr(
        uplo: Uplo,
        n: usize,
        a: *mut T,
        lda: usize,
        range: EigRange<T::Real>,
        w: *mut T::Real,
        z: *mut T,
        ldz: usize,
    ) -> Result<usize> {
        let Some(p) = plan_heevr(n, a, lda, &range, w, z, ldz)? else {
            return Ok(0);
        };
        // SAFETY: arguments checked above; the caller vouches for the memory.
        unsafe { heevr_checked(Jobz::Vectors, uplo, n, a, lda, &p, w, z, ldz) }
    }
}

impl<T: Lapack> LapackHeevrValues<T> for CpuDevice {
    unsafe fn heevr_values(
        uplo: Uplo,
        n: usize,
        a: *mut T,
        lda: usize,
        range: EigRange<T::Real>,
        w: *mut T::Real,
    ) -> Result<usize> {
        // LAPACK references no `z` without vectors; one element stands in for it.
        let mut z = [T::zero()];
        let Some(mut p) = plan_heevr(n, a, lda, &range, w, z.as_mut_ptr(), n)? else {
            return Ok(0);
        };
        (p.ldz, p.zspan) = (1, 1);
        // SAFETY: arguments checked above; the caller vouches for `a` and `w`.
        unsafe { heevr_checked(Jobz::ValuesOnly, uplo, n, a, lda, &p, w, z.as_mut_ptr(), 1) }
    }
}

/// `?heevr` after the checks of `plan_heevr` (`p`), with or without vectors.
///
/// # Safety
/// As for [`LapackHeevr::heevr`], with `p` the plan of these arguments (`z` one
/// element, `p.ldz = p.zspan = 1`, without vectors).
#[allow(clippy::too_many_arguments)]
unsafe fn heevr_checked<T: Lapack>(
    jobz: Jobz,
    uplo: Uplo,
    n: usize,
    a: *mut T,
    lda: usize,
    p: &crate::lapack::args::HeevrPlan<T::Real>,
    w: *mut T::Real,
    z: *mut T,
    ldz: usize,
) -> Result<usize> {
    // SAFETY: arguments checked by the caller's plan; the caller vouches for the memory.
    unsafe {
        require_finite::<T, CpuDevice>(T::NAMES[HEEVR], "a", Part::Triangle(uplo), n, n, a, lda)
    }?;
    let (n32, lda32, span, ldz32, zspan) = (p.a.n, p.a.ld, p.a.span, p.ldz, p.zspan);
    let zero = <T::Real as Scalar>::zero();
    let (r, vl, vu, il, iu) = match p.select {
        Select::All => (b'A', zero, zero, 0, 0),
        Select::Index { il, iu } => (b'I', zero, zero, il, iu),
        Select::Value { vl, vu } => (b'V', vl, vu, 0, 0),
    };
    let (j, u) = (jobz.as_char() as u8, uplo_u8(uplo));
    // SAFETY: the caller vouches for `a`, `w` and `z` over the spans checked.
    let (a, w, z) = unsafe { (slice_mut(a, span), slice_mut(w, n), slice_mut(z, zspan)) };
    let mut isuppz = vec![0i32; 2 * n];
    let mut m = 0i32;
    const ARGS: [&str; 24] = [
        "jobz", "range", "uplo", "n", "a", "lda", "vl", "vu", "il", "iu", "abstol", "m", "w", "z",
        "ldz", "isuppz", "work", "lwork", "rwork", "lrwork", "iwork", "liwork", "info", "",
    ];
    let failure = |_| "internal error in the MRRR eigensolver (failed to converge)".to_string();
    let ld = lda.max(ldz);
    on_padded(a, ld, |a| {
        on_padded(z, ld, |z| {
            query_then_run::<T>(
                ld,
                |wk, lw, rw, lr, iw, li| {
                    let mut info = 0;
                    // SAFETY: arguments checked; the workspaces have the lengths passed (the
                    // query reads only the sizes).
                    unsafe {
                        T::heevr(
                            j,
                            r,
                            u,
                            n32,
                            a,
                            lda32,
                            vl,
                            vu,
                            il,
                            iu,
                            &mut m,
                            w,
                            z,
                            ldz32,
                            &mut isuppz,
                            wk,
                            lw,
                            rw,
                            lr,
                            iw,
                            li,
                            &mut info,
                        )
                    };
                    info
                },
                |info| info_result(T::NAMES[HEEVR], info, &ARGS, failure),
            )
        })
    })?;
    Ok(m as usize)
}

impl<T: Lapack> LapackHegvd<T> for CpuDevice {
    unsafe fn hegvd(
        itype: i32,
        jobz: Jobz,
        uplo: Uplo,
        n: usize,
        a: *mut T,
        lda: usize,
        b: *mut T,
        ldb: usize,
        w: *mut T::Real,
    ) -> Result<()> {
        let Some((pa, pb)) = plan_hegvd(itype, n, a, lda, b, ldb, w)? else {
            return Ok(());
        };
        // SAFETY: arguments checked above; the caller vouches for the memory.
        unsafe {
            require_finite::<T, CpuDevice>(T::NAMES[HEGVD], "a", Part::Triangle(uplo), n, n, a, lda)
        }?;
        // SAFETY: arguments checked above; the caller vouches for the memory.
        unsafe {
            require_finite::<T, CpuDevice>(T::NAMES[HEGVD], "b", Part::Triangle(uplo), n, n, b, ldb)
        }?;
        let (n32, lda32, ldb32, aspan, bspan) = (pa.n, pa.ld, pb.ld, pa.span, pb.span);
        let (j, u) = (jobz.as_char() as u8, uplo_u8(uplo));
        // SAFETY: the caller vouches for `a`, `b`, `w` over the spans checked above.
        let (a, b, w) = unsafe { (slice_mut(a, aspan), slice_mut(b, bspan), slice_mut(w, n)) };
        const ARGS: [&str; 15] = [
            "itype", "jobz", "uplo", "n", "a", "lda", "b", "ldb", "w", "work", "lwork", "rwork",
            "lrwork", "iwork", "liwork",
        ];
        let failure = |i| gvd_failure(jobz, n, i);
        let ld = lda.max(ldb);
        on_padded(a, ld, |a| {
            on_padded(b, ld, |b| {
                query_then_run::<T>(
                    ld,
                    |wk, lw, rw, lr, iw, li| {
                        let mut info = 0;
                        // SAFETY: arguments checked; the workspaces have the lengths passed (the
                        // query reads only the sizes).
                        unsafe {
                            T::hegvd(
                                itype, j, u, n32, a, lda32, b, ldb32, w, wk, lw, rw, lr, iw, li,
                                &mut info,
                            )
                        };
                        info
                    },
                    |info| info_result(T::NAMES[HEGVD], info, &ARGS, failure),
                )
            })
        })
    }
}

impl<T: Lapack> LapackGetrf<T> for CpuDevice {
    unsafe fn getrf(m: usize, n: usize, a: *mut T, lda: usize, ipiv: *mut i32) -> Result<()> {
        let Some(([m32, n32, lda32], span)) = plan_getrf(m, n, a, lda, ipiv)? else {
            return Ok(());
        };
        // SAFETY: arguments checked above; the caller vouches for the memory.
        unsafe { require_finite::<T, CpuDevice>(T::NAMES[GETRF], "a", Part::Whole, m, n, a, lda) }?;
        let k = m.min(n);
        // SAFETY: the caller vouches for the spans checked above.
        let (a, ipiv) = unsafe { (slice_mut(a, span), slice_mut(ipiv, k)) };
        let info = on_large_stack(T::NAMES[GETRF], m * n, || {
            let mut info = 0;
            // SAFETY: arguments checked; the caller vouches for the memory.
            on_padded(a, lda, |a| unsafe {
                T::getrf(m32, n32, a, lda32, ipiv, &mut info)
            });
            info
        })?;
        info_result(
            T::NAMES[GETRF],
            info,
            &["m", "n", "a", "lda", "ipiv"],
            getrf_failure,
        )
    }
}

impl<T: Lapack> LapackGetrs<T> for CpuDevice {
    unsafe fn getrs(
        trans: Trans,
        n: usize,
        nrhs: usize,
        a: *const T,
        lda: usize,
        ipiv: *const i32,
        b: *mut T,
        ldb: usize,
    ) -> Result<()> {
        let Some((pa, [nrhs32, ldb32], bspan)) = plan_getrs(n, nrhs, a, lda, ipiv, b, ldb)? else {
            return Ok(());
        };
        let (n32, lda32, aspan) = (pa.n, pa.ld, pa.span);
        // For real types `C` is `T`, as in BLAS.
        let t = match trans {
            Trans::C if !T::DTYPE.is_complex() => b'T',
            t => t.as_char() as u8,
        };
        // SAFETY: the caller vouches for the spans checked above.
        let (a, ipiv, b) = unsafe { (slice(a, aspan), slice(ipiv, n), slice_mut(b, bspan)) };
        let info = on_large_stack(T::NAMES[GETRS], n * n.max(nrhs), || {
            let mut info = 0;
            on_padded_read(a, lda, |a| {
                // SAFETY: arguments checked; the caller vouches for the memory.
                on_padded(b, ldb, |b| unsafe {
                    T::getrs(t, n32, nrhs32, a, lda32, ipiv, b, ldb32, &mut info)
                })
            });
            info
        })?;
        info_result(
            T::NAMES[GETRS],
            info,
            &["trans", "n", "nrhs", "a", "lda", "ipiv", "b", "ldb"],
            |i| format!("unexpected positive info {i}"),
        )
    }
}

impl<T: Lapack + Gecon> LapackGecon<T> for CpuDevice {
    unsafe fn norm_one(m: usize, n: usize, a: *const T, lda: usize) -> Result<T::Real> {
        let Some(([m32, n32, lda32], span)) =
            crate::lapack::args::plan_matrix("norm_one", m, n, a, lda)?
        else {
            return Ok(<T::Real as Scalar>::zero());
        };
        // SAFETY: the caller vouches for the span checked above.
        let a = unsafe { slice(a, span) };
        let mut work = vec![<T::Real as Scalar>::zero(); m.max(1)];
        // SAFETY: sizes checked above.
        Ok(unsafe { T::lange1(m32, n32, a, lda32, &mut work) })
    }

    unsafe fn gecon(n: usize, lu: *const T, lda: usize, anorm: T::Real) -> Result<T::Real> {
        let Some(Square { n: n32, ld, span }) = plan_square("gecon", "a", n, lu, lda)? else {
            return Ok(<T::Real as Scalar>::one());
        };
        // SAFETY: the caller vouches for the span checked above.
        let lu = unsafe { slice(lu, span) };
        let mut rcond = <T::Real as Scalar>::zero();
        // SAFETY: arguments checked above.
        let info = on_padded_read(lu, lda, |lu| unsafe {
            T::gecon1(n32, lu, ld, anorm, &mut rcond)
        });
        info_result(
            "gecon",
            info,
            &[
                "norm", "n", "a", "lda", "anorm", "rcond", "work", "iwork", "info",
            ],
            |i| format!("unexpected positive info {i}"),
        )?;
        Ok(rcond)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctensor_base::{c32, c64};

    #[test]
    fn routine_names_follow_the_type() {
        assert_eq!(<c64 as Lapack>::NAMES[HEEVD], "zheevd");
        assert_eq!(<c32 as Lapack>::NAMES[HEGVD], "chegvd");
    }
}
