//! LOBPCG (Knyazev, SIAM J. Sci. Comput. 23, 517 (2001)) in its robust form: every block
//! of the subspace `[X, W, P]` is made orthonormal before the Rayleigh–Ritz step, so the
//! projected problem is a standard `eigh`, and directions that have become linearly
//! dependent (a converged `P`, a vanishing residual) are dropped instead of breaking a
//! Cholesky factorisation.

use ctensor_aten::{
    cat, eigh, matmul, matmul_op, DataType, EigBackend, EighRange, Result, Tensor, Trans,
};

use super::{
    check, correct_or_finish, hermitian, host_values, residual, Eigenpairs, SolverOptions,
};

/// Relative size below which a direction of a block's Gram matrix counts as dependent
/// (a singular value below about 1e-6 of the largest in f64, 3e-3 in f32).
fn drop_below(dtype: DataType) -> f64 {
    if matches!(dtype, DataType::Float | DataType::ComplexFloat) {
        1e-5
    } else {
        1e-12
    }
}

/// The `opts.nev` lowest eigenpairs of the Hermitian operator `op` by LOBPCG, from the
/// start block `x0` (`[n, nev]`), with `precond(residuals, ritz_values)` as in
/// [`davidson`](super::davidson). `opts.max_basis` is not used (the subspace is at most
/// `3·nev` columns). Converged pairs are locked softly: they get no new search
/// direction but stay in the subspace. Returns `converged: false` after `opts.max_iter`
/// iterations, with the current pairs.
///
/// `H` is applied once per iteration, to the new search directions only: `H P` is
/// carried along as the same linear combination as `P`.
///
/// Errors: as [`davidson`](super::davidson).
pub fn lobpcg(
    mut op: impl FnMut(&Tensor) -> Result<Tensor>,
    mut precond: impl FnMut(&Tensor, &[f64]) -> Result<Tensor>,
    x0: &Tensor,
    opts: SolverOptions,
) -> Result<Eigenpairs> {
    let (_, nev) = check("lobpcg", x0, &opts)?;
    let (mut x, _) = orthonormalize(x0, None)?;
    if x.dims()[1] < nev {
        return Err(ctensor_aten::Error::InvalidArgument {
            op: "lobpcg",
            expected: format!("a start block of rank nev = {nev}"),
            given: format!("rank {}", x.dims()[1]),
        });
    }
    let mut hx = op(&x)?;
    let mut applications = nev;
    let mut p: Option<(Tensor, Tensor)> = None;
    // The Ritz pairs of the start block itself.
    let (theta, y) = rayleigh_ritz(&x, &hx, nev)?;
    x = matmul(&x, &y)?;
    hx = matmul(&hx, &y)?;
    let mut theta = theta;
    let mut iteration = 0;
    loop {
        iteration += 1;
        let mut w = match correct_or_finish(
            &theta,
            residual(&theta, &x, &hx)?,
            || Ok(x.share()),
            &opts,
            (iteration, applications),
            &mut precond,
        )? {
            Ok(correction) => correction,
            Err(done) => return Ok(done),
        };
        // P orthonormal and orthogonal to X (H P follows the same combinations).
        if let Some((pb, hpb)) = p.take() {
            let (pb, hpb) = project_out(&x, Some(&hx), &pb, Some(&hpb))?;
            let (pb, hpb) = orthonormalize(&pb, hpb.as_ref())?;
            if pb.dims()[1] > 0 {
                p = Some((pb, hpb.expect("H P is carried with P")));
            }
        }
        // W orthogonal to X and P, then orthonormal; H is applied to it once.
        for _ in 0..2 {
            w = project_out(&x, None, &w, None)?.0;
            if let Some((pb, _)) = &p {
                w = project_out(pb, None, &w, None)?.0;
            }
        }
        let w = orthonormalize(&w, None)?.0;
        let nw = w.dims()[1];
        let hw = if nw > 0 { op(&w)? } else { w.clone() };
        applications += nw;
        // Rayleigh–Ritz on [X, W, P].
        let mut blocks = vec![&x, &w];
        let mut h_blocks = vec![&hx, &hw];
        if let Some((pb, hpb)) = &p {
            blocks.push(pb);
            h_blocks.push(hpb);
        }
        let s = cat(&blocks, 1)?;
        let hs = cat(&h_blocks, 1)?;
        let (new_theta, y) = rayleigh_ritz(&s, &hs, nev)?;
        let rest = s.dims()[1] - nev;
        let y_rest = y.narrow(0, nev, rest)?;
        let s_rest = s.narrow(1, nev, rest)?;
        let hs_rest = hs.narrow(1, nev, rest)?;
        p = if rest > 0 {
            Some((matmul(&s_rest, &y_rest)?, matmul(&hs_rest, &y_rest)?))
        } else {
            None
        };
        x = matmul(&s, &y)?;
        hx = matmul(&hs, &y)?;
        theta = new_theta;
    }
}

/// The lowest `nev` eigenpairs of `Sᴴ H S` for an orthonormal `S`.
fn rayleigh_ritz(s: &Tensor, hs: &Tensor, nev: usize) -> Result<(Tensor, Tensor)> {
    let m = hermitian(&matmul_op(s, Trans::C, hs, Trans::N)?)?;
    eigh(&m, EighRange::Index(0, nev), EigBackend::default())
}

/// `B − Q (Qᴴ B)` (and the same combination of `H Q` for `H B`) for orthonormal `Q`.
fn project_out(
    q: &Tensor,
    hq: Option<&Tensor>,
    b: &Tensor,
    hb: Option<&Tensor>,
) -> Result<(Tensor, Option<Tensor>)> {
    let c = matmul_op(q, Trans::C, b, Trans::N)?;
    let b = b.sub(&matmul(q, &c)?)?;
    let hb = match (hq, hb) {
        (Some(hq), Some(hb)) => Some(hb.sub(&matmul(hq, &c)?)?),
        _ => None,
    };
    Ok((b, hb))
}

/// Orthonormal columns spanning `b` through the eigendecomposition of its Gram matrix,
/// `B U Λ^{-1/2}`, keeping the directions with `λ > drop · λ_max` (twice, so that the
/// result is orthonormal to rounding even when `b` was badly conditioned). The same
/// combinations are applied to `hb`, so `H B` follows without applying `H`.
fn orthonormalize(b: &Tensor, hb: Option<&Tensor>) -> Result<(Tensor, Option<Tensor>)> {
    let (mut b, mut hb) = (b.clone(), hb.cloned());
    for _ in 0..2 {
        if b.dims()[1] == 0 {
            break;
        }
        let g = hermitian(&matmul_op(&b, Trans::C, &b, Trans::N)?)?;
        let (lam, u) = eigh(&g, EighRange::All, EigBackend::default())?;
        let l = host_values(&lam)?;
        let top = l.iter().cloned().fold(0.0_f64, f64::max);
        let keep: Vec<usize> = (0..l.len())
            .filter(|&i| l[i] > drop_below(b.dtype()) * top && top > 0.0)
            .collect();
        let scale: Vec<f64> = keep.iter().map(|&i| 1.0 / l[i].sqrt()).collect();
        let real = if matches!(b.dtype(), DataType::Float | DataType::ComplexFloat) {
            DataType::Float
        } else {
            DataType::Double
        };
        let scale = Tensor::from_slice(&scale, &[1, keep.len()])?
            .cast(real)?
            .to_device(b.device())?;
        let c = u.take(1, &keep)?.mul(&scale)?;
        b = matmul(&b, &c)?;
        hb = match hb {
            Some(h) => Some(matmul(&h, &c)?),
            None => None,
        };
    }
    Ok((b, hb))
}
