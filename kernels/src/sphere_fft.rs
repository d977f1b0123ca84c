//! The plane-wave transform between a G-sphere of coefficients and the real-space box,
//! on the host: the FFT a plane-wave code runs for every band and every application of
//! its Hamiltonian.
//!
//! A band's coefficients live on a sphere that fills a small part of the box (the box
//! holds twice the sphere's diameter, so that products of two bands do not alias): most
//! z-columns of the box are zero before the first 1-D pass and most x-planes before the
//! second. [`SpherePlan`] transforms only the columns and planes the sphere touches, as
//! ABINIT, Quantum ESPRESSO and SpFFT do (about 0.6 of the dense transform's work at the
//! usual sizes), works band by band in a box buffer that stays in cache, threads over
//! bands, and owns its FFT plans and its buffers: no lock on a shared planner and no
//! allocation per call after the first.
//!
//! The box is `n0 × n1 × n2`, row-major (the last axis contiguous); grid point `(i0, i1,
//! i2)` has flat index `(i0·n1 + i1)·n2 + i2`. Conventions: [`SpherePlan::to_grid`] is the
//! unnormalised inverse transform `u(r) = Σ_G c(G) e^{iG·r}`; [`SpherePlan::from_grid`]
//! the forward one scaled by `1/N`, so that `from_grid(to_grid(c)) = c`.

use std::ffi::c_int;
use std::sync::{Arc, Mutex, OnceLock};

use ctensor_base::{Error, Result};
use rustfft::num_complex::Complex;
use rustfft::{Fft, FftNum, FftPlanner};

use crate::cpu::fftw;
use crate::fft::HostFft;
use crate::parallel::{install, num_threads};

/// The largest box a plan accepts (2³¹ points, 32 GiB of c64 per worker's buffer): far
/// beyond any plane-wave grid, and small enough that a mistyped shape is an error
/// instead of an attempt to allocate it.
pub const MAX_POINTS: usize = 1 << 31;

/// The most strided lines gathered per block.
const BLOCK: usize = 32;

/// Strided lines of `count` points gathered per block: as many as keep the gathered block
/// within 1024 elements (16 KiB of c64), at least 16 and at most [`BLOCK`]. Each point
/// of a line lies on its own page when the stride is a plane of a large box, so wider
/// blocks read more of each page per visit: sphere → box → ×V → sphere of 8 bands on
/// one thread took 0.93–0.95 of the time of 8-line blocks at 30³–45³, 0.81 at 64³ and
/// 0.54–0.66 at 96³–128³ (two interleaved runs on a 2-core AMD EPYC without transparent
/// huge pages). The dense host FFT keeps blocks of 8: the same widths there measured
/// 0.93–1.16 of FFTW's 3-D plan at 36³–48³ in `make bench`, against 0.73–1.03 with 8.
fn block_width(count: usize) -> usize {
    (1024 / count.max(1)).clamp(16, BLOCK)
}

/// One worker's buffers: a box, a block of gathered lines and rustfft's scratch.
struct Scratch<F> {
    /// The box is `grid[off..off + N]`, which starts on a 64-byte boundary (when the
    /// allocator's alignment allows), so that FFTW's plans see a known alignment.
    grid: Vec<Complex<F>>,
    off: usize,
    lines: Vec<Complex<F>>,
    work: Vec<Complex<F>>,
    rho: Vec<F>,
}

/// Forward and inverse 1-D plans of one axis length.
struct Axis<F: FftNum> {
    fwd: Arc<dyn Fft<F>>,
    inv: Arc<dyn Fft<F>>,
}

/// The passes of [`HostFft::Fftw`]: the z-columns (one contiguous line), one plane's
/// y-lines (`n1` points at stride `n2`, `n2` of them side by side) and the box's x-lines,
/// for each direction, each planned for every alignment class its data can take in a box
/// that starts on a 64-byte boundary.
struct FftwPasses {
    double: bool,
    n: [usize; 3],
    /// `[direction][pass]`: (FFTW's alignment class, plan); direction 0 is forward.
    pass: [[Vec<(c_int, fftw::Guru)>; 3]; 2],
}

/// (length, stride) pairs of a transform or a batch.
type Dims<'a> = &'a [(usize, usize)];

const COLUMN: usize = 0;
const PLANE: usize = 1;
const WHOLE: usize = 2;
const FORWARD: usize = 0;
const INVERSE: usize = 1;

impl FftwPasses {
    fn new<F: Copy + Default>(n: [usize; 3]) -> Result<FftwPasses> {
        let double = std::mem::size_of::<F>() == 8;
        let [n0, n1, n2] = n;
        // (the transform's (length, stride), the batch's): a column, a plane, the box.
        let layouts: [(Dims, Dims); 3] = [
            (&[(n2, 1)], &[]),
            (&[(n1, n2)], &[(n2, 1)]),
            (&[(n0, n1 * n2)], &[(n1 * n2, 1)]),
        ];
        // Every class an element of a 64-byte-aligned box can be in (FFTW's SIMD alignment
        // divides 64).
        let size = std::mem::size_of::<Complex<F>>();
        let mut classes = Vec::new();
        for bytes in (0..64).step_by(size) {
            let c = fftw::alignment(double, (1 << 20) + bytes)?;
            if !classes.contains(&c) {
                classes.push(c);
            }
        }
        let mut pass: [[Vec<(c_int, fftw::Guru)>; 3]; 2] = Default::default();
        for (d, forward) in [(FORWARD, true), (INVERSE, false)] {
            for (k, (dims, howmany)) in layouts.iter().enumerate() {
                for &c in &classes {
                    pass[d][k].push((c, fftw::guru::<F>(double, forward, dims, howmany, c)?));
                }
            }
        }
        Ok(FftwPasses { double, n, pass })
    }

    /// Runs pass `k` of direction `d` in place on `data`, which must be exactly the
    /// pass's layout (a column, a plane or the box; checked, as is the precision); false,
    /// with nothing done, when it is not or when [`run`](Self::run) finds no plan.
    fn apply<F>(&self, d: usize, k: usize, data: &mut [Complex<F>]) -> bool {
        let [n0, n1, n2] = self.n;
        let want = [n2, n1 * n2, n0 * n1 * n2][k];
        if data.len() != want || (std::mem::size_of::<F>() == 8) != self.double {
            return false;
        }
        // SAFETY: `data` is exactly the layout's elements, borrowed exclusively, in the
        // passes' precision (checked above).
        unsafe { self.run(d, k, data.as_mut_ptr()) }
    }

    /// Runs pass `k` of direction `d` in place at `p`; false (nothing done) when no plan
    /// has `p`'s alignment class, which a box on a 64-byte boundary never lacks.
    ///
    /// # Safety
    /// `p` addresses the pass's layout: a column of `n2`, a plane of `n1·n2` or the box of
    /// `N` elements, valid for reads and writes and used by nothing else meanwhile; `F`
    /// is the precision the passes were made for.
    unsafe fn run<F>(&self, d: usize, k: usize, p: *mut Complex<F>) -> bool {
        let Ok(class) = fftw::alignment(self.double, p as usize) else {
            return false;
        };
        match self.pass[d][k].iter().find(|(c, _)| *c == class) {
            Some((_, plan)) => {
                // SAFETY: the caller's contract; the plan was made for this layout,
                // precision and alignment class.
                unsafe { plan.run(p) };
                true
            }
            None => false,
        }
    }
}

/// A reusable sphere ↔ box transform for one basis (see the module docs).
pub struct SpherePlan<F: FftNum> {
    n: [usize; 3],
    npw: usize,
    /// Used columns `i0·n1 + i1`, ascending.
    columns: Vec<usize>,
    /// `entries[col_start[c]..col_start[c + 1]]`: (coefficient, i2) of column `c`.
    col_start: Vec<usize>,
    entries: Vec<(usize, usize)>,
    /// Used planes `i0`, ascending.
    planes: Vec<usize>,
    axes: [Axis<F>; 3],
    /// The library the 1-D passes run in; with FFTW, its plans, made on first use.
    backend: HostFft,
    fftw: OnceLock<std::result::Result<FftwPasses, String>>,
    scratch: Mutex<Vec<Scratch<F>>>,
}

/// Where a block of bands lies in memory: band `b`'s coefficient of plane wave `k` is
/// element `b·band + k·pw` of the slice. A band-major block (`[nb][npw]`) is
/// [`band_major`](Self::band_major); a row-major `[npw, nb]` matrix (bands as columns,
/// a solver's block) is `{ band: 1, pw: nb }`, or `pw` its leading dimension for a view of
/// some columns of a wider one. The transforms read the block where it lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BandLayout {
    /// Elements between one band's coefficients and the next band's.
    pub band: usize,
    /// Elements between a band's coefficients of consecutive plane waves.
    pub pw: usize,
}

impl BandLayout {
    /// Band-major `[nb][npw]`: each band's `npw` coefficients side by side.
    pub fn band_major(npw: usize) -> BandLayout {
        BandLayout { band: npw, pw: 1 }
    }

    /// Whether the layout gives each of `nb` bands of `npw` coefficients an element of its
    /// own by the sorted-stride rule ([`crate::strides::reach_past_smaller`]: a
    /// sufficient test; every layout of a dense or windowed block passes it).
    pub fn is_one_to_one(&self, nb: usize, npw: usize) -> bool {
        crate::strides::reach_past_smaller(&[nb, npw], &[self.band, self.pw])
    }

    /// The elements a block of `nb` bands of `npw` coefficients spans (0 when empty),
    /// `None` when that overflows.
    fn span(&self, nb: usize, npw: usize) -> Option<usize> {
        if nb == 0 || npw == 0 {
            return Some(0);
        }
        (nb - 1)
            .checked_mul(self.band)?
            .checked_add((npw - 1).checked_mul(self.pw)?)?
            .checked_add(1)
    }
}

impl<F: FftNum + Default> SpherePlan<F> {
    /// The plan for a box of shape `n` and the coefficients at flat grid indices `index`
    /// (the sphere, in the order the coefficients will be given). Errors: an empty box
    /// dimension, a box of more than [`MAX_POINTS`] points (each worker holds one box),
    /// an index outside the box, or an index given twice. Nothing of the box's size is
    /// allocated before these checks pass.
    ///
    /// The 1-D passes run in the host FFT library in use ([`crate::fft::set_host_fft`],
    /// `CTENSOR_FFT`): rustfft's plans, owned by the plan, or FFTW's guru plans, which
    /// read the strided y- and x-lines where they lie instead of gathering them.
    pub fn new(n: [usize; 3], index: &[usize]) -> Result<SpherePlan<F>> {
        Self::with_backend(n, index, fftw::backend()?)
    }

    /// [`new`](Self::new) with the 1-D passes in `backend`, whichever the host FFT is.
    /// FFTW's plans are made at the first transform (with the [`crate::fft::FftwPlanner`]
    /// rigour in use) and shared with every plan of the same box; an FFTW that does not
    /// load is an error here.
    pub fn with_backend(n: [usize; 3], index: &[usize], backend: HostFft) -> Result<SpherePlan<F>> {
        if backend == HostFft::Fftw {
            fftw::alignment(std::mem::size_of::<F>() == 8, 0)?;
        }
        let total = n
            .iter()
            .try_fold(1usize, |a, &b| a.checked_mul(b))
            .filter(|&t| t > 0 && t <= MAX_POINTS)
            .ok_or_else(|| Error::InvalidArgument {
                op: "SpherePlan::new",
                expected: format!("a box of three dimensions >= 1 and at most {MAX_POINTS} points"),
                given: format!("{n:?}"),
            })?;
        let mut by_column: Vec<(usize, usize, usize)> = Vec::with_capacity(index.len());
        for (c, &i) in index.iter().enumerate() {
            if i >= total {
                return Err(Error::OutOfRange {
                    op: "SpherePlan::new",
                    what: format!("sphere index {c}"),
                    given: i64::try_from(i).unwrap_or(i64::MAX),
                    valid: format!("0..{total}"),
                });
            }
            by_column.push((i / n[2], i % n[2], c));
        }
        by_column.sort_unstable();
        if let Some(w) = by_column
            .windows(2)
            .find(|w| w[0].0 == w[1].0 && w[0].1 == w[1].1)
        {
            return Err(Error::InvalidArgument {
                op: "SpherePlan::new",
                expected: "distinct grid indices".into(),
                given: format!(
                    "grid index {} twice (at positions {} and {})",
                    w[0].0 * n[2] + w[0].1,
                    w[0].2,
                    w[1].2
                ),
            });
        }
        let (mut columns, mut col_start, mut entries) = (Vec::new(), Vec::new(), Vec::new());
        for &(col, i2, c) in &by_column {
            if columns.last() != Some(&col) {
                columns.push(col);
                col_start.push(entries.len());
            }
            entries.push((c, i2));
        }
        col_start.push(entries.len());
        let mut planes: Vec<usize> = columns.iter().map(|&col| col / n[1]).collect();
        planes.dedup();
        let mut planner = FftPlanner::<F>::new();
        let axes = n.map(|len| Axis {
            fwd: planner.plan_fft_forward(len),
            inv: planner.plan_fft_inverse(len),
        });
        Ok(SpherePlan {
            n,
            npw: index.len(),
            columns,
            col_start,
            entries,
            planes,
            axes,
            backend,
            fftw: OnceLock::new(),
            scratch: Mutex::new(Vec::new()),
        })
    }

    /// The library the 1-D passes run in.
    pub fn backend(&self) -> HostFft {
        self.backend
    }

    /// FFTW's passes, planned at the first call, when the backend is FFTW.
    fn passes(&self) -> Result<Option<&FftwPasses>> {
        if self.backend != HostFft::Fftw {
            return Ok(None);
        }
        self.fftw
            .get_or_init(|| FftwPasses::new::<F>(self.n).map_err(|e| e.to_string()))
            .as_ref()
            .map(Some)
            .map_err(|why| Error::Unsupported {
                op: "SpherePlan",
                what: format!("FFTW passes for the box {:?}: {why}", self.n),
            })
    }

    /// Coefficients per band.
    pub fn npw(&self) -> usize {
        self.npw
    }

    /// The box shape.
    pub fn shape(&self) -> [usize; 3] {
        self.n
    }

    /// Points in the box.
    pub fn len(&self) -> usize {
        self.n[0] * self.n[1] * self.n[2]
    }

    /// Whether the box is empty (never: [`new`](Self::new) refuses it).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The fraction of the dense transform's 1-D lines this plan transforms (both
    /// directions): `(columns + planes·n2 + n1·n2) / (3·N/avg)`, for reports.
    pub fn work_fraction(&self) -> f64 {
        let [n0, n1, n2] = self.n.map(|x| x as f64);
        let sphere = self.columns.len() as f64 * n2.log2().max(1.0) * n2
            + self.planes.len() as f64 * n2 * n1 * n1.log2().max(1.0)
            + n1 * n2 * n0 * n0.log2().max(1.0);
        let dense = n0 * n1 * n2 * (n0.log2().max(1.0) + n1.log2().max(1.0) + n2.log2().max(1.0));
        sphere / dense
    }

    fn take_scratch(&self) -> Scratch<F> {
        let mut pool = self.scratch.lock().unwrap_or_else(|p| p.into_inner());
        pool.pop().unwrap_or_else(|| {
            let longest = self.n.iter().copied().max().unwrap_or(1);
            let work = self
                .axes
                .iter()
                .map(|a| {
                    a.fwd
                        .get_inplace_scratch_len()
                        .max(a.inv.get_inplace_scratch_len())
                })
                .max()
                .unwrap_or(0);
            let extra = 64 / std::mem::size_of::<Complex<F>>();
            let grid = vec![Complex::default(); self.len() + extra];
            let size = std::mem::size_of::<Complex<F>>();
            let off = (0..extra)
                .find(|k| (grid.as_ptr() as usize + k * size).is_multiple_of(64))
                .unwrap_or(0);
            Scratch {
                grid,
                off,
                lines: vec![Complex::default(); BLOCK * longest],
                work: vec![Complex::default(); work],
                rho: Vec::new(),
            }
        })
    }

    fn give_back(&self, s: Scratch<F>) {
        self.scratch
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(s);
    }

    /// Runs `f(band, scratch)` for every band, over ctensor's threads when there are
    /// several bands, each worker with its own scratch from the pool.
    fn per_band(&self, nb: usize, f: impl Fn(usize, &mut Scratch<F>) + Sync) -> Vec<Scratch<F>> {
        use rayon::prelude::*;
        let workers = num_threads().min(nb).max(1);
        if workers < 2 {
            let mut s = self.take_scratch();
            for b in 0..nb {
                f(b, &mut s);
            }
            return vec![s];
        }
        let chunk = nb.div_ceil(workers);
        install(|| {
            (0..workers)
                .into_par_iter()
                .map(|w| {
                    let mut s = self.take_scratch();
                    for b in w * chunk..((w + 1) * chunk).min(nb) {
                        f(b, &mut s);
                    }
                    s
                })
                .collect()
        })
    }

    /// [`per_band`](Self::per_band) with band `b`'s slice `[b·width, (b+1)·width)` of
    /// `out` handed to `f`; the scratches go back to the pool.
    fn per_band_into(
        &self,
        nb: usize,
        width: usize,
        out: &mut [Complex<F>],
        f: impl Fn(usize, &mut Scratch<F>, &mut [Complex<F>]) + Sync,
    ) {
        debug_assert_eq!(out.len(), nb * width);
        let dst = crate::parallel::SendPtr(out.as_mut_ptr());
        let pool = self.per_band(nb, |b, s| {
            // SAFETY: band b alone owns elements [b·width, (b+1)·width) of `out`, which
            // holds nb·width (checked by every caller).
            let d = unsafe { std::slice::from_raw_parts_mut(dst.get().add(b * width), width) };
            f(b, s, d);
        });
        pool.into_iter().for_each(|s| self.give_back(s));
    }

    /// The band whose coefficient of plane wave `k` is `coeffs[start + k·pw]` into the
    /// box `grid` as `u(r) = Σ c(G) e^{iG·r}`, the passes in FFTW when `fftw` is given,
    /// else in rustfft.
    fn band_to_grid(
        &self,
        (coeffs, start, pw): (&[Complex<F>], usize, usize),
        s: &mut Scratch<F>,
        fftw: Option<&FftwPasses>,
    ) {
        let [n0, n1, n2] = self.n;
        let Scratch {
            grid,
            off,
            lines,
            work,
            ..
        } = s;
        let grid = &mut grid[*off..*off + n0 * n1 * n2];
        grid.fill(Complex::default());
        // z: only the used columns, each a contiguous line.
        for (c, &col) in self.columns.iter().enumerate() {
            let line = &mut grid[col * n2..(col + 1) * n2];
            for &(k, i2) in &self.entries[self.col_start[c]..self.col_start[c + 1]] {
                line[i2] = coeffs[start + k * pw];
            }
            if !fftw.is_some_and(|f| f.apply(INVERSE, COLUMN, line)) {
                self.axes[2].inv.process_with_scratch(line, work);
            }
        }
        // y: only the used planes.
        for &i0 in &self.planes {
            let plane = &mut grid[i0 * n1 * n2..(i0 + 1) * n1 * n2];
            if !fftw.is_some_and(|f| f.apply(INVERSE, PLANE, plane)) {
                strided_pass(plane, n1, n2, n2, lines, work, &*self.axes[1].inv);
            }
        }
        // x: every line.
        if !fftw.is_some_and(|f| f.apply(INVERSE, WHOLE, grid)) {
            strided_pass(grid, n0, n1 * n2, n1 * n2, lines, work, &*self.axes[0].inv);
        }
    }

    /// The box `grid` (destroyed) back onto the sphere, scaled by `scale`: `put(k, c)`
    /// for each plane wave `k`, the passes in FFTW when `fftw` is given, else in rustfft.
    fn band_from_grid(
        &self,
        s: &mut Scratch<F>,
        scale: F,
        mut put: impl FnMut(usize, Complex<F>),
        fftw: Option<&FftwPasses>,
    ) {
        let [n0, n1, n2] = self.n;
        let Scratch {
            grid,
            off,
            lines,
            work,
            ..
        } = s;
        let grid = &mut grid[*off..*off + n0 * n1 * n2];
        if !fftw.is_some_and(|f| f.apply(FORWARD, WHOLE, grid)) {
            strided_pass(grid, n0, n1 * n2, n1 * n2, lines, work, &*self.axes[0].fwd);
        }
        for &i0 in &self.planes {
            let plane = &mut grid[i0 * n1 * n2..(i0 + 1) * n1 * n2];
            if !fftw.is_some_and(|f| f.apply(FORWARD, PLANE, plane)) {
                strided_pass(plane, n1, n2, n2, lines, work, &*self.axes[1].fwd);
            }
        }
        for (c, &col) in self.columns.iter().enumerate() {
            let line = &mut grid[col * n2..(col + 1) * n2];
            if !fftw.is_some_and(|f| f.apply(FORWARD, COLUMN, line)) {
                self.axes[2].fwd.process_with_scratch(line, work);
            }
            for &(k, i2) in &self.entries[self.col_start[c]..self.col_start[c + 1]] {
                put(k, line[i2] * scale);
            }
        }
    }

    fn check(&self, op: &'static str, what: &str, len: usize, want: usize) -> Result<()> {
        if len != want {
            return Err(Error::InvalidArgument {
                op,
                expected: format!("{what} of {want} values"),
                given: format!("{len}"),
            });
        }
        Ok(())
    }

    /// That `coeffs` holds a block of `nb` bands laid out as `layout`.
    fn check_block(
        &self,
        op: &'static str,
        nb: usize,
        coeffs: &[Complex<F>],
        layout: BandLayout,
    ) -> Result<()> {
        self.check_span(op, "coefficients", nb, coeffs.len(), layout)
    }

    /// That a slice of `len` elements (`what`: coefficients, an output) holds `nb` bands
    /// laid out as `layout`.
    fn check_span(
        &self,
        op: &'static str,
        what: &str,
        nb: usize,
        len: usize,
        layout: BandLayout,
    ) -> Result<()> {
        let span = layout.span(nb, self.npw).ok_or(Error::Overflow {
            op,
            what: format!("{nb} bands of {} coefficients as {layout:?}", self.npw),
        })?;
        if len < span {
            return Err(Error::InvalidArgument {
                op,
                expected: format!(
                    "{what} spanning {span} values ({nb} bands of {} as {layout:?})",
                    self.npw
                ),
                given: format!("{len}"),
            });
        }
        Ok(())
    }

    /// `grid[b] = Σ_G coeffs[b][G] e^{iG·r}` for `nb` bands: `coeffs` is `[nb][npw]`,
    /// `grid` `[nb][N]`, both band-major.
    pub fn to_grid(&self, nb: usize, coeffs: &[Complex<F>], grid: &mut [Complex<F>]) -> Result<()> {
        self.check(
            "SpherePlan::to_grid",
            "coefficients",
            coeffs.len(),
            nb * self.npw,
        )?;
        self.to_grid_strided(nb, coeffs, BandLayout::band_major(self.npw), grid)
    }

    /// [`to_grid`](Self::to_grid) of a block laid out as `layout`, read where it lies.
    pub fn to_grid_strided(
        &self,
        nb: usize,
        coeffs: &[Complex<F>],
        layout: BandLayout,
        grid: &mut [Complex<F>],
    ) -> Result<()> {
        let op = "SpherePlan::to_grid";
        self.check_block(op, nb, coeffs, layout)?;
        self.check(op, "a grid", grid.len(), nb * self.len())?;
        let fftw = self.passes()?;
        self.per_band_into(nb, self.len(), grid, |b, s, dst| {
            self.band_to_grid((coeffs, b * layout.band, layout.pw), s, fftw);
            dst.copy_from_slice(&s.grid[s.off..s.off + dst.len()]);
        });
        Ok(())
    }

    /// `coeffs[b][G] = scale · Σ_r grid[b][r] e^{−iG·r}` for `nb` bands (`scale = 1/N`
    /// inverts [`to_grid`](Self::to_grid)); `grid` is read only.
    pub fn from_grid(
        &self,
        nb: usize,
        grid: &[Complex<F>],
        scale: F,
        coeffs: &mut [Complex<F>],
    ) -> Result<()> {
        self.check(
            "SpherePlan::from_grid",
            "a grid",
            grid.len(),
            nb * self.len(),
        )?;
        self.check(
            "SpherePlan::from_grid",
            "coefficients",
            coeffs.len(),
            nb * self.npw,
        )?;
        let n = self.len();
        let fftw = self.passes()?;
        self.per_band_into(nb, self.npw, coeffs, |b, s, dst| {
            s.grid[s.off..s.off + n].copy_from_slice(&grid[b * n..(b + 1) * n]);
            self.band_from_grid(s, scale, |k, c| dst[k] = c, fftw);
        });
        Ok(())
    }

    /// `out[b] = from_grid(v · to_grid(coeffs[b])) / N` for a real potential `v` on the
    /// box: the local-potential term of a Hamiltonian, band by band in one box buffer.
    pub fn apply_potential(
        &self,
        nb: usize,
        v: &[F],
        coeffs: &[Complex<F>],
        out: &mut [Complex<F>],
    ) -> Result<()> {
        self.apply_local(nb, v, None, coeffs, out)
    }

    /// [`apply_potential`](Self::apply_potential) plus, when `diag` is given, the
    /// diagonal term `diag[g] · coeffs[b][g]` (a kinetic energy `½|k+G|²` per plane wave,
    /// `npw` entries), added band by band while the band is at hand: the local part of a
    /// plane-wave Hamiltonian in one pass, with no block-sized temporary.
    pub fn apply_local(
        &self,
        nb: usize,
        v: &[F],
        diag: Option<&[F]>,
        coeffs: &[Complex<F>],
        out: &mut [Complex<F>],
    ) -> Result<()> {
        self.check(
            "SpherePlan::apply_local",
            "coefficients",
            coeffs.len(),
            nb * self.npw,
        )?;
        let layout = BandLayout::band_major(self.npw);
        self.apply_local_strided(nb, v, diag, coeffs, layout, out)
    }

    /// [`apply_local`](Self::apply_local) of a block laid out as `layout`, read where it
    /// lies (a solver's row-major block needs no band-major copy); `out` is band-major.
    pub fn apply_local_strided(
        &self,
        nb: usize,
        v: &[F],
        diag: Option<&[F]>,
        coeffs: &[Complex<F>],
        layout: BandLayout,
        out: &mut [Complex<F>],
    ) -> Result<()> {
        self.check(
            "SpherePlan::apply_local",
            "an output",
            out.len(),
            nb * self.npw,
        )?;
        let out_layout = BandLayout::band_major(self.npw);
        self.apply_local_strided_into(nb, v, diag, coeffs, layout, out, out_layout)
    }

    /// [`apply_local_strided`](Self::apply_local_strided) written where `out_layout` puts
    /// each result (band `b`'s plane wave `k` at `b·band + k·pw` of `out`): into a window
    /// of columns of a solver's `H V`, with no band-major block and no copy. The layout
    /// must give every (band, plane wave) an element of its own (one stride at least the
    /// other times its extent); elements of `out` it does not reach are left as they are.
    #[allow(clippy::too_many_arguments)]
    pub fn apply_local_strided_into(
        &self,
        nb: usize,
        v: &[F],
        diag: Option<&[F]>,
        coeffs: &[Complex<F>],
        layout: BandLayout,
        out: &mut [Complex<F>],
        out_layout: BandLayout,
    ) -> Result<()> {
        let op = "SpherePlan::apply_local";
        self.check(op, "a potential", v.len(), self.len())?;
        if let Some(d) = diag {
            self.check(op, "a diagonal", d.len(), self.npw)?;
        }
        self.check_block(op, nb, coeffs, layout)?;
        self.check_span(op, "an output", nb, out.len(), out_layout)?;
        if !out_layout.is_one_to_one(nb, self.npw) {
            return Err(Error::InvalidArgument {
                op,
                expected: format!(
                    "an output layout with an element for each of {nb} bands of {} plane waves",
                    self.npw
                ),
                given: format!("{out_layout:?}, which puts two of them on one element"),
            });
        }
        let npw = self.npw;
        let scale = F::one() / F::from_usize(self.len()).unwrap_or_else(F::one);
        let fftw = self.passes()?;
        let dst = crate::parallel::SendPtr(out.as_mut_ptr());
        let pool = self.per_band(nb, |b, s| {
            let start = b * layout.band;
            let at = |k: usize| b * out_layout.band + k * out_layout.pw;
            self.band_to_grid((coeffs, start, layout.pw), s, fftw);
            for (g, &p) in s.grid[s.off..].iter_mut().zip(v) {
                *g = *g * p;
            }
            // SAFETY: `at(k)` lies inside `out` (`check_block` above: within the span of
            // nb bands of npw as `out_layout`), and no other band's `at` reaches it
            // (`is_one_to_one`), so the bands' writes are disjoint across threads.
            self.band_from_grid(
                s,
                scale,
                |k, c| unsafe { dst.get().add(at(k)).write(c) },
                fftw,
            );
            if let Some(d) = diag {
                for (k, &e) in d.iter().enumerate().take(npw) {
                    // SAFETY: as above; this band alone reads and writes `at(k)`.
                    unsafe {
                        let o = dst.get().add(at(k));
                        o.write(o.read() + coeffs[start + k * layout.pw] * e);
                    }
                }
            }
        });
        pool.into_iter().for_each(|s| self.give_back(s));
        Ok(())
    }

    /// `rho[r] += Σ_b weights[b] · |u_b(r)|²` with `u_b = to_grid(coeffs[b])`: a density.
    pub fn accumulate_density(
        &self,
        nb: usize,
        coeffs: &[Complex<F>],
        weights: &[F],
        rho: &mut [F],
    ) -> Result<()> {
        self.check(
            "SpherePlan::accumulate_density",
            "coefficients",
            coeffs.len(),
            nb * self.npw,
        )?;
        let layout = BandLayout::band_major(self.npw);
        self.accumulate_density_strided(nb, coeffs, layout, weights, rho)
    }

    /// [`accumulate_density`](Self::accumulate_density) of a block laid out as `layout`,
    /// read where it lies.
    pub fn accumulate_density_strided(
        &self,
        nb: usize,
        coeffs: &[Complex<F>],
        layout: BandLayout,
        weights: &[F],
        rho: &mut [F],
    ) -> Result<()> {
        let op = "SpherePlan::accumulate_density";
        self.check_block(op, nb, coeffs, layout)?;
        self.check(op, "weights", weights.len(), nb)?;
        self.check(op, "a density", rho.len(), self.len())?;
        let n = self.len();
        let fftw = self.passes()?;
        let pool = self.per_band(nb, |b, s| {
            self.band_to_grid((coeffs, b * layout.band, layout.pw), s, fftw);
            if s.rho.len() != n {
                s.rho = vec![F::zero(); n];
            }
            let w = weights[b];
            for (r, u) in s.rho.iter_mut().zip(&s.grid[s.off..s.off + n]) {
                *r = *r + w * u.norm_sqr();
            }
        });
        for mut s in pool {
            if s.rho.len() == rho.len() {
                for (r, p) in rho.iter_mut().zip(&mut s.rho) {
                    *r = *r + *p;
                    *p = F::zero();
                }
            }
            self.give_back(s);
        }
        Ok(())
    }
}

/// The 1-D transform `fft` along the strided axis of `data` (`count` points with
/// `stride` between them, `inner` independent lines side by side): lines are gathered
/// [`block_width`] at a time into `lines`, transformed and scattered back.
fn strided_pass<F: FftNum>(
    data: &mut [Complex<F>],
    count: usize,
    stride: usize,
    inner: usize,
    lines: &mut [Complex<F>],
    work: &mut [Complex<F>],
    fft: &dyn Fft<F>,
) {
    assert!(count == 0 || (inner <= stride && (count - 1) * stride + inner <= data.len()));
    let block = block_width(count);
    let mut first = 0;
    while first < inner {
        let width = block.min(inner - first);
        let lines = &mut lines[..width * count];
        // SAFETY: rows j < count of the block, data[j·stride + first..][..width], lie
        // inside `data` (asserted: first + width ≤ inner ≤ stride), which is borrowed
        // exclusively, and are disjoint (width ≤ stride).
        unsafe {
            let at = data.as_mut_ptr().add(first);
            crate::fft::gather_lines(at, count, stride, lines);
            fft.process_with_scratch(lines, work);
            crate::fft::scatter_lines(lines, count, stride, at);
        }
        first += width;
    }
}

#[cfg(test)]
mod tests;
