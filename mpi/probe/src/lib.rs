//! Nothing at run time: this crate's build script checks, before the MPI crate's
//! dependencies build (rsmpi's build script needs Open MPI and libclang and fails with
//! a bare panic without them), that Open MPI, ScaLAPACK for Open MPI, ELPA and libclang
//! are installed, and stops the build with the command that installs what is missing.
