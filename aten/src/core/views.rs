//! Views that share the buffer (`narrow`, `index`, `permute`, `transpose`, `t`,
//! `reshape` when the layout allows) and the copies that materialise a layout
//! (`contiguous`, `slice`).

use ctensor_base::{Error, Result};

use super::shape::{Order, TensorShape};
use super::tensor::Tensor;

impl Tensor {
    /// `dim` must be a dimension of this tensor (`Error::OutOfRange` naming `op`).
    pub(crate) fn check_dim(&self, op: &'static str, dim: usize) -> Result<()> {
        if dim >= self.ndim() {
            return Err(Error::OutOfRange {
                op,
                what: "dimension".into(),
                given: dim as i64,
                valid: format!("0..{} for a rank-{} tensor", self.ndim(), self.ndim()),
            });
        }
        Ok(())
    }

    /// A new handle on the same memory with the same view: a shallow copy.
    pub fn share(&self) -> Tensor {
        Tensor {
            dtype: self.dtype,
            device: self.device,
            shape: self.shape.clone(),
            strides: self.strides.clone(),
            offset: self.offset,
            buffer: self.buffer.clone(),
        }
    }

    /// The main diagonal of a matrix (rank 2, any shape and layout) as a zero-copy
    /// vector view of `min(rows, cols)` elements, as NumPy's and PyTorch's `diagonal`.
    pub fn diagonal(&self) -> Result<Tensor> {
        let [r, c] = *self.dims() else {
            return Err(Error::NotAMatrix {
                op: "diagonal",
                shape: self.dims().to_vec(),
                need: "a matrix (rank 2)",
            });
        };
        let mut out = self.share();
        out.shape = TensorShape::new(&[r.min(c)]);
        out.strides = vec![self.strides[0] + self.strides[1]];
        Ok(out)
    }

    /// The view of `len` entries of dimension `dim` starting at `start` (zero-copy).
    pub fn narrow(&self, dim: usize, start: usize, len: usize) -> Result<Tensor> {
        self.check_dim("narrow", dim)?;
        let size = self.dims()[dim];
        if start.checked_add(len).is_none_or(|end| end > size) {
            return Err(Error::OutOfRange {
                op: "narrow",
                what: format!("end of the range {start}..{start}+{len} along dimension {dim}:"),
                given: start.saturating_add(len) as i64,
                valid: format!("at most {size}"),
            });
        }
        let mut out = self.share();
        let mut dims = self.dims().to_vec();
        dims[dim] = len;
        out.shape = TensorShape::new(&dims);
        if len > 0 {
            out.offset += start * self.strides[dim];
        }
        Ok(out)
    }

    /// The view of every `step`-th entry of dimension `dim`, `len` of them from `start`
    /// (NumPy's `a[start : start + len * step : step]` along `dim`; zero-copy, the stride
    /// of `dim` multiplied by `step`). `step` must be at least 1; `step == 1` is
    /// [`narrow`](Self::narrow).
    pub fn narrow_step(&self, dim: usize, start: usize, len: usize, step: usize) -> Result<Tensor> {
        let op = "narrow_step";
        self.check_dim(op, dim)?;
        if step == 0 {
            return Err(Error::InvalidArgument {
                op,
                expected: "a step of at least 1".into(),
                given: "step 0".into(),
            });
        }
        let size = self.dims()[dim];
        // The last entry read is start + (len - 1) * step.
        let last = match len {
            0 => Some(start),
            _ => (len - 1)
                .checked_mul(step)
                .and_then(|d| d.checked_add(start)),
        };
        let fits = match (len, last) {
            (0, Some(s)) => s <= size,
            (_, Some(l)) => l < size,
            (_, None) => false,
        };
        if !fits {
            return Err(Error::OutOfRange {
                op,
                what: format!(
                    "last entry of {len} entries from {start} in steps of {step} along dimension {dim}:"
                ),
                given: last.map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX)),
                valid: format!("below {size}"),
            });
        }
        let mut out = self.narrow(dim, start, len.min(size - start))?;
        let mut dims = self.dims().to_vec();
        dims[dim] = len;
        out.shape = TensorShape::new(&dims);
        if len > 1 {
            out.strides[dim] = self.strides[dim] * step;
        }
        Ok(out)
    }

    /// Row `i` along the first dimension: a zero-copy view of rank `ndim - 1` (rank 0 for
    /// a vector). It shares the buffer through `Arc`, so it stays valid after the parent
    /// tensor is dropped.
    pub fn index(&self, i: usize) -> Result<Tensor> {
        if self.ndim() == 0 {
            return Err(Error::InvalidArgument {
                op: "index",
                expected: "a tensor of rank >= 1".into(),
                given: "a rank-0 tensor".into(),
            });
        }
        if i >= self.dims()[0] {
            return Err(Error::OutOfRange {
                op: "index",
                what: "index along dimension 0".into(),
                given: i as i64,
                valid: format!("0..{}", self.dims()[0]),
            });
        }
        let mut out = self.share();
        out.offset += i * self.strides[0];
        out.shape = TensorShape::new(&self.dims()[1..]);
        out.strides = self.strides[1..].to_vec();
        Ok(out)
    }

    /// The view with dimensions reordered: dimension `k` of the result is dimension
    /// `perm[k]` of `self` (zero-copy; NumPy's `transpose(axes)`).
    pub fn permute(&self, perm: &[usize]) -> Result<Tensor> {
        let n = self.ndim();
        let mut seen = vec![false; n];
        let valid = perm.len() == n
            && perm
                .iter()
                .all(|&p| p < n && !std::mem::replace(&mut seen[p], true));
        if !valid {
            return Err(Error::InvalidArgument {
                op: "permute",
                expected: format!("a permutation of 0..{n}"),
                given: format!("{perm:?}"),
            });
        }
        let mut out = self.share();
        out.shape = TensorShape::new(&perm.iter().map(|&p| self.dims()[p]).collect::<Vec<_>>());
        out.strides = perm.iter().map(|&p| self.strides[p]).collect();
        Ok(out)
    }

    /// The view with dimensions `a` and `b` swapped (zero-copy).
    pub fn transpose(&self, a: usize, b: usize) -> Result<Tensor> {
        self.check_dim("transpose", a)?;
        self.check_dim("transpose", b)?;
        let mut perm: Vec<usize> = (0..self.ndim()).collect();
        perm.swap(a, b);
        self.permute(&perm)
    }

    /// The matrix transpose of a rank-2 tensor (zero-copy); rank 0 and 1 are returned as
    /// they are, like NumPy's `.T`.
    pub fn t(&self) -> Result<Tensor> {
        match self.ndim() {
            0 | 1 => Ok(self.share()),
            2 => self.transpose(0, 1),
            n => Err(Error::Unsupported {
                op: "t",
                what: format!(
                    "t() of a rank-{n} tensor (it takes rank <= 2; use permute or transpose)"
                ),
            }),
        }
    }

    /// The view with a new dimension of size 1 inserted at `dim` (`0..=rank`), as
    /// PyTorch's `unsqueeze` and NumPy's `expand_dims` (zero-copy).
    #[doc(alias = "expand_dims")]
    pub fn unsqueeze(&self, dim: usize) -> Result<Tensor> {
        if dim > self.ndim() {
            return Err(Error::OutOfRange {
                op: "unsqueeze",
                what: "position of the new dimension".into(),
                given: dim as i64,
                valid: format!("0..={} for a rank-{} tensor", self.ndim(), self.ndim()),
            });
        }
        let mut dims = self.dims().to_vec();
        let mut strides = self.strides.clone();
        // Any stride serves a length-1 axis; this one keeps a dense view dense.
        let stride = if dim < self.ndim() {
            strides[dim] * dims[dim]
        } else {
            1
        };
        dims.insert(dim, 1);
        strides.insert(dim, stride);
        let mut out = self.share();
        out.shape = TensorShape::new(&dims);
        out.strides = strides;
        Ok(out)
    }

    /// The view without dimension `dim`, which must have size 1 (zero-copy; PyTorch's
    /// `squeeze(dim)`).
    pub fn squeeze(&self, dim: usize) -> Result<Tensor> {
        self.check_dim("squeeze", dim)?;
        if self.dims()[dim] != 1 {
            return Err(Error::ShapeMismatch {
                op: "squeeze",
                expected: format!("size 1 in dimension {dim}"),
                got: vec![self.dims().to_vec()],
            });
        }
        let mut out = self.share();
        let mut dims = self.dims().to_vec();
        dims.remove(dim);
        out.strides.remove(dim);
        out.shape = TensorShape::new(&dims);
        Ok(out)
    }

    /// A row-major view with shape `dims` of this row-major contiguous tensor.
    pub(crate) fn view_as(&self, op: &'static str, dims: &TensorShape) -> Result<Tensor> {
        if !self.is_contiguous() {
            return Err(self.not_contiguous(op));
        }
        if dims.numel() != self.numel() {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!("a shape of {} elements", self.numel()),
                got: vec![dims.dims().to_vec()],
            });
        }
        let mut out = self.share();
        out.strides = Order::RowMajor.strides(dims.dims());
        out.shape = dims.clone();
        Ok(out)
    }

    /// The same elements in row-major order with a new shape; one entry may be `-1` and is
    /// inferred. A zero-copy view when the tensor is row-major contiguous, otherwise a
    /// copy (like NumPy and PyTorch). See [`TensorShape::resolve`] for the failure cases.
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        let dims = TensorShape::resolve(self.numel(), shape)?;
        if self.is_contiguous() {
            self.view_as("reshape", &dims)
        } else {
            self.contiguous()?.view_as("reshape", &dims)
        }
    }

    /// This tensor if it is row-major contiguous (a shallow copy), otherwise a row-major
    /// contiguous deep copy.
    pub fn contiguous(&self) -> Result<Tensor> {
        if self.is_contiguous() {
            Ok(self.share())
        } else {
            self.copy_in_order(Order::RowMajor)
        }
    }

    /// A deep, row-major copy of the block `starts[k] .. starts[k] + sizes[k]` in every
    /// dimension `k` (ABACUS `slice`, for any rank).
    pub fn slice(&self, starts: &[usize], sizes: &[usize]) -> Result<Tensor> {
        if starts.len() != self.ndim() || sizes.len() != self.ndim() {
            return Err(Error::ShapeMismatch {
                op: "slice",
                expected: format!(
                    "{} starts and {} sizes (one per dimension)",
                    self.ndim(),
                    self.ndim()
                ),
                got: vec![starts.to_vec(), sizes.to_vec()],
            });
        }
        let mut view = self.share();
        for (dim, (&start, &size)) in starts.iter().zip(sizes).enumerate() {
            view = view
                .narrow(dim, start, size)
                .map_err(|_| Error::OutOfRange {
                    op: "slice",
                    what: format!("block {start}..{start}+{size} along dimension {dim}: end"),
                    given: start.saturating_add(size) as i64,
                    valid: format!("at most {}", self.dims()[dim]),
                })?;
        }
        view.copy_in_order(Order::RowMajor)
    }
}
