//! Operations on whole tensors: they take `&Tensor`s of any dtype, layout and device,
//! check them, and dispatch once on `(dtype, device)` (in `core/dispatch.rs`, the one
//! place that turns runtime tags into types) to generic code over the kernel traits.
//!
//! - [`compare`]: `lt`/`le`/`gt`/`ge`/`equal`/`not_equal` (i32 masks), `isnan`/
//!   `isfinite`/`isinf`, `where_cond`, `maximum`/`minimum`/`clamp`, `any`/`all`,
//!   `vector_norm` along axes.
//! - [`elementwise`]: `add`, `sub`, `mul`, `div`, `fma`, scalar forms, `neg`, `abs`,
//!   `sqrt`, `exp`, with NumPy broadcasting and type promotion.
//! - [`operators`]: `+ - * /` on tensors, results and numbers.
//! - [`reduce`]: `sum`, `mean`, `max`, `min` over all or chosen axes, `norm`, `dot`,
//!   `vdot`.
//! - [`qr`]: `qr` (reduced or complete `Q` and `R`) and `qr_r`, for matrices and stacks.
//! - [`solve`]: `solve_triangular`, `cholesky_solve`, `lstsq` (through QR), `det` and
//!   `slogdet` (through LU).
//! - [`svd`]: `svd` (thin or full), `svdvals`, `pinv`.
//! - [`random`]: `Tensor::rand`/`randn` and [`Generator`](random::Generator), the same
//!   counter-based stream on every device.
//! - [`indices`]: [`Indices`](indices::Indices), positions checked once for the
//!   gathers and scatters a loop repeats (`index_select_with`, `index_copy_with`).
//! - [`select`]: `cat`/`concat`, `stack`, `index_select`, `take`, `compress`,
//!   `masked_select`, `split`/`split_sizes`/`chunk` (views), `assign` into a view.
//! - [`layout`]: materialised `permute_copy` (with conjugation), `stride`, `inflate`.
//! - [`einsum`]: Einstein summation with `conj_x`/`conj_y`, `alpha`/`beta` and `out`.
//! - [`math`]: `sin`, `cos`, `tan`, `log`, `log1p`, `expm1`, `square`, `reciprocal`,
//!   `rsqrt`, `sign`, `floor`, `ceil`, `round`.
//! - [`matmul`]: `matmul`, `matmul_op` (N/T/C flags), `matmul_into` (alpha, beta, out).
//! - [`linalg`]: `eigh` (three backends), `eigh_generalized`, `cholesky`,
//!   `tri_inverse`, `solve`, `inverse`, `set_matrix`.

pub mod compare;
pub mod einsum;
pub mod elementwise;
pub mod fft;
pub mod indices;
pub mod layout;
pub mod linalg;
pub mod math;
pub mod matmul;
pub mod operators;
pub mod qr;
pub mod random;
pub mod reduce;
pub mod select;
pub mod solve;
pub mod sphere_fft;
pub mod svd;

use ctensor_base::{Error, Result};

use crate::core::shape::{Order, TensorShape};
use crate::core::tensor::Tensor;

/// An empty `Vec` with room for `n` items (`what`: what they are), or `Error::Overflow`
/// when that many cannot be held: a size that only an empty tensor can have (a batch of
/// 2⁴⁰ zero-size matrices) must not reach an infallible `Vec` allocation, which aborts.
pub(crate) fn vec_for<T>(op: &'static str, what: &str, n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Error::Overflow {
        op,
        what: format!(
            "{n} {what} ({} bytes each) cannot be held in memory",
            std::mem::size_of::<T>()
        ),
    })?;
    Ok(v)
}

/// Both tensors must be on the same device (data types may differ: see
/// [`promotion`](crate::core::promotion)).
pub(crate) fn check_device(op: &'static str, a: &Tensor, b: &Tensor) -> Result<()> {
    if a.device() != b.device() {
        return Err(Error::DeviceMismatch {
            op,
            expected: a.device(),
            got: b.device(),
        });
    }
    Ok(())
}

/// The operands on one device, each cast to `dtype` where its type differs (a dense copy
/// of that operand; the others are shared, not copied).
pub(crate) fn promote_to(
    op: &'static str,
    operands: &[&Tensor],
    dtype: ctensor_base::DataType,
) -> Result<Vec<Tensor>> {
    operands
        .iter()
        .map(|x| {
            check_device(op, operands[0], x)?;
            if x.dtype() == dtype {
                Ok(x.share())
            } else {
                x.cast(dtype).map_err(|e| e.in_op(op))
            }
        })
        .collect()
}

/// The operands promoted to their common type ([`result_type`](crate::core::promotion::result_type)).
pub(crate) fn promote(op: &'static str, operands: &[&Tensor]) -> Result<Vec<Tensor>> {
    let dtype = crate::core::promotion::result_type_of(operands.iter().map(|x| x.dtype()))
        .ok_or_else(|| Error::Internal {
            op,
            what: "promotion of an empty operand list".into(),
        })?;
    promote_to(op, operands, dtype)
}

/// `x` broadcast to `shape` as a dense row-major tensor (shared when it already is one).
pub(crate) fn dense_as(x: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let b = x.broadcast_to(shape)?;
    if b.is_contiguous() && b.numel() == x.numel() {
        Ok(b)
    } else {
        b.copy_in_order(Order::RowMajor)
    }
}

/// The broadcast shape of `inputs`, which must be on one device.
pub(crate) fn shape_of(op: &'static str, inputs: &[&Tensor]) -> Result<Vec<usize>> {
    let mut shape = inputs[0].dims().to_vec();
    for x in &inputs[1..] {
        check_device(op, inputs[0], x)?;
        shape = broadcast_shapes(op, &shape, x.dims())?;
    }
    Ok(shape)
}

/// Both tensors must have the same data type and device.
pub(crate) fn check_same(op: &'static str, a: &Tensor, b: &Tensor) -> Result<()> {
    if a.dtype() != b.dtype() {
        return Err(Error::DTypeMismatch {
            op,
            expected: a.dtype(),
            got: b.dtype(),
        });
    }
    if a.device() != b.device() {
        return Err(Error::DeviceMismatch {
            op,
            expected: a.device(),
            got: b.device(),
        });
    }
    Ok(())
}

/// The NumPy broadcast of two shapes: aligned at the right, each pair of sizes equal or
/// one of them 1.
pub fn broadcast_shapes(op: &'static str, a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let da = if i < n - a.len() {
            1
        } else {
            a[i - (n - a.len())]
        };
        let db = if i < n - b.len() {
            1
        } else {
            b[i - (n - b.len())]
        };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(Error::Broadcast {
                    op,
                    shapes: vec![a.to_vec(), b.to_vec()],
                })
            }
        };
    }
    Ok(out)
}

impl Tensor {
    /// A zero-copy view of `self` broadcast to `shape` (NumPy rules): new leading axes
    /// and axes of size 1 get stride 0. Writing through such a view writes one element
    /// many times, so ops only read it.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Tensor> {
        let op = "broadcast_to";
        let full = broadcast_shapes(op, self.dims(), shape)?;
        if full != shape {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!("a shape {:?} can be broadcast to", self.dims()),
                got: vec![shape.to_vec()],
            });
        }
        let lead = shape.len() - self.ndim();
        let mut strides = vec![0; shape.len()];
        for (d, s) in strides.iter_mut().enumerate().skip(lead) {
            let k = d - lead;
            *s = if self.dims()[k] == 1 && shape[d] != 1 {
                0
            } else {
                self.strides()[k]
            };
        }
        Ok(self.strided_view(shape, &strides, 0))
    }

    /// A view of the same buffer with these dims and strides (in elements), starting
    /// `offset` elements after `self`'s first element. The caller keeps every reachable
    /// element inside the buffer.
    pub(crate) fn strided_view(&self, dims: &[usize], strides: &[usize], offset: usize) -> Tensor {
        let mut v = self.share();
        v.shape = TensorShape::new(dims);
        v.strides = strides.to_vec();
        v.offset += offset;
        v
    }

    /// `self` if it is row-major contiguous, otherwise a row-major copy.
    pub(crate) fn dense(&self) -> Result<Tensor> {
        if self.is_contiguous() {
            Ok(self.share())
        } else {
            self.copy_in_order(Order::RowMajor)
        }
    }
}
