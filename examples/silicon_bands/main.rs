//! Band structures of the 14 semiconductors of Cohen & Bergstresser, Phys. Rev. 141, 789
//! (1966): the empirical-pseudopotential Hamiltonian in a plane-wave basis, built from
//! tensors of G vectors with ctensor ops and diagonalised for its lowest bands with
//! `eigh`. The model, parameters and published numbers are in
//! `../shared/reference/cohen-bergstresser.md`.
//!
//! ```text
//! cargo run --release --example silicon_bands -- --material GaAs --points 40
//! ```

use std::fmt::Write as _;

use clap::Parser;

mod cli;
mod model;
mod planewave;
mod plot;
mod ranks;
mod run;
mod solve;
#[path = "../davidson/solver.rs"]
mod solver;
mod symmetry;
use cli::*;
use ctensor::Error;
use model::g_vectors;
use plot::*;
use ranks::{Ranks, World};
use run::*;
use solve::*;
/// Why a run stopped: a message for the user.
#[derive(Debug)]
struct Fail(String);

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        Fail(e.to_string())
    }
}

type Res<T> = std::result::Result<T, Fail>;

fn report(run: &Run, args: &Args) -> Res<String> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} — Cohen–Bergstresser pseudopotentials, {} plane waves, {} bands",
        run.material, run.npw, args.bands
    );
    let _ = writeln!(
        out,
        "\nLevels at Γ, X, L (eV, relative to the valence-band top at Γ):"
    );
    for (name, levels) in &run.table {
        let row: Vec<String> = levels
            .iter()
            .map(|l| {
                format!(
                    "{} {:.3}{}",
                    l.label,
                    l.e,
                    if l.deg > 1 {
                        format!(" (×{})", l.deg)
                    } else {
                        String::new()
                    }
                )
            })
            .collect();
        let _ = writeln!(out, "  {:<2} {}", greek(name), row.join(", "));
    }
    if let Some(rows) = published(run.material) {
        let _ = writeln!(out, "\nTransition        ours (eV)  published  difference");
        let find = |label: &str| {
            run.table
                .iter()
                .flat_map(|(_, l)| l)
                .find(|l| l.label == label)
                .map(|l| l.e)
        };
        for (from, to, pubv, _) in rows {
            if let (Some(a), Some(b)) = (find(from), find(to)) {
                let ours = b - a;
                if pubv.is_nan() {
                    let _ = writeln!(out, "  {from:>5} → {to:<5} {ours:>9.3}  {:>9}", "—");
                } else {
                    let _ = writeln!(
                        out,
                        "  {from:>5} → {to:<5} {ours:>9.3}  {pubv:>9.1}  {:>+10.3}",
                        ours - pubv
                    );
                }
            }
        }
    }
    let g = &run.gap;
    let kind = if g.direct { "direct" } else { "indirect" };
    let (a, b, t) = &g.cbm_where;
    let place = if *t < 1e-9 {
        format!("at {}", greek(a))
    } else if *t > 1.0 - 1e-9 {
        format!("at {}", greek(b))
    } else {
        format!("{t:.3} of the way from {} to {}", greek(a), greek(b))
    };
    let _ = writeln!(
        out,
        "\nBand gap {:.3} eV ({kind}): valence maximum at k = {:?}, conduction minimum at k = [{:.3}, {:.3}, {:.3}] ({place})",
        g.value, g.vbm_k, g.cbm_k[0], g.cbm_k[1], g.cbm_k[2]
    );
    Ok(out)
}

/// The program, without the process: parse, run, write, print. The exit status is 2 for
/// bad options (clap's convention) and for a failed run. A plot that cannot be drawn (no
/// font on a headless machine, say) is a warning: the bands are in the CSV.
#[cfg(test)]
fn main_with(argv: &[String]) -> (i32, String) {
    main_on(argv, None)
}

/// [`main_with`] on the ranks of `world` (MPI's world in an `mpi` build, `None` for
/// one process): every rank computes, rank 0 writes and reports; the others return an
/// empty text unless they fail.
fn main_on(argv: &[String], world: Option<&World>) -> (i32, String) {
    let args = match Args::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            return (code, e.to_string());
        }
    };
    let ranks = match Ranks::new(world, &args) {
        Ok(r) => r,
        Err(Fail(msg)) => return (2, format!("silicon_bands: error: {msg}")),
    };
    let result = run_on(&args, &ranks).and_then(|r| {
        if !ranks.is_root() {
            return Ok(String::new());
        }
        let mut text = report(&r, &args)?;
        std::fs::create_dir_all(&args.out).map_err(|e| Fail(format!("cannot create {}: {e}", args.out.display())))?;
        let csv = write_csv(&r, &args.out)?;
        match write_svg(&r, &args.out) {
            Ok(svg) => {
                let _ = writeln!(text, "\nWrote {} and {}", csv.display(), svg.display());
            }
            Err(Fail(why)) => {
                let _ = writeln!(
                    text,
                    "\nWrote {}; warning: the plot was not drawn ({why}). It needs a font \
                     found through fontconfig (Debian: apt-get install fonts-dejavu-core).",
                    csv.display()
                );
            }
        }
        let _ = writeln!(
            text,
            "{} Hamiltonians ({} plane waves) solved in {:.3} s: {:.1} k-points/s, device {}, dtype {}, {} thread(s){}; ctensor built with features [{}]",
            r.kpoints,
            r.npw,
            r.seconds,
            r.kpoints as f64 / r.seconds,
            args.device,
            args.dtype,
            ctensor::num_threads(),
            ranks.describe().map_or(String::new(), |d| format!(" per rank, {d}")),
            ctensor::BUILD_FEATURES
        );
        if r.adapted != (0, 0) {
            let _ = writeln!(
                text,
                "Symmetry-adapted: {} Hamiltonians made real, {} split in two blocks (--symmetry off solves them unreduced)",
                r.adapted.0, r.adapted.1
            );
        }
        Ok(text)
    });
    match result {
        Ok(text) => (0, text),
        Err(Fail(msg)) => (2, format!("silicon_bands: error: {msg}")),
    }
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    #[cfg(feature = "mpi")]
    let (code, text) = match ctensor::mpi::initialize() {
        Err(e) => (2, format!("silicon_bands: error: {e}")),
        Ok(universe) => {
            let out = match universe.world() {
                Ok(world) => {
                    let (code, text) = main_on(&argv, Some(&world));
                    match (code, world.size()) {
                        (0, _) | (_, 1) => (code, text),
                        (_, _) => (code, format!("[rank {}] {text}", world.rank())),
                    }
                }
                Err(e) => (2, format!("silicon_bands: error: {e}")),
            };
            // The world communicator is gone; finalize MPI before exiting.
            drop(universe);
            out
        }
    };
    #[cfg(not(feature = "mpi"))]
    let (code, text) = main_on(&argv, None);
    if code == 0 {
        print!("{text}");
    } else {
        eprintln!("{}", text.trim_end());
    }
    std::process::exit(code);
}

#[cfg(test)]
mod tests;
