//! BLAS kernels on the host: CBLAS (the `cblas` crate) on OpenBLAS.
//!
//! Each generic impl validates its arguments, converts sizes to the BLAS integer, and
//! makes one call through [`Cblas`], the per-type table of CBLAS entry points.
//!
//! The per-type CBLAS table is in `cblas.rs`, the batched forms in `blas_batched.rs`.

use cblas::Transpose;
use ctensor_base::{CpuDevice, Result, Scalar};

use super::blas_batched::Product;
use super::cblas::Cblas;
use super::{slice, slice_mut};
use crate::blas::args::{
    plan_gemv, vector_fast, vector_one, vector_pair, GemmPlan, GemvPlan, Vector,
};
use crate::blas::*;

#[inline]
pub(super) fn cblas_trans<T: Scalar>(t: Trans) -> Transpose {
    match t {
        Trans::N => Transpose::None,
        Trans::T => Transpose::Ordinary,
        // For real types `C` means `T`; CBLAS accepts either, this keeps it explicit.
        Trans::C if T::DTYPE.is_complex() => Transpose::Conjugate,
        Trans::C => Transpose::Ordinary,
    }
}

// Level 1. Each call has two paths: the common one (positive increments, 1 to `i32::MAX`
// elements, non-null pointers; `vector_fast`) goes straight to CBLAS with no `Result`
// built on the way, and everything else (empty vectors, negative increments, errors)
// goes to a `*_general` function out of line that checks every argument and says what is
// wrong. Keeping the error path out of the inlined one keeps a 15–25 ns call on a short
// vector free of the stack frame an `Error` needs (`make bench`, table "goals").

/// Both vectors of a two-vector call on their common path: the BLAS length and the two.
#[inline(always)]
fn fast_pair<T>(
    n: usize,
    x: *const T,
    incx: isize,
    y: *const T,
    incy: isize,
) -> Option<(i32, Vector, Vector)> {
    let (vx, vy) = (vector_fast(n, x, incx)?, vector_fast(n, y, incy)?);
    // `vector_fast` took `n <= i32::MAX`.
    Some((n as i32, vx, vy))
}

/// Which dot product of [`Cblas`] to call.
#[derive(Clone, Copy)]
enum Conj {
    /// `dotc`: the first vector conjugated.
    Yes,
    /// `dotu`.
    No,
}

/// # Safety
/// As [`BlasDot::dot`], with `n`, `vx`, `vy` from checks of the caller's arguments.
#[inline(always)]
unsafe fn dot_checked<T: Cblas>(
    conj: Conj,
    n: i32,
    x: *const T,
    vx: Vector,
    y: *const T,
    vy: Vector,
) -> T {
    // SAFETY: the caller vouches for the spans its arguments were checked for.
    let (xs, ys) = unsafe { (slice(x, vx.span), slice(y, vy.span)) };
    // SAFETY: as above.
    unsafe {
        match conj {
            Conj::Yes => T::dotc(n, xs, vx.inc, ys, vy.inc),
            Conj::No => T::dotu(n, xs, vx.inc, ys, vy.inc),
        }
    }
}

/// The general path of `dot` and `dotu`.
///
/// # Safety
/// As [`BlasDot::dot`].
#[cold]
#[inline(never)]
unsafe fn dot_general<T: Cblas>(
    op: &'static str,
    conj: Conj,
    n: usize,
    x: *const T,
    incx: isize,
    y: *const T,
    incy: isize,
) -> Result<T> {
    let Some((n, vx, vy)) = vector_pair(op, n, x, incx, y, incy)? else {
        return Ok(T::zero());
    };
    // SAFETY: the caller vouches for the spans checked above.
    Ok(unsafe { dot_checked(conj, n, x, vx, y, vy) })
}

impl<T: Cblas> BlasDot<T> for CpuDevice {
    #[inline]
    unsafe fn dot(n: usize, x: *const T, incx: isize, y: *const T, incy: isize) -> Result<T> {
        match fast_pair(n, x, incx, y, incy) {
            // SAFETY: the caller vouches for the spans checked by `fast_pair`.
            Some((n, vx, vy)) => Ok(unsafe { dot_checked(Conj::Yes, n, x, vx, y, vy) }),
            // SAFETY: forwarded from the caller.
            None => unsafe { dot_general("dot", Conj::Yes, n, x, incx, y, incy) },
        }
    }

    #[inline]
    unsafe fn dotu(n: usize, x: *const T, incx: isize, y: *const T, incy: isize) -> Result<T> {
        match fast_pair(n, x, incx, y, incy) {
            // SAFETY: the caller vouches for the spans checked by `fast_pair`.
            Some((n, vx, vy)) => Ok(unsafe { dot_checked(Conj::No, n, x, vx, y, vy) }),
            // SAFETY: forwarded from the caller.
            None => unsafe { dot_general("dotu", Conj::No, n, x, incx, y, incy) },
        }
    }
}

/// The general path of `nrm2`.
///
/// # Safety
/// As [`BlasNrm2::nrm2`].
#[cold]
#[inline(never)]
unsafe fn nrm2_general<T: Cblas>(n: usize, x: *const T, incx: isize) -> Result<T::Real> {
    let Some((n, vx)) = vector_one("nrm2", n, x, incx)? else {
        return Ok(<T::Real as Scalar>::zero());
    };
    // SAFETY: the caller vouches for the span checked above.
    // Reference BLAS returns 0 for a negative increment; the norm of the same
    // elements walked backwards is the norm walked forwards.
    Ok(unsafe { T::nrm2(n, slice(x, vx.span), vx.inc.abs()) })
}

impl<T: Cblas> BlasNrm2<T> for CpuDevice {
    #[inline]
    unsafe fn nrm2(n: usize, x: *const T, incx: isize) -> Result<T::Real> {
        match vector_fast(n, x, incx) {
            // SAFETY: the caller vouches for the span checked by `vector_fast`, which
            // also took `n <= i32::MAX`.
            Some(vx) => Ok(unsafe { T::nrm2(n as i32, slice(x, vx.span), vx.inc) }),
            // SAFETY: forwarded from the caller.
            None => unsafe { nrm2_general(n, x, incx) },
        }
    }
}

/// The general path of `scal` and `scal_real` (which one `alpha` says).
///
/// # Safety
/// As [`BlasScal::scal`].
#[cold]
#[inline(never)]
unsafe fn scal_general<T: Cblas>(
    op: &'static str,
    n: usize,
    alpha: Scale<T>,
    x: *mut T,
    incx: isize,
) -> Result<()> {
    let Some((n, vx)) = vector_one(op, n, x, incx)? else {
        return Ok(());
    };
    // SAFETY: the caller vouches for the span checked above.
    // Reference BLAS does nothing for a negative increment; scaling touches the same
    // elements in either direction.
    unsafe { alpha.apply(n, x, vx.span, vx.inc.abs()) };
    Ok(())
}

/// The factor of a `scal` call: of the element type, or real.
#[derive(Clone, Copy)]
enum Scale<T: Scalar> {
    /// `?scal`.
    Full(T),
    /// `?dscal`/`?sscal` (`?scal` for real types).
    Real(T::Real),
}

impl<T: Cblas> Scale<T> {
    /// Scales `n` elements `inc` apart at `x`, which spans `span` elements.
    ///
    /// # Safety
    /// `x` is valid for reads and writes of `span` elements, the span of `n` elements
    /// `inc > 0` apart, and `n`, `inc` are positive.
    #[inline(always)]
    unsafe fn apply(self, n: i32, x: *mut T, span: usize, inc: i32) {
        // SAFETY: the caller's promise.
        let xs = unsafe { slice_mut(x, span) };
        // SAFETY: as above.
        unsafe {
            match self {
                Scale::Full(a) => T::scal(n, a, xs, inc),
                Scale::Real(a) => T::scal_real(n, a, xs, inc),
            }
        }
    }
}

/// `scal` and `scal_real`: the common path, else [`scal_general`].
///
/// # Safety
/// As [`BlasScal::scal`].
#[inline(always)]
unsafe fn scal_any<T: Cblas>(
    op: &'static str,
    n: usize,
    alpha: Scale<T>,
    x: *mut T,
    incx: isize,
) -> Result<()> {
    match vector_fast(n, x, incx) {
        Some(vx) => {
            // SAFETY: the caller vouches for the span checked by `vector_fast`, which
            // also took `n <= i32::MAX` and a positive increment.
            unsafe { alpha.apply(n as i32, x, vx.span, vx.inc) };
            Ok(())
        }
        // SAFETY: forwarded from the caller.
        None => unsafe { scal_general(op, n, alpha, x, incx) },
    }
}

impl<T: Cblas> BlasScal<T> for CpuDevice {
    #[inline]
    unsafe fn scal(n: usize, alpha: T, x: *mut T, incx: isize) -> Result<()> {
        // SAFETY: forwarded from the caller.
        unsafe { scal_any("scal", n, Scale::Full(alpha), x, incx) }
    }

    #[inline]
    unsafe fn scal_real(n: usize, alpha: T::Real, x: *mut T, incx: isize) -> Result<()> {
        // SAFETY: forwarded from the caller.
        unsafe { scal_any("scal_real", n, Scale::Real(alpha), x, incx) }
    }
}

/// The general path of `axpy`.
///
/// # Safety
/// As [`BlasAxpy::axpy`].
#[cold]
#[inline(never)]
unsafe fn axpy_general<T: Cblas>(
    n: usize,
    alpha: T,
    x: *const T,
    incx: isize,
    y: *mut T,
    incy: isize,
) -> Result<()> {
    let Some((n, vx, vy)) = vector_pair("axpy", n, x, incx, y, incy)? else {
        return Ok(());
    };
    // SAFETY: the caller vouches for the spans checked above and their disjointness.
    unsafe { axpy_checked(n, alpha, x, vx, y, vy) };
    Ok(())
}

/// # Safety
/// As [`BlasAxpy::axpy`], with `n`, `vx`, `vy` from checks of the caller's arguments.
#[inline(always)]
unsafe fn axpy_checked<T: Cblas>(n: i32, alpha: T, x: *const T, vx: Vector, y: *mut T, vy: Vector) {
    // SAFETY: the caller vouches for the spans and their disjointness.
    unsafe {
        T::axpy(
            n,
            alpha,
            slice(x, vx.span),
            vx.inc,
            slice_mut(y, vy.span),
            vy.inc,
        )
    }
}

impl<T: Cblas> BlasAxpy<T> for CpuDevice {
    #[inline]
    unsafe fn axpy(
        n: usize,
        alpha: T,
        x: *const T,
        incx: isize,
        y: *mut T,
        incy: isize,
    ) -> Result<()> {
        match fast_pair(n, x, incx, y, incy) {
            Some((n, vx, vy)) => {
                // SAFETY: the caller vouches for the spans checked by `fast_pair` and
                // their disjointness.
                unsafe { axpy_checked(n, alpha, x, vx, y, vy) };
                Ok(())
            }
            // SAFETY: forwarded from the caller.
            None => unsafe { axpy_general(n, alpha, x, incx, y, incy) },
        }
    }
}

/// The general path of `copy`.
///
/// # Safety
/// As [`BlasCopy::copy`].
#[cold]
#[inline(never)]
unsafe fn copy_general<T: Cblas>(
    n: usize,
    x: *const T,
    incx: isize,
    y: *mut T,
    incy: isize,
) -> Result<()> {
    let Some((n, vx, vy)) = vector_pair("copy", n, x, incx, y, incy)? else {
        return Ok(());
    };
    // SAFETY: the caller vouches for the spans checked above and their disjointness.
    unsafe { copy_checked(n, x, vx, y, vy) };
    Ok(())
}

/// # Safety
/// As [`BlasCopy::copy`], with `n`, `vx`, `vy` from checks of the caller's arguments.
#[inline(always)]
unsafe fn copy_checked<T: Cblas>(n: i32, x: *const T, vx: Vector, y: *mut T, vy: Vector) {
    // SAFETY: the caller vouches for the spans and their disjointness.
    unsafe { T::copy(n, slice(x, vx.span), vx.inc, slice_mut(y, vy.span), vy.inc) }
}

impl<T: Cblas> BlasCopy<T> for CpuDevice {
    #[inline]
    unsafe fn copy(n: usize, x: *const T, incx: isize, y: *mut T, incy: isize) -> Result<()> {
        match fast_pair(n, x, incx, y, incy) {
            Some((n, vx, vy)) => {
                // SAFETY: the caller vouches for the spans checked by `fast_pair` and
                // their disjointness.
                unsafe { copy_checked(n, x, vx, y, vy) };
                Ok(())
            }
            // SAFETY: forwarded from the caller.
            None => unsafe { copy_general(n, x, incx, y, incy) },
        }
    }
}

impl Product for GemvPlan<Transpose> {
    fn spans(&self) -> [usize; 3] {
        self.spans
    }

    unsafe fn run<T: Cblas>(&self, alpha: T, a: *const T, x: *const T, beta: T, y: *mut T) {
        if self.ly == 0 {
            return;
        }
        let [sa, sx, sy] = self.spans;
        // SAFETY: the caller vouches for the spans.
        let yv = unsafe { slice_mut(y, sy) };
        if self.lx == 0 {
            // Reference BLAS returns early here and leaves `y` unscaled; the product of
            // an empty matrix is zero, so `y := beta · y` is the mathematical result.
            // SAFETY: `yv` spans the `ly` elements with `incy` (checked).
            unsafe { scale_or_zero(self.ly as i32, beta, yv, self.incy) };
            return;
        }
        // SAFETY: the caller vouches for the span of `x`.
        let xv = unsafe { slice(x, sx) };
        // OpenBLAS 0.3.21–0.3.23 read one `incx` past the end of `x` in `?gemv_n`
        // (crate::openblas); pack `x` into a padded unit-stride copy there. `?copy` keeps
        // the logical order of a negative increment.
        let packed =
            (crate::openblas::guard::<T>() && matches!(self.trans, Transpose::None)).then(|| {
                let mut p = crate::openblas::Padded::<T>::zeroed(self.lx, crate::openblas::tail(1));
                // SAFETY: `xv` spans `lx` elements with `incx`; `p` holds `lx`.
                unsafe { T::copy(self.lx as i32, xv, self.incx, p.as_mut_slice(), 1) };
                p
            });
        let (xv, incx) = match &packed {
            Some(p) => (p.as_slice(), 1),
            None => (xv, self.incx),
        };
        // SAFETY: as above; sizes and leading dimension were checked in `plan_gemv`.
        unsafe {
            T::gemv(
                self.trans,
                self.m,
                self.n,
                alpha,
                slice(a, sa),
                self.lda,
                xv,
                incx,
                beta,
                yv,
                self.incy,
            )
        }
    }
}

/// `y := beta · y`, writing exact zeros when `beta == 0` (so NaN does not survive).
///
/// # Safety
/// `y` spans `n` elements with increment `inc`.
pub(super) unsafe fn scale_or_zero<T: Cblas>(n: i32, beta: T, y: &mut [T], inc: i32) {
    if beta == T::zero() {
        let step = inc.unsigned_abs() as usize;
        y.iter_mut().step_by(step).for_each(|v| *v = T::zero());
    } else {
        // SAFETY: the caller vouches for the span; `?scal` ignores a negative increment,
        // and the direction does not matter for scaling.
        unsafe { T::scal(n, beta, y, inc.abs()) };
    }
}

impl<T: Cblas> BlasGemv<T> for CpuDevice {
    unsafe fn gemv(
        trans: Trans,
        m: usize,
        n: usize,
        alpha: T,
        a: *const T,
        lda: usize,
        x: *const T,
        incx: isize,
        beta: T,
        y: *mut T,
        incy: isize,
    ) -> Result<()> {
        let p = plan_gemv(
            "gemv",
            trans,
            cblas_trans::<T>(trans),
            m,
            n,
            lda,
            incx,
            incy,
        )?;
        crate::blas::args::operands(
            "gemv",
            [
                ("a", a, p.spans[0]),
                ("x", x, p.spans[1]),
                ("y", y as *const T, p.spans[2]),
            ],
        )?;
        // SAFETY: arguments checked; the caller vouches for the memory.
        unsafe { p.run(alpha, a, x, beta, y) };
        Ok(())
    }
}

/// [`crate::blas::args::plan_gemm`] with CBLAS's transpose flags for `T`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn plan_gemm<T: Scalar>(
    op: &'static str,
    transa: Trans,
    transb: Trans,
    m: usize,
    n: usize,
    k: usize,
    lda: usize,
    ldb: usize,
    ldc: usize,
) -> Result<GemmPlan<Transpose>> {
    let flags = (cblas_trans::<T>(transa), cblas_trans::<T>(transb));
    crate::blas::args::plan_gemm(op, (transa, transb), flags, m, n, k, lda, ldb, ldc)
}

impl Product for GemmPlan<Transpose> {
    fn spans(&self) -> [usize; 3] {
        self.spans
    }

    unsafe fn run<T: Cblas>(&self, alpha: T, a: *const T, b: *const T, beta: T, c: *mut T) {
        if self.m == 0 || self.n == 0 {
            return;
        }
        let [sa, sb, sc] = self.spans;
        // SAFETY: the caller vouches for the spans.
        let cv = unsafe { slice_mut(c, sc) };
        if self.k == 0 {
            // An empty inner dimension: `C := beta · C`, column by column (ldc > m).
            for col in cv.chunks_mut(self.ldc as usize) {
                let col = &mut col[..self.m as usize];
                // SAFETY: `col` holds `m` contiguous elements.
                unsafe { scale_or_zero(self.m, beta, col, 1) };
            }
            return;
        }
        // SAFETY: as above; sizes and leading dimensions were checked in `plan_gemm`.
        unsafe {
            T::gemm(
                self.ta,
                self.tb,
                self.m,
                self.n,
                self.k,
                alpha,
                slice(a, sa),
                self.lda,
                slice(b, sb),
                self.ldb,
                beta,
                cv,
                self.ldc,
            )
        }
    }
}

impl<T: Cblas> BlasGemm<T> for CpuDevice {
    unsafe fn gemm(
        transa: Trans,
        transb: Trans,
        m: usize,
        n: usize,
        k: usize,
        alpha: T,
        a: *const T,
        lda: usize,
        b: *const T,
        ldb: usize,
        beta: T,
        c: *mut T,
        ldc: usize,
    ) -> Result<()> {
        let p = plan_gemm::<T>("gemm", transa, transb, m, n, k, lda, ldb, ldc)?;
        crate::blas::args::operands(
            "gemm",
            [
                ("a", a, p.spans[0]),
                ("b", b, p.spans[1]),
                ("c", c as *const T, p.spans[2]),
            ],
        )?;
        // SAFETY: arguments checked; the caller vouches for the memory.
        unsafe { p.run(alpha, a, b, beta, c) };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercase_trans_is_accepted_and_unknown_rejected() {
        assert_eq!("c".parse::<Trans>().unwrap(), Trans::C);
        assert_eq!(Trans::from_char('n').unwrap(), Trans::N);
        assert!(Trans::from_char('x').is_err());
        assert!("NT".parse::<Trans>().is_err());
    }
}
