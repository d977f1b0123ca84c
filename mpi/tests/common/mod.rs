//! Running a test on several MPI processes from `cargo test`.
//!
//! [`mpi_test!`] makes a `#[test]` that, under cargo, launches this same test binary with
//! `mpirun -n N` (for each N asked for) filtered to that one test, and fails when mpirun
//! fails, when any rank's test fails, when fewer than N ranks report it passed (a filter
//! that matched nothing would otherwise pass), or after a time limit (a rank left
//! waiting in a collective is a hang, and a hang is a failure). Inside mpirun the same
//! `#[test]` starts MPI and runs the body on every rank.
#![allow(dead_code)]

use ctensor_mpi::launch::{mpirun, run_within};
use ctensor_mpi::{Comm, Universe};

/// Set in the environment of the processes mpirun starts: the folder where each rank
/// leaves a file when its test body has passed.
const CHILD: &str = "CTENSOR_MPI_CHILD";

/// MPI for one test process; `world` is dropped before the universe finalizes MPI.
pub struct Mpi {
    pub world: Comm,
    _universe: Universe,
}

impl Mpi {
    pub fn start() -> Mpi {
        let universe = ctensor_mpi::initialize().expect("MPI_Init");
        let world = universe.world().expect("world communicator");
        Mpi {
            world,
            _universe: universe,
        }
    }
}

pub fn in_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// Records that this rank's test body passed.
pub fn passed(rank: usize) {
    let dir = std::env::var(CHILD).expect("child marker folder");
    std::fs::write(format!("{dir}/rank-{rank}"), b"ok").expect("write the pass marker");
}

/// Runs the test `name` of this binary under `mpirun -n np` with `env` set for the
/// ranks, within `limit`: whether mpirun succeeded, its output, the ranks that left a
/// pass marker, and how long it took. One mpirun at a time: the tests are parallel
/// inside, and the machine may have fewer cores than ranks.
fn run_ranks(
    name: &str,
    np: usize,
    env: &[(&str, &str)],
    limit: std::time::Duration,
) -> (bool, String, usize, std::time::Duration) {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let exe = std::env::current_exe().expect("test binary path");
    let marks = std::env::temp_dir().join(format!(
        "ctensor-mpi-{}-{name}-{np}-{}",
        std::process::id(),
        env.len()
    ));
    let _ = std::fs::remove_dir_all(&marks);
    std::fs::create_dir_all(&marks).expect("marker folder");
    let mut cmd = mpirun(np);
    for (k, v) in env {
        cmd.args(["-x", &format!("{k}={v}")]);
    }
    cmd.args(["-x", &format!("{CHILD}={}", marks.display())]);
    cmd.arg(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"]);
    let start = std::time::Instant::now();
    let (ok, text) = run_within(cmd, &format!("{name} on {np} ranks {env:?}"), limit);
    let took = start.elapsed();
    let passed = (0..np)
        .filter(|r| marks.join(format!("rank-{r}")).exists())
        .count();
    let _ = std::fs::remove_dir_all(&marks);
    (ok, text, passed, took)
}

/// Runs the test `name` of this binary on `np` ranks, expected to fail (a rank panics or
/// aborts on purpose), within `limit`: returns mpirun's output and how long it took, and
/// panics when the run passed or was still running at the limit (a hang).
pub fn launch_failing(
    name: &str,
    np: usize,
    limit: std::time::Duration,
) -> (String, std::time::Duration) {
    let (ok, text, _, took) = run_ranks(name, np, &[], limit);
    let what = format!("{name} on {np} ranks");
    assert!(!text.contains("TIMED OUT"), "{what}: the job hung\n{text}");
    assert!(!ok, "{what}: expected mpirun to report the failure\n{text}");
    (text, took)
}

/// Runs the test `name` of this binary on `np` ranks (with `env` set for them) and
/// panics unless every rank passed it within `limit`.
pub fn launch_within(name: &str, np: usize, env: &[(&str, &str)], limit: std::time::Duration) {
    let (ok, text, passed, _) = run_ranks(name, np, env, limit);
    if !ok || passed != np {
        panic!(
            "{name} on {np} ranks {env:?}: failed ({passed} of {np} ranks passed)\n--- output ---\n{text}"
        );
    }
    // Lines the ranks printed on purpose (SKIP notes) go to the test's own output.
    for line in text
        .lines()
        .filter(|l| l.starts_with("SKIP") || l.starts_with("rank"))
    {
        println!("{line}");
    }
}

/// A test run on every rank of `mpirun -n N` for each N of `$np`, again for each extra
/// environment in `$envs` (e.g. a small message limit, to run the chunked paths). The
/// body gets `&Comm` (the world) and returns `ctensor::Result<()>`.
#[macro_export]
macro_rules! mpi_test {
    // Within `$secs` seconds: a hang is a failure in seconds, not at the default limit.
    ($name:ident, $np:expr, within $secs:expr, |$w:ident| $body:block) => {
        $crate::mpi_test!(@run $name, $np, &[], std::time::Duration::from_secs($secs), |$w| $body);
    };
    ($name:ident, $np:expr, $envs:expr, |$w:ident| $body:block) => {
        $crate::mpi_test!(@run $name, $np, $envs, ctensor_mpi::launch::limit(), |$w| $body);
    };
    (@run $name:ident, $np:expr, $envs:expr, $limit:expr, |$w:ident| $body:block) => {
        #[test]
        fn $name() {
            if common::in_child() {
                let mpi = common::Mpi::start();
                let $w: &ctensor_mpi::Comm = &mpi.world;
                let result: ctensor_base::Result<()> = (|| $body)();
                match result {
                    Ok(()) => common::passed($w.rank()),
                    Err(e) => panic!("rank {} of {}: {e}", $w.rank(), $w.size()),
                }
            } else {
                let envs: &[&[(&str, &str)]] = $envs;
                for np in $np {
                    common::launch_within(stringify!($name), np, &[], $limit);
                    for env in envs {
                        common::launch_within(stringify!($name), np, env, $limit);
                    }
                }
            }
        }
    };
}
