//! einsum against a brute-force sum over every index assignment, for every ABACUS form
//! and the forms ABACUS gets wrong (two batch axes, batch broadcasting, conj on any
//! operand and path, alpha/beta everywhere, `out` over the caller's memory). On the
//! CPU and, through `device_test!`, on the GPU (one `SKIP` line per test without one).
#![allow(clippy::needless_range_loop)]
#![deny(unused_must_use)]

mod common;

use common::*;
use ctensor_aten::ops::einsum::{einsum, einsum_into, EinsumOptions};
use ctensor_aten::{c32, c64, CastFrom, DataType, Device, Error, Scalar, Tensor};

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The brute-force reference for a letters-only equation with an explicit output:
/// sums the product of the operands (conjugated as asked) over every assignment of
/// every label. A size-1 axis broadcasts. Returns the output shape, values and the
/// sum of |terms| per element (for the tolerance).
fn brute(
    eq: &str,
    ops: &[(Vec<c64>, Vec<usize>)],
    conj: [bool; 2],
) -> (Vec<usize>, Vec<c64>, Vec<f64>) {
    // Only the first two operands can be conjugated (EinsumOptions::conj_x / conj_y).
    let (lhs, rhs) = eq.split_once("->").unwrap();
    let terms: Vec<&[u8]> = lhs.split(',').map(|t| t.as_bytes()).collect();
    let rhs = rhs.as_bytes();
    let mut labels: Vec<u8> = Vec::new();
    let mut size = [0usize; 256];
    for (t, (_, dims)) in terms.iter().zip(ops) {
        for (&l, &n) in t.iter().zip(dims) {
            if !labels.contains(&l) {
                labels.push(l);
            }
            size[l as usize] = size[l as usize].max(n);
        }
    }
    let out_dims: Vec<usize> = rhs.iter().map(|&l| size[l as usize]).collect();
    let n_out: usize = out_dims.iter().product();
    let (mut out, mut mag) = (vec![c64::new(0.0, 0.0); n_out], vec![0.0; n_out]);
    let ranges: Vec<usize> = labels.iter().map(|&l| size[l as usize]).collect();
    for assign in all_indices(&ranges) {
        let val = |l: u8| assign[labels.iter().position(|&k| k == l).unwrap()];
        let mut p = c64::new(1.0, 0.0);
        for (k, (t, (v, dims))) in terms.iter().zip(ops).enumerate() {
            let idx: Vec<usize> = t
                .iter()
                .zip(dims)
                .map(|(&l, &n)| if n == 1 { 0 } else { val(l) })
                .collect();
            let x = v[flat(dims, &idx)];
            p *= if conj.get(k) == Some(&true) {
                x.conj()
            } else {
                x
            };
        }
        let o = flat(&out_dims, &rhs.iter().map(|&l| val(l)).collect::<Vec<_>>());
        out[o] += p;
        mag[o] += p.norm();
    }
    (out_dims, out, mag)
}

fn eps_of(dt: DataType) -> f64 {
    match dt {
        DataType::Float | DataType::ComplexFloat => f32::EPSILON as f64,
        DataType::Double | DataType::ComplexDouble => f64::EPSILON,
        _ => 0.0,
    }
}

fn assert_matches(
    got: &Tensor,
    dims: &[usize],
    want: &[c64],
    mag: &[f64],
    k: usize,
    what: &str,
) -> TestResult {
    assert_eq!(got.dims(), dims, "{what}: shape");
    let got = got.cast(DataType::ComplexDouble)?.to_vec::<c64>()?;
    let e = eps_of(got_dtype_hint(what)?);
    for i in 0..want.len() {
        let tol = 8.0 * (k as f64 + 2.0) * e * mag[i].max(1.0);
        assert!(
            (got[i] - want[i]).norm() <= tol,
            "{what}: element {i}: got {}, want {} (tolerance {tol:e})",
            got[i],
            want[i]
        );
    }
    Ok(())
}

/// The dtype is encoded at the start of each case's description.
fn got_dtype_hint(what: &str) -> Fallible<DataType> {
    Ok(DataType::from_name(
        what.split_whitespace().next().unwrap(),
    )?)
}

/// Runs `eq` (ctensor's) and `reference` (letters only) on random operands of `shapes`.
fn case<D: Device, T: Scalar>(
    eq: &str,
    reference: &str,
    shapes: &[&[usize]],
    opts: EinsumOptions,
) -> TestResult {
    let mut r = rng(eq.len() as u64 * 31 + shapes.len() as u64);
    let mut tensors = Vec::new();
    let mut values = Vec::new();
    for s in shapes {
        let (t, v) = random_on::<D, T>(&mut r, s);
        values.push((
            v.iter()
                .map(|&x| c64::cast_from(x.to_c64()))
                .collect::<Vec<c64>>(),
            s.to_vec(),
        ));
        tensors.push(t);
    }
    let refs: Vec<&Tensor> = tensors.iter().collect();
    let got = einsum(eq, &refs, &opts).unwrap_or_else(|e| panic!("{eq}: {e}"));
    let (dims, mut want, mut mag) = brute(reference, &values, [opts.conj_x, opts.conj_y]);
    let alpha = c64::cast_from(T::cast_from(opts.alpha).to_c64());
    for (w, m) in want.iter_mut().zip(mag.iter_mut()) {
        *w *= alpha;
        *m *= alpha.norm();
    }
    // Terms summed into each output element.
    let assignments: usize = {
        let mut sizes = std::collections::BTreeMap::new();
        let lhs = reference.split_once("->").unwrap().0;
        for (t, s) in lhs.split(',').zip(shapes) {
            for (l, &n) in t.bytes().zip(s.iter()) {
                let e = sizes.entry(l).or_insert(n);
                *e = (*e).max(n);
            }
        }
        sizes.values().product()
    };
    let k = assignments / want.len().max(1);
    assert_matches(
        &got,
        &dims,
        &want,
        &mag,
        k,
        &format!("{} {eq} {shapes:?} {opts:?}", T::DTYPE),
    )?;
    Ok(())
}

fn all_forms<D: Device, T: Scalar>() -> TestResult {
    let d = EinsumOptions::default();
    let cy = EinsumOptions::conj_y();
    let cx = EinsumOptions { conj_x: true, ..d };
    let scaled = EinsumOptions {
        alpha: c64::new(2.0, -1.0),
        ..d
    };
    // ABACUS's forms
    case::<D, T>("ij->ji", "ij->ji", &[&[3, 4]], d)?;
    case::<D, T>("ij->j", "ij->j", &[&[5, 7]], d)?;
    case::<D, T>("ij->", "ij->", &[&[5, 7]], scaled)?;
    case::<D, T>("ii->i", "ii->i", &[&[4, 4]], d)?;
    case::<D, T>("i->ii", "i->ii", &[&[3]], scaled)?;
    case::<D, T>("i,i->", "i,i->", &[&[257], &[257]], d)?;
    case::<D, T>("i,i->", "i,i->", &[&[257], &[257]], cx)?;
    case::<D, T>("i,i", "i,i->", &[&[3], &[3]], cy)?;
    case::<D, T>("ij,j->i", "ij,j->i", &[&[300, 17], &[17]], d)?;
    case::<D, T>("ij,j->i", "ij,j->i", &[&[300, 17], &[17]], cy)?;
    case::<D, T>("ij,i->j", "ij,i->j", &[&[9, 17], &[9]], cx)?;
    case::<D, T>("ij,jk->ik", "ij,jk->ik", &[&[7, 5], &[5, 3]], d)?;
    case::<D, T>("ij,jk->ik", "ij,jk->ik", &[&[7, 5], &[5, 3]], cy)?;
    case::<D, T>(
        "ij,jk->ik",
        "ij,jk->ik",
        &[&[7, 5], &[5, 3]],
        EinsumOptions {
            conj_x: true,
            conj_y: true,
            ..scaled
        },
    )?;
    case::<D, T>("ij,kj->ik", "ij,kj->ik", &[&[4, 9], &[6, 9]], cy)?;
    case::<D, T>("ij,jk->ki", "ij,jk->ki", &[&[7, 5], &[5, 3]], scaled)?;
    case::<D, T>("i,j->ij", "i,j->ij", &[&[3], &[4]], d)?;
    case::<D, T>("bij,bjk->bik", "bij,bjk->bik", &[&[3, 4, 5], &[3, 5, 2]], d)?;
    case::<D, T>(
        "...ij,...jk->...ik",
        "bij,bjk->bik",
        &[&[3, 4, 5], &[3, 5, 2]],
        cy,
    )?;
    case::<D, T>("ij,jk", "ij,jk->ik", &[&[2, 0], &[0, 3]], scaled)?; // empty sum
    case::<D, T>("ij,jk->ik", "ij,jk->ik", &[&[0, 4], &[4, 3]], d)?;
    // Forms ABACUS gets wrong
    case::<D, T>(
        "abij,abjk->abik",
        "abij,abjk->abik",
        &[&[2, 3, 4, 5], &[2, 3, 5, 2]],
        d,
    )?;
    case::<D, T>(
        "abij,abjk->abik",
        "abij,abjk->abik",
        &[&[2, 3, 4, 5], &[2, 3, 5, 2]],
        cy,
    )?;
    case::<D, T>(
        "...ij,jk->...ik",
        "abij,jk->abik",
        &[&[2, 3, 4, 5], &[5, 6]],
        d,
    )?;
    case::<D, T>(
        "...ij,...jk->...ik",
        "abij,bjk->abik",
        &[&[2, 1, 4, 5], &[3, 5, 2]],
        scaled,
    )?;
    case::<D, T>("bij,jk->bki", "bij,jk->bki", &[&[2, 4, 5], &[5, 3]], cx)?;
    case::<D, T>("iij,j->i", "iij,j->i", &[&[3, 3, 4], &[4]], d)?;
    case::<D, T>("ijk,kj->i", "ijk,kj->i", &[&[3, 4, 5], &[5, 4]], cy)?;
    case::<D, T>("ij,jk->", "ij,jk->", &[&[3, 4], &[4, 2]], d)?;
    case::<D, T>("ij,ab->ijab", "ij,ab->ijab", &[&[2, 3], &[3, 2]], d)?;
    // Three and more operands, contracted left to right (floating types: a product of
    // three random int32 sums wraps, which the c64 reference does not model).
    if T::DTYPE.is_integer() {
        return Ok(());
    }
    case::<D, T>(
        "ij,jk,kl->il",
        "ij,jk,kl->il",
        &[&[3, 4], &[4, 5], &[5, 2]],
        d,
    )?;
    case::<D, T>(
        "ij,jk,kl",
        "ij,jk,kl->il",
        &[&[3, 4], &[4, 5], &[5, 2]],
        scaled,
    )?;
    case::<D, T>("i,i,i->", "i,i,i->", &[&[257], &[257], &[257]], cx)?;
    case::<D, T>(
        "ij,kl,jl->ik",
        "ij,kl,jl->ik",
        &[&[3, 4], &[2, 5], &[4, 5]],
        cy,
    )?;
    case::<D, T>(
        "ij,jk,kl,lm->mi",
        "ij,jk,kl,lm->mi",
        &[&[2, 3], &[3, 4], &[4, 1], &[1, 5]],
        d,
    )?;
    case::<D, T>("ii,ij,j->", "ii,ij,j->", &[&[4, 4], &[4, 3], &[3]], d)?;
    case::<D, T>(
        "...ij,...jk,...kl->...il",
        "bij,bjk,bkl->bil",
        &[&[2, 3, 4], &[2, 4, 5], &[2, 5, 3]],
        scaled,
    )?;
    case::<D, T>("ij,jk,k->i", "ij,jk,k->i", &[&[3, 0], &[0, 5], &[5]], d)?; // empty sum
    Ok(())
}

device_test!(einsum_matches_brute_force_for_every_form_and_dtype, D -> Result {
    all_forms::<D, f64>()?;
    all_forms::<D, c64>()?;
    all_forms::<D, f32>()?;
    all_forms::<D, c32>()?;
    all_forms::<D, i32>()?;
    Ok(())
});

device_test!(einsum_reads_transposed_views_and_fortran_maps_without_changing_the_result, D -> Result {
    let mut r = rng(3);
    for conj in [false, true] {
        let (a, av) = random_on::<D, c64>(&mut r, &[6, 4]);
        let (b, bv) = random_on::<D, c64>(&mut r, &[6, 5]);
        // aᵀ (a view) times b: "ij,jk->ik" with i=4, j=6, k=5.
        let at = a.t()?;
        let opts = EinsumOptions {
            conj_x: conj,
            conj_y: conj,
            ..Default::default()
        };
        let got = einsum("ij,jk->ik", &[&at, &b], &opts)?;
        let (dims, want, mag) = brute(
            "ji,jk->ik",
            &[(av.clone(), vec![6, 4]), (bv.clone(), vec![6, 5])],
            [conj, conj],
        );
        assert_matches(&got, &dims, &want, &mag, 6, "c64 transposed view")?;
        // The same product from a column-major map over a Fortran array.
        let mut fortran = vec![c64::new(0.0, 0.0); 24];
        for i in 0..6 {
            for j in 0..4 {
                fortran[i + j * 6] = av[i * 4 + j];
            }
        }
        let (_owner, map) = fortran_map::<D, c64>(&fortran, &[6, 4]);
        let got = einsum("ji,jk->ik", &[&map, &b], &opts)?;
        assert_matches(&got, &dims, &want, &mag, 6, "c64 fortran map")?;
    }
    Ok(())
});

device_test!(einsum_into_a_fortran_map_applies_alpha_and_beta_in_the_callers_memory, D -> Result {
    let mut r = rng(4);
    let (a, av) = random_on::<D, c64>(&mut r, &[5, 3]);
    let (b, bv) = random_on::<D, c64>(&mut r, &[4, 3]);
    // The caller's column-major 5 × 4 array, with old contents.
    let old: Vec<c64> = random_vec::<c64>(&mut r, 20);
    for (alpha, beta) in [
        (c64::new(-1.0, 0.0), c64::new(1.0, 0.0)),
        (c64::new(0.5, 2.0), c64::new(0.0, 0.0)),
    ] {
        let (caller, mut map) = fortran_map::<D, c64>(&old, &[5, 4]);
        let opts = EinsumOptions {
            conj_y: true,
            alpha,
            beta,
            ..Default::default()
        };
        einsum_into("ij,kj->ik", &[&a, &b], &opts, &mut map)?;
        drop(map);
        let caller = caller.to_vec::<c64>()?;
        let (_, want, mag) = brute(
            "ij,kj->ik",
            &[(av.clone(), vec![5, 3]), (bv.clone(), vec![4, 3])],
            [false, true],
        );
        for i in 0..5 {
            for k in 0..4 {
                let w = alpha * want[i * 4 + k] + beta * old[i + k * 5];
                let got = caller[i + k * 5];
                assert!(
                    (got - w).norm() < 1e-12 * (mag[i * 4 + k] + w.norm()).max(1.0),
                    "({i},{k}): {got} vs {w}"
                );
            }
        }
    }
    // beta = 0 ignores NaN in the old contents; a repeated output label keeps the
    // off-diagonal at beta · out.
    let x = on::<D>(Tensor::from_slice(&[1.0f64, 2.0, 3.0], &[3])?);
    let mut out = Tensor::full(f64::NAN, D::TYPE, &[3, 3])?;
    einsum_into("i->ii", &[&x], &EinsumOptions::default(), &mut out)?;
    assert_eq!(
        out.to_vec::<f64>()?,
        [1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 3.0]
    );
    let mut out = Tensor::ones(DataType::Double, D::TYPE, &[3, 3])?;
    let opts = EinsumOptions {
        beta: c64::new(2.0, 0.0),
        ..Default::default()
    };
    einsum_into("i->ii", &[&x], &opts, &mut out)?;
    assert_eq!(
        out.to_vec::<f64>()?,
        [3.0, 2.0, 2.0, 2.0, 4.0, 2.0, 2.0, 2.0, 5.0]
    );
    Ok(())
});

device_test!(einsum_into_with_three_operands_applies_alpha_and_beta_once, D -> Result {
    let mut r = rng(17);
    let (a, va) = random_on::<D, c64>(&mut r, &[3, 4]);
    let (b, vb) = random_on::<D, c64>(&mut r, &[4, 5]);
    let (c, vc) = random_on::<D, c64>(&mut r, &[5, 2]);
    let (mut out, vo) = random_on::<D, c64>(&mut r, &[3, 2]);
    let opts = EinsumOptions {
        conj_x: true,
        alpha: c64::new(0.5, 1.0),
        beta: c64::new(-2.0, 0.25),
        ..Default::default()
    };
    einsum_into("ij,jk,kl->il", &[&a, &b, &c], &opts, &mut out)?;
    let got = out.to_vec::<c64>()?;
    for i in 0..3 {
        for l in 0..2 {
            let mut s = c64::new(0.0, 0.0);
            for j in 0..4 {
                for k in 0..5 {
                    s += va[i * 4 + j].conj() * vb[j * 5 + k] * vc[k * 2 + l];
                }
            }
            let want = opts.alpha * s + opts.beta * vo[i * 2 + l];
            assert!((got[i * 2 + l] - want).norm() < 1e-12, "({i}, {l}): {} vs {want}", got[i * 2 + l]);
        }
    }
    // The output is also an operand (the last one, and the first): each chain reads it
    // before the result is written.
    let (sq, vs) = random_on::<D, c64>(&mut r, &[3, 3]);
    let (a3, va3) = random_on::<D, c64>(&mut r, &[3, 3]);
    let reference = |first: &[c64], mid: &[c64], last: &[c64]| -> Vec<c64> {
        let mut o = vec![c64::new(0.0, 0.0); 9];
        for i in 0..3 {
            for l in 0..3 {
                for j in 0..3 {
                    for k in 0..3 {
                        o[i * 3 + l] += first[i * 3 + j] * mid[j * 3 + k] * last[k * 3 + l];
                    }
                }
            }
        }
        o
    };
    let mut out = sq.share();
    einsum_into("ij,jk,kl->il", &[&a3, &a3, &sq], &Default::default(), &mut out)?;
    let got = out.to_vec::<c64>()?;
    for (g, w) in got.iter().zip(reference(&va3, &va3, &vs)) {
        assert!((g - w).norm() < 1e-12, "out aliasing the last operand: {g} vs {w}");
    }
    let (sq, vs) = random_on::<D, c64>(&mut r, &[3, 3]);
    let mut out = sq.share();
    einsum_into("ij,jk,kl->il", &[&sq, &a3, &a3], &Default::default(), &mut out)?;
    let got = out.to_vec::<c64>()?;
    for (g, w) in got.iter().zip(reference(&vs, &va3, &va3)) {
        assert!((g - w).norm() < 1e-12, "out aliasing the first operand: {g} vs {w}");
    }
    // The operand count must match the equation's terms.
    let e = einsum("ij,jk->ik", &[&a, &b, &c], &Default::default()).unwrap_err();
    assert!(matches!(e, Error::EinsumParse { .. }) && e.to_string().contains("3 operand term(s)"), "{e}");
    let e = einsum("ij,jk,kl->iq", &[&a, &b, &c], &Default::default()).unwrap_err();
    assert!(e.to_string().contains("'q' does not"), "{e}");
    Ok(())
});

device_test!(einsum_errors_name_the_problem, D -> Result {
    let a = Tensor::zeros(DataType::Double, D::TYPE, &[2, 3])?;
    let b = Tensor::zeros(DataType::Double, D::TYPE, &[4, 5])?;
    let e = einsum("ij,j?->i", &[&a, &b], &Default::default()).unwrap_err();
    assert!(matches!(e, Error::EinsumParse { position: 4, .. }), "{e}");
    let e = einsum("ij,jk->ik", &[&a, &b], &Default::default()).unwrap_err();
    assert!(e.to_string().contains("label 'j' to have one size"), "{e}");
    let e = einsum("ijk->i", &[&a], &Default::default()).unwrap_err();
    assert!(matches!(e, Error::ShapeMismatch { .. }), "{e}");
    let c = Tensor::zeros(DataType::Float, D::TYPE, &[3])?;
    // Mixed data types promote (f64 with f32 is f64) instead of failing.
    let r = einsum("ij,j->i", &[&a, &c], &Default::default())?;
    assert_eq!((r.dtype(), r.dims()), (DataType::Double, &[2][..]));
    let mut wrong = Tensor::zeros(DataType::Double, D::TYPE, &[3, 3])?;
    let e = einsum_into("ij->ji", &[&a], &Default::default(), &mut wrong).unwrap_err();
    assert!(e.to_string().contains("[3, 2]"), "{e}");
    Ok(())
});

#[test]
fn zero_element_work_allocates_nothing_per_entry_of_huge_axes() -> ctensor_aten::Result<()> {
    use ctensor_aten::{matmul, DataType, DeviceType, Tensor};
    for big in [1usize << 40, 1 << 62] {
        let a = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[big, 0])?;
        let c = einsum("bi,bj->bij", &[&a, &a], &EinsumOptions::default())?;
        assert_eq!(c.dims(), &[big, 0, 0]);
        if big == 1 << 62 {
            // A [2^62] f64 output is 2^65 bytes: an overflow error, never an abort. (A
            // [2^40] one, 8 TiB, is left out: where the kernel overcommits memory the
            // allocation succeeds and filling it is legitimate work.)
            let c = einsum("bi,bi->b", &[&a, &a], &EinsumOptions::default());
            assert!(c.is_err(), "{c:?}");
        }
        let x = Tensor::zeros(DataType::ComplexDouble, DeviceType::Cpu, &[big, 0, 3])?;
        let y = Tensor::zeros(DataType::ComplexDouble, DeviceType::Cpu, &[big, 3, 0])?;
        assert_eq!(matmul(&x, &y)?.dims(), &[big, 0, 0]);
    }
    Ok(())
}
