//! [`MirroredTensor`]: one logical tensor with a copy per device, each with a version,
//! copied only when a stale copy is read (Kokkos' `DualView`, parenchyma's
//! `SharedTensor`).
//!
//! A DFT code keeps every k-point's wavefunctions on the host and moves a k-point's to
//! the GPU while it is solved: `psi.read(Gpu)` copies only if the host copy is newer,
//! `psi.write(Gpu)` then marks the host copy stale, and the next `psi.read(Cpu)` copies
//! back. On a machine without a GPU, a program that only ever asks for the host copy
//! runs unchanged and never copies.

use ctensor_base::gpu::Stream;
use ctensor_base::{DataType, DeviceType, Error, Result};

use super::tensor::Tensor;

/// The index of a device's copy.
fn slot(d: DeviceType) -> usize {
    match d {
        DeviceType::Cpu => 0,
        DeviceType::Gpu => 1,
    }
}

/// One logical tensor with a copy on each device it is used on.
///
/// Every copy has a version; the tensor's version is the newest. [`read`](Self::read)
/// returns a current copy, copying from a current one only when the asked-for copy is
/// stale; [`write`](Self::write) does the same and then makes that copy the only current
/// one; [`write_only`](Self::write_only) skips the copy (for a copy about to be
/// overwritten whole). Reading or `write` before anything wrote values is
/// [`Error::Uninitialized`].
///
/// The copies are ordinary row-major tensors; the references handed out borrow the
/// mirror, so the bookkeeping cannot be bypassed by holding on to them. (A `share()` of a
/// copy kept past that borrow can; don't.)
///
/// ```
/// use ctensor_aten::{DataType, DeviceType, MirroredTensor};
/// let mut psi = MirroredTensor::new(DataType::ComplexDouble, &[1000, 8])?;
/// psi.write_only(DeviceType::Cpu)?.fill(1.0)?;        // initialise on the host
/// let on_host = psi.read(DeviceType::Cpu)?;           // current: no copy
/// assert_eq!(on_host.dims(), [1000, 8]);
/// assert_eq!(psi.copies_made(), 0);
/// # Ok::<(), ctensor_aten::Error>(())
/// ```
#[derive(Debug)]
pub struct MirroredTensor {
    dtype: DataType,
    dims: Vec<usize>,
    copies: [Option<Tensor>; 2],
    versions: [u64; 2],
    /// The newest version; 0 until something is written.
    latest: u64,
    copies_made: u64,
}

impl MirroredTensor {
    /// A mirrored tensor of `dtype` and `dims` with no copy yet (nothing is allocated
    /// until a device's copy is first asked for).
    ///
    /// Errors: `Overflow` when the shape's size, or its size in bytes, overflows.
    pub fn new(dtype: DataType, dims: &[usize]) -> Result<MirroredTensor> {
        const OP: &str = "MirroredTensor::new";
        let numel = super::shape::TensorShape::new(dims).checked_numel(OP)?;
        numel
            .checked_mul(dtype.size_of())
            .ok_or_else(|| Error::Overflow {
                op: OP,
                what: format!("{numel} elements of {dtype} exceed usize bytes"),
            })?;
        Ok(MirroredTensor {
            dtype,
            dims: dims.to_vec(),
            copies: [None, None],
            versions: [0, 0],
            latest: 0,
            copies_made: 0,
        })
    }

    /// A mirrored tensor whose first copy is `t` (made row-major if it is not), current,
    /// on `t`'s device.
    pub fn from_tensor(t: Tensor) -> Result<MirroredTensor> {
        let t = if t.is_contiguous() {
            t
        } else {
            t.contiguous()?
        };
        let mut m = MirroredTensor::new(t.dtype(), t.dims())?;
        let s = slot(t.device());
        m.copies[s] = Some(t);
        m.latest = 1;
        m.versions[s] = 1;
        Ok(m)
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    /// The shape.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The newest version (0 before anything was written). Every `write` and
    /// `write_only` makes a new one.
    pub fn version(&self) -> u64 {
        self.latest
    }

    /// `true` when `device`'s copy holds the newest values.
    pub fn is_current(&self, device: DeviceType) -> bool {
        self.latest > 0 && self.versions[slot(device)] == self.latest
    }

    /// How many copies between devices this tensor has made, in all.
    pub fn copies_made(&self) -> u64 {
        self.copies_made
    }

    /// Makes sure `device` has a copy (allocated, zeroed, if there is none yet) that still
    /// has the mirror's shape, type and row-major order; returns its slot.
    fn ensure_copy(&mut self, device: DeviceType, op: &'static str) -> Result<usize> {
        let s = slot(device);
        if self.copies[s].is_none() {
            self.copies[s] = Some(Tensor::zeros(self.dtype, device, &self.dims)?);
        }
        let t = self.copies[s].as_ref().expect("just made");
        if t.dims() != self.dims.as_slice() || t.dtype() != self.dtype || !t.is_contiguous() {
            return Err(Error::InvalidArgument {
                op,
                expected: format!(
                    "the mirrored copy on {device} to keep shape {:?}, {} and row-major order",
                    self.dims, self.dtype
                ),
                given: format!(
                    "a copy of shape {:?}, {}, strides {:?} (resized or replaced through a \
                     write reference)",
                    t.dims(),
                    t.dtype(),
                    t.strides()
                ),
            });
        }
        Ok(s)
    }

    /// Makes `device`'s copy current, copying from a current copy if it is stale.
    fn refresh(&mut self, device: DeviceType, op: &'static str) -> Result<()> {
        self.update(device, op, |dst, src| dst.sync(src))
    }

    /// Makes `device`'s copy current with `copy(dst, src)` from a current copy, when it
    /// is stale.
    fn update(
        &mut self,
        device: DeviceType,
        op: &'static str,
        copy: impl FnOnce(&mut Tensor, &Tensor) -> Result<()>,
    ) -> Result<()> {
        self.check_written(op)?;
        let s = slot(device);
        if self.versions[s] == self.latest {
            return Ok(());
        }
        let from = 1 - s;
        let src = self.copies[from].take().ok_or_else(|| Error::Internal {
            op,
            what: "no copy holds the newest version".into(),
        })?;
        let result = self
            .ensure_copy(device, op)
            .and_then(|s| copy(self.copies[s].as_mut().expect("ensured"), &src));
        self.copies[from] = Some(src);
        result?;
        self.versions[s] = self.latest;
        self.copies_made += 1;
        Ok(())
    }

    /// A current copy on `device`, copied from the other device only if stale.
    ///
    /// Errors: `Uninitialized` before the first write; `DeviceUnavailable` for a device
    /// this machine lacks; allocation and copy errors.
    pub fn read(&mut self, device: DeviceType) -> Result<&Tensor> {
        self.refresh(device, "MirroredTensor::read")?;
        let s = self.ensure_copy(device, "MirroredTensor::read")?;
        Ok(self.copies[s].as_ref().expect("ensured"))
    }

    /// A current copy on `device` to modify (copied first if stale); every other copy
    /// becomes stale.
    ///
    /// Errors: as [`read`](Self::read); before the first write use
    /// [`write_only`](Self::write_only).
    pub fn write(&mut self, device: DeviceType) -> Result<&mut Tensor> {
        self.refresh(device, "MirroredTensor::write")?;
        let s = self.ensure_copy(device, "MirroredTensor::write")?;
        self.bump(device);
        Ok(self.copies[s].as_mut().expect("ensured"))
    }

    /// `device`'s copy to overwrite whole, without bringing it up to date first; every
    /// other copy becomes stale. Its values are unspecified (stale or zero) until written.
    pub fn write_only(&mut self, device: DeviceType) -> Result<&mut Tensor> {
        let s = self.ensure_copy(device, "MirroredTensor::write_only")?;
        self.bump(device);
        Ok(self.copies[s].as_mut().expect("ensured"))
    }

    fn bump(&mut self, device: DeviceType) {
        self.latest += 1;
        self.versions[slot(device)] = self.latest;
    }

    /// Frees `device`'s copy (to make room on a GPU), first bringing the other device's
    /// copy up to date when this is the only current one.
    ///
    /// Errors: copy errors; `DeviceUnavailable` when the only current copy is on a GPU
    /// that cannot be read.
    pub fn evict(&mut self, device: DeviceType) -> Result<()> {
        let s = slot(device);
        if self.copies[s].is_none() {
            return Ok(());
        }
        if self.is_current(device) && !self.is_current(other(device)) {
            self.refresh(other(device), "MirroredTensor::evict")?;
        }
        self.copies[s] = None;
        self.versions[s] = 0;
        Ok(())
    }

    /// `true` when `device` holds a copy (current or not).
    pub fn has_copy(&self, device: DeviceType) -> bool {
        self.copies[slot(device)].is_some()
    }

    /// Bytes of one copy (it fits `usize`: checked by [`new`](Self::new)).
    pub fn bytes(&self) -> usize {
        self.dims.iter().product::<usize>() * self.dtype.size_of()
    }

    /// Starts making `device`'s copy current on `stream` and returns without waiting
    /// for the copy ([`Tensor::sync_async`]): the next k-point's wavefunctions move to
    /// the GPU while this one's are solved. The copy then counts as current; ctensor's
    /// work on it waits for the copy, and host access that would race with it is a
    /// `BorrowConflict` until it has finished (see [`crate::core::transfer`]). Nothing
    /// happens when the copy is current already.
    ///
    /// Errors: as [`read`](Self::read), and those of [`Tensor::sync_async`].
    pub fn prefetch(&mut self, device: DeviceType, stream: &Stream) -> Result<()> {
        self.update(device, "MirroredTensor::prefetch", |dst, src| {
            dst.sync_async(src, stream)
        })
    }

    /// `Uninitialized` before the first write.
    fn check_written(&self, op: &'static str) -> Result<()> {
        if self.latest == 0 {
            return Err(Error::Uninitialized {
                op,
                what: format!("a mirrored tensor of shape {:?}", self.dims),
                hint: "give it values with write_only(device) (or build it with from_tensor)",
            });
        }
        Ok(())
    }
}

fn other(d: DeviceType) -> DeviceType {
    match d {
        DeviceType::Cpu => DeviceType::Gpu,
        DeviceType::Gpu => DeviceType::Cpu,
    }
}
