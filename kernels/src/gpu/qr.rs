//! [`LapackGeqrf`] and [`LapackOrgqr`] on the GPU: cuSOLVER's `geqrf` and
//! `orgqr`/`ungqr`, with workspaces from their `_bufferSize` queries and the device
//! `info` read back into `Error::Lapack`.

use ctensor_base::{c32, c64, GpuDevice, Result};
use cudarc::cusolver::sys::{self as cs, cusolverDnHandle_t as H, cusolverStatus_t as Status};

use super::cusolver::status;
use super::lapack::{run, workspace};
use super::launch::Scratch;
use crate::lapack::args::info_result;
use crate::lapack::qr::{plan_geqrf, plan_orgqr, LapackGeqrf, LapackOrgqr};

/// cuSOLVER's QR entry points of one element type.
#[allow(clippy::too_many_arguments, missing_docs)]
pub trait CusolverQr: ctensor_base::Scalar {
    /// The routine names: geqrf, then orgqr (or ungqr).
    const NAMES: [&'static str; 2];
    unsafe fn geqrf_buffer(h: H, m: i32, n: i32, a: *mut Self, lda: i32, lw: *mut i32) -> Status;
    unsafe fn geqrf(
        h: H,
        m: i32,
        n: i32,
        a: *mut Self,
        lda: i32,
        tau: *mut Self,
        work: *mut Self,
        lw: i32,
        info: *mut i32,
    ) -> Status;
    unsafe fn orgqr_buffer(
        h: H,
        m: i32,
        n: i32,
        k: i32,
        a: *const Self,
        lda: i32,
        tau: *const Self,
        lw: *mut i32,
    ) -> Status;
    unsafe fn orgqr(
        h: H,
        m: i32,
        n: i32,
        k: i32,
        a: *mut Self,
        lda: i32,
        tau: *const Self,
        work: *mut Self,
        lw: i32,
        info: *mut i32,
    ) -> Status;
}

macro_rules! cusolver_qr {
    ($t:ty, $geqrf_b:ident, $geqrf:ident, $orgqr_b:ident, $orgqr:ident) => {
        // SAFETY (all functions): thin forwards; the caller checked the sizes and vouches
        // for the device memory. The `as _` casts are between layout-identical types.
        impl CusolverQr for $t {
            const NAMES: [&'static str; 2] = [stringify!($geqrf), stringify!($orgqr)];
            unsafe fn geqrf_buffer(
                h: H,
                m: i32,
                n: i32,
                a: *mut Self,
                lda: i32,
                lw: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$geqrf_b(h, m, n, a as _, lda, lw) }
            }
            unsafe fn geqrf(
                h: H,
                m: i32,
                n: i32,
                a: *mut Self,
                lda: i32,
                tau: *mut Self,
                work: *mut Self,
                lw: i32,
                info: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$geqrf(h, m, n, a as _, lda, tau as _, work as _, lw, info) }
            }
            unsafe fn orgqr_buffer(
                h: H,
                m: i32,
                n: i32,
                k: i32,
                a: *const Self,
                lda: i32,
                tau: *const Self,
                lw: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$orgqr_b(h, m, n, k, a as _, lda, tau as _, lw) }
            }
            unsafe fn orgqr(
                h: H,
                m: i32,
                n: i32,
                k: i32,
                a: *mut Self,
                lda: i32,
                tau: *const Self,
                work: *mut Self,
                lw: i32,
                info: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$orgqr(h, m, n, k, a as _, lda, tau as _, work as _, lw, info) }
            }
        }
    };
}
cusolver_qr!(
    f32,
    cusolverDnSgeqrf_bufferSize,
    cusolverDnSgeqrf,
    cusolverDnSorgqr_bufferSize,
    cusolverDnSorgqr
);
cusolver_qr!(
    f64,
    cusolverDnDgeqrf_bufferSize,
    cusolverDnDgeqrf,
    cusolverDnDorgqr_bufferSize,
    cusolverDnDorgqr
);
cusolver_qr!(
    c32,
    cusolverDnCgeqrf_bufferSize,
    cusolverDnCgeqrf,
    cusolverDnCungqr_bufferSize,
    cusolverDnCungqr
);
cusolver_qr!(
    c64,
    cusolverDnZgeqrf_bufferSize,
    cusolverDnZgeqrf,
    cusolverDnZungqr_bufferSize,
    cusolverDnZungqr
);

impl<T: CusolverQr> LapackGeqrf<T> for GpuDevice {
    unsafe fn geqrf(m: usize, n: usize, a: *mut T, lda: usize, tau: *mut T) -> Result<()> {
        let op = "geqrf";
        let Some(([m32, n32, lda32], _)) = plan_geqrf(m, n, a, lda, tau)? else {
            return Ok(());
        };
        let name = T::NAMES[0];
        let info = run(op, |h, info| {
            // SAFETY: sizes checked; `a` and `tau` are device memory of the checked spans
            // (caller); the workspace has the length cuSOLVER asked for.
            unsafe {
                let (work, lw): (Scratch<T>, i32) = workspace(op, name, n as u128, |lw| {
                    T::geqrf_buffer(h, m32, n32, a, lda32, lw)
                })?;
                status(
                    T::geqrf(h, m32, n32, a, lda32, tau, work.ptr(), lw, info),
                    name,
                )
            }
        })?;
        const ARGS: [&str; 9] = [
            "handle",
            "m",
            "n",
            "A",
            "lda",
            "TAU",
            "Workspace",
            "Lwork",
            "devInfo",
        ];
        info_result(name, info, &ARGS[1..], |i| format!("unexpected info {i}"))
    }
}

impl<T: CusolverQr> LapackOrgqr<T> for GpuDevice {
    unsafe fn orgqr(
        m: usize,
        n: usize,
        k: usize,
        a: *mut T,
        lda: usize,
        tau: *const T,
    ) -> Result<()> {
        let op = "orgqr";
        let Some(([m32, n32, k32, lda32], _)) = plan_orgqr(m, n, k, a, lda, tau)? else {
            return Ok(());
        };
        let name = T::NAMES[1];
        let info = run(op, |h, info| {
            // SAFETY: as in `geqrf`.
            unsafe {
                let (work, lw): (Scratch<T>, i32) = workspace(op, name, n as u128, |lw| {
                    T::orgqr_buffer(h, m32, n32, k32, a, lda32, tau, lw)
                })?;
                status(
                    T::orgqr(h, m32, n32, k32, a, lda32, tau, work.ptr(), lw, info),
                    name,
                )
            }
        })?;
        const ARGS: [&str; 9] = ["m", "n", "k", "A", "lda", "tau", "work", "lwork", "info"];
        info_result(name, info, &ARGS, |i| format!("unexpected info {i}"))
    }
}
