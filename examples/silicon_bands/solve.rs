//! The band-structure operator of one k-point: the dense or plane-wave Hamiltonian of a
//! material and its lowest bands, batched over k-points.

use ctensor::{eigvalsh, DataType, DeviceType, EigBackend, EighRange, Tensor};
use model::{g_vectors, potential, Material, RY_EV};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::*;

/// The model for one material and basis: the G vectors and the k-independent V(G − G').
pub(crate) struct Model {
    pub(crate) mat: &'static Material,
    /// Kinetic prefactor (2π/a)² in Ry, a in bohr.
    pub(crate) kin: f64,
    pub(crate) dtype: DataType,
    pub(crate) device: DeviceType,
    pub(crate) kcut: Option<f64>,
    /// Fixed basis: G vectors `[npw, 3]` and V `[npw, npw]` (c64), for the dense solver.
    pub(crate) fixed: Option<(Tensor, Tensor)>,
    /// Fixed basis for the Davidson solver: the G vectors only (V is applied on a grid).
    pub(crate) fixed_g: Option<Vec<[f64; 3]>>,
    /// Whether levels come from the FFT operator and Davidson instead of dense `eigh`.
    pub(crate) davidson: bool,
    /// Hamiltonians diagonalised so far (for the k-points-per-second line).
    pub(crate) solved: AtomicUsize,
    /// The dense solver: `LapackEvr` (MRRR, only the lowest bands), or `Mixed` (the same
    /// in single precision, refined in double) for `--precision mixed` and `auto` on the
    /// CPU in c64.
    pub(crate) eig: EigBackend,
    /// Whether `Mixed` also solves real Hamiltonians (`--precision mixed`; `auto` keeps
    /// them in double).
    pub(crate) mixed_real: bool,
}

impl Model {
    pub(crate) fn new(mat: &'static Material, args: &Args) -> Res<Model> {
        let device: DeviceType = args.device.parse()?;
        let dtype = match args.dtype.as_str() {
            "c64" => DataType::ComplexDouble,
            "c32" => DataType::ComplexFloat,
            other => return Err(Fail(format!("--dtype {other}: expected c64 or c32"))),
        };
        if !["auto", "mixed", "double"].contains(&args.precision.as_str()) {
            return Err(Fail(format!(
                "--precision {}: expected auto, mixed or double",
                args.precision
            )));
        }
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
            eig: match (args.precision.as_str(), dtype, device) {
                ("mixed" | "auto", DataType::ComplexDouble, DeviceType::Cpu) => EigBackend::Mixed,
                _ => EigBackend::LapackEvr,
            },
            mixed_real: args.precision == "mixed",
        })
    }

    pub(crate) fn npw_at(&self, k: [f64; 3]) -> usize {
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
    pub(crate) fn hamiltonian(&self, k: [f64; 3]) -> Res<Tensor> {
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
    pub(crate) fn levels_davidson(&self, k: [f64; 3], nb: usize) -> Res<Vec<f64>> {
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
    /// together: on the CPU the k-points are split across threads (`map_batch`, OpenBLAS
    /// single-threaded meanwhile), each thread building and solving its own Hamiltonians
    /// one at a time (dense or Davidson); the GPU runs them one after the other on its
    /// stream.
    ///
    /// Dense Hamiltonians are not stacked first: measured on GaAs (169 plane waves, one
    /// thread), building a 21 MB stack and solving it as one batched `eigvalsh` gave 486
    /// k-points/s against 631 for this, the difference being the stack's fresh pages and
    /// copies.
    pub(crate) fn levels_many(&self, ks: &[[f64; 3]], nb: usize) -> Res<Vec<Vec<f64>>> {
        if self.device == DeviceType::Gpu {
            return ks.iter().map(|&k| self.levels(k, nb)).collect();
        }
        let found = ctensor::kernels::parallel::map_batch(ks.len(), |i| self.levels(ks[i], nb));
        found.into_iter().collect()
    }

    /// The lowest `nb` eigenvalues at `k`, in eV (not yet shifted).
    pub(crate) fn levels(&self, k: [f64; 3], nb: usize) -> Res<Vec<f64>> {
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
        // Only the lowest bands: MRRR computes just those (measured against faer's full
        // spectrum: 430 vs 404 k-points/s at 169 plane waves, 24.1 vs 23.3 at 531, one
        // thread), in single precision refined in double with `--precision mixed`.
        let backend = match self.eig {
            EigBackend::Mixed if !h.dtype().is_complex() && !self.mixed_real => {
                EigBackend::LapackEvr
            }
            b => b,
        };
        let w = eigvalsh(&h, EighRange::Index(0, nb), backend)?;
        let w = w.cast(DataType::Double)?.to_vec::<f64>()?;
        Ok(w.iter().map(|e| e * RY_EV).collect())
    }
}
