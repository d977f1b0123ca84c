//! ctensor-pw against a second code, Quantum ESPRESSO 6.7's `pw.x` (Debian's
//! `quantum-espresso`), on the same HGH parameters: diamond Si at 10, 20 and 30 Ha on
//! Γ and the Γ-centred 2×2×2 mesh, on the 4×4×4 mesh shifted by (½,½,½), and zinc-blende
//! GaAs; Perdew–Zunger and PW92 LDA, and a GGA (PBE exchange with PW92 correlation).
//! Total energy to 1e-6 Ha, the Hartree and XC terms to 1e-5, eigenvalues to 1e-5, every
//! plane-wave count exactly, forces to 1e-6 Ha/bohr (two cases with a displaced atom)
//! and the stress to 1e-8 Ha/bohr³ (the symmetric crystals); each case runs on pw.x's
//! own FFT grid.
//!
//! Two conventions differ from ABINIT's, and the test applies them rather than hiding
//! them in tolerances: pw.x keeps the pseudopotentials' G = 0 constant Σα/Ω in the
//! local potential, so its eigenvalues are ABINIT's plus that constant (which is
//! `E_psp_core / N_el`); and pw.x's Ewald sum stops where its own error bound is 1e-7 Ry
//! (ewald.f90 picks the splitting parameter for it), so its Ewald term is checked to
//! 1e-7 Ha and the rest of the total energy, which does not contain it, to 1e-9 (it
//! agrees to 2e-13).
//!
//! The references were produced by running pw.x on the inputs in tests/data/qe/ (README
//! there); Quantum ESPRESSO is not needed here.

use ctensor::DeviceType;
use ctensor_pw::io::Input;
use serde_json::Value;
use std::path::PathBuf;

mod common;
use common::{compare_kpoints, f};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The point group of the lattice, as integer matrices acting on reduced reciprocal
/// coordinates: every `R` with entries in {−1, 0, 1} that keeps the reciprocal metric.
/// Both materials here are cubic, and with time reversal (k → −k, which the group
/// contains) every operation of it maps a k-point to one with the same eigenvalues,
/// for Si (O_h) and for GaAs (T_d with time reversal).
fn lattice_point_group(b: [[f64; 3]; 3]) -> Vec<[[i64; 3]; 3]> {
    let metric = |x: [f64; 3], y: [f64; 3]| -> f64 {
        (0..3)
            .map(|i| (0..3).map(|j| x[i] * y[j] * dot(b[i], b[j])).sum::<f64>())
            .sum()
    };
    let mut group = Vec::new();
    for code in 0..3usize.pow(9) {
        let mut r = [[0i64; 3]; 3];
        let mut c = code;
        for row in r.iter_mut() {
            for x in row.iter_mut() {
                *x = (c % 3) as i64 - 1;
                c /= 3;
            }
        }
        let col = |j: usize| [0, 1, 2].map(|i| r[i][j] as f64);
        let unit = |j: usize| [0, 1, 2].map(|i| (i == j) as u8 as f64);
        let keeps = (0..3).all(|i| {
            (0..3).all(|j| (metric(col(i), col(j)) - metric(unit(i), unit(j))).abs() < 1e-9)
        });
        if keeps {
            group.push(r);
        }
    }
    group
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn equivalent(k: [f64; 3], kp: [f64; 3], group: &[[[i64; 3]; 3]]) -> bool {
    group.iter().any(|r| {
        (0..3).all(|i| {
            let rk: f64 = (0..3).map(|j| r[i][j] as f64 * k[j]).sum();
            let d = kp[i] - rk;
            (d - d.round()).abs() < 1e-8
        })
    })
}

/// The forces' tolerance against pw.x (Ha/bohr; they agree to 5e-8).
const FORCE_TOL: f64 = 1e-6;

/// The stress's tolerance against pw.x (Ha/bohr³; the symmetric crystals agree to 1.3e-9).
const STRESS_TOL: f64 = 1e-8;

fn check(case: &str) -> TestResult {
    let path = data().join(format!("tests/data/qe/{case}.json"));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    // The set-up as ctensor-pw's input spells it, with the HGH files pw.x's were made from.
    let mut setup = r["input"].clone();
    let mut files = serde_json::Map::new();
    for atom in setup["atoms"].as_array().unwrap() {
        let species = atom["species"].as_str().unwrap();
        let file = match species {
            "Si" => "data/14si.4.hgh",
            "Ga" => "data/31ga.3.hgh",
            "As" => "data/33as.5.hgh",
            s => panic!("{case}: no pseudopotential for {s}"),
        };
        files.insert(species.into(), file.into());
    }
    setup["pseudopotentials"] = files.into();
    let mut input: Input = serde_json::from_value(setup)?;
    let grid: Vec<usize> = serde_json::from_value(r["fft_grid"].clone())?;
    input.fft_grid = Some([grid[0], grid[1], grid[2]]);
    let calc = input.calculation(&data(), DeviceType::Cpu)?;
    let group = lattice_point_group(calc.crystal.reciprocal());
    assert_eq!(group.len(), 48, "{case}: a cubic lattice's point group");
    // A displaced atom leaves k-points related by time reversal alone.
    let group = if case.contains("_dist") {
        let one = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
        vec![one, one.map(|r| r.map(|x| -x))]
    } else {
        group
    };
    let nel = calc.nelectrons();
    let out = calc.run(&mut |_| {})?;
    assert!(out.converged, "{case}: SCF did not converge");
    let e = out.energies;
    let c = &r["energy_components_ha"];
    let total = f(&r["total_energy_ha"]);
    let d_total = e.total() - total;
    let d_ewald = e.ewald - f(&c["ewald"]);
    assert!(
        d_total.abs() < 1e-6,
        "{case}: E_tot {} vs pw.x {total}",
        e.total()
    );
    assert!(
        d_ewald.abs() < 1e-7,
        "{case}: Ewald differs by {d_ewald:.3e}"
    );
    assert!(
        (d_total - d_ewald).abs() < 1e-9,
        "{case}: E_tot − E_Ewald differs by {:.3e}",
        d_total - d_ewald
    );
    let mut worst_term: f64 = 0.0;
    for (name, ours) in [("hartree", e.hartree), ("xc", e.xc)] {
        let want = f(&c[name]);
        worst_term = worst_term.max((ours - want).abs());
        assert!(
            (ours - want).abs() < 1e-5,
            "{case}: {name} {ours} vs pw.x {want}"
        );
    }
    // pw.x's eigenvalues carry Σα/Ω, the G = 0 constant ctensor-pw (as ABINIT) leaves out.
    let shift = e.psp_core / nel;
    let same = |k: [f64; 3], kp: [f64; 3]| equivalent(k, kp, &group);
    let worst = compare_kpoints(case, "pw.x", &r, &out.bands, same, shift);
    assert!(worst < 1e-5, "{case}: eigenvalues differ by {worst:.3e} Ha");
    // Forces and stress.
    let got = out.forces.as_ref().expect("forces of a converged run");
    let want: Vec<Vec<f64>> = serde_json::from_value(r["forces_ha_per_bohr"].clone())?;
    let mut worst_force: f64 = 0.0;
    for (a, (g, w)) in got.iter().zip(&want).enumerate() {
        for c in 0..3 {
            let d = (g[c] - w[c]).abs();
            worst_force = worst_force.max(d);
            assert!(
                d < FORCE_TOL,
                "{case}: atom {a} F_{c} {} vs pw.x {}",
                g[c],
                w[c]
            );
        }
    }
    let got = out.stress.expect("the stress of a converged run");
    let want: Vec<Vec<f64>> = serde_json::from_value(r["stress_ha_per_bohr3"].clone())?;
    let mut worst_stress: f64 = 0.0;
    // With an atom displaced, pw.x's stress is not compared: it differs from ctensor-pw's
    // by 5e-5 (Si) and 6e-6 Ha/bohr³ (GaAs), its off-diagonal entries about half of
    // ctensor-pw's, where ABINIT on the same two structures agrees with ctensor-pw to
    // 1e-10 (abinit.rs: si_distq_gamma_e20, gaas_distq_l_e20). It is printed.
    let compared = !case.contains("_dist");
    for al in 0..3 {
        for be in 0..3 {
            // pw.x's stress is −(1/Ω) ∂E/∂ε (positive under compression), ABINIT's and
            // ctensor-pw's +(1/Ω) ∂E/∂ε.
            let d = (got[al][be] + want[al][be]).abs();
            worst_stress = worst_stress.max(d);
            assert!(
                !compared || d < STRESS_TOL,
                "{case}: σ_{al}{be} {} vs pw.x's −σ {}",
                got[al][be],
                -want[al][be]
            );
        }
    }
    println!(
        "{case}: |ΔE_tot| = {:.2e} Ha (Ewald {:.2e}, the rest {:.2e}), max |ΔE_H|, |ΔE_xc| = {worst_term:.2e} Ha, max |Δε| = {worst:.2e} Ha, max |ΔF| = {worst_force:.2e} Ha/bohr, max |Δσ| = {worst_stress:.2e} Ha/bohr³{}",
        d_total.abs(),
        d_ewald.abs(),
        (d_total - d_ewald).abs(),
        if compared { "" } else { " (not compared)" },
    );
    Ok(())
}

#[test]
fn silicon_with_perdew_zunger_matches_pw_x_at_ecut_10_20_30() -> TestResult {
    [
        "si_gamma_e10_pz",
        "si_gamma_e20_pz",
        "si_gamma_e30_pz",
        "si_k222_e10_pz",
        "si_k222_e20_pz",
        "si_k222_e30_pz",
        "si_k444h_e20_pz",
    ]
    .into_iter()
    .try_for_each(check)
}

#[test]
fn gallium_arsenide_and_pw92_match_pw_x() -> TestResult {
    ["gaas_k222_e20_pz", "si_k444h_e20_pw"]
        .into_iter()
        .try_for_each(check)
}

/// A GGA through the whole SCF on both sides; GaAs on pw.x's 27³ grid, below ABINIT's
/// 30³ (the smallest that holds the density's sphere).
#[test]
fn a_gga_matches_pw_x() -> TestResult {
    ["si_k222_e20_pbx", "gaas_k444h_e15_pbx"]
        .into_iter()
        .try_for_each(check)
}

/// The second atom of Si (at Γ) and of GaAs (at L) off its site.
#[test]
fn forces_on_displaced_atoms_match_pw_x() -> TestResult {
    ["si_dist_gamma_e20_pz", "gaas_dist_l_e20_pz"]
        .into_iter()
        .try_for_each(check)
}
