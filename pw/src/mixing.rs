//! Pulay (DIIS) mixing of the density with a Kerker preconditioner (Pulay, Chem. Phys.
//! Lett. 73, 393 (1980); Kerker, PRB 23, 3082 (1981)).
//!
//! The history is kept in reciprocal space on half of the density sphere
//! (`|G|² ≤ 8·ecut`, the only components a density made from the bands has): one
//! complex value for each pair ±G, the other half being its conjugate (ρ is real).
//! That is about a quarter of the box's points as complex numbers, half the memory of
//! the same history in real space (a 64-atom cell's 72³ grid: 1.5 MB per stored array
//! instead of 3 MB). Components of an input outside the sphere, which a uniform start
//! and band densities do not have, are dropped. The overlaps of the residuals are the
//! reciprocal-space sums over the whole sphere (each stored G counted with its
//! partner), and the step is Σ c_k (ρ_in,k + β K ρ_res,k) with `K = 1/ε(G)` of a model
//! dielectric function ([`ModelDielectric`]): Kerker's `G² / (G² + q0²)` by default, for
//! metals and semiconductors, or ABINIT's bounded model for a finite dielectric constant
//! (insulators, molecules in vacuum: `ε = 1` is no preconditioning).

use crate::basis::DensityGrid;
use crate::error::Result;
use crate::potential::{to_real, to_reciprocal};
use ctensor::{c64, solve, Tensor};

/// A model of the dielectric function that preconditions the density residual, ABINIT's
/// (its `moddiel`, with `dielng = 1/q0` and `diemac = ε_M`): the residual's component at
/// G is multiplied by `1/ε(G) = (x + 1/ε_M)/(x + 1)`, `x = |G|²/q0²`. `ε_M = ∞`
/// (`epsilon: None`) is Kerker's metal, `G²/(G² + q0²)`; a finite `ε_M` bounds the damping
/// of long wavelengths at `1/ε_M`, and `ε_M = 1` (or `q0 = 0`) is no preconditioning.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelDielectric {
    /// The screening wave vector `q0` (bohr⁻¹); 0 turns preconditioning off.
    pub q0: f64,
    /// The macroscopic dielectric constant `ε_M ≥ 1`; `None` is infinite (Kerker).
    pub epsilon: Option<f64>,
}

impl ModelDielectric {
    /// `1/ε(G)` at `|G|² = g2`, and 0 at G = 0 (the electron count is kept).
    pub fn preconditioner(&self, g2: f64) -> f64 {
        if g2 <= 0.0 {
            return 0.0;
        }
        if self.q0 <= 0.0 {
            return 1.0;
        }
        match self.epsilon {
            // Kerker's form as it always was, so the default's arithmetic is unchanged.
            None => g2 / (g2 + self.q0 * self.q0),
            Some(eps) => {
                let x = g2 / (self.q0 * self.q0);
                (x + 1.0 / eps) / (x + 1.0)
            }
        }
    }
}

/// The mixer's state: the last few input densities and their residuals `ρ_out − ρ_in`,
/// on half of the density sphere.
pub struct Pulay {
    history: usize,
    beta: f64,
    /// Grid index of each stored G: G = 0 and one of each pair ±G of the sphere.
    index: Vec<usize>,
    /// Grid index of −G for each stored G (its own index for G = 0).
    partner: Vec<usize>,
    /// `1/ε(G)` per stored G (0 at G = 0: the electron count is kept).
    kerker: Vec<f64>,
    /// Points of the grid.
    npts: usize,
    inputs: Vec<Vec<c64>>,
    residuals: Vec<Vec<c64>>,
}

impl Pulay {
    /// A mixer keeping `history` steps, mixing `beta` of the residual preconditioned by
    /// `model`, on the density sphere of `dg`.
    pub fn new(history: usize, beta: f64, model: ModelDielectric, dg: &DensityGrid) -> Pulay {
        let [n1, n2, n3] = dg.grid.n;
        let wrap = |m: i64, n: usize| m.rem_euclid(n as i64) as usize;
        let (mut index, mut partner, mut kerker) = (Vec::new(), Vec::new(), Vec::new());
        for (i, (m, &g2)) in dg.grid.frequency_iter().zip(&dg.g2).enumerate() {
            if !(dg.in_sphere[i] || g2 == 0.0) {
                continue;
            }
            let j = (wrap(-m[0], n1) * n2 + wrap(-m[1], n2)) * n3 + wrap(-m[2], n3);
            if i <= j {
                index.push(i);
                partner.push(j);
                kerker.push(model.preconditioner(g2));
            }
        }
        Pulay {
            history: history.max(1),
            beta,
            index,
            partner,
            kerker,
            npts: dg.grid.len(),
            inputs: Vec::new(),
            residuals: Vec::new(),
        }
    }

    /// The next input density from the last input `rho_in` and output `rho_out` (both
    /// `ρ(r)` on the grid of `dg`): the combination of the stored steps whose residual is
    /// smallest (Σ c_i = 1), plus `beta` times its preconditioned residual.
    pub fn next(&mut self, dg: &DensityGrid, rho_in: &[f64], rho_out: &[f64]) -> Result<Vec<f64>> {
        let (gi, go) = (to_reciprocal(dg, rho_in)?, to_reciprocal(dg, rho_out)?);
        to_real(dg, &self.next_reciprocal(&gi, &go)?)
    }

    /// [`next`](Self::next) in reciprocal space: `rho_in_g` and `rho_out_g` are the
    /// transforms (`ρ(G)`, the whole box in the grid's order) of the last input and
    /// output, and the result is the next input's, zero outside the density sphere. A
    /// caller that has the transforms saves [`next`](Self::next)'s three.
    pub fn next_reciprocal(&mut self, rho_in_g: &[c64], rho_out_g: &[c64]) -> Result<Vec<c64>> {
        if rho_in_g.len() != self.npts || rho_out_g.len() != self.npts {
            return Err(ctensor::Error::InvalidArgument {
                op: "Pulay::next_reciprocal",
                expected: format!("two transforms of {} grid points", self.npts),
                given: format!("{} and {}", rho_in_g.len(), rho_out_g.len()),
            }
            .into());
        }
        let (gi, go) = (rho_in_g, rho_out_g);
        let input = self.index.iter().map(|&i| gi[i]);
        let residual = self.index.iter().map(|&i| go[i] - gi[i]);
        if self.inputs.len() == self.history {
            // The oldest step's arrays hold the new one: no allocation once full.
            let (mut old_in, mut old_res) = (self.inputs.remove(0), self.residuals.remove(0));
            old_in.iter_mut().zip(input).for_each(|(o, v)| *o = v);
            old_res.iter_mut().zip(residual).for_each(|(o, v)| *o = v);
            self.inputs.push(old_in);
            self.residuals.push(old_res);
        } else {
            self.inputs.push(input.collect());
            self.residuals.push(residual.collect());
        }
        // Each stored G stands for itself and −G: weight 2, but 1 for G = 0.
        let weight: Vec<f64> = self
            .index
            .iter()
            .zip(&self.partner)
            .map(|(i, j)| if i == j { 1.0 } else { 2.0 })
            .collect();
        let m = self.inputs.len();
        let mut a = vec![0.0; m * m];
        for i in 0..m {
            for j in 0..=i {
                let dot: f64 = self.residuals[i]
                    .iter()
                    .zip(&self.residuals[j])
                    .zip(&weight)
                    .map(|((x, y), w)| w * (x.conj() * y).re)
                    .sum();
                a[i * m + j] = dot;
                a[j * m + i] = dot;
            }
        }
        let c = coefficients(a, m)?;
        let mut full = vec![c64::new(0.0, 0.0); self.npts];
        for (k, ck) in c.iter().enumerate() {
            for (p, (input, res)) in self.inputs[k].iter().zip(&self.residuals[k]).enumerate() {
                full[self.index[p]] += (input + res * (self.beta * self.kerker[p])) * ck;
            }
        }
        for (&i, &j) in self.index.iter().zip(&self.partner) {
            if i != j {
                full[j] = full[i].conj();
            }
        }
        Ok(full)
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

    /// A random real density on the grid of `dg` made of components in the density
    /// sphere and G = 0 only (a density made from bands), with `count` as its sum.
    fn band_limited(dg: &DensityGrid, seed: u64, count: Option<f64>) -> Result<Vec<f64>> {
        let n = dg.grid.len();
        let raw = Tensor::rand(
            ctensor::DataType::Double,
            ctensor::DeviceType::Cpu,
            &[n],
            seed,
        )?
        .to_vec::<f64>()?;
        let mut g = to_reciprocal(dg, &raw)?;
        for (i, x) in g.iter_mut().enumerate() {
            if !(dg.in_sphere[i] || dg.g2[i] == 0.0) {
                *x = c64::new(0.0, 0.0);
            }
        }
        if let Some(count) = count {
            g[0] = c64::new(count / n as f64, 0.0);
        }
        to_real(dg, &g)
    }

    /// Seven steps with a history of three (so the oldest steps are dropped and their
    /// arrays reused), on densities with components in the density sphere only: each
    /// step equals the reciprocal-space formula over the whole box, and the electron
    /// count of the mixed density is the inputs' (Kerker's factor is 0 at G = 0). The
    /// history holds one value per pair ±G of the sphere.
    #[test]
    fn the_half_sphere_history_gives_the_reciprocal_space_pulay_step() -> Result<()> {
        let crystal = silicon(10.26);
        let grid = FftGrid::for_cutoff(&crystal, 10.0);
        let dg = DensityGrid::new(&crystal, grid, 10.0);
        let (beta, q0) = (0.7, 0.8);
        let kerker: Vec<f64> = dg
            .g2
            .iter()
            .map(|&g| if g > 0.0 { g / (g + q0 * q0) } else { 0.0 })
            .collect();
        let kerker_model = ModelDielectric { q0, epsilon: None };
        let mut mixer = Pulay::new(3, beta, kerker_model, &dg);
        let sphere = dg.in_sphere.iter().filter(|&&b| b).count();
        assert_eq!(
            2 * mixer.index.len(),
            sphere + 2,
            "G = 0 and one of each ±G"
        );
        let mut reference: Vec<(Vec<c64>, Vec<c64>)> = Vec::new();
        let electrons = |rho: &[f64]| rho.iter().sum::<f64>();
        let mut rho_in = band_limited(&dg, 1, None)?;
        let count = electrons(&rho_in);
        for step in 0..7u64 {
            // Outputs whose electron count is off (a G = 0 residual, which each stored
            // G's partner must not count twice); the mixed count stays the inputs'.
            let off = 1.0 + 0.05 * step as f64;
            let rho_out = band_limited(&dg, 10 + step, Some(count * off))?;
            let next = mixer.next(&dg, &rho_in, &rho_out)?;
            assert!(mixer.inputs.iter().all(|v| v.len() == mixer.index.len()));
            let (gi, go) = (to_reciprocal(&dg, &rho_in)?, to_reciprocal(&dg, &rho_out)?);
            let res = go.iter().zip(&gi).map(|(o, i)| o - i).collect();
            reference.push((gi, res));
            if reference.len() > 3 {
                reference.remove(0);
            }
            let want = to_real(&dg, &reciprocal_step(&reference, beta, &kerker)?)?;
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

    /// An input with components outside the density sphere mixes as its part inside the
    /// sphere: what lies outside is dropped, not carried.
    #[test]
    fn components_outside_the_density_sphere_are_dropped() -> Result<()> {
        let crystal = silicon(10.26);
        let dg = DensityGrid::new(&crystal, FftGrid::for_cutoff(&crystal, 10.0), 10.0);
        let n = dg.grid.len();
        let full = Tensor::rand(ctensor::DataType::Double, ctensor::DeviceType::Cpu, &[n], 3)?
            .to_vec::<f64>()?;
        let mut g = to_reciprocal(&dg, &full)?;
        let mut outside = 0.0f64;
        for (i, x) in g.iter_mut().enumerate() {
            if !(dg.in_sphere[i] || dg.g2[i] == 0.0) {
                outside = outside.max(x.norm());
                *x = c64::new(0.0, 0.0);
            }
        }
        assert!(outside > 1e-4, "the random input has components outside");
        let inside = to_real(&dg, &g)?;
        let rho_out = band_limited(&dg, 4, Some(full.iter().sum()))?;
        let model = ModelDielectric {
            q0: 0.8,
            epsilon: None,
        };
        let a = Pulay::new(2, 0.5, model, &dg).next(&dg, &full, &rho_out)?;
        let b = Pulay::new(2, 0.5, model, &dg).next(&dg, &inside, &rho_out)?;
        for (p, (x, y)) in a.iter().zip(&b).enumerate() {
            assert!((x - y).abs() <= 1e-13, "[{p}]: {x} vs {y}");
        }
        // The reciprocal-space entry gives the transform of the same step, and refuses
        // transforms of another grid's size.
        let mut mixer = Pulay::new(2, 0.5, model, &dg);
        let go = to_reciprocal(&dg, &rho_out)?;
        let c = mixer.next_reciprocal(&to_reciprocal(&dg, &full)?, &go)?;
        let ga = to_reciprocal(&dg, &a)?;
        for (p, (x, y)) in c.iter().zip(&ga).enumerate() {
            assert!((x - y).norm() <= 1e-15, "[{p}]: {x} vs {y}");
        }
        let e = mixer.next_reciprocal(&go[1..], &go).unwrap_err();
        assert!(
            e.to_string().contains(&format!("{} and {}", n - 1, n)),
            "{e}"
        );
        Ok(())
    }

    /// The model against its closed forms: Kerker for `ε_M = ∞`, the same function for a
    /// huge finite `ε_M`, the bound `1/ε_M` at long wavelength, 1 (no preconditioning)
    /// for `ε_M = 1` or `q0 = 0`, and ABINIT's factor `(L²G² + 1/ε_M)/(L²G² + 1)`
    /// (`L = dielng = 1/q0`) at a few points.
    #[test]
    fn the_model_dielectric_is_kerker_bounded_by_the_dielectric_constant() {
        let q0 = 0.8;
        let kerker = ModelDielectric { q0, epsilon: None };
        for g2 in [1e-6, 0.01, 0.64, 1.0, 25.0, 1e4] {
            assert_eq!(kerker.preconditioner(g2), g2 / (g2 + q0 * q0));
            let huge = ModelDielectric {
                q0,
                epsilon: Some(1e12),
            };
            assert!((huge.preconditioner(g2) - kerker.preconditioner(g2)).abs() < 1e-9);
            for eps in [1.5, 2.0, 12.0] {
                let m = ModelDielectric {
                    q0,
                    epsilon: Some(eps),
                };
                let l2g2 = g2 / (q0 * q0);
                let want = (l2g2 + 1.0 / eps) / (l2g2 + 1.0);
                assert!((m.preconditioner(g2) - want).abs() < 1e-14, "{eps} {g2}");
                assert!(m.preconditioner(g2) >= 1.0 / eps - 1e-15);
                assert!(m.preconditioner(g2) >= kerker.preconditioner(g2));
            }
            let none = ModelDielectric {
                q0,
                epsilon: Some(1.0),
            };
            assert_eq!(none.preconditioner(g2), 1.0);
            let off = ModelDielectric {
                q0: 0.0,
                epsilon: Some(12.0),
            };
            assert_eq!(off.preconditioner(g2), 1.0);
        }
        // The long-wavelength limit is 1/ε_M, and G = 0 is never mixed.
        let m = ModelDielectric {
            q0,
            epsilon: Some(12.0),
        };
        assert!((m.preconditioner(1e-12) - 1.0 / 12.0).abs() < 1e-10);
        assert_eq!(m.preconditioner(0.0), 0.0);
        assert_eq!(kerker.preconditioner(0.0), 0.0);
    }
}
