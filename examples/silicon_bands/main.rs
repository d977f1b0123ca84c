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
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use clap::Parser;

mod model;
mod planewave;
#[path = "../davidson/solver.rs"]
mod solver;
use ctensor::{eigvalsh, DataType, DeviceType, EigBackend, EighRange, Error, Tensor};
use model::{g_vectors, potential, Material, MATERIALS, RY_EV};

const POINTS: [(&str, [f64; 3]); 6] = [
    ("G", [0.0, 0.0, 0.0]),
    ("X", [1.0, 0.0, 0.0]),
    ("L", [0.5, 0.5, 0.5]),
    ("U", [1.0, 0.25, 0.25]),
    ("K", [0.75, 0.75, 0.0]),
    ("W", [1.0, 0.5, 0.0]),
];

/// Band structure of a diamond or zinc-blende semiconductor from the Cohen–Bergstresser
/// empirical pseudopotentials.
#[derive(Parser, Debug)]
#[command(name = "silicon_bands", version, about)]
struct Args {
    /// Material: Si, Ge, Sn (α-Sn), GaP, GaAs, AlSb, InP, GaSb, InAs, InSb, ZnS, ZnSe,
    /// ZnTe, CdTe.
    #[arg(long, default_value = "Si")]
    material: String,
    /// Basis cutoff |G|² ≤ gcut in (2π/a)² (27 gives the converged 169 plane waves).
    #[arg(long, conflicts_with_all = ["npw", "ecut"])]
    gcut: Option<f64>,
    /// Basis cutoff as a kinetic energy in Ry: (2π/a)²|G|² ≤ ecut (the DFT convention).
    #[arg(long, conflicts_with = "npw")]
    ecut: Option<f64>,
    /// Basis size: a closed shell count (51, 59, 65, 89, 113, 137, 169, 181, 229, ...).
    #[arg(long)]
    npw: Option<usize>,
    /// Use the k-dependent cutoff |k + G|² ≤ kcut (in (2π/a)²) instead of a fixed set.
    #[arg(long)]
    kcut: Option<f64>,
    /// The k-path: points G X L U K W, '-' joins, ',' breaks.
    #[arg(long, default_value = "L-G-X-U,K-G")]
    path: String,
    /// k-points per path segment.
    #[arg(long, default_value_t = 30)]
    points: usize,
    /// Number of bands.
    #[arg(long, default_value_t = 8)]
    bands: usize,
    /// Device: cpu or gpu.
    #[arg(long, default_value = "cpu")]
    device: String,
    /// Element type of the Hamiltonian: c64 or c32.
    #[arg(long, default_value = "c64")]
    dtype: String,
    /// Eigensolver: "dense" builds H and calls eigh; "davidson" applies H with FFTs on
    /// a real-space grid (never forming it) inside a block Davidson solver.
    #[arg(long, default_value = "dense", value_parser = ["dense", "davidson"])]
    solver: String,
    /// Threads for OpenBLAS and ctensor's pool (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Directory for bands.csv and bands.svg.
    #[arg(long, default_value = "out")]
    out: PathBuf,
}

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

/// The largest basis cutoff the dense solver accepts, in (2π/a)²: about 15 500 plane
/// waves, a dense Hamiltonian of 3.8 GB in c64. Beyond it the basis would not fit in
/// memory.
const MAX_CUT: f64 = 600.0;

/// The largest cutoff of the Davidson solver, which stores no matrix: about 43 500 plane
/// waves on a 72³ grid (a block of 8 bands on the grid is 48 MB).
const MAX_CUT_DAVIDSON: f64 = 1200.0;

/// Checks a cutoff option (in (2π/a)²): finite, positive and at most `max`.
fn check_cutoff(name: &str, value: Option<f64>, max: f64) -> Res<()> {
    match value {
        Some(c) if !(c.is_finite() && c > 0.0 && c <= max) => Err(Fail(format!(
            "{name} {c}: expected a cutoff in (0, {max}] (2π/a)² for this solver (about \
             {} plane waves at the limit)",
            (std::f64::consts::PI / 3.0 * max.powf(1.5)).round()
        ))),
        _ => Ok(()),
    }
}

/// The cutoff whose closed shells hold exactly `npw` plane waves.
fn cutoff_for(npw: usize) -> Res<f64> {
    let mut sizes = Vec::new();
    for cut in 0..=200 {
        let n = g_vectors(cut as f64, [0.0; 3]).len();
        if n == npw {
            return Ok(cut as f64);
        }
        if sizes.last() != Some(&n) {
            sizes.push(n);
        }
        if n > npw {
            break;
        }
    }
    let list: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
    Err(Fail(format!(
        "--npw {npw} is not a closed shell of G vectors; choose one of {}",
        list.join(", ")
    )))
}

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
                let v = potential(mat, &g)?;
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

    /// H(k) = (2π/a)² |k + G|² δ + V(G − G'), in the model's dtype and device.
    fn hamiltonian(&self, k: [f64; 3]) -> Res<Tensor> {
        let (g, v) = match (&self.fixed, self.kcut) {
            (Some((g, v)), _) => (g.share(), v.share()),
            (None, Some(c)) => {
                let gs = g_vectors(c, k);
                let flat: Vec<f64> = gs.iter().flatten().copied().collect();
                let g = Tensor::from_slice(&flat, &[gs.len(), 3])?;
                let v = potential(self.mat, &g)?;
                (g, v)
            }
            (None, None) => return Err(Fail("no basis".into())),
        };
        let mut h = model::hamiltonian(self.kin, &g, &v, k)?;
        // Convert only what differs: each conversion is a full copy of H.
        if self.dtype != h.dtype() {
            h = h.cast(self.dtype)?;
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

/// A parsed k-path: branches of points joined by straight segments; a break (`,`)
/// starts a new branch.
fn parse_path(spec: &str) -> Res<Vec<Vec<Point>>> {
    let mut branches = Vec::new();
    for branch in spec.split(',') {
        let mut pts = Vec::new();
        for name in branch.split('-') {
            let name = name.trim();
            let p = POINTS
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name) || (name == "Γ" && *n == "G"));
            match p {
                Some(&(n, k)) => pts.push((n, k)),
                None => {
                    return Err(Fail(format!(
                        "--path: unknown point '{name}': expected G, X, L, U, K or W"
                    )))
                }
            }
        }
        if pts.len() < 2 {
            return Err(Fail(format!(
                "--path: branch '{branch}' needs at least two points"
            )));
        }
        branches.push(pts);
    }
    Ok(branches)
}

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

fn run(args: &Args) -> Res<Run> {
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
    let gamma = model.levels([0.0; 3], nb)?;
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
    // Every k-point of the path in one batch (stacked eigh, or Davidson across threads).
    let ks: Vec<[f64; 3]> = samples.iter().map(|s| s.1).collect();
    for (s, e) in samples.iter_mut().zip(model.levels_many(&ks, nb)?) {
        s.2 = shift(e);
    }
    // Labelled levels at Γ, X, L.
    // A fixed basis centred at Γ is not invariant under the operations that map X to an
    // equivalent point, so the degeneracies there hold to ~1 meV (the model's
    // convergence), far below the spacing of distinct levels.
    let tol = 0.01;
    let zb = mat.va.iter().any(|&v| v != 0.0);
    let mut table = Vec::new();
    for (name, k) in [
        ("G", [0.0; 3]),
        ("X", [1.0, 0.0, 0.0]),
        ("L", [0.5, 0.5, 0.5]),
    ] {
        let e = shift(model.levels(k, nb)?);
        table.push((name, label_levels(name, &e, zb, tol)));
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
    let band = |t: f64| -> Res<f64> { Ok(model.levels(at(t), nv + 1)?[nv] - top) };
    // A minimum at a high-symmetry point stays there; one inside a segment is refined
    // between its neighbours (which then lie on the same straight segment).
    let (cbm_e, cbm_k) = if corner {
        (cbm.0, samples[cbm.1].1)
    } else {
        let (mut a, mut b) = (0.0f64, 1.0f64);
        let r = (5f64.sqrt() - 1.0) / 2.0;
        for _ in 0..40 {
            let (c, d) = (b - r * (b - a), a + r * (b - a));
            if band(c)? < band(d)? {
                b = d;
            } else {
                a = c;
            }
        }
        let t = (a + b) / 2.0;
        let e = band(t)?;
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
    let kpoints = model.solved.load(Ordering::Relaxed);
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

fn greek(name: &str) -> String {
    name.replace('G', "Γ")
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

fn write_csv(run: &Run, dir: &std::path::Path) -> Res<PathBuf> {
    let mut s = String::from("x,kx,ky,kz");
    let nb = run.samples.first().map_or(0, |s| s.2.len());
    for b in 1..=nb {
        let _ = write!(s, ",band{b}");
    }
    s.push('\n');
    for (x, k, e) in &run.samples {
        // Full precision (the shortest decimal that reads back to the same double), so
        // levels compare with other codes at the 1e-9 Ry level.
        let _ = write!(s, "{x},{},{},{}", k[0], k[1], k[2]);
        for v in e {
            let _ = write!(s, ",{v}");
        }
        s.push('\n');
    }
    let p = dir.join("bands.csv");
    std::fs::write(&p, s).map_err(|e| Fail(format!("cannot write {}: {e}", p.display())))?;
    Ok(p)
}

fn write_svg(run: &Run, dir: &std::path::Path) -> Res<PathBuf> {
    use plotters::prelude::*;
    let p = dir.join("bands.svg");
    let err = |e: &dyn std::fmt::Display| Fail(format!("cannot draw {}: {e}", p.display()));
    let root = SVGBackend::new(&p, (900, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let xmax = run.samples.last().map_or(1.0, |s| s.0);
    let all = run.samples.iter().flat_map(|s| s.2.iter().copied());
    let (lo, hi) = all.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{}: Cohen–Bergstresser band structure", run.material),
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..xmax, (lo - 0.5)..(hi + 0.5))
        .map_err(|e| err(&e))?;
    let ticks = run.ticks.clone();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("E − E_VBM (eV)")
        .draw()
        .map_err(|e| err(&e))?;
    for (x, name) in &ticks {
        chart
            .draw_series(LineSeries::new(
                [(*x, lo - 0.5), (*x, hi + 0.5)],
                BLACK.mix(0.3),
            ))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(std::iter::once(Text::new(
                greek(name),
                (*x, lo - 0.45),
                ("sans-serif", 16),
            )))
            .map_err(|e| err(&e))?;
    }
    let nb = run.samples.first().map_or(0, |s| s.2.len());
    for b in 0..nb {
        let color = if b < 4 { BLUE } else { RED };
        chart
            .draw_series(LineSeries::new(
                run.samples.iter().map(|s| (s.0, s.2[b])),
                color.stroke_width(2),
            ))
            .map_err(|e| err(&e))?;
    }
    // The gap: the conduction minimum and the valence maximum, joined.
    let vx = run
        .samples
        .iter()
        .find(|s| s.1 == run.gap.vbm_k)
        .map_or(0.0, |s| s.0);
    let cx = run
        .samples
        .iter()
        .min_by(|a, b| a.2[4].partial_cmp(&b.2[4]).unwrap())
        .map_or(0.0, |s| s.0);
    chart
        .draw_series(LineSeries::new(
            [(vx, 0.0), (cx, run.gap.value)],
            GREEN.stroke_width(2),
        ))
        .map_err(|e| err(&e))?
        .label(format!("gap {:.2} eV", run.gap.value))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], GREEN));
    chart
        .configure_series_labels()
        .background_style(WHITE)
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    drop(root);
    Ok(dir.join("bands.svg"))
}

/// The program, without the process: parse, run, write, print. The exit status is 2 for
/// bad options (clap's convention) and for a failed run. A plot that cannot be drawn (no
/// font on a headless machine, say) is a warning: the bands are in the CSV.
fn main_with(argv: &[String]) -> (i32, String) {
    let args = match Args::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            return (code, e.to_string());
        }
    };
    let result = run(&args).and_then(|r| {
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
            "{} Hamiltonians ({} plane waves) solved in {:.3} s: {:.1} k-points/s, device {}, dtype {}, {} thread(s); ctensor built with features [{}]",
            r.kpoints,
            r.npw,
            r.seconds,
            r.kpoints as f64 / r.seconds,
            args.device,
            args.dtype,
            ctensor::num_threads(),
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
    let (code, text) = main_with(&argv);
    if code == 0 {
        print!("{text}");
    } else {
        eprintln!("{}", text.trim_end());
    }
    std::process::exit(code);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--solver davidson` (FFT operator, never forming H) gives the dense solver's bands
    /// to 1e-8 Ry for all 14 materials, with fixed bases of 169 and 531 plane waves and
    /// the k-dependent one, and to 2e-5 Ry in c32 (whose dense bands carry ~2e-6 Ry).
    #[test]
    fn davidson_solver_gives_the_dense_bands() {
        let cases: [(&[&str], f64); 4] = [
            (&["--npw", "169"], 1e-8),
            (&["--npw", "531"], 1e-8),
            (&["--kcut", "21"], 1e-8),
            (&["--npw", "169", "--dtype", "c32"], 2e-5),
        ];
        for mat in &MATERIALS {
            for (basis, tol) in cases {
                let mut common = vec!["--material", mat.name, "--points", "2", "--path", "L-G-X"];
                common.extend_from_slice(basis);
                let dense = run(&args(&common)).unwrap();
                common.extend_from_slice(&["--solver", "davidson"]);
                let fft = run(&args(&common)).unwrap();
                assert_eq!(dense.samples.len(), fft.samples.len());
                for (d, f) in dense.samples.iter().zip(&fft.samples) {
                    for (a, b) in d.2.iter().zip(&f.2) {
                        assert!(
                            (a - b).abs() / RY_EV <= tol,
                            "{} {basis:?} at {:?}: dense {a} eV, davidson {b} eV",
                            mat.name,
                            d.1
                        );
                    }
                }
            }
        }
    }

    /// `--ecut` is the kinetic-energy form of `--gcut`; the Davidson solver takes cutoffs
    /// the dense one refuses.
    #[test]
    fn energy_cutoffs_and_the_davidson_limit() {
        let kin = model::kinetic_prefactor(&MATERIALS[0]);
        let by_energy = run(&args(&[
            "--ecut",
            &format!("{}", 27.0 * kin),
            "--points",
            "1",
        ]))
        .unwrap();
        assert_eq!(by_energy.npw, 169);
        let e = run(&args(&["--gcut", "700", "--points", "1"]))
            .err()
            .unwrap();
        assert!(e.0.contains("(0, 600]"), "{}", e.0);
        // Past the cutoff check, the next one (`--points 0`) stops the run before work.
        let e = run(&args(&[
            "--gcut", "700", "--solver", "davidson", "--points", "0",
        ]))
        .err()
        .unwrap();
        assert!(
            e.0.contains("--points 0"),
            "the Davidson solver took the dense limit: {}",
            e.0
        );
        assert!(run(&args(&["--ecut=-1"])).is_err());
    }

    /// The FFT operator equals the dense H on random blocks: every material, a k-point
    /// off every symmetry, a basis of 169 and one of 531 plane waves, c64 and c32.
    #[test]
    fn fft_operator_equals_the_dense_hamiltonian() {
        use ctensor::matmul;
        let k = [0.3, 0.2, 0.1];
        for mat in &MATERIALS {
            for npw in [169, 531] {
                let gs = g_vectors(cutoff_for(npw).unwrap(), k);
                let flat: Vec<f64> = gs.iter().flatten().copied().collect();
                let g = Tensor::from_slice(&flat, &[gs.len(), 3]).unwrap();
                let kin = model::kinetic_prefactor(mat);
                let dense = model::hamiltonian(kin, &g, &potential(mat, &g).unwrap(), k).unwrap();
                for (dt, tol) in [
                    (DataType::ComplexDouble, 1e-12),
                    (DataType::ComplexFloat, 2e-5),
                ] {
                    let op =
                        planewave::PlaneWaveOperator::new(mat, &gs, k, kin, dt, DeviceType::Cpu)
                            .unwrap();
                    let x = Tensor::randn(dt, DeviceType::Cpu, &[gs.len(), 5], 3).unwrap();
                    let got = op.apply(&x).unwrap().cast(DataType::ComplexDouble).unwrap();
                    let want = matmul(&dense, &x.cast(DataType::ComplexDouble).unwrap()).unwrap();
                    let err = got.sub(&want).unwrap().norm().unwrap();
                    let scale = want.norm().unwrap();
                    assert!(
                        err <= tol * scale,
                        "{} npw {} {dt}: |HX - dense| = {err:e} of {scale:e}",
                        mat.name,
                        gs.len()
                    );
                }
            }
        }
    }

    fn args(extra: &[&str]) -> Args {
        let mut v = vec!["silicon_bands"];
        v.extend_from_slice(extra);
        Args::try_parse_from(v).unwrap()
    }

    fn level(run: &Run, label: &str) -> f64 {
        run.table
            .iter()
            .flat_map(|(_, l)| l)
            .find(|l| l.label == label)
            .unwrap_or_else(|| panic!("{label} missing"))
            .e
    }

    /// Set in the child process of the test below.
    const NO_FONT_CHILD: &str = "CTENSOR_DEMO_NO_FONT_CHILD";

    /// The body run in a child whose fontconfig knows no font.
    #[test]
    fn child_runs_the_demo_without_fonts() {
        if std::env::var_os(NO_FONT_CHILD).is_none() {
            return;
        }
        let out = std::env::temp_dir().join(format!("ctensor-demo-nofont-{}", std::process::id()));
        let argv: Vec<String> = ["silicon_bands", "--points", "2", "--out"]
            .iter()
            .map(|s| s.to_string())
            .chain([out.display().to_string()])
            .collect();
        let (code, text) = main_with(&argv);
        let csv = std::fs::read_to_string(out.join("bands.csv"));
        let _ = std::fs::remove_dir_all(&out);
        assert_eq!(code, 0, "{text}");
        assert!(
            text.contains("the plot was not drawn") && text.contains("k-points/s"),
            "{text}"
        );
        assert!(
            csv.is_ok_and(|c| c.lines().count() > 2),
            "the CSV is written"
        );
    }

    /// On a machine without fonts (a headless GPU machine had none) the bands are still
    /// computed, written and reported; only the plot is skipped, with a warning.
    #[test]
    fn a_missing_font_skips_the_plot_but_not_the_results() {
        let dir = std::env::temp_dir().join(format!("ctensor-demo-fc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let conf = dir.join("fonts.conf");
        std::fs::write(
            &conf,
            "<?xml version=\"1.0\"?>\n<fontconfig></fontconfig>\n",
        )
        .unwrap();
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "tests::child_runs_the_demo_without_fonts",
                "--exact",
                "--nocapture",
            ])
            .env(NO_FONT_CHILD, "1")
            .env("FONTCONFIG_FILE", &conf)
            .status()
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(status.success(), "the demo without fonts: {status}");
    }

    #[test]
    fn silicon_matches_the_published_levels_and_gap() {
        let r = run(&args(&["--material", "Si", "--points", "20"])).unwrap();
        assert_eq!(r.npw, 169);
        for (from, to, pubv, tol) in published("Si").unwrap() {
            let ours = level(&r, to) - level(&r, from);
            assert!((ours - pubv).abs() <= tol, "{from}→{to}: {ours} vs {pubv}");
        }
        // The converged levels of this model, from the reference file.
        for (label, want) in [
            ("Γ1", -12.613),
            ("Γ15", 3.424),
            ("Γ2′", 3.889),
            ("X1", -8.333),
            ("X4", -3.006),
            ("X1c", 0.949),
            ("L2′", -10.235),
            ("L1", -7.366),
            ("L3′", -1.253),
            ("L1c", 1.876),
            ("L3c", 3.982),
        ] {
            assert!(
                (level(&r, label) - want).abs() < 0.01,
                "{label}: {} vs {want}",
                level(&r, label)
            );
        }
        assert!(!r.gap.direct);
        assert!((r.gap.value - 0.82).abs() <= 0.01, "gap {}", r.gap.value);
        let (a, b, t) = &r.gap.cbm_where;
        assert_eq!((a.as_str(), b.as_str()), ("G", "X"));
        assert!((t - 0.85).abs() <= 0.02, "conduction minimum at {t} of Γ–X");
    }

    #[test]
    fn alpha_tin_matches_its_published_values_and_shows_the_inverted_gamma_2prime() {
        let r = run(&args(&["--material", "Sn", "--points", "8"])).unwrap();
        for (from, to, pubv, tol) in published("Sn").unwrap() {
            if pubv.is_nan() {
                continue;
            }
            let ours = level(&r, to) - level(&r, from);
            assert!((ours - pubv).abs() <= tol, "{from}→{to}: {ours} vs {pubv}");
        }
        assert!(
            level(&r, "Γ2′") < level(&r, "Γ25′"),
            "Γ2′ lies below Γ25′ in α-Sn"
        );
    }

    #[test]
    fn gaas_has_a_direct_gap_at_gamma_and_every_material_runs() {
        let r = run(&args(&["--material", "GaAs", "--points", "10"])).unwrap();
        assert!(
            r.gap.direct,
            "GaAs gap at {:?} / {:?}",
            r.gap.vbm_k, r.gap.cbm_k
        );
        assert!(r.gap.cbm_k.iter().all(|x| x.abs() < 1e-6));
        for m in &MATERIALS {
            let r = run(&args(&[
                "--material",
                m.name,
                "--points",
                "3",
                "--npw",
                "89",
            ]))
            .unwrap();
            assert!(r.gap.value.is_finite(), "{}", m.name);
        }
    }

    #[test]
    fn c32_agrees_with_c64_and_partial_spectra_equal_the_full_one() {
        let a64 = args(&["--npw", "113"]);
        let a32 = args(&["--npw", "113", "--dtype", "c32"]);
        let (m64, m32) = (
            Model::new(&MATERIALS[0], &a64).unwrap(),
            Model::new(&MATERIALS[0], &a32).unwrap(),
        );
        for k in [[0.0, 0.0, 0.0], [0.3, 0.1, 0.0], [0.5, 0.5, 0.5]] {
            let (e64, e32) = (m64.levels(k, 8).unwrap(), m32.levels(k, 8).unwrap());
            for (x, y) in e64.iter().zip(&e32) {
                assert!((x - y).abs() < 2e-3, "c32 {y} vs c64 {x} eV");
            }
            let h = m64.hamiltonian(k).unwrap();
            let full = eigvalsh(&h, EighRange::All, EigBackend::Faer)
                .unwrap()
                .to_vec::<f64>()
                .unwrap();
            for (p, f) in e64.iter().zip(&full) {
                assert!((p - f * RY_EV).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn the_gpu_gives_the_host_levels() {
        if let Some(reason) = ctensor::base::gpu::unavailable_reason() {
            assert!(
                std::env::var_os("CTENSOR_REQUIRE_GPU").is_none(),
                "CTENSOR_REQUIRE_GPU is set but the GPU is unusable: {reason}"
            );
            println!("SKIP: the_gpu_gives_the_host_levels: {reason}");
            return;
        }
        for dtype in ["c64", "c32"] {
            let host =
                Model::new(&MATERIALS[0], &args(&["--npw", "113", "--dtype", dtype])).unwrap();
            let gpu_args = args(&["--npw", "113", "--dtype", dtype, "--device", "gpu"]);
            let gpu = Model::new(&MATERIALS[0], &gpu_args).unwrap();
            let tol = if dtype == "c64" { 1e-9 } else { 2e-3 };
            for k in [[0.0, 0.0, 0.0], [0.3, 0.1, 0.0], [0.5, 0.5, 0.5]] {
                let (h, g) = (host.levels(k, 8).unwrap(), gpu.levels(k, 8).unwrap());
                for (x, y) in h.iter().zip(&g) {
                    assert!((x - y).abs() < tol, "{dtype}: GPU {y} vs host {x} eV");
                }
            }
        }
    }

    #[test]
    fn bands_csv_holds_every_level_to_the_last_bit() {
        let dir = std::env::temp_dir().join(format!("ctensor-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let args = Args::parse_from(["silicon_bands", "--points", "3", "--path", "L-G-X"]);
        let r = run(&args).unwrap();
        let text = std::fs::read_to_string(write_csv(&r, &dir).unwrap()).unwrap();
        let rows: Vec<Vec<f64>> = text
            .lines()
            .skip(1)
            .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
            .collect();
        assert_eq!(rows.len(), r.samples.len());
        for (row, (x, k, e)) in rows.iter().zip(&r.samples) {
            let want: Vec<f64> = [*x, k[0], k[1], k[2]]
                .into_iter()
                .chain(e.iter().copied())
                .collect();
            assert_eq!(row.len(), want.len());
            for (a, b) in row.iter().zip(&want) {
                assert_eq!(a.to_bits(), b.to_bits(), "{a} vs {b}");
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn bad_options_give_one_line_and_status_2() {
        let argv = |v: &[&str]| -> Vec<String> {
            std::iter::once("silicon_bands")
                .chain(v.iter().copied())
                .map(String::from)
                .collect()
        };
        // Each bad option, and the word its message must contain (about the option given,
        // not a consequence of it).
        let mut bads: Vec<(&[&str], &str)> = vec![
            (&["--material", "Unobtainium"], "--material"),
            (&["--bands", "0"], "--bands"),
            (&["--npw", "51", "--bands", "60"], "--bands"),
            (&["--npw", "52"], "--npw"),
            (&["--path", "G-Q"], "Q"),
            (&["--dtype", "f16"], "--dtype"),
            (&["--points", "nope"], "--points"),
            (&["--gcut", "nan"], "--gcut NaN: expected a cutoff"),
            (&["--gcut", "1e400"], "--gcut inf: expected a cutoff"),
            (&["--gcut=-1"], "--gcut -1: expected a cutoff"),
            (&["--gcut", "1e7"], "--gcut 10000000: expected a cutoff"),
            (&["--kcut", "nan"], "--kcut NaN: expected a cutoff"),
            (&["--kcut=-1"], "--kcut -1: expected a cutoff"),
            (&["--kcut", "3", "--bands", "9"], "plane waves at k"),
            (&["--threads", "100000"], "thread count"),
        ];
        if !ctensor::gpu_available() {
            bads.push((&["--device", "gpu"], "gpu")); // an unusable device is a usage error
        }
        for (bad, word) in bads {
            let (code, text) = main_with(&argv(bad));
            assert_eq!(code, 2, "{bad:?}: {text}");
            assert!(text.trim_end().lines().count() <= 3, "{bad:?}: {text}");
            assert!(text.contains(word), "{bad:?}: {text:?} lacks {word:?}");
        }
    }
}
