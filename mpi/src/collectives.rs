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
use ctensor_base::{DataType, DeviceType, Error, Result};
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

    /// The root's tensor on every rank (`MPI_Bcast`): the root passes `Some(t)` and gets
    /// it back (shared, no copy); the others pass `None` and get a new tensor of the same
    /// dtype and shape on `device`.
    ///
    /// Errors (on every rank): `OutOfRange` for a root outside the communicator,
    /// `RanksDisagree` when the ranks name different roots, `InvalidArgument` when the
    /// root gives no tensor or another rank gives one.
    pub fn bcast(&self, t: Option<&Tensor>, root: usize, device: DeviceType) -> Result<Tensor> {
        const OP: &str = "bcast";
        let is_root = self.rank() == root;
        let staged = self.rooted_operand(OP, t, root, outgoing);
        let info = self.agree_rooted(OP, &staged, t, root)?;
        let staged = staged?;
        let buf = self.all_ok(match staged {
            Some(s) => Ok(s),
            None => incoming(info.dtype, device, &info.dims),
        })?;
        self.bcast_buffer(OP, &buf, root)?;
        if is_root {
            // The root's own tensor, not the staging copy.
            Ok(t.map(|t| t.share()).unwrap_or(buf))
        } else {
            arrive(buf, device)
        }
    }

    /// The root's `t` written into every rank's `t` (in place, any layout): every rank
    /// gives a tensor of the same dtype and shape. Errors: `RanksDisagree` (on every rank)
    /// when they differ, as [`bcast`](Self::bcast) otherwise.
    pub fn bcast_into(&self, t: &mut Tensor, root: usize) -> Result<()> {
        const OP: &str = "bcast_into";
        let staged = check_root(OP, root, self.size()).and_then(|_| {
            if self.rank() == root {
                outgoing(t)
            } else {
                incoming(t.dtype(), t.device(), t.dims())
            }
        });
        self.agree_same(
            OP,
            staged.as_ref().map(|_| ()),
            t,
            [root as i64, 0],
            ["root", ""],
        )?;
        let buf = staged?;
        self.bcast_buffer(OP, &buf, root)?;
        if self.rank() != root {
            t.sync(&buf)?;
        }
        Ok(())
    }

    /// `MPI_Bcast` of `buf` (dense, on its wire device, the same dtype and shape on every
    /// rank) from `root`, in pieces past MPI's int count.
    fn bcast_buffer(&self, op: &'static str, buf: &Tensor, root: usize) -> Result<()> {
        let (elem, dt, numel) = (buf.dtype().size_of(), datatype(buf.dtype()), buf.numel());
        let transfer = |p: *mut c_void| {
            in_pieces(numel, elem, |off, n| {
                // SAFETY: `p` holds numel elements of the agreed dtype on every rank; the
                // piece lies inside.
                check(op, "MPI_Bcast", unsafe {
                    ffi::MPI_Bcast(
                        p.cast::<u8>().add(off).cast(),
                        n,
                        dt,
                        root as c_int,
                        self.as_raw(),
                    )
                })
            })
        };
        if self.rank() == root {
            with_read(buf, op, |p| transfer(p.cast_mut()))
        } else {
            with_write(buf, op, transfer)
        }
    }

    /// Every rank's `t` concatenated along the leading axis in rank order, on `root`
    /// (`Some`; `None` elsewhere): `MPI_Gatherv`. The ranks may hold different numbers of
    /// rows (a 0-d tensor counts as one row); the trailing dimensions and the dtype must
    /// agree. The result lies on the root's device.
    pub fn gather(&self, t: &Tensor, root: usize) -> Result<Option<Tensor>> {
        self.gathering("gather", t, Some(root))
    }

    /// [`gather`](Self::gather) with the result on every rank (`MPI_Allgatherv`), each on
    /// its own tensor's device.
    pub fn allgather(&self, t: &Tensor) -> Result<Tensor> {
        self.gathering("allgather", t, None)?
            .ok_or_else(|| internal("allgather", "no result"))
    }

    fn gathering(
        &self,
        name: &'static str,
        t: &Tensor,
        root: Option<usize>,
    ) -> Result<Option<Tensor>> {
        let staged = root
            .map_or(Ok(()), |r| check_root(name, r, self.size()))
            .and_then(|_| outgoing(t));
        let local = staged
            .as_ref()
            .map(|_| Some(describe(t, [root.map_or(-1, |r| r as i64), 0])));
        let infos = self.agree(name, local.map_err(Clone::clone))?;
        let infos = common(name, &infos, ["root", ""])?;
        let shapes: Vec<(usize, Vec<usize>)> = infos.iter().map(|i| rows_of(&i.dims)).collect();
        let rests: Vec<&[usize]> = shapes.iter().map(|s| &s.1[..]).collect();
        same_on_all(
            name,
            "trailing dimensions (all but the leading axis)",
            &rests,
        )?;
        let row: usize = rests[0].iter().product();
        let counts: Vec<usize> = shapes
            .iter()
            .map(|s| s.0.checked_mul(row))
            .collect::<Option<_>>()
            .ok_or_else(|| Error::Overflow {
                op: name,
                what: "rows × row size overflows usize".into(),
            })?;
        let send = staged?;
        let total_rows: usize = shapes.iter().map(|s| s.0).sum();
        let mut dims = vec![total_rows];
        dims.extend_from_slice(rests[0]);
        let mine = root.is_none_or(|r| r == self.rank());
        let out = self.all_ok(match mine {
            true => incoming(t.dtype(), t.device(), &dims).map(Some),
            false => Ok(None),
        })?;
        self.gatherv(name, &send, &counts, out.as_ref(), root)?;
        out.map(|o| arrive(o, t.device())).transpose()
    }

    /// The root's `t` split along its leading axis into `size()` consecutive blocks, block
    /// `r` to rank `r` (`MPI_Scatterv`), by the rule of [`block_range`](crate::block_range):
    /// `N` rows give the first `N % size` ranks one row more than the rest. The root
    /// passes `Some(t)`, the others `None`; results lie on the root's device there and on
    /// `device` elsewhere. Errors as [`bcast`](Self::bcast), and `InvalidArgument` for a
    /// 0-d tensor.
    pub fn scatter(&self, t: Option<&Tensor>, root: usize, device: DeviceType) -> Result<Tensor> {
        const OP: &str = "scatter";
        let staged = self.rooted_operand(OP, t, root, |t| match t.ndim() {
            0 => Err(Error::InvalidArgument {
                op: OP,
                expected: "a tensor with a leading axis to split".into(),
                given: "a 0-d tensor".into(),
            }),
            _ => outgoing(t),
        });
        let info = self.agree_rooted(OP, &staged, t, root)?;
        let (n, rest) = rows_of(&info.dims);
        let row: usize = rest.iter().product();
        let rows = crate::pools::block_counts(n, self.size());
        let counts: Vec<usize> = rows.iter().map(|&r| r * row).collect();
        let staged = staged?;
        let mut dims = vec![rows[self.rank()]];
        dims.extend_from_slice(&rest);
        let dest_device = t.map_or(device, |t| t.device());
        let out = self.all_ok(incoming(info.dtype, dest_device, &dims))?;
        self.scatterv(OP, staged.as_ref(), &counts, &out, root)?;
        arrive(out, dest_device)
    }

    /// The agreement of an operation in which every rank brings a tensor of one dtype and
    /// shape (`local`: whether this rank could take part), and the same `extra` words
    /// (named, for the error, by `extra_names`; an empty name is not compared).
    fn agree_same(
        &self,
        op: &'static str,
        local: std::result::Result<(), &Error>,
        t: &Tensor,
        extra: [i64; 2],
        extra_names: [&'static str; 2],
    ) -> Result<()> {
        let local = local
            .map(|_| Some(describe(t, extra)))
            .map_err(Clone::clone);
        let infos = common(op, &self.agree(op, local)?, extra_names)?;
        let dims: Vec<&[usize]> = infos.iter().map(|i| &i.dims[..]).collect();
        same_on_all(op, "shape", &dims)
    }

    /// The agreement of a rooted operation whose non-roots bring no operand: every rank
    /// sends its root (the root also its operand's description), and every rank gets the
    /// root's description. Errors: a rank that failed, or ranks naming different roots.
    pub(crate) fn agree_rooted(
        &self,
        op: &'static str,
        staged: &Result<Option<Tensor>>,
        t: Option<&Tensor>,
        root: usize,
    ) -> Result<Info> {
        let local = staged.as_ref().map_err(Clone::clone).map(|s| match (s, t) {
            (Some(_), Some(t)) => Some(describe(t, [root as i64, 0])),
            _ => Some(Info {
                dtype: DataType::Int,
                dims: vec![],
                extra: [root as i64, -1],
            }),
        });
        let infos = self.agree(op, local)?;
        let roots: Vec<i64> = infos
            .iter()
            .map(|i| i.as_ref().map_or(-1, |i| i.extra[0]))
            .collect();
        same_on_all(op, "root", &roots)?;
        infos[root]
            .clone()
            .ok_or_else(|| internal(op, "the root sent no description"))
    }

    /// The root's operand made ready by `stage` (`Some` on the root only). Errors: the
    /// root gives no tensor, another rank gives one, the root is out of range, or
    /// `stage` fails.
    pub(crate) fn rooted_operand(
        &self,
        op: &'static str,
        t: Option<&Tensor>,
        root: usize,
        stage: impl FnOnce(&Tensor) -> Result<Tensor>,
    ) -> Result<Option<Tensor>> {
        check_root(op, root, self.size())?;
        match (t, self.rank() == root) {
            (Some(t), true) => stage(t).map(Some),
            (None, false) => Ok(None),
            (given, _) => Err(Error::InvalidArgument {
                op,
                expected: "a tensor on the root rank and None on every other rank".into(),
                given: format!(
                    "{} on rank {} (root {root})",
                    if given.is_some() { "a tensor" } else { "None" },
                    self.rank()
                ),
            }),
        }
    }

    /// `MPI_Gatherv` to `Some(root)` (or `MPI_Allgatherv` for `None`): this rank's
    /// `counts[rank]` leading elements of `send` into `recv` on the receivers, rank `r`'s
    /// after those of the ranks before it. Every rank passes the same `counts`.
    pub(crate) fn gatherv(
        &self,
        op: &'static str,
        send: &Tensor,
        counts: &[usize],
        recv: Option<&Tensor>,
        root: Option<usize>,
    ) -> Result<()> {
        let (cnts, displs) = counts_and_displs(op, counts)?;
        let dt = datatype(send.dtype());
        let me = cnts[self.rank()];
        with_read(send, op, |src| {
            let run = |dst: *mut c_void| {
                // SAFETY: `src` holds at least `me` elements; `dst` (on receivers) the
                // sum of `cnts` at offsets `displs`, all C ints; one dtype everywhere.
                let rc = unsafe {
                    match root {
                        None => ffi::MPI_Allgatherv(
                            src,
                            me,
                            dt,
                            dst,
                            cnts.as_ptr(),
                            displs.as_ptr(),
                            dt,
                            self.as_raw(),
                        ),
                        Some(r) => ffi::MPI_Gatherv(
                            src,
                            me,
                            dt,
                            dst,
                            cnts.as_ptr(),
                            displs.as_ptr(),
                            dt,
                            r as c_int,
                            self.as_raw(),
                        ),
                    }
                };
                check(
                    op,
                    if root.is_none() {
                        "MPI_Allgatherv"
                    } else {
                        "MPI_Gatherv"
                    },
                    rc,
                )
            };
            match recv {
                Some(r) => with_write(r, op, run),
                None => run(std::ptr::null_mut()),
            }
        })
    }

    /// `MPI_Scatterv` from `root`: rank `r` receives `counts[r]` elements of the root's
    /// `send` (after those of the ranks before it) into the leading elements of `recv`.
    pub(crate) fn scatterv(
        &self,
        op: &'static str,
        send: Option<&Tensor>,
        counts: &[usize],
        recv: &Tensor,
        root: usize,
    ) -> Result<()> {
        let (cnts, displs) = counts_and_displs(op, counts)?;
        let dt = datatype(recv.dtype());
        let me = cnts[self.rank()];
        let run = |src: *const c_void| {
            with_write(recv, op, |dst| {
                // SAFETY: on the root `src` holds the sum of `cnts` elements at `displs`;
                // `dst` holds at least `me` elements. Non-roots pass no send buffer.
                check(op, "MPI_Scatterv", unsafe {
                    ffi::MPI_Scatterv(
                        src,
                        cnts.as_ptr(),
                        displs.as_ptr(),
                        dt,
                        dst,
                        me,
                        dt,
                        root as c_int,
                        self.as_raw(),
                    )
                })
            })
        };
        match send {
            Some(s) => with_read(s, op, run),
            None => run(std::ptr::null()),
        }
    }

    /// Block `r` of every rank's `t` to rank `r` (`MPI_Alltoall`): `t`'s leading axis is
    /// `size() × m` rows, block `r` being rows `r·m..(r+1)·m`; the result has the same
    /// shape, its block `s` from rank `s`. Every rank gives the same dtype and shape.
    /// Errors (on every rank): `RanksDisagree`; `ShapeMismatch` when the leading axis is
    /// not a multiple of `size()`.
    pub fn alltoall(&self, t: &Tensor) -> Result<Tensor> {
        const OP: &str = "alltoall";
        let staged = outgoing(t).and_then(|s| Ok((s, incoming(t.dtype(), t.device(), t.dims())?)));
        self.agree_same(OP, staged.as_ref().map(|_| ()), t, [0, 0], ["", ""])?;
        let p = self.size();
        let (n, rest) = rows_of(t.dims());
        if t.ndim() == 0 || n % p != 0 {
            return Err(Error::ShapeMismatch {
                op: OP,
                expected: format!("a leading axis that is a multiple of the {p} ranks"),
                got: vec![t.dims().to_vec()],
            });
        }
        let block = count(OP, (n / p) * rest.iter().product::<usize>())?;
        let (send, out) = staged?;
        let dt = datatype(t.dtype());
        with_read(&send, OP, |src| {
            with_write(&out, OP, |dst| {
                // SAFETY: both hold p blocks of `block` elements of the agreed dtype.
                check(OP, "MPI_Alltoall", unsafe {
                    ffi::MPI_Alltoall(src, block, dt, dst, block, dt, self.as_raw())
                })
            })
        })?;
        arrive(out, t.device())
    }
}

fn internal(op: &'static str, what: &str) -> Error {
    Error::Internal {
        op,
        what: what.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_displacements_refuse_what_a_c_int_cannot_hold() {
        let (c, d) = counts_and_displs("test", &[3, 0, 5]).unwrap();
        assert_eq!((c, d), (vec![3, 0, 5], vec![0, 3, 3]));
        let max = c_int::MAX as usize;
        // One count too large, and a total too large with every count fitting.
        for counts in [vec![max + 1], vec![max, 1]] {
            match counts_and_displs("test", &counts) {
                Err(Error::Overflow { op: "test", .. }) => {}
                other => panic!("{counts:?}: got {other:?}"),
            }
        }
    }
}
