//! [`LapackGeqrf`] and [`LapackOrgqr`] on the host: `?geqrf` and `?orgqr`/`?ungqr` from
//! the `lapack` crate on OpenBLAS, sized by LAPACK's workspace query.
//!
//! These run on the caller's memory even where the OpenBLAS over-read guard is on
//! ([`crate::openblas`]): they reach `?gemv` only with `trans = 'C'` (`?larf` from the
//! left, `?larft` column-wise), which stays in bounds. Measured on OpenBLAS 0.3.21 with
//! every array (matrix, `tau`, workspace) flush against an inaccessible page: `zgeqrf`,
//! `zungqr`, `cgeqrf` and `cungqr` over 4 064 shapes (m ≤ 260, n ≤ 80, lda = m and m + 2)
//! with the default, Haswell, SkylakeX, Sandybridge and Prescott kernels and with 1 and 2
//! threads never faulted, while a `zgemv` 'N' control on the same harness did. The
//! padded copies would cost 20 % of a 2000 × 64 c64 QR (`make bench`). The guarded-memory
//! test (`kernels/tests/openblas_overread.rs`) keeps running them on such memory.

use ctensor_base::{c32, c64, CpuDevice, Result, Scalar};

use super::{slice, slice_mut, with_queried_work};
use crate::lapack::args::info_result;
use crate::lapack::qr::{plan_geqrf, plan_orgqr, LapackGeqrf, LapackOrgqr};
use crate::parallel::blas_call;

/// The QR entry points of one element type, sizes already checked.
#[allow(clippy::too_many_arguments, missing_docs)]
pub trait QrLapack: Scalar {
    /// The routine names: geqrf, then orgqr (or ungqr).
    const NAMES: [&'static str; 2];
    unsafe fn geqrf(
        m: i32,
        n: i32,
        a: &mut [Self],
        lda: i32,
        tau: &mut [Self],
        work: &mut [Self],
        lwork: i32,
        info: &mut i32,
    );
    unsafe fn orgqr(
        m: i32,
        n: i32,
        k: i32,
        a: &mut [Self],
        lda: i32,
        tau: &[Self],
        work: &mut [Self],
        lwork: i32,
        info: &mut i32,
    );
}

macro_rules! impl_qr {
    ($t:ty, $geqrf:ident, $orgqr:ident) => {
        impl QrLapack for $t {
            const NAMES: [&'static str; 2] = [stringify!($geqrf), stringify!($orgqr)];
            unsafe fn geqrf(
                m: i32,
                n: i32,
                a: &mut [Self],
                lda: i32,
                tau: &mut [Self],
                work: &mut [Self],
                lwork: i32,
                info: &mut i32,
            ) {
                // SAFETY: arguments checked by the caller.
                blas_call::<Self, _>(|| unsafe {
                    lapack::$geqrf(m, n, a, lda, tau, work, lwork, info)
                })
            }
            unsafe fn orgqr(
                m: i32,
                n: i32,
                k: i32,
                a: &mut [Self],
                lda: i32,
                tau: &[Self],
                work: &mut [Self],
                lwork: i32,
                info: &mut i32,
            ) {
                // SAFETY: arguments checked by the caller.
                blas_call::<Self, _>(|| unsafe {
                    lapack::$orgqr(m, n, k, a, lda, tau, work, lwork, info)
                })
            }
        }
    };
}
impl_qr!(f32, sgeqrf, sorgqr);
impl_qr!(f64, dgeqrf, dorgqr);
impl_qr!(c32, cgeqrf, cungqr);
impl_qr!(c64, zgeqrf, zungqr);

impl<T: QrLapack> LapackGeqrf<T> for CpuDevice {
    unsafe fn geqrf(m: usize, n: usize, a: *mut T, lda: usize, tau: *mut T) -> Result<()> {
        let Some(([m32, n32, lda32], span)) = plan_geqrf(m, n, a, lda, tau)? else {
            return Ok(());
        };
        // SAFETY: the caller vouches for the spans checked above.
        let (a, tau) = unsafe { (slice_mut(a, span), slice_mut(tau, m.min(n))) };
        let info = with_queried_work::<T>(0, |work, lwork| {
            let mut info = 0;
            // SAFETY: sizes checked; the slices hold what LAPACK reads and writes.
            unsafe { T::geqrf(m32, n32, a, lda32, tau, work, lwork, &mut info) };
            info
        });
        const ARGS: [&str; 8] = ["m", "n", "a", "lda", "tau", "work", "lwork", "info"];
        info_result(T::NAMES[0], info, &ARGS, |i| format!("unexpected info {i}"))
    }
}

impl<T: QrLapack> LapackOrgqr<T> for CpuDevice {
    unsafe fn orgqr(
        m: usize,
        n: usize,
        k: usize,
        a: *mut T,
        lda: usize,
        tau: *const T,
    ) -> Result<()> {
        let Some(([m32, n32, k32, lda32], span)) = plan_orgqr(m, n, k, a, lda, tau)? else {
            return Ok(());
        };
        // SAFETY: the caller vouches for the spans checked above.
        let (a, tau) = unsafe { (slice_mut(a, span), slice(tau, k)) };
        let info = with_queried_work::<T>(0, |work, lwork| {
            let mut info = 0;
            // SAFETY: sizes checked; the slices hold what LAPACK reads and writes.
            unsafe { T::orgqr(m32, n32, k32, a, lda32, tau, work, lwork, &mut info) };
            info
        });
        const ARGS: [&str; 9] = ["m", "n", "k", "a", "lda", "tau", "work", "lwork", "info"];
        info_result(T::NAMES[1], info, &ARGS, |i| format!("unexpected info {i}"))
    }
}
