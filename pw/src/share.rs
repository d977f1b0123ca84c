//! How the k-points of a calculation are shared: all in this process, or split over the
//! ranks of an MPI communicator (the `mpi` feature; ctensor's k-point pools), with the
//! sums over k (density, energies, eigenvalues) reduced over the ranks.

use crate::error::Result;
use std::ops::Range;

/// Who solves which k-points.
pub enum KShare<'a> {
    /// This process solves every k-point.
    Alone,
    /// Each rank of the communicator solves a contiguous block of k-points
    /// ([`ctensor::mpi::distribute`]); every rank ends with the same numbers.
    #[cfg(feature = "mpi")]
    Ranks(&'a ctensor::mpi::Comm),
    #[doc(hidden)]
    #[cfg(not(feature = "mpi"))]
    _Unused(std::marker::PhantomData<&'a ()>),
}

impl KShare<'_> {
    /// The k-points (indices into `0..nk`) this process solves.
    pub fn range(&self, nk: usize) -> Range<usize> {
        match self {
            #[cfg(feature = "mpi")]
            KShare::Ranks(c) => ctensor::mpi::distribute(0..nk, c),
            _ => 0..nk,
        }
    }

    /// Whether this process prints and writes (rank 0, or the only process).
    pub fn is_root(&self) -> bool {
        match self {
            #[cfg(feature = "mpi")]
            KShare::Ranks(c) => c.rank() == 0,
            _ => true,
        }
    }

    /// `local` where every rank succeeded, an error on every rank otherwise: called
    /// before each reduction, so one rank's failure never leaves the others waiting.
    pub fn agree<T>(&self, local: Result<T>) -> Result<T> {
        match self {
            #[cfg(feature = "mpi")]
            KShare::Ranks(c) => {
                let flag = c.all_ok(local.as_ref().map(|_| ()).map_err(|e| {
                    ctensor::Error::InvalidArgument {
                        op: "ctensor-pw",
                        expected: "every rank's k-points solved".into(),
                        given: e.to_string(),
                    }
                }));
                match (local, flag) {
                    (Err(e), _) => Err(e),
                    (Ok(_), Err(e)) => Err(e.into()),
                    (Ok(v), Ok(())) => Ok(v),
                }
            }
            _ => local,
        }
    }

    /// `values` summed element-wise over the ranks, in place.
    pub fn sum(&self, values: &mut [f64]) -> Result<()> {
        match self {
            #[cfg(feature = "mpi")]
            KShare::Ranks(c) => {
                let t = ctensor::Tensor::from_slice(values, &[values.len()])?;
                let s = c
                    .allreduce(&t, ctensor::mpi::ReduceOp::Sum)?
                    .to_vec::<f64>()?;
                values.copy_from_slice(&s);
                Ok(())
            }
            _ => {
                let _ = values;
                Ok(())
            }
        }
    }

    /// The largest `x` over the ranks.
    pub fn max(&self, x: f64) -> Result<f64> {
        match self {
            #[cfg(feature = "mpi")]
            KShare::Ranks(c) => {
                let t = ctensor::Tensor::from_slice(&[x], &[1])?;
                Ok(c.allreduce(&t, ctensor::mpi::ReduceOp::Max)?
                    .to_vec::<f64>()?[0])
            }
            _ => Ok(x),
        }
    }
}
