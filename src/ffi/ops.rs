//! Ops on tensor handles: element-wise arithmetic, einsum, matmul, the eigensolvers,
//! Cholesky, triangular inverse and solve.

use std::ffi::{c_char, CStr};

use ctensor_aten::ops::einsum::{einsum, einsum_into, EinsumOptions};
use ctensor_aten::{c64, Diag, EigBackend, EighRange, Tensor, Uplo};

use super::status::{ct_status, guard, Fail};
use super::tensor::{ct_tensor, give, handle, handle_mut};

/// One element-wise binary op for the `ct_add`-style entry points below. They are
/// written out one by one (not by a macro) so that cbindgen puts each in the header.
///
/// # Safety
/// `out` is valid for a write.
pub(super) unsafe fn binary(
    name: &str,
    op: fn(&Tensor, &Tensor) -> ctensor_aten::Result<Tensor>,
    a: *const ct_tensor,
    b: *const ct_tensor,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard(name, || {
        let r = op(handle(a, "a")?, handle(b, "b")?)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, r) }
    })
}

/// `a + b` with NumPy broadcasting and type promotion (f64 with c64 is c64,
/// f32 with f64 is f64: the table in the Rust docs of `ctensor::core::promotion`), into a
/// new tensor.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_add(
    a: *const ct_tensor,
    b: *const ct_tensor,
    out: *mut *mut ct_tensor,
) -> ct_status {
    // SAFETY: forwarded contract.
    unsafe { binary("ct_add", Tensor::add, a, b, out) }
}

/// `a - b` with NumPy broadcasting and type promotion (f64 with c64 is c64,
/// f32 with f64 is f64: the table in the Rust docs of `ctensor::core::promotion`), into a
/// new tensor.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_sub(
    a: *const ct_tensor,
    b: *const ct_tensor,
    out: *mut *mut ct_tensor,
) -> ct_status {
    // SAFETY: forwarded contract.
    unsafe { binary("ct_sub", Tensor::sub, a, b, out) }
}

/// `a * b` element-wise with NumPy broadcasting and type promotion (f64 with c64 is c64,
/// f32 with f64 is f64: the table in the Rust docs of `ctensor::core::promotion`), into a
/// new tensor.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_mul(
    a: *const ct_tensor,
    b: *const ct_tensor,
    out: *mut *mut ct_tensor,
) -> ct_status {
    // SAFETY: forwarded contract.
    unsafe { binary("ct_mul", Tensor::mul, a, b, out) }
}

/// `a / b` element-wise with NumPy broadcasting and type promotion (as `ct_add`), into a
/// new tensor (integer division truncates; by zero it is an error).
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_div(
    a: *const ct_tensor,
    b: *const ct_tensor,
    out: *mut *mut ct_tensor,
) -> ct_status {
    // SAFETY: forwarded contract.
    unsafe { binary("ct_div", Tensor::div, a, b, out) }
}

/// Options of [`ct_einsum`]; [`ct_einsum_default_options`] gives the defaults.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ct_einsum_options {
    /// Non-zero: use the conjugate of the first operand.
    pub conj_x: i32,
    /// Non-zero: use the conjugate of the second operand.
    pub conj_y: i32,
    /// `alpha`, real part. `alpha` and `beta` are cast to the operands' dtype: for a
    /// real dtype their imaginary parts are dropped.
    pub alpha_re: f64,
    /// `alpha`, imaginary part.
    pub alpha_im: f64,
    /// `beta` (with `ct_einsum_into`), real part.
    pub beta_re: f64,
    /// `beta`, imaginary part.
    pub beta_im: f64,
}

/// `conj_x = conj_y = 0`, `alpha = 1`, `beta = 0`.
#[no_mangle]
pub extern "C" fn ct_einsum_default_options() -> ct_einsum_options {
    ct_einsum_options {
        conj_x: 0,
        conj_y: 0,
        alpha_re: 1.0,
        alpha_im: 0.0,
        beta_re: 0.0,
        beta_im: 0.0,
    }
}

/// The equation, the operand tensors and the options of an einsum call.
///
/// # Safety
/// `eq` is null or a NUL-terminated string; `operands` is null or valid for `n` reads;
/// `opts` is null or valid for a read.
unsafe fn einsum_args<'a>(
    eq: *const c_char,
    n: usize,
    operands: *const *const ct_tensor,
    opts: *const ct_einsum_options,
) -> Result<(&'a str, Vec<&'a Tensor>, EinsumOptions), Fail> {
    if eq.is_null() {
        return Err(Fail::Null("eq"));
    }
    // SAFETY: the caller's promise: a NUL-terminated string.
    let eq = unsafe { CStr::from_ptr(eq) }
        .to_str()
        .map_err(|_| Fail::Arg("`eq` is not UTF-8".into()))?;
    if n == 0 || operands.is_null() {
        return Err(Fail::Null("operands"));
    }
    // SAFETY: the caller's promise: `n` handle pointers.
    let ptrs = unsafe { std::slice::from_raw_parts(operands, n) };
    let ts = ptrs
        .iter()
        .map(|&p| handle(p, "operands[i]"))
        .collect::<Result<Vec<_>, _>>()?;
    let o = if opts.is_null() {
        ct_einsum_default_options()
    } else {
        // SAFETY: the caller's promise.
        unsafe { *opts }
    };
    let options = EinsumOptions {
        conj_x: o.conj_x != 0,
        conj_y: o.conj_y != 0,
        alpha: c64::new(o.alpha_re, o.alpha_im),
        beta: c64::new(o.beta_re, o.beta_im),
    };
    Ok((eq, ts, options))
}

/// Einstein summation over `n` (1 or 2) tensors into a new tensor, e.g. `"ij,kj->ik"`
/// with `conj_y` for `ψ ψᴴ`. `opts` may be null (defaults). `operands` is an array of
/// `n` handles, only read: `const ct_tensor *ops[2] = {a, b};`, or in C++ and C11 also
/// `ct_tensor *ops[2]` as the other functions return handles (C++ converts it itself;
/// for C11 the header wraps this function in a `_Generic` macro that does).
///
/// # Safety
/// `eq` is a NUL-terminated string, `operands` holds `n` handles, `opts` is null or
/// valid, `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_einsum(
    eq: *const c_char,
    n: usize,
    operands: *const *const ct_tensor,
    opts: *const ct_einsum_options,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_einsum", || {
        // SAFETY: the caller's promises.
        let (eq, ts, o) = unsafe { einsum_args(eq, n, operands, opts) }?;
        let r = einsum(eq, &ts, &o)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, r) }
    })
}

/// As [`ct_einsum`], writing `out = alpha · einsum + beta · out` into the existing
/// tensor `out` (e.g. a map over the caller's array, in either order).
///
/// # Safety
/// As for [`ct_einsum`]; `out` is a handle.
#[no_mangle]
pub unsafe extern "C" fn ct_einsum_into(
    eq: *const c_char,
    n: usize,
    operands: *const *const ct_tensor,
    opts: *const ct_einsum_options,
    out: *mut ct_tensor,
) -> ct_status {
    guard("ct_einsum_into", || {
        // SAFETY: the caller's promises.
        let (eq, ts, o) = unsafe { einsum_args(eq, n, operands, opts) }?;
        let ts: Vec<Tensor> = ts.iter().map(|t| t.share()).collect();
        let refs: Vec<&Tensor> = ts.iter().collect();
        einsum_into(eq, &refs, &o, handle_mut(out, "out")?)?;
        Ok(())
    })
}

/// `a · b` for matrices and broadcast batches of them, into a new tensor.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_matmul(
    a: *const ct_tensor,
    b: *const ct_tensor,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_matmul", || {
        let r = ctensor_aten::matmul(handle(a, "a")?, handle(b, "b")?)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, r) }
    })
}

/// Which eigenpairs `ct_eigh` returns: `kind` 0 = all, 1 = indices `lo..hi` (0-based,
/// half-open), 2 = eigenvalues in `(vl, vu]`.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ct_eig_range {
    /// 0 all, 1 index range, 2 value range.
    pub kind: i32,
    /// First index (kind 1).
    pub lo: usize,
    /// One past the last index (kind 1).
    pub hi: usize,
    /// Exclusive lower bound (kind 2).
    pub vl: f64,
    /// Inclusive upper bound (kind 2).
    pub vu: f64,
}

fn range_of(r: *const ct_eig_range) -> Result<EighRange, Fail> {
    if r.is_null() {
        return Ok(EighRange::All);
    }
    // SAFETY: non-null; the callers promise it is valid for a read.
    let r = unsafe { *r };
    match r.kind {
        0 => Ok(EighRange::All),
        1 => Ok(EighRange::Index(r.lo, r.hi)),
        2 => Ok(EighRange::Value(r.vl, r.vu)),
        k => Err(Fail::Arg(format!(
            "range kind {k} is unknown: expected 0 (all), 1 (index) or 2 (value)"
        ))),
    }
}

fn backend_of(code: i32) -> Result<EigBackend, Fail> {
    match code {
        0 => Ok(EigBackend::default()),
        1 => Ok(EigBackend::LapackEvd),
        2 => Ok(EigBackend::LapackEvr),
        3 => Ok(EigBackend::Faer),
        4 => Ok(EigBackend::Mixed),
        k => Err(Fail::Arg(format!("eigensolver backend {k} is unknown: expected 0 (default), 1 (LAPACK evd), 2 (LAPACK evr), 3 (faer) or 4 (mixed precision, eigenvalues of f64/c64 only)"))),
    }
}

fn uplo_of(c: c_char) -> Result<Uplo, Fail> {
    Ok(Uplo::from_char(c as u8 as char)?)
}

/// Eigenvalues (`w_out`, ascending, real dtype) and eigenvectors (`v_out`, as columns, in
/// `a`'s memory order; pass null for values only) of the Hermitian matrix `a` (its lower
/// triangle is read). `range` may be null (all); `backend` 0 is the default solver, 1
/// LAPACK divide and conquer, 2 LAPACK MRRR, 3 faer, 4 mixed precision (eigenvalues of
/// f64/c64 only, `v_out` null; see `EigBackend::Mixed`).
///
/// # Safety
/// `range` is null or valid; `w_out` is valid for a write; `v_out` is null or valid.
#[no_mangle]
pub unsafe extern "C" fn ct_eigh(
    a: *const ct_tensor,
    range: *const ct_eig_range,
    backend: i32,
    w_out: *mut *mut ct_tensor,
    v_out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_eigh", || {
        let (a, r, b) = (handle(a, "a")?, range_of(range)?, backend_of(backend)?);
        if w_out.is_null() {
            return Err(Fail::Null("w_out"));
        }
        if v_out.is_null() {
            let w = ctensor_aten::eigvalsh(a, r, b)?;
            // SAFETY: checked non-null; the caller's promise.
            return unsafe { give(w_out, w) };
        }
        let (w, v) = ctensor_aten::eigh(a, r, b)?;
        // SAFETY: both out-pointers non-null and valid (caller).
        unsafe {
            give(w_out, w)?;
            give(v_out, v)
        }
    })
}

/// The generalized problem `A x = λ B x` (`itype` 1), `A B x = λ x` (2) or `B A x = λ x`
/// (3) with `B` positive definite.
///
/// # Safety
/// `range` is null or valid; `w_out` and `v_out` are valid for writes.
#[no_mangle]
pub unsafe extern "C" fn ct_eigh_generalized(
    a: *const ct_tensor,
    b: *const ct_tensor,
    itype: i32,
    range: *const ct_eig_range,
    w_out: *mut *mut ct_tensor,
    v_out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_eigh_generalized", || {
        if w_out.is_null() || v_out.is_null() {
            return Err(Fail::Null(if w_out.is_null() { "w_out" } else { "v_out" }));
        }
        let (w, v) = ctensor_aten::eigh_generalized(
            handle(a, "a")?,
            handle(b, "b")?,
            itype,
            range_of(range)?,
        )?;
        // SAFETY: both out-pointers non-null and valid (caller).
        unsafe {
            give(w_out, w)?;
            give(v_out, v)
        }
    })
}

/// The Cholesky factor of `a` (`uplo` 'L': `A = L Lᴴ`, 'U': `A = Uᴴ U`), the other
/// triangle zero.
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_cholesky(
    a: *const ct_tensor,
    uplo: c_char,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_cholesky", || {
        let r = ctensor_aten::cholesky(handle(a, "a")?, uplo_of(uplo)?)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, r) }
    })
}

/// The inverse of the `uplo` triangle of `a`; `diag` 'N' or 'U' (unit diagonal).
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_tri_inverse(
    a: *const ct_tensor,
    uplo: c_char,
    diag: c_char,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_tri_inverse", || {
        let d = Diag::from_char(diag as u8 as char)?;
        let r = ctensor_aten::tri_inverse(handle(a, "a")?, uplo_of(uplo)?, d)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, r) }
    })
}

/// The solution `X` of `A X = B` (LU with partial pivoting).
///
/// # Safety
/// `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn ct_solve(
    a: *const ct_tensor,
    b: *const ct_tensor,
    out: *mut *mut ct_tensor,
) -> ct_status {
    guard("ct_solve", || {
        let r = ctensor_aten::solve(handle(a, "a")?, handle(b, "b")?)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { give(out, r) }
    })
}
