//! Running a program under `mpirun` with a time limit, for the tests of this crate and
//! of programs built on it (the demo's MPI test). Not part of the API.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The per-run time limit: `CTENSOR_MPI_TEST_TIMEOUT` seconds, 180 by default.
pub fn limit() -> Duration {
    let s = std::env::var("CTENSOR_MPI_TEST_TIMEOUT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(180);
    Duration::from_secs(s)
}

/// `mpirun` with the options a test run needs: root allowed (containers and CI run as
/// root), more ranks than cores, and no cross-process single copy (CMA needs ptrace
/// rights that containers often withhold; shared memory copies through a buffer then).
pub fn mpirun(np: usize) -> Command {
    let mut c = Command::new("mpirun");
    c.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "--mca",
        "btl_vader_single_copy_mechanism",
        "none",
        "-n",
        &np.to_string(),
    ]);
    c
}

/// Runs `cmd`, returning (success, stdout + stderr); kills it after `limit()`.
pub fn run_limited(cmd: Command, what: &str) -> (bool, String) {
    run_within(cmd, what, limit())
}

/// [`run_limited`] with the time limit given: for runs that must end in seconds (a
/// failure on one rank that must end every rank).
pub fn run_within(mut cmd: Command, what: &str, limit: Duration) -> (bool, String) {
    let mut child = match cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn() {
        Ok(c) => c,
        Err(e) => panic!(
            "{what}: cannot start mpirun ({e}); install OpenMPI: bash scripts/ensure-deps.sh mpi"
        ),
    };
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait for mpirun") {
            break Some(st);
        }
        if start.elapsed() > limit {
            // SIGTERM lets mpirun take its ranks down with it; SIGKILL if it lingers.
            // SAFETY: signalling our own child process.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            std::thread::sleep(Duration::from_secs(3));
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = format!(
        "{}{}",
        t_out.join().unwrap_or_default(),
        t_err.join().unwrap_or_default()
    );
    match status {
        Some(st) => (st.success(), text),
        None => (
            false,
            format!(
                "{text}\n{what}: TIMED OUT after {:?} (a rank is waiting forever)",
                limit
            ),
        ),
    }
}
