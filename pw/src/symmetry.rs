//! The crystal's space-group operations (found by the `moyo` crate, a pure-Rust port of
//! spglib's search) and the symmetrisation of a density with them.

use crate::basis::DensityGrid;
use crate::crystal::{Crystal, Mat3, Vec3};
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

/// Forces (or any per-atom Cartesian vectors) averaged over the operations:
/// `F_sym(a) = (1/|ops|) Σ_ops R_cart F(b)` where the operation takes atom `b` onto atom
/// `a` (`R x_b + t ≡ x_a`), `R_cart = Lᵀ R L⁻ᵀ` (the rows of `L` are the lattice
/// vectors). Forces summed over the irreducible k-points only are not symmetric; their
/// average is the sum over the whole zone. Errors: an operation that maps an atom onto
/// no atom of its species (within `tol` bohr), or not one vector per atom.
pub fn symmetrize_vectors(
    crystal: &Crystal,
    ops: &[SymOp],
    tol: f64,
    forces: &[Vec3],
) -> Result<Vec<Vec3>> {
    let natom = crystal.atoms.len();
    if forces.len() != natom {
        return Err(ctensor::Error::ShapeMismatch {
            op: "symmetrize_vectors",
            expected: format!("one vector per atom ({natom})"),
            got: vec![vec![forces.len(), 3]],
        }
        .into());
    }
    if ops.is_empty() {
        return Ok(forces.to_vec());
    }
    let scale = 1.0 / ops.len() as f64;
    let mut out = vec![[0.0; 3]; natom];
    for op in ops {
        for (atom, f) in crystal.atoms.iter().zip(forces) {
            let r = op.rotation;
            let x = atom.reduced;
            let image: Vec3 = [0, 1, 2]
                .map(|i| (0..3).map(|j| r[i][j] as f64 * x[j]).sum::<f64>() + op.translation[i]);
            let target = crystal
                .atoms
                .iter()
                .position(|o| {
                    o.species == atom.species && crystal.min_image_distance(image, o.reduced) < tol
                })
                .ok_or_else(|| {
                    input(
                        "symmetry",
                        "operations that map every atom onto an atom of its species",
                        format!("{op:?} takes an atom at {x:?} to {image:?}"),
                    )
                })?;
            // Reduced components y (F = Σ y_i a_i), rotated, and back.
            let y = crystal.to_reduced(*f);
            let z: Vec3 = [0, 1, 2].map(|i| (0..3).map(|j| r[i][j] as f64 * y[j]).sum());
            let rotated = crystal.to_cartesian(z);
            for c in 0..3 {
                out[target][c] += scale * rotated[c];
            }
        }
    }
    Ok(out)
}

/// A Cartesian tensor (e.g. a stress) averaged over the operations' rotations:
/// `(1/|ops|) Σ_ops R_cart M R_cartᵀ`, `R_cart = Lᵀ R L⁻ᵀ` (see [`symmetrize_vectors`]).
/// The translations do not act on a tensor of the whole cell.
pub fn symmetrize_tensor(crystal: &Crystal, ops: &[SymOp], m: &Mat3) -> Mat3 {
    if ops.is_empty() {
        return *m;
    }
    let rotate = |op: &SymOp, v: Vec3| -> Vec3 {
        let y = crystal.to_reduced(v);
        let r = op.rotation;
        crystal.to_cartesian([0, 1, 2].map(|i| (0..3).map(|j| r[i][j] as f64 * y[j]).sum()))
    };
    let mut out = [[0.0; 3]; 3];
    let scale = 1.0 / ops.len() as f64;
    for op in ops {
        // R M column by column; R applied to the columns of (R M)ᵀ gives R Mᵀ Rᵀ, whose
        // column j is row j of R M Rᵀ.
        let cols: Vec<Vec3> = (0..3)
            .map(|j| rotate(op, [m[0][j], m[1][j], m[2][j]]))
            .collect();
        for (j, row) in out.iter_mut().enumerate() {
            let c = rotate(op, [cols[0][j], cols[1][j], cols[2][j]]);
            for (o, v) in row.iter_mut().zip(c) {
                *o += scale * v;
            }
        }
    }
    out
}

/// `ρ_sym(G) = (1/|ops|) Σ_ops` of `ρ` transformed by each operation: the component at
/// `m' = Rᵀ m` receives `ρ(m) e^{2πi m·t}` (`ρ(R x + t) = ρ(x)`). Only the density
/// sphere `|G|² ≤ gsqcut` (and G = 0) is kept: outside it the density has no components.
/// `ops` must be a group, as [`find_operations`] returns (an empty list is taken as the
/// identity alone). Errors: a density whose length is not the grid's.
///
/// The sum is formed once per star of G, not once per point: at a point `q` it gathers
/// `ρ(R⁻ᵀ q) e^{2πi (R⁻ᵀ q)·t}` over the operations, and the symmetric result is then
/// known on the whole star, `ρ_sym(Rᵀ q) = ρ_sym(q) e^{2πi q·t}`. So each point is read
/// about once and written about once, where scattering every point through every
/// operation costs `|ops|` index computations per point (48 in a cubic crystal: a
/// twentieth of a silicon SCF). The phase factors by axis,
/// `e^{2πi m·t} = Π_c e^{2πi m_c t_c}`, come from a table of each operation's `n_c`
/// factors per axis: no sine or cosine per point and operation.
pub fn symmetrize(ops: &[SymOp], dg: &DensityGrid, gsqcut: f64, rho_g: &[c64]) -> Result<Vec<c64>> {
    if rho_g.len() != dg.grid.len() || dg.g2.len() != dg.grid.len() {
        return Err(ctensor::Error::ShapeMismatch {
            op: "symmetrize",
            expected: format!("a density of the grid's {} points", dg.grid.len()),
            got: vec![vec![rho_g.len()], vec![dg.g2.len()]],
        }
        .into());
    }
    let zero = c64::new(0.0, 0.0);
    let cut = gsqcut * (1.0 + 1e-12);
    let n = dg.grid.n;
    let mut out = vec![zero; rho_g.len()];
    if ops.is_empty() {
        for ((o, &r), &g2) in out.iter_mut().zip(rho_g).zip(&dg.g2) {
            if g2 <= cut {
                *o = r;
            }
        }
        return Ok(out);
    }
    let scale = 1.0 / ops.len() as f64;
    let low = n.map(|x| (x / 2) as i64);
    // phases[o][c][m_c + ⌊n_c/2⌋] = e^{2πi m_c t_c}, m_c over the grid's frequencies.
    let phases: Vec<[Vec<c64>; 3]> = ops
        .iter()
        .map(|op| {
            [0, 1, 2].map(|c| {
                (0..n[c] as i64)
                    .map(|j| {
                        c64::from_polar(1.0, 2.0 * PI * (j - low[c]) as f64 * op.translation[c])
                    })
                    .collect()
            })
        })
        .collect();
    // The grid point of a frequency vector (any integers: wrapped into the grid) and its
    // phase under operation `o`, from the point's own frequencies.
    let wrap = |m: i64, c: usize| -> usize {
        let k = n[c] as i64;
        (if (0..k).contains(&m) {
            m
        } else if (-k..0).contains(&m) {
            m + k
        } else {
            m.rem_euclid(k)
        }) as usize
    };
    let point = |m: [i64; 3]| -> ([usize; 3], usize) {
        let w = [0, 1, 2].map(|c| wrap(m[c], c));
        (w, (w[0] * n[1] + w[1]) * n[2] + w[2])
    };
    let phase = |o: usize, w: [usize; 3]| -> c64 {
        // Column `w_c` of the grid is frequency `w_c` or `w_c − n_c`; the table starts at
        // frequency −⌊n_c/2⌋.
        let at = [0, 1, 2].map(|c| (w[c] + low[c] as usize) % n[c]);
        let ph = &phases[o];
        ph[0][at[0]] * ph[1][at[1]] * ph[2][at[2]]
    };
    // m ↦ Aᵀ m for an integer matrix A given by rows.
    let apply_t = |a: &[[i64; 3]; 3], m: [i64; 3]| -> [i64; 3] {
        [0, 1, 2].map(|c| a[0][c] * m[0] + a[1][c] * m[1] + a[2][c] * m[2])
    };
    let inverses: Vec<[[i64; 3]; 3]> = ops.iter().map(|o| integer_inverse(&o.rotation)).collect();
    let mut done = vec![false; rho_g.len()];
    for (i, q) in dg.grid.frequency_iter().enumerate() {
        if done[i] || dg.g2[i] > cut {
            continue;
        }
        let mut sum = zero;
        for (o, inv) in inverses.iter().enumerate() {
            let (w, j) = point(apply_t(inv, q));
            if dg.g2[j] <= cut {
                sum += rho_g[j] * phase(o, w);
            }
        }
        let value = sum * scale;
        let (wq, _) = point(q);
        for (o, op) in ops.iter().enumerate() {
            let (_, j) = point(apply_t(&op.rotation, q));
            out[j] = value * phase(o, wq);
            done[j] = true;
        }
        // The representative itself, should `ops` lack the identity.
        done[i] = true;
    }
    Ok(out)
}

/// The inverse of an integer matrix of determinant ±1 (a rotation in reduced
/// coordinates), by its adjugate.
fn integer_inverse(r: &[[i64; 3]; 3]) -> [[i64; 3]; 3] {
    let cof = |i: usize, j: usize| {
        let (a, b) = ((i + 1) % 3, (i + 2) % 3);
        let (c, d) = ((j + 1) % 3, (j + 2) % 3);
        r[a][c] * r[b][d] - r[a][d] * r[b][c]
    };
    let det = r[0][0] * cof(0, 0) + r[0][1] * cof(0, 1) + r[0][2] * cof(0, 2);
    // The adjugate is the transposed cofactor matrix; det is ±1, so this is exact.
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| cof(j, i) * det))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::basis::FftGrid;
    use crate::crystal::tests::silicon;
    use crate::crystal::Atom;

    /// The definition, point by point: every point of the sphere scattered through every
    /// operation, `ρ(m) e^{2πi m·t}` added at `Rᵀ m` (the implementation before the
    /// gather by stars; phases by `sin`/`cos` here, not tables).
    fn scattered(ops: &[SymOp], dg: &DensityGrid, gsqcut: f64, rho_g: &[c64]) -> Vec<c64> {
        let mut out = vec![c64::new(0.0, 0.0); rho_g.len()];
        for (i, m) in dg.grid.frequency_iter().enumerate() {
            if dg.g2[i] > gsqcut * (1.0 + 1e-12) {
                continue;
            }
            for op in ops {
                let r = op.rotation;
                let mp = [0, 1, 2].map(|c| r[0][c] * m[0] + r[1][c] * m[1] + r[2][c] * m[2]);
                let arg = 2.0 * PI * (0..3).map(|c| m[c] as f64 * op.translation[c]).sum::<f64>();
                out[dg.grid.index(mp)] += rho_g[i] * c64::from_polar(1.0 / ops.len() as f64, arg);
            }
        }
        out
    }

    fn crystal(lattice: [Vec3; 3], species: &[&str], atoms: &[(usize, Vec3)]) -> Crystal {
        let atoms = atoms
            .iter()
            .map(|&(species, reduced)| Atom { species, reduced })
            .collect();
        Crystal::new(
            lattice,
            species.iter().map(|s| s.to_string()).collect(),
            atoms,
        )
        .expect("a valid test crystal")
    }

    /// The gather by stars against the scatter of every point, on random complex
    /// densities (not symmetric, not even Hermitian), for crystals whose groups differ in
    /// every way that matters: fractional translations (diamond, and the hexagonal screw
    /// axis of wurtzite, whose rotations have off-diagonal entries in reduced
    /// coordinates, and tellurium's 3₁ screw axis, where an operation's translation is
    /// not its inverse's), no inversion (zinc blende), pure translations among the operations
    /// (diamond's cubic cell: 192 operations, four per rotation), a low symmetry
    /// (four operations: inversion and a half-cell translation), and odd, even and
    /// non-cubic grids with cut-offs that do and do not
    /// reach the grid's edge.
    #[test]
    fn gathering_by_stars_equals_scattering_every_point() -> Result<()> {
        let a = 10.26;
        let fcc = [
            [0.0, a / 2.0, a / 2.0],
            [a / 2.0, 0.0, a / 2.0],
            [a / 2.0, a / 2.0, 0.0],
        ];
        let conv = [
            [0.0, 0.0, 0.0],
            [0.0, 0.5, 0.5],
            [0.5, 0.0, 0.5],
            [0.5, 0.5, 0.0],
            [0.25, 0.25, 0.25],
            [0.25, 0.75, 0.75],
            [0.75, 0.25, 0.75],
            [0.75, 0.75, 0.25],
        ];
        let (ha, hc) = (6.0, 9.8);
        let hexagonal = [
            [ha, 0.0, 0.0],
            [-ha / 2.0, ha * 3f64.sqrt() / 2.0, 0.0],
            [0.0, 0.0, hc],
        ];
        let cases = [
            (silicon(a), 10.0, None, 48),
            (
                crystal(fcc, &["Ga", "As"], &[(0, [0.0; 3]), (1, [0.25; 3])]),
                7.0,
                Some([15, 15, 15]),
                24,
            ),
            (
                crystal(
                    [[a, 0.0, 0.0], [0.0, a, 0.0], [0.0, 0.0, a]],
                    &["Si"],
                    &conv.map(|p| (0, p)),
                ),
                4.0,
                None,
                192,
            ),
            (
                crystal(
                    hexagonal,
                    &["Zn", "O"],
                    &[
                        (0, [1.0 / 3.0, 2.0 / 3.0, 0.0]),
                        (0, [2.0 / 3.0, 1.0 / 3.0, 0.5]),
                        (1, [1.0 / 3.0, 2.0 / 3.0, 0.38]),
                        (1, [2.0 / 3.0, 1.0 / 3.0, 0.88]),
                    ],
                ),
                6.0,
                Some([16, 16, 25]),
                12,
            ),
            (
                crystal(
                    [hexagonal[0], hexagonal[1], [0.0, 0.0, 11.2]],
                    &["Te"],
                    &[
                        (0, [0.26, 0.0, 1.0 / 3.0]),
                        (0, [0.0, 0.26, 2.0 / 3.0]),
                        (0, [-0.26, -0.26, 0.0]),
                    ],
                ),
                5.0,
                None,
                6,
            ),
            (
                crystal(
                    [[7.0, 0.3, 0.0], [0.1, 8.0, 0.2], [0.0, 0.4, 9.0]],
                    &["Si"],
                    &[(0, [0.0; 3]), (0, [0.5, 0.5, 0.5])],
                ),
                5.0,
                Some([17, 18, 19]),
                4,
            ),
        ];
        for (k, (c, ecut, grid, count)) in cases.into_iter().enumerate() {
            let ops = find_operations(&c, 1e-5)?;
            assert_eq!(ops.len(), count, "case {k}: operations");
            let grid = grid.map_or_else(|| FftGrid::for_cutoff(&c, ecut), |n| FftGrid { n });
            let dg = DensityGrid::new(&c, grid, ecut);
            let random: Vec<c64> = ctensor::Tensor::randn(
                ctensor::DataType::ComplexDouble,
                ctensor::DeviceType::Cpu,
                &[dg.grid.len()],
                11 + k as u64,
            )?
            .to_vec::<c64>()?;
            // The density's own cut-off, and one that ends inside the grid's sphere.
            for gsqcut in [8.0 * ecut, 3.1 * ecut] {
                let want = scattered(&ops, &dg, gsqcut, &random);
                let got = symmetrize(&ops, &dg, gsqcut, &random)?;
                let inside = dg.g2.iter().filter(|&&g2| g2 <= gsqcut).count();
                assert!(inside > 100, "case {k}: {inside} points in the sphere");
                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        (g - w).norm() < 1e-13,
                        "case {k}, gsqcut {gsqcut}, [{i}]: {g} against {w}"
                    );
                }
            }
        }
        Ok(())
    }

    /// No operations at all is the identity alone: the sphere kept, the rest zero; a grid
    /// of one point keeps its one component; a density of the wrong length is an error.
    #[test]
    fn no_operations_and_a_one_point_grid() -> Result<()> {
        let c = silicon(10.26);
        let dg = DensityGrid::new(&c, FftGrid { n: [5, 4, 3] }, 0.3);
        let rho: Vec<c64> = (0..dg.grid.len())
            .map(|i| c64::new(i as f64, 1.0))
            .collect();
        let identity = [SymOp {
            rotation: [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
            translation: [0.0; 3],
        }];
        let got = symmetrize(&[], &dg, 2.4, &rho)?;
        assert_eq!(got, symmetrize(&identity, &dg, 2.4, &rho)?);
        assert_eq!(got, scattered(&identity, &dg, 2.4, &rho));
        assert!(got.iter().any(|x| x.norm() == 0.0) && got.iter().any(|x| x.norm() > 0.0));
        let one = DensityGrid::new(&c, FftGrid { n: [1, 1, 1] }, 1.0);
        let ops = find_operations(&c, 1e-5)?;
        let x = [c64::new(8.0, 0.5)];
        assert!((symmetrize(&ops, &one, 8.0, &x)?[0] - x[0]).norm() < 1e-14);
        // A density of another length is refused, not indexed out of bounds.
        let e = symmetrize(&ops, &dg, 2.4, &rho[1..]).unwrap_err();
        assert!(
            e.to_string().contains("a density of the grid's 60 points"),
            "{e}"
        );
        Ok(())
    }

    #[test]
    fn integer_inverses_of_every_operation() -> Result<()> {
        let ops = find_operations(&silicon(10.26), 1e-5)?;
        for op in ops {
            let (r, inv) = (op.rotation, integer_inverse(&op.rotation));
            for i in 0..3 {
                for j in 0..3 {
                    let p: i64 = (0..3).map(|k| r[i][k] * inv[k][j]).sum();
                    assert_eq!(p, (i == j) as i64, "{r:?} · {inv:?}");
                }
            }
        }
        Ok(())
    }

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
        let out = symmetrize(&ops, &dg, gsqcut, &atomic)?;
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
        let once = symmetrize(&ops, &dg, gsqcut, &random)?;
        let twice = symmetrize(&ops, &dg, gsqcut, &once)?;
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

    /// Silicon with its second atom moved along [111] (D3d: 12 operations, the inversion
    /// through the bond's midpoint swapping the atoms, with a translation): any two
    /// vectors become `±((F₀ − F₁)/2 · n̂) n̂` with `n̂ = [111]/√3`, the closed form of the
    /// average over that group; the result is left as it is by a second pass; a cubic
    /// operation this cell lacks is an error naming it, as is a list of the wrong length.
    #[test]
    fn symmetrised_vectors_are_the_group_average() -> Result<()> {
        let mut crystal = silicon(10.26);
        crystal.atoms[1].reduced = [0.27; 3];
        let ops = find_operations(&crystal, 1e-5)?;
        assert_eq!(ops.len(), 12);
        let f = [[0.3, -0.7, 0.2], [-0.1, 0.5, 0.9]];
        let out = symmetrize_vectors(&crystal, &ops, 1e-4, &f)?;
        let n = 1.0 / 3f64.sqrt();
        let along: f64 = (0..3).map(|c| 0.5 * (f[0][c] - f[1][c]) * n).sum();
        for c in 0..3 {
            assert!((out[0][c] - along * n).abs() < 1e-14, "{out:?}");
            assert!((out[1][c] + along * n).abs() < 1e-14, "{out:?}");
        }
        let again = symmetrize_vectors(&crystal, &ops, 1e-4, &out)?;
        for (a, b) in again.iter().flatten().zip(out.iter().flatten()) {
            assert!((a - b).abs() < 1e-14);
        }
        // Without operations the vectors are returned as they are.
        assert_eq!(symmetrize_vectors(&crystal, &[], 1e-4, &f)?, f.to_vec());
        let cubic = find_operations(&silicon(10.26), 1e-5)?;
        let e = symmetrize_vectors(&crystal, &cubic, 1e-4, &f).unwrap_err();
        assert!(
            e.to_string()
                .contains("map every atom onto an atom of its species"),
            "{e}"
        );
        let e = symmetrize_vectors(&crystal, &ops, 1e-4, &f[..1]).unwrap_err();
        assert!(e.to_string().contains("one vector per atom (2)"), "{e}");
        Ok(())
    }

    /// A symmetric tensor averaged over diamond silicon's 48 operations is `(tr M / 3) I`;
    /// over the 12 of silicon moved along [111] it is `α I + β n̂n̂ᵀ`, keeping `tr M` and
    /// `n̂ᵀ M n̂` (`n̂ = [111]/√3`); without operations it is returned as it is.
    #[test]
    fn symmetrised_tensors_are_the_group_average() -> Result<()> {
        let m = [[0.3, -0.2, 0.5], [-0.2, 0.9, 0.1], [0.5, 0.1, -0.4]];
        let tr = m[0][0] + m[1][1] + m[2][2];
        let cubic = silicon(10.26);
        let out = symmetrize_tensor(&cubic, &find_operations(&cubic, 1e-5)?, &m);
        for (i, row) in out.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                let want = if i == j { tr / 3.0 } else { 0.0 };
                assert!((v - want).abs() < 1e-14, "{out:?}");
            }
        }
        let mut axial = silicon(10.26);
        axial.atoms[1].reduced = [0.27; 3];
        let out = symmetrize_tensor(&axial, &find_operations(&axial, 1e-5)?, &m);
        let n = 1.0 / 3f64.sqrt();
        let nmn: f64 = m.iter().flatten().map(|v| v * n * n).sum();
        let alpha = (tr - nmn) / 2.0;
        let beta = nmn - alpha;
        for (i, row) in out.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                let want = if i == j { alpha } else { 0.0 } + beta * n * n;
                assert!((v - want).abs() < 1e-14, "{out:?}");
            }
        }
        assert_eq!(symmetrize_tensor(&axial, &[], &m), m);
        Ok(())
    }
}
