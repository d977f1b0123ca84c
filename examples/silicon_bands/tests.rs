//! The demo's checks: the physics against the published numbers, the solvers against
//! each other, and the command line's refusals.

use super::*;
use crate::model::{potential, MATERIALS, RY_EV};
use ctensor::{eigvalsh, DataType, DeviceType, EigBackend, EighRange, Tensor};

/// `--solver davidson` (FFT operator, never forming H) gives the dense solver's bands
/// to 1e-8 Ry for all 14 materials, with fixed bases of 169 and 531 plane waves and
/// the k-dependent one, and to 2e-5 Ry in c32 (whose dense bands carry ~2e-6 Ry).
#[test]
fn davidson_solver_gives_the_dense_bands() {
    let cases: [(&[&str], f64); 4] = [
        (&["--npw", "169"], 1e-8),
        (&["--npw", "531"], 1e-8),
        (&["--kcut", "21"], 1e-8),
        (&["--npw", "169", "--dtype", "c32"], 2e-5),
    ];
    for mat in &MATERIALS {
        for (basis, tol) in cases {
            let mut common = vec!["--material", mat.name, "--points", "2", "--path", "L-G-X"];
            common.extend_from_slice(basis);
            let dense = run(&args(&common)).unwrap();
            common.extend_from_slice(&["--solver", "davidson"]);
            let fft = run(&args(&common)).unwrap();
            assert_eq!(dense.samples.len(), fft.samples.len());
            for (d, f) in dense.samples.iter().zip(&fft.samples) {
                for (a, b) in d.2.iter().zip(&f.2) {
                    assert!(
                        (a - b).abs() / RY_EV <= tol,
                        "{} {basis:?} at {:?}: dense {a} eV, davidson {b} eV",
                        mat.name,
                        d.1
                    );
                }
            }
        }
    }
}

/// The potential is made real exactly for the diamond-structure materials (no
/// antisymmetric form factors), as checked on the built V(G − G'), and the real H gives
/// the complex H's lowest levels; the zinc-blende ones stay complex.
#[test]
fn centrosymmetric_crystals_get_a_real_hamiltonian_with_the_same_levels() {
    let k = [0.3, 0.2, 0.1];
    let gs = g_vectors(cutoff_for(169).unwrap(), [0.0; 3]);
    let flat: Vec<f64> = gs.iter().flatten().copied().collect();
    let g = Tensor::from_slice(&flat, &[gs.len(), 3]).unwrap();
    let mut diamonds = 0;
    for mat in &MATERIALS {
        let kin = model::kinetic_prefactor(mat);
        let v = potential(mat, &g).unwrap();
        let r = model::real_if_real(&v).unwrap();
        let diamond = mat.va.iter().all(|&x| x == 0.0);
        assert_eq!(!r.dtype().is_complex(), diamond, "{}", mat.name);
        if !diamond {
            continue;
        }
        diamonds += 1;
        let hc = model::hamiltonian(kin, &g, &v, k).unwrap();
        let hr = model::hamiltonian(kin, &g, &r, k).unwrap();
        assert_eq!(hr.dtype(), DataType::Double);
        let levels = |h: &Tensor| {
            eigvalsh(h, EighRange::Index(0, 8), EigBackend::LapackEvd)
                .unwrap()
                .to_vec::<f64>()
                .unwrap()
        };
        for (c, r) in levels(&hc).iter().zip(levels(&hr)) {
            assert!(
                (c - r).abs() < 1e-10,
                "{}: complex {c} vs real {r} Ry",
                mat.name
            );
        }
    }
    assert_eq!(
        diamonds, 3,
        "Si, Ge and α-Sn are the diamond-structure materials"
    );
}

/// `--ecut` is the kinetic-energy form of `--gcut`; the Davidson solver takes cutoffs
/// the dense one refuses.
#[test]
fn energy_cutoffs_and_the_davidson_limit() {
    let kin = model::kinetic_prefactor(&MATERIALS[0]);
    let by_energy = run(&args(&[
        "--ecut",
        &format!("{}", 27.0 * kin),
        "--points",
        "1",
    ]))
    .unwrap();
    assert_eq!(by_energy.npw, 169);
    let e = run(&args(&["--gcut", "700", "--points", "1"]))
        .err()
        .unwrap();
    assert!(e.0.contains("(0, 600]"), "{}", e.0);
    // Past the cutoff check, the next one (`--points 0`) stops the run before work.
    let e = run(&args(&[
        "--gcut", "700", "--solver", "davidson", "--points", "0",
    ]))
    .err()
    .unwrap();
    assert!(
        e.0.contains("--points 0"),
        "the Davidson solver took the dense limit: {}",
        e.0
    );
    assert!(run(&args(&["--ecut=-1"])).is_err());
}

/// The FFT operator equals the dense H on random blocks: every material, a k-point
/// off every symmetry, a basis of 169 and one of 531 plane waves, c64 and c32.
#[test]
fn fft_operator_equals_the_dense_hamiltonian() {
    use ctensor::matmul;
    let k = [0.3, 0.2, 0.1];
    for mat in &MATERIALS {
        for npw in [169, 531] {
            let gs = g_vectors(cutoff_for(npw).unwrap(), k);
            let flat: Vec<f64> = gs.iter().flatten().copied().collect();
            let g = Tensor::from_slice(&flat, &[gs.len(), 3]).unwrap();
            let kin = model::kinetic_prefactor(mat);
            let dense = model::hamiltonian(kin, &g, &potential(mat, &g).unwrap(), k).unwrap();
            for (dt, tol) in [
                (DataType::ComplexDouble, 1e-12),
                (DataType::ComplexFloat, 2e-5),
            ] {
                let op = planewave::PlaneWaveOperator::new(mat, &gs, k, kin, dt, DeviceType::Cpu)
                    .unwrap();
                let x = Tensor::randn(dt, DeviceType::Cpu, &[gs.len(), 5], 3).unwrap();
                let got = op.apply(&x).unwrap().cast(DataType::ComplexDouble).unwrap();
                let want = matmul(&dense, &x.cast(DataType::ComplexDouble).unwrap()).unwrap();
                let err = got.sub(&want).unwrap().norm().unwrap();
                let scale = want.norm().unwrap();
                assert!(
                    err <= tol * scale,
                    "{} npw {} {dt}: |HX - dense| = {err:e} of {scale:e}",
                    mat.name,
                    gs.len()
                );
            }
        }
    }
}

fn args(extra: &[&str]) -> Args {
    let mut v = vec!["silicon_bands"];
    v.extend_from_slice(extra);
    Args::try_parse_from(v).unwrap()
}

fn level(run: &Run, label: &str) -> f64 {
    run.table
        .iter()
        .flat_map(|(_, l)| l)
        .find(|l| l.label == label)
        .unwrap_or_else(|| panic!("{label} missing"))
        .e
}

/// Set in the child process of the test below.
const NO_FONT_CHILD: &str = "CTENSOR_DEMO_NO_FONT_CHILD";

/// The body run in a child whose fontconfig knows no font.
#[test]
fn child_runs_the_demo_without_fonts() {
    if std::env::var_os(NO_FONT_CHILD).is_none() {
        return;
    }
    let out = std::env::temp_dir().join(format!("ctensor-demo-nofont-{}", std::process::id()));
    let argv: Vec<String> = ["silicon_bands", "--points", "2", "--out"]
        .iter()
        .map(|s| s.to_string())
        .chain([out.display().to_string()])
        .collect();
    let (code, text) = main_with(&argv);
    let csv = std::fs::read_to_string(out.join("bands.csv"));
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("the plot was not drawn") && text.contains("k-points/s"),
        "{text}"
    );
    assert!(
        csv.is_ok_and(|c| c.lines().count() > 2),
        "the CSV is written"
    );
}

/// On a machine without fonts (a headless GPU machine had none) the bands are still
/// computed, written and reported; only the plot is skipped, with a warning.
#[test]
fn a_missing_font_skips_the_plot_but_not_the_results() {
    let dir = std::env::temp_dir().join(format!("ctensor-demo-fc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join("fonts.conf");
    std::fs::write(
        &conf,
        "<?xml version=\"1.0\"?>\n<fontconfig></fontconfig>\n",
    )
    .unwrap();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "tests::child_runs_the_demo_without_fonts",
            "--exact",
            "--nocapture",
        ])
        .env(NO_FONT_CHILD, "1")
        .env("FONTCONFIG_FILE", &conf)
        .status()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(status.success(), "the demo without fonts: {status}");
}

#[test]
fn silicon_matches_the_published_levels_and_gap() {
    let r = run(&args(&["--material", "Si", "--points", "20"])).unwrap();
    assert_eq!(r.npw, 169);
    for (from, to, pubv, tol) in published("Si").unwrap() {
        let ours = level(&r, to) - level(&r, from);
        assert!((ours - pubv).abs() <= tol, "{from}→{to}: {ours} vs {pubv}");
    }
    // The converged levels of this model, from the reference file.
    for (label, want) in [
        ("Γ1", -12.613),
        ("Γ15", 3.424),
        ("Γ2′", 3.889),
        ("X1", -8.333),
        ("X4", -3.006),
        ("X1c", 0.949),
        ("L2′", -10.235),
        ("L1", -7.366),
        ("L3′", -1.253),
        ("L1c", 1.876),
        ("L3c", 3.982),
    ] {
        assert!(
            (level(&r, label) - want).abs() < 0.01,
            "{label}: {} vs {want}",
            level(&r, label)
        );
    }
    assert!(!r.gap.direct);
    assert!((r.gap.value - 0.82).abs() <= 0.01, "gap {}", r.gap.value);
    let (a, b, t) = &r.gap.cbm_where;
    assert_eq!((a.as_str(), b.as_str()), ("G", "X"));
    assert!((t - 0.85).abs() <= 0.02, "conduction minimum at {t} of Γ–X");
}

#[test]
fn alpha_tin_matches_its_published_values_and_shows_the_inverted_gamma_2prime() {
    let r = run(&args(&["--material", "Sn", "--points", "8"])).unwrap();
    for (from, to, pubv, tol) in published("Sn").unwrap() {
        if pubv.is_nan() {
            continue;
        }
        let ours = level(&r, to) - level(&r, from);
        assert!((ours - pubv).abs() <= tol, "{from}→{to}: {ours} vs {pubv}");
    }
    assert!(
        level(&r, "Γ2′") < level(&r, "Γ25′"),
        "Γ2′ lies below Γ25′ in α-Sn"
    );
}

#[test]
fn gaas_has_a_direct_gap_at_gamma_and_every_material_runs() {
    let r = run(&args(&["--material", "GaAs", "--points", "10"])).unwrap();
    assert!(
        r.gap.direct,
        "GaAs gap at {:?} / {:?}",
        r.gap.vbm_k, r.gap.cbm_k
    );
    assert!(r.gap.cbm_k.iter().all(|x| x.abs() < 1e-6));
    for m in &MATERIALS {
        let r = run(&args(&[
            "--material",
            m.name,
            "--points",
            "3",
            "--npw",
            "89",
        ]))
        .unwrap();
        assert!(r.gap.value.is_finite(), "{}", m.name);
    }
}

#[test]
fn c32_agrees_with_c64_and_partial_spectra_equal_the_full_one() {
    let a64 = args(&["--npw", "113"]);
    let a32 = args(&["--npw", "113", "--dtype", "c32"]);
    let (m64, m32) = (
        Model::new(&MATERIALS[0], &a64).unwrap(),
        Model::new(&MATERIALS[0], &a32).unwrap(),
    );
    for k in [[0.0, 0.0, 0.0], [0.3, 0.1, 0.0], [0.5, 0.5, 0.5]] {
        let (e64, e32) = (m64.levels(k, 8).unwrap(), m32.levels(k, 8).unwrap());
        for (x, y) in e64.iter().zip(&e32) {
            assert!((x - y).abs() < 2e-3, "c32 {y} vs c64 {x} eV");
        }
        let h = m64.hamiltonian(k).unwrap();
        let full = eigvalsh(&h, EighRange::All, EigBackend::Faer)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        for (p, f) in e64.iter().zip(&full) {
            assert!((p - f * RY_EV).abs() < 1e-9);
        }
    }
}

#[test]
fn mixed_precision_gives_the_double_precision_levels_for_every_material() {
    // `--precision mixed` (c32/f32 solve, c64/f64 refinement) against
    // `--precision double` on the same Hamiltonians, along a path through Γ, X, L, K and
    // a general point, for all 14 materials (diamond ones take the real path, the
    // zinc-blende ones the complex one), at 169 and 531 plane waves.
    for npw in ["169", "531"] {
        for m in MATERIALS.iter() {
            let mixed = Model::new(m, &args(&["--npw", npw, "--precision", "mixed"])).unwrap();
            let double = Model::new(m, &args(&["--npw", npw, "--precision", "double"])).unwrap();
            assert_eq!((mixed.eig, mixed.mixed_always), (EigBackend::Mixed, true));
            assert_eq!(double.eig, EigBackend::LapackEvr);
            // The default: mixed for complex H only.
            let auto = Model::new(m, &args(&["--npw", npw])).unwrap();
            assert_eq!((auto.eig, auto.mixed_always), (EigBackend::Mixed, false));
            let ks = [
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [0.5, 0.5, 0.5],
                [0.75, 0.75, 0.0],
                [0.31, 0.17, 0.05],
            ];
            let (em, ed) = (
                mixed.levels_many(&ks, 12).unwrap(),
                double.levels_many(&ks, 12).unwrap(),
            );
            for (k, (a, b)) in ks.iter().zip(em.iter().zip(&ed)) {
                for (x, y) in a.iter().zip(b) {
                    // Measured differences: below 1e-10 eV.
                    assert!(
                        (x - y).abs() < 1e-8,
                        "{} npw {npw} k {k:?}: mixed {x} vs double {y} eV",
                        m.name
                    );
                }
            }
        }
    }
}

#[test]
fn the_gpu_gives_the_host_levels() {
    if let Some(reason) = ctensor::base::gpu::unavailable_reason() {
        assert!(
            std::env::var_os("CTENSOR_REQUIRE_GPU").is_none(),
            "CTENSOR_REQUIRE_GPU is set but the GPU is unusable: {reason}"
        );
        println!("SKIP: the_gpu_gives_the_host_levels: {reason}");
        return;
    }
    // Si (a real H) and GaAs (complex, symmetry-adapted blocks at the first two points).
    for (mat, dtype) in [(0, "c64"), (0, "c32"), (4, "c64"), (4, "c32")] {
        let host = Model::new(&MATERIALS[mat], &args(&["--npw", "113", "--dtype", dtype])).unwrap();
        let gpu_args = args(&["--npw", "113", "--dtype", dtype, "--device", "gpu"]);
        let gpu = Model::new(&MATERIALS[mat], &gpu_args).unwrap();
        let tol = if dtype == "c64" { 1e-9 } else { 2e-3 };
        for k in [[0.0, 0.0, 0.0], [0.3, 0.1, 0.0], [0.5, 0.5, 0.5]] {
            let (h, g) = (host.levels(k, 8).unwrap(), gpu.levels(k, 8).unwrap());
            for (x, y) in h.iter().zip(&g) {
                assert!((x - y).abs() < tol, "{dtype}: GPU {y} vs host {x} eV");
            }
        }
    }
}

#[test]
fn bands_csv_holds_every_level_to_the_last_bit() {
    let dir = std::env::temp_dir().join(format!("ctensor-csv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let args = Args::parse_from(["silicon_bands", "--points", "3", "--path", "L-G-X"]);
    let r = run(&args).unwrap();
    let text = std::fs::read_to_string(write_csv(&r, &dir).unwrap()).unwrap();
    let rows: Vec<Vec<f64>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), r.samples.len());
    for (row, (x, k, e)) in rows.iter().zip(&r.samples) {
        let want: Vec<f64> = [*x, k[0], k[1], k[2]]
            .into_iter()
            .chain(e.iter().copied())
            .collect();
        assert_eq!(row.len(), want.len());
        for (a, b) in row.iter().zip(&want) {
            assert_eq!(a.to_bits(), b.to_bits(), "{a} vs {b}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_options_give_one_line_and_status_2() {
    let argv = |v: &[&str]| -> Vec<String> {
        std::iter::once("silicon_bands")
            .chain(v.iter().copied())
            .map(String::from)
            .collect()
    };
    // Each bad option, and the word its message must contain (about the option given,
    // not a consequence of it).
    let mut bads: Vec<(&[&str], &str)> = vec![
        (&["--material", "Unobtainium"], "--material"),
        (&["--bands", "0"], "--bands"),
        (&["--npw", "51", "--bands", "60"], "--bands"),
        (&["--npw", "52"], "--npw"),
        (&["--path", "G-Q"], "Q"),
        (&["--dtype", "f16"], "--dtype"),
        (&["--precision", "half"], "--precision"),
        (&["--points", "nope"], "--points"),
        (&["--gcut", "nan"], "--gcut NaN: expected a cutoff"),
        (&["--gcut", "1e400"], "--gcut inf: expected a cutoff"),
        (&["--gcut=-1"], "--gcut -1: expected a cutoff"),
        (&["--gcut", "1e7"], "--gcut 10000000: expected a cutoff"),
        (&["--kcut", "nan"], "--kcut NaN: expected a cutoff"),
        (&["--kcut=-1"], "--kcut -1: expected a cutoff"),
        (&["--kcut", "3", "--bands", "9"], "plane waves at k"),
        (&["--threads", "100000"], "thread count"),
    ];
    if !ctensor::gpu_available() {
        bads.push((&["--device", "gpu"], "gpu")); // an unusable device is a usage error
    }
    for (bad, word) in bads {
        let (code, text) = main_with(&argv(bad));
        assert_eq!(code, 2, "{bad:?}: {text}");
        assert!(text.trim_end().lines().count() <= 3, "{bad:?}: {text}");
        assert!(text.contains(word), "{bad:?}: {text:?} lacks {word:?}");
    }
}

/// Under mpirun the demo gives one process's levels bit for bit: the k-points split over
/// 2 and 3 ranks write the same CSV bytes and the same table of levels; `--pools 1`
/// (each Hamiltonian solved by ELPA on the ranks' grid) agrees to 1e-9 eV; a
/// `--pools` that does not divide the ranks fails on every rank. (The ranks are this
/// test binary again, started by mpirun with the demo's arguments in the environment.)
#[cfg(feature = "mpi")]
#[test]
fn mpi_runs_give_the_one_process_levels() {
    const NAME: &str = "tests::mpi_runs_give_the_one_process_levels";
    const CHILD: &str = "CTENSOR_DEMO_MPI_ARGS";
    if let Ok(joined) = std::env::var(CHILD) {
        // One rank of a run started below.
        let argv: Vec<String> = joined.split('|').map(String::from).collect();
        let universe = ctensor::mpi::initialize().expect("MPI_Init");
        let (code, text) = {
            let world = universe.world().expect("world");
            main_on(&argv, Some(&world))
        };
        drop(universe);
        use std::io::Write as _;
        print!("{text}");
        let _ = std::io::stdout().flush();
        std::process::exit(code);
    }
    let dir = std::env::temp_dir().join(format!("ctensor-demo-mpi-{}", std::process::id()));
    let base = [
        "silicon_bands",
        "--threads",
        "1",
        "--points",
        "3",
        "--path",
        "L-G-X,K-G",
    ];
    let demo_args = |out: &str, extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = base.iter().map(|s| s.to_string()).collect();
        a.extend(extra.iter().map(|s| s.to_string()));
        a.extend(["--out".to_string(), dir.join(out).display().to_string()]);
        a
    };
    let under_mpi = |np: usize, argv: &[String]| -> (bool, String) {
        let mut cmd = ctensor::mpi::launch::mpirun(np);
        cmd.args(["-x", &format!("{CHILD}={}", argv.join("|"))]);
        cmd.arg(std::env::current_exe().expect("test binary"));
        cmd.args([NAME, "--exact", "--nocapture", "--test-threads=1"]);
        ctensor::mpi::launch::run_limited(cmd, &format!("the demo on {np} ranks"))
    };
    let table = |text: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.starts_with("Levels at"))
            .take_while(|l| !l.starts_with("Wrote"))
            // The other ranks' test harness says this once each, at any point.
            .filter(|l| l.trim() != "running 1 test")
            .map(String::from)
            .collect()
    };
    let (code, one) = main_with(&demo_args("one", &[]));
    assert_eq!(code, 0, "{one}");
    let one_csv = std::fs::read(dir.join("one/bands.csv")).unwrap();
    for np in [2, 3] {
        let out = format!("split{np}");
        let (ok, text) = under_mpi(np, &demo_args(&out, &[]));
        assert!(ok, "{np} ranks failed:\n{text}");
        assert!(
            text.contains(&format!("{np} MPI ranks in {np} pool(s)")),
            "{text}"
        );
        let csv = std::fs::read(dir.join(&out).join("bands.csv")).unwrap();
        assert!(
            csv == one_csv,
            "{np} ranks: bands.csv differs from one process's"
        );
        assert_eq!(table(&text), table(&one), "{np} ranks: the table differs");
    }
    let (ok, text) = under_mpi(2, &demo_args("pooled", &["--pools", "1"]));
    assert!(
        ok && text.contains("2 MPI ranks in 1 pool(s)"),
        "--pools 1:\n{text}"
    );
    let values = |bytes: &[u8]| -> Vec<f64> {
        String::from_utf8_lossy(bytes)
            .lines()
            .skip(1)
            .flat_map(|l| {
                l.split(',')
                    .skip(4)
                    .map(|v| v.parse::<f64>().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let pooled = values(&std::fs::read(dir.join("pooled/bands.csv")).unwrap());
    let reference = values(&one_csv);
    assert_eq!(pooled.len(), reference.len());
    for (p, r) in pooled.iter().zip(&reference) {
        assert!((p - r).abs() <= 1e-9, "--pools 1 (ELPA): {p} vs {r} eV");
    }
    // Every rank returns the error (split_pools checks the size alone, and the MPI
    // crate's tests check that on every rank); here mpirun ends the job when the first
    // rank exits, so the others may be stopped before they print theirs.
    let (ok, text) = under_mpi(3, &demo_args("bad", &["--pools", "2"]));
    assert!(
        !ok && text.contains("divides the 3 ranks"),
        "--pools 2 on 3 ranks:\n{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The symmetry search finds exactly the crystal's operations: for a zinc-blende crystal
/// the unitary ones are T_d (the signed permutations with an even number of sign
/// changes, the identity left out) and the antiunitary ones −T_d (time reversal times
/// T_d); a diamond crystal (real V, inversion) has all 48 both ways.
#[test]
fn the_symmetry_search_finds_the_space_group() {
    let minus = |r: &[[i32; 3]; 3]| r.iter().flatten().filter(|&&x| x < 0).count();
    for m in MATERIALS.iter() {
        let found = symmetry::symmetries(m);
        let zincblende = m.va.iter().any(|&v| v != 0.0);
        let unitary: Vec<_> = found.iter().filter(|s| !s.antiunitary).collect();
        let anti: Vec<_> = found.iter().filter(|s| s.antiunitary).collect();
        if zincblende {
            assert_eq!((unitary.len(), anti.len()), (23, 24), "{}", m.name);
            assert!(unitary.iter().all(|s| minus(&s.r) % 2 == 0), "{}", m.name);
            assert!(anti.iter().all(|s| minus(&s.r) % 2 == 1), "{}", m.name);
        } else {
            assert_eq!((unitary.len(), anti.len()), (47, 48), "{}", m.name);
        }
    }
}

/// With `--symmetry on` (the default) the zinc-blende H(k) is solved in a
/// symmetry-adapted basis wherever an operation fixes k: one real block of the full order
/// on the kz = 0 plane (Γ–X, K–Γ: time reversal with the 2-fold rotation about z), two
/// complex blocks (each of at least a quarter of the order) on the mirror planes (L–Γ on x = y, X–U on
/// y = z), the unreduced H at a general point. Every level equals the unreduced one's to
/// 1e-9 eV (measured: below 2e-13 in double), for the 11 zinc-blende materials, in double and mixed
/// precision, with fixed bases of 169 and 531 plane waves and the k-dependent basis.
#[test]
fn symmetry_adapted_blocks_give_the_unreduced_levels() {
    let ks: [([f64; 3], Option<bool>); 8] = [
        ([0.0, 0.0, 0.0], Some(true)),
        ([0.4, 0.0, 0.0], Some(true)),
        ([0.6, 0.6, 0.0], Some(true)),
        ([0.31, 0.17, 0.0], Some(true)),
        ([0.3, 0.3, 0.3], Some(false)),
        ([1.0, 0.15, 0.15], Some(false)),
        ([0.31, 0.31, 0.12], Some(false)),
        ([0.31, 0.17, 0.05], None),
    ];
    for basis in [&["--npw", "169"][..], &["--npw", "531"], &["--kcut", "21"]] {
        for m in MATERIALS.iter().filter(|m| m.va.iter().any(|&v| v != 0.0)) {
            for precision in ["double", "mixed"] {
                let mut on = basis.to_vec();
                on.extend(["--precision", precision]);
                let mut off = on.clone();
                off.extend(["--symmetry", "off"]);
                let (on, off) = (
                    Model::new(m, &args(&on)).unwrap(),
                    Model::new(m, &args(&off)).unwrap(),
                );
                for &(k, expect) in &ks {
                    let blocks = on.adapted_blocks(k).unwrap();
                    let n = on.npw_at(k);
                    match (&blocks, expect) {
                        (None, None) => {}
                        (Some(found), Some(e)) => {
                            let b = &found.blocks;
                            assert_eq!(found.antiunitary, e, "{} at {k:?}", m.name);
                            let sizes: Vec<usize> = b.iter().map(|b| b.rep.len()).collect();
                            assert_eq!(sizes.iter().sum::<usize>(), n, "{} at {k:?}", m.name);
                            if e {
                                assert_eq!(b[0].v.dtype(), DataType::Double);
                            } else {
                                assert_eq!(sizes.len(), 2);
                                // The plane waves on the mirror plane all fall in one block.
                                assert!(sizes.iter().all(|&s| 4 * s >= n), "{sizes:?} at {k:?}");
                            }
                        }
                        _ => panic!("{} at {k:?}: expected {expect:?}", m.name),
                    }
                    assert!(off.adapted_blocks(k).unwrap().is_none());
                    let (a, b) = (on.levels(k, 12).unwrap(), off.levels(k, 12).unwrap());
                    assert_eq!(a.len(), 12);
                    for (x, y) in a.iter().zip(&b) {
                        assert!(
                            (x - y).abs() < 1e-9,
                            "{} {basis:?} {precision} at {k:?}: adapted {x} vs unreduced {y} eV",
                            m.name
                        );
                    }
                }
            }
        }
    }
}

/// More bands than a block holds: every block is solved whole and the lowest of their
/// union kept, equal to the unreduced H's lowest, up to all of them.
#[test]
fn symmetry_adapted_blocks_give_all_levels_when_a_block_is_smaller_than_the_bands() {
    let gaas = &MATERIALS[4];
    let on = Model::new(gaas, &args(&["--npw", "51", "--precision", "double"])).unwrap();
    let off = Model::new(
        gaas,
        &args(&["--npw", "51", "--precision", "double", "--symmetry", "off"]),
    )
    .unwrap();
    for k in [[0.3, 0.3, 0.3], [0.4, 0.0, 0.0]] {
        let sizes: Vec<usize> = on
            .adapted_blocks(k)
            .unwrap()
            .unwrap()
            .blocks
            .iter()
            .map(|b| b.rep.len())
            .collect();
        for nb in [sizes[0] + 1, 45, 51].into_iter().filter(|&nb| nb <= 51) {
            let (a, b) = (on.levels(k, nb).unwrap(), off.levels(k, nb).unwrap());
            assert_eq!((a.len(), b.len()), (nb, nb));
            for (x, y) in a.iter().zip(&b) {
                assert!(
                    (x - y).abs() < 1e-9,
                    "{k:?} {nb} bands ({sizes:?}): {x} vs {y} eV"
                );
            }
        }
    }
}

/// A wrong operation is caught, not used: a phase vector w off by a quarter turn makes
/// the "real" block complex, and `reduce` refuses it with a message; an operation that
/// does not map the basis onto itself (a k-point it does not fix in the k-dependent
/// basis) gives no basis at all.
#[test]
fn a_wrong_symmetry_is_refused() {
    let gaas = &MATERIALS[4];
    let gs = g_vectors(cutoff_for(169).unwrap(), [0.0; 3]);
    let flat: Vec<f64> = gs.iter().flatten().copied().collect();
    let g = Tensor::from_slice(&flat, &[gs.len(), 3]).unwrap();
    let v = potential(gaas, &g).unwrap();
    let good = symmetry::symmetries(gaas)
        .into_iter()
        .find(|s| s.antiunitary && s.r == [[1, 0, 0], [0, 1, 0], [0, 0, -1]])
        .expect("time reversal with the 2-fold rotation about z");
    let basis = symmetry::adapted_basis(&good, &gs).unwrap();
    assert!(symmetry::reduce(&v, &basis, true).is_ok());
    let mut bad = good.clone();
    bad.w[0] += 0.25;
    let err = match symmetry::adapted_basis(&bad, &gs).map(|b| symmetry::reduce(&v, &b, true)) {
        Some(Err(Fail(why))) => why,
        _ => panic!("a wrong phase vector was accepted"),
    };
    assert!(err.contains("not real"), "{err}");
    // Off the fixed point the k-dependent basis is not invariant.
    let k = [0.3, 0.2, 0.1];
    assert!(!symmetry::fixes(&good, k));
    assert!(symmetry::adapted_basis(&good, &g_vectors(21.0, k)).is_none());
}
