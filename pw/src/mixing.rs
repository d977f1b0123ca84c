//! Pulay (DIIS) mixing of the density with a Kerker preconditioner (Pulay, Chem. Phys.
//! Lett. 73, 393 (1980); Kerker, PRB 23, 3082 (1981)).
//!
//! The history is kept in real space, one real value per grid point for each stored
//! density and residual: half the memory of the same history in reciprocal space (a
//! 64-atom cell's 72³ grid holds 9 steps in 54 MB instead of 107 MB). The step is the
//! reciprocal-space one: the residuals' overlaps are the same sums by Parseval (up to a
//! constant factor, which the normalised coefficients do not see), and the Kerker
//! factor is applied to the one combined residual, by one FFT pair.

use crate::basis::DensityGrid;
use crate::error::Result;
use crate::potential::{to_real, to_reciprocal};
use ctensor::{solve, Tensor};

/// The mixer's state: the last few input densities and their residuals `ρ_out − ρ_in`,
/// on the real-space grid.
pub struct Pulay {
    history: usize,
    beta: f64,
    /// `G² / (G² + q0²)` per grid point (0 at G = 0: the electron count is kept).
    kerker: Vec<f64>,
    inputs: Vec<Vec<f64>>,
    residuals: Vec<Vec<f64>>,
}

impl Pulay {
    /// A mixer keeping `history` steps, mixing `beta` of the preconditioned residual, with
    /// Kerker wave vector `q0` (bohr⁻¹) over the grid's `|G|²` values `g2`.
    pub fn new(history: usize, beta: f64, q0: f64, g2: &[f64]) -> Pulay {
        let kerker = g2
            .iter()
            .map(|&g| if g > 0.0 { g / (g + q0 * q0) } else { 0.0 })
            .collect();
        Pulay {
            history: history.max(1),
            beta,
            kerker,
            inputs: Vec::new(),
            residuals: Vec::new(),
        }
    }

    /// The next input density from the last input `rho_in` and output `rho_out` (both
    /// `ρ(r)` on the grid of `dg`): the combination of the stored steps whose residual is
    /// smallest (Σ c_i = 1), plus `beta` times its Kerker-preconditioned residual.
    pub fn next(&mut self, dg: &DensityGrid, rho_in: &[f64], rho_out: &[f64]) -> Result<Vec<f64>> {
        let r: Vec<f64> = rho_out.iter().zip(rho_in).map(|(o, i)| o - i).collect();
        if self.inputs.len() == self.history {
            // The oldest step's arrays hold the new one: no allocation once full.
            let (mut input, mut residual) = (self.inputs.remove(0), self.residuals.remove(0));
            input.copy_from_slice(rho_in);
            residual.copy_from_slice(&r);
            self.inputs.push(input);
            self.residuals.push(residual);
        } else {
            self.inputs.push(rho_in.to_vec());
            self.residuals.push(r);
        }
        let m = self.inputs.len();
        let mut a = vec![0.0; m * m];
        for i in 0..m {
            for j in 0..=i {
                let dot: f64 = self.residuals[i]
                    .iter()
                    .zip(&self.residuals[j])
                    .map(|(x, y)| x * y)
                    .sum();
                a[i * m + j] = dot;
                a[j * m + i] = dot;
            }
        }
        let c = coefficients(a, m)?;
        let n = rho_in.len();
        let (mut out, mut residual) = (vec![0.0; n], vec![0.0; n]);
        for (k, ck) in c.iter().enumerate() {
            for ((o, q), (i, r)) in out
                .iter_mut()
                .zip(residual.iter_mut())
                .zip(self.inputs[k].iter().zip(&self.residuals[k]))
            {
                *o += ck * i;
                *q += ck * r;
            }
        }
        let mut g = to_reciprocal(dg, &residual)?;
        for (x, k) in g.iter_mut().zip(&self.kerker) {
            *x *= self.beta * k;
        }
        for (o, p) in out.iter_mut().zip(to_real(dg, &g)?) {
            *o += p;
        }
        Ok(out)
    }
}

/// The Pulay coefficients for the `m × m` overlaps `a` of the residuals: the `c`
/// minimising `‖Σ c_i R_i‖` with `Σ c_i = 1`, from `A x = 1` normalised.
fn coefficients(mut a: Vec<f64>, m: usize) -> Result<Vec<f64>> {
    // A tiny ridge keeps the system solvable when two residuals are nearly equal.
    let trace: f64 = (0..m)
        .map(|i| a[i * m + i])
        .sum::<f64>()
        .max(f64::MIN_POSITIVE);
    for i in 0..m {
        a[i * m + i] += 1e-12 * trace;
    }
    let x = solve(
        &Tensor::from_slice(&a, &[m, m])?,
        &Tensor::ones(ctensor::DataType::Double, ctensor::DeviceType::Cpu, &[m])?,
    )?
    .to_vec::<f64>()?;
    let s: f64 = x.iter().sum();
    Ok(x.iter().map(|v| v / s).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::basis::FftGrid;
    use crate::crystal::tests::silicon;
    use ctensor::c64;

    /// The Pulay step as it is written in reciprocal space, for reference: the overlaps
    /// of the residuals ρ_out(G) − ρ_in(G), and Σ c_k (ρ_in,k + β K ρ_res,k)(G) (the
    /// coefficients from the overlaps by the same small solve).
    fn reciprocal_step(
        history: &[(Vec<c64>, Vec<c64>)],
        beta: f64,
        kerker: &[f64],
    ) -> Result<Vec<c64>> {
        let m = history.len();
        let mut a = vec![0.0; m * m];
        for i in 0..m {
            for j in 0..m {
                a[i * m + j] = history[i]
                    .1
                    .iter()
                    .zip(&history[j].1)
                    .map(|(x, y)| (x.conj() * y).re)
                    .sum();
            }
        }
        let c = coefficients(a, m)?;
        let mut out = vec![c64::new(0.0, 0.0); kerker.len()];
        for (k, (input, residual)) in history.iter().enumerate() {
            for (g, o) in out.iter_mut().enumerate() {
                *o += (input[g] + residual[g] * (beta * kerker[g])) * c[k];
            }
        }
        Ok(out)
    }

    /// Seven steps with a history of three (so the oldest steps are dropped and their
    /// arrays reused): each real-space step equals the reciprocal-space formula, and the
    /// electron count of the mixed density is the inputs' (Kerker's factor is 0 at G = 0).
    #[test]
    fn the_real_space_history_gives_the_reciprocal_space_pulay_step() -> Result<()> {
        let crystal = silicon(10.26);
        let grid = FftGrid::for_cutoff(&crystal, 10.0);
        let dg = DensityGrid::new(&crystal, grid, 10.0);
        let n = grid.len();
        let (beta, q0) = (0.7, 0.8);
        let mut mixer = Pulay::new(3, beta, q0, &dg.g2);
        let mut reference: Vec<(Vec<c64>, Vec<c64>)> = Vec::new();
        let random = |seed: u64| -> Result<Vec<f64>> {
            Ok(Tensor::rand(
                ctensor::DataType::Double,
                ctensor::DeviceType::Cpu,
                &[n],
                seed,
            )?
            .to_vec::<f64>()?)
        };
        let mut rho_in = random(1)?;
        let electrons = |rho: &[f64]| rho.iter().sum::<f64>();
        let count = electrons(&rho_in);
        for step in 0..7u64 {
            // An output with the input's electron count.
            let mut rho_out = random(10 + step)?;
            let shift = (count - electrons(&rho_out)) / n as f64;
            rho_out.iter_mut().for_each(|x| *x += shift);
            let next = mixer.next(&dg, &rho_in, &rho_out)?;
            let (gi, go) = (to_reciprocal(&dg, &rho_in)?, to_reciprocal(&dg, &rho_out)?);
            let res = go.iter().zip(&gi).map(|(o, i)| o - i).collect();
            reference.push((gi, res));
            if reference.len() > 3 {
                reference.remove(0);
            }
            let want = to_real(&dg, &reciprocal_step(&reference, beta, &mixer.kerker)?)?;
            let scale = want.iter().fold(0.0f64, |a, x| a.max(x.abs()));
            for (p, (g, w)) in next.iter().zip(&want).enumerate() {
                assert!(
                    (g - w).abs() <= 1e-12 * scale,
                    "step {step} [{p}]: {g} vs {w}"
                );
            }
            assert!(
                (electrons(&next) - count).abs() <= 1e-10 * count,
                "step {step}"
            );
            rho_in = next;
        }
        Ok(())
    }
}
