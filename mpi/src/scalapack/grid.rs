//! A BLACS process grid over a [`Comm`]: the ranks arranged in `nprow × npcol`, row by
//! row, as ScaLAPACK addresses them.

use std::ffi::c_int;

use ctensor_base::{Error, Result};

use super::ffi;
use crate::comm::{same_on_all, Comm};

/// A `nprow × npcol` process grid (BLACS context) over every rank of a communicator,
/// ranks placed row by row (rank `r` at `(r / npcol, r % npcol)`). Drop it (and its
/// [`DistMatrix`](super::DistMatrix)es, which borrow it) before MPI is finalized.
pub struct Grid {
    comm: Comm,
    handle: c_int,
    ctxt: c_int,
    nprow: usize,
    npcol: usize,
    myrow: usize,
    mycol: usize,
    /// Every rank's grid coordinates, in the communicator's rank order.
    coords: Vec<(usize, usize)>,
}

impl std::fmt::Debug for Grid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Grid({} × {}, this rank at ({}, {}))",
            self.nprow, self.npcol, self.myrow, self.mycol
        )
    }
}

impl Grid {
    /// A `nprow × npcol` grid over all of `comm`'s ranks. Collective.
    ///
    /// Errors (on every rank): `RanksDisagree` when the ranks ask for different shapes,
    /// `InvalidArgument` unless `nprow × npcol` equals the number of ranks.
    pub fn new(comm: &Comm, nprow: usize, npcol: usize) -> Result<Grid> {
        const OP: &str = "Grid::new";
        let shapes = comm.allgather_words(OP, &[nprow as i64, npcol as i64])?;
        let shapes: Vec<&[i64]> = shapes.chunks(2).collect();
        same_on_all(OP, "grid shape", &shapes)?;
        if nprow.checked_mul(npcol) != Some(comm.size()) {
            return Err(Error::InvalidArgument {
                op: OP,
                expected: format!(
                    "a grid of exactly the {} ranks (nprow × npcol)",
                    comm.size()
                ),
                given: format!("{nprow} × {npcol}"),
            });
        }
        // A communicator of our own for the BLACS context and the scatters.
        let comm = comm.split(0, comm.rank())?;
        // SAFETY: a valid communicator; BLACS keeps its own duplicate.
        let handle = unsafe { ffi::Csys2blacs_handle(comm.as_raw()) };
        let mut ctxt = handle;
        let (mut r, mut c, mut myr, mut myc) = (0, 0, 0, 0);
        // SAFETY: `ctxt` holds the system handle and receives the context; the order
        // string is NUL-terminated; the grid has exactly the communicator's ranks.
        unsafe {
            ffi::Cblacs_gridinit(&mut ctxt, c"Row".as_ptr(), nprow as c_int, npcol as c_int);
            ffi::Cblacs_gridinfo(ctxt, &mut r, &mut c, &mut myr, &mut myc);
        }
        if r != nprow as c_int || c != npcol as c_int || myr < 0 || myc < 0 {
            return Err(Error::Internal {
                op: OP,
                what: format!("BLACS made a {r} × {c} grid with this rank at ({myr}, {myc}) for {nprow} × {npcol}"),
            });
        }
        let all = comm.allgather_words(OP, &[i64::from(myr), i64::from(myc)])?;
        let coords = all
            .chunks(2)
            .map(|p| (p[0] as usize, p[1] as usize))
            .collect();
        Ok(Grid {
            comm,
            handle,
            ctxt,
            nprow,
            npcol,
            myrow: myr as usize,
            mycol: myc as usize,
            coords,
        })
    }

    /// The squarest grid over all of `comm`'s ranks: `nprow` the largest divisor of the
    /// number of ranks not above its square root (ScaLAPACK's eigensolvers communicate
    /// least on square grids).
    pub fn square(comm: &Comm) -> Result<Grid> {
        let p = comm.size();
        let nprow = (1..=p)
            .take_while(|d| d * d <= p)
            .filter(|d| p.is_multiple_of(*d))
            .last()
            .unwrap_or(1);
        Grid::new(comm, nprow, p / nprow)
    }

    /// `(nprow, npcol)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.nprow, self.npcol)
    }

    /// This rank's `(row, column)` in the grid.
    pub fn coords(&self) -> (usize, usize) {
        (self.myrow, self.mycol)
    }

    /// The grid coordinates of rank `rank` of the grid's communicator.
    pub fn coords_of(&self, rank: usize) -> Option<(usize, usize)> {
        self.coords.get(rank).copied()
    }

    /// The grid's own communicator (a duplicate of the one it was made from).
    pub fn comm(&self) -> &Comm {
        &self.comm
    }

    /// The BLACS context, for ScaLAPACK calls of the caller's own.
    pub fn context(&self) -> i32 {
        self.ctxt
    }
}

impl Drop for Grid {
    fn drop(&mut self) {
        if !mpi::environment::is_finalized() {
            // SAFETY: the context and handle were made by `new` and are released once.
            unsafe {
                ffi::Cblacs_gridexit(self.ctxt);
                ffi::Cfree_blacs_system_handle(self.handle);
            }
        }
    }
}
