//! The plane-wave basis: the FFT grid, per-k G-spheres `½|k+G|² ≤ ecut`, and the
//! density's G vectors on the grid.

use crate::crystal::{dot, Crystal, Vec3};
use crate::error::{input, Result};
use std::f64::consts::PI;

/// The real-space grid `n1 × n2 × n3` along the lattice vectors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FftGrid {
    /// Points along each lattice vector.
    pub n: [usize; 3],
}

impl FftGrid {
    /// ABINIT's default grid for `ecut` (boxcut ≥ 2): along each `a_i`, the smallest
    /// 2-3-5-smooth size `n_i` whose box holds the sphere of radius `2 G_max`,
    /// `G_max = √(2 ecut)`: the largest index the box holds symmetrically, `n/2` for even
    /// and `(n−1)/2` for odd `n` (ABINIT's count), must reach `2 G_max |a_i| / 2π`. The
    /// box then holds every product of two basis functions without aliasing. (Measured
    /// against ABINIT 9.6.2: 24³, 30³, 36³ for a = 10.26-bohr Si at 10, 20, 30 Ha; 27³ for
    /// a = 10.18 at 15 Ha; 30³ — not 27³ — for 10.68-bohr GaAs at 15 Ha.)
    pub fn for_cutoff(crystal: &Crystal, ecut: f64) -> FftGrid {
        let gmax = (2.0 * ecut).sqrt();
        let n = crystal.lattice.map(|a| {
            let reach = 2.0 * gmax * dot(a, a).sqrt() / (2.0 * PI) - 1e-9;
            let mut n = smooth_at_least((2.0 * reach).ceil().max(1.0) as usize);
            while ((n / 2) as f64) < reach {
                n = smooth_at_least(n + 1);
            }
            n
        });
        FftGrid { n }
    }

    /// The smallest grid whose box holds every integer `G` of the density's sphere
    /// `|G| ≤ 2 G_max` apart from its negative (no two of them on one grid point), so
    /// that `|ψ|²` of the basis functions is represented exactly: along each `a_i`,
    /// `n_i = 2 ⌊2 G_max |a_i| / 2π⌋ + 1`, of any size. An explicit grid must be at least
    /// this. Quantum ESPRESSO's default grid is the smallest FFT-friendly size at or
    /// above it (27³ for 10.68-bohr GaAs at 15 Ha, where ABINIT's criterion, that of
    /// [`for_cutoff`](Self::for_cutoff), gives 30³).
    pub fn minimum_for_cutoff(crystal: &Crystal, ecut: f64) -> FftGrid {
        let gmax = (2.0 * ecut).sqrt();
        let n = crystal.lattice.map(|a| {
            let reach = 2.0 * gmax * dot(a, a).sqrt() / (2.0 * PI);
            2 * (reach + 1e-9).floor() as usize + 1
        });
        FftGrid { n }
    }

    /// Points in the grid.
    pub fn len(&self) -> usize {
        self.n[0] * self.n[1] * self.n[2]
    }

    /// Whether the grid has no points (never, for a grid from [`FftGrid::for_cutoff`]).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The flat (row-major) grid index of the integer reciprocal vector `m`.
    pub fn index(&self, m: [i64; 3]) -> usize {
        let w = |j: usize| m[j].rem_euclid(self.n[j] as i64) as usize;
        (w(0) * self.n[1] + w(1)) * self.n[2] + w(2)
    }

    /// The integer vector `m` of each grid point, each component in `[−n/2, n/2)`.
    pub fn frequencies(&self) -> Vec<[i64; 3]> {
        self.frequency_iter().collect()
    }

    /// [`frequencies`](Self::frequencies) one grid point at a time, in row-major order,
    /// without the table (24 bytes a point: 9 MB for a 72³ grid).
    pub fn frequency_iter(&self) -> impl ExactSizeIterator<Item = [i64; 3]> {
        let f = |i: usize, n: usize| {
            if i < n.div_ceil(2) {
                i as i64
            } else {
                i as i64 - n as i64
            }
        };
        let [n1, n2, n3] = self.n;
        // One range mapped (not nested flat_maps): its exact length lets `collect`
        // allocate once.
        (0..self.len()).map(move |p| [f(p / (n2 * n3), n1), f(p / n3 % n2, n2), f(p % n3, n3)])
    }
}

/// The smallest `m ≥ n` whose prime factors are 2, 3 and 5 (odd sizes included, as
/// ABINIT: 27 for 10.18-bohr Si at 15 Ha).
pub fn smooth_at_least(n: usize) -> usize {
    (n.max(1)..)
        .find(|&m| {
            let mut r = m;
            for p in [2, 3, 5] {
                while r % p == 0 {
                    r /= p;
                }
            }
            r == 1
        })
        .unwrap_or(n)
}

/// The basis of one k-point: integer G vectors with `½|k+G|² ≤ ecut`.
#[derive(Clone, Debug)]
pub struct Sphere {
    /// The k-point in reduced coordinates of the reciprocal vectors.
    pub kred: Vec3,
    /// The integer components of each G.
    pub g: Vec<[i64; 3]>,
    /// `K = k + G` in Cartesian bohr⁻¹.
    pub kcart: Vec<Vec3>,
    /// `½|k+G|²` (Ha).
    pub kinetic: Vec<f64>,
    /// The flat grid index of each G.
    pub grid_index: Vec<usize>,
}

impl Sphere {
    /// The G-sphere of `kred` for `ecut` on `grid`; G is ordered by grid index.
    pub fn new(crystal: &Crystal, kred: Vec3, ecut: f64, grid: &FftGrid) -> Result<Sphere> {
        if !(ecut.is_finite() && ecut > 0.0) {
            return Err(input(
                "ecut_ha",
                "a finite cutoff > 0 (Ha)",
                format!("{ecut}"),
            ));
        }
        let kmax = (2.0 * ecut).sqrt();
        let bound = crystal
            .lattice
            .map(|a| (kmax * dot(a, a).sqrt() / (2.0 * PI)).ceil() as i64 + 1);
        let mut found: Vec<(usize, [i64; 3], Vec3, f64)> = Vec::new();
        for m1 in -bound[0]..=bound[0] {
            for m2 in -bound[1]..=bound[1] {
                for m3 in -bound[2]..=bound[2] {
                    let m = [m1, m2, m3];
                    let kc = crystal.reciprocal_cartesian([
                        m1 as f64 + kred[0],
                        m2 as f64 + kred[1],
                        m3 as f64 + kred[2],
                    ]);
                    let e = 0.5 * dot(kc, kc);
                    if e <= ecut {
                        found.push((grid.index(m), m, kc, e));
                    }
                }
            }
        }
        found.sort_by_key(|x| x.0);
        if found.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err(input(
                "fft_grid",
                "a grid that holds the G-sphere without folding",
                format!("{:?}", grid.n),
            ));
        }
        Ok(Sphere {
            kred,
            grid_index: found.iter().map(|x| x.0).collect(),
            g: found.iter().map(|x| x.1).collect(),
            kcart: found.iter().map(|x| x.2).collect(),
            kinetic: found.iter().map(|x| x.3).collect(),
        })
    }

    /// Number of plane waves.
    pub fn len(&self) -> usize {
        self.g.len()
    }

    /// Whether the sphere is empty.
    pub fn is_empty(&self) -> bool {
        self.g.is_empty()
    }
}

/// The G vectors of the density grid: `|G|²` of each grid point and whether it lies in
/// the density sphere `|G|² ≤ gsqcut = 8·ecut` (= (2 G_max)²), the only components
/// that enter V_H and V_loc.
pub struct DensityGrid {
    /// The grid.
    pub grid: FftGrid,
    /// `|G|²` (bohr⁻²) of each grid point.
    pub g2: Vec<f64>,
    /// Whether `0 < |G|² ≤ gsqcut`.
    pub in_sphere: Vec<bool>,
}

impl DensityGrid {
    /// The density grid of `grid` for `ecut`.
    pub fn new(crystal: &Crystal, grid: FftGrid, ecut: f64) -> DensityGrid {
        let gsqcut = 8.0 * ecut;
        let g2: Vec<f64> = grid
            .frequency_iter()
            .map(|v| {
                let g = crystal.reciprocal_cartesian([v[0] as f64, v[1] as f64, v[2] as f64]);
                dot(g, g)
            })
            .collect();
        let in_sphere = g2
            .iter()
            .map(|&x| x > 0.0 && x <= gsqcut * (1.0 + 1e-12))
            .collect();
        DensityGrid {
            grid,
            g2,
            in_sphere,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crystal::tests::silicon;
    use crate::crystal::Atom;

    /// Each grid point's frequency, on even, odd and mixed boxes: every component in
    /// `[−n/2, n/2)`, congruent to its index, at the point's row-major position.
    #[test]
    fn frequencies_are_the_centred_indices_in_row_major_order() {
        for n in [[1, 1, 1], [4, 5, 6], [9, 2, 7]] {
            let grid = FftGrid { n };
            let m: Vec<[i64; 3]> = grid.frequency_iter().collect();
            assert_eq!(m, grid.frequencies());
            assert_eq!(m.len(), grid.len());
            for (p, v) in m.iter().enumerate() {
                assert_eq!(grid.index(*v), p, "{n:?} {v:?}");
                for c in 0..3 {
                    let h = n[c] as i64;
                    assert!(-h / 2 <= v[c] && v[c] < h - h / 2, "{n:?} {v:?}");
                }
            }
        }
    }

    #[test]
    fn grids_are_abinits_for_silicon() {
        let c = silicon(10.26);
        for (ecut, n) in [(10.0, 24), (20.0, 30), (30.0, 36)] {
            assert_eq!(FftGrid::for_cutoff(&c, ecut).n, [n; 3], "ecut {ecut}");
        }
        assert_eq!(smooth_at_least(21), 24);
        assert_eq!(smooth_at_least(1), 1);
        assert_eq!(smooth_at_least(26), 27);
        assert_eq!(smooth_at_least(31), 32);
        // ABINIT 9.6.2 picks 27³ for a = 10.18 bohr at 15 Ha (pw/tests/data/abinit).
        assert_eq!(FftGrid::for_cutoff(&silicon(10.18), 15.0).n, [27; 3]);
        // …and 30³ for a = 10.68 at 15 Ha, where 27 (half-width 13) falls short of 13.2.
        assert_eq!(FftGrid::for_cutoff(&silicon(10.68), 15.0).n, [30; 3]);
        assert_eq!(FftGrid::for_cutoff(&silicon(10.68), 14.0).n, [27; 3]);
        // Quantum ESPRESSO 6.7's grid for GaAs at 15 Ha is 27³: 2⌊2·√30·7.552/2π⌋ + 1.
        assert_eq!(
            FftGrid::minimum_for_cutoff(&silicon(10.68), 15.0).n,
            [27; 3]
        );
    }

    /// The minimum grid holds every integer vector of the density's sphere apart from its
    /// negative (by brute force), on the fcc cells exactly (one size less would not);
    /// ABINIT's grid is never below it.
    #[test]
    fn the_minimum_grid_holds_the_density_sphere() {
        let mut cells = vec![silicon(10.26), silicon(10.68), silicon(10.18)];
        // A skewed triclinic cell, and a long orthorhombic one.
        for lattice in [
            [[7.1, 0.3, -0.2], [1.9, 8.3, 0.4], [-0.7, 2.2, 11.9]],
            [[5.0, 0.0, 0.0], [0.0, 6.5, 0.0], [0.0, 0.0, 23.0]],
        ] {
            let atom = Atom {
                species: 0,
                reduced: [0.0; 3],
            };
            cells.push(Crystal::new(lattice, vec!["Si".into()], vec![atom]).unwrap());
        }
        for (n, c) in cells.iter().enumerate() {
            for ecut in [3.0, 7.5, 10.0, 15.0, 22.0] {
                let min = FftGrid::minimum_for_cutoff(c, ecut);
                let abinit = FftGrid::for_cutoff(c, ecut);
                // The largest |m_i| over the integer vectors in |G| ≤ 2 G_max, brute force.
                let r2 = 4.0 * 2.0 * ecut;
                let mut reach = [0i64; 3];
                let lim = [0, 1, 2].map(|i| min.n[i] as i64);
                for m0 in -lim[0]..=lim[0] {
                    for m1 in -lim[1]..=lim[1] {
                        for m2 in -lim[2]..=lim[2] {
                            let g = c.reciprocal_cartesian([m0 as f64, m1 as f64, m2 as f64]);
                            if dot(g, g) <= r2 {
                                for (i, m) in [m0, m1, m2].into_iter().enumerate() {
                                    reach[i] = reach[i].max(m.abs());
                                }
                            }
                        }
                    }
                }
                for (i, r) in reach.into_iter().enumerate() {
                    assert!(abinit.n[i] >= min.n[i], "ABINIT's grid below the minimum");
                    // Holding ±m apart needs n ≥ 2 max|m| + 1.
                    let need = 2 * r as usize + 1;
                    assert!(
                        min.n[i] >= need,
                        "{:?} at {ecut}: {} < {need}",
                        c.lattice,
                        min.n[i]
                    );
                    if n < 3 {
                        assert_eq!(min.n[i], need, "fcc a = {:?} at {ecut}", c.lattice);
                    }
                }
            }
        }
    }

    #[test]
    fn sphere_counts_match_a_brute_force_count_and_abinit_at_gamma() -> Result<()> {
        let c = silicon(10.26);
        let grid = FftGrid::for_cutoff(&c, 10.0);
        let s = Sphere::new(&c, [0.0; 3], 10.0, &grid)?;
        // ABINIT (istwfk 1): 411 plane waves at Γ for a = 10.26, ecut 10.
        assert_eq!(s.len(), 411);
        // A brute-force count over a much larger box, at an off-symmetry k.
        let k = [0.137, -0.29, 0.41];
        let s = Sphere::new(&c, k, 7.3, &grid)?;
        let mut count = 0;
        for m1 in -12i64..=12 {
            for m2 in -12i64..=12 {
                for m3 in -12i64..=12 {
                    let kc = c.reciprocal_cartesian([
                        m1 as f64 + k[0],
                        m2 as f64 + k[1],
                        m3 as f64 + k[2],
                    ]);
                    count += (0.5 * dot(kc, kc) <= 7.3) as usize;
                }
            }
        }
        assert_eq!(s.len(), count);
        assert!(s.kinetic.iter().all(|&e| e <= 7.3));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(Sphere::new(&c, k, bad, &grid).is_err());
        }
        Ok(())
    }
}
