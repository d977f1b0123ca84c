//! The demo's command line: the options, the k-path syntax and the basis cutoffs.

use std::path::PathBuf;

use clap::Parser;

use super::*;

pub(crate) const POINTS: [(&str, [f64; 3]); 6] = [
    ("G", [0.0, 0.0, 0.0]),
    ("X", [1.0, 0.0, 0.0]),
    ("L", [0.5, 0.5, 0.5]),
    ("U", [1.0, 0.25, 0.25]),
    ("K", [0.75, 0.75, 0.0]),
    ("W", [1.0, 0.5, 0.0]),
];

/// Band structure of a diamond or zinc-blende semiconductor from the Cohen–Bergstresser
/// empirical pseudopotentials.
#[derive(Parser, Debug)]
#[command(name = "silicon_bands", version, about)]
pub(crate) struct Args {
    /// Material: Si, Ge, Sn (α-Sn), GaP, GaAs, AlSb, InP, GaSb, InAs, InSb, ZnS, ZnSe,
    /// ZnTe, CdTe.
    #[arg(long, default_value = "Si")]
    pub(crate) material: String,
    /// Basis cutoff |G|² ≤ gcut in (2π/a)² (27 gives the converged 169 plane waves).
    #[arg(long, conflicts_with_all = ["npw", "ecut"])]
    pub(crate) gcut: Option<f64>,
    /// Basis cutoff as a kinetic energy in Ry: (2π/a)²|G|² ≤ ecut (the DFT convention).
    #[arg(long, conflicts_with = "npw")]
    pub(crate) ecut: Option<f64>,
    /// Basis size: a closed shell count (51, 59, 65, 89, 113, 137, 169, 181, 229, ...).
    #[arg(long)]
    pub(crate) npw: Option<usize>,
    /// Use the k-dependent cutoff |k + G|² ≤ kcut (in (2π/a)²) instead of a fixed set.
    #[arg(long)]
    pub(crate) kcut: Option<f64>,
    /// The k-path: points G X L U K W, '-' joins, ',' breaks.
    #[arg(long, default_value = "L-G-X-U,K-G")]
    pub(crate) path: String,
    /// k-points per path segment.
    #[arg(long, default_value_t = 30)]
    pub(crate) points: usize,
    /// Number of bands.
    #[arg(long, default_value_t = 8)]
    pub(crate) bands: usize,
    /// Device: cpu or gpu.
    #[arg(long, default_value = "cpu")]
    pub(crate) device: String,
    /// Element type of the Hamiltonian: c64 or c32.
    #[arg(long, default_value = "c64")]
    pub(crate) dtype: String,
    /// Eigensolver: "dense" builds H and calls eigh; "davidson" applies H with FFTs on
    /// a real-space grid (never forming it) inside a block Davidson solver.
    #[arg(long, default_value = "dense", value_parser = ["dense", "davidson"])]
    pub(crate) solver: String,
    /// Precision of the dense solver for c64: "mixed" solves in c32/f32 and refines the
    /// eigenvalues in c64/f64 (`EigBackend::Mixed`: checked to 1e-9 of ‖H‖, measured
    /// within 1e-10 eV of "double"; about twice as fast for complex H), "double" solves
    /// in c64/f64 throughout, "auto" is mixed for complex matrices of order 128 or more
    /// (zinc-blende crystals) and double for smaller ones and for real ones (diamond
    /// crystals, and zinc-blende ones made real by `--symmetry`), whose solvers are
    /// already fast: Si at 169 plane waves, 1 544 k-points/s double against 1 344 mixed.
    /// The GPU and `--dtype c32` always use the plain solver.
    #[arg(long, default_value = "auto")]
    pub(crate) precision: String,
    /// Whether the dense solver uses the crystal's symmetry: "on" solves the complex H(k)
    /// of a zinc-blende crystal, at a k-point an operation of its space group fixes, in a
    /// symmetry-adapted basis where it is real or splits into two blocks (the same
    /// levels from about a quarter of the flops); "off" solves H(k) as it is.
    #[arg(long, default_value = "on", value_parser = ["on", "off"])]
    pub(crate) symmetry: String,
    /// Under mpirun (a build with `--features mpi`): split the ranks into this many pools
    /// of k-points; a pool of several ranks solves each dense Hamiltonian with ELPA or
    /// ScaLAPACK on a process grid. Default: one pool per rank.
    #[arg(long)]
    pub(crate) pools: Option<usize>,
    /// Threads for OpenBLAS and ctensor's pool (default: one per core).
    #[arg(long)]
    pub(crate) threads: Option<usize>,
    /// Directory for bands.csv and bands.svg.
    #[arg(long, default_value = "out")]
    pub(crate) out: PathBuf,
}

/// The largest basis cutoff the dense solver accepts, in (2π/a)²: about 15 500 plane
/// waves, a dense Hamiltonian of 3.8 GB in c64. Beyond it the basis would not fit in
/// memory.
pub(crate) const MAX_CUT: f64 = 600.0;

/// The largest cutoff of the Davidson solver, which stores no matrix: about 43 500 plane
/// waves on a 72³ grid (a block of 8 bands on the grid is 48 MB).
pub(crate) const MAX_CUT_DAVIDSON: f64 = 1200.0;

/// Checks a cutoff option (in (2π/a)²): finite, positive and at most `max`.
pub(crate) fn check_cutoff(name: &str, value: Option<f64>, max: f64) -> Res<()> {
    match value {
        Some(c) if !(c.is_finite() && c > 0.0 && c <= max) => Err(Fail(format!(
            "{name} {c}: expected a cutoff in (0, {max}] (2π/a)² for this solver (about \
             {} plane waves at the limit)",
            (std::f64::consts::PI / 3.0 * max.powf(1.5)).round()
        ))),
        _ => Ok(()),
    }
}

/// The cutoff whose closed shells hold exactly `npw` plane waves.
pub(crate) fn cutoff_for(npw: usize) -> Res<f64> {
    let mut sizes = Vec::new();
    for cut in 0..=200 {
        let n = g_vectors(cut as f64, [0.0; 3]).len();
        if n == npw {
            return Ok(cut as f64);
        }
        if sizes.last() != Some(&n) {
            sizes.push(n);
        }
        if n > npw {
            break;
        }
    }
    let list: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
    Err(Fail(format!(
        "--npw {npw} is not a closed shell of G vectors; choose one of {}",
        list.join(", ")
    )))
}

/// A parsed k-path: branches of points joined by straight segments; a break (`,`)
/// starts a new branch.
pub(crate) fn parse_path(spec: &str) -> Res<Vec<Vec<Point>>> {
    let mut branches = Vec::new();
    for branch in spec.split(',') {
        let mut pts = Vec::new();
        for name in branch.split('-') {
            let name = name.trim();
            let p = POINTS
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name) || (name == "Γ" && *n == "G"));
            match p {
                Some(&(n, k)) => pts.push((n, k)),
                None => {
                    return Err(Fail(format!(
                        "--path: unknown point '{name}': expected G, X, L, U, K or W"
                    )))
                }
            }
        }
        if pts.len() < 2 {
            return Err(Fail(format!(
                "--path: branch '{branch}' needs at least two points"
            )));
        }
        branches.push(pts);
    }
    Ok(branches)
}
