//! The 16-bit float conversions of the CUDA prelude (`gpu/cuda/prelude.cu`), run on the
//! host: the prelude is plain C++ apart from a few CUDA keywords and intrinsics, so a
//! host C++ compiler with small shims for those compiles the very text NVRTC compiles.
//!
//! Rounding is checked against an independent reference written here (the neighbouring
//! representable values and an exact comparison with their midpoint): every value and
//! every midpoint between neighbours (the ties), the doubles on either side of each,
//! integers around the ties beyond 2^53, and random doubles and integers; both the
//! prelude and the CPU casts (`CastFrom`) must agree with it bit for bit. Widening every
//! f16 and bf16 pattern is compared with the `half` crate (exact, so any correct
//! implementation agrees).
//!
//! Without a C++ compiler (`c++`, `g++` or `clang++`) the test prints one `SKIP` line
//! and passes, unless `CTENSOR_REQUIRE_CXX=1`.
#![cfg(feature = "cuda")]
#![deny(unused_must_use)]

use std::io::Write;
use std::process::{Command, Stdio};

use ctensor_base::{bf16, f16, CastFrom};
use rand::{Rng, SeedableRng};

/// What a test returns: a failing step names its error.
type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// The shims, then the prelude, then a driver: reads `d <hex bits of a double>` and
/// `i <hex of an i64>` lines from stdin and prints the f16 and bf16 bits of each, then
/// the f32 bits of every 16-bit pattern widened.
const HARNESS: &str = r#"
#include <math.h>
#include <stdio.h>
#include <string.h>
#define __device__
#define __align__(n) alignas(n)
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline long long __double_as_longlong(double d) { long long l; memcpy(&l, &d, 8); return l; }
#include PRELUDE
int main() {
    char kind;
    unsigned long long b;
    while (scanf(" %c %llx", &kind, &b) == 2) {
        double x;
        if (kind == 'i') x = ct_i64_odd((long long)b);
        else memcpy(&x, &b, 8);
        printf("%04x %04x\n", (unsigned)ct_round_small(x, 10, 15), (unsigned)ct_round_small(x, 7, 127));
    }
    for (unsigned h = 0; h < 65536; ++h) {
        float a = ct_f16_to_f32((unsigned short)h), c = ct_bf16_to_f32((unsigned short)h);
        unsigned ua, uc; memcpy(&ua, &a, 4); memcpy(&uc, &c, 4);
        printf("%08x %08x\n", ua, uc);
    }
    return 0;
}
"#;

fn compiler() -> Option<String> {
    ["c++", "g++", "clang++"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(String::from)
}

/// A 16-bit float format: its non-negative finite values ascending with their bits, and
/// the bits of +infinity.
struct Format {
    name: &'static str,
    values: Vec<(f64, u16)>,
    inf: u16,
}

impl Format {
    fn new(name: &'static str, widen: impl Fn(u16) -> f64, inf: u16) -> Format {
        // Patterns 0 ..= the largest finite one (just below +inf) ascend with the value.
        let values = (0..inf).map(|b| (widen(b), b)).collect();
        Format { name, values, inf }
    }

    /// The neighbours `lo <= a < hi` of the magnitude `a` (hi = the value one step past
    /// the largest, standing for infinity), with their bits.
    fn neighbours(&self, a: f64) -> ((f64, u16), (f64, u16)) {
        let k = self.values.partition_point(|&(v, _)| v <= a);
        let n = self.values.len();
        let over = {
            let (max, _) = self.values[n - 1];
            (2.0 * max - self.values[n - 2].0, self.inf)
        };
        let lo = self.values[k - 1];
        let hi = if k < n { self.values[k] } else { over };
        (lo, hi)
    }

    /// Nearest-even choice between neighbours, given how `a` compares with their midpoint.
    fn pick(lo: (f64, u16), hi: (f64, u16), cmp: std::cmp::Ordering) -> u16 {
        match cmp {
            std::cmp::Ordering::Less => lo.1,
            std::cmp::Ordering::Greater => hi.1,
            std::cmp::Ordering::Equal if lo.1.is_multiple_of(2) => lo.1,
            std::cmp::Ordering::Equal => hi.1,
        }
    }

    /// The correctly rounded (nearest, ties to even) bits of `x`; `None` for NaN.
    fn round_f64(&self, x: f64) -> Option<u16> {
        if x.is_nan() {
            return None;
        }
        let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
        let a = x.abs();
        if a.is_infinite() {
            return Some(sign | self.inf);
        }
        let (lo, hi) = self.neighbours(a);
        if a == lo.0 {
            return Some(sign | lo.1);
        }
        // Exact: the midpoint of two 16-bit values needs few bits.
        let mid = (lo.0 + hi.0) / 2.0;
        Some(sign | Format::pick(lo, hi, a.partial_cmp(&mid).unwrap()))
    }

    /// The correctly rounded bits of the integer `x`, compared exactly in integers where
    /// f64 could not hold it.
    fn round_i64(&self, x: i64) -> u16 {
        let m = x.unsigned_abs();
        if m < 1 << 53 {
            return self.round_f64(x as f64).unwrap();
        }
        let sign = if x < 0 { 0x8000 } else { 0 };
        let (lo, hi) = self.neighbours(m as f64);
        // Both neighbours are integers here (and exact in u128).
        let twice = 2 * m as u128;
        let sum = lo.0 as u128 + hi.0 as u128;
        if m as u128 == lo.0 as u128 {
            return sign | lo.1;
        }
        sign | Format::pick(lo, hi, twice.cmp(&sum))
    }
}

/// The double inputs: every value, every midpoint between neighbours and the doubles on
/// either side of each, the overflow boundary and beyond, specials, and random values.
fn double_inputs(f: &Format, rng: &mut rand::rngs::StdRng) -> Vec<f64> {
    let mut out = Vec::new();
    let next =
        |x: f64, up: bool| f64::from_bits(if up { x.to_bits() + 1 } else { x.to_bits() - 1 });
    for w in f.values.windows(2) {
        let mid = (w[0].0 + w[1].0) / 2.0;
        for x in [w[0].0, mid, next(mid, true), next(mid, false)] {
            out.extend([x, -x]);
        }
    }
    let n = f.values.len();
    let (max, ulp) = (f.values[n - 1].0, f.values[n - 1].0 - f.values[n - 2].0);
    out.extend([
        max + ulp / 2.0,
        next(max + ulp / 2.0, false),
        max * 4.0,
        1e300,
        -1e300,
    ]);
    out.extend([
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1e-300,
        -1e-300,
    ]);
    out.extend((0..20_000).map(|_| f64::from_bits(rng.gen::<u64>())));
    out.extend((0..20_000).map(|_| rng.gen_range(-1e5..1e5)));
    out
}

/// The integer inputs: around the bf16 ties beyond 2^53 (where an f64 cannot hold the
/// integer and a nearest-even f64 would make a false tie), the extremes, random ones.
fn integer_inputs(rng: &mut rand::rngs::StdRng) -> Vec<i64> {
    let mut out = vec![
        0,
        1,
        -1,
        2049,
        65519,
        65520,
        65521,
        i64::MAX,
        i64::MIN,
        i64::MIN + 1,
    ];
    for k in 53..63 {
        let tie = (1i64 << k) + (1i64 << (k - 8)); // between 2^k and 2^k + 2^(k-7)
        for d in [-1i64, 0, 1, 1 << (k - 53), -(1 << (k - 53))] {
            out.extend([tie + d, -(tie + d)]);
        }
    }
    out.extend((0..20_000).map(|_| rng.gen::<i64>()));
    out.extend((0..20_000).map(|_| rng.gen_range(-100_000i64..100_000)));
    out
}

#[test]
fn prelude_and_cpu_casts_round_16_bit_floats_once_and_widen_exactly() -> TestResult {
    let Some(cxx) = compiler() else {
        assert!(
            std::env::var("CTENSOR_REQUIRE_CXX").as_deref() != Ok("1"),
            "CTENSOR_REQUIRE_CXX=1 but no C++ compiler (c++, g++, clang++) was found"
        );
        println!("SKIP: prelude_16_bit_conversions: no C++ compiler (c++, g++ or clang++)");
        return Ok(());
    };
    // Cargo makes this folder before the tests run; a test binary carried elsewhere
    // (scripts/gpu-run.sh) makes it itself.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(dir)?;
    let prelude = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/gpu/cuda/prelude.cu");
    let (src, exe) = (dir.join("prelude_host.cpp"), dir.join("prelude_host"));
    std::fs::write(&src, HARNESS)?;
    let out = Command::new(&cxx)
        .args(["-std=c++11", "-O1", "-w", "-o"])
        .arg(&exe)
        .arg(format!("-DPRELUDE=\"{}\"", prelude.display()))
        .arg(&src)
        .arg("-lm")
        .output()?;
    assert!(
        out.status.success(),
        "{cxx} could not compile the prelude:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let h = Format::new("f16", |b| f16::from_bits(b).to_f64(), 0x7c00);
    let b = Format::new("bf16", |b| bf16::from_bits(b).to_f64(), 0x7f80);
    let mut rng = rand::rngs::StdRng::seed_from_u64(16);
    let mut xs = double_inputs(&h, &mut rng);
    xs.extend(double_inputs(&b, &mut rng));
    let ns = integer_inputs(&mut rng);
    let mut text: String = xs
        .iter()
        .map(|x| format!("d {:x}\n", x.to_bits()))
        .collect();
    text.extend(ns.iter().map(|n| format!("i {:x}\n", *n as u64)));

    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    // Feed stdin from another thread: the driver answers as it reads, and a full stdout
    // pipe would otherwise stall both sides.
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let out = child.wait_with_output()?;
    feeder.join().unwrap()?;
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout)?;
    let mut lines = stdout.lines();
    let hex = |s: &str| u32::from_str_radix(s, 16).unwrap();
    let mut next_pair = || {
        let line = lines.next().expect("one output line per input");
        let (p, q) = line.split_once(' ').unwrap();
        [hex(p) as u16, hex(q) as u16]
    };

    let mut half_differs = 0;
    for &x in &xs {
        let gpu = next_pair();
        let cpu = [f16::cast_from(x).to_bits(), bf16::cast_from(x).to_bits()];
        for (k, f) in [&h, &b].into_iter().enumerate() {
            match f.round_f64(x) {
                None => assert!(
                    (gpu[k] & 0x7fff) > f.inf && (cpu[k] & 0x7fff) > f.inf,
                    "{} of NaN must be NaN",
                    f.name
                ),
                Some(want) => {
                    let what = format!("{} of {x:e} ({:#x})", f.name, x.to_bits());
                    assert_eq!(gpu[k], want, "prelude: {what}");
                    assert_eq!(cpu[k], want, "CastFrom: {what}");
                }
            }
        }
        if !x.is_nan() && f16::from_f64(x).to_bits() != cpu[0] {
            half_differs += 1;
        }
    }
    for &n in &ns {
        let gpu = next_pair();
        let cpu = [f16::cast_from(n).to_bits(), bf16::cast_from(n).to_bits()];
        for (k, f) in [&h, &b].into_iter().enumerate() {
            let want = f.round_i64(n);
            assert_eq!(gpu[k], want, "prelude: {} of {n}", f.name);
            assert_eq!(cpu[k], want, "CastFrom: {} of {n}", f.name);
        }
    }
    for bits in 0..=u16::MAX {
        let [a, c] = {
            let line = lines.next().expect("one line per 16-bit pattern");
            let (a, c) = line.split_once(' ').unwrap();
            [f32::from_bits(hex(a)), f32::from_bits(hex(c))]
        };
        for (got, want, ty) in [
            (a, f16::from_bits(bits).to_f32(), "f16"),
            (c, bf16::from_bits(bits).to_f32(), "bf16"),
        ] {
            if want.is_nan() {
                assert!(got.is_nan(), "{ty} {bits:#06x} widens to {got}, want NaN");
            } else {
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{ty} {bits:#06x} widens to {got}, want {want}"
                );
            }
        }
    }
    println!(
        "{} double and {} integer inputs rounded once, as the reference, by the prelude and \
         by CastFrom; 2 × 65536 widenings exact; half::f16::from_f64 rounds {half_differs} \
         of the doubles differently (it goes through a nearest-even f32)",
        xs.len(),
        ns.len()
    );
    Ok(())
}
