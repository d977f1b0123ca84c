//! Block Davidson with soft locking and thick restarts from the Ritz vectors.

use ctensor_aten::{
    eigh, matmul, matmul_op, qr, EigBackend, EighRange, GrowableTensor, QrMode, Result, Tensor,
    Trans,
};

use super::{check, correct_or_finish, Eigenpairs, SolverOptions};

/// The `opts.nev` lowest eigenpairs of the Hermitian operator `op` (`H · X` for a block
/// of columns `X`) by block Davidson, from the start block `x0` (`[n, nev]`, need not be
/// orthonormal), with the preconditioner `precond(residuals, ritz_values)` applied to the
/// residual columns of the unconverged pairs.
///
/// Each iteration is one Rayleigh–Ritz step on the basis `V` (orthonormal columns, `HV`
/// kept beside it): the lowest `nev` pairs of `Vᴴ H V`, their residuals, and for the
/// pairs whose residual norm exceeds `opts.tol` a preconditioned correction,
/// orthogonalised twice against `V` and orthonormalised. When `V` would exceed
/// `opts.max_basis` columns it restarts from the current Ritz vectors. After
/// `opts.max_iter` iterations it returns the current pairs with `converged: false`:
/// an SCF loop wants the improved vectors, not an error; a caller that needs
/// convergence checks the flag.
///
/// Errors: a start block that is not `[n, nev]` with `1 ≤ nev ≤ n`, a non-floating
/// dtype, a tolerance that is not finite and positive, and whatever `op` or `precond`
/// return (their errors are passed through unchanged).
pub fn davidson(
    mut op: impl FnMut(&Tensor) -> Result<Tensor>,
    mut precond: impl FnMut(&Tensor, &[f64]) -> Result<Tensor>,
    x0: &Tensor,
    opts: SolverOptions,
) -> Result<Eigenpairs> {
    let (n, nev) = check("davidson", x0, &opts)?;
    let max_basis = opts.max_basis.clamp((2 * nev).min(n), n.max(1));
    let new_basis = || GrowableTensor::new(x0.dtype(), x0.device(), &[n, 0], 1, max_basis);
    let (mut v, mut hv) = (new_basis()?, new_basis()?);
    let x = qr(x0, QrMode::Reduced)?.0;
    hv.push(&op(&x)?)?;
    v.push(&x)?;
    let mut applications = nev;
    let mut iteration = 0;
    loop {
        iteration += 1;
        // Rayleigh–Ritz on the subspace: the lowest nev pairs of Vᴴ H V.
        let (basis, h_basis) = (v.view()?, hv.view()?);
        let s = matmul_op(&basis, Trans::C, &h_basis, Trans::N)?;
        let (theta, y) = eigh(&s, EighRange::Index(0, nev), EigBackend::default())?;
        let (x, hx) = (matmul(&basis, &y)?, matmul(&h_basis, &y)?);
        let mut t = match correct_or_finish(
            &theta,
            &x,
            &hx,
            &opts,
            (iteration, applications),
            &mut precond,
        )? {
            Ok(correction) => correction,
            Err(done) => return Ok(done),
        };
        let added = t.dims()[1];
        if v.len() + added > max_basis {
            v.clear();
            hv.clear();
            v.push(&x)?;
            hv.push(&hx)?;
        }
        let basis = v.view()?;
        for _ in 0..2 {
            t = t.sub(&matmul(
                &basis,
                &matmul_op(&basis, Trans::C, &t, Trans::N)?,
            )?)?;
            t = qr(&t, QrMode::Reduced)?.0;
        }
        hv.push(&op(&t)?)?;
        v.push(&t)?;
        applications += added;
    }
}
