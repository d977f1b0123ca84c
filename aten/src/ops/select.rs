//! Assembling and selecting: [`cat`]/[`concat()`] and [`stack`] build one tensor from
//! several; [`Tensor::index_select`], [`Tensor::take`], [`Tensor::masked_select`] and
//! [`Tensor::compress`] gather entries by index or mask (a copy, through the
//! [`IndexSelect`] kernel on either device); [`Tensor::split`], [`Tensor::split_sizes`]
//! and [`Tensor::chunk`] cut a tensor into views; [`Tensor::assign`] writes into a view.
//!
//! In a block eigensolver: the unconverged bands are `x.compress(1, &not_converged)?`
//! (or `x.take(1, &[..])?`), the search space grows by `cat(&[&v, &w], 1)?`, and a
//! block of a larger tensor is written with `v.narrow(1, k, m)?.assign(&w)?`.

use ctensor_base::{c64, DataType, Error, Result};
use ctensor_kernels::select::{IndexCopy, IndexSelect};

use super::indices::Indices;
use super::{broadcast_shapes, promote};
use crate::core::dispatch::dispatch;
use crate::core::promotion::check_can_cast;
use crate::core::tensor::Tensor;

/// The tensors laid end to end along `dim`, in order: every tensor has the same rank and
/// the same size in every other dimension, all are on one device, and mixed data types
/// promote ([`result_type`](crate::result_type)). A copy (NumPy's `concatenate`,
/// PyTorch's `cat`).
///
/// ```
/// use ctensor_aten::{cat, Tensor};
/// let a = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2])?;
/// let b = Tensor::from_slice(&[5.0f64, 6.0], &[2, 1])?;
/// assert_eq!(cat(&[&a, &b], 1)?.to_vec::<f64>()?, [1.0, 2.0, 5.0, 3.0, 4.0, 6.0]);
/// # Ok::<(), ctensor_aten::Error>(())
/// ```
#[doc(alias = "concatenate")]
pub fn cat(tensors: &[&Tensor], dim: usize) -> Result<Tensor> {
    cat_as("cat", tensors, dim)
}

/// The same as [`cat`] (NumPy's and the array API's name).
pub fn concat(tensors: &[&Tensor], dim: usize) -> Result<Tensor> {
    cat_as("concat", tensors, dim)
}

fn cat_as(op: &'static str, tensors: &[&Tensor], dim: usize) -> Result<Tensor> {
    let first = *tensors.first().ok_or_else(|| Error::InvalidArgument {
        op,
        expected: "at least one tensor".into(),
        given: "an empty list".into(),
    })?;
    let rank = first.ndim();
    if dim >= rank {
        return Err(Error::OutOfRange {
            op,
            what: "dimension".into(),
            given: dim as i64,
            valid: format!("0..{rank} for rank-{rank} tensors"),
        });
    }
    let mut dims = first.dims().to_vec();
    dims[dim] = 0;
    for (k, t) in tensors.iter().enumerate() {
        let same_elsewhere =
            t.ndim() == rank && (0..rank).all(|d| d == dim || t.dims()[d] == first.dims()[d]);
        if !same_elsewhere {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!(
                    "tensors of rank {rank} with the sizes of the first, {:?}, in every \
                     dimension but {dim} (tensor {k} differs)",
                    first.dims()
                ),
                got: vec![t.dims().to_vec()],
            });
        }
        dims[dim] = dims[dim]
            .checked_add(t.dims()[dim])
            .ok_or(Error::Overflow {
                op,
                what: format!("the sizes along dimension {dim} add up beyond usize"),
            })?;
    }
    let parts = promote(op, tensors)?;
    // SAFETY: the parts' copies below tile `out` along `dim` (their lengths add up to
    // `dims[dim]`, every other dimension equal), so every element is written before the
    // result is returned; on an error `out` is dropped unread.
    let out = unsafe { Tensor::uninit(parts[0].dtype(), first.device(), &dims)? };
    let mut at = 0;
    for p in &parts {
        let len = p.dims()[dim];
        Tensor::copy_values(&out.narrow(dim, at, len)?, p, op)?;
        at += len;
    }
    Ok(out)
}

/// The tensors, all of one shape, stacked along a new dimension `dim` (`0..=rank`):
/// `stack(&[&a, &b], 0)` of two `[3]` vectors is `[2, 3]`. A copy; mixed data types
/// promote as in [`cat`].
pub fn stack(tensors: &[&Tensor], dim: usize) -> Result<Tensor> {
    let op = "stack";
    let first = *tensors.first().ok_or_else(|| Error::InvalidArgument {
        op,
        expected: "at least one tensor".into(),
        given: "an empty list".into(),
    })?;
    if let Some((k, t)) = tensors
        .iter()
        .enumerate()
        .find(|(_, t)| t.dims() != first.dims())
    {
        return Err(Error::ShapeMismatch {
            op,
            expected: format!(
                "tensors of one shape, {:?} (tensor {k} differs)",
                first.dims()
            ),
            got: vec![t.dims().to_vec()],
        });
    }
    let views: Vec<Tensor> = tensors
        .iter()
        .map(|t| t.unsqueeze(dim).map_err(|e| e.in_op(op)))
        .collect::<Result<_>>()?;
    let refs: Vec<&Tensor> = views.iter().collect();
    cat_as(op, &refs, dim)
}

/// The per-matrix results `parts` (each of shape `tail`) of a stack with batch shape
/// `batch`, stacked back into one tensor `[batch..., tail...]`; zeros of that shape when
/// the batch is empty (the stacked solvers and factorizations use it).
pub(crate) fn unbatch(
    parts: Vec<Tensor>,
    batch: &[usize],
    tail: &[usize],
    dtype: DataType,
    device: ctensor_base::DeviceType,
) -> Result<Tensor> {
    let mut dims = batch.to_vec();
    dims.extend_from_slice(tail);
    if parts.is_empty() {
        return Tensor::zeros(dtype, device, &dims);
    }
    let refs: Vec<&Tensor> = parts.iter().collect();
    let dims: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
    stack(&refs, 0)?.reshape(&dims)
}

/// Whether a mask entry counts as true: any nonzero part (NaN included, as NumPy's
/// `bool(nan)`).
fn truthy(v: c64) -> bool {
    v.re != 0.0 || v.im != 0.0
}

impl Tensor {
    /// The entries `idx` (checked: `0..dims[dim]`) along `dim`, gathered into a new
    /// row-major tensor on this tensor's device.
    fn gather(&self, op: &'static str, dim: usize, idx: Vec<i64>) -> Result<Tensor> {
        self.check_dim(op, dim)?;
        let ind = Indices::from_vec(idx, self.dims()[dim], self.device(), false)
            .map_err(|e| e.in_op(op))?;
        self.gather_with(op, dim, &ind)
    }

    /// The entries at the checked positions `ind` along `dim` (see [`gather`](Self::gather)).
    fn gather_with(&self, op: &'static str, dim: usize, ind: &Indices) -> Result<Tensor> {
        ind.check_for(op, self, dim, false)?;
        let size = self.dims()[dim];
        let mut dims = self.dims().to_vec();
        dims[dim] = ind.len();
        // SAFETY: `index_select` below writes every element of `out` (each output row
        // is one input row) before anything reads it; on an error `out` is dropped
        // unread.
        let out = unsafe { Tensor::uninit(self.dtype(), self.device(), &dims)? };
        if out.numel() == 0 {
            return Ok(out);
        }
        let outer: usize = self.dims()[..dim].iter().product();
        let inner: usize = self.dims()[dim + 1..].iter().product();
        let (idx, nidx) = (&ind.idx, ind.len());
        let src = self.dense()?;
        let _w = out.buffer.write(op)?;
        let _r = (src.buffer.read(op)?, idx.buffer.read(op)?);
        dispatch!(self.dtype(), self.device(), T, D => {
            // SAFETY: `src` is dense row-major [outer, size, inner] of T, `out` the fresh
            // [outer, nidx, inner], `idx` nidx i64 values in 0..size (checked when `ind`
            // was made, for this length and device), all on this device; `out` is a new
            // buffer; the guards hold all three.
            unsafe {
                <D as IndexSelect<T>>::index_select(
                    outer,
                    size,
                    inner,
                    idx.typed_ptr::<i64>(),
                    nidx,
                    src.typed_ptr::<T>(),
                    out.typed_ptr::<T>(),
                )
            }
        })?;
        drop((_w, _r));
        Ok(out)
    }

    /// [`index_select`](Self::index_select) at positions checked once ([`Indices`], made
    /// for this axis length and device): no index is checked or moved per call.
    /// Errors: `ShapeMismatch` when `dims[dim]` is not the length `ind` was made for,
    /// `DeviceMismatch` when `ind` is on another device.
    pub fn index_select_with(&self, dim: usize, ind: &Indices) -> Result<Tensor> {
        self.gather_with("index_select_with", dim, ind)
    }

    /// The entries of `self` along `dim` at `indices` (an integer tensor of rank 0 or 1,
    /// on any device), in that order, repeats allowed: `[.., len(indices), ..]`. A copy
    /// (PyTorch's `index_select`, NumPy's `take(.., axis=dim)`). Indices outside
    /// `0..dims[dim]` (negative ones included) are `Error::OutOfRange`.
    ///
    /// ```
    /// use ctensor_aten::Tensor;
    /// let x = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let cols = Tensor::from_slice(&[2i64, 0], &[2])?;
    /// assert_eq!(x.index_select(1, &cols)?.to_vec::<f64>()?, [3.0, 1.0, 6.0, 4.0]);
    /// # Ok::<(), ctensor_aten::Error>(())
    /// ```
    pub fn index_select(&self, dim: usize, indices: &Tensor) -> Result<Tensor> {
        let op = "index_select";
        self.check_dim(op, dim)?;
        let ind = Indices::from_tensor(op, indices, self.dims()[dim], self.device(), false)?;
        self.gather_with(op, dim, &ind)
    }

    /// Writes the slices of `src` along `dim` into `self` at `indices` (PyTorch's
    /// `index_copy_`, the inverse of [`index_select`](Self::index_select)):
    /// `self[.., indices[j], ..] = src[.., j, ..]`, the other entries keeping their
    /// values — e.g. plane-wave coefficients onto their points of an FFT grid. `src` has
    /// `self`'s shape with `len(indices)` along `dim` and a type that casts safely to
    /// `self`'s; the indices (an integer tensor of rank 0 or 1) must be distinct and in
    /// range. Any layout of `self` works; on a view it writes into the parent. A `src`
    /// that shares memory with `self` is read before anything is written.
    ///
    /// ```
    /// use ctensor_aten::{DataType, DeviceType, Tensor};
    /// let mut grid = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[5])?;
    /// let at = Tensor::from_slice(&[4i64, 0], &[2])?;
    /// grid.index_copy_(0, &at, &Tensor::from_slice(&[7.0f64, 9.0], &[2])?)?;
    /// assert_eq!(grid.to_vec::<f64>()?, [9.0, 0.0, 0.0, 0.0, 7.0]);
    /// # Ok::<(), ctensor_aten::Error>(())
    /// ```
    pub fn index_copy_(&mut self, dim: usize, indices: &Tensor, src: &Tensor) -> Result<()> {
        let op = "index_copy_";
        self.check_dim(op, dim)?;
        super::check_device(op, self, src)?;
        let ind = Indices::from_tensor(op, indices, self.dims()[dim], self.device(), true)?;
        self.copy_with(op, dim, &ind, src)
    }

    /// [`index_copy_`](Self::index_copy_) at positions checked once ([`Indices`], made
    /// for this axis length and device, and distinct): no index is checked or moved per
    /// call. Errors as [`index_select_with`](Self::index_select_with), and
    /// `InvalidArgument` naming a repeated position.
    pub fn index_copy_with(&mut self, dim: usize, ind: &Indices, src: &Tensor) -> Result<()> {
        self.copy_with("index_copy_with", dim, ind, src)
    }

    /// The scatter of [`index_copy_`](Self::index_copy_) at the checked positions `ind`.
    fn copy_with(
        &mut self,
        op: &'static str,
        dim: usize,
        ind: &Indices,
        src: &Tensor,
    ) -> Result<()> {
        ind.check_for(op, self, dim, true)?;
        super::check_device(op, self, src)?;
        let size = self.dims()[dim];
        let mut want = self.dims().to_vec();
        want[dim] = ind.len();
        if src.dims() != want.as_slice() {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!(
                    "a source of shape {want:?} ({} indices along dimension {dim})",
                    ind.len()
                ),
                got: vec![src.dims().to_vec()],
            });
        }
        check_can_cast(op, src.dtype(), self.dtype())?;
        if src.numel() == 0 {
            return Ok(());
        }
        let mut src = if src.dtype() == self.dtype() {
            src.dense()?
        } else {
            src.cast(self.dtype())?
        };
        let target = if self.is_contiguous() {
            self.share()
        } else {
            self.copy_in_order(crate::core::shape::Order::RowMajor)?
        };
        if src.shares_memory_with(&target) {
            src = src.try_clone()?; // read before anything is written
        }
        let outer: usize = self.dims()[..dim].iter().product();
        let inner: usize = self.dims()[dim + 1..].iter().product();
        let (idx, nidx) = (&ind.idx, ind.len());
        {
            let _w = target.buffer.write(op)?;
            let _r = (src.buffer.read(op)?, idx.buffer.read(op)?);
            dispatch!(self.dtype(), self.device(), T, D => {
                // SAFETY: `target` is dense row-major [outer, size, inner] of T, `src` dense
                // [outer, nidx, inner] in another buffer, `idx` nidx distinct i64 values in
                // 0..size (checked when `ind` was made and above), all on this device; the
                // guards hold them.
                unsafe {
                    <D as IndexCopy<T>>::index_copy(outer, size, inner, idx.typed_ptr::<i64>(), nidx, src.typed_ptr::<T>(), target.typed_ptr::<T>())
                }
            })?;
        }
        if !target.shares_memory_with(self) {
            self.assign(&target)?; // `self` is a strided view: write the block back
        }
        Ok(())
    }

    /// The entries of `self` along `dim` at the positions `indices` (NumPy's
    /// `take(indices, axis=dim)`): [`index_select`](Self::index_select) with a Rust
    /// slice, e.g. the columns of the unconverged bands.
    pub fn take(&self, dim: usize, indices: &[usize]) -> Result<Tensor> {
        let idx = indices
            .iter()
            .map(|&i| i64::try_from(i).unwrap_or(i64::MAX))
            .collect();
        self.gather("take", dim, idx)
    }

    /// The entries along `dim` where `mask` (a rank-1 tensor of `dims[dim]` entries, any
    /// dtype: nonzero is true) is true, in order (NumPy's `compress(mask, axis=dim)`).
    pub fn compress(&self, dim: usize, mask: &Tensor) -> Result<Tensor> {
        let op = "compress";
        self.check_dim(op, dim)?;
        if mask.ndim() != 1 || mask.dims()[0] != self.dims()[dim] {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!(
                    "a rank-1 mask of {} entries (dimension {dim})",
                    self.dims()[dim]
                ),
                got: vec![mask.dims().to_vec()],
            });
        }
        let m = mask.cast(DataType::ComplexDouble)?.to_vec::<c64>()?;
        let idx = (0..m.len())
            .filter(|&k| truthy(m[k]))
            .map(|k| k as i64)
            .collect();
        self.gather(op, dim, idx)
    }

    /// The elements where `mask` is true (nonzero), as a rank-1 tensor in row-major
    /// order (PyTorch's `masked_select`, NumPy's `x[mask]`). `mask` has any dtype and
    /// broadcasts to `self`'s shape.
    pub fn masked_select(&self, mask: &Tensor) -> Result<Tensor> {
        let op = "masked_select";
        let full = broadcast_shapes(op, self.dims(), mask.dims())?;
        if full != self.dims() {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!("a mask that broadcasts to {:?}", self.dims()),
                got: vec![mask.dims().to_vec()],
            });
        }
        let m = mask
            .broadcast_to(self.dims())?
            .cast(DataType::ComplexDouble)?
            .to_vec::<c64>()?;
        let idx = (0..m.len())
            .filter(|&k| truthy(m[k]))
            .map(|k| k as i64)
            .collect();
        let flat = self.reshape(&[-1])?;
        flat.gather(op, 0, idx)
    }

    /// Views of consecutive pieces of `size` entries along `dim` (the last one shorter
    /// when `size` does not divide the length), as PyTorch's `split(size, dim)`. No
    /// copy: writing into a piece writes into `self`.
    pub fn split(&self, size: usize, dim: usize) -> Result<Vec<Tensor>> {
        let op = "split";
        self.check_dim(op, dim)?;
        if size == 0 {
            return Err(Error::InvalidArgument {
                op,
                expected: "a piece size of at least 1".into(),
                given: "0".into(),
            });
        }
        let len = self.dims()[dim];
        let count = len.div_ceil(size);
        let mut pieces = super::vec_for(op, "views", count)?;
        for k in 0..count {
            pieces.push(self.narrow(dim, k * size, size.min(len - k * size))?);
        }
        Ok(pieces)
    }

    /// Views of consecutive pieces with the given `sizes` along `dim`, which must add up
    /// to its length (PyTorch's `split(sizes, dim)`, NumPy's `split` at the running sums).
    pub fn split_sizes(&self, sizes: &[usize], dim: usize) -> Result<Vec<Tensor>> {
        let op = "split_sizes";
        self.check_dim(op, dim)?;
        let total = sizes.iter().try_fold(0usize, |a, &s| a.checked_add(s));
        if total != Some(self.dims()[dim]) {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!(
                    "sizes that add up to {} (dimension {dim})",
                    self.dims()[dim]
                ),
                got: vec![sizes.to_vec()],
            });
        }
        let mut at = 0;
        sizes
            .iter()
            .map(|&s| {
                let v = self.narrow(dim, at, s);
                at += s;
                v
            })
            .collect()
    }

    /// `n` views along `dim` of `ceil(len / n)` entries each (fewer pieces when the
    /// length runs out first), as PyTorch's `chunk`.
    pub fn chunk(&self, n: usize, dim: usize) -> Result<Vec<Tensor>> {
        let op = "chunk";
        self.check_dim(op, dim)?;
        if n == 0 {
            return Err(Error::InvalidArgument {
                op,
                expected: "at least 1 chunk".into(),
                given: "0".into(),
            });
        }
        let len = self.dims()[dim];
        if len == 0 {
            return Ok(vec![self.share()]);
        }
        self.split(len.div_ceil(n), dim).map_err(|e| e.in_op(op))
    }

    /// Writes `src` into this tensor's memory: `src` broadcasts to `self`'s shape and its
    /// type must be storable in `self`'s ([`can_cast`](crate::can_cast)); the devices may
    /// differ (a transfer, as [`sync`](Self::sync)). Called on a view, it writes into the
    /// viewed block of the parent, which is the way to fill part of a tensor:
    ///
    /// ```
    /// use ctensor_aten::{DataType, DeviceType, Tensor};
    /// let v = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[2, 4])?;
    /// let w = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2])?;
    /// v.narrow(1, 1, 2)?.assign(&w)?;            // columns 1 and 2 of v
    /// assert_eq!(v.to_vec::<f64>()?, [0.0, 1.0, 2.0, 0.0, 0.0, 3.0, 4.0, 0.0]);
    /// # Ok::<(), ctensor_aten::Error>(())
    /// ```
    #[doc(alias = "copy_")]
    pub fn assign(&mut self, src: &Tensor) -> Result<()> {
        let op = "assign";
        check_can_cast(op, src.dtype(), self.dtype())?;
        let full = broadcast_shapes(op, self.dims(), src.dims())?;
        if full != self.dims() {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!("a source that broadcasts to {:?}", self.dims()),
                got: vec![src.dims().to_vec()],
            });
        }
        let src = if src.dtype() == self.dtype() {
            src.share()
        } else {
            src.cast(self.dtype())?
        };
        Tensor::copy_values(self, &src.broadcast_to(self.dims())?, op)
    }
}
