//! CUDA kernels run on the host: the very text NVRTC compiles (the prelude and a
//! kernel source) is compiled by the host C++ compiler behind a small shim (`blockIdx`,
//! `threadIdx`, `blockDim`, `gridDim`, `atomicMax`, `__shared__`, `__syncthreads`), and
//! each kernel runs with exactly the launch configuration of `launch_1d` in
//! `kernels/src/gpu/launch.rs` (blocks of 256 threads, the grid clamped at 65 535 blocks,
//! so large inputs exercise the grid-stride loop), once with each block's threads in
//! ascending and once in descending order. Results are compared with the CPU kernels.
//!
//! Kernels with barriers (the tiled transpose, the row reductions) run cooperatively:
//! each emulated GPU thread is a coroutine with its own stack that yields at
//! `__syncthreads()`, and the scheduler resumes a block's threads in ascending or
//! descending order between barriers, so a missing barrier changes the result (checked:
//! removing either barrier of the transpose or the reduction tree fails these tests).
//! Launch configurations come from `ctensor_kernels::gpu::emulation`, the functions the
//! GPU code itself launches with.
//!
//! Every kernel of every `.cu` source runs here: `set`, `add`, `mul`, `fma`, `div`,
//! `scale`, `conj`, `neg`, `eq_scalar` and `abs` for all eight element types and `exp`
//! for the floating ones, every one of the 64 casts (f16/bf16 rounding, wrapping
//! integers, complex products), complex `sqrt` (c32, c64), `nonfinite` (the scan of a
//! matrix part), `any_zero` (integer division's zero check), `copy_strided`,
//! `transpose2d`, `set_strided`, `set_matrix`, `index_select` and `index_copy` for all
//! eight types,
//! `reduce_sum` and `cumsum` (all eight), `reduce_extreme` and `arg_extreme` (the six
//! ordered ones), the `matmul`
//! loop (i32, i64, f16, bf16), the counter-based generator `random_f64` (uniform and
//! normal), `compare`, `classify`, `select` (all eight types) and `extreme2` (the six
//! ordered ones), `math` (every function for every type that takes it) and `pow`. All but
//! `index_select`, `index_copy`, `random_f64`, `arg_extreme`, `cumsum`, `compare.cu` and
//! `math.cu`, which are newer, have also run on an H100 (`scripts/gpu-run.sh`); the
//! emulation keeps them checked where no GPU is.
//!
//! Without a C++ compiler the test prints one `SKIP` line and passes, unless
//! `CTENSOR_REQUIRE_CXX=1`.
#![cfg(feature = "cuda")]
#![deny(unused_must_use)]

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{random_vec, rng, TestResult};
use ctensor_base::{c32, c64, CpuDevice, Scalar};
use ctensor_kernels::blas::MatMul;
use ctensor_kernels::blas::Trans;
use ctensor_kernels::compare::{Class, Classify, CmpOp, Compare, Extreme2, Select};
use ctensor_kernels::elementwise::math::{BinaryMath, BinaryMathOp, Math, MathOp, MathScalar};
use ctensor_kernels::elementwise::{Abs, Add, Conj, Div, EqScalar, Fma, Mul};
use ctensor_kernels::gpu::source::SOURCES;
use ctensor_kernels::lapack::{FindNonFinite, Part, SetMatrix, Uplo};
use ctensor_kernels::memory::{CastMemory, SetMemory};
use ctensor_kernels::permute::Transpose;
use ctensor_kernels::random::{Distribution, FillRandom};
use ctensor_kernels::reduce::{ArgExtreme, CumSum, Reduce, ReduceExtreme};
use ctensor_kernels::select::{IndexCopy, IndexSelect};
use rand::Rng;

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The shim, then the source (prelude + kernels), then a driver that runs one kernel
/// named on the command line over raw little-endian inputs from stdin.
const HARNESS: &str = r#"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <functional>
#include <vector>
#define __device__
#define __global__
#define __shared__ static
#define __align__(n) alignas(n)
struct CtDim3 { unsigned x, y, z; };
CtDim3 blockIdx, threadIdx, blockDim, gridDim;
void __syncthreads();
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

// Kernels with barriers run cooperatively: every GPU thread of a block is a coroutine
// with its own stack; __syncthreads() switches back to the scheduler, which resumes
// the block's threads one after the other (ascending or descending thread index) until
// each reaches its next barrier or returns. Blocks run one at a time, so the
// function-static __shared__ arrays are the block's shared memory, and a missing
// barrier shows as a result that depends on the order.
#if !defined(__x86_64__)
#error "the cooperative launch switches stacks with x86-64 code"
#endif
// Saves the callee-saved registers on the current stack, stores the stack pointer in
// *from, switches to the stack `to` and restores its registers (System V x86-64).
extern "C" void ct_switch(void** from, void* to);
asm(".text\n.globl ct_switch\n.type ct_switch,@function\nct_switch:\n"
    "pushq %rbp\npushq %rbx\npushq %r12\npushq %r13\npushq %r14\npushq %r15\n"
    "movq %rsp, (%rdi)\nmovq %rsi, %rsp\n"
    "popq %r15\npopq %r14\npopq %r13\npopq %r12\npopq %rbx\npopq %rbp\nret\n");
static const size_t CT_STACK = 64 * 1024;
static std::vector<char> ct_stacks;
static std::vector<void*> ct_sp;
static std::vector<char> ct_done;
static void* ct_sched_sp;
static unsigned ct_cur;
static std::function<void()>* ct_body;
static void ct_thread_main() {
    (*ct_body)();
    ct_done[ct_cur] = 1;
    ct_switch(&ct_sp[ct_cur], ct_sched_sp);
    abort();  // a finished thread is never resumed
}
void __syncthreads() { ct_switch(&ct_sp[ct_cur], ct_sched_sp); }
static void ct_launch(CtDim3 grid, CtDim3 block, int reverse, std::function<void()> f) {
    unsigned nt = block.x * block.y * block.z;
    ct_stacks.assign((size_t)nt * CT_STACK, 0);
    ct_sp.assign(nt, nullptr);
    ct_done.assign(nt, 0);
    ct_body = &f;
    gridDim = grid;
    blockDim = block;
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++) {
                blockIdx = {bx, by, bz};
                for (unsigned t = 0; t < nt; t++) {
                    // A fresh stack: six zero registers, then ct_thread_main as the
                    // return address, aligned as at a function's entry.
                    void** top = (void**)((uintptr_t)(ct_stacks.data() + (size_t)(t + 1) * CT_STACK) & ~(uintptr_t)15);
                    top[-1] = nullptr;
                    top[-2] = (void*)&ct_thread_main;
                    for (int r = 3; r <= 8; r++) top[-r] = nullptr;
                    ct_sp[t] = (void*)(top - 8);
                    ct_done[t] = 0;
                }
                unsigned left = nt;
                while (left) {
                    for (unsigned k = 0; k < nt; k++) {
                        unsigned t = reverse ? nt - 1 - k : k;
                        if (ct_done[t]) continue;
                        ct_cur = t;
                        threadIdx = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
                        ct_switch(&ct_sched_sp, ct_sp[t]);
                        if (ct_done[t]) left--;
                    }
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
    if (!strcmp(k, "set_" #S)) { auto v = input<T>(1); std::vector<T> y(n);                        \
        launch_1d(n, rev, [&] { set_##S(n, v[0], y.data()); });                                    \
        output(y); return 0; }                                                                     \
    if (!strcmp(k, "eq_scalar_" #S)) { auto v = input<T>(1); auto x = input<T>(n); std::vector<T> y(n); \
        launch_1d(n, rev, [&] { eq_scalar_##S(n, x.data(), v[0], y.data()); });                    \
        output(y); return 0; }
    CT_ALL_TYPES(CT_EMU_BINARY)
#define CT_EMU_ABS(S, T, R)                                                                    \
    if (!strcmp(k, "abs_" #S)) { auto x = input<T>(n); std::vector<R> y(n);                        \
        launch_1d(n, rev, [&] { abs_##S(n, x.data(), y.data()); });                                \
        output(y); return 0; }
    CT_EMU_ABS(f32, float, float) CT_EMU_ABS(f64, double, double) CT_EMU_ABS(i32, int, int)
    CT_EMU_ABS(i64, i64, i64) CT_EMU_ABS(c32, ct_c32, float) CT_EMU_ABS(c64, ct_c64, double)
    CT_EMU_ABS(f16, ct_f16, ct_f16) CT_EMU_ABS(bf16, ct_bf16, ct_bf16)
#define CT_EMU_ANY_ZERO(S, T)                                                                  \
    if (!strcmp(k, "any_zero_" #S)) { auto x = input<T>(n); std::vector<u64> first(1, 0);         \
        launch_1d(n, rev, [&] { any_zero_##S(n, x.data(), first.data()); }); output(first); return 0; }
    CT_INTS(CT_EMU_ANY_ZERO)
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
#define CT_EMU_NONFINITE(S, T)                                                                 \
        if (!strcmp(k, "nonfinite_" #S)) { auto a = input<T>(n);                                   \
            launch_1d(m * cols, rev, [&] { nonfinite_##S(part, m, cols, a.data(), lda, first.data()); }); \
            output(first); return 0; }
        CT_FLOATING(CT_EMU_NONFINITE)
        return 3;
    }
#endif
#ifdef CT_LAYOUT
    // copy_strided_<t> n: stdin CtDims, conj (i32), then src and dst, each as its
    // length (u64) and elements; writes dst.
    // set_strided_<t> n: stdin CtDims, the value, dst as length and elements.
    // set_matrix_<t> span keep_upper order lda: stdin the span elements of a.
    // transpose2d_<t> n rows cols conj gx gy bx by: stdin the n source elements.
    // index_select_<t> n outer size inner nidx: stdin the nidx indices (i64), then the
    // outer·size·inner source elements; n = outer·nidx·inner (the launch size).
#define CT_EMU_LAYOUT(S, T)                                                                    \
    if (!strcmp(k, "copy_strided_" #S)) { auto d = input<CtDims>(1); auto c = input<int>(1);   \
        auto sl = input<u64>(1); auto src = input<T>(sl[0]);                                   \
        auto dl = input<u64>(1); auto dst = input<T>(dl[0]);                                   \
        launch_1d(n, rev, [&] { copy_strided_##S(n, d[0], src.data(), dst.data(), c[0]); });   \
        output(dst); return 0; }                                                               \
    if (!strcmp(k, "set_strided_" #S)) { auto d = input<CtDims>(1); auto v = input<T>(1);      \
        auto dl = input<u64>(1); auto dst = input<T>(dl[0]);                                   \
        launch_1d(n, rev, [&] { set_strided_##S(n, d[0], v[0], dst.data()); });                \
        output(dst); return 0; }                                                               \
    if (!strcmp(k, "set_matrix_" #S) && argc >= 7) { int up = atoi(argv[4]);                   \
        u64 m = strtoull(argv[5], 0, 10), lda = strtoull(argv[6], 0, 10); auto a = input<T>(n); \
        launch_1d(m * m, rev, [&] { set_matrix_##S(up, m, a.data(), lda); });                  \
        output(a); return 0; }                                                                 \
    if (!strcmp(k, "index_select_" #S) && argc >= 8) {                                         \
        u64 o = strtoull(argv[4], 0, 10), sz = strtoull(argv[5], 0, 10);                       \
        u64 in = strtoull(argv[6], 0, 10), ni = strtoull(argv[7], 0, 10);                      \
        auto idx = input<i64>(ni); auto src = input<T>(o * sz * in); std::vector<T> dst(n);    \
        launch_1d(n, rev, [&] { index_select_##S(o, sz, in, idx.data(), ni, src.data(), dst.data()); }); \
        output(dst); return 0; }                                                               \
    if (!strcmp(k, "index_copy_" #S) && argc >= 8) {                                           \
        u64 o = strtoull(argv[4], 0, 10), sz = strtoull(argv[5], 0, 10);                       \
        u64 in = strtoull(argv[6], 0, 10), ni = strtoull(argv[7], 0, 10);                      \
        auto idx = input<i64>(ni); auto src = input<T>(n); auto dst = input<T>(o * sz * in);   \
        launch_1d(n, rev, [&] { index_copy_##S(o, sz, in, idx.data(), ni, src.data(), dst.data()); }); \
        output(dst); return 0; }                                                               \
    if (!strcmp(k, "transpose2d_" #S) && argc >= 11) {                                         \
        u64 r = strtoull(argv[4], 0, 10), c = strtoull(argv[5], 0, 10); int cj = atoi(argv[6]); \
        CtDim3 g = {(unsigned)atoi(argv[7]), (unsigned)atoi(argv[8]), 1};                      \
        CtDim3 b = {(unsigned)atoi(argv[9]), (unsigned)atoi(argv[10]), 1};                     \
        auto src = input<T>(n); std::vector<T> dst(n);                                         \
        ct_launch(g, b, rev, [&] { transpose2d_##S(r, c, src.data(), dst.data(), cj); });      \
        output(dst); return 0; }
    CT_ALL_TYPES(CT_EMU_LAYOUT)
#endif
#ifdef CT_REDUCE
    // reduce_sum_<t> n rows inner grid, reduce_extreme_<t> n rows inner grid max: stdin
    // the n = rows·inner elements; writes the rows results. Blocks of 256 threads.
#define CT_EMU_SUM(S, T)                                                                       \
    if (!strcmp(k, "reduce_sum_" #S) && argc >= 7) {                                           \
        u64 rows = strtoull(argv[4], 0, 10), inner = strtoull(argv[5], 0, 10);                \
        CtDim3 g = {(unsigned)atoi(argv[6]), 1, 1};                                            \
        auto src = input<T>(n); std::vector<T> dst(rows);                                      \
        ct_launch(g, {256, 1, 1}, rev, [&] { reduce_sum_##S(rows, inner, src.data(), dst.data()); }); \
        output(dst); return 0; }
    CT_ALL_TYPES(CT_EMU_SUM)
#define CT_EMU_EXTREME(S, T)                                                                   \
    if (!strcmp(k, "reduce_extreme_" #S) && argc >= 8) {                                       \
        u64 rows = strtoull(argv[4], 0, 10), inner = strtoull(argv[5], 0, 10);                \
        CtDim3 g = {(unsigned)atoi(argv[6]), 1, 1}; int mx = atoi(argv[7]);                    \
        auto src = input<T>(n); std::vector<T> dst(rows);                                      \
        ct_launch(g, {256, 1, 1}, rev, [&] { reduce_extreme_##S(mx, rows, inner, src.data(), dst.data()); }); \
        output(dst); return 0; }
    CT_ORDERED(CT_EMU_EXTREME)
    // arg_extreme_<t> n rows inner grid max: stdin the n = rows·inner elements; writes
    // the rows indices (i64). cumsum_<t> n rows inner grid: writes the n running sums,
    // computed in place when argv[7] is 1.
#define CT_EMU_ARG(S, T)                                                                       \
    if (!strcmp(k, "arg_extreme_" #S) && argc >= 8) {                                          \
        u64 rows = strtoull(argv[4], 0, 10), inner = strtoull(argv[5], 0, 10);                \
        CtDim3 g = {(unsigned)atoi(argv[6]), 1, 1}; int mx = atoi(argv[7]);                    \
        auto src = input<T>(n); std::vector<i64> dst(rows);                                    \
        ct_launch(g, {256, 1, 1}, rev, [&] { arg_extreme_##S(mx, rows, inner, src.data(), dst.data()); }); \
        output(dst); return 0; }
    CT_ORDERED(CT_EMU_ARG)
#define CT_EMU_CUMSUM(S, T)                                                                    \
    if (!strcmp(k, "cumsum_" #S) && argc >= 8) {                                               \
        u64 rows = strtoull(argv[4], 0, 10), inner = strtoull(argv[5], 0, 10);                \
        CtDim3 g = {(unsigned)atoi(argv[6]), 1, 1}; int inplace = atoi(argv[7]);               \
        auto src = input<T>(n); std::vector<T> dst(n);                                         \
        T* d = inplace ? src.data() : dst.data();                                              \
        ct_launch(g, {256, 1, 1}, rev, [&] { cumsum_##S(rows, inner, src.data(), d); });       \
        output(inplace ? src : dst); return 0; }
    CT_ALL_TYPES(CT_EMU_CUMSUM)
#endif
#ifdef CT_MATMUL
    // matmul_<t> n ta tb m nn k lda ldb ldc beta_zero: stdin alpha, beta, then a, b, c,
    // each as its length (u64) and elements; n = m·nn (the launch size); writes c.
#define CT_EMU_MATMUL(S, T)                                                                    \
    if (!strcmp(k, "matmul_" #S) && argc >= 13) {                                              \
        int ta = atoi(argv[4]), tb = atoi(argv[5]);                                            \
        u64 m = strtoull(argv[6], 0, 10), nn = strtoull(argv[7], 0, 10), kk = strtoull(argv[8], 0, 10); \
        u64 lda = strtoull(argv[9], 0, 10), ldb = strtoull(argv[10], 0, 10), ldc = strtoull(argv[11], 0, 10); \
        int bz = atoi(argv[12]); auto s = input<T>(2);                                         \
        auto al = input<u64>(1); auto a = input<T>(al[0]);                                     \
        auto bl = input<u64>(1); auto b = input<T>(bl[0]);                                     \
        auto cl = input<u64>(1); auto c = input<T>(cl[0]);                                     \
        launch_1d(n, rev, [&] { matmul_##S(ta, tb, m, nn, kk, s[0], a.data(), lda, b.data(), ldb, s[1], c.data(), ldc, bz); }); \
        output(c); return 0; }
    CT_INTS(CT_EMU_MATMUL) CT_EMU_MATMUL(f16, ct_f16) CT_EMU_MATMUL(bf16, ct_bf16)
#endif
#ifdef CT_COMPARE
    // compare_<t> n op, classify_<t> n what, select_<t> n, extreme2_<t> n max: stdin the
    // inputs (x, y as n elements each; select's i32 mask first); writes the n results.
    if (argc >= 5) {
        int code = atoi(argv[4]);
#define CT_EMU_COMPARE(S, T)                                                                   \
        if (!strcmp(k, "compare_" #S)) { auto x = input<T>(n); auto y = input<T>(n); std::vector<int> o(n); \
            launch_1d(n, rev, [&] { compare_##S(n, code, x.data(), y.data(), o.data()); }); output(o); return 0; } \
        if (!strcmp(k, "classify_" #S)) { auto x = input<T>(n); std::vector<int> o(n);           \
            launch_1d(n, rev, [&] { classify_##S(n, code, x.data(), o.data()); }); output(o); return 0; }
        CT_ALL_TYPES(CT_EMU_COMPARE)
#define CT_EMU_EXTREME2(S, T)                                                                  \
        if (!strcmp(k, "extreme2_" #S)) { auto x = input<T>(n); auto y = input<T>(n); std::vector<T> o(n); \
            launch_1d(n, rev, [&] { extreme2_##S(n, code, x.data(), y.data(), o.data()); }); output(o); return 0; }
        CT_ORDERED(CT_EMU_EXTREME2)
    }
#define CT_EMU_SELECT(S, T)                                                                    \
    if (!strcmp(k, "select_" #S)) { auto m = input<int>(n); auto x = input<T>(n); auto y = input<T>(n); \
        std::vector<T> o(n); launch_1d(n, rev, [&] { select_##S(n, m.data(), x.data(), y.data(), o.data()); }); \
        output(o); return 0; }
    CT_ALL_TYPES(CT_EMU_SELECT)
#endif
#ifdef CT_MATH
    // math_<t> n op: stdin the n inputs; writes the n results.
#define CT_EMU_MATH(S, T)                                                                      \
    if (!strcmp(k, "math_" #S) && argc >= 5) { int op = atoi(argv[4]); auto x = input<T>(n); std::vector<T> y(n); \
        launch_1d(n, rev, [&] { math_##S(n, op, x.data(), y.data()); }); output(y); return 0; }
    CT_ALL_TYPES(CT_EMU_MATH)
    // binary_math_<t> n op: stdin the n first then the n second arguments; writes the n results.
#define CT_EMU_BINARY_MATH(S, T)                                                               \
    if (!strcmp(k, "binary_math_" #S) && argc >= 5) { int op = atoi(argv[4]); auto x = input<T>(n); \
        auto y = input<T>(n); std::vector<T> o(n);                                                 \
        launch_1d(n, rev, [&] { binary_math_##S(n, op, x.data(), y.data(), o.data()); });          \
        output(o); return 0; }
    CT_ALL_TYPES(CT_EMU_BINARY_MATH)
#endif
#ifdef CT_RANDOM
    // random_f64 n normal bits seed offset: writes the n values.
    if (!strcmp(k, "random_f64") && argc >= 8) {
        int nm = atoi(argv[4]), b = atoi(argv[5]);
        u64 seed = strtoull(argv[6], 0, 10), off = strtoull(argv[7], 0, 10);
        std::vector<double> y(n);
        launch_1d(n, rev, [&] { random_f64(n, nm, b, seed, off, y.data()); });
        output(y); return 0; }
#endif
    fprintf(stderr, "unknown kernel %s\n", k);
    return 3;
}
"#;

/// A host build of one kernel source, or `None` (SKIP) without a C++ compiler.
struct Emulator {
    exe: std::path::PathBuf,
    dir: std::path::PathBuf,
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
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
        // One folder per build: tests running at once may build the same source.
        static BUILDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let build = BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "ctensor-emu-{}-{source}-{build}",
            std::process::id()
        ));
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
        Some(Emulator { exe, dir })
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
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("{kernel}: cannot start the emulator: {e}"));
            // A harness that stops reading early fails below with its own message.
            let fed = child.stdin.take().unwrap().write_all(input);
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success() && fed.is_ok(),
                "{kernel}: the emulated kernel failed ({}, input {fed:?}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            outs.push(out.stdout);
        }
        let first_difference = outs[0].iter().zip(&outs[1]).position(|(a, b)| a != b);
        assert!(
            outs[0] == outs[1],
            "{kernel}: the result depends on the order of threads (lengths {} and {}, first \
             differing byte {first_difference:?})",
            outs[0].len(),
            outs[1].len()
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
fn sqrt_matches_the_cpu<T: MathScalar>(emu: &Emulator, kernel: &str) -> TestResult
where
    CpuDevice: Math<T>,
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
    let code = [MathOp::Sqrt.code().to_string()];
    let got: Vec<T> = from_bytes(&emu.run(kernel, x.len(), &code, bytes(&x)));
    let mut want = vec![T::zero(); x.len()];
    // SAFETY: both hold x.len() elements.
    unsafe { CpuDevice::math(MathOp::Sqrt, x.len(), x.as_ptr(), want.as_mut_ptr()) }?;
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
    Ok(())
}

/// `add`, `mul`, `fma`, `div`, `scale`, `conj` and `neg` on the emulated GPU against
/// the CPU kernels, bit for bit.
fn binary_ops_match_the_cpu<T: Scalar>(emu: &Emulator) -> TestResult
where
    CpuDevice: Add<T> + Mul<T> + Fma<T> + Div<T> + Conj<T> + SetMemory<T> + EqScalar<T> + Abs<T>,
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
        let cases: [(&str, Vec<u8>); 8] = [
            ("set", input(&[&ab[..1]])),
            ("eq_scalar", input(&[std::slice::from_ref(&probe), x])),
            ("add", input(&[ab, x, y])),
            ("mul", input(&[ab, x, y])),
            ("fma", input(&[ab, x, y, z])),
            ("div", input(&[ab, x, &d])),
            ("scale", input(&[ab, x])),
            ("conj", input(&[x])),
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
                    "set" => CpuDevice::set(want.as_mut_ptr(), alpha, n),
                    "eq_scalar" => CpuDevice::eq_scalar(n, x.as_ptr(), probe, want.as_mut_ptr()),
                    other => unreachable!("no CPU reference for {other}"),
                }
            }?;
            let got = emu.run(&format!("{op}_{s}"), n, &[], &inp);
            assert_eq!(got, bytes(&want), "{op}_{s}, n = {n}: GPU and CPU differ");
        }
        // |x| in the real type (the modulus for complex).
        let mut want_abs = vec![<T::Real as Scalar>::zero(); n];
        // SAFETY: `x` holds n elements, `want_abs` n reals.
        unsafe { CpuDevice::abs(n, x.as_ptr(), want_abs.as_mut_ptr()) }?;
        let got = emu.run(&format!("abs_{s}"), n, &[], bytes(x));
        assert_eq!(
            got,
            bytes(&want_abs),
            "abs_{s}, n = {n}: GPU and CPU differ"
        );
    }
    Ok(())
}

/// `add`, `mul`, `fma`, `div` and `scale` with factors `1`, `-1`, `2.5` and `0.5 + 2i` on
/// inputs whose parts are infinite, NaN or signed zeros (every pair of 7 × 7 special
/// values), against the CPU kernels ([`same`]: NaN matches NaN, signed zeros told
/// apart). A factor with a zero imaginary part scales as a real number on both sides
/// (`ct_factor`, `Arith::scale`), so `1·(0 + ∞i)` stays `0 + ∞i` rather than `NaN + ∞i`.
fn factors_on_special_values_match_the_cpu<T: Scalar>(emu: &Emulator) -> TestResult
where
    CpuDevice: Add<T> + Mul<T> + Fma<T> + Div<T>,
{
    let s = suffix(T::DTYPE);
    let [x, y, z] = common::special_value_operands()
        .map(|v| v.into_iter().map(T::cast_from).collect::<Vec<T>>());
    let n = x.len();
    let factors = [(1.0, 0.0), (-1.0, 0.0), (2.5, 0.0), (0.5, 2.0)]
        .map(|(re, im)| T::cast_from(c64::new(re, im)));
    for alpha in factors {
        for beta in [T::one(), T::cast_from(c64::new(-3.0, 0.0))] {
            let ab = [alpha, beta];
            let input = |p: &[&[T]]| {
                p.iter()
                    .flat_map(|v| bytes(v).to_vec())
                    .collect::<Vec<u8>>()
            };
            for op in ["add", "mul", "fma", "div", "scale"] {
                let mut want = vec![T::zero(); n];
                let w = want.as_mut_ptr();
                // SAFETY: every buffer holds n elements.
                unsafe {
                    match op {
                        "add" => CpuDevice::add(n, alpha, x.as_ptr(), beta, y.as_ptr(), w),
                        "mul" => CpuDevice::mul(n, alpha, x.as_ptr(), y.as_ptr(), w),
                        "fma" => {
                            CpuDevice::fma(n, alpha, x.as_ptr(), y.as_ptr(), beta, z.as_ptr(), w)
                        }
                        "div" => CpuDevice::div(n, alpha, x.as_ptr(), y.as_ptr(), w),
                        _ => CpuDevice::scale(n, alpha, x.as_ptr(), w),
                    }
                }?;
                let inp = match op {
                    "add" | "mul" | "div" => input(&[&ab, &x, &y]),
                    "fma" => input(&[&ab, &x, &y, &z]),
                    _ => input(&[&ab, &x]),
                };
                let got: Vec<T> = from_bytes(&emu.run(&format!("{op}_{s}"), n, &[], &inp));
                let what = format!("{op}_{s}, alpha {}, beta {}", alpha.to_c64(), beta.to_c64());
                assert_all_same(&got, &want, &what);
            }
        }
    }
    Ok(())
}

/// `exp` on the emulated GPU against the CPU kernel: the host's libm on both sides, so
/// within a few units in the last place (the CUDA library's own `exp` differs on a GPU).
fn exp_matches_the_cpu<T: MathScalar>(emu: &Emulator) -> TestResult
where
    CpuDevice: Math<T>,
{
    let s = suffix(T::DTYPE);
    let mut r = rng(13);
    let x: Vec<T> = (0..1000)
        .map(|_| T::cast_from(c64::new(r.gen_range(-20.0..20.0), r.gen_range(-10.0..10.0))))
        .collect();
    let code = [MathOp::Exp.code().to_string()];
    let got: Vec<T> = from_bytes(&emu.run(&format!("math_{s}"), x.len(), &code, bytes(&x)));
    let mut want = vec![T::zero(); x.len()];
    // SAFETY: both hold 1000 elements.
    unsafe { CpuDevice::math(MathOp::Exp, x.len(), x.as_ptr(), want.as_mut_ptr()) }?;
    assert_eq!(got.len(), want.len(), "exp {s}: output length");
    let tol = 8.0 * common::eps::<T>().max(f64::EPSILON);
    for ((g, w), z) in got.iter().zip(&want).zip(&x) {
        let (g, w) = (g.to_c64(), w.to_c64());
        assert!(
            (g - w).norm() <= tol * w.norm().max(1e-300),
            "exp {s}({}): GPU {g} vs CPU {w}",
            z.to_c64()
        );
    }
    Ok(())
}

fn suffix(dt: ctensor_base::DataType) -> &'static str {
    ctensor_kernels::gpu::source::suffix(dt)
}

#[test]
fn emulated_elementwise_kernels_match_the_cpu() -> TestResult {
    let Some(emu) = Emulator::build("elementwise", "CT_ELEMENTWISE") else {
        return Ok(());
    };
    binary_ops_match_the_cpu::<f32>(&emu)?;
    binary_ops_match_the_cpu::<f64>(&emu)?;
    binary_ops_match_the_cpu::<i32>(&emu)?;
    binary_ops_match_the_cpu::<i64>(&emu)?;
    binary_ops_match_the_cpu::<c32>(&emu)?;
    binary_ops_match_the_cpu::<c64>(&emu)?;
    binary_ops_match_the_cpu::<ctensor_base::f16>(&emu)?;
    binary_ops_match_the_cpu::<ctensor_base::bf16>(&emu)?;
    factors_on_special_values_match_the_cpu::<f32>(&emu)?;
    factors_on_special_values_match_the_cpu::<f64>(&emu)?;
    factors_on_special_values_match_the_cpu::<c32>(&emu)?;
    factors_on_special_values_match_the_cpu::<c64>(&emu)?;
    factors_on_special_values_match_the_cpu::<ctensor_base::f16>(&emu)?;
    factors_on_special_values_match_the_cpu::<ctensor_base::bf16>(&emu)?;
    // any_zero_i64 on a small input (the grid-stride round is the i32 case's below).
    let x: Vec<i64> = vec![3, -1, 0, 7, 0, i64::MIN];
    let got: Vec<u64> = from_bytes(&emu.run("any_zero_i64", x.len(), &[], bytes(&x)));
    assert_eq!(
        got,
        [(x.len() - 2) as u64],
        "any_zero_i64: the first zero is at 2"
    );
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
    Ok(())
}

/// Real `sqrt` (f32, f64, f16, bf16) against the CPU kernel, bit for bit: IEEE square
/// roots are correctly rounded, and the 16-bit types round once from f32. Negative
/// values, signed zeros, subnormals, infinities and NaN included.
fn real_sqrt_matches_the_cpu<T: MathScalar>(emu: &Emulator) -> TestResult
where
    CpuDevice: Math<T>,
{
    let mut r = rng(37);
    let mut x: Vec<T> = (0..2000)
        .map(|_| T::cast_from(r.gen_range(0.0..1.0f64) * 10f64.powi(r.gen_range(-30..30))))
        .collect();
    for v in [
        0.0,
        -0.0,
        -1.0,
        1e-310,
        5.9e-8,
        1e-40,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        2.0,
    ] {
        x.push(T::cast_from(v));
    }
    let kernel = format!("math_{}", suffix(T::DTYPE));
    let code = [MathOp::Sqrt.code().to_string()];
    let got: Vec<T> = from_bytes(&emu.run(&kernel, x.len(), &code, bytes(&x)));
    let mut want = vec![T::zero(); x.len()];
    // SAFETY: both hold x.len() elements.
    unsafe { CpuDevice::math(MathOp::Sqrt, x.len(), x.as_ptr(), want.as_mut_ptr()) }?;
    assert_all_same(&got, &want, &kernel);
    Ok(())
}

fn nonfinite_matches_the_cpu<T: Scalar>(emu: &Emulator, kernel: &str) -> TestResult
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
                let want = unsafe { CpuDevice::find_non_finite(part, m, cols, a.as_ptr(), lda) }?;
                let want = want.map_or(0, |(i, j, _)| (m * cols - (i + j * m)) as u64);
                assert_eq!(
                    got,
                    [want],
                    "{kernel} {m}×{cols} ld {lda} {part:?} trial {trial}"
                );
            }
        }
    }
    Ok(())
}

/// One cast `S → D` on the emulated GPU against the CPU's, on random values and the
/// values casts get wrong (signed zeros, ties of the 16-bit types, the ends of every
/// integer and float range, infinities and NaN): equal bit for bit, except that any NaN
/// matches any NaN.
fn cast_pair<D: Scalar, S: Scalar>(emu: &Emulator) -> TestResult
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
    unsafe { CpuDevice::cast(want.as_mut_ptr(), x.as_ptr(), x.len()) }?;
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
    Ok(())
}

macro_rules! every_cast {
    ($emu:expr; $($d:ty),*) => {
        $( every_cast!(@from $emu, $d; f32, f64, i32, i64, c32, c64, ctensor_base::f16, ctensor_base::bf16); )*
    };
    (@from $emu:expr, $d:ty; $($s:ty),*) => {
        $( common::Outcome::outcome(cast_pair::<$d, $s>($emu))?; )*
    };
}

#[test]
fn emulated_casts_match_the_cpu_for_all_64_pairs() -> TestResult {
    let Some(emu) = Emulator::build("cast", "CT_CAST") else {
        return Ok(());
    };
    every_cast!(&emu; f32, f64, i32, i64, c32, c64, ctensor_base::f16, ctensor_base::bf16);
    Ok(())
}

#[test]
fn emulated_nonfinite_scan_matches_the_cpu() -> TestResult {
    let Some(emu) = Emulator::build("layout", "CT_LAYOUT") else {
        return Ok(());
    };
    nonfinite_matches_the_cpu::<c32>(&emu, "nonfinite_c32")?;
    nonfinite_matches_the_cpu::<ctensor_base::f16>(&emu, "nonfinite_f16")?;
    nonfinite_matches_the_cpu::<ctensor_base::bf16>(&emu, "nonfinite_bf16")?;
    nonfinite_matches_the_cpu::<f64>(&emu, "nonfinite_f64")?;
    nonfinite_matches_the_cpu::<f32>(&emu, "nonfinite_f32")?;
    nonfinite_matches_the_cpu::<c64>(&emu, "nonfinite_c64")?;
    Ok(())
}

/// Launch arguments as command-line words.
fn words(v: &[u64]) -> Vec<String> {
    v.iter().map(u64::to_string).collect()
}

/// An array as the harness reads a variable-length input: its length (u64), then the
/// elements.
fn with_len<T>(v: &[T]) -> Vec<u8> {
    let mut out = (v.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(bytes(v));
    out
}

/// Bitwise equality, NaNs of either sign and payload counting as equal.
fn same<T: Scalar>(a: T, b: T) -> bool {
    let (x, y) = (a.to_c64(), b.to_c64());
    let part = |p: f64, q: f64| p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan());
    bytes(std::slice::from_ref(&a)) == bytes(std::slice::from_ref(&b))
        || (part(x.re, y.re) && part(x.im, y.im))
}

/// `got` equals `want` element by element ([`same`]), with `what` naming the case and
/// the first element that differs.
fn assert_all_same<T: Scalar>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: output length");
    if let Some(k) = got.iter().zip(want).position(|(g, w)| !same(*g, *w)) {
        panic!(
            "{what}: element {k} is {} on the GPU, {} on the CPU",
            got[k].to_c64(),
            want[k].to_c64()
        );
    }
}

/// The launch constants the harness hard-codes are the ones the GPU code uses.
fn harness_constants_match_the_gpu_code() {
    use ctensor_kernels::gpu::emulation::{grid_1d, reduce_grid, BLOCK, MAX_GRID};
    assert_eq!((BLOCK, MAX_GRID), (256, 65_535), "launch_1d in HARNESS");
    assert_eq!(
        [grid_1d(0), grid_1d(1), grid_1d(257), grid_1d(usize::MAX)],
        [1, 1, 2, 65_535]
    );
    assert_eq!(
        [reduce_grid(0), reduce_grid(7), reduce_grid(1 << 20)],
        [1, 7, 65_535]
    );
}

/// A transpose as the GPU code plans it (the tiled kernel with its 2-D grid, or the
/// strided copy with its merged descriptor) against the CPU kernel, bit for bit.
/// Returns whether the tiled kernel ran.
fn transpose_matches_the_cpu<T: Scalar>(
    emu: &Emulator,
    shape: &[usize],
    perm: &[usize],
    conj: bool,
) -> Fallible<bool>
where
    CpuDevice: Transpose<T>,
{
    Ok({
        use ctensor_kernels::gpu::emulation::{transpose_plan, TransposePlan};
        let n: usize = shape.iter().product();
        let x: Vec<T> = random_vec(&mut rng(n as u64 + 11), n);
        let mut want = vec![T::zero(); n];
        // SAFETY: both hold the n elements of `shape`.
        unsafe { CpuDevice::transpose(shape, perm, x.as_ptr(), want.as_mut_ptr(), conj) }?;
        let s = suffix(T::DTYPE);
        let (got, tiled): (Vec<T>, bool) = match transpose_plan("transpose", shape, perm)? {
            TransposePlan::Tiled {
                rows,
                cols,
                grid,
                block,
            } => {
                assert_eq!((grid.2, block.2), (1, 1), "a 2-D launch");
                let args = words(&[
                    rows,
                    cols,
                    conj as u64,
                    grid.0.into(),
                    grid.1.into(),
                    block.0.into(),
                    block.1.into(),
                ]);
                let out = emu.run(&format!("transpose2d_{s}"), n, &args, bytes(&x));
                (from_bytes(&out), true)
            }
            TransposePlan::Strided(dims) => {
                let mut input = dims.as_bytes().to_vec();
                input.extend_from_slice(&(conj as i32).to_le_bytes());
                input.extend(with_len(&x));
                input.extend(with_len(&vec![T::zero(); n]));
                let out = emu.run(&format!("copy_strided_{s}"), n, &[], &input);
                (from_bytes(&out), false)
            }
        };
        let what = format!(
            "{} transpose {shape:?} by {perm:?} (conj {conj}, tiled {tiled})",
            T::DTYPE
        );
        assert_all_same(&got, &want, &what);
        tiled
    })
}

/// `set_strided` (a view with gaps) and `set_matrix` (both triangles, lda > n) against
/// the CPU, bit for bit; the elements outside the view or triangle must survive.
fn fills_match_the_cpu<T: Scalar>(emu: &Emulator) -> TestResult
where
    CpuDevice: SetMemory<T> + SetMatrix<T>,
{
    use ctensor_kernels::gpu::emulation::Dims;
    let s = suffix(T::DTYPE);
    let mut r = rng(5);
    let value: T = random_vec(&mut r, 1)[0];
    for (shape, strides) in [
        (vec![3usize, 4, 5], vec![40usize, 9, 1]),
        (vec![300], vec![3]),
        (vec![1, 257], vec![1000, 2]),
    ] {
        let span = 1 + shape
            .iter()
            .zip(&strides)
            .map(|(n, s)| (n - 1) * s)
            .sum::<usize>();
        let n: usize = shape.iter().product();
        let dst: Vec<T> = random_vec(&mut r, span);
        let mut want = dst.clone();
        // SAFETY: `want` spans the view.
        unsafe { CpuDevice::set_strided(want.as_mut_ptr(), &shape, &strides, value) }?;
        let dims = Dims::new("set_memory_strided", &shape, &strides, &strides)?;
        let mut input = dims.as_bytes().to_vec();
        input.extend_from_slice(bytes(std::slice::from_ref(&value)));
        input.extend(with_len(&dst));
        let got: Vec<T> = from_bytes(&emu.run(&format!("set_strided_{s}"), n, &[], &input));
        let what = format!(
            "{} set_strided {shape:?} with strides {strides:?}",
            T::DTYPE
        );
        assert_all_same(&got, &want, &what);
    }
    for n in [1usize, 7, 300] {
        for keep in [Uplo::Upper, Uplo::Lower] {
            let lda = n + 3;
            let span = lda * (n - 1) + n;
            let a: Vec<T> = random_vec(&mut r, span);
            let mut want = a.clone();
            // SAFETY: `want` holds the n × n matrix with leading dimension lda.
            unsafe { CpuDevice::set_matrix(keep, n, want.as_mut_ptr(), lda) }?;
            let args = words(&[(keep == Uplo::Upper) as u64, n as u64, lda as u64]);
            let got: Vec<T> =
                from_bytes(&emu.run(&format!("set_matrix_{s}"), span, &args, bytes(&a)));
            let what = format!("{} set_matrix n={n} keep {keep:?}", T::DTYPE);
            assert_all_same(&got, &want, &what);
        }
    }
    Ok(())
}

macro_rules! for_all_types {
    ($f:ident, $emu:expr) => {
        common::Outcome::outcome($f::<f32>($emu))?;
        common::Outcome::outcome($f::<f64>($emu))?;
        common::Outcome::outcome($f::<i32>($emu))?;
        common::Outcome::outcome($f::<i64>($emu))?;
        common::Outcome::outcome($f::<c32>($emu))?;
        common::Outcome::outcome($f::<c64>($emu))?;
        common::Outcome::outcome($f::<ctensor_base::f16>($emu))?;
        common::Outcome::outcome($f::<ctensor_base::bf16>($emu))?;
    };
}

fn transposes_of_one_type<T: Scalar>(emu: &Emulator) -> TestResult
where
    CpuDevice: Transpose<T>,
{
    let mut tiled = 0;
    for conj in [false, true] {
        for (shape, perm) in [
            (&[1usize, 1][..], &[1usize, 0][..]),
            (&[257, 300], &[1, 0]),
            (&[33, 1], &[1, 0]),
            (&[2, 31], &[1, 0]),
            (&[7, 3, 5], &[2, 0, 1]),
            (&[4, 5, 6, 7], &[3, 1, 0, 2]),
            (&[3, 40, 50], &[0, 2, 1]),
        ] {
            tiled += transpose_matches_the_cpu::<T>(emu, shape, perm, conj)? as usize;
        }
    }
    assert!(tiled >= 4, "the tiled kernel ran in {tiled} cases only");
    Ok(())
}

#[test]
fn emulated_layout_kernels_match_the_cpu() -> TestResult {
    harness_constants_match_the_gpu_code();
    let Some(emu) = Emulator::build("layout", "CT_LAYOUT") else {
        return Ok(());
    };
    for_all_types!(transposes_of_one_type, &emu);
    for_all_types!(fills_match_the_cpu, &emu);
    // More tiles than a grid holds (2 100 000 columns: 65 625 tiles > 65 535 blocks),
    // and a strided copy of more elements than 65 535 blocks of 256 threads cover, so
    // both grid-stride loops turn.
    assert!(transpose_matches_the_cpu::<f32>(
        &emu,
        &[2, 2_100_000],
        &[1, 0],
        false
    )?);
    assert!(!transpose_matches_the_cpu::<f32>(
        &emu,
        &[64, 256, 1025],
        &[1, 0, 2],
        false
    )?);
    Ok(())
}

/// A gather (`index_select`, repeats allowed) or a scatter (`index_copy`, distinct
/// indices in any order; the rows not written keep their values) on the "GPU" against
/// the CPU kernel.
fn index_move_matches_the_cpu<T: Scalar>(
    emu: &Emulator,
    scatter: bool,
    outer: usize,
    size: usize,
    inner: usize,
    nidx: usize,
) -> TestResult
where
    CpuDevice: IndexSelect<T> + IndexCopy<T>,
{
    let mut r = rng((outer * 31 + size * 7 + inner + nidx) as u64 + scatter as u64);
    let (big, small) = (outer * size * inner, outer * nidx * inner);
    let idx: Vec<i64> = if scatter {
        let mut perm: Vec<i64> = (0..size as i64).collect();
        for k in (1..perm.len()).rev() {
            perm.swap(k, r.gen_range(0..=k));
        }
        perm[..nidx].to_vec()
    } else {
        (0..nidx).map(|_| r.gen_range(0..size as i64)).collect()
    };
    let src: Vec<T> = random_vec(&mut r, if scatter { small } else { big });
    let mut want: Vec<T> = if scatter {
        random_vec(&mut r, big)
    } else {
        vec![T::zero(); small]
    };
    let mut input = bytes(&idx).to_vec();
    input.extend_from_slice(bytes(&src));
    if scatter {
        input.extend_from_slice(bytes(&want)); // the values the scatter leaves alone
    }
    let (sp, ip, wp) = (src.as_ptr(), idx.as_ptr(), want.as_mut_ptr());
    // SAFETY: sizes as allocated; indices in range (distinct when scattering).
    unsafe {
        if scatter {
            CpuDevice::index_copy(outer, size, inner, ip, nidx, sp, wp)
        } else {
            CpuDevice::index_select(outer, size, inner, ip, nidx, sp, wp)
        }
    }?;
    let name = if scatter {
        "index_copy"
    } else {
        "index_select"
    };
    let args = words(&[outer as u64, size as u64, inner as u64, nidx as u64]);
    let kernel = format!("{name}_{}", suffix(T::DTYPE));
    let got: Vec<T> = from_bytes(&emu.run(&kernel, small, &args, &input));
    let what = format!("{} {name} [{outer}, {size}, {inner}] by {nidx}", T::DTYPE);
    assert_all_same(&got, &want, &what);
    Ok(())
}

fn index_moves_of_one_type<T: Scalar>(emu: &Emulator) -> TestResult
where
    CpuDevice: IndexSelect<T> + IndexCopy<T>,
{
    for (outer, size, inner, nidx) in [(1, 1, 1, 1), (3, 9, 4, 7), (300, 9, 1, 4), (2, 17, 257, 3)]
    {
        for scatter in [false, true] {
            index_move_matches_the_cpu::<T>(emu, scatter, outer, size, inner, nidx)?;
        }
    }
    Ok(())
}

#[test]
fn emulated_index_select_and_copy_match_the_cpu() -> TestResult {
    let Some(emu) = Emulator::build("layout", "CT_LAYOUT") else {
        return Ok(());
    };
    for_all_types!(index_moves_of_one_type, &emu);
    // More elements than 65 535 blocks of 256 threads cover, so the grid-stride loop
    // turns (2-byte elements keep the pipe small).
    for scatter in [false, true] {
        index_move_matches_the_cpu::<ctensor_base::f16>(&emu, scatter, 4, 3, 4_200_000, 2)?;
    }
    Ok(())
}

/// Inputs that break comparisons: NaN, ±inf, signed zeros, ties, and random values.
fn hostile<T: Scalar>(n: usize, seed: u64) -> (Vec<T>, Vec<T>) {
    let mut r = rng(seed);
    let special = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.5,
    ];
    let pick = |r: &mut rand::rngs::StdRng| -> T {
        if r.gen_range(0..3) == 0 {
            let re = special[r.gen_range(0..special.len())];
            let im = special[r.gen_range(0..special.len())];
            T::cast_from(c64::new(re, im))
        } else {
            random_vec::<T>(r, 1)[0]
        }
    };
    let x: Vec<T> = (0..n).map(|_| pick(&mut r)).collect();
    // Every third y equals its x: ties.
    let y: Vec<T> = (0..n)
        .map(|i| if i % 3 == 0 { x[i] } else { pick(&mut r) })
        .collect();
    (x, y)
}

fn compares_of_one_type<T: Scalar>(emu: &Emulator) -> TestResult
where
    CpuDevice: Compare<T> + Classify<T> + Select<T> + Extreme2<T>,
{
    let s = suffix(T::DTYPE);
    let n = 3001;
    let (x, y) = hostile::<T>(n, 41);
    let mut input = bytes(&x).to_vec();
    input.extend_from_slice(bytes(&y));
    for op in [
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
        CmpOp::Eq,
        CmpOp::Ne,
    ] {
        if op.is_ordering() && T::DTYPE.is_complex() {
            continue;
        }
        let mut want = vec![0i32; n];
        // SAFETY: all hold n elements.
        unsafe { CpuDevice::compare(op, n, x.as_ptr(), y.as_ptr(), want.as_mut_ptr()) }?;
        let got: Vec<i32> =
            from_bytes(&emu.run(&format!("compare_{s}"), n, &[op.code().to_string()], &input));
        assert_eq!(got, want, "{} {op:?}", T::DTYPE);
    }
    for (what, code) in [(Class::Nan, 0), (Class::Finite, 1), (Class::Inf, 2)] {
        let mut want = vec![0i32; n];
        // SAFETY: as above.
        unsafe { CpuDevice::classify(what, n, x.as_ptr(), want.as_mut_ptr()) }?;
        let got: Vec<i32> =
            from_bytes(&emu.run(&format!("classify_{s}"), n, &[code.to_string()], bytes(&x)));
        assert_eq!(got, want, "{} {what:?}", T::DTYPE);
    }
    let mask: Vec<i32> = (0..n as i32).map(|i| (i * 7919) % 3 - 1).collect(); // -1, 0, 1
    let mut sel_in = bytes(&mask).to_vec();
    sel_in.extend_from_slice(&input);
    let mut want = vec![T::zero(); n];
    // SAFETY: as above.
    unsafe { CpuDevice::select(n, mask.as_ptr(), x.as_ptr(), y.as_ptr(), want.as_mut_ptr()) }?;
    let got: Vec<T> = from_bytes(&emu.run(&format!("select_{s}"), n, &[], &sel_in));
    assert_all_same(&got, &want, &format!("{} select", T::DTYPE));
    if !T::DTYPE.is_complex() {
        for max in [true, false] {
            let mut want = vec![T::zero(); n];
            // SAFETY: as above.
            unsafe { CpuDevice::extreme2(max, n, x.as_ptr(), y.as_ptr(), want.as_mut_ptr()) }?;
            let got: Vec<T> = from_bytes(&emu.run(
                &format!("extreme2_{s}"),
                n,
                &[(max as i32).to_string()],
                &input,
            ));
            assert_all_same(&got, &want, &format!("{} extreme2 max={max}", T::DTYPE));
        }
    }
    Ok(())
}

#[test]
fn emulated_comparisons_match_the_cpu() -> TestResult {
    let Some(emu) = Emulator::build("compare", "CT_COMPARE") else {
        return Ok(());
    };
    for_all_types!(compares_of_one_type, &emu);
    // More elements than 65 535 blocks of 256 threads cover: the grid-stride loop turns.
    let n = 65_535 * 256 + 999;
    let (x, _) = hostile::<ctensor_base::f16>(n, 5);
    let mut want = vec![0i32; n];
    // SAFETY: both hold n elements.
    unsafe { CpuDevice::classify(Class::Nan, n, x.as_ptr(), want.as_mut_ptr()) }?;
    let got: Vec<i32> = from_bytes(&emu.run("classify_f16", n, &["0".into()], bytes(&x)));
    assert_eq!(got, want, "classify_f16 over a turning grid");
    Ok(())
}

fn math_of_one_type<T: Scalar + MathScalar>(emu: &Emulator)
where
    CpuDevice: Math<T>,
{
    let s = suffix(T::DTYPE);
    let n = 2001;
    let (mut x, _) = hostile::<T>(n, 77);
    // Values near 0 (log1p, expm1), large imaginary parts (tan), and half-way points.
    for (k, v) in [1e-9, -3e-7, 0.5, 1.5, -2.5, 30.0, -45.0]
        .into_iter()
        .enumerate()
    {
        x[k] = T::cast_from(c64::new(v, v * 0.5));
    }
    // Every pair of special parts, deterministically (the hostile draw may miss some):
    // the branches of complex expm1 and sign at infinities, NaN and signed zeros.
    let specials = common::SPECIAL_PARTS;
    for (k, (re, im)) in specials
        .iter()
        .flat_map(|&re| specials.iter().map(move |&im| (re, im)))
        .enumerate()
    {
        x[10 + k] = T::cast_from(c64::new(re, im));
    }
    for op in MathOp::ALL {
        let mut want = vec![T::zero(); n];
        // SAFETY: both hold n elements.
        match unsafe { CpuDevice::math(op, n, x.as_ptr(), want.as_mut_ptr()) } {
            Ok(()) => {}
            Err(_) => continue, // not defined for T (refused the same way on the GPU side)
        }
        let got: Vec<T> =
            from_bytes(&emu.run(&format!("math_{s}"), n, &[op.code().to_string()], bytes(&x)));
        assert_all_same(&got, &want, &format!("{} {}", T::DTYPE, op.name()));
    }
}

/// Powers on the "GPU" against the CPU kernel: hostile bases against hostile exponents,
/// small integer exponents (repeated multiplication for complex), negative integer
/// exponents, zero bases.
fn binary_math_of_one_type<T: Scalar + MathScalar>(emu: &Emulator)
where
    CpuDevice: BinaryMath<T>,
{
    let s = suffix(T::DTYPE);
    let n = 3001;
    let (mut x, _) = hostile::<T>(n, 81);
    let (mut y, _) = hostile::<T>(n, 82);
    let mut r = rng(83);
    for (k, v) in y.iter_mut().enumerate().take(n / 3) {
        // Integer exponents in [-120, 120] (both sides of 100), some complex ones.
        let e = r.gen_range(-120i64..=120) as f64;
        *v = T::cast_from(c64::new(e, if k % 7 == 0 { 0.5 } else { 0.0 }));
    }
    for k in 0..40 {
        x[n - 1 - k] = T::zero();
    }
    // Zero divisors (fmod), and the integer remainder's edge -1.
    for k in 0..20 {
        y[n / 2 + k] = if k % 2 == 0 {
            T::zero()
        } else {
            T::cast_from(-1.0)
        };
    }
    let mut input = bytes(&x).to_vec();
    input.extend_from_slice(bytes(&y));
    let mut ran = 0;
    for op in BinaryMathOp::ALL {
        let mut want = vec![T::zero(); n];
        // SAFETY: all hold n elements.
        match unsafe { CpuDevice::binary_math(op, n, x.as_ptr(), y.as_ptr(), want.as_mut_ptr()) } {
            Ok(()) => ran += 1,
            Err(_) => continue, // not defined for T (refused the same way on the GPU side)
        }
        let code = [op.code().to_string()];
        let got: Vec<T> = from_bytes(&emu.run(&format!("binary_math_{s}"), n, &code, &input));
        assert_all_same(&got, &want, &format!("{} {}", T::DTYPE, op.name()));
    }
    assert!(ran >= 1, "{}: pow at least runs", T::DTYPE);
}

#[test]
fn emulated_binary_functions_match_the_cpu() -> TestResult {
    let Some(emu) = Emulator::build("math", "CT_MATH") else {
        return Ok(());
    };
    for_all_types!(binary_math_of_one_type, &emu);
    Ok(())
}

#[test]
fn emulated_math_functions_match_the_cpu() -> TestResult {
    let Some(emu) = Emulator::build("math", "CT_MATH") else {
        return Ok(());
    };
    for_all_types!(math_of_one_type, &emu);
    // Square roots and exponentials at the extremes (they share the math kernel).
    exp_matches_the_cpu::<f32>(&emu)?;
    exp_matches_the_cpu::<f64>(&emu)?;
    exp_matches_the_cpu::<c32>(&emu)?;
    exp_matches_the_cpu::<c64>(&emu)?;
    sqrt_matches_the_cpu::<c64>(&emu, "math_c64")?;
    sqrt_matches_the_cpu::<c32>(&emu, "math_c32")?;
    real_sqrt_matches_the_cpu::<f32>(&emu)?;
    real_sqrt_matches_the_cpu::<f64>(&emu)?;
    real_sqrt_matches_the_cpu::<ctensor_base::f16>(&emu)?;
    real_sqrt_matches_the_cpu::<ctensor_base::bf16>(&emu)?;

    // More elements than 65 535 blocks of 256 threads cover: the grid-stride loop turns.
    let n = 65_535 * 256 + 333;
    let x: Vec<ctensor_base::f16> = random_vec(&mut rng(3), n);
    let mut want = vec![ctensor_base::f16::ZERO; n];
    // SAFETY: both hold n elements.
    unsafe { CpuDevice::math(MathOp::Sin, n, x.as_ptr(), want.as_mut_ptr()) }?;
    let got: Vec<ctensor_base::f16> = from_bytes(&emu.run("math_f16", n, &["0".into()], bytes(&x)));
    assert_all_same(&got, &want, "math_f16 sin over a turning grid");
    Ok(())
}

/// The counter-based generator on the "GPU" against the CPU kernel, bit for bit (both
/// use the host's `log` and `cos` here; on a GPU the normal values may differ in the
/// last bits, which the device tests allow).
fn random_matches_the_cpu(
    emu: &Emulator,
    dist: Distribution,
    seed: u64,
    offset: u64,
    n: usize,
) -> TestResult {
    let mut want = vec![0.0f64; n];
    // SAFETY: `want` holds n values.
    unsafe { CpuDevice::fill_random(dist, seed, offset, n, want.as_mut_ptr()) }?;
    let (normal, bits) = match dist {
        Distribution::Uniform { bits } => (0, bits as u64),
        Distribution::Normal => (1, 53),
    };
    let args = words(&[normal, bits, seed, offset]);
    let got: Vec<f64> = from_bytes(&emu.run("random_f64", n, &args, &[]));
    assert_all_same(
        &got,
        &want,
        &format!("{dist:?} seed {seed} offset {offset}"),
    );
    Ok(())
}

#[test]
fn emulated_random_numbers_match_the_cpu() -> TestResult {
    let Some(emu) = Emulator::build("random", "CT_RANDOM") else {
        return Ok(());
    };
    for dist in [
        Distribution::Uniform { bits: 53 },
        Distribution::Uniform { bits: 24 },
        Distribution::Uniform { bits: 11 },
        Distribution::Uniform { bits: 8 },
        Distribution::Normal,
    ] {
        // Offsets across the 32-bit boundary of the counter, seeds using both key words.
        for (seed, offset) in [(0, 0), (42, (1 << 32) - 3), (u64::MAX, 77)] {
            random_matches_the_cpu(&emu, dist, seed, offset, 1000)?;
        }
    }
    // More values than 65 535 blocks of 256 threads cover: the grid-stride loop turns.
    random_matches_the_cpu(&emu, Distribution::Normal, 9, 0, 65_535 * 256 + 1000)?;
    Ok(())
}

/// Machine epsilon of `T`'s storage (1 for integers, whose sums must be exact).
fn storage_eps<T: Scalar>() -> f64 {
    use ctensor_base::DataType::*;
    match T::DTYPE {
        Half => 2f64.powi(-10),
        BFloat16 => 2f64.powi(-7),
        Float | ComplexFloat => f32::EPSILON as f64,
        Double | ComplexDouble => f64::EPSILON,
        Int | Int64 => 0.0,
    }
}

/// Row sums (every type; the GPU's tree adds in another order than the CPU's loop, so
/// floating sums agree to rounding, integer ones exactly, wrapping) and row extremes
/// (ordered types, exact, NaN winning) against the CPU, `grid` blocks as the GPU code
/// launches them.
fn reductions_match_the_cpu<T: Scalar>(emu: &Emulator) -> TestResult
where
    CpuDevice: Reduce<T>,
{
    use ctensor_kernels::gpu::emulation::reduce_grid;
    let s = suffix(T::DTYPE);
    let mut r = rng(17);
    for (rows, inner) in [(1usize, 1usize), (3, 1000), (300, 257), (5, 7), (2, 256)] {
        let x: Vec<T> = random_vec(&mut r, rows * inner);
        let mut want = vec![T::zero(); rows];
        // SAFETY: `x` holds rows·inner elements, `want` rows.
        unsafe { CpuDevice::reduce(rows, inner, x.as_ptr(), want.as_mut_ptr()) }?;
        let args = words(&[rows as u64, inner as u64, reduce_grid(rows).into()]);
        let got: Vec<T> =
            from_bytes(&emu.run(&format!("reduce_sum_{s}"), rows * inner, &args, bytes(&x)));
        assert_eq!(
            got.len(),
            rows,
            "reduce_sum {rows} x {inner}: output length"
        );
        for (row, (g, w)) in got.iter().zip(&want).enumerate() {
            let mag: f64 = x[row * inner..(row + 1) * inner]
                .iter()
                .map(|v| v.to_c64().norm())
                .sum();
            let tol = (inner as f64 + 2.0) * storage_eps::<T>() * mag;
            let (gc, wc) = (g.to_c64(), w.to_c64());
            assert!(
                (gc - wc).norm() <= tol,
                "{} reduce_sum {rows} x {inner}, row {row}: GPU {gc} vs CPU {wc} (tolerance {tol})",
                T::DTYPE
            );
        }
    }
    Ok(())
}

/// Row extremes (NaN wins) and their indices (the first of ties, the first NaN) against
/// the CPU, on rows with few distinct values (ties everywhere, also between threads'
/// partials) and NaN in some rows, rows longer than a block.
fn extremes_match_the_cpu<T: Scalar>(emu: &Emulator) -> TestResult
where
    CpuDevice: ReduceExtreme<T> + ArgExtreme<T>,
{
    use ctensor_kernels::gpu::emulation::reduce_grid;
    let s = suffix(T::DTYPE);
    let mut r = rng(19);
    for (rows, inner) in [(1usize, 1usize), (3, 1000), (300, 257), (5, 7), (2, 513)] {
        let mut x: Vec<T> = random_vec(&mut r, rows * inner);
        for v in x.iter_mut().step_by(2) {
            *v = T::cast_from(c64::new((r.gen_range(0..4) as f64) - 2.0, 0.0));
        }
        if T::DTYPE.is_float() && rows > 2 {
            // NaN wins its row wherever it sits (two in row 1: the first counts).
            x[inner + inner / 2] = T::cast_from(f64::NAN);
            x[inner + inner - 1] = T::cast_from(f64::NAN);
            x[2 * inner + inner - 1] = T::cast_from(f64::NAN);
        }
        for max in [true, false] {
            let args = words(&[
                rows as u64,
                inner as u64,
                reduce_grid(rows).into(),
                max as u64,
            ]);
            let what = format!("{} (max {max}) {rows} x {inner}", T::DTYPE);
            let mut want = vec![T::zero(); rows];
            let mut want_at = vec![0i64; rows];
            // SAFETY: `x` holds rows·inner elements, `want` and `want_at` rows.
            unsafe {
                CpuDevice::reduce_extreme(max, rows, inner, x.as_ptr(), want.as_mut_ptr())?;
                CpuDevice::arg_extreme(max, rows, inner, x.as_ptr(), want_at.as_mut_ptr())?;
            }
            let n = rows * inner;
            let got: Vec<T> =
                from_bytes(&emu.run(&format!("reduce_extreme_{s}"), n, &args, bytes(&x)));
            assert_all_same(&got, &want, &format!("reduce_extreme {what}"));
            let at: Vec<i64> =
                from_bytes(&emu.run(&format!("arg_extreme_{s}"), n, &args, bytes(&x)));
            assert_eq!(at, want_at, "arg_extreme {what}");
        }
    }
    Ok(())
}

/// Running sums against the CPU: exact for integers and for rows of at most 256 (the
/// same order of additions), to rounding otherwise; in place and not.
fn cumsums_match_the_cpu<T: Scalar>(emu: &Emulator) -> TestResult
where
    CpuDevice: CumSum<T>,
{
    use ctensor_kernels::gpu::emulation::reduce_grid;
    let s = suffix(T::DTYPE);
    let mut r = rng(31);
    for (rows, inner) in [
        (1usize, 1usize),
        (3, 1000),
        (300, 257),
        (5, 7),
        (2, 256),
        (1, 5000),
    ] {
        let x: Vec<T> = random_vec(&mut r, rows * inner);
        let mut want = vec![T::zero(); rows * inner];
        // SAFETY: both hold rows·inner elements.
        unsafe { CpuDevice::cumsum(rows, inner, x.as_ptr(), want.as_mut_ptr()) }?;
        for inplace in [0u64, 1] {
            let args = words(&[rows as u64, inner as u64, reduce_grid(rows).into(), inplace]);
            let got: Vec<T> =
                from_bytes(&emu.run(&format!("cumsum_{s}"), rows * inner, &args, bytes(&x)));
            let what = format!("{} cumsum {rows} x {inner} (in place {inplace})", T::DTYPE);
            if inner <= 256 || !T::DTYPE.is_float() && !T::DTYPE.is_complex() {
                assert_all_same(&got, &want, &what);
                continue;
            }
            assert_eq!(got.len(), want.len(), "{what}: output length");
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                let (row, j) = (k / inner, k % inner);
                let mag: f64 = x[row * inner..row * inner + j + 1]
                    .iter()
                    .map(|v| v.to_c64().norm())
                    .sum();
                let tol = (j as f64 + 2.0) * storage_eps::<T>() * mag;
                let (gc, wc) = (g.to_c64(), w.to_c64());
                assert!(
                    (gc - wc).norm() <= tol,
                    "{what}, element {k}: GPU {gc} vs CPU {wc}"
                );
            }
        }
    }
    Ok(())
}

#[test]
fn emulated_cumsums_and_arg_extremes_over_many_rows_match_the_cpu() -> TestResult {
    let Some(emu) = Emulator::build("reduce", "CT_REDUCE") else {
        return Ok(());
    };
    for_all_types!(cumsums_match_the_cpu, &emu);
    // More rows than blocks (65 537 > 65 535): the grid-stride loop over rows.
    let (rows, inner) = (65_537usize, 3usize);
    let x: Vec<i64> = (0..rows * inner)
        .map(|k| (k as i64 * 7919) % 13 - 6)
        .collect();
    let grid = ctensor_kernels::gpu::emulation::reduce_grid(rows).into();
    let got: Vec<i64> = from_bytes(&emu.run(
        "arg_extreme_i64",
        rows * inner,
        &words(&[rows as u64, inner as u64, grid, 1]),
        bytes(&x),
    ));
    let want: Vec<i64> = x
        .chunks(inner)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0, |b, (j, v)| if *v > c[b] { j } else { b }) as i64
        })
        .collect();
    assert_eq!(got, want, "arg_extreme over 65 537 rows");
    let got: Vec<i64> = from_bytes(&emu.run(
        "cumsum_i64",
        rows * inner,
        &words(&[rows as u64, inner as u64, grid, 0]),
        bytes(&x),
    ));
    let want: Vec<i64> = x
        .chunks(inner)
        .flat_map(|c| {
            c.iter()
                .scan(0i64, |a, v| Some(std::mem::replace(a, *a + v) + v))
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(got, want, "cumsum over 65 537 rows");
    Ok(())
}

#[test]
fn emulated_reductions_match_the_cpu() -> TestResult {
    let Some(emu) = Emulator::build("reduce", "CT_REDUCE") else {
        return Ok(());
    };
    for_all_types!(reductions_match_the_cpu, &emu);
    extremes_match_the_cpu::<f32>(&emu)?;
    extremes_match_the_cpu::<f64>(&emu)?;
    extremes_match_the_cpu::<i32>(&emu)?;
    extremes_match_the_cpu::<i64>(&emu)?;
    extremes_match_the_cpu::<ctensor_base::f16>(&emu)?;
    extremes_match_the_cpu::<ctensor_base::bf16>(&emu)?;
    // More rows than blocks (65 537 > 65 535): the blocks' grid-stride loop over rows.
    let (rows, inner) = (65_537usize, 2usize);
    let x: Vec<i64> = (0..rows * inner).map(|k| k as i64 * 3 - 7).collect();
    let args = words(&[
        rows as u64,
        inner as u64,
        ctensor_kernels::gpu::emulation::reduce_grid(rows).into(),
    ]);
    let got: Vec<i64> = from_bytes(&emu.run("reduce_sum_i64", rows * inner, &args, bytes(&x)));
    let want: Vec<i64> = x.chunks(inner).map(|c| c.iter().sum()).collect();
    assert_eq!(got, want, "reduce_sum over 65 537 rows");
    Ok(())
}

/// The matrix-product loop (i32, i64, f16, bf16: the types cuBLAS has no gemm for)
/// against the CPU kernel: every transpose pair, leading dimensions above the minimum,
/// and beta = 0 with NaN in C (which must not survive).
fn matmul_matches_the_cpu<T: Scalar>(emu: &Emulator) -> TestResult
where
    CpuDevice: MatMul<T>,
{
    let s = suffix(T::DTYPE);
    let mut r = rng(23);
    for (m, n, k) in [
        (1usize, 1usize, 1usize),
        (7, 5, 3),
        (33, 17, 300),
        (2, 9, 0),
    ] {
        for (ta, tb) in [
            (Trans::N, Trans::N),
            (Trans::T, Trans::N),
            (Trans::N, Trans::T),
            (Trans::T, Trans::T),
        ] {
            for beta_zero in [false, true] {
                let (ar, ac) = if ta == Trans::N { (m, k) } else { (k, m) };
                let (br, bc) = if tb == Trans::N { (k, n) } else { (n, k) };
                let (lda, ldb, ldc) = (ar + 2, br + 1, m + 3);
                let a: Vec<T> = random_vec(&mut r, lda * ac.max(1));
                let b: Vec<T> = random_vec(&mut r, ldb * bc.max(1));
                let mut c: Vec<T> = random_vec(&mut r, ldc * n);
                let alpha: T = random_vec(&mut r, 1)[0];
                let beta = if beta_zero {
                    T::zero()
                } else {
                    random_vec(&mut r, 1)[0]
                };
                if beta_zero && T::DTYPE.is_float() {
                    c.iter_mut().for_each(|v| *v = T::cast_from(f64::NAN));
                }
                let mut want = c.clone();
                // SAFETY: the operands hold their leading dimensions times their columns.
                unsafe {
                    CpuDevice::matmul(
                        ta,
                        tb,
                        m,
                        n,
                        k,
                        alpha,
                        a.as_ptr(),
                        lda,
                        b.as_ptr(),
                        ldb,
                        beta,
                        want.as_mut_ptr(),
                        ldc,
                    )
                }?;
                let args = words(&[
                    (ta != Trans::N) as u64,
                    (tb != Trans::N) as u64,
                    m as u64,
                    n as u64,
                    k as u64,
                    lda as u64,
                    ldb as u64,
                    ldc as u64,
                    beta_zero as u64,
                ]);
                let mut input = bytes(&[alpha, beta]).to_vec();
                input.extend(with_len(&a));
                input.extend(with_len(&b));
                input.extend(with_len(&c));
                let got: Vec<T> =
                    from_bytes(&emu.run(&format!("matmul_{s}"), m * n, &args, &input));
                assert_eq!(got.len(), c.len(), "matmul {m}x{n}x{k}: output length");
                for j in 0..n {
                    for i in 0..m {
                        let (g, w) = (got[i + j * ldc].to_c64(), want[i + j * ldc].to_c64());
                        let mag = (k as f64 + 1.0) * 1e6 * alpha.to_c64().norm().max(1.0);
                        let tol = (k as f64 + 2.0) * storage_eps::<T>() * mag;
                        assert!(
                            same(got[i + j * ldc], want[i + j * ldc]) || (g - w).norm() <= tol,
                            "{} matmul {ta:?}{tb:?} {m}x{n}x{k} beta0 {beta_zero} ({i}, {j}): GPU {g} vs CPU {w}",
                            T::DTYPE
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

#[test]
fn emulated_matmul_loop_matches_the_cpu() -> TestResult {
    let Some(emu) = Emulator::build("matmul", "CT_MATMUL") else {
        return Ok(());
    };
    matmul_matches_the_cpu::<i32>(&emu)?;
    matmul_matches_the_cpu::<i64>(&emu)?;
    matmul_matches_the_cpu::<ctensor_base::f16>(&emu)?;
    matmul_matches_the_cpu::<ctensor_base::bf16>(&emu)?;
    Ok(())
}
