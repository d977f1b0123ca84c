//! The block-cyclic matrix and the distributed eigensolver, on 2 and 3 ranks, against
//! ScaLAPACK's own index functions, exact round trips, and single-process `eigh`.

mod common;

use ctensor_aten::{
    eigh as eigh_one, matmul, DataType, DeviceType, EigBackend, EighRange, Order, Tensor,
};
use ctensor_base::{c64, Error, Result};
use ctensor_mpi::scalapack::{global_index, local_count, scalapack_indxl2g, scalapack_numroc};
use ctensor_mpi::{
    eigh, eigh_with, eigvalsh, eigvalsh_with, Comm, DistEigBackend, DistMatrix, Grid,
};

#[test]
fn index_formulas_match_scalapack() {
    for n in 0..40 {
        for nb in 1..7 {
            for nprocs in 1..5 {
                for iproc in 0..nprocs {
                    let c = local_count(n, nb, iproc, nprocs);
                    assert_eq!(
                        c,
                        scalapack_numroc(n, nb, iproc, nprocs),
                        "numroc({n}, {nb}, {iproc}, {nprocs})"
                    );
                    for l in 0..c {
                        assert_eq!(
                            global_index(l, nb, iproc, nprocs),
                            scalapack_indxl2g(l, nb, iproc, nprocs)
                        );
                    }
                }
            }
        }
    }
}

/// Every grid shape of `p` ranks.
fn grids(p: usize) -> Vec<(usize, usize)> {
    (1..=p)
        .filter(|r| p.is_multiple_of(*r))
        .map(|r| (r, p / r))
        .collect()
}

fn random(dtype: DataType, m: usize, n: usize, seed: u64) -> Result<Tensor> {
    Tensor::randn(dtype, DeviceType::Cpu, &[m, n], seed)
}

/// A Hermitian matrix: X + Xᴴ.
fn hermitian(dtype: DataType, n: usize, seed: u64) -> Result<Tensor> {
    let x = random(dtype, n, n, seed)?;
    x.add(&x.t()?.conj()?)
}

fn as_c64(t: &Tensor) -> Result<Vec<c64>> {
    t.cast(DataType::ComplexDouble)?.to_vec::<c64>()
}

mpi_test!(
    scatter_then_gather_is_exact_and_places_every_element,
    [2, 3],
    &[],
    |w| {
        for (nprow, npcol) in grids(w.size()) {
            let grid = Grid::new(w, nprow, npcol)?;
            for dtype in DataType::ALL {
                for (m, n) in [(0, 0), (0, 5), (1, 1), (7, 5), (5, 7), (33, 17), (300, 2)] {
                    for (mb, nb) in [(1, 1), (2, 3), (64, 64)] {
                        let a = random(DataType::ComplexDouble, m, n, (m * 31 + n) as u64)?
                            .cast(dtype)?;
                        // The root's matrix in three layouts; every rank knows `a` to check.
                        let mut cm =
                            Tensor::new_in_order(dtype, DeviceType::Cpu, &[m, n], Order::ColMajor)?;
                        cm.sync(&a)?;
                        let wide = Tensor::zeros(dtype, DeviceType::Cpu, &[m, n + 3])?;
                        let mut view = wide.narrow(1, 2, n)?;
                        view.sync(&a)?;
                        for (layout, given) in
                            [("row-major", &a), ("column-major", &cm), ("strided", &view)]
                        {
                            let what = format!(
                                "{nprow}×{npcol} {dtype} {m}×{n} in {mb}×{nb} from {layout}"
                            );
                            let root = w.size() - 1;
                            let d = DistMatrix::scatter_from(
                                &grid,
                                (w.rank() == root).then_some(given),
                                root,
                                mb,
                                nb,
                            )?;
                            // Each local element is the global element its indices name.
                            let local = d.local()?;
                            let (lr, lc) = (local.dims()[0], local.dims()[1]);
                            let vals = as_c64(&local)?;
                            let all = as_c64(&a)?;
                            for i in 0..lr {
                                for j in 0..lc {
                                    let (gi, gj) = d.to_global(i, j);
                                    assert_eq!(
                                        vals[i * lc + j],
                                        all[gi * n + gj],
                                        "{what}: local ({i}, {j}) = global ({gi}, {gj})"
                                    );
                                }
                            }
                            let total = w.allreduce(
                                &Tensor::full((lr * lc) as i64, DeviceType::Cpu, &[1])?,
                                ctensor_mpi::ReduceOp::Sum,
                            )?;
                            assert_eq!(
                                total.item::<i64>()?,
                                (m * n) as i64,
                                "{what}: every element held once"
                            );
                            match d.gather_to(0)? {
                                Some(g) => {
                                    assert_eq!(w.rank(), 0);
                                    assert!(g.is_fortran_contiguous() && g.dims() == [m, n]);
                                    assert_eq!(as_c64(&g)?, all, "{what}: gathered");
                                }
                                None => assert_ne!(w.rank(), 0),
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }
);

/// Tolerance for eigenvalues of an n × n matrix of norm `scale` in `dtype`.
fn tol(dtype: DataType, n: usize, scale: f64) -> f64 {
    let eps = if dtype.real_type() == DataType::Float {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    20.0 * (n.max(1) as f64) * eps * scale.max(1.0)
}

/// Checks distributed eigenpairs of `a` against one-process `eigh` (values) and the
/// residual and orthonormality of the gathered vectors (which are unique up to phase).
fn check_pairs(
    w: &Comm,
    what: &str,
    a: &Tensor,
    vals: &Tensor,
    vecs: &DistMatrix,
    range: (usize, usize),
) -> Result<()> {
    let dtype = a.dtype();
    let n = a.dims()[0];
    let (ref_w, _) = eigh_one(a, EighRange::All, EigBackend::LapackEvd)?;
    let ref_w = ref_w.cast(DataType::Double)?.to_vec::<f64>()?;
    let scale = ref_w.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let got = vals.cast(DataType::Double)?.to_vec::<f64>()?;
    assert_eq!(vals.dtype(), dtype.real_type(), "{what}: eigenvalue dtype");
    assert_eq!(got.len(), range.1 - range.0, "{what}: count");
    for (k, (g, r)) in got.iter().zip(&ref_w[range.0..range.1]).enumerate() {
        assert!(
            (g - r).abs() <= tol(dtype, n, scale),
            "{what}: eigenvalue {k}: {g} vs {r}"
        );
    }
    // Every rank holds the same eigenvalues.
    let bits: Vec<i64> = got.iter().map(|x| x.to_bits() as i64).collect();
    let mine = Tensor::from_slice(&bits, &[bits.len()])?;
    let all = w.allgather(&mine)?.to_vec::<i64>()?;
    assert!(
        all.chunks(bits.len().max(1))
            .all(|c| bits.is_empty() || c == &bits[..]),
        "{what}: ranks differ"
    );
    if let Some(z) = vecs.gather_to(0)? {
        assert_eq!(z.dims(), [n, got.len()]);
        let az = matmul(a, &z)?;
        let zl = z.mul(vals)?;
        let res = as_c64(&az.sub(&zl)?)?
            .iter()
            .fold(0.0f64, |m, x| m.max(x.norm()));
        assert!(
            res <= tol(dtype, n, scale) * 10.0,
            "{what}: residual ‖AZ − ZΛ‖ = {res:e}"
        );
        let gram = matmul(&z.t()?.conj()?, &z)?;
        let eye = Tensor::eye(dtype, DeviceType::Cpu, got.len())?;
        let orth = as_c64(&gram.sub(&eye)?)?
            .iter()
            .fold(0.0f64, |m, x| m.max(x.norm()));
        assert!(
            orth <= tol(dtype, n, 1.0) * 10.0,
            "{what}: ‖ZᴴZ − I‖ = {orth:e}"
        );
    }
    Ok(())
}

mpi_test!(eigh_matches_one_process_on_every_grid, [2, 3], &[], |w| {
    for (nprow, npcol) in grids(w.size()) {
        let grid = Grid::new(w, nprow, npcol)?;
        for dtype in [
            DataType::Float,
            DataType::Double,
            DataType::ComplexFloat,
            DataType::ComplexDouble,
        ] {
            for (n, nb) in [(1, 1), (7, 2), (100, 16), (500, 64)] {
                let what = format!("{nprow}×{npcol} {dtype} n {n} nb {nb}");
                let a = hermitian(dtype, n, n as u64)?;
                // NaN in the upper triangle, which must not be read.
                let mut given = a.cast(DataType::ComplexDouble)?;
                for i in 0..n.min(6) {
                    for j in i + 1..n.min(9) {
                        given.set_at(&[i, j], c64::new(f64::NAN, f64::NAN))?;
                    }
                }
                let given = given.cast(dtype)?;
                let d =
                    DistMatrix::scatter_from(&grid, (w.rank() == 0).then_some(&given), 0, nb, nb)?;
                // Both libraries; ELPA reads the whole matrix, so the NaN above tests
                // that its upper triangle is rebuilt from the lower one first.
                for backend in [DistEigBackend::Scalapack, DistEigBackend::Elpa] {
                    let what = format!("{what} {backend:?}");
                    // ELPA needs every rank to hold part of the matrix.
                    let elpa_fits = n > nb * (nprow.max(npcol) - 1);
                    let double = dtype.real_type() == DataType::Double;
                    match eigh_with(&d, EighRange::All, backend) {
                        Ok((vals, vecs)) => check_pairs(w, &what, &a, &vals, &vecs, (0, n))?,
                        Err(Error::InvalidArgument { .. })
                            if backend == DistEigBackend::Elpa && !elpa_fits => {}
                        // Debian's ELPA has no single precision.
                        Err(Error::UnsupportedDType { .. })
                            if backend == DistEigBackend::Elpa && !double => {}
                        Err(e) => return Err(e),
                    }
                }
            }
        }
    }
    Ok(())
});

mpi_test!(
    eigh_ranges_compute_only_the_pairs_asked_for,
    [2, 3],
    &[],
    |w| {
        let grid = Grid::square(w)?;
        for dtype in [
            DataType::Float,
            DataType::Double,
            DataType::ComplexFloat,
            DataType::ComplexDouble,
        ] {
            let n = 60;
            let a = hermitian(dtype, n, 11)?;
            let d = DistMatrix::scatter_from(&grid, (w.rank() == 0).then_some(&a), 0, 8, 8)?;
            let (all, _) = eigh_one(&a, EighRange::All, EigBackend::LapackEvd)?;
            let all = all.cast(DataType::Double)?.to_vec::<f64>()?;
            let scale = all.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            for (lo, hi) in [(0, 6), (17, 41), (0, n), (59, 60), (3, 3)] {
                let (vals, vecs) = eigh(&d, EighRange::Index(lo, hi))?;
                assert_eq!(vecs.shape(), (n, hi - lo));
                check_pairs(
                    w,
                    &format!("{dtype} Index({lo}, {hi})"),
                    &a,
                    &vals,
                    &vecs,
                    (lo, hi),
                )?;
                // Values alone (jobz = 'N'), for the range and the whole spectrum.
                for (range, (l, h)) in [
                    (EighRange::Index(lo, hi), (lo, hi)),
                    (EighRange::All, (0, n)),
                ] {
                    let only = eigvalsh(&d, range)?;
                    assert_eq!(only.dtype(), dtype.real_type());
                    let only = only.cast(DataType::Double)?.to_vec::<f64>()?;
                    assert_eq!(only.len(), h - l, "{dtype} eigvalsh {range:?}: count");
                    for (g, r) in only.iter().zip(&all[l..h]) {
                        assert!(
                            (g - r).abs() <= tol(dtype, n, scale),
                            "{dtype} eigvalsh {range:?}: {g} vs {r}"
                        );
                    }
                }
            }
            // A value window between two eigenvalues, so rounding cannot move one across.
            let (l, u) = ((all[9] + all[10]) / 2.0, (all[29] + all[30]) / 2.0);
            let (vals, vecs) = eigh(&d, EighRange::Value(l, u))?;
            check_pairs(w, &format!("{dtype} Value"), &a, &vals, &vecs, (10, 30))?;
            // ELPA takes the lowest pairs only; ScaLAPACK any range, values alone included.
            match eigh_with(&d, EighRange::Index(17, 41), DistEigBackend::Elpa) {
                Err(Error::InvalidArgument { .. } | Error::UnsupportedDType { .. }) => {}
                other => panic!("ELPA for Index(17, 41): got {other:?}"),
            }
            let backends = match dtype.real_type() {
                DataType::Double => &[DistEigBackend::Scalapack, DistEigBackend::Elpa][..],
                _ => &[DistEigBackend::Scalapack][..],
            };
            for (range, (l, h)) in [(EighRange::Index(0, 6), (0, 6)), (EighRange::All, (0, n))] {
                for &backend in backends {
                    let only = eigvalsh_with(&d, range, backend)?
                        .cast(DataType::Double)?
                        .to_vec::<f64>()?;
                    assert_eq!(only.len(), h - l);
                    for (g, r) in only.iter().zip(&all[l..h]) {
                        assert!(
                            (g - r).abs() <= tol(dtype, n, scale),
                            "{dtype} {backend:?} eigvalsh {range:?}: {g} vs {r}"
                        );
                    }
                }
            }
            match eigh(&d, EighRange::Index(0, n + 1)) {
                Err(Error::OutOfRange { .. }) => {}
                other => panic!("Index(0, n + 1): got {other:?}"),
            }
            match eigh(&d, EighRange::Value(1.0, f64::NAN)) {
                Err(Error::InvalidArgument { .. }) => {}
                other => panic!("Value(1, NaN): got {other:?}"),
            }
        }
        Ok(())
    }
);

mpi_test!(eigh_refuses_bad_input_on_every_rank, [2, 3], &[], |w| {
    let grid = Grid::square(w)?;
    let n = 9;
    for (bad, at) in [
        (f64::NAN, (5, 2)),
        (f64::INFINITY, (8, 8)),
        (f64::NEG_INFINITY, (4, 0)),
    ] {
        let mut a = hermitian(DataType::Double, n, 3)?;
        a.set_at(&[at.0, at.1], bad)?;
        let d = DistMatrix::scatter_from(&grid, (w.rank() == 0).then_some(&a), 0, 2, 2)?;
        match eigh(&d, EighRange::All) {
            Err(Error::NonFinite { row, col, .. }) if (row, col) == at => {}
            other => panic!("{bad} at {at:?}: rank {}: got {other:?}", w.rank()),
        }
    }
    let rect = DistMatrix::scatter_from(
        &grid,
        (w.rank() == 0).then_some(&random(DataType::Double, 4, 5, 0)?),
        0,
        2,
        2,
    )?;
    assert!(matches!(
        eigh(&rect, EighRange::All),
        Err(Error::ShapeMismatch { .. })
    ));
    let uneven = DistMatrix::scatter_from(
        &grid,
        (w.rank() == 0).then_some(&hermitian(DataType::Double, 6, 0)?),
        0,
        2,
        3,
    )?;
    assert!(matches!(
        eigh(&uneven, EighRange::All),
        Err(Error::ShapeMismatch { .. })
    ));
    let ints = Tensor::zeros(DataType::Int, DeviceType::Cpu, &[4, 4])?;
    let di = DistMatrix::scatter_from(&grid, (w.rank() == 0).then_some(&ints), 0, 2, 2)?;
    assert!(matches!(
        eigh(&di, EighRange::All),
        Err(Error::UnsupportedDType { .. })
    ));
    // n = 0.
    let empty = DistMatrix::scatter_from(
        &grid,
        (w.rank() == 0).then_some(&random(DataType::ComplexDouble, 0, 0, 0)?),
        0,
        4,
        4,
    )?;
    let (vals, vecs) = eigh(&empty, EighRange::All)?;
    assert_eq!((vals.dims(), vecs.shape()), (&[0usize][..], (0, 0)));
    // A zero block size; a gather to a rank that is not there (the same on every rank).
    assert!(matches!(
        DistMatrix::zeros(&grid, DataType::Double, 4, 4, 0, 2),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        di.gather_to(w.size()),
        Err(Error::OutOfRange { .. })
    ));
    // Grids that do not cover the ranks, or that the ranks disagree on.
    assert!(matches!(
        Grid::new(w, w.size(), 2),
        Err(Error::InvalidArgument { .. })
    ));
    let (r, c) = if w.rank() == 0 {
        (1, w.size())
    } else {
        (w.size(), 1)
    };
    assert!(matches!(
        Grid::new(w, r, c),
        Err(Error::RanksDisagree { .. })
    ));
    // Bad root on one rank: every rank fails.
    let root = if w.rank() == 0 { 7 } else { 0 };
    assert!(
        DistMatrix::scatter_from(&grid, (w.rank() == root).then_some(&ints), root, 2, 2).is_err()
    );
    Ok(())
});
