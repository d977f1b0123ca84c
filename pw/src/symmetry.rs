//! The crystal's space-group operations (found by the `moyo` crate, a pure-Rust port of
//! spglib's search) and the symmetrisation of a density with them.

use crate::basis::DensityGrid;
use crate::crystal::{Crystal, Vec3};
use crate::error::{input, Result};
use ctensor::c64;
use std::f64::consts::PI;

/// A space-group operation in reduced coordinates: `x → R x + t`.
#[derive(Clone, Debug, PartialEq)]
pub struct SymOp {
    /// The integer rotation `R` (rows).
    pub rotation: [[i64; 3]; 3],
    /// The fractional translation `t`.
    pub translation: Vec3,
}

/// The operations that map the crystal onto itself (positions to `symprec` bohr), the
/// identity first.
pub fn find_operations(crystal: &Crystal, symprec: f64) -> Result<Vec<SymOp>> {
    use moyo::base::{AngleTolerance, Cell, Lattice};
    use moyo::data::Setting;
    use nalgebra::{Matrix3, Vector3};
    let l = crystal.lattice;
    let lattice = Lattice::new(Matrix3::new(
        l[0][0], l[0][1], l[0][2], l[1][0], l[1][1], l[1][2], l[2][0], l[2][1], l[2][2],
    ));
    let positions = crystal
        .atoms
        .iter()
        .map(|a| Vector3::new(a.reduced[0], a.reduced[1], a.reduced[2]))
        .collect();
    let numbers = crystal.atoms.iter().map(|a| a.species as i32).collect();
    let cell = Cell::new(lattice, positions, numbers);
    let ds = moyo::MoyoDataset::new(
        &cell,
        symprec,
        AngleTolerance::Default,
        Setting::Spglib,
        false,
    )
    .map_err(|e| {
        input(
            "symmetry",
            "a cell whose symmetry the search can find (or \"symmetry\": false)",
            format!("{e:?}"),
        )
    })?;
    let mut ops: Vec<SymOp> = ds
        .operations
        .iter()
        .map(|op| SymOp {
            rotation: [0, 1, 2].map(|i| [0, 1, 2].map(|j| op.rotation[(i, j)] as i64)),
            translation: [0, 1, 2].map(|i| op.translation[i]),
        })
        .collect();
    let identity = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
    ops.sort_by_key(|o| (o.rotation != identity) as u8);
    if ops.first().map(|o| o.rotation) != Some(identity) {
        ops.insert(
            0,
            SymOp {
                rotation: identity,
                translation: [0.0; 3],
            },
        );
    }
    Ok(ops)
}

/// `ρ_sym(G) = (1/|ops|) Σ_ops` of `ρ` transformed by each operation: the component at
/// `m' = Rᵀ m` receives `ρ(m) e^{2πi m·t}` (`ρ(R x + t) = ρ(x)`). Only the density
/// sphere `|G|² ≤ gsqcut` (and G = 0) is kept: outside it the density has no components.
///
/// The phase factors by axis, `e^{2πi m·t} = Π_c e^{2πi m_c t_c}`, from a table of each
/// operation's `n_c` factors per axis: no sine or cosine per point and operation.
pub fn symmetrize(ops: &[SymOp], dg: &DensityGrid, gsqcut: f64, rho_g: &[c64]) -> Vec<c64> {
    let mut out = vec![c64::new(0.0, 0.0); rho_g.len()];
    let scale = 1.0 / ops.len() as f64;
    let n = dg.grid.n;
    // phases[o][c][m_c + ⌊n_c/2⌋] = e^{2πi m_c t_c}, m_c over the grid's frequencies.
    let phases: Vec<[Vec<c64>; 3]> = ops
        .iter()
        .map(|op| {
            [0, 1, 2].map(|c| {
                let low = (n[c] / 2) as i64;
                (0..n[c] as i64)
                    .map(|j| c64::from_polar(1.0, 2.0 * PI * (j - low) as f64 * op.translation[c]))
                    .collect()
            })
        })
        .collect();
    let low = n.map(|x| (x / 2) as i64);
    for (i, m) in dg.grid.frequency_iter().enumerate() {
        if dg.g2[i] > gsqcut * (1.0 + 1e-12) {
            continue;
        }
        let at = [0, 1, 2].map(|c| (m[c] + low[c]) as usize);
        let x = rho_g[i] * scale;
        for (op, ph) in ops.iter().zip(&phases) {
            let r = op.rotation;
            let mp = [0, 1, 2].map(|c| r[0][c] * m[0] + r[1][c] * m[1] + r[2][c] * m[2]);
            out[dg.grid.index(mp)] += x * (ph[0][at[0]] * ph[1][at[1]] * ph[2][at[2]]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::basis::FftGrid;
    use crate::crystal::tests::silicon;

    /// `Σ_a e^{−iG·τ_a} e^{−|G|²/8}` on the density sphere: a superposition of one
    /// Gaussian per atom, which every operation of the crystal maps onto itself.
    fn atomic_superposition(crystal: &Crystal, dg: &DensityGrid, gsqcut: f64) -> Vec<c64> {
        dg.grid
            .frequency_iter()
            .zip(&dg.g2)
            .map(|(m, &g2)| {
                if g2 > gsqcut {
                    return c64::new(0.0, 0.0);
                }
                crystal
                    .atoms
                    .iter()
                    .map(|a| {
                        let ph = 2.0 * PI * (0..3).map(|c| m[c] as f64 * a.reduced[c]).sum::<f64>();
                        c64::from_polar((-g2 / 8.0).exp(), -ph)
                    })
                    .sum()
            })
            .collect()
    }

    /// Diamond Si (48 operations, half of them with the translation that swaps the two
    /// atoms): a density built from the atoms is left as it is; a random one becomes one
    /// that the symmetrisation leaves as it is (a projection), with its G = 0 component
    /// (the electron count) kept and nothing outside the sphere.
    #[test]
    fn symmetrising_projects_onto_the_crystals_densities() -> Result<()> {
        // The second atom off the origin's grid point: the translations are not zero.
        let crystal = silicon(10.26);
        let ops = find_operations(&crystal, 1e-5)?;
        assert_eq!(ops.len(), 48);
        assert!(ops
            .iter()
            .any(|o| o.translation.iter().any(|t| t.abs() > 1e-9)));
        let dg = DensityGrid::new(&crystal, FftGrid::for_cutoff(&crystal, 10.0), 10.0);
        let gsqcut = 80.0;
        let atomic = atomic_superposition(&crystal, &dg, gsqcut);
        let out = symmetrize(&ops, &dg, gsqcut, &atomic);
        for (i, (a, b)) in out.iter().zip(&atomic).enumerate() {
            assert!((a - b).norm() < 1e-14, "[{i}]: {a} against {b}");
        }
        let random: Vec<c64> = ctensor::Tensor::randn(
            ctensor::DataType::ComplexDouble,
            ctensor::DeviceType::Cpu,
            &[dg.grid.len()],
            7,
        )?
        .to_vec::<c64>()?;
        let once = symmetrize(&ops, &dg, gsqcut, &random);
        let twice = symmetrize(&ops, &dg, gsqcut, &once);
        let mut changed = false;
        for (i, ((a, b), r)) in twice.iter().zip(&once).zip(&random).enumerate() {
            assert!((a - b).norm() < 1e-13, "[{i}]: {a} against {b}");
            if dg.g2[i] > gsqcut * (1.0 + 1e-12) {
                assert_eq!(*b, c64::new(0.0, 0.0));
            }
            changed |= (b - r).norm() > 1e-3;
        }
        assert!(changed, "a random density is not symmetric");
        assert!((once[0] - random[0]).norm() < 1e-14);
        Ok(())
    }
}
