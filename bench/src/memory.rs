//! The memory layer: the bookkeeping of `MirroredTensor::read` on a current copy (the
//! goal is under 100 ns), and the caching pool's bookkeeping (host-side, over a backend
//! that hands out addresses without touching memory) against glibc's malloc/free of the
//! same mixed sizes, which says whether a host-side cache could pay (issue 17, item 5).

use std::hint::black_box;

use ctensor::base::alloc::pool::{Backend, Pool};
use ctensor::{DataType, DeviceType, MirroredTensor, Tensor};
use rand::rngs::StdRng;
use rand::Rng;

use crate::harness::{compare, Table};

/// Addresses only: a backend whose segments are never touched.
struct Addresses(u64);

impl Backend for Addresses {
    fn reserve(&mut self, bytes: usize) -> Result<u64, String> {
        self.0 += bytes as u64 + (2 << 20);
        Ok(self.0)
    }
    fn release(&mut self, _addr: u64, _bytes: usize) {}
}

/// The memory tables.
pub fn memory_tables(rng: &mut StdRng) -> String {
    let mut t = Table::new(
        "Memory layer (1 thread, median of interleaved samples)",
        ["ours", "reference", "ours / reference"],
    );
    let plain = Tensor::zeros(DataType::ComplexDouble, DeviceType::Cpu, &[1000, 8]).unwrap();
    let mut m = MirroredTensor::from_tensor(plain.try_clone().unwrap()).unwrap();
    t.row(
        "MirroredTensor::read(Cpu) of a current copy, then numel() vs numel() of a tensor",
        "[1000, 8] c64",
        compare(
            || {
                black_box(m.read(DeviceType::Cpu).unwrap().numel());
            },
            || {
                black_box(black_box(&plain).numel());
            },
        ),
    );
    // 64 live blocks, one of them replaced per step, sizes 64 B to 1 MiB (log-uniform).
    let sizes: Vec<usize> = (0..4096).map(|_| 1usize << rng.gen_range(6..=20)).collect();
    let mut pool = Pool::new(Addresses(0), DeviceType::Gpu);
    let mut live: Vec<u64> = (0..64)
        .map(|i| pool.allocate(sizes[i], 0).unwrap().0)
        .collect();
    let mut vecs: Vec<Vec<u8>> = (0..64).map(|i| Vec::with_capacity(sizes[i])).collect();
    let (mut i, mut j) = (0usize, 0usize);
    t.row(
        "caching pool allocate + free (bookkeeping) vs glibc malloc + free",
        "64 B - 1 MiB, 64 live",
        compare(
            || {
                i = (i + 1) % sizes.len();
                let k = i % live.len();
                pool.free(live[k]).unwrap();
                live[k] = pool.allocate(sizes[i], 0).unwrap().0;
            },
            || {
                j = (j + 1) % sizes.len();
                let k = j % vecs.len();
                vecs[k] = black_box(Vec::with_capacity(sizes[j]));
            },
        ),
    );
    t.out
}
