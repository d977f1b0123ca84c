//! Block Davidson with soft locking and thick restarts from the Ritz vectors.

use ctensor_aten::{
    cat, eigh, matmul, matmul_op, EigBackend, EighRange, GrowableTensor, Result, Tensor, Trans,
};

use super::{
    check, hermitian, host_values, orthogonalize_against_, orthonormalize_, residuals_into_spare,
    same_place, stopping, Eigenpairs, RitzBlock, SolverOptions,
};

/// The `opts.nev` lowest eigenpairs of the Hermitian operator `op` (`H · X` for a block
/// of columns `X`) by block Davidson, from the start block `x0` (`[n, nev]`, need not be
/// orthonormal), with the preconditioner `precond(residuals, ritz_values)` applied to the
/// residual columns of the unconverged pairs (the lowest of them that fit in the basis
/// before a restart).
///
/// Each iteration is one Rayleigh–Ritz step on the basis `V` (orthonormal columns, `HV`
/// kept beside it): the lowest `nev` pairs of `Vᴴ H V`, their residuals, and for the
/// pairs whose residual norm exceeds `opts.tol` a preconditioned correction,
/// orthogonalised against `V` and orthonormalised (twice, unless the first pass kept
/// most of each column's norm and left well-conditioned columns, when a second would
/// change nothing beyond rounding). When `V` would exceed
/// `opts.max_basis` columns it restarts from the current Ritz vectors. After
/// `opts.max_iter` iterations it returns the current pairs with `converged: false`:
/// an SCF loop wants the improved vectors, not an error; a caller that needs
/// convergence checks the flag.
///
/// Memory: the basis and `H V` (`opts.max_basis` columns each, reserved once), and
/// `H` times the new columns ([`davidson_into`] makes that where it is kept). Each
/// step's residuals are formed in the basis's spare columns, a slab of rows at a time;
/// the converged ones are dropped, and the unconverged ones that fit (the lowest) are
/// handed to `precond` there, orthogonalised and kept there as the corrections. The
/// start block is copied into the basis before `H V` is reserved. So `op` is given a
/// view of columns of the basis (a row stride of the basis's capacity), which it must
/// only read. A restart rotates the basis in place, and the Ritz vectors are formed
/// only when the solver returns, after `H V` is freed. The block `precond` returns is
/// the solver's: returning the residual window itself, `Ok(r.share())`, saves a copy;
/// another block is copied into the window. [`davidson_owned`] also frees the start
/// block.
///
/// Errors: a start block that is not `[n, nev]` with `1 ≤ nev ≤ n`, a non-floating
/// dtype, a tolerance that is not finite and positive, and whatever `op` or `precond`
/// return (their errors are passed through unchanged).
pub fn davidson(
    op: impl FnMut(&Tensor) -> Result<Tensor>,
    precond: impl FnMut(&Tensor, &[f64]) -> Result<Tensor>,
    x0: &Tensor,
    opts: SolverOptions,
) -> Result<Eigenpairs> {
    davidson_owned(op, precond, x0.share(), opts)
}

/// [`davidson`] taking the start block by value: the solver drops it as soon as it is
/// copied into the basis, so when no other handle shares its memory that memory is
/// freed for the whole solve. An SCF loop that keeps only the latest bands of each
/// k-point hands them over and holds one block fewer while the solver runs (25 MB for
/// 132 real bands of 24 000 plane waves). Same results and errors as [`davidson`].
pub fn davidson_owned(
    mut op: impl FnMut(&Tensor) -> Result<Tensor>,
    precond: impl FnMut(&Tensor, &[f64]) -> Result<Tensor>,
    x0: Tensor,
    opts: SolverOptions,
) -> Result<Eigenpairs> {
    davidson_into(|x, out| out.assign(&op(x)?), precond, x0, opts)
}

/// [`davidson_owned`] with an operator that writes `H · X` into a block it is given,
/// `op_into(x, out)`: `out` is the next columns of the solver's `H V` (a window of its
/// storage, `[n, m]` with the row stride of the basis's capacity), so no block of the
/// operator's own is made beside `H V` (27 MB for 132 real bands of 24 000 plane waves).
/// What `out` holds before the call is unspecified (zeros, or columns of an earlier
/// basis): the operator must write every element. It must not keep `out` or write
/// anywhere else. Same results and errors as [`davidson`].
pub fn davidson_into(
    mut op_into: impl FnMut(&Tensor, &mut Tensor) -> Result<()>,
    mut precond: impl FnMut(&Tensor, &[f64]) -> Result<Tensor>,
    x0: Tensor,
    opts: SolverOptions,
) -> Result<Eigenpairs> {
    let (n, nev) = check("davidson", &x0, &opts)?;
    let max_basis = opts.max_basis.clamp((2 * nev).min(n), n.max(1));
    let (dtype, device) = (x0.dtype(), x0.device());
    let new_basis = || GrowableTensor::new(dtype, device, &[n, 0], 1, max_basis);
    // The start block is orthonormalised where it lands in the basis: no copy of it
    // beside the basis, and the caller's block is only read. H V is reserved once the
    // start block is freed, so the two never exist beside it.
    let mut v = new_basis()?;
    v.push(&x0)?;
    drop(x0);
    let mut hv = new_basis()?;
    orthonormalize_(&mut v.view()?)?;
    let x = v.view()?;
    hv.push_with(nev, |out| op_into(&x, out))?;
    // The projected matrix Vᴴ H V, grown by the new columns' block each iteration
    // instead of recomputed (that gemm, n·m², was most of the subspace work).
    let mut s = hermitian(&matmul_op(&x, Trans::C, &hv.view()?, Trans::N)?)?;
    drop(x);
    let mut applications = nev;
    let mut iteration = 0;
    // Corrections added by the last iteration: the restart below expects as many.
    let mut expected = nev;
    loop {
        iteration += 1;
        // Rayleigh–Ritz on the subspace: the lowest nev pairs of Vᴴ H V.
        let (theta, y) = eigh(&s, EighRange::Index(0, nev), EigBackend::default())?;
        // Restart from the Ritz vectors when this step's corrections would not fit: the
        // basis and H times it are rotated in place (V ← V Y), so the Ritz block X and
        // H X never exist beside them. Otherwise the residual is H V Y − V Y Θ, by two
        // gemms. Either way it is formed in the basis's spare columns, where the
        // corrections will be kept, not in a block of its own.
        let restart = v.len() > nev && v.len() + expected > max_basis;
        let y_theta = if restart {
            None
        } else {
            Some(y.mul(&theta.unsqueeze(0)?)?)
        };
        let (basis, h_basis) = if restart {
            v.matmul_right_(&y)?;
            hv.matmul_right_(&y)?;
            let (x, hx) = (v.view()?, hv.view()?);
            s = hermitian(&matmul_op(&x, Trans::C, &hx, Trans::N)?)?;
            (x, hx)
        } else {
            (v.view()?, hv.view()?)
        };
        let ritz_block = match &y_theta {
            None => RitzBlock::Rotated {
                x: &basis,
                hx: &h_basis,
                theta: &theta,
            },
            Some(y_theta) => RitzBlock::Combined {
                v: &basis,
                hv: &h_basis,
                y: &y,
                y_theta,
            },
        };
        let spare = v.spare()?;
        let (norms, open, added) = residuals_into_spare(&ritz_block, (n, nev), &spare, opts.tol)?;
        drop((h_basis, y_theta));
        // A basis that already spans the whole space (nev = n) cannot take more.
        let room = max_basis - v.len();
        let max_iter = if room == 0 { iteration } else { opts.max_iter };
        if let Some(done) = stopping(&open, opts.nconv, iteration, max_iter) {
            // H V is not returned: freed before the Ritz vectors are formed, so they are
            // never made beside both the basis and H V.
            drop((spare, hv));
            return Ok(Eigenpairs {
                values: theta.share(),
                vectors: if restart {
                    basis.contiguous()?
                } else {
                    matmul(&basis, &y)?
                },
                converged: done,
                residual_norms: norms,
                iterations: iteration,
                applications,
            });
        }
        drop(basis);
        // The unconverged pairs that fit (the lowest ones, in order) lie at the front of
        // the spare columns; the preconditioner gets that window and may overwrite it.
        expected = open.len();
        let th = host_values(&theta)?;
        let open_theta: Vec<f64> = open[..added].iter().map(|&b| th[b]).collect();
        let mut t = spare.narrow(1, 0, added)?;
        drop(spare);
        let got = precond(&t, &open_theta)?;
        if !same_place(&got, &t) {
            t.assign(&got)?;
        }
        drop(got);
        // t -= V (Vᴴ t), in place, then orthonormal columns; twice unless once is enough.
        // Then they are the basis's next columns, and H is applied to them there, into
        // H V's next columns: no block of the corrections or of H's result beside them.
        orthogonalize_against_(&v.view()?, &mut t)?;
        drop(t);
        v.commit(added)?;
        let new = v.view()?.narrow(1, v.len() - added, added)?;
        hv.push_with(added, |out| op_into(&new, out))?;
        drop(new);
        let ht = hv.view()?.narrow(1, hv.len() - added, added)?;
        // The new rows and columns of Vᴴ H V: [S, B; Bᴴ, D] with B = V_oldᴴ H T and
        // D = Tᴴ H T (H is Hermitian, so the lower block is B's adjoint).
        let m = s.dims()[0];
        let block = matmul_op(&v.view()?, Trans::C, &ht, Trans::N)?;
        let (b, d) = (
            block.narrow(0, 0, m)?,
            hermitian(&block.narrow(0, m, added)?)?,
        );
        let top = cat(&[&s, &b], 1)?;
        let bottom = cat(&[&b.t()?.conj()?, &d], 1)?;
        s = cat(&[&top, &bottom], 0)?;
        applications += added;
    }
}
