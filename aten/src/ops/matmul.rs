//! Matrix products: [`matmul`] (`a · b`), [`matmul_op`] with BLAS-style operation flags
//! on either side (`ψᴴ · Hψ` without an einsum string), and [`matmul_into`] with `alpha`,
//! `beta` and an existing output, so a solver's loop allocates nothing.
//!
//! A product of two matrices of one data type whose layouts BLAS reads as they lie is
//! one gemm call on a direct path: no einsum plan, no intermediate views, and a fresh
//! result that the gemm writes without a zero fill first. Everything else (batches,
//! broadcasting, mixed types, layouts that need a copy) is one einsum contraction
//! (`...ij,...jk->...ik`) over views: a transposed operand is a transposed view and a
//! conjugated one the einsum's `conj` flag, which BLAS reads through its `trans`
//! characters without a copy wherever the layout allows. Batch axes broadcast; mixed
//! data types promote.

use ctensor_base::{c64, CastFrom, Error, Result};
use ctensor_kernels::blas::Trans;
use ctensor_kernels::linalg::MatMul;

use super::einsum::{blas_view, einsum, einsum_into, EinsumOptions};
use crate::core::dispatch::dispatch;
use crate::core::tensor::Tensor;

/// One matrix operand of a product as gemm sees it: `op(t)` is `rows × cols`, its
/// element `(p, q)` at `p·s_r + q·s_c` from the tensor's first element.
#[derive(Clone, Copy)]
struct MatRef {
    rows: usize,
    cols: usize,
    s_r: usize,
    s_c: usize,
    conj: bool,
}

impl MatRef {
    /// `op(t)` for a 2-D tensor.
    fn new(t: &Tensor, op: Trans) -> MatRef {
        let (d, s) = (t.dims(), t.strides());
        let conj = op == Trans::C && t.dtype().is_complex();
        match op {
            Trans::N => MatRef {
                rows: d[0],
                cols: d[1],
                s_r: s[0],
                s_c: s[1],
                conj: false,
            },
            Trans::T | Trans::C => MatRef {
                rows: d[1],
                cols: d[0],
                s_r: s[1],
                s_c: s[0],
                conj,
            },
        }
    }

    /// The transpose (conjugation kept).
    fn t(self) -> MatRef {
        MatRef {
            rows: self.cols,
            cols: self.rows,
            s_r: self.s_c,
            s_c: self.s_r,
            conj: self.conj,
        }
    }

    /// How column-major gemm reads it: its `trans` flag and leading dimension.
    fn blas(self) -> Option<(Trans, usize)> {
        blas_view(self.rows, self.cols, self.s_r, self.s_c, self.conj)
    }
}

/// The direct path: `out = alpha · op_a(a) · op_b(b) + beta · out` as one gemm call when
/// `a`, `b` and `out` are matrices of one data type on one device, `out` in a buffer of
/// its own, of the product's shape, with a non-empty inner dimension, and every layout
/// one that BLAS reads through its `trans` flag and leading dimension. `Ok(false)` when
/// any of that does not hold: the einsum path then handles it (and reports the errors).
fn gemm_direct(
    a: &Tensor,
    op_a: Trans,
    b: &Tensor,
    op_b: Trans,
    alpha: c64,
    beta: c64,
    out: &Tensor,
) -> Result<bool> {
    if a.ndim() != 2 || b.ndim() != 2 || out.ndim() != 2 {
        return Ok(false);
    }
    let dtype = out.dtype();
    let device = out.device();
    if a.dtype() != dtype || b.dtype() != dtype || a.device() != device || b.device() != device {
        return Ok(false);
    }
    if out.shares_memory_with(a) || out.shares_memory_with(b) {
        return Ok(false);
    }
    let (x, y) = (MatRef::new(a, op_a), MatRef::new(b, op_b));
    let (m, k, n) = (x.rows, x.cols, y.cols);
    if y.rows != k || out.dims() != [m, n] || k == 0 {
        return Ok(false);
    }
    if m == 0 || n == 0 {
        return Ok(true);
    }
    let c = MatRef::new(out, Trans::N);
    // Seen column-major, `out` is either Cᵀ (n × m, when its rows are contiguous),
    // computed as op(b)ᵀ·op(a)ᵀ, or C (m × n), computed as op(a)·op(b).
    let (rows_are_n, ldc) = match c.t().blas() {
        Some((Trans::N, ld)) => (true, ld),
        Some((_, ld)) => (false, ld),
        None => return Ok(false),
    };
    let (first, second, p1, p2, rows, cols) = if rows_are_n {
        (y.t(), x.t(), b, a, n, m)
    } else {
        (x, y, a, b, m, n)
    };
    let (Some((t1, ld1)), Some((t2, ld2))) = (first.blas(), second.blas()) else {
        return Ok(false);
    };
    let _w = out.buffer.write("matmul")?;
    let _r1 = a.buffer.read("matmul")?;
    let _r2 = b.buffer.read("matmul")?;
    dispatch!(dtype, device, T, D => {
        // SAFETY: both operands and the output lie inside their buffers with the extents
        // and leading dimensions computed from their own dims and strides (`blas_view`
        // checks that every leading dimension covers its rows); `out` is in a buffer of
        // its own; the guards exclude other access meanwhile.
        unsafe {
            <D as MatMul<T>>::matmul(
                t1, t2, rows, cols, k, T::cast_from(alpha),
                p1.typed_ptr::<T>(), ld1, p2.typed_ptr::<T>(), ld2,
                T::cast_from(beta), out.typed_ptr::<T>(), ldc,
            )
        }
    })?;
    Ok(true)
}

/// `op_a(a) · op_b(b)` into a fresh row-major tensor through [`gemm_direct`], or `None`
/// when that path does not apply.
fn product_direct(a: &Tensor, op_a: Trans, b: &Tensor, op_b: Trans) -> Result<Option<Tensor>> {
    if a.ndim() != 2 || b.ndim() != 2 || a.dtype() != b.dtype() || a.device() != b.device() {
        return Ok(None);
    }
    let (x, y) = (MatRef::new(a, op_a), MatRef::new(b, op_b));
    if x.cols != y.rows || x.cols == 0 {
        return Ok(None);
    }
    // SAFETY: with a non-empty inner dimension, `gemm_direct` either writes every element
    // of `out` (beta = 0 reads none) or returns `false`/an error, and `out` is then
    // dropped unread.
    let out = unsafe { Tensor::uninit(a.dtype(), a.device(), &[x.rows, y.cols])? };
    let zero = c64::new(0.0, 0.0);
    Ok(gemm_direct(a, op_a, b, op_b, c64::new(1.0, 0.0), zero, &out)?.then_some(out))
}

/// `a · b` for matrices (`[m, k] · [k, n]`) and batches of them (`[..., m, k]`, the
/// batch axes broadcasting). Operands in any layout; BLAS reads transposed or
/// column-major operands through its transpose flags, without a copy.
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    matmul_op(a, Trans::N, b, Trans::N).map_err(|e| e.in_op("matmul"))
}

/// `op_a(a) · op_b(b)`, where `op` is `N` (as is), `T` (the transpose of the last two
/// axes) or `C` (the conjugate transpose), as `zgemm`'s `transa`/`transb`. For the
/// subspace matrix of a block solver, `matmul_op(&psi, Trans::C, &h_psi, Trans::N)` is
/// `ψᴴ H ψ`.
///
/// ```
/// use ctensor_aten::{matmul_op, c64, Tensor, Trans};
/// let psi = Tensor::from_slice(&[c64::new(1.0, 1.0), c64::new(0.0, 2.0)], &[2, 1])?;
/// let s = matmul_op(&psi, Trans::C, &psi, Trans::N)?; // ψᴴψ = |1+i|² + |2i|²
/// assert_eq!(s.to_vec::<c64>()?, [c64::new(6.0, 0.0)]);
/// # Ok::<(), ctensor_aten::Error>(())
/// ```
pub fn matmul_op(a: &Tensor, op_a: Trans, b: &Tensor, op_b: Trans) -> Result<Tensor> {
    if let Some(c) = product_direct(a, op_a, b, op_b).map_err(|e| e.in_op("matmul"))? {
        return Ok(c);
    }
    let (x, y, opts) = operands(
        "matmul",
        a,
        op_a,
        b,
        op_b,
        c64::new(1.0, 0.0),
        c64::new(0.0, 0.0),
    )?;
    einsum("...ij,...jk->...ik", &[&x, &y], &opts).map_err(|e| e.in_op("matmul"))
}

/// `out = alpha · op_a(a) · op_b(b) + beta · out`, into the existing `out` (any layout,
/// e.g. a column-major map over a caller's array). With `beta == 0` the old contents of
/// `out` are not read. `out`'s type must hold the operands' promoted type; `alpha` and
/// `beta` are cast to it.
pub fn matmul_into(
    a: &Tensor,
    op_a: Trans,
    b: &Tensor,
    op_b: Trans,
    alpha: impl Into<c64>,
    beta: impl Into<c64>,
    out: &mut Tensor,
) -> Result<()> {
    let (alpha, beta) = (alpha.into(), beta.into());
    if gemm_direct(a, op_a, b, op_b, alpha, beta, out).map_err(|e| e.in_op("matmul_into"))? {
        return Ok(());
    }
    let (x, y, opts) = operands("matmul_into", a, op_a, b, op_b, alpha, beta)?;
    einsum_into("...ij,...jk->...ik", &[&x, &y], &opts, out).map_err(|e| e.in_op("matmul_into"))
}

/// The views and einsum options for `op_a(a) · op_b(b)` with `alpha`, `beta`.
fn operands(
    op: &'static str,
    a: &Tensor,
    op_a: Trans,
    b: &Tensor,
    op_b: Trans,
    alpha: c64,
    beta: c64,
) -> Result<(Tensor, Tensor, EinsumOptions)> {
    if a.ndim() < 2 || b.ndim() < 2 {
        return Err(Error::ShapeMismatch {
            op,
            expected: "operands of rank 2 or more ([..., m, k] and [..., k, n])".into(),
            got: format!("{:?} and {:?}", a.dims(), b.dims()),
        });
    }
    let view = |t: &Tensor, o: Trans| -> Result<(Tensor, bool)> {
        let n = t.ndim();
        Ok(match o {
            Trans::N => (t.share(), false),
            Trans::T => (t.transpose(n - 2, n - 1)?, false),
            Trans::C => (t.transpose(n - 2, n - 1)?, t.dtype().is_complex()),
        })
    };
    let (x, conj_x) = view(a, op_a)?;
    let (y, conj_y) = view(b, op_b)?;
    Ok((
        x,
        y,
        EinsumOptions {
            conj_x,
            conj_y,
            alpha,
            beta,
        },
    ))
}
