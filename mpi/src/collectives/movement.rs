//! The collectives that move data: broadcast, gather, scatter, all-to-all, and the
//! agreement and staging they share.

use std::ffi::{c_int, c_void};

use ctensor_aten::Tensor;
use ctensor_base::{DataType, DeviceType, Error, Result};
use mpi::ffi::{self};

use crate::comm::{check, count, same_on_all, Comm, Info};
use crate::wire::{arrive, datatype, in_pieces, incoming, outgoing, with_read, with_write};

use super::*;

impl Comm {
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
    pub(super) fn agree_same(
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
