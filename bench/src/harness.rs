//! Timing: every measurement warms both sides up, repeats the call until a sample takes
//! ≥ 20 ms, takes the median of 7 samples (5 for calls over 0.2 s), and interleaves the two sides
//! (alternating which goes first) so both see the same machine load; only ratios
//! within one run are meaningful.

use std::time::Instant;

use ctensor::base::{c64, Scalar};
use rand::rngs::StdRng;
use rand::Rng;

/// Samples per measurement.
const SAMPLES: usize = 7;
/// Minimum duration of one sample.
const SAMPLE_SECONDS: f64 = 0.02;

/// `n` values with parts uniform in [-1, 1).
pub fn random<T: Scalar>(rng: &mut StdRng, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| T::cast_from(c64::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))))
        .collect()
}

/// The target directory: `CARGO_TARGET_DIR` when set (as cargo itself resolves it,
/// relative to the working directory), else the workspace's `target/`.
pub fn target_dir() -> std::path::PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        Some(d) => std::path::PathBuf::from(d),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
    }
}

/// A random Hermitian `n × n` matrix (row-major): `(R + Rᴴ) / 2` with parts of `R`
/// uniform in [-1, 1).
pub fn hermitian(rng: &mut StdRng, n: usize) -> Vec<c64> {
    let r = random::<c64>(rng, n * n);
    let mut h = vec![c64::default(); n * n];
    for i in 0..n {
        for j in 0..n {
            h[i * n + j] = (r[i * n + j] + r[j * n + i].conj()) * 0.5;
        }
    }
    h
}

/// LAPACK's `zheevr` called directly (no ctensor in between): the lowest `k` eigenpairs
/// of the column-major `n × n` matrix `a` (its lower triangle, overwritten) into `w`
/// (`n` values) and `z` (`n × k`), with a workspace query first as a C caller would.
pub fn zheevr_lowest(a: &mut [c64], n: usize, k: usize, w: &mut [f64], z: &mut [c64]) {
    zheevr_lowest_job(b'V', a, n, k, w, z)
}

/// [`zheevr_lowest`] with the eigenvalues only (`jobz = 'N'`, `z` not referenced), as
/// SciPy's `eigh(eigvals_only=True, driver="evr")` calls it.
pub fn zheevr_lowest_values(a: &mut [c64], n: usize, k: usize, w: &mut [f64]) {
    zheevr_lowest_job(b'N', a, n, k, w, &mut [c64::default()])
}

fn zheevr_lowest_job(jobz: u8, a: &mut [c64], n: usize, k: usize, w: &mut [f64], z: &mut [c64]) {
    let ni = n as i32;
    let ldz = if jobz == b'V' { ni } else { 1 };
    let (mut m, mut info) = (0, 0);
    let mut isuppz = vec![0; 2 * n];
    let mut call =
        |work: &mut [c64], lw: i32, rwork: &mut [f64], lr: i32, iwork: &mut [i32], li: i32| {
            // SAFETY: `a` is n × n, `w` n values, `z` n × k (ldz = n); the workspaces have
            // the lengths passed (-1: a query, which reads only their first elements).
            unsafe {
                lapack::zheevr(
                    jobz,
                    b'I',
                    b'L',
                    ni,
                    a,
                    ni,
                    0.0,
                    0.0,
                    1,
                    k as i32,
                    0.0,
                    &mut m,
                    w,
                    z,
                    ldz,
                    &mut isuppz,
                    work,
                    lw,
                    rwork,
                    lr,
                    iwork,
                    li,
                    &mut info,
                )
            }
        };
    let (mut wq, mut rq, mut iq) = ([c64::default()], [0.0], [0]);
    call(&mut wq, -1, &mut rq, -1, &mut iq, -1);
    let (lw, lr, li) = (wq[0].re as i32, rq[0] as i32, iq[0]);
    let mut work = vec![c64::default(); lw as usize];
    let mut rwork = vec![0.0; lr as usize];
    let mut iwork = vec![0; li as usize];
    call(&mut work, lw, &mut rwork, lr, &mut iwork, li);
    assert_eq!((info, m), (0, k as i32));
}

/// Seconds per call of `a` and of `b`, medians over interleaved samples.
pub fn compare(a: impl FnMut(), b: impl FnMut()) -> (f64, f64) {
    compare_samples(SAMPLES, a, b)
}

/// [`compare`] with `samples` samples (calls over 0.2 s still take 5).
pub fn compare_samples(samples: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64) {
    // Calibrate the repetitions on `a`.
    let mut reps = 1usize;
    let per_call;
    loop {
        let t = Instant::now();
        for _ in 0..reps {
            a();
        }
        let s = t.elapsed().as_secs_f64();
        if s >= SAMPLE_SECONDS || reps >= 1 << 24 {
            per_call = s / reps as f64;
            break;
        }
        reps = (reps * 2).max((reps as f64 * SAMPLE_SECONDS / s.max(1e-9)) as usize / 2);
    }
    // Warm `b` up too (page faults of its first buffers, its thread pool), as the
    // calibration did for `a`.
    b();
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    let time = |f: &mut dyn FnMut()| {
        let t = Instant::now();
        for _ in 0..reps {
            f();
        }
        t.elapsed().as_secs_f64() / reps as f64
    };
    // Slow calls (eigensolvers, huge arrays) get fewer samples.
    let samples = if per_call > 0.2 { 5 } else { samples };
    for sample in 0..samples {
        // Alternate which side runs first, so neither always inherits a warm cache or
        // an idle core from the other.
        if sample % 2 == 0 {
            ta.push(time(&mut a));
            tb.push(time(&mut b));
        } else {
            tb.push(time(&mut b));
            ta.push(time(&mut a));
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|x, y| x.partial_cmp(y).unwrap());
        v[v.len() / 2]
    };
    (median(&mut ta), median(&mut tb))
}

/// Seconds per call of `f`: the median of `samples` calls after a warm-up call.
pub fn median_of(samples: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..samples)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(|a, b| a.total_cmp(b));
    t[t.len() / 2]
}

/// Runs the Python peer `bench/python/<script>` with the interpreter named by
/// `CTENSOR_BENCH_PYTHON` (`make bench` sets it from `scripts/py-env.sh`) on `data`,
/// written as little-endian complex128 to `target/bench-data/<file>`, with `args` after
/// the file name and `OPENBLAS_NUM_THREADS=2`. Returns a reader of the `key=value`
/// numbers the script prints, or why it did not run.
pub fn python_fields(
    script: &str,
    file: &str,
    data: &[c64],
    args: &[usize],
) -> Result<impl Fn(&str) -> Result<f64, String>, String> {
    let python = std::env::var("CTENSOR_BENCH_PYTHON")
        .ok()
        .filter(|p| !p.is_empty())
        .ok_or_else(|| "CTENSOR_BENCH_PYTHON is not set (make bench sets it)".to_string())?;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = target_dir().join("bench-data");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(file);
    let bytes: Vec<u8> = data
        .iter()
        .flat_map(|z| [z.re.to_le_bytes(), z.im.to_le_bytes()].concat())
        .collect();
    std::fs::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    let script = root.join("python").join(script);
    let out = std::process::Command::new(&python)
        .arg(&script)
        .arg(&path)
        .args(args.iter().map(|v| v.to_string()))
        .env("OPENBLAS_NUM_THREADS", "2")
        .env("OMP_NUM_THREADS", "2")
        .output()
        .map_err(|e| format!("{python}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{python} {}: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    Ok(move |key: &str| {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("no {key}= in the script's output {text:?}"))
    })
}

/// A duration for a table cell.
pub fn us(s: f64) -> String {
    if s < 1e-6 {
        format!("{:.1} ns", s * 1e9)
    } else if s < 1e-3 {
        format!("{:.2} µs", s * 1e6)
    } else {
        format!("{:.3} ms", s * 1e3)
    }
}

/// A markdown table being printed and collected.
pub struct Table {
    /// The markdown so far.
    pub out: String,
}

impl Table {
    /// A table with a title and three value columns.
    pub fn new(title: &str, cols: [&str; 3]) -> Table {
        let mut out = format!(
            "\n### {title}\n\n| kernel | size | {} | {} | {} |\n",
            cols[0], cols[1], cols[2]
        );
        out.push_str("|---|---|---:|---:|---:|\n");
        Table { out }
    }
    /// One row: two timings and their ratio.
    pub fn row(&mut self, kernel: &str, size: &str, (a, b): (f64, f64)) {
        let line = format!(
            "| {kernel} | {size} | {} | {} | {:.3} |\n",
            us(a),
            us(b),
            a / b
        );
        print!("{line}");
        self.out.push_str(&line);
    }
}
