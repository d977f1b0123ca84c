//! The per-type tables of the LAPACK routines the host kernels call ([`Lapack`],
//! [`Gecon`]), beside `gpu/cusolver.rs` for the GPU.

use ctensor_base::{c32, c64, Scalar};

use crate::openblas::{self};
use crate::parallel::blas_call;

/// The LAPACK entry points of one element type, sizes already checked.
#[allow(clippy::too_many_arguments, missing_docs)]
pub trait Lapack: Scalar {
    /// Routine names in the order potrf, potri, trtri, heevd, heevr, hegvd, getrf, getrs.
    const NAMES: [&'static str; 8];
    unsafe fn potrf(uplo: u8, n: i32, a: &mut [Self], lda: i32, info: &mut i32);
    unsafe fn potri(uplo: u8, n: i32, a: &mut [Self], lda: i32, info: &mut i32);
    unsafe fn trtri(uplo: u8, diag: u8, n: i32, a: &mut [Self], lda: i32, info: &mut i32);
    unsafe fn heevd(
        jobz: u8,
        uplo: u8,
        n: i32,
        a: &mut [Self],
        lda: i32,
        w: &mut [Self::Real],
        work: &mut [Self],
        lwork: i32,
        rwork: &mut [Self::Real],
        lrwork: i32,
        iwork: &mut [i32],
        liwork: i32,
        info: &mut i32,
    );
    unsafe fn heevr(
        jobz: u8,
        range: u8,
        uplo: u8,
        n: i32,
        a: &mut [Self],
        lda: i32,
        vl: Self::Real,
        vu: Self::Real,
        il: i32,
        iu: i32,
        m: &mut i32,
        w: &mut [Self::Real],
        z: &mut [Self],
        ldz: i32,
        isuppz: &mut [i32],
        work: &mut [Self],
        lwork: i32,
        rwork: &mut [Self::Real],
        lrwork: i32,
        iwork: &mut [i32],
        liwork: i32,
        info: &mut i32,
    );
    unsafe fn hegvd(
        itype: i32,
        jobz: u8,
        uplo: u8,
        n: i32,
        a: &mut [Self],
        lda: i32,
        b: &mut [Self],
        ldb: i32,
        w: &mut [Self::Real],
        work: &mut [Self],
        lwork: i32,
        rwork: &mut [Self::Real],
        lrwork: i32,
        iwork: &mut [i32],
        liwork: i32,
        info: &mut i32,
    );
    unsafe fn getrf(m: i32, n: i32, a: &mut [Self], lda: i32, ipiv: &mut [i32], info: &mut i32);
    unsafe fn getrs(
        trans: u8,
        n: i32,
        nrhs: i32,
        a: &[Self],
        lda: i32,
        ipiv: &[i32],
        b: &mut [Self],
        ldb: i32,
        info: &mut i32,
    );
}

macro_rules! impl_lapack_common {
    ($potrf:ident, $potri:ident, $trtri:ident, $getrf:ident, $getrs:ident) => {
        unsafe fn potrf(uplo: u8, n: i32, a: &mut [Self], lda: i32, info: &mut i32) {
            // SAFETY: arguments checked by the caller.
            blas_call::<Self, _>(|| unsafe { lapack::$potrf(uplo, n, a, lda, info) })
        }
        unsafe fn potri(uplo: u8, n: i32, a: &mut [Self], lda: i32, info: &mut i32) {
            // SAFETY: arguments checked by the caller.
            blas_call::<Self, _>(|| unsafe { lapack::$potri(uplo, n, a, lda, info) })
        }
        unsafe fn trtri(uplo: u8, diag: u8, n: i32, a: &mut [Self], lda: i32, info: &mut i32) {
            // SAFETY: arguments checked by the caller.
            blas_call::<Self, _>(|| unsafe { lapack::$trtri(uplo, diag, n, a, lda, info) })
        }
        unsafe fn getrf(
            m: i32,
            n: i32,
            a: &mut [Self],
            lda: i32,
            ipiv: &mut [i32],
            info: &mut i32,
        ) {
            // SAFETY: arguments checked by the caller.
            blas_call::<Self, _>(|| unsafe { lapack::$getrf(m, n, a, lda, ipiv, info) })
        }
        unsafe fn getrs(
            trans: u8,
            n: i32,
            nrhs: i32,
            a: &[Self],
            lda: i32,
            ipiv: &[i32],
            b: &mut [Self],
            ldb: i32,
            info: &mut i32,
        ) {
            // SAFETY: arguments checked by the caller.
            blas_call::<Self, _>(|| unsafe {
                lapack::$getrs(trans, n, nrhs, a, lda, ipiv, b, ldb, info)
            })
        }
    };
}

macro_rules! impl_lapack_real {
    ($t:ty, $names:expr, $potrf:ident, $potri:ident, $trtri:ident, $getrf:ident, $getrs:ident,
     $syevd:ident, $syevr:ident, $sygvd:ident) => {
        impl Lapack for $t {
            const NAMES: [&'static str; 8] = $names;
            impl_lapack_common!($potrf, $potri, $trtri, $getrf, $getrs);
            unsafe fn heevd(
                jobz: u8,
                uplo: u8,
                n: i32,
                a: &mut [Self],
                lda: i32,
                w: &mut [Self],
                work: &mut [Self],
                lwork: i32,
                _rwork: &mut [Self],
                _lrwork: i32,
                iwork: &mut [i32],
                liwork: i32,
                info: &mut i32,
            ) {
                // SAFETY: arguments and workspace sizes checked by the caller.
                blas_call::<Self, _>(|| unsafe {
                    lapack::$syevd(jobz, uplo, n, a, lda, w, work, lwork, iwork, liwork, info)
                })
            }
            unsafe fn heevr(
                jobz: u8,
                range: u8,
                uplo: u8,
                n: i32,
                a: &mut [Self],
                lda: i32,
                vl: Self,
                vu: Self,
                il: i32,
                iu: i32,
                m: &mut i32,
                w: &mut [Self],
                z: &mut [Self],
                ldz: i32,
                isuppz: &mut [i32],
                work: &mut [Self],
                lwork: i32,
                _rwork: &mut [Self],
                _lrwork: i32,
                iwork: &mut [i32],
                liwork: i32,
                info: &mut i32,
            ) {
                // SAFETY: arguments and workspace sizes checked by the caller.
                blas_call::<Self, _>(|| unsafe {
                    lapack::$syevr(
                        jobz, range, uplo, n, a, lda, vl, vu, il, iu, 0.0, m, w, z, ldz, isuppz,
                        work, lwork, iwork, liwork, info,
                    )
                })
            }
            unsafe fn hegvd(
                itype: i32,
                jobz: u8,
                uplo: u8,
                n: i32,
                a: &mut [Self],
                lda: i32,
                b: &mut [Self],
                ldb: i32,
                w: &mut [Self],
                work: &mut [Self],
                lwork: i32,
                _rwork: &mut [Self],
                _lrwork: i32,
                iwork: &mut [i32],
                liwork: i32,
                info: &mut i32,
            ) {
                // SAFETY: arguments and workspace sizes checked by the caller.
                blas_call::<Self, _>(|| unsafe {
                    lapack::$sygvd(
                        &[itype],
                        jobz,
                        uplo,
                        n,
                        a,
                        lda,
                        b,
                        ldb,
                        w,
                        work,
                        lwork,
                        iwork,
                        liwork,
                        info,
                    )
                })
            }
        }
    };
}

macro_rules! impl_lapack_complex {
    ($t:ty, $r:ty, $names:expr, $potrf:ident, $potri:ident, $trtri:ident, $getrf:ident,
     $getrs:ident, $heevd:ident, $heevr:ident, $hegvd:ident) => {
        impl Lapack for $t {
            const NAMES: [&'static str; 8] = $names;
            impl_lapack_common!($potrf, $potri, $trtri, $getrf, $getrs);
            unsafe fn heevd(
                jobz: u8,
                uplo: u8,
                n: i32,
                a: &mut [Self],
                lda: i32,
                w: &mut [$r],
                work: &mut [Self],
                lwork: i32,
                rwork: &mut [$r],
                lrwork: i32,
                iwork: &mut [i32],
                liwork: i32,
                info: &mut i32,
            ) {
                // SAFETY: arguments and workspace sizes checked by the caller.
                blas_call::<Self, _>(|| unsafe {
                    lapack::$heevd(
                        jobz, uplo, n, a, lda, w, work, lwork, rwork, lrwork, iwork, liwork, info,
                    )
                })
            }
            unsafe fn heevr(
                jobz: u8,
                range: u8,
                uplo: u8,
                n: i32,
                a: &mut [Self],
                lda: i32,
                vl: $r,
                vu: $r,
                il: i32,
                iu: i32,
                m: &mut i32,
                w: &mut [$r],
                z: &mut [Self],
                ldz: i32,
                isuppz: &mut [i32],
                work: &mut [Self],
                lwork: i32,
                rwork: &mut [$r],
                lrwork: i32,
                iwork: &mut [i32],
                liwork: i32,
                info: &mut i32,
            ) {
                // SAFETY: arguments and workspace sizes checked by the caller.
                blas_call::<Self, _>(|| unsafe {
                    lapack::$heevr(
                        jobz, range, uplo, n, a, lda, vl, vu, il, iu, 0.0, m, w, z, ldz, isuppz,
                        work, lwork, rwork, lrwork, iwork, liwork, info,
                    )
                })
            }
            unsafe fn hegvd(
                itype: i32,
                jobz: u8,
                uplo: u8,
                n: i32,
                a: &mut [Self],
                lda: i32,
                b: &mut [Self],
                ldb: i32,
                w: &mut [$r],
                work: &mut [Self],
                lwork: i32,
                rwork: &mut [$r],
                lrwork: i32,
                iwork: &mut [i32],
                liwork: i32,
                info: &mut i32,
            ) {
                // SAFETY: arguments and workspace sizes checked by the caller.
                blas_call::<Self, _>(|| unsafe {
                    lapack::$hegvd(
                        &[itype],
                        jobz,
                        uplo,
                        n,
                        a,
                        lda,
                        b,
                        ldb,
                        w,
                        work,
                        lwork,
                        rwork,
                        lrwork,
                        iwork,
                        liwork,
                        info,
                    )
                })
            }
        }
    };
}

impl_lapack_real!(
    f32,
    ["spotrf", "spotri", "strtri", "ssyevd", "ssyevr", "ssygvd", "sgetrf", "sgetrs"],
    spotrf,
    spotri,
    strtri,
    sgetrf,
    sgetrs,
    ssyevd,
    ssyevr,
    ssygvd
);
impl_lapack_real!(
    f64,
    ["dpotrf", "dpotri", "dtrtri", "dsyevd", "dsyevr", "dsygvd", "dgetrf", "dgetrs"],
    dpotrf,
    dpotri,
    dtrtri,
    dgetrf,
    dgetrs,
    dsyevd,
    dsyevr,
    dsygvd
);
impl_lapack_complex!(
    c32,
    f32,
    ["cpotrf", "cpotri", "ctrtri", "cheevd", "cheevr", "chegvd", "cgetrf", "cgetrs"],
    cpotrf,
    cpotri,
    ctrtri,
    cgetrf,
    cgetrs,
    cheevd,
    cheevr,
    chegvd
);
impl_lapack_complex!(
    c64,
    f64,
    ["zpotrf", "zpotri", "ztrtri", "zheevd", "zheevr", "zhegvd", "zgetrf", "zgetrs"],
    zpotrf,
    zpotri,
    ztrtri,
    zgetrf,
    zgetrs,
    zheevd,
    zheevr,
    zhegvd
);

/// `?lange` and `?gecon` of one element type.
pub(super) trait Gecon: Scalar {
    /// `?lange('1', ...)`.
    unsafe fn lange1(m: i32, n: i32, a: &[Self], lda: i32, work: &mut [Self::Real]) -> Self::Real;
    /// `?gecon('1', ...)`, returning `info`.
    unsafe fn gecon1(
        n: i32,
        a: &[Self],
        lda: i32,
        anorm: Self::Real,
        rcond: &mut Self::Real,
    ) -> i32;
}

macro_rules! impl_gecon {
    ($t:ty, $lange:ident, $gecon:ident, real) => {
        impl Gecon for $t {
            unsafe fn lange1(m: i32, n: i32, a: &[Self], lda: i32, work: &mut [Self]) -> Self {
                // SAFETY: sizes checked by the caller.
                blas_call::<Self, _>(|| unsafe { lapack::$lange(b'1', m, n, a, lda, work) })
            }
            unsafe fn gecon1(n: i32, a: &[Self], lda: i32, anorm: Self, rcond: &mut Self) -> i32 {
                // Past what LAPACK uses: room for a stray read of the OpenBLAS kernels.
                let mut work = vec![0.0; 4 * n as usize + openblas::WORK_MARGIN];
                let mut iwork = vec![0i32; n as usize];
                let mut info = 0;
                // SAFETY: sizes checked by the caller; workspaces as LAPACK documents.
                blas_call::<Self, _>(|| unsafe {
                    lapack::$gecon(
                        b'1', n, a, lda, anorm, rcond, &mut work, &mut iwork, &mut info,
                    )
                });
                info
            }
        }
    };
    ($t:ty, $r:ty, $lange:ident, $gecon:ident, complex) => {
        impl Gecon for $t {
            unsafe fn lange1(m: i32, n: i32, a: &[Self], lda: i32, work: &mut [$r]) -> $r {
                // SAFETY: sizes checked by the caller.
                blas_call::<Self, _>(|| unsafe { lapack::$lange(b'1', m, n, a, lda, work) })
            }
            unsafe fn gecon1(n: i32, a: &[Self], lda: i32, anorm: $r, rcond: &mut $r) -> i32 {
                // As above: a margin past what LAPACK uses.
                let mut work = vec![<$t>::new(0.0, 0.0); 2 * n as usize + openblas::WORK_MARGIN];
                let mut rwork = vec![0.0; 2 * n as usize + openblas::WORK_MARGIN];
                let mut info = 0;
                // SAFETY: sizes checked by the caller; workspaces as LAPACK documents.
                blas_call::<Self, _>(|| unsafe {
                    lapack::$gecon(
                        b'1', n, a, lda, anorm, rcond, &mut work, &mut rwork, &mut info,
                    )
                });
                info
            }
        }
    };
}
impl_gecon!(f32, slange, sgecon, real);
impl_gecon!(f64, dlange, dgecon, real);
impl_gecon!(c32, f32, clange, cgecon, complex);
impl_gecon!(c64, f64, zlange, zgecon, complex);
