//! Density-grid quantities: the local pseudopotential, Hartree, exchange–correlation, and
//! the energy terms that depend on the density alone.

use crate::basis::DensityGrid;
use crate::crystal::{dot, Crystal};
use crate::error::Result;
use crate::psp::Hgh;
use crate::xc::Xc;
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

/// Hartree, XC and local-pseudopotential terms of the density `rho` (`ρ(r)` on the grid).
pub fn density_terms(
    crystal: &Crystal,
    dg: &DensityGrid,
    xc: &Xc,
    vloc_r: &[f64],
    rho: &[f64],
) -> Result<DensityTerms> {
    let omega = crystal.volume();
    let npts = dg.grid.len() as f64;
    let rho_g = to_reciprocal(dg, rho)?;
    let mut vh_g = vec![c64::new(0.0, 0.0); rho_g.len()];
    let mut eh = 0.0;
    for i in 0..rho_g.len() {
        if dg.in_sphere[i] {
            vh_g[i] = rho_g[i] * (4.0 * PI / dg.g2[i]);
            eh += 0.5 * omega * 4.0 * PI * rho_g[i].norm_sqr() / dg.g2[i];
        }
    }
    let vh_r = to_real(dg, &vh_g)?;
    // ∫ V_loc ρ on the grid: the reciprocal-space sum Ω Σ_G V_loc(G) ρ(G)* by Parseval,
    // without keeping V_loc(G) (a complex box, 6 MB on a 72³ grid).
    let eloc = omega / npts * vloc_r.iter().zip(rho).map(|(v, r)| v * r).sum::<f64>();
    let (mut exc, mut vxc) = (vec![0.0; rho.len()], vec![0.0; rho.len()]);
    xc.evaluate(rho, &mut exc, &mut vxc);
    let exc_total = omega / npts * rho.iter().zip(&exc).map(|(r, e)| r * e).sum::<f64>();
    let v_total = (0..rho.len())
        .map(|i| vloc_r[i] + vh_r[i] + vxc[i])
        .collect();
    Ok(DensityTerms {
        hartree: eh,
        xc: exc_total,
        local: eloc,
        v_total,
    })
}

/// A real grid function as an f64 `[n1, n2, n3]` tensor on `device`.
pub fn grid_tensor(dg: &DensityGrid, f: &[f64], device: DeviceType) -> Result<Tensor> {
    Ok(Tensor::from_slice(f, &dg.grid.n)?.to_device(device)?)
}

/// A real grid function on a grid of shape `n` as an f64 tensor on `device`.
pub fn grid_tensor_n(n: [usize; 3], f: &[f64], device: DeviceType) -> Result<Tensor> {
    Ok(Tensor::from_slice(f, &n)?.to_device(device)?)
}
