//! LAPACK on the GPU through cuSOLVER ([`super::cusolver`]). The arguments go through
//! the same checks as on the CPU (`lapack/args.rs`); each call sizes its device
//! workspace with the routine's `_bufferSize` query, and the device `info` is read back
//! (which waits for the call) and turned into [`Error::Lapack`](ctensor_base::Error)
//! with the same explanation as on the CPU.
//!
//! Differences from the host routines, none visible in the results: `heevr` runs the
//! divide-and-conquer partial-spectrum driver (`syevdx`/`heevdx`, cuSOLVER has no MRRR)
//! and copies the selected eigenvectors into `z`; `trtri` is the generic
//! `cusolverDnXtrtri`.

use ctensor_base::gpu::copy_d2h;
use ctensor_base::{Error, GpuDevice, Result, Scalar};
use cudarc::cusolver::sys::{
    cublasDiagType_t, cublasFillMode_t as Fill, cublasOperation_t, cusolverDnHandle_t,
    cusolverDnHandle_t as H, cusolverDnXtrtri, cusolverDnXtrtri_bufferSize, cusolverEigRange_t,
    cusolverEigType_t, cusolverStatus_t,
};

use super::cusolver::{fill, mode, status, with_handle, Cusolver};
use super::launch::{args, dev, launch_1d, Scratch};
use super::memory::copy_strided;
use super::source::NONFINITE;
use crate::blas::Trans;
use crate::lapack::args::{
    evd_failure, getrf_failure, gvd_failure, info_result, plan_getrf, plan_getrs, plan_heevd,
    plan_heevr, plan_hegvd, plan_square, potrf_failure, potri_failure, trtri_failure, Select,
    Square,
};
use crate::lapack::*;

const POTRF: usize = 0;
const POTRI: usize = 1;
const TRTRI: usize = 2;
const HEEVD: usize = 3;
const HEEVDX: usize = 4;
const HEGVD: usize = 5;
const GETRF: usize = 6;
const GETRS: usize = 7;

/// The arguments of `potrf`/`potri` as cuSOLVER counts them (the handle not counted).
const CHOLESKY_ARGS: [&str; 7] = ["uplo", "n", "A", "lda", "work", "lwork", "devInfo"];

/// Runs `body` with the cuSOLVER handle and a device `info`, then reads `info` back
/// (waiting for the queued work).
pub(crate) fn run(
    op: &'static str,
    body: impl FnOnce(cusolverDnHandle_t, *mut i32) -> Result<()>,
) -> Result<i32> {
    let info = Scratch::<i32>::new(op, 1)?;
    with_handle(|h| body(h, info.ptr()))?;
    let mut v = 0i32;
    // SAFETY: `info` holds one device i32; `v` is one host i32.
    unsafe { copy_d2h(&mut v as *mut i32 as *mut u8, info.ptr() as u64, 4)? };
    Ok(v)
}

/// The device workspace a `_bufferSize` query asks for, and its length as passed back.
/// `bound` is the workspace LAPACK documents for the call, in elements, computed without
/// overflow ([`evd_bound`] for the eigensolvers): when it is beyond `i32::MAX`, the
/// 32-bit query cannot answer it and the call is refused before the query runs.
pub(crate) fn workspace<T: Scalar>(
    op: &'static str,
    routine: &str,
    bound: u128,
    query: impl FnOnce(*mut i32) -> cusolverStatus_t,
) -> Result<(Scratch<T>, i32)> {
    check_bound(routine, bound)?;
    let mut lw = 0i32;
    status(query(&mut lw), format_args!("{routine}_bufferSize"))?;
    Ok((Scratch::new(op, workspace_len(routine, lw)?)?, lw))
}

/// The workspace LAPACK documents for a dense Hermitian eigensolver of order `n`
/// (`?syevd` with vectors: `1 + 6n + 2n²` elements, which also covers `?heevd`'s complex
/// and real workspaces and the generalized and partial forms) or without vectors
/// (`2n + 1`).
pub(crate) fn evd_bound(n: usize, vectors: bool) -> u128 {
    let n = n as u128;
    if vectors {
        1 + 6 * n + 2 * n * n
    } else {
        2 * n + 1
    }
}

/// Refuses a call whose documented workspace (`bound` elements) is beyond what the
/// legacy 32-bit cuSOLVER queries can report: their `int` answer wraps, negative (caught
/// by [`workspace_len`] too) or, past n ≈ 46 341 for `?syevd`, small and positive, and
/// the routine would then write far past a workspace of that size.
pub(crate) fn check_bound(routine: &str, bound: u128) -> Result<()> {
    if bound > i32::MAX as u128 {
        return Err(Error::Overflow {
            op: "cusolver workspace",
            what: format!(
                "{routine} needs a workspace of {bound} elements (LAPACK's documented size), \
                 beyond what cuSOLVER's 32-bit API can report (i32::MAX = {}); the matrix \
                 is too large for it",
                i32::MAX
            ),
        });
    }
    Ok(())
}

/// The element count a 32-bit `_bufferSize` answer stands for. These legacy cuSOLVER
/// APIs report sizes in an `int`: past `i32::MAX` elements the answer wraps, and a
/// negative one would become a 1-element workspace that the routine writes far out of
/// bounds. That is refused instead (a wrap to a positive size is caught by
/// [`check_bound`] before the query).
pub(crate) fn workspace_len(routine: &str, lw: i32) -> Result<usize> {
    if lw < 0 {
        return Err(Error::Overflow {
            op: "cusolver workspace",
            what: format!(
                "{routine}_bufferSize answered {lw}: the workspace needs more than i32::MAX \
                 elements, beyond cuSOLVER's 32-bit API (the matrix is too large for it)"
            ),
        });
    }
    Ok((lw as usize).max(1))
}

/// A routine of the Cholesky family (`potrf`, `potri`): its workspace query and call.
type CholeskyFns<T> = (
    unsafe fn(H, Fill, i32, *mut T, i32, *mut i32) -> cusolverStatus_t,
    unsafe fn(H, Fill, i32, *mut T, i32, *mut T, i32, *mut i32) -> cusolverStatus_t,
);

/// `potrf` or `potri` (routine index `k` in [`Cusolver::NAMES`]): the same arguments,
/// workspace query and `info` convention.
///
/// # Safety
/// As for [`LapackPotrf::potrf`].
unsafe fn cholesky_family<T: Cusolver>(
    (op, k): (&'static str, usize),
    (query, call): CholeskyFns<T>,
    failure: fn(i32) -> String,
    (uplo, n, a, lda): (Uplo, usize, *mut T, usize),
) -> Result<()> {
    let Some(Square { n: n32, ld, .. }) = plan_square(op, "a", n, a, lda)? else {
        return Ok(());
    };
    let (name, u) = (T::NAMES[k], fill(uplo));
    let info = run(op, |h, info| {
        // SAFETY: sizes checked; `a` is device memory of the checked span (caller); the
        // workspace has the length cuSOLVER asked for.
        unsafe {
            let (work, lw) = workspace::<T>(op, name, n as u128, |lw| query(h, u, n32, a, ld, lw))?;
            status(call(h, u, n32, a, ld, work.ptr(), lw, info), name)
        }
    })?;
    info_result(name, info, &CHOLESKY_ARGS, failure)
}

impl<T: Cusolver> LapackPotrf<T> for GpuDevice {
    unsafe fn potrf(uplo: Uplo, n: usize, a: *mut T, lda: usize) -> Result<()> {
        let fns: CholeskyFns<T> = (T::potrf_buffer, T::potrf);
        plan_square("potrf", "a", n, a, lda)?;
        // SAFETY: arguments checked; the caller vouches for the memory.
        unsafe {
            require_finite::<T, GpuDevice>(T::NAMES[POTRF], "a", Part::Triangle(uplo), n, n, a, lda)
        }?;
        // SAFETY: forwarded contract.
        unsafe { cholesky_family(("potrf", POTRF), fns, potrf_failure, (uplo, n, a, lda)) }
    }
}

impl<T: Cusolver> LapackPotri<T> for GpuDevice {
    unsafe fn potri(uplo: Uplo, n: usize, a: *mut T, lda: usize) -> Result<()> {
        let fns: CholeskyFns<T> = (T::potri_buffer, T::potri);
        // SAFETY: forwarded contract.
        unsafe { cholesky_family(("potri", POTRI), fns, potri_failure, (uplo, n, a, lda)) }
    }
}

impl<T: Cusolver> LapackTrtri<T> for GpuDevice {
    unsafe fn trtri(uplo: Uplo, diag: Diag, n: usize, a: *mut T, lda: usize) -> Result<()> {
        let op = "trtri";
        if plan_square(op, "a", n, a, lda)?.is_none() {
            return Ok(());
        }
        let name = T::NAMES[TRTRI];
        let u = fill(uplo);
        let d = match diag {
            Diag::NonUnit => cublasDiagType_t::CUBLAS_DIAG_NON_UNIT,
            Diag::Unit => cublasDiagType_t::CUBLAS_DIAG_UNIT,
        };
        let (n64, lda64) = (n as i64, lda as i64);
        // The host workspace must outlive the call, so it lives here, past `run`'s wait.
        let mut host = Vec::<u8>::new();
        let info = run(op, |h, info| {
            let (mut dev_bytes, mut host_bytes) = (0usize, 0usize);
            // SAFETY: sizes checked; `a` is device memory of the checked span (caller).
            let s = unsafe {
                cusolverDnXtrtri_bufferSize(
                    h,
                    u,
                    d,
                    n64,
                    T::DATA_TYPE,
                    a.cast(),
                    lda64,
                    &mut dev_bytes,
                    &mut host_bytes,
                )
            };
            status(s, format_args!("{name}_bufferSize"))?;
            let size = std::mem::size_of::<T>();
            let work = Scratch::<T>::new(op, dev_bytes.div_ceil(size).max(1))?;
            host.resize(host_bytes.max(1), 0);
            // SAFETY: as above; the workspaces have at least the sizes asked for.
            let s = unsafe {
                cusolverDnXtrtri(
                    h,
                    u,
                    d,
                    n64,
                    T::DATA_TYPE,
                    a.cast(),
                    lda64,
                    work.ptr().cast(),
                    dev_bytes,
                    host.as_mut_ptr().cast(),
                    host_bytes,
                    info,
                )
            };
            status(s, name)
        })?;
        const ARGS: [&str; 11] = [
            "uplo",
            "diag",
            "n",
            "dataTypeA",
            "A",
            "lda",
            "bufferOnDevice",
            "workspaceInBytesOnDevice",
            "bufferOnHost",
            "workspaceInBytesOnHost",
            "devInfo",
        ];
        info_result(name, info, &ARGS, trtri_failure)
    }
}

impl<T: Cusolver> LapackHeevd<T> for GpuDevice {
    unsafe fn heevd(
        jobz: Jobz,
        uplo: Uplo,
        n: usize,
        a: *mut T,
        lda: usize,
        w: *mut T::Real,
    ) -> Result<()> {
        let op = "heevd";
        let Some(Square {
            n: n32, ld: lda32, ..
        }) = plan_heevd(n, a, lda, w)?
        else {
            return Ok(());
        };
        // SAFETY: arguments checked above; the caller vouches for the memory.
        unsafe {
            require_finite::<T, GpuDevice>(T::NAMES[HEEVD], "a", Part::Triangle(uplo), n, n, a, lda)
        }?;
        let (name, j, u) = (T::NAMES[HEEVD], mode(jobz), fill(uplo));
        let info = run(op, |h, info| {
            // SAFETY: sizes checked; `a` and `w` are device memory of the checked spans
            // (caller); the workspace has the length cuSOLVER asked for.
            unsafe {
                let (work, lw) =
                    workspace::<T>(op, name, evd_bound(n, jobz == Jobz::Vectors), |lw| {
                        T::evd_buffer(h, j, u, n32, a, lda32, w, lw)
                    })?;
                status(
                    T::evd(h, j, u, n32, a, lda32, w, work.ptr(), lw, info),
                    name,
                )
            }
        })?;
        const ARGS: [&str; 9] = [
            "jobz", "uplo", "n", "A", "lda", "W", "work", "lwork", "devInfo",
        ];
        // cuSOLVER reports a convergence failure as a count in both modes.
        info_result(name, info, &ARGS, |i| evd_failure(Jobz::ValuesOnly, n, i))
    }
}

impl<T: Cusolver> LapackHeevr<T> for GpuDevice {
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
        let op = "heevr";
        let Some(p) = plan_heevr(n, a, lda, &range, w, z, ldz)? else {
            return Ok(0);
        };
        // SAFETY: arguments checked above; the caller vouches for the memory.
        unsafe {
            require_finite::<T, GpuDevice>(
                T::NAMES[HEEVDX],
                "a",
                Part::Triangle(uplo),
                n,
                n,
                a,
                lda,
            )
        }?;
        let (n32, lda32, cols) = (p.a.n, p.a.ld, p.cols);
        let zero = <T::Real as Scalar>::zero();
        let (r, vl, vu, il, iu) = match p.select {
            Select::All => (cusolverEigRange_t::CUSOLVER_EIG_RANGE_ALL, zero, zero, 0, 0),
            Select::Index { il, iu } => {
                (cusolverEigRange_t::CUSOLVER_EIG_RANGE_I, zero, zero, il, iu)
            }
            Select::Value { vl, vu } => (cusolverEigRange_t::CUSOLVER_EIG_RANGE_V, vl, vu, 0, 0),
        };
        let (name, j, u) = (T::NAMES[HEEVDX], mode(Jobz::Vectors), fill(uplo));
        let mut m = 0i32;
        let info = run(op, |h, info| {
            // SAFETY: sizes and the selection checked; `a`, `w` are device memory of the
            // checked spans (caller); `m` is a host integer, as cuSOLVER expects.
            unsafe {
                let (work, lw) = workspace::<T>(op, name, evd_bound(n, true), |lw| {
                    T::evdx_buffer(h, j, r, u, n32, a, lda32, vl, vu, il, iu, &mut m, w, lw)
                })?;
                let s = T::evdx(
                    h,
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
                    work.ptr(),
                    lw,
                    info,
                );
                status(s, name)
            }
        })?;
        const ARGS: [&str; 15] = [
            "jobz", "range", "uplo", "n", "A", "lda", "vl", "vu", "il", "iu", "meig", "W", "work",
            "lwork", "devInfo",
        ];
        info_result(name, info, &ARGS, |i| evd_failure(Jobz::ValuesOnly, n, i))?;
        let m = (m.max(0) as usize).min(cols);
        if m > 0 {
            // SAFETY: the first `m` columns of `a` hold the eigenvectors; `z` has room
            // for `cols >= m` columns of `n` (checked); they do not overlap (caller).
            unsafe { copy_strided(op, &[m, n], &[ldz, 1], z, &[lda, 1], a, false)? };
        }
        Ok(m)
    }
}

impl<T: Cusolver> LapackHegvd<T> for GpuDevice {
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
        let op = "hegvd";
        let Some((pa, pb)) = plan_hegvd(itype, n, a, lda, b, ldb, w)? else {
            return Ok(());
        };
        // SAFETY: arguments checked above; the caller vouches for the memory.
        unsafe {
            require_finite::<T, GpuDevice>(T::NAMES[HEGVD], "a", Part::Triangle(uplo), n, n, a, lda)
        }?;
        // SAFETY: arguments checked above; the caller vouches for the memory.
        unsafe {
            require_finite::<T, GpuDevice>(T::NAMES[HEGVD], "b", Part::Triangle(uplo), n, n, b, ldb)
        }?;
        let (n32, lda32, ldb32) = (pa.n, pa.ld, pb.ld);
        let t = match itype {
            1 => cusolverEigType_t::CUSOLVER_EIG_TYPE_1,
            2 => cusolverEigType_t::CUSOLVER_EIG_TYPE_2,
            _ => cusolverEigType_t::CUSOLVER_EIG_TYPE_3,
        };
        let (name, j, u) = (T::NAMES[HEGVD], mode(jobz), fill(uplo));
        let info = run(op, |h, info| {
            // SAFETY: sizes checked; `a`, `b`, `w` are device memory of the checked spans
            // (caller); the workspace has the length cuSOLVER asked for.
            unsafe {
                let (work, lw) =
                    workspace::<T>(op, name, evd_bound(n, jobz == Jobz::Vectors), |lw| {
                        T::gvd_buffer(h, t, j, u, n32, a, lda32, b, ldb32, w, lw)
                    })?;
                let s = T::gvd(h, t, j, u, n32, a, lda32, b, ldb32, w, work.ptr(), lw, info);
                status(s, name)
            }
        })?;
        const ARGS: [&str; 12] = [
            "itype", "jobz", "uplo", "n", "A", "lda", "B", "ldb", "W", "work", "lwork", "devInfo",
        ];
        info_result(name, info, &ARGS, |i| gvd_failure(Jobz::ValuesOnly, n, i))
    }
}

impl<T: Cusolver> LapackGetrf<T> for GpuDevice {
    unsafe fn getrf(m: usize, n: usize, a: *mut T, lda: usize, ipiv: *mut i32) -> Result<()> {
        let op = "getrf";
        let Some(([m32, n32, lda32], _)) = plan_getrf(m, n, a, lda, ipiv)? else {
            return Ok(());
        };
        // SAFETY: arguments checked above; the caller vouches for the memory.
        unsafe { require_finite::<T, GpuDevice>(T::NAMES[GETRF], "a", Part::Whole, m, n, a, lda) }?;
        let name = T::NAMES[GETRF];
        let info = run(op, |h, info| {
            // SAFETY: sizes checked; `a` and `ipiv` are device memory of the checked
            // spans (caller); the workspace has the length cuSOLVER asked for.
            unsafe {
                let (work, _) = workspace::<T>(op, name, m.max(n) as u128, |lw| {
                    T::getrf_buffer(h, m32, n32, a, lda32, lw)
                })?;
                status(
                    T::getrf(h, m32, n32, a, lda32, work.ptr(), ipiv, info),
                    name,
                )
            }
        })?;
        const ARGS: [&str; 7] = ["m", "n", "A", "lda", "Workspace", "devIpiv", "devInfo"];
        info_result(name, info, &ARGS, getrf_failure)
    }
}

impl<T: Cusolver> LapackGetrs<T> for GpuDevice {
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
        let op = "getrs";
        let Some((pa, [nrhs32, ldb32], _)) = plan_getrs(n, nrhs, a, lda, ipiv, b, ldb)? else {
            return Ok(());
        };
        let (n32, lda32) = (pa.n, pa.ld);
        // For real types `C` is `T`, as in BLAS.
        let t = match trans {
            Trans::N => cublasOperation_t::CUBLAS_OP_N,
            Trans::C if T::DTYPE.is_complex() => cublasOperation_t::CUBLAS_OP_C,
            _ => cublasOperation_t::CUBLAS_OP_T,
        };
        let name = T::NAMES[GETRS];
        let info = run(op, |h, info| {
            // SAFETY: sizes checked; `a`, `ipiv`, `b` are device memory of the checked
            // spans (caller).
            let s = unsafe { T::getrs(h, t, n32, nrhs32, a, lda32, ipiv, b, ldb32, info) };
            status(s, name)
        })?;
        const ARGS: [&str; 9] = [
            "trans", "n", "nrhs", "A", "lda", "devIpiv", "B", "ldb", "devInfo",
        ];
        info_result(name, info, &ARGS, |i| {
            format!("unexpected positive info {i}")
        })
    }
}

impl<T: Scalar> HeevFaer<T> for GpuDevice {
    /// faer runs on the host only: always an error on the GPU (the `eigh` op uses
    /// cuSOLVER's divide and conquer there instead).
    unsafe fn heev_faer(
        _jobz: Jobz,
        _uplo: Uplo,
        _n: usize,
        _a: *const T,
        _lda: usize,
        _w: *mut T::Real,
        _z: *mut T,
        _ldz: usize,
    ) -> Result<()> {
        Err(Error::Unsupported {
            op: "heev_faer",
            what: "GPU memory (faer\'s eigensolver runs on the CPU; use LapackHeevd on the GPU)"
                .into(),
        })
    }
}

impl<T: Scalar> FindNonFinite<T> for GpuDevice {
    unsafe fn find_non_finite(
        part: Part,
        m: usize,
        n: usize,
        a: *const T,
        lda: usize,
    ) -> Result<Option<(usize, usize, T)>> {
        const OP: &str = "find_non_finite";
        if m == 0 || n == 0 || T::DTYPE.is_integer() {
            return Ok(None);
        }
        crate::args::leading_dim(OP, "lda", lda, m)?;
        let span = crate::args::matrix_span(OP, "a", m, n, lda)?;
        crate::args::non_null(OP, "a", a, span)?;
        let total = m.checked_mul(n).ok_or_else(|| Error::Overflow {
            op: OP,
            what: format!("{m} × {n} entries exceed usize"),
        })?;
        let first = Scratch::<i64>::new(OP, 1)?;
        let code: i32 = match part {
            Part::Whole => 0,
            Part::Triangle(Uplo::Lower) => 1,
            Part::Triangle(Uplo::Upper) => 2,
        };
        let (m64, n64, ld64, ap, fp) = (m as u64, n as u64, lda as u64, dev(a), dev(first.ptr()));
        let mut found = 0u64;
        // SAFETY: `a` spans `span` device elements (caller); `first` holds one zeroed u64.
        unsafe {
            launch_1d(
                NONFINITE.get::<T>()?,
                total,
                &mut args![&code, &m64, &n64, &ap, &ld64, &fp],
            )?;
            copy_d2h(&mut found as *mut u64 as *mut u8, fp, 8)?;
        }
        if found == 0 {
            return Ok(None);
        }
        let k = total - found as usize;
        let (i, j) = (k % m, k / m);
        let mut v = T::zero();
        // SAFETY: entry (i, j) lies inside the span checked above.
        unsafe {
            copy_d2h(
                &mut v as *mut T as *mut u8,
                dev(a.wrapping_add(i + j * lda)),
                std::mem::size_of::<T>(),
            )?
        };
        Ok(Some((i, j, v)))
    }
}

impl<T: Cusolver> LapackGecon<T> for GpuDevice
where
    ctensor_base::CpuDevice: LapackGecon<T>,
{
    /// On a host copy (cuSOLVER has no condition estimator; this is `O(n²)` transfer
    /// next to the `O(n³)` factorization).
    unsafe fn norm_one(m: usize, n: usize, a: *const T, lda: usize) -> Result<T::Real> {
        let Some((_, span)) = crate::lapack::args::plan_matrix("norm_one", m, n, a, lda)? else {
            return Ok(<T::Real as Scalar>::zero());
        };
        let host = host_copy(a, span)?;
        // SAFETY: `host` holds the span.
        unsafe { <ctensor_base::CpuDevice as LapackGecon<T>>::norm_one(m, n, host.as_ptr(), lda) }
    }

    /// On a host copy, as [`norm_one`](Self::norm_one).
    unsafe fn gecon(n: usize, lu: *const T, lda: usize, anorm: T::Real) -> Result<T::Real> {
        let Some(Square { span, .. }) = plan_square("gecon", "a", n, lu, lda)? else {
            return Ok(<T::Real as Scalar>::one());
        };
        let host = host_copy(lu, span)?;
        // SAFETY: `host` holds the span.
        unsafe { <ctensor_base::CpuDevice as LapackGecon<T>>::gecon(n, host.as_ptr(), lda, anorm) }
    }
}

/// `span` device elements at `p` copied to the host.
fn host_copy<T: Scalar>(p: *const T, span: usize) -> Result<Vec<T>> {
    let mut host = vec![T::zero(); span];
    // SAFETY: the caller checked that `p` spans `span` device elements; `host` holds them.
    unsafe {
        copy_d2h(
            host.as_mut_ptr() as *mut u8,
            dev(p),
            span * std::mem::size_of::<T>(),
        )?
    };
    Ok(host)
}

#[cfg(test)]
mod tests;
