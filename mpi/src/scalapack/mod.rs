//! Dense linear algebra over a process grid with ScaLAPACK: the BLACS [`Grid`], the
//! block-cyclic [`DistMatrix`], and the distributed [`eigh`].

mod dist_matrix;
mod eigh;
mod ffi;
mod grid;

pub use dist_matrix::{global_index, local_count, scalapack_indxl2g, scalapack_numroc, DistMatrix};
pub use eigh::{eigh, eigvalsh};
pub use grid::Grid;
