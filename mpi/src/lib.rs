//! # ctensor-mpi
//!
//! ctensor beyond one machine, over MPI (rsmpi on the system's MPI library):
//!
//! - **Tensors as MPI buffers** ([`Comm`]): `send`/`recv`, `bcast`, `reduce`/`allreduce`
//!   (sum, max, min), `gather`/`allgather`/`scatter` along the leading axis, and
//!   `alltoall`, for every dtype, any layout (a strided tensor travels through a packed
//!   copy) and either device (a GPU tensor is handed to a CUDA-aware MPI as a device
//!   pointer after its stream is synchronized, and staged through the host otherwise).
//!   The ranks' dtypes and shapes are checked against each other first: a mismatch is
//!   the same error on every rank, never a hang.
//! - **The DFT split** ([`split_pools`], [`distribute`]): k-point pools × band groups,
//!   and each rank's share of the k-points.
//! - **A distributed dense eigensolver** ([`Grid`], [`DistMatrix`], [`eigh`]): block-cyclic
//!   matrices on a process grid; ELPA for all eigenpairs or the lowest ones, ScaLAPACK's
//!   `p?syevd`/`p?heevd` and `p?syevr`/`p?heevr` (any range) otherwise or on request
//!   ([`DistEigBackend`]), for f32, f64, c32 and c64.
//!
//! Programs reach it as `ctensor::mpi` (the facade's `mpi` feature):
//!
//! ```no_run
//! use ctensor_aten::{DeviceType, Tensor};
//! use ctensor_mpi::{self as ctmpi, ReduceOp};
//!
//! let universe = ctmpi::initialize()?;
//! let world = universe.world()?;
//! // Each rank solves its share of the k-points ...
//! let mine = ctmpi::distribute(0..100, &world);
//! let local = Tensor::full(mine.len() as f64, DeviceType::Cpu, &[1])?;
//! // ... and every rank learns the total.
//! let total = world.allreduce(&local, ReduceOp::Sum)?;
//! assert_eq!(total.item::<f64>()?, 100.0);
//! # Ok::<(), ctensor_aten::Error>(())
//! ```
//!
//! Run it with `mpirun -n 4 ./program`. Drop every [`Comm`], [`Grid`] and
//! [`DistMatrix`] before the [`Universe`]: that finalizes MPI.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

mod collectives;
mod comm;
#[doc(hidden)]
pub mod launch;
mod p2p;
mod pools;
pub mod scalapack;
mod wire;

pub use collectives::ReduceOp;
pub use comm::{initialize, Comm, Universe, MAX_DIMS};
pub use p2p::MAX_TAG;
pub use pools::{block_counts, block_range, distribute, split_pools, Pools};
pub use scalapack::{eigh, eigh_with, eigvalsh, eigvalsh_with, DistEigBackend, DistMatrix, Grid};
pub use wire::cuda_aware;
