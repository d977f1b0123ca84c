//! Memory kernels on `CpuDevice` against plain reference loops, for every dtype.
#![allow(clippy::needless_range_loop)] // reference loops read best with explicit indices

mod common;

use common::{random_vec, rng, SIZES};
use ctensor_base::{bf16, c32, c64, f16, CastFrom, CpuDevice, Error, Scalar};
use ctensor_kernels::layout::{col_major_strides, row_major_strides};
use ctensor_kernels::linalg::Conj;
use ctensor_kernels::memory::{CastMemory, SetMemory, SyncMemory, SyncMemoryStrided};

fn set_fills_exactly_n<T: Scalar>() {
    let mut r = rng(1);
    for n in SIZES {
        let value = random_vec::<T>(&mut r, 1)[0];
        let mut buf = random_vec::<T>(&mut r, n + 3);
        let before = buf.clone();
        // SAFETY: `buf` has n + 3 elements; only the first n are written.
        unsafe { <CpuDevice as SetMemory<T>>::set(buf.as_mut_ptr(), value, n) }.unwrap();
        for i in 0..n + 3 {
            let want = if i < n { value } else { before[i] };
            assert!(buf[i] == want, "{} n={n} i={i}", T::DTYPE);
        }
    }
}

#[test]
fn set_memory_all_dtypes_and_sizes() {
    for_all_dtypes!(set_fills_exactly_n);
}

fn set_strided_touches_only_the_view<T: Scalar>() {
    let mut r = rng(2);
    // A 3 x 5 view with row stride 8 inside a 3 x 8 buffer, and a transposed 4 x 3 view.
    for (shape, strides, len) in [
        (vec![3usize, 5], vec![8usize, 1], 24usize),
        (vec![4, 3], vec![1, 4], 12),
        (vec![300, 2], vec![3, 1], 900),
        (vec![2, 0, 3], vec![0, 3, 1], 4),
    ] {
        let value = random_vec::<T>(&mut r, 1)[0];
        let mut buf = random_vec::<T>(&mut r, len);
        let mut want = buf.clone();
        for i in 0..shape.iter().product::<usize>() {
            let (mut flat, mut off) = (i, 0);
            for d in (0..shape.len()).rev() {
                off += (flat % shape[d]) * strides[d];
                flat /= shape[d];
            }
            want[off] = value;
        }
        // SAFETY: every offset the view reaches is below `len`.
        unsafe {
            <CpuDevice as SetMemory<T>>::set_strided(buf.as_mut_ptr(), &shape, &strides, value)
        }
        .unwrap();
        assert!(buf == want, "{} shape {shape:?}", T::DTYPE);
    }
}

#[test]
fn set_memory_strided_all_dtypes() {
    for_all_dtypes!(set_strided_touches_only_the_view);
}

fn sync_copies_and_allows_overlap<T: Scalar>() {
    let mut r = rng(3);
    for n in SIZES {
        let src = random_vec::<T>(&mut r, n);
        let mut dst = random_vec::<T>(&mut r, n);
        // SAFETY: both hold n elements.
        unsafe { <CpuDevice as SyncMemory<T, CpuDevice>>::sync(dst.as_mut_ptr(), src.as_ptr(), n) }
            .unwrap();
        assert!(dst == src, "{} n={n}", T::DTYPE);
        // Overlapping move by one element to the right, as memmove.
        if n > 1 {
            let mut buf = src.clone();
            let p = buf.as_mut_ptr();
            // SAFETY: both ranges lie inside `buf`.
            unsafe { <CpuDevice as SyncMemory<T, CpuDevice>>::sync(p.add(1), p, n - 1) }.unwrap();
            assert!(buf[1..] == src[..n - 1] && buf[0] == src[0]);
        }
    }
}

#[test]
fn sync_memory_all_dtypes_and_sizes() {
    for_all_dtypes!(sync_copies_and_allows_overlap);
}

fn strided_copy_matches_reference<T: Scalar>() {
    let mut r = rng(4);
    let shapes: [&[usize]; 7] = [&[], &[0], &[1], &[7], &[3, 5], &[2, 3, 4], &[17, 1, 19]];
    for shape in shapes {
        let n: usize = shape.iter().product();
        let src = random_vec::<T>(&mut r, n);
        // Row-major source into a column-major destination, then back; the round trip
        // must give the source, and the middle must be the transpose by a plain loop.
        let (rm, cm) = (row_major_strides(shape), col_major_strides(shape));
        let mut mid = vec![T::zero(); n];
        // SAFETY: both buffers hold exactly the n elements the dense views reach.
        unsafe {
            <CpuDevice as SyncMemoryStrided<T, CpuDevice>>::sync_strided(
                mid.as_mut_ptr(),
                &cm,
                src.as_ptr(),
                &rm,
                shape,
            )
        }
        .unwrap();
        for flat in 0..n {
            let (mut rest, mut off_c) = (flat, 0);
            for d in (0..shape.len()).rev() {
                off_c += (rest % shape[d]) * cm[d];
                rest /= shape[d];
            }
            assert!(mid[off_c] == src[flat], "{} {shape:?}", T::DTYPE);
        }
        let mut back = vec![T::zero(); n];
        // SAFETY: as above.
        unsafe {
            <CpuDevice as SyncMemoryStrided<T, CpuDevice>>::sync_strided(
                back.as_mut_ptr(),
                &rm,
                mid.as_ptr(),
                &cm,
                shape,
            )
        }
        .unwrap();
        assert!(back == src);
    }
    // A padded sub-block: 300 x 3 source with leading dimension 5 into a dense block.
    let src = random_vec::<T>(&mut r, 300 * 5);
    let mut dst = vec![T::zero(); 300 * 3];
    // SAFETY: the source view reaches offsets below 1500, the destination below 900.
    unsafe {
        <CpuDevice as SyncMemoryStrided<T, CpuDevice>>::sync_strided(
            dst.as_mut_ptr(),
            &[3, 1],
            src.as_ptr(),
            &[5, 1],
            &[300, 3],
        )
    }
    .unwrap();
    for i in 0..300 {
        for j in 0..3 {
            assert!(dst[i * 3 + j] == src[i * 5 + j]);
        }
    }
}

#[test]
fn sync_memory_strided_all_dtypes() {
    for_all_dtypes!(strided_copy_matches_reference);
}

fn cast_to<D: Scalar + CastFrom<S>, S: Scalar>() {
    let mut r = rng(5);
    for n in SIZES {
        let src = random_vec::<S>(&mut r, n);
        let mut dst = vec![D::zero(); n];
        // SAFETY: both hold n elements and do not overlap.
        unsafe { <CpuDevice as CastMemory<D, S>>::cast(dst.as_mut_ptr(), src.as_ptr(), n) }
            .unwrap();
        for i in 0..n {
            assert!(
                dst[i] == D::cast_from(src[i]),
                "{} -> {}",
                S::DTYPE,
                D::DTYPE
            );
        }
    }
}

fn cast_from_all<S: Scalar>()
where
    f32: CastFrom<S>,
    f64: CastFrom<S>,
    i32: CastFrom<S>,
    i64: CastFrom<S>,
    c32: CastFrom<S>,
    c64: CastFrom<S>,
    f16: CastFrom<S>,
    bf16: CastFrom<S>,
{
    cast_to::<f32, S>();
    cast_to::<f64, S>();
    cast_to::<i32, S>();
    cast_to::<i64, S>();
    cast_to::<c32, S>();
    cast_to::<c64, S>();
    cast_to::<f16, S>();
    cast_to::<bf16, S>();
}

#[test]
fn cast_memory_all_64_pairs() {
    cast_from_all::<f32>();
    cast_from_all::<f64>();
    cast_from_all::<i32>();
    cast_from_all::<i64>();
    cast_from_all::<c32>();
    cast_from_all::<c64>();
    cast_from_all::<f16>();
    cast_from_all::<bf16>();
}

fn conj_in_place_and_out_of_place<T: Scalar>() {
    let mut r = rng(6);
    for n in SIZES {
        let src = random_vec::<T>(&mut r, n);
        let want: Vec<T> = src.iter().map(|x| x.conj()).collect();
        let mut out = vec![T::zero(); n];
        // SAFETY: disjoint buffers of n elements.
        unsafe { <CpuDevice as Conj<T>>::conj(out.as_mut_ptr(), src.as_ptr(), n) }.unwrap();
        assert!(out == want);
        let mut inplace = src.clone();
        let p = inplace.as_mut_ptr();
        // SAFETY: identical ranges, allowed.
        unsafe { <CpuDevice as Conj<T>>::conj(p, p, n) }.unwrap();
        assert!(inplace == want, "{} n={n}", T::DTYPE);
    }
}

#[test]
fn conj_all_dtypes() {
    for_all_dtypes!(conj_in_place_and_out_of_place);
    let z = [c64::new(1.0, 2.0)];
    let mut out = [c64::new(0.0, 0.0)];
    // SAFETY: one element each.
    unsafe { <CpuDevice as Conj<c64>>::conj(out.as_mut_ptr(), z.as_ptr(), 1) }.unwrap();
    assert_eq!(out[0], c64::new(1.0, -2.0));
}

#[test]
fn memory_kernels_reject_null_pointers_and_bad_strides() {
    let mut v = vec![0.0f64; 4];
    // SAFETY: the null pointer is rejected before any access.
    let e =
        unsafe { <CpuDevice as SetMemory<f64>>::set(std::ptr::null_mut(), 1.0, 3) }.unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                op: "set_memory",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("null"));
    // SAFETY: rejected before any access.
    let e = unsafe {
        <CpuDevice as SyncMemory<f64, CpuDevice>>::sync(v.as_mut_ptr(), std::ptr::null(), 2)
    }
    .unwrap_err();
    assert!(matches!(
        e,
        Error::InvalidArgument {
            op: "sync_memory",
            ..
        }
    ));
    // SAFETY: rejected before any access (two strides for a rank-1 shape).
    let e = unsafe {
        <CpuDevice as SyncMemoryStrided<f64, CpuDevice>>::sync_strided(
            v.as_mut_ptr(),
            &[1, 1],
            v.as_ptr(),
            &[1],
            &[2],
        )
    }
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::InvalidArgument {
                op: "sync_memory_strided",
                ..
            }
        ),
        "{e}"
    );
    // SAFETY: rejected before any access (the element count overflows).
    let e = unsafe {
        <CpuDevice as SetMemory<f64>>::set_strided(v.as_mut_ptr(), &[usize::MAX, 3], &[1, 1], 0.0)
    }
    .unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    // SAFETY: null is fine for zero elements.
    unsafe { <CpuDevice as SetMemory<f64>>::set(std::ptr::null_mut(), 1.0, 0) }.unwrap();
}
