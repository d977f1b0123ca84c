//! The k-points split over 1, 2 and 3 MPI ranks give the same numbers as one process
//! (the `mpi` feature; `make test` runs it: `cargo test -p ctensor-pw --features mpi
//! --test mpi`). A bad input ends every rank at once with the same one-line error.
#![cfg(feature = "mpi")]

use ctensor::mpi::launch::{mpirun, run_within};
use std::path::PathBuf;
use std::time::Duration;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn input(dir: &std::path::Path, ecut: f64) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let psp = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/14si.4.hgh");
    let v = serde_json::json!({
        "lattice_vectors_bohr": [[0.0, 5.13, 5.13], [5.13, 0.0, 5.13], [5.13, 5.13, 0.0]],
        "atoms": [{"species": "Si", "reduced": [0.0, 0.0, 0.0]}, {"species": "Si", "reduced": [0.27, 0.25, 0.24]}],
        "pseudopotentials": {"Si": psp},
        "ecut_ha": ecut,
        "nband": 8,
        "kmesh": {"ngkpt": [4, 4, 4], "shifts": [[0.5, 0.5, 0.5], [0.5, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 0.5]]}
    });
    let path = dir.join(format!("si_{ecut}.json"));
    std::fs::write(&path, v.to_string())?;
    Ok(path)
}

fn run(np: usize, input: &std::path::Path, out: &std::path::Path) -> (bool, String) {
    let mut cmd = mpirun(np);
    cmd.arg(env!("CARGO_BIN_EXE_ctensor-pw"))
        .arg("run")
        .arg(input)
        .arg("--output")
        .arg(out)
        .args(["--threads", "1", "--quiet"]);
    run_within(
        cmd,
        &format!("ctensor-pw on {np} ranks"),
        Duration::from_secs(120),
    )
}

#[test]
fn one_two_and_three_ranks_give_the_same_energies_bands_forces_and_stress() -> TestResult {
    let dir = std::env::temp_dir().join(format!("ctensor-pw-mpi-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let inp = input(&dir, 8.0)?;
    let mut results = Vec::new();
    for np in [1, 2, 3] {
        let out = dir.join(format!("r{np}.json"));
        let (ok, text) = run(np, &inp, &out);
        assert!(ok, "{np} ranks: {text}");
        // Only rank 0 prints the summary.
        assert_eq!(text.matches("total  ").count(), 1, "{np} ranks: {text}");
        let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out)?)?;
        results.push(r);
    }
    let e0 = results[0]["total_energy_ha"].as_f64().unwrap();
    for r in &results[1..] {
        let e = r["total_energy_ha"].as_f64().unwrap();
        assert!((e - e0).abs() < 1e-10, "{e} vs {e0}");
        // The nonlocal forces are summed over the ranks' k-points (the second atom is
        // off its site, so they are not zero).
        let forces = |r: &serde_json::Value| -> Vec<f64> {
            r["forces_ha_per_bohr"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|v| v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()))
                .collect()
        };
        let f0 = forces(&results[0]);
        assert!(f0.iter().any(|x| x.abs() > 1e-3), "{f0:?}");
        for (a, b) in f0.iter().zip(forces(r)) {
            assert!((a - b).abs() < 1e-9, "force {b} vs {a}");
        }
        // So is the bands' part of the stress.
        let stress = |r: &serde_json::Value| -> Vec<f64> {
            serde_json::from_value::<Vec<Vec<f64>>>(r["stress_ha_per_bohr3"].clone())
                .unwrap()
                .concat()
        };
        for (a, b) in stress(&results[0]).iter().zip(stress(r)) {
            assert!((a - b).abs() < 1e-11, "stress {b} vs {a}");
        }
        for (k0, k) in results[0]["kpoints"]
            .as_array()
            .unwrap()
            .iter()
            .zip(r["kpoints"].as_array().unwrap())
        {
            assert_eq!(k0["npw"], k["npw"]);
            assert_eq!(k0["kred"], k["kred"]);
            for (a, b) in k0["eigenvalues_ha"]
                .as_array()
                .unwrap()
                .iter()
                .zip(k["eigenvalues_ha"].as_array().unwrap())
            {
                assert!((a.as_f64().unwrap() - b.as_f64().unwrap()).abs() < 1e-9);
            }
        }
    }
    Ok(())
}

#[test]
fn a_bad_input_ends_every_rank_with_one_error() -> TestResult {
    let dir = std::env::temp_dir().join(format!("ctensor-pw-mpi-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let inp = input(&dir, -1.0)?;
    let (ok, text) = run(3, &inp, &dir.join("r.json"));
    assert!(!ok, "{text}");
    assert!(
        text.contains("ecut_ha") && !text.contains("TIMED OUT") && !text.contains("panicked"),
        "{text}"
    );
    Ok(())
}
