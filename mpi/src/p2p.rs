//! Point-to-point messages: a tensor from one rank to another.
//!
//! A message is a handshake and the data: the sender describes its tensor (dtype and
//! shape), the receiver answers whether it takes it, and only then do the elements move.
//! So a receiver that expects another dtype or shape makes both sides return an error,
//! instead of the sender blocking on data nobody reads. The round trip costs one message
//! latency (microseconds) on top of the transfer.

use std::ffi::c_int;

use ctensor_aten::Tensor;
use ctensor_base::{DeviceType, Error, Result};
use mpi::ffi;

use crate::comm::{check, dtype_code, dtype_of, Comm, MAX_DIMS};
use crate::wire::{arrive, datatype, in_pieces, incoming, outgoing, with_read, with_write};

/// The largest tag every MPI library accepts (the standard's lower bound for
/// `MPI_TAG_UB`).
pub const MAX_TAG: u32 = 32767;

const WORDS: usize = 2 + MAX_DIMS;
/// Header status words.
const SENDING: i64 = 0;
const SENDER_FAILED: i64 = -1;
/// Reply words.
const ACCEPTED: i64 = 0;
const MISMATCH: i64 = 1;
const NO_ROOM: i64 = 2;

impl Comm {
    fn check_peer(&self, op: &'static str, peer: usize, tag: u32) -> Result<()> {
        if peer >= self.size() {
            return Err(Error::OutOfRange {
                op,
                what: "peer rank".into(),
                given: peer as i64,
                valid: format!("0..{}", self.size()),
            });
        }
        if tag > MAX_TAG {
            return Err(Error::OutOfRange {
                op,
                what: "tag".into(),
                given: i64::from(tag),
                valid: format!("0..={MAX_TAG}"),
            });
        }
        Ok(())
    }

    fn send_words(&self, op: &'static str, words: &[i64], dest: usize, tag: u32) -> Result<()> {
        // SAFETY: `words` holds words.len() i64 (a few dozen).
        check(op, "MPI_Send", unsafe {
            ffi::MPI_Send(
                words.as_ptr().cast(),
                words.len() as c_int,
                ffi::RSMPI_INT64_T,
                dest as c_int,
                tag as c_int,
                self.as_raw(),
            )
        })
    }

    fn recv_words(&self, op: &'static str, words: &mut [i64], src: usize, tag: u32) -> Result<()> {
        // SAFETY: `words` has room for words.len() i64; the status is not wanted.
        check(op, "MPI_Recv", unsafe {
            ffi::MPI_Recv(
                words.as_mut_ptr().cast(),
                words.len() as c_int,
                ffi::RSMPI_INT64_T,
                src as c_int,
                tag as c_int,
                self.as_raw(),
                ffi::RSMPI_STATUS_IGNORE,
            )
        })
    }

    /// Sends `t` (any dtype, layout and device) to rank `dest` with `tag`; the receiver
    /// calls [`recv`](Self::recv) or [`recv_into`](Self::recv_into) with this rank and tag.
    /// Blocks until the receiver has taken the header (and, for large tensors, the data),
    /// as `MPI_Ssend` does: two ranks that send to each other before either receives
    /// would wait forever, so that case is an error on both (see below). A longer cycle
    /// (each of three ranks sending to the next before receiving) is not detected and
    /// waits forever, as it would with `MPI_Ssend`: let one rank of a ring receive first.
    ///
    /// A message to this rank itself (`dest == rank()`, as a ring exchange on one rank
    /// makes) is a copy kept until this rank receives it with the same tag, in order.
    ///
    /// Errors: `OutOfRange` for a rank outside the communicator or a tag above
    /// [`MAX_TAG`]; `RanksDisagree` when the receiver expected another dtype or shape
    /// (the receiver returns it too); `Mpi` when `dest` is sending to this rank with the
    /// same tag at the same time (`dest` gets the same error).
    pub fn send(&self, t: &Tensor, dest: usize, tag: u32) -> Result<()> {
        const OP: &str = "send";
        self.check_peer(OP, dest, tag)?;
        if dest == self.rank() {
            let copy = t.try_clone().map_err(|e| e.in_op(OP))?;
            self.to_self
                .borrow_mut()
                .entry(tag)
                .or_default()
                .push_back(copy);
            return Ok(());
        }
        // A tensor this rank cannot send still gets a header, saying so, so the receiver
        // does not wait for data that never comes.
        let staged = if t.ndim() > MAX_DIMS {
            Err(Error::Unsupported {
                op: OP,
                what: format!(
                    "a tensor of {} dimensions over MPI (at most {MAX_DIMS})",
                    t.ndim()
                ),
            })
        } else {
            outgoing(t)
        };
        let mut header = [0i64; WORDS];
        header[0] = if staged.is_ok() {
            SENDING
        } else {
            SENDER_FAILED
        };
        header[1] = dtype_code(t.dtype()) | ((t.ndim().min(MAX_DIMS) as i64) << 8);
        for (w, &d) in header[2..].iter_mut().zip(t.dims()) {
            *w = d as i64;
        }
        self.send_words(OP, &header, dest, tag)?;
        let send = staged?;
        match self.recv_reply(OP, dest, tag)? {
            ACCEPTED => {}
            MISMATCH => {
                return Err(Error::RanksDisagree {
                    op: OP,
                    what: "message (the receiver expected another tensor)",
                    first: format!("{} {:?} sent by rank {}", t.dtype(), t.dims(), self.rank()),
                    rank: dest,
                    got: "a refusal: see the receiver's error for the tensor it expected".into(),
                })
            }
            _ => {
                return Err(Error::Mpi {
                    op: OP,
                    detail: format!("rank {dest} could not make room for the message (its own call returned the reason)"),
                })
            }
        }
        let dt = datatype(t.dtype());
        with_read(&send, OP, |p| {
            in_pieces(send.numel(), t.dtype().size_of(), |off, n| {
                // SAFETY: `p` holds numel elements of the dtype; the piece lies inside.
                check(OP, "MPI_Send", unsafe {
                    ffi::MPI_Send(
                        p.cast::<u8>().add(off).cast(),
                        n,
                        dt,
                        dest as c_int,
                        tag as c_int,
                        self.as_raw(),
                    )
                })
            })
        })
    }

    /// The receiver's one-word answer to a header: the next message from `dest` with
    /// `tag`, which is either that answer or, when `dest` is sending to this rank with
    /// the same tag at the same time, its header. Then both ranks wait for each other's
    /// answer: each takes the other's header off the queue and returns an error.
    fn recv_reply(&self, op: &'static str, dest: usize, tag: u32) -> Result<i64> {
        // SAFETY: MPI_Status is plain data that MPI_Probe fills in.
        let mut status: ffi::MPI_Status = unsafe { std::mem::zeroed() };
        let mut words: c_int = 0;
        // SAFETY: a valid communicator, rank and tag; `status` and `words` are written.
        unsafe {
            check(
                op,
                "MPI_Probe",
                ffi::MPI_Probe(dest as c_int, tag as c_int, self.as_raw(), &mut status),
            )?;
            check(
                op,
                "MPI_Get_count",
                ffi::MPI_Get_count(&status, ffi::RSMPI_INT64_T, &mut words),
            )?;
        }
        if words as usize == WORDS {
            let mut header = [0i64; WORDS];
            self.recv_words(op, &mut header, dest, tag)?;
            return Err(Error::Mpi {
                op,
                detail: format!(
                    "rank {dest} is sending to this rank with tag {tag} while this rank sends \
                     to it, and each waits for the other to receive: let one side receive \
                     first, or use different tags (both ranks return this error)"
                ),
            });
        }
        let mut reply = [0i64; 1];
        self.recv_words(op, &mut reply, dest, tag)?;
        Ok(reply[0])
    }

    /// This rank's oldest message to itself with `tag` (see [`send`](Self::send)).
    fn take_own_message(&self, op: &'static str, tag: u32) -> Result<Tensor> {
        self.check_peer(op, self.rank(), tag)?;
        self.to_self
            .borrow_mut()
            .get_mut(&tag)
            .and_then(|q| q.pop_front())
            .ok_or_else(|| Error::InvalidArgument {
                op,
                expected: format!(
                    "a message this rank sent to itself with tag {tag} before receiving it \
                     (a receive from oneself would otherwise wait forever)"
                ),
                given: "none waiting".into(),
            })
    }

    /// Receives the tensor that rank `src` sends with `tag`, as a new dense tensor on
    /// `device` (dtype and shape from the sender). From this rank itself it is the
    /// oldest message sent to itself with `tag`; none waiting is `InvalidArgument`.
    pub fn recv(&self, src: usize, tag: u32, device: DeviceType) -> Result<Tensor> {
        if src == self.rank() {
            let t = self.take_own_message("recv", tag)?;
            return if t.device() == device {
                Ok(t)
            } else {
                t.to_device(device)
            };
        }
        let buf = self.recv_header("recv", src, tag, None, device)?;
        self.recv_data("recv", &buf, src, tag)?;
        arrive(buf, device)
    }

    /// Receives the tensor that rank `src` sends with `tag` into `t` (any layout, a view
    /// or a map included), which must have the sender's dtype and shape. Errors:
    /// `RanksDisagree` otherwise (the sender returns it too). From this rank itself as
    /// [`recv`](Self::recv); a message of another dtype or shape is `RanksDisagree` and
    /// stays queued.
    pub fn recv_into(&self, t: &mut Tensor, src: usize, tag: u32) -> Result<()> {
        if src == self.rank() {
            let m = self.take_own_message("recv_into", tag)?;
            if m.dtype() != t.dtype() || m.dims() != t.dims() {
                let err = Error::RanksDisagree {
                    op: "recv_into",
                    what: "message (the receiver expected another tensor)",
                    first: format!("{} {:?} sent by rank {src} (itself)", m.dtype(), m.dims()),
                    rank: src,
                    got: format!("{} {:?} expected", t.dtype(), t.dims()),
                };
                self.to_self
                    .borrow_mut()
                    .entry(tag)
                    .or_default()
                    .push_front(m);
                return Err(err);
            }
            return t.sync(&m);
        }
        let buf = self.recv_header("recv_into", src, tag, Some(t), t.device())?;
        self.recv_data("recv_into", &buf, src, tag)?;
        t.sync(&buf)
    }

    /// Takes the sender's header and answers it: accepted (with a buffer for the data on
    /// the wire device for `device`) when `expect` is `None` or matches and the buffer
    /// could be made; refused otherwise, so the sender does not wait on the data.
    fn recv_header(
        &self,
        op: &'static str,
        src: usize,
        tag: u32,
        expect: Option<&Tensor>,
        device: DeviceType,
    ) -> Result<Tensor> {
        self.check_peer(op, src, tag)?;
        let mut h = [0i64; WORDS];
        self.recv_words(op, &mut h, src, tag)?;
        if h[0] == SENDER_FAILED {
            return Err(Error::Mpi {
                op,
                detail: format!("rank {src} could not send (its own call returned the reason)"),
            });
        }
        let dtype = dtype_of(h[1] & 0xff);
        let ndim = ((h[1] >> 8).clamp(0, MAX_DIMS as i64)) as usize;
        let dims: Vec<usize> = h[2..2 + ndim].iter().map(|&d| d as usize).collect();
        let verdict = match expect {
            Some(t) if t.dtype() != dtype || t.dims() != &dims[..] => Err(Error::RanksDisagree {
                op,
                what: "message (the receiver expected another tensor)",
                first: format!("{dtype} {dims:?} sent by rank {src}"),
                rank: self.rank(),
                got: format!("{} {:?} expected", t.dtype(), t.dims()),
            }),
            _ => Ok(()),
        };
        let mismatch = verdict.is_err();
        let buf = verdict.and_then(|_| incoming(dtype, device, &dims));
        let reply = match (&buf, mismatch) {
            (Ok(_), _) => ACCEPTED,
            (Err(_), true) => MISMATCH,
            (Err(_), false) => NO_ROOM,
        };
        self.send_words(op, &[reply], src, tag)?;
        buf
    }

    fn recv_data(&self, op: &'static str, buf: &Tensor, src: usize, tag: u32) -> Result<()> {
        let dt = datatype(buf.dtype());
        with_write(buf, op, |p| {
            in_pieces(buf.numel(), buf.dtype().size_of(), |off, n| {
                // SAFETY: `p` holds numel elements of the dtype; the piece lies inside.
                check(op, "MPI_Recv", unsafe {
                    ffi::MPI_Recv(
                        p.cast::<u8>().add(off).cast(),
                        n,
                        dt,
                        src as c_int,
                        tag as c_int,
                        self.as_raw(),
                        ffi::RSMPI_STATUS_IGNORE,
                    )
                })
            })
        })
    }
}
