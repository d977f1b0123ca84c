//! Memory kernels on `CpuDevice` and `GpuDevice` against plain reference loops, for
//! every dtype (the GPU cases print `SKIP` without a GPU).
#![allow(clippy::needless_range_loop)] // reference loops read best with explicit indices
#![deny(unused_must_use)]

mod common;

use common::{random_vec, rng, Buf, TestDevice, TestResult, SIZES};
use ctensor_base::{bf16, c32, c64, f16, CastFrom, CpuDevice, Error, Scalar};
use ctensor_kernels::layout::{col_major_strides, row_major_strides};
use ctensor_kernels::linalg::Conj;
use ctensor_kernels::memory::{CastMemory, SetMemory, SyncMemory, SyncMemoryStrided};

fn set_fills_exactly_n<D, T: Scalar>() -> TestResult
where
    D: TestDevice + SetMemory<T> + SyncMemory<T, D> + SyncMemoryStrided<T, D> + Conj<T>,
{
    let mut r = rng(1);
    for n in SIZES {
        let value = random_vec::<T>(&mut r, 1)[0];
        let buf = random_vec::<T>(&mut r, n + 3);
        let before = buf.clone();
        let mut dbuf = Buf::on::<D>(buf);
        // SAFETY: `buf` has n + 3 elements; only the first n are written.
        unsafe { <D as SetMemory<T>>::set(dbuf.ptr(), value, n) }?;
        let buf = dbuf.get();
        for i in 0..n + 3 {
            let want = if i < n { value } else { before[i] };
            assert!(buf[i] == want, "{} n={n} i={i}", T::DTYPE);
        }
    }
    Ok(())
}

device_test!(set_memory_all_dtypes_and_sizes, D -> Result {
    for_all_dtypes!(set_fills_exactly_n, D);
    Ok(())
});

fn set_strided_touches_only_the_view<D, T: Scalar>() -> TestResult
where
    D: TestDevice + SetMemory<T> + SyncMemory<T, D> + SyncMemoryStrided<T, D> + Conj<T>,
{
    let mut r = rng(2);
    // A 3 x 5 view with row stride 8 inside a 3 x 8 buffer, and a transposed 4 x 3 view.
    for (shape, strides, len) in [
        (vec![3usize, 5], vec![8usize, 1], 24usize),
        (vec![4, 3], vec![1, 4], 12),
        (vec![300, 2], vec![3, 1], 900),
        (vec![2, 0, 3], vec![0, 3, 1], 4),
    ] {
        let value = random_vec::<T>(&mut r, 1)[0];
        let buf = random_vec::<T>(&mut r, len);
        let mut want = buf.clone();
        for i in 0..shape.iter().product::<usize>() {
            let (mut flat, mut off) = (i, 0);
            for d in (0..shape.len()).rev() {
                off += (flat % shape[d]) * strides[d];
                flat /= shape[d];
            }
            want[off] = value;
        }
        let mut dbuf = Buf::on::<D>(buf);
        // SAFETY: every offset the view reaches is below `len`.
        unsafe { <D as SetMemory<T>>::set_strided(dbuf.ptr(), &shape, &strides, value) }?;
        let buf = dbuf.get();
        assert!(buf == want, "{} shape {shape:?}", T::DTYPE);
    }
    Ok(())
}

device_test!(set_memory_strided_all_dtypes, D -> Result {
    for_all_dtypes!(set_strided_touches_only_the_view, D);
    Ok(())
});

fn sync_copies_and_allows_overlap<D, T: Scalar>() -> TestResult
where
    D: TestDevice + SetMemory<T> + SyncMemory<T, D> + SyncMemoryStrided<T, D> + Conj<T>,
{
    let mut r = rng(3);
    for n in SIZES {
        let src = random_vec::<T>(&mut r, n);
        let mut dsrc = Buf::on::<D>(src.clone());
        let mut ddst = Buf::on::<D>(random_vec::<T>(&mut r, n));
        // SAFETY: both hold n elements.
        unsafe { <D as SyncMemory<T, D>>::sync(ddst.ptr(), dsrc.ptr(), n) }?;
        assert!(ddst.get() == src, "{} n={n}", T::DTYPE);
        // Overlapping move by one element to the right, as memmove.
        if n > 1 {
            let p = dsrc.ptr();
            // SAFETY: both ranges lie inside `dsrc`.
            unsafe { <D as SyncMemory<T, D>>::sync(p.wrapping_add(1), p, n - 1) }?;
            let buf = dsrc.get();
            assert!(buf[1..] == src[..n - 1] && buf[0] == src[0]);
        }
    }
    Ok(())
}

device_test!(sync_memory_all_dtypes_and_sizes, D -> Result {
    for_all_dtypes!(sync_copies_and_allows_overlap, D);
    Ok(())
});

fn strided_copy_matches_reference<D, T: Scalar>() -> TestResult
where
    D: TestDevice + SetMemory<T> + SyncMemory<T, D> + SyncMemoryStrided<T, D> + Conj<T>,
{
    let mut r = rng(4);
    let shapes: [&[usize]; 7] = [&[], &[0], &[1], &[7], &[3, 5], &[2, 3, 4], &[17, 1, 19]];
    for shape in shapes {
        let n: usize = shape.iter().product();
        let src = random_vec::<T>(&mut r, n);
        // Row-major source into a column-major destination, then back; the round trip
        // must give the source, and the middle must be the transpose by a plain loop.
        let (rm, cm) = (row_major_strides(shape), col_major_strides(shape));
        let (mut dsrc, mut dmid) = (Buf::on::<D>(src.clone()), Buf::on::<D>(vec![T::zero(); n]));
        // SAFETY: both buffers hold exactly the n elements the dense views reach.
        unsafe {
            <D as SyncMemoryStrided<T, D>>::sync_strided(dmid.ptr(), &cm, dsrc.ptr(), &rm, shape)
        }?;
        let mid = dmid.get();
        for flat in 0..n {
            let (mut rest, mut off_c) = (flat, 0);
            for d in (0..shape.len()).rev() {
                off_c += (rest % shape[d]) * cm[d];
                rest /= shape[d];
            }
            assert!(mid[off_c] == src[flat], "{} {shape:?}", T::DTYPE);
        }
        let mut dback = Buf::on::<D>(vec![T::zero(); n]);
        // SAFETY: as above.
        unsafe {
            <D as SyncMemoryStrided<T, D>>::sync_strided(dback.ptr(), &rm, dmid.ptr(), &cm, shape)
        }?;
        assert!(dback.get() == src);
    }
    // A padded sub-block: 300 x 3 source with leading dimension 5 into a dense block.
    let src = random_vec::<T>(&mut r, 300 * 5);
    let (mut dsrc, mut ddst) = (
        Buf::on::<D>(src.clone()),
        Buf::on::<D>(vec![T::zero(); 900]),
    );
    // SAFETY: the source view reaches offsets below 1500, the destination below 900.
    unsafe {
        <D as SyncMemoryStrided<T, D>>::sync_strided(
            ddst.ptr(),
            &[3, 1],
            dsrc.ptr(),
            &[5, 1],
            &[300, 3],
        )
    }?;
    let dst = ddst.get();
    for i in 0..300 {
        for j in 0..3 {
            assert!(dst[i * 3 + j] == src[i * 5 + j]);
        }
    }
    Ok(())
}

device_test!(sync_memory_strided_all_dtypes, D -> Result {
    for_all_dtypes!(strided_copy_matches_reference, D);
    Ok(())
});

fn cast_to<Dev, D: Scalar + CastFrom<S>, S: Scalar>() -> TestResult
where
    Dev: TestDevice + CastMemory<D, S>,
{
    let mut r = rng(5);
    for n in SIZES {
        let src = random_vec::<S>(&mut r, n);
        let (mut dsrc, mut ddst) = (
            Buf::on::<Dev>(src.clone()),
            Buf::on::<Dev>(vec![D::zero(); n]),
        );
        // SAFETY: both hold n elements and do not overlap.
        unsafe { <Dev as CastMemory<D, S>>::cast(ddst.ptr(), dsrc.ptr(), n) }?;
        let dst = ddst.get();
        for i in 0..n {
            assert!(
                dst[i] == D::cast_from(src[i]),
                "{} -> {}",
                S::DTYPE,
                D::DTYPE
            );
        }
    }
    Ok(())
}

fn cast_from_all<Dev, S: Scalar>() -> TestResult
where
    Dev: TestDevice
        + CastMemory<f32, S>
        + CastMemory<f64, S>
        + CastMemory<i32, S>
        + CastMemory<i64, S>
        + CastMemory<c32, S>
        + CastMemory<c64, S>
        + CastMemory<f16, S>
        + CastMemory<bf16, S>,
    f32: CastFrom<S>,
    f64: CastFrom<S>,
    i32: CastFrom<S>,
    i64: CastFrom<S>,
    c32: CastFrom<S>,
    c64: CastFrom<S>,
    f16: CastFrom<S>,
    bf16: CastFrom<S>,
{
    cast_to::<Dev, f32, S>()?;
    cast_to::<Dev, f64, S>()?;
    cast_to::<Dev, i32, S>()?;
    cast_to::<Dev, i64, S>()?;
    cast_to::<Dev, c32, S>()?;
    cast_to::<Dev, c64, S>()?;
    cast_to::<Dev, f16, S>()?;
    cast_to::<Dev, bf16, S>()?;
    Ok(())
}

device_test!(cast_memory_all_64_pairs, D -> Result {
    cast_from_all::<D, f32>()?;
    cast_from_all::<D, f64>()?;
    cast_from_all::<D, i32>()?;
    cast_from_all::<D, i64>()?;
    cast_from_all::<D, c32>()?;
    cast_from_all::<D, c64>()?;
    cast_from_all::<D, f16>()?;
    cast_from_all::<D, bf16>()?;
    Ok(())
});

fn conj_in_place_and_out_of_place<D, T: Scalar>() -> TestResult
where
    D: TestDevice + SetMemory<T> + SyncMemory<T, D> + SyncMemoryStrided<T, D> + Conj<T>,
{
    let mut r = rng(6);
    for n in SIZES {
        let src = random_vec::<T>(&mut r, n);
        let want: Vec<T> = src.iter().map(|x| x.conj()).collect();
        let (mut dsrc, mut dout) = (Buf::on::<D>(src.clone()), Buf::on::<D>(vec![T::zero(); n]));
        // SAFETY: disjoint buffers of n elements.
        unsafe { <D as Conj<T>>::conj(dout.ptr(), dsrc.ptr(), n) }?;
        assert!(dout.get() == want);
        let p = dsrc.ptr();
        // SAFETY: identical ranges, allowed.
        unsafe { <D as Conj<T>>::conj(p, p, n) }?;
        assert!(dsrc.get() == want, "{} n={n}", T::DTYPE);
    }
    Ok(())
}

device_test!(conj_all_dtypes, D -> Result {
    for_all_dtypes!(conj_in_place_and_out_of_place, D);
    let (mut z, mut out) = (Buf::on::<D>(vec![c64::new(1.0, 2.0)]), Buf::on::<D>(vec![c64::new(0.0, 0.0)]));
    // SAFETY: one element each.
    unsafe { <D as Conj<c64>>::conj(out.ptr(), z.ptr(), 1) }?;
    assert_eq!(out.get()[0], c64::new(1.0, -2.0));
    Ok(())
});

#[test]
fn memory_kernels_reject_null_pointers_and_bad_strides() -> TestResult {
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
    unsafe { <CpuDevice as SetMemory<f64>>::set(std::ptr::null_mut(), 1.0, 0) }?;
    Ok(())
}
