//! The distributed dense Hermitian eigensolver: ELPA for the whole spectrum or its lowest
//! part (measured faster), ScaLAPACK's divide and conquer (`p?syevd`/`p?heevd`) or MRRR
//! (`p?syevr`/`p?heevr`) otherwise or on request.

use std::ffi::c_int;

use ctensor_aten::{check_finite, EighRange, Tensor};
use ctensor_base::{CastFrom, Error, Result, Scalar};

use super::dist_matrix::DistMatrix;
use super::elpa;
use super::ffi::{EigArgs, Elpa, EvrRange, Pheev};
use crate::wire::{with_read, with_write};

const OP: &str = "distributed eigh";

/// Which library solves a distributed eigenproblem ([`eigh_with`], [`eigvalsh_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DistEigBackend {
    /// ELPA where it applies (f64 or c64, the whole spectrum or the lowest `k` pairs,
    /// every rank holding part of the matrix), ScaLAPACK otherwise. Against `pzheevd`,
    /// ELPA measured 0.98–1.24× for all pairs, and against `pzheevr` 1.44–1.6× for the
    /// lowest 10 % (c64, n = 2000, two ranks; the README's table).
    #[default]
    Auto,
    /// ScaLAPACK: `p?syevd`/`p?heevd` for all pairs, `p?syevr`/`p?heevr` for a range or
    /// for eigenvalues alone.
    Scalapack,
    /// ELPA's one-stage solver, after rebuilding the upper triangle from the lower one:
    /// f64 and c64 (Debian's ELPA has no single precision), `EighRange::All` or
    /// `EighRange::Index(0, k)`, with every rank holding at least one row and column
    /// (`n > nb · (max(nprow, npcol) − 1)`).
    Elpa,
}

/// Eigenvalues (ascending, a real host tensor, the same on every rank) and eigenvectors
/// (the columns of a distributed `n × m` matrix, in `a`'s blocks) of the Hermitian
/// matrix `a`, of which only the lower triangle is read, as [`ctensor::eigh`] does on one
/// process. For f32, f64, c32 and c64. Collective over `a`'s grid.
///
/// The backend is [`DistEigBackend::Auto`]: ELPA for all pairs or the lowest `k`, and
/// ScaLAPACK's `p?syevr`/`p?heevr` for other ranges, which computes only the pairs asked
/// for; see [`eigh_with`] to choose.
///
/// Errors (on every rank): `ShapeMismatch` unless `a` is square in square blocks
/// (ScaLAPACK's requirement); `UnsupportedDType`; `OutOfRange`/`InvalidArgument` for a
/// bad range; `NonFinite` for NaN or infinity in the lower triangle (unless
/// `set_check_finite(false)`); `Lapack` with the routine and its `info`.
///
/// [`ctensor::eigh`]: ctensor_aten::eigh
pub fn eigh<'g>(a: &DistMatrix<'g>, range: EighRange) -> Result<(Tensor, DistMatrix<'g>)> {
    eigh_with(a, range, DistEigBackend::Auto)
}

/// [`eigh`] with the backend chosen. Errors as [`eigh`], and `InvalidArgument` when
/// ELPA is asked for a problem it does not take (see [`DistEigBackend::Elpa`]).
pub fn eigh_with<'g>(
    a: &DistMatrix<'g>,
    range: EighRange,
    backend: DistEigBackend,
) -> Result<(Tensor, DistMatrix<'g>)> {
    agree(a, range, backend, true)?;
    check_square(a)?;
    let (values, vectors) =
        ctensor_aten::with_blas_dtype!(a.dtype(), OP, T => solve::<T>(a, range, true, backend))?;
    let vectors = vectors.ok_or_else(|| Error::Internal {
        op: OP,
        what: "no eigenvectors came back".into(),
    })?;
    Ok((values, vectors))
}

/// The eigenvalues of [`eigh`] alone (ascending, the same on every rank): ELPA for all
/// of them or the lowest `k`, ScaLAPACK's MRRR (`p?syevr`/`p?heevr` with `jobz = 'N'`)
/// for other ranges. Errors as [`eigh`].
pub fn eigvalsh(a: &DistMatrix<'_>, range: EighRange) -> Result<Tensor> {
    eigvalsh_with(a, range, DistEigBackend::Auto)
}

/// [`eigvalsh`] with the backend chosen; errors as [`eigh_with`].
pub fn eigvalsh_with(
    a: &DistMatrix<'_>,
    range: EighRange,
    backend: DistEigBackend,
) -> Result<Tensor> {
    agree(a, range, backend, false)?;
    check_square(a)?;
    Ok(ctensor_aten::with_blas_dtype!(a.dtype(), OP, T => solve::<T>(a, range, false, backend))?.0)
}

/// Every argument a distributed solve depends on, compared across the grid's ranks
/// before anything else (one `MPI_Allgather` of 21 words per rank): the matrix's dtype,
/// shape and blocks, the range, the backend, whether vectors are wanted and the
/// finiteness check ([`set_check_finite`](ctensor_aten::set_check_finite) is per
/// process). Ranks that disagree get the same `RanksDisagree` naming the first field
/// that differs, instead of one rank failing alone and the others waiting in the
/// solver's collectives.
fn agree(
    a: &DistMatrix<'_>,
    range: EighRange,
    backend: DistEigBackend,
    vectors: bool,
) -> Result<()> {
    let ((m, n), (mb, nb)) = (a.shape(), a.block());
    let (kind, x, y) = match range {
        EighRange::All => (0, 0, 0),
        EighRange::Index(lo, hi) => (1, lo as i64, hi as i64),
        EighRange::Value(l, u) => (2, l.to_bits() as i64, u.to_bits() as i64),
    };
    let backend = match backend {
        DistEigBackend::Auto => 0,
        DistEigBackend::Scalapack => 1,
        DistEigBackend::Elpa => 2,
    };
    // Three words a field, compared field by field so the error names the first that
    // differs (the range as its kind and two numbers: indices, or the bounds' bits).
    let fields: [(&'static str, [i64; 3]); 7] = [
        ("data type", [crate::comm::dtype_code(a.dtype()), 0, 0]),
        ("matrix shape (m, n)", [m as i64, n as i64, 0]),
        ("block shape (mb, nb)", [mb as i64, nb as i64, 0]),
        ("range", [kind, x, y]),
        ("backend", [backend, 0, 0]),
        (
            "whether eigenvectors are wanted",
            [i64::from(vectors), 0, 0],
        ),
        ("set_check_finite", [i64::from(check_finite()), 0, 0]),
    ];
    let words: Vec<i64> = fields.iter().flat_map(|(_, w)| *w).collect();
    let all = a.grid().comm().allgather_words(OP, &words)?;
    for (k, (name, _)) in fields.iter().enumerate() {
        let keys: Vec<&[i64]> = all
            .chunks(words.len())
            .map(|r| &r[3 * k..3 * k + 3])
            .collect();
        crate::comm::same_on_all(OP, name, &keys)?;
    }
    Ok(())
}

fn check_square(a: &DistMatrix<'_>) -> Result<()> {
    let (m, n) = a.shape();
    let (mb, nb) = a.block();
    if m != n || mb != nb {
        return Err(Error::ShapeMismatch {
            op: OP,
            expected: "a square matrix in square blocks (the matrix's and the block's shapes \
                       given)"
                .into(),
            got: vec![vec![m, n], vec![mb, nb]],
        });
    }
    Ok(())
}

type Solved<'g> = (Tensor, Option<DistMatrix<'g>>);

fn solve<'g, T: Elpa>(
    a: &DistMatrix<'g>,
    range: EighRange,
    vectors: bool,
    backend: DistEigBackend,
) -> Result<Solved<'g>> {
    let n = a.shape().0;
    let jobz = if vectors { b'V' } else { b'N' };
    let evr = match range {
        // Divide and conquer has no values-only mode; MRRR computes them alone.
        EighRange::All if vectors => None,
        EighRange::All => Some(EvrRange {
            jobz,
            range: b'A',
            vl: T::real(0.0),
            vu: T::real(0.0),
            il: 0,
            iu: 0,
        }),
        EighRange::Index(lo, hi) if lo <= hi && hi <= n => Some(EvrRange {
            jobz,
            range: b'I',
            vl: T::real(0.0),
            vu: T::real(0.0),
            il: lo as c_int + 1,
            iu: hi as c_int,
        }),
        EighRange::Index(lo, hi) => {
            return Err(Error::OutOfRange {
                op: OP,
                what: "eigenpair index range end".into(),
                given: hi as i64,
                valid: format!("lo <= hi <= n = {n}, got {lo}..{hi}"),
            })
        }
        EighRange::Value(l, u) if l < u => Some(EvrRange {
            jobz,
            range: b'V',
            vl: T::real(l),
            vu: T::real(u),
            il: 0,
            iu: 0,
        }),
        EighRange::Value(l, u) => {
            return Err(Error::InvalidArgument {
                op: OP,
                expected: "an eigenvalue interval (lower, upper] with lower < upper".into(),
                given: format!("lower = {l}, upper = {u}"),
            })
        }
    };
    if check_finite() {
        lower_triangle_finite::<T>(a)?;
    }
    let real = a.dtype().real_type();
    let empty = matches!(evr, Some(EvrRange { range: b'I', il, iu, .. }) if iu < il);
    if n == 0 || empty {
        let none = if vectors {
            Some(a.first_columns(0)?)
        } else {
            None
        };
        return Ok((
            Tensor::new(real, ctensor_base::DeviceType::Cpu, &[0])?,
            none,
        ));
    }
    // The lowest k pairs (or all): what ELPA computes.
    let lowest = match range {
        EighRange::All => Some(n),
        EighRange::Index(0, k) => Some(k),
        _ => None,
    };
    let double = a.dtype().real_type() == ctensor_base::DataType::Double;
    let elpa_takes = lowest.is_some() && elpa::fits(a) && double;
    match (backend, lowest) {
        (DistEigBackend::Elpa, _) if !double => {
            return Err(Error::UnsupportedDType {
                op: OP,
                dtype: a.dtype(),
                supported: "f64 and c64 for ELPA (Debian's ELPA is built without single \
                            precision); DistEigBackend::Scalapack takes f32 and c32",
            });
        }
        (DistEigBackend::Elpa, _) if !elpa_takes => {
            let (nprow, npcol) = a.grid().shape();
            return Err(Error::InvalidArgument {
                op: OP,
                expected: format!(
                    "for ELPA, EighRange::All or Index(0, k), and every rank holding part of \
                     the matrix (n > nb · (max(nprow, npcol) − 1) = {}); DistEigBackend::Scalapack \
                     takes any problem",
                    a.block().0 * (nprow.max(npcol) - 1)
                ),
                given: format!(
                    "{range:?} for n = {n} in {0} × {0} blocks on a {nprow} × {npcol} grid",
                    a.block().0
                ),
            });
        }
        (DistEigBackend::Elpa | DistEigBackend::Auto, Some(k)) if elpa_takes => {
            let (w, z) = a.grid().comm().all_ok(elpa::solve::<T>(a, k, vectors))?;
            let (w, _) = from_rank0(a, &w[..k], k)?;
            return Ok((Tensor::from_slice(&w, &[k])?, z));
        }
        _ => {}
    }
    // ScaLAPACK waits for every rank: a copy that fails on one fails them all first.
    let comm = a.grid().comm();
    let work_a = comm.all_ok(a.copy())?;
    let z = comm.all_ok(DistMatrix::zeros(
        a.grid(),
        a.dtype(),
        n,
        n,
        a.block().0,
        a.block().1,
    ))?;
    let mut w = vec![T::Real::zero(); n];
    let mut found: c_int = n as c_int;
    let routine = if evr.is_some() { T::EVR } else { T::EVD };
    let solved = with_write(work_a.storage(), OP, |ap| {
        with_write(z.storage(), OP, |zp| {
            let call = |args: &EigArgs<T>, found: &mut c_int| {
                // SAFETY: `ap`/`zp` are the local parts described by the descriptors,
                // `w` has n entries, the workspaces the lengths in `args` (or one entry
                // for the query).
                unsafe {
                    match evr {
                        None => T::evd(args),
                        Some(r) => T::evr(args, r, found),
                    }
                }
            };
            let (mut wq, mut rq, mut iq) = ([T::zero()], [T::Real::zero()], [0 as c_int]);
            let mut args = EigArgs::<T> {
                n: n as c_int,
                a: ap.cast(),
                desca: work_a.descriptor(),
                w: w.as_mut_ptr(),
                z: zp.cast(),
                descz: z.descriptor(),
                work: wq.as_mut_ptr(),
                lwork: -1,
                rwork: rq.as_mut_ptr(),
                lrwork: -1,
                iwork: iq.as_mut_ptr(),
                liwork: -1,
            };
            let info = call(&args, &mut found);
            lapack_info(routine, info)?;
            // The queries of some ScaLAPACK releases under-report for small blocks;
            // half again more costs O(n²/p) memory and nothing else.
            let pad = |q: f64| (q.max(1.0) * 1.5) as usize + 1024;
            let mut work = vec![T::zero(); pad(wq[0].to_c64().re)];
            let mut rwork = vec![T::Real::zero(); pad(rq[0].to_c64().re)];
            let mut iwork = vec![0 as c_int; pad(f64::from(iq[0]))];
            for len in [work.len(), rwork.len(), iwork.len()] {
                crate::comm::count(OP, len)?;
            }
            args.work = work.as_mut_ptr();
            args.lwork = work.len() as c_int;
            args.rwork = rwork.as_mut_ptr();
            args.lrwork = rwork.len() as c_int;
            args.iwork = iwork.as_mut_ptr();
            args.liwork = iwork.len() as c_int;
            let info = call(&args, &mut found);
            lapack_info(routine, info)
        })
    });
    comm.all_ok(solved)?;
    let (w, found) = from_rank0(a, &w, (found.max(0) as usize).min(n))?;
    let values = Tensor::from_slice(&w[..found], &[found])?;
    let z = match (vectors, found == n) {
        (false, _) => None,
        (true, true) => Some(z),
        (true, false) => Some(z.first_columns(found)?),
    };
    Ok((values, z))
}

/// Rank 0's eigenvalues `w` and their count `found` on every rank of `a`'s grid (one
/// `MPI_Bcast`): with the finiteness check off, non-finite input can end in different
/// values or counts on different ranks (200 NaN on one, 199 on another), and "the same
/// on every rank" must hold all the same. Every rank passes as many values.
fn from_rank0<R: Scalar + CastFrom<f64>>(
    a: &DistMatrix<'_>,
    w: &[R],
    found: usize,
) -> Result<(Vec<R>, usize)> {
    let mut words: Vec<i64> = std::iter::once(found as i64)
        .chain(w.iter().map(|x| x.to_c64().re.to_bits() as i64))
        .collect();
    a.grid().comm().bcast_words(OP, &mut words, 0)?;
    let values = words[1..]
        .iter()
        .map(|&b| R::cast_from(f64::from_bits(b as u64)))
        .collect();
    Ok((values, (words[0].max(0) as usize).min(w.len())))
}

fn lapack_info(routine: &'static str, info: c_int) -> Result<()> {
    match info {
        0 => Ok(()),
        i if i < 0 => Err(Error::Lapack {
            routine,
            info: i.into(),
            detail: format!(
                "argument {} is illegal (entry 100·j + k is entry k of argument j's \
                 descriptor); a bug in ctensor's call, please report it",
                -i
            ),
        }),
        i => Err(Error::Lapack {
            routine,
            info: i.into(),
            detail: "the eigenvalue or eigenvector computation failed to converge, or \
                     the eigenvectors could not be orthogonalized"
                .into(),
        }),
    }
}

/// `NonFinite` on every rank when any rank's part of the lower triangle holds NaN or an
/// infinity: the first one in column-major order, its value sent to all.
fn lower_triangle_finite<T: Pheev>(a: &DistMatrix<'_>) -> Result<()> {
    // The first non-finite entry of this rank's part: the walk goes in increasing global
    // column, then row, so the first one found is the first in column-major order.
    let mut bad: Option<(usize, usize, ctensor_base::c64)> = None;
    with_read(a.storage(), OP, |p| {
        let p = p.cast::<T>();
        a.for_each_local(|at, gi, gj| {
            if bad.is_none() && gi >= gj {
                // SAFETY: `at` lies in this rank's part of the storage.
                let v = unsafe { *p.add(at) }.to_c64();
                if !(v.re.is_finite() && v.im.is_finite()) {
                    bad = Some((gi, gj, v));
                }
            }
        });
        Ok(())
    })?;
    let words = match bad {
        Some((i, j, v)) => [
            1,
            i as i64,
            j as i64,
            v.re.to_bits() as i64,
            v.im.to_bits() as i64,
        ],
        None => [0; 5],
    };
    let all = a.grid().comm().allgather_words(OP, &words)?;
    let first = all
        .chunks(5)
        .filter(|w| w[0] == 1)
        .min_by_key(|w| (w[2], w[1]));
    match first {
        None => Ok(()),
        Some(w) => {
            let (re, im) = (f64::from_bits(w[3] as u64), f64::from_bits(w[4] as u64));
            Err(Error::NonFinite {
                op: OP,
                operand: "a",
                part: "the lower triangle",
                row: w[1] as usize,
                col: w[2] as usize,
                value: if a.dtype().is_complex() {
                    format!("({re}, {im})")
                } else {
                    format!("{re}")
                },
            })
        }
    }
}
