//! The ion–ion (Ewald) energy of point charges in a neutralising background, in
//! ABINIT's convention (ewald.F90): independent of the splitting parameter η; and its
//! forces on the atoms and its stress.

use crate::crystal::{dot, Crystal, Mat3, Vec3};
use crate::error::Result;
use std::f64::consts::PI;

/// `E_ew` (Ha) of charges `z[a]` at the crystal's atoms:
///
/// `½ Σ_{a,b} Σ'_L Z_a Z_b erfc(√η d)/d + (2π/Ω) Σ_{G≠0} |Σ_a Z_a e^{iG·τ_a}|² e^{−G²/4η}/G²
///  − √(η/π) Σ_a Z_a² − π (Σ_a Z_a)² / (2Ωη)`, with `d = |τ_b − τ_a + L|`.
///
/// η balances the two sums for the cell's size; both are cut where their terms fall
/// below 1e-17 of the largest.
pub fn ewald_energy(crystal: &Crystal, z: &[f64]) -> Result<f64> {
    ewald_energy_with(crystal, z, PI / crystal.volume().powf(2.0 / 3.0))
}

/// [`ewald_energy`] with an explicit η > 0 (bohr⁻²), for checking η-independence.
pub fn ewald_energy_with(crystal: &Crystal, z: &[f64], eta: f64) -> Result<f64> {
    Ok(ewald_sum(crystal, z, eta)?.energy)
}

/// The Ewald forces `F_a = −∂E_ew/∂τ_a` (Ha/bohr, Cartesian) of charges `z[a]` at the
/// crystal's atoms, from the same sums as [`ewald_energy`]:
///
/// `F_b = −Σ_{a,L}' Z_a Z_b φ'(d) d̂ + (4π/Ω) Σ_{G≠0} Z_b G (e^{−G²/4η}/G²) Im(S(G)* e^{iG·τ_b})`,
/// with `φ(r) = erfc(√η r)/r`, `d = τ_b − τ_a + L` and `S(G) = Σ_a Z_a e^{iG·τ_a}`.
pub fn ewald_forces(crystal: &Crystal, z: &[f64]) -> Result<Vec<Vec3>> {
    ewald_forces_with(crystal, z, PI / crystal.volume().powf(2.0 / 3.0))
}

/// [`ewald_forces`] with an explicit η > 0 (bohr⁻²).
pub fn ewald_forces_with(crystal: &Crystal, z: &[f64], eta: f64) -> Result<Vec<Vec3>> {
    Ok(ewald_sum(crystal, z, eta)?.forces)
}

/// The Ewald stress `σ_αβ = (1/Ω) ∂E_ew/∂ε_αβ` (Ha/bohr³) under a homogeneous strain of
/// the cell with the reduced positions fixed, from the same sums:
/// `½ Σ' Z_a Z_b φ'(d) d_α d_β / d` from the real-space sum, `(2π/Ω) Σ_G |S|² w(G)
/// (2 G_α G_β (1/4η + 1/G²) − δ_αβ)` with `w = e^{−G²/4η}/G²` from the reciprocal one,
/// and `π (Σ Z)² δ_αβ / (2Ωη)` from the background.
pub fn ewald_stress(crystal: &Crystal, z: &[f64]) -> Result<Mat3> {
    ewald_stress_with(crystal, z, PI / crystal.volume().powf(2.0 / 3.0))
}

/// [`ewald_stress`] with an explicit η > 0 (bohr⁻²).
pub fn ewald_stress_with(crystal: &Crystal, z: &[f64], eta: f64) -> Result<Mat3> {
    Ok(ewald_sum(crystal, z, eta)?.stress)
}

/// What the Ewald sums give.
struct EwaldSum {
    energy: f64,
    forces: Vec<Vec3>,
    stress: Mat3,
}

/// The Ewald energy, forces and stress with splitting parameter η. Errors: not one finite
/// charge per atom, or η not finite and positive.
fn ewald_sum(crystal: &Crystal, z: &[f64], eta: f64) -> Result<EwaldSum> {
    let natom = crystal.atoms.len();
    if z.len() != natom || z.iter().any(|x| !x.is_finite()) || !(eta.is_finite() && eta > 0.0) {
        return Err(ctensor::Error::InvalidArgument {
            op: "ewald",
            expected: format!("{natom} finite charges, one per atom, and a finite η > 0"),
            given: format!("charges {z:?}, η = {eta}"),
        }
        .into());
    }
    let omega = crystal.volume();
    let tau: Vec<_> = crystal
        .atoms
        .iter()
        .map(|a| crystal.to_cartesian(a.reduced))
        .collect();
    let mut forces = vec![[0.0; 3]; tau.len()];
    // ∂E/∂ε (Ha), divided by Ω at the end.
    let mut strain = [[0.0; 3]; 3];
    let b = crystal.reciprocal();
    // erfc(x) < 1e-17 beyond x ≈ 6.1; e^{-y} < 1e-17 beyond y ≈ 39.
    let rmax = 6.2 / eta.sqrt();
    let gmax = (4.0 * eta * 39.5).sqrt();
    let reach = |len_dual: f64, r: f64| (r * len_dual / (2.0 * PI)).ceil() as i64 + 1;
    let nr = b.map(|bj| reach(dot(bj, bj).sqrt(), rmax));
    let ng = crystal.lattice.map(|aj| reach(dot(aj, aj).sqrt(), gmax));
    let sqrt_eta = eta.sqrt();
    let mut real = 0.0;
    for (ia, ta) in tau.iter().enumerate() {
        for (ib, tb) in tau.iter().enumerate() {
            for n1 in -nr[0]..=nr[0] {
                for n2 in -nr[1]..=nr[1] {
                    for n3 in -nr[2]..=nr[2] {
                        if ia == ib && n1 == 0 && n2 == 0 && n3 == 0 {
                            continue;
                        }
                        let l = crystal.to_cartesian([n1 as f64, n2 as f64, n3 as f64]);
                        let d = [
                            tb[0] - ta[0] + l[0],
                            tb[1] - ta[1] + l[1],
                            tb[2] - ta[2] + l[2],
                        ];
                        let r = dot(d, d).sqrt();
                        if r >= rmax {
                            continue;
                        }
                        let zz = z[ia] * z[ib];
                        let erfc = libm::erfc(sqrt_eta * r);
                        real += 0.5 * zz * erfc / r;
                        // φ'(r) = −erfc(√η r)/r² − 2√(η/π) e^{−ηr²}/r.
                        let dphi =
                            -erfc / (r * r) - 2.0 * (eta / PI).sqrt() * (-eta * r * r).exp() / r;
                        // An atom's own images do not move with it; the pair (a, b) and
                        // its mirror (b, a) together give b the whole term.
                        if ia != ib {
                            for c in 0..3 {
                                forces[ib][c] -= zz * dphi * d[c] / r;
                            }
                        }
                        // Under strain d → (1 + ε) d, every pair moves.
                        for (al, row) in strain.iter_mut().enumerate() {
                            for (be, s) in row.iter_mut().enumerate() {
                                *s += 0.5 * zz * dphi * d[al] * d[be] / r;
                            }
                        }
                    }
                }
            }
        }
    }
    let mut recip = 0.0;
    for m1 in -ng[0]..=ng[0] {
        for m2 in -ng[1]..=ng[1] {
            for m3 in -ng[2]..=ng[2] {
                if m1 == 0 && m2 == 0 && m3 == 0 {
                    continue;
                }
                let g = crystal.reciprocal_cartesian([m1 as f64, m2 as f64, m3 as f64]);
                let g2 = dot(g, g);
                if g2 > gmax * gmax {
                    continue;
                }
                let (mut re, mut im) = (0.0, 0.0);
                for (a, t) in tau.iter().enumerate() {
                    let ph = dot(g, *t);
                    re += z[a] * ph.cos();
                    im += z[a] * ph.sin();
                }
                let w = (-g2 / (4.0 * eta)).exp() / g2;
                recip += (re * re + im * im) * w;
                // G → (1 − ε)ᵀ G: G² loses 2 G_α G_β ε_αβ; the 1/Ω is taken below.
                let s2 = (re * re + im * im) * w * 2.0 * (1.0 / (4.0 * eta) + 1.0 / g2);
                for (al, row) in strain.iter_mut().enumerate() {
                    for (be, s) in row.iter_mut().enumerate() {
                        *s += 2.0 * PI / omega * s2 * g[al] * g[be];
                    }
                }
                // Im(S* e^{iθ_b}) = Re S sin θ_b − Im S cos θ_b.
                for (bi, t) in tau.iter().enumerate() {
                    let (sin, cos) = dot(g, *t).sin_cos();
                    let f = 4.0 * PI / omega * z[bi] * w * (re * sin - im * cos);
                    for c in 0..3 {
                        forces[bi][c] += f * g[c];
                    }
                }
            }
        }
    }
    recip *= 2.0 * PI / omega;
    let zsum: f64 = z.iter().sum();
    let z2: f64 = z.iter().map(|x| x * x).sum();
    let background = PI * zsum * zsum / (2.0 * omega * eta);
    let energy = real + recip - (eta / PI).sqrt() * z2 - background;
    // Ω → Ω (1 + tr ε): the reciprocal sum and the background scale as 1/Ω.
    for (al, row) in strain.iter_mut().enumerate() {
        row[al] += -recip + background;
        for s in row.iter_mut() {
            *s /= omega;
        }
    }
    Ok(EwaldSum {
        energy,
        forces,
        stress: strain,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crystal::tests::silicon;
    use crate::crystal::Atom;

    #[test]
    fn silicon_matches_the_published_value_and_abinit() -> Result<()> {
        // DFTK's documentation: −8.3979253 Ha for Z = 4 at a = 5.431 Å.
        let a = 5.431 / 0.529_177_210_903;
        let e = ewald_energy(&silicon(a), &[4.0, 4.0])?;
        assert!((e - -8.3979253).abs() < 1e-7, "{e}");
        // ABINIT 9.6.2 at a = 10.26 bohr prints −8.40046478618609.
        let e = ewald_energy(&silicon(10.26), &[4.0, 4.0])?;
        assert!((e - -8.40046478618609).abs() < 1e-10, "{e}");
        Ok(())
    }

    #[test]
    fn the_sum_does_not_depend_on_eta_and_a_lone_ion_in_a_cube_is_madelung() -> Result<()> {
        let c = silicon(10.26);
        let want = ewald_energy(&c, &[4.0, 4.0])?;
        for eta in [0.05, 0.3, 1.0, 3.0] {
            assert!(
                (ewald_energy_with(&c, &[4.0, 4.0], eta)? - want).abs() < 1e-10,
                "η = {eta}"
            );
        }
        // One unit charge per simple-cubic cell of side L in a neutralising background:
        // E = −α/(2L) with the Madelung constant α = 2.837297479 (Nijboer–de Wette).
        let l = 7.0;
        let cube = Crystal::new(
            [[l, 0.0, 0.0], [0.0, l, 0.0], [0.0, 0.0, l]],
            vec!["X".into()],
            vec![Atom {
                species: 0,
                reduced: [0.3, 0.1, 0.9],
            }],
        )
        .unwrap();
        let e = ewald_energy(&cube, &[1.0])?;
        assert!((e - -2.837297479 / (2.0 * l)).abs() < 1e-9, "{e}");
        // Not one finite charge per atom, or a bad η, is an error that says so.
        for (z, eta) in [
            (&[1.0, 2.0][..], 0.3),
            (&[][..], 0.3),
            (&[f64::NAN][..], 0.3),
        ] {
            let e = ewald_energy_with(&cube, z, eta).unwrap_err();
            assert!(
                e.to_string().contains("1 finite charges, one per atom"),
                "{e}"
            );
        }
        for eta in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(ewald_stress_with(&cube, &[1.0], eta).is_err(), "η = {eta}");
            assert!(ewald_forces_with(&cube, &[1.0], eta).is_err(), "η = {eta}");
        }
        Ok(())
    }

    /// A skewed cell with three unequal charges off any symmetric site (the net charge
    /// is neutralised by the background).
    fn three_charges() -> Crystal {
        Crystal::new(
            [[0.3, 5.1, 4.8], [5.3, 0.2, 5.0], [4.9, 5.2, -0.4]],
            vec!["X".into(), "Y".into()],
            [
                ([0.03, -0.02, 0.01], 0),
                ([0.27, 0.24, 0.22], 1),
                ([0.61, 0.55, 0.43], 0),
            ]
            .map(|(reduced, species)| Atom { species, reduced })
            .to_vec(),
        )
        .expect("a valid cell")
    }

    #[test]
    fn forces_are_minus_the_energy_gradient_and_do_not_depend_on_eta() -> Result<()> {
        let c = three_charges();
        let z = [4.0, 3.0, 5.0];
        let f = ewald_forces(&c, &z)?;
        let net: Vec<f64> = (0..3).map(|d| f.iter().map(|v| v[d]).sum()).collect();
        assert!(net.iter().all(|x| x.abs() < 1e-10), "net force {net:?}");
        for eta in [0.1, 0.7, 2.0] {
            let g = ewald_forces_with(&c, &z, eta)?;
            for (a, b) in f.iter().zip(&g) {
                assert!(
                    (0..3).all(|d| (a[d] - b[d]).abs() < 1e-9),
                    "η = {eta}: {a:?} vs {b:?}"
                );
            }
        }
        // Central differences of the energy along each Cartesian axis (h = 1e-4 bohr:
        // the error h²E‴/6 is below 1e-8 Ha/bohr here).
        let h = 1e-4;
        for (a, fa) in f.iter().enumerate() {
            for d in 0..3 {
                let mut shift = [0.0; 3];
                shift[d] = h;
                let ep = ewald_energy(&c.displaced(a, shift)?, &z)?;
                shift[d] = -h;
                let em = ewald_energy(&c.displaced(a, shift)?, &z)?;
                let fd = -(ep - em) / (2.0 * h);
                assert!(
                    (fd - fa[d]).abs() < 1e-7,
                    "atom {a}, axis {d}: {} vs −dE/dτ {fd}",
                    fa[d]
                );
            }
        }
        // A symmetric site feels no force: diamond silicon.
        for v in ewald_forces(&silicon(10.26), &[4.0, 4.0])? {
            assert!(v.iter().all(|x| x.abs() < 1e-10), "{v:?}");
        }
        Ok(())
    }

    /// The Ewald stress is the strain derivative of the energy over the volume: central
    /// differences of the energy of the strained cell `a_i → (1 + t e_α e_βᵀ) a_i` (the
    /// reduced positions fixed; t = 1e-5), in the skewed three-charge cell and in
    /// silicon, whose stress is diagonal; it does not depend on η.
    #[test]
    fn the_stress_is_the_strain_derivative_of_the_energy() -> Result<()> {
        let skewed = three_charges();
        for (c, z) in [
            (skewed, vec![4.0, 3.0, 5.0]),
            (silicon(10.26), vec![4.0, 4.0]),
        ] {
            let s = ewald_stress(&c, &z)?;
            let h = 1e-5;
            for al in 0..3 {
                for be in 0..3 {
                    let energy = |t: f64| {
                        let mut strained = c.clone();
                        for a in strained.lattice.iter_mut() {
                            a[al] += t * a[be];
                        }
                        ewald_energy(&strained, &z)
                    };
                    let fd = (energy(h)? - energy(-h)?) / (2.0 * h) / c.volume();
                    assert!(
                        (fd - s[al][be]).abs() < 1e-9,
                        "σ_{al}{be} {} vs ∂E/∂ε / Ω {fd}",
                        s[al][be]
                    );
                }
            }
            for eta in [0.2, 1.5] {
                let t = ewald_stress_with(&c, &z, eta)?;
                for (x, y) in s.iter().flatten().zip(t.iter().flatten()) {
                    assert!((x - y).abs() < 1e-11, "η = {eta}: {x} vs {y}");
                }
            }
        }
        Ok(())
    }
}
