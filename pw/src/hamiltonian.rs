//! The Kohn–Sham Hamiltonian of one k-point applied to a block of bands, never formed:
//! kinetic diagonal, local potential in real space (sphere → box, FFT, multiply, FFT,
//! box → sphere), and the separable HGH projectors as two gemms (`⟨p|ψ⟩`, then
//! `Σ |p⟩ h ⟨p|ψ⟩`).

use crate::basis::{FftGrid, Sphere};
use crate::crystal::{dot, Crystal, Mat3, Vec3};
use crate::error::Result;
use crate::gamma::GammaPacking;
use crate::psp::Hgh;
use ctensor::{c64, matmul, matmul_into, DataType, DeviceType, Indices, SphereFft, Tensor, Trans};
use std::f64::consts::PI;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Atoms whose projectors are formed and applied together (8 silicon atoms: 40
/// projector columns, 15 MB at 24 000 plane waves).
pub const ATOMS_PER_CHUNK: usize = 8;

/// Complex transforms per call of the local-potential transform when real bands at Γ
/// are applied in pairs: 16 bands at a time, so the complex temporaries stay at a
/// fraction of a block (3 MB each at 24 000 plane waves). 32 bands at a time kept
/// twice the temporaries (about 20 MB more at the 64-atom cell's peak) and took 2–9 %
/// less time in the transforms in two of three paired runs, 5 % more in the third.
pub const PAIRS_PER_CALL: usize = 8;

/// The most memory the projectors of all of a run's k-points may take to be formed once
/// and kept ([`KOperator::keep_projectors`]; 8 MiB): Si and GaAs on a 4×4×4 mesh keep
/// theirs (1.5 and 3 MB), where forming them at every application cost as much as the
/// gemms (GaAs: 0.37 s against 0.10 s of a 1.9 s run); the 8-atom cell (16 MB) and the
/// 64-atom one (25 MB at Γ) form them chunk by chunk as they are applied, and their
/// memory peaks do not grow.
pub const PROJECTOR_CACHE_BYTES: usize = 8 << 20;

/// `H(k)` of one k-point on a block of coefficient columns.
pub struct KOperator {
    /// The basis.
    pub sphere: Sphere,
    /// The sphere ↔ box transform of this basis.
    fft: SphereFft,
    /// `½|k+G|²`, f64 `[npw, 1]` on the device, in sphere order.
    kinetic: Tensor,
    /// The same in the order of the band coefficients (the real coordinates at Γ).
    kinetic_basis: Tensor,
    /// At Γ with real bands: the real basis of the coefficients (`None`: complex bands).
    gamma: Option<GammaPacking>,
    /// The projectors of each species without their atom's phase, `Y_lm(K̂) p_i(|K|)`
    /// times `(-i)^l / √Ω` (rows: channel, projector i, m), stored as the rows of
    /// [`form_projectors`](Self::form_projectors)' result: conjugated, c64 `[np, npw]`,
    /// for complex bands; for real bands as they are and only on the
    /// [`GammaPacking::halve`]d plane waves, `[np, h + 1]`. With the coupling `h` between
    /// them, `[np, np]` (c64; f64 for real bands).
    species: Vec<(Tensor, Tensor)>,
    /// The structure phases `e^{-iK·τ_a}` of the atoms, by axis (conjugated for complex
    /// bands).
    phases: Phases,
    /// Runs of consecutive atoms of one species, `(species, first atom, count)`, at most
    /// [`ATOMS_PER_CHUNK`] each: the projectors are formed one run at a time as they are
    /// applied (a 64-atom cell's full projector matrix is 126 MB).
    chunks: Vec<(usize, usize, usize)>,
    /// The projectors of each chunk, formed once by [`keep_projectors`](Self::keep_projectors)
    /// (empty otherwise: then each application forms them).
    cached: Vec<Tensor>,
    /// Nanoseconds spent in the local-potential transforms (with the kinetic term) and in
    /// the projector gemms.
    spent: [AtomicU64; 2],
}

/// The structure phases `e^{-iK·τ_a}` of the atoms on the rows of a basis, kept as one
/// factor per axis (ABINIT's `ph1d`): with `K = Σ_c (k_c + m_c) b_c` and `τ = Σ_c x_c a_c`,
/// `K·τ = 2π Σ_c (k_c + m_c) x_c`, so each phase is the product of three table entries,
/// one per axis. A table of every row's phase would be 12.6 MB for a 64-atom cell at Γ;
/// the factors are `natom` times the box's three sizes, and a row's three positions in
/// them.
struct Phases {
    /// Per axis `c`: `e^{-2πi (m + k_c) x_c}` for each atom and each `m` from the
    /// basis's smallest `m_c` up, c64 `[natom, len_c]`; conjugated for complex bands,
    /// whose projectors are kept conjugated (see [`KOperator::form_projectors`]).
    tables: [Tensor; 3],
    /// Per axis: each row's position in its table (`m_c` minus the smallest).
    rows: [Indices; 3],
}

impl Phases {
    /// The factors of `sphere`'s rows (for real bands at Γ, the rows of
    /// [`GammaPacking::index_half`]).
    fn new(
        crystal: &Crystal,
        sphere: &Sphere,
        gamma: Option<&GammaPacking>,
        device: DeviceType,
    ) -> Result<Phases> {
        let natom = crystal.atoms.len();
        // Conjugated for complex bands (see `tables`).
        let sign = if gamma.is_some() { -1.0 } else { 1.0 };
        let axis = |c: usize| -> Result<(Tensor, Indices)> {
            let low = sphere.g.iter().map(|m| m[c]).min().unwrap_or(0);
            let high = sphere.g.iter().map(|m| m[c]).max().unwrap_or(0);
            let len = (high - low + 1) as usize;
            let mut table = Vec::with_capacity(natom * len);
            for atom in &crystal.atoms {
                let x = atom.reduced[c];
                table.extend((low..=high).map(|m| {
                    c64::from_polar(1.0, sign * 2.0 * PI * (m as f64 + sphere.kred[c]) * x)
                }));
            }
            let pos: Vec<i64> = sphere.g.iter().map(|m| m[c] - low).collect();
            let pos = Tensor::from_vec(pos, &[sphere.len(), 1])?;
            let pos = match gamma {
                Some(gp) => gp.index_half(&pos)?,
                None => pos,
            };
            Ok((
                Tensor::from_vec(table, &[natom, len])?.to_device(device)?,
                Indices::new(&pos.reshape(&[-1])?, len, device)?,
            ))
        };
        let [(t0, r0), (t1, r1), (t2, r2)] = [axis(0)?, axis(1)?, axis(2)?];
        Ok(Phases {
            tables: [t0, t1, t2],
            rows: [r0, r1, r2],
        })
    }

    /// The phases of atoms `first..first + n` on every row, c64 `[n, rows]` (conjugated
    /// for complex bands): per axis one gather of the `n` atoms' table rows, and two
    /// products.
    fn block(&self, first: usize, n: usize) -> Result<Tensor> {
        let factor = |c: usize| -> Result<Tensor> {
            Ok(self.tables[c]
                .narrow(0, first, n)?
                .index_select_with(1, &self.rows[c])?)
        };
        let mut p = factor(0)?;
        p.mul_(&factor(1)?)?;
        p.mul_(&factor(2)?)?;
        Ok(p)
    }
}

impl KOperator {
    /// The operator of `sphere` for `crystal` with pseudopotentials `psps` (by species),
    /// on `device`. With `real_at_gamma` and `sphere` at k = 0 it acts on real bands
    /// ([`crate::gamma`]: f64 blocks in the real basis of [`GammaPacking`]); otherwise
    /// on complex ones (c64).
    pub fn new(
        crystal: &Crystal,
        psps: &[Hgh],
        sphere: Sphere,
        grid: FftGrid,
        device: DeviceType,
        real_at_gamma: bool,
    ) -> Result<KOperator> {
        let npw = sphere.len();
        let gamma = if real_at_gamma {
            GammaPacking::new(&sphere, device)?
        } else {
            None
        };
        let omega = crystal.volume();
        let mut species = Vec::with_capacity(psps.len());
        for psp in psps {
            // Columns: channel, projector i, m.
            let mut cols: Vec<Vec<c64>> = Vec::new();
            let mut blocks: Vec<(usize, usize, f64)> = Vec::new();
            for ch in &psp.channels {
                let nl = 2 * ch.l + 1;
                let first = cols.len();
                for i in 0..ch.h.len() {
                    for m in 0..nl {
                        cols.push(
                            sphere
                                .kcart
                                .iter()
                                .map(|k| projector_value(psp, ch, i, m, *k, omega))
                                .collect(),
                        );
                    }
                }
                for i in 0..ch.h.len() {
                    for j in 0..ch.h.len() {
                        for m in 0..nl {
                            blocks.push((first + i * nl + m, first + j * nl + m, ch.h[i][j]));
                        }
                    }
                }
            }
            let np = cols.len();
            let mut d = vec![c64::new(0.0, 0.0); np * np];
            for (i, j, h) in blocks {
                d[i * np + j] = c64::new(h, 0.0);
            }
            // The coupling is real: a real matrix for real bands.
            let d = match gamma {
                Some(_) => Tensor::from_vec(d.iter().map(|z| z.re).collect(), &[np, np])?,
                None => Tensor::from_vec(d, &[np, np])?,
            };
            let form = kept_form(&cols, npw, gamma.as_ref(), device)?;
            species.push((form, d.to_device(device)?));
        }
        let phases = Phases::new(crystal, &sphere, gamma.as_ref(), device)?;
        let mut chunks: Vec<(usize, usize, usize)> = Vec::new();
        for (a, atom) in crystal.atoms.iter().enumerate() {
            match chunks.last_mut() {
                Some((sp, _, n)) if *sp == atom.species && *n < ATOMS_PER_CHUNK => *n += 1,
                _ => chunks.push((atom.species, a, 1)),
            }
        }
        // Species without projectors (a purely local pseudopotential) add nothing.
        chunks.retain(|&(sp, _, _)| species[sp].0.dims()[0] > 0);
        let kinetic_basis = match &gamma {
            Some(gp) => Tensor::from_vec(gp.reorder(&sphere.kinetic), &[npw, 1])?,
            None => Tensor::from_slice(&sphere.kinetic, &[npw, 1])?,
        };
        Ok(KOperator {
            fft: SphereFft::new(grid.n, &sphere.grid_index, device)?,
            kinetic: Tensor::from_slice(&sphere.kinetic, &[npw, 1])?.to_device(device)?,
            kinetic_basis: kinetic_basis.to_device(device)?,
            gamma,
            species,
            phases,
            chunks,
            cached: Vec::new(),
            sphere,
            spent: [AtomicU64::new(0), AtomicU64::new(0)],
        })
    }

    /// The memory this k-point's projectors take when kept (bytes).
    pub fn projector_bytes(&self) -> usize {
        self.chunks
            .iter()
            .map(|&(sp, _, n)| self.npw() * n * self.species[sp].0.dims()[0])
            .sum::<usize>()
            * self.dtype().size_of()
    }

    /// Forms the projectors once and keeps them ([`projector_bytes`](Self::projector_bytes)
    /// more memory), so that applications no longer form them from the species' table and
    /// the atoms' phases; the values are the same. See [`PROJECTOR_CACHE_BYTES`].
    pub fn keep_projectors(&mut self) -> Result<()> {
        self.cached = (0..self.chunks.len())
            .map(|c| self.form_projectors(c))
            .collect::<Result<_>>()?;
        Ok(())
    }

    /// The projectors `P` of the atoms of chunk `c`, `(sp, first, n)`, as
    /// [`form_projectors`](Self::form_projectors) holds them (`Q = Pᴴ`, `[n·np, npw]`;
    /// rows: atom, then the species' projectors), their coupling applied to `⟨p|x⟩` atom
    /// by atom, and `⟨p|x⟩` itself: `(Q, D·Q x, Q x)`.
    fn project(&self, c: usize, x: &Tensor) -> Result<[Tensor; 3]> {
        let (sp, _, n) = self.chunks[c];
        let (np, nb) = (self.species[sp].0.dims()[0] as i64, x.dims()[1] as i64);
        let q = match self.cached.get(c) {
            Some(q) => q.share(),
            None => self.form_projectors(c)?,
        };
        let beta = matmul(&q, x)?;
        let dbeta = matmul(&self.species[sp].1, &beta.reshape(&[n as i64, np, nb])?)?
            .reshape(&[n as i64 * np, nb])?;
        Ok([q, dbeta, beta])
    }

    /// The projectors of chunk `c` (see [`project`](Self::project)) as `Q = Pᴴ`, one row
    /// per projector: `Q[(a, j), r] = conj(form[r, j] · phase_a[r])` (for real bands
    /// `Pᵀ`, from the complex half). Kept as rows, every product and copy here runs along
    /// the plane waves: as columns (`P`, `[npw, n·np]`) they ran along rows of five
    /// entries for silicon, and forming them took as long as the two gemms.
    fn form_projectors(&self, c: usize) -> Result<Tensor> {
        self.form_projectors_with(&self.species[self.chunks[c].0].0, c)
    }

    /// [`form_projectors`](Self::form_projectors) from another table of the chunk's
    /// species kept as [`kept_form`] keeps it (e.g. a derivative of the projectors).
    fn form_projectors_with(&self, form: &Tensor, c: usize) -> Result<Tensor> {
        let (_, first, n) = self.chunks[c];
        let np = form.dims()[0];
        let device = form.device();
        let phases = self.phases.block(first, n)?;
        match &self.gamma {
            None => {
                let q = Tensor::new(form.dtype(), device, &[n * np, self.npw()])?;
                for a in 0..n {
                    form.mul_into(&phases.narrow(0, a, 1)?, &mut q.narrow(0, a * np, np)?)?;
                }
                Ok(q)
            }
            // Real in real space, so Hermitian-symmetric at Γ, where only half the plane
            // waves are formed: their real and imaginary parts are the real coordinates.
            Some(gp) => {
                let q = Tensor::new(DataType::Double, device, &[n * np, self.npw()])?;
                for a in 0..n {
                    let half = form.mul(&phases.narrow(0, a, 1)?)?;
                    gp.real_of_half_into(&half.t()?, &q.narrow(0, a * np, np)?.t()?)?;
                }
                Ok(q)
            }
        }
    }

    /// Plane waves in the basis.
    pub fn npw(&self) -> usize {
        self.sphere.len()
    }

    /// The kinetic diagonal `½|k+G|²` in the order of the band coefficients, f64
    /// `[npw]` (for the preconditioner).
    pub fn kinetic(&self) -> Result<Tensor> {
        Ok(self.kinetic_basis.reshape(&[-1])?)
    }

    /// The type of the band coefficients: f64 for real bands at Γ, c64 otherwise.
    pub fn dtype(&self) -> DataType {
        match self.gamma {
            Some(_) => DataType::Double,
            None => DataType::ComplexDouble,
        }
    }

    /// The band count of `x` after checking that it is a block `[npw, nb]`.
    fn bands_of(&self, op: &'static str, x: &Tensor) -> Result<usize> {
        match x.dims() {
            &[n, nb] if n == self.npw() => Ok(nb),
            d => Err(ctensor::Error::ShapeMismatch {
                op,
                expected: format!("a block [{}, nb] of band coefficients", self.npw()),
                got: vec![d.to_vec()],
            }
            .into()),
        }
    }

    /// The Cartesian components of `K = k + G` over the sphere, in sphere order.
    fn k_components(&self) -> [Vec<f64>; 3] {
        [0, 1, 2].map(|c| self.sphere.kcart.iter().map(|k| k[c]).collect())
    }

    /// [`bands_of`](Self::bands_of), and a check that `occ` has one occupation per band.
    fn bands_and_occupations(&self, op: &'static str, x: &Tensor, occ: &[f64]) -> Result<usize> {
        let nb = self.bands_of(op, x)?;
        if occ.len() != nb {
            return Err(ctensor::Error::InvalidArgument {
                op,
                expected: format!("{nb} occupations, one per band"),
                given: format!("{}", occ.len()),
            }
            .into());
        }
        Ok(nb)
    }

    /// The real bands `x` (f64 `[npw, nb]`) a slice of at most [`PAIRS_PER_CALL`] pairs
    /// at a time as complex sphere columns, with `f` applied to each slice.
    fn by_pairs(
        gp: &GammaPacking,
        x: &Tensor,
        paired: bool,
        mut f: impl FnMut(usize, usize, Tensor) -> Result<()>,
    ) -> Result<()> {
        let nb = x.dims()[1];
        let step = if paired { 2 } else { 1 } * PAIRS_PER_CALL;
        let mut start = 0;
        while start < nb {
            let w = (nb - start).min(step);
            f(start, w, gp.to_complex(&x.narrow(1, start, w)?, paired)?)?;
            start += w;
        }
        Ok(())
    }

    /// `Σ_n w_n |u_n(r)|²` on the grid (f64 `[n1, n2, n3]`) for the columns of `x`,
    /// with `u_n(r) = Σ_G c_n(G) e^{iG·r}`. Real bands at Γ go through the transforms
    /// in pairs when the weights are all equal (`|u₁ + i u₂|² = u₁² + u₂²`), one by one
    /// otherwise.
    pub fn density(&self, x: &Tensor, weights: &[f64]) -> Result<Tensor> {
        let Some(gp) = &self.gamma else {
            return Ok(self.fft.density(x, weights)?);
        };
        let nb = self.bands_of("KOperator::density", x)?;
        if weights.len() != nb {
            return Err(ctensor::Error::InvalidArgument {
                op: "KOperator::density",
                expected: format!("{nb} weights, one per band"),
                given: format!("{}", weights.len()),
            }
            .into());
        }
        let paired = weights.windows(2).all(|w| w[0] == w[1]);
        let empty = Tensor::zeros(DataType::ComplexDouble, x.device(), &[self.npw(), 0])?;
        let mut rho = self.fft.density(&empty, &[])?;
        Self::by_pairs(gp, x, paired, |start, _, c| {
            let w: Vec<f64> = if paired {
                vec![weights.first().copied().unwrap_or(0.0); c.dims()[1]]
            } else {
                weights[start..start + c.dims()[1]].to_vec()
            };
            rho.add_(&self.fft.density(&c, &w)?)?;
            Ok(())
        })?;
        Ok(rho)
    }

    /// `H X` for the columns of `x` (`[npw, nb]`, of [`dtype`](Self::dtype)) with the
    /// local potential `v_r` (f64 `[n1, n2, n3]`, Ha).
    pub fn apply(&self, v_r: &Tensor, x: &Tensor) -> Result<Tensor> {
        if self.gamma.is_none() {
            // The transform makes the result block itself: no block to copy it into.
            let t0 = Instant::now();
            let mut out = self.fft.apply_local(v_r, &self.kinetic, x)?;
            self.add_projector_term(x, &mut out, t0)?;
            return Ok(out);
        }
        let nb = self.bands_of("KOperator::apply", x)?;
        let mut out = Tensor::new(self.dtype(), x.device(), &[self.npw(), nb])?;
        self.apply_into(v_r, x, &mut out)?;
        Ok(out)
    }

    /// [`apply`](Self::apply) written into `out` (`[npw, nb]` of [`dtype`](Self::dtype),
    /// any layout: a window of an eigensolver's `H V`), every element of it; for
    /// [`ctensor::solvers::davidson_into`]. With real bands at Γ no block of `H X` is
    /// made beside `out`.
    pub fn apply_into(&self, v_r: &Tensor, x: &Tensor, out: &mut Tensor) -> Result<()> {
        let op = "KOperator::apply_into";
        let nb = self.bands_of(op, x)?;
        if out.dims() != [self.npw(), nb] || out.dtype() != self.dtype() {
            return Err(ctensor::Error::InvalidArgument {
                op,
                expected: format!("an output [{}, {nb}] of {:?}", self.npw(), self.dtype()),
                given: format!("{:?} of {:?}", out.dims(), out.dtype()),
            }
            .into());
        }
        let t0 = Instant::now();
        // The local potential and the kinetic diagonal in one pass over the bands; the
        // projector term accumulates into the result (no block-sized temporaries: the
        // 64-atom cell's blocks are 27 MB each).
        match &self.gamma {
            None => self.fft.apply_local_into(v_r, &self.kinetic, x, out)?,
            Some(gp) => Self::by_pairs(gp, x, true, |start, w, c| {
                let e = self.fft.apply_local(v_r, &self.kinetic, &c)?;
                drop(c);
                gp.from_complex(&e, &mut out.narrow(1, start, w)?)
            })?,
        }
        self.add_projector_term(x, out, t0)
    }

    /// `out += Σ_a |p_a⟩ D_a ⟨p_a|x⟩`, chunk by chunk, and the seconds since `t0` (the
    /// local part) and of this (the projector part) added to the counters.
    fn add_projector_term(&self, x: &Tensor, out: &mut Tensor, t0: Instant) -> Result<()> {
        let t1 = Instant::now();
        for c in 0..self.chunks.len() {
            let [q, dbeta, _] = self.project(c, x)?;
            matmul_into(&q, Trans::C, &dbeta, Trans::N, 1.0, 1.0, out)?;
        }
        self.spent[0].fetch_add((t1 - t0).as_nanos() as u64, Ordering::Relaxed);
        self.spent[1].fetch_add(t1.elapsed().as_nanos() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Seconds spent so far in [`apply`](Self::apply)'s local-potential transforms (the
    /// kinetic term included) and in its projector term (reset to zero by the call).
    pub fn take_seconds(&self) -> (f64, f64) {
        let f = |a: &AtomicU64| a.swap(0, Ordering::Relaxed) as f64 * 1e-9;
        (f(&self.spent[0]), f(&self.spent[1]))
    }

    /// `Σ_n f_n ⟨x_n|T|x_n⟩` and `Σ_n f_n ⟨x_n|V_nl|x_n⟩` for occupations `occ` of the
    /// columns of `x`.
    pub fn kinetic_and_nonlocal(&self, x: &Tensor, occ: &[f64]) -> Result<(f64, f64)> {
        let nb = self.bands_of("KOperator::kinetic_and_nonlocal", x)?;
        let f = Tensor::from_slice(occ, &[1, nb])?.to_device(x.device())?;
        // A slab of rows at a time: the chain of products makes a temporary of its
        // operand's size at each step, four of the bands' size at once over the whole
        // block (109 MB for 132 real bands of 24 000 plane waves, the run's peak).
        let rows = (KINETIC_SLAB / nb.max(1)).max(1);
        let (mut t, mut start) = (0.0, 0);
        while start < self.npw() {
            let len = rows.min(self.npw() - start);
            let a2 = x.narrow(0, start, len)?.abs()?;
            t += a2
                .mul(&a2)?
                .mul(&self.kinetic_basis.narrow(0, start, len)?)?
                .mul(&f)?
                .sum_all()?
                .item::<f64>()?;
            start += len;
        }
        let fc = f.cast(x.dtype())?;
        let mut e = 0.0;
        for c in 0..self.chunks.len() {
            let [_, dbeta, beta] = self.project(c, x)?;
            e += beta
                .conj()?
                .mul(&dbeta)?
                .mul(&fc)?
                .sum_all()?
                .cast(DataType::ComplexDouble)?
                .item::<c64>()?
                .re;
        }
        Ok((t, e))
    }
}

/// Entries of one slab of rows of the bands in [`KOperator::kinetic_and_nonlocal`]'s
/// kinetic sum (2 MB of f64).
const KINETIC_SLAB: usize = 1 << 18;

impl KOperator {
    /// The nonlocal forces `F_a = −∂/∂τ_a Σ_n f_n ⟨x_n|V_nl|x_n⟩` (Ha/bohr, Cartesian,
    /// one per atom of the crystal) of the bands `x` (`[npw, nb]`, of
    /// [`dtype`](Self::dtype)) with occupations `occ`.
    ///
    /// A projector moves with its atom, `p_a(K) ∝ e^{−iK·τ_a}`, so
    /// `∂⟨p_a|x⟩/∂τ_a = ⟨p_a|iK x⟩` (the projection of the band's gradient) and
    /// `F_a = −2 Σ_n f_n Re Σ_ij ⟨p_i|iK x_n⟩* h_ij ⟨p_j|x_n⟩`: per Cartesian axis one more
    /// gemm of each chunk's projectors, their columns scaled by `iK_c` (for real bands at
    /// Γ, the real form of that scaling, [`GammaPacking::times_i_g_right`]). Errors: a
    /// block of the wrong size, or `occ` not one per band.
    pub fn nonlocal_forces(&self, x: &Tensor, occ: &[f64]) -> Result<Vec<Vec3>> {
        let op = "KOperator::nonlocal_forces";
        let nb = self.bands_and_occupations(op, x, occ)?;
        let natom = self.phases.tables[0].dims()[0];
        let mut forces = vec![[0.0; 3]; natom];
        let device = x.device();
        let kc = self.k_components();
        // For complex bands, the row `iK_c` that scales the projectors' columns.
        let ik: Vec<Tensor> = match self.gamma {
            Some(_) => Vec::new(),
            None => kc
                .iter()
                .map(|k| -> Result<Tensor> {
                    let row: Vec<c64> = k.iter().map(|&k| c64::new(0.0, k)).collect();
                    Ok(Tensor::from_vec(row, &[1, self.npw()])?.to_device(device)?)
                })
                .collect::<Result<_>>()?,
        };
        for c in 0..self.chunks.len() {
            let (sp, first, n) = self.chunks[c];
            let np = self.species[sp].0.dims()[0];
            let [q, dbeta, _] = self.project(c, x)?;
            for axis in 0..3 {
                let q_axis = match &self.gamma {
                    Some(gp) => gp.times_i_g_right(&q, &kc[axis])?,
                    None => q.mul(&ik[axis])?,
                };
                let dq = matmul(&q_axis, x)?;
                drop(q_axis);
                let prod = match self.gamma {
                    Some(_) => dq.mul(&dbeta)?,
                    None => dq.conj()?.mul(&dbeta)?.real()?,
                };
                let v = prod.contiguous()?.to_vec::<f64>()?;
                for a in 0..n {
                    let s: f64 = v[a * np * nb..(a + 1) * np * nb]
                        .chunks(nb)
                        .map(|row| row.iter().zip(occ).map(|(p, f)| p * f).sum::<f64>())
                        .sum();
                    forces[first + a][axis] -= 2.0 * s;
                }
            }
        }
        Ok(forces)
    }
}

impl KOperator {
    /// `∂/∂ε_αβ` (Ha) of the kinetic and nonlocal energies `Σ_n f_n ⟨x_n|T + V_nl|x_n⟩` of
    /// the bands `x` (`[npw, nb]`, of [`dtype`](Self::dtype)) with occupations `occ`
    /// under a homogeneous strain of the cell (`crystal`, whose pseudopotentials `psps`
    /// built this operator) that keeps the coefficients and the reduced positions:
    /// `K → (1 − ε)ᵀ K`, `Ω → Ω (1 + tr ε)`. Divided by Ω, the stress of these terms.
    ///
    /// - kinetic: `−Σ_n f_n Σ_K |c_n(K)|² K_α K_β`;
    /// - nonlocal: `−δ_αβ E_nl − 2 Σ_n f_n Re Σ_ij ⟨t^{αβ}_i|x_n⟩* h_ij ⟨p_j|x_n⟩` with the
    ///   projectors' strain derivative `t^{αβ}(K) = K_α ∂_β[(−i)^l Y_lm(K̂) P_i(|K|)]/√Ω`
    ///   times the atom's phase (the `−½ δ_αβ` of `1/√Ω` is the first term), for α ≤ β
    ///   (the derivative of a rotation-invariant energy is symmetric). `∂_β` is a
    ///   central difference in K (step 1e-4 bohr⁻¹: the form factors vary on a scale of
    ///   bohr⁻¹, so its error is below 1e-9 of the value).
    ///
    /// Errors: a block of the wrong size, `occ` not one per band, or not one
    /// pseudopotential per species of the operator.
    pub fn strain_derivative(
        &self,
        crystal: &Crystal,
        psps: &[Hgh],
        x: &Tensor,
        occ: &[f64],
    ) -> Result<Mat3> {
        let op = "KOperator::strain_derivative";
        let nb = self.bands_and_occupations(op, x, occ)?;
        if psps.len() != self.species.len() {
            return Err(ctensor::Error::InvalidArgument {
                op,
                expected: format!(
                    "the {} pseudopotentials of the operator",
                    self.species.len()
                ),
                given: format!("{}", psps.len()),
            }
            .into());
        }
        let device = x.device();
        let npw = self.npw();
        let omega = crystal.volume();
        let mut out = [[0.0; 3]; 3];
        // Kinetic: Σ_n f_n |x_n|² per coordinate, against K_α K_β of its plane wave.
        let f = Tensor::from_slice(occ, &[nb, 1])?.to_device(device)?;
        let a = x.abs()?;
        let weight = matmul(&a.mul(&a)?, &f)?.reshape(&[-1])?.to_vec::<f64>()?;
        // K's components in the order of the coordinates (the real ones at Γ).
        let kc = self.k_components().map(|full| match &self.gamma {
            Some(gp) => gp.reorder(&full),
            None => full,
        });
        for (al, row) in out.iter_mut().enumerate() {
            for (be, o) in row.iter_mut().enumerate() {
                *o -= (0..npw)
                    .map(|p| weight[p] * kc[al][p] * kc[be][p])
                    .sum::<f64>();
            }
        }
        // Nonlocal: per species the tables of ∂_β of the projectors, kept as the operator
        // keeps its projectors, their plane waves scaled by K_α (a real factor, so it
        // commutes with the conjugation and the halving); then per chunk one gemm per
        // (α, β).
        let h = 1e-4;
        let fc = Tensor::from_slice(occ, &[1, nb])?.to_device(device)?;
        // The kept tables' columns: every plane wave, or at Γ G = 0 and one G of each pair
        // (the first h + 1 real coordinates).
        let kept = if self.gamma.is_some() {
            npw / 2 + 1
        } else {
            npw
        };
        let k_rows: Vec<Tensor> = kc
            .iter()
            .map(|k| -> Result<Tensor> {
                let row: Vec<c64> = k[..kept].iter().map(|&v| c64::new(v, 0.0)).collect();
                let n = row.len();
                Ok(Tensor::from_vec(row, &[1, n])?.to_device(device)?)
            })
            .collect::<Result<_>>()?;
        let mut tables: Vec<Vec<Tensor>> = Vec::with_capacity(psps.len());
        for psp in psps {
            let mut per = Vec::with_capacity(3);
            for be in 0..3 {
                let mut cols: Vec<Vec<c64>> = Vec::new();
                for ch in &psp.channels {
                    for i in 0..ch.h.len() {
                        for m in 0..2 * ch.l + 1 {
                            cols.push(
                                self.sphere
                                    .kcart
                                    .iter()
                                    .map(|k| {
                                        let (mut kp, mut km) = (*k, *k);
                                        kp[be] += h;
                                        km[be] -= h;
                                        (projector_value(psp, ch, i, m, kp, omega)
                                            - projector_value(psp, ch, i, m, km, omega))
                                            / (2.0 * h)
                                    })
                                    .collect(),
                            );
                        }
                    }
                }
                per.push(kept_form(&cols, npw, self.gamma.as_ref(), device)?);
            }
            tables.push(per);
        }
        let mut e_nl = 0.0;
        for c in 0..self.chunks.len() {
            let sp = self.chunks[c].0;
            let [_, dbeta, beta] = self.project(c, x)?;
            let pair = |u: &Tensor| -> Result<f64> {
                let prod = match self.gamma {
                    Some(_) => u.mul(&dbeta)?,
                    None => u.conj()?.mul(&dbeta)?.real()?,
                };
                Ok(prod.mul(&fc)?.sum_all()?.item::<f64>()?)
            };
            e_nl += pair(&beta)?;
            // The energy is invariant under rotations (the addition theorem of the Y_lm),
            // so its strain derivative is symmetric: the upper triangle, mirrored.
            for al in 0..3 {
                for be in al..3 {
                    let t = tables[sp][be].mul(&k_rows[al])?;
                    let q = self.form_projectors_with(&t, c)?;
                    let d = 2.0 * pair(&matmul(&q, x)?)?;
                    out[al][be] -= d;
                    if be != al {
                        out[be][al] -= d;
                    }
                }
            }
        }
        for (al, row) in out.iter_mut().enumerate() {
            row[al] -= e_nl;
        }
        Ok(out)
    }
}

/// The projector `i`, `m` of channel `ch` at `K` without the atom's phase:
/// `(−i)^l Y_lm(K̂) P_i(|K|) / √Ω`.
fn projector_value(
    psp: &Hgh,
    ch: &crate::psp::Channel,
    i: usize,
    m: usize,
    k: Vec3,
    omega: f64,
) -> c64 {
    let il = (0..ch.l).fold(c64::new(1.0, 0.0), |z, _| z * c64::new(0.0, -1.0));
    let q = dot(k, k).sqrt();
    il * (real_ylm(ch.l, m, k) * psp.projector(ch, i, q) / omega.sqrt())
}

/// Projector columns (`cols[j][g]`, `npw` values each) as the operator keeps them:
/// for complex bands conjugated and as rows (`[np, npw]`), for real bands the
/// [`GammaPacking::halve`]d rows (`[np, h + 1]`).
fn kept_form(
    cols: &[Vec<c64>],
    npw: usize,
    gamma: Option<&GammaPacking>,
    device: DeviceType,
) -> Result<Tensor> {
    let np = cols.len();
    let mut flat = vec![c64::new(0.0, 0.0); npw * np];
    for (j, col) in cols.iter().enumerate() {
        for (g, v) in col.iter().enumerate() {
            flat[g * np + j] = *v;
        }
    }
    let form = Tensor::from_vec(flat, &[npw, np])?.to_device(device)?;
    Ok(match gamma {
        Some(gp) => gp.halve(&form)?.t()?.contiguous()?,
        None => form.t()?.conj()?.contiguous()?,
    })
}

/// The real spherical harmonic `Y_lm(K̂)` (`m` in `0..2l+1`), orthonormal on the sphere;
/// 0 at K = 0 for l ≥ 1 (where every projector of l ≥ 1 vanishes anyway).
pub fn real_ylm(l: usize, m: usize, k: [f64; 3]) -> f64 {
    let r = dot(k, k).sqrt();
    if l == 0 {
        return 0.5 / PI.sqrt();
    }
    if r == 0.0 {
        return 0.0;
    }
    let (x, y, z) = (k[0] / r, k[1] / r, k[2] / r);
    let c = |v: f64| (v / PI).sqrt();
    match (l, m) {
        (1, 0) => c(3.0 / 4.0) * x,
        (1, 1) => c(3.0 / 4.0) * y,
        (1, 2) => c(3.0 / 4.0) * z,
        (2, 0) => c(15.0 / 4.0) * x * y,
        (2, 1) => c(15.0 / 4.0) * y * z,
        (2, 2) => c(15.0 / 4.0) * x * z,
        (2, 3) => c(5.0 / 16.0) * (3.0 * z * z - 1.0),
        (2, 4) => c(15.0 / 16.0) * (x * x - y * y),
        (3, 0) => c(35.0 / 32.0) * (3.0 * x * x - y * y) * y,
        (3, 1) => c(105.0 / 4.0) * x * y * z,
        (3, 2) => c(21.0 / 32.0) * y * (5.0 * z * z - 1.0),
        (3, 3) => c(7.0 / 16.0) * (5.0 * z * z * z - 3.0 * z),
        (3, 4) => c(21.0 / 32.0) * x * (5.0 * z * z - 1.0),
        (3, 5) => c(105.0 / 16.0) * (x * x - y * y) * z,
        (3, 6) => c(35.0 / 32.0) * (x * x - 3.0 * y * y) * x,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crystal::Atom;
    use std::path::Path;

    /// The silicon, gallium (with a d channel) and arsenic pseudopotentials.
    fn si_ga_as() -> Result<Vec<Hgh>> {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
        ["14si.4.hgh", "31ga.3.hgh", "33as.5.hgh"]
            .iter()
            .map(|f| Hgh::from_file(&data.join(f)))
            .collect()
    }

    /// Atoms of the species `kinds` (of [`si_ga_as`]) scattered through a larger skewed
    /// cell, atom `a` at `(0.37a + 0.05, 0.61a + 0.11, 0.83a + 0.17) mod 1`.
    fn scattered_cell(kinds: &[usize]) -> Result<Crystal> {
        let atoms = kinds
            .iter()
            .enumerate()
            .map(|(a, &species)| {
                let t = a as f64;
                Atom {
                    species,
                    reduced: [
                        (0.37 * t + 0.05) % 1.0,
                        (0.61 * t + 0.11) % 1.0,
                        (0.83 * t + 0.17) % 1.0,
                    ],
                }
            })
            .collect();
        let lattice = [[11.0, 0.3, 0.0], [0.0, 12.0, 0.4], [0.5, 0.0, 13.0]];
        Crystal::new(
            lattice,
            ["Si", "Ga", "As"].map(String::from).to_vec(),
            atoms,
        )
    }

    /// Silicon, gallium and arsenic, one atom each, for [`skewed_cell`].
    const SI_GA_AS: [(usize, Vec3); 3] = [
        (0, [0.05, 0.1, 0.2]),
        (1, [0.5, 0.45, 0.6]),
        (2, [0.8, 0.1, 0.35]),
    ];

    /// A skewed cell (no symmetry to lean on) with atoms `(species, reduced)` of the
    /// species of [`si_ga_as`].
    fn skewed_cell(atoms: &[(usize, Vec3)]) -> Result<Crystal> {
        let atoms = atoms
            .iter()
            .map(|&(species, reduced)| Atom { species, reduced })
            .collect();
        let lattice = [[9.0, 0.3, 0.0], [0.0, 9.5, 0.4], [0.5, 0.0, 10.0]];
        Crystal::new(
            lattice,
            ["Si", "Ga", "As"].map(String::from).to_vec(),
            atoms,
        )
    }

    /// The projector term formed atom run by atom run (runs of up to eight atoms of one
    /// species: here 8 + 2 silicon, 2 arsenic, 1 gallium with its d channel, 1 silicon)
    /// against a plain sum over atoms, channels, projector pairs and m of
    /// `|p⟩ h ⟨p|x⟩`, at a general k-point; and the nonlocal energy against the same sum.
    #[test]
    fn the_projector_term_formed_by_runs_of_atoms_is_the_plain_sum() -> Result<()> {
        let psps = si_ga_as()?;
        let kinds = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 1, 0];
        let crystal = scattered_cell(&kinds)?;
        let ecut = 2.5;
        let grid = FftGrid::for_cutoff(&crystal, ecut);
        let sphere = Sphere::new(&crystal, [0.1, -0.2, 0.3], ecut, &grid)?;
        let op = KOperator::new(&crystal, &psps, sphere.clone(), grid, DeviceType::Cpu, true)?;
        assert_eq!(op.chunks.len(), 5);
        let (npw, nb) = (sphere.len(), 7);
        let x = Tensor::randn(DataType::ComplexDouble, DeviceType::Cpu, &[npw, nb], 3)?;
        let xv = x.to_vec::<c64>()?;
        // The plain sum.
        let omega = crystal.volume();
        let mut want = vec![c64::new(0.0, 0.0); npw * nb];
        let mut energy = 0.0;
        let occ: Vec<f64> = (0..nb).map(|b| 0.5 + b as f64).collect();
        for atom in &crystal.atoms {
            let psp = &psps[atom.species];
            let tau = crystal.to_cartesian(atom.reduced);
            for ch in &psp.channels {
                let il = (0..ch.l).fold(c64::new(1.0, 0.0), |z, _| z * c64::new(0.0, -1.0));
                let p = |i: usize, m: usize, g: usize| {
                    let k = sphere.kcart[g];
                    let q = dot(k, k).sqrt();
                    il * c64::from_polar(1.0, -dot(k, tau))
                        * real_ylm(ch.l, m, k)
                        * psp.projector(ch, i, q)
                        / omega.sqrt()
                };
                for m in 0..2 * ch.l + 1 {
                    for i in 0..ch.h.len() {
                        for j in 0..ch.h.len() {
                            for b in 0..nb {
                                let pj_x: c64 =
                                    (0..npw).map(|g| p(j, m, g).conj() * xv[g * nb + b]).sum();
                                let pi_x: c64 =
                                    (0..npw).map(|g| p(i, m, g).conj() * xv[g * nb + b]).sum();
                                energy += occ[b] * ch.h[i][j] * (pi_x.conj() * pj_x).re;
                                for g in 0..npw {
                                    want[g * nb + b] += p(i, m, g) * ch.h[i][j] * pj_x;
                                }
                            }
                        }
                    }
                }
            }
        }
        // apply() with a zero potential is the kinetic term plus the projector term:
        // with the projectors formed at each application and formed once and kept.
        let zero = Tensor::zeros(DataType::Double, DeviceType::Cpu, &grid.n)?;
        let want = Tensor::from_vec(want, &[npw, nb])?;
        let scale = want.abs()?.to_vec::<f64>()?.into_iter().fold(0.0, f64::max);
        assert!(
            scale > 1e-3,
            "the projector term is too small to test: {scale}"
        );
        let mut op = op;
        for kept in [false, true] {
            if kept {
                op.keep_projectors()?;
                assert_eq!(op.cached.len(), op.chunks.len(), "kept projectors");
                let bytes = op.cached.iter().map(|p| p.numel() * 16).sum::<usize>();
                assert_eq!(op.projector_bytes(), bytes);
            }
            let got = op.apply(&zero, &x)?.sub(&x.mul(&op.kinetic)?)?;
            assert!(got.allclose(&want, 0.0, 1e-12 * scale)?, "kept: {kept}");
            let (_, e) = op.kinetic_and_nonlocal(&x, &occ)?;
            assert!(
                (e - energy).abs() <= 1e-11 * energy.abs(),
                "kept: {kept}: {e} against {energy}"
            );
        }
        Ok(())
    }

    /// `apply_into` writes `apply`'s values into a column window of a wider block, for
    /// real bands at Γ and complex ones at Γ and at a general k: the window starts as
    /// NaN (an eigensolver's stale columns) and every element is written, the NaN
    /// columns beside it are not touched, and an output of the wrong shape or type is
    /// an error that says what was expected.
    #[test]
    fn apply_into_writes_apply_into_a_window() -> Result<()> {
        let psps = si_ga_as()?;
        let crystal = skewed_cell(&[
            (0, [0.05, 0.1, 0.2]),
            (2, [0.8, 0.1, 0.35]),
            (2, [0.3, 0.6, 0.9]),
        ])?;
        let (ecut, dev) = (3.0, DeviceType::Cpu);
        let grid = FftGrid::for_cutoff(&crystal, ecut);
        let v = Tensor::randn(DataType::Double, dev, &grid.n, 8)?;
        for (kred, real) in [
            ([0.0; 3], true),
            ([0.0; 3], false),
            ([0.2, -0.1, 0.3], false),
        ] {
            let sphere = Sphere::new(&crystal, kred, ecut, &grid)?;
            let op = KOperator::new(&crystal, &psps, sphere.clone(), grid, dev, real)?;
            let (npw, nb, dt) = (sphere.len(), 21, op.dtype());
            let x = Tensor::randn(dt, dev, &[npw, nb], 9)?;
            let want = op.apply(&v, &x)?;
            let wide = Tensor::full(f64::NAN, dev, &[npw, nb + 5])?.cast(dt)?;
            op.apply_into(&v, &x, &mut wide.narrow(1, 2, nb)?)?;
            let scale = want.abs()?.to_vec::<f64>()?.into_iter().fold(0.0, f64::max);
            let got = wide.narrow(1, 2, nb)?;
            assert!(got.allclose(&want, 0.0, 1e-13 * scale)?, "{kred:?} {real}");
            for c in [0, 1, nb + 2, nb + 3, nb + 4] {
                let col = wide.narrow(1, c, 1)?.cast(DataType::ComplexDouble)?;
                assert!(
                    col.to_vec::<c64>()?.iter().all(|z| z.re.is_nan()),
                    "column {c}"
                );
            }
            for bad in [
                Tensor::new(dt, dev, &[npw, nb + 1])?,
                Tensor::new(dt, dev, &[npw + 1, nb])?,
                Tensor::new(DataType::Float, dev, &[npw, nb])?,
            ] {
                let e = op.apply_into(&v, &x, &mut bad.share()).unwrap_err();
                assert!(e.to_string().contains(&format!("[{npw}, {nb}]")), "{e}");
            }
        }
        Ok(())
    }

    /// The nonlocal forces of fixed bands are minus the gradient of their nonlocal
    /// energy: central differences of `kinetic_and_nonlocal`'s energy with one atom moved
    /// along each Cartesian axis (h = 1e-4 bohr), for complex bands at a general k and
    /// real bands at Γ, with unequal occupations, in a skewed cell whose silicon atoms
    /// fill two chunks (8 + 2) beside an arsenic and a gallium atom (its d channel). The
    /// forces are not all small (checked), and bad blocks and occupations are errors.
    #[test]
    fn nonlocal_forces_are_minus_the_gradient_of_the_nonlocal_energy() -> Result<()> {
        let psps = si_ga_as()?;
        let kinds = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1];
        let crystal = scattered_cell(&kinds)?;
        let (ecut, dev, h) = (2.5, DeviceType::Cpu, 1e-4);
        let grid = FftGrid::for_cutoff(&crystal, ecut);
        for (kred, real) in [([0.1, -0.2, 0.3], false), ([0.0; 3], true)] {
            let sphere = Sphere::new(&crystal, kred, ecut, &grid)?;
            let op = KOperator::new(&crystal, &psps, sphere.clone(), grid, dev, real)?;
            let nb = 5;
            let x = Tensor::randn(op.dtype(), dev, &[sphere.len(), nb], 11)?;
            let occ: Vec<f64> = (0..nb).map(|b| 2.0 - 0.3 * b as f64).collect();
            let forces = op.nonlocal_forces(&x, &occ)?;
            assert_eq!(forces.len(), kinds.len());
            let largest = forces.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(largest > 1e-2, "forces too small to test: {largest}");
            for a in [0, 8, 9, 10, 11] {
                for c in 0..3 {
                    let energy = |step: f64| -> Result<f64> {
                        let mut shift = [0.0; 3];
                        shift[c] = step;
                        let moved = crystal.displaced(a, shift)?;
                        let sp = Sphere::new(&moved, kred, ecut, &grid)?;
                        let o = KOperator::new(&moved, &psps, sp, grid, dev, real)?;
                        Ok(o.kinetic_and_nonlocal(&x, &occ)?.1)
                    };
                    let fd = -(energy(h)? - energy(-h)?) / (2.0 * h);
                    assert!(
                        (fd - forces[a][c]).abs() < 1e-7 * largest.max(1.0),
                        "real {real}, atom {a}, axis {c}: {} vs −dE/dτ {fd}",
                        forces[a][c]
                    );
                }
            }
            assert!(op.nonlocal_forces(&x, &occ[1..]).is_err());
            assert!(op
                .nonlocal_forces(&x.narrow(0, 1, sphere.len() - 1)?, &occ)
                .is_err());
        }
        Ok(())
    }

    /// The kinetic and nonlocal strain derivative of fixed bands is the slope of their
    /// energy over a strained cell `a_i → (1 + t e_α e_βᵀ) a_i` whose basis keeps its
    /// Miller indices (central differences, t = 1e-5), for every (α, β), complex bands
    /// at a general k and real bands at Γ, unequal occupations, silicon, gallium (d
    /// channel) and arsenic in a skewed cell; bad blocks and occupations are errors.
    #[test]
    fn the_strain_derivative_is_the_slope_of_the_band_energy() -> Result<()> {
        let psps = si_ga_as()?;
        let crystal = skewed_cell(&SI_GA_AS)?;
        let (ecut, dev, t) = (3.0, DeviceType::Cpu, 1e-5);
        let grid = FftGrid::for_cutoff(&crystal, ecut);
        for (kred, real) in [([0.2, -0.1, 0.3], false), ([0.0; 3], true)] {
            let sphere = Sphere::new(&crystal, kred, ecut, &grid)?;
            let op = KOperator::new(&crystal, &psps, sphere.clone(), grid, dev, real)?;
            let nb = 4;
            // Smooth bands (as the SCF starts from), so that the kinetic term does not
            // hide the nonlocal one.
            let x = Tensor::randn(op.dtype(), dev, &[sphere.len(), nb], 21)?.div(
                &op.kinetic()?
                    .mul_scalar(4.0)?
                    .add_scalar(1.0)?
                    .unsqueeze(1)?,
            )?;
            let occ: Vec<f64> = (0..nb).map(|b| 2.0 - 0.4 * b as f64).collect();
            let d = op.strain_derivative(&crystal, &psps, &x, &occ)?;
            let largest = d.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
            for al in 0..3 {
                for be in 0..3 {
                    let energy = |step: f64| -> Result<f64> {
                        let mut strained = crystal.clone();
                        for a in strained.lattice.iter_mut() {
                            a[al] += step * a[be];
                        }
                        // The same plane waves (Miller indices) in the strained cell.
                        let kcart: Vec<Vec3> = sphere
                            .g
                            .iter()
                            .map(|m| {
                                strained
                                    .reciprocal_cartesian([0, 1, 2].map(|c| m[c] as f64 + kred[c]))
                            })
                            .collect();
                        let moved = Sphere {
                            kinetic: kcart.iter().map(|k| 0.5 * dot(*k, *k)).collect(),
                            kcart,
                            ..sphere.clone()
                        };
                        let o = KOperator::new(&strained, &psps, moved, grid, dev, real)?;
                        let (kin, nl) = o.kinetic_and_nonlocal(&x, &occ)?;
                        Ok(kin + nl)
                    };
                    let fd = (energy(t)? - energy(-t)?) / (2.0 * t);
                    assert!(
                        (fd - d[al][be]).abs() < 2e-9 * largest,
                        "real {real}, ({al}, {be}): {} vs the slope {fd}",
                        d[al][be]
                    );
                }
            }
            assert!(op
                .strain_derivative(&crystal, &psps, &x, &occ[1..])
                .is_err());
            let short = x.narrow(0, 1, sphere.len() - 1)?;
            assert!(op.strain_derivative(&crystal, &psps, &short, &occ).is_err());
            let e = op
                .strain_derivative(&crystal, &psps[..2], &x, &occ)
                .unwrap_err();
            assert!(e.to_string().contains("the 3 pseudopotentials"), "{e}");
        }
        Ok(())
    }

    /// At Γ the operator on real bands is the complex operator seen through the real
    /// coordinates: for random real bands (37 of them: one pair-slice of 32 and an odd
    /// remainder), a random real potential and silicon, gallium (with its d channel) and
    /// arsenic projectors in a skewed cell, `H_real x = R(H_complex C(x))` and
    /// `H_complex C(x)` is Hermitian-symmetric (nothing is lost by `R`); the density with
    /// equal and with unequal weights and the kinetic and nonlocal energies are the complex
    /// operator's.
    #[test]
    fn real_bands_at_gamma_give_the_complex_operator() -> Result<()> {
        let psps = si_ga_as()?;
        let crystal = skewed_cell(&SI_GA_AS)?;
        let ecut = 3.0;
        let grid = FftGrid::for_cutoff(&crystal, ecut);
        let sphere = Sphere::new(&crystal, [0.0; 3], ecut, &grid)?;
        let dev = DeviceType::Cpu;
        let real = KOperator::new(&crystal, &psps, sphere.clone(), grid, dev, true)?;
        let complex = KOperator::new(&crystal, &psps, sphere.clone(), grid, dev, false)?;
        assert_eq!(real.dtype(), DataType::Double);
        assert_eq!(complex.dtype(), DataType::ComplexDouble);
        let gp = GammaPacking::new(&sphere, dev)?.expect("Γ");
        let (npw, nb) = (sphere.len(), 37);
        let x = Tensor::randn(DataType::Double, dev, &[npw, nb], 5)?;
        let v = Tensor::randn(DataType::Double, dev, &grid.n, 6)?;
        let c = gp.to_complex(&x, false)?;
        let hc = complex.apply(&v, &c)?;
        let hr = real.apply(&v, &x)?;
        let mut want = Tensor::new(DataType::Double, dev, &[npw, nb])?;
        gp.from_complex(&hc, &mut want)?;
        let scale = hc.abs()?.to_vec::<f64>()?.into_iter().fold(0.0, f64::max);
        assert!(hr.allclose(&want, 0.0, 1e-12 * scale)?);
        assert!(gp
            .to_complex(&hr, false)?
            .allclose(&hc, 0.0, 1e-12 * scale)?);
        // The same with the real projectors formed once and kept.
        let mut kept = KOperator::new(&crystal, &psps, sphere.clone(), grid, dev, true)?;
        kept.keep_projectors()?;
        assert!(!kept.cached.is_empty());
        assert!(kept.apply(&v, &x)?.allclose(&want, 0.0, 1e-12 * scale)?);
        // The kinetic diagonal in the real coordinates' order.
        let kin = real.kinetic()?.to_vec::<f64>()?;
        let xk = x.mul(&real.kinetic()?.unsqueeze(1)?)?;
        assert!(gp.to_complex(&xk, false)?.allclose(
            &c.mul(&complex.kinetic()?.unsqueeze(1)?)?,
            0.0,
            1e-12
        )?);
        assert_eq!(kin.len(), npw);
        for weights in [vec![0.7; nb], (0..nb).map(|b| 0.1 * b as f64).collect()] {
            let dr = real.density(&x, &weights)?;
            let dc = complex.density(&c, &weights)?;
            let top = dc.abs()?.to_vec::<f64>()?.into_iter().fold(0.0, f64::max);
            assert!(dr.allclose(&dc, 0.0, 1e-12 * top)?);
            let (t, e) = real.kinetic_and_nonlocal(&x, &weights)?;
            let (tc, ec) = complex.kinetic_and_nonlocal(&c, &weights)?;
            assert!((t - tc).abs() <= 1e-12 * tc.abs() && (e - ec).abs() <= 1e-12 * ec.abs());
        }
        // Bad blocks and weights are errors, not panics.
        assert!(real.apply(&v, &x.reshape(&[-1])?).is_err());
        assert!(real.apply(&v, &x.narrow(0, 0, npw - 1)?).is_err());
        assert!(
            real.apply(&v, &c).is_err(),
            "complex bands for the real operator"
        );
        assert!(real.density(&x, &[1.0; 3]).is_err());
        assert!(real
            .kinetic_and_nonlocal(&x.reshape(&[-1])?, &[1.0])
            .is_err());
        // No bands: an empty block and a zero density.
        let none = Tensor::zeros(DataType::Double, dev, &[npw, 0])?;
        assert_eq!(real.apply(&v, &none)?.dims(), [npw, 0]);
        assert_eq!(real.density(&none, &[])?.sum_all()?.item::<f64>()?, 0.0);
        Ok(())
    }
}
