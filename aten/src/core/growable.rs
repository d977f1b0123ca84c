//! [`GrowableTensor`]: a tensor that grows along one dimension into reserved capacity,
//! like a `Vec`, for the subspace basis of a block eigensolver: appending a block copies
//! only the block, and the filled part is a zero-copy view.

use ctensor_base::{DataType, DeviceType, Error, Result};

use super::promotion::check_can_cast;
use super::tensor::Tensor;

/// A tensor whose size along dimension `dim` grows by [`push`](Self::push) into reserved
/// capacity; [`view`](Self::view) is the filled part (`narrow(dim, 0, len)` of the
/// storage), with no copy.
///
/// When a push does not fit, the capacity at least doubles and only the filled part is
/// copied, so `k` pushes cost O(k) copies of their own blocks plus O(log k) copies of
/// the basis. A row-major `[n, capacity]` storage grown along dimension 1 gives column
/// views whose rows keep the storage's stride, which `matmul`/`einsum` read without a
/// copy.
///
/// ```
/// use ctensor_aten::{DataType, DeviceType, GrowableTensor, Tensor};
/// // A basis of vectors of length 4, as columns, room for 8.
/// let mut basis = GrowableTensor::new(DataType::Double, DeviceType::Cpu, &[4, 0], 1, 8)?;
/// basis.push(&Tensor::ones(DataType::Double, DeviceType::Cpu, &[4, 2])?)?;
/// basis.push(&Tensor::zeros(DataType::Double, DeviceType::Cpu, &[4, 1])?)?;
/// assert_eq!((basis.len(), basis.capacity()), (3, 8));
/// assert_eq!(basis.view()?.dims(), &[4, 3]);
/// # Ok::<(), ctensor_aten::Error>(())
/// ```
#[derive(Debug)]
pub struct GrowableTensor {
    storage: Tensor,
    dim: usize,
    len: usize,
}

impl GrowableTensor {
    /// An empty growable tensor of `dtype` on `device` whose other dimensions are those
    /// of `shape` (`shape[dim]` is ignored: the length starts at 0), with room for
    /// `capacity` entries along `dim`.
    pub fn new(
        dtype: DataType,
        device: DeviceType,
        shape: &[usize],
        dim: usize,
        capacity: usize,
    ) -> Result<GrowableTensor> {
        if dim >= shape.len() {
            return Err(Error::OutOfRange {
                op: "GrowableTensor::new",
                what: "growing dimension".into(),
                given: dim as i64,
                valid: format!("0..{} for shape {shape:?}", shape.len()),
            });
        }
        let mut dims = shape.to_vec();
        dims[dim] = capacity;
        Ok(GrowableTensor {
            storage: Tensor::new(dtype, device, &dims)?,
            dim,
            len: 0,
        })
    }

    /// The number of entries filled along the growing dimension.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` when nothing has been pushed (or all was cleared).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entries there is room for before the storage must grow.
    pub fn capacity(&self) -> usize {
        self.storage.dims()[self.dim]
    }

    /// The growing dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The filled part: a view sharing the storage (writes through it are kept).
    pub fn view(&self) -> Result<Tensor> {
        self.storage.narrow(self.dim, 0, self.len)
    }

    /// Appends `block` along the growing dimension; its other dimensions must match, its
    /// type must be storable in the tensor's ([`can_cast`](crate::can_cast)), and it may
    /// be on another device (copied over). Grows the storage when needed (see the type's
    /// docs).
    pub fn push(&mut self, block: &Tensor) -> Result<()> {
        let op = "GrowableTensor::push";
        let dims = self.storage.dims();
        let fits = block.ndim() == dims.len()
            && (0..dims.len()).all(|d| d == self.dim || block.dims()[d] == dims[d]);
        if !fits {
            let mut want = dims.to_vec();
            want[self.dim] = 0;
            return Err(Error::ShapeMismatch {
                op,
                expected: format!(
                    "a block of shape {want:?} with any size in dimension {}",
                    self.dim
                ),
                got: vec![block.dims().to_vec()],
            });
        }
        check_can_cast(op, block.dtype(), self.storage.dtype())?;
        let add = block.dims()[self.dim];
        let need = self.len.checked_add(add).ok_or(Error::Overflow {
            op,
            what: format!("{} + {add} entries", self.len),
        })?;
        if need > self.capacity() {
            self.reserve_total(need.max(self.capacity().saturating_mul(2)))?;
        }
        self.storage
            .narrow(self.dim, self.len, add)?
            .assign(block)
            .map_err(|e| e.in_op(op))?;
        self.len = need;
        Ok(())
    }

    /// Appends `add` entries written by `fill`, which is handed them where they will lie:
    /// a view of the storage (`add` entries along the growing dimension, the storage's
    /// strides). What the view holds before is unspecified (zeros, or entries truncated
    /// or cleared earlier), so `fill` must write every element. Nothing is appended when
    /// `fill` fails, and its error is returned unchanged. Grows the storage when needed,
    /// as [`push`](Self::push). For an operator that writes its result straight into a
    /// solver's `H V`, with no block beside it.
    pub fn push_with(
        &mut self,
        add: usize,
        fill: impl FnOnce(&mut Tensor) -> Result<()>,
    ) -> Result<()> {
        let need = self.len.checked_add(add).ok_or(Error::Overflow {
            op: "GrowableTensor::push_with",
            what: format!("{} + {add} entries", self.len),
        })?;
        if need > self.capacity() {
            self.reserve_total(need.max(self.capacity().saturating_mul(2)))?;
        }
        fill(&mut self.storage.narrow(self.dim, self.len, add)?)?;
        self.len = need;
        Ok(())
    }

    /// The reserved part beyond the filled one (`capacity − len` entries along the
    /// growing dimension), a view of the storage to write entries in before
    /// [`commit`](Self::commit)ting them: a solver forms its next columns where they
    /// will be kept. What it holds before is unspecified (zeros, or entries truncated or
    /// cleared earlier). It shares the storage with [`view`](Self::view), so an op that
    /// writes into it while reading the filled part copies that part first (see
    /// [`Tensor::shares_memory_with`]): such work goes a slab of rows at a time.
    pub fn spare(&self) -> Result<Tensor> {
        self.storage
            .narrow(self.dim, self.len, self.capacity() - self.len)
    }

    /// Appends the first `add` entries of [`spare`](Self::spare) as they were written
    /// there. Errors: `OutOfRange` when `add` exceeds the spare room (nothing changes).
    pub fn commit(&mut self, add: usize) -> Result<()> {
        let room = self.capacity() - self.len;
        if add > room {
            return Err(Error::OutOfRange {
                op: "GrowableTensor::commit",
                what: "entries appended from the spare room".into(),
                given: add as i64,
                valid: format!("0..={room}"),
            });
        }
        self.len += add;
        Ok(())
    }

    /// Makes room for at least `total` entries, copying the filled part once.
    fn reserve_total(&mut self, total: usize) -> Result<()> {
        let mut dims = self.storage.dims().to_vec();
        dims[self.dim] = total;
        let grown = Tensor::new(self.storage.dtype(), self.storage.device(), &dims)?;
        if self.len > 0 {
            grown.narrow(self.dim, 0, self.len)?.assign(&self.view()?)?;
        }
        self.storage = grown;
        Ok(())
    }

    /// Replaces the filled part `V` (`[n, len]`) of a matrix grown along its columns
    /// (dimension 1 of a 2-D tensor) by `V · y` (`y` is `[len, k]`, `k ≤ len`), in place:
    /// the length becomes `k` and the capacity stays. A block solver's restart from its
    /// Ritz vectors, without a second basis-sized array (see [`Tensor::matmul_right_`]).
    pub fn matmul_right_(&mut self, y: &Tensor) -> Result<()> {
        if self.dim != 1 || self.storage.ndim() != 2 {
            return Err(Error::InvalidArgument {
                op: "GrowableTensor::matmul_right_",
                expected: "a matrix grown along its columns (dimension 1 of 2)".into(),
                given: format!(
                    "dimension {} of {} ({:?})",
                    self.dim,
                    self.storage.ndim(),
                    self.storage.dims()
                ),
            });
        }
        let mut filled = self.view()?;
        filled
            .matmul_right_(y)
            .map_err(|e| e.in_op("GrowableTensor::matmul_right_"))?;
        self.len = filled.dims()[1];
        Ok(())
    }

    /// Keeps the first `len` entries (no effect when there are fewer); the capacity stays.
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Empties it; the capacity stays (a restart of the solver reuses the memory).
    pub fn clear(&mut self) {
        self.len = 0;
    }
}
