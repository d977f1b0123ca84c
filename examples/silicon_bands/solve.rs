//! The band-structure operator of one k-point: the dense or plane-wave Hamiltonian of a
//! material and its lowest bands, batched over k-points.

use ctensor::{eigvalsh, DataType, DeviceType, EigBackend, EighRange, Tensor};
use model::{g_vectors, potential, Material, RY_EV};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use symmetry::{Block, Symmetry};

use crate::*;

/// The smallest complex H that `--precision auto` solves in mixed precision. Measured on
/// GaAs, one thread, lowest 8 bands: at order 169 mixed gives 641 k-points/s against 571
/// in double, but for the two blocks of order 84–85 of a unitary symmetry (`symmetry`)
/// double is faster (the path at 1 015–1 048 k-points/s against 874–905 with the blocks
/// in mixed precision); the blocks of order 265–266 at 531 plane waves gain again (87–98
/// against 79–82). Real H stays in double: `dsyevr` is already fast (Si at 169 plane
/// waves: 1 544 k-points/s double against 1 344 mixed).
pub(crate) const AUTO_MIXED_MIN_ORDER: usize = 128;

/// H(k)'s symmetry-adapted blocks at one k-point ([`Model::adapted_blocks`]).
pub(crate) struct Adapted {
    /// Whether the symmetry is antiunitary (one real block) or unitary (two complex ones).
    pub(crate) antiunitary: bool,
    /// The blocks' k-independent parts.
    pub(crate) blocks: Arc<Vec<Block>>,
    /// The basis's G vectors, which `Block::rep` indexes.
    pub(crate) gs: Vec<[f64; 3]>,
}

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
    /// Of `solved`, those made real by an antiunitary symmetry, and those split in two
    /// blocks by a unitary one.
    pub(crate) made_real: AtomicUsize,
    pub(crate) split: AtomicUsize,
    /// The dense solver: `LapackEvr` (MRRR, only the lowest bands), or `Mixed` (the same
    /// in single precision, refined in double) for `--precision mixed` and `auto` on the
    /// CPU in c64.
    pub(crate) eig: EigBackend,
    /// Whether `Mixed` solves every Hamiltonian (`--precision mixed`); `auto` uses it for
    /// complex ones of order [`AUTO_MIXED_MIN_ORDER`] or more and keeps the rest in double.
    pub(crate) mixed_always: bool,
    /// The symmetries of a complex H(k) (`symmetry::symmetries`) the dense solver uses
    /// at the k-points they fix; empty for a real H, for Davidson and with
    /// `--symmetry off`.
    pub(crate) symmetries: Vec<Symmetry>,
    /// The fixed basis's G vectors on the host, for the symmetry-adapted blocks.
    fixed_host: Vec<[f64; 3]>,
    /// The symmetry-adapted blocks of the fixed basis's V, by index into `symmetries`,
    /// built at the first k-point that uses them (`None`: no reduction on this basis).
    adapted: Mutex<HashMap<usize, Option<Arc<Vec<Block>>>>>,
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
        let fixed_host = fixed.clone().unwrap_or_default();
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
            made_real: Default::default(),
            split: Default::default(),
            eig: match (args.precision.as_str(), dtype, device) {
                ("mixed" | "auto", DataType::ComplexDouble, DeviceType::Cpu) => EigBackend::Mixed,
                _ => EigBackend::LapackEvr,
            },
            mixed_always: args.precision == "mixed",
            symmetries: if davidson || args.symmetry == "off" || mat.va.iter().all(|&x| x == 0.0) {
                Vec::new()
            } else {
                symmetry::symmetries(mat)
            },
            fixed_host,
            adapted: Default::default(),
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
        if let Some(levels) = self.levels_adapted(k, nb)? {
            return Ok(levels);
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
        let w = self.lowest(&h, nb)?;
        Ok(w.iter().map(|e| e * RY_EV).collect())
    }

    /// The lowest `nb` eigenvalues of the dense `h`, in Ry.
    fn lowest(&self, h: &Tensor, nb: usize) -> Res<Vec<f64>> {
        // Only the lowest bands: MRRR computes just those (measured against faer's full
        // spectrum: 430 vs 404 k-points/s at 169 plane waves, 24.1 vs 23.3 at 531, one
        // thread), in single precision refined in double with `--precision mixed`.
        let auto_mixed = h.dtype().is_complex() && h.dims()[0] >= AUTO_MIXED_MIN_ORDER;
        let backend = match self.eig {
            EigBackend::Mixed if !self.mixed_always && !auto_mixed => EigBackend::LapackEvr,
            b => b,
        };
        let w = eigvalsh(h, EighRange::Index(0, nb), backend)?;
        Ok(w.cast(DataType::Double)?.to_vec::<f64>()?)
    }

    /// The symmetry-adapted blocks of H(k)'s potential part at `k` (`symmetry`), with the
    /// plane waves they combine and whether the symmetry used is antiunitary (one real
    /// block) or unitary (two complex blocks); `None` when no symmetry fixes `k` or none
    /// reduces this basis. An antiunitary symmetry is preferred.
    pub(crate) fn adapted_blocks(&self, k: [f64; 3]) -> Res<Option<Adapted>> {
        let mut candidates: Vec<usize> = (0..self.symmetries.len())
            .filter(|&i| symmetry::fixes(&self.symmetries[i], k))
            .collect();
        candidates.sort_by_key(|&i| !self.symmetries[i].antiunitary);
        let poisoned = |_| Fail("a solver thread panicked".into());
        for i in candidates {
            let s = &self.symmetries[i];
            let build = |gs: &[[f64; 3]], v: &Tensor| -> Res<Option<Arc<Vec<Block>>>> {
                symmetry::adapted_basis(s, gs)
                    .map(|basis| symmetry::reduce(v, &basis, s.antiunitary))
                    .transpose()
                    .map(|b| b.map(Arc::new))
            };
            let (blocks, gs) = match (&self.fixed, self.kcut) {
                (Some((_, v)), _) => {
                    let cached = self.adapted.lock().map_err(poisoned)?.get(&i).cloned();
                    let blocks = match cached {
                        Some(b) => b,
                        None => {
                            let built = build(&self.fixed_host, v)?;
                            self.adapted
                                .lock()
                                .map_err(poisoned)?
                                .insert(i, built.clone());
                            built
                        }
                    };
                    (blocks, self.fixed_host.clone())
                }
                (None, Some(c)) => {
                    let gs = g_vectors(c, k);
                    let flat: Vec<f64> = gs.iter().flatten().copied().collect();
                    let g = Tensor::from_slice(&flat, &[gs.len(), 3])?;
                    (build(&gs, &potential(self.mat, &g)?)?, gs)
                }
                (None, None) => return Err(Fail("no basis".into())),
            };
            if let Some(blocks) = blocks {
                return Ok(Some(Adapted {
                    antiunitary: s.antiunitary,
                    blocks,
                    gs,
                }));
            }
        }
        Ok(None)
    }

    /// The lowest `nb` eigenvalues at `k` in eV from the symmetry-adapted blocks of H(k)
    /// ([`Model::adapted_blocks`]): each block's lowest `nb` (or all it has), merged.
    /// `None` when there are no blocks at `k`.
    fn levels_adapted(&self, k: [f64; 3], nb: usize) -> Res<Option<Vec<f64>>> {
        let Some(Adapted {
            antiunitary,
            blocks,
            gs,
        }) = self.adapted_blocks(k)?
        else {
            return Ok(None);
        };
        if nb > gs.len() {
            // Refused, with its message, by the unreduced path.
            return Ok(None);
        }
        let mut levels = Vec::with_capacity(2 * nb);
        for block in blocks.iter() {
            let m = block.rep.len().min(nb);
            if m == 0 {
                continue;
            }
            // The kinetic diagonal: every plane wave a basis vector combines has the same
            // |k + G|².
            let t: Vec<f64> = block
                .rep
                .iter()
                .map(|&i| self.kin * (0..3).map(|d| (gs[i][d] + k[d]).powi(2)).sum::<f64>())
                .collect();
            let h = block.v.try_clone()?;
            let t = Tensor::from_slice(&t, &[t.len()])?
                .to_device(h.device())?
                .cast(h.dtype())?;
            h.diagonal()?.add_(&t)?;
            let dtype = if h.dtype().is_complex() {
                self.dtype
            } else {
                self.dtype.real_type()
            };
            let mut h = if dtype == h.dtype() {
                h
            } else {
                h.cast(dtype)?
            };
            if self.device != h.device() {
                h = h.to_device(self.device)?;
            }
            levels.extend(self.lowest(&h, m)?);
        }
        levels.sort_by(f64::total_cmp);
        levels.truncate(nb);
        self.solved.fetch_add(1, Ordering::Relaxed);
        let kind = if antiunitary {
            &self.made_real
        } else {
            &self.split
        };
        kind.fetch_add(1, Ordering::Relaxed);
        Ok(Some(levels.iter().map(|e| e * RY_EV).collect()))
    }
}
