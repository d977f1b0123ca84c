//! Band structures of the 14 semiconductors of Cohen & Bergstresser, Phys. Rev. 141, 789
//! (1966): the empirical-pseudopotential Hamiltonian in a plane-wave basis, built from
//! tensors of G vectors with ctensor ops and diagonalised for its lowest bands with
//! `eigh`. The model, parameters and published numbers are in
//! `../shared/reference/cohen-bergstresser.md`.
//!
//! ```text
//! cargo run --release --example silicon_bands -- --material GaAs --points 40
//! ```

use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use clap::Parser;

mod cli;
mod model;
mod planewave;
mod plot;
mod ranks;
#[path = "../davidson/solver.rs"]
mod solver;
use cli::*;
use ctensor::{eigvalsh, DataType, DeviceType, EigBackend, EighRange, Error, Tensor};
use model::{g_vectors, potential, Material, MATERIALS, RY_EV};
use plot::*;
use ranks::{Ranks, World};

/// Why a run stopped: a message for the user.
#[derive(Debug)]
struct Fail(String);

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        Fail(e.to_string())
    }
}

type Res<T> = std::result::Result<T, Fail>;

/// The model for one material and basis: the G vectors and the k-independent V(G − G').
struct Model {
    mat: &'static Material,
    /// Kinetic prefactor (2π/a)² in Ry, a in bohr.
    kin: f64,
    dtype: DataType,
    device: DeviceType,
    kcut: Option<f64>,
    /// Fixed basis: G vectors `[npw, 3]` and V `[npw, npw]` (c64), for the dense solver.
    fixed: Option<(Tensor, Tensor)>,
    /// Fixed basis for the Davidson solver: the G vectors only (V is applied on a grid).
    fixed_g: Option<Vec<[f64; 3]>>,
    /// Whether levels come from the FFT operator and Davidson instead of dense `eigh`.
    davidson: bool,
    /// Hamiltonians diagonalised so far (for the k-points-per-second line).
    solved: AtomicUsize,
}

/// Memory of the Hamiltonians stacked for one batched `eigvalsh` (c64 size).
const BATCH_BYTES: usize = 256 << 20;

impl Model {
    fn new(mat: &'static Material, args: &Args) -> Res<Model> {
        let device: DeviceType = args.device.parse()?;
        let dtype = match args.dtype.as_str() {
            "c64" => DataType::ComplexDouble,
            "c32" => DataType::ComplexFloat,
            other => return Err(Fail(format!("--dtype {other}: expected c64 or c32"))),
        };
        // Touch the device first, so an unavailable one is reported before any work.
        Tensor::zeros(dtype, device, &[1])?;
        let kin = model::kinetic_prefactor(mat);
        let fixed = if args.kcut.is_some() {
            None
        } else {
            let cut = match (args.gcut, args.ecut, args.npw) {
                (Some(c), _, _) => c,
                (None, Some(e), _) => e / kin,
                (None, None, Some(n)) => cutoff_for(n)?,
                (None, None, None) => 27.0,
            };
            Some(g_vectors(cut, [0.0; 3]))
        };
        let davidson = args.solver == "davidson";
        let (fixed, fixed_g) = match fixed {
            Some(gs) if davidson => (None, Some(gs)),
            Some(gs) => {
                let flat: Vec<f64> = gs.iter().flatten().copied().collect();
                let g = Tensor::from_slice(&flat, &[gs.len(), 3])?;
                let v = model::real_if_real(&potential(mat, &g)?)?;
                (Some((g, v)), None)
            }
            None => (None, None),
        };
        Ok(Model {
            mat,
            kin,
            dtype,
            device,
            kcut: args.kcut,
            fixed,
            fixed_g,
            davidson,
            solved: Default::default(),
        })
    }

    fn npw_at(&self, k: [f64; 3]) -> usize {
        if let Some(gs) = &self.fixed_g {
            return gs.len();
        }
        match (&self.fixed, self.kcut) {
            (Some((g, _)), _) => g.dims()[0],
            (None, Some(c)) => g_vectors(c, k).len(),
            (None, None) => 0,
        }
    }

    /// H(k) = (2π/a)² |k + G|² δ + V(G − G'), on the model's device in the model's dtype, or
    /// in its real type when H is real (a centrosymmetric crystal, `model::real_if_real`).
    fn hamiltonian(&self, k: [f64; 3]) -> Res<Tensor> {
        let (g, v) = match (&self.fixed, self.kcut) {
            (Some((g, v)), _) => (g.share(), v.share()),
            (None, Some(c)) => {
                let gs = g_vectors(c, k);
                let flat: Vec<f64> = gs.iter().flatten().copied().collect();
                let g = Tensor::from_slice(&flat, &[gs.len(), 3])?;
                let v = model::real_if_real(&potential(self.mat, &g)?)?;
                (g, v)
            }
            (None, None) => return Err(Fail("no basis".into())),
        };
        let mut h = model::hamiltonian(self.kin, &g, &v, k)?;
        // A real H (a centrosymmetric crystal, see `real_if_real`) stays real, in the
        // precision of the model's dtype. Convert only what differs: each conversion is
        // a full copy of H.
        let dtype = if h.dtype().is_complex() {
            self.dtype
        } else {
            self.dtype.real_type()
        };
        if dtype != h.dtype() {
            h = h.cast(dtype)?;
        }
        if self.device != h.device() {
            h = h.to_device(self.device)?;
        }
        Ok(h)
    }

    /// The lowest `nb` eigenvalues at `k` from the FFT operator and block Davidson, in
    /// eV (not yet shifted).
    fn levels_davidson(&self, k: [f64; 3], nb: usize) -> Res<Vec<f64>> {
        let gs = match (&self.fixed_g, self.kcut) {
            (Some(gs), _) => gs.clone(),
            (None, Some(c)) => g_vectors(c, k),
            (None, None) => return Err(Fail("no basis".into())),
        };
        let npw = gs.len();
        if nb > npw {
            return Err(Fail(format!(
                "--bands: {nb} bands exceed the {npw} plane waves at k = ({}, {}, {}) (2π/a)",
                k[0], k[1], k[2]
            )));
        }
        let op =
            planewave::PlaneWaveOperator::new(self.mat, &gs, k, self.kin, self.dtype, self.device)?;
        let opts = solver::Options {
            nev: nb,
            tol: if self.dtype == DataType::ComplexFloat {
                1e-4
            } else {
                1e-9
            },
            max_basis: 6 * nb,
            max_iter: 300,
            floor: 0.1,
        };
        let x0 = Tensor::randn(self.dtype, self.device, &[npw, nb], 7)?;
        let found = solver::davidson(|x| op.apply(x), &op.diagonal()?, &x0, opts)?;
        self.solved.fetch_add(1, Ordering::Relaxed);
        let w = found.values.cast(DataType::Double)?.to_vec::<f64>()?;
        Ok(w.iter().map(|e| e * RY_EV).collect())
    }

    /// The lowest `nb` eigenvalues at each of `ks`, in eV (not yet shifted), solved
    /// together: with the dense solver and a fixed basis, the Hamiltonians of up to
    /// [`BATCH_BYTES`] go to one stacked `eigvalsh` (split across threads, one
    /// single-threaded LAPACK call per matrix); with Davidson, the k-points are split
    /// across threads (`map_batch`, OpenBLAS single-threaded meanwhile); a k-dependent
    /// dense basis, and the GPU, solve them one by one.
    fn levels_many(&self, ks: &[[f64; 3]], nb: usize) -> Res<Vec<Vec<f64>>> {
        // The GPU runs one k-point after the other on its stream.
        if self.device == DeviceType::Gpu {
            return ks.iter().map(|&k| self.levels(k, nb)).collect();
        }
        if self.davidson {
            let found = ctensor::kernels::parallel::map_batch(ks.len(), |i| {
                self.levels_davidson(ks[i], nb)
            });
            return found.into_iter().collect();
        }
        if self.fixed.is_none() {
            return ks.iter().map(|&k| self.levels(k, nb)).collect();
        }
        let npw = self.npw_at([0.0; 3]);
        if nb > npw {
            return Err(Fail(format!(
                "--bands: {nb} bands exceed the {npw} plane waves of the basis"
            )));
        }
        let per = (BATCH_BYTES / (npw * npw * 16).max(1)).max(1);
        let mut out = Vec::with_capacity(ks.len());
        for chunk in ks.chunks(per) {
            let hs: Vec<Tensor> = chunk
                .iter()
                .map(|&k| self.hamiltonian(k))
                .collect::<Res<_>>()?;
            let stack = ctensor::stack(&hs.iter().collect::<Vec<_>>(), 0)?;
            let w = eigvalsh(&stack, EighRange::Index(0, nb), EigBackend::LapackEvr)?;
            let w = w.cast(DataType::Double)?.to_vec::<f64>()?;
            out.extend(
                w.chunks(nb)
                    .map(|e| e.iter().map(|x| x * RY_EV).collect::<Vec<_>>()),
            );
            self.solved.fetch_add(chunk.len(), Ordering::Relaxed);
        }
        Ok(out)
    }

    /// The lowest `nb` eigenvalues at `k`, in eV (not yet shifted).
    fn levels(&self, k: [f64; 3], nb: usize) -> Res<Vec<f64>> {
        if self.davidson {
            return self.levels_davidson(k, nb);
        }
        let h = self.hamiltonian(k)?;
        // With a k-dependent cutoff the basis changes along the path.
        let npw = h.dims()[0];
        if nb > npw {
            return Err(Fail(format!(
                "--bands: {nb} bands (at least the occupied ones and one more) exceed the \
                 {npw} plane waves at k = ({}, {}, {}) (2π/a); raise the cutoff or ask for fewer",
                k[0], k[1], k[2]
            )));
        }
        self.solved.fetch_add(1, Ordering::Relaxed);
        // Only the lowest bands: MRRR computes just those. Measured against the default
        // (faer, full spectrum): 430 vs 404 k-points/s at 169 plane waves, 24.1 vs 23.3
        // at 531 (one thread).
        let w = eigvalsh(&h, EighRange::Index(0, nb), EigBackend::LapackEvr)?;
        let w = w.cast(DataType::Double)?.to_vec::<f64>()?;
        Ok(w.iter().map(|e| e * RY_EV).collect())
    }
}

/// One labelled level: energy (eV from the valence-band top), degeneracy, label.
struct Level {
    e: f64,
    deg: usize,
    label: String,
}

/// Groups sorted energies into degenerate multiplets and names them by the usual
/// diamond (O_h) or zinc-blende (T_d) labels, in order of energy within each
/// degeneracy. Levels beyond the named ones keep a plain degeneracy mark.
fn label_levels(point: &str, levels: &[f64], zincblende: bool, tol: f64) -> Vec<Level> {
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
fn published(name: &str) -> Option<[(&'static str, &'static str, f64, f64); 7]> {
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
type Point = (&'static str, [f64; 3]);

/// The whole calculation for one set of options.
struct Run {
    material: &'static str,
    /// (path coordinate, k, levels in eV relative to the valence-band top at Γ).
    samples: Vec<(f64, [f64; 3], Vec<f64>)>,
    /// Tick positions and names of the high-symmetry points.
    ticks: Vec<(f64, String)>,
    /// Labelled levels at Γ, X, L.
    table: Vec<(&'static str, Vec<Level>)>,
    gap: Gap,
    npw: usize,
    seconds: f64,
    kpoints: usize,
}

/// The band gap: valence maximum, conduction minimum, where each lies.
struct Gap {
    value: f64,
    direct: bool,
    vbm_k: [f64; 3],
    cbm_k: [f64; 3],
    /// The conduction minimum as a fraction along a path segment (from, to, t).
    cbm_where: (String, String, f64),
}

fn occupied(_m: &Material) -> usize {
    4 // two atoms × 4 valence electrons / 2 per band
}

/// The whole calculation in this process alone.
#[cfg(test)]
fn run(args: &Args) -> Res<Run> {
    run_on(args, &Ranks::single())
}

/// The whole calculation, its k-points solved where `ranks` says.
fn run_on(args: &Args, ranks: &Ranks) -> Res<Run> {
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
    // Every k-point of the path in one batch (stacked eigh, or Davidson across threads;
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
    })
}

fn report(run: &Run, args: &Args) -> Res<String> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} — Cohen–Bergstresser pseudopotentials, {} plane waves, {} bands",
        run.material, run.npw, args.bands
    );
    let _ = writeln!(
        out,
        "\nLevels at Γ, X, L (eV, relative to the valence-band top at Γ):"
    );
    for (name, levels) in &run.table {
        let row: Vec<String> = levels
            .iter()
            .map(|l| {
                format!(
                    "{} {:.3}{}",
                    l.label,
                    l.e,
                    if l.deg > 1 {
                        format!(" (×{})", l.deg)
                    } else {
                        String::new()
                    }
                )
            })
            .collect();
        let _ = writeln!(out, "  {:<2} {}", greek(name), row.join(", "));
    }
    if let Some(rows) = published(run.material) {
        let _ = writeln!(out, "\nTransition        ours (eV)  published  difference");
        let find = |label: &str| {
            run.table
                .iter()
                .flat_map(|(_, l)| l)
                .find(|l| l.label == label)
                .map(|l| l.e)
        };
        for (from, to, pubv, _) in rows {
            if let (Some(a), Some(b)) = (find(from), find(to)) {
                let ours = b - a;
                if pubv.is_nan() {
                    let _ = writeln!(out, "  {from:>5} → {to:<5} {ours:>9.3}  {:>9}", "—");
                } else {
                    let _ = writeln!(
                        out,
                        "  {from:>5} → {to:<5} {ours:>9.3}  {pubv:>9.1}  {:>+10.3}",
                        ours - pubv
                    );
                }
            }
        }
    }
    let g = &run.gap;
    let kind = if g.direct { "direct" } else { "indirect" };
    let (a, b, t) = &g.cbm_where;
    let place = if *t < 1e-9 {
        format!("at {}", greek(a))
    } else if *t > 1.0 - 1e-9 {
        format!("at {}", greek(b))
    } else {
        format!("{t:.3} of the way from {} to {}", greek(a), greek(b))
    };
    let _ = writeln!(
        out,
        "\nBand gap {:.3} eV ({kind}): valence maximum at k = {:?}, conduction minimum at k = [{:.3}, {:.3}, {:.3}] ({place})",
        g.value, g.vbm_k, g.cbm_k[0], g.cbm_k[1], g.cbm_k[2]
    );
    Ok(out)
}

/// The program, without the process: parse, run, write, print. The exit status is 2 for
/// bad options (clap's convention) and for a failed run. A plot that cannot be drawn (no
/// font on a headless machine, say) is a warning: the bands are in the CSV.
#[cfg(test)]
fn main_with(argv: &[String]) -> (i32, String) {
    main_on(argv, None)
}

/// [`main_with`] on the ranks of `world` (MPI's world in an `mpi` build, `None` for
/// one process): every rank computes, rank 0 writes and reports; the others return an
/// empty text unless they fail.
fn main_on(argv: &[String], world: Option<&World>) -> (i32, String) {
    let args = match Args::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            return (code, e.to_string());
        }
    };
    let ranks = match Ranks::new(world, &args) {
        Ok(r) => r,
        Err(Fail(msg)) => return (2, format!("silicon_bands: error: {msg}")),
    };
    let result = run_on(&args, &ranks).and_then(|r| {
        if !ranks.is_root() {
            return Ok(String::new());
        }
        let mut text = report(&r, &args)?;
        std::fs::create_dir_all(&args.out).map_err(|e| Fail(format!("cannot create {}: {e}", args.out.display())))?;
        let csv = write_csv(&r, &args.out)?;
        match write_svg(&r, &args.out) {
            Ok(svg) => {
                let _ = writeln!(text, "\nWrote {} and {}", csv.display(), svg.display());
            }
            Err(Fail(why)) => {
                let _ = writeln!(
                    text,
                    "\nWrote {}; warning: the plot was not drawn ({why}). It needs a font \
                     found through fontconfig (Debian: apt-get install fonts-dejavu-core).",
                    csv.display()
                );
            }
        }
        let _ = writeln!(
            text,
            "{} Hamiltonians ({} plane waves) solved in {:.3} s: {:.1} k-points/s, device {}, dtype {}, {} thread(s){}; ctensor built with features [{}]",
            r.kpoints,
            r.npw,
            r.seconds,
            r.kpoints as f64 / r.seconds,
            args.device,
            args.dtype,
            ctensor::num_threads(),
            ranks.describe().map_or(String::new(), |d| format!(" per rank, {d}")),
            ctensor::BUILD_FEATURES
        );
        Ok(text)
    });
    match result {
        Ok(text) => (0, text),
        Err(Fail(msg)) => (2, format!("silicon_bands: error: {msg}")),
    }
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    #[cfg(feature = "mpi")]
    let (code, text) = match ctensor::mpi::initialize() {
        Err(e) => (2, format!("silicon_bands: error: {e}")),
        Ok(universe) => {
            let out = match universe.world() {
                Ok(world) => {
                    let (code, text) = main_on(&argv, Some(&world));
                    match (code, world.size()) {
                        (0, _) | (_, 1) => (code, text),
                        (_, _) => (code, format!("[rank {}] {text}", world.rank())),
                    }
                }
                Err(e) => (2, format!("silicon_bands: error: {e}")),
            };
            // The world communicator is gone; finalize MPI before exiting.
            drop(universe);
            out
        }
    };
    #[cfg(not(feature = "mpi"))]
    let (code, text) = main_on(&argv, None);
    if code == 0 {
        print!("{text}");
    } else {
        eprintln!("{}", text.trim_end());
    }
    std::process::exit(code);
}

#[cfg(test)]
mod tests;
