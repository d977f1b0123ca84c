//! FFTs against a naive O(n²) DFT in f64 on the same (rounded) values: awkward lengths
//! (1, 2, 3, 5, 7, 15, 16, 17, 60 and the primes 257 and 1021), every axis set of 3-D
//! tensors, the three normalisations, round trips and Parseval, real and integer input,
//! views and column-major maps, in place, dense views at every offset out of place (the
//! input untouched), empty tensors with a huge other dimension, a NaN
//! that must stay in its strided line, and
//! the helpers `fftfreq`, `fftshift`, `ifftshift` — on the CPU and (through
//! `device_test!`) the GPU.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::{
    c64, fft, fftfreq, fftn, fftshift, ifft, ifftn, ifftshift, irfftn, rfftfreq, rfftn, DataType,
    Device, DeviceType, Error, FftNorm, Tensor,
};
use DataType::*;

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn values(t: &Tensor) -> Fallible<Vec<c64>> {
    Ok(t.cast(ComplexDouble)?.to_vec::<c64>()?)
}

/// The naive DFT of `x` (row-major `dims`) along `axis`, sign −1 forward, +1 inverse,
/// unnormalised.
fn naive_axis(x: &[c64], dims: &[usize], axis: usize, sign: f64) -> Vec<c64> {
    let (outer, n, inner) = (
        dims[..axis].iter().product::<usize>(),
        dims[axis],
        dims[axis + 1..].iter().product::<usize>(),
    );
    let mut y = vec![c64::new(0.0, 0.0); x.len()];
    for o in 0..outer {
        for i in 0..inner {
            for k in 0..n {
                let mut acc = c64::new(0.0, 0.0);
                for j in 0..n {
                    // The angle reduced exactly first: (j·k mod n) / n.
                    let t = sign * 2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                    acc += x[(o * n + j) * inner + i] * c64::new(t.cos(), t.sin());
                }
                y[(o * n + k) * inner + i] = acc;
            }
        }
    }
    y
}

fn naive(x: &[c64], dims: &[usize], axes: &[usize], sign: f64) -> Vec<c64> {
    axes.iter()
        .fold(x.to_vec(), |v, &a| naive_axis(&v, dims, a, sign))
}

/// max |got − want| within `c · ε · (1 + log2 n) · Σ|x|` (the FFT's error bound, with
/// room), `n` the points per transform.
fn assert_close(got: &[c64], want: &[c64], x: &[c64], n: usize, dt: DataType, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let l1: f64 = x.iter().map(|z| z.norm()).sum::<f64>().max(1e-300);
    let tol = 8.0 * eps(dt) * (1.0 + (n.max(1) as f64).log2()) * l1;
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).norm() <= tol,
            "{what}: element {k} is {g}, want {w} (tolerance {tol:e})"
        );
    }
}

fn random_c64(seed: u64, n: usize) -> Vec<c64> {
    random_vec::<c64>(&mut rng(seed), n)
}

device_test!(one_dimensional_transforms_match_the_naive_dft, D -> Result {
    for dt in [ComplexDouble, ComplexFloat] {
        for n in [1usize, 2, 3, 5, 7, 15, 16, 17, 60, 257, 1021] {
            let x = on::<D>(Tensor::from_slice(&random_c64(n as u64, n), &[n])?.cast(dt)?);
            let xs = values(&x)?;
            let f = fft(&x, 0, FftNorm::Backward)?;
            assert_eq!(f.dtype(), dt);
            assert_close(&values(&f)?, &naive(&xs, &[n], &[0], -1.0), &xs, n, dt, &format!("{dt} fft n = {n}"));
            let i = ifft(&x, 0, FftNorm::Forward)?; // the unscaled inverse
            assert_close(&values(&i)?, &naive(&xs, &[n], &[0], 1.0), &xs, n, dt, &format!("{dt} ifft n = {n}"));
        }
    }
    Ok(())
});

device_test!(every_axis_set_of_a_3d_tensor, D -> Result {
    let sets: [&[usize]; 9] = [&[], &[0], &[1], &[2], &[0, 1], &[0, 2], &[1, 2], &[0, 1, 2], &[2, 0]];
    for dims in [[3usize, 5, 4], [2, 1, 7], [4, 300, 3]] {
        let numel: usize = dims.iter().product();
        for dt in [ComplexDouble, ComplexFloat] {
            let x = on::<D>(Tensor::from_slice(&random_c64(7, numel), &dims)?.cast(dt)?);
            let xs = values(&x)?;
            for axes in sets {
                let n: usize = axes.iter().map(|&a| dims[a]).product();
                let got = values(&fftn(&x, axes, FftNorm::Backward)?)?;
                assert_close(&got, &naive(&xs, &dims, axes, -1.0), &xs, n, dt, &format!("{dt} fftn {dims:?} axes {axes:?}"));
                // The inverse with its 1/n.
                let inv = values(&ifftn(&x, axes, FftNorm::Backward)?)?;
                let want: Vec<c64> = naive(&xs, &dims, axes, 1.0).iter().map(|z| z / n as f64).collect();
                assert_close(&inv, &want, &xs, n, dt, &format!("{dt} ifftn {dims:?} axes {axes:?}"));
            }
        }
    }
    Ok(())
});

// Blocks of up to three consecutive axes are one transform each (one batched cuFFT plan
// of that rank on the GPU): a batch of bands over a 3-D grid, the same axes in another
// order, four axes (a block of three and one more), and a 3-D block with lines after it.
device_test!(blocks_of_consecutive_axes_of_4d_tensors, D -> Result {
    let sets: [&[usize]; 5] = [&[1, 2, 3], &[3, 1, 2], &[0, 1, 2, 3], &[0, 1, 2], &[0, 2, 3]];
    for dims in [[3usize, 4, 6, 5], [2, 9, 1, 7]] {
        let numel: usize = dims.iter().product();
        for dt in [ComplexDouble, ComplexFloat] {
            let x = on::<D>(Tensor::from_slice(&random_c64(11, numel), &dims)?.cast(dt)?);
            let xs = values(&x)?;
            for axes in sets {
                let n: usize = axes.iter().map(|&a| dims[a]).product();
                let got = values(&fftn(&x, axes, FftNorm::Backward)?)?;
                assert_close(&got, &naive(&xs, &dims, axes, -1.0), &xs, n, dt, &format!("{dt} fftn {dims:?} axes {axes:?}"));
                let mut y = x.try_clone()?;
                y.ifftn_(axes, FftNorm::Forward)?;
                let want: Vec<c64> = naive(&xs, &dims, axes, 1.0);
                assert_close(&values(&y)?, &want, &xs, n, dt, &format!("{dt} ifftn_ {dims:?} axes {axes:?}"));
            }
        }
    }
    Ok(())
});

device_test!(strided_lines_in_partial_blocks, D -> Result {
    // 17 and 33 interleaved lines: whole blocks of 16 plus a remainder, more lines than
    // a GPU block has threads.
    for dims in [[300usize, 17], [45, 33], [2, 700]] {
        let numel = dims[0] * dims[1];
        let x = on::<D>(Tensor::from_slice(&random_c64(11, numel), &dims)?);
        let xs = values(&x)?;
        for axis in 0..2 {
            let got = values(&fft(&x, axis, FftNorm::Backward)?)?;
            assert_close(&got, &naive(&xs, &dims, &[axis], -1.0), &xs, dims[axis], ComplexDouble, &format!("{dims:?} axis {axis}"));
        }
    }
    Ok(())
});

device_test!(normalisations_round_trips_and_parseval, D -> Result {
    let dims = [6usize, 10, 9];
    let numel = 540;
    for dt in [ComplexDouble, ComplexFloat] {
        let x = on::<D>(Tensor::from_slice(&random_c64(13, numel), &dims)?.cast(dt)?);
        let xs = values(&x)?;
        let all = [0usize, 1, 2];
        for norm in [FftNorm::Backward, FftNorm::Ortho, FftNorm::Forward] {
            let back = values(&ifftn(&fftn(&x, &all, norm)?, &all, norm)?)?;
            assert_close(&back, &xs, &xs, numel, dt, &format!("{dt} round trip {norm:?}"));
        }
        // Forward norm: the forward transform divided by n.
        let f = values(&fftn(&x, &all, FftNorm::Forward)?)?;
        let want: Vec<c64> = naive(&xs, &dims, &all, -1.0).iter().map(|z| z / numel as f64).collect();
        assert_close(&f, &want, &xs, numel, dt, &format!("{dt} forward norm"));
        // Ortho is unitary: Parseval.
        let o = values(&fftn(&x, &all, FftNorm::Ortho)?)?;
        let (ex, eo): (f64, f64) = (xs.iter().map(|z| z.norm_sqr()).sum(), o.iter().map(|z| z.norm_sqr()).sum());
        assert!((ex - eo).abs() <= 50.0 * eps(dt) * ex, "{dt} Parseval: {ex} vs {eo}");
    }
    Ok(())
});

device_test!(real_and_integer_input_become_complex, D -> Result {
    let v: Vec<f64> = (0..12).map(|k| (k as f64 * 0.7).sin()).collect();
    let want = naive(&v.iter().map(|&r| c64::new(r, 0.0)).collect::<Vec<_>>(), &[12], &[0], -1.0);
    for (dt, ct) in [(Double, ComplexDouble), (Float, ComplexFloat), (Half, ComplexFloat), (BFloat16, ComplexFloat)] {
        let x = on::<D>(Tensor::from_slice(&v, &[12])?.cast(dt)?);
        let xs = values(&x)?;
        let f = fft(&x, 0, FftNorm::Backward)?;
        assert_eq!(f.dtype(), ct, "{dt}");
        let exact = naive(&xs, &[12], &[0], -1.0);
        assert_close(&values(&f)?, &exact, &xs, 12, ct, &format!("{dt} input"));
        let _ = &want;
    }
    let i = on::<D>(Tensor::from_slice(&[1i32, 2, 3, 4], &[4])?);
    let f = fft(&i, 0, FftNorm::Backward)?;
    assert_eq!(f.dtype(), ComplexDouble);
    assert_eq!(values(&f)?, [c64::new(10.0, 0.0), c64::new(-2.0, 2.0), c64::new(-2.0, 0.0), c64::new(-2.0, -2.0)]);
    Ok(())
});

device_test!(views_maps_and_in_place, D -> Result {
    let dims = [5usize, 8];
    let data = random_c64(17, 40);
    let x = on::<D>(Tensor::from_slice(&data, &dims)?);
    // A transposed view and a column-major map give what their dense copies give.
    let t = x.t()?;
    for axes in [&[0usize][..], &[1], &[0, 1]] {
        let a = values(&fftn(&t, axes, FftNorm::Ortho)?)?;
        let b = values(&fftn(&t.contiguous()?, axes, FftNorm::Ortho)?)?;
        assert_eq!(a, b, "transposed view, axes {axes:?}");
    }
    let (_owner, map) = fortran_map::<D, c64>(&data, &dims);
    let a = values(&fftn(&map, &[0, 1], FftNorm::Backward)?)?;
    let b = values(&fftn(&map.contiguous()?, &[0, 1], FftNorm::Backward)?)?;
    assert_eq!(a, b, "column-major map");
    // In place equals out of place; the input of fftn is untouched.
    let mut y = x.try_clone()?;
    y.fftn_(&[1], FftNorm::Backward)?;
    assert_eq!(values(&y)?, values(&fft(&x, 1, FftNorm::Backward)?)?);
    assert_eq!(values(&x)?, data);
    y.ifftn_(&[1], FftNorm::Backward)?;
    assert_close(&values(&y)?, &data, &data, 8, ComplexDouble, "in-place round trip");
    // In place needs a dense row-major complex tensor.
    let mut tv = x.t()?;
    assert!(matches!(tv.fftn_(&[0], FftNorm::Backward).unwrap_err(), Error::Unsupported { op: "fftn_", .. }));
    let mut r = on::<D>(Tensor::from_slice(&[1.0f64, 2.0], &[2])?);
    assert!(matches!(r.fftn_(&[0], FftNorm::Backward).unwrap_err(), Error::UnsupportedDType { op: "fftn_", .. }));
    Ok(())
});

// `fftn` into a new tensor reads a dense view where it lies (out of place with the FFTW
// backend; a copy and an in-place transform otherwise): views at every offset of a buffer
// whose other elements are NaN, one block and two (four axes), both precisions, both
// directions; the input comes back bit for bit and no NaN from around it gets in.
device_test!(fftn_of_dense_views_at_any_offset_leaves_the_input_untouched, D -> Result {
    let dims = [3usize, 4, 5, 6];
    let numel: usize = dims.iter().product();
    for dt in [ComplexDouble, ComplexFloat] {
        for offset in 0..4 {
            let mut data = vec![c64::new(f64::NAN, f64::NAN); numel + 7];
            let inside = random_c64(23 + offset as u64, numel);
            data[offset..offset + numel].copy_from_slice(&inside);
            let all = on::<D>(Tensor::from_slice(&data, &[data.len()])?.cast(dt)?);
            let x = all.narrow(0, offset, numel)?.reshape(&dims.map(|d| d as i64))?;
            assert!(x.is_contiguous());
            let xs = values(&x)?;
            let before = values(&all)?;
            for axes in [&[1usize, 2, 3][..], &[0, 1, 2, 3], &[0, 3], &[2]] {
                let n: usize = axes.iter().map(|&a| dims[a]).product();
                let what = format!("{dt} offset {offset} axes {axes:?}");
                let got = values(&fftn(&x, axes, FftNorm::Backward)?)?;
                assert_close(&got, &naive(&xs, &dims, axes, -1.0), &xs, n, dt, &format!("fftn {what}"));
                let inv = values(&ifftn(&x, axes, FftNorm::Ortho)?)?;
                let want: Vec<c64> = naive(&xs, &dims, axes, 1.0).iter().map(|z| z / (n as f64).sqrt()).collect();
                assert_close(&inv, &want, &xs, n, dt, &format!("ifftn {what}"));
                let after = values(&all)?;
                let same = before.iter().zip(&after).all(|(a, b)| {
                    a.re.to_bits() == b.re.to_bits() && a.im.to_bits() == b.im.to_bits()
                });
                assert!(same, "{what}: the input buffer was changed");
            }
        }
    }
    Ok(())
});

device_test!(empty_tensors_and_bad_axes, D -> Result {
    let huge = on::<D>(Tensor::new(ComplexDouble, DeviceType::Cpu, &[0, 1 << 40])?);
    let f = fftn(&huge, &[0, 1], FftNorm::Ortho)?;
    assert_eq!(f.dims(), [0, 1 << 40]);
    let x = on::<D>(Tensor::from_slice(&random_c64(3, 6), &[2, 3])?);
    assert!(matches!(fftn(&x, &[2], FftNorm::Backward).unwrap_err(), Error::OutOfRange { op: "fftn", .. }));
    assert!(matches!(fftn(&x, &[1, 1], FftNorm::Backward).unwrap_err(), Error::OutOfRange { .. }));
    // No axes: a copy.
    assert_eq!(values(&fftn(&x, &[], FftNorm::Backward)?)?, values(&x)?);
    Ok(())
});

device_test!(frequencies_and_shifts, D -> Result {
    for (n, d) in [(1usize, 1.0), (4, 0.5), (5, 2.0), (8, 0.1)] {
        let f = fftfreq(n, d, D::TYPE)?.to_vec::<f64>()?;
        for (k, v) in f.iter().enumerate() {
            let m = if k < n.div_ceil(2) { k as f64 } else { k as f64 - n as f64 };
            assert_eq!(*v, m / (d * n as f64), "fftfreq({n}, {d})[{k}]");
        }
    }
    assert!(matches!(fftfreq(4, 0.0, D::TYPE).unwrap_err(), Error::InvalidArgument { .. }));
    let x = on::<D>(Tensor::from_slice(&[0i64, 1, 2, 3, 4], &[5])?);
    assert_eq!(fftshift(&x, &[0])?.to_vec::<i64>()?, [3, 4, 0, 1, 2]);
    assert_eq!(ifftshift(&x, &[0])?.to_vec::<i64>()?, [2, 3, 4, 0, 1]);
    let g = on::<D>(Tensor::from_slice(&(0..12i64).collect::<Vec<_>>(), &[3, 4])?);
    let s = fftshift(&g, &[0, 1])?;
    assert_eq!(s.to_vec::<i64>()?, [10, 11, 8, 9, 2, 3, 0, 1, 6, 7, 4, 5]);
    assert_eq!(ifftshift(&s, &[0, 1])?.to_vec::<i64>()?, g.to_vec::<i64>()?);
    // The shifted frequencies are sorted.
    let f = fftshift(&fftfreq(7, 1.0, D::TYPE)?, &[0])?.to_vec::<f64>()?;
    assert!(f.windows(2).all(|w| w[0] < w[1]), "{f:?}");
    Ok(())
});

/// The Hermitian completion of `half` (the first entries of an `n`-point spectrum along
/// the last axis of a `[rows, half.len() / rows]` array), as NumPy's `irfft` reads it:
/// zero-padded or truncated to `n/2 + 1`, imaginary parts of the zero and Nyquist
/// frequencies dropped.
fn hermitian_full(half: &[c64], rows: usize, n: usize) -> Vec<c64> {
    let m = half.len() / rows;
    let mut z = vec![c64::new(0.0, 0.0); rows * n];
    for r in 0..rows {
        let get = |k: usize| {
            if k < m {
                half[r * m + k]
            } else {
                c64::new(0.0, 0.0)
            }
        };
        for k in 0..=n / 2 {
            let mut v = get(k);
            if k == 0 || 2 * k == n {
                v.im = 0.0;
            }
            z[r * n + k] = v;
            if k > 0 && k < n.div_ceil(2) {
                z[r * n + n - k] = v.conj();
            }
        }
    }
    z
}

device_test!(real_transforms_match_the_naive_dft, D -> Result {
    for (dims, axes) in [(vec![7usize], vec![0usize]), (vec![8], vec![0]), (vec![3, 6], vec![0, 1]), (vec![4, 5], vec![1, 0]), (vec![1], vec![0])] {
        let numel: usize = dims.iter().product();
        let v: Vec<f64> = random_vec(&mut rng(19), numel);
        for (dt, ct) in [(Double, ComplexDouble), (Float, ComplexFloat)] {
            let x = on::<D>(Tensor::from_slice(&v, &dims)?.cast(dt)?);
            let xs = values(&x)?;
            let r = rfftn(&x, &axes, FftNorm::Backward)?;
            assert_eq!(r.dtype(), ct);
            let last = *axes.last().unwrap();
            let mut want_dims = dims.clone();
            want_dims[last] = dims[last] / 2 + 1;
            assert_eq!(r.dims(), want_dims);
            // The full transform's entries at the kept frequencies.
            let full = naive(&xs, &dims, &axes, -1.0);
            let full_t = Tensor::from_slice(&full, &dims)?;
            let want = values(&full_t.narrow(last, 0, want_dims[last])?)?;
            let n: usize = axes.iter().map(|&a| dims[a]).product();
            assert_close(&values(&r)?, &want, &xs, n, ct, &format!("{dt} rfftn {dims:?} axes {axes:?}"));
            // And back, with the original length given (odd lengths need it).
            let back = irfftn(&r, &axes, Some(dims[last]), FftNorm::Backward)?;
            assert_eq!(back.dtype(), dt);
            assert_close(&values(&back)?, &xs, &xs, n, ct, &format!("{dt} irfftn {dims:?} axes {axes:?}"));
        }
    }
    Ok(())
});

device_test!(irfftn_reads_only_the_hermitian_part, D -> Result {
    // 2 rows of 4 entries, garbage in the imaginary parts of the zero and Nyquist
    // frequencies (NaN included), output lengths below, at and above 2·(4 − 1).
    let mut half = random_c64(23, 8);
    half[0].im = f64::NAN;
    half[4].im = 5.0;
    half[3].im = 7.0; // the Nyquist entry of n = 6
    let x = on::<D>(Tensor::from_slice(&half, &[2, 4])?);
    for n in [1usize, 5, 6, 7, 10] {
        let got = irfftn(&x, &[1], Some(n), FftNorm::Backward)?;
        assert_eq!(got.dims(), [2, n]);
        assert_eq!(got.dtype(), Double);
        let z = hermitian_full(&half, 2, n);
        let want: Vec<c64> = naive(&z, &[2, n], &[1], 1.0).iter().map(|v| c64::new(v.re / n as f64, 0.0)).collect();
        let finite: Vec<c64> = z.iter().map(|v| if v.im.is_nan() { c64::new(v.re, 0.0) } else { *v }).collect();
        assert_close(&values(&got)?, &want, &finite, n, ComplexDouble, &format!("irfftn n = {n}"));
    }
    // The default length is 2·(m − 1).
    assert_eq!(irfftn(&x, &[1], None, FftNorm::Backward)?.dims(), [2, 6]);
    // Errors: complex input to rfftn, no output points.
    assert!(matches!(rfftn(&x, &[1], FftNorm::Backward).unwrap_err(), Error::UnsupportedDType { op: "rfftn", .. }));
    let one = on::<D>(Tensor::from_slice(&[c64::new(1.0, 0.0)], &[1])?);
    assert!(matches!(irfftn(&one, &[0], None, FftNorm::Backward).unwrap_err(), Error::InvalidArgument { op: "irfftn", .. }));
    for (n, d) in [(1usize, 1.0), (8, 0.5), (9, 2.0)] {
        let f = rfftfreq(n, d, D::TYPE)?.to_vec::<f64>()?;
        assert_eq!(f.len(), n / 2 + 1);
        for (k, v) in f.iter().enumerate() {
            assert_eq!(*v, k as f64 / (d * n as f64));
        }
    }
    Ok(())
});

// Grids above the host's parallel threshold (2^20 elements × log2 of the line) are split
// across threads: contiguous lines in ranges, strided lines in blocks. The result must
// not depend on the split (each line is transformed by one plan either way), and the
// round trip must return the input.
#[test]
fn large_grids_give_the_same_result_on_one_and_on_four_threads() -> TestResult {
    let dims = [64usize, 66, 70];
    let numel: usize = dims.iter().product();
    let data = random_c64(29, numel);
    let x = Tensor::from_slice(&data, &dims)?;
    let run = |threads: usize| {
        ctensor_aten::set_num_threads(threads).unwrap();
        let r = values(&fftn(&x, &[0, 1, 2], FftNorm::Backward).unwrap()).unwrap();
        ctensor_aten::set_num_threads(2).unwrap();
        r
    };
    let (one, four) = (run(1), run(4));
    assert!(one == four, "the transform depends on the thread count");
    let k = Tensor::from_slice(&four, &dims)?;
    let back = values(&ifftn(&k, &[0, 1, 2], FftNorm::Backward)?)?;
    assert_close(
        &back,
        &data,
        &data,
        numel,
        ComplexDouble,
        "large round trip",
    );
    // One line against the naive DFT: the middle column along axis 0.
    let col: Vec<c64> = (0..64).map(|j| data[(j * 66 + 33) * 70 + 35]).collect();
    let along0 = values(&fft(&x, 0, FftNorm::Backward)?)?;
    let got: Vec<c64> = (0..64).map(|j| along0[(j * 66 + 33) * 70 + 35]).collect();
    assert_close(
        &got,
        &naive(&col, &[64], &[0], -1.0),
        &col,
        64,
        ComplexDouble,
        "a strided line of a large grid",
    );
    Ok(())
}

device_test!(a_nan_on_a_strided_axis_stays_in_its_line, D -> Result {
    // 13 rows (three tiles of the host's four-row gather and one left over) by 37
    // columns (blocks of 8 strided lines, the last of 5): the transform along axis 0 runs
    // on lines at a stride. A NaN in column 20 must make that column NaN and leave every
    // other column exactly as the clean input's transform has it.
    let (rows, cols, bad) = (13usize, 37usize, 20usize);
    let clean = random_c64(41, rows * cols);
    let mut dirty = clean.clone();
    dirty[5 * cols + bad].re = f64::NAN;
    let f = |v: &[c64]| -> Fallible<Vec<c64>> {
        let x = on::<D>(Tensor::from_slice(v, &[rows, cols])?);
        values(&fftn(&x, &[0], FftNorm::Backward)?)
    };
    let (want, got) = (f(&clean)?, f(&dirty)?);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        if i % cols == bad {
            assert!(g.re.is_nan() || g.im.is_nan(), "element {i} of the NaN column: {g}");
        } else {
            assert_eq!(g, w, "element {i} (row {}, column {})", i / cols, i % cols);
        }
    }
    // The naive DFT agrees on the clean columns.
    let naive = naive_axis(&clean, &[rows, cols], 0, -1.0);
    assert_close(&want, &naive, &clean, rows, ComplexDouble, "fft along axis 0 of 13 × 37");
    Ok(())
});
