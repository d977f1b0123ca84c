//! CUDA kernels run on the host: the very text NVRTC compiles (the prelude and a
//! kernel source) is compiled by the host C++ compiler behind a small shim (`blockIdx`,
//! `threadIdx`, `blockDim`, `gridDim`, `atomicMax`, `__shared__`, `__syncthreads`), and
//! each kernel runs with exactly the launch configuration of `launch_1d` in
//! `kernels/src/gpu/launch.rs` (blocks of 256 threads, the grid clamped at 65 535 blocks,
//! so large inputs exercise the grid-stride loop), once with each block's threads in
//! ascending and once in descending order. Results are compared with the CPU kernels.
//!
//! Until ctensor runs on a real GPU this is the kernels' only execution. Covered so far:
//! `set`, `add`, `mul`, `fma`, `div`, `scale`, `conj`, `neg`, `eq_scalar` and `abs` for
//! all eight element types
//! and `exp` for the floating ones, every one of the 64 casts (f16/bf16 rounding, wrapping
//! integers, complex products), complex `sqrt` (c32, c64), `nonfinite` (the scan of a
//! matrix part) and `any_zero` (integer division's zero check). Kernels with barriers (the tiled
//! transpose) compile here but are not run yet: that needs a thread per emulated GPU
//! thread.
//!
//! Without a C++ compiler the test prints one `SKIP` line and passes, unless
//! `CTENSOR_REQUIRE_CXX=1`.
#![cfg(feature = "cuda")]

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::rng;
use ctensor_base::{c32, c64, CpuDevice, Scalar};
use ctensor_kernels::gpu::source::SOURCES;
use ctensor_kernels::lapack::{FindNonFinite, Part, Uplo};
use ctensor_kernels::linalg::{Abs, Add, Conj, Div, EqScalar, Fma, Mul, Unary, UnaryOp};
use ctensor_kernels::memory::{CastMemory, SetMemory};
use rand::Rng;

/// The shim, then the source (prelude + kernels), then a driver that runs one kernel
/// named on the command line over raw little-endian inputs from stdin.
const HARNESS: &str = r#"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#define __device__
#define __global__
#define __shared__ static
#define __align__(n) alignas(n)
struct CtDim3 { unsigned x, y, z; };
static CtDim3 blockIdx, threadIdx, blockDim, gridDim;
static inline void __syncthreads() {}
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline long long __double_as_longlong(double d) { long long l; memcpy(&l, &d, 8); return l; }
static inline unsigned long long atomicMax(unsigned long long* a, unsigned long long v) {
    unsigned long long old = *a;
    if (v > old) *a = v;
    return old;
}
#include SOURCE

// launch_1d of launch.rs: BLOCK = 256, grid = clamp(ceil(n / 256), 1, 65535).
template <class F> static void launch_1d(unsigned long long n, int reverse, F f) {
    if (n == 0) return;
    unsigned long long g = (n + 255) / 256;
    if (g > 65535) g = 65535;
    gridDim = {(unsigned)g, 1, 1};
    blockDim = {256, 1, 1};
    for (unsigned b = 0; b < g; b++) {
        blockIdx = {b, 0, 0};
        for (unsigned k = 0; k < 256; k++) {
            threadIdx = {reverse ? 255 - k : k, 0, 0};
            f();
        }
    }
}

template <class T> static std::vector<T> input(size_t n) {
    std::vector<T> v(n);
    if (n && fread(v.data(), sizeof(T), n, stdin) != n) { fprintf(stderr, "short input\n"); exit(2); }
    return v;
}
template <class T> static void output(const std::vector<T>& v) {
    fwrite(v.data(), sizeof(T), v.size(), stdout);
}

int main(int argc, char** argv) {
    if (argc < 4) return 2;
    const char* k = argv[1];
    unsigned long long n = strtoull(argv[2], 0, 10);
    int rev = atoi(argv[3]);
#ifdef CT_ELEMENTWISE
    if (!strcmp(k, "sqrt_c64")) { auto x = input<ct_c64>(n); std::vector<ct_c64> y(n);
        launch_1d(n, rev, [&] { sqrt_c64(n, x.data(), y.data()); }); output(y); return 0; }
    if (!strcmp(k, "sqrt_c32")) { auto x = input<ct_c32>(n); std::vector<ct_c32> y(n);
        launch_1d(n, rev, [&] { sqrt_c32(n, x.data(), y.data()); }); output(y); return 0; }
#define CT_EMU_BINARY(S, T)                                                                    \
    if (!strcmp(k, "add_" #S)) { auto s = input<T>(2); auto x = input<T>(n); auto y = input<T>(n);  \
        std::vector<T> z(n);                                                                       \
        launch_1d(n, rev, [&] { add_##S(n, s[0], x.data(), s[1], y.data(), z.data()); });          \
        output(z); return 0; }                                                                     \
    if (!strcmp(k, "mul_" #S)) { auto s = input<T>(2); auto x = input<T>(n); auto y = input<T>(n);  \
        std::vector<T> z(n);                                                                       \
        launch_1d(n, rev, [&] { mul_##S(n, s[0], x.data(), y.data(), z.data()); });                \
        output(z); return 0; }                                                                     \
    if (!strcmp(k, "fma_" #S)) { auto s = input<T>(2); auto x = input<T>(n); auto y = input<T>(n);  \
        auto z = input<T>(n); std::vector<T> o(n);                                                 \
        launch_1d(n, rev, [&] { fma_##S(n, s[0], x.data(), y.data(), s[1], z.data(), o.data()); }); \
        output(o); return 0; }                                                                     \
    if (!strcmp(k, "div_" #S)) { auto s = input<T>(2); auto x = input<T>(n); auto y = input<T>(n);  \
        std::vector<T> z(n);                                                                       \
        launch_1d(n, rev, [&] { div_##S(n, s[0], x.data(), y.data(), z.data()); });                \
        output(z); return 0; }                                                                     \
    if (!strcmp(k, "scale_" #S)) { auto s = input<T>(2); auto x = input<T>(n); std::vector<T> y(n); \
        launch_1d(n, rev, [&] { scale_##S(n, s[0], x.data(), y.data()); });                        \
        output(y); return 0; }                                                                     \
    if (!strcmp(k, "conj_" #S)) { auto x = input<T>(n); std::vector<T> y(n);                       \
        launch_1d(n, rev, [&] { conj_##S(n, x.data(), y.data()); });                               \
        output(y); return 0; }                                                                     \
    if (!strcmp(k, "neg_" #S)) { auto x = input<T>(n); std::vector<T> y(n);                        \
        launch_1d(n, rev, [&] { neg_##S(n, x.data(), y.data()); });                                \
        output(y); return 0; }                                                                     \
    if (!strcmp(k, "set_" #S)) { auto v = input<T>(1); std::vector<T> y(n);                        \
        launch_1d(n, rev, [&] { set_##S(n, v[0], y.data()); });                                    \
        output(y); return 0; }                                                                     \
    if (!strcmp(k, "eq_scalar_" #S)) { auto v = input<T>(1); auto x = input<T>(n); std::vector<T> y(n); \
        launch_1d(n, rev, [&] { eq_scalar_##S(n, x.data(), v[0], y.data()); });                    \
        output(y); return 0; }
    CT_ALL_TYPES(CT_EMU_BINARY)
#define CT_EMU_FLOATING(S, T)                                                                  \
    if (!strcmp(k, "exp_" #S)) { auto x = input<T>(n); std::vector<T> y(n);                        \
        launch_1d(n, rev, [&] { exp_##S(n, x.data(), y.data()); });                                \
        output(y); return 0; }
    CT_FLOATING(CT_EMU_FLOATING)
#define CT_EMU_ABS(S, T, R)                                                                    \
    if (!strcmp(k, "abs_" #S)) { auto x = input<T>(n); std::vector<R> y(n);                        \
        launch_1d(n, rev, [&] { abs_##S(n, x.data(), y.data()); });                                \
        output(y); return 0; }
    CT_EMU_ABS(f32, float, float) CT_EMU_ABS(f64, double, double) CT_EMU_ABS(i32, int, int)
    CT_EMU_ABS(i64, i64, i64) CT_EMU_ABS(c32, ct_c32, float) CT_EMU_ABS(c64, ct_c64, double)
    CT_EMU_ABS(f16, ct_f16, ct_f16) CT_EMU_ABS(bf16, ct_bf16, ct_bf16)
    if (!strcmp(k, "any_zero_i32")) { auto x = input<int>(n); std::vector<u64> first(1, 0);
        launch_1d(n, rev, [&] { any_zero_i32(n, x.data(), first.data()); }); output(first); return 0; }
#endif
#ifdef CT_CAST
#define CT_EMU_CAST_ONE(SD, TD, SS, TS)                                                        \
    if (!strcmp(k, "cast_" #SD "_" #SS)) { auto x = input<TS>(n); std::vector<TD> y(n);         \
        launch_1d(n, rev, [&] { cast_##SD##_##SS(n, x.data(), y.data()); });                   \
        output(y); return 0; }
#define CT_EMU_CAST_FROM(SD, TD)                                                               \
    CT_EMU_CAST_ONE(SD, TD, f32, float) CT_EMU_CAST_ONE(SD, TD, f64, double)                   \
    CT_EMU_CAST_ONE(SD, TD, i32, int) CT_EMU_CAST_ONE(SD, TD, i64, i64)                        \
    CT_EMU_CAST_ONE(SD, TD, c32, ct_c32) CT_EMU_CAST_ONE(SD, TD, c64, ct_c64)                  \
    CT_EMU_CAST_ONE(SD, TD, f16, ct_f16) CT_EMU_CAST_ONE(SD, TD, bf16, ct_bf16)
    CT_ALL_TYPES(CT_EMU_CAST_FROM)
#endif
#ifdef CT_LAYOUT
    // nonfinite_<t> part m cols lda: n is the span lda·(cols-1) + m.
    if (argc >= 8 && !strncmp(k, "nonfinite_", 10)) {
        int part = atoi(argv[4]);
        u64 m = strtoull(argv[5], 0, 10), cols = strtoull(argv[6], 0, 10), lda = strtoull(argv[7], 0, 10);
        std::vector<u64> first(1, 0);
        if (!strcmp(k, "nonfinite_f64")) { auto a = input<double>(n);
            launch_1d(m * cols, rev, [&] { nonfinite_f64(part, m, cols, a.data(), lda, first.data()); }); }
        else if (!strcmp(k, "nonfinite_c64")) { auto a = input<ct_c64>(n);
            launch_1d(m * cols, rev, [&] { nonfinite_c64(part, m, cols, a.data(), lda, first.data()); }); }
        else if (!strcmp(k, "nonfinite_f32")) { auto a = input<float>(n);
            launch_1d(m * cols, rev, [&] { nonfinite_f32(part, m, cols, a.data(), lda, first.data()); }); }
        else return 3;
        output(first);
        return 0;
    }
#endif
    fprintf(stderr, "unknown kernel %s\n", k);
    return 3;
}
"#;

/// A host build of one kernel source, or `None` (SKIP) without a C++ compiler.
struct Emulator {
    exe: std::path::PathBuf,
}

impl Emulator {
    fn build(source: &str, define: &str) -> Option<Emulator> {
        let cxx = ["c++", "g++", "clang++"]
            .into_iter()
            .find(|c| Command::new(c).arg("--version").output().is_ok());
        let Some(cxx) = cxx else {
            assert!(
                std::env::var_os("CTENSOR_REQUIRE_CXX").is_none(),
                "CTENSOR_REQUIRE_CXX is set but no C++ compiler was found"
            );
            println!(
                "SKIP: no C++ compiler (c++, g++ or clang++) to run the CUDA kernels on the host"
            );
            return None;
        };
        let src = SOURCES
            .iter()
            .find(|s| s.name == source)
            .unwrap_or_else(|| panic!("no CUDA source named {source}"));
        let dir = std::env::temp_dir().join(format!("ctensor-emu-{}-{source}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cu = dir.join(format!("{source}.cu.h"));
        std::fs::write(&cu, src.code).unwrap();
        let harness = dir.join("harness.cpp");
        std::fs::write(&harness, HARNESS).unwrap();
        let exe = dir.join("emu");
        let out = Command::new(cxx)
            .args(["-std=c++17", "-O2", "-w", &format!("-D{define}")])
            .arg(format!("-DSOURCE=\"{}\"", cu.display()))
            .arg(&harness)
            .arg("-o")
            .arg(&exe)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{source}.cu does not compile on the host:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(Emulator { exe })
    }

    /// Runs `kernel` over `n` with `args`, feeding `input`; the raw output bytes, the
    /// same for both thread orders (checked).
    fn run(&self, kernel: &str, n: usize, args: &[String], input: &[u8]) -> Vec<u8> {
        let mut outs = Vec::new();
        for reverse in ["0", "1"] {
            let mut child = Command::new(&self.exe)
                .arg(kernel)
                .arg(n.to_string())
                .arg(reverse)
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(input).unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{kernel}: the emulated kernel failed ({})",
                out.status
            );
            outs.push(out.stdout);
        }
        assert_eq!(
            outs[0], outs[1],
            "{kernel}: the result depends on the order of threads"
        );
        outs.pop().unwrap()
    }
}

fn bytes<T>(v: &[T]) -> &[u8] {
    // SAFETY: plain-old-data element types (floats, ints, {re, im} pairs), read as bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

fn from_bytes<T: Copy>(b: &[u8]) -> Vec<T> {
    let n = b.len() / std::mem::size_of::<T>();
    // SAFETY: `b` holds `n` values of `T` as the harness wrote them; read unaligned.
    (0..n)
        .map(|i| unsafe { (b.as_ptr() as *const T).add(i).read_unaligned() })
        .collect()
}

/// Complex sqrt on the "GPU" (emulated) against the CPU kernel, on extreme and random
/// values and more elements than one block holds.
fn sqrt_matches_the_cpu<T: Scalar>(emu: &Emulator, kernel: &str)
where
    CpuDevice: Unary<T>,
{
    let mut r = rng(31);
    let span = if T::DTYPE == ctensor_base::DataType::ComplexFloat {
        38
    } else {
        307
    };
    let mut x: Vec<T> = (0..3000)
        .map(|_| {
            let e = |r: &mut rand::rngs::StdRng| 10f64.powi(r.gen_range(-span..span));
            let re = r.gen_range(-1.0..1.0) * e(&mut r);
            let im = r.gen_range(-1.0..1.0) * e(&mut r);
            T::cast_from(c64::new(re, im))
        })
        .collect();
    for (re, im) in [
        (1.0, 1e-10),
        (1e200, 1e200),
        (1e20, 1e20),
        (1e-200, 0.0),
        (-4.0, -0.0),
        (0.0, 0.0),
    ] {
        x.push(T::cast_from(c64::new(re, im)));
    }
    let got: Vec<T> = from_bytes(&emu.run(kernel, x.len(), &[], bytes(&x)));
    let mut want = vec![T::zero(); x.len()];
    // SAFETY: both hold x.len() elements.
    unsafe { CpuDevice::unary(UnaryOp::Sqrt, x.len(), x.as_ptr(), want.as_mut_ptr()) }.unwrap();
    assert_eq!(got.len(), want.len(), "{kernel}: output length");
    for ((g, w), z) in got.iter().zip(&want).zip(&x) {
        let (g, w) = (g.to_c64(), w.to_c64());
        let same = |a: f64, b: f64| {
            a == b
                || (a - b).abs() <= 2.0 * f32::EPSILON as f64 * b.abs()
                || (a.is_nan() && b.is_nan())
        };
        assert!(
            same(g.re, w.re) && same(g.im, w.im),
            "{kernel}({}): GPU {g} vs CPU {w}",
            z.to_c64()
        );
    }
}

/// `add`, `mul`, `fma`, `div`, `scale`, `conj` and `neg` on the emulated GPU against
/// the CPU kernels, bit for bit.
fn binary_ops_match_the_cpu<T: Scalar>(emu: &Emulator)
where
    CpuDevice: Add<T>
        + Mul<T>
        + Fma<T>
        + Div<T>
        + Conj<T>
        + Unary<T>
        + SetMemory<T>
        + EqScalar<T>
        + Abs<T>,
{
    let s = suffix(T::DTYPE);
    let mut r = rng(11);
    for n in [1usize, 7, 257, 1000] {
        let v: Vec<T> = common::random_vec(&mut r, 3 * n + 2);
        let (ab, rest) = v.split_at(2);
        let (x, rest) = rest.split_at(n);
        let (y, z) = rest.split_at(n);
        let (alpha, beta) = (ab[0], ab[1]);
        let input = |parts: &[&[T]]| {
            parts
                .iter()
                .flat_map(|p| bytes(p).to_vec())
                .collect::<Vec<u8>>()
        };
        let mut want = vec![T::zero(); n];
        // Divisors without zeros (integer division by zero is refused before the kernel).
        let d: Vec<T> = y
            .iter()
            .map(|v| {
                if v.to_c64().norm() == 0.0 {
                    T::one()
                } else {
                    *v
                }
            })
            .collect();
        // `eq_scalar` against a value that occurs in `x` (so some entries compare equal).
        let probe = x[n / 2];
        let cases: [(&str, Vec<u8>); 9] = [
            ("set", input(&[&ab[..1]])),
            ("eq_scalar", input(&[std::slice::from_ref(&probe), x])),
            ("add", input(&[ab, x, y])),
            ("mul", input(&[ab, x, y])),
            ("fma", input(&[ab, x, y, z])),
            ("div", input(&[ab, x, &d])),
            ("scale", input(&[ab, x])),
            ("conj", input(&[x])),
            ("neg", input(&[x])),
        ];
        for (op, inp) in cases {
            // SAFETY: every buffer holds n elements.
            unsafe {
                match op {
                    "add" => {
                        CpuDevice::add(n, alpha, x.as_ptr(), beta, y.as_ptr(), want.as_mut_ptr())
                    }
                    "mul" => CpuDevice::mul(n, alpha, x.as_ptr(), y.as_ptr(), want.as_mut_ptr()),
                    "fma" => CpuDevice::fma(
                        n,
                        alpha,
                        x.as_ptr(),
                        y.as_ptr(),
                        beta,
                        z.as_ptr(),
                        want.as_mut_ptr(),
                    ),
                    "div" => CpuDevice::div(n, alpha, x.as_ptr(), d.as_ptr(), want.as_mut_ptr()),
                    "scale" => CpuDevice::scale(n, alpha, x.as_ptr(), want.as_mut_ptr()),
                    "conj" => CpuDevice::conj(want.as_mut_ptr(), x.as_ptr(), n),
                    "neg" => CpuDevice::unary(UnaryOp::Neg, n, x.as_ptr(), want.as_mut_ptr()),
                    "set" => CpuDevice::set(want.as_mut_ptr(), alpha, n),
                    "eq_scalar" => CpuDevice::eq_scalar(n, x.as_ptr(), probe, want.as_mut_ptr()),
                    other => unreachable!("no CPU reference for {other}"),
                }
            }
            .unwrap();
            let got = emu.run(&format!("{op}_{s}"), n, &[], &inp);
            assert_eq!(got, bytes(&want), "{op}_{s}, n = {n}: GPU and CPU differ");
        }
        // |x| in the real type (the modulus for complex).
        let mut want_abs = vec![<T::Real as Scalar>::zero(); n];
        // SAFETY: `x` holds n elements, `want_abs` n reals.
        unsafe { CpuDevice::abs(n, x.as_ptr(), want_abs.as_mut_ptr()) }.unwrap();
        let got = emu.run(&format!("abs_{s}"), n, &[], bytes(x));
        assert_eq!(
            got,
            bytes(&want_abs),
            "abs_{s}, n = {n}: GPU and CPU differ"
        );
    }
}

/// `exp` on the emulated GPU against the CPU kernel: the host's libm on both sides, so
/// within a few units in the last place (the CUDA library's own `exp` differs on a GPU).
fn exp_matches_the_cpu<T: Scalar>(emu: &Emulator)
where
    CpuDevice: Unary<T>,
{
    let s = suffix(T::DTYPE);
    let mut r = rng(13);
    let x: Vec<T> = (0..1000)
        .map(|_| T::cast_from(c64::new(r.gen_range(-20.0..20.0), r.gen_range(-10.0..10.0))))
        .collect();
    let got: Vec<T> = from_bytes(&emu.run(&format!("exp_{s}"), x.len(), &[], bytes(&x)));
    let mut want = vec![T::zero(); x.len()];
    // SAFETY: both hold 1000 elements.
    unsafe { CpuDevice::unary(UnaryOp::Exp, x.len(), x.as_ptr(), want.as_mut_ptr()) }.unwrap();
    assert_eq!(got.len(), want.len(), "exp_{s}: output length");
    let tol = 8.0 * common::eps::<T>().max(f64::EPSILON);
    for ((g, w), z) in got.iter().zip(&want).zip(&x) {
        let (g, w) = (g.to_c64(), w.to_c64());
        assert!(
            (g - w).norm() <= tol * w.norm().max(1e-300),
            "exp_{s}({}): GPU {g} vs CPU {w}",
            z.to_c64()
        );
    }
}

fn suffix(dt: ctensor_base::DataType) -> &'static str {
    ctensor_kernels::gpu::source::suffix(dt)
}

#[test]
fn emulated_elementwise_kernels_match_the_cpu() {
    let Some(emu) = Emulator::build("elementwise", "CT_ELEMENTWISE") else {
        return;
    };
    binary_ops_match_the_cpu::<f32>(&emu);
    binary_ops_match_the_cpu::<f64>(&emu);
    binary_ops_match_the_cpu::<i32>(&emu);
    binary_ops_match_the_cpu::<i64>(&emu);
    binary_ops_match_the_cpu::<c32>(&emu);
    binary_ops_match_the_cpu::<c64>(&emu);
    binary_ops_match_the_cpu::<ctensor_base::f16>(&emu);
    binary_ops_match_the_cpu::<ctensor_base::bf16>(&emu);
    exp_matches_the_cpu::<f32>(&emu);
    exp_matches_the_cpu::<f64>(&emu);
    exp_matches_the_cpu::<c32>(&emu);
    exp_matches_the_cpu::<c64>(&emu);
    sqrt_matches_the_cpu::<c64>(&emu, "sqrt_c64");
    sqrt_matches_the_cpu::<c32>(&emu, "sqrt_c32");
    // any_zero over more elements than the clamped grid covers (65 535 × 256), so the
    // grid-stride loop runs a second round; the first zero must win from any thread.
    let n = 65_535 * 256 + 777;
    for zeros in [
        vec![],
        vec![n - 1],
        vec![5, n - 3],
        vec![65_535 * 256 + 10, 70_000],
    ] {
        let mut x = vec![1i32; n];
        for &z in &zeros {
            x[z] = 0;
        }
        let got: Vec<u64> = from_bytes(&emu.run("any_zero_i32", n, &[], bytes(&x)));
        let want = zeros.iter().min().map_or(0, |&i| (n - i) as u64);
        assert_eq!(got, [want], "zeros at {zeros:?}");
    }
}

fn nonfinite_matches_the_cpu<T: Scalar>(emu: &Emulator, kernel: &str)
where
    CpuDevice: FindNonFinite<T>,
{
    let mut r = rng(7);
    for (m, cols, lda) in [
        (1usize, 1usize, 1usize),
        (7, 5, 9),
        (300, 301, 300),
        (1000, 3, 1001),
    ] {
        let span = lda * (cols - 1) + m;
        for trial in 0..6 {
            let mut a: Vec<T> = (0..span)
                .map(|_| T::cast_from(c64::new(r.gen_range(-1.0..1.0), 0.0)))
                .collect();
            for _ in 0..trial {
                let k = r.gen_range(0..span);
                a[k] = T::cast_from(c64::new(
                    [f64::NAN, f64::INFINITY, f64::NEG_INFINITY][trial % 3],
                    0.0,
                ));
            }
            for (code, part) in [
                (0, Part::Whole),
                (1, Part::Triangle(Uplo::Lower)),
                (2, Part::Triangle(Uplo::Upper)),
            ] {
                let args: Vec<String> =
                    [code, m, cols, lda].iter().map(|v| v.to_string()).collect();
                let got: Vec<u64> = from_bytes(&emu.run(kernel, span, &args, bytes(&a)));
                // SAFETY: `a` spans the matrix.
                let want =
                    unsafe { CpuDevice::find_non_finite(part, m, cols, a.as_ptr(), lda) }.unwrap();
                let want = want.map_or(0, |(i, j, _)| (m * cols - (i + j * m)) as u64);
                assert_eq!(
                    got,
                    [want],
                    "{kernel} {m}×{cols} ld {lda} {part:?} trial {trial}"
                );
            }
        }
    }
}

/// One cast `S → D` on the emulated GPU against the CPU's, on random values and the
/// values casts get wrong (signed zeros, ties of the 16-bit types, the ends of every
/// integer and float range, infinities and NaN): equal bit for bit, except that any NaN
/// matches any NaN.
fn cast_pair<D: Scalar, S: Scalar>(emu: &Emulator)
where
    CpuDevice: CastMemory<D, S>,
{
    let mut r = rng(23);
    let mut x: Vec<S> = common::random_vec(&mut r, 600);
    let specials = [
        0.0,
        -0.0,
        0.5,
        -1.5,
        2.5,
        65504.0,
        65520.0,
        -65520.0,
        1.0 + 1.0 / 2048.0,
        1.0 + 1.0 / 256.0,
        3.0e38,
        -3.5e38,
        1e300,
        5.96e-8,
        1e-40,
        2147483647.0,
        2147483648.0,
        -2147483649.0,
        9.3e18,
        -9.3e18,
        9007199254740993.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    for (i, &v) in specials.iter().enumerate() {
        let im = specials[(i * 7 + 3) % specials.len()];
        x.push(S::cast_from(c64::new(v, im)));
    }
    let got: Vec<D> = from_bytes(&emu.run(
        &format!("cast_{}_{}", suffix(D::DTYPE), suffix(S::DTYPE)),
        x.len(),
        &[],
        bytes(&x),
    ));
    let mut want = vec![D::zero(); x.len()];
    // SAFETY: both hold x.len() elements.
    unsafe { CpuDevice::cast(want.as_mut_ptr(), x.as_ptr(), x.len()) }.unwrap();
    assert_eq!(
        got.len(),
        want.len(),
        "cast {:?} -> {:?}: output length",
        S::DTYPE,
        D::DTYPE
    );
    for ((g, w), v) in got.iter().zip(&want).zip(&x) {
        let same_bits = bytes(std::slice::from_ref(g)) == bytes(std::slice::from_ref(w));
        let (gc, wc) = (g.to_c64(), w.to_c64());
        let nan_alike = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        assert!(
            same_bits || (nan_alike(gc.re, wc.re) && nan_alike(gc.im, wc.im)),
            "cast {:?} -> {:?} of {}: GPU {gc} vs CPU {wc}",
            S::DTYPE,
            D::DTYPE,
            v.to_c64()
        );
    }
}

macro_rules! every_cast {
    ($emu:expr; $($d:ty),*) => {
        $( every_cast!(@from $emu, $d; f32, f64, i32, i64, c32, c64, ctensor_base::f16, ctensor_base::bf16); )*
    };
    (@from $emu:expr, $d:ty; $($s:ty),*) => {
        $( cast_pair::<$d, $s>($emu); )*
    };
}

#[test]
fn emulated_casts_match_the_cpu_for_all_64_pairs() {
    let Some(emu) = Emulator::build("cast", "CT_CAST") else {
        return;
    };
    every_cast!(&emu; f32, f64, i32, i64, c32, c64, ctensor_base::f16, ctensor_base::bf16);
}

#[test]
fn emulated_nonfinite_scan_matches_the_cpu() {
    let Some(emu) = Emulator::build("layout", "CT_LAYOUT") else {
        return;
    };
    nonfinite_matches_the_cpu::<f64>(&emu, "nonfinite_f64");
    nonfinite_matches_the_cpu::<f32>(&emu, "nonfinite_f32");
    nonfinite_matches_the_cpu::<c64>(&emu, "nonfinite_c64");
}
