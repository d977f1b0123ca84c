//! MPI's start and end for a process, and [`Comm`]: ctensor's own communicator, on which
//! every tensor operation of this crate runs.
//!
//! A `Comm` is a duplicate (`MPI_Comm_dup`) of the communicator it is made from, so
//! ctensor's messages never match the caller's own receives, and it returns errors
//! (`MPI_ERRORS_RETURN`) instead of aborting the job.

use std::ffi::{c_char, c_int};

use ctensor_base::{DataType, Error, Result};
use mpi::ffi::{self, MPI_Comm};

/// MPI, started for this process by [`initialize`]. Dropping it finalizes MPI: drop every
/// [`Comm`] (and [`Grid`](crate::Grid)) first, as the order of declarations in `main`
/// does by itself.
///
/// Dropped while the thread panics (a panic unwinding out of `main`), it aborts the job
/// (`MPI_Abort` on the world) instead: finalizing would wait for the other ranks, which
/// may be waiting in a collective for this one, and the job would hang. mpirun then
/// ends every rank and reports the failure.
pub struct Universe {
    _inner: mpi::environment::Universe,
}

impl Drop for Universe {
    fn drop(&mut self) {
        if std::thread::panicking() && !mpi::environment::is_finalized() {
            eprintln!("ctensor-mpi: a panic unwound to MPI's end on this rank; aborting the job");
            // SAFETY: MPI is initialized and not finalized; MPI_Abort ends the job.
            unsafe {
                ffi::MPI_Abort(ffi::RSMPI_COMM_WORLD, 134);
            }
        }
    }
}

impl std::fmt::Debug for Universe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Universe")
    }
}

/// Starts MPI (`MPI_Init_thread` with `MPI_THREAD_FUNNELED`: ctensor threads its own
/// kernels, but calls MPI only from the thread that holds the [`Comm`]).
///
/// Errors: `Error::Mpi` when MPI is already initialized in this process (by an earlier
/// call or another library; use [`Comm::from_communicator`] then).
pub fn initialize() -> Result<Universe> {
    match mpi::initialize_with_threading(mpi::Threading::Funneled) {
        Some((inner, _)) => Ok(Universe { _inner: inner }),
        None => Err(Error::Mpi {
            op: "initialize",
            detail: "MPI is already initialized in this process: make a Comm from the \
                     existing communicator with Comm::from_communicator"
                .into(),
        }),
    }
}

impl Universe {
    /// All processes of the job: a duplicate of `MPI_COMM_WORLD`.
    pub fn world(&self) -> Result<Comm> {
        // SAFETY: RSMPI_COMM_WORLD is MPI's predefined world handle, valid after init.
        Comm::dup_raw(unsafe { ffi::RSMPI_COMM_WORLD }, "Universe::world")
    }
}

/// A communicator for tensors: point-to-point messages, collectives and process grids
/// (see the crate docs). Every rank of it must call a collective operation, in the same
/// order; operands are checked against each other first, and a disagreement is the same
/// error on every rank.
///
/// A `Comm` is neither `Send` nor `Sync`: MPI is initialized for calls from one thread.
///
/// # Errors on one rank
/// A collective waits for every rank. A rank that returns an error, or panics, while the
/// others go on to the next collective leaves them waiting forever. So a step that can
/// fail on one rank only is followed by [`all_ok`](Self::all_ok) (every rank learns of
/// the failure and returns an error), or the failing rank calls [`abort`](Self::abort).
/// A panic that unwinds to the end of `main` aborts the job (see [`Universe`]).
pub struct Comm {
    raw: MPI_Comm,
    rank: usize,
    size: usize,
    /// Messages this rank sent to itself, by tag, oldest first (see [`Comm::send`]).
    pub(crate) to_self: std::cell::RefCell<
        std::collections::HashMap<u32, std::collections::VecDeque<ctensor_aten::Tensor>>,
    >,
}

impl std::fmt::Debug for Comm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Comm(rank {} of {})", self.rank, self.size)
    }
}

/// Turns an MPI return code into `Ok` or an `Error::Mpi` that names the call and quotes
/// the library's error string.
pub(crate) fn check(op: &'static str, call: &str, rc: c_int) -> Result<()> {
    if rc == 0 {
        return Ok(());
    }
    let mut buf = [0 as c_char; 512];
    let mut len: c_int = 0;
    // SAFETY: the buffer holds MPI_MAX_ERROR_STRING (256 in Open MPI and MPICH) bytes and
    // more; MPI writes at most that many and their length into `len`.
    let text = unsafe {
        if ffi::MPI_Error_string(rc, buf.as_mut_ptr(), &mut len) == 0 {
            let bytes: Vec<u8> = buf[..len.clamp(0, 511) as usize]
                .iter()
                .map(|&c| c as u8)
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        } else {
            "unknown error".to_string()
        }
    };
    Err(Error::Mpi {
        op,
        detail: format!("{call} returned {rc}: {text}"),
    })
}

/// An MPI element count from a `usize`, or `Error::Overflow`: MPI counts are C `int`s.
pub(crate) fn count(op: &'static str, n: usize) -> Result<c_int> {
    c_int::try_from(n).map_err(|_| Error::Overflow {
        op,
        what: format!(
            "{n} elements in one MPI message exceed MPI's count limit of {} (C int)",
            c_int::MAX
        ),
    })
}

impl Comm {
    /// A `Comm` over the processes of an rsmpi communicator (for programs that started
    /// MPI themselves): a duplicate, so messages of the two never mix.
    pub fn from_communicator<C: mpi::topology::Communicator>(comm: &C) -> Result<Comm> {
        Comm::dup_raw(comm.as_raw(), "Comm::from_communicator")
    }

    fn dup_raw(parent: MPI_Comm, op: &'static str) -> Result<Comm> {
        let mut raw: MPI_Comm = parent;
        // SAFETY: `parent` is a valid communicator handle (from rsmpi or MPI's world);
        // `raw` receives the new handle.
        check(op, "MPI_Comm_dup", unsafe {
            ffi::MPI_Comm_dup(parent, &mut raw)
        })?;
        Comm::adopt(raw, op)
    }

    /// Takes ownership of a communicator handle that ctensor created.
    fn adopt(raw: MPI_Comm, op: &'static str) -> Result<Comm> {
        let (mut rank, mut size): (c_int, c_int) = (0, 0);
        // SAFETY: `raw` is a valid communicator that this Comm now owns; the error
        // handler is MPI's predefined ERRORS_RETURN.
        unsafe {
            check(
                op,
                "MPI_Comm_set_errhandler",
                ffi::MPI_Comm_set_errhandler(raw, ffi::RSMPI_ERRORS_RETURN),
            )?;
            check(op, "MPI_Comm_rank", ffi::MPI_Comm_rank(raw, &mut rank))?;
            check(op, "MPI_Comm_size", ffi::MPI_Comm_size(raw, &mut size))?;
        }
        Ok(Comm {
            raw,
            rank: rank as usize,
            size: size as usize,
            to_self: Default::default(),
        })
    }

    /// This process's rank, `0..size()`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of processes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The MPI handle, for calls into MPI or libraries that take one (ScaLAPACK, ELPA).
    /// It stays owned by this `Comm`.
    pub fn as_raw(&self) -> MPI_Comm {
        self.raw
    }

    /// Ends every process of the job (`MPI_Abort` on this communicator, with `code` as
    /// the exit status mpirun reports): for a failure on one rank that the others cannot
    /// be told of through [`all_ok`](Self::all_ok). Does not return.
    pub fn abort(&self, code: i32) -> ! {
        // SAFETY: a valid communicator; MPI_Abort ends the job.
        unsafe {
            ffi::MPI_Abort(self.raw, code);
        }
        // MPI_Abort does not return on a working MPI; should it, end this process.
        std::process::exit(if code == 0 { 1 } else { code })
    }

    /// Waits until every rank has called `barrier`.
    pub fn barrier(&self) -> Result<()> {
        // SAFETY: a valid communicator.
        check("barrier", "MPI_Barrier", unsafe {
            ffi::MPI_Barrier(self.raw)
        })
    }

    /// Splits the processes into groups by `color` (`MPI_Comm_split`): every rank gets the
    /// communicator of the ranks that gave its color, ordered by `key` and then by their
    /// rank here. Collective.
    ///
    /// Errors: `Overflow` when `color` or `key` exceeds a C `int`.
    pub fn split(&self, color: usize, key: usize) -> Result<Comm> {
        const OP: &str = "split";
        let mine = [
            i64::from(c_int::try_from(color).is_ok() && c_int::try_from(key).is_ok()),
            color as i64,
        ];
        // Every rank learns whether every color and key fits, so all fail together.
        let all = self.allgather_words(OP, &mine)?;
        if let Some(r) = (0..self.size).find(|&r| all[2 * r] == 0) {
            return Err(Error::Overflow {
                op: OP,
                what: format!("rank {r}'s color or key exceeds a C int"),
            });
        }
        let mut raw: MPI_Comm = self.raw;
        // SAFETY: a valid communicator; both numbers fit in a C int (checked above).
        check(OP, "MPI_Comm_split", unsafe {
            ffi::MPI_Comm_split(self.raw, color as c_int, key as c_int, &mut raw)
        })?;
        Comm::adopt(raw, OP)
    }

    /// Every rank's verdict on a step that each did by itself, before the next
    /// collective: `local` on the ranks where every rank succeeded, otherwise an error
    /// on every rank (the failed rank its own; the others `Error::Mpi` naming it). The
    /// SPMD idiom that keeps one rank's failure from leaving the others waiting in the
    /// next collective. Collective (one `MPI_Allgather` of 8 bytes per rank).
    pub fn all_ok<T>(&self, local: Result<T>) -> Result<T> {
        const OP: &str = "all_ok";
        let all = self.allgather_words(OP, &[i64::from(local.is_err())])?;
        let value = local?;
        match all.iter().position(|&f| f != 0) {
            None => Ok(value),
            Some(r) => Err(Error::Mpi {
                op: OP,
                detail: format!("rank {r} failed (its own call returned the reason)"),
            }),
        }
    }

    /// `words` as rank `root` has them, on every rank (`MPI_Bcast` of i64); every rank
    /// passes as many.
    pub(crate) fn bcast_words(
        &self,
        op: &'static str,
        words: &mut [i64],
        root: usize,
    ) -> Result<()> {
        let n = count(op, words.len())?;
        // SAFETY: `words` holds n i64 on every rank; the datatype is MPI's int64.
        check(op, "MPI_Bcast", unsafe {
            ffi::MPI_Bcast(
                words.as_mut_ptr().cast(),
                n,
                ffi::RSMPI_INT64_T,
                root as c_int,
                self.raw,
            )
        })
    }

    /// `words` from every rank, concatenated in rank order (`MPI_Allgather` of i64).
    pub(crate) fn allgather_words(&self, op: &'static str, words: &[i64]) -> Result<Vec<i64>> {
        let n = count(op, words.len())?;
        let mut all = vec![0i64; words.len() * self.size];
        // SAFETY: `words` holds n i64 and `all` n per rank; the datatype is MPI's int64.
        check(op, "MPI_Allgather", unsafe {
            ffi::MPI_Allgather(
                words.as_ptr().cast(),
                n,
                ffi::RSMPI_INT64_T,
                all.as_mut_ptr().cast(),
                n,
                ffi::RSMPI_INT64_T,
                self.raw,
            )
        })?;
        Ok(all)
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        // After MPI_Finalize no MPI call is allowed; the handle died with MPI then.
        if !mpi::environment::is_finalized() {
            // SAFETY: this Comm owns the handle (a duplicate or a split it created).
            unsafe {
                ffi::MPI_Comm_free(&mut self.raw);
            }
        }
    }
}

// ---- agreement: what each rank brings to a collective ----------------------------------

/// The most dimensions an operand of a collective may have (the fixed size of the
/// description every rank sends before the data).
pub const MAX_DIMS: usize = 16;

/// What one rank brings to an operation: its operand's dtype and dims, and two numbers
/// that must agree (the root, the reduction) or be compared (a count).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Info {
    pub dtype: DataType,
    pub dims: Vec<usize>,
    pub extra: [i64; 2],
}

/// The code of `dtype` in the words ranks exchange (its index in `DataType::ALL`).
pub(crate) fn dtype_code(dtype: DataType) -> i64 {
    DataType::ALL.iter().position(|&d| d == dtype).unwrap_or(0) as i64
}

/// The dtype of a [`dtype_code`] (a code out of range counts as the first dtype; the
/// codes come from ranks of the same program).
pub(crate) fn dtype_of(code: i64) -> DataType {
    DataType::ALL[code.clamp(0, DataType::ALL.len() as i64 - 1) as usize]
}

/// A rank's contribution: an operand, no operand (a non-root of a rooted operation), or a
/// local failure that stops every rank.
pub(crate) type Local = Result<Option<Info>>;

const WORDS: usize = 5 + MAX_DIMS;
const HAS_OPERAND: i64 = 0;
const NO_OPERAND: i64 = 1;
const FAILED: i64 = 2;

impl Comm {
    /// Every rank's [`Local`], in rank order (one `MPI_Allgather` of 168 bytes per rank).
    ///
    /// When any rank failed locally, every rank returns an error: the failed rank its own,
    /// the others `Error::Mpi` naming it. That is what keeps a bad argument on one rank
    /// from leaving the others waiting in the data transfer.
    pub(crate) fn agree(&self, op: &'static str, local: Local) -> Result<Vec<Option<Info>>> {
        let local = match local {
            Ok(Some(info)) if info.dims.len() > MAX_DIMS => Err(Error::Unsupported {
                op,
                what: format!(
                    "a tensor of {} dimensions over MPI (at most {MAX_DIMS})",
                    info.dims.len()
                ),
            }),
            other => other,
        };
        let mut words = [0i64; WORDS];
        match &local {
            Ok(Some(info)) => {
                words[0] = HAS_OPERAND;
                words[1] = dtype_code(info.dtype);
                words[2] = info.dims.len() as i64;
                words[3..5].copy_from_slice(&info.extra);
                for (w, &d) in words[5..].iter_mut().zip(&info.dims) {
                    *w = d as i64;
                }
            }
            Ok(None) => words[0] = NO_OPERAND,
            Err(_) => words[0] = FAILED,
        }
        let all = self.allgather_words(op, &words)?;
        let local = local?;
        let mut out = Vec::with_capacity(self.size);
        for (r, w) in all.chunks(WORDS).enumerate() {
            match w[0] {
                HAS_OPERAND => {
                    let ndim = (w[2].clamp(0, MAX_DIMS as i64)) as usize;
                    out.push(Some(Info {
                        dtype: dtype_of(w[1]),
                        dims: w[5..5 + ndim].iter().map(|&d| d as usize).collect(),
                        extra: [w[3], w[4]],
                    }))
                }
                NO_OPERAND => out.push(None),
                _ => {
                    return Err(Error::Mpi {
                        op,
                        detail: format!(
                            "rank {r} could not take part (its own call returned the reason); \
                             no data was exchanged"
                        ),
                    })
                }
            }
        }
        // Our own entry must be what we sent; anything else is a bug in the exchange.
        if out.get(self.rank).cloned().flatten() != local {
            return Err(Error::Internal {
                op,
                what: format!("rank {}'s own description came back changed", self.rank),
            });
        }
        Ok(out)
    }
}

/// The first rank whose `key` differs from rank 0's, as a `RanksDisagree`.
pub(crate) fn same_on_all<K: PartialEq + std::fmt::Debug>(
    op: &'static str,
    what: &'static str,
    keys: &[K],
) -> Result<()> {
    match keys.iter().position(|k| *k != keys[0]) {
        None => Ok(()),
        Some(r) => Err(Error::RanksDisagree {
            op,
            what,
            first: format!("{:?}", keys[0]),
            rank: r,
            got: format!("{:?}", keys[r]),
        }),
    }
}
