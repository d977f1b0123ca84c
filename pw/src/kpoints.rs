//! Monkhorst–Pack k-point sets and their reduction by the crystal's symmetry and time
//! reversal.

use crate::crystal::Vec3;
use crate::error::{input, Result};

/// A k-point of the reduced set: reduced coordinates and weight (Σ weights = 1).
#[derive(Clone, Debug, PartialEq)]
pub struct KPoint {
    /// Reduced coordinates of the reciprocal vectors.
    pub kred: Vec3,
    /// The fraction of the full set this point stands for.
    pub weight: f64,
}

/// The full Monkhorst–Pack set `k = Σ_j (n_j + s_j)/N_j b_j`, `n_j = 0..N_j`, for every
/// shift `s` (in units of the grid step), folded into `(−½, ½]`.
pub fn monkhorst_pack(ngkpt: [usize; 3], shifts: &[Vec3]) -> Result<Vec<Vec3>> {
    if ngkpt.contains(&0) {
        return Err(input(
            "kmesh.ngkpt",
            "three counts >= 1",
            format!("{ngkpt:?}"),
        ));
    }
    if ngkpt.iter().product::<usize>() > 1_000_000 {
        return Err(input(
            "kmesh.ngkpt",
            "at most 10^6 points",
            format!("{ngkpt:?}"),
        ));
    }
    if shifts.is_empty() {
        return Err(input(
            "kmesh.shifts",
            "at least one shift (e.g. [[0, 0, 0]])",
            "none",
        ));
    }
    if shifts.iter().flatten().any(|s| !s.is_finite()) {
        return Err(input(
            "kmesh.shifts",
            "finite numbers",
            format!("{shifts:?}"),
        ));
    }
    let mut out = Vec::new();
    for s in shifts {
        for a in 0..ngkpt[0] {
            for b in 0..ngkpt[1] {
                for c in 0..ngkpt[2] {
                    let k = [
                        (a as f64 + s[0]) / ngkpt[0] as f64,
                        (b as f64 + s[1]) / ngkpt[1] as f64,
                        (c as f64 + s[2]) / ngkpt[2] as f64,
                    ];
                    out.push(k.map(fold));
                }
            }
        }
    }
    Ok(out)
}

/// `x` folded into `(−½, ½]`.
pub fn fold(x: f64) -> f64 {
    let y = x - x.round();
    if y <= -0.5 + 1e-12 {
        y + 1.0
    } else {
        y
    }
}

/// The key of a k-point modulo reciprocal lattice vectors (to 1e-8).
fn key(k: Vec3) -> [i64; 3] {
    k.map(|x| {
        let f = fold(x);
        let v = (f * 1e8).round() as i64;
        if v == -50_000_000 {
            50_000_000
        } else {
            v
        }
    })
}

/// Reduces `full` (equal weights) by the rotations `rotations` (integer matrices acting on
/// reduced k as `k → Rᵀ k`, i.e. the real-space rotations of the space group in reduced
/// coordinates; the identity is implied) and, with `time_reversal`, by `k → −k`. Each
/// orbit is represented by its first member in `full`'s order, weighted by the number of
/// members of `full` it stands for. Members of an orbit that are not in `full` (a mesh
/// that breaks the symmetry) are ignored, so the weights stay exact.
pub fn reduce(full: &[Vec3], rotations: &[[[i64; 3]; 3]], time_reversal: bool) -> Vec<KPoint> {
    use std::collections::HashMap;
    let mut count: HashMap<[i64; 3], usize> = HashMap::new();
    for k in full {
        *count.entry(key(*k)).or_insert(0) += 1;
    }
    let mut seen: HashMap<[i64; 3], ()> = HashMap::new();
    let mut out = Vec::new();
    let n = full.len() as f64;
    let identity = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
    for k in full {
        if seen.contains_key(&key(*k)) {
            continue;
        }
        let mut members = 0usize;
        for r in std::iter::once(&identity).chain(rotations) {
            let rk: Vec3 = [0, 1, 2].map(|i| (0..3).map(|j| r[j][i] as f64 * k[j]).sum());
            let images: &[Vec3] = if time_reversal {
                &[rk, [-rk[0], -rk[1], -rk[2]]]
            } else {
                &[rk]
            };
            for img in images {
                let kk = key(*img);
                if let (Some(c), std::collections::hash_map::Entry::Vacant(slot)) =
                    (count.get(&kk), seen.entry(kk))
                {
                    members += c;
                    slot.insert(());
                }
            }
        }
        out.push(KPoint {
            kred: k.map(fold),
            weight: members as f64 / n,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_reversal_halves_a_shifted_mesh_and_keeps_the_weights_exact() -> Result<()> {
        let shifts = [
            [0.5, 0.5, 0.5],
            [0.5, 0.0, 0.0],
            [0.0, 0.5, 0.0],
            [0.0, 0.0, 0.5],
        ];
        let full = monkhorst_pack([4, 4, 4], &shifts)?;
        assert_eq!(full.len(), 256);
        let red = reduce(&full, &[], true);
        let total: f64 = red.iter().map(|k| k.weight).sum();
        assert!((total - 1.0).abs() < 1e-14);
        // No point of these meshes is its own time-reversed image except the ones on the
        // zone boundary planes (k ≡ −k needs 2k ≡ 0).
        let selfconj = full
            .iter()
            .filter(|k| k.iter().all(|x| (2.0 * x).fract().abs() < 1e-12))
            .count();
        assert_eq!(red.len(), (full.len() - selfconj) / 2 + selfconj);
        // Γ-centred 2×2×2: all 8 points are their own time-reversed images.
        let g = monkhorst_pack([2, 2, 2], &[[0.0; 3]])?;
        assert_eq!(reduce(&g, &[], true).len(), 8);
        // A rotation that swaps axes merges (½,0,0) with (0,½,0) and (0,0,½)'s partner.
        let swap = [[0, 1, 0], [1, 0, 0], [0, 0, 1]];
        let red = reduce(&g, &[swap], true);
        assert_eq!(red.len(), 6);
        assert!((red.iter().map(|k| k.weight).sum::<f64>() - 1.0).abs() < 1e-14);
        Ok(())
    }

    #[test]
    fn empty_meshes_and_bad_shifts_are_refused() {
        assert!(monkhorst_pack([0, 4, 4], &[[0.0; 3]])
            .unwrap_err()
            .to_string()
            .contains("ngkpt"));
        assert!(monkhorst_pack([1, 1, 1], &[]).is_err());
        assert!(monkhorst_pack([1, 1, 1], &[[f64::NAN, 0.0, 0.0]]).is_err());
    }
}
