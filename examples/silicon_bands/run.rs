//! The run: k-points along the path (split over ranks), their bands, the labelled levels
//! and gaps, and the published numbers they are checked against.

use model::{Material, MATERIALS};
use ranks::Ranks;
use std::sync::atomic::Ordering;
use std::time::Instant;

use crate::*;

/// One labelled level: energy (eV from the valence-band top), degeneracy, label.
pub(crate) struct Level {
    pub(crate) e: f64,
    pub(crate) deg: usize,
    pub(crate) label: String,
}

/// Groups sorted energies into degenerate multiplets and names them by the usual
/// diamond (O_h) or zinc-blende (T_d) labels, in order of energy within each
/// degeneracy. Levels beyond the named ones keep a plain degeneracy mark.
pub(crate) fn label_levels(point: &str, levels: &[f64], zincblende: bool, tol: f64) -> Vec<Level> {
    let mut groups: Vec<(f64, usize)> = Vec::new();
    for &e in levels {
        match groups.last_mut() {
            Some((e0, d)) if (e - *e0).abs() < tol => *d += 1,
            _ => groups.push((e, 1)),
        }
    }
    // Names by (point, degeneracy), in order of energy.
    let names = |deg: usize| -> &'static [&'static str] {
        match (point, deg, zincblende) {
            ("G", 1, false) => &["Γ1", "Γ2′"],
            ("G", 3, false) => &["Γ25′", "Γ15"],
            ("G", 1, true) => &["Γ1", "Γ1c"],
            ("G", 3, true) => &["Γ15v", "Γ15c"],
            ("X", 2, false) => &["X1", "X4", "X1c"],
            ("X", 1, true) => &["X1", "X3", "X1c", "X3c"],
            ("X", 2, true) => &["X5", "X5c"],
            ("L", 1, false) => &["L2′", "L1", "L1c"],
            ("L", 2, false) => &["L3′", "L3c"],
            ("L", 1, true) => &["L1", "L1′", "L1c"],
            ("L", 2, true) => &["L3", "L3c"],
            _ => &[],
        }
    };
    let mut used = std::collections::HashMap::new();
    groups
        .into_iter()
        .map(|(e, deg)| {
            let i = used.entry(deg).or_insert(0usize);
            let label = names(deg)
                .get(*i)
                .map_or_else(|| format!("({deg}×)"), |s| s.to_string());
            *i += 1;
            Level { e, deg, label }
        })
        .collect()
}

/// Published transitions (eV), Si and α-Sn, from the reference file.
pub(crate) fn published(name: &str) -> Option<[(&'static str, &'static str, f64, f64); 7]> {
    let rows = |v: [f64; 7]| {
        [
            ("Γ25′", "Γ15", v[0], 0.1),
            ("Γ25′", "Γ2′", v[1], 0.1),
            ("Γ25′", "L1c", v[2], 0.1),
            ("Γ25′", "X1c", v[3], 0.2),
            ("L3′", "L1c", v[4], 0.1),
            ("L3′", "L3c", v[5], 0.1),
            ("X4", "X1c", v[6], 0.1),
        ]
    };
    match name {
        "Si" => Some(rows([3.4, 3.8, 1.9, 0.8, 3.1, 5.2, 4.0])),
        "Sn" => Some(rows([3.0, f64::NAN, 0.6, 1.1, 1.4, 4.4, 3.1])),
        _ => None,
    }
}

/// A named high-symmetry point.
pub(crate) type Point = (&'static str, [f64; 3]);

/// The whole calculation for one set of options.
pub(crate) struct Run {
    pub(crate) material: &'static str,
    /// (path coordinate, k, levels in eV relative to the valence-band top at Γ).
    pub(crate) samples: Vec<(f64, [f64; 3], Vec<f64>)>,
    /// Tick positions and names of the high-symmetry points.
    pub(crate) ticks: Vec<(f64, String)>,
    /// Labelled levels at Γ, X, L.
    pub(crate) table: Vec<(&'static str, Vec<Level>)>,
    pub(crate) gap: Gap,
    pub(crate) npw: usize,
    pub(crate) seconds: f64,
    pub(crate) kpoints: usize,
    /// Of `kpoints`, those solved in a symmetry-adapted basis: (made real, split in two).
    pub(crate) adapted: (usize, usize),
}

/// The band gap: valence maximum, conduction minimum, where each lies.
pub(crate) struct Gap {
    pub(crate) value: f64,
    pub(crate) direct: bool,
    pub(crate) vbm_k: [f64; 3],
    pub(crate) cbm_k: [f64; 3],
    /// The conduction minimum as a fraction along a path segment (from, to, t).
    pub(crate) cbm_where: (String, String, f64),
}

pub(crate) fn occupied(_m: &Material) -> usize {
    4 // two atoms × 4 valence electrons / 2 per band
}

/// The whole calculation in this process alone.
#[cfg(test)]
pub(crate) fn run(args: &Args) -> Res<Run> {
    run_on(args, &Ranks::single())
}

/// The whole calculation, its k-points solved where `ranks` says.
pub(crate) fn run_on(args: &Args, ranks: &Ranks) -> Res<Run> {
    if let Some(t) = args.threads {
        ctensor::set_num_threads(t)?;
    }
    let mat = MATERIALS
        .iter()
        .find(|m| {
            m.name.eq_ignore_ascii_case(&args.material)
                || (args.material.eq_ignore_ascii_case("α-Sn") && m.name == "Sn")
        })
        .ok_or_else(|| {
            let names: Vec<&str> = MATERIALS.iter().map(|m| m.name).collect();
            Fail(format!(
                "--material {}: unknown; expected one of {}",
                args.material,
                names.join(", ")
            ))
        })?;
    if args.bands == 0 {
        return Err(Fail("--bands 0: expected at least 1 band".into()));
    }
    let max = if args.solver == "davidson" {
        MAX_CUT_DAVIDSON
    } else {
        MAX_CUT
    };
    check_cutoff("--gcut", args.gcut, max)?;
    check_cutoff("--kcut", args.kcut, max)?;
    if let Some(e) = args.ecut {
        let kin = model::kinetic_prefactor(mat);
        check_cutoff("--ecut", Some(e / kin), max).map_err(|_| {
            Fail(format!(
                "--ecut {e}: expected an energy in (0, {:.1}] Ry for {} with this solver",
                max * kin,
                mat.name
            ))
        })?;
    }
    if args.points == 0 {
        return Err(Fail(
            "--points 0: expected at least 1 point per segment".into(),
        ));
    }
    let branches = parse_path(&args.path)?;
    let model = Model::new(mat, args)?;
    let npw = model.npw_at([0.0; 3]);
    let nv = occupied(mat);
    let nb = args.bands.max(nv + 1);
    if nb > npw {
        return Err(Fail(format!(
            "--bands {}: more than the {npw} plane waves of the basis",
            args.bands
        )));
    }
    let start = Instant::now();
    let gamma = ranks.levels(&model, &[[0.0; 3]], nb)?.remove(0);
    let top = gamma[nv - 1];
    let shift = |v: Vec<f64>| -> Vec<f64> { v.into_iter().map(|e| e - top).collect() };
    let mut samples = Vec::new();
    let mut ticks = Vec::new();
    let mut x = 0.0;
    // Segment bookkeeping, for locating the conduction minimum.
    let mut segs: Vec<(usize, usize, &str, &str)> = Vec::new();
    for branch in &branches {
        if !ticks.is_empty() {
            // A break: the next point shares the tick with the previous one.
            let last: &mut (f64, String) = ticks.last_mut().unwrap();
            last.1 = format!("{}|{}", last.1, branch[0].0);
        } else {
            ticks.push((x, branch[0].0.to_string()));
        }
        for w in branch.windows(2) {
            let ((na, ka), (nb_, kb)) = (w[0], w[1]);
            let len = (0..3).map(|d| (kb[d] - ka[d]).powi(2)).sum::<f64>().sqrt();
            let first = samples.len();
            for i in 0..=args.points {
                if i == 0
                    && samples
                        .last()
                        .is_some_and(|s: &(f64, [f64; 3], Vec<f64>)| s.1 == ka)
                {
                    continue;
                }
                let t = i as f64 / args.points as f64;
                let k = [
                    ka[0] + t * (kb[0] - ka[0]),
                    ka[1] + t * (kb[1] - ka[1]),
                    ka[2] + t * (kb[2] - ka[2]),
                ];
                // Levels come later, for all k-points at once.
                samples.push((x + t * len, k, Vec::new()));
            }
            segs.push((first.saturating_sub(1), samples.len() - 1, na, nb_));
            x += len;
            ticks.push((x, nb_.to_string()));
        }
    }
    // Every k-point of the path in one batch (split across threads, dense or Davidson;
    // split over the ranks first under MPI).
    let ks: Vec<[f64; 3]> = samples.iter().map(|s| s.1).collect();
    for (s, e) in samples.iter_mut().zip(ranks.levels(&model, &ks, nb)?) {
        s.2 = shift(e);
    }
    // Labelled levels at Γ, X, L.
    // A fixed basis centred at Γ is not invariant under the operations that map X to an
    // equivalent point, so the degeneracies there hold to ~1 meV (the model's
    // convergence), far below the spacing of distinct levels.
    let tol = 0.01;
    let zb = mat.va.iter().any(|&v| v != 0.0);
    let corners = [
        ("G", [0.0; 3]),
        ("X", [1.0, 0.0, 0.0]),
        ("L", [0.5, 0.5, 0.5]),
    ];
    let ks: Vec<[f64; 3]> = corners.iter().map(|c| c.1).collect();
    let mut table = Vec::new();
    for ((name, _), e) in corners.iter().zip(ranks.levels(&model, &ks, nb)?) {
        table.push((*name, label_levels(name, &shift(e), zb, tol)));
    }
    // Gap: valence maximum and conduction minimum over the path, the minimum refined
    // along its segment by golden-section search.
    let (mut vbm, mut cbm) = ((f64::MIN, 0usize), (f64::MAX, 0usize));
    for (i, s) in samples.iter().enumerate() {
        if s.2[nv - 1] > vbm.0 {
            vbm = (s.2[nv - 1], i);
        }
        if s.2[nv] < cbm.0 {
            cbm = (s.2[nv], i);
        }
    }
    let corner = POINTS.iter().any(|p| p.1 == samples[cbm.1].1);
    let (lo, hi) = (cbm.1.saturating_sub(1), (cbm.1 + 1).min(samples.len() - 1));
    let (ka, kb) = (samples[lo].1, samples[hi].1);
    let at = |t: f64| {
        [
            ka[0] + t * (kb[0] - ka[0]),
            ka[1] + t * (kb[1] - ka[1]),
            ka[2] + t * (kb[2] - ka[2]),
        ]
    };
    // The lowest conduction band at several points along the segment (solved together,
    // so two ranks take one each).
    let band = |ts: &[f64]| -> Res<Vec<f64>> {
        let ks: Vec<[f64; 3]> = ts.iter().map(|&t| at(t)).collect();
        Ok(ranks
            .levels(&model, &ks, nv + 1)?
            .iter()
            .map(|e| e[nv] - top)
            .collect())
    };
    // A minimum at a high-symmetry point stays there; one inside a segment is refined
    // between its neighbours (which then lie on the same straight segment).
    let (cbm_e, cbm_k) = if corner {
        (cbm.0, samples[cbm.1].1)
    } else {
        let (mut a, mut b) = (0.0f64, 1.0f64);
        let r = (5f64.sqrt() - 1.0) / 2.0;
        for _ in 0..40 {
            let (c, d) = (b - r * (b - a), a + r * (b - a));
            let e = band(&[c, d])?;
            if e[0] < e[1] {
                b = d;
            } else {
                a = c;
            }
        }
        let t = (a + b) / 2.0;
        let e = band(&[t])?[0];
        if e < cbm.0 {
            (e, at(t))
        } else {
            (cbm.0, samples[cbm.1].1)
        }
    };
    let seg = segs
        .iter()
        .find(|s| cbm.1 >= s.0 && cbm.1 <= s.1)
        .copied()
        .unwrap_or((0, 0, "?", "?"));
    let (sa, sb) = (
        POINTS
            .iter()
            .find(|p| p.0 == seg.2)
            .map_or([0.0; 3], |p| p.1),
        POINTS
            .iter()
            .find(|p| p.0 == seg.3)
            .map_or([0.0; 3], |p| p.1),
    );
    let seg_len = (0..3).map(|d| (sb[d] - sa[d]).powi(2)).sum::<f64>().sqrt();
    let along = (0..3)
        .map(|d| (cbm_k[d] - sa[d]).powi(2))
        .sum::<f64>()
        .sqrt()
        / seg_len.max(1e-12);
    let vbm_k = samples[vbm.1].1;
    // Every Hamiltonian solved: the path, Γ, X, L and the refinement of the minimum.
    let kpoints = ranks.total(model.solved.load(Ordering::Relaxed))?;
    let adapted = (
        ranks.total(model.made_real.load(Ordering::Relaxed))?,
        ranks.total(model.split.load(Ordering::Relaxed))?,
    );
    let dist = (0..3)
        .map(|d| (vbm_k[d] - cbm_k[d]).powi(2))
        .sum::<f64>()
        .sqrt();
    let gap = Gap {
        value: cbm_e - vbm.0,
        direct: dist < 1e-3,
        vbm_k,
        cbm_k,
        cbm_where: (seg.2.to_string(), seg.3.to_string(), along),
    };
    Ok(Run {
        material: mat.name,
        samples,
        ticks,
        table,
        gap,
        npw,
        seconds: start.elapsed().as_secs_f64(),
        kpoints,
        adapted,
    })
}
