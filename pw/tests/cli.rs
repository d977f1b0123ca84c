//! The ctensor-pw program on good and bad input: one clear line and a non-zero exit for
//! every bad input, never a panic; a converged run writes a result with every field.

use std::path::{Path, PathBuf};
use std::process::Command;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn exe() -> &'static str {
    env!("CARGO_BIN_EXE_ctensor-pw")
}

fn psp() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/14si.4.hgh")
}

fn silicon() -> serde_json::Value {
    serde_json::json!({
        "lattice_vectors_bohr": [[0.0, 5.13, 5.13], [5.13, 0.0, 5.13], [5.13, 5.13, 0.0]],
        "atoms": [{"species": "Si", "reduced": [0.0, 0.0, 0.0]}, {"species": "Si", "reduced": [0.25, 0.25, 0.25]}],
        "pseudopotentials": {"Si": psp()},
        "ecut_ha": 6.0,
        "nband": 6,
        "kmesh": {"ngkpt": [1, 1, 1]}
    })
}

/// Runs the program on `input`; returns (exit code, stdout, stderr).
fn run(
    dir: &Path,
    name: &str,
    input: &str,
    extra: &[&str],
) -> Result<(i32, String, String), Box<dyn std::error::Error>> {
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, input)?;
    let out = Command::new(exe())
        .arg("run")
        .arg(&path)
        .arg("--output")
        .arg(dir.join(format!("{name}.result.json")))
        .args(["--threads", "1"])
        .args(extra)
        .output()?;
    Ok((
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout)?,
        String::from_utf8(out.stderr)?,
    ))
}

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ctensor-pw-cli-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_converged_run_prints_progress_and_writes_every_field() -> TestResult {
    let dir = tempdir("ok");
    let (code, out, err) = run(&dir, "si", &silicon().to_string(), &[])?;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("E_tot (Ha)") && out.contains("total"), "{out}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("si.result.json"))?)?;
    for key in [
        "total_energy_ha",
        "energy_components_ha",
        "kpoints",
        "fft_grid",
        "homo_ha",
        "scf_iterations",
        "wall_time_s",
    ] {
        assert!(r.get(key).is_some(), "{key} missing");
    }
    let k = &r["kpoints"][0];
    assert_eq!(k["eigenvalues_ha"].as_array().unwrap().len(), 6);
    assert!(k["npw"].as_u64().unwrap() > 100);
    assert_eq!(r["converged"], true);
    // Forces on the atoms of diamond silicon vanish by symmetry; printed and written. At
    // Γ alone nothing is symmetrised, so they are zero to the SCF's convergence.
    assert!(out.contains("forces (Ha/bohr, Cartesian)"), "{out}");
    let forces = r["forces_ha_per_bohr"].as_array().unwrap();
    assert_eq!(forces.len(), 2);
    for f in forces.iter().flat_map(|v| v.as_array().unwrap()) {
        assert!(f.as_f64().unwrap().abs() < 1e-8, "{f}");
    }
    // The stress of cubic silicon is diagonal with equal entries (pressure −tr σ/3 in
    // GPa).
    assert!(out.contains("stress (Ha/bohr³, Cartesian)"), "{out}");
    let s: Vec<Vec<f64>> = serde_json::from_value(r["stress_ha_per_bohr3"].clone())?;
    for (i, row) in s.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            let want = if i == j { s[0][0] } else { 0.0 };
            assert!((v - want).abs() < 1e-10, "{s:?}");
        }
    }
    let p = r["pressure_gpa"].as_f64().unwrap();
    assert!((p + s[0][0] * 29_421.015_697).abs() < 1e-6 * p.abs(), "{p}");
    // Asked not to, the run computes neither.
    let mut v = silicon();
    v["scf"] = serde_json::json!({"forces": false, "stress": false});
    let (code, out, err) = run(&dir, "noforces", &v.to_string(), &[])?;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!out.contains("forces (Ha/bohr"), "{out}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("noforces.result.json"))?)?;
    assert!(r.get("forces_ha_per_bohr").is_none() && r.get("stress_ha_per_bohr3").is_none());
    assert!(!out.contains("stress (Ha/bohr"), "{out}");
    Ok(())
}

#[test]
fn a_band_path_gives_the_scf_bands_at_its_mesh_points_and_a_plot() -> TestResult {
    let dir = tempdir("bands");
    let mut v = silicon();
    v["kmesh"] = serde_json::json!({"ngkpt": [2, 2, 2]});
    v["band_path"] = serde_json::json!({
        "points": [{"label": "L", "kred": [0.5, 0.5, 0.5]}, {"label": "G", "kred": [0, 0, 0]}, {"label": "X", "kred": [0.5, 0.0, 0.5]}],
        "per_segment": 3
    });
    let svg = dir.join("bands.svg");
    let (code, out, err) = run(
        &dir,
        "bands",
        &v.to_string(),
        &["--plot", svg.to_str().unwrap()],
    )?;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(std::fs::read_to_string(&svg)?.contains("<svg"));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("bands.result.json"))?)?;
    let bs = &r["band_structure"];
    assert_eq!(bs["x"].as_array().unwrap().len(), 7);
    // The path's Γ (index 3) and X (index 6) are points of the 2×2×2 mesh: the same bands
    // as the SCF's (X up to symmetry: the SCF has (½, 0, ½) itself or an equivalent).
    let scf_gamma = r["kpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kred"] == serde_json::json!([0.0, 0.0, 0.0]))
        .unwrap();
    for (a, b) in bs["eigenvalues_ha"][3]
        .as_array()
        .unwrap()
        .iter()
        .zip(scf_gamma["eigenvalues_ha"].as_array().unwrap())
    {
        assert!(
            (a.as_f64().unwrap() - b.as_f64().unwrap()).abs() < 1e-7,
            "{a} vs {b}"
        );
    }
    let x_bands: Vec<f64> = bs["eigenvalues_ha"][6]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_f64().unwrap())
        .collect();
    let found = r["kpoints"].as_array().unwrap().iter().any(|k| {
        k["eigenvalues_ha"]
            .as_array()
            .unwrap()
            .iter()
            .zip(&x_bands)
            .all(|(a, b)| (a.as_f64().unwrap() - b).abs() < 1e-7)
    });
    assert!(
        found,
        "X bands {x_bands:?} are not among the SCF's k-points"
    );
    // --plot without a band_path is refused before the SCF runs.
    let (code, _, err) = run(
        &dir,
        "noplot",
        &silicon().to_string(),
        &["--plot", svg.to_str().unwrap()],
    )?;
    assert!(code == 2 && err.contains("band_path"), "{err}");
    Ok(())
}

#[test]
fn every_bad_input_is_one_line_and_exit_status_2() -> TestResult {
    let dir = tempdir("bad");
    let good = silicon();
    let set = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = good.clone();
        f(&mut v);
        v.to_string()
    };
    let missing = dir.join("nope.hgh");
    let malformed = dir.join("bad.hgh");
    std::fs::write(
        &malformed,
        "title\n 14 4 010605\n 3 1 1 0 2001 0\n 0.44 oops\n",
    )?;
    let cases: Vec<(&str, String, &str)> = vec![
        ("json", "{ not json".into(), "line 1 column"),
        ("unknown", set(&|v| v["ecut"] = 3.into()), "unknown field"),
        (
            "psp_missing",
            set(&|v| v["pseudopotentials"]["Si"] = missing.to_str().unwrap().into()),
            "nope.hgh",
        ),
        (
            "psp_malformed",
            set(&|v| v["pseudopotentials"]["Si"] = malformed.to_str().unwrap().into()),
            "line 4",
        ),
        (
            "singular",
            set(&|v| {
                v["lattice_vectors_bohr"] = serde_json::json!([[1, 0, 0], [0, 1, 0], [1, 1, 0]])
            }),
            "singular",
        ),
        (
            "left",
            set(&|v| {
                v["lattice_vectors_bohr"] =
                    serde_json::json!([[5.13, 0.0, 5.13], [0.0, 5.13, 5.13], [5.13, 5.13, 0.0]])
            }),
            "left-handed",
        ),
        (
            "overlap",
            set(&|v| v["atoms"][1]["reduced"] = serde_json::json!([1.0, 0.0, 0.0])),
            "on top of each other",
        ),
        ("ecut0", set(&|v| v["ecut_ha"] = 0.into()), "ecut_ha"),
        (
            "ecut_neg",
            set(&|v| v["ecut_ha"] = (-3.0).into()),
            "ecut_ha",
        ),
        (
            "kmesh0",
            set(&|v| v["kmesh"]["ngkpt"] = serde_json::json!([0, 1, 1])),
            "ngkpt",
        ),
        ("bands", set(&|v| v["nband"] = 3.into()), "at least 4 bands"),
        (
            "species",
            set(&|v| v["atoms"][0]["species"] = "Ge".into()),
            "species",
        ),
        (
            "xc",
            set(&|v| v["xc"] = "hyb_gga_xc_b3lyp".into()),
            "LDA or GGA",
        ),
        (
            "xc name",
            set(&|v| v["xc"] = "gga_nonsense".into()),
            "gga_pbe",
        ),
        (
            "grid",
            set(&|v| v["fft_grid"] = serde_json::json!([8, 8, 8])),
            "fft_grid",
        ),
        (
            "dielectric_constant",
            set(&|v| v["scf"] = serde_json::json!({"dielectric_constant": 0.5})),
            "dielectric_constant >= 1",
        ),
        (
            "davidson_blocks",
            set(&|v| v["scf"] = serde_json::json!({"davidson_blocks": 1})),
            "davidson_blocks >= 2",
        ),
    ];
    for (name, input, want) in cases {
        let (code, _, err) = run(&dir, name, &input, &[])?;
        assert_eq!(code, 2, "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        assert!(
            err.contains(want) && err.starts_with("ctensor-pw: "),
            "{name}: {err}"
        );
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
    // NaN is not JSON: a NaN cutoff arrives as a string or null and is refused by the parser.
    let (code, _, err) = run(&dir, "nan", &good.to_string().replace("6.0", "NaN"), &[])?;
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = run(&dir, "dev", &good.to_string(), &["--device", "tpu"])?;
    assert!(code == 2 && err.contains("cpu or gpu"), "{err}");
    Ok(())
}

#[test]
fn an_scf_that_does_not_converge_says_so_writes_its_state_and_exits_3() -> TestResult {
    let dir = tempdir("nc");
    let mut v = silicon();
    v["scf"] = serde_json::json!({"max_steps": 2});
    let (code, _, err) = run(&dir, "short", &v.to_string(), &[])?;
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("did not converge in 2 steps"), "{err}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("short.result.json"))?)?;
    assert_eq!(r["converged"], false);
    assert_eq!(r["scf_iterations"], 2);
    // No forces or stress from a state that is not self-consistent.
    assert!(r.get("forces_ha_per_bohr").is_none() && r.get("stress_ha_per_bohr3").is_none());
    Ok(())
}
