//! The sphere transform against plain DFT sums (an independent reference), on odd,
//! degenerate and realistic boxes, in f64 and f32, for 0, 1 and many bands.

use super::*;
use rand::{Rng, SeedableRng};

type C = Complex<f64>;

fn rng(seed: u64) -> rand::rngs::StdRng {
    rand::rngs::StdRng::seed_from_u64(seed)
}

/// `Σ_k c_k e^{+2πi m_k·r/n}` at grid point `r` for coefficients at flat indices `idx`.
fn dft_at(n: [usize; 3], idx: &[usize], c: &[C], r: usize) -> C {
    let (r0, r1, r2) = (r / (n[1] * n[2]), (r / n[2]) % n[1], r % n[2]);
    let mut s = C::new(0.0, 0.0);
    for (k, &i) in idx.iter().enumerate() {
        let (m0, m1, m2) = (i / (n[1] * n[2]), (i / n[2]) % n[1], i % n[2]);
        let ph = 2.0
            * std::f64::consts::PI
            * ((m0 * r0) as f64 / n[0] as f64
                + (m1 * r1) as f64 / n[1] as f64
                + (m2 * r2) as f64 / n[2] as f64);
        s += c[k] * C::from_polar(1.0, ph);
    }
    s
}

/// `(1/N) Σ_r g_r e^{−2πi m·r/n}` at flat index `i`.
fn dft_back(n: [usize; 3], g: &[C], i: usize) -> C {
    let all: Vec<usize> = (0..g.len()).collect();
    // The same sum with the roles of m and r exchanged, conjugated.
    let conj: Vec<C> = g.iter().map(|x| x.conj()).collect();
    dft_at(n, &all, &conj, i).conj() / g.len() as f64
}

/// The backends to test: rustfft, and FFTW where it loads (else a SKIP line says why).
/// The plans are made with `with_backend`, so no process-wide choice changes.
fn backends() -> Vec<HostFft> {
    match fftw::available() {
        Ok(()) => vec![HostFft::RustFft, HostFft::Fftw],
        Err(e) => {
            println!("SKIP: the FFTW passes: {e}");
            vec![HostFft::RustFft]
        }
    }
}

fn random_c(r: &mut rand::rngs::StdRng, len: usize) -> Vec<C> {
    (0..len)
        .map(|_| C::new(r.gen_range(-1.0..1.0), r.gen_range(-1.0..1.0)))
        .collect()
}

/// `0..total` in a random order.
fn shuffled(total: usize, r: &mut rand::rngs::StdRng) -> Vec<usize> {
    let mut all: Vec<usize> = (0..total).collect();
    for i in (1..total).rev() {
        all.swap(i, r.gen_range(0..=i));
    }
    all
}

/// The largest distance of `points` random values of the `nb` band-major boxes `grid`
/// from the plain sums of the coefficients `c` (`[nb][idx.len()]`).
fn worst_at_random_points(
    n: [usize; 3],
    idx: &[usize],
    c: &[C],
    grid: impl Fn(usize) -> C,
    nb: usize,
    points: usize,
    r: &mut rand::rngs::StdRng,
) -> f64 {
    let total = n[0] * n[1] * n[2];
    (0..points)
        .map(|_| {
            let (b, p) = (r.gen_range(0..nb), r.gen_range(0..total));
            let want = dft_at(n, idx, &c[b * idx.len()..(b + 1) * idx.len()], p);
            (grid(b * total + p) - want).norm()
        })
        .fold(0.0, f64::max)
}

fn subsets(n: [usize; 3], r: &mut rand::rngs::StdRng) -> Vec<Vec<usize>> {
    let total = n[0] * n[1] * n[2];
    let shuffled = shuffled(total, r);
    vec![
        vec![],
        vec![total - 1],
        shuffled[..total.div_ceil(3)].to_vec(),
        shuffled.clone(),
    ]
}

#[test]
fn every_operation_matches_plain_dft_sums_on_small_boxes() -> Result<()> {
    let mut r = rng(1);
    for (n, backend) in [[1, 1, 1], [5, 6, 7], [1, 4, 9], [8, 3, 1], [6, 6, 6]]
        .into_iter()
        .flat_map(|n| backends().into_iter().map(move |b| (n, b)))
    {
        let total = n[0] * n[1] * n[2];
        for idx in subsets(n, &mut r) {
            let plan = SpherePlan::<f64>::with_backend(n, &idx, backend)?;
            assert_eq!(plan.backend(), backend);
            for nb in [0, 1, 3, 9] {
                let c = random_c(&mut r, nb * idx.len());
                let mut grid = vec![C::new(0.0, 0.0); nb * total];
                plan.to_grid(nb, &c, &mut grid)?;
                for b in 0..nb {
                    for p in 0..total {
                        let want = dft_at(n, &idx, &c[b * idx.len()..(b + 1) * idx.len()], p);
                        assert!(
                            (grid[b * total + p] - want).norm() < 1e-12,
                            "{n:?} nb={nb} b={b} p={p}"
                        );
                    }
                }
                // from_grid of an arbitrary grid against the sum, and the round trip.
                let g = random_c(&mut r, nb * total);
                let mut back = vec![C::new(7.0, 7.0); nb * idx.len()];
                plan.from_grid(nb, &g, 1.0 / total as f64, &mut back)?;
                for b in 0..nb {
                    for (k, &i) in idx.iter().enumerate() {
                        let want = dft_back(n, &g[b * total..(b + 1) * total], i);
                        assert!((back[b * idx.len() + k] - want).norm() < 1e-12);
                    }
                }
                let mut round = vec![C::new(0.0, 0.0); nb * idx.len()];
                plan.from_grid(nb, &grid, 1.0 / total as f64, &mut round)?;
                for (a, b) in round.iter().zip(&c) {
                    assert!((a - b).norm() < 1e-12);
                }
                // The potential and the density against the same sums.
                let v: Vec<f64> = (0..total).map(|_| r.gen_range(-2.0..2.0)).collect();
                let mut hv = vec![C::new(0.0, 0.0); nb * idx.len()];
                plan.apply_potential(nb, &v, &c, &mut hv)?;
                let mut rho = vec![0.5; total];
                let w: Vec<f64> = (0..nb).map(|b| 0.3 + b as f64).collect();
                plan.accumulate_density(nb, &c, &w, &mut rho)?;
                for b in 0..nb {
                    let vu: Vec<C> = (0..total).map(|p| grid[b * total + p] * v[p]).collect();
                    for (k, &i) in idx.iter().enumerate() {
                        assert!((hv[b * idx.len() + k] - dft_back(n, &vu, i)).norm() < 1e-12);
                    }
                }
                for p in 0..total {
                    let want = 0.5
                        + (0..nb)
                            .map(|b| w[b] * grid[b * total + p].norm_sqr())
                            .sum::<f64>();
                    assert!(
                        (rho[p] - want).abs() < 1e-12 * want.abs().max(1.0),
                        "{} vs {want}",
                        rho[p]
                    );
                }
            }
        }
    }
    Ok(())
}

/// The G-sphere of radius `g` (in index units) of an `n³` box, in a shuffled order.
fn sphere(n: usize, g: f64, r: &mut rand::rngs::StdRng) -> Vec<usize> {
    let mut idx = Vec::new();
    let w = |m: i64| m.rem_euclid(n as i64) as usize;
    let h = n as i64 / 2;
    for a in -h..h {
        for b in -h..h {
            for c in -h..h {
                if ((a * a + b * b + c * c) as f64) <= g * g {
                    idx.push((w(a) * n + w(b)) * n + w(c));
                }
            }
        }
    }
    for i in (1..idx.len()).rev() {
        idx.swap(i, r.gen_range(0..=i));
    }
    idx
}

#[test]
fn a_plane_wave_sphere_in_a_36_cube_matches_the_sums_and_round_trips() -> Result<()> {
    for backend in backends() {
        sphere_in_a_cube(36, backend)?;
    }
    // An odd box: the x-lines of an FFTW pass start at every alignment.
    for backend in backends() {
        sphere_in_a_cube(27, backend)?;
    }
    Ok(())
}

fn sphere_in_a_cube(n: usize, backend: HostFft) -> Result<()> {
    let mut r = rng(2);
    let idx = sphere(n, n as f64 * 8.5 / 36.0, &mut r);
    assert!(idx.len() > 800);
    let plan = SpherePlan::<f64>::with_backend([n; 3], &idx, backend)?;
    assert!(plan.work_fraction() < 0.75, "{}", plan.work_fraction());
    let nb = 5;
    let total = n * n * n;
    let c = random_c(&mut r, nb * idx.len());
    let mut grid = vec![C::new(0.0, 0.0); nb * total];
    plan.to_grid(nb, &c, &mut grid)?;
    for _ in 0..40 {
        let (b, p) = (r.gen_range(0..nb), r.gen_range(0..total));
        let want = dft_at([n; 3], &idx, &c[b * idx.len()..(b + 1) * idx.len()], p);
        assert!((grid[b * total + p] - want).norm() < 1e-10);
    }
    let mut back = vec![C::new(0.0, 0.0); nb * idx.len()];
    plan.from_grid(nb, &grid, 1.0 / total as f64, &mut back)?;
    for (a, b) in back.iter().zip(&c) {
        assert!((a - b).norm() < 1e-12);
    }
    Ok(())
}

#[test]
fn single_precision_round_trips_to_its_rounding() -> Result<()> {
    // 24³, and 25 × 24 × 23, whose odd column length puts the f32 columns (8 bytes each
    // element) at both FFTW alignment classes.
    for (n, backend) in [[24; 3], [25, 24, 23]]
        .into_iter()
        .flat_map(|n| backends().into_iter().map(move |b| (n, b)))
    {
        let mut r = rng(3);
        let idx: Vec<usize> = sphere(24, 5.5, &mut r)
            .into_iter()
            .map(|i| (i / 576 * n[1] + i / 24 % 24) * n[2] + i % 24 % n[2])
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let plan = SpherePlan::<f32>::with_backend(n, &idx, backend)?;
        let total = n[0] * n[1] * n[2];
        let c: Vec<Complex<f32>> = (0..3 * idx.len())
            .map(|_| Complex::new(r.gen_range(-1.0..1.0), r.gen_range(-1.0..1.0)))
            .collect();
        let mut grid = vec![Complex::new(0.0f32, 0.0); 3 * total];
        plan.to_grid(3, &c, &mut grid)?;
        // Against the f64 sums at some points.
        let c64: Vec<C> = c.iter().map(|x| C::new(x.re as f64, x.im as f64)).collect();
        let at = |i: usize| C::new(grid[i].re as f64, grid[i].im as f64);
        let worst = worst_at_random_points(n, &idx, &c64, at, 3, 20, &mut r);
        assert!(worst < 1e-3, "{backend:?}: {worst:e}");
        let mut back = vec![Complex::new(0.0f32, 0.0); c.len()];
        plan.from_grid(3, &grid, 1.0 / total as f32, &mut back)?;
        for (a, b) in back.iter().zip(&c) {
            assert!((a - b).norm() < 1e-5, "{backend:?} {n:?}");
        }
    }
    Ok(())
}

#[test]
fn bad_plans_and_buffers_are_refused() -> Result<()> {
    assert!(SpherePlan::<f64>::new([0, 4, 4], &[]).is_err());
    assert!(SpherePlan::<f64>::new([usize::MAX, 2, 2], &[]).is_err());
    // Huge boxes are refused before anything of their size is allocated or planned.
    for n in [
        [1 << 40, 1, 1],
        [1 << 20, 1 << 20, 1],
        [1, 1 << 16, 1 << 16],
    ] {
        let e = SpherePlan::<f64>::new(n, &[0, 1])
            .err()
            .expect("a huge box");
        assert!(e.to_string().contains("at most"), "{e}");
    }
    // The largest allowed box with an empty sphere is fine.
    assert_eq!(
        SpherePlan::<f32>::new([1 << 11, 1 << 10, 1 << 10], &[])?.npw(),
        0
    );
    let e = SpherePlan::<f64>::new([2, 2, 2], &[8]).err().unwrap();
    assert!(e.to_string().contains("0..8"), "{e}");
    let e = SpherePlan::<f64>::new([2, 2, 2], &[3, 1, 3]).err().unwrap();
    assert!(
        e.to_string()
            .contains("grid index 3 twice (at positions 0 and 2)"),
        "{e}"
    );
    let plan = SpherePlan::<f64>::new([2, 2, 2], &[0, 5]).unwrap();
    let mut g = vec![C::new(0.0, 0.0); 8];
    assert!(plan.to_grid(1, &[C::new(1.0, 0.0)], &mut g).is_err());
    assert!(plan.to_grid(2, &[C::new(1.0, 0.0); 4], &mut g).is_err());
    let mut out = vec![C::new(0.0, 0.0); 2];
    assert!(plan
        .apply_potential(1, &[1.0; 7], &[C::new(0.0, 0.0); 2], &mut out)
        .is_err());
    let e = plan
        .apply_local(
            1,
            &[1.0; 8],
            Some(&[1.0; 3]),
            &[C::new(0.0, 0.0); 2],
            &mut out,
        )
        .err()
        .unwrap();
    assert!(e.to_string().contains("a diagonal of 2 values"), "{e}");
    // The diagonal term alone (zero potential): out = d ∘ c, band by band.
    let c = [
        C::new(1.0, 2.0),
        C::new(-3.0, 0.5),
        C::new(0.25, 0.0),
        C::new(0.0, -1.0),
    ];
    let mut out2 = vec![C::new(9.0, 9.0); 4];
    plan.apply_local(2, &[0.0; 8], Some(&[2.0, -0.5]), &c, &mut out2)?;
    let d = [2.0, -0.5, 2.0, -0.5];
    for k in 0..4 {
        assert_eq!(out2[k], c[k] * d[k], "element {k}");
    }
    let mut rho = vec![0.0; 8];
    assert!(plan
        .accumulate_density(1, &[C::new(0.0, 0.0); 2], &[1.0, 2.0], &mut rho)
        .is_err());
    Ok(())
}

/// The FFTW passes really run (the rustfft fallback is for an alignment class a box on a
/// 64-byte boundary never has): in both precisions every element offset of such a box
/// finds its plan, and every scratch box starts on the boundary.
#[test]
fn fftw_passes_cover_every_alignment_of_the_box() -> Result<()> {
    if let Err(e) = fftw::available() {
        println!("SKIP: {e}");
        return Ok(());
    }
    fn check<F: FftNum + Default>() -> Result<()> {
        let n = [3, 5, 7];
        let passes = FftwPasses::new::<F>(n)?;
        let plan = SpherePlan::<F>::with_backend(n, &[0, 8, 100], HostFft::Fftw)?;
        let s = plan.take_scratch();
        let size = std::mem::size_of::<Complex<F>>();
        assert!((s.grid[s.off..].as_ptr() as usize).is_multiple_of(64));
        let mut grid = s.grid.clone();
        let off = (0..64 / size)
            .find(|k| (grid.as_ptr() as usize + k * size).is_multiple_of(64))
            .expect("a 64-byte boundary");
        let total = n[0] * n[1] * n[2];
        for k in 0..64 / size {
            // SAFETY: a column of n[2] elements from off + k lies inside `grid`
            // (total + 64/size elements).
            assert!(unsafe {
                passes.run(FORWARD, COLUMN, grid[off + k..][..total - k].as_mut_ptr())
            });
        }
        plan.give_back(s);
        Ok(())
    }
    check::<f64>()?;
    check::<f32>()
}

/// With either backend a NaN coefficient spreads over its own band's box and sphere and
/// no further: the worker's box is reused from band to band (FFTW's plans run in place on
/// it) and must not carry the NaN over.
#[test]
fn a_nan_stays_in_its_band_with_either_backend() -> Result<()> {
    let mut r = rng(5);
    let n = [6, 5, 7];
    let total = 210;
    let idx: Vec<usize> = (0..total).step_by(4).collect();
    for backend in backends() {
        let plan = SpherePlan::<f64>::with_backend(n, &idx, backend)?;
        let clean = random_c(&mut r, 3 * idx.len());
        let mut dirty = clean.clone();
        dirty[5] = C::new(f64::NAN, 0.0); // band 0
        let (mut a, mut b) = (vec![C::default(); 3 * total], vec![C::default(); 3 * total]);
        // With up to two workers (this machine's cores) band 0's box is band 1's.
        plan.to_grid(3, &clean, &mut a)?;
        plan.to_grid(3, &dirty, &mut b)?;
        let v: Vec<f64> = (0..total).map(|_| r.gen_range(-1.0..1.0)).collect();
        let (mut ha, mut hb) = (
            vec![C::default(); clean.len()],
            vec![C::default(); clean.len()],
        );
        plan.apply_potential(3, &v, &clean, &mut ha)?;
        plan.apply_potential(3, &v, &dirty, &mut hb)?;
        assert!(
            b[..total].iter().all(|x| x.re.is_nan() || x.im.is_nan()),
            "{backend:?}"
        );
        assert_eq!(a[total..], b[total..], "{backend:?}");
        assert!(hb[..idx.len()].iter().any(|x| x.re.is_nan()), "{backend:?}");
        assert_eq!(ha[idx.len()..], hb[idx.len()..], "{backend:?}");
    }
    Ok(())
}

/// The `_strided` forms read a block where it lies: a row-major `[npw, nb]` matrix, a
/// view of some columns of a wider one, and a layout with both strides above one give
/// exactly the band-major path's values (tested against the plain sums above), with
/// either backend; a slice too short for the layout is refused with the span it needs.
#[test]
fn strided_blocks_give_the_band_major_values() -> Result<()> {
    let mut r = rng(31);
    let n = [6, 5, 7];
    let total = n[0] * n[1] * n[2];
    let idx: Vec<usize> = (0..total).filter(|i| i % 3 != 1).collect();
    let npw = idx.len();
    for backend in backends() {
        let plan = SpherePlan::<f64>::with_backend(n, &idx, backend)?;
        let v: Vec<f64> = (0..total).map(|_| r.gen_range(-2.0..2.0)).collect();
        let diag: Vec<f64> = (0..npw).map(|_| r.gen_range(0.0..3.0)).collect();
        for nb in [0, 1, 4, 9] {
            let c = random_c(&mut r, nb * npw);
            let w: Vec<f64> = (0..nb).map(|b| 0.5 + b as f64).collect();
            let mut grid = vec![C::new(0.0, 0.0); nb * total];
            plan.to_grid(nb, &c, &mut grid)?;
            let mut hv = vec![C::new(0.0, 0.0); nb * npw];
            plan.apply_local(nb, &v, Some(&diag), &c, &mut hv)?;
            let mut rho = vec![0.0; total];
            plan.accumulate_density(nb, &c, &w, &mut rho)?;
            // (layout, offset of the first element) for: row-major, columns 2.. of a
            // row-major matrix of nb + 3 columns, and bands 2 apart with rows 2·nb + 1.
            let layouts = [
                (BandLayout { band: 1, pw: nb }, 0),
                (
                    BandLayout {
                        band: 1,
                        pw: nb + 3,
                    },
                    2,
                ),
                (
                    BandLayout {
                        band: 2,
                        pw: 2 * nb + 1,
                    },
                    1,
                ),
            ];
            for (layout, start) in layouts {
                let span = start + layout.span(nb, npw).unwrap_or(0);
                let mut block = vec![C::new(f64::NAN, f64::NAN); span];
                for b in 0..nb {
                    for k in 0..npw {
                        block[start + b * layout.band + k * layout.pw] = c[b * npw + k];
                    }
                }
                let data = &block[start.min(span)..];
                let what = format!("{backend:?} nb={nb} {layout:?}");
                let mut g = vec![C::new(0.0, 0.0); nb * total];
                plan.to_grid_strided(nb, data, layout, &mut g)?;
                assert_eq!(g, grid, "{what}: to_grid");
                let mut h = vec![C::new(0.0, 0.0); nb * npw];
                plan.apply_local_strided(nb, &v, Some(&diag), data, layout, &mut h)?;
                assert_eq!(h, hv, "{what}: apply_local");
                // Written where the same layout puts it, in a slice of sentinels: every
                // element the layout reaches holds the band-major value, the rest is
                // untouched.
                let sentinel = C::new(-7.25, 3.5);
                let mut o = vec![sentinel; span];
                let out = &mut o[start.min(span)..];
                plan.apply_local_strided_into(nb, &v, Some(&diag), data, layout, out, layout)?;
                let mut reached = vec![false; span];
                for b in 0..nb {
                    for k in 0..npw {
                        let at = start + b * layout.band + k * layout.pw;
                        reached[at] = true;
                        assert_eq!(o[at], hv[b * npw + k], "{what}: into, band {b} pw {k}");
                    }
                }
                for (at, x) in o.iter().enumerate() {
                    assert!(reached[at] || *x == sentinel, "{what}: into wrote {at}");
                }
                if nb > 1 {
                    // Too short, and two bands on one element: refused, nothing written.
                    let mut o = vec![sentinel; span];
                    let out = &mut o[start.min(span)..];
                    let len = out.len();
                    let e = plan
                        .apply_local_strided_into(
                            nb,
                            &v,
                            None,
                            data,
                            layout,
                            &mut out[..len - 1],
                            layout,
                        )
                        .unwrap_err();
                    assert!(e.to_string().contains("an output spanning"), "{what}: {e}");
                    let same = BandLayout { band: 0, pw: 1 };
                    let e = plan
                        .apply_local_strided_into(nb, &v, None, data, layout, out, same)
                        .unwrap_err();
                    assert!(
                        e.to_string().contains("puts two of them on one element"),
                        "{e}"
                    );
                    let overlapping = BandLayout {
                        band: 1,
                        pw: nb - 1,
                    };
                    assert!(plan
                        .apply_local_strided_into(nb, &v, None, data, layout, out, overlapping)
                        .is_err());
                    assert!(o.iter().all(|x| *x == sentinel), "{what}: a refusal wrote");
                }
                let mut p = vec![0.0; total];
                plan.accumulate_density_strided(nb, data, layout, &w, &mut p)?;
                assert_eq!(p, rho, "{what}: density");
                if nb > 0 {
                    let short = &data[..data.len() - 1];
                    let e = plan.to_grid_strided(nb, short, layout, &mut g).unwrap_err();
                    assert!(e.to_string().contains("spanning"), "{what}: {e}");
                }
            }
        }
        let huge = BandLayout {
            band: usize::MAX,
            pw: 1,
        };
        let e = plan.to_grid_strided(2, &[], huge, &mut []).unwrap_err();
        assert!(matches!(e, Error::Overflow { .. }), "{e}");
    }
    Ok(())
}

/// The layouts that give each (band, plane wave) an element of their own.
#[test]
fn one_to_one_layouts() {
    let l = |band, pw| BandLayout { band, pw };
    assert!(l(7, 1).is_one_to_one(3, 7));
    assert!(!l(6, 1).is_one_to_one(3, 7));
    assert!(l(1, 3).is_one_to_one(3, 7));
    assert!(!l(1, 2).is_one_to_one(3, 7));
    assert!(l(2, 7).is_one_to_one(3, 7));
    assert!(l(0, 1).is_one_to_one(1, 7));
    assert!(!l(0, 1).is_one_to_one(2, 7));
    assert!(l(5, 0).is_one_to_one(2, 1));
    assert!(!l(5, 0).is_one_to_one(2, 2));
    assert!(l(0, 0).is_one_to_one(1, 1) && l(0, 0).is_one_to_one(0, 9));
    assert!(!l(usize::MAX, 1 << 40).is_one_to_one(2, 1 << 30));
}

#[test]
fn gathered_blocks_are_16_to_32_lines_wide() {
    assert_eq!(block_width(0), BLOCK);
    assert_eq!(block_width(1), BLOCK);
    assert_eq!(block_width(32), 32);
    assert_eq!(block_width(36), 28);
    assert_eq!(block_width(64), 16);
    assert_eq!(block_width(1 << 20), 16);
}

#[test]
fn long_strided_lines_go_in_blocks_of_16_with_a_partial_one() -> Result<()> {
    // 3 × 70 × 21: the y-lines are 70 long (blocks of 16: four, then one of 5 over the
    // 21 side by side), the x-lines 3 long (blocks of 32 over 1470: the last of 30).
    let n = [3, 70, 21];
    let total = n[0] * n[1] * n[2];
    let mut r = rng(5);
    let idx = shuffled(total, &mut r)[..total / 3].to_vec();
    for backend in backends() {
        let plan = SpherePlan::<f64>::with_backend(n, &idx, backend)?;
        let c = random_c(&mut r, 2 * idx.len());
        let mut grid = vec![C::new(0.0, 0.0); 2 * total];
        plan.to_grid(2, &c, &mut grid)?;
        let worst = worst_at_random_points(n, &idx, &c, |i| grid[i], 2, 60, &mut r);
        assert!(worst < 1e-10, "{backend:?}: {worst:e}");
        let mut back = vec![C::new(0.0, 0.0); c.len()];
        plan.from_grid(2, &grid, 1.0 / total as f64, &mut back)?;
        for (a, b) in back.iter().zip(&c) {
            assert!((a - b).norm() < 1e-12, "{backend:?}");
        }
    }
    Ok(())
}

#[test]
fn gather_and_scatter_follow_the_index_formula_for_every_row_count() {
    // Row counts below, at and around the four-row tile, a few blocks from the middle of
    // a row, and a stride just above the width: every element of the block is read and
    // written once, and nothing outside it.
    use crate::fft::{gather_lines, scatter_lines};
    let mut r = rng(8);
    for count in [1, 2, 3, 4, 5, 7, 8, 9, 24, 70] {
        for (stride, first, width) in [(1, 0, 1), (5, 1, 4), (33, 0, 32), (40, 7, 16)] {
            let data = random_c(&mut r, count * stride);
            let mut lines = vec![C::new(f64::NAN, 0.0); count * width];
            // SAFETY: rows j < count span data[j·stride + first..][..width], inside `data`
            // (first + width ≤ stride).
            unsafe { gather_lines(data.as_ptr().add(first), count, stride, &mut lines) };
            for c in 0..width {
                for j in 0..count {
                    let want = data[j * stride + first + c];
                    assert_eq!(lines[c * count + j], want, "{count} {c} {j}");
                }
            }
            let mut out = vec![C::new(-1.0, 0.0); count * stride];
            // SAFETY: as above, in `out`, borrowed exclusively; the rows are disjoint.
            unsafe { scatter_lines(&lines, count, stride, out.as_mut_ptr().add(first)) };
            for (i, v) in out.iter().enumerate() {
                let inside = (first..first + width).contains(&(i % stride));
                let want = if inside { data[i] } else { C::new(-1.0, 0.0) };
                assert_eq!(*v, want, "{count} × {stride}, element {i}");
            }
        }
    }
}
