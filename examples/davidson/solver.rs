//! The examples' Davidson settings over the library's solver
//! ([`ctensor::solvers::davidson`]); also used by the band-structure demo's
//! `--solver davidson`.
#![allow(dead_code)]

use ctensor::solvers::{diagonal_preconditioner, SolverOptions};
use ctensor::{Result, Tensor};

/// Settings of [`davidson`].
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Eigenpairs wanted (the lowest).
    pub nev: usize,
    /// A pair is converged when ‖H x − θ x‖ ≤ tol (absolute, in H's units).
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

/// The `opts.nev` lowest eigenpairs of the Hermitian operator `h` from the start block
/// `x0` (`[n, nev]`), preconditioned with the diagonal of `H` (`diag`, real, `[n]`); an
/// error when they have not converged within `opts.max_iter` iterations.
pub fn davidson(
    h: impl Fn(&Tensor) -> Result<Tensor>,
    diag: &Tensor,
    x0: &Tensor,
    opts: Options,
) -> Result<Found> {
    let settings = SolverOptions {
        nev: opts.nev,
        nconv: opts.nev,
        tol: opts.tol,
        max_basis: opts.max_basis,
        max_iter: opts.max_iter,
    };
    let found =
        ctensor::solvers::davidson(h, diagonal_preconditioner(diag, opts.floor), x0, settings)?;
    if !found.converged {
        return Err(ctensor::Error::InvalidArgument {
            op: "davidson",
            expected: format!("convergence within {} iterations", opts.max_iter),
            given: "a problem that needs more (raise --max-iter or the basis size)".into(),
        });
    }
    Ok(Found {
        values: found.values,
        vectors: found.vectors,
        iterations: found.iterations,
        applications: found.applications,
    })
}
