//! `IndexSelect` and `IndexCopy` against plain loops, for all eight element types, on the CPU and
//! (through `device_test!`) the GPU: empty, single and odd extents, more than 256 rows,
//! repeated and reversed indices; bad indices and null pointers are errors on the host.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_base::{Error, Scalar};
use ctensor_kernels::select::{IndexCopy, IndexSelect};
use rand::Rng;

fn reference<T: Scalar>(
    src: &[T],
    (outer, size, inner): (usize, usize, usize),
    idx: &[i64],
) -> Vec<T> {
    let mut out = Vec::with_capacity(outer * idx.len() * inner);
    for o in 0..outer {
        for &j in idx {
            for i in 0..inner {
                out.push(src[(o * size + j as usize) * inner + i]);
            }
        }
    }
    out
}

fn gathers_like_the_loop<D: TestDevice + IndexSelect<T>, T: Scalar>() -> TestResult {
    let mut r = rng(13);
    let cases: [(usize, usize, usize, usize); 10] = [
        (0, 5, 3, 4),        // nothing outside
        (3, 0, 2, 0),        // nothing to pick from, nothing picked
        (2, 4, 0, 3),        // empty rows
        (1, 1, 1, 1),        // one element
        (1, 7, 1, 9),        // a vector, indices repeating
        (3, 5, 4, 2),        // middle axis of a 3-D array
        (300, 7, 1, 5),      // columns of a tall matrix: > 256 rows
        (1, 300, 257, 3),    // rows of a wide matrix
        (2, 17, 33, 40),     // more picks than entries
        (2, 900, 150, 1000), // 300 000 elements: above the threshold, split across threads
    ];
    for (outer, size, inner, nidx) in cases {
        let src: Vec<T> = random_vec(&mut r, outer * size * inner);
        let mut idx: Vec<i64> = (0..nidx)
            .map(|_| r.gen_range(0..size.max(1)) as i64)
            .collect();
        if nidx > 1 {
            idx[0] = size as i64 - 1; // the last entry, and the first
            idx[1] = 0;
        }
        let want = reference(&src, (outer, size, inner), &idx);
        let mut s = Buf::<T>::on::<D>(src);
        let mut ix = Buf::<i64>::on::<D>(idx.clone());
        let mut d = Buf::<T>::on::<D>(vec![T::zero(); want.len()]);
        // SAFETY: the buffers hold the sizes of the case; indices in range.
        unsafe { D::index_select(outer, size, inner, ix.ptr(), nidx, s.ptr(), d.ptr()) }?;
        let got = d.get();
        assert_eq!(got.len(), want.len());
        assert!(
            got.iter().zip(&want).all(|(g, w)| g.to_c64() == w.to_c64()),
            "{} [{outer}, {size}, {inner}] by {idx:?}",
            T::DTYPE
        );
    }
    Ok(())
}

device_test!(index_select_matches_a_plain_loop_for_every_dtype, D -> Result {
    for_all_dtypes!(gathers_like_the_loop, D);
    Ok(())
});

#[test]
fn index_select_refuses_bad_indices_and_null_pointers_on_the_host() -> TestResult {
    use ctensor_base::CpuDevice;
    let src = [1.0f64, 2.0, 3.0];
    let mut dst = [0.0f64; 2];
    for (idx, bad) in [([0i64, 3], 3i64), ([-1, 0], -1)] {
        // SAFETY: valid buffers; the bad index is the point of the test.
        let e = unsafe {
            CpuDevice::index_select(1, 3, 1, idx.as_ptr(), 2, src.as_ptr(), dst.as_mut_ptr())
        }
        .unwrap_err();
        assert!(
            matches!(e, Error::OutOfRange { given, .. } if given == bad),
            "{e}"
        );
        assert!(e.to_string().contains("0..3"), "{e}");
    }
    assert_eq!(dst, [0.0, 0.0], "nothing is written before the check");
    let idx = [0i64];
    // SAFETY: the null pointer is reported, not read.
    let e = unsafe {
        CpuDevice::index_select(1, 3, 1, idx.as_ptr(), 1, std::ptr::null(), dst.as_mut_ptr())
    }
    .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    // SAFETY: sizes whose product overflows are refused before any pointer is used.
    let e = unsafe {
        CpuDevice::index_select(
            usize::MAX,
            2,
            2,
            idx.as_ptr(),
            1,
            src.as_ptr(),
            dst.as_mut_ptr(),
        )
    }
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Overflow {
                op: "index_select",
                ..
            }
        ),
        "{e}"
    );
    Ok(())
}

/// `dst[o, idx[j], i] = src[o, j, i]` over a copy of `before`.
fn scatter_reference<T: Scalar>(
    before: &[T],
    src: &[T],
    (outer, size, inner): (usize, usize, usize),
    idx: &[i64],
) -> Vec<T> {
    let mut out = before.to_vec();
    for o in 0..outer {
        for (j, &to) in idx.iter().enumerate() {
            for i in 0..inner {
                out[(o * size + to as usize) * inner + i] = src[(o * idx.len() + j) * inner + i];
            }
        }
    }
    out
}

fn scatters_like_the_loop<D: TestDevice + IndexCopy<T>, T: Scalar>() -> TestResult {
    let mut r = rng(17);
    let cases: [(usize, usize, usize, usize); 8] = [
        (0, 5, 3, 4),       // nothing outside
        (3, 4, 0, 2),       // empty rows
        (1, 1, 1, 1),       // one element
        (1, 9, 1, 9),       // a full permutation of a vector
        (3, 5, 4, 2),       // middle axis of a 3-D array
        (300, 7, 1, 5),     // > 256 rows
        (1, 300, 257, 3),   // rows of a wide matrix
        (2, 900, 150, 600), // above the threshold, split across threads
    ];
    for (outer, size, inner, nidx) in cases {
        let mut perm: Vec<i64> = (0..size as i64).collect();
        for k in (1..perm.len()).rev() {
            perm.swap(k, r.gen_range(0..=k));
        }
        let idx = perm[..nidx.min(size)].to_vec();
        let nidx = idx.len();
        let before: Vec<T> = random_vec(&mut r, outer * size * inner);
        let src: Vec<T> = random_vec(&mut r, outer * nidx * inner);
        let want = scatter_reference(&before, &src, (outer, size, inner), &idx);
        let mut s = Buf::<T>::on::<D>(src);
        let mut ix = Buf::<i64>::on::<D>(idx.clone());
        let mut d = Buf::<T>::on::<D>(before);
        // SAFETY: the buffers hold the sizes of the case; indices distinct and in range.
        unsafe { D::index_copy(outer, size, inner, ix.ptr(), nidx, s.ptr(), d.ptr()) }?;
        let got = d.get();
        assert!(
            got.iter().zip(&want).all(|(g, w)| g.to_c64() == w.to_c64()),
            "{} [{outer}, {size}, {inner}] at {idx:?}",
            T::DTYPE
        );
    }
    Ok(())
}

device_test!(index_copy_matches_a_plain_loop_for_every_dtype, D -> Result {
    for_all_dtypes!(scatters_like_the_loop, D);
    Ok(())
});

#[test]
fn index_copy_refuses_repeats_bad_indices_and_null_pointers_on_the_host() -> TestResult {
    use ctensor_base::CpuDevice;
    let src = [1.0f64, 2.0];
    let mut dst = [0.0f64; 3];
    // SAFETY: valid buffers; the bad indices are the point of the test.
    let e = unsafe {
        CpuDevice::index_copy(
            1,
            3,
            1,
            [2i64, 2].as_ptr(),
            2,
            src.as_ptr(),
            dst.as_mut_ptr(),
        )
    }
    .unwrap_err();
    assert!(e.to_string().contains("positions 0 and 1"), "{e}");
    // SAFETY: as above.
    let e = unsafe {
        CpuDevice::index_copy(
            1,
            3,
            1,
            [0i64, 3].as_ptr(),
            2,
            src.as_ptr(),
            dst.as_mut_ptr(),
        )
    }
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::OutOfRange {
                op: "index_copy",
                given: 3,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(dst, [0.0; 3], "nothing is written before the checks");
    // SAFETY: the null pointer is reported, not read.
    let e = unsafe {
        CpuDevice::index_copy(
            1,
            3,
            1,
            [0i64].as_ptr(),
            1,
            std::ptr::null(),
            dst.as_mut_ptr(),
        )
    }
    .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }), "{e}");
    // Element counts beyond usize: an error naming the scatter, before any pointer is used.
    // SAFETY: the sizes are refused before anything is read or written.
    let e = unsafe {
        CpuDevice::index_copy(
            usize::MAX / 2,
            3,
            2,
            [0i64].as_ptr(),
            1,
            src.as_ptr(),
            dst.as_mut_ptr(),
        )
    }
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Overflow {
                op: "index_copy",
                ..
            }
        ),
        "{e}"
    );
    // Nothing to write (outer = 0) along a 2^40 axis: an immediate Ok.
    // SAFETY: no element is touched.
    unsafe {
        CpuDevice::index_copy(
            0,
            1 << 40,
            1,
            [7i64].as_ptr(),
            1,
            src.as_ptr(),
            dst.as_mut_ptr(),
        )
    }?;
    Ok(())
}
