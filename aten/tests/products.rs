//! `matmul_op` and `matmul_into` with every pair of operation flags (N, T, C), for every
//! dtype, awkward sizes (0, 1, odd, non-square, > 256), row-major tensors, column-major
//! maps, transposed views and batches, against a plain triple loop; `alpha`/`beta` with
//! NaN in an output that must not be read; the `_into` forms of the element-wise ops.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::{
    c64, matmul, matmul_into, matmul_op, DataType, Device, DeviceType, Error, Scalar, Tensor, Trans,
};

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const OPS: [Trans; 3] = [Trans::N, Trans::T, Trans::C];

/// An element-wise `_into` method.
type IntoOp = fn(&Tensor, &Tensor, &mut Tensor) -> ctensor_aten::Result<()>;

fn values(t: &Tensor) -> Fallible<Vec<c64>> {
    Ok(t.cast(DataType::ComplexDouble)?.to_vec::<c64>()?)
}

/// `op(x)[i, j]` of the row-major `rows × cols` matrix `x` (before the op).
fn op_at(x: &[c64], cols: usize, op: Trans, i: usize, j: usize) -> c64 {
    match op {
        Trans::N => x[i * cols + j],
        Trans::T => x[j * cols + i],
        Trans::C => x[j * cols + i].conj(),
    }
}

/// The stored shape of an operand whose op-shape is `[r, c]`.
fn stored(op: Trans, r: usize, c: usize) -> [usize; 2] {
    if op == Trans::N {
        [r, c]
    } else {
        [c, r]
    }
}

/// The unit roundoff of a dtype (0 for integers).
fn unit(dt: DataType) -> f64 {
    match dt {
        DataType::Half => 9.8e-4,
        DataType::BFloat16 => 7.9e-3,
        DataType::Float | DataType::ComplexFloat => f32::EPSILON as f64,
        DataType::Double | DataType::ComplexDouble => f64::EPSILON,
        _ => 0.0,
    }
}

fn products_of<D: Device, T: Scalar>() -> TestResult {
    let dt = T::DTYPE;
    let mut r = rng(3);
    let small = matches!(
        dt,
        DataType::Half | DataType::BFloat16 | DataType::Int | DataType::Int64
    );
    let sizes: &[(usize, usize, usize)] = if small {
        &[(0, 3, 2), (1, 1, 1), (3, 5, 2), (7, 4, 9)]
    } else {
        &[
            (0, 3, 2),
            (3, 0, 4),
            (1, 1, 1),
            (3, 5, 2),
            (7, 4, 9),
            (300, 17, 5),
        ]
    };
    for &(m, k, n) in sizes {
        for op_a in OPS {
            for op_b in OPS {
                let sa = stored(op_a, m, k);
                let sb = stored(op_b, k, n);
                let (a, av) = random_on::<D, T>(&mut r, &sa);
                let (_, bv) = random_on::<D, T>(&mut r, &sb);
                // b as a column-major map: another layout for BLAS to read.
                let (_owner, b) = fortran_map::<D, T>(
                    &(0..sb[0] * sb[1])
                        .map(|f| bv[(f % sb[0]) * sb[1] + f / sb[0]])
                        .collect::<Vec<_>>(),
                    &sb,
                );
                let (ac, bc): (Vec<c64>, Vec<c64>) = (
                    av.iter().map(|x| x.to_c64()).collect(),
                    bv.iter().map(|x| x.to_c64()).collect(),
                );
                let mut want = vec![c64::new(0.0, 0.0); m * n];
                let mut scale = vec![0.0f64; m * n];
                for i in 0..m {
                    for j in 0..n {
                        for l in 0..k {
                            let p = op_at(&ac, sa[1], op_a, i, l) * op_at(&bc, sb[1], op_b, l, j);
                            want[i * n + j] += p;
                            scale[i * n + j] += p.norm();
                        }
                    }
                }
                let what = format!("{dt} {op_a:?}·{op_b:?} with m={m} k={k} n={n}");
                let got = matmul_op(&a, op_a, &b, op_b).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!((got.dtype(), got.dims()), (dt, &[m, n][..]), "{what}");
                let g = values(&got)?;
                for f in 0..m * n {
                    let tol = 2.0 * (k as f64 + 2.0) * unit(dt) * scale[f];
                    let w = if dt.is_complex() {
                        want[f]
                    } else {
                        c64::new(want[f].re, 0.0)
                    };
                    // Integers wrap, so compare them exactly in their own type.
                    let w = if dt.is_integer() {
                        values(&Tensor::from_slice(&[w], &[1])?.cast(dt)?)?[0]
                    } else {
                        w
                    };
                    assert!(
                        (g[f] - w).norm() <= tol,
                        "{what}: [{f}] got {}, want {w}",
                        g[f]
                    );
                }
                // The same through matmul_into with alpha = 1/2 (exact, and no overflow in
                // 16-bit types), beta = 0 into NaN: the old contents are not read.
                if dt.is_float() || dt.is_complex() {
                    let mut out = on::<D>(Tensor::full(T::cast_from(f64::NAN), D::TYPE, &[m, n])?);
                    matmul_into(&a, op_a, &b, op_b, 0.5, 0.0, &mut out)?;
                    let o = values(&out)?;
                    for f in 0..m * n {
                        assert!(
                            (o[f] - g[f] * 0.5).norm() <= unit(dt) * g[f].norm(),
                            "{what}: into [{f}] {} vs {} / 2",
                            o[f],
                            g[f]
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

device_test!(matmul_op_matches_a_triple_loop_for_every_flag_pair_and_dtype, D -> Result {
    for_all_dtypes!(products_of, D);
    Ok(())
});

device_test!(matmul_into_accumulates_with_beta_into_any_layout, D -> Result {
    let mut r = rng(9);
    let (a, _) = random_on::<D, c64>(&mut r, &[4, 3]);
    let (b, _) = random_on::<D, c64>(&mut r, &[4, 5]);
    let (c0, c0v) = random_on::<D, c64>(&mut r, &[3, 5]);
    // out = 0.5 i · aᴴ b + 2 c0, into a column-major map holding c0.
    let (_owner, mut out) = fortran_map::<D, c64>(
        &(0..15).map(|f| c0v[(f % 3) * 5 + f / 3]).collect::<Vec<_>>(),
        &[3, 5],
    );
    matmul_into(&a, Trans::C, &b, Trans::N, c64::new(0.0, 0.5), 2.0, &mut out)?;
    let want = (&(&matmul_op(&a, Trans::C, &b, Trans::N)? * c64::new(0.0, 0.5))?
        + &(&c0 * 2.0)?)
        ?;
    assert!(out.contiguous()?.allclose(&want, 1e-14, 1e-12)?);
    // Batched with a broadcast right operand, both transposed.
    let (x, _) = random_on::<D, f64>(&mut r, &[2, 3, 4]);
    let (y, _) = random_on::<D, f64>(&mut r, &[5, 3]);
    let got = matmul_op(&x, Trans::T, &y, Trans::T)?;
    assert_eq!(got.dims(), [2, 4, 5]);
    for bidx in 0..2 {
        let want = matmul(&x.index(bidx)?.t()?, &y.t()?)?;
        assert!(got.index(bidx)?.allclose(&want, 1e-14, 0.0)?);
    }
    // A real output cannot take a complex product; shapes must agree.
    let mut real = on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[3, 5])?);
    let e = matmul_into(&a, Trans::C, &b, Trans::N, 1.0, 0.0, &mut real).unwrap_err();
    assert!(matches!(e, Error::CannotCast { op: "matmul_into", .. }), "{e}");
    let e = matmul_op(&a, Trans::N, &b, Trans::N).unwrap_err();
    assert!(e.to_string().starts_with("matmul:"), "{e}");
    let e = matmul_op(&a.index(0)?, Trans::N, &b, Trans::N).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { op: "matmul", .. }), "{e}");
    Ok(())
});

device_test!(elementwise_into_forms_write_into_existing_outputs, D -> Result {
    let a = on::<D>(Tensor::from_slice(&[6.0f64, 8.0, 10.0, 12.0], &[2, 2])?);
    let b = on::<D>(Tensor::from_slice(&[2.0f32, 4.0], &[2])?);
    let (_owner, mut out) = fortran_map::<D, f64>(&[f64::NAN; 4], &[2, 2]);
    let cases: [(&str, IntoOp, [f64; 4]); 4] = [
        ("add_into", Tensor::add_into, [8.0, 12.0, 12.0, 16.0]),
        ("sub_into", Tensor::sub_into, [4.0, 4.0, 8.0, 8.0]),
        ("mul_into", Tensor::mul_into, [12.0, 32.0, 20.0, 48.0]),
        ("div_into", Tensor::div_into, [3.0, 2.0, 5.0, 3.0]),
    ];
    for (name, f, want) in cases {
        f(&a, &b, &mut out)?;
        assert_eq!(out.contiguous()?.to_vec::<f64>()?, want, "{name}");
        let mut wrong = on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[2, 3])?);
        let e = f(&a, &b, &mut wrong).unwrap_err();
        assert!(matches!(e, Error::ShapeMismatch { .. }) && e.to_string().starts_with(name), "{e}");
    }
    Ok(())
});

/// `a · y` of the row-major `n × m` and `m × k` value vectors by a plain loop.
fn plain_product(a: &[c64], y: &[c64], n: usize, m: usize, k: usize) -> Vec<c64> {
    let mut out = vec![c64::new(0.0, 0.0); n * k];
    for r in 0..n {
        for c in 0..k {
            for l in 0..m {
                out[r * k + c] += a[r * m + l] * y[l * k + c];
            }
        }
    }
    out
}

fn right_products_of<D: Device, T: Scalar>() -> TestResult {
    let dt = T::DTYPE;
    let mut r = rng(17);
    let small = matches!(
        dt,
        DataType::Half | DataType::BFloat16 | DataType::Int | DataType::Int64
    );
    let sizes: &[(usize, usize, usize)] = if small {
        &[(0, 3, 2), (1, 1, 1), (5, 4, 3)]
    } else {
        &[
            (0, 3, 2),
            (4, 0, 0),
            (1, 1, 1),
            (7, 5, 5),
            (9, 6, 2),
            (300, 17, 13),
        ]
    };
    for &(n, m, k) in sizes {
        let (a, av) = random_on::<D, T>(&mut r, &[n, m]);
        let (y, yv) = random_on::<D, T>(&mut r, &[m, k]);
        let to_c = |v: &[T]| v.iter().map(|x| x.to_c64()).collect::<Vec<_>>();
        let want = plain_product(&to_c(&av), &to_c(&yv), n, m, k);
        let tol = |f: usize| 2.0 * (m as f64 + 2.0) * unit(dt) * (1.0 + want[f].norm());
        // Row-major, a column-major map, and the columns 2.. of a wider matrix.
        let (_owner, fortran) = fortran_map::<D, T>(
            &(0..n * m)
                .map(|f| av[(f % n.max(1)) * m + f / n.max(1)])
                .collect::<Vec<_>>(),
            &[n, m],
        );
        // Its first two columns are NaN (zero for integers), and must be neither read
        // nor written.
        let wide = on::<D>(Tensor::full(T::cast_from(f64::NAN), D::TYPE, &[n, m + 2])?);
        wide.narrow(1, 2, m)?.assign(&a)?;
        for (layout, mut t) in [
            ("row-major", a.try_clone()?),
            ("column-major map", fortran.share()),
            ("column view", wide.narrow(1, 2, m)?),
        ] {
            let what = format!("{dt} {layout} [{n}, {m}]·[{m}, {k}]");
            let before = t.share();
            t.matmul_right_(&y)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!((t.dtype(), t.dims()), (dt, &[n, k][..]), "{what}");
            assert!(
                n == 0 || k == 0 || t.shares_memory_with(&before),
                "{what}: not in place"
            );
            let g = values(&t.contiguous()?)?;
            for f in 0..n * k {
                let ok = if dt.is_integer() {
                    // Integers wrap: the loop's value in the type itself, exactly.
                    g[f] == values(&Tensor::from_slice(&[want[f]], &[1])?.cast(dt)?)?[0]
                } else {
                    (g[f] - want[f]).norm() <= tol(f)
                };
                assert!(ok, "{what}: [{f}] got {}, want {}", g[f], want[f]);
            }
        }
        // The wide matrix's first two columns were not touched.
        let untouched = values(&wide.narrow(1, 0, 2)?.contiguous()?)?;
        let fill = values(&Tensor::full(
            T::cast_from(f64::NAN),
            DeviceType::Cpu,
            &[1],
        )?)?[0];
        assert!(
            untouched.iter().all(|x| if fill.re.is_nan() {
                x.re.is_nan()
            } else {
                *x == fill
            }),
            "{dt}: wrote outside the view"
        );
    }
    Ok(())
}

device_test!(matmul_right_in_place_matches_a_plain_loop_for_every_dtype_and_layout, D -> Result {
    for_all_dtypes!(right_products_of, D);
    Ok(())
});

device_test!(matmul_right_reads_an_aliased_factor_before_writing_and_refuses_bad_shapes, D -> Result {
    let mut r = rng(23);
    // y is self's own first three rows, and self is tall enough for two slabs of the
    // product (2^19 elements each): the first slab overwrites y, so y must be read
    // before (copied), or the second slab gets the wrong factor.
    let n = 200_003;
    let (a, av) = random_on::<D, c64>(&mut r, &[n, 3]);
    let want = plain_product(&av, &av[..9], n, 3, 3);
    let mut t = a.share();
    t.matmul_right_(&a.narrow(0, 0, 3)?)?;
    let g = values(&t.contiguous()?)?;
    for f in 0..3 * n {
        assert!((g[f] - want[f]).norm() <= 1e-13 * (1.0 + want[f].norm()), "[{f}]");
    }
    // More columns out than in, a factor with the wrong rows, a vector, a complex factor
    // for a real matrix: errors that say what was expected, and the matrix unchanged.
    let (x, xv) = random_on::<D, f64>(&mut r, &[4, 3]);
    for y in [
        on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[3, 4])?),
        on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[2, 2])?),
        on::<D>(Tensor::zeros(DataType::Double, D::TYPE, &[3])?),
    ] {
        let mut t = x.share();
        let e = t.matmul_right_(&y).unwrap_err();
        assert!(matches!(e, Error::ShapeMismatch { op: "matmul_right_", .. }), "{e}");
        assert!(e.to_string().contains("k <= m"), "{e}");
        assert_eq!(t.dims(), [4, 3]);
    }
    let mut t = x.share();
    let e = t.matmul_right_(&on::<D>(Tensor::zeros(DataType::ComplexDouble, D::TYPE, &[3, 3])?)).unwrap_err();
    assert!(matches!(e, Error::CannotCast { op: "matmul_right_", .. }), "{e}");
    assert_eq!(x.to_vec::<f64>()?, xv);
    // A basis grown along its columns restarts in place: length k, capacity kept.
    let mut basis = ctensor_aten::GrowableTensor::new(DataType::Double, D::TYPE, &[4, 0], 1, 8)?;
    basis.push(&x)?;
    basis.push(&x)?;


    let e3 = on::<D>(Tensor::eye(DataType::Double, D::TYPE, 3)?);
    // [x, x] · [I; I] = 2 x.
    let stacked = ctensor_aten::cat(&[&e3, &e3], 0)?;
    basis.matmul_right_(&stacked)?;
    assert_eq!((basis.len(), basis.capacity()), (3, 8));
    let twice: Vec<f64> = xv.iter().map(|v| 2.0 * v).collect();
    assert_eq!(basis.view()?.contiguous()?.to_vec::<f64>()?, twice);
    let mut rows = ctensor_aten::GrowableTensor::new(DataType::Double, D::TYPE, &[0, 3], 0, 8)?;
    rows.push(&x)?;
    let e = rows.matmul_right_(&e3).unwrap_err();
    assert!(e.to_string().contains("grown along its columns"), "{e}");
    Ok(())
});
