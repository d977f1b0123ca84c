//! [`LapackHegvx`] on the host: `?sygvx` / `?hegvx` (Cholesky of `B`, reduction to the
//! standard problem, bisection and inverse iteration for the selected pairs), under the
//! OpenBLAS over-read guard like the other Hermitian drivers, with the non-finite check.

use ctensor_base::{c32, c64, CastFrom, CpuDevice, DataType, Result, Scalar};

use super::{slice_mut, with_queried_work};
use crate::lapack::args::{info_result, plan_hegvx, Select};
use crate::lapack::{require_finite, EigRange, LapackHegvx, Part, Uplo};
use crate::openblas::{self, on_padded3, Padded};
use crate::parallel::blas_call;

/// `?sygvx` / `?hegvx` of one element type; real types ignore `rwork`.
#[allow(clippy::too_many_arguments, missing_docs)]
pub trait HegvxLapack: Scalar {
    const NAME: &'static str;
    unsafe fn hegvx(
        itype: i32,
        range: u8,
        uplo: u8,
        n: i32,
        a: &mut [Self],
        lda: i32,
        b: &mut [Self],
        ldb: i32,
        vl: Self::Real,
        vu: Self::Real,
        il: i32,
        iu: i32,
        abstol: Self::Real,
        m: &mut i32,
        w: &mut [Self::Real],
        z: &mut [Self],
        ldz: i32,
        work: &mut [Self],
        lwork: i32,
        rwork: &mut [Self::Real],
        iwork: &mut [i32],
        ifail: &mut [i32],
        info: &mut i32,
    );
}

macro_rules! impl_real {
    ($t:ty, $f:ident) => {
        impl HegvxLapack for $t {
            const NAME: &'static str = stringify!($f);
            unsafe fn hegvx(
                itype: i32,
                range: u8,
                uplo: u8,
                n: i32,
                a: &mut [Self],
                lda: i32,
                b: &mut [Self],
                ldb: i32,
                vl: Self,
                vu: Self,
                il: i32,
                iu: i32,
                abstol: Self,
                m: &mut i32,
                w: &mut [Self],
                z: &mut [Self],
                ldz: i32,
                work: &mut [Self],
                lwork: i32,
                _rwork: &mut [Self],
                iwork: &mut [i32],
                ifail: &mut [i32],
                info: &mut i32,
            ) {
                // SAFETY: arguments checked by the caller.
                blas_call::<Self, _>(|| unsafe {
                    lapack::$f(
                        &[itype],
                        b'V',
                        range,
                        uplo,
                        n,
                        a,
                        lda,
                        b,
                        ldb,
                        vl,
                        vu,
                        il,
                        iu,
                        abstol,
                        m,
                        w,
                        z,
                        ldz,
                        work,
                        lwork,
                        iwork,
                        ifail,
                        info,
                    )
                })
            }
        }
    };
}
macro_rules! impl_complex {
    ($t:ty, $f:ident) => {
        impl HegvxLapack for $t {
            const NAME: &'static str = stringify!($f);
            unsafe fn hegvx(
                itype: i32,
                range: u8,
                uplo: u8,
                n: i32,
                a: &mut [Self],
                lda: i32,
                b: &mut [Self],
                ldb: i32,
                vl: Self::Real,
                vu: Self::Real,
                il: i32,
                iu: i32,
                abstol: Self::Real,
                m: &mut i32,
                w: &mut [Self::Real],
                z: &mut [Self],
                ldz: i32,
                work: &mut [Self],
                lwork: i32,
                rwork: &mut [Self::Real],
                iwork: &mut [i32],
                ifail: &mut [i32],
                info: &mut i32,
            ) {
                // SAFETY: arguments checked by the caller.
                blas_call::<Self, _>(|| unsafe {
                    lapack::$f(
                        &[itype],
                        b'V',
                        range,
                        uplo,
                        n,
                        a,
                        lda,
                        b,
                        ldb,
                        vl,
                        vu,
                        il,
                        iu,
                        abstol,
                        m,
                        w,
                        z,
                        ldz,
                        work,
                        lwork,
                        rwork,
                        iwork,
                        ifail,
                        info,
                    )
                })
            }
        }
    };
}
impl_real!(f32, ssygvx);
impl_real!(f64, dsygvx);
impl_complex!(c32, chegvx);
impl_complex!(c64, zhegvx);

/// The meaning of a positive `info` of `?hegvx`.
fn failure(n: usize, i: i32) -> String {
    if i as usize > n {
        format!(
            "the leading minor of order {} of B is not positive definite, so B is not a valid \
             overlap matrix (its Cholesky factorization failed)",
            i as usize - n
        )
    } else {
        format!("{i} eigenvectors failed to converge in inverse iteration")
    }
}

impl<T: HegvxLapack> LapackHegvx<T> for CpuDevice {
    unsafe fn hegvx(
        itype: i32,
        uplo: Uplo,
        n: usize,
        a: *mut T,
        lda: usize,
        b: *mut T,
        ldb: usize,
        range: EigRange<T::Real>,
        w: *mut T::Real,
        z: *mut T,
        ldz: usize,
    ) -> Result<usize> {
        let Some((p, bq)) = plan_hegvx(itype, n, a, lda, b, ldb, &range, w, z, ldz)? else {
            return Ok(0);
        };
        // SAFETY: arguments checked above; the caller vouches for the memory.
        unsafe {
            require_finite::<T, CpuDevice>(T::NAME, "a", Part::Triangle(uplo), n, n, a, lda)?;
            require_finite::<T, CpuDevice>(T::NAME, "b", Part::Triangle(uplo), n, n, b, ldb)?;
        }
        let zero = <T::Real as Scalar>::zero();
        let (r, vl, vu, il, iu) = match p.select {
            Select::All => (b'A', zero, zero, 0, 0),
            Select::Index { il, iu } => (b'I', zero, zero, il, iu),
            Select::Value { vl, vu } => (b'V', vl, vu, 0, 0),
        };
        // LAPACK's advice for the most accurate eigenvalues: twice the underflow threshold.
        let tiny = if T::DTYPE.real_type() == DataType::Float {
            f32::MIN_POSITIVE as f64
        } else {
            f64::MIN_POSITIVE
        };
        let abstol = <T::Real as CastFrom<f64>>::cast_from(2.0 * tiny);
        let u = uplo.as_char() as u8;
        // SAFETY: the caller vouches for the spans checked above.
        let (a, b, w, z) = unsafe {
            (
                slice_mut(a, p.a.span),
                slice_mut(b, bq.span),
                slice_mut(w, n),
                slice_mut(z, p.zspan),
            )
        };
        let ld = lda.max(ldb).max(ldz);
        let tail = if openblas::guard::<T>() {
            openblas::tail(ld)
        } else {
            0
        };
        let mut m = 0i32;
        let (mut iwork, mut ifail) = (vec![0i32; 5 * n], vec![0i32; n]);
        let mut rwork = Padded::<T::Real>::zeroed(7 * n, tail);
        let (n32, lda32, ldb32, ldz32) = (p.a.n, p.a.ld, bq.ld, p.ldz);
        let info = on_padded3([(a, ld), (b, ld), (z, ld)], |a, b, z| {
            with_queried_work::<T>(tail, |work, lwork| {
                let mut info = 0;
                // SAFETY: sizes checked; the workspaces have the lengths passed
                // (the query reads only the sizes).
                unsafe {
                    T::hegvx(
                        itype,
                        r,
                        u,
                        n32,
                        a,
                        lda32,
                        b,
                        ldb32,
                        vl,
                        vu,
                        il,
                        iu,
                        abstol,
                        &mut m,
                        w,
                        z,
                        ldz32,
                        work,
                        lwork,
                        rwork.as_mut_slice(),
                        &mut iwork,
                        &mut ifail,
                        &mut info,
                    )
                };
                info
            })
        });
        const ARGS: [&str; 23] = [
            "itype", "jobz", "range", "uplo", "n", "a", "lda", "b", "ldb", "vl", "vu", "il", "iu",
            "abstol", "m", "w", "z", "ldz", "work", "lwork", "rwork", "iwork", "ifail",
        ];
        info_result(T::NAME, info, &ARGS, |i| failure(n, i))?;
        Ok((m.max(0) as usize).min(p.cols))
    }
}
