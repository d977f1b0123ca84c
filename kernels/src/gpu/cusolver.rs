//! The per-type table of cuSOLVER dense entry points (cudarc's `sys` bindings, so the
//! complex routines are reachable too), and the one place a cuSOLVER status becomes an
//! error. The triangular inverse has only the generic 64-bit API (`cusolverDnXtrtri`),
//! which takes the element type as [`cudaDataType`]; the table names it per type.

use ctensor_base::gpu::context;
use ctensor_base::{c32, c64, Error, Result};
use cudarc::cusolver::sys::{
    self as cs, cublasFillMode_t as Fill, cublasOperation_t as Op, cudaDataType,
    cusolverDnHandle_t as H, cusolverEigMode_t as Mode, cusolverEigRange_t as Range,
    cusolverEigType_t as EigType, cusolverStatus_t as Status,
};

use super::cublas::Cublas;

/// The element types cuSOLVER factors and diagonalizes, and their entry points. Every
/// `*_buffer` function returns the workspace length, in elements, of its routine.
#[allow(clippy::too_many_arguments, missing_docs)]
pub trait Cusolver: Cublas {
    /// Routine names in the order potrf, potri, trtri, heevd, heevdx, hegvd, getrf, getrs.
    const NAMES: [&'static str; 8];
    /// The element type in the generic API.
    const DATA_TYPE: cudaDataType;
    unsafe fn potrf_buffer(h: H, u: Fill, n: i32, a: *mut Self, lda: i32, lw: *mut i32) -> Status;
    unsafe fn potrf(
        h: H,
        u: Fill,
        n: i32,
        a: *mut Self,
        lda: i32,
        work: *mut Self,
        lw: i32,
        info: *mut i32,
    ) -> Status;
    unsafe fn potri_buffer(h: H, u: Fill, n: i32, a: *mut Self, lda: i32, lw: *mut i32) -> Status;
    unsafe fn potri(
        h: H,
        u: Fill,
        n: i32,
        a: *mut Self,
        lda: i32,
        work: *mut Self,
        lw: i32,
        info: *mut i32,
    ) -> Status;
    unsafe fn evd_buffer(
        h: H,
        jobz: Mode,
        u: Fill,
        n: i32,
        a: *const Self,
        lda: i32,
        w: *const Self::Real,
        lw: *mut i32,
    ) -> Status;
    unsafe fn evd(
        h: H,
        jobz: Mode,
        u: Fill,
        n: i32,
        a: *mut Self,
        lda: i32,
        w: *mut Self::Real,
        work: *mut Self,
        lw: i32,
        info: *mut i32,
    ) -> Status;
    unsafe fn evdx_buffer(
        h: H,
        jobz: Mode,
        r: Range,
        u: Fill,
        n: i32,
        a: *const Self,
        lda: i32,
        vl: Self::Real,
        vu: Self::Real,
        il: i32,
        iu: i32,
        m: *mut i32,
        w: *const Self::Real,
        lw: *mut i32,
    ) -> Status;
    unsafe fn evdx(
        h: H,
        jobz: Mode,
        r: Range,
        u: Fill,
        n: i32,
        a: *mut Self,
        lda: i32,
        vl: Self::Real,
        vu: Self::Real,
        il: i32,
        iu: i32,
        m: *mut i32,
        w: *mut Self::Real,
        work: *mut Self,
        lw: i32,
        info: *mut i32,
    ) -> Status;
    unsafe fn gvd_buffer(
        h: H,
        itype: EigType,
        jobz: Mode,
        u: Fill,
        n: i32,
        a: *const Self,
        lda: i32,
        b: *const Self,
        ldb: i32,
        w: *const Self::Real,
        lw: *mut i32,
    ) -> Status;
    unsafe fn gvd(
        h: H,
        itype: EigType,
        jobz: Mode,
        u: Fill,
        n: i32,
        a: *mut Self,
        lda: i32,
        b: *mut Self,
        ldb: i32,
        w: *mut Self::Real,
        work: *mut Self,
        lw: i32,
        info: *mut i32,
    ) -> Status;
    unsafe fn getrf_buffer(h: H, m: i32, n: i32, a: *mut Self, lda: i32, lw: *mut i32) -> Status;
    unsafe fn getrf(
        h: H,
        m: i32,
        n: i32,
        a: *mut Self,
        lda: i32,
        work: *mut Self,
        ipiv: *mut i32,
        info: *mut i32,
    ) -> Status;
    unsafe fn getrs(
        h: H,
        t: Op,
        n: i32,
        nrhs: i32,
        a: *const Self,
        lda: i32,
        ipiv: *const i32,
        b: *mut Self,
        ldb: i32,
        info: *mut i32,
    ) -> Status;
}

macro_rules! cusolver_impl {
    ($t:ty, $dt:ident, $names:expr, $potrf_b:ident, $potrf:ident, $potri_b:ident,
     $potri:ident, $evd_b:ident, $evd:ident, $evdx_b:ident, $evdx:ident, $gvd_b:ident,
     $gvd:ident, $getrf_b:ident, $getrf:ident, $getrs:ident) => {
        // SAFETY (all functions): thin forwards; the caller checked the sizes and vouches
        // for the device memory. The `as _` casts are between layout-identical types
        // (`Complex<f32>` and `float2`, …).
        impl Cusolver for $t {
            const NAMES: [&'static str; 8] = $names;
            const DATA_TYPE: cudaDataType = cudaDataType::$dt;
            unsafe fn potrf_buffer(
                h: H,
                u: Fill,
                n: i32,
                a: *mut Self,
                lda: i32,
                lw: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$potrf_b(h, u, n, a as _, lda, lw) }
            }
            unsafe fn potrf(
                h: H,
                u: Fill,
                n: i32,
                a: *mut Self,
                lda: i32,
                work: *mut Self,
                lw: i32,
                info: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$potrf(h, u, n, a as _, lda, work as _, lw, info) }
            }
            unsafe fn potri_buffer(
                h: H,
                u: Fill,
                n: i32,
                a: *mut Self,
                lda: i32,
                lw: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$potri_b(h, u, n, a as _, lda, lw) }
            }
            unsafe fn potri(
                h: H,
                u: Fill,
                n: i32,
                a: *mut Self,
                lda: i32,
                work: *mut Self,
                lw: i32,
                info: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$potri(h, u, n, a as _, lda, work as _, lw, info) }
            }
            unsafe fn evd_buffer(
                h: H,
                jobz: Mode,
                u: Fill,
                n: i32,
                a: *const Self,
                lda: i32,
                w: *const Self::Real,
                lw: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$evd_b(h, jobz, u, n, a as _, lda, w, lw) }
            }
            unsafe fn evd(
                h: H,
                jobz: Mode,
                u: Fill,
                n: i32,
                a: *mut Self,
                lda: i32,
                w: *mut Self::Real,
                work: *mut Self,
                lw: i32,
                info: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$evd(h, jobz, u, n, a as _, lda, w, work as _, lw, info) }
            }
            unsafe fn evdx_buffer(
                h: H,
                jobz: Mode,
                r: Range,
                u: Fill,
                n: i32,
                a: *const Self,
                lda: i32,
                vl: Self::Real,
                vu: Self::Real,
                il: i32,
                iu: i32,
                m: *mut i32,
                w: *const Self::Real,
                lw: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$evdx_b(h, jobz, r, u, n, a as _, lda, vl, vu, il, iu, m, w, lw) }
            }
            unsafe fn evdx(
                h: H,
                jobz: Mode,
                r: Range,
                u: Fill,
                n: i32,
                a: *mut Self,
                lda: i32,
                vl: Self::Real,
                vu: Self::Real,
                il: i32,
                iu: i32,
                m: *mut i32,
                w: *mut Self::Real,
                work: *mut Self,
                lw: i32,
                info: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe {
                    cs::$evdx(
                        h, jobz, r, u, n, a as _, lda, vl, vu, il, iu, m, w, work as _, lw, info,
                    )
                }
            }
            unsafe fn gvd_buffer(
                h: H,
                itype: EigType,
                jobz: Mode,
                u: Fill,
                n: i32,
                a: *const Self,
                lda: i32,
                b: *const Self,
                ldb: i32,
                w: *const Self::Real,
                lw: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$gvd_b(h, itype, jobz, u, n, a as _, lda, b as _, ldb, w, lw) }
            }
            unsafe fn gvd(
                h: H,
                itype: EigType,
                jobz: Mode,
                u: Fill,
                n: i32,
                a: *mut Self,
                lda: i32,
                b: *mut Self,
                ldb: i32,
                w: *mut Self::Real,
                work: *mut Self,
                lw: i32,
                info: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe {
                    cs::$gvd(
                        h, itype, jobz, u, n, a as _, lda, b as _, ldb, w, work as _, lw, info,
                    )
                }
            }
            unsafe fn getrf_buffer(
                h: H,
                m: i32,
                n: i32,
                a: *mut Self,
                lda: i32,
                lw: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$getrf_b(h, m, n, a as _, lda, lw) }
            }
            unsafe fn getrf(
                h: H,
                m: i32,
                n: i32,
                a: *mut Self,
                lda: i32,
                work: *mut Self,
                ipiv: *mut i32,
                info: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$getrf(h, m, n, a as _, lda, work as _, ipiv, info) }
            }
            unsafe fn getrs(
                h: H,
                t: Op,
                n: i32,
                nrhs: i32,
                a: *const Self,
                lda: i32,
                ipiv: *const i32,
                b: *mut Self,
                ldb: i32,
                info: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$getrs(h, t, n, nrhs, a as _, lda, ipiv, b as _, ldb, info) }
            }
        }
    };
}

/// The routine names of one type prefix, in [`Cusolver::NAMES`] order.
macro_rules! names {
    ($p:literal, $ev:literal, $gv:literal) => {
        [
            concat!("cusolverDn", $p, "potrf"),
            concat!("cusolverDn", $p, "potri"),
            "cusolverDnXtrtri",
            concat!("cusolverDn", $p, $ev, "evd"),
            concat!("cusolverDn", $p, $ev, "evdx"),
            concat!("cusolverDn", $p, $gv, "gvd"),
            concat!("cusolverDn", $p, "getrf"),
            concat!("cusolverDn", $p, "getrs"),
        ]
    };
}

cusolver_impl!(
    f32,
    CUDA_R_32F,
    names!("S", "sy", "sy"),
    cusolverDnSpotrf_bufferSize,
    cusolverDnSpotrf,
    cusolverDnSpotri_bufferSize,
    cusolverDnSpotri,
    cusolverDnSsyevd_bufferSize,
    cusolverDnSsyevd,
    cusolverDnSsyevdx_bufferSize,
    cusolverDnSsyevdx,
    cusolverDnSsygvd_bufferSize,
    cusolverDnSsygvd,
    cusolverDnSgetrf_bufferSize,
    cusolverDnSgetrf,
    cusolverDnSgetrs
);
cusolver_impl!(
    f64,
    CUDA_R_64F,
    names!("D", "sy", "sy"),
    cusolverDnDpotrf_bufferSize,
    cusolverDnDpotrf,
    cusolverDnDpotri_bufferSize,
    cusolverDnDpotri,
    cusolverDnDsyevd_bufferSize,
    cusolverDnDsyevd,
    cusolverDnDsyevdx_bufferSize,
    cusolverDnDsyevdx,
    cusolverDnDsygvd_bufferSize,
    cusolverDnDsygvd,
    cusolverDnDgetrf_bufferSize,
    cusolverDnDgetrf,
    cusolverDnDgetrs
);
cusolver_impl!(
    c32,
    CUDA_C_32F,
    names!("C", "he", "he"),
    cusolverDnCpotrf_bufferSize,
    cusolverDnCpotrf,
    cusolverDnCpotri_bufferSize,
    cusolverDnCpotri,
    cusolverDnCheevd_bufferSize,
    cusolverDnCheevd,
    cusolverDnCheevdx_bufferSize,
    cusolverDnCheevdx,
    cusolverDnChegvd_bufferSize,
    cusolverDnChegvd,
    cusolverDnCgetrf_bufferSize,
    cusolverDnCgetrf,
    cusolverDnCgetrs
);
cusolver_impl!(
    c64,
    CUDA_C_64F,
    names!("Z", "he", "he"),
    cusolverDnZpotrf_bufferSize,
    cusolverDnZpotrf,
    cusolverDnZpotri_bufferSize,
    cusolverDnZpotri,
    cusolverDnZheevd_bufferSize,
    cusolverDnZheevd,
    cusolverDnZheevdx_bufferSize,
    cusolverDnZheevdx,
    cusolverDnZhegvd_bufferSize,
    cusolverDnZhegvd,
    cusolverDnZgetrf_bufferSize,
    cusolverDnZgetrf,
    cusolverDnZgetrs
);

/// Runs `body` with the context's cuSOLVER handle (created on first use).
pub(crate) fn with_handle<R>(body: impl FnOnce(H) -> Result<R>) -> Result<R> {
    context()?.with_cusolver(body)
}

/// `Ok` for a successful cuSOLVER status, otherwise `Error::Cuda` naming `call`.
pub(crate) fn status(s: Status, call: impl std::fmt::Display) -> Result<()> {
    match s {
        Status::CUSOLVER_STATUS_SUCCESS => Ok(()),
        s => Err(Error::Cuda {
            library: "cuSOLVER",
            call: call.to_string(),
            detail: format!("{s:?}"),
        }),
    }
}

/// cuSOLVER's fill-mode flag for `u`.
pub(crate) fn fill(u: crate::lapack::Uplo) -> Fill {
    match u {
        crate::lapack::Uplo::Upper => Fill::CUBLAS_FILL_MODE_UPPER,
        crate::lapack::Uplo::Lower => Fill::CUBLAS_FILL_MODE_LOWER,
    }
}

/// cuSOLVER's eigen-mode flag for `j`.
pub(crate) fn mode(j: crate::lapack::Jobz) -> Mode {
    match j {
        crate::lapack::Jobz::ValuesOnly => Mode::CUSOLVER_EIG_MODE_NOVECTOR,
        crate::lapack::Jobz::Vectors => Mode::CUSOLVER_EIG_MODE_VECTOR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_status_names_the_library_call_and_status() {
        assert!(status(Status::CUSOLVER_STATUS_SUCCESS, "cusolverDnZheevd").is_ok());
        let e = status(Status::CUSOLVER_STATUS_INVALID_VALUE, "cusolverDnZheevd").unwrap_err();
        assert!(
            matches!(&e, Error::Cuda { library: "cuSOLVER", call, detail }
                if call == "cusolverDnZheevd" && detail == "CUSOLVER_STATUS_INVALID_VALUE"),
            "{e}"
        );
        assert_eq!(<c64 as Cusolver>::NAMES[3], "cusolverDnZheevd");
        assert_eq!(<f32 as Cusolver>::NAMES[4], "cusolverDnSsyevdx");
        assert_eq!(<c32 as Cusolver>::NAMES[2], "cusolverDnXtrtri");
    }
}
