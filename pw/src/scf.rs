//! The self-consistent field loop: for each k-point a block eigensolver on `H[ρ_in]`,
//! the output density, the energy, and Pulay–Kerker mixing, until the energy and the
//! density stop changing.

use crate::basis::{DensityGrid, FftGrid, Sphere};
use crate::crystal::{Crystal, Mat3, Vec3};
use crate::error::{input, Result};
use crate::ewald::{ewald_energy, ewald_forces, ewald_stress};
use crate::hamiltonian::{KOperator, PROJECTOR_CACHE_BYTES};
use crate::kpoints::KPoint;
use crate::mixing::{ModelDielectric, Pulay};
use crate::potential::{
    density_energies, density_stress, density_terms, density_terms_reciprocal, grid_tensor,
    local_forces, local_potential_g, to_real, to_reciprocal,
};
use crate::psp::Hgh;
use crate::share::KShare;
use crate::symmetry::{symmetrize, symmetrize_tensor, symmetrize_vectors, SymOp};
use crate::xc::Xc;
use ctensor::kernels::parallel::map_batch;
use ctensor::solvers::{davidson_into, diagonal_preconditioner_in_place, lobpcg, SolverOptions};
use ctensor::{DeviceType, Tensor};
use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use std::time::Instant;

/// Which block eigensolver the SCF runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Eigensolver {
    /// Block Davidson ([`ctensor::solvers::davidson`]).
    #[default]
    Davidson,
    /// LOBPCG ([`ctensor::solvers::lobpcg`]).
    Lobpcg,
}

/// Davidson's default basis size in blocks of `nband` bands: 3 below 64 bands, 2 from
/// 64 on. Measured (one thread, this session's code): on Si 4×4×4 at 30 Ha (8 bands) 3
/// blocks took 1.77 s against 1.92 s with 2, and 7.8 s against 9.4 s on the 8-atom cell
/// (20 bands); on the 64-atom cell (132 bands) 2 blocks took 33 s against 41 s at 6 Ha
/// and the same 130 s at 15 Ha, with 100 MB less memory.
pub fn default_davidson_blocks(nband: usize) -> usize {
    if nband >= 64 {
        2
    } else {
        3
    }
}

/// SCF settings (all optional in the input file).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScfSettings {
    /// Step limit.
    pub max_steps: usize,
    /// Converged when |ΔE| between steps is below this (Ha) …
    pub energy_tol: f64,
    /// … and the density residual `‖ρ_out − ρ_in‖` (electrons, L2 over the cell) is below this.
    pub density_tol: f64,
    /// Pulay history length.
    pub history: usize,
    /// Fraction of the preconditioned residual mixed in.
    pub mixing_beta: f64,
    /// Kerker wave vector q0 (bohr⁻¹) of the mixer's preconditioner; 0 turns it off.
    pub kerker_q0: f64,
    /// The macroscopic dielectric constant of the preconditioner's model
    /// ([`crate::mixing::ModelDielectric`], ABINIT's `diemac`): absent is infinite
    /// (Kerker, for metals and semiconductors); a finite value (≥ 1) bounds the damping
    /// of long wavelengths, for insulators and molecules in vacuum (1: none).
    pub dielectric_constant: Option<f64>,
    /// The eigensolver.
    pub eigensolver: Eigensolver,
    /// The tightest eigensolver residual asked for (Ha).
    pub eig_tol: f64,
    /// Eigensolver iterations per k-point and SCF step at most (the first step: 8).
    pub max_eig_iter: usize,
    /// Extra bands solved above `nband` without being required to converge.
    pub buffer_bands: usize,
    /// Davidson's basis holds at most this many blocks of the bands solved before it
    /// restarts from the Ritz vectors (at least 2; Quantum ESPRESSO's
    /// `diago_david_ndim`). Each block is one `[npw, nband]` array for the basis and one
    /// for H times it: the largest memory of a large cell. By default
    /// [`default_davidson_blocks`].
    pub davidson_blocks: Option<usize>,
    /// At k = 0, solve for real bands in a real basis of `npw` coordinates
    /// ([`crate::gamma`]; ABINIT's `istwfk 2`, Quantum ESPRESSO's `gamma_only`): half the
    /// memory of complex bands, a quarter of the subspace work and half the transforms.
    /// The numbers are the same (ABINIT does the same by default).
    pub real_at_gamma: bool,
    /// Compute the forces on the atoms once the SCF has converged (Ewald, local and
    /// nonlocal pseudopotential; [`ScfOutcome::forces`]).
    pub forces: bool,
    /// Compute the stress tensor once the SCF has converged ([`ScfOutcome::stress`]).
    pub stress: bool,
}

impl Default for ScfSettings {
    fn default() -> Self {
        ScfSettings {
            max_steps: 60,
            energy_tol: 1e-10,
            density_tol: 1e-7,
            history: 8,
            mixing_beta: 1.0,
            kerker_q0: 0.8,
            dielectric_constant: None,
            eigensolver: Eigensolver::Davidson,
            eig_tol: 1e-9,
            max_eig_iter: 40,
            buffer_bands: 0,
            davidson_blocks: None,
            real_at_gamma: true,
            forces: true,
            stress: true,
        }
    }
}

/// The seven energy terms (Ha), ABINIT's names in the comments.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Energies {
    /// "Kinetic energy".
    pub kinetic: f64,
    /// "Hartree energy".
    pub hartree: f64,
    /// "XC energy".
    pub xc: f64,
    /// "Ewald energy".
    pub ewald: f64,
    /// "PspCore energy": (N_el/Ω) Σ_a α_a.
    pub psp_core: f64,
    /// "Loc. psp. energy".
    pub local_psp: f64,
    /// "NL psp energy".
    pub nonlocal_psp: f64,
}

impl Energies {
    /// Their sum, the total energy.
    pub fn total(&self) -> f64 {
        self.kinetic
            + self.hartree
            + self.xc
            + self.ewald
            + self.psp_core
            + self.local_psp
            + self.nonlocal_psp
    }
}

/// One SCF step, as printed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Step {
    /// Total energy after the step (Ha).
    pub energy_ha: f64,
    /// Change from the previous step (Ha).
    pub de_ha: f64,
    /// `‖ρ_out − ρ_in‖`.
    pub residual: f64,
    /// The largest eigensolver residual of the step.
    pub eig_residual: f64,
    /// Seconds the step took.
    pub seconds: f64,
}

/// A k-point's converged bands.
#[derive(Clone, Debug)]
pub struct KBands {
    /// The k-point and its weight.
    pub kpoint: KPoint,
    /// Plane waves.
    pub npw: usize,
    /// Eigenvalues (Ha), ascending, ABINIT's G = 0 convention (V_loc(0) = V_H(0) = 0).
    pub eigenvalues: Vec<f64>,
}

/// What an SCF run produced.
pub struct ScfOutcome {
    /// The energy terms of the last step.
    pub energies: Energies,
    /// Bands per k-point.
    pub bands: Vec<KBands>,
    /// Every step.
    pub steps: Vec<Step>,
    /// Whether both tolerances were met.
    pub converged: bool,
    /// Electrons per cell.
    pub nelectrons: f64,
    /// Where the time went.
    pub timings: Timings,
    /// The local potential V_loc + V_H + V_xc (Ha) of the last step, on the FFT grid.
    pub potential: Vec<f64>,
    /// The forces on the atoms (Ha/bohr, Cartesian, in the order of the crystal's
    /// atoms), when the SCF converged and the settings asked for them: the Hellmann–
    /// Feynman forces of the converged bands and output density, symmetrised with the
    /// crystal's operations, their mean (zero up to numerical noise) removed as ABINIT
    /// removes it.
    pub forces: Option<Vec<Vec3>>,
    /// The mean force removed from [`forces`](Self::forces) (Ha/bohr; ABINIT's "drift"):
    /// a measure of their numerical error.
    pub force_drift: Option<Vec3>,
    /// The stress tensor `σ_αβ = (1/Ω) ∂E/∂ε_αβ` (Ha/bohr³, Cartesian; negative under
    /// compression, the pressure is `−tr σ / 3`), when the SCF converged and the settings
    /// asked for it, symmetrised with the crystal's operations. The derivative keeps the
    /// plane waves of the basis (their Miller indices) as the cell is strained, as
    /// ABINIT's stress does: no correction for the cutoff sphere's change.
    pub stress: Option<Mat3>,
}

/// Where an SCF run's time went (seconds; the k-point parts summed over the threads that
/// ran them, so on several threads they add up to more than the wall time).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Timings {
    /// The local potential applied through the sphere ↔ box FFTs.
    pub fft_local_potential: f64,
    /// The kinetic term and the nonlocal projector gemms.
    pub nonlocal_gemms: f64,
    /// The rest of the eigensolver: Rayleigh–Ritz, orthogonalisation, residuals,
    /// preconditioner.
    pub eigensolver_subspace: f64,
    /// Densities from the bands (FFTs), kinetic and nonlocal energies.
    pub density: f64,
    /// Hartree and XC potentials and energies (libxc, FFTs of the density).
    pub hartree_xc: f64,
    /// Symmetrisation and Pulay mixing.
    pub symmetry_mixing: f64,
    /// The forces and the stress after the SCF (wall time; not part of `scf_wall`).
    #[serde(default)]
    pub forces_and_stress: f64,
    /// The whole SCF (wall time).
    pub scf_wall: f64,
}

/// A calculation, checked and set up.
pub struct Calculation {
    /// The crystal.
    pub crystal: Crystal,
    /// Pseudopotentials by species.
    pub psps: Vec<Hgh>,
    /// Cutoff (Ha).
    pub ecut: f64,
    /// Bands per k-point.
    pub nband: usize,
    /// The (reduced) k-points.
    pub kpoints: Vec<KPoint>,
    /// Exchange–correlation.
    pub xc: Xc,
    /// The FFT grid.
    pub grid: FftGrid,
    /// SCF settings.
    pub settings: ScfSettings,
    /// Where the bands live.
    pub device: DeviceType,
    /// The space-group operations the k-points were reduced with (empty: none; the
    /// density is then not symmetrised).
    pub symmetry: Vec<SymOp>,
}

impl Calculation {
    /// Electrons per cell (Σ Z_ion over atoms).
    pub fn nelectrons(&self) -> f64 {
        self.crystal
            .atoms
            .iter()
            .map(|a| self.psps[a.species].zion)
            .sum()
    }

    /// Occupied bands (closed shell: N_el / 2), after checking the electron count.
    pub fn occupied(&self) -> Result<usize> {
        let ne = self.nelectrons();
        if ne.fract() != 0.0 || !(ne as usize).is_multiple_of(2) {
            return Err(input(
                "atoms",
                "an even number of valence electrons (closed shells; no smearing or spin yet)",
                format!("{ne}"),
            ));
        }
        let nocc = ne as usize / 2;
        if nocc > self.nband {
            return Err(input(
                "nband",
                format!("at least {nocc} bands for {ne} electrons"),
                self.nband.to_string(),
            ));
        }
        Ok(nocc)
    }

    /// Runs the SCF in this process, calling `log` after each step.
    pub fn run(&self, log: &mut dyn FnMut(&Step)) -> Result<ScfOutcome> {
        self.run_shared(&KShare::Alone, log)
    }

    /// Runs the SCF with the k-points shared as `share` says (every rank calls it and
    /// every rank gets the same outcome; `log` is called on every rank).
    pub fn run_shared(&self, share: &KShare, log: &mut dyn FnMut(&Step)) -> Result<ScfOutcome> {
        let s = &self.settings;
        if !(s.energy_tol > 0.0
            && s.density_tol > 0.0
            && s.eig_tol > 0.0
            && s.mixing_beta > 0.0
            && s.kerker_q0 >= 0.0
            && s.dielectric_constant.is_none_or(|e| e >= 1.0)
            && s.max_steps > 0
            && s.davidson_blocks.is_none_or(|b| b >= 2))
        {
            return Err(input(
                "scf",
                "positive tolerances, mixing_beta > 0, kerker_q0 >= 0, dielectric_constant \
                 >= 1, max_steps >= 1, davidson_blocks >= 2",
                format!("{s:?}"),
            ));
        }
        let nocc = self.occupied()?;
        let (crystal, dev) = (&self.crystal, self.device);
        let omega = crystal.volume();
        let dg = DensityGrid::new(crystal, self.grid, self.ecut);
        let npts = self.grid.len();
        let vloc_r = to_real(&dg, &local_potential_g(crystal, &self.psps, &dg))?;
        let z: Vec<f64> = crystal
            .atoms
            .iter()
            .map(|a| self.psps[a.species].zion)
            .collect();
        let ne = self.nelectrons();
        let mut energies = Energies {
            ewald: ewald_energy(crystal, &z)?,
            psp_core: ne / omega
                * crystal
                    .atoms
                    .iter()
                    .map(|a| self.psps[a.species].alpha())
                    .sum::<f64>(),
            ..Energies::default()
        };
        let spheres: Vec<Sphere> = self
            .kpoints
            .iter()
            .map(|k| Sphere::new(crystal, k.kred, self.ecut, &self.grid))
            .collect::<Result<_>>()?;
        for (sp, k) in spheres.iter().zip(&self.kpoints) {
            if sp.len() < self.nband {
                return Err(input(
                    "nband",
                    format!(
                        "at most {} bands (the plane waves at k = {:?})",
                        sp.len(),
                        k.kred
                    ),
                    self.nband.to_string(),
                ));
            }
        }
        let nk = self.kpoints.len();
        let mine = share.range(nk);
        let mut ops: Vec<KOperator> = share.agree(
            spheres[mine.clone()]
                .iter()
                .map(|sp| {
                    KOperator::new(
                        crystal,
                        &self.psps,
                        sp.clone(),
                        self.grid,
                        dev,
                        s.real_at_gamma,
                    )
                })
                .collect::<Result<_>>(),
        )?;
        // Few atoms and k-points: each k-point's projectors are formed once and kept.
        if ops.iter().map(KOperator::projector_bytes).sum::<usize>() <= PROJECTOR_CACHE_BYTES {
            share.agree(ops.iter_mut().try_for_each(KOperator::keep_projectors))?;
        }
        // Buffer bands above the wanted ones (none by default: measured on Si, 1–4 of
        // them cost more than they saved): solved with them, not required to converge.
        let min_npw = spheres.iter().map(|sp| sp.len()).min().unwrap_or(0);
        let nsolve = (self.nband + s.buffer_bands).min(min_npw);
        // Start: a uniform density and random bands smoothed by 1/(1 + ½|k+G|²).
        let mut rho = vec![ne / omega; npts];
        // ρ_in(G) when the mixer made ρ_in (used at the start of the next step, before
        // the eigensolver, so it is never held beside the bands' work).
        let mut rho_g: Option<Vec<ctensor::c64>> = None;
        // Each k-point's latest bands, handed to its eigensolver as the start block and
        // replaced by what it returns: Davidson frees them once they are in its basis.
        let mut psi: Vec<Mutex<Option<Tensor>>> = ops
            .iter()
            .enumerate()
            .map(|(i, op)| -> Result<Mutex<Option<Tensor>>> {
                let r = Tensor::randn(
                    op.dtype(),
                    dev,
                    &[op.npw(), nsolve],
                    17 + (mine.start + i) as u64,
                )?;
                let start = r.div(&op.kinetic()?.add_scalar(1.0)?.unsqueeze(1)?)?;
                Ok(Mutex::new(Some(start)))
            })
            .collect::<Result<_>>()?;
        let mut eigenvalues: Vec<Vec<f64>> = vec![Vec::new(); ops.len()];
        let model = ModelDielectric {
            q0: s.kerker_q0,
            epsilon: s.dielectric_constant,
        };
        let mut mixer = Pulay::new(s.history, s.mixing_beta, model, &dg);
        let mut steps: Vec<Step> = Vec::new();
        let mut timings = Timings::default();
        let mut last_potential = Vec::new();
        let t_scf = Instant::now();
        let mut residual: f64 = 1.0;
        let mut converged = false;
        // The converged output density, for the forces and the stress.
        let mut final_rho: Option<(Vec<f64>, Vec<ctensor::c64>)> = None;
        let mut occ = vec![0.0; nsolve];
        occ[..nocc].fill(2.0);
        for step in 0..s.max_steps {
            let t0 = Instant::now();
            let th = Instant::now();
            // The mixer's output comes with its transform; the first density does not.
            let terms_in = match rho_g.take() {
                Some(g) => density_terms_reciprocal(crystal, &dg, &self.xc, &vloc_r, &rho, &g)?,
                None => density_terms(crystal, &dg, &self.xc, &vloc_r, &rho)?,
            };
            timings.hartree_xc += th.elapsed().as_secs_f64();
            let v_r = grid_tensor(&dg, &terms_in.v_total, dev)?;
            last_potential.clone_from(&terms_in.v_total);
            let tol = (0.05 * residual).clamp(s.eig_tol, 1e-2);
            // The k-points are independent: they run as a batch over ctensor's threads
            // (OpenBLAS single-threaded meanwhile), each returning its bands, its energy
            // terms and its density contribution.
            let occ_ref = &occ;
            let psi_ref = &psi;
            let v_ref = &v_r;
            let (nband, kpoints, solver) = (self.nband, &self.kpoints, s.eigensolver);
            let max_eig_iter = s.max_eig_iter;
            let blocks = s
                .davidson_blocks
                .unwrap_or_else(|| default_davidson_blocks(nsolve));
            let results = map_batch(ops.len(), |i| -> Result<KStep> {
                let op = &ops[i];
                let te = Instant::now();
                let mut opts = SolverOptions::new(nsolve);
                opts.nconv = nband;
                opts.tol = tol;
                opts.max_iter = if step == 0 { 8 } else { max_eig_iter };
                opts.max_basis = blocks.saturating_mul(nsolve);
                let h = |x: &Tensor, out: &mut Tensor| -> ctensor::Result<()> {
                    op.apply_into(v_ref, x, out).map_err(into_tensor_error)
                };
                let h_new = |x: &Tensor| -> ctensor::Result<Tensor> {
                    op.apply(v_ref, x).map_err(into_tensor_error)
                };
                let kin_diag = op.kinetic()?;
                let pre = diagonal_preconditioner_in_place(&kin_diag, 0.5);
                let x0 = psi_ref[i]
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .take()
                    .ok_or_else(|| ctensor::Error::Internal {
                        op: "scf",
                        what: format!("k-point {i} has no start bands"),
                    })?;
                let found = match solver {
                    Eigensolver::Davidson => davidson_into(h, pre, x0, opts)?,
                    Eigensolver::Lobpcg => lobpcg(h_new, pre, &x0, opts)?,
                };
                let t_eig = te.elapsed().as_secs_f64();
                let tr = Instant::now();
                let w = kpoints[mine.start + i].weight;
                let (t, e) = op.kinetic_and_nonlocal(&found.vectors, occ_ref)?;
                let f = vec![2.0 * w / omega; nocc];
                let dens = op
                    .density(&found.vectors.narrow(1, 0, nocc)?, &f)?
                    .reshape(&[-1])?
                    .to_vec::<f64>()?;
                Ok(KStep {
                    worst: found.residual_norms[..nband]
                        .iter()
                        .cloned()
                        .fold(0.0, f64::max),
                    values: found.values.to_vec::<f64>()?[..nband].to_vec(),
                    vectors: found.vectors,
                    kinetic: w * t,
                    nonlocal: w * e,
                    density: dens,
                    seconds: (t_eig, tr.elapsed().as_secs_f64()),
                })
            });
            let mut rho_out = vec![0.0; npts];
            let (mut kin, mut enl, mut worst) = (0.0, 0.0, 0.0f64);
            let results = share.agree(results.into_iter().collect::<Result<Vec<KStep>>>())?;
            for (i, r) in results.into_iter().enumerate() {
                worst = worst.max(r.worst);
                kin += r.kinetic;
                enl += r.nonlocal;
                for (x, d) in rho_out.iter_mut().zip(&r.density) {
                    *x += d;
                }
                *psi[i]
                    .get_mut()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(r.vectors);
                eigenvalues[i] = r.values;
                let (fft, nl) = ops[i].take_seconds();
                timings.fft_local_potential += fft;
                timings.nonlocal_gemms += nl;
                timings.eigensolver_subspace += r.seconds.0 - fft - nl;
                timings.density += r.seconds.1;
            }
            let mut sums = [kin, enl];
            share.sum(&mut rho_out)?;
            share.sum(&mut sums)?;
            let [kin, enl] = sums;
            let worst = share.max(worst)?;
            let tm = Instant::now();
            let rho_out_g = if self.symmetry.len() > 1 {
                let g = symmetrize(
                    &self.symmetry,
                    &dg,
                    8.0 * self.ecut,
                    &to_reciprocal(&dg, &rho_out)?,
                )?;
                rho_out = to_real(&dg, &g)?;
                g
            } else {
                to_reciprocal(&dg, &rho_out)?
            };
            timings.symmetry_mixing += tm.elapsed().as_secs_f64();
            let th = Instant::now();
            // The output density's energies only: its potential is never used.
            let terms = density_energies(crystal, &dg, &self.xc, &vloc_r, &rho_out, &rho_out_g)?;
            timings.hartree_xc += th.elapsed().as_secs_f64();
            energies.kinetic = kin;
            energies.nonlocal_psp = enl;
            energies.hartree = terms.hartree;
            energies.xc = terms.xc;
            energies.local_psp = terms.local;
            let e = energies.total();
            residual = (omega / npts as f64
                * rho_out
                    .iter()
                    .zip(&rho)
                    .map(|(o, i)| (o - i).powi(2))
                    .sum::<f64>())
            .sqrt();
            let de = steps.last().map_or(f64::INFINITY, |p| e - p.energy_ha);
            let st = Step {
                energy_ha: e,
                de_ha: de,
                residual,
                eig_residual: worst,
                seconds: t0.elapsed().as_secs_f64(),
            };
            log(&st);
            steps.push(st);
            if de.abs() < s.energy_tol && residual < s.density_tol && worst <= tol {
                converged = true;
                final_rho = Some((rho_out, rho_out_g));
                break;
            }
            let tm = Instant::now();
            let next_g = mixer.next_reciprocal(&to_reciprocal(&dg, &rho)?, &rho_out_g)?;
            drop(rho_out_g);
            rho = to_real(&dg, &next_g)?;
            rho_g = Some(next_g);
            timings.symmetry_mixing += tm.elapsed().as_secs_f64();
        }
        let mut all = vec![0.0; nk * self.nband];
        for (i, ev) in eigenvalues.iter().enumerate() {
            all[(mine.start + i) * self.nband..][..ev.len()].copy_from_slice(ev);
        }
        share.sum(&mut all)?;
        let scf_wall = t_scf.elapsed().as_secs_f64();
        let (mut forces, mut force_drift, mut stress) = (None, None, None);
        if let Some((rho_r, rho_g)) = final_rho {
            let tf = Instant::now();
            let mut bands = Bands {
                ops: &ops,
                psi: &mut psi,
                nocc,
            };
            if s.forces {
                let (f, drift) = self.forces(share, &mut bands, &dg, &rho_g, &z)?;
                forces = Some(f);
                force_drift = Some(drift);
            }
            if s.stress {
                let core = energies.psp_core;
                stress = Some(self.stress(share, &mut bands, &dg, (&rho_r, &rho_g), &z, core)?);
            }
            timings.forces_and_stress = tf.elapsed().as_secs_f64();
        }
        let bands = spheres
            .iter()
            .zip(&self.kpoints)
            .enumerate()
            .map(|(i, (sp, k))| KBands {
                kpoint: k.clone(),
                npw: sp.len(),
                eigenvalues: all[i * self.nband..(i + 1) * self.nband].to_vec(),
            })
            .collect();
        Ok(ScfOutcome {
            energies,
            bands,
            steps,
            converged,
            nelectrons: ne,
            potential: last_potential,
            forces,
            force_drift,
            stress,
            timings: Timings {
                scf_wall,
                ..timings
            },
        })
    }
}

/// This rank's k-point operators, their converged bands and the occupied count.
struct Bands<'a> {
    ops: &'a [KOperator],
    psi: &'a mut [Mutex<Option<Tensor>>],
    nocc: usize,
}

impl Calculation {
    /// `Σ_k w_k term(op_k, occupied bands of k, occupations)` over this rank's k-points
    /// and then over the ranks, each term `len` numbers.
    fn sum_over_bands(
        &self,
        share: &KShare,
        bands: &mut Bands<'_>,
        len: usize,
        what: &'static str,
        term: impl Fn(&KOperator, &Tensor, &[f64]) -> Result<Vec<f64>>,
    ) -> Result<Vec<f64>> {
        let mine = share.range(self.kpoints.len());
        let occ = vec![2.0; bands.nocc];
        let mut total = vec![0.0; len];
        let local: Result<()> = bands
            .ops
            .iter()
            .zip(bands.psi.iter_mut())
            .enumerate()
            .try_for_each(|(i, (op, p))| {
                let p = p.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
                let x = p.as_ref().ok_or_else(|| ctensor::Error::Internal {
                    op: what,
                    what: format!("k-point {i} has no bands"),
                })?;
                let w = self.kpoints[mine.start + i].weight;
                let t = term(op, &x.narrow(1, 0, bands.nocc)?, &occ)?;
                for (o, v) in total.iter_mut().zip(t) {
                    *o += w * v;
                }
                Ok(())
            });
        share.agree(local)?;
        share.sum(&mut total)?;
        Ok(total)
    }

    /// The forces of the converged state (`bands`, output density `rho_g`) and the mean
    /// force removed from them: Ewald, local and nonlocal terms (HGH has no core
    /// correction), the nonlocal one summed over the k-points with their weights and over
    /// the ranks, symmetrised with the crystal's operations.
    fn forces(
        &self,
        share: &KShare,
        bands: &mut Bands<'_>,
        dg: &DensityGrid,
        rho_g: &[ctensor::c64],
        z: &[f64],
    ) -> Result<(Vec<Vec3>, Vec3)> {
        let natom = self.crystal.atoms.len();
        let nonlocal = self.sum_over_bands(share, bands, 3 * natom, "forces", |op, x, occ| {
            Ok(op.nonlocal_forces(x, occ)?.concat())
        })?;
        let ewald = ewald_forces(&self.crystal, z)?;
        let loc = local_forces(&self.crystal, &self.psps, dg, rho_g)?;
        let total: Vec<Vec3> = (0..natom)
            .map(|a| [0, 1, 2].map(|c| ewald[a][c] + loc[a][c] + nonlocal[3 * a + c]))
            .collect();
        let mut f = if self.symmetry.len() > 1 {
            symmetrize_vectors(&self.crystal, &self.symmetry, 1e-4, &total)?
        } else {
            total
        };
        let drift = [0, 1, 2].map(|c| f.iter().map(|v| v[c]).sum::<f64>() / natom as f64);
        for v in &mut f {
            for c in 0..3 {
                v[c] -= drift[c];
            }
        }
        Ok((f, drift))
    }

    /// The stress of the converged state (see [`ScfOutcome::stress`]): the bands'
    /// kinetic and nonlocal strain derivatives summed over the k-points with their
    /// weights and over the ranks, the density terms of `rho` (real space, reciprocal
    /// space), Ewald, and the pseudo-core term `E_core ∝ 1/Ω`, symmetrised with the
    /// crystal's operations.
    fn stress(
        &self,
        share: &KShare,
        bands: &mut Bands<'_>,
        dg: &DensityGrid,
        rho: (&[f64], &[ctensor::c64]),
        z: &[f64],
        psp_core: f64,
    ) -> Result<Mat3> {
        let omega = self.crystal.volume();
        let bands_part = self.sum_over_bands(share, bands, 9, "stress", |op, x, occ| {
            Ok(op
                .strain_derivative(&self.crystal, &self.psps, x, occ)?
                .concat())
        })?;
        let dens = density_stress(&self.crystal, &self.psps, dg, &self.xc, rho.0, rho.1)?;
        let ew = ewald_stress(&self.crystal, z)?;
        let mut sigma = [[0.0; 3]; 3];
        for (al, row) in sigma.iter_mut().enumerate() {
            for (be, s) in row.iter_mut().enumerate() {
                *s = bands_part[3 * al + be] / omega + dens[al][be] + ew[al][be];
            }
            row[al] -= psp_core / omega;
        }
        if self.symmetry.len() > 1 {
            sigma = symmetrize_tensor(&self.crystal, &self.symmetry, &sigma);
        }
        Ok(sigma)
    }
}

/// What one k-point's part of an SCF step returns.
struct KStep {
    worst: f64,
    values: Vec<f64>,
    vectors: Tensor,
    kinetic: f64,
    nonlocal: f64,
    density: Vec<f64>,
    seconds: (f64, f64),
}

/// The operator's errors are ctensor errors already; this keeps the closure's type.
fn into_tensor_error(e: crate::error::PwError) -> ctensor::Error {
    match e {
        crate::error::PwError::Tensor(t) => t,
        other => ctensor::Error::InvalidArgument {
            op: "hamiltonian",
            expected: "a valid operator".into(),
            given: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use crate::io::{AtomInput, Input, KMesh};
    use crate::scf::ScfSettings;
    use ctensor::DeviceType;
    use std::path::Path;

    /// Gallium, arsenic and silicon in a skewed cell with no symmetry, at Γ and a
    /// zone-boundary k-point (real and complex bands), 6 Ha. The energy of a fixed basis
    /// depends on the atoms only through the Ewald, local and nonlocal terms, so at
    /// self-consistency its gradient is the Hellmann–Feynman force: central differences
    /// of the converged total energy (h = 1e-3 bohr) against the forces before their mean
    /// is removed (on this coarse grid the XC energy moves with the grid: a drift of
    /// 7.6e-7 Ha/bohr), to 2e-7 Ha/bohr (measured: 5e-8 at most).
    #[test]
    fn forces_are_minus_the_gradient_of_the_converged_energy() -> crate::Result<()> {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
        let input = |moved: Option<(usize, usize, f64)>| -> crate::Result<_> {
            let lattice = [[0.3, 6.1, 5.8], [6.2, -0.2, 6.0], [5.9, 6.3, 0.4]];
            let mut atoms = [
                ("Ga", [0.02, 0.01, -0.03]),
                ("As", [0.27, 0.23, 0.26]),
                ("Si", [0.61, 0.52, 0.47]),
            ]
            .map(|(s, reduced)| AtomInput {
                species: s.into(),
                reduced,
            });
            let input = Input {
                lattice_vectors_bohr: lattice,
                atoms: atoms.to_vec(),
                pseudopotentials: [
                    ("Ga", "31ga.3.hgh"),
                    ("As", "33as.5.hgh"),
                    ("Si", "14si.4.hgh"),
                ]
                .map(|(s, f)| (s.to_string(), data.join(f)))
                .into_iter()
                .collect(),
                ecut_ha: 6.0,
                nband: 8,
                kmesh: KMesh {
                    ngkpt: [2, 1, 1],
                    shifts: vec![[0.0; 3]],
                },
                xc: "lda_teter93".into(),
                scf: ScfSettings {
                    energy_tol: 1e-12,
                    density_tol: 1e-9,
                    ..ScfSettings::default()
                },
                time_reversal: true,
                symmetry: true,
                fft_grid: None,
                band_path: None,
            };
            if let Some((a, c, step)) = moved {
                let mut shift = [0.0; 3];
                shift[c] = step;
                let crystal = input.calculation(Path::new("/"), DeviceType::Cpu)?.crystal;
                atoms[a].reduced = crystal.displaced(a, shift)?.atoms[a].reduced;
                return Ok(Input {
                    atoms: atoms.to_vec(),
                    ..input
                });
            }
            Ok(input)
        };
        let calc = input(None)?.calculation(Path::new("/"), DeviceType::Cpu)?;
        assert!(calc.symmetry.len() <= 1, "a cell without symmetry");
        let out = calc.run(&mut |_| {})?;
        assert!(out.converged);
        let (forces, drift) = (out.forces.unwrap(), out.force_drift.unwrap());
        let largest = forces.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(largest > 1e-2, "forces too small to test: {largest}");
        let h = 1e-3;
        for (a, fa) in forces.iter().enumerate() {
            for c in 0..3 {
                let energy = |step: f64| -> crate::Result<f64> {
                    let calc =
                        input(Some((a, c, step)))?.calculation(Path::new("/"), DeviceType::Cpu)?;
                    let out = calc.run(&mut |_| {})?;
                    assert!(out.converged);
                    Ok(out.energies.total())
                };
                let fd = -(energy(h)? - energy(-h)?) / (2.0 * h);
                let hf = fa[c] + drift[c];
                assert!(
                    (fd - hf).abs() < 2e-7,
                    "atom {a}, axis {c}: {hf} vs −dE/dτ {fd}"
                );
            }
        }
        Ok(())
    }
}
