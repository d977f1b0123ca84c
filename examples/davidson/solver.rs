//! The block Davidson solver of `examples/davidson/main.rs`, written only with public
//! ctensor ops; also used by the band-structure demo's `--solver davidson`.
#![allow(dead_code)]

use ctensor::{
    eigh, matmul, matmul_op, qr, DataType, EigBackend, EighRange, GrowableTensor, NormOrd, QrMode,
    Result, Tensor, Trans,
};

/// Settings of [`davidson`].
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Eigenpairs wanted (the lowest).
    pub nev: usize,
    /// A pair is converged when ‖H x − θ x‖ ≤ tol · max(1, |θ|).
    pub tol: f64,
    /// Basis size at which the subspace restarts from the current Ritz vectors.
    pub max_basis: usize,
    /// Iterations before giving up.
    pub max_iter: usize,
    /// The preconditioner divides a residual by `|diag − θ| + floor`: the floor keeps it
    /// bounded where a diagonal entry meets an eigenvalue.
    pub floor: f64,
}

/// What [`davidson`] found: eigenvalues (ascending), eigenvectors (columns), and the
/// iterations and operator applications it took.
pub struct Found {
    pub values: Tensor,
    pub vectors: Tensor,
    pub iterations: usize,
    pub applications: usize,
}

/// The `opts.nev` lowest eigenpairs of the Hermitian operator `h` (`H · X` for a block of
/// columns `X`), from the start block `x0` (`[n, nev]`), preconditioned with the diagonal
/// of `H` (`diag`, real, `[n]`).
pub fn davidson(
    h: impl Fn(&Tensor) -> Result<Tensor>,
    diag: &Tensor,
    x0: &Tensor,
    opts: Options,
) -> Result<Found> {
    let (n, nev) = (x0.dims()[0], opts.nev);
    let new_basis = || GrowableTensor::new(x0.dtype(), x0.device(), &[n, 0], 1, opts.max_basis);
    let (mut v, mut hv) = (new_basis()?, new_basis()?);
    let x = qr(x0, QrMode::Reduced)?.0;
    v.push(&x)?;
    hv.push(&h(&x)?)?;
    let mut applications = nev;
    for iteration in 1..=opts.max_iter {
        // Rayleigh–Ritz on the subspace: the lowest nev pairs of Vᴴ H V.
        let (basis, h_basis) = (v.view()?, hv.view()?);
        let s = matmul_op(&basis, Trans::C, &h_basis, Trans::N)?;
        let (theta, y) = eigh(&s, EighRange::Index(0, nev), EigBackend::default())?;
        let (x, hx) = (matmul(&basis, &y)?, matmul(&h_basis, &y)?);
        let r = (&hx - (&x * &theta)?)?;
        let norms = r.vector_norm(&[0], NormOrd::Two)?.cast(DataType::Double)?;
        // Soft locking: only the unconverged bands get a correction.
        let (th, rn) = (
            theta.cast(DataType::Double)?.to_vec::<f64>()?,
            norms.to_vec::<f64>()?,
        );
        let open: Vec<usize> = (0..nev)
            .filter(|&b| rn[b] > opts.tol * th[b].abs().max(1.0))
            .collect();
        if open.is_empty() {
            return Ok(Found {
                values: theta,
                vectors: x,
                iterations: iteration,
                applications,
            });
        }
        // Preconditioned residuals t = r / (|diag − θ| + floor), then orthonormal to V.
        let shift = (&diag.unsqueeze(1)? - &theta.take(0, &open)?.unsqueeze(0)?)?.abs()?;
        let mut t = (&r.take(1, &open)? / (&shift + opts.floor)?)?;
        if v.len() + open.len() > opts.max_basis {
            v.clear();
            hv.clear();
            v.push(&x)?;
            hv.push(&hx)?;
        }
        let basis = v.view()?;
        for _ in 0..2 {
            t = (&t - matmul(&basis, &matmul_op(&basis, Trans::C, &t, Trans::N)?)?)?;
            t = qr(&t, QrMode::Reduced)?.0;
        }
        hv.push(&h(&t)?)?;
        v.push(&t)?;
        applications += open.len();
    }
    Err(ctensor::Error::InvalidArgument {
        op: "davidson",
        expected: format!("convergence within {} iterations", opts.max_iter),
        given: "a problem that needs more (raise --max-iter or the basis size)".into(),
    })
}
