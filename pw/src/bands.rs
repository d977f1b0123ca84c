//! A band structure along a path of k-points from a converged potential (non
//! self-consistent: the potential is fixed, each k-point is one eigenproblem), and its
//! plot.

use crate::basis::Sphere;
use crate::crystal::{dot, Vec3};
use crate::error::{input, Result};
use crate::hamiltonian::{KOperator, PROJECTOR_CACHE_BYTES};
use crate::potential::grid_tensor_n;
use crate::scf::Calculation;
use ctensor::kernels::parallel::map_batch;
use ctensor::solvers::{davidson, diagonal_preconditioner_in_place, SolverOptions};
use ctensor::{DataType, Tensor};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A labelled corner of the path.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathPoint {
    /// Its name (`G` is drawn as Γ).
    pub label: String,
    /// Reduced coordinates.
    pub kred: Vec3,
}

/// The path of the input: corners and points per segment.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BandPath {
    /// At least two corners.
    pub points: Vec<PathPoint>,
    /// Points per segment (the segment's end is the next one's start).
    pub per_segment: usize,
}

/// Bands along a path.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BandStructure {
    /// Distance along the path (bohr⁻¹) of each point.
    pub x: Vec<f64>,
    /// Reduced coordinates of each point.
    pub kred: Vec<Vec3>,
    /// Corner positions and labels.
    pub ticks: Vec<(f64, String)>,
    /// Eigenvalues (Ha) per point, ascending.
    pub eigenvalues_ha: Vec<Vec<f64>>,
}

/// The bands of `calc` along `path` with the local potential `potential` (the SCF's last
/// one, on the FFT grid).
pub fn bands_along(
    calc: &Calculation,
    potential: &[f64],
    path: &BandPath,
) -> Result<BandStructure> {
    if path.points.len() < 2 || path.per_segment == 0 {
        return Err(input(
            "band_path",
            "at least two points and per_segment >= 1",
            format!(
                "{} points, per_segment {}",
                path.points.len(),
                path.per_segment
            ),
        ));
    }
    if path
        .points
        .iter()
        .flat_map(|p| p.kred)
        .any(|x| !x.is_finite())
    {
        return Err(input(
            "band_path.points",
            "finite reduced coordinates",
            "a non-finite one",
        ));
    }
    let c = &calc.crystal;
    let (mut x, mut kred, mut ticks) = (Vec::new(), Vec::new(), Vec::new());
    let mut pos = 0.0;
    for (s, w) in path.points.windows(2).enumerate() {
        let (a, b) = (w[0].kred, w[1].kred);
        let len = {
            let d = c.reciprocal_cartesian([b[0] - a[0], b[1] - a[1], b[2] - a[2]]);
            dot(d, d).sqrt()
        };
        if s == 0 {
            ticks.push((pos, w[0].label.clone()));
        }
        let first = if s == 0 { 0 } else { 1 };
        for i in first..=path.per_segment {
            let t = i as f64 / path.per_segment as f64;
            kred.push([0, 1, 2].map(|d| a[d] + t * (b[d] - a[d])));
            x.push(pos + t * len);
        }
        pos += len;
        ticks.push((pos, w[1].label.clone()));
    }
    let v = grid_tensor_n(calc.grid.n, potential, calc.device)?;
    let (nband, ecut, grid, device, psps) =
        (calc.nband, calc.ecut, calc.grid, calc.device, &calc.psps);
    let solved = map_batch(kred.len(), |i| -> Result<Vec<f64>> {
        let sphere = Sphere::new(c, kred[i], ecut, &grid)?;
        if sphere.len() < nband {
            return Err(input(
                "nband",
                format!("at most {} bands at k = {:?}", sphere.len(), kred[i]),
                nband.to_string(),
            ));
        }
        // Complex bands at every point of the path (Γ included: one point of many).
        let mut op = KOperator::new(c, psps, sphere, grid, device, false)?;
        // Each path point's operator lives only while its bands are solved, so the
        // budget is the point's, not the path's (the SCF keeps all of its k-points').
        if op.projector_bytes() <= PROJECTOR_CACHE_BYTES {
            op.keep_projectors()?;
        }
        let kin = op.kinetic()?;
        let x0 = Tensor::randn(
            DataType::ComplexDouble,
            device,
            &[op.npw(), nband],
            101 + i as u64,
        )?
        .div(&kin.add_scalar(1.0)?.unsqueeze(1)?)?;
        let mut opts = SolverOptions::new(nband);
        opts.tol = 1e-8;
        opts.max_basis = crate::scf::default_davidson_blocks(nband) * nband;
        opts.max_iter = 400;
        let h = |t: &Tensor| -> ctensor::Result<Tensor> {
            op.apply(&v, t)
                .map_err(|e| ctensor::Error::InvalidArgument {
                    op: "hamiltonian",
                    expected: "a valid operator".into(),
                    given: e.to_string(),
                })
        };
        let found = davidson(h, diagonal_preconditioner_in_place(&kin, 0.5), &x0, opts)?;
        if !found.converged {
            return Err(input(
                "band_path",
                "k-points whose bands converge in 400 iterations",
                format!("{:?}", kred[i]),
            ));
        }
        Ok(found.values.to_vec::<f64>()?)
    });
    let eigenvalues_ha = solved.into_iter().collect::<Result<Vec<_>>>()?;
    Ok(BandStructure {
        x,
        kred,
        ticks,
        eigenvalues_ha,
    })
}

/// Draws `bands` (relative to `homo`, in eV) to the SVG file `path`; the first `nocc`
/// bands blue, the rest red.
pub fn write_svg(
    bands: &BandStructure,
    homo: f64,
    nocc: usize,
    title: &str,
    path: &Path,
) -> Result<()> {
    use plotters::prelude::*;
    const HA_EV: f64 = 27.211386245988;
    let err = |e: &dyn std::fmt::Display| crate::error::PwError::Io {
        path: path.into(),
        source: std::io::Error::other(e.to_string()),
    };
    let root = SVGBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let xmax = bands.x.last().copied().unwrap_or(1.0);
    let ev = |e: f64| (e - homo) * HA_EV;
    let all = bands.eigenvalues_ha.iter().flatten().map(|&e| ev(e));
    let (lo, hi) = all.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..xmax, (lo - 0.5)..(hi + 0.5))
        .map_err(|e| err(&e))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("E − E_HOMO (eV)")
        .draw()
        .map_err(|e| err(&e))?;
    for (x, name) in &bands.ticks {
        chart
            .draw_series(LineSeries::new(
                [(*x, lo - 0.5), (*x, hi + 0.5)],
                BLACK.mix(0.3),
            ))
            .map_err(|e| err(&e))?;
        let label = name.replace('G', "Γ");
        chart
            .draw_series(std::iter::once(Text::new(
                label,
                (*x, lo - 0.45),
                ("sans-serif", 16),
            )))
            .map_err(|e| err(&e))?;
    }
    let nb = bands.eigenvalues_ha.first().map_or(0, |e| e.len());
    for b in 0..nb {
        let color = if b < nocc { BLUE } else { RED };
        let line = bands
            .x
            .iter()
            .zip(&bands.eigenvalues_ha)
            .map(|(x, e)| (*x, ev(e[b])));
        chart
            .draw_series(LineSeries::new(line, color.stroke_width(2)))
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}
