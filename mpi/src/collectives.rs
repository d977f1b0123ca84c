//! Collective operations on tensors: broadcast, reductions, gathers along the leading
//! axis, scatter and all-to-all. Every rank calls the same operation in the same order.
//!
//! Each one starts with one small `MPI_Allgather` in which every rank describes its
//! operand ([`Comm::agree`]): dtypes, shapes, roots and reductions are checked against
//! each other there, so a disagreement (or a rank that failed before sending anything)
//! is an error on every rank instead of a hang or a silent mix-up. Then the data moves in
//! one call (or several, past MPI's `int` count).

use std::ffi::{c_int, c_void};

use ctensor_aten::Tensor;
use ctensor_base::{DataType, Error, Result};
use mpi::ffi::{self, MPI_Datatype, MPI_Op};

use crate::comm::{check, count, same_on_all, Comm, Info};
use crate::wire::{arrive, datatype, in_pieces, incoming, outgoing, with_read, with_write};

/// The reduction of [`Comm::reduce`] and [`Comm::allreduce`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    /// The element-wise sum (complex sums included).
    Sum,
    /// The element-wise maximum; NaN wins, as in ctensor's `maximum` and NumPy's
    /// `np.maximum`. Not defined for complex dtypes.
    Max,
    /// The element-wise minimum; NaN wins. Not defined for complex dtypes.
    Min,
}

impl ReduceOp {
    fn code(self) -> i64 {
        match self {
            ReduceOp::Sum => 0,
            ReduceOp::Max => 1,
            ReduceOp::Min => 2,
        }
    }
}

/// An MPI reduction handle; user-defined ones are freed on drop.
struct OpHandle {
    raw: MPI_Op,
    owned: bool,
}

impl Drop for OpHandle {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: created by MPI_Op_create below and not used after this.
            unsafe {
                ffi::MPI_Op_free(&mut self.raw);
            }
        }
    }
}

/// `inout[i] = extreme(in[i], inout[i])` with NaN winning: MPI's own MAX/MIN compare with
/// `>`, so a NaN survives or vanishes depending on the order of the ranks.
///
/// # Safety
/// MPI calls it with `len` elements of `T` behind both pointers (the op is only used
/// with `T`'s datatype).
unsafe extern "C" fn nan_extreme<T: Copy + PartialOrd, const MAX: bool>(
    invec: *mut c_void,
    inoutvec: *mut c_void,
    len: *mut c_int,
    _datatype: *mut MPI_Datatype,
) {
    // SAFETY: as the function's contract says.
    let (a, b) = unsafe {
        let n = (*len).max(0) as usize;
        (
            std::slice::from_raw_parts(invec as *const T, n),
            std::slice::from_raw_parts_mut(inoutvec as *mut T, n),
        )
    };
    for (x, y) in a.iter().zip(b.iter_mut()) {
        // A NaN is the one value not equal to itself.
        #[allow(clippy::eq_op)]
        let (x_nan, y_nan) = (x != x, *y != *y);
        if y_nan {
            continue;
        }
        if x_nan || (MAX && x > y) || (!MAX && x < y) {
            *y = *x;
        }
    }
}

/// The MPI operation for `op` on elements of `dtype` (one the wire carries: never 16-bit
/// floats, which are reduced in f32).
fn mpi_op(name: &'static str, op: ReduceOp, dtype: DataType) -> Result<OpHandle> {
    type UserFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Datatype);
    let user: Option<UserFn> = match (op, dtype) {
        (ReduceOp::Max, DataType::Float) => Some(nan_extreme::<f32, true>),
        (ReduceOp::Max, DataType::Double) => Some(nan_extreme::<f64, true>),
        (ReduceOp::Min, DataType::Float) => Some(nan_extreme::<f32, false>),
        (ReduceOp::Min, DataType::Double) => Some(nan_extreme::<f64, false>),
        _ => None,
    };
    if let Some(f) = user {
        // SAFETY: RSMPI_* handles are valid after init; `raw` receives the new handle.
        let mut raw: MPI_Op = unsafe { ffi::RSMPI_SUM };
        // SAFETY: `f` has MPI_User_function's signature; the op is commutative.
        check(name, "MPI_Op_create", unsafe {
            ffi::MPI_Op_create(Some(f), 1, &mut raw)
        })?;
        return Ok(OpHandle { raw, owned: true });
    }
    // SAFETY: MPI's predefined reductions, valid after init.
    let raw = unsafe {
        match op {
            ReduceOp::Sum => ffi::RSMPI_SUM,
            ReduceOp::Max => ffi::RSMPI_MAX,
            ReduceOp::Min => ffi::RSMPI_MIN,
        }
    };
    Ok(OpHandle { raw, owned: false })
}

/// What a reduction sends: 16-bit floats widened to f32 (summed there and rounded once
/// at the end), everything else as it is. Complex max/min is refused.
fn reduction_operand(name: &'static str, t: &Tensor, op: ReduceOp) -> Result<Tensor> {
    if t.dtype().is_complex() && op != ReduceOp::Sum {
        return Err(Error::UnsupportedDType {
            op: name,
            dtype: t.dtype(),
            supported: "f32, f64, i32, i64, f16, bf16 (complex numbers have no order; Sum takes every dtype)",
        });
    }
    match t.dtype() {
        DataType::Half | DataType::BFloat16 => outgoing(&t.cast(DataType::Float)?),
        _ => outgoing(t),
    }
}

fn describe(t: &Tensor, extra: [i64; 2]) -> Info {
    Info {
        dtype: t.dtype(),
        dims: t.dims().to_vec(),
        extra,
    }
}

/// The operands' shapes seen through a gather: a 0-d tensor counts as one row.
fn rows_of(dims: &[usize]) -> (usize, Vec<usize>) {
    match dims.split_first() {
        None => (1, Vec::new()),
        Some((&n, rest)) => (n, rest.to_vec()),
    }
}

fn check_root(name: &'static str, root: usize, size: usize) -> Result<()> {
    if root >= size {
        return Err(Error::OutOfRange {
            op: name,
            what: "root rank".into(),
            given: root as i64,
            valid: format!("0..{size}"),
        });
    }
    Ok(())
}

/// Checks that every rank gave an operand, with one dtype, and the same `extra` words.
fn common(
    name: &'static str,
    infos: &[Option<Info>],
    extra_names: [&'static str; 2],
) -> Result<Vec<Info>> {
    let infos: Vec<Info> = infos
        .iter()
        .enumerate()
        .map(|(r, i)| {
            i.clone().ok_or_else(|| Error::Internal {
                op: name,
                what: format!("rank {r} sent no operand description"),
            })
        })
        .collect::<Result<_>>()?;
    let dtypes: Vec<DataType> = infos.iter().map(|i| i.dtype).collect();
    same_on_all(name, "data type", &dtypes)?;
    for (k, what) in extra_names.into_iter().enumerate() {
        if !what.is_empty() {
            let v: Vec<i64> = infos.iter().map(|i| i.extra[k]).collect();
            same_on_all(name, what, &v)?;
        }
    }
    Ok(infos)
}

/// Element counts and displacements for a `v` collective, each a C int.
pub(crate) fn counts_and_displs(
    name: &'static str,
    counts: &[usize],
) -> Result<(Vec<c_int>, Vec<c_int>)> {
    let mut displs = Vec::with_capacity(counts.len());
    let mut at = 0usize;
    for &c in counts {
        displs.push(count(name, at)?);
        at = at.checked_add(c).ok_or_else(|| Error::Overflow {
            op: name,
            what: "the total element count overflows usize".into(),
        })?;
    }
    count(name, at)?;
    let counts = counts
        .iter()
        .map(|&c| count(name, c))
        .collect::<Result<Vec<_>>>()?;
    Ok((counts, displs))
}

impl Comm {
    /// The element-wise reduction of every rank's `t`, on every rank (`MPI_Allreduce`), on
    /// the device of the caller's `t`. Every rank gives the same dtype and shape.
    ///
    /// f16 and bf16 are reduced in f32 and rounded once at the end. Errors:
    /// `RanksDisagree` (dtype, shape or op differ between ranks, on every rank),
    /// `UnsupportedDType` for Max/Min of complex numbers.
    pub fn allreduce(&self, t: &Tensor, op: ReduceOp) -> Result<Tensor> {
        self.reduction("allreduce", t, op, None)
            .and_then(|r| r.ok_or_else(|| internal("allreduce", "no result")))
    }

    /// `t` replaced by [`allreduce`](Self::allreduce) of it, in its own memory (any
    /// layout, a view or a map included).
    pub fn allreduce_(&self, t: &mut Tensor, op: ReduceOp) -> Result<()> {
        let r = self.allreduce(t, op)?;
        t.sync(&r)
    }

    /// The reduction of every rank's `t` on the rank `root` (`Some`), `None` elsewhere
    /// (`MPI_Reduce`). Rules and errors as [`allreduce`](Self::allreduce); every rank
    /// gives the same `root`.
    pub fn reduce(&self, t: &Tensor, op: ReduceOp, root: usize) -> Result<Option<Tensor>> {
        self.reduction("reduce", t, op, Some(root))
    }

    fn reduction(
        &self,
        name: &'static str,
        t: &Tensor,
        op: ReduceOp,
        root: Option<usize>,
    ) -> Result<Option<Tensor>> {
        // The result and the MPI operation are made before the ranks agree, so a failure
        // to make either is reported to all of them like any other local failure.
        let mine = root.is_none_or(|r| r == self.rank());
        let staged = root
            .map_or(Ok(()), |r| check_root(name, r, self.size()))
            .and_then(|_| reduction_operand(name, t, op))
            .and_then(|send| {
                let out = match mine {
                    true => Some(incoming(send.dtype(), t.device(), t.dims())?),
                    false => None,
                };
                let handle = mpi_op(name, op, send.dtype())?;
                Ok((send, out, handle))
            });
        let extra = [op.code(), root.map_or(-1, |r| r as i64)];
        self.agree_same(
            name,
            staged.as_ref().map(|_| ()),
            t,
            extra,
            ["reduction", "root"],
        )?;
        let (send, out, handle) = staged?;
        let wire_dtype = send.dtype();
        let elem = wire_dtype.size_of();
        let dt = datatype(wire_dtype);
        with_read(&send, name, |src| {
            let run = |dst: *mut c_void| {
                in_pieces(send.numel(), elem, |off, n| {
                    // SAFETY: `src` (and `dst` where given) hold numel elements of the
                    // wire dtype; the piece [off, off + n) lies inside both. Non-roots of
                    // MPI_Reduce pass no receive buffer, which MPI ignores there.
                    let (s, d) = unsafe {
                        (
                            src.cast::<u8>().add(off).cast::<c_void>(),
                            if dst.is_null() {
                                dst
                            } else {
                                dst.cast::<u8>().add(off).cast()
                            },
                        )
                    };
                    // SAFETY: as above; datatype and op match the elements.
                    let rc = unsafe {
                        match root {
                            None => ffi::MPI_Allreduce(s, d, n, dt, handle.raw, self.as_raw()),
                            Some(r) => {
                                ffi::MPI_Reduce(s, d, n, dt, handle.raw, r as c_int, self.as_raw())
                            }
                        }
                    };
                    check(
                        name,
                        if root.is_none() {
                            "MPI_Allreduce"
                        } else {
                            "MPI_Reduce"
                        },
                        rc,
                    )
                })
            };
            match &out {
                Some(o) => with_write(o, name, run),
                None => run(std::ptr::null_mut()),
            }
        })?;
        match out {
            None => Ok(None),
            Some(o) => {
                let o = arrive(o, t.device())?;
                let o = if o.dtype() != t.dtype() {
                    o.cast(t.dtype())?
                } else {
                    o
                };
                Ok(Some(o))
            }
        }
    }
}

fn internal(op: &'static str, what: &str) -> Error {
    Error::Internal {
        op,
        what: what.into(),
    }
}

mod movement;

#[cfg(test)]
mod tests;
