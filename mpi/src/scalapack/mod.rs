//! Dense linear algebra over a process grid with ScaLAPACK and ELPA: the BLACS [`Grid`],
//! the block-cyclic [`DistMatrix`], and the distributed [`eigh`].

mod dist_matrix;
mod eigh;
mod elpa;
mod ffi;
mod grid;

pub use dist_matrix::{global_index, local_count, scalapack_indxl2g, scalapack_numroc, DistMatrix};
pub use eigh::{eigh, eigh_with, eigvalsh, eigvalsh_with, DistEigBackend};
pub use grid::Grid;
