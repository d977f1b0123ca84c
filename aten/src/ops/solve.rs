//! Linear systems beyond `solve`: [`solve_triangular`] (BLAS `?trsm`, several right-hand
//! sides), [`cholesky_solve`] (with the factor of [`cholesky`](crate::cholesky)),
//! [`lstsq`] (least squares through QR, as LAPACK `?gels`), and [`det`] / [`slogdet`]
//! through LU. CPU and GPU alike; right-hand sides are `[n]` or `[n, k]`.

use ctensor_base::{c64, DataType, Error, Result, Scalar};
use ctensor_kernels::blas::{BlasTrsm, Side, Trans};
use ctensor_kernels::lapack::{Diag, LapackGetrf, Part, Uplo};

use super::linalg::{col_major, in_order_of, require_finite_matrix, square};
use super::matmul::matmul_op;
use super::qr::{qr, QrMode};
use crate::core::dispatch::dispatch_blas;
use crate::core::promotion::epsilon;
use crate::core::shape::Order;
use crate::core::tensor::Tensor;

/// `b` (`[rows]` or `[rows, k]`) as a column-major `rows × k` copy in `dtype`, and `k`.
fn rhs(op: &'static str, b: &Tensor, rows: usize, dtype: DataType) -> Result<(Tensor, usize)> {
    let k = match b.dims() {
        [r] if *r == rows => 1,
        [r, k] if *r == rows => *k,
        d => {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!("a right-hand side [{rows}] or [{rows}, k]"),
                got: vec![d.to_vec()],
            })
        }
    };
    let b = if b.dtype() == dtype {
        b.share()
    } else {
        b.cast(dtype)?
    };
    Ok((
        b.reshape(&[rows as i64, k as i64])?
            .copy_in_order(Order::ColMajor)?,
        k,
    ))
}

/// `x` (column-major `rows × k`) in the shape and memory order of the right-hand side `b`.
fn like_rhs(x: Tensor, b: &Tensor) -> Result<Tensor> {
    if b.ndim() == 1 {
        return x.reshape(&[x.dims()[0] as i64]);
    }
    in_order_of(x, b)
}

/// Solves `op(A) X = B` in place in the column-major `x` (`n × k`) with the `uplo`
/// triangle of the column-major `a`.
fn trsm_in_place(a: &Tensor, uplo: Uplo, trans: Trans, diag: Diag, x: &Tensor) -> Result<()> {
    let (n, k) = (x.dims()[0], x.dims()[1]);
    let _w = x.buffer.write("trsm")?;
    let _r = a.buffer.read("trsm")?;
    dispatch_blas!(a.dtype(), a.device(), "trsm", T, D => {
        // SAFETY: `a` is dense column-major n × n (ld n) and `x` a column-major n × k array
        // of its own (ld n), both of T on this device; the guards hold them.
        unsafe {
            <D as BlasTrsm<T>>::trsm(Side::Left, uplo, trans, diag, n, k, T::one(), a.typed_ptr::<T>(), n.max(1), x.typed_ptr::<T>(), n.max(1))
        }
    })
}

/// Refuses a zero on the diagonal of a triangular matrix that is not unit (LAPACK
/// `?trtrs`'s `info > 0`): the system is singular.
fn check_diagonal(op: &'static str, a: &Tensor, diag: Diag) -> Result<()> {
    if diag == Diag::Unit || a.numel() == 0 {
        return Ok(());
    }
    let d = a
        .diagonal()?
        .cast(DataType::ComplexDouble)?
        .to_vec::<c64>()?;
    match d.iter().position(|v| v.re == 0.0 && v.im == 0.0) {
        None => Ok(()),
        Some(i) => Err(Error::Lapack {
            routine: op,
            info: i as i64 + 1,
            detail: format!(
                "the diagonal entry {} of the triangular matrix is exactly zero, so it is singular",
                i + 1
            ),
        }),
    }
}

/// `X` solving `op(A) X = B` for the triangular matrix in the `uplo` triangle of `a` (its
/// other triangle is not read; with [`Diag::Unit`] neither is its diagonal), as SciPy's
/// `solve_triangular`. `b` is `[n]` or `[n, k]`; mixed types promote. A zero on the
/// diagonal is `Error::Lapack` (singular), as LAPACK's `?trtrs` reports it.
pub fn solve_triangular(
    a: &Tensor,
    b: &Tensor,
    uplo: Uplo,
    trans: Trans,
    diag: Diag,
) -> Result<Tensor> {
    let op = "solve_triangular";
    let n = square(op, a)?;
    let p = super::promote(op, &[a, b])?;
    check_diagonal(op, &p[0], diag)?;
    let f = col_major(&p[0])?;
    let (x, _) = rhs(op, &p[1], n, p[0].dtype())?;
    trsm_in_place(&f, uplo, trans, diag, &x).map_err(|e| e.in_op(op))?;
    like_rhs(x, b)
}

/// `X` solving `A X = B` for the Hermitian positive definite `A` whose Cholesky factor
/// `factor` is given: `A = L Lᴴ` with `L` in the lower triangle ([`Uplo::Lower`]), or
/// `A = Uᴴ U` with `U` in the upper one, as [`cholesky`](crate::cholesky) returns it
/// (SciPy's `cho_solve`).
pub fn cholesky_solve(factor: &Tensor, b: &Tensor, uplo: Uplo) -> Result<Tensor> {
    let op = "cholesky_solve";
    let n = square(op, factor)?;
    let p = super::promote(op, &[factor, b])?;
    check_diagonal(op, &p[0], Diag::NonUnit)?;
    let f = col_major(&p[0])?;
    let (x, _) = rhs(op, &p[1], n, p[0].dtype())?;
    let (first, second) = match uplo {
        Uplo::Lower => (Trans::N, Trans::C),
        Uplo::Upper => (Trans::C, Trans::N),
    };
    trsm_in_place(&f, uplo, first, Diag::NonUnit, &x).map_err(|e| e.in_op(op))?;
    trsm_in_place(&f, uplo, second, Diag::NonUnit, &x).map_err(|e| e.in_op(op))?;
    like_rhs(x, b)
}

/// The least-squares solution `X` minimising `‖A X − B‖` for a tall `a` (`m ≥ n`), or the
/// minimum-norm solution of `A X = B` for a wide one, through QR (LAPACK `?gels`). `a`
/// must have full rank: a diagonal entry of `R` below `max(m, n) · ε · max|R|` is
/// `Error::IllConditioned` (use `pinv` for rank-deficient problems). NaN or infinite
/// entries of `a` are `Error::NonFinite` (see `set_check_finite`).
pub fn lstsq(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let op = "lstsq";
    let [m, n] = *a.dims() else {
        return Err(Error::NotAMatrix {
            op,
            shape: a.dims().to_vec(),
            need: "a matrix (rank 2, m × n)",
        });
    };
    let p = super::promote(op, &[a, b])?;
    // QR propagates NaN rather than failing; a solver refuses it, as `solve` does.
    require_finite_matrix(op, "a", &p[0], Part::Whole)?;
    let (b2, _) = rhs(op, &p[1], m, p[0].dtype())?;
    let full_rank = |r: &Tensor| -> Result<()> {
        let d: Vec<f64> = r.diagonal()?.abs()?.cast(DataType::Double)?.to_vec()?;
        let big = d.iter().fold(0.0f64, |x, &y| x.max(y));
        let eps = epsilon(p[0].dtype());
        let threshold = m.max(n) as f64 * eps * big;
        // NaN compares unordered and counts as deficient too.
        let deficient =
            |x: &&f64| (**x).partial_cmp(&threshold) != Some(std::cmp::Ordering::Greater);
        match d.iter().find(deficient) {
            Some(&x) if !d.is_empty() => Err(Error::IllConditioned {
                op,
                rcond: if big > 0.0 { x / big } else { 0.0 },
                threshold: m.max(n) as f64 * eps,
            }),
            _ => Ok(()),
        }
    };
    let x = if m >= n {
        // A = Q R: X = R⁻¹ (Qᴴ B).
        let (q, r) = qr(&p[0], QrMode::Reduced)?;
        full_rank(&r)?;
        let y = matmul_op(&q, Trans::C, &b2, Trans::N)?.copy_in_order(Order::ColMajor)?;
        trsm_in_place(&col_major(&r)?, Uplo::Upper, Trans::N, Diag::NonUnit, &y)
            .map_err(|e| e.in_op(op))?;
        y
    } else {
        // Aᴴ = Q R, so A = Rᴴ Qᴴ: X = Q (R⁻ᴴ B), the solution of least norm.
        let (q, r) = qr(&p[0].t()?.conj()?, QrMode::Reduced)?;
        full_rank(&r)?;
        let y = b2;
        trsm_in_place(&col_major(&r)?, Uplo::Upper, Trans::C, Diag::NonUnit, &y)
            .map_err(|e| e.in_op(op))?;
        matmul_op(&q, Trans::N, &y, Trans::N)?.copy_in_order(Order::ColMajor)?
    };
    like_rhs(x, b)
}

/// The sign and the natural logarithm of the modulus of the determinant of the square
/// `a`, through LU (NumPy's `slogdet`): `det = sign · exp(logabsdet)` without overflow.
/// For complex types the sign is a complex number of modulus 1; for a singular matrix
/// it is 0 and the logarithm −∞. Both as host values: `(sign, logabsdet)`.
pub fn slogdet(a: &Tensor) -> Result<(c64, f64)> {
    let op = "slogdet";
    let n = square(op, a)?;
    if n == 0 {
        return Ok((c64::new(1.0, 0.0), 0.0));
    }
    let lu = col_major(a)?;
    let ipiv = Tensor::new(DataType::Int, a.device(), &[n])?;
    let factored = dispatch_blas!(a.dtype(), a.device(), op, T, D => {
        let _w = (lu.buffer.write(op)?, ipiv.buffer.write(op)?);
        // SAFETY: `lu` is a fresh column-major n × n copy (ld n) and `ipiv` n integers,
        // on this device.
        let r = unsafe { <D as LapackGetrf<T>>::getrf(n, n, lu.typed_ptr::<T>(), n, ipiv.typed_ptr::<i32>()) };
        Ok::<_, Error>(r)
    })?;
    match factored {
        Ok(()) => {}
        // An exactly zero pivot: the factors are written and the determinant is zero.
        Err(Error::Lapack { info, .. }) if info > 0 => {
            return Ok((c64::new(0.0, 0.0), f64::NEG_INFINITY))
        }
        Err(e) => return Err(e.in_op(op)),
    }
    let d = lu
        .diagonal()?
        .cast(DataType::ComplexDouble)?
        .to_vec::<c64>()?;
    let piv = ipiv.to_vec::<i32>()?;
    let swaps = piv
        .iter()
        .enumerate()
        .filter(|&(i, &p)| p as usize != i + 1)
        .count();
    let mut sign = c64::new(if swaps % 2 == 0 { 1.0 } else { -1.0 }, 0.0);
    let mut log = 0.0;
    for v in d {
        let m = v.norm();
        if m == 0.0 {
            return Ok((c64::new(0.0, 0.0), f64::NEG_INFINITY));
        }
        sign *= v / m;
        log += m.ln();
    }
    Ok((sign, log))
}

/// The determinant of the square `a` through LU, as a rank-0 tensor of `a`'s type on its
/// device (0 for a singular matrix; it may overflow where [`slogdet`] does not).
pub fn det(a: &Tensor) -> Result<Tensor> {
    let (sign, log) = slogdet(a).map_err(|e| e.in_op("det"))?;
    let v = if sign.norm() == 0.0 {
        c64::new(0.0, 0.0)
    } else {
        sign * log.exp()
    };
    let t = Tensor::scalar(v)?.cast(a.dtype())?;
    t.to_device(a.device())
}
