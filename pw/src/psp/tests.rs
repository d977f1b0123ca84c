//! Parsing both formats, the completed h matrices, and the transforms against numerical
//! integrals of the real-space forms.

use super::*;

fn si_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/14si.4.hgh")
}

#[test]
fn silicon_hgh_parses_with_the_completed_h_matrix() -> Result<()> {
    let p = Hgh::from_file(&si_path())?;
    assert_eq!(p.zion, 4.0);
    assert_eq!((p.rloc, p.c), (0.44, [-7.336103, 0.0, 0.0, 0.0]));
    assert_eq!(p.channels.len(), 2);
    let s = &p.channels[0];
    assert_eq!((s.l, s.r, s.h.len()), (0, 0.422738, 2));
    assert!((s.h[0][1] - -1.2618939).abs() < 1e-7 && s.h[1][0] == s.h[0][1]);
    assert_eq!((p.channels[1].l, p.channels[1].h.len()), (1, 1));
    assert_eq!(p.projector_count(), 5);
    // α (ABINIT's epsatm) of Si: −4.976525 Ha·bohr³.
    assert!((p.alpha() - -4.976525).abs() < 1e-6, "{}", p.alpha());
    Ok(())
}

#[test]
fn the_gth_format_gives_the_same_pseudopotential() -> Result<()> {
    let gth = "Si GTH-PADE-q4\n    2    2\n     0.44000000    1    -7.33610300\n    2\n     0.42273800    2     5.90692800    -1.26189391\n                                        3.25819600\n     0.48427800    1     2.72701300\n";
    let g = Hgh::parse_gth(Path::new("si.gth"), gth)?;
    let a = Hgh::from_file(&si_path())?;
    assert_eq!((g.zion, g.rloc, g.c), (a.zion, a.rloc, a.c));
    for (x, y) in g.channels.iter().zip(&a.channels) {
        assert_eq!((x.l, x.r), (y.l, y.r));
        for i in 0..x.h.len() {
            for j in 0..x.h.len() {
                assert!((x.h[i][j] - y.h[i][j]).abs() < 1e-7);
            }
        }
    }
    Ok(())
}

/// `p_i^l(r)` of HGH 1998 (normalised), for the numerical transforms.
fn p_real(l: usize, i: usize, r_l: f64, r: f64) -> f64 {
    let e = l as f64 + (4.0 * (i as f64 + 1.0) - 1.0) / 2.0;
    2f64.sqrt() * r.powi((l + 2 * i) as i32) * (-r * r / (2.0 * r_l * r_l)).exp()
        / (r_l.powf(e) * libm::tgamma(e).sqrt())
}

fn bessel(l: usize, x: f64) -> f64 {
    if x < 1e-8 {
        return if l == 0 { 1.0 } else { 0.0 };
    }
    let (s, c) = x.sin_cos();
    match l {
        0 => s / x,
        1 => s / (x * x) - c / x,
        2 => (3.0 / (x * x) - 1.0) * s / x - 3.0 * c / (x * x),
        _ => (15.0 / x.powi(3) - 6.0 / x) * s / x - (15.0 / (x * x) - 1.0) * c / x,
    }
}

#[test]
fn projector_transforms_match_numerical_hankel_transforms() {
    for (l, i) in [
        (0, 0),
        (0, 1),
        (0, 2),
        (1, 0),
        (1, 1),
        (1, 2),
        (2, 0),
        (2, 1),
        (3, 0),
    ] {
        let r_l = 0.47;
        // Normalisation ∫ p² r² dr = 1.
        let h = 1e-4;
        let norm: f64 = (1..100_000)
            .map(|k| (k as f64 * h).powi(2) * p_real(l, i, r_l, k as f64 * h).powi(2) * h)
            .sum();
        assert!((norm - 1.0).abs() < 1e-8, "l={l} i={i} {norm}");
        for q in [0.0, 0.3, 1.7, 4.2, 9.0] {
            let num: f64 = 4.0
                * PI
                * (1..100_000)
                    .map(|k| {
                        let r = k as f64 * h;
                        p_real(l, i, r_l, r) * bessel(l, q * r) * r * r * h
                    })
                    .sum::<f64>();
            let ana = projector_form_factor(l, i, r_l, q);
            assert!(
                (num - ana).abs() < 1e-8 * ana.abs().max(1.0),
                "l={l} i={i} q={q}: {num} vs {ana}"
            );
        }
    }
}

#[test]
fn the_local_transform_and_alpha_match_numerical_integrals() -> Result<()> {
    let mut p = Hgh::from_file(&si_path())?;
    p.c = [-7.3, 1.1, -0.4, 0.05];
    // v(q) + 4πZ e^{-x/2}/q² is the transform of the short-range part
    // −(Z/r)[erf(r/(√2 r_loc)) − 1]... checked through its radial integral.
    let h = 1e-4;
    let vshort = |r: f64| {
        let t = r / p.rloc;
        (-0.5 * t * t).exp() * (p.c[0] + p.c[1] * t * t + p.c[2] * t.powi(4) + p.c[3] * t.powi(6))
    };
    for q in [0.2, 1.0, 3.5] {
        let num: f64 = 4.0
            * PI
            * (1..100_000)
                .map(|k| {
                    let r = k as f64 * h;
                    vshort(r) * bessel(0, q * r) * r * r * h
                })
                .sum::<f64>();
        let x: f64 = (q * p.rloc).powi(2);
        let ana = p.local_form_factor(q) + 4.0 * PI * p.zion / (q * q) * (-x / 2.0).exp();
        assert!((num - ana).abs() < 1e-8, "q={q}: {num} vs {ana}");
    }
    // α = 4π ∫ r² (v_loc + Z/r) dr.
    let num: f64 = 4.0
        * PI
        * (1..200_000)
            .map(|k| {
                let r = k as f64 * h;
                (r * r * vshort(r) + p.zion * r * libm::erfc(r / (2f64.sqrt() * p.rloc))) * h
            })
            .sum::<f64>();
    assert!((num - p.alpha()).abs() < 1e-7, "{num} vs {}", p.alpha());
    Ok(())
}

/// The local form factor's derivative against central differences of the form factor,
/// for silicon, gallium and arsenic (every `c_i` term present in one of them) from small
/// to large q.
#[test]
fn the_local_form_factor_derivative_is_its_slope() -> Result<()> {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    for f in [
        "14si.4.hgh",
        "31ga.3.hgh",
        "33as.5.hgh",
        "8o.6.hgh",
        "1h.1.hgh",
    ] {
        let psp = Hgh::from_file(&data.join(f))?;
        for q in [0.05, 0.3, 1.0, 2.7, 6.0, 11.0] {
            let h = 1e-5 * q;
            let fd = (psp.local_form_factor(q + h) - psp.local_form_factor(q - h)) / (2.0 * h);
            let d = psp.local_form_factor_derivative(q);
            assert!(
                (d - fd).abs() < 1e-7 * d.abs().max(1.0),
                "{f} q = {q}: {d} vs {fd}"
            );
        }
    }
    Ok(())
}

#[test]
fn malformed_files_name_the_line_and_the_problem() {
    let good = std::fs::read_to_string(si_path()).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    let cases: Vec<(String, &str)> = vec![
        (lines[..3].join("\n"), "line 4"),
        (
            good.replace("3 1   1 0 2001 0", "4 1   1 0 2001 0"),
            "pspcod 3",
        ),
        (good.replace("0.440000", "abc"), "line 4"),
        (good.replace("0.440000", "NaN"), "non-finite"),
        (good.replace("0.422738", "-0.42"), "radius"),
        (String::new(), "empty"),
        ("Si\n  x y\n".into(), "electron counts"),
    ];
    for (text, want) in cases {
        let path =
            std::env::temp_dir().join(format!("ctensor_pw_bad_{}.hgh", want.replace(' ', "_")));
        std::fs::write(&path, &text).unwrap();
        let e = Hgh::from_file(&path).unwrap_err().to_string();
        assert!(e.contains(want), "{want}: {e}");
        std::fs::remove_file(&path).ok();
    }
    let e = Hgh::from_file(Path::new("/nonexistent/si.hgh"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent/si.hgh"), "{e}");
}
