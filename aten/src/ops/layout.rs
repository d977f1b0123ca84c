//! Materialised layout changes: a permutation of the axes into new memory (optionally
//! conjugated), sub-sampling with a step per axis (`stride`) and its inverse
//! (`inflate`), as ABACUS names them.

use ctensor_base::{Error, Result};
use ctensor_kernels::permute::{Inflate, Stride, Transpose};

use crate::core::dispatch::dispatch;
use crate::core::tensor::Tensor;

impl Tensor {
    /// The axes permuted (`out.dims()[d] == self.dims()[perm[d]]`) into new row-major
    /// memory, conjugated when `conj` (for complex types). Cache-blocked; compare
    /// [`permute`](Tensor::permute), the zero-copy view.
    pub fn permute_copy(&self, perm: &[usize], conj: bool) -> Result<Tensor> {
        let op = "permute_copy";
        let x = self.dense()?;
        if perm.len() != self.ndim() {
            return Err(Error::InvalidArgument {
                op,
                expected: format!("a permutation of 0..{}", self.ndim()),
                given: format!("{perm:?}"),
            });
        }
        let dims: Vec<usize> = perm
            .iter()
            .map(|&p| x.dims().get(p).copied().unwrap_or(0))
            .collect();
        // SAFETY: the transpose writes every element of `out`, which is dropped unread on
        // error.
        let out = unsafe { Tensor::uninit(self.dtype(), self.device(), &dims)? };
        let _w = out.buffer.write(op)?;
        let _r = x.buffer.read(op)?;
        dispatch!(self.dtype(), self.device(), T, D => {
            // SAFETY: `x` and `out` are dense with the same element count, in different
            // buffers held by the guards.
            unsafe { <D as Transpose<T>>::transpose(x.dims(), perm, x.typed_ptr::<T>(), out.typed_ptr::<T>(), conj) }
        })?;
        drop((_w, _r));
        Ok(out)
    }

    /// Every `steps[d]`-th element along each axis, into new memory: the shape is
    /// `ceil(dims[d] / steps[d])` (ABACUS `stride_op`).
    pub fn stride(&self, steps: &[usize]) -> Result<Tensor> {
        let op = "stride";
        let x = self.dense()?;
        if steps.len() != self.ndim() || steps.contains(&0) {
            return Err(Error::InvalidArgument {
                op,
                expected: format!("{} steps of at least 1", self.ndim()),
                given: format!("{steps:?}"),
            });
        }
        let dims: Vec<usize> = x
            .dims()
            .iter()
            .zip(steps)
            .map(|(&n, &s)| n.div_ceil(s))
            .collect();
        // SAFETY: `stride` writes every element of the dense output (one input element
        // each) before anything reads it; on an error `out` is dropped unread.
        let out = unsafe { Tensor::uninit(self.dtype(), self.device(), &dims)? };
        let _w = out.buffer.write(op)?;
        let _r = x.buffer.read(op)?;
        dispatch!(self.dtype(), self.device(), T, D => {
            // SAFETY: dense arrays of the input and output sizes, different buffers.
            unsafe { <D as Stride<T>>::stride(x.dims(), steps, x.typed_ptr::<T>(), out.typed_ptr::<T>()) }
        })?;
        drop((_w, _r));
        Ok(out)
    }

    /// The inverse of [`stride`](Tensor::stride): a zero tensor of shape `dims` with
    /// `self`'s elements at every `steps[d]`-th position (ABACUS `inflate_op`).
    pub fn inflate(&self, steps: &[usize], dims: &[usize]) -> Result<Tensor> {
        let op = "inflate";
        let x = self.dense()?;
        let out = Tensor::new(self.dtype(), self.device(), dims)?;
        let _w = out.buffer.write(op)?;
        let _r = x.buffer.read(op)?;
        dispatch!(self.dtype(), self.device(), T, D => {
            // SAFETY: dense arrays of the input and output sizes, different buffers.
            unsafe { <D as Inflate<T>>::inflate(x.dims(), steps, x.typed_ptr::<T>(), dims, out.typed_ptr::<T>()) }
        })?;
        drop((_w, _r));
        Ok(out)
    }
}
