//! Matrix products: [`matmul`] (`a · b`), [`matmul_op`] with BLAS-style operation flags
//! on either side (`ψᴴ · Hψ` without an einsum string), and [`matmul_into`] with `alpha`,
//! `beta` and an existing output, so a solver's loop allocates nothing.
//!
//! All are one einsum contraction (`...ij,...jk->...ik`) over views: a transposed operand
//! is a transposed view and a conjugated one the einsum's `conj` flag, which BLAS reads
//! through its `trans` characters without a copy wherever the layout allows. Batch axes
//! broadcast; mixed data types promote.

use ctensor_base::{c64, Error, Result};
use ctensor_kernels::blas::Trans;

use super::einsum::{einsum, einsum_into, EinsumOptions};
use crate::core::tensor::Tensor;

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
    let (x, y, opts) = operands("matmul_into", a, op_a, b, op_b, alpha.into(), beta.into())?;
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
