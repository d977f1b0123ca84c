//! `hegvx` (selected pairs of `A x = λ B x`) on both devices for f32/f64/c32/c64: the
//! eigenvalues of an index and a value range equal those of the full `hegvd`, and each
//! returned vector satisfies `A z = λ B z` with `Zᴴ B Z = I`; padded leading dimensions,
//! every itype's first form, and a `B` that is not positive definite.
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_base::{c64, CastFrom, Error, Scalar};
use ctensor_kernels::lapack::{EigRange, Jobz, LapackHegvd, LapackHegvx, Uplo};

/// A random Hermitian n × n matrix (column-major, leading dimension `ld`) plus `shift`·I.
fn hermitian<T: Scalar>(seed: u64, n: usize, ld: usize, shift: f64) -> Vec<T> {
    let r: Vec<T> = random_vec(&mut rng(seed), ld * n);
    let mut a = vec![T::zero(); ld * n];
    for j in 0..n {
        for i in 0..n {
            let v = (r[i + j * ld].to_c64() + r[j + i * ld].to_c64().conj()) * 0.5;
            let v = if i == j {
                c64::new(v.re + shift, 0.0)
            } else {
                v
            };
            a[i + j * ld] = T::cast_from(v);
        }
    }
    a
}

fn hegvx_case<D: TestDevice + LapackHegvx<T> + LapackHegvd<T>, T: Scalar>(n: usize) -> TestResult {
    let ld = n + 3;
    let a0 = hermitian::<T>(n as u64, n, ld, 0.0);
    let b0 = hermitian::<T>(n as u64 + 9, n, ld, 250.0 * n as f64);
    // All eigenvalues from hegvd, for the reference.
    let (mut a, mut b) = (Buf::on::<D>(a0.clone()), Buf::on::<D>(b0.clone()));
    let mut w = Buf::on::<D>(vec![<T::Real as Scalar>::zero(); n]);
    // SAFETY: a, b ld·n; w n.
    unsafe {
        D::hegvd(
            1,
            Jobz::ValuesOnly,
            Uplo::Lower,
            n,
            a.ptr(),
            ld,
            b.ptr(),
            ld,
            w.ptr(),
        )
    }?;
    let all: Vec<f64> = w.get().iter().map(|x| x.to_c64().re).collect();
    let scale = all.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    let tol = 200.0 * (n as f64) * eps::<T>() * scale;
    let mid = (all[n / 2 - 1] + all[n / 2]) / 2.0;
    let ranges = [
        (EigRange::Index(1..n / 2), all[1..n / 2].to_vec()),
        (
            EigRange::Value {
                lower: <T::Real as CastFrom<f64>>::cast_from(all[0] - 1.0),
                upper: <T::Real as CastFrom<f64>>::cast_from(mid),
            },
            all.iter().copied().filter(|&x| x <= mid).collect(),
        ),
    ];
    for (range, want) in ranges {
        let what = format!("{} n={n} {range:?}", T::DTYPE);
        let (mut a, mut b) = (Buf::on::<D>(a0.clone()), Buf::on::<D>(b0.clone()));
        let mut w = Buf::on::<D>(vec![<T::Real as Scalar>::zero(); n]);
        let mut z = Buf::on::<D>(vec![T::zero(); ld * n]);
        // SAFETY: a, b, z ld·n; w n.
        let m = unsafe {
            D::hegvx(
                1,
                Uplo::Lower,
                n,
                a.ptr(),
                ld,
                b.ptr(),
                ld,
                range.clone(),
                w.ptr(),
                z.ptr(),
                ld,
            )
        }?;
        assert_eq!(m, want.len(), "{what}: count");
        let (w, z) = (w.get(), z.get());
        for k in 0..m {
            let lam = w[k].to_c64().re;
            assert!(
                (lam - want[k]).abs() <= tol,
                "{what}: λ{k} {lam} vs {}",
                want[k]
            );
            for i in 0..n {
                let az: c64 = (0..n)
                    .map(|l| a0[i + l * ld].to_c64() * z[l + k * ld].to_c64())
                    .sum();
                let bz: c64 = (0..n)
                    .map(|l| b0[i + l * ld].to_c64() * z[l + k * ld].to_c64())
                    .sum();
                assert_close(
                    az,
                    bz * lam,
                    tol * 10.0,
                    &format!("{what}: (A z − λ B z)[{i}] for pair {k}"),
                );
            }
            for k2 in 0..m {
                let g: c64 = (0..n)
                    .map(|i| {
                        z[i + k * ld].to_c64().conj()
                            * (0..n)
                                .map(|l| b0[i + l * ld].to_c64() * z[l + k2 * ld].to_c64())
                                .sum::<c64>()
                    })
                    .sum();
                assert_close(
                    g,
                    c64::new(if k == k2 { 1.0 } else { 0.0 }, 0.0),
                    tol,
                    &format!("{what}: (ZᴴBZ)[{k},{k2}]"),
                );
            }
        }
    }
    Ok(())
}

fn hegvx_sizes<D: TestDevice + LapackHegvx<T> + LapackHegvd<T>, T: Scalar>() -> TestResult {
    for n in [2usize, 9, 40] {
        hegvx_case::<D, T>(n)?;
    }
    Ok(())
}

device_test!(hegvx_selected_pairs_match_hegvd_and_solve_the_pencil, D -> Result {
    for_blas_dtypes!(hegvx_sizes, D);
    Ok(())
});

device_test!(hegvx_refuses_a_b_that_is_not_positive_definite, D -> Result {
    let n = 3;
    let mut a = Buf::on::<D>(hermitian::<f64>(1, n, n, 0.0));
    let mut b = Buf::on::<D>(hermitian::<f64>(2, n, n, -1000.0));
    let mut w = Buf::on::<D>(vec![0.0f64; n]);
    let mut z = Buf::on::<D>(vec![0.0f64; n * n]);
    // SAFETY: a, b, z n·n; w n.
    let e = unsafe { D::hegvx(1, Uplo::Lower, n, a.ptr(), n, b.ptr(), n, EigRange::Index(0..2), w.ptr(), z.ptr(), n) }.unwrap_err();
    assert!(matches!(e, Error::Lapack { .. }) && e.to_string().contains("positive definite"), "{e}");
    // An itype outside 1..=3 is refused before anything is read.
    // SAFETY: as above.
    let e = unsafe { D::hegvx(4, Uplo::Lower, n, a.ptr(), n, b.ptr(), n, EigRange::All, w.ptr(), z.ptr(), n) }.unwrap_err();
    assert!(matches!(e, Error::InvalidArgument { .. }) || matches!(e, Error::OutOfRange { .. }), "{e}");
    assert!(e.to_string().contains("hegvx"), "{e}");
    Ok(())
});
