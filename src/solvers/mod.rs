//! Block eigensolvers for the lowest eigenpairs of a Hermitian operator that is applied,
//! never formed: the solvers a plane-wave code runs for each k-point and SCF step.
//!
//! Both take the operator and the preconditioner as closures over blocks of columns
//! (`[n, m]` tensors), run on whatever device the start block lives on, use only public
//! ctensor ops (gemm, QR, `eigh` of the small projected matrix) and lock converged pairs
//! softly: a converged column gets no new correction but stays in the Rayleigh–Ritz
//! subspace, so later steps still improve it.
//!
//! - [`davidson`]: block Davidson with restarts; the basis grows by the preconditioned
//!   residuals of the unconverged pairs. [`davidson_owned`] takes the start block by
//!   value, and [`davidson_into`] an operator that writes `H X` where the solver keeps
//!   it.
//! - [`lobpcg`]: locally optimal block preconditioned conjugate gradient (Knyazev 2001),
//!   a fixed `3m`-column subspace `[X, W, P]`.
//!
//! The residual block a solver hands its preconditioner is its own and is dropped after
//! the call: a preconditioner may overwrite it and return it
//! ([`diagonal_preconditioner_in_place`]). It is a column window, so its row stride can
//! exceed its width: of the solver's residual block (LOBPCG; the open columns moved to
//! the front in place) or of the spare columns of the basis, where Davidson forms its
//! residuals and keeps its corrections.
//!
//! ```
//! use ctensor::solvers::{davidson, diagonal_preconditioner, SolverOptions};
//! use ctensor::{DataType, DeviceType, Tensor};
//! // A diagonal operator with entries 1..=50: the lowest three eigenvalues are 1, 2, 3.
//! let d: Vec<f64> = (1..=50).map(|i| i as f64).collect();
//! let diag = Tensor::from_slice(&d, &[50])?;
//! let x0 = Tensor::eye(DataType::Double, DeviceType::Cpu, 50)?.narrow(1, 10, 3)?.add(
//!     &Tensor::ones(DataType::Double, DeviceType::Cpu, &[50, 3])?.mul_scalar(0.1)?)?;
//! let op = |x: &Tensor| x.mul(&diag.unsqueeze(1)?);
//! let found = davidson(op, diagonal_preconditioner(&diag, 1e-2), &x0, SolverOptions::new(3))?;
//! assert!(found.converged);
//! let v = found.values.to_vec::<f64>()?;
//! assert!((v[0] - 1.0).abs() < 1e-8 && (v[2] - 3.0).abs() < 1e-8);
//! # Ok::<(), ctensor::Error>(())
//! ```

mod davidson;
mod lobpcg;
#[cfg(test)]
mod tests;

pub use davidson::{davidson, davidson_into, davidson_owned};
pub use lobpcg::lobpcg;

use ctensor_aten::{
    cholesky, eigvalsh, matmul, matmul_into, matmul_op, qr, result_type, tri_inverse, DataType,
    Diag, EigBackend, EighRange, Error, NormOrd, QrMode, Result, Tensor, Trans, Uplo,
};

/// Settings shared by [`davidson`] and [`lobpcg`].
#[derive(Clone, Copy, Debug)]
pub struct SolverOptions {
    /// Eigenpairs wanted (the lowest).
    pub nev: usize,
    /// A pair is converged when ‖H x − θ x‖₂ ≤ `tol` (absolute, in the operator's units).
    pub tol: f64,
    /// Davidson only: basis size at which the subspace restarts from the Ritz vectors
    /// (at least `2·nev`).
    pub max_basis: usize,
    /// Iterations before the solver stops and reports `converged: false`.
    pub max_iter: usize,
    /// How many of the lowest pairs must meet `tol` (at most `nev`; `nev` by default).
    /// The pairs above are a buffer: they get corrections while unconverged, which
    /// speeds up the wanted ones, but do not hold the solver back (a plane-wave code's
    /// "buffer bands").
    pub nconv: usize,
}

impl SolverOptions {
    /// `nev` pairs to 1e-8, a Davidson basis of up to `4·nev` columns, 200 iterations.
    pub fn new(nev: usize) -> SolverOptions {
        SolverOptions {
            nev,
            tol: 1e-8,
            max_basis: 4 * nev.max(1),
            max_iter: 200,
            nconv: nev,
        }
    }
}

/// What a solver found: the lowest `nev` Ritz pairs of the last subspace.
#[derive(Debug)]
pub struct Eigenpairs {
    /// Eigenvalues, ascending, real `[nev]` (f64 for f64/c64 operators, f32 for f32/c32).
    pub values: Tensor,
    /// Eigenvectors as orthonormal columns, `[n, nev]`, in the start block's dtype.
    pub vectors: Tensor,
    /// ‖H x − θ x‖₂ of each pair, f64, host.
    pub residual_norms: Vec<f64>,
    /// Whether the residual norms of the lowest `nconv` pairs are ≤ `tol`.
    pub converged: bool,
    /// Iterations taken (one Rayleigh–Ritz step each).
    pub iterations: usize,
    /// Columns the operator was applied to.
    pub applications: usize,
}

/// The classic diagonal preconditioner `t = r / (|d − θ| + floor)` for a real diagonal
/// `d` (`[n]`, e.g. the kinetic energies of a plane-wave basis): each residual column is
/// divided by the distance of its Ritz value from the diagonal, bounded by `floor`. The
/// result is a new block of the promoted type of `r` and `d` (`r` is only read); the
/// shifts are formed a slab of rows at a time (about 2¹⁶ entries), so the result is the
/// only block-sized tensor it makes. [`diagonal_preconditioner_in_place`] makes none.
///
/// Errors: a residual block that is not `[n, len(θ)]` with `n` the diagonal's length.
pub fn diagonal_preconditioner(
    diag: &Tensor,
    floor: f64,
) -> impl FnMut(&Tensor, &[f64]) -> Result<Tensor> + '_ {
    move |r: &Tensor, theta: &[f64]| {
        let (n, m) = preconditioned_shape("diagonal_preconditioner", diag, r, theta)?;
        let out = Tensor::empty(result_type(r.dtype(), diag.dtype()), r.device(), &[n, m])?;
        divide_by_shifts(diag, floor, r, theta, &out)?;
        Ok(out)
    }
}

/// [`diagonal_preconditioner`] writing the quotient over the residual block and
/// returning it (`r.share()`): for [`davidson`] and [`lobpcg`], whose residual block is
/// their own and dropped once preconditioned, it saves one block of the solver's memory.
/// A residual whose type cannot hold the quotient (an f32 block with an f64 diagonal)
/// gets a new block, as [`diagonal_preconditioner`]. The values are the same, bit for
/// bit. Only for residual blocks that may be overwritten.
pub fn diagonal_preconditioner_in_place(
    diag: &Tensor,
    floor: f64,
) -> impl FnMut(&Tensor, &[f64]) -> Result<Tensor> + '_ {
    move |r: &Tensor, theta: &[f64]| {
        let op = "diagonal_preconditioner_in_place";
        let (n, m) = preconditioned_shape(op, diag, r, theta)?;
        let promoted = result_type(r.dtype(), diag.dtype());
        let out = if promoted == r.dtype() {
            r.share()
        } else {
            Tensor::empty(promoted, r.device(), &[n, m])?
        };
        divide_by_shifts(diag, floor, r, theta, &out)?;
        Ok(out)
    }
}

/// `[n, m]` of a residual block `r` that matches the diagonal's length `n` and the
/// `m = len(θ)` Ritz values, or the error that says so.
fn preconditioned_shape(
    op: &'static str,
    diag: &Tensor,
    r: &Tensor,
    theta: &[f64],
) -> Result<(usize, usize)> {
    match r.dims() {
        &[n, m] if n == diag.numel() && m == theta.len() => Ok((n, m)),
        d => Err(Error::ShapeMismatch {
            op,
            expected: format!(
                "residuals [{}, {}] (the diagonal's length, one column per Ritz value)",
                diag.numel(),
                theta.len()
            ),
            got: vec![d.to_vec()],
        }),
    }
}

/// `out = r / (|d − θ| + floor)`, the shifts a slab of rows at a time; `out` may be `r`.
fn divide_by_shifts(
    diag: &Tensor,
    floor: f64,
    r: &Tensor,
    theta: &[f64],
    out: &Tensor,
) -> Result<()> {
    let (n, m) = (r.dims()[0], r.dims()[1]);
    let th = Tensor::from_slice(theta, &[1, m])?
        .cast(diag.dtype())?
        .to_device(diag.device())?;
    let d = diag.reshape(&[-1, 1])?;
    let floor = Tensor::scalar(floor)?.to_device(diag.device())?;
    let rows = (SLAB / m.max(1)).max(1);
    for (start, len) in row_slabs(n, rows) {
        let mut shift = d.narrow(0, start, len)?.sub(&th)?;
        shift = shift.abs()?;
        shift.add_(&floor)?;
        r.narrow(0, start, len)?
            .div_into(&shift, &mut out.narrow(0, start, len)?)?;
    }
    Ok(())
}

/// The slabs `(start, len)` of `rows` rows (the last may be shorter) covering `0..n`;
/// `rows` is at least 1.
fn row_slabs(n: usize, rows: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..n)
        .step_by(rows)
        .map(move |start| (start, rows.min(n - start)))
}

/// Entries of one slab of rows: of [`diagonal_preconditioner`]'s shifts and of the
/// column moves of [`gather_columns_`].
const SLAB: usize = 1 << 16;

/// The settings and start block checked once for both solvers: `x0` is `[n, nev]` with
/// `1 ≤ nev ≤ n`, of a floating dtype, and `tol` is finite and positive.
fn check(op: &'static str, x0: &Tensor, opts: &SolverOptions) -> Result<(usize, usize)> {
    let dims = x0.dims();
    if dims.len() != 2 || dims[1] != opts.nev || opts.nev == 0 || dims[1] > dims[0] {
        return Err(Error::InvalidArgument {
            op,
            expected: format!("a start block [n, nev] with 1 <= nev = {} <= n", opts.nev),
            given: format!("shape {:?}", dims),
        });
    }
    if !matches!(
        x0.dtype(),
        DataType::Float | DataType::Double | DataType::ComplexFloat | DataType::ComplexDouble
    ) {
        return Err(Error::UnsupportedDType {
            op,
            dtype: x0.dtype(),
            supported: "f32, f64, c32, c64",
        });
    }
    if opts.nconv > opts.nev {
        return Err(Error::InvalidArgument {
            op,
            expected: format!("nconv <= nev = {}", opts.nev),
            given: format!("nconv = {}", opts.nconv),
        });
    }
    if !(opts.tol.is_finite() && opts.tol > 0.0) {
        return Err(Error::InvalidArgument {
            op,
            expected: "a finite tolerance > 0".into(),
            given: format!("{}", opts.tol),
        });
    }
    Ok((dims[0], dims[1]))
}

/// Column 2-norms of `r` as f64 on the host.
fn column_norms(r: &Tensor) -> Result<Vec<f64>> {
    r.vector_norm(&[0], NormOrd::Two)?
        .cast(DataType::Double)?
        .to_vec::<f64>()
}

/// Real values of a Ritz-value tensor as f64 on the host.
fn host_values(theta: &Tensor) -> Result<Vec<f64>> {
    theta.cast(DataType::Double)?.to_vec::<f64>()
}

/// Whether a pair with residual norm `norm` still needs work (a NaN residual does).
fn unconverged(norm: f64, tol: f64) -> bool {
    norm > tol || norm.is_nan()
}

/// `H X − X Θ` of a Ritz block, in one block-sized result.
fn residual(theta: &Tensor, x: &Tensor, hx: &Tensor) -> Result<Tensor> {
    let mut r = x.mul(&theta.unsqueeze(0)?)?;
    r.axpby_(-1.0, hx, 1.0)?;
    Ok(r)
}

/// Entries of one slab of rows of the residual formed in a basis's spare columns
/// ([`residuals_into_spare`]) and of the projection taken off a block that lies there
/// ([`orthogonalize_against_`]): 2 MB of f64, so each slab is one gemm of a useful size.
const RESIDUAL_SLAB: usize = 1 << 18;

/// Where the residual `H X − X Θ` of Davidson's Ritz block `X` comes from (up to sign, as
/// [`residual`] and the two-gemm form give it).
enum RitzBlock<'a> {
    /// The basis was rotated to the Ritz vectors (a restart): `X` and `H X` are the
    /// first columns of the basis and of `H V`.
    Rotated {
        /// The Ritz vectors.
        x: &'a Tensor,
        /// `H` times them.
        hx: &'a Tensor,
        /// The Ritz values `[nev]`.
        theta: &'a Tensor,
    },
    /// `X = V Y`, `H X = (H V) Y`, never formed: the residual is `H V Y − V (Y Θ)`.
    Combined {
        /// The basis.
        v: &'a Tensor,
        /// `H V`.
        hv: &'a Tensor,
        /// The Ritz coefficients `[m, nev]`.
        y: &'a Tensor,
        /// `Y Θ`.
        y_theta: &'a Tensor,
    },
}

impl RitzBlock<'_> {
    /// Rows `start .. start + len` of the residual's columns `c0 .. c0 + g`, as a fresh
    /// block (so writing it into the basis's spare columns reads nothing it writes).
    fn rows(&self, start: usize, len: usize, c0: usize, g: usize) -> Result<Tensor> {
        match *self {
            RitzBlock::Rotated { x, hx, theta } => residual(
                &theta.narrow(0, c0, g)?,
                &x.narrow(0, start, len)?.narrow(1, c0, g)?,
                &hx.narrow(0, start, len)?.narrow(1, c0, g)?,
            ),
            RitzBlock::Combined { v, hv, y, y_theta } => {
                let mut r = matmul(&hv.narrow(0, start, len)?, &y.narrow(1, c0, g)?)?;
                matmul_into(
                    &v.narrow(0, start, len)?,
                    Trans::N,
                    &y_theta.narrow(1, c0, g)?,
                    Trans::N,
                    -1.0,
                    1.0,
                    &mut r,
                )?;
                Ok(r)
            }
        }
    }
}

/// The residual column norms of a Ritz block of `nev` pairs (`n` rows) and its
/// unconverged columns, formed in `spare` (a window of the basis's reserved columns,
/// `[n, room]`) instead of in a block of their own: returns the norms, the unconverged
/// pairs (ascending) and how many of them lie, in that order, in `spare`'s first
/// columns (the lowest that fit: all of them when `room` allows).
///
/// The columns are formed in groups as wide as the room left, a slab of rows at a time
/// (an op writing into the basis while reading it would copy the basis first); after
/// each group its converged columns are dropped and the unconverged ones moved to the
/// front in place ([`gather_columns_`]). The columns past a full room are formed only
/// for their norms, a slab-sized block at a time. So the residual never takes a block of
/// its own: 27 MB of 132 real bands of 24 000 plane waves, at the peak of a large cell's
/// run.
fn residuals_into_spare(
    ritz: &RitzBlock<'_>,
    (n, nev): (usize, usize),
    spare: &Tensor,
    tol: f64,
) -> Result<(Vec<f64>, Vec<usize>, usize)> {
    let room = spare.dims()[1];
    let mut norms = vec![0.0; nev];
    let mut open = Vec::new();
    let (mut kept, mut c0) = (0, 0);
    while c0 < nev && kept < room {
        let g = (room - kept).min(nev - c0);
        let window = spare.narrow(1, kept, g)?;
        let rows = (RESIDUAL_SLAB / g).max(1);
        for (start, len) in row_slabs(n, rows) {
            window
                .narrow(0, start, len)?
                .assign(&ritz.rows(start, len, c0, g)?)?;
        }
        let group = column_norms(&window)?;
        let local: Vec<usize> = (0..g).filter(|&j| unconverged(group[j], tol)).collect();
        norms[c0..c0 + g].copy_from_slice(&group);
        open.extend(local.iter().map(|&j| c0 + j));
        gather_columns_(&window, &local)?;
        kept += local.len();
        c0 += g;
    }
    if c0 < nev {
        let g = nev - c0;
        let rows = (RESIDUAL_SLAB / g).max(1);
        let mut squares = vec![0.0; g];
        for (start, len) in row_slabs(n, rows) {
            let slab = column_norms(&ritz.rows(start, len, c0, g)?)?;
            for (sq, x) in squares.iter_mut().zip(slab) {
                *sq += x * x;
            }
        }
        for (j, sq) in squares.into_iter().enumerate() {
            norms[c0 + j] = sq.sqrt();
            if unconverged(norms[c0 + j], tol) {
                open.push(c0 + j);
            }
        }
    }
    Ok((norms, open, kept))
}

/// Whether a solver stops after this step: `Some(converged)` when no unconverged pair
/// (`open`) is below `nconv` (converged) or when `iteration` reached `max_iter`.
fn stopping(open: &[usize], nconv: usize, iteration: usize, max_iter: usize) -> Option<bool> {
    let done = open.iter().all(|&b| b >= nconv);
    (done || iteration >= max_iter).then_some(done)
}

/// What follows from the residuals `r = H X − X Θ` of a Ritz block: the finished pairs
/// when every residual norm is within `opts.tol` or the iteration limit is reached
/// (`Err` of the inner result, with the Ritz vectors from `ritz`, called only then),
/// otherwise the preconditioned residuals of the unconverged columns (`Ok`), the new
/// search directions of both solvers. The unconverged columns are moved to the front of
/// `r` in place and that window is handed to `precond`: no second residual block.
fn correct_or_finish(
    theta: &Tensor,
    r: Tensor,
    ritz: impl FnOnce() -> Result<Tensor>,
    opts: &SolverOptions,
    progress: (usize, usize),
    precond: &mut impl FnMut(&Tensor, &[f64]) -> Result<Tensor>,
) -> Result<std::result::Result<Tensor, Eigenpairs>> {
    let (iteration, applications) = progress;
    let norms = column_norms(&r)?;
    let open: Vec<usize> = (0..opts.nev)
        .filter(|&b| unconverged(norms[b], opts.tol))
        .collect();
    if let Some(done) = stopping(&open, opts.nconv, iteration, opts.max_iter) {
        drop(r);
        return Ok(Err(Eigenpairs {
            // Shared, not copied: the caller drops its own handles.
            values: theta.share(),
            vectors: ritz()?,
            converged: done,
            residual_norms: norms,
            iterations: iteration,
            applications,
        }));
    }
    let th = host_values(theta)?;
    let open_theta: Vec<f64> = open.iter().map(|&b| th[b]).collect();
    let open_r = gather_columns_(&r, &open)?;
    drop(r);
    Ok(Ok(precond(&open_r, &open_theta)?))
}

/// The columns `cols` (ascending) of the block `r` moved, in order, to its first
/// `cols.len()` columns, and that window of `r` returned: a view with `r`'s row stride,
/// no second block. The moves go a slab of rows at a time through a slab-sized copy
/// (about [`SLAB`] entries), so a source column is never read after it is written.
fn gather_columns_(r: &Tensor, cols: &[usize]) -> Result<Tensor> {
    let (n, m) = (r.dims()[0], r.dims()[1]);
    let k = cols.len();
    if cols.iter().enumerate().all(|(j, &c)| c == j) {
        // Already in place (every column, when all are open).
        return r.narrow(1, 0, k);
    }
    let rows = (SLAB / m.max(1)).max(1);
    for (start, len) in row_slabs(n, rows) {
        let slab = r.narrow(0, start, len)?;
        let picked = slab.take(1, cols)?;
        slab.narrow(1, 0, k)?.assign(&picked)?;
    }
    r.narrow(1, 0, k)
}

/// Makes the columns of the block `t` (`[n, m]`, `m ≤ n`) orthonormal, in place, spanning
/// what they spanned.
///
/// Cholesky QR: with the columns scaled to unit norm (`D`), the Gram matrix
/// `D tᴴt D = Rᴴ R` gives `t ← t · D R⁻¹`, one `m × m` factor applied a slab of rows at a
/// time ([`Tensor::matmul_right_`]): two gemms and no second block, where Householder
/// QR copies the block twice. Cholesky QR squares the condition number, so it is taken
/// only when the scaled columns are far from dependent (every diagonal entry of `R` at
/// least ε^¼, about 1e-4 in f64: the orthogonality lost is then at most about √ε, and
/// the solvers orthonormalise twice when it may have been); otherwise, and for a
/// non-finite or not-positive-definite Gram matrix, Householder QR ([`qr`]) does it.
fn orthonormalize_(t: &mut Tensor) -> Result<()> {
    orthonormalize_measured_(t, false).map(|_| ())
}

/// [`orthonormalize_`], returning what the Gram matrix said when Cholesky QR did it
/// (`None` when Householder QR did); its condition number only when `measure` asks for
/// it (see [`cholesky_qr`]).
fn orthonormalize_measured_(t: &mut Tensor, measure: bool) -> Result<Option<GramSummary>> {
    match cholesky_qr(t, measure)? {
        Some((factor, summary)) => {
            t.matmul_right_(&factor)?;
            Ok(Some(summary))
        }
        None => {
            let q = qr(t, QrMode::Reduced)?.0;
            t.assign(&q)?;
            Ok(None)
        }
    }
}

/// What the Gram matrix `G = tᴴt` of a block said before Cholesky QR orthonormalised it.
#[derive(Clone, Debug, PartialEq)]
struct GramSummary {
    /// `G`'s diagonal: the squared column norms.
    norms2: Vec<f64>,
    /// The condition number of `D G D`, `D` the inverse column norms (the square of the
    /// unit columns' condition number, which Cholesky QR's loss of orthogonality
    /// grows with); infinite when it was not measured.
    condition: f64,
}

/// The largest [`GramSummary::condition`] at which one pass of Cholesky QR is trusted:
/// its loss of orthogonality grows as ε times that condition number (Yamamoto et al.,
/// ETNA 44 (2015) 306), so about 1e-14 in f64 and 1e-5 in f32 here. The Davidson
/// corrections of a plane-wave SCF fall below it 98 % of the time (silicon, 8 bands:
/// a median of 4.4, a largest of 580).
const ONE_PASS_CONDITION: f64 = 100.0;

/// Makes the columns of `t` orthonormal and orthogonal to the orthonormal columns of
/// `basis`, in place: `t ← t − basis (basisᴴ t)` and then [`orthonormalize_`], once or
/// twice. The second pass is skipped only when the first provably did not need it (the
/// criterion of Daniel, Gragg, Kaufman & Stewart, Math. Comp. 30 (1976) 772, that
/// "twice is enough" rests on): every column kept at least `1/√2` of its norm through the
/// projection, so the rounding left along `basis` is a few ε of what remains, and the
/// projected columns were far from dependent (Cholesky QR, with a
/// [`GramSummary::condition`] of at most [`ONE_PASS_CONDITION`]). Preconditioned
/// residuals mostly pass, and the pass skipped is two block gemms and a Cholesky QR.
/// Returns the passes taken (1 or 2).
fn orthogonalize_against_(basis: &Tensor, t: &mut Tensor) -> Result<usize> {
    let before = column_norms(t)?;
    for pass in 1..=2 {
        let coef = matmul_op(basis, Trans::C, t, Trans::N)?;
        sub_product_(basis, &coef, t)?;
        // Only the first pass's condition number decides anything.
        let summary = orthonormalize_measured_(t, pass == 1)?;
        if pass == 1 && summary.is_some_and(|s| one_pass_is_enough(&before, &s)) {
            return Ok(1);
        }
    }
    Ok(2)
}

/// Whether `a` and `b` are the same elements of the same memory: what a preconditioner
/// that worked in place returns (then nothing is copied back).
fn same_place(a: &Tensor, b: &Tensor) -> bool {
    a.dtype() == b.dtype()
        && a.device() == b.device()
        && a.dims() == b.dims()
        && a.strides() == b.strides()
        && a.data_ptr() == b.data_ptr()
}

/// `t −= basis · coef`. When `t` lies in the basis's own storage (its spare columns),
/// a slab of rows at a time through a slab-sized product: one gemm into `t` would copy
/// the whole basis first, as every op writing into memory it reads does.
fn sub_product_(basis: &Tensor, coef: &Tensor, t: &mut Tensor) -> Result<()> {
    if !t.shares_memory_with(basis) {
        return matmul_into(basis, Trans::N, coef, Trans::N, -1.0, 1.0, t);
    }
    let (n, m) = (t.dims()[0], t.dims()[1]);
    let rows = (RESIDUAL_SLAB / m.max(1)).max(1);
    for (start, len) in row_slabs(n, rows) {
        let p = matmul(&basis.narrow(0, start, len)?, coef)?;
        t.narrow(0, start, len)?.sub_(&p)?;
    }
    Ok(())
}

/// Whether a projection that took columns of norms `before` to the Gram matrix
/// summarised by `after` needs no second pass (see [`orthogonalize_against_`]); false
/// for anything non-finite.
fn one_pass_is_enough(before: &[f64], after: &GramSummary) -> bool {
    before.len() == after.norms2.len()
        && after.condition <= ONE_PASS_CONDITION
        && before
            .iter()
            .zip(&after.norms2)
            .all(|(&b, &a2)| b.is_finite() && a2.is_finite() && 2.0 * a2 >= b * b)
}

/// The factor `D R⁻¹` of [`orthonormalize_`]'s Cholesky QR and what the Gram matrix
/// said, or `None` when Householder QR should do it. The condition number (an `m × m`
/// `eigvalsh`) is computed only when `measure` asks for it, and is infinite otherwise.
fn cholesky_qr(t: &Tensor, measure: bool) -> Result<Option<(Tensor, GramSummary)>> {
    let m = t.dims()[1];
    if m == 0 {
        return Ok(None);
    }
    let g = matmul_op(t, Trans::C, t, Trans::N)?;
    let real = t.dtype().real_type();
    let diag: Vec<f64> = host_values(&g.diagonal()?.real()?)?;
    if !diag.iter().all(|d| d.is_finite() && *d > 0.0) {
        return Ok(None);
    }
    let scale: Vec<f64> = diag.iter().map(|d| 1.0 / d.sqrt()).collect();
    let s = Tensor::from_slice(&scale, &[m])?
        .cast(real)?
        .to_device(t.device())?;
    // D G D, exactly Hermitian.
    let gs = hermitian(&g.mul(&s.unsqueeze(1)?)?.mul(&s.unsqueeze(0)?)?)?;
    let Ok(r) = cholesky(&gs, Uplo::Upper) else {
        return Ok(None);
    };
    let eps = if matches!(real, DataType::Float) {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    let r_diag = host_values(&r.diagonal()?.real()?)?;
    if !r_diag.iter().all(|d| d.is_finite() && *d >= eps.powf(0.25)) {
        return Ok(None);
    }
    // Its extreme eigenvalues (of an m × m matrix: little beside the n·m² gemms).
    let condition = if measure {
        let lambda = host_values(&eigvalsh(&gs, EighRange::All, EigBackend::default())?)?;
        match (lambda.first(), lambda.last()) {
            (Some(&lo), Some(&hi)) if lo > 0.0 => hi / lo,
            _ => f64::INFINITY,
        }
    } else {
        f64::INFINITY
    };
    let r_inv = tri_inverse(&r, Uplo::Upper, Diag::NonUnit)?;
    let factor = r_inv.mul(&s.unsqueeze(1)?)?;
    Ok(Some((
        factor,
        GramSummary {
            norms2: diag,
            condition,
        },
    )))
}

/// The factor `D R⁻¹` of [`orthonormalize_`]'s Cholesky QR, or `None` when Householder
/// QR should do it.
#[cfg(test)]
fn cholesky_qr_factor(t: &Tensor) -> Result<Option<Tensor>> {
    Ok(cholesky_qr(t, false)?.map(|(f, _)| f))
}

/// `(A + Aᴴ)/2`: a projected matrix made exactly Hermitian, whatever rounding did
/// (`eigh` reads one triangle).
fn hermitian(a: &Tensor) -> Result<Tensor> {
    a.add(&a.t()?.conj()?)?.mul_scalar(0.5)
}
