//! Assembling and selecting against plain index loops, on the CPU and (through
//! `device_test!`) the GPU: `cat`/`stack` along every dimension with empty and odd
//! extents, mixed layouts and mixed dtypes; `index_select`/`take`/`compress`/
//! `masked_select` for every dtype, repeated and reversed indices, strided sources and
//! zero-size tensors with huge other dimensions; `split`/`chunk` as views; `assign`
//! into views (overlapping, broadcast, across devices); `GrowableTensor`; `item`.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::{
    c64, cat, concat, matmul, stack, DataType, Device, Error, GrowableTensor, Scalar, Tensor,
};
use DataType::*;

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn values(t: &Tensor) -> Fallible<Vec<c64>> {
    Ok(t.cast(ComplexDouble)?.to_vec::<c64>()?)
}

/// A `shape` tensor of `dt` on `D` whose element at flat row-major index `k` is `k + 1`
/// (exact in every dtype for these sizes), plus 0.5i for complex types.
fn counting<D: Device>(dt: DataType, shape: &[usize]) -> Fallible<Tensor> {
    Ok({
        let n: usize = shape.iter().product();
        let v: Vec<c64> = (0..n).map(|k| c64::new(k as f64 + 1.0, 0.5)).collect();
        on::<D>(Tensor::from_slice(&v, shape)?.cast(dt)?)
    })
}

/// The row-major multi-index of flat index `f` in `shape`.
fn unflat(shape: &[usize], mut f: usize) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = f % shape[d];
        f /= shape[d];
    }
    idx
}

device_test!(cat_and_stack_match_index_loops_along_every_dimension, D -> Result {
    let base = [2usize, 3, 4];
    for dim in 0..3 {
        let parts: Vec<Tensor> = [1usize, 0, 5]
            .iter()
            .enumerate()
            .map(|(k, &len)| {
                let mut s = base;
                s[dim] = len;
                // Mixed dtypes: f32, f64 and i32 promote to f64.
                counting::<D>([Float, Double, Int][k], &s).unwrap()
            })
            .collect();
        let refs: Vec<&Tensor> = parts.iter().collect();
        let got = cat(&refs, dim)?;
        assert_eq!(got.dtype(), Double, "cat promotes");
        let mut want_shape = base;
        want_shape[dim] = 6;
        assert_eq!(got.dims(), want_shape);
        let g = values(&got)?;
        let pv: Vec<Vec<c64>> = parts.iter().map(values).collect::<Fallible<_>>()?;
        for (f, v) in g.iter().enumerate() {
            let mut idx = unflat(&want_shape, f);
            // Which part, and where in it.
            let (mut k, mut at) = (0, idx[dim]);
            while at >= parts[k].dims()[dim] {
                at -= parts[k].dims()[dim];
                k += 1;
            }
            idx[dim] = at;
            let want = pv[k][flat(parts[k].dims(), &idx)];
            let want = if parts[k].dtype().is_complex() { want } else { c64::new(want.re, 0.0) };
            assert_eq!(*v, want, "cat along {dim} at {f}");
        }
        assert_eq!(values(&concat(&refs, dim)?)?, g, "concat is cat");
    }
    // A transposed view and a column-major map next to a plain tensor.
    let a = counting::<D>(ComplexDouble, &[3, 2])?;
    let (_owner, map) = fortran_map::<D, c64>(&values(&counting::<D>(ComplexDouble, &[3, 2])?)?, &[2, 3]);
    let at = a.t()?;
    let got = cat(&[&at, &map], 0)?;
    let mut want = values(&at.contiguous()?)?;
    want.extend(values(&map.contiguous()?)?);
    assert_eq!(values(&got)?, want);
    // stack at every position 0..=rank against unsqueeze + cat.
    let x = counting::<D>(Int64, &[2, 3])?;
    let y = (&x * 10)?;
    for dim in 0..=2 {
        let s = stack(&[&x, &y], dim)?;
        let mut shape = vec![2, 3];
        shape.insert(dim, 2);
        assert_eq!(s.dims(), shape);
        let xv = x.to_vec::<i64>()?;
        for (f, v) in s.to_vec::<i64>()?.iter().enumerate() {
            let mut idx = unflat(&shape, f);
            let which = idx.remove(dim);
            let want = xv[flat(&[2, 3], &idx)] * if which == 0 { 1 } else { 10 };
            assert_eq!(*v, want, "stack at {dim}, element {f}");
        }
    }
    Ok(())
});

device_test!(assembling_zero_size_tensors_with_huge_axes_allocates_nothing, D -> Result {
    let big = 1usize << 40;
    let h = on::<D>(Tensor::zeros(Double, D::TYPE, &[big, 0])?);
    assert_eq!(cat(&[&h, &h], 1)?.dims(), [big, 0]);
    assert_eq!(cat(&[&h, &h], 0)?.dims(), [2 * big, 0]);
    assert_eq!(stack(&[&h, &h], 0)?.dims(), [2, big, 0]);
    assert_eq!(h.masked_select(&h)?.dims(), [0]);
    assert_eq!(h.compress(1, &on::<D>(Tensor::zeros(Int, D::TYPE, &[0])?))?.dims(), [big, 0]);
    assert_eq!(h.split(3, 1)?.len(), 0);
    let e = stack(&[], 0).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { op: "stack", .. }), "{e}");
    Ok(())
});

device_test!(cat_and_stack_refuse_what_does_not_fit, D -> Result {
    let a = counting::<D>(Double, &[2, 3])?;
    let b = counting::<D>(Double, &[3, 3])?;
    let e = cat(&[], 0).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { op: "cat", .. }), "{e}");
    let e = cat(&[&a, &b], 1).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { op: "cat", .. }), "{e}");
    assert!(e.to_string().contains("tensor 1"), "{e}");
    let e = cat(&[&a, &counting::<D>(Double, &[6])?], 0).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    let e = cat(&[&a, &b], 2).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { op: "cat", .. }), "{e}");
    assert_eq!(cat(&[&a, &b], 0)?.dims(), [5, 3]);
    let e = stack(&[&a, &b], 0).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { op: "stack", .. }), "{e}");
    let e = stack(&[&a, &a], 3).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { op: "stack", .. }), "{e}");
    Ok(())
});

fn gathers_every_dtype<D: Device, T: Scalar>() -> TestResult {
    let dt = T::DTYPE;
    let shape = [4usize, 5, 6];
    let x = counting::<D>(dt, &shape)?;
    // A strided source too: the same values through a permuted copy's transpose view.
    let permuted = x.permute(&[2, 0, 1])?.contiguous()?;
    let strided = permuted.permute(&[1, 2, 0])?;
    assert!(!strided.is_contiguous());
    let xv = values(&x)?;
    for dim in 0..3 {
        let n = shape[dim];
        let lists: [Vec<usize>; 4] = [
            vec![],
            vec![n - 1],
            (0..n).rev().collect(),
            vec![0, n - 1, 0, 1, 1],
        ];
        for idx in &lists {
            let mut out_shape = shape;
            out_shape[dim] = idx.len();
            let want: Vec<c64> = (0..out_shape.iter().product())
                .map(|f| {
                    let mut i = unflat(&out_shape, f);
                    i[dim] = idx[i[dim]];
                    xv[flat(&shape, &i)]
                })
                .collect();
            let as_i64: Vec<i64> = idx.iter().map(|&i| i as i64).collect();
            let as_i32: Vec<i32> = idx.iter().map(|&i| i as i32).collect();
            let idx64 = Tensor::from_slice(&as_i64, &[idx.len()])?;
            let idx32 = on::<D>(Tensor::from_slice(&as_i32, &[idx.len()])?);
            for (what, got) in [
                (
                    "index_select i64 (host indices)",
                    x.index_select(dim, &idx64),
                ),
                (
                    "index_select i32 (device indices)",
                    x.index_select(dim, &idx32),
                ),
                ("take", x.take(dim, idx)),
                ("take of a strided view", strided.take(dim, idx)),
            ] {
                let got = got.unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(
                    (got.dtype(), got.device(), got.dims()),
                    (dt, D::TYPE, &out_shape[..]),
                    "{what}"
                );
                assert_eq!(values(&got)?, want, "{dt} {what} along {dim} by {idx:?}");
            }
        }
    }
    Ok(())
}

device_test!(index_select_and_take_match_index_loops_for_every_dtype, D -> Result {
    for_all_dtypes!(gathers_every_dtype, D);
    Ok(())
});

// Large enough that the host splits the rows over threads (2^18 elements by default),
// in ranges that start inside an outer row: gathers and scatters of one element per row
// (a plain load and store) and of three, against plain loops, in i64 (exact).
device_test!(large_gathers_and_scatters_split_over_threads_match_loops, D -> Result {
    let (outer, size, nidx) = (3usize, 1009usize, 100_003usize);
    let idx: Vec<i64> = (0..nidx).map(|j| ((j * 7919 + 13) % size) as i64).collect();
    let idx_t = on::<D>(Tensor::from_slice(&idx, &[nidx])?);
    for inner in [1usize, 3] {
        let n = outer * size * inner;
        let src: Vec<i64> = (0..n as i64).map(|k| k * 3 + 1).collect();
        let x = on::<D>(Tensor::from_slice(&src, &[outer, size, inner])?);
        let got = x.index_select(1, &idx_t)?.to_vec::<i64>()?;
        for o in 0..outer {
            for (j, &i) in idx.iter().enumerate() {
                for e in 0..inner {
                    let want = src[(o * size + i as usize) * inner + e];
                    assert_eq!(got[(o * nidx + j) * inner + e], want, "gather {inner}: {o} {j} {e}");
                }
            }
        }
        // Scatter a permutation of the big axis back: distinct indices.
        let big = 100_003usize;
        let perm: Vec<i64> = (0..big).map(|j| ((j * 7919) % big) as i64).collect();
        let vals: Vec<i64> = (0..(outer * big * inner) as i64).map(|k| -k - 1).collect();
        let mut y = on::<D>(Tensor::zeros(Int64, D::TYPE, &[outer, big, inner])?);
        y.index_copy_(1, &on::<D>(Tensor::from_slice(&perm, &[big])?), &on::<D>(Tensor::from_slice(&vals, &[outer, big, inner])?))?;
        let got = y.to_vec::<i64>()?;
        for o in 0..outer {
            for (j, &p) in perm.iter().enumerate() {
                for e in 0..inner {
                    let want = vals[(o * big + j) * inner + e];
                    assert_eq!(got[(o * big + p as usize) * inner + e], want, "scatter {inner}: {o} {j} {e}");
                }
            }
        }
    }
    Ok(())
});

device_test!(selection_refuses_bad_indices_and_handles_empty_tensors, D -> Result {
    let x = counting::<D>(Double, &[3, 4])?;
    for bad in [vec![0i64, 4], vec![-1]] {
        let idx = Tensor::from_slice(&bad, &[bad.len()])?;
        let e = x.index_select(1, &idx).unwrap_err();
        assert!(matches!(e, Error::OutOfRange { op: "index_select", .. }), "{e}");
        assert!(e.to_string().contains("0..4"), "{e}");
    }
    let e = x.take(0, &[3]).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { op: "take", given: 3, .. }), "{e}");
    let e = x.take(2, &[0]).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { op: "take", .. }), "{e}");
    let e = x.index_select(0, &Tensor::from_slice(&[0.0f64], &[1])?).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    // A rank-0 index picks one entry and keeps the axis (length 1).
    assert_eq!(x.index_select(0, &Tensor::scalar(2i64)?)?.dims(), [1, 4]);
    // Zero-size tensors with a huge other dimension: nothing is allocated per entry.
    let big = 1usize << 40;
    let z = on::<D>(Tensor::zeros(Float, D::TYPE, &[big, 0])?);
    assert_eq!(z.take(1, &[])?.dims(), [big, 0]);
    assert_eq!(z.take(0, &[5, big - 1])?.dims(), [2, 0]);
    let e = z.take(1, &[0]).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { .. }), "{e}");
    Ok(())
});

device_test!(compress_and_masked_select_keep_the_true_entries, D -> Result {
    let x = counting::<D>(ComplexFloat, &[3, 4])?;
    let xv = values(&x)?;
    // NaN counts as true (NumPy's bool(nan)); -0.0 as false.
    let mask = on::<D>(Tensor::from_slice(&[1.0f64, f64::NAN, -0.0, 2.0], &[4])?);
    let got = x.compress(1, &mask)?;
    assert_eq!(got.dims(), [3, 3]);
    let want: Vec<c64> = (0..3).flat_map(|r| [0, 1, 3].map(|c| xv[r * 4 + c])).collect();
    assert_eq!(values(&got)?, want);
    let rows = on::<D>(Tensor::from_slice(&[0i32, 1, 0], &[3])?);
    assert_eq!(values(&x.compress(0, &rows)?)?, xv[4..8]);
    // masked_select with a broadcast mask: the columns 0, 1 and 3 of every row, flat.
    assert_eq!(values(&x.masked_select(&mask)?)?, want);
    let full = x.equal_scalar(c64::new(6.0, 0.5))?;
    assert_eq!(values(&x.masked_select(&full)?)?, [xv[5]]);
    let none = on::<D>(Tensor::zeros(Int, D::TYPE, &[3, 4])?);
    assert_eq!(x.masked_select(&none)?.dims(), [0]);
    let e = x.compress(1, &rows).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { op: "compress", .. }), "{e}");
    let e = x.masked_select(&on::<D>(Tensor::zeros(Int, D::TYPE, &[2, 4])?)).unwrap_err();
    assert!(matches!(e, Error::Broadcast { op: "masked_select", .. }), "{e}");
    Ok(())
});

device_test!(split_and_chunk_are_views_that_tile_the_tensor, D -> Result {
    let x = counting::<D>(Double, &[10, 3])?;
    let pieces = x.split(4, 0)?;
    assert_eq!(pieces.iter().map(|p| p.dims()[0]).collect::<Vec<_>>(), [4, 4, 2]);
    let chunks = x.chunk(3, 0)?;
    assert_eq!(chunks.iter().map(|p| p.dims()[0]).collect::<Vec<_>>(), [4, 4, 2]);
    assert_eq!(x.chunk(4, 1)?.len(), 3, "fewer pieces when the length runs out");
    let sized = x.split_sizes(&[0, 7, 3], 0)?;
    assert_eq!(values(&sized[2])?, values(&x)?[21..]);
    // Views: writing into a piece writes into x.
    pieces[2].share().assign(&Tensor::scalar(-1.0f64)?)?;
    assert_eq!(x.to_vec::<f64>()?[24..], [-1.0; 6]);
    for (what, e) in [
        ("split", x.split(0, 0).unwrap_err()),
        ("chunk", x.chunk(0, 0).unwrap_err()),
        ("split_sizes", x.split_sizes(&[5, 6], 0).unwrap_err()),
        ("split", x.split(1, 2).unwrap_err()),
    ] {
        assert!(e.to_string().starts_with(what), "{e}");
    }
    // unsqueeze/squeeze are views too.
    let u = x.unsqueeze(1)?;
    assert_eq!(u.dims(), [10, 1, 3]);
    assert!(u.is_contiguous());
    assert_eq!(u.squeeze(1)?.dims(), [10, 3]);
    assert!(x.squeeze(0).is_err() && x.unsqueeze(3).is_err());
    Ok(())
});

device_test!(assign_writes_into_views_with_broadcasting_promotion_and_overlap, D -> Result {
    // Into a block of a column-major map.
    let (owner, map) = fortran_map::<D, f64>(&[0.0; 12], &[3, 4]);
    let block = counting::<D>(Float, &[3, 2])?;
    map.narrow(1, 1, 2)?.assign(&block)?;
    let m = map.contiguous()?.to_vec::<f64>()?;
    for r in 0..3 {
        assert_eq!(m[r * 4..r * 4 + 4], [0.0, (2 * r + 1) as f64, (2 * r + 2) as f64, 0.0]);
    }
    drop(owner);
    // A broadcast row, and a refused complex source.
    let mut t = on::<D>(Tensor::zeros(Double, D::TYPE, &[2, 3])?);
    t.assign(&counting::<D>(Int, &[3])?)?;
    assert_eq!(t.to_vec::<f64>()?, [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    let e = t.assign(&counting::<D>(ComplexDouble, &[3])?).unwrap_err();
    assert!(matches!(e, Error::CannotCast { op: "assign", .. }), "{e}");
    let e = t.assign(&counting::<D>(Double, &[2])?).unwrap_err();
    assert!(matches!(e, Error::Broadcast { op: "assign", .. }), "{e}");
    // Overlapping source and destination in one buffer: a shift by one row.
    let x = counting::<D>(Int64, &[4, 2])?;
    x.narrow(0, 1, 3)?.assign(&x.narrow(0, 0, 3)?)?;
    assert_eq!(x.to_vec::<i64>()?, [1, 2, 1, 2, 3, 4, 5, 6]);
    // From the host into a tensor on D (a transfer where D is the GPU).
    let mut y = on::<D>(Tensor::zeros(ComplexFloat, D::TYPE, &[2])?);
    y.assign(&Tensor::from_slice(&[c64::new(1.0, 2.0), c64::new(3.0, 4.0)], &[2])?
        .cast(ComplexFloat)?)?;
    assert_eq!(values(&y)?, [c64::new(1.0, 2.0), c64::new(3.0, 4.0)]);
    Ok(())
});

device_test!(growable_tensor_appends_blocks_and_views_the_filled_part, D -> Result {
    for dim in [0usize, 1] {
        let mut shape = [5usize, 5];
        shape[dim] = 0;
        let mut g = GrowableTensor::new(ComplexDouble, D::TYPE, &shape, dim, 2)?;
        assert!(g.is_empty() && g.view()?.numel() == 0);
        let mut pushed = Vec::new();
        for (k, len) in [1usize, 3, 0, 5, 2].into_iter().enumerate() {
            let mut s = [5usize, 5];
            s[dim] = len;
            let block = (&counting::<D>(ComplexDouble, &s)? * (k as i64 + 1))?;
            g.push(&block)?;
            pushed.push(block);
        }
        assert_eq!(g.len(), 11);
        assert!(g.capacity() >= 11 && g.capacity() <= 22, "capacity {}", g.capacity());
        let refs: Vec<&Tensor> = pushed.iter().collect();
        let want = cat(&refs, dim)?;
        assert_eq!(values(&g.view()?)?, values(&want)?, "dim {dim}");
        // The view feeds matmul without a copy and gives the same product.
        let v = g.view()?;
        let prod = if dim == 1 { matmul(&v, &v.t()?) } else { matmul(&v.t()?, &v) };
        let want_prod = if dim == 1 {
            matmul(&want, &want.t()?)
        } else {
            matmul(&want.t()?, &want)
        };
        assert!(prod?.allclose(&want_prod?, 1e-14, 0.0)?);
        g.truncate(4);
        assert_eq!(values(&g.view()?)?, values(&want.narrow(dim, 0, 4)?)?);
        g.clear();
        let cap = g.capacity();
        g.push(&pushed[1])?;
        assert_eq!((g.len(), g.capacity()), (3, cap), "a restart reuses the memory");
        let e = g.push(&counting::<D>(ComplexDouble, &[4, 4])?).unwrap_err();
        assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    }
    let e = GrowableTensor::new(Double, D::TYPE, &[3], 1, 4).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { .. }), "{e}");
    Ok(())
});

// `push_with` hands its closure the next entries where they lie (the storage's strides,
// after growing it when they do not fit), appends what it writes, and appends nothing
// when it fails: against `push` of the same blocks, along both dimensions.
device_test!(growable_push_with_writes_the_new_entries_in_place, D -> Result {
    for dim in [0usize, 1] {
        let mut shape = [6usize, 6];
        shape[dim] = 0;
        let (mut g, mut want) = (
            GrowableTensor::new(ComplexDouble, D::TYPE, &shape, dim, 3)?,
            GrowableTensor::new(ComplexDouble, D::TYPE, &shape, dim, 3)?,
        );
        for (k, len) in [2usize, 0, 4, 1].into_iter().enumerate() {
            let mut s = [6usize, 6];
            s[dim] = len;
            let block = (&counting::<D>(ComplexDouble, &s)? * (k as i64 + 2))?;
            let mut seen = Vec::new();
            g.push_with(len, |w| {
                assert_eq!(w.dims(), block.dims(), "dim {dim}");
                seen = w.strides().to_vec();
                w.assign(&block)
            })?;
            want.push(&block)?;
            assert_eq!(g.len(), want.len());
            // Where the entries lie: the storage's strides, not a block's own.
            assert_eq!(seen, g.view()?.strides(), "dim {dim} step {k}");
            assert_eq!(values(&g.view()?)?, values(&want.view()?)?, "dim {dim} step {k}");
        }
        assert!(g.capacity() >= 7, "grown: {}", g.capacity());
        if dim == 1 {
            assert_eq!(g.view()?.strides()[0], g.capacity());
        }
        // A failing fill appends nothing and its error comes back unchanged.
        let before = values(&g.view()?)?;
        let e = g
            .push_with(2, |w| {
                w.assign(&Tensor::ones(ComplexDouble, D::TYPE, w.dims())?)?;
                Err(Error::Internal { op: "fill", what: "refused".into() })
            })
            .unwrap_err();
        assert!(matches!(e, Error::Internal { op: "fill", .. }), "{e}");
        assert_eq!(values(&g.view()?)?, before);
        g.push_with(0, |w| {
            assert_eq!(w.numel(), 0);
            Ok(())
        })?;
        assert_eq!(values(&g.view()?)?, before);
    }
    Ok(())
});

// `spare` is the reserved part past the filled one, where the storage's strides put it;
// `commit` appends what was written there and refuses more than the room: against `push`
// of the same blocks, along both dimensions, to a full storage and with nothing reserved.
device_test!(growable_spare_and_commit_append_in_place, D -> Result {
    for dim in [0usize, 1] {
        let mut shape = [5usize, 5];
        shape[dim] = 0;
        let (mut g, mut want) = (
            GrowableTensor::new(ComplexDouble, D::TYPE, &shape, dim, 7)?,
            GrowableTensor::new(ComplexDouble, D::TYPE, &shape, dim, 7)?,
        );
        for (k, len) in [3usize, 0, 1, 3].into_iter().enumerate() {
            let spare = g.spare()?;
            assert_eq!(spare.dims()[dim], 7 - g.len(), "dim {dim} step {k}");
            assert_eq!(spare.strides(), g.view()?.strides(), "dim {dim} step {k}");
            let mut s = [5usize, 5];
            s[dim] = len;
            let block = (&counting::<D>(ComplexDouble, &s)? * (k as i64 + 2))?;
            spare.narrow(dim, 0, len)?.assign(&block)?;
            // Written past what is committed: not part of the tensor.
            if spare.dims()[dim] > len {
                spare.narrow(dim, len, 1)?.fill(-1.0)?;
            }
            g.commit(len)?;
            want.push(&block)?;
            assert_eq!(values(&g.view()?)?, values(&want.view()?)?, "dim {dim} step {k}");
        }
        assert_eq!((g.len(), g.capacity()), (7, 7));
        assert_eq!(g.spare()?.dims()[dim], 0);
        let e = g.commit(1).unwrap_err();
        assert!(matches!(e, Error::OutOfRange { op: "GrowableTensor::commit", .. }), "{e}");
        assert_eq!(g.len(), 7, "a refused commit changes nothing");
        g.truncate(2);
        let e = g.commit(6).unwrap_err();
        assert!(e.to_string().contains("0..=5"), "{e}");
        g.commit(5)?;
        assert_eq!(values(&g.view()?)?, values(&want.view()?)?);
    }
    Ok(())
});

device_test!(item_reads_the_one_element_of_any_rank, D -> Result {
    let z = c64::new(2.0, -1.0);
    let t = on::<D>(Tensor::from_slice(&[z], &[1, 1, 1])?);
    assert_eq!(t.item::<c64>()?, z);
    let s = on::<D>(Tensor::scalar(7i32)?);
    assert_eq!(s.item::<i32>()?, 7);
    let e = s.item::<f64>().unwrap_err();
    assert!(matches!(e, Error::DTypeMismatch { op: "item", .. }), "{e}");
    let e = counting::<D>(Double, &[2])?.item::<f64>().unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { op: "item", .. }), "{e}");
    let x = counting::<D>(Double, &[3])?;
    assert_eq!(x.vdot(&x)?.item::<f64>()?, 14.0);
    Ok(())
});

// `index_copy_` against a plain loop: every dtype, every dimension of a 3-D target,
// indices in random order, rows not named keeping their values.
device_test!(index_copy_matches_a_loop, D -> Result {
    use rand::Rng;
    let mut r = rng(61);
    let dims = [4usize, 7, 5];
    for dt in [Double, Float, Int, Int64, Half, BFloat16, ComplexFloat, ComplexDouble] {
        for dim in 0..3 {
            let size = dims[dim];
            let mut perm: Vec<i64> = (0..size as i64).collect();
            for k in (1..size).rev() {
                perm.swap(k, r.gen_range(0..=k));
            }
            let idx = &perm[..size - 1];
            let mut sdims = dims;
            sdims[dim] = idx.len();
            let mut x = counting::<D>(dt, &dims)?;
            let before = values(&x)?;
            let s = on::<D>(Tensor::from_slice(&(0..sdims.iter().product::<usize>()).map(|k| -(k as f64) - 1.0).collect::<Vec<_>>(), &sdims)?.cast(dt)?);
            let sv = values(&s)?;
            x.index_copy_(dim, &on::<D>(Tensor::from_slice(idx, &[idx.len()])?), &s)?;
            let mut want = before.clone();
            for ix in all_indices(&sdims) {
                let mut to = ix.clone();
                to[dim] = idx[ix[dim]] as usize;
                want[flat(&dims, &to)] = sv[flat(&sdims, &ix)];
            }
            assert_eq!(values(&x)?, want, "{dt} dim {dim}");
        }
    }
    Ok(())
});

// Views, aliasing and hostile input for `index_copy_`.
device_test!(index_copy_into_views_aliases_and_errors, D -> Result {
    // A transposed view writes into its parent.
    let parent = counting::<D>(Double, &[3, 4])?;
    let mut t = parent.t()?; // [4, 3]
    let src = on::<D>(Tensor::from_slice(&[-1.0f64, -2.0, -3.0], &[1, 3])?);
    t.index_copy_(0, &on::<D>(Tensor::from_slice(&[2i32], &[1])?), &src)?;
    assert_eq!(parent.to_vec::<f64>()?, [1.0, 2.0, -1.0, 4.0, 5.0, 6.0, -2.0, 8.0, 9.0, 10.0, -3.0, 12.0]);
    // The source a view of the target itself: read before written.
    let mut x = counting::<D>(Double, &[4])?;
    let head = x.narrow(0, 0, 2)?;
    x.index_copy_(0, &on::<D>(Tensor::from_slice(&[1i64, 2], &[2])?), &head)?;
    assert_eq!(x.to_vec::<f64>()?, [1.0, 1.0, 2.0, 4.0]);
    // Errors: a repeat (both positions named), out of range, the wrong source shape, a
    // complex source for a real target, float indices; none writes anything.
    let mut y = counting::<D>(Double, &[5])?;
    let two = on::<D>(Tensor::from_slice(&[0.5f64, 0.25], &[2])?);
    let e = y.index_copy_(0, &on::<D>(Tensor::from_slice(&[3i64, 3], &[2])?), &two).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { op: "index_copy_", .. }) && e.to_string().contains("positions 0 and 1"), "{e}");
    let e = y.index_copy_(0, &on::<D>(Tensor::from_slice(&[1i64, 5], &[2])?), &two).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { op: "index_copy_", given: 5, .. }), "{e}");
    let e = y.index_copy_(0, &on::<D>(Tensor::from_slice(&[1i64], &[1])?), &two).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    let c = on::<D>(Tensor::from_slice(&[c64::new(1.0, 1.0)], &[1])?);
    assert!(matches!(y.index_copy_(0, &on::<D>(Tensor::from_slice(&[1i64], &[1])?), &c).unwrap_err(), Error::CannotCast { .. }));
    assert!(y.index_copy_(0, &two, &two).is_err());
    assert_eq!(y.to_vec::<f64>()?, [1.0, 2.0, 3.0, 4.0, 5.0]);
    // Nothing to write into a huge empty target.
    let mut huge = on::<D>(Tensor::new(Float, ctensor_aten::DeviceType::Cpu, &[0, 1 << 40])?);
    let none = on::<D>(Tensor::new(Int64, ctensor_aten::DeviceType::Cpu, &[0])?);
    let empty_src = on::<D>(Tensor::new(Float, ctensor_aten::DeviceType::Cpu, &[0, 0])?);
    huge.index_copy_(1, &none, &empty_src)?;
    // index_select after index_copy_ gives the source back.
    let mut g = on::<D>(Tensor::zeros(ComplexDouble, ctensor_aten::DeviceType::Cpu, &[10, 3])?);
    let at = on::<D>(Tensor::from_slice(&[7i64, 2, 9], &[3])?);
    let s = counting::<D>(ComplexDouble, &[3, 3])?;
    g.index_copy_(0, &at, &s)?;
    assert_eq!(values(&g.index_select(0, &at)?)?, values(&s)?);
    Ok(())
});

// `Indices`: positions checked once, used by the `_with` forms without moving indices.
device_test!(indices_checked_once_give_what_the_per_call_forms_give, D -> Result {
    use rand::Rng;
    let mut r = rng(62);
    let dims = [3usize, 300, 5];
    for dt in [Double, Float, Int, Half, ComplexFloat, ComplexDouble] {
        for dim in 0..3 {
            let size = dims[dim];
            // Repeats and any order for the gather; a distinct subset for the scatter.
            let gather: Vec<usize> = (0..size + 7).map(|_| r.gen_range(0..size)).collect();
            let mut perm: Vec<usize> = (0..size).collect();
            for k in (1..size).rev() {
                perm.swap(k, r.gen_range(0..=k));
            }
            let scatter = &perm[..size.div_ceil(2)];
            let x = counting::<D>(dt, &dims)?;
            let g = ctensor_aten::Indices::from_slice(&gather, size, D::TYPE)?;
            assert!(!g.is_distinct(), "more positions than the axis has: a repeat");
            let as_tensor = |v: &[usize]| -> ctensor_aten::Result<Tensor> {
                let v: Vec<i64> = v.iter().map(|&i| i as i64).collect();
                Tensor::from_slice(&v, &[v.len()])?.to_device(D::TYPE)
            };
            let want = x.index_select(dim, &as_tensor(&gather)?)?;
            assert_eq!(values(&x.index_select_with(dim, &g)?)?, values(&want)?, "{dt} dim {dim}");
            let s = ctensor_aten::Indices::new(&as_tensor(scatter)?, size, D::TYPE)?;
            assert!(s.is_distinct() && s.len() == scatter.len() && s.bound() == size);
            let mut sdims = dims;
            sdims[dim] = scatter.len();
            let src = counting::<D>(dt, &sdims)?.neg()?;
            let (mut a, mut b) = (x.try_clone()?, x.try_clone()?);
            a.index_copy_(dim, &as_tensor(scatter)?, &src)?;
            b.index_copy_with(dim, &s, &src)?;
            assert_eq!(values(&a)?, values(&b)?, "{dt} dim {dim}");
        }
    }
    Ok(())
});

device_test!(indices_refuse_what_does_not_fit_and_stay_unwritable, D -> Result {
    use ctensor_aten::Indices;
    // Out of range when made, naming the position.
    let e = Indices::from_slice(&[0, 5, 9], 9, D::TYPE).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { given: 9, .. }), "{e}");
    let neg = Tensor::from_slice(&[-1i32], &[1])?;
    assert!(matches!(Indices::new(&neg, 4, D::TYPE), Err(Error::OutOfRange { .. })));
    let floats = Tensor::from_slice(&[1.0f64], &[1])?;
    assert!(matches!(Indices::new(&floats, 4, D::TYPE), Err(Error::InvalidArgument { .. })));
    // Used on an axis of another length: refused, not read out of bounds.
    let ind = Indices::from_slice(&[1, 1, 3], 4, D::TYPE)?;
    let x = counting::<D>(Double, &[2, 5])?;
    assert!(matches!(x.index_select_with(1, &ind), Err(Error::ShapeMismatch { .. })));
    assert!(matches!(x.index_select_with(2, &ind), Err(Error::OutOfRange { .. })));
    // A repeat gathers, but does not scatter.
    let mut y = counting::<D>(Double, &[2, 4])?;
    assert_eq!(y.index_select_with(1, &ind)?.dims(), [2, 3]);
    let e = y.index_copy_with(1, &ind, &counting::<D>(Double, &[2, 3])?).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { op: "index_copy_with", .. }), "{e}");
    // The positions are a copy of their own: writing the tensor they came from, or the
    // tensor to_tensor gives, changes nothing.
    let mut from = Tensor::from_slice(&[2i64, 0], &[2])?;
    let ind = Indices::new(&from, 3, D::TYPE)?;
    from.set_at(&[0], 7i64)?;
    let mut copy = ind.to_tensor()?;
    copy.set_value(99i64)?;
    assert_eq!(ind.to_tensor()?.to_vec::<i64>()?, [2, 0]);
    // Empty, and an empty axis of a huge tensor.
    let none = Indices::from_slice(&[], 1 << 40, D::TYPE)?;
    assert!(none.is_empty() && none.is_distinct());
    let huge = on::<D>(Tensor::zeros(Double, ctensor_aten::DeviceType::Cpu, &[0, 1 << 40])?);
    assert_eq!(huge.index_select_with(1, &none)?.dims(), [0, 0]);
    if ctensor_aten::gpu_available() && D::TYPE == ctensor_aten::DeviceType::Cpu {
        let on_gpu = Indices::from_slice(&[0], 2, ctensor_aten::DeviceType::Gpu)?;
        let e = counting::<D>(Double, &[2])?.index_select_with(0, &on_gpu).unwrap_err();
        assert!(matches!(e, Error::DeviceMismatch { .. }), "{e}");
    }
    Ok(())
});
