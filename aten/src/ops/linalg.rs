//! Linear algebra on tensors: the Hermitian eigensolvers (`eigh` with a
//! choice of backend and a partial spectrum, `eigh_generalized`), `cholesky`,
//! `tri_inverse`, `solve`, `inverse` and `set_matrix`.
//!
//! Matrices may be stored in either order (row-major tensors, column-major maps over
//! Fortran arrays, transposed views); LAPACK works on a column-major copy (it overwrites
//! its input anyway), and results come back in the memory order of the input. `eigh`
//! hands a row-major Hermitian matrix over as a plain copy, read as its transpose (the
//! conjugate, upper triangle), and makes LAPACK's operands with the tails the OpenBLAS
//! over-read guard needs, so that neither it nor the guard transposes or copies again.

use ctensor_base::{c64, CpuDevice, DataType, DeviceType, Error, Result, Scalar};
use ctensor_kernels::lapack::{
    Diag, EigRange, HeevFaer, Jobz, LapackGecon, LapackGetrf, LapackGetrs, LapackHeevd,
    LapackHeevr, LapackHeevrValues, LapackHegvd, LapackHegvx, LapackPotrf, LapackTrtri, Part,
    SetMatrix, Uplo,
};

use super::einsum::{einsum, EinsumOptions};
use crate::core::dispatch::{dispatch, dispatch_blas};
use crate::core::shape::Order;
use crate::core::tensor::Tensor;

/// Which solver [`eigh`] uses on the CPU. All of them return the same eigenpairs (up to
/// the phase of each eigenvector); they differ in speed.
///
/// The default, [`Auto`](EigBackend::Auto), picks one per call from this policy,
/// measured on the 2-core development machine (`make bench`, table "eigh policy";
/// random Hermitian matrices, n = 64, 200, 500, 1000, on 1 and 2 threads, which did
/// not change the winner):
///
/// | data type | what is asked | backend |
/// |---|---|---|
/// | any | eigenvectors of at most a quarter of the spectrum (`Index` range) | `LapackEvr` |
/// | f32, f64 | anything else | `LapackEvd` |
/// | c32, c64 | anything else with eigenvectors | `Faer` |
/// | c32, c64 | eigenvalues only | `LapackEvd` |
///
/// The measured points behind it: `LapackEvr` won every case with vectors of the lowest
/// 10 % (c64 n = 500, 1 thread: 36 ms against 53 for faer and 99 for `zheevd`) and lost
/// every case of 50 % (its cost grows with the count; the quarter is where the lines
/// cross between those points). OpenBLAS's real `dsyevd` beat faer at every size; faer
/// beat `zheevd` by up to 1.8× for complex vectors; for complex eigenvalues only `zheevd`
/// tied faer on one thread (29.4 against 29.9 ms at n = 500, 234 against 238 at 1000) and
/// won on two (24.1 against 27.9 ms at n = 500). (Before `eigh` made LAPACK's operands
/// with their over-read tails, the guard's copies had given faer 9 of those 12 cases at
/// n ≥ 500.) f32 and c32 follow the rules of f64 and c64. On the GPU `Auto` and `Faer` are cuSOLVER's divide and
/// conquer, as `LapackEvd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EigBackend {
    /// Chosen per call by the policy above (range, size, data type).
    #[default]
    Auto,
    /// LAPACK divide and conquer (`?syevd` / `?heevd`); a partial range is cut from the
    /// full spectrum.
    LapackEvd,
    /// LAPACK MRRR (`?syevr` / `?heevr`), which computes only the requested range.
    LapackEvr,
    /// faer's self-adjoint eigendecomposition (pure Rust); a partial range is cut from the
    /// full spectrum.
    Faer,
    /// Eigenvalues only ([`eigvalsh`]) of an f64 or c64 matrix, in mixed precision: the
    /// requested pairs and 4 neighbours on each side are computed in f32/c32
    /// (`LapackEvr`, whose O(n³) reduction runs about twice as fast in single
    /// precision), then one Rayleigh–Ritz step in the matrix's own precision refines the
    /// eigenvalues. The refinement is checked: the refined values
    /// are grouped into clusters whose intervals `θ ± ‖r‖` overlap, and each cluster
    /// with a requested value gets the Kato–Temple estimate `Σ‖r‖² / gap` (the gap to
    /// the nearest interval outside it). When an estimate exceeds [`MIXED_TOLERANCE`]
    /// times a lower bound of ‖A‖₂ (the largest |a_ii| and |θ|), when a cluster runs
    /// past the computed neighbours, or when the matrix does not fit f32's range, the
    /// call solves again with `LapackEvr` in full precision. So the values are within
    /// that tolerance, and typically much closer: measured 1e-14 to 1e-12 of ‖A‖₂ from
    /// the full-precision values on random, clustered and the demo's matrices
    /// (`aten/tests/eig_mixed.rs`), against about 1e-16 for the other backends.
    ///
    /// For `EighRange::Index` and `All` (a value range is refused, as are f32/c32 input
    /// and [`eigh`]: the refined vectors are accurate to single precision only). It pays
    /// for a few pairs of a large matrix (c64, lowest 8 of n = 531: 15.8 against 33.8 ms
    /// for `LapackEvr`), not for `All`.
    Mixed,
}

/// The relative error [`EigBackend::Mixed`] accepts: each refined eigenvalue's estimated
/// error `‖r‖² / gap` must be at most this times a lower bound of the matrix's 2-norm
/// (the largest |a_ii| and |θ|), or the call falls back to full precision.
pub const MIXED_TOLERANCE: f64 = 1e-9;

/// Neighbouring pairs [`EigBackend::Mixed`] computes on each side of the requested range,
/// so that the refined eigenvalues can be told apart from the rest of the spectrum.
const MIXED_GUARD: usize = 4;

/// Which eigenpairs [`eigh`] returns, in ascending order of eigenvalue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EighRange {
    /// All of them.
    All,
    /// Those with 0-based indices `lo..hi`, e.g. `Index(0, nbands)` for the lowest bands
    /// (LAPACK's `il = lo + 1`, `iu = hi`).
    Index(usize, usize),
    /// Those with eigenvalues in the half-open interval `(lower, upper]`.
    Value(f64, f64),
}

/// The order of a square matrix, or an error for anything else.
pub(crate) fn square(op: &'static str, a: &Tensor) -> Result<usize> {
    match a.dims() {
        [n, m] if n == m => Ok(*n),
        d => Err(Error::NotAMatrix {
            op,
            shape: d.to_vec(),
            need: "a square matrix (rank 2, n × n)",
        }),
    }
}

/// A column-major copy of `a` (which LAPACK may overwrite).
pub(crate) fn col_major(a: &Tensor) -> Result<Tensor> {
    a.copy_in_order(Order::ColMajor)
}

/// The elements of mapped tail each host LAPACK operand of `a`'s type and device needs
/// for the kernels to run on it directly (`with_mapped_tails`) with leading dimension
/// `ld`; 0 on the GPU and where the OpenBLAS guard is off.
fn lapack_tail(a: &Tensor, ld: usize) -> usize {
    match a.device() {
        DeviceType::Cpu => ctensor_kernels::openblas::operand_tail(a.dtype(), ld),
        DeviceType::Gpu => 0,
    }
}

/// A copy of `a` in `order` in a buffer with `tail` zeroed elements after the matrix.
fn copy_with_tail(a: &Tensor, order: Order, tail: usize) -> Result<Tensor> {
    // SAFETY: `copy_values` writes every element of `out` (same shape as `a`), and `out`
    // is dropped unread when it fails.
    let out = unsafe { Tensor::uninit_with_tail(a.dtype(), a.device(), a.dims(), order, tail)? };
    Tensor::copy_values(&out, a, "eigh")?;
    Ok(out)
}

/// An error about the mirrored operand of `eigh` (its transpose, upper triangle) told in
/// terms of the caller's matrix: row and column swap, the upper triangle is the lower.
fn unmirror(e: Error) -> Error {
    match e {
        Error::NonFinite {
            op,
            operand,
            part,
            row,
            col,
            value,
        } => Error::NonFinite {
            op,
            operand,
            part: match part {
                "the upper triangle" => "the lower triangle",
                "the lower triangle" => "the upper triangle",
                p => p,
            },
            row: col,
            col: row,
            value,
        },
        e => e,
    }
}

/// The dense column-major matrix `v` (host) copied into row-major order with every
/// element conjugated, in one pass of the transpose kernel.
fn row_major_conj(v: &Tensor) -> Result<Tensor> {
    let [m, k] = *v.dims() else {
        unreachable!("eigenvectors are a matrix")
    };
    // SAFETY: the transpose below writes every element of `out`.
    let out = unsafe { Tensor::uninit(v.dtype(), v.device(), &[m, k])? };
    if out.numel() == 0 {
        return Ok(out);
    }
    {
        let _guards = (out.buffer.write("eigh")?, v.buffer.read("eigh")?);
        dispatch!(v.dtype(), v.device(), T, D => {
            // SAFETY: `v` is column-major m × k, i.e. a row-major k × m block inside its
            // buffer, and `out` a fresh row-major m × k: the permutation (1, 0) of it.
            unsafe {
                <D as ctensor_kernels::permute::Transpose<T>>::transpose(&[k, m], &[1, 0], v.typed_ptr::<T>(), out.typed_ptr::<T>(), true)
            }
        })?;
    }
    Ok(out)
}

/// `x` (column-major) in the memory order of `like` (see [`result_order`]).
pub(crate) fn in_order_of(x: Tensor, like: &Tensor) -> Result<Tensor> {
    match result_order(like) {
        Order::ColMajor => Ok(x),
        Order::RowMajor => x.copy_in_order(Order::RowMajor),
    }
}

/// The values of the real vector `w` (element type `R`, any device) as host `f64`s.
fn real_values<R: Scalar>(w: &Tensor) -> Result<Vec<f64>> {
    Ok(w.to_vec::<R>()?.iter().map(|x| x.to_c64().re).collect())
}

/// `range` checked for matrices of order `n`: an index range `lo <= hi <= n`, a value
/// interval with `lower < upper`.
fn check_range(op: &'static str, range: EighRange, n: usize) -> Result<()> {
    match range {
        EighRange::Index(lo, hi) if !(lo <= hi && hi <= n) => Err(Error::OutOfRange {
            op,
            what: "eigenpair index range end".into(),
            given: i64::try_from(hi).unwrap_or(i64::MAX),
            valid: format!("lo <= hi <= n = {n}, got {lo}..{hi}"),
        }),
        // NaN bounds are unordered and refused too.
        EighRange::Value(l, u) if l.partial_cmp(&u) != Some(std::cmp::Ordering::Less) => {
            Err(Error::InvalidArgument {
                op,
                expected: "an eigenvalue interval (lower, upper] with lower < upper".into(),
                given: format!("lower = {l}, upper = {u}"),
            })
        }
        _ => Ok(()),
    }
}

/// The indices `lo..hi` of the eigenvalues `w` (ascending) that `range` selects.
fn select(op: &'static str, w: &[f64], range: EighRange) -> Result<(usize, usize)> {
    let n = w.len();
    check_range(op, range, n)?;
    match range {
        EighRange::All => Ok((0, n)),
        EighRange::Index(lo, hi) => Ok((lo, hi)),
        EighRange::Value(l, u) => {
            let lo = w.iter().position(|&x| x > l).unwrap_or(n);
            let hi = w.iter().position(|&x| x > u).unwrap_or(n);
            Ok((lo, hi.max(lo)))
        }
    }
}

/// Eigenvalues (ascending, real dtype) and eigenvectors (as columns, in `a`'s memory
/// order) of the Hermitian matrix `a`, of which only the lower triangle is read. For
/// f32, f64, c32 and c64.
///
/// A stack of matrices (`[..., n, n]`, e.g. one Hamiltonian per k-point) gives
/// eigenvalues `[..., m]` and eigenvectors `[..., n, m]`: on the CPU the matrices are
/// solved concurrently on ctensor's pool, each with single-threaded LAPACK (see
/// [`map_batch`](ctensor_kernels::parallel::map_batch)); on the GPU one after the other on
/// its stream. A value range gives each matrix its own count, so a stack takes
/// `EighRange::All` or `EighRange::Index` only.
pub fn eigh(a: &Tensor, range: EighRange, backend: EigBackend) -> Result<(Tensor, Tensor)> {
    match over_batch("eigh", a, None, range, |a, _| {
        eigh_impl(a, range, backend, true)
    })? {
        (w, Some(v)) => Ok((w, v)),
        (_, None) => Err(Error::Internal {
            op: "eigh",
            what: "the solver returned no eigenvectors".into(),
        }),
    }
}

/// Eigenvalues only (ascending), as [`eigh`] (stacks included).
pub fn eigvalsh(a: &Tensor, range: EighRange, backend: EigBackend) -> Result<Tensor> {
    Ok(over_batch("eigvalsh", a, None, range, |a, _| {
        eigh_impl(a, range, backend, false)
    })?
    .0)
}

/// Eigenvalues and optional eigenvectors of one matrix (`b`: its partner for the
/// generalized problem).
type Solved = (Tensor, Option<Tensor>);

/// `solve` on `a` (and `b`) when they are matrices; on each matrix of the stack `a`
/// (`[..., n, n]`) otherwise, with `b` a stack of the same batch shape or one matrix for
/// all, the results stacked back into the batch shape.
fn over_batch(
    op: &'static str,
    a: &Tensor,
    b: Option<&Tensor>,
    range: EighRange,
    solve: impl Fn(&Tensor, Option<&Tensor>) -> Result<Solved> + Sync + Send,
) -> Result<Solved> {
    let rank = a.ndim();
    if rank <= 2 {
        if let [n, m] = *a.dims() {
            if n == m {
                check_range(op, range, n)?; // before the solver runs, not after
            }
        }
        return solve(a, b);
    }
    if let EighRange::Value(..) = range {
        return Err(Error::Unsupported {
            op,
            what: format!(
                "{range:?} for the stack of shape {:?} (a stack takes EighRange::All or \
                 EighRange::Index: each matrix of a value range has its own count)",
                a.dims()
            ),
        });
    }
    let (n, m) = (a.dims()[rank - 2], a.dims()[rank - 1]);
    let batch_dims = &a.dims()[..rank - 2];
    // Everything the matrices share is checked once, before the batch, so an empty
    // stack refuses what a full one refuses.
    if n != m {
        return Err(Error::NotAMatrix {
            op,
            shape: a.dims().to_vec(),
            need: "a stack of square matrices ([..., n, n])",
        });
    }
    check_range(op, range, n)?;
    crate::core::dispatch::check_blas_dtype(op, a.dtype())?;
    if let Some(b) = b {
        super::check_same(op, a, b)?;
        if b.dims() != a.dims() && b.dims() != [n, n] {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!("B of A's shape {:?}, or one matrix for every A", a.dims()),
                got: vec![b.dims().to_vec()],
            });
        }
    }
    let count = match range {
        EighRange::Index(lo, hi) => hi - lo,
        _ => n,
    };
    // A product that overflows needs a zero among the matrix sizes (the tensor exists).
    let batch = ctensor_kernels::args::numel(op, batch_dims).unwrap_or(usize::MAX);
    if batch == 0 || n == 0 {
        // The answer is empty: no per-matrix results to hold (a batch of 2⁴⁰ 0 × 0
        // matrices is an empty tensor, not 2⁴⁰ allocations).
        let shape = |tail: &[usize]| [batch_dims, tail].concat();
        let w = Tensor::new(a.dtype().real_type(), a.device(), &shape(&[count]))?;
        let v = Tensor::new(a.dtype(), a.device(), &shape(&[n, count]))?;
        return Ok((w, Some(v)));
    }
    let flat = a.reshape(&[batch as i64, n as i64, m as i64])?;
    let b_of = |k: usize| -> Result<Option<Tensor>> {
        match b {
            None => Ok(None),
            Some(b) if b.ndim() == 2 => Ok(Some(b.share())),
            Some(b) => Ok(Some(
                b.reshape(&[batch as i64, n as i64, m as i64])?.index(k)?,
            )),
        }
    };
    let one = |k: usize| -> Result<Solved> { solve(&flat.index(k)?, b_of(k)?.as_ref()) };
    let solved: Vec<Solved> = if a.device() == DeviceType::Cpu {
        ctensor_kernels::parallel::map_batch(batch, one)
            .into_iter()
            .collect::<Result<_>>()?
    } else {
        (0..batch).map(one).collect::<Result<_>>()?
    };
    let (ws, vs): (Vec<Tensor>, Vec<Option<Tensor>>) = solved.into_iter().unzip();
    let unbatch = |parts, tail: &[usize], dtype| {
        super::select::unbatch(parts, batch_dims, tail, dtype, a.device())
    };
    let w = unbatch(ws, &[count], a.dtype().real_type())?;
    let v = match vs.iter().all(Option::is_some) {
        true => Some(unbatch(
            vs.into_iter().flatten().collect(),
            &[n, count],
            a.dtype(),
        )?),
        false => None,
    };
    Ok((w, v))
}

/// The backend that runs: [`EigBackend::Auto`] resolved by the documented policy; faer
/// runs on the host only, so on the GPU `Auto` and `Faer` are cuSOLVER's divide and
/// conquer, like `LapackEvd`.
fn resolve_backend(
    backend: EigBackend,
    device: DeviceType,
    dtype: DataType,
    n: usize,
    range: EighRange,
    vectors: bool,
) -> EigBackend {
    match (backend, device) {
        (EigBackend::Auto | EigBackend::Faer, DeviceType::Gpu) => EigBackend::LapackEvd,
        (EigBackend::Auto, DeviceType::Cpu) => {
            let few = matches!(range, EighRange::Index(lo, hi) if hi.saturating_sub(lo) <= n / 4);
            if vectors && few {
                EigBackend::LapackEvr
            } else if !dtype.is_complex() || !vectors {
                EigBackend::LapackEvd
            } else {
                EigBackend::Faer
            }
        }
        (b, _) => b,
    }
}

fn eigh_impl(
    a: &Tensor,
    range: EighRange,
    backend: EigBackend,
    vectors: bool,
) -> Result<(Tensor, Option<Tensor>)> {
    let op = "eigh";
    let n = square(op, a)?;
    let real = a.dtype().real_type();
    let backend = resolve_backend(backend, a.device(), a.dtype(), n, range, vectors);
    if backend == EigBackend::Mixed {
        if vectors {
            return Err(Error::Unsupported {
                op,
                what: "EigBackend::Mixed with eigenvectors: it refines eigenvalues only (its \
                       vectors are accurate to single precision); use eigvalsh, or \
                       LapackEvr, LapackEvd or Faer for eigh"
                    .into(),
            });
        }
        return Ok((eigvalsh_mixed(a, range, n)?, None));
    }
    // LAPACK's operands get their over-read tails here, where they are made, so the
    // kernels need no padded copies of their own (faer reads no further than asked).
    let tail = match backend {
        EigBackend::Faer => 0,
        _ => lapack_tail(a, n),
    };
    // A dense row-major host matrix, read column-major, is its transpose: for a Hermitian
    // matrix the conjugate, whose lower triangle (the one we read) is the stored upper
    // triangle, with the same eigenvalues and conjugated eigenvectors. So it goes to
    // LAPACK as a plain copy with `Upper`, and the vectors are conjugated on their way
    // back to row-major order, instead of two transposing copies.
    let mirrored = a.device() == DeviceType::Cpu
        && n > 1
        && a.ndim() == 2
        && a.dense_order() == Some(Order::RowMajor);
    let (mut work, uplo) = if mirrored {
        (copy_with_tail(a, Order::RowMajor, tail)?.t()?, Uplo::Upper)
    } else {
        (copy_with_tail(a, Order::ColMajor, tail)?, Uplo::Lower)
    };
    let jobz = if vectors {
        Jobz::Vectors
    } else {
        Jobz::ValuesOnly
    };
    // The full or partial spectrum (`w`) and the matching eigenvectors (`n × m`).
    // The eigenvalues land on the solver's device, then come to the host to select.
    let wd = Tensor::new(real, a.device(), &[n])?;
    // A closure, so that the `?`s inside come out through `unmirror` too.
    let mut solve = || -> Result<(Vec<f64>, Option<Tensor>)> {
        dispatch_blas!(a.dtype(), a.device(), op, T, D => {
            let wp = wd.typed_ptr::<<T as Scalar>::Real>();
            let p = work.as_mut_ptr::<T>()?;
            match backend {
                EigBackend::LapackEvr => {
                    let r = match range {
                        EighRange::All => EigRange::All,
                        EighRange::Index(lo, hi) => EigRange::Index(lo..hi),
                        EighRange::Value(l, u) => EigRange::Value {
                            lower: <<T as Scalar>::Real as ctensor_base::CastFrom<f64>>::cast_from(l),
                            upper: <<T as Scalar>::Real as ctensor_base::CastFrom<f64>>::cast_from(u),
                        },
                    };
                    if !vectors && a.device() == DeviceType::Cpu {
                        // Values only: LAPACK's values-only mode, no vectors to compute.
                        let guard = wd.buffer.write(op)?;
                        // SAFETY: `work` is n × n column-major (ld n) with
                        // `lapack_tail(a, n)` mapped elements past its end and `wd` holds n
                        // values, both host memory here (checked above), distinct.
                        let m = unsafe {
                            ctensor_kernels::openblas::with_mapped_tails(|| {
                                <CpuDevice as LapackHeevrValues<T>>::heevr_values(uplo, n, p, n.max(1), r, wp)
                            })
                        }?;
                        drop(guard);
                        let mut w = real_values::<<T as Scalar>::Real>(&wd)?;
                        w.truncate(m);
                        return Ok((w, None));
                    }
                    let cols = match range {
                        EighRange::Index(lo, hi) if lo <= hi => hi - lo,
                        _ => n,
                    };
                    // SAFETY: an index range has LAPACK write all `cols` columns (and `z`
                    // is dropped unread when it fails); other ranges are zeroed first, and
                    // only the `m` columns written are returned.
                    let mut z = unsafe { Tensor::uninit_with_tail(a.dtype(), a.device(), &[n, cols], Order::ColMajor, tail)? };
                    if !matches!(range, EighRange::Index(..)) {
                        z.fill(0.0)?;
                    }
                    let guards = (z.buffer.write(op)?, wd.buffer.write(op)?);
                    // SAFETY: `work` is n × n column-major (ld n), `wd` holds n values and
                    // `z` n × cols (ld n), all on the dispatched device; all distinct memory.
                    // `work` and `z` carry `lapack_tail(a, n)` mapped elements past their ends.
                    let m = unsafe {
                        ctensor_kernels::openblas::with_mapped_tails(|| {
                            <D as LapackHeevr<T>>::heevr(uplo, n, p, n.max(1), r, wp, z.typed_ptr::<T>(), n.max(1))
                        })
                    }?;
                    drop(guards);
                    let mut w = real_values::<<T as Scalar>::Real>(&wd)?;
                    w.truncate(m);
                    Ok((w, Some(z.narrow(1, 0, m)?)))
                }
                EigBackend::Faer => {
                    let v = if vectors {
                        Tensor::new_in_order(a.dtype(), a.device(), &[n, n], Order::ColMajor)?
                    } else {
                        Tensor::new(a.dtype(), a.device(), &[0])?
                    };
                    let guards = (v.buffer.write(op)?, wd.buffer.write(op)?);
                    // SAFETY: `work` is n × n column-major (ld n), `wd` holds n values and
                    // `v` (with vectors) n × n column-major; all distinct memory.
                    unsafe {
                        <D as HeevFaer<T>>::heev_faer(jobz, uplo, n, p, n.max(1), wp, v.typed_ptr::<T>(), n.max(1))
                    }?;
                    drop(guards);
                    Ok((real_values::<<T as Scalar>::Real>(&wd)?, vectors.then_some(v)))
                }
                // Mixed returned above; Auto is resolved.
                EigBackend::LapackEvd | EigBackend::Auto | EigBackend::Mixed => {
                    let guard = wd.buffer.write(op)?;
                    // SAFETY: `work` is n × n column-major (ld n) with `lapack_tail(a, n)`
                    // mapped elements past its end, and `wd` holds n values, both on the
                    // dispatched device.
                    unsafe {
                        ctensor_kernels::openblas::with_mapped_tails(|| {
                            <D as LapackHeevd<T>>::heevd(jobz, uplo, n, p, n.max(1), wp)
                        })
                    }?;
                    drop(guard);
                    Ok((real_values::<<T as Scalar>::Real>(&wd)?, vectors.then(|| work.share())))
                }
            }
        })
    };
    let (w, v) = solve().map_err(|e| if mirrored { unmirror(e) } else { e })?;
    let (lo, hi) = match backend {
        EigBackend::LapackEvr => (0, w.len()),
        _ => select(op, &w, range)?,
    };
    let wt = Tensor::from_vec(w[lo..hi].to_vec(), &[hi - lo])?.cast(real)?;
    let v = match v {
        // The mirrored input's vectors are conjugated on the way to row-major order.
        Some(v) if vectors && mirrored => Some(row_major_conj(&v.narrow(1, lo, hi - lo)?)?),
        // Whole columns of a column-major matrix stay column-major: no copy to select.
        Some(v) if vectors => Some(in_order_of(v.narrow(1, lo, hi - lo)?, a)?),
        _ => None,
    };
    Ok((wt.to_device(a.device())?, v))
}

/// The eigenvalues of `range` of the f64/c64 Hermitian matrix `a` (order `n`, lower
/// triangle read) by [`EigBackend::Mixed`]: a single-precision solve of the range and
/// [`MIXED_GUARD`] neighbours on each side, one Rayleigh–Ritz step in full precision, the
/// error estimates checked, and the full-precision `LapackEvr` when they fail.
fn eigvalsh_mixed(a: &Tensor, range: EighRange, n: usize) -> Result<Tensor> {
    let op = "eigvalsh";
    let dtype = a.dtype();
    let low = match dtype {
        DataType::Double => DataType::Float,
        DataType::ComplexDouble => DataType::ComplexFloat,
        d => {
            return Err(Error::UnsupportedDType {
                op,
                dtype: d,
                supported: "f64, c64 (EigBackend::Mixed solves in f32/c32 and refines in \
                            f64/c64; for f32/c32 use LapackEvr)",
            })
        }
    };
    let (lo, hi) = match range {
        EighRange::All => (0, n),
        EighRange::Index(lo, hi) => (lo, hi),
        EighRange::Value(..) => {
            return Err(Error::Unsupported {
                op,
                what: "EigBackend::Mixed with a value range: it refines the pairs of an index \
                       range (EighRange::Index or All); use LapackEvr for a value range"
                    .into(),
            })
        }
    };
    if lo == hi {
        return Tensor::zeros(dtype.real_type(), a.device(), &[0]);
    }
    let full = || -> Result<Tensor> { Ok(eigh_impl(a, range, EigBackend::LapackEvr, false)?.0) };
    // L: the read (lower) triangle of A with its diagonal halved, the rest zero, so that
    // A = L + Lᴴ whatever the other triangle holds. A row-major copy is Aᵀ read
    // column-major, whose upper triangle is A's lower one.
    let order = a.dense_order().unwrap_or(Order::ColMajor);
    let mut l = a.copy_in_order(order)?;
    let keep = match order {
        Order::ColMajor => Uplo::Lower,
        Order::RowMajor => Uplo::Upper,
    };
    dispatch!(dtype, a.device(), T, D => {
        let p = l.as_mut_ptr::<T>()?;
        // SAFETY: `l` is a dense n × n copy of its own, column-major with ld n in the
        // terms of the kernel (a row-major one is the transpose, as `keep` says).
        unsafe { <D as SetMatrix<T>>::set_matrix(keep, n, p, n.max(1)) }
    })?;
    // The largest |a_ii|, a lower bound of ‖A‖₂ for the tolerance.
    let diag_max = l
        .diagonal()?
        .real()?
        .cast(DataType::Double)?
        .to_vec::<f64>()?
        .iter()
        .fold(0.0f64, |m, x| m.max(x.abs()));
    l.diagonal()?.scale_(0.5)?;
    let a_low = a.cast(low)?;
    let (glo, ghi) = (lo.saturating_sub(MIXED_GUARD), (hi + MIXED_GUARD).min(n));
    let v = match eigh_impl(
        &a_low,
        EighRange::Index(glo, ghi),
        EigBackend::LapackEvr,
        true,
    ) {
        Ok((_, v)) => v,
        // NaN or an infinity in the read triangle is refused with its position in `a`;
        // an entry beyond f32's range (finite in `a`) goes to the full-precision solver.
        Err(Error::NonFinite { .. }) => {
            require_finite_matrix(op, "a", a, Part::Triangle(Uplo::Lower))?;
            return full();
        }
        // A numerical failure of the single-precision solver is not the caller's: the
        // full-precision one decides.
        Err(Error::Lapack { .. }) => return full(),
        Err(e) => return Err(e),
    };
    let x = v.ok_or_else(|| Error::Internal {
        op,
        what: "the single-precision solve returned no eigenvectors".into(),
    })?;
    let x = x.cast(dtype)?;
    // One Rayleigh–Ritz step in full precision: A X = L X + Lᴴ X, the projections
    // G = Xᴴ X and P = Xᴴ A X, and S = (A X)ᴴ (A X) for the residual norms.
    let (ct, no) = (
        ctensor_kernels::blas::Trans::C,
        ctensor_kernels::blas::Trans::N,
    );
    let mut ax = super::matmul::matmul(&l, &x)?;
    super::matmul::matmul_into(&l, ct, &x, no, 1.0, 1.0, &mut ax)?;
    let gram = super::matmul::matmul_op(&x, ct, &x, no)?;
    let proj = super::matmul::matmul_op(&x, ct, &ax, no)?;
    let Ok((theta, y)) = eigh_generalized(&proj, &gram, 1, EighRange::All) else {
        return full();
    };
    let th = theta.cast(DataType::Double)?.to_vec::<f64>()?;
    let m = th.len();
    // Everything below is in units of `s`, a lower bound of ‖A‖₂ (the largest |a_ii|
    // and |θ|), so that squares neither underflow nor overflow and the tolerance is
    // relative to the matrix.
    let s = th.iter().fold(diag_max, |m, x| m.max(x.abs()));
    if !(s.is_normal() && (1.0 / s).is_normal()) {
        return full();
    }
    let th: Vec<f64> = th.iter().map(|x| x / s).collect();
    let ax = ax.mul_scalar(1.0 / s)?;
    let sq = super::matmul::matmul_op(&ax, ct, &ax, no)?;
    let eps = f64::EPSILON * (n + m) as f64 * 4.0;
    let ysy: Vec<f64> = if m <= 32 {
        // A small block: yᴴ S y on the host, cheaper than four more tensor ops.
        let y = y.cast(DataType::ComplexDouble)?.to_vec::<c64>()?;
        let sq = sq.cast(DataType::ComplexDouble)?.to_vec::<c64>()?;
        (0..m)
            .map(|j| {
                let mut q = c64::new(0.0, 0.0);
                for i in 0..m {
                    let si: c64 = (0..m).map(|k| sq[i * m + k] * y[k * m + j]).sum();
                    q += y[i * m + j].conj() * si;
                }
                q.re.abs()
            })
            .collect()
    } else {
        let sy = super::matmul::matmul(&sq, &y)?;
        y.conj()?
            .mul(&sy)?
            .sum(&[0])?
            .real()?
            .cast(DataType::Double)?
            .to_vec::<f64>()?
            .iter()
            .map(|q| q.abs())
            .collect()
    };
    let res: Vec<f64> = (0..m)
        .map(|j| ((ysy[j] - th[j] * th[j]).max(0.0) + eps * ysy[j]).sqrt())
        .collect();
    let wanted = (lo - glo)..(hi - glo);
    match mixed_accepted(
        &th,
        &res,
        wanted.clone(),
        (glo == 0, ghi == n),
        MIXED_TOLERANCE,
    ) {
        true => Tensor::from_vec(th[wanted].iter().map(|x| x * s).collect(), &[hi - lo])?
            .cast(dtype.real_type())?
            .to_device(a.device()),
        false => full(),
    }
}

/// Whether the Ritz values `theta` (ascending) with residual norms `res` determine the
/// eigenvalues at the positions `wanted` to within `tol`: the values are grouped into
/// clusters whose intervals `θ ± ‖r‖` overlap; each cluster with a wanted value must lie
/// inside the computed block unless it touches an end of the spectrum (`ends`: whether
/// the block starts at the lowest eigenvalue and ends at the highest), and its estimate
/// `Σ‖r‖² / gap` (Kato–Temple, the gap to the nearest interval outside it) must be at
/// most `tol`. NaN anywhere fails.
fn mixed_accepted(
    theta: &[f64],
    res: &[f64],
    wanted: std::ops::Range<usize>,
    ends: (bool, bool),
    tol: f64,
) -> bool {
    let m = theta.len();
    if m != res.len() || theta.iter().chain(res).any(|x| !x.is_finite()) {
        return false;
    }
    // Cluster boundaries: a new cluster starts where the intervals stop overlapping.
    let mut start = 0;
    while start < m {
        let mut end = start + 1;
        while end < m && theta[end] - res[end] <= theta[end - 1] + res[end - 1] {
            end += 1;
        }
        if wanted.start < end && start < wanted.end {
            let open_below = start == 0 && !ends.0;
            let open_above = end == m && !ends.1;
            if open_below || open_above {
                return false;
            }
            let below = (start > 0)
                .then(|| (theta[start] - res[start]) - (theta[start - 1] + res[start - 1]));
            let above =
                (end < m).then(|| (theta[end] - res[end]) - (theta[end - 1] + res[end - 1]));
            let gap = below.into_iter().chain(above).fold(f64::INFINITY, f64::min);
            let r2: f64 = res[start..end].iter().map(|r| r * r).sum();
            // A cluster alone in the spectrum (gap ∞) is bounded by its residuals.
            let estimate = if gap.is_infinite() {
                r2.sqrt()
            } else {
                r2 / gap
            };
            if !(gap > 0.0 && estimate <= tol) {
                return false;
            }
        }
        start = end;
    }
    true
}

/// `Err(Error::NonFinite)` when the check is on ([`check_finite`]) and `part` of the
/// matrix `a` (any layout and device; `part` in `a`'s own rows and columns) holds NaN or
/// an infinity, named by its row and column in `a`: the kernels' own check, for ops that
/// reach LAPACK through kernels that do not check (QR), such as `lstsq`, or that read
/// the matrix before LAPACK does (`EigBackend::Mixed`).
///
/// [`check_finite`]: ctensor_kernels::lapack::check_finite
pub(crate) fn require_finite_matrix(
    op: &'static str,
    operand: &'static str,
    a: &Tensor,
    part: Part,
) -> Result<()> {
    let [m, n] = *a.dims() else {
        return Ok(());
    };
    if a.dense_order() == Some(Order::ColMajor) {
        let _r = a.buffer.read(op)?;
        return dispatch_blas!(a.dtype(), a.device(), op, T, D => {
            // SAFETY: `a` is dense column-major m × n of T on this device (ld m); the
            // guard holds it.
            unsafe { ctensor_kernels::lapack::require_finite::<T, D>(op, operand, part, m, n, a.typed_ptr::<T>(), m.max(1)) }
        });
    }
    // A row-major m × n matrix is the column-major n × m transpose: row and column swap,
    // and so do the triangles (`unmirror` turns the answer back).
    let d = a.dense()?;
    let part_t = match part {
        Part::Triangle(Uplo::Lower) => Part::Triangle(Uplo::Upper),
        Part::Triangle(Uplo::Upper) => Part::Triangle(Uplo::Lower),
        Part::Whole => Part::Whole,
    };
    let _r = d.buffer.read(op)?;
    dispatch_blas!(d.dtype(), d.device(), op, T, D => {
        // SAFETY: `d` is dense row-major m × n of T on this device, i.e. column-major
        // n × m with leading dimension n; the guard holds it.
        unsafe { ctensor_kernels::lapack::require_finite::<T, D>(op, operand, part_t, n, m, d.typed_ptr::<T>(), n.max(1)) }
    })
    .map_err(unmirror)
}

/// The memory order results take for input `a`: column-major when `a` is (and is not a
/// single row or column), row-major otherwise.
fn result_order(a: &Tensor) -> Order {
    if a.dense_order() == Some(Order::ColMajor) && a.ndim() == 2 && a.dims()[0] > 1 {
        Order::ColMajor
    } else {
        Order::RowMajor
    }
}

/// The generalized Hermitian-definite eigenproblem: `A x = λ B x` (`itype` 1),
/// `A B x = λ x` (2) or `B A x = λ x` (3), `B` positive definite; eigenvalues ascending
/// and eigenvectors (normalised so that `Vᴴ B V = I` for 1 and 2) in `a`'s memory order.
/// A `B` that is not positive definite is `Error::Lapack`.
///
/// Stacks (`a` of `[..., n, n]`, `b` of the same shape or one `[n, n]` for all) are solved
/// as in [`eigh`].
pub fn eigh_generalized(
    a: &Tensor,
    b: &Tensor,
    itype: i32,
    range: EighRange,
) -> Result<(Tensor, Tensor)> {
    let op = "eigh_generalized";
    let (w, v) = over_batch(op, a, Some(b), range, |a, b| {
        let b = b.ok_or_else(|| Error::Internal {
            op,
            what: "no B".into(),
        })?;
        eigh_generalized_one(a, b, itype, range).map(|(w, v)| (w, Some(v)))
    })?;
    let v = v.ok_or_else(|| Error::Internal {
        op,
        what: "the solver returned no eigenvectors".into(),
    })?;
    Ok((w, v))
}

fn eigh_generalized_one(
    a: &Tensor,
    b: &Tensor,
    itype: i32,
    range: EighRange,
) -> Result<(Tensor, Tensor)> {
    let op = "eigh_generalized";
    let n = square(op, a)?;
    super::check_same(op, a, b)?;
    if square(op, b)? != n {
        return Err(Error::ShapeMismatch {
            op,
            expected: format!("B of the same order as A ({n} × {n})"),
            got: vec![b.dims().to_vec()],
        });
    }
    let mut av = col_major(a)?;
    let mut bv = col_major(b)?;
    let wd = Tensor::new(a.dtype().real_type(), a.device(), &[n])?;
    if range != EighRange::All {
        // Only the selected pairs (`?hegvx`, cuSOLVER `?hegvdx`), not all then a slice.
        let cols = match range {
            EighRange::Index(lo, hi) if lo <= hi => hi - lo,
            _ => n,
        };
        let z = Tensor::new_in_order(a.dtype(), a.device(), &[n, cols], Order::ColMajor)?;
        let m = dispatch_blas!(a.dtype(), a.device(), op, T, D => {
            let (pa, pb) = (av.as_mut_ptr::<T>()?, bv.as_mut_ptr::<T>()?);
            let r = match range {
                EighRange::Index(lo, hi) => EigRange::Index(lo..hi),
                EighRange::Value(l, u) => EigRange::Value {
                    lower: <<T as Scalar>::Real as ctensor_base::CastFrom<f64>>::cast_from(l),
                    upper: <<T as Scalar>::Real as ctensor_base::CastFrom<f64>>::cast_from(u),
                },
                EighRange::All => EigRange::All,
            };
            let _g = (z.buffer.write(op)?, wd.buffer.write(op)?);
            // SAFETY: `av`, `bv` are n × n column-major copies (ld n) of their own, `wd`
            // holds n values and `z` n × cols (ld n), all distinct and on this device.
            unsafe {
                <D as LapackHegvx<T>>::hegvx(itype, Uplo::Lower, n, pa, n.max(1), pb, n.max(1), r, wd.typed_ptr(), z.typed_ptr::<T>(), n.max(1))
            }
        })
        .map_err(|e| e.in_op(op))?;
        let wt = wd.narrow(0, 0, m)?.try_clone()?;
        return Ok((wt, in_order_of(z.narrow(1, 0, m)?, a)?));
    }
    let w = dispatch_blas!(a.dtype(), a.device(), op, T, D => {
        let (pa, pb) = (av.as_mut_ptr::<T>()?, bv.as_mut_ptr::<T>()?);
        let g = wd.buffer.write(op)?;
        // SAFETY: both n × n column-major copies (ld n) of their own, `wd` n values, all
        // on the dispatched device.
        unsafe { <D as LapackHegvd<T>>::hegvd(itype, Jobz::Vectors, Uplo::Lower, n, pa, n.max(1), pb, n.max(1), wd.typed_ptr()) }?;
        drop(g);
        real_values::<<T as Scalar>::Real>(&wd)
    })?;
    let (lo, hi) = select(op, &w, range)?;
    let wt = wd.narrow(0, lo, hi - lo)?.try_clone()?;
    // Whole columns of the column-major result stay column-major: no copy to select.
    Ok((wt, in_order_of(av.narrow(1, lo, hi - lo)?, a)?))
}

/// The Cholesky factor of the Hermitian positive definite `a`: `L` with `A = L Lᴴ`
/// (`Uplo::Lower`) or `U` with `A = Uᴴ U` (`Uplo::Upper`), the other triangle zero.
/// Reads only that triangle of `a`. Not positive definite is `Error::Lapack`.
pub fn cholesky(a: &Tensor, uplo: Uplo) -> Result<Tensor> {
    let op = "cholesky";
    let n = square(op, a)?;
    let mut f = col_major(a)?;
    dispatch_blas!(a.dtype(), a.device(), op, T, D => {
        let p = f.as_mut_ptr::<T>()?;
        // SAFETY: `f` is a column-major n × n copy of its own (ld n).
        unsafe {
            <D as LapackPotrf<T>>::potrf(uplo, n, p, n.max(1))?;
            <D as SetMatrix<T>>::set_matrix(uplo, n, p, n.max(1))
        }
    })?;
    in_order_of(f, a)
}

/// The inverse of the triangular matrix in the `uplo` triangle of `a` (the other
/// triangle of the result is zero). With [`Diag::Unit`] the diagonal of `a` is taken as
/// ones and not read, and the result is the inverse of that unit triangular matrix (its
/// diagonal is ones too). An exactly singular matrix is `Error::Lapack`.
pub fn tri_inverse(a: &Tensor, uplo: Uplo, diag: Diag) -> Result<Tensor> {
    let op = "tri_inverse";
    let n = square(op, a)?;
    let mut f = col_major(a)?;
    dispatch_blas!(a.dtype(), a.device(), op, T, D => {
        let p = f.as_mut_ptr::<T>()?;
        // SAFETY: `f` is a column-major n × n copy of its own (ld n).
        unsafe {
            <D as LapackTrtri<T>>::trtri(uplo, diag, n, p, n.max(1))?;
            <D as SetMatrix<T>>::set_matrix(uplo, n, p, n.max(1))
        }
    })?;
    if diag == Diag::Unit {
        // `?trtri` leaves the diagonal it did not read as it was.
        f.diagonal()?.fill(1.0)?;
    }
    in_order_of(f, a)
}

/// Keeps the `keep` triangle of the square matrix `a` (with the diagonal) and zeroes the
/// other, in place, for any dtype and layout.
pub fn set_matrix(a: &mut Tensor, keep: Uplo) -> Result<()> {
    let op = "set_matrix";
    let n = square(op, a)?;
    let mut f = col_major(a)?;
    dispatch!(a.dtype(), a.device(), T, D => {
        let p = f.as_mut_ptr::<T>()?;
        // SAFETY: `f` is a column-major n × n copy of its own (ld n).
        unsafe { <D as SetMatrix<T>>::set_matrix(keep, n, p, n.max(1)) }
    })?;
    a.sync(&f)
}

/// The solution `X` of `A X = B` (`b` a vector `[n]` or a matrix `[n, k]`), by LU with
/// partial pivoting. An exactly singular `A` (a zero pivot) is `Error::Lapack`; one that
/// is singular to working precision — LAPACK's reciprocal condition estimate (`?gecon`,
/// 1-norm) below the dtype's epsilon, as SciPy warns — is `Error::IllConditioned`.
///
/// Stacks solve matrix by matrix, as NumPy 2's `linalg.solve`: `a` is `[..., n, n]`, `b`
/// is a vector `[n]` (one right-hand side for every matrix, result `[..., n]`) or
/// `[..., n, k]`, and the leading (batch) axes of the two broadcast.
pub fn solve(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    if a.ndim() <= 2 && b.ndim() <= 2 {
        return solve_matrix(a, b);
    }
    let op = "solve";
    super::check_same(op, a, b)?;
    if a.ndim() < 2 {
        return Err(Error::NotAMatrix {
            op,
            shape: a.dims().to_vec(),
            need: "a square matrix or a stack of them ([..., n, n])",
        });
    }
    if b.ndim() == 0 {
        return Err(Error::ShapeMismatch {
            op,
            expected: "a right-hand side [n] or [..., n, k]".into(),
            got: vec![vec![]],
        });
    }
    let (a_batch, a_mat) = a.dims().split_at(a.ndim() - 2);
    let (b_batch, b_mat) = if b.ndim() == 1 {
        (&[][..], b.dims())
    } else {
        b.dims().split_at(b.ndim() - 2)
    };
    let n = a_mat[0];
    if a_mat[1] != n {
        return Err(Error::NotAMatrix {
            op,
            shape: a.dims().to_vec(),
            need: "square matrices ([..., n, n])",
        });
    }
    if b_mat[0] != n {
        return Err(Error::ShapeMismatch {
            op,
            expected: format!("a right-hand side [{n}] or [..., {n}, k]"),
            got: vec![b.dims().to_vec()],
        });
    }
    let batch = super::broadcast_shapes(op, a_batch, b_batch)?;
    let count: usize = batch.iter().product();
    let out_shape: Vec<usize> = batch.iter().chain(b_mat).copied().collect();
    // No matrix, only empty ones (n = 0) or no right-hand side (k = 0): an empty result,
    // whatever the stack's size, as NumPy's.
    if out_shape.iter().product::<usize>() == 0 {
        return Tensor::new(a.dtype(), a.device(), &out_shape);
    }
    let flat = |t: &Tensor, mat: &[usize]| -> Result<Tensor> {
        let full: Vec<usize> = batch.iter().chain(mat).copied().collect();
        let shape: Vec<i64> = std::iter::once(count as i64)
            .chain(mat.iter().map(|&d| d as i64))
            .collect();
        // A broadcast view cannot always be reshaped in place: reshape copies then.
        t.broadcast_to(&full)?.reshape(&shape)
    };
    let (af, bf) = (flat(a, a_mat)?, flat(b, b_mat)?);
    let xs = (0..count)
        .map(|i| solve_matrix(&af.index(i)?, &bf.index(i)?))
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<&Tensor> = xs.iter().collect();
    let out: Vec<i64> = out_shape.iter().map(|&d| d as i64).collect();
    super::select::stack(&refs, 0)?.reshape(&out)
}

/// [`solve`] of one matrix.
fn solve_matrix(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let op = "solve";
    let n = square(op, a)?;
    super::check_same(op, a, b)?;
    let (rows, k) = match b.dims() {
        [r] => (*r, 1),
        [r, k] => (*r, *k),
        d => {
            return Err(Error::ShapeMismatch {
                op,
                expected: format!("a right-hand side [{n}] or [{n}, k]"),
                got: vec![d.to_vec()],
            })
        }
    };
    if rows != n {
        return Err(Error::ShapeMismatch {
            op,
            expected: format!("a right-hand side with {n} rows"),
            got: vec![b.dims().to_vec()],
        });
    }
    let mut lu = col_major(a)?;
    let mut x = b
        .reshape(&[n as i64, k as i64])?
        .copy_in_order(Order::ColMajor)?;
    // The pivots live where the solver runs.
    let mut ipiv = Tensor::new(DataType::Int, a.device(), &[n])?;
    dispatch_blas!(a.dtype(), a.device(), op, T, D => {
        let (pa, px, pp) = (lu.as_mut_ptr::<T>()?, x.as_mut_ptr::<T>()?, ipiv.as_mut_ptr::<i32>()?);
        // SAFETY: column-major copies of their own: `lu` n × n, `x` n × k (ld n), and
        // `ipiv` n integers, all on the dispatched device.
        unsafe {
            let anorm = <D as LapackGecon<T>>::norm_one(n, n, pa, n.max(1))?;
            <D as LapackGetrf<T>>::getrf(n, n, pa, n.max(1), pp)?;
            let rcond = <D as LapackGecon<T>>::gecon(n, pa, n.max(1), anorm)?.to_c64().re;
            let threshold = crate::core::promotion::epsilon(<T as Scalar>::DTYPE);
            // NaN (from a NaN factor) counts as singular.
            if n > 0 && (rcond.is_nan() || rcond < threshold) {
                return Err(Error::IllConditioned { op, rcond, threshold });
            }
            <D as LapackGetrs<T>>::getrs(ctensor_kernels::blas::Trans::N, n, k, pa, n.max(1), pp, px, n.max(1))
        }
    })?;
    if b.ndim() == 1 {
        return x.reshape(&[n as i64]);
    }
    in_order_of(x, b)
}

/// The inverse of the square matrix `a` (LU with partial pivoting); singular is
/// `Error::Lapack`.
pub fn inverse(a: &Tensor) -> Result<Tensor> {
    let n = square("inverse", a)?;
    let id = Tensor::eye(a.dtype(), a.device(), n)?;
    let x = solve(a, &id)?;
    in_order_of(x.copy_in_order(Order::ColMajor)?, a)
}

/// `ψ ψᴴ` for the rows of `psi` (`[nband, nbasis]`): the overlap matrix of a set of
/// wavefunctions, as `einsum("ij,kj->ik", psi, psi)` with `conj_y`.
pub fn overlap(psi: &Tensor) -> Result<Tensor> {
    einsum("ij,kj->ik", &[psi, psi], &EinsumOptions::conj_y())
}
