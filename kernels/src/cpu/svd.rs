//! [`LapackSvd`] on the host: `?gesdd` (divide and conquer), and `?gesvd` on a saved copy
//! of the input when `?gesdd` does not converge, as NumPy and SciPy's drivers do. Both
//! reduce to bidiagonal form through `?labrd`, which calls `?gemv` with `trans = 'N'`, so
//! they run under the OpenBLAS over-read guard ([`crate::openblas`]) where it is on.

use ctensor_base::{c32, c64, CpuDevice, Result, Scalar};

use super::{slice_mut, with_queried_work};
use crate::lapack::args::info_result;
use crate::lapack::svd::{plan_svd, svd_failure, LapackSvd, SvdJob};
use crate::lapack::{require_finite, Part};
use crate::openblas::{self, on_padded3, Padded};
use crate::parallel::blas_call;

/// The SVD drivers of one element type, sizes checked; real types ignore `rwork`.
#[allow(clippy::too_many_arguments, missing_docs)]
pub trait SvdLapack: Scalar {
    const NAMES: [&'static str; 2];
    unsafe fn gesdd(
        jobz: u8,
        m: i32,
        n: i32,
        a: &mut [Self],
        lda: i32,
        s: &mut [Self::Real],
        u: &mut [Self],
        ldu: i32,
        vt: &mut [Self],
        ldvt: i32,
        work: &mut [Self],
        lwork: i32,
        rwork: &mut [Self::Real],
        iwork: &mut [i32],
        info: &mut i32,
    );
    unsafe fn gesvd(
        jobu: u8,
        jobvt: u8,
        m: i32,
        n: i32,
        a: &mut [Self],
        lda: i32,
        s: &mut [Self::Real],
        u: &mut [Self],
        ldu: i32,
        vt: &mut [Self],
        ldvt: i32,
        work: &mut [Self],
        lwork: i32,
        rwork: &mut [Self::Real],
        info: &mut i32,
    );
}

macro_rules! impl_real {
    ($t:ty, $gesdd:ident, $gesvd:ident) => {
        impl SvdLapack for $t {
            const NAMES: [&'static str; 2] = [stringify!($gesdd), stringify!($gesvd)];
            unsafe fn gesdd(
                jobz: u8,
                m: i32,
                n: i32,
                a: &mut [Self],
                lda: i32,
                s: &mut [Self],
                u: &mut [Self],
                ldu: i32,
                vt: &mut [Self],
                ldvt: i32,
                work: &mut [Self],
                lwork: i32,
                _rwork: &mut [Self],
                iwork: &mut [i32],
                info: &mut i32,
            ) {
                // SAFETY: arguments checked by the caller.
                blas_call::<Self, _>(|| unsafe {
                    lapack::$gesdd(
                        jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork, info,
                    )
                })
            }
            unsafe fn gesvd(
                jobu: u8,
                jobvt: u8,
                m: i32,
                n: i32,
                a: &mut [Self],
                lda: i32,
                s: &mut [Self],
                u: &mut [Self],
                ldu: i32,
                vt: &mut [Self],
                ldvt: i32,
                work: &mut [Self],
                lwork: i32,
                _rwork: &mut [Self],
                info: &mut i32,
            ) {
                // SAFETY: arguments checked by the caller.
                blas_call::<Self, _>(|| unsafe {
                    lapack::$gesvd(
                        jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, info,
                    )
                })
            }
        }
    };
}
macro_rules! impl_complex {
    ($t:ty, $gesdd:ident, $gesvd:ident) => {
        impl SvdLapack for $t {
            const NAMES: [&'static str; 2] = [stringify!($gesdd), stringify!($gesvd)];
            unsafe fn gesdd(
                jobz: u8,
                m: i32,
                n: i32,
                a: &mut [Self],
                lda: i32,
                s: &mut [Self::Real],
                u: &mut [Self],
                ldu: i32,
                vt: &mut [Self],
                ldvt: i32,
                work: &mut [Self],
                lwork: i32,
                rwork: &mut [Self::Real],
                iwork: &mut [i32],
                info: &mut i32,
            ) {
                // SAFETY: arguments checked by the caller.
                blas_call::<Self, _>(|| unsafe {
                    lapack::$gesdd(
                        jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, iwork, info,
                    )
                })
            }
            unsafe fn gesvd(
                jobu: u8,
                jobvt: u8,
                m: i32,
                n: i32,
                a: &mut [Self],
                lda: i32,
                s: &mut [Self::Real],
                u: &mut [Self],
                ldu: i32,
                vt: &mut [Self],
                ldvt: i32,
                work: &mut [Self],
                lwork: i32,
                rwork: &mut [Self::Real],
                info: &mut i32,
            ) {
                // SAFETY: arguments checked by the caller.
                blas_call::<Self, _>(|| unsafe {
                    lapack::$gesvd(
                        jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, info,
                    )
                })
            }
        }
    };
}
impl_real!(f32, sgesdd, sgesvd);
impl_real!(f64, dgesdd, dgesvd);
impl_complex!(c32, cgesdd, cgesvd);
impl_complex!(c64, zgesdd, zgesvd);

impl<T: SvdLapack> LapackSvd<T> for CpuDevice {
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
        let Some(([m32, n32, lda32, ldu32, ldvt32], [sa, su, sv])) =
            plan_svd(job, m, n, a, lda, s, u, ldu, vt, ldvt)?
        else {
            return Ok(());
        };
        // SAFETY: arguments checked above; the caller vouches for the memory.
        unsafe { require_finite::<T, CpuDevice>(T::NAMES[0], "a", Part::Whole, m, n, a, lda) }?;
        // SAFETY: the caller vouches for the spans checked above.
        let (a, s) = unsafe { (slice_mut(a, sa), slice_mut(s, n)) };
        let (mut u_own, mut vt_own) = (vec![T::zero(); 1], vec![T::zero(); 1]);
        let (u, vt): (&mut [T], &mut [T]) = match job {
            // Not referenced by LAPACK for `N` jobs: a placeholder element each.
            SvdJob::ValuesOnly => (&mut u_own, &mut vt_own),
            // SAFETY: the caller vouches for the spans checked above.
            _ => unsafe { (slice_mut(u, su), slice_mut(vt, sv)) },
        };
        let (jobz, jobu) = match job {
            SvdJob::ValuesOnly => (b'N', b'N'),
            SvdJob::Thin => (b'S', b'S'),
            SvdJob::Full => (b'A', b'A'),
        };
        let jobvt = if job == SvdJob::ValuesOnly {
            b'N'
        } else {
            b'A'
        };
        let tail = if openblas::guard::<T>() {
            openblas::tail(lda.max(ldu).max(ldvt))
        } else {
            0
        };
        let (mx, mn) = (m, n);
        let lrwork = if jobz == b'N' {
            7 * mn
        } else {
            (5 * mn * mn + 5 * mn).max(2 * mx * mn + 2 * mn * mn + mn)
        };
        let saved = a.to_vec();
        let run_gesdd = |a: &mut [T], u: &mut [T], vt: &mut [T]| -> i32 {
            let mut rw = Padded::<T::Real>::zeroed(lrwork.max(1), tail);
            let mut iw = vec![0i32; 8 * mn];
            with_queried_work::<T>(tail, |work, lwork| {
                let mut info = 0;
                // SAFETY: sizes checked; the workspaces have the lengths passed (the query
                // reads only the sizes).
                unsafe {
                    T::gesdd(
                        jobz,
                        m32,
                        n32,
                        a,
                        lda32,
                        s,
                        u,
                        ldu32,
                        vt,
                        ldvt32,
                        work,
                        lwork,
                        rw.as_mut_slice(),
                        &mut iw,
                        &mut info,
                    )
                };
                info
            })
        };
        let info = on_padded3([(a, lda), (u, ldu), (vt, ldvt)], run_gesdd);
        if info <= 0 {
            const ARGS: [&str; 14] = [
                "jobz", "m", "n", "a", "lda", "s", "u", "ldu", "vt", "ldvt", "work", "lwork",
                "rwork", "iwork",
            ];
            return info_result(T::NAMES[0], info, &ARGS, svd_failure);
        }
        // Divide and conquer did not converge: the QR iteration, on the saved input.
        a.copy_from_slice(&saved);
        let run_gesvd = |a: &mut [T], u: &mut [T], vt: &mut [T]| -> i32 {
            let mut rw = Padded::<T::Real>::zeroed(5 * mn, tail);
            with_queried_work::<T>(tail, |work, lwork| {
                let mut info = 0;
                // SAFETY: sizes checked; the workspaces have the lengths passed (the query
                // reads only the sizes).
                unsafe {
                    T::gesvd(
                        jobu,
                        jobvt,
                        m32,
                        n32,
                        a,
                        lda32,
                        s,
                        u,
                        ldu32,
                        vt,
                        ldvt32,
                        work,
                        lwork,
                        rw.as_mut_slice(),
                        &mut info,
                    )
                };
                info
            })
        };
        let info = on_padded3([(a, lda), (u, ldu), (vt, ldvt)], run_gesvd);
        const ARGS: [&str; 14] = [
            "jobu", "jobvt", "m", "n", "a", "lda", "s", "u", "ldu", "vt", "ldvt", "work", "lwork",
            "rwork",
        ];
        info_result(T::NAMES[1], info, &ARGS, svd_failure)
    }
}
