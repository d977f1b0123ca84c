//! `make bench`: ctensor's kernels and ops against direct OpenBLAS/LAPACK calls, plain
//! loops and peer libraries, printed as markdown tables and written to
//! `target/bench/bench.md`. Arguments filter the tables by name (`blas`, `lapack`,
//! `elementwise`, `threshold`, `gemm`, `eigh`, `large`, `toolkit`, `fft`, `gpu`; the GPU tables print
//! why they are skipped when no GPU is usable).

mod fft;
mod gpu;
mod harness;
mod kernels;
mod memory;
mod ops;
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
    let tables: [(&str, TableFn); 11] = [
        ("blas", kernels::blas_overhead),
        ("lapack", kernels::lapack_overhead),
        ("elementwise", kernels::elementwise_vs_loops),
        ("threshold", kernels::threshold_table),
        ("gemm", ops::gemm_vs_zgemm),
        ("eigh", ops::eigh_table),
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
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    if std::fs::create_dir_all(&dir).is_ok() && std::fs::write(dir.join("bench.md"), &md).is_ok() {
        println!("\nwritten to target/bench/bench.md");
    }
}
