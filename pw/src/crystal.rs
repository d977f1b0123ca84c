//! The crystal: lattice vectors, atoms, the reciprocal lattice and the checks a cell must
//! pass before anything is computed from it.

use crate::error::{input, Result};
use std::f64::consts::PI;

/// A 3-vector.
pub type Vec3 = [f64; 3];

/// A 3×3 matrix (rows), e.g. a Cartesian stress tensor.
pub type Mat3 = [[f64; 3]; 3];

/// An atom: its species (an index into [`Crystal::species`]) and its position in reduced
/// coordinates of the lattice vectors.
#[derive(Clone, Debug, PartialEq)]
pub struct Atom {
    /// Index into the crystal's species list.
    pub species: usize,
    /// Position `x` with `r = Σ_i x_i a_i`.
    pub reduced: Vec3,
}

/// A periodic crystal: lattice vectors `a_i` (rows, bohr) and atoms.
#[derive(Clone, Debug)]
pub struct Crystal {
    /// `lattice[i]` is `a_i` in Cartesian bohr.
    pub lattice: [Vec3; 3],
    /// Species names, e.g. `["Si"]`.
    pub species: Vec<String>,
    /// The atoms of the cell.
    pub atoms: Vec<Atom>,
}

/// Two atoms closer than this (bohr, over all periodic images) are "on top of each other".
pub const MIN_DISTANCE_BOHR: f64 = 1e-3;

impl Crystal {
    /// A crystal after checking it: finite lattice vectors forming a right-handed cell of
    /// non-negligible volume, at least one atom, finite positions, known species, and no
    /// two atoms (or an atom and an image of another) within [`MIN_DISTANCE_BOHR`].
    pub fn new(lattice: [Vec3; 3], species: Vec<String>, atoms: Vec<Atom>) -> Result<Crystal> {
        if lattice.iter().flatten().any(|x| !x.is_finite()) {
            return Err(input(
                "lattice_vectors_bohr",
                "finite numbers",
                format!("{lattice:?}"),
            ));
        }
        let det = dot(lattice[0], cross(lattice[1], lattice[2]));
        let scale: f64 = lattice.iter().map(|a| norm(*a)).product();
        if scale == 0.0 || det.abs() <= 1e-8 * scale {
            return Err(input(
                "lattice_vectors_bohr",
                "three linearly independent vectors",
                format!("a singular cell (volume {det:.3e} bohr^3) from {lattice:?}"),
            ));
        }
        if det < 0.0 {
            return Err(input(
                "lattice_vectors_bohr",
                "a right-handed cell (a1 · (a2 × a3) > 0)",
                format!("a left-handed one (a1 · (a2 × a3) = {det:.6})"),
            ));
        }
        if atoms.is_empty() {
            return Err(input("atoms", "at least one atom", "none"));
        }
        for (i, a) in atoms.iter().enumerate() {
            if a.reduced.iter().any(|x| !x.is_finite()) {
                return Err(input(
                    format!("atoms[{i}].reduced"),
                    "finite numbers",
                    format!("{:?}", a.reduced),
                ));
            }
            if a.species >= species.len() {
                return Err(input(
                    format!("atoms[{i}].species"),
                    format!("an index below {}", species.len()),
                    a.species.to_string(),
                ));
            }
        }
        let c = Crystal {
            lattice,
            species,
            atoms,
        };
        for i in 0..c.atoms.len() {
            for j in i + 1..c.atoms.len() {
                let d = c.min_image_distance(c.atoms[i].reduced, c.atoms[j].reduced);
                if d < MIN_DISTANCE_BOHR {
                    return Err(input(
                        format!("atoms[{i}] and atoms[{j}]"),
                        format!("atoms at least {MIN_DISTANCE_BOHR} bohr apart"),
                        format!("{d:.2e} bohr apart (on top of each other)"),
                    ));
                }
            }
        }
        Ok(c)
    }

    /// The cell volume Ω (bohr³).
    pub fn volume(&self) -> f64 {
        dot(self.lattice[0], cross(self.lattice[1], self.lattice[2]))
    }

    /// The reciprocal vectors `b_j` (rows, bohr⁻¹) with `a_i · b_j = 2π δ_ij`.
    pub fn reciprocal(&self) -> [Vec3; 3] {
        let [a1, a2, a3] = self.lattice;
        let f = 2.0 * PI / self.volume();
        [
            scale(cross(a2, a3), f),
            scale(cross(a3, a1), f),
            scale(cross(a1, a2), f),
        ]
    }

    /// Cartesian coordinates (bohr) of a reduced position.
    pub fn to_cartesian(&self, x: Vec3) -> Vec3 {
        let mut r = [0.0; 3];
        for (i, a) in self.lattice.iter().enumerate() {
            for d in 0..3 {
                r[d] += x[i] * a[d];
            }
        }
        r
    }

    /// Reduced coordinates of a Cartesian vector `r` (bohr), the inverse of
    /// [`to_cartesian`](Self::to_cartesian): `x_i = b_i · r / 2π`.
    pub fn to_reduced(&self, r: Vec3) -> Vec3 {
        self.reciprocal().map(|b| dot(b, r) / (2.0 * PI))
    }

    /// The crystal with atom `atom` moved by the Cartesian vector `shift` (bohr), checked
    /// as [`Crystal::new`] checks a crystal. Errors: no such atom, a shift that is not
    /// finite, or an atom moved onto another.
    pub fn displaced(&self, atom: usize, shift: Vec3) -> Result<Crystal> {
        let mut atoms = self.atoms.clone();
        let moved = atoms.get_mut(atom).ok_or_else(|| {
            input(
                "atoms",
                format!("an atom index below {}", self.atoms.len()),
                atom.to_string(),
            )
        })?;
        for (x, dx) in moved.reduced.iter_mut().zip(self.to_reduced(shift)) {
            *x += dx;
        }
        Crystal::new(self.lattice, self.species.clone(), atoms)
    }

    /// Cartesian coordinates (bohr⁻¹) of a reciprocal vector given in reduced coordinates
    /// of the `b_j` (a k-point's `kred`, or integer `G` components).
    pub fn reciprocal_cartesian(&self, m: Vec3) -> Vec3 {
        let b = self.reciprocal();
        let mut g = [0.0; 3];
        for (j, bj) in b.iter().enumerate() {
            for d in 0..3 {
                g[d] += m[j] * bj[d];
            }
        }
        g
    }

    /// The shortest distance (bohr) between `x` and any periodic image of `y`.
    pub fn min_image_distance(&self, x: Vec3, y: Vec3) -> f64 {
        let d0: Vec3 = [0, 1, 2].map(|i| {
            let d = x[i] - y[i];
            d - d.round()
        });
        let mut best = f64::INFINITY;
        for n1 in -1..=1 {
            for n2 in -1..=1 {
                for n3 in -1..=1 {
                    let d = [d0[0] + n1 as f64, d0[1] + n2 as f64, d0[2] + n3 as f64];
                    best = best.min(norm(self.to_cartesian(d)));
                }
            }
        }
        best
    }
}

/// `a · b`.
pub fn dot(a: Vec3, b: Vec3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `a × b`.
pub fn cross(a: Vec3, b: Vec3) -> Vec3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// `|a|`.
pub fn norm(a: Vec3) -> f64 {
    dot(a, a).sqrt()
}

fn scale(a: Vec3, f: f64) -> Vec3 {
    [a[0] * f, a[1] * f, a[2] * f]
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn fcc(a: f64) -> [Vec3; 3] {
        [
            [0.0, a / 2.0, a / 2.0],
            [a / 2.0, 0.0, a / 2.0],
            [a / 2.0, a / 2.0, 0.0],
        ]
    }

    /// Diamond silicon with lattice constant `a` (bohr): the fixture of every pw unit test.
    pub(crate) fn silicon(a: f64) -> Crystal {
        si(fcc(a), [0.25; 3]).expect("diamond silicon is a valid crystal")
    }

    fn si(lattice: [Vec3; 3], x2: Vec3) -> Result<Crystal> {
        let atoms = vec![
            Atom {
                species: 0,
                reduced: [0.0; 3],
            },
            Atom {
                species: 0,
                reduced: x2,
            },
        ];
        Crystal::new(lattice, vec!["Si".into()], atoms)
    }

    #[test]
    fn volume_and_reciprocal_vectors_of_fcc() -> Result<()> {
        let c = si(fcc(10.26), [0.25; 3])?;
        assert!((c.volume() - 10.26f64.powi(3) / 4.0).abs() < 1e-10);
        let b = c.reciprocal();
        for (i, a) in c.lattice.iter().enumerate() {
            for (j, bj) in b.iter().enumerate() {
                let want = if i == j { 2.0 * PI } else { 0.0 };
                assert!((dot(*a, *bj) - want).abs() < 1e-12);
            }
        }
        // Si's second atom is a/4 (1, 1, 1) away: √3 a / 4.
        let d = c.min_image_distance([0.0; 3], [0.25; 3]);
        assert!((d - 3f64.sqrt() * 10.26 / 4.0).abs() < 1e-12);
        Ok(())
    }

    /// `to_reduced` inverts `to_cartesian` in a skewed cell, and `displaced` moves one
    /// atom by the Cartesian vector it is given and no other; an atom that is not there,
    /// a NaN shift, or a move onto the other atom is an error.
    #[test]
    fn reduced_and_cartesian_coordinates_are_inverse() -> Result<()> {
        let c = si(
            [[0.3, 5.1, 4.8], [5.3, 0.2, 5.0], [4.9, 5.2, -0.4]],
            [0.27, 0.24, 0.22],
        )?;
        let r = [0.7, -1.3, 2.9];
        let back = c.to_cartesian(c.to_reduced(r));
        assert!((0..3).all(|i| (back[i] - r[i]).abs() < 1e-13), "{back:?}");
        let moved = c.displaced(1, r)?;
        assert_eq!(moved.atoms[0], c.atoms[0]);
        let d =
            c.to_cartesian([0, 1, 2].map(|i| moved.atoms[1].reduced[i] - c.atoms[1].reduced[i]));
        assert!((0..3).all(|i| (d[i] - r[i]).abs() < 1e-13), "{d:?}");
        assert!(c
            .displaced(2, r)
            .unwrap_err()
            .to_string()
            .contains("below 2"));
        assert!(c.displaced(0, [f64::NAN, 0.0, 0.0]).is_err());
        let onto = c.to_cartesian(c.atoms[0].reduced);
        let there = c.to_cartesian(c.atoms[1].reduced);
        let e = c
            .displaced(1, [0, 1, 2].map(|i| onto[i] - there[i]))
            .unwrap_err();
        assert!(e.to_string().contains("bohr"), "{e}");
        Ok(())
    }

    #[test]
    fn bad_cells_and_atoms_are_refused_with_the_reason() {
        let e = si(
            [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]],
            [0.25; 3],
        )
        .unwrap_err();
        assert!(e.to_string().contains("singular"), "{e}");
        let mut left = fcc(10.26);
        left.swap(0, 1);
        let e = si(left, [0.25; 3]).unwrap_err();
        assert!(e.to_string().contains("left-handed"), "{e}");
        let e = si(fcc(10.26), [1.0, 0.0, -1.0]).unwrap_err();
        assert!(e.to_string().contains("on top of each other"), "{e}");
        let e = si(fcc(f64::NAN), [0.25; 3]).unwrap_err();
        assert!(e.to_string().contains("finite"), "{e}");
        let e = si(fcc(10.26), [f64::INFINITY, 0.0, 0.0]).unwrap_err();
        assert!(e.to_string().contains("finite"), "{e}");
        assert!(Crystal::new(fcc(10.26), vec!["Si".into()], vec![]).is_err());
    }
}
