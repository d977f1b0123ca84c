//! `ctensor-pw run INPUT.json --output RESULT.json [--threads N] [--device cpu|gpu]`:
//! a self-consistent Kohn–Sham calculation (LDA or GGA). Prints the SCF progress and a summary;
//! any bad input is one line on stderr and exit status 2; an SCF that does not converge
//! writes its last state, says so, and exits with status 3.

use clap::{Parser, Subcommand};
use ctensor::DeviceType;
use ctensor_pw::io::{Input, RunResult};
use ctensor_pw::share::KShare;
use ctensor_pw::{PwError, Result};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "ctensor-pw",
    version,
    about = "Plane-wave Kohn–Sham DFT (LDA, GGA) on ctensor"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the SCF of an input file.
    Run {
        /// The input (JSON).
        input: PathBuf,
        /// Where to write the result (JSON).
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// Threads for ctensor's kernels and BLAS (default: all cores).
        #[arg(long)]
        threads: Option<usize>,
        /// cpu or gpu.
        #[arg(long, default_value = "cpu")]
        device: String,
        /// Print only the summary.
        #[arg(long)]
        quiet: bool,
        /// Draw the band structure of the input's `band_path` to this SVG file.
        #[arg(long)]
        plot: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // In an `mpi` build every process is a rank (one rank without mpirun): the k-points
    // are split over the ranks and rank 0 prints and writes.
    #[cfg(feature = "mpi")]
    let universe = match ctensor::mpi::initialize() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("ctensor-pw: {e}");
            return ExitCode::from(2);
        }
    };
    #[cfg(feature = "mpi")]
    let world = match universe.world() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("ctensor-pw: {e}");
            return ExitCode::from(2);
        }
    };
    #[cfg(feature = "mpi")]
    let share = KShare::Ranks(&world);
    #[cfg(not(feature = "mpi"))]
    let share = KShare::Alone;
    match cli.command {
        Command::Run {
            input,
            output,
            threads,
            device,
            quiet,
            plot,
        } => match run(
            &share,
            &input,
            output.as_deref(),
            threads,
            &device,
            quiet,
            plot.as_deref(),
        ) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(3),
            Err(e) => {
                eprintln!("ctensor-pw: {e}");
                ExitCode::from(2)
            }
        },
    }
}

/// Runs one input; `Ok(false)` when the SCF did not converge (the result is written).
/// Every rank runs it; only the root prints and writes.
fn run(
    share: &KShare,
    path: &Path,
    output: Option<&Path>,
    threads: Option<usize>,
    device: &str,
    quiet: bool,
    plot: Option<&Path>,
) -> Result<bool> {
    let start = Instant::now();
    let device = match device {
        "cpu" => DeviceType::Cpu,
        "gpu" => DeviceType::Gpu,
        other => {
            return Err(ctensor_pw::error::PwError::Input {
                what: "--device".into(),
                expected: "cpu or gpu".into(),
                given: other.into(),
            })
        }
    };
    if device == DeviceType::Gpu && !ctensor::gpu_available() {
        return Err(PwError::Tensor(ctensor::Error::DeviceUnavailable {
            device: DeviceType::Gpu,
            reason: "no usable GPU (no driver or no device)".into(),
        }));
    }
    if let Some(n) = threads {
        if n == 0 {
            return Err(PwError::Input {
                what: "--threads".into(),
                expected: "at least 1".into(),
                given: "0".into(),
            });
        }
        ctensor::set_num_threads(n)?;
    }
    // ctensor's cache of freed large host blocks gains nothing here: the SCF's
    // temporaries change size as Davidson's basis grows, so the cached blocks sit idle
    // (measured on the 64-atom cell at 15 Ha: 2.2 GB peak with it, 1.4 GB without; the
    // same time at 6 Ha and on silicon). Off unless CTENSOR_HOST_CACHE_MB asks for it.
    use ctensor::base::alloc::host_cache;
    if std::env::var_os(host_cache::LIMIT_ENV).is_none() {
        host_cache::set_limit(0);
    }
    let input = Input::from_file(path)?;
    if plot.is_some() && input.band_path.is_none() {
        return Err(PwError::Input {
            what: "--plot".into(),
            expected: "an input with a band_path".into(),
            given: "none".into(),
        });
    }
    let base = path.parent().unwrap_or(Path::new("."));
    let calc = input.calculation(base, device)?;
    let quiet = quiet || !share.is_root();
    if !quiet {
        println!(
            "ctensor-pw: {} atoms, ecut {} Ha, {} k-points (reduced), {} bands, FFT grid {:?}, xc {} (libxc {})",
            calc.crystal.atoms.len(),
            calc.ecut,
            calc.kpoints.len(),
            calc.nband,
            calc.grid.n,
            calc.xc.name(),
            ctensor_pw::xc::libxc_version()
        );
        println!(
            "{:>5} {:>20} {:>12} {:>12} {:>12} {:>8}",
            "step", "E_tot (Ha)", "ΔE (Ha)", "‖Δρ‖", "eig. res.", "s"
        );
    }
    let mut n = 0;
    let outcome = calc.run_shared(share, &mut |s| {
        n += 1;
        if !quiet {
            println!(
                "{n:>5} {:>20.12} {:>12.3e} {:>12.3e} {:>12.3e} {:>8.3}",
                s.energy_ha, s.de_ha, s.residual, s.eig_residual, s.seconds
            );
        }
    })?;
    let mut result = RunResult::new(
        &calc,
        &outcome,
        start.elapsed().as_secs_f64(),
        ctensor::num_threads(),
    );
    if let (Some(path), true) = (&input.band_path, outcome.converged) {
        let bands = ctensor_pw::bands::bands_along(&calc, &outcome.potential, path)?;
        if let (Some(svg), true) = (plot, share.is_root()) {
            let nocc = (outcome.nelectrons / 2.0) as usize;
            let title = format!(
                "ctensor-pw: Kohn–Sham bands, ecut {} Ha ({})",
                calc.ecut,
                calc.xc.name()
            );
            ctensor_pw::bands::write_svg(&bands, result.homo_ha, nocc, &title, svg)?;
            if !quiet {
                println!(
                    "band structure ({} k-points) drawn to {}",
                    bands.x.len(),
                    svg.display()
                );
            }
        }
        result.band_structure = Some(bands);
    }
    if !share.is_root() {
        return Ok(outcome.converged);
    }
    if let Some(out) = output {
        let text = serde_json::to_string_pretty(&result).map_err(|e| PwError::Json {
            path: out.into(),
            source: e,
        })?;
        std::fs::write(out, text).map_err(|e| PwError::Io {
            path: out.into(),
            source: e,
        })?;
    }
    let e = &result.energy_components_ha;
    println!("  kinetic       {:>20.12}", e.kinetic);
    println!("  hartree       {:>20.12}", e.hartree);
    println!("  xc            {:>20.12}", e.xc);
    println!("  ewald         {:>20.12}", e.ewald);
    println!("  psp_core      {:>20.12}", e.psp_core);
    println!("  local_psp     {:>20.12}", e.local_psp);
    println!("  nonlocal_psp  {:>20.12}", e.nonlocal_psp);
    println!(
        "  total         {:>20.12} Ha   HOMO {:.8} Ha   {} SCF steps   {:.3} s",
        result.total_energy_ha, result.homo_ha, result.scf_iterations, result.wall_time_s
    );
    if let Some(forces) = &result.forces_ha_per_bohr {
        println!("  forces (Ha/bohr, Cartesian)");
        for (atom, f) in calc.crystal.atoms.iter().zip(forces) {
            println!(
                "    {:<4} {:>16.10} {:>16.10} {:>16.10}",
                calc.crystal.species[atom.species], f[0], f[1], f[2]
            );
        }
    }
    if let (Some(st), Some(p)) = (&result.stress_ha_per_bohr3, result.pressure_gpa) {
        println!("  stress (Ha/bohr³, Cartesian)   pressure {p:.6} GPa");
        for row in st {
            println!(
                "    {:>16.10e} {:>16.10e} {:>16.10e}",
                row[0], row[1], row[2]
            );
        }
    }
    if !quiet {
        let t = &result.timings;
        println!(
            "  time (s): local-potential FFTs {:.3}, kinetic + nonlocal gemms {:.3}, subspace/orthogonalisation {:.3}, densities {:.3}, Hartree + XC {:.3}, symmetry + mixing {:.3}; SCF wall {:.3}; forces and stress {:.3}",
            t.fft_local_potential, t.nonlocal_gemms, t.eigensolver_subspace, t.density, t.hartree_xc, t.symmetry_mixing, t.scf_wall, t.forces_and_stress
        );
    }
    if !outcome.converged {
        let last = outcome.steps.last();
        let err = PwError::NotConverged {
            steps: outcome.steps.len(),
            de: last.map_or(f64::NAN, |s| s.de_ha),
            residual: last.map_or(f64::NAN, |s| s.residual),
            etol: calc.settings.energy_tol,
            rtol: calc.settings.density_tol,
        };
        eprintln!(
            "ctensor-pw: {err}{}",
            if output.is_some() {
                " (the last state is in the output file)"
            } else {
                ""
            }
        );
        return Ok(false);
    }
    Ok(true)
}
