//! A block Davidson eigensolver written only with public ctensor ops, the way a plane-wave
//! DFT code finds its lowest bands: the operator is a closure `X ↦ H X`, the subspace
//! grows by preconditioned residuals, converged bands are locked (they get no more
//! corrections), and the basis restarts from the current Ritz vectors when it is full.
//! The same code runs on the CPU and the GPU and for c64 and c32.
//!
//! ```text
//! cargo run --release --example davidson -- --material GaAs --dtype c32
//! cargo run --release --example davidson -- --random 2000 --nev 8
//! ```

use std::io::Write as _;
use std::time::Instant;

use clap::Parser;
use ctensor::{eigvalsh, matmul, DataType, DeviceType, EigBackend, EighRange, Result, Tensor};

#[path = "../silicon_bands/model.rs"]
mod model;
mod solver;

use solver::{davidson, Options};

/// Lowest eigenpairs of the Cohen–Bergstresser Hamiltonian or of a random Hermitian
/// matrix with a block Davidson solver, checked against dense `eigh`.
#[derive(Parser, Debug)]
#[command(name = "davidson", about)]
struct Args {
    /// Material of the Cohen–Bergstresser model (see the band-structure demo), or "all".
    #[arg(long, default_value = "Si")]
    material: String,
    /// Instead of a material: a random Hermitian matrix of this order.
    #[arg(long)]
    random: Option<usize>,
    /// Basis cutoff |G|² ≤ gcut in (2π/a)² (27: 169 plane waves; 150: 1 917).
    #[arg(long, default_value_t = 27.0)]
    gcut: f64,
    /// Eigenpairs wanted.
    #[arg(long, default_value_t = 8)]
    nev: usize,
    /// Element type: c64 or c32.
    #[arg(long, default_value = "c64")]
    dtype: String,
    /// Device: cpu or gpu.
    #[arg(long, default_value = "cpu")]
    device: String,
}

/// A dense Hermitian problem: `H`, its diagonal (real) and a name.
struct Problem {
    name: String,
    h: Tensor,
    diag: Tensor,
}

/// H(k) at k = (0.3, 0.2, 0.1)·2π/a (a point of low symmetry) for `mat`.
fn material_problem(
    mat: &model::Material,
    gcut: f64,
    dtype: DataType,
    device: DeviceType,
) -> Result<Problem> {
    let gs = model::g_vectors(gcut, [0.0; 3]);
    let flat: Vec<f64> = gs.iter().flatten().copied().collect();
    let g = Tensor::from_slice(&flat, &[gs.len(), 3])?;
    let v = model::potential(mat, &g)?;
    let h = model::hamiltonian(model::kinetic_prefactor(mat), &g, &v, [0.3, 0.2, 0.1])?;
    problem(
        format!("{} ({} plane waves)", mat.name, gs.len()),
        h,
        dtype,
        device,
    )
}

/// A random Hermitian matrix of order `n`: diag(0, 1, …, n−1)/n plus a Hermitian
/// matrix of standard normal entries scaled by 1/(4√n), so its spectrum is spread but
/// its lowest eigenvectors are not the unit vectors.
fn random_problem(n: usize, dtype: DataType, device: DeviceType) -> Result<Problem> {
    let a = Tensor::randn(DataType::ComplexDouble, DeviceType::Cpu, &[n, n], 2024)?;
    let sym = (&(&a + &a.t()?.conj()?)? * (0.125 / (n as f64).sqrt()))?;
    let d = Tensor::arange(DataType::Double, DeviceType::Cpu, 0.0, n as f64, 1.0)?;
    let h = (&sym
        + &ctensor::ops::einsum::einsum("i->ii", &[&(&d / n as f64)?], &Default::default())?)?;
    problem(format!("random Hermitian n = {n}"), h, dtype, device)
}

fn problem(name: String, h: Tensor, dtype: DataType, device: DeviceType) -> Result<Problem> {
    let h = h.cast(dtype)?.to_device(device)?;
    let diag = h.diagonal()?.real()?.contiguous()?;
    Ok(Problem { name, h, diag })
}

/// Runs Davidson on `p` and returns (largest |λ_davidson − λ_dense|, iterations, the two
/// run times in seconds).
fn compare(p: &Problem, nev: usize) -> Result<(f64, usize, f64, f64)> {
    let n = p.h.dims()[0];
    let opts = Options {
        nev,
        tol: if p.h.dtype() == DataType::ComplexFloat {
            1e-4
        } else {
            1e-9
        },
        max_basis: 6 * nev,
        max_iter: 300,
        floor: 0.1,
    };
    let x0 = Tensor::randn(p.h.dtype(), p.h.device(), &[n, nev], 7)?;
    let t = Instant::now();
    let found = davidson(|x| matmul(&p.h, x), &p.diag, &x0, opts)?;
    let t_davidson = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let dense = eigvalsh(&p.h, EighRange::Index(0, nev), EigBackend::LapackEvr)?;
    let t_dense = t.elapsed().as_secs_f64();
    let (a, b) = (
        found.values.cast(DataType::Double)?.to_vec::<f64>()?,
        dense.cast(DataType::Double)?.to_vec::<f64>()?,
    );
    let err = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    Ok((err, found.iterations, t_davidson, t_dense))
}

fn main() {
    let args = Args::parse();
    let run = || -> Result<()> {
        let device: DeviceType = args.device.parse()?;
        let dtype = DataType::from_name(&args.dtype)?;
        let problems: Vec<Problem> = match (args.random, args.material.as_str()) {
            (Some(n), _) => vec![random_problem(n, dtype, device)?],
            (None, "all") => model::MATERIALS.iter().map(|m| material_problem(m, args.gcut, dtype, device)).collect::<Result<_>>()?,
            (None, name) => match model::MATERIALS.iter().find(|m| m.name == name) {
                Some(m) => vec![material_problem(m, args.gcut, dtype, device)?],
                None => return Err(ctensor::Error::UnknownName { kind: "material", given: name.into(), expected: "Si, Ge, Sn, GaP, GaAs, AlSb, InP, GaSb, InAs, InSb, ZnS, ZnSe, ZnTe, CdTe or all" }),
            },
        };
        // A closed stdout (`| head`) ends the output, not the program with a panic.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "{:<34} {:>5} {:>12} {:>11} {:>11}",
            "problem", "iter", "max |Δλ|", "Davidson s", "dense s"
        );
        for p in &problems {
            let (err, iters, td, te) = compare(p, args.nev)?;
            let _ = writeln!(
                out,
                "{:<34} {iters:>5} {err:>12.3e} {td:>11.4} {te:>11.4}",
                p.name
            );
        }
        Ok(())
    };
    if let Err(e) = run() {
        eprintln!("davidson: {e}");
        std::process::exit(2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every material, c64 and c32, agrees with dense `eigh` to the dtype's tolerance.
    fn materials_on(device: DeviceType) -> Result<()> {
        for dtype in [DataType::ComplexDouble, DataType::ComplexFloat] {
            for mat in &model::MATERIALS {
                let p = material_problem(mat, 27.0, dtype, device)?;
                let (err, iters, _, _) = compare(&p, 8)?;
                // Eigenvalues converge as the square of the residual: tol² · ‖H‖ is far
                // below these bounds (H's norm is a few Ry).
                let bound = if dtype == DataType::ComplexFloat {
                    2e-4
                } else {
                    1e-9
                };
                assert!(
                    err <= bound,
                    "{} {dtype}: max |Δλ| {err:e} > {bound:e} after {iters} iterations",
                    p.name
                );
            }
        }
        Ok(())
    }

    #[test]
    fn davidson_matches_dense_eigh_for_every_material_and_both_dtypes() -> Result<()> {
        materials_on(DeviceType::Cpu)
    }

    #[test]
    fn davidson_matches_dense_eigh_for_a_random_hermitian_matrix_of_order_2000() -> Result<()> {
        let p = random_problem(2000, DataType::ComplexDouble, DeviceType::Cpu)?;
        let (err, iters, _, _) = compare(&p, 8)?;
        assert!(err <= 1e-9, "max |Δλ| {err:e} after {iters} iterations");
        Ok(())
    }

    #[test]
    fn davidson_runs_unchanged_on_the_gpu() -> Result<()> {
        if !ctensor::gpu_available() {
            println!("SKIP: davidson_runs_unchanged_on_the_gpu: no usable GPU");
            return Ok(());
        }
        materials_on(DeviceType::Gpu)?;
        let p = random_problem(2000, DataType::ComplexDouble, DeviceType::Gpu)?;
        let (err, _, _, _) = compare(&p, 8)?;
        assert!(err <= 1e-9, "GPU random n = 2000: max |Δλ| {err:e}");
        Ok(())
    }
}
