//! ctensor-pw: self-consistent Kohn–Sham LDA and GGA in plane waves, written on ctensor's public
//! API — HGH/GTH pseudopotentials, libxc exchange–correlation, Ewald, Pulay–Kerker
//! mixing and the block eigensolvers of [`ctensor::solvers`]. The physics follows
//! ABINIT's conventions (G = 0 terms, grids, the HGH h matrices; `pw/README.md`), and the
//! tests compare with ABINIT 9.6.2; the program is
//! `ctensor-pw run INPUT.json --output RESULT.json`.
//!
//! The pieces are library pieces, each with its own tests: [`crystal`], [`kpoints`],
//! [`basis`] (FFT grid and G-spheres), [`psp`], [`ewald`], [`xc`], [`hamiltonian`],
//! [`potential`], [`mixing`], [`scf`], and the file formats in [`io`].
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

pub mod bands;
pub mod basis;
pub mod crystal;
pub mod error;
pub mod ewald;
pub mod gamma;
pub mod hamiltonian;
pub mod io;
pub mod kpoints;
pub mod mixing;
pub mod potential;
pub mod psp;
pub mod scf;
pub mod share;
pub mod symmetry;
pub mod xc;

pub use error::{PwError, Result};
