//! Element-wise and layout kernels on the GPU, through the custom kernels of
//! `cuda/elementwise.cu`, `cuda/layout.cu` and `cuda/reduce.cu`.
//!
//! Element-wise kernels read element i of each input and write element i of the output,
//! so they are correct in place as they are. Layout kernels and reductions are not; when
//! the output is the input they go through a device temporary.

use ctensor_base::gpu::copy_d2h;
use ctensor_base::{Error, GpuDevice, Result, Scalar};

use super::launch::{
    args, copy_of, dev, launch_1d, reduce_grid, transpose_plan, Scratch, TransposePlan, BLOCK,
};
use super::memory::{copy_dims, copy_strided};
use super::source::{
    Kernel, ABS, ADD, ANY_ZERO, ARG_EXTREME, CONJ, CUMSUM, DIV, EQ_SCALAR, EXP, FMA, MUL, NEG,
    REDUCE_EXTREME, REDUCE_SUM, SCALE, SET_MATRIX, SQRT, TRANSPOSE2D,
};
use crate::check;
use crate::lapack::{SetMatrix, Uplo};
use crate::layout::row_major_strides;
use crate::linalg::{
    Abs, Add, ArgExtreme, Conj, CumSum, Div, EqScalar, Fma, Inflate, Mul, Reduce, ReduceExtreme,
    Stride, Transpose, Unary, UnaryOp,
};
use crate::memory::SetMemory;

/// A device copy of `src` when it is `dst` (in place), for kernels that must read one
/// buffer and write another; `None` when they already differ.
///
/// # Safety
/// `src` is device memory valid for reads of `n` elements.
unsafe fn unaliased<T: Scalar>(
    op: &'static str,
    src: *const T,
    dst: *mut T,
    n: usize,
) -> Result<Option<Scratch<T>>> {
    if std::ptr::eq(src, dst) {
        // SAFETY: the caller's contract.
        Ok(Some(unsafe { copy_of(op, src, n)? }))
    } else {
        Ok(None)
    }
}

/// Launches an element-wise kernel `k(n, pointers...)` after the null checks.
///
/// # Safety
/// Every pointer is device memory valid for `n` elements; the output is identical to or
/// disjoint from each input.
unsafe fn unary_kernel<T: Scalar, R: Scalar>(
    k: &Kernel,
    op: &'static str,
    n: usize,
    x: *const T,
    y: *mut R,
) -> Result<()> {
    check::non_null(op, "x", x, n)?;
    check::non_null(op, "y", y, n)?;
    let (n64, xp, yp) = (n as u64, dev(x), dev(y));
    // SAFETY: forwarded contract.
    unsafe { launch_1d(k.get::<T>()?, n, &mut args![&n64, &xp, &yp]) }
}

impl<T: Scalar> Conj<T> for GpuDevice {
    unsafe fn conj(dst: *mut T, src: *const T, n: usize) -> Result<()> {
        // SAFETY: forwarded contract (conj_<t>(n, src, dst)).
        unsafe { unary_kernel(&CONJ, "conj", n, src, dst) }
    }
}

impl<T: Scalar> Add<T> for GpuDevice {
    unsafe fn add(n: usize, alpha: T, x: *const T, beta: T, y: *const T, z: *mut T) -> Result<()> {
        for (name, p) in [("x", x), ("y", y), ("z", z as *const T)] {
            check::non_null("add", name, p, n)?;
        }
        let (n64, xp, yp, zp) = (n as u64, dev(x), dev(y), dev(z));
        // SAFETY: forwarded contract.
        unsafe {
            launch_1d(
                ADD.get::<T>()?,
                n,
                &mut args![&n64, &alpha, &xp, &beta, &yp, &zp],
            )
        }
    }
}

impl<T: Scalar> Mul<T> for GpuDevice {
    unsafe fn scale(n: usize, alpha: T, x: *const T, y: *mut T) -> Result<()> {
        check::non_null("scale", "x", x, n)?;
        check::non_null("scale", "y", y, n)?;
        let (n64, xp, yp) = (n as u64, dev(x), dev(y));
        // SAFETY: forwarded contract.
        unsafe { launch_1d(SCALE.get::<T>()?, n, &mut args![&n64, &alpha, &xp, &yp]) }
    }

    unsafe fn mul(n: usize, alpha: T, x: *const T, y: *const T, z: *mut T) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { binary(&MUL, "mul", n, alpha, x, y, z) }
    }
}

/// `z = k(alpha, x, y)` for the kernels with that argument list (mul, div).
///
/// # Safety
/// As for [`Mul::mul`].
unsafe fn binary<T: Scalar>(
    k: &Kernel,
    op: &'static str,
    n: usize,
    alpha: T,
    x: *const T,
    y: *const T,
    z: *mut T,
) -> Result<()> {
    for (name, p) in [("x", x), ("y", y), ("z", z as *const T)] {
        check::non_null(op, name, p, n)?;
    }
    let (n64, xp, yp, zp) = (n as u64, dev(x), dev(y), dev(z));
    // SAFETY: forwarded contract.
    unsafe { launch_1d(k.get::<T>()?, n, &mut args![&n64, &alpha, &xp, &yp, &zp]) }
}

impl<T: Scalar> Div<T> for GpuDevice {
    unsafe fn div(n: usize, alpha: T, x: *const T, y: *const T, z: *mut T) -> Result<()> {
        check::non_null("div", "y", y, n)?;
        if T::DTYPE.is_integer() && n > 0 {
            // Integer division by zero is reported before anything is written, as on the
            // host: one pass finds the first zero divisor on the device, which is read back.
            let first = Scratch::<i64>::new("div", 1)?;
            let (n64, yp, fp) = (n as u64, dev(y), dev(first.ptr()));
            let mut found = 0u64;
            // SAFETY: `y` is valid for `n` device reads (caller); `first` holds one u64.
            unsafe {
                launch_1d(ANY_ZERO.get::<T>()?, n, &mut args![&n64, &yp, &fp])?;
                copy_d2h(&mut found as *mut u64 as *mut u8, fp, 8)?;
            }
            if found != 0 {
                return Err(Error::InvalidArgument {
                    op: "div",
                    expected: format!("non-zero divisors for integer ({}) division", T::DTYPE),
                    given: format!("y[{}] = 0", n as u64 - found),
                });
            }
        }
        // SAFETY: forwarded contract.
        unsafe { binary(&DIV, "div", n, alpha, x, y, z) }
    }
}

impl<T: Scalar> Fma<T> for GpuDevice {
    unsafe fn fma(
        n: usize,
        alpha: T,
        x: *const T,
        y: *const T,
        beta: T,
        z: *const T,
        out: *mut T,
    ) -> Result<()> {
        for (name, p) in [("x", x), ("y", y), ("z", z), ("out", out as *const T)] {
            check::non_null("fma", name, p, n)?;
        }
        let (n64, xp, yp, zp, op) = (n as u64, dev(x), dev(y), dev(z), dev(out));
        // SAFETY: forwarded contract.
        unsafe {
            launch_1d(
                FMA.get::<T>()?,
                n,
                &mut args![&n64, &alpha, &xp, &yp, &beta, &zp, &op],
            )
        }
    }
}

impl<T: Scalar> Unary<T> for GpuDevice {
    unsafe fn unary(op: UnaryOp, n: usize, x: *const T, y: *mut T) -> Result<()> {
        let (k, name) = match op {
            UnaryOp::Neg => (&NEG, "neg"),
            UnaryOp::Sqrt => (&SQRT, "sqrt"),
            UnaryOp::Exp => (&EXP, "exp"),
        };
        // SAFETY: forwarded contract.
        unsafe { unary_kernel(k, name, n, x, y) }
    }
}

impl<T: Scalar> Abs<T> for GpuDevice {
    unsafe fn abs(n: usize, x: *const T, y: *mut T::Real) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { unary_kernel(&ABS, "abs", n, x, y) }
    }
}

impl<T: Scalar> EqScalar<T> for GpuDevice {
    unsafe fn eq_scalar(n: usize, x: *const T, s: T, y: *mut T) -> Result<()> {
        check::non_null("eq_scalar", "x", x, n)?;
        check::non_null("eq_scalar", "y", y, n)?;
        let (n64, xp, yp) = (n as u64, dev(x), dev(y));
        // SAFETY: forwarded contract.
        unsafe { launch_1d(EQ_SCALAR.get::<T>()?, n, &mut args![&n64, &xp, &s, &yp]) }
    }
}

impl<T: Scalar> Transpose<T> for GpuDevice {
    unsafe fn transpose(
        shape: &[usize],
        perm: &[usize],
        src: *const T,
        dst: *mut T,
        conj: bool,
    ) -> Result<()> {
        const OP: &str = "transpose";
        check::perm(OP, perm, shape.len())?;
        let n = check::numel(OP, shape)?;
        check::non_null(OP, "src", src, n)?;
        check::non_null(OP, "dst", dst, n)?;
        if n == 0 {
            return Ok(());
        }
        // In place: read from a copy.
        // SAFETY: `src` holds `n` device elements (caller).
        let tmp = unsafe { unaliased(OP, src, dst, n)? };
        let src = tmp.as_ref().map_or(src, |t| t.ptr() as *const T);
        match transpose_plan(OP, shape, perm)? {
            TransposePlan::Tiled {
                rows,
                cols,
                grid,
                block,
            } => {
                let (ctx, f) = TRANSPOSE2D.get::<T>()?;
                let (sp, dp, cj) = (dev(src), dev(dst), conj as i32);
                // SAFETY: source and destination hold `n` device elements each and are
                // disjoint (a temporary was made above for in place).
                unsafe { ctx.launch(f, grid, block, 0, &mut args![&rows, &cols, &sp, &dp, &cj]) }
            }
            // SAFETY: as above; every offset lies inside the `n` elements.
            TransposePlan::Strided(dims) => unsafe { copy_dims(&dims, n, dst, src, conj) },
        }
    }
}

impl<T: Scalar> Stride<T> for GpuDevice {
    unsafe fn stride(shape: &[usize], steps: &[usize], src: *const T, dst: *mut T) -> Result<()> {
        const OP: &str = "stride";
        let p = crate::plan::plan_stride(OP, shape, steps, src, dst)?;
        if p.n_out == 0 {
            return Ok(());
        }
        // SAFETY: `src` holds `n_in` device elements (caller).
        let tmp = unsafe { unaliased(OP, src, dst, p.n_in)? };
        let src = tmp.as_ref().map_or(src, |t| t.ptr() as *const T);
        // SAFETY: offsets stay inside both arrays; they are disjoint (temporary above).
        unsafe {
            copy_strided(
                OP,
                &p.out_shape,
                &p.dst_strides,
                dst,
                &p.src_strides,
                src,
                false,
            )
        }
    }
}

impl<T: Scalar> Inflate<T> for GpuDevice {
    unsafe fn inflate(
        shape: &[usize],
        steps: &[usize],
        src: *const T,
        dst_shape: &[usize],
        dst: *mut T,
    ) -> Result<()> {
        const OP: &str = "inflate";
        check::steps(OP, shape, steps)?;
        check::inflate_shape(OP, shape, steps, dst_shape)?;
        let n_in = check::numel(OP, shape)?;
        let n_out = check::numel(OP, dst_shape)?;
        check::non_null(OP, "src", src, n_in)?;
        check::non_null(OP, "dst", dst, n_out)?;
        if n_out == 0 {
            return Ok(());
        }
        // SAFETY: `src` holds `n_in` device elements (caller).
        let tmp = unsafe { unaliased(OP, src, dst, n_in)? };
        let src = tmp.as_ref().map_or(src, |t| t.ptr() as *const T);
        let dst_strides = crate::plan::stepped_strides(dst_shape, steps);
        // SAFETY: `dst` holds `n_out` device elements; the grid points lie inside it
        // (checked shapes), and `src` is disjoint from it (temporary above).
        unsafe {
            <GpuDevice as SetMemory<T>>::set(dst, T::zero(), n_out)?;
            copy_strided(
                OP,
                shape,
                &dst_strides,
                dst,
                &row_major_strides(shape),
                src,
                false,
            )
        }
    }
}

/// Launches a row reduction: one block per row, walked grid-stride.
///
/// # Safety
/// `src` holds `rows · inner` device elements, `dst` `rows`, disjoint.
unsafe fn reduce_rows<T: Scalar>(
    k: &Kernel,
    max: Option<bool>,
    rows: usize,
    inner: usize,
    src: *const T,
    dst: *mut T,
) -> Result<()> {
    let (ctx, f) = k.get::<T>()?;
    let grid = reduce_grid(rows);
    let (r, i, sp, dp) = (rows as u64, inner as u64, dev(src), dev(dst));
    // SAFETY: forwarded contract.
    unsafe {
        match max {
            None => ctx.launch(
                f,
                (grid, 1, 1),
                (BLOCK, 1, 1),
                0,
                &mut args![&r, &i, &sp, &dp],
            ),
            Some(m) => {
                let m = m as i32;
                ctx.launch(
                    f,
                    (grid, 1, 1),
                    (BLOCK, 1, 1),
                    0,
                    &mut args![&m, &r, &i, &sp, &dp],
                )
            }
        }
    }
}

/// The reduction of `rows × inner` into `rows`, through a temporary when `dst == src`
/// (a row's result would overwrite elements of earlier rows before they are read).
///
/// # Safety
/// As for [`Reduce::reduce`].
unsafe fn reduce_any<T: Scalar>(
    k: &Kernel,
    op: &'static str,
    max: Option<bool>,
    rows: usize,
    inner: usize,
    src: *const T,
    dst: *mut T,
) -> Result<()> {
    let n = check::numel(op, &[rows, inner])?;
    check::non_null(op, "src", src, n)?;
    check::non_null(op, "dst", dst, rows)?;
    if rows == 0 {
        return Ok(());
    }
    if inner == 0 {
        // SAFETY: `dst` holds `rows` device elements.
        return unsafe { <GpuDevice as SetMemory<T>>::set(dst, T::zero(), rows) };
    }
    if std::ptr::eq(src, dst) && rows > 1 && inner > 1 {
        let tmp = Scratch::<T>::new(op, rows)?;
        // SAFETY: `tmp` holds `rows` device elements, disjoint from `src`.
        unsafe {
            reduce_rows(k, max, rows, inner, src, tmp.ptr())?;
            return ctensor_base::gpu::copy_d2d(
                dev(dst),
                dev(tmp.ptr()),
                rows * std::mem::size_of::<T>(),
            );
        }
    }
    // SAFETY: forwarded contract; with one row or one column in place, each block reads
    // its row before writing dst[r], which no other block reads.
    unsafe { reduce_rows(k, max, rows, inner, src, dst) }
}

impl<T: Scalar> Reduce<T> for GpuDevice {
    unsafe fn reduce(rows: usize, inner: usize, src: *const T, dst: *mut T) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { reduce_any(&REDUCE_SUM, "reduce", None, rows, inner, src, dst) }
    }
}

impl<T: Scalar> ReduceExtreme<T> for GpuDevice {
    unsafe fn reduce_extreme(
        max: bool,
        rows: usize,
        inner: usize,
        src: *const T,
        dst: *mut T,
    ) -> Result<()> {
        let op = check::extreme(max, T::DTYPE, rows, inner)?;
        // SAFETY: forwarded contract.
        unsafe { reduce_any(&REDUCE_EXTREME, op, Some(max), rows, inner, src, dst) }
    }
}

impl<T: Scalar> ArgExtreme<T> for GpuDevice {
    unsafe fn arg_extreme(
        max: bool,
        rows: usize,
        inner: usize,
        src: *const T,
        dst: *mut i64,
    ) -> Result<()> {
        let op = check::arg_extreme(max, T::DTYPE, rows, inner)?;
        let n = check::numel(op, &[rows, inner])?;
        check::non_null(op, "src", src, n)?;
        check::non_null(op, "dst", dst, rows)?;
        if rows == 0 {
            return Ok(());
        }
        let (ctx, f) = ARG_EXTREME.get::<T>()?;
        let (m, r, i, sp, dp) = (max as i32, rows as u64, inner as u64, dev(src), dev(dst));
        // SAFETY: `src` holds rows·inner device elements and `dst` rows i64s (caller);
        // one block of BLOCK threads per row, walked grid-stride.
        unsafe {
            ctx.launch(
                f,
                (reduce_grid(rows), 1, 1),
                (BLOCK, 1, 1),
                0,
                &mut args![&m, &r, &i, &sp, &dp],
            )
        }
    }
}

impl<T: Scalar> CumSum<T> for GpuDevice {
    unsafe fn cumsum(rows: usize, inner: usize, src: *const T, dst: *mut T) -> Result<()> {
        let op = "cumsum";
        let n = check::numel(op, &[rows, inner])?;
        check::non_null(op, "src", src, n)?;
        check::non_null(op, "dst", dst, n)?;
        if n == 0 {
            return Ok(());
        }
        let (ctx, f) = CUMSUM.get::<T>()?;
        let (r, i, sp, dp) = (rows as u64, inner as u64, dev(src), dev(dst));
        // SAFETY: both hold rows·inner device elements (caller); each thread reads its
        // chunk of a row before writing it, so in place is fine.
        unsafe {
            ctx.launch(
                f,
                (reduce_grid(rows), 1, 1),
                (BLOCK, 1, 1),
                0,
                &mut args![&r, &i, &sp, &dp],
            )
        }
    }
}

impl<T: Scalar> SetMatrix<T> for GpuDevice {
    unsafe fn set_matrix(keep: Uplo, n: usize, a: *mut T, lda: usize) -> Result<()> {
        const OP: &str = "set_matrix";
        if crate::lapack_plan::plan_square(OP, "a", n, a, lda)?.is_none() {
            return Ok(());
        }
        let nn = check::numel(OP, &[n, n])?;
        let (up, n64, ap, ld) = ((keep == Uplo::Upper) as i32, n as u64, dev(a), lda as u64);
        // SAFETY: `a` holds the n × n matrix with leading dimension `lda` (caller).
        unsafe { launch_1d(SET_MATRIX.get::<T>()?, nn, &mut args![&up, &n64, &ap, &ld]) }
    }
}
