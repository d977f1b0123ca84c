//! `make bench`: ctensor's kernels and ops against direct OpenBLAS/LAPACK calls, plain
//! loops and peer libraries, printed as markdown tables and written to
//! `bench/bench.md` under the target directory (`CARGO_TARGET_DIR` when set, else the
//! workspace's `target/`). Arguments filter the tables by name (`goals`, `blas`, `lapack`, `policy`,
//! `elementwise`, `threshold`, `gemm`, `eigh`, `large`, `toolkit`, `fft`, `gpu`; the GPU tables print
//! why they are skipped when no GPU is usable).

mod elementwise;
mod fft;
mod goals;
mod gpu;
mod harness;
mod kernels;
mod memory;
mod ops;
mod policy;
mod toolkit;

use rand::rngs::StdRng;
use rand::SeedableRng;

/// A function that measures and returns one markdown table.
type TableFn = fn(&mut StdRng) -> String;

fn main() {
    let filter: Vec<String> = std::env::args().skip(1).collect();
    let want = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    let mut rng = StdRng::seed_from_u64(7);
    let mut md = format!(
        "## ctensor benchmarks\n\nMachine: {} cores (rayon's default pool), OpenBLAS {} threads at start.\n",
        rayon::current_num_threads(),
        ctensor::kernels::parallel::blas_num_threads()
    );
    let tables: [(&str, TableFn); 13] = [
        ("goals", goals::goal_table),
        ("blas", kernels::blas_overhead),
        ("lapack", kernels::lapack_overhead),
        ("elementwise", elementwise::elementwise_vs_loops),
        ("threshold", elementwise::threshold_table),
        ("gemm", ops::gemm_vs_zgemm),
        ("eigh", ops::eigh_table),
        ("policy", policy::eigh_policy),
        ("large", ops::add_and_permute),
        ("toolkit", toolkit::toolkit_tables),
        ("fft", fft::fft_tables),
        ("gpu", gpu::gpu_tables),
        ("memory", memory::memory_tables),
    ];
    for (name, table) in tables {
        if want(name) {
            md += &table(&mut rng);
        }
    }
    let dir = harness::target_dir().join("bench");
    let file = dir.join("bench.md");
    match std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, &md)) {
        Ok(()) => println!("\nwritten to {}", file.display()),
        Err(e) => eprintln!("could not write {}: {e}", file.display()),
    }
}
