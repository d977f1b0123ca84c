//! [`LapackSvd`] on the GPU: cuSOLVER's `?gesvd` (QR iteration on the bidiagonal form),
//! its workspace from `_bufferSize`, `info` read back into `Error::Lapack`.

use ctensor_base::{c32, c64, GpuDevice, Result, Scalar};
use cudarc::cusolver::sys::{self as cs, cusolverDnHandle_t as H, cusolverStatus_t as Status};

use super::cusolver::status;
use super::lapack::{run, workspace};

/// The workspace LAPACK documents for `?gesvd` of an `m × n` matrix:
/// `max(3·min(m, n) + max(m, n), 5·min(m, n))` elements.
fn gesvd_bound(m: usize, n: usize) -> u128 {
    let (lo, hi) = (m.min(n) as u128, m.max(n) as u128);
    (3 * lo + hi).max(5 * lo)
}
use super::launch::Scratch;
use crate::lapack::args::info_result;
use crate::lapack::svd::{plan_svd, svd_failure, LapackSvd, SvdJob};
use crate::lapack::{require_finite, Part};

/// cuSOLVER's `?gesvd` of one element type; real types ignore `rwork`.
#[allow(clippy::too_many_arguments, missing_docs)]
pub trait CusolverSvd: Scalar {
    const NAME: &'static str;
    unsafe fn buffer(h: H, m: i32, n: i32, lw: *mut i32) -> Status;
    unsafe fn gesvd(
        h: H,
        jobu: i8,
        jobvt: i8,
        m: i32,
        n: i32,
        a: *mut Self,
        lda: i32,
        s: *mut Self::Real,
        u: *mut Self,
        ldu: i32,
        vt: *mut Self,
        ldvt: i32,
        work: *mut Self,
        lw: i32,
        rwork: *mut Self::Real,
        info: *mut i32,
    ) -> Status;
}

macro_rules! impl_svd {
    ($($t:ty => $b:ident, $f:ident);*) => {$(
        // SAFETY (both functions): thin forwards; the caller checked the sizes and vouches
        // for the device memory; the `as _` casts are between layout-identical types.
        impl CusolverSvd for $t {
            const NAME: &'static str = stringify!($f);
            unsafe fn buffer(h: H, m: i32, n: i32, lw: *mut i32) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$b(h, m, n, lw) }
            }
            unsafe fn gesvd(
                h: H, jobu: i8, jobvt: i8, m: i32, n: i32, a: *mut Self, lda: i32, s: *mut Self::Real,
                u: *mut Self, ldu: i32, vt: *mut Self, ldvt: i32, work: *mut Self, lw: i32,
                rwork: *mut Self::Real, info: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$f(h, jobu as _, jobvt as _, m, n, a as _, lda, s as _, u as _, ldu, vt as _, ldvt, work as _, lw, rwork as _, info) }
            }
        }
    )*};
}
impl_svd!(
    f32 => cusolverDnSgesvd_bufferSize, cusolverDnSgesvd;
    f64 => cusolverDnDgesvd_bufferSize, cusolverDnDgesvd;
    c32 => cusolverDnCgesvd_bufferSize, cusolverDnCgesvd;
    c64 => cusolverDnZgesvd_bufferSize, cusolverDnZgesvd
);

impl<T: CusolverSvd> LapackSvd<T> for GpuDevice {
    unsafe fn svd(
        job: SvdJob,
        m: usize,
        n: usize,
        a: *mut T,
        lda: usize,
        s: *mut T::Real,
        u: *mut T,
        ldu: usize,
        vt: *mut T,
        ldvt: usize,
    ) -> Result<()> {
        let op = "svd";
        let Some(([m32, n32, lda32, ldu32, ldvt32], _)) =
            plan_svd(job, m, n, a, lda, s, u, ldu, vt, ldvt)?
        else {
            return Ok(());
        };
        // SAFETY: arguments checked above; the caller vouches for the memory.
        unsafe { require_finite::<T, GpuDevice>(T::NAME, "a", Part::Whole, m, n, a, lda) }?;
        let (jobu, jobvt) = match job {
            SvdJob::ValuesOnly => (b'N', b'N'),
            SvdJob::Thin => (b'S', b'A'),
            SvdJob::Full => (b'A', b'A'),
        };
        let rwork = Scratch::<T::Real>::new(op, n)?;
        let info = run(op, |h, info| {
            // SAFETY: sizes checked; device memory of the checked spans (caller); the
            // workspace has the length cuSOLVER asked for.
            unsafe {
                let (work, lw): (Scratch<T>, i32) =
                    workspace(op, T::NAME, gesvd_bound(m, n), |lw| {
                        T::buffer(h, m32, n32, lw)
                    })?;
                status(
                    T::gesvd(
                        h,
                        jobu as i8,
                        jobvt as i8,
                        m32,
                        n32,
                        a,
                        lda32,
                        s,
                        u,
                        ldu32,
                        vt,
                        ldvt32,
                        work.ptr(),
                        lw,
                        rwork.ptr(),
                        info,
                    ),
                    T::NAME,
                )
            }
        })?;
        const ARGS: [&str; 15] = [
            "jobu", "jobvt", "m", "n", "A", "lda", "S", "U", "ldu", "VT", "ldvt", "work", "lwork",
            "rwork", "devInfo",
        ];
        info_result(T::NAME, info, &ARGS, svd_failure)
    }
}
