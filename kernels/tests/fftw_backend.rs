//! The FFTW host backend (`HostFft::Fftw`) against a plain DFT sum and against the
//! rustfft backend: c32 and c64, both directions, awkward lengths (1, primes, 2·3·5
//! products, > 256), every axis of 1-, 2- and 3-axis blocks batched over outer and inner
//! axes, empty arrays, data at every alignment, and the threaded split (by outer slabs
//! and by inner columns); in place and out of place (`fft_block_into`: the input back bit
//! for bit, and the right output for overlapping arrays too) under both backends. FFTW's
//! tests are skipped, with the reason, where FFTW is not installed.

mod common;

use common::rng;
use ctensor_base::{c32, c64, CpuDevice, Result, Scalar};
use ctensor_kernels::fft::{
    set_fftw_planner, set_host_fft, Fft, FftDirection, FftwPlanner, HostFft,
};
use ctensor_kernels::parallel::set_num_threads;
use rand::Rng;
use std::sync::Mutex;

/// The backend is process-wide: the tests take turns.
static TURN: Mutex<()> = Mutex::new(());

/// The plain DFT of `x` over the block `dims` of `[outer, dims..., inner]`.
fn dft(x: &[c64], outer: usize, dims: &[usize], inner: usize, dir: FftDirection) -> Vec<c64> {
    let sign = if dir == FftDirection::Forward {
        -1.0
    } else {
        1.0
    };
    let points: usize = dims.iter().product();
    let index = |mut p: usize| -> Vec<usize> {
        let mut v = vec![0; dims.len()];
        for k in (0..dims.len()).rev() {
            v[k] = p % dims[k];
            p /= dims[k];
        }
        v
    };
    let mut out = vec![c64::default(); x.len()];
    for o in 0..outer {
        for i in 0..inner {
            for p in 0..points {
                let kp = index(p);
                let mut acc = c64::default();
                for q in 0..points {
                    let jq = index(q);
                    let phase: f64 = kp
                        .iter()
                        .zip(&jq)
                        .zip(dims)
                        .map(|((&k, &j), &n)| ((k * j) % n) as f64 / n as f64)
                        .sum();
                    let w = c64::from_polar(1.0, sign * 2.0 * std::f64::consts::PI * phase);
                    acc += x[(o * points + q) * inner + i] * w;
                }
                out[(o * points + p) * inner + i] = acc;
            }
        }
    }
    out
}

/// Runs `body` with the FFTW backend chosen (the tests take turns: the choice is
/// process-wide), then goes back to rustfft; skips, saying why, where FFTW is missing.
fn with_fftw(body: impl FnOnce() -> Result<()>) -> Result<()> {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    if let Err(e) = set_host_fft(HostFft::Fftw) {
        println!("SKIP: {e}");
        return Ok(());
    }
    let r = body();
    set_host_fft(HostFft::RustFft)?;
    r
}

/// `T`'s block transform at `offset` elements into a buffer (to vary the alignment).
fn transform<T: Scalar>(
    x: &[c64],
    offset: usize,
    outer: usize,
    dims: &[usize],
    inner: usize,
    dir: FftDirection,
) -> Result<Vec<c64>>
where
    CpuDevice: Fft<T>,
{
    let mut buf: Vec<T> = vec![T::zero(); offset];
    buf.extend(x.iter().map(|&v| T::cast_from(v)));
    // SAFETY: `buf` holds `offset` + outer · Π dims · inner elements.
    unsafe { CpuDevice::fft_block(dir, outer, dims, inner, buf.as_mut_ptr().add(offset)) }?;
    Ok(buf[offset..].iter().map(|v| v.to_c64()).collect())
}

/// `T`'s out-of-place block transform from `src_offset` elements into one buffer to
/// `dst_offset` into another (whose other elements are NaN), asserting that the input
/// came back bit for bit and that nothing outside the output was written.
fn transform_into<T: Scalar>(
    x: &[c64],
    (src_offset, dst_offset): (usize, usize),
    outer: usize,
    dims: &[usize],
    inner: usize,
    dir: FftDirection,
) -> Result<Vec<c64>>
where
    CpuDevice: Fft<T>,
{
    let nan = T::cast_from(c64::new(f64::NAN, f64::NAN));
    let mut src: Vec<T> = vec![nan; src_offset];
    src.extend(x.iter().map(|&v| T::cast_from(v)));
    src.extend([nan; 3]);
    let before: Vec<c64> = src.iter().map(|v| v.to_c64()).collect();
    let mut dst: Vec<T> = vec![nan; dst_offset + x.len() + 3];
    // SAFETY: `src` holds `src_offset` + n elements and `dst` `dst_offset` + n, two
    // vectors of their own.
    unsafe {
        CpuDevice::fft_block_into(
            dir,
            outer,
            dims,
            inner,
            src.as_ptr().add(src_offset),
            dst.as_mut_ptr().add(dst_offset),
        )
    }?;
    let what = format!("{:?} {outer}×{dims:?}×{inner} {dir:?}", T::DTYPE);
    let after: Vec<c64> = src.iter().map(|v| v.to_c64()).collect();
    let same =
        |a: &c64, b: &c64| a.re.to_bits() == b.re.to_bits() && a.im.to_bits() == b.im.to_bits();
    assert!(
        before.iter().zip(&after).all(|(a, b)| same(a, b)),
        "{what}: the input was changed"
    );
    let outside = dst[..dst_offset].iter().chain(&dst[dst_offset + x.len()..]);
    assert!(
        outside
            .map(|v| v.to_c64())
            .all(|v| v.re.is_nan() && v.im.is_nan()),
        "{what}: written outside the output"
    );
    Ok(dst[dst_offset..dst_offset + x.len()]
        .iter()
        .map(|v| v.to_c64())
        .collect())
}

fn agrees_with_the_dft<T: Scalar>(tol: f64) -> Result<()>
where
    CpuDevice: Fft<T>,
{
    let mut r = rng(5);
    let cases: &[(usize, &[usize], usize)] = &[
        (1, &[1], 1),
        (1, &[2], 1),
        (3, &[7], 1),
        (1, &[257], 2),
        (2, &[300], 1),
        (1, &[31], 5),
        (4, &[6, 5], 3),
        (1, &[3, 4, 5], 1),
        (2, &[5, 1, 7], 2),
        (1, &[1, 1, 1], 4),
        (2, &[9, 8, 3], 1),
    ];
    for &(outer, dims, inner) in cases {
        let n = outer * dims.iter().product::<usize>() * inner;
        let x: Vec<c64> = (0..n)
            .map(|_| c64::new(r.gen_range(-1.0..1.0), r.gen_range(-1.0..1.0)))
            .collect();
        for dir in [FftDirection::Forward, FftDirection::Inverse] {
            let want = dft(&x, outer, dims, inner, dir);
            let scale = (dims.iter().product::<usize>() as f64).sqrt();
            for offset in 0..4 {
                let got = transform::<T>(&x, offset, outer, dims, inner, dir)?;
                // Out of place, the output at another alignment than the input.
                let into = transform_into::<T>(&x, (offset, 3 - offset), outer, dims, inner, dir)?;
                for (how, got) in [("in place", got), ("out of place", into)] {
                    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                        assert!(
                            (g - w).norm() <= tol * scale * (1.0 + w.norm()),
                            "{:?} {outer}×{dims:?}×{inner} {dir:?} {how} offset {offset} [{k}]: {g} vs {w}",
                            T::DTYPE
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

/// The rustfft backend's out-of-place transform (a copy and the transform in place)
/// against the same plain DFT, beside its in-place one.
#[test]
fn rustfft_blocks_in_and_out_of_place_agree_with_a_plain_dft() -> Result<()> {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    set_host_fft(HostFft::RustFft)?;
    agrees_with_the_dft::<c64>(1e-12)?;
    agrees_with_the_dft::<c32>(2e-5)
}

#[test]
fn fftw_blocks_agree_with_a_plain_dft() -> Result<()> {
    with_fftw(|| {
        for planner in [FftwPlanner::Estimate, FftwPlanner::Measure] {
            set_fftw_planner(planner);
            agrees_with_the_dft::<c64>(1e-12)?;
            agrees_with_the_dft::<c32>(2e-5)?;
        }
        Ok(())
    })
}

/// Asserts that `got` and `want` differ by at most `tol` in every element.
fn close(got: &[c64], want: &[c64], tol: f64, what: &str) {
    let err = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).norm())
        .fold(0.0, f64::max);
    assert!(err <= tol, "{what}: largest difference {err}");
}

/// Blocks large enough to be split over two threads (by outer slabs, and by inner
/// columns when there is one slab), one axis at a time (`fft_axis`) and as a block,
/// against the rustfft backend.
#[test]
fn fftw_agrees_with_rustfft_on_threaded_blocks_and_single_axes() -> Result<()> {
    with_fftw(|| {
        set_fftw_planner(FftwPlanner::Estimate);
        let mut r = rng(9);
        for threads in [1, 2] {
            set_num_threads(threads)?;
            for &(outer, dims, inner) in &[
                (6usize, &[40usize, 36, 30][..], 1usize),
                (1, &[48, 45][..], 60),
                (1, &[1024][..], 1024),
                (3, &[64][..], 4096),
                // Four axes: beyond FFTW's rank-3 plans, one axis at a time.
                (2, &[5, 6, 7, 8][..], 3),
            ] {
                let n = outer * dims.iter().product::<usize>() * inner;
                let x: Vec<c64> = (0..n)
                    .map(|_| c64::new(r.gen_range(-1.0..1.0), r.gen_range(-1.0..1.0)))
                    .collect();
                for dir in [FftDirection::Forward, FftDirection::Inverse] {
                    set_host_fft(HostFft::RustFft)?;
                    let want = transform::<c64>(&x, 0, outer, dims, inner, dir)?;
                    set_host_fft(HostFft::Fftw)?;
                    let got = transform::<c64>(&x, 1, outer, dims, inner, dir)?;
                    let scale = (dims.iter().product::<usize>() as f64).sqrt();
                    let what = format!("{threads} threads {outer}×{dims:?}×{inner} {dir:?}");
                    close(&got, &want, 4e-12 * scale, &what);
                    // Out of place, with each backend (four axes: FFTW's copy and
                    // transform in place).
                    let into = transform_into::<c64>(&x, (0, 1), outer, dims, inner, dir)?;
                    close(
                        &into,
                        &want,
                        4e-12 * scale,
                        &format!("out of place: {what}"),
                    );
                    set_host_fft(HostFft::RustFft)?;
                    let into = transform_into::<c64>(&x, (1, 0), outer, dims, inner, dir);
                    set_host_fft(HostFft::Fftw)?;
                    let what = format!("rustfft out of place: {what}");
                    close(&into?, &want, 4e-12 * scale, &what);
                    // One axis at a time, through `fft_axis`.
                    let mut buf: Vec<c64> = x.clone();
                    let points: usize = dims.iter().product();
                    for (k, &len) in dims.iter().enumerate() {
                        let before: usize = dims[..k].iter().product();
                        let after = points / before / len;
                        // SAFETY: `buf` holds n elements.
                        unsafe {
                            CpuDevice::fft_axis(
                                dir,
                                outer * before,
                                len,
                                after * inner,
                                buf.as_mut_ptr(),
                            )
                        }?;
                    }
                    close(&buf, &want, 4e-12 * scale, &format!("by axes: {what}"));
                }
            }
        }
        set_num_threads(2)
    })
}

#[test]
fn fftw_takes_empty_arrays_and_refuses_what_rustfft_refuses() -> Result<()> {
    with_fftw(|| {
        // Zero slabs of a huge block, and a zero-length axis: nothing to do, no plan.
        // SAFETY: nothing is read or written (zero elements); the pointer is non-null.
        unsafe {
            let mut one = [c64::default()];
            CpuDevice::fft_block(
                FftDirection::Forward,
                0,
                &[1 << 20, 1 << 20],
                1,
                one.as_mut_ptr(),
            )?;
            CpuDevice::fft_block(FftDirection::Forward, 3, &[0], 5, one.as_mut_ptr())?;
            let mut re = [0.0f64; 4];
            let e = CpuDevice::fft_block(FftDirection::Forward, 1, &[4], 1, re.as_mut_ptr());
            assert!(e.is_err(), "a real array must be refused: {e:?}");
            let e = CpuDevice::fft_block(
                FftDirection::Forward,
                1,
                &[4],
                1,
                std::ptr::null_mut::<c64>(),
            );
            assert!(e.is_err(), "a null pointer must be refused: {e:?}");
            let e =
                CpuDevice::fft_block(FftDirection::Forward, usize::MAX, &[4], 2, one.as_mut_ptr());
            assert!(e.is_err(), "an overflowing size must be refused: {e:?}");
        }
        Ok(())
    })
}

/// The out-of-place cases the current backend must take: nothing written for empty
/// arrays, the in-place refusals (real data, null pointers, an overflowing size), 1-point
/// blocks copied, four axes (beyond FFTW's rank-3 plans), and aliased arrays: the same
/// one (the transform in place) and two overlapping ranges (`dst` gets the transform
/// of `src` as it was).
fn out_of_place_edges(backend: &str) -> Result<()> {
    let f = FftDirection::Forward;
    let src = [c64::new(1.5, -2.0); 8];
    let mut dst = [c64::new(f64::NAN, 0.0); 8];
    let into = |outer: usize, dims: &[usize], inner: usize, s: *const c64, d: *mut c64| {
        // SAFETY: every call below reads at most 8 elements at `s` and writes at most 8
        // at `d` (none for the empty ones), inside one array each; null pointers are
        // refused before use.
        unsafe { CpuDevice::fft_block_into(f, outer, dims, inner, s, d) }
    };
    into(0, &[1 << 20, 1 << 20], 1, src.as_ptr(), dst.as_mut_ptr())?;
    into(3, &[0], 5, src.as_ptr(), dst.as_mut_ptr())?;
    assert!(
        dst.iter().all(|v| v.re.is_nan()),
        "{backend}: an empty transform wrote"
    );
    let re = [0.0f64; 4];
    let mut re_out = [0.0f64; 4];
    // SAFETY: refused before any access (a real type).
    let e = unsafe { CpuDevice::fft_block_into(f, 1, &[4], 1, re.as_ptr(), re_out.as_mut_ptr()) };
    assert!(e.is_err(), "{backend}: a real array must be refused: {e:?}");
    let e = into(1, &[4], 1, std::ptr::null(), dst.as_mut_ptr());
    assert!(e.is_err(), "{backend}: a null input must be refused: {e:?}");
    let e = into(1, &[4], 1, src.as_ptr(), std::ptr::null_mut());
    assert!(
        e.is_err(),
        "{backend}: a null output must be refused: {e:?}"
    );
    let e = into(usize::MAX, &[4], 2, src.as_ptr(), dst.as_mut_ptr());
    assert!(
        e.is_err(),
        "{backend}: an overflowing size must be refused: {e:?}"
    );
    // 1-point transforms are the identity: a copy.
    into(2, &[1, 1], 4, src.as_ptr(), dst.as_mut_ptr())?;
    assert_eq!(dst, src, "{backend}: 1-point transforms out of place");
    // Four axes, and aliasing, against the plain DFT of the input.
    let mut r = rng(13);
    let x: Vec<c64> = (0..24)
        .map(|_| c64::new(r.gen_range(-1.0..1.0), r.gen_range(-1.0..1.0)))
        .collect();
    let four = dft(&x, 1, &[2, 3, 1, 4], 1, f);
    let mut out = vec![c64::new(f64::NAN, 0.0); 24];
    into(1, &[2, 3, 1, 4], 1, x.as_ptr(), out.as_mut_ptr())?;
    close(
        &out,
        &four,
        1e-12,
        &format!("{backend}: four axes out of place"),
    );
    let want = dft(&x, 2, &[3, 4], 1, f);
    let mut same = x.clone();
    into(2, &[3, 4], 1, same.as_ptr(), same.as_mut_ptr())?;
    close(&same, &want, 1e-12, &format!("{backend}: src == dst"));
    for shift in [3usize, 20] {
        // `src` at 0 and `dst` at `shift` (overlapping), and the other way round.
        let mut buf = x.clone();
        buf.resize(24 + shift, c64::new(f64::NAN, 0.0));
        let p = buf.as_mut_ptr();
        // SAFETY: both ranges of 24 elements lie inside `buf` (24 + shift long).
        into(2, &[3, 4], 1, p, unsafe { p.add(shift) })?;
        close(
            &buf[shift..],
            &want,
            1e-12,
            &format!("{backend}: dst = src + {shift}"),
        );
        let mut buf = vec![c64::new(f64::NAN, 0.0); shift];
        buf.extend(&x);
        let p = buf.as_mut_ptr();
        // SAFETY: as above.
        into(2, &[3, 4], 1, unsafe { p.add(shift) }, p)?;
        close(
            &buf[..24],
            &want,
            1e-12,
            &format!("{backend}: src = dst + {shift}"),
        );
    }
    Ok(())
}

/// Out of place under both backends: [`out_of_place_edges`].
#[test]
fn out_of_place_takes_empty_arrays_aliasing_and_every_rank_and_refuses_bad_input() -> Result<()> {
    {
        let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
        set_host_fft(HostFft::RustFft)?;
        out_of_place_edges("rustfft")?;
    }
    with_fftw(|| out_of_place_edges("FFTW"))
}
