//! How a DFT code spreads its work: k-points over pools of processes, bands over groups
//! within a pool (Quantum ESPRESSO's `-npool`/`-nband`, ABACUS's `KPAR`/`BNDPAR`), and a
//! contiguous share of a range for each rank.

use std::ops::Range;

use ctensor_base::{Error, Result};

use crate::comm::Comm;

/// How many of `n` items each of `size` ranks holds in a contiguous block distribution:
/// `n / size` each, and one more for the first `n % size` ranks.
pub fn block_counts(n: usize, size: usize) -> Vec<usize> {
    let size = size.max(1);
    (0..size)
        .map(|r| n / size + usize::from(r < n % size))
        .collect()
}

/// The part of `range` that rank `rank` of `size` holds under [`block_counts`]: blocks in
/// rank order, so gathering the ranks' results in rank order restores `range`'s order.
/// Empty for a rank at or past `size`.
pub fn block_range(range: Range<usize>, rank: usize, size: usize) -> Range<usize> {
    let n = range.end.saturating_sub(range.start);
    let size = size.max(1);
    if rank >= size {
        return range.end..range.end;
    }
    let (q, r) = (n / size, n % size);
    let start = range.start + rank * q + rank.min(r);
    start..start + q + usize::from(rank < r)
}

/// This rank's share of `range` in `comm` ([`block_range`]): e.g. the k-points it solves.
pub fn distribute(range: Range<usize>, comm: &Comm) -> Range<usize> {
    block_range(range, comm.rank(), comm.size())
}

/// A communicator split into equal pools of consecutive ranks, and the communicators
/// across them (see [`split_pools`]).
#[derive(Debug)]
pub struct Pools {
    /// The ranks of this rank's pool (they share the work on one k-point: its bands, its
    /// plane waves, its distributed eigenproblem).
    pub pool: Comm,
    /// The ranks with this rank's position in every pool (rank `i` of each pool): sums
    /// over k-points (the density, the band energy) reduce over this.
    pub across: Comm,
    /// Which pool this rank is in, `0..count`.
    pub index: usize,
    /// How many pools there are.
    pub count: usize,
}

/// Splits `comm` into `npools` pools of `comm.size() / npools` consecutive ranks (pool
/// `i` holds ranks `i·s..(i+1)·s`), as DFT codes split k-points. For band groups inside a
/// pool, split the pool the same way: `split_pools(&pools.pool, ngroups)`. Collective.
///
/// Errors (on every rank, as the check uses only the size): `InvalidArgument` unless
/// `npools` is at least 1 and divides the number of ranks.
pub fn split_pools(comm: &Comm, npools: usize) -> Result<Pools> {
    let size = comm.size();
    if npools == 0 || !size.is_multiple_of(npools) {
        return Err(Error::InvalidArgument {
            op: "split_pools",
            expected: format!("a number of pools that divides the {size} ranks"),
            given: format!("{npools} pools"),
        });
    }
    let per = size / npools;
    let index = comm.rank() / per;
    let pool = comm.split(index, comm.rank())?;
    let across = comm.split(comm.rank() % per, comm.rank())?;
    Ok(Pools {
        pool,
        across,
        index,
        count: npools,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_the_range_in_order_without_overlap() {
        for n in [0usize, 1, 2, 7, 100, 257] {
            for size in 1..=9 {
                let counts = block_counts(n, size);
                assert_eq!(counts.iter().sum::<usize>(), n);
                assert!(counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1);
                let mut next = 3;
                for (r, &c) in counts.iter().enumerate() {
                    let part = block_range(3..3 + n, r, size);
                    assert_eq!(part.start, next, "n {n}, size {size}, rank {r}");
                    assert_eq!(part.len(), c);
                    next = part.end;
                }
                assert_eq!(next, 3 + n);
                assert!(block_range(3..3 + n, size, size).is_empty());
            }
        }
    }
}
