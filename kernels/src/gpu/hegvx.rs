//! [`LapackHegvx`] on the GPU: cuSOLVER's `?sygvdx` / `?hegvdx` (divide and conquer for
//! the selected pairs), the eigenvectors copied from `a` into `z`.

use ctensor_base::{c32, c64, GpuDevice, Result, Scalar};
use cudarc::cusolver::sys::{
    self as cs, cublasFillMode_t as Fill, cusolverDnHandle_t as H, cusolverEigMode_t as Mode,
    cusolverEigRange_t as Range, cusolverEigType_t as EigType, cusolverStatus_t as Status,
};

use super::cusolver::{fill, status};
use super::lapack::{evd_bound, run, workspace};
use super::launch::Scratch;
use super::memory::copy_strided;
use crate::lapack::args::{info_result, plan_hegvx, Select};
use crate::lapack::{require_finite, EigRange, LapackHegvx, Part, Uplo};

/// cuSOLVER's `?sygvdx` / `?hegvdx` of one element type.
#[allow(clippy::too_many_arguments, missing_docs)]
pub trait CusolverHegvx: Scalar {
    const NAME: &'static str;
    unsafe fn buffer(
        h: H,
        t: EigType,
        j: Mode,
        r: Range,
        u: Fill,
        n: i32,
        a: *const Self,
        lda: i32,
        b: *const Self,
        ldb: i32,
        vl: Self::Real,
        vu: Self::Real,
        il: i32,
        iu: i32,
        m: *mut i32,
        w: *const Self::Real,
        lw: *mut i32,
    ) -> Status;
    unsafe fn call(
        h: H,
        t: EigType,
        j: Mode,
        r: Range,
        u: Fill,
        n: i32,
        a: *mut Self,
        lda: i32,
        b: *mut Self,
        ldb: i32,
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
}

macro_rules! impl_gvdx {
    ($($t:ty => $b:ident, $f:ident);*) => {$(
        // SAFETY (both functions): thin forwards; the caller checked the sizes and vouches
        // for the device memory; the `as _` casts are between layout-identical types.
        impl CusolverHegvx for $t {
            const NAME: &'static str = stringify!($f);
            unsafe fn buffer(
                h: H, t: EigType, j: Mode, r: Range, u: Fill, n: i32, a: *const Self, lda: i32, b: *const Self,
                ldb: i32, vl: Self::Real, vu: Self::Real, il: i32, iu: i32, m: *mut i32, w: *const Self::Real,
                lw: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$b(h, t, j, r, u, n, a as _, lda, b as _, ldb, vl, vu, il, iu, m, w as _, lw) }
            }
            unsafe fn call(
                h: H, t: EigType, j: Mode, r: Range, u: Fill, n: i32, a: *mut Self, lda: i32, b: *mut Self,
                ldb: i32, vl: Self::Real, vu: Self::Real, il: i32, iu: i32, m: *mut i32, w: *mut Self::Real,
                work: *mut Self, lw: i32, info: *mut i32,
            ) -> Status {
                // SAFETY: see the note on the impl.
                unsafe { cs::$f(h, t, j, r, u, n, a as _, lda, b as _, ldb, vl, vu, il, iu, m, w as _, work as _, lw, info) }
            }
        }
    )*};
}
impl_gvdx!(
    f32 => cusolverDnSsygvdx_bufferSize, cusolverDnSsygvdx;
    f64 => cusolverDnDsygvdx_bufferSize, cusolverDnDsygvdx;
    c32 => cusolverDnChegvdx_bufferSize, cusolverDnChegvdx;
    c64 => cusolverDnZhegvdx_bufferSize, cusolverDnZhegvdx
);

impl<T: CusolverHegvx> LapackHegvx<T> for GpuDevice {
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
        let op = "hegvx";
        let Some((p, bq)) = plan_hegvx(itype, n, a, lda, b, ldb, &range, w, z, ldz)? else {
            return Ok(0);
        };
        // SAFETY: arguments checked above; the caller vouches for the memory.
        unsafe {
            require_finite::<T, GpuDevice>(T::NAME, "a", Part::Triangle(uplo), n, n, a, lda)?;
            require_finite::<T, GpuDevice>(T::NAME, "b", Part::Triangle(uplo), n, n, b, ldb)?;
        }
        let zero = <T::Real as Scalar>::zero();
        let (r, vl, vu, il, iu) = match p.select {
            Select::All => (Range::CUSOLVER_EIG_RANGE_ALL, zero, zero, 0, 0),
            Select::Index { il, iu } => (Range::CUSOLVER_EIG_RANGE_I, zero, zero, il, iu),
            Select::Value { vl, vu } => (Range::CUSOLVER_EIG_RANGE_V, vl, vu, 0, 0),
        };
        let t = match itype {
            1 => EigType::CUSOLVER_EIG_TYPE_1,
            2 => EigType::CUSOLVER_EIG_TYPE_2,
            _ => EigType::CUSOLVER_EIG_TYPE_3,
        };
        let (j, u) = (Mode::CUSOLVER_EIG_MODE_VECTOR, fill(uplo));
        let (n32, lda32, ldb32) = (p.a.n, p.a.ld, bq.ld);
        let mut m = 0i32;
        let info = run(op, |h, info| {
            // SAFETY: sizes and the selection checked; `a`, `b`, `w` are device memory of the
            // checked spans (caller); `m` is a host integer, as cuSOLVER expects.
            unsafe {
                let (work, lw): (Scratch<T>, i32) =
                    workspace(op, T::NAME, evd_bound(n, true), |lw| {
                        T::buffer(
                            h, t, j, r, u, n32, a, lda32, b, ldb32, vl, vu, il, iu, &mut m, w, lw,
                        )
                    })?;
                status(
                    T::call(
                        h,
                        t,
                        j,
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
                        &mut m,
                        w,
                        work.ptr(),
                        lw,
                        info,
                    ),
                    T::NAME,
                )
            }
        })?;
        const ARGS: [&str; 17] = [
            "itype", "jobz", "range", "uplo", "n", "A", "lda", "B", "ldb", "vl", "vu", "il", "iu",
            "meig", "W", "work", "lwork",
        ];
        info_result(T::NAME, info, &ARGS, |i| {
            crate::lapack::args::gvd_failure(crate::lapack::Jobz::Vectors, n, i)
        })?;
        let m = (m.max(0) as usize).min(p.cols);
        if m > 0 {
            // SAFETY: the first `m` columns of `a` hold the eigenvectors; `z` has room for
            // `cols >= m` columns of `n` (checked); they do not overlap (caller).
            unsafe { copy_strided(op, &[m, n], &[ldz, 1], z, &[lda, 1], a, false)? };
        }
        Ok(m)
    }
}
