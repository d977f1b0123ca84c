//! QR factorization of matrices and stacks of them: [`qr`] gives `Q` and `R` (reduced or
//! complete), [`qr_r`] only `R`. Householder QR through the [`LapackGeqrf`] and
//! [`LapackOrgqr`] kernels (LAPACK on the host, cuSOLVER on the GPU).
//!
//! In a block eigensolver, `qr(&x, QrMode::Reduced)?.0` orthonormalises the columns of a
//! block `x` without forming (and squaring the condition number of) its overlap matrix,
//! as Cholesky QR does.

use ctensor_base::{Error, Result};
use ctensor_kernels::lapack::qr::{LapackGeqrf, LapackOrgqr};
use ctensor_kernels::lapack::{SetMatrix, Uplo};

use super::linalg::{col_major, in_order_of};
use super::select::unbatch;
use crate::core::dispatch::dispatch_blas;
use crate::core::shape::Order;
use crate::core::tensor::Tensor;

/// Which factors [`qr`] returns for an `m × n` matrix with `k = min(m, n)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum QrMode {
    /// `Q` is `m × k` with orthonormal columns, `R` is `k × n` (NumPy's `"reduced"`).
    #[default]
    Reduced,
    /// `Q` is the `m × m` unitary matrix, `R` is `m × n` (NumPy's `"complete"`).
    Complete,
}

/// `A = Q R` for the matrix `a` (`[m, n]`) or each matrix of a stack (`[..., m, n]`):
/// `Q` with orthonormal columns, `R` upper triangular (upper trapezoidal when `m < n`),
/// both in `a`'s memory order and on its device. f32, f64, c32 and c64. Non-finite
/// input gives non-finite factors (QR itself cannot fail).
///
/// ```
/// use ctensor_aten::{matmul, qr, QrMode, Tensor};
/// let a = Tensor::from_slice(&[3.0f64, 1.0, 4.0, 2.0, 0.0, 5.0], &[3, 2])?;
/// let (q, r) = qr(&a, QrMode::Reduced)?;
/// assert_eq!((q.dims(), r.dims()), (&[3, 2][..], &[2, 2][..]));
/// assert!(matmul(&q, &r)?.allclose(&a, 1e-14, 1e-14)?);
/// # Ok::<(), ctensor_aten::Error>(())
/// ```
pub fn qr(a: &Tensor, mode: QrMode) -> Result<(Tensor, Tensor)> {
    let (q, r) = over_stack("qr", a, Some(mode))?;
    let q = q.ok_or_else(|| Error::Internal {
        op: "qr",
        what: "no Q was formed".into(),
    })?;
    Ok((q, r))
}

/// Only the `R` factor of [`qr`] in the reduced shape (`k × n`), without forming `Q`
/// (NumPy's `mode="r"`).
pub fn qr_r(a: &Tensor) -> Result<Tensor> {
    Ok(over_stack("qr_r", a, None)?.1)
}

/// `Q` (when a mode is given) and `R`.
type Factors = (Option<Tensor>, Tensor);

/// The shapes of `Q` and `R` for an `m × n` matrix.
fn shapes(m: usize, n: usize, mode: Option<QrMode>) -> ([usize; 2], [usize; 2]) {
    let k = m.min(n);
    match mode {
        Some(QrMode::Complete) => ([m, m], [m, n]),
        _ => ([m, k], [k, n]),
    }
}

/// [`factor`] on the matrix `a`, or on each matrix of the stack `a` with the results
/// stacked back into its batch shape.
fn over_stack(op: &'static str, a: &Tensor, mode: Option<QrMode>) -> Result<Factors> {
    let rank = a.ndim();
    if rank < 2 {
        return Err(Error::NotAMatrix {
            op,
            shape: a.dims().to_vec(),
            need: "a matrix or a stack of matrices ([..., m, n])",
        });
    }
    if rank == 2 {
        return factor(a, mode).map_err(|e| e.in_op(op));
    }
    let (m, n) = (a.dims()[rank - 2], a.dims()[rank - 1]);
    let batch_dims = &a.dims()[..rank - 2];
    let (q_shape, r_shape) = shapes(m, n, mode);
    // A product that overflows needs a zero among the matrix sizes (the tensor exists).
    let batch = ctensor_kernels::args::numel(op, batch_dims).unwrap_or(usize::MAX);
    if batch == 0 || m.min(n) == 0 {
        return empty_stack(op, a, batch_dims, mode);
    }
    let flat = a.reshape(&[batch as i64, m as i64, n as i64])?;
    let (mut qs, mut rs) = (
        super::vec_for(op, "factors", batch)?,
        super::vec_for(op, "factors", batch)?,
    );
    for b in 0..batch {
        let (q, r) = factor(&flat.index(b)?, mode).map_err(|e| e.in_op(op))?;
        qs.extend(q);
        rs.push(r);
    }
    let q = match mode {
        Some(_) => Some(unbatch(qs, batch_dims, &q_shape, a.dtype(), a.device())?),
        None => None,
    };
    Ok((q, unbatch(rs, batch_dims, &r_shape, a.dtype(), a.device())?))
}

/// The factors of a stack with no matrices or of matrices with no entries (`min(m, n)
/// = 0`), made without a per-matrix loop: `R` is empty or zero, and `Q` empty, or the
/// identity of each `m × m` block in complete mode (NumPy's answer for `m × 0`).
fn empty_stack(
    op: &'static str,
    a: &Tensor,
    batch_dims: &[usize],
    mode: Option<QrMode>,
) -> Result<Factors> {
    let (m, n) = (a.dims()[a.ndim() - 2], a.dims()[a.ndim() - 1]);
    crate::core::dispatch::check_blas_dtype(op, a.dtype())?;
    let (q_shape, r_shape) = shapes(m, n, mode);
    let full = |tail: [usize; 2]| [batch_dims, &tail[..]].concat();
    let r = Tensor::new(a.dtype(), a.device(), &full(r_shape))?;
    let q = match mode {
        None => None,
        Some(QrMode::Complete) => {
            let eye = Tensor::eye(a.dtype(), a.device(), m)?;
            Some(eye.broadcast_to(&full(q_shape))?.contiguous()?)
        }
        Some(QrMode::Reduced) => Some(Tensor::new(a.dtype(), a.device(), &full(q_shape))?),
    };
    Ok((q, r))
}

/// The factors of one matrix: `Q` in `mode` (none for `None`) and `R` to match.
fn factor(a: &Tensor, mode: Option<QrMode>) -> Result<Factors> {
    let (m, n) = (a.dims()[0], a.dims()[1]);
    let k = m.min(n);
    let f = col_major(a)?;
    let tau = Tensor::new(a.dtype(), a.device(), &[k])?;
    dispatch_blas!(a.dtype(), a.device(), "qr", T, D => {
        let _w = (f.buffer.write("qr")?, tau.buffer.write("qr")?);
        // SAFETY: `f` is a fresh dense column-major m × n copy (lda = m) and `tau` a fresh
        // vector of k, both of T on this device.
        unsafe { <D as LapackGeqrf<T>>::geqrf(m, n, f.typed_ptr::<T>(), m.max(1), tau.typed_ptr::<T>()) }
    })?;
    // R: the upper trapezoid of the factors' top rows, zero below the diagonal.
    let ([_, cols], [r_rows, _]) = shapes(m, n, mode);
    let r = Tensor::new_in_order(a.dtype(), a.device(), &[r_rows, n], Order::ColMajor)?;
    r.narrow(0, 0, k)?.assign(&f.narrow(0, 0, k)?)?;
    if k > 1 {
        dispatch_blas!(a.dtype(), a.device(), "qr", T, D => {
            let _w = r.buffer.write("qr")?;
            // SAFETY: `r` is dense column-major r_rows × n with r_rows, n >= k: its leading
            // k × k block has leading dimension r_rows.
            unsafe { <D as SetMatrix<T>>::set_matrix(Uplo::Upper, k, r.typed_ptr::<T>(), r_rows) }
        })?;
    }
    let q = match mode {
        None => None,
        Some(_) => {
            // Q needs the k reflector columns in an m × cols array: the factors
            // themselves when they are exactly that (reduced mode, m >= n), since R has
            // been copied out already; a fresh array otherwise.
            let q = if cols == n {
                f
            } else {
                let q = Tensor::new_in_order(a.dtype(), a.device(), &[m, cols], Order::ColMajor)?;
                q.narrow(1, 0, k)?.assign(&f.narrow(1, 0, k)?)?;
                q
            };
            dispatch_blas!(a.dtype(), a.device(), "qr", T, D => {
                let _w = q.buffer.write("qr")?;
                let _r = tau.buffer.read("qr")?;
                // SAFETY: `q` is dense column-major m × cols (lda = m, m >= cols >= k)
                // holding the k reflectors in its first columns; `tau` has k entries.
                unsafe { <D as LapackOrgqr<T>>::orgqr(m, cols, k, q.typed_ptr::<T>(), m.max(1), tau.typed_ptr::<T>()) }
            })?;
            Some(in_order_of(q, a)?)
        }
    };
    Ok((q, in_order_of(r, a)?))
}
