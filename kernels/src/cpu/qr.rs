//! [`LapackGeqrf`] and [`LapackOrgqr`] on the host: `?geqrf` and `?orgqr`/`?ungqr` from
//! the `lapack` crate on OpenBLAS, sized by LAPACK's workspace query, on padded copies
//! where the OpenBLAS over-read guard is on ([`crate::openblas`]).

use ctensor_base::{c32, c64, CpuDevice, Result, Scalar};

use super::{slice, slice_mut};
use crate::lapack_plan::info_result;
use crate::openblas::{self, on_padded, Padded};
use crate::qr::{plan_geqrf, plan_orgqr, LapackGeqrf, LapackOrgqr};

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
                unsafe { lapack::$geqrf(m, n, a, lda, tau, work, lwork, info) }
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
                unsafe { lapack::$orgqr(m, n, k, a, lda, tau, work, lwork, info) }
            }
        }
    };
}
impl_qr!(f32, sgeqrf, sorgqr);
impl_qr!(f64, dgeqrf, dorgqr);
impl_qr!(c32, cgeqrf, cungqr);
impl_qr!(c64, zgeqrf, zungqr);

/// Runs a routine with a one-array workspace: the query (`lwork = -1`), then the call
/// with what it asked for (and the guard's tail of one leading dimension `ld`).
fn with_workspace<T: QrLapack>(ld: usize, mut call: impl FnMut(&mut [T], i32) -> i32) -> i32 {
    let mut query = [T::zero()];
    let info = call(&mut query, -1);
    if info != 0 {
        return info;
    }
    // Single-precision LAPACK reports the length as a float that may round low.
    let len = (query[0].re().to_c64().re * (1.0 + 1e-6))
        .ceil()
        .clamp(1.0, i32::MAX as f64) as i32;
    let tail = if openblas::guard::<T>() {
        openblas::tail(ld)
    } else {
        0
    };
    let mut work = Padded::<T>::zeroed(len as usize, tail);
    call(work.as_mut_slice(), len)
}

impl<T: QrLapack> LapackGeqrf<T> for CpuDevice {
    unsafe fn geqrf(m: usize, n: usize, a: *mut T, lda: usize, tau: *mut T) -> Result<()> {
        let Some(([m32, n32, lda32], span)) = plan_geqrf(m, n, a, lda, tau)? else {
            return Ok(());
        };
        // SAFETY: the caller vouches for the spans checked above.
        let (a, tau) = unsafe { (slice_mut(a, span), slice_mut(tau, m.min(n))) };
        let info = on_padded(a, lda, |a| {
            with_workspace::<T>(lda, |work, lwork| {
                let mut info = 0;
                // SAFETY: sizes checked; the slices hold what LAPACK reads and writes.
                unsafe { T::geqrf(m32, n32, a, lda32, tau, work, lwork, &mut info) };
                info
            })
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
        let info = on_padded(a, lda, |a| {
            with_workspace::<T>(lda, |work, lwork| {
                let mut info = 0;
                // SAFETY: sizes checked; the slices hold what LAPACK reads and writes.
                unsafe { T::orgqr(m32, n32, k32, a, lda32, tau, work, lwork, &mut info) };
                info
            })
        });
        const ARGS: [&str; 9] = ["m", "n", "k", "a", "lda", "tau", "work", "lwork", "info"];
        info_result(T::NAMES[1], info, &ARGS, |i| format!("unexpected info {i}"))
    }
}
