//! The host scan for NaN and infinities (`FindNonFinite`, run before every LAPACK call)
//! against a plain loop: the first non-finite entry in column-major order inside the part
//! read, for every floating type, with the bad value in the real or the imaginary part,
//! next to the largest finite values, at every position class (first, last, a lane
//! boundary, the remainder of a column), in every part and with padded leading
//! dimensions whose padding holds NaN that must not be seen.

mod common;

use common::rng;
use ctensor_base::{bf16, c32, c64, f16, CpuDevice, Result, Scalar};
use ctensor_kernels::lapack::{FindNonFinite, Part, Uplo};
use rand::Rng;

/// The plain loop: rows of column `j` inside `part`, in order.
fn reference<T: Scalar>(
    part: Part,
    m: usize,
    n: usize,
    a: &[T],
    lda: usize,
) -> Option<(usize, usize)> {
    for j in 0..n {
        let rows = match part {
            Part::Whole => 0..m,
            Part::Triangle(Uplo::Lower) => j.min(m)..m,
            Part::Triangle(Uplo::Upper) => 0..(j + 1).min(m),
        };
        for i in rows {
            let z = a[i + j * lda].to_c64();
            if !z.re.is_finite() || !z.im.is_finite() {
                return Some((i, j));
            }
        }
    }
    None
}

fn scan_matches_a_plain_loop<T: Scalar>() -> Result<()>
where
    CpuDevice: FindNonFinite<T>,
{
    let mut r = rng(41);
    let complex = T::DTYPE.is_complex();
    let big = if matches!(
        T::DTYPE,
        ctensor_base::DataType::Float | ctensor_base::DataType::ComplexFloat
    ) {
        f32::MAX as f64
    } else if matches!(T::DTYPE, ctensor_base::DataType::Half) {
        65504.0
    } else if matches!(T::DTYPE, ctensor_base::DataType::BFloat16) {
        3.0e38
    } else {
        f64::MAX
    };
    for (m, n, lda) in [
        (1usize, 1usize, 1usize),
        (7, 5, 9),
        (16, 16, 16),
        (17, 3, 20),
        (300, 7, 301),
        (5, 40, 5),
    ] {
        for trial in 0..40 {
            let span = lda * (n - 1) + m;
            // Finite values, some of them the largest finite (x · 0 must stay 0 there).
            let mut a: Vec<T> = (0..span)
                .map(|_| {
                    let v = if r.gen_bool(0.1) {
                        big
                    } else {
                        r.gen_range(-1.0..1.0)
                    };
                    T::cast_from(c64::new(v, if complex { -v } else { 0.0 }))
                })
                .collect();
            // NaN in the padding rows, which are outside the matrix.
            for j in 0..n {
                for i in m..lda.min(span - j * lda) {
                    a[i + j * lda] = T::cast_from(c64::new(f64::NAN, 0.0));
                }
            }
            let bad = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY][trial % 3];
            for _ in 0..trial % 4 {
                let (i, j) = (r.gen_range(0..m), r.gen_range(0..n));
                let old = a[i + j * lda].to_c64();
                a[i + j * lda] = T::cast_from(if complex && r.gen_bool(0.5) {
                    c64::new(old.re, bad)
                } else {
                    c64::new(bad, old.im)
                });
            }
            for part in [
                Part::Whole,
                Part::Triangle(Uplo::Lower),
                Part::Triangle(Uplo::Upper),
            ] {
                // SAFETY: `a` holds the m × n matrix with leading dimension lda.
                let got = unsafe { CpuDevice::find_non_finite(part, m, n, a.as_ptr(), lda) }?;
                assert_eq!(
                    got.map(|(i, j, _)| (i, j)),
                    reference(part, m, n, &a, lda),
                    "{:?} {m}×{n} ld {lda} {part:?} trial {trial}",
                    T::DTYPE
                );
            }
        }
    }
    Ok(())
}

#[test]
fn the_non_finite_scan_matches_a_plain_loop_for_every_floating_type() -> Result<()> {
    scan_matches_a_plain_loop::<f64>()?;
    scan_matches_a_plain_loop::<f32>()?;
    scan_matches_a_plain_loop::<c64>()?;
    scan_matches_a_plain_loop::<c32>()?;
    scan_matches_a_plain_loop::<f16>()?;
    scan_matches_a_plain_loop::<bf16>()?;
    Ok(())
}
