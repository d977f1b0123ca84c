//! The crystal's symmetry applied to H(k): a symmetry-adapted plane-wave basis in which
//! the Hamiltonian of a zinc-blende crystal is real, or splits into two blocks, at every
//! k-point that an operation of its space group fixes.
//!
//! A zinc-blende crystal has no inversion centre, so its H(k) is complex. But at a k-point
//! fixed by an operation R of the cubic group, the plane-wave map G → R·G with phases
//! e^{2πi G·w} (w from the operation's fractional translation) commutes with H(k), either
//! as it is (R in the crystal's point group T_d: a unitary U) or followed by complex
//! conjugation (−R in T_d: time reversal times a space-group operation, an antiunitary
//! Θ). With Θ² = 1 the Θ-invariant combinations of plane waves form a basis in which H(k)
//! is real; with U² = c the eigenvectors of U (eigenvalues ±√c) split H(k) into two
//! blocks. Either way the lowest eigenvalues are those of H(k) exactly, from about a
//! quarter of the flops of the complex Hermitian solve (a real matrix of the same order,
//! or two complex ones of half the order). On the demo's path the kz = 0 plane
//! (Γ–X, K–Γ) has an antiunitary operation (time reversal with the 2-fold rotation
//! about z) and the mirror planes x = y, y = z (L–Γ, X–U) a unitary one.
//!
//! The operations are found, not assumed: every signed permutation R and every w on a
//! 1/8 grid is tried against the potential's Fourier components, so a material whose
//! form factors broke a symmetry would simply lose it.

use std::collections::HashMap;
use std::f64::consts::PI;

use ctensor::{c64, DataType, Tensor};

use crate::model::Material;
use crate::planewave::form_factor;
use crate::{Fail, Res};

/// A symmetry of every H(k) whose k it fixes: the plane-wave map G → R·G with the phases
/// e^{2πi G·w} (G in units of 2π/a), alone or followed by complex conjugation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Symmetry {
    /// The rotation part, a signed permutation matrix.
    pub(crate) r: [[i32; 3]; 3],
    /// The phase vector, in units of the lattice constant.
    pub(crate) w: [f64; 3],
    /// Whether the map is followed by complex conjugation.
    pub(crate) antiunitary: bool,
}

/// One block of a symmetry-adapted H(k): its k-independent part V' = Bᴴ V B (real for an
/// antiunitary operation) and, for each of its basis vectors, a plane wave it combines (all
/// the plane waves a basis vector combines have the same |k + G|²).
pub(crate) struct Block {
    /// V' on the model's device: f64 for a real block, c64 for a complex one.
    pub(crate) v: Tensor,
    /// For each basis vector, the index of one of its plane waves.
    pub(crate) rep: Vec<usize>,
}

/// A symmetry-adapted basis vector: its plane waves (indices into the basis) and their
/// coefficients.
pub(crate) type Combination = Vec<(usize, c64)>;

fn apply(r: &[[i32; 3]; 3], v: [i32; 3]) -> [i32; 3] {
    let row = |i: usize| (0..3).map(|j| r[i][j] * v[j]).sum();
    [row(0), row(1), row(2)]
}

/// The 48 signed permutation matrices (the cubic group O_h), the identity first.
fn cubic_group() -> Vec<[[i32; 3]; 3]> {
    let perms = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    let mut ops = Vec::with_capacity(48);
    for p in perms {
        for signs in 0..8 {
            let mut r = [[0; 3]; 3];
            for i in 0..3 {
                r[i][p[i]] = if signs >> i & 1 == 1 { -1 } else { 1 };
            }
            ops.push(r);
        }
    }
    ops
}

/// Every symmetry of H(k) the material's potential has, apart from the identity: each
/// signed permutation R, with and without conjugation, and the first w on a 1/8 grid
/// (in units of a) for which V(R q) = e^{2πi q·w} V(q) (or its conjugate) for every q
/// where V is non-zero or might be (|q|² ≤ 11; R keeps |q|², so the zeros beyond map to
/// zeros).
pub(crate) fn symmetries(mat: &Material) -> Vec<Symmetry> {
    let mut qs = Vec::new();
    for a in -3..=3i32 {
        for b in -3..=3i32 {
            for c in -3..=3i32 {
                let even = (a & 1, b & 1, c & 1);
                if (even == (0, 0, 0) || even == (1, 1, 1)) && a * a + b * b + c * c <= 11 {
                    qs.push([a, b, c]);
                }
            }
        }
    }
    let vq: HashMap<[i32; 3], c64> = qs
        .iter()
        .map(|&q| (q, form_factor(mat, q.map(i64::from))))
        .collect();
    let scale = vq.values().map(|v| v.norm()).fold(0.0, f64::max).max(1.0);
    let grid: Vec<[f64; 3]> = (0..512)
        .map(|i| {
            [
                (i & 7) as f64 / 8.0,
                (i >> 3 & 7) as f64 / 8.0,
                (i >> 6) as f64 / 8.0,
            ]
        })
        .collect();
    let mut found = Vec::new();
    let group = cubic_group();
    for &r in &group {
        for antiunitary in [false, true] {
            if !antiunitary && r == group[0] {
                continue;
            }
            let holds = |w: &[f64; 3]| {
                qs.iter().all(|&q| {
                    let turn = 2.0 * PI * (0..3).map(|d| q[d] as f64 * w[d]).sum::<f64>();
                    let v = vq[&q];
                    let rhs = c64::from_polar(1.0, turn) * if antiunitary { v.conj() } else { v };
                    (vq[&apply(&r, q)] - rhs).norm() <= 1e-12 * scale
                })
            };
            if let Some(w) = grid.iter().find(|w| holds(w)) {
                found.push(Symmetry {
                    r,
                    w: *w,
                    antiunitary,
                });
            }
        }
    }
    found
}

/// Whether `s` fixes the k-point `k` (in units of 2π/a) exactly: R·k = k. Then it maps
/// the fixed basis |G|² ≤ cut and the k-dependent one |k + G|² ≤ cut onto themselves.
pub(crate) fn fixes(s: &Symmetry, k: [f64; 3]) -> bool {
    (0..3).all(|i| ((0..3).map(|j| s.r[i][j] as f64 * k[j]).sum::<f64>() - k[i]).abs() < 1e-12)
}

/// The symmetry-adapted basis of `s` over the plane waves `gs`: the blocks' basis vectors,
/// each as its (plane wave, coefficient) pairs. `None` when `s` does not give a reduction
/// on this basis: R does not map it onto itself, R² ≠ 1, Θ² ≠ 1 (antiunitary), or U² is
/// not a multiple of 1 (unitary).
pub(crate) fn adapted_basis(s: &Symmetry, gs: &[[f64; 3]]) -> Option<Vec<Vec<Combination>>> {
    let key = |g: &[f64; 3]| {
        [
            g[0].round() as i32,
            g[1].round() as i32,
            g[2].round() as i32,
        ]
    };
    let index: HashMap<[i32; 3], usize> = gs.iter().enumerate().map(|(i, g)| (key(g), i)).collect();
    let mut pi = Vec::with_capacity(gs.len());
    for g in gs {
        pi.push(*index.get(&apply(&s.r, key(g)))?);
    }
    if (0..gs.len()).any(|i| pi[pi[i]] != i) {
        return None;
    }
    // e^{iφ(G)}, φ(G) = 2π G·w.
    let phase: Vec<c64> = gs
        .iter()
        .map(|g| c64::from_polar(1.0, 2.0 * PI * (0..3).map(|d| g[d] * s.w[d]).sum::<f64>()))
        .collect();
    let close = |a: c64, b: c64| (a - b).norm() < 1e-10;
    let half = std::f64::consts::FRAC_1_SQRT_2;
    if s.antiunitary {
        // Θ e_G = e^{iφ(G)} e_{RG}; Θ² e_G = e^{i(φ(RG) − φ(G))} e_G must be e_G.
        if (0..gs.len()).any(|i| !close(phase[pi[i]], phase[i])) {
            return None;
        }
        let mut block = Vec::with_capacity(gs.len());
        for i in 0..gs.len() {
            let j = pi[i];
            if j == i {
                // Θ(α e_G) = α e_G for α = e^{iφ/2}.
                block.push(vec![(i, c64::from_polar(1.0, phase[i].arg() / 2.0))]);
            } else if i < j {
                // (e_G + Θ e_G)/√2 and (i e_G + Θ(i e_G))/√2.
                block.push(vec![(i, c64::new(half, 0.0)), (j, phase[i] * half)]);
                block.push(vec![
                    (i, c64::new(0.0, half)),
                    (j, phase[i] * c64::new(0.0, -half)),
                ]);
            }
        }
        Some(vec![block])
    } else {
        // U e_G = e^{iφ(G)} e_{RG}; U² e_G = e^{i(φ(G) + φ(RG))} e_G must be c e_G.
        let c = phase[0] * phase[pi[0]];
        if (0..gs.len()).any(|i| !close(phase[i] * phase[pi[i]], c)) {
            return None;
        }
        let root = c64::from_polar(1.0, c.arg() / 2.0);
        let mut blocks = vec![Vec::new(), Vec::new()];
        for i in 0..gs.len() {
            let j = pi[i];
            if j == i {
                // An eigenvector of U with eigenvalue e^{iφ(G)} = ±√c.
                let sector = usize::from(!close(phase[i], root));
                blocks[sector].push(vec![(i, c64::new(1.0, 0.0))]);
            } else if i < j {
                // (e_G + μ e^{−iφ(RG)} e_{RG})/√2 has eigenvalue μ = ±√c.
                for (sector, mu) in [(0, root), (1, -root)] {
                    blocks[sector].push(vec![
                        (i, c64::new(half, 0.0)),
                        (j, mu * phase[j].conj() * half),
                    ]);
                }
            }
        }
        Some(blocks)
    }
}

/// V' = Bᴴ V B for each block of `basis` (from [`adapted_basis`]), with V the
/// k-independent potential matrix (`[n, n]`, c64, on any device): real (f64) for the one
/// block of an antiunitary operation, whose imaginary part is checked to vanish, c64
/// otherwise; on V's device.
pub(crate) fn reduce(v: &Tensor, basis: &[Vec<Combination>], antiunitary: bool) -> Res<Vec<Block>> {
    let n = v.dims()[0];
    let device = v.device();
    let host = v
        .cast(DataType::ComplexDouble)?
        .contiguous()?
        .to_vec::<c64>()?;
    let scale = host.iter().map(|x| x.norm()).fold(0.0, f64::max).max(1.0);
    let mut blocks = Vec::with_capacity(basis.len());
    for vectors in basis {
        let m = vectors.len();
        let mut out = vec![c64::new(0.0, 0.0); m * m];
        for (a, va) in vectors.iter().enumerate() {
            for (b, vb) in vectors.iter().enumerate() {
                let mut sum = c64::new(0.0, 0.0);
                for &(i, x) in va {
                    for &(j, y) in vb {
                        sum += x.conj() * host[i * n + j] * y;
                    }
                }
                out[a * m + b] = sum;
            }
        }
        let rep = vectors.iter().map(|vec| vec[0].0).collect();
        let reduced = if antiunitary {
            let worst = out.iter().map(|x| x.im.abs()).fold(0.0, f64::max);
            if worst > 1e-12 * scale {
                return Err(Fail(format!(
                    "the symmetry-adapted H is not real: imaginary part {worst:e} Ry (a wrong \
                     symmetry; run with --symmetry off)"
                )));
            }
            let re: Vec<f64> = out.iter().map(|x| x.re).collect();
            Tensor::from_slice(&re, &[m, m])?
        } else {
            Tensor::from_slice(&out, &[m, m])?
        };
        blocks.push(Block {
            v: reduced.to_device(device)?,
            rep,
        });
    }
    Ok(blocks)
}
