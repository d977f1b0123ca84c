//! Views (narrow, index, permute, transpose, t, reshape) and materialising copies
//! (contiguous, slice), checked element by element against index arithmetic; on the CPU
//! and, through `device_test!`, on the GPU (one `SKIP` line per test without one).
#![deny(unused_must_use)]

mod common;

use common::{all_indices, flat, random_on, rng, TestResult};
use ctensor_aten::{c64, DataType, Device, Error, Scalar, Tensor};

fn slice_matches_reference_loop<D: Device, T: Scalar>() -> TestResult {
    let mut r = rng(11);
    let cases: [(&[usize], &[usize], &[usize]); 6] = [
        (&[9], &[2], &[5]),
        (&[300], &[0], &[300]),
        (&[5, 7], &[1, 2], &[3, 4]),
        (&[4, 5, 6], &[1, 0, 2], &[2, 5, 3]),
        (&[3, 4, 5, 6], &[1, 1, 0, 3], &[2, 3, 5, 2]),
        (&[3, 4, 5, 6], &[2, 3, 4, 5], &[0, 1, 1, 1]),
    ];
    for (shape, starts, sizes) in cases {
        let (t, v) = random_on::<D, T>(&mut r, shape);
        let s = t.slice(starts, sizes)?;
        assert_eq!(s.dims(), sizes);
        assert!(
            s.is_contiguous() && !s.shares_memory_with(&t),
            "slice is a deep copy"
        );
        let got = s.to_vec::<T>()?;
        for idx in all_indices(sizes) {
            let src: Vec<usize> = idx.iter().zip(starts).map(|(i, s)| i + s).collect();
            assert!(
                got[flat(sizes, &idx)] == v[flat(shape, &src)],
                "{} {shape:?} {idx:?}",
                T::DTYPE
            );
        }
        // The same block from a transposed (non-contiguous) view.
        let perm: Vec<usize> = (0..shape.len()).rev().collect();
        let tt = t.permute(&perm)?;
        let rs: Vec<usize> = starts.iter().rev().copied().collect();
        let rz: Vec<usize> = sizes.iter().rev().copied().collect();
        let st = tt.slice(&rs, &rz)?.to_vec::<T>()?;
        for idx in all_indices(&rz) {
            let src: Vec<usize> = idx.iter().rev().zip(starts).map(|(i, s)| i + s).collect();
            assert!(st[flat(&rz, &idx)] == v[flat(shape, &src)]);
        }
    }
    Ok(())
}

device_test!(slice_rank_1_to_4_every_dtype, D -> Result {
    for_all_dtypes!(slice_matches_reference_loop, D);
    Ok(())
});

device_test!(slice_errors_name_the_problem, D -> Result {
    let t = Tensor::zeros(DataType::Double, D::TYPE, &[3, 4])?;
    assert!(matches!(
        t.slice(&[0], &[1]),
        Err(Error::ShapeMismatch { op: "slice", .. })
    ));
    let e = t.slice(&[2, 0], &[2, 4]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::OutOfRange {
                op: "slice",
                given: 4,
                ..
            }
        ),
        "{e}"
    );
    Ok(())
});

device_test!(narrow_index_permute_are_zero_copy_views, D -> Result {
    let mut r = rng(12);
    let shape = [4, 5, 6];
    let (t, v) = random_on::<D, f64>(&mut r, &shape);
    let n = t.narrow(1, 2, 3)?;
    assert!(n.shares_memory_with(&t) && !n.is_contiguous());
    assert_eq!(n.dims(), [4, 3, 6]);
    let nv = n.to_vec::<f64>()?;
    for idx in all_indices(&[4, 3, 6]) {
        assert_eq!(
            nv[flat(&[4, 3, 6], &idx)],
            v[flat(&shape, &[idx[0], idx[1] + 2, idx[2]])]
        );
    }
    let p = t.permute(&[2, 0, 1])?;
    assert_eq!(p.dims(), [6, 4, 5]);
    for idx in all_indices(&[6, 4, 5]) {
        let want = v[flat(&shape, &[idx[1], idx[2], idx[0]])];
        assert_eq!(p.get_value::<f64>(&idx)?, want);
    }
    let tr = t.transpose(0, 2)?;
    assert_eq!(
        tr.get_value::<f64>(&[5, 1, 3])?,
        v[flat(&shape, &[3, 1, 5])]
    );
    let row = t.index(3)?.index(4)?;
    assert_eq!(
        row.to_vec::<f64>()?,
        v[flat(&shape, &[3, 4, 0])..][..6]
    );
    let elem = row.index(5)?;
    assert_eq!(elem.ndim(), 0);
    assert_eq!(
        elem.get_value::<f64>(&[])?,
        v[flat(&shape, &[3, 4, 5])]
    );
    // Writing through a view changes the parent.
    let mut col = t.narrow(2, 1, 1)?;
    col.set_value(-7.0f64)?;
    assert_eq!(t.get_value::<f64>(&[2, 3, 1])?, -7.0);
    assert_eq!(
        t.get_value::<f64>(&[2, 3, 0])?,
        v[flat(&shape, &[2, 3, 0])]
    );
    Ok(())
});

device_test!(index_row_view_outlives_its_parent, D -> Result {
    let parent = Tensor::arange(DataType::ComplexDouble, D::TYPE, 0.0, 12.0, 1.0)?;
    let parent = parent.reshape(&[3, 4])?;
    let row = parent.index(2)?;
    drop(parent);
    let want: Vec<c64> = (8..12).map(|i| c64::new(i as f64, 0.0)).collect();
    assert_eq!(row.to_vec::<c64>()?, want);
    let again = row.try_clone()?;
    assert_eq!(again.to_vec::<c64>()?, want);
    Ok(())
});

device_test!(transpose_t_and_contiguous, D -> Result {
    let t = Tensor::arange(DataType::Int, D::TYPE, 0.0, 6.0, 1.0)
        ?
        .reshape(&[2, 3])
        ?;
    let tt = t.t()?;
    assert!(tt.is_fortran_contiguous() && !tt.is_contiguous());
    let c = tt.contiguous()?;
    assert!(c.is_contiguous() && !c.shares_memory_with(&t));
    assert_eq!(c.to_vec::<i32>()?, [0, 3, 1, 4, 2, 5]);
    let same = t.contiguous()?;
    assert!(
        same.shares_memory_with(&t),
        "contiguous() of a contiguous tensor is shallow"
    );
    assert_eq!(t.index(0)?.t()?.dims(), [3]);
    let cube = Tensor::zeros(DataType::Int, D::TYPE, &[2, 2, 2])?;
    assert!(matches!(
        cube.t(),
        Err(Error::Unsupported { op: "t", .. })
    ));
    Ok(())
});

device_test!(view_errors, D -> Result {
    let t = Tensor::zeros(DataType::Float, D::TYPE, &[3, 4])?;
    assert!(matches!(
        t.narrow(2, 0, 1),
        Err(Error::OutOfRange {
            op: "narrow",
            given: 2,
            ..
        })
    ));
    assert!(matches!(
        t.narrow(1, 3, 2),
        Err(Error::OutOfRange {
            op: "narrow",
            given: 5,
            ..
        })
    ));
    assert!(matches!(
        t.narrow(1, usize::MAX, 2),
        Err(Error::OutOfRange { .. })
    ));
    assert!(matches!(
        t.index(3),
        Err(Error::OutOfRange {
            op: "index",
            given: 3,
            ..
        })
    ));
    let s = Tensor::scalar(1.0f32)?;
    assert!(matches!(
        s.index(0),
        Err(Error::InvalidArgument { op: "index", .. })
    ));
    for bad in [&[0usize, 0][..], &[0], &[0, 2], &[1, 0, 2]] {
        let e = t.permute(bad).unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument { op: "permute", .. }),
            "{bad:?}"
        );
    }
    assert!(matches!(
        t.transpose(0, 5),
        Err(Error::OutOfRange {
            op: "transpose",
            ..
        })
    ));
    Ok(())
});

device_test!(reshape_with_minus_one_views_or_copies, D -> Result {
    let t = Tensor::arange(DataType::Double, D::TYPE, 0.0, 24.0, 1.0)?;
    let r = t.reshape(&[2, -1, 4])?;
    assert_eq!(r.dims(), [2, 3, 4]);
    assert!(
        r.shares_memory_with(&t),
        "a contiguous tensor reshapes as a view"
    );
    assert_eq!(r.get_value::<f64>(&[1, 2, 3])?, 23.0);
    // A transposed view must be copied to be read in row-major order.
    let m = t.reshape(&[4, 6])?.t()?;
    let flatm = m.reshape(&[-1])?;
    assert!(!flatm.shares_memory_with(&t));
    let want: Vec<f64> = (0..6)
        .flat_map(|j| (0..4).map(move |i| (i * 6 + j) as f64))
        .collect();
    assert_eq!(flatm.to_vec::<f64>()?, want);
    // The four failure cases.
    assert!(matches!(
        t.reshape(&[-1, -1]),
        Err(Error::InvalidArgument { op: "reshape", .. })
    ));
    assert!(matches!(
        t.reshape(&[-3, 8]),
        Err(Error::InvalidArgument { op: "reshape", .. })
    ));
    assert!(matches!(
        t.reshape(&[5, -1]),
        Err(Error::ShapeMismatch { op: "reshape", .. })
    ));
    assert!(matches!(
        t.reshape(&[5, 5]),
        Err(Error::ShapeMismatch { op: "reshape", .. })
    ));
    Ok(())
});

/// `diagonal()` of a matrix against `m[i][i]`: row-major, transposed and narrowed views
/// (strides other than `[c, 1]`), square, wide, tall and empty shapes; a zero-copy view.
fn diagonal_matches_reference_loop<D: Device, T: Scalar>() -> TestResult {
    let mut r = rng(29);
    for shape in [[1usize, 1], [3, 7], [7, 3], [300, 257], [0, 5], [5, 0]] {
        let (t, v) = random_on::<D, T>(&mut r, &shape);
        let [rows, cols] = shape;
        let d = t.diagonal()?;
        assert_eq!(d.dims(), &[rows.min(cols)]);
        assert!(
            rows.min(cols) == 0 || d.shares_memory_with(&t),
            "diagonal is a view"
        );
        let got = d.to_vec::<T>()?;
        for (i, g) in got.iter().enumerate() {
            assert!(*g == v[i * cols + i], "{} {shape:?} ({i}, {i})", T::DTYPE);
        }
        // Of the transpose: the same diagonal, read through strides [1, cols].
        let tt = t.t()?.diagonal()?.to_vec::<T>()?;
        assert!(tt == got, "{} {shape:?} transposed", T::DTYPE);
        // Of a narrowed view: the block from (1, 1) on.
        if rows > 1 && cols > 1 {
            let n = t.narrow(0, 1, rows - 1)?.narrow(1, 1, cols - 1)?;
            let nd = n.diagonal()?.to_vec::<T>()?;
            assert_eq!(nd.len(), (rows - 1).min(cols - 1));
            for (i, g) in nd.iter().enumerate() {
                assert!(
                    *g == v[(i + 1) * cols + i + 1],
                    "{} {shape:?} narrowed ({i})",
                    T::DTYPE
                );
            }
        }
    }
    Ok(())
}

device_test!(diagonal_of_every_view_and_dtype, D -> Result {
    for_all_dtypes!(diagonal_matches_reference_loop, D);
    for shape in [&[4usize][..], &[2, 3, 4], &[]] {
        let t = Tensor::zeros(DataType::Double, D::TYPE, shape)?;
        let e = t.diagonal().unwrap_err();
        assert!(
            matches!(&e, Error::NotAMatrix { op: "diagonal", .. })
                && e.to_string().contains("rank 2"),
            "{shape:?}: {e}"
        );
    }
    // A zero-size matrix with a huge other dimension: an empty view, no allocation.
    let t = Tensor::zeros(DataType::ComplexDouble, D::TYPE, &[1 << 40, 0])?;
    assert_eq!(t.diagonal()?.dims(), &[0]);
    Ok(())
});

/// `narrow_step(dim, start, len, step)` against the index arithmetic `start + i * step`:
/// each dimension of ranks 1 to 3, steps 1 to 7, empty results (also at the end of a
/// dimension), a transposed source; a zero-copy view that writes through.
fn narrow_step_matches_reference_loop<D: Device, T: Scalar>() -> TestResult {
    let mut r = rng(41);
    for shape in [&[1usize][..], &[9], &[300], &[5, 7], &[4, 3, 6]] {
        let (t, v) = random_on::<D, T>(&mut r, shape);
        for dim in 0..shape.len() {
            let size = shape[dim];
            for step in 1..=7 {
                for start in [0, 1, size / 2, size - 1, size] {
                    if start > size {
                        continue;
                    }
                    let len = if start == size {
                        0
                    } else {
                        (size - 1 - start) / step + 1
                    };
                    for len in [0, len / 2, len] {
                        let s = t.narrow_step(dim, start, len, step)?;
                        let mut dims = shape.to_vec();
                        dims[dim] = len;
                        assert_eq!(s.dims(), &dims[..]);
                        assert!(len == 0 || s.shares_memory_with(&t), "a view");
                        let got = s.to_vec::<T>()?;
                        for idx in all_indices(&dims) {
                            let mut src = idx.clone();
                            src[dim] = start + idx[dim] * step;
                            assert!(
                                got[flat(&dims, &idx)] == v[flat(shape, &src)],
                                "{} {shape:?} dim {dim} {start}+{len}x{step} at {idx:?}",
                                T::DTYPE
                            );
                        }
                    }
                }
            }
        }
    }
    // Of a transposed view: rows 0, 2, 4 of the transpose are columns 0, 2, 4.
    let (t, v) = random_on::<D, T>(&mut r, &[3, 5]);
    let got = t.t()?.narrow_step(0, 0, 3, 2)?.to_vec::<T>()?;
    for i in 0..3 {
        for j in 0..3 {
            assert!(
                got[i * 3 + j] == v[j * 5 + 2 * i],
                "{} transposed",
                T::DTYPE
            );
        }
    }
    Ok(())
}

device_test!(narrow_step_every_dtype_and_its_errors, D -> Result {
    for_all_dtypes!(narrow_step_matches_reference_loop, D);
    // Writes through the view land on every other element.
    let t = Tensor::zeros(DataType::Double, D::TYPE, &[7])?;
    t.narrow_step(0, 1, 3, 2)?.fill(1.0)?;
    assert_eq!(t.to_vec::<f64>()?, vec![0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0]);
    let e = t.narrow_step(0, 0, 2, 0).unwrap_err();
    assert!(e.to_string().contains("step of at least 1"), "{e}");
    // Entries 1, 4, 7: the last is past the end of 7.
    let e = t.narrow_step(0, 1, 3, 3).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { op: "narrow_step", .. }) && e.to_string().contains("below 7"), "{e}");
    let e = t.narrow_step(0, 8, 0, 1).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { .. }), "{e}");
    let e = t.narrow_step(1, 0, 1, 1).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { .. }), "{e}");
    // A step so large the index arithmetic overflows: refused, no wrap.
    let e = t.narrow_step(0, 1, 3, usize::MAX / 2).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { .. }), "{e}");
    // Zero entries of a huge dimension.
    let z = Tensor::zeros(DataType::ComplexFloat, D::TYPE, &[1 << 40, 0])?;
    assert_eq!(z.narrow_step(0, 5, 3, 1 << 30)?.dims(), &[3, 0]);
    Ok(())
});
