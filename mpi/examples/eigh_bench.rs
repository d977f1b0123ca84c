//! Times the distributed eigensolver against one process on the same matrix: run as
//! `mpirun -n P eigh_bench [n] [threads]`. Rank 0 prints markdown rows (median of 3 runs,
//! each between barriers): ScaLAPACK and ELPA, all pairs, the lowest 10 % with vectors
//! and without, on the squarest grid of the P ranks, and, on one rank, ctensor's LAPACK `eigh`
//! (`?heevd`), faer's `eigh` (ctensor's default backend) and `eigvalsh` (`?heevr`) on
//! the same matrix for comparison.

use std::time::Instant;

use ctensor_aten::{
    eigh as eigh_one, eigvalsh as eigvalsh_one, DataType, DeviceType, EigBackend, EighRange, Tensor,
};
use ctensor_base::Result;
use ctensor_mpi::{eigh_with, eigvalsh_with, Comm, DistEigBackend, DistMatrix, Grid};

fn median(comm: &Comm, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    let mut t = Vec::new();
    for _ in 0..3 {
        comm.barrier()?;
        let start = Instant::now();
        f()?;
        comm.barrier()?;
        t.push(start.elapsed().as_secs_f64());
    }
    t.sort_by(f64::total_cmp);
    Ok(t[1])
}

fn main() -> Result<()> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = args.first().copied().unwrap_or(2000);
    let threads = args.get(1).copied().unwrap_or(1);
    let universe = ctensor_mpi::initialize()?;
    let world = universe.world()?;
    ctensor_aten::set_num_threads(threads)?;
    let x = Tensor::randn(DataType::ComplexDouble, DeviceType::Cpu, &[n, n], 42)?;
    let a = x.add(&x.t()?.conj()?)?;
    let k = (n / 10).max(1);
    let grid = Grid::square(&world)?;
    let (pr, pc) = grid.shape();
    let d = DistMatrix::scatter_from(&grid, (world.rank() == 0).then_some(&a), 0, 64, 64)?;
    let p = world.size();
    let who = format!("{p} rank(s) × {threads} thread(s), {pr} × {pc} grid");
    for (backend, names) in [
        (
            DistEigBackend::Scalapack,
            [
                "ScaLAPACK pzheevd",
                "ScaLAPACK pzheevr",
                "ScaLAPACK pzheevr",
            ],
        ),
        (
            DistEigBackend::Elpa,
            ["ELPA 1-stage", "ELPA 1-stage", "ELPA 1-stage"],
        ),
    ] {
        let all = median(&world, || {
            eigh_with(&d, EighRange::All, backend).map(|_| ())
        })?;
        let low = median(&world, || {
            eigh_with(&d, EighRange::Index(0, k), backend).map(|_| ())
        })?;
        let vals = median(&world, || {
            eigvalsh_with(&d, EighRange::Index(0, k), backend).map(|_| ())
        })?;
        if world.rank() == 0 {
            println!(
                "| eigh c64 n = {n}, all pairs | {}, {who} | {:.0} ms |",
                names[0],
                all * 1e3
            );
            println!(
                "| eigh c64 n = {n}, lowest {k} pairs | {}, {who} | {:.0} ms |",
                names[1],
                low * 1e3
            );
            println!(
                "| eigvalsh c64 n = {n}, lowest {k} | {}, {who} | {:.0} ms |",
                names[2],
                vals * 1e3
            );
        }
    }
    if p == 1 {
        let one = median(&world, || {
            eigh_one(&a, EighRange::All, EigBackend::LapackEvd).map(|_| ())
        })?;
        let faer = median(&world, || {
            eigh_one(&a, EighRange::All, EigBackend::Faer).map(|_| ())
        })?;
        let one_low_pairs = median(&world, || {
            eigh_one(&a, EighRange::Index(0, k), EigBackend::LapackEvr).map(|_| ())
        })?;
        let one_low = median(&world, || {
            eigvalsh_one(&a, EighRange::Index(0, k), EigBackend::LapackEvr).map(|_| ())
        })?;
        println!("| eigh c64 n = {n}, all pairs | one process, LAPACK zheevd, {threads} thread(s) | {:.0} ms |", one * 1e3);
        println!("| eigh c64 n = {n}, all pairs | one process, faer (ctensor's default backend), {threads} thread(s) | {:.0} ms |", faer * 1e3);
        println!("| eigh c64 n = {n}, lowest {k} pairs | one process, LAPACK zheevr, {threads} thread(s) | {:.0} ms |", one_low_pairs * 1e3);
        println!("| eigvalsh c64 n = {n}, lowest {k} | one process, LAPACK zheevr, {threads} thread(s) | {:.0} ms |", one_low * 1e3);
    }
    Ok(())
}
