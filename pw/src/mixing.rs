//! Pulay (DIIS) mixing of the density in reciprocal space with a Kerker preconditioner
//! (Pulay, Chem. Phys. Lett. 73, 393 (1980); Kerker, PRB 23, 3082 (1981)).

use crate::error::Result;
use ctensor::{c64, solve, Tensor};

/// The mixer's state: the last few input densities and their residuals `ρ_out − ρ_in`.
pub struct Pulay {
    history: usize,
    beta: f64,
    /// `G² / (G² + q0²)` per grid point (0 at G = 0: the electron count is kept).
    kerker: Vec<f64>,
    inputs: Vec<Vec<c64>>,
    residuals: Vec<Vec<c64>>,
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
    /// `ρ(G)` on the grid): the combination of the stored steps whose residual is
    /// smallest (Σ c_i = 1), plus `beta` times its Kerker-preconditioned residual.
    pub fn next(&mut self, rho_in: &[c64], rho_out: &[c64]) -> Result<Vec<c64>> {
        let r: Vec<c64> = rho_out.iter().zip(rho_in).map(|(o, i)| o - i).collect();
        self.inputs.push(rho_in.to_vec());
        self.residuals.push(r);
        if self.inputs.len() > self.history {
            self.inputs.remove(0);
            self.residuals.remove(0);
        }
        let m = self.inputs.len();
        let mut a = vec![0.0; m * m];
        for i in 0..m {
            for j in 0..m {
                a[i * m + j] = self.residuals[i]
                    .iter()
                    .zip(&self.residuals[j])
                    .map(|(x, y)| (x.conj() * y).re)
                    .sum();
            }
        }
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
        let c: Vec<f64> = x.iter().map(|v| v / s).collect();
        let n = rho_in.len();
        let mut out = vec![c64::new(0.0, 0.0); n];
        for (k, ck) in c.iter().enumerate() {
            let (input, residual) = (&self.inputs[k], &self.residuals[k]);
            for (g, o) in out.iter_mut().enumerate() {
                *o += (input[g] + residual[g] * (self.beta * self.kerker[g])) * ck;
            }
        }
        Ok(out)
    }
}
