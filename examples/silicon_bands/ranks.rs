//! Where the k-points are solved: in this process, or, in a build with the `mpi` feature
//! started by `mpirun -n N`, split over the ranks. Every rank then holds every level
//! (one allgather of `nb` doubles per k-point), so each continues with the same numbers,
//! and rank 0 alone writes the table, the CSV and the plot.
//!
//! `--pools P` splits the ranks into P pools instead: the k-points are split over the
//! pools, and each pool solves its k-points' dense Hamiltonians together on a square
//! process grid of its ranks (ELPA for c64, ScaLAPACK for c32; for bases too large for
//! one process).

use super::*;
#[cfg(feature = "mpi")]
use crate::model::RY_EV;
#[cfg(feature = "mpi")]
use ctensor::{DataType, DeviceType, EighRange, Tensor};
#[cfg(feature = "mpi")]
use std::sync::atomic::Ordering;

/// The communicator the demo runs on: MPI's world in an `mpi` build; in any other build
/// a type with no values, so the single-process path is all there is.
#[cfg(feature = "mpi")]
pub(crate) type World = ctensor::mpi::Comm;
/// See the `mpi` build's `World`.
#[cfg(not(feature = "mpi"))]
pub(crate) enum World {}

/// Block size of the distributed Hamiltonians (ScaLAPACK's customary 64 would leave
/// most ranks idle at a few hundred plane waves).
#[cfg(feature = "mpi")]
const BLOCK: usize = 32;

/// How this process takes part in the calculation.
pub(crate) struct Ranks<'w> {
    #[cfg(feature = "mpi")]
    world: Option<&'w World>,
    #[cfg(feature = "mpi")]
    pooled: Option<(ctensor::mpi::Pools, ctensor::mpi::Grid)>,
    #[cfg(not(feature = "mpi"))]
    _world: std::marker::PhantomData<&'w World>,
}

impl<'w> Ranks<'w> {
    /// One process, no MPI.
    pub(crate) fn single() -> Ranks<'static> {
        Ranks {
            #[cfg(feature = "mpi")]
            world: None,
            #[cfg(feature = "mpi")]
            pooled: None,
            #[cfg(not(feature = "mpi"))]
            _world: std::marker::PhantomData,
        }
    }

    /// The ranks of `world` (one process when `None`) for these options. Without
    /// `--threads`, each rank of a multi-rank run takes its share of the node's cores.
    #[cfg(feature = "mpi")]
    pub(crate) fn new(world: Option<&'w World>, args: &Args) -> Res<Ranks<'w>> {
        let Some(world) = world.filter(|w| w.size() > 1 || args.pools.is_some()) else {
            return Ok(Ranks::single());
        };
        if args.threads.is_none() && world.size() > 1 {
            let local = [
                "OMPI_COMM_WORLD_LOCAL_SIZE",
                "MPI_LOCALNRANKS",
                "PMI_LOCAL_SIZE",
            ]
            .iter()
            .find_map(|v| std::env::var(v).ok()?.parse::<usize>().ok())
            .unwrap_or(world.size());
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            ctensor::set_num_threads((cores / local.max(1)).max(1))?;
        }
        let pooled = match args.pools {
            None => None,
            Some(p) if p == world.size() => None,
            Some(p) => {
                if args.solver == "davidson" || args.device != "cpu" {
                    return Err(Fail(format!(
                        "--pools {p}: a pool of several ranks solves dense Hamiltonians on the \
                         CPU with ELPA or ScaLAPACK; use --solver dense --device cpu, or one \
                         rank per pool (--pools {})",
                        world.size()
                    )));
                }
                let pools = ctensor::mpi::split_pools(world, p)?;
                let grid = ctensor::mpi::Grid::square(&pools.pool)?;
                Some((pools, grid))
            }
        };
        Ok(Ranks {
            world: Some(world),
            pooled,
        })
    }

    /// One process: `--pools` needs the `mpi` build.
    #[cfg(not(feature = "mpi"))]
    pub(crate) fn new(world: Option<&'w World>, args: &Args) -> Res<Ranks<'w>> {
        if let Some(w) = world {
            match *w {}
        }
        if let Some(p) = args.pools {
            return Err(Fail(format!(
                "--pools {p}: this build has no MPI; build with `--features mpi` and run \
                 under mpirun"
            )));
        }
        Ok(Ranks::single())
    }

    /// Whether this process writes the results (rank 0, or the only process).
    pub(crate) fn is_root(&self) -> bool {
        #[cfg(feature = "mpi")]
        if let Some(w) = self.world {
            return w.rank() == 0;
        }
        true
    }

    /// "N ranks (P pools)" for the report, or `None` for one process.
    pub(crate) fn describe(&self) -> Option<String> {
        #[cfg(feature = "mpi")]
        if let Some(w) = self.world {
            let pools = self.pooled.as_ref().map_or(w.size(), |(p, _)| p.count);
            return Some(format!("{} MPI ranks in {pools} pool(s)", w.size()));
        }
        None
    }

    /// Hamiltonians solved by every process together, from this process's count.
    pub(crate) fn total(&self, mine: usize) -> Res<usize> {
        #[cfg(feature = "mpi")]
        if let Some(w) = self.world {
            let t = Tensor::full(mine as i64, DeviceType::Cpu, &[1])?;
            return Ok(w
                .allreduce(&t, ctensor::mpi::ReduceOp::Sum)?
                .item::<i64>()? as usize);
        }
        Ok(mine)
    }

    /// The lowest `nb` levels at each of `ks` in eV (not yet shifted), the same on
    /// every rank.
    pub(crate) fn levels(&self, model: &Model, ks: &[[f64; 3]], nb: usize) -> Res<Vec<Vec<f64>>> {
        #[cfg(feature = "mpi")]
        if let Some(world) = self.world {
            return match &self.pooled {
                None => {
                    let mine = ctensor::mpi::distribute(0..ks.len(), world);
                    let local = agree(world, model.levels_many(&ks[mine], nb))?;
                    spread(world, &local, nb)
                }
                Some((pools, grid)) => {
                    let mine = ctensor::mpi::block_range(0..ks.len(), pools.index, pools.count);
                    let local = ks[mine]
                        .iter()
                        .map(|&k| pooled_levels(model, &pools.pool, grid, k, nb))
                        .collect::<Res<Vec<_>>>()?;
                    // Every rank of a pool holds its pool's levels; one rank of each pool
                    // position meets the others across the pools.
                    spread(&pools.across, &local, nb)
                }
            };
        }
        model.levels_many(ks, nb)
    }
}

/// `local` on every rank when every rank succeeded; this rank's own failure, or an error
/// naming the rank that failed, otherwise (so none is left waiting in a collective).
#[cfg(feature = "mpi")]
fn agree<T>(comm: &World, local: Res<T>) -> Res<T> {
    let flag = match &local {
        Ok(_) => Ok(()),
        Err(Fail(m)) => Err(Error::Mpi {
            op: "silicon_bands",
            detail: m.clone(),
        }),
    };
    let verdict = comm.all_ok(flag);
    let value = local?;
    verdict?;
    Ok(value)
}

/// Every rank's rows of levels, in rank order, on every rank.
#[cfg(feature = "mpi")]
fn spread(comm: &World, local: &[Vec<f64>], nb: usize) -> Res<Vec<Vec<f64>>> {
    let flat: Vec<f64> = local.concat();
    let t = Tensor::from_slice(&flat, &[local.len(), nb])?;
    let all = comm.allgather(&t)?.to_vec::<f64>()?;
    Ok(all.chunks(nb).map(|c| c.to_vec()).collect())
}

/// The lowest `nb` levels at `k`: H built on the pool's rank 0, distributed over the
/// pool's grid, and its lowest eigenvalues from the distributed `eigvalsh` (ELPA where it
/// applies, ScaLAPACK's MRRR otherwise).
#[cfg(feature = "mpi")]
fn pooled_levels(
    model: &Model,
    pool: &World,
    grid: &ctensor::mpi::Grid,
    k: [f64; 3],
    nb: usize,
) -> Res<Vec<f64>> {
    let h = if pool.rank() == 0 {
        Some(model.hamiltonian(k))
    } else {
        None
    };
    let h = agree(pool, h.transpose())?;
    let d = ctensor::mpi::DistMatrix::scatter_from(grid, h.as_ref(), 0, BLOCK, BLOCK)?;
    let npw = d.shape().0;
    if nb > npw {
        return Err(Fail(format!(
            "--bands: {nb} bands exceed the {npw} plane waves at k = ({}, {}, {}) (2π/a)",
            k[0], k[1], k[2]
        )));
    }
    let w = ctensor::mpi::eigvalsh(&d, EighRange::Index(0, nb))?;
    if pool.rank() == 0 {
        model.solved.fetch_add(1, Ordering::Relaxed);
    }
    let w = w.cast(DataType::Double)?.to_vec::<f64>()?;
    Ok(w.iter().map(|e| e * RY_EV).collect())
}
