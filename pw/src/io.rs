//! The input and result files of `ctensor-pw run` (JSON).

use crate::bands::{BandPath, BandStructure};
use crate::basis::FftGrid;
use crate::crystal::{Atom, Crystal, Mat3, Vec3};
use crate::error::{input, PwError, Result};
use crate::kpoints::{monkhorst_pack, reduce};
use crate::psp::Hgh;
use crate::scf::{Calculation, Energies, ScfOutcome, ScfSettings, Step, Timings};
use crate::symmetry::find_operations;
use crate::xc::Xc;
use ctensor::DeviceType;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An atom of the input.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AtomInput {
    /// Species name; a key of `pseudopotentials`.
    pub species: String,
    /// Reduced coordinates.
    pub reduced: Vec3,
}

/// The k-point mesh of the input.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KMesh {
    /// Points along each reciprocal vector.
    pub ngkpt: [usize; 3],
    /// Shifts in units of the mesh step (default: one shift, Γ-centred).
    #[serde(default = "gamma_shift")]
    pub shifts: Vec<Vec3>,
}

fn gamma_shift() -> Vec<Vec3> {
    vec![[0.0; 3]]
}

fn teter() -> String {
    "lda_teter93".into()
}

/// The input file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Input {
    /// Lattice vectors a1, a2, a3 as rows (bohr).
    pub lattice_vectors_bohr: [Vec3; 3],
    /// The atoms.
    pub atoms: Vec<AtomInput>,
    /// Species → pseudopotential file (HGH `pspcod 3` or CP2K GTH), relative to the input file.
    pub pseudopotentials: BTreeMap<String, PathBuf>,
    /// Plane-wave cutoff (Ha).
    pub ecut_ha: f64,
    /// Bands per k-point.
    pub nband: usize,
    /// The k-point mesh.
    pub kmesh: KMesh,
    /// Exchange–correlation (`lda_teter93`, `lda_pz`, `lda_pw`, `gga_pbe`, `gga_pbesol`, or
    /// libxc LDA and GGA names joined by `+`).
    #[serde(default = "teter")]
    pub xc: String,
    /// SCF settings.
    #[serde(default)]
    pub scf: ScfSettings,
    /// Reduce the k-points by time reversal (default true).
    #[serde(default = "yes")]
    pub time_reversal: bool,
    /// Reduce the k-points by the crystal's space group and symmetrise the density
    /// (default true).
    #[serde(default = "yes")]
    pub symmetry: bool,
    /// An explicit FFT grid instead of ABINIT's default for the cutoff: at least
    /// [`FftGrid::minimum_for_cutoff`], which may be below the default.
    #[serde(default)]
    pub fft_grid: Option<[usize; 3]>,
    /// A path for a band structure from the converged potential.
    #[serde(default)]
    pub band_path: Option<BandPath>,
}

fn yes() -> bool {
    true
}

impl Input {
    /// Reads and parses a JSON input file.
    pub fn from_file(path: &Path) -> Result<Input> {
        let text = std::fs::read_to_string(path).map_err(|e| PwError::Io {
            path: path.into(),
            source: e,
        })?;
        serde_json::from_str(&text).map_err(|e| PwError::Json {
            path: path.into(),
            source: e,
        })
    }

    /// The calculation this input describes, checked; pseudopotential paths are taken
    /// relative to `base` (the input file's folder).
    pub fn calculation(&self, base: &Path, device: DeviceType) -> Result<Calculation> {
        if !(self.ecut_ha.is_finite() && self.ecut_ha > 0.0) {
            return Err(input(
                "ecut_ha",
                "a finite cutoff > 0 (Ha)",
                format!("{}", self.ecut_ha),
            ));
        }
        if self.nband == 0 {
            return Err(input("nband", "at least 1", "0"));
        }
        let species: Vec<String> = self.pseudopotentials.keys().cloned().collect();
        let mut atoms = Vec::new();
        for (i, a) in self.atoms.iter().enumerate() {
            let s = species
                .iter()
                .position(|n| *n == a.species)
                .ok_or_else(|| {
                    input(
                        format!("atoms[{i}].species"),
                        format!("one of the pseudopotentials' species {species:?}"),
                        format!("{:?}", a.species),
                    )
                })?;
            atoms.push(Atom {
                species: s,
                reduced: a.reduced,
            });
        }
        let crystal = Crystal::new(self.lattice_vectors_bohr, species, atoms)?;
        let psps = self
            .pseudopotentials
            .values()
            .map(|p| {
                Hgh::from_file(&if p.is_absolute() {
                    p.clone()
                } else {
                    base.join(p)
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let full = monkhorst_pack(self.kmesh.ngkpt, &self.kmesh.shifts)?;
        let ops = if self.symmetry {
            find_operations(&crystal, 1e-5)?
        } else {
            Vec::new()
        };
        let rotations: Vec<[[i64; 3]; 3]> = ops.iter().skip(1).map(|o| o.rotation).collect();
        let kpoints = reduce(&full, &rotations, self.time_reversal);
        // A set the rotations did not shrink (Γ alone, a supercell's Γ) gives a density
        // with the crystal's symmetry already: it is not symmetrised (1536 operations of
        // a 64-atom cell would cost more than the bands).
        let ops = if kpoints.len() < reduce(&full, &[], self.time_reversal).len() {
            ops
        } else {
            Vec::new()
        };
        let grid = match self.fft_grid {
            Some(n) => {
                let min = FftGrid::minimum_for_cutoff(&crystal, self.ecut_ha);
                if (0..3).any(|i| n[i] < min.n[i]) {
                    return Err(input(
                        "fft_grid",
                        format!(
                            "at least {:?} (the box must hold the density's sphere, |G| ≤ 2·G_max)",
                            min.n
                        ),
                        format!("{n:?}"),
                    ));
                }
                FftGrid { n }
            }
            None => FftGrid::for_cutoff(&crystal, self.ecut_ha),
        };
        Ok(Calculation {
            crystal,
            psps,
            ecut: self.ecut_ha,
            nband: self.nband,
            kpoints,
            xc: Xc::new(&self.xc)?,
            grid,
            settings: self.scf.clone(),
            device,
            symmetry: ops,
        })
    }
}

/// One Ha/bohr³ in GPa (CODATA 2018: 4.3597447222071e-18 J / (0.529177210903e-10 m)³).
pub const HA_PER_BOHR3_IN_GPA: f64 = 29_421.015_697_2;

/// A k-point of the result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KResult {
    /// Reduced coordinates of the reciprocal basis dual to the input's lattice vectors.
    pub kred: Vec3,
    /// Weight (Σ = 1).
    pub weight: f64,
    /// Plane waves.
    pub npw: usize,
    /// Eigenvalues (Ha), ABINIT's G = 0 convention.
    pub eigenvalues_ha: Vec<f64>,
}

/// The result file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    /// E_tot (Ha).
    pub total_energy_ha: f64,
    /// The seven terms.
    pub energy_components_ha: Energies,
    /// Bands per (reduced) k-point.
    pub kpoints: Vec<KResult>,
    /// The FFT grid.
    pub fft_grid: [usize; 3],
    /// The highest occupied eigenvalue (Ha).
    pub homo_ha: f64,
    /// SCF steps taken.
    pub scf_iterations: usize,
    /// Whether the SCF met its tolerances.
    pub converged: bool,
    /// Electrons per cell.
    pub nelectrons: f64,
    /// The functional and libxc's version.
    pub xc: String,
    /// libxc's version string.
    pub libxc_version: String,
    /// `cpu` or `gpu`.
    pub device: String,
    /// Threads used.
    pub threads: usize,
    /// Whole-run wall time (s).
    pub wall_time_s: f64,
    /// Where the time went (seconds).
    pub timings: Timings,
    /// Each SCF step.
    pub scf_history: Vec<Step>,
    /// The forces on the atoms (Ha/bohr, Cartesian, in the input's order of the atoms),
    /// when the SCF converged and `scf.forces` is on ([`ScfOutcome::forces`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forces_ha_per_bohr: Option<Vec<Vec3>>,
    /// The mean force removed from them (Ha/bohr; ABINIT's "drift").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_drift_ha_per_bohr: Option<Vec3>,
    /// The stress tensor (Ha/bohr³, Cartesian rows; [`ScfOutcome::stress`]), when the SCF
    /// converged and `scf.stress` is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stress_ha_per_bohr3: Option<Mat3>,
    /// The pressure `−tr σ / 3` (GPa).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure_gpa: Option<f64>,
    /// The bands along the input's `band_path`, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band_structure: Option<BandStructure>,
}

impl RunResult {
    /// The result of `outcome` for `calc`.
    pub fn new(calc: &Calculation, outcome: &ScfOutcome, wall: f64, threads: usize) -> RunResult {
        let nocc = (outcome.nelectrons / 2.0) as usize;
        let homo = outcome
            .bands
            .iter()
            .filter_map(|b| b.eigenvalues.get(nocc.saturating_sub(1)).copied())
            .fold(f64::NEG_INFINITY, f64::max);
        RunResult {
            total_energy_ha: outcome.energies.total(),
            energy_components_ha: outcome.energies,
            kpoints: outcome
                .bands
                .iter()
                .map(|b| KResult {
                    kred: b.kpoint.kred,
                    weight: b.kpoint.weight,
                    npw: b.npw,
                    eigenvalues_ha: b.eigenvalues.clone(),
                })
                .collect(),
            fft_grid: calc.grid.n,
            homo_ha: homo,
            scf_iterations: outcome.steps.len(),
            converged: outcome.converged,
            nelectrons: outcome.nelectrons,
            xc: calc.xc.name().to_string(),
            libxc_version: crate::xc::libxc_version(),
            device: if calc.device == DeviceType::Cpu {
                "cpu".into()
            } else {
                "gpu".into()
            },
            threads,
            wall_time_s: wall,
            timings: outcome.timings,
            scf_history: outcome.steps.clone(),
            forces_ha_per_bohr: outcome.forces.clone(),
            force_drift_ha_per_bohr: outcome.force_drift,
            stress_ha_per_bohr3: outcome.stress,
            pressure_gpa: outcome
                .stress
                .map(|s| -(s[0][0] + s[1][1] + s[2][2]) / 3.0 * HA_PER_BOHR3_IN_GPA),
            band_structure: None,
        }
    }
}
