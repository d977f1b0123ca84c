//! Density-grid quantities: the local pseudopotential, Hartree, exchange–correlation, and
//! the energy terms that depend on the density alone.

use crate::basis::DensityGrid;
use crate::crystal::{dot, Crystal, Mat3, Vec3};
use crate::error::Result;
use crate::psp::Hgh;
use crate::xc::{Xc, XcPoint};
use ctensor::{c64, fftn, ifftn, DeviceType, FftNorm, Tensor};
use std::f64::consts::PI;

/// `V_loc(G) = (1/Ω) Σ_a e^{−iG·τ_a} v_a(|G|)` on the grid, zero at G = 0 and outside
/// the density sphere.
pub fn local_potential_g(crystal: &Crystal, psps: &[Hgh], dg: &DensityGrid) -> Vec<c64> {
    let omega = crystal.volume();
    dg.grid
        .frequency_iter()
        .zip(&dg.g2)
        .zip(&dg.in_sphere)
        .map(|((m, &g2), &inside)| {
            if !inside {
                return c64::new(0.0, 0.0);
            }
            let q = g2.sqrt();
            let mut v = c64::new(0.0, 0.0);
            for atom in &crystal.atoms {
                let ph = 2.0 * PI * dot([m[0] as f64, m[1] as f64, m[2] as f64], atom.reduced);
                v += c64::from_polar(psps[atom.species].local_form_factor(q), -ph);
            }
            v / omega
        })
        .collect()
}

/// The points `G ≠ 0` of the density sphere with `ρ(G)` of `rho_g`: their Miller indices
/// (as reals), Cartesian `G` and `ρ(G)`.
fn density_sphere<'a>(
    crystal: &'a Crystal,
    dg: &'a DensityGrid,
    rho_g: &'a [c64],
) -> impl Iterator<Item = (Vec3, Vec3, c64)> + 'a {
    dg.grid
        .frequency_iter()
        .zip(&dg.g2)
        .zip(dg.in_sphere.iter().zip(rho_g))
        .filter(|((_, &g2), (&inside, _))| inside && g2 > 0.0)
        .map(|((m, _), (_, &r))| {
            let mr = [m[0] as f64, m[1] as f64, m[2] as f64];
            (mr, crystal.reciprocal_cartesian(mr), r)
        })
}

/// The local pseudopotential's forces on the atoms (Ha/bohr, Cartesian) from the density
/// `rho_g` (`ρ(G)`, as [`to_reciprocal`] gives it): with
/// `E_loc = Σ_G ρ(G)* Σ_a e^{−iG·τ_a} v_a(|G|)` (Ω cancels against `V_loc`'s 1/Ω),
/// `F_a = −∂E_loc/∂τ_a = −Σ_G G v_a(|G|) Im(ρ(G)* e^{−iG·τ_a})`, over the density sphere
/// as [`local_potential_g`].
///
/// Errors: a density that is not the grid's, or a species without a pseudopotential.
pub fn local_forces(
    crystal: &Crystal,
    psps: &[Hgh],
    dg: &DensityGrid,
    rho_g: &[c64],
) -> Result<Vec<Vec3>> {
    check_density("local_forces", crystal, psps, dg, &[rho_g.len()])?;
    let mut forces = vec![[0.0; 3]; crystal.atoms.len()];
    let mut form = vec![0.0; psps.len()];
    for (mr, g, r) in density_sphere(crystal, dg, rho_g) {
        let q = dot(g, g).sqrt();
        for (f, psp) in form.iter_mut().zip(psps) {
            *f = psp.local_form_factor(q);
        }
        for (atom, out) in crystal.atoms.iter().zip(forces.iter_mut()) {
            let ph = c64::from_polar(1.0, -2.0 * PI * dot(mr, atom.reduced));
            let s = -form[atom.species] * (r.conj() * ph).im;
            for c in 0..3 {
                out[c] += s * g[c];
            }
        }
    }
    Ok(forces)
}

/// The checks of [`local_forces`] and [`density_stress`]: each length in `lens` is the
/// grid's, and every atom's species has a pseudopotential.
fn check_density(
    op: &'static str,
    crystal: &Crystal,
    psps: &[Hgh],
    dg: &DensityGrid,
    lens: &[usize],
) -> Result<()> {
    let n = dg.grid.len();
    let species = crystal
        .atoms
        .iter()
        .map(|a| a.species + 1)
        .max()
        .unwrap_or(0);
    if lens.iter().any(|&l| l != n) || dg.g2.len() != n || psps.len() < species {
        return Err(ctensor::Error::InvalidArgument {
            op,
            expected: format!(
                "densities of the grid's {n} points and pseudopotentials for {species} species"
            ),
            given: format!(
                "densities of {lens:?} points and {} pseudopotentials",
                psps.len()
            ),
        }
        .into());
    }
    Ok(())
}

/// `f(r) = Σ_G f(G) e^{iG·r}` on the grid (real part), f64 `[n1, n2, n3]` on the host.
pub fn to_real(dg: &DensityGrid, fg: &[c64]) -> Result<Vec<f64>> {
    let [n1, n2, n3] = dg.grid.n;
    let t = ifftn(
        &Tensor::from_slice(fg, &[n1, n2, n3])?,
        &[0, 1, 2],
        FftNorm::Forward,
    )?;
    Ok(t.real()?.contiguous()?.to_vec::<f64>()?)
}

/// `f(G) = (1/N) Σ_r f(r) e^{−iG·r}` of a real grid function.
pub fn to_reciprocal(dg: &DensityGrid, fr: &[f64]) -> Result<Vec<c64>> {
    let [n1, n2, n3] = dg.grid.n;
    let t = Tensor::from_slice(fr, &[n1, n2, n3])?.cast(ctensor::DataType::ComplexDouble)?;
    Ok(fftn(&t, &[0, 1, 2], FftNorm::Forward)?.to_vec::<c64>()?)
}

/// The density-dependent part of the energy and the potential it makes.
pub struct DensityTerms {
    /// E_H (Ha).
    pub hartree: f64,
    /// E_xc (Ha).
    pub xc: f64,
    /// E_loc = ∫ V_loc ρ (Ha).
    pub local: f64,
    /// V_loc + V_H + V_xc on the grid (Ha), f64 `[n1, n2, n3]`.
    pub v_total: Vec<f64>,
}

/// The energies of [`DensityTerms`] without the potential.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DensityEnergies {
    /// E_H (Ha).
    pub hartree: f64,
    /// E_xc (Ha).
    pub xc: f64,
    /// E_loc = ∫ V_loc ρ (Ha).
    pub local: f64,
}

/// Hartree, XC and local-pseudopotential terms of the density `rho` (`ρ(r)` on the grid).
pub fn density_terms(
    crystal: &Crystal,
    dg: &DensityGrid,
    xc: &Xc,
    vloc_r: &[f64],
    rho: &[f64],
) -> Result<DensityTerms> {
    density_terms_reciprocal(crystal, dg, xc, vloc_r, rho, &to_reciprocal(dg, rho)?)
}

/// [`density_terms`] for a caller that has the density's transform `rho_g` too.
pub fn density_terms_reciprocal(
    crystal: &Crystal,
    dg: &DensityGrid,
    xc: &Xc,
    vloc_r: &[f64],
    rho: &[f64],
    rho_g: &[c64],
) -> Result<DensityTerms> {
    let (hartree, local) = hartree_and_local(crystal, dg, vloc_r, rho, rho_g);
    let vh_g: Vec<c64> = (0..rho_g.len())
        .map(|i| {
            if dg.in_sphere[i] {
                rho_g[i] * (4.0 * PI / dg.g2[i])
            } else {
                c64::new(0.0, 0.0)
            }
        })
        .collect();
    let vh_r = to_real(dg, &vh_g)?;
    drop(vh_g);
    let (exc, vxc) = xc_on_grid(crystal, dg, xc, rho, rho_g)?;
    let exc_total = integral(crystal, dg, rho, &exc);
    let v_total = (0..rho.len())
        .map(|i| vloc_r[i] + vh_r[i] + vxc[i])
        .collect();
    Ok(DensityTerms {
        hartree,
        xc: exc_total,
        local,
        v_total,
    })
}

/// The energy terms of `rho` whose transform `rho_g` the caller has, without the
/// potential: no transform back for V_H, and for the XC term libxc's energy alone (for a
/// GGA, the gradient's two transforms and no divergence).
pub fn density_energies(
    crystal: &Crystal,
    dg: &DensityGrid,
    xc: &Xc,
    vloc_r: &[f64],
    rho: &[f64],
    rho_g: &[c64],
) -> Result<DensityEnergies> {
    let (hartree, local) = hartree_and_local(crystal, dg, vloc_r, rho, rho_g);
    let exc = xc_energy_on_grid(crystal, dg, xc, rho, rho_g)?;
    Ok(DensityEnergies {
        hartree,
        xc: integral(crystal, dg, rho, &exc),
        local,
    })
}

/// E_H (from `rho_g`) and E_loc (on the grid) of `rho`.
fn hartree_and_local(
    crystal: &Crystal,
    dg: &DensityGrid,
    vloc_r: &[f64],
    rho: &[f64],
    rho_g: &[c64],
) -> (f64, f64) {
    let omega = crystal.volume();
    let eh: f64 = (0..rho_g.len())
        .filter(|&i| dg.in_sphere[i])
        .map(|i| 0.5 * omega * 4.0 * PI * rho_g[i].norm_sqr() / dg.g2[i])
        .sum();
    // ∫ V_loc ρ on the grid: the reciprocal-space sum Ω Σ_G V_loc(G) ρ(G)* by Parseval,
    // without keeping V_loc(G) (a complex box, 6 MB on a 72³ grid).
    (eh, integral(crystal, dg, vloc_r, rho))
}

/// `∫ f g` over the cell on the grid: `(Ω/N) Σ_r f(r) g(r)`.
fn integral(crystal: &Crystal, dg: &DensityGrid, f: &[f64], g: &[f64]) -> f64 {
    crystal.volume() / dg.grid.len() as f64 * f.iter().zip(g).map(|(a, b)| a * b).sum::<f64>()
}

/// Cartesian component `c` of G at each grid point in row-major order, 0 on the Nyquist
/// planes (m = −n/2, which only an even side has): there a real function's derivative
/// has no well-defined component.
fn g_component<'a>(
    crystal: &'a Crystal,
    dg: &'a DensityGrid,
    c: usize,
) -> impl Iterator<Item = f64> + 'a {
    let n = dg.grid.n;
    dg.grid.frequency_iter().map(move |m| {
        if (0..3).any(|a| 2 * m[a] == -(n[a] as i64)) {
            0.0
        } else {
            crystal.reciprocal_cartesian([m[0] as f64, m[1] as f64, m[2] as f64])[c]
        }
    })
}

/// `f(r) = Σ_G f(G) e^{iG·r}` on the grid, complex, on the host.
fn to_real_complex(dg: &DensityGrid, fg: &[c64]) -> Result<Vec<c64>> {
    let t = ifftn(
        &Tensor::from_slice(fg, &dg.grid.n)?,
        &[0, 1, 2],
        FftNorm::Forward,
    )?;
    Ok(t.to_vec::<c64>()?)
}

/// `∇ρ = Σ_G iG ρ(G) e^{iG·r}` on the grid, its three Cartesian components. Two
/// transforms: `iG_x ρ(G)` and `iG_y ρ(G)` are the transforms of real functions, so one
/// complex transform of `iG_x ρ + i·iG_y ρ` gives ∂_x ρ as its real part and ∂_y ρ as
/// its imaginary part.
fn gradient(crystal: &Crystal, dg: &DensityGrid, rho_g: &[c64]) -> Result<[Vec<f64>; 3]> {
    let i = c64::new(0.0, 1.0);
    let xy: Vec<c64> = g_component(crystal, dg, 0)
        .zip(g_component(crystal, dg, 1))
        .zip(rho_g)
        .map(|((gx, gy), r)| (i * gx - gy) * r)
        .collect();
    let xy = to_real_complex(dg, &xy)?;
    let z: Vec<c64> = g_component(crystal, dg, 2)
        .zip(rho_g)
        .map(|(g, r)| i * g * r)
        .collect();
    Ok([
        xy.iter().map(|v| v.re).collect(),
        xy.iter().map(|v| v.im).collect(),
        to_real(dg, &z)?,
    ])
}

/// `σ = |∇ρ|²` at each point.
fn squared(grad: &[Vec<f64>; 3]) -> Vec<f64> {
    (0..grad[0].len())
        .map(|p| grad.iter().map(|d| d[p] * d[p]).sum())
        .collect()
}

/// `ε_xc(r)` of the density `rho` (`rho_g` its transform): libxc's energy alone, with σ
/// from the gradient of [`xc_on_grid`] for a GGA.
pub fn xc_energy_on_grid(
    crystal: &Crystal,
    dg: &DensityGrid,
    xc: &Xc,
    rho: &[f64],
    rho_g: &[c64],
) -> Result<Vec<f64>> {
    let mut exc = vec![0.0; rho.len()];
    if xc.is_gga() {
        let sigma = squared(&gradient(crystal, dg, rho_g)?);
        xc.energy(rho, Some(&sigma), &mut exc)?;
    } else {
        xc.energy(rho, None, &mut exc)?;
    }
    Ok(exc)
}

/// `ε_xc(r)` and `V_xc(r)` of the density `rho` (`rho_g` its transform). For a GGA,
/// `σ = |∇ρ|²` with `∇ρ = Σ_G iG ρ(G) e^{iG·r}`, and
/// `V_xc = ∂f/∂ρ − 2 ∇·(∂f/∂σ ∇ρ)` (`f = ρ ε_xc`), both derivatives taken in reciprocal
/// space over the whole box (as ABINIT) except its Nyquist planes, where a real
/// function's derivative has no well-defined component.
pub fn xc_on_grid(
    crystal: &Crystal,
    dg: &DensityGrid,
    xc: &Xc,
    rho: &[f64],
    rho_g: &[c64],
) -> Result<(Vec<f64>, Vec<f64>)> {
    let n = rho.len();
    let (mut exc, mut vxc) = (vec![0.0; n], vec![0.0; n]);
    if !xc.is_gga() {
        xc.evaluate(rho, &mut exc, &mut vxc)?;
        return Ok((exc, vxc));
    }
    let grad = gradient(crystal, dg, rho_g)?;
    let sigma = squared(&grad);
    let mut vsigma = vec![0.0; n];
    xc.evaluate_gga(
        rho,
        &sigma,
        XcPoint {
            exc: &mut exc,
            vrho: &mut vxc,
            vsigma: &mut vsigma,
        },
    )?;
    drop(sigma);
    // ∇·h with h = v_σ ∇ρ, in reciprocal space: Σ_c iG_c h_c(G). h_x and h_y go through
    // one complex transform P = H_x + i H_y; Re IFFT(iG_x P) = ∂_x h_x and
    // Re IFFT(G_y P) = Im IFFT(iG_y P) = ∂_y h_y (G_c H_c(G) is the transform of a
    // real function times −i), so ∇·h = Re IFFT((iG_x + G_y) P + iG_z H_z).
    let [hx, hy, hz] = grad.map(|d| {
        d.iter()
            .zip(&vsigma)
            .map(|(d, v)| d * v)
            .collect::<Vec<f64>>()
    });
    let packed: Vec<c64> = hx.iter().zip(&hy).map(|(&x, &y)| c64::new(x, y)).collect();
    drop((hx, hy));
    let p = {
        let t = Tensor::from_slice(&packed, &dg.grid.n)?;
        fftn(&t, &[0, 1, 2], FftNorm::Forward)?.to_vec::<c64>()?
    };
    drop(packed);
    let h_z = to_reciprocal(dg, &hz)?;
    let i = c64::new(0.0, 1.0);
    let div_g: Vec<c64> = g_component(crystal, dg, 0)
        .zip(g_component(crystal, dg, 1))
        .zip(g_component(crystal, dg, 2))
        .zip(p.iter().zip(&h_z))
        .map(|(((gx, gy), gz), (p, h))| (i * gx + gy) * p + i * gz * h)
        .collect();
    let div = to_real(dg, &div_g)?;
    vxc.iter_mut().zip(div).for_each(|(v, d)| *v -= 2.0 * d);
    Ok((exc, vxc))
}

/// The stress `σ_αβ = (1/Ω) ∂E/∂ε_αβ` (Ha/bohr³) of the terms that depend on the density
/// alone — Hartree, exchange–correlation and the local pseudopotential — for the
/// density `rho` (`rho_g` its transform) under a homogeneous strain that keeps each
/// `Ω ρ(G)` (the electrons) and the reduced positions fixed:
///
/// - Hartree: `−E_H δ_αβ/Ω + Σ_G 4π |ρ(G)|² G_α G_β / G⁴`;
/// - XC: `δ_αβ (E_xc − ∫ ρ ∂f/∂ρ − 2∫ (∂f/∂σ) σ)/Ω − (2/Ω) ∫ (∂f/∂σ) ∂_αρ ∂_βρ`
///   (`f = ρ ε_xc`; the last two terms for a GGA only), on the grid;
/// - local: `−E_loc δ_αβ/Ω − (1/Ω) Σ_G Re(ρ(G)* Σ_a e^{−iG·τ_a} v_a′(|G|)) G_α G_β / |G|`
///   over the density sphere.
///
/// Errors: densities that are not the grid's, a species without a pseudopotential, or
/// libxc's.
pub fn density_stress(
    crystal: &Crystal,
    psps: &[Hgh],
    dg: &DensityGrid,
    xc: &Xc,
    rho: &[f64],
    rho_g: &[c64],
) -> Result<Mat3> {
    check_density(
        "density_stress",
        crystal,
        psps,
        dg,
        &[rho.len(), rho_g.len()],
    )?;
    let omega = crystal.volume();
    let mut sigma = [[0.0; 3]; 3];
    let (mut e_h, mut e_loc) = (0.0, 0.0);
    let (mut form, mut slope) = (vec![0.0; psps.len()], vec![0.0; psps.len()]);
    for (mr, g, r) in density_sphere(crystal, dg, rho_g) {
        let g2 = dot(g, g);
        let q = g2.sqrt();
        for ((f, d), psp) in form.iter_mut().zip(slope.iter_mut()).zip(psps) {
            *f = psp.local_form_factor(q);
            *d = psp.local_form_factor_derivative(q);
        }
        let (mut v, mut dv) = (0.0, 0.0);
        for atom in &crystal.atoms {
            let z = (r.conj() * c64::from_polar(1.0, -2.0 * PI * dot(mr, atom.reduced))).re;
            v += z * form[atom.species];
            dv += z * slope[atom.species];
        }
        e_loc += v;
        let rr = r.norm_sqr();
        e_h += 0.5 * omega * 4.0 * PI * rr / g2;
        for (al, row) in sigma.iter_mut().enumerate() {
            for (be, s) in row.iter_mut().enumerate() {
                *s += (4.0 * PI * rr / (g2 * g2) - dv / (q * omega)) * g[al] * g[be];
            }
        }
    }
    // Exchange–correlation on the grid.
    let n = rho.len();
    let w = omega / n as f64;
    let (mut exc, mut vrho) = (vec![0.0; n], vec![0.0; n]);
    let mut diagonal = -e_h - e_loc;
    if xc.is_gga() {
        let grad = gradient(crystal, dg, rho_g)?;
        let sig = squared(&grad);
        let mut vsigma = vec![0.0; n];
        xc.evaluate_gga(
            rho,
            &sig,
            XcPoint {
                exc: &mut exc,
                vrho: &mut vrho,
                vsigma: &mut vsigma,
            },
        )?;
        diagonal -= 2.0 * w * vsigma.iter().zip(&sig).map(|(v, s)| v * s).sum::<f64>();
        for (al, row) in sigma.iter_mut().enumerate() {
            for (be, s) in row.iter_mut().enumerate() {
                let t: f64 = (0..n).map(|p| vsigma[p] * grad[al][p] * grad[be][p]).sum();
                *s -= 2.0 * w * t / omega;
            }
        }
    } else {
        xc.evaluate(rho, &mut exc, &mut vrho)?;
    }
    diagonal += w * (0..n).map(|p| rho[p] * (exc[p] - vrho[p])).sum::<f64>();
    for (al, row) in sigma.iter_mut().enumerate() {
        row[al] += diagonal / omega;
    }
    Ok(sigma)
}

/// A real grid function as an f64 `[n1, n2, n3]` tensor on `device`.
pub fn grid_tensor(dg: &DensityGrid, f: &[f64], device: DeviceType) -> Result<Tensor> {
    grid_tensor_n(dg.grid.n, f, device)
}

/// A real grid function on a grid of shape `n` as an f64 tensor on `device`.
pub fn grid_tensor_n(n: [usize; 3], f: &[f64], device: DeviceType) -> Result<Tensor> {
    Ok(Tensor::from_slice(f, &n)?.to_device(device)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::basis::FftGrid;
    use crate::crystal::{Atom, Vec3};

    /// Diamond Si's fcc cell (skewed axes, so Cartesian and reduced G differ) on a box
    /// with odd and even sides (the even ones have Nyquist planes).
    fn cell(n: [usize; 3]) -> Result<(Crystal, DensityGrid)> {
        let h = 5.13;
        let crystal = Crystal::new(
            [[0.0, h, h], [h, 0.0, h], [h, h, 0.0]],
            vec!["Si".into()],
            [[0.0; 3], [0.25; 3]]
                .map(|reduced| Atom {
                    species: 0,
                    reduced,
                })
                .to_vec(),
        )?;
        let dg = DensityGrid::new(&crystal, FftGrid { n }, 5.0);
        Ok((crystal, dg))
    }

    /// `Σ_j amp_j cos(2π m_j·x + φ_j)` on the grid.
    fn waves(n: [usize; 3], terms: &[([i64; 3], f64, f64)]) -> Vec<f64> {
        let mut f = vec![0.0; n[0] * n[1] * n[2]];
        for (p, v) in f.iter_mut().enumerate() {
            let x: Vec3 = [p / (n[1] * n[2]), p / n[2] % n[1], p % n[2]]
                .map(|i| i as f64)
                .map(|i| i);
            let x = [x[0] / n[0] as f64, x[1] / n[1] as f64, x[2] / n[2] as f64];
            *v = terms
                .iter()
                .map(|(m, a, ph)| {
                    a * (2.0 * PI * (0..3).map(|c| m[c] as f64 * x[c]).sum::<f64>() + ph).cos()
                })
                .sum();
        }
        f
    }

    /// A smooth positive function on the grid: a constant and four plane waves.
    fn five_waves(n: [usize; 3]) -> Vec<f64> {
        waves(
            n,
            &[
                ([0, 0, 0], 1.0, 0.0),
                ([1, 0, 0], 0.3, 0.2),
                ([1, -1, 2], 0.25, 1.1),
                ([0, 2, 1], 0.2, -0.4),
                ([2, 1, -1], 0.15, 2.0),
            ],
        )
    }

    fn exc_total(c: &Crystal, dg: &DensityGrid, xc: &Xc, rho: &[f64]) -> Result<f64> {
        let (exc, _) = xc_on_grid(c, dg, xc, rho, &to_reciprocal(dg, rho)?)?;
        Ok(c.volume() / rho.len() as f64 * rho.iter().zip(&exc).map(|(r, e)| r * e).sum::<f64>())
    }

    /// V_xc is the derivative of the grid's E_xc = Ω/N Σ ρ ε_xc: (E[ρ + tδρ] − E[ρ − tδρ])
    /// / 2t against Ω/N Σ V_xc δρ, for LDA, PBE, and a GGA exchange with an LDA
    /// correlation, on boxes with and without Nyquist planes. The sign and the factor 2 of
    /// the divergence term, and a divergence taken with other G than the gradient, fail it.
    #[test]
    fn the_xc_potential_is_the_derivative_of_the_xc_energy() -> Result<()> {
        for n in [[15, 16, 18], [9, 11, 13]] {
            let (c, dg) = cell(n)?;
            let rho: Vec<f64> = five_waves(n).iter().map(|v| 0.02 * v).collect();
            assert!(rho.iter().all(|&r| r > 0.0));
            let drho = waves(n, &[([1, 1, 0], 1.0, 0.3), ([-2, 0, 1], 0.5, -1.2)]);
            for name in ["lda_teter93", "gga_pbe", "gga_x_b88+lda_c_pw"] {
                let xc = Xc::new(name)?;
                let (_, v) = xc_on_grid(&c, &dg, &xc, &rho, &to_reciprocal(&dg, &rho)?)?;
                let want = c.volume() / rho.len() as f64
                    * v.iter().zip(&drho).map(|(v, d)| v * d).sum::<f64>();
                // Central differences at t and t/2, extrapolated (Richardson): the t²
                // terms cancel.
                let central = |t: f64| -> Result<f64> {
                    let at = |s: f64| -> Vec<f64> {
                        rho.iter().zip(&drho).map(|(r, d)| r + s * t * d).collect()
                    };
                    Ok(
                        (exc_total(&c, &dg, &xc, &at(1.0))? - exc_total(&c, &dg, &xc, &at(-1.0))?)
                            / (2.0 * t),
                    )
                };
                // The energies' rounding (about 1e-15 of E ≈ 3 Ha over 2t = 1e-5) is the
                // absolute part of the tolerance.
                let fd = (4.0 * central(5e-6)? - central(1e-5)?) / 3.0;
                assert!(
                    (fd - want).abs() < 1e-6 * want.abs() + 5e-10,
                    "{name} on {n:?}: dE/dt {fd} against ∫V δρ {want}"
                );
            }
        }
        Ok(())
    }

    /// The gradient is the Cartesian one: for ρ = ρ₀(1 + a cos(G·r)) the GGA's ε_xc on the
    /// grid is libxc's at σ = (ρ₀ a |G| sin(G·r))², G = Σ m_i b_i of the skewed cell.
    /// A gallium and two arsenic atoms off any symmetric site in a skewed cell, with
    /// their pseudopotentials.
    fn gallium_arsenic() -> Result<(Crystal, Vec<Hgh>)> {
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
        let psps: Vec<Hgh> = ["31ga.3.hgh", "33as.5.hgh"]
            .iter()
            .map(|f| Hgh::from_file(&data.join(f)))
            .collect::<Result<_>>()?;
        let atoms = [
            (0, [0.05, 0.1, 0.2]),
            (1, [0.3, 0.22, 0.27]),
            (1, [0.6, 0.7, 0.55]),
        ]
        .map(|(species, reduced)| Atom { species, reduced })
        .to_vec();
        let lattice = [[0.2, 5.3, 5.1], [5.4, -0.1, 5.2], [5.0, 5.3, 0.3]];
        Ok((
            Crystal::new(lattice, vec!["Ga".into(), "As".into()], atoms)?,
            psps,
        ))
    }

    /// The local forces of a fixed density are minus the gradient of
    /// `E_loc = Ω Σ_G ρ(G)* V_loc(G)` with `V_loc` from [`local_potential_g`]: central
    /// differences with one atom moved along each Cartesian axis (h = 1e-4 bohr), for
    /// gallium and arsenic in a skewed cell, on boxes with and without Nyquist planes.
    #[test]
    fn local_forces_are_minus_the_gradient_of_the_local_energy() -> Result<()> {
        let (crystal, psps) = gallium_arsenic()?;
        let h = 1e-4;
        for n in [[15, 16, 18], [9, 11, 13]] {
            let dg = DensityGrid::new(&crystal, FftGrid { n }, 3.0);
            let rho = five_waves(n);
            let rho_g = to_reciprocal(&dg, &rho)?;
            let forces = local_forces(&crystal, &psps, &dg, &rho_g)?;
            let largest = forces.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(largest > 1e-2, "forces too small to test: {largest}");
            for (a, fa) in forces.iter().enumerate() {
                for c in 0..3 {
                    let energy = |step: f64| -> Result<f64> {
                        let mut shift = [0.0; 3];
                        shift[c] = step;
                        let v = local_potential_g(&crystal.displaced(a, shift)?, &psps, &dg);
                        Ok(crystal.volume()
                            * v.iter()
                                .zip(&rho_g)
                                .map(|(v, r)| (r.conj() * v).re)
                                .sum::<f64>())
                    };
                    let fd = -(energy(h)? - energy(-h)?) / (2.0 * h);
                    assert!(
                        (fd - fa[c]).abs() < 1e-8 * largest.max(1.0),
                        "{n:?}, atom {a}, axis {c}: {} vs −dE/dτ {fd}",
                        fa[c]
                    );
                }
            }
        }
        Ok(())
    }

    /// The density terms' stress is the strain derivative of their energy over the
    /// volume: central differences (t = 1e-5) of `E_H + E_xc + E_loc` of the strained
    /// cell `a_i → (1 + t e_α e_βᵀ) a_i` with the electrons `Ω ρ(G)` and the reduced
    /// positions kept, for every (α, β), LDA and PBE, on boxes with and without Nyquist
    /// planes, gallium and arsenic in a skewed cell.
    #[test]
    fn the_density_stress_is_the_strain_derivative_of_the_density_energies() -> Result<()> {
        let (crystal, psps) = gallium_arsenic()?;
        let (ecut, t) = (3.0, 1e-5);
        for n in [[15, 16, 18], [9, 11, 13]] {
            let grid = FftGrid { n };
            let rho: Vec<f64> = five_waves(n).iter().map(|v| 0.02 * v).collect();
            let dg = DensityGrid::new(&crystal, grid, ecut);
            let rho_g = to_reciprocal(&dg, &rho)?;
            for name in ["lda_teter93", "gga_pbe"] {
                let xc = Xc::new(name)?;
                let s = density_stress(&crystal, &psps, &dg, &xc, &rho, &rho_g)?;
                let largest = s.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
                assert!(largest > 1e-4, "{largest}");
                for al in 0..3 {
                    for be in 0..3 {
                        let energy = |step: f64| -> Result<f64> {
                            let mut c = crystal.clone();
                            for a in c.lattice.iter_mut() {
                                a[al] += step * a[be];
                            }
                            let scale = crystal.volume() / c.volume();
                            let r: Vec<f64> = rho.iter().map(|x| x * scale).collect();
                            let rg: Vec<c64> = rho_g.iter().map(|x| x * scale).collect();
                            let d = DensityGrid::new(&c, grid, ecut);
                            let vloc = to_real(&d, &local_potential_g(&c, &psps, &d))?;
                            let e = density_energies(&c, &d, &xc, &vloc, &r, &rg)?;
                            Ok(e.hartree + e.xc + e.local)
                        };
                        let fd = (energy(t)? - energy(-t)?) / (2.0 * t) / crystal.volume();
                        assert!(
                            (fd - s[al][be]).abs() < 1e-8 * largest,
                            "{name} {n:?} ({al}, {be}): {} vs {fd}",
                            s[al][be]
                        );
                    }
                }
                // Densities of another grid, or a species without its pseudopotential,
                // are errors that say what was expected.
                for (r, rg, p) in [
                    (&rho[1..], &rho_g[..], &psps[..]),
                    (&rho[..], &rho_g[1..], &psps[..]),
                    (&rho[..], &rho_g[..], &psps[..1]),
                ] {
                    let e = density_stress(&crystal, p, &dg, &xc, r, rg).unwrap_err();
                    assert!(e.to_string().contains("densities of the grid's"), "{e}");
                }
                let e = local_forces(&crystal, &psps[..1], &dg, &rho_g).unwrap_err();
                assert!(
                    e.to_string().contains("pseudopotentials for 2 species"),
                    "{e}"
                );
            }
        }
        Ok(())
    }

    #[test]
    fn the_gga_sees_the_cartesian_gradient() -> Result<()> {
        let n = [15, 16, 18];
        let (c, dg) = cell(n)?;
        let (rho0, a, m) = (0.03, 0.4, [1, -1, 2]);
        let rho: Vec<f64> = waves(n, &[([0, 0, 0], rho0, 0.0), (m, rho0 * a, 0.0)]);
        let s = waves(n, &[(m, 1.0, -PI / 2.0)]); // sin(G·r)
        let g = c.reciprocal_cartesian([m[0] as f64, m[1] as f64, m[2] as f64]);
        let sigma: Vec<f64> = s
            .iter()
            .map(|s| (rho0 * a * s).powi(2) * dot(g, g))
            .collect();
        let xc = Xc::new("gga_pbe")?;
        let (exc, _) = xc_on_grid(&c, &dg, &xc, &rho, &to_reciprocal(&dg, &rho)?)?;
        let (mut want, mut vr, mut vs) = (
            vec![0.0; rho.len()],
            vec![0.0; rho.len()],
            vec![0.0; rho.len()],
        );
        xc.evaluate_gga(
            &rho,
            &sigma,
            XcPoint {
                exc: &mut want,
                vrho: &mut vr,
                vsigma: &mut vs,
            },
        )?;
        for p in 0..rho.len() {
            assert!(
                (exc[p] - want[p]).abs() < 1e-12,
                "point {p}: {} against {}",
                exc[p],
                want[p]
            );
        }
        // ...and the gradient matters here: the LDA part alone differs.
        let lda = Xc::new("lda_pw")?;
        let (e_lda, _) = xc_on_grid(&c, &dg, &lda, &rho, &to_reciprocal(&dg, &rho)?)?;
        assert!(exc.iter().zip(&e_lda).any(|(a, b)| (a - b).abs() > 1e-3));
        Ok(())
    }

    /// The energy-only path (libxc's energy entry points, no V_H transform back, no
    /// divergence) gives the energies of the full evaluation, for an LDA, PBE and a sum
    /// of both kinds; and a GGA asked for energies without σ is an error.
    #[test]
    fn the_energies_alone_are_those_of_the_full_evaluation() -> Result<()> {
        let n = [15, 16, 18];
        let (c, dg) = cell(n)?;
        let rho: Vec<f64> = waves(
            n,
            &[
                ([0, 0, 0], 0.03, 0.0),
                ([1, 1, 0], 0.01, 0.4),
                ([0, -1, 2], 0.008, -1.0),
            ],
        );
        let vloc = waves(n, &[([0, 0, 0], -0.3, 0.0), ([1, 0, 1], 0.2, 0.7)]);
        let rho_g = to_reciprocal(&dg, &rho)?;
        for name in ["lda_teter93", "gga_pbe", "gga_x_b88+lda_c_pw"] {
            let xc = Xc::new(name)?;
            let full = density_terms(&c, &dg, &xc, &vloc, &rho)?;
            let alone = density_energies(&c, &dg, &xc, &vloc, &rho, &rho_g)?;
            for (a, b, what) in [
                (alone.hartree, full.hartree, "E_H"),
                (alone.xc, full.xc, "E_xc"),
                (alone.local, full.local, "E_loc"),
            ] {
                assert!(
                    (a - b).abs() <= 1e-13 * b.abs().max(1.0),
                    "{name}: {what} {a} against {b}"
                );
            }
            let (exc, _) = xc_on_grid(&c, &dg, &xc, &rho, &rho_g)?;
            let e = xc_energy_on_grid(&c, &dg, &xc, &rho, &rho_g)?;
            assert!(exc
                .iter()
                .zip(&e)
                .all(|(a, b)| (a - b).abs() <= 1e-14 * a.abs()));
        }
        let mut e = vec![0.0; rho.len()];
        let err = Xc::new("gga_pbe")?.energy(&rho, None, &mut e).unwrap_err();
        assert!(err.to_string().contains("expected σ"), "{err}");
        let err = Xc::new("lda_pw")?
            .energy(&rho, None, &mut e[1..])
            .unwrap_err();
        assert!(err.to_string().contains("one length"), "{err}");
        Ok(())
    }
}
