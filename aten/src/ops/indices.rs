//! [`Indices`]: positions along one axis, checked once and kept on a device, for the
//! gathers and scatters a loop repeats with the same positions — a plane-wave code puts
//! the coefficients of its G-sphere on the FFT box and takes them back in every
//! Hamiltonian apply. [`Tensor::index_select`] and [`Tensor::index_copy_`] check their
//! index tensor on every call (on the host: from a GPU that is a copy to the host and one
//! back); [`Tensor::index_select_with`] and [`Tensor::index_copy_with`] take `Indices`
//! and move no index at all.

use ctensor_base::{DataType, DeviceType, Error, Result};
use ctensor_kernels::select::{check_distinct, check_indices};

use crate::core::tensor::Tensor;

/// Positions `0..bound` along an axis of length `bound`, checked when made (every one in
/// range; whether they are distinct is recorded) and held on one device in memory of
/// their own, which nothing else can write: the check stays true for the value's life.
///
/// ```
/// use ctensor_aten::{DataType, DeviceType, Indices, Tensor};
/// let sphere = Indices::from_slice(&[4, 0, 2], 5, DeviceType::Cpu)?; // once
/// let x = Tensor::from_slice(&[10.0f64, 11.0, 12.0, 13.0, 14.0], &[5])?;
/// assert_eq!(x.index_select_with(0, &sphere)?.to_vec::<f64>()?, [14.0, 10.0, 12.0]);
/// let mut grid = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[5])?;
/// grid.index_copy_with(0, &sphere, &Tensor::from_slice(&[1.0f64, 2.0, 3.0], &[3])?)?;
/// assert_eq!(grid.to_vec::<f64>()?, [2.0, 0.0, 3.0, 0.0, 1.0]);
/// # Ok::<(), ctensor_aten::Error>(())
/// ```
#[derive(Debug)]
pub struct Indices {
    /// A dense i64 vector of the positions, in a buffer only this value holds.
    pub(crate) idx: Tensor,
    bound: usize,
    /// Known to be distinct (`false` also when not looked at: a scatter checks again).
    distinct: bool,
}

impl Indices {
    /// The positions in `indices` (an `i32` or `i64` tensor of rank 0 or 1, on any
    /// device) along an axis of length `bound`, held on `device`. Errors:
    /// `InvalidArgument` for another dtype or rank, `OutOfRange` naming the first
    /// position outside `0..bound`.
    pub fn new(indices: &Tensor, bound: usize, device: DeviceType) -> Result<Indices> {
        Indices::from_tensor("Indices::new", indices, bound, device, true)
    }

    /// [`new`](Self::new) for `op`, finding out whether the positions are distinct only
    /// when `find_distinct` (see [`from_vec`](Self::from_vec)).
    pub(crate) fn from_tensor(
        op: &'static str,
        indices: &Tensor,
        bound: usize,
        device: DeviceType,
        find_distinct: bool,
    ) -> Result<Indices> {
        if !indices.dtype().is_integer() || indices.ndim() > 1 {
            return Err(Error::InvalidArgument {
                op,
                expected: "indices as an i32 or i64 tensor of rank 0 or 1".into(),
                given: format!("a {} tensor of shape {:?}", indices.dtype(), indices.dims()),
            });
        }
        let idx = indices.cast(DataType::Int64)?.to_vec::<i64>()?;
        Indices::from_vec(idx, bound, device, find_distinct).map_err(|e| e.in_op(op))
    }

    /// [`new`](Self::new) from host positions.
    pub fn from_slice(idx: &[usize], bound: usize, device: DeviceType) -> Result<Indices> {
        let idx = idx
            .iter()
            .map(|&i| i64::try_from(i).unwrap_or(i64::MAX))
            .collect();
        Indices::from_vec(idx, bound, device, true)
    }

    /// The checked positions, moved to `device` once; whether they are distinct is
    /// found out when `find_distinct` (a sort of a copy), else left unknown (`false`).
    pub(crate) fn from_vec(
        idx: Vec<i64>,
        bound: usize,
        device: DeviceType,
        find_distinct: bool,
    ) -> Result<Indices> {
        check_indices(&idx, bound)?;
        let distinct = find_distinct && check_distinct(&idx).is_ok();
        let n = idx.len();
        let host = Tensor::from_vec(idx, &[n])?;
        let idx = if device == DeviceType::Cpu {
            host
        } else {
            host.to_device(device)?
        };
        Ok(Indices {
            idx,
            bound,
            distinct,
        })
    }

    /// The number of positions.
    pub fn len(&self) -> usize {
        self.idx.numel()
    }

    /// `true` when there are no positions.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The length of the axis the positions were checked against.
    pub fn bound(&self) -> usize {
        self.bound
    }

    /// `true` when no position repeats (what a scatter needs).
    pub fn is_distinct(&self) -> bool {
        self.distinct
    }

    /// The device the positions are held on.
    pub fn device(&self) -> DeviceType {
        self.idx.device()
    }

    /// The positions as a new `i64` tensor (a copy: the held ones stay unwritable).
    pub fn to_tensor(&self) -> Result<Tensor> {
        self.idx.try_clone()
    }

    /// Checks that these positions fit the axis `dim` of `t` (of length `bound`, on the
    /// same device), and for a scatter (`distinct`) that none repeats.
    pub(crate) fn check_for(
        &self,
        op: &'static str,
        t: &Tensor,
        dim: usize,
        distinct: bool,
    ) -> Result<()> {
        t.check_dim(op, dim)?;
        if t.dims()[dim] != self.bound {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!(
                    "dimension {dim} of length {} (the length the indices were checked for)",
                    self.bound
                ),
                got: vec![t.dims().to_vec()],
            });
        }
        if t.device() != self.device() {
            return Err(Error::DeviceMismatch {
                op,
                expected: t.device(),
                got: self.device(),
            });
        }
        if distinct && !self.distinct {
            let idx = self.idx.to_vec::<i64>()?;
            return check_distinct(&idx).map_err(|e| e.in_op(op));
        }
        Ok(())
    }
}
