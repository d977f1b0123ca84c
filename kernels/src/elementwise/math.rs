//! Element-wise mathematical functions ([`Math`], one kernel for every [`MathOp`]). The
//! formulas for complex arguments are written out here and, identically, in
//! `gpu/cuda/math.cu`, so both devices compute the same thing (to the last bits of their
//! `sin`, `log`, …):
//!
//! - `sin(x+iy) = sin x cosh y + i cos x sinh y`, `cos(x+iy) = cos x cosh y − i sin x sinh y`;
//! - `tan(x+iy) = (sin 2x + i sinh 2y) / (cos 2x + cosh 2y)`, and for `|y| > 20` (where
//!   `cosh 2y` would overflow long before the quotient does) `2 sin 2x e^{−2|y|} ± i`;
//! - `log z = ln|z| + i arg z`; `log1p z` as `½ log1p(2x + x² + y²) + i atan2(y, 1 + x)`
//!   when `|z| < ½` (no cancellation near 0), `log(1 + z)` otherwise;
//! - `expm1 z = expm1(x) cos y − 2 sin²(y/2) + i eˣ sin y` (no cancellation near 0);
//! - `1/z` the textbook quotient (as `/`), `rsqrt z = 1 / sqrt z`, `sign z = z / |z|`
//!   (0 for 0). Floor, ceiling and rounding have no complex meaning.
//!
//! [`Pow`] computes `x^y` element-wise: `powf` for real types (C's special cases:
//! `x^0 = 1` even for NaN `x`, a negative base with a non-integer exponent is NaN),
//! square-and-multiply for integers (wrapping; a negative exponent gives `1` for the
//! base 1, `±1` for −1 and `0` otherwise: the tensor op refuses negative integer
//! exponents before they get here), and for complex `z^w`: repeated multiplication when
//! `w` is a real integer of modulus at most 100 (the reciprocal for negative ones; exact
//! where `exp(w log z)` would round, the rule of NumPy's `npy_cpow`), `0^w = 0` for
//! `Re w > 0`, NaN for the other powers of 0 (`0^0 = 1`), and `exp(w log z)` otherwise.
//!
//! Real arguments use the standard functions; `round` rounds half to even (NumPy's
//! `round`/`rint`); `sign` is −1, +0 or 1 (+0 for either zero, as NumPy and the array
//! API) and keeps NaN. Complex `expm1` takes C99's special values: a real argument stays
//! real, `-inf + iy` gives −1, `+inf + i inf` and `+inf + i NaN` give `inf + i NaN`.
//! Integers take `square` (wrapping), `sign`, `floor`, `ceil` and `round` (the
//! identity); the tensor ops compute the other functions of integers in `f64`.

use ctensor_base::{bf16, c32, c64, f16, Device, Error, Result};

use crate::elementwise::arith::Arith;

/// A function of [`Math`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MathOp {
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// Tangent.
    Tan,
    /// Natural logarithm (principal branch).
    Log,
    /// `log(1 + x)`, accurate near 0.
    Log1p,
    /// `exp(x) − 1`, accurate near 0.
    Expm1,
    /// `x²`.
    Square,
    /// `1 / x`.
    Reciprocal,
    /// `1 / sqrt(x)`.
    Rsqrt,
    /// The sign: −1, 0, 1 for reals, `z / |z|` for complex.
    Sign,
    /// Largest integer not above `x` (real types).
    Floor,
    /// Smallest integer not below `x` (real types).
    Ceil,
    /// Nearest integer, half to even (real types).
    Round,
    /// `-x` (wrapping for integers).
    Neg,
    /// Square root (principal branch for complex; NaN below 0 for reals).
    Sqrt,
    /// Exponential.
    Exp,
}

impl MathOp {
    /// Every function, in the order of [`code`](Self::code).
    pub const ALL: [MathOp; 16] = [
        MathOp::Sin,
        MathOp::Cos,
        MathOp::Tan,
        MathOp::Log,
        MathOp::Log1p,
        MathOp::Expm1,
        MathOp::Square,
        MathOp::Reciprocal,
        MathOp::Rsqrt,
        MathOp::Sign,
        MathOp::Floor,
        MathOp::Ceil,
        MathOp::Round,
        MathOp::Neg,
        MathOp::Sqrt,
        MathOp::Exp,
    ];

    /// The code the CUDA kernel takes (declaration order, from 0).
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The operation's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            MathOp::Sin => "sin",
            MathOp::Cos => "cos",
            MathOp::Tan => "tan",
            MathOp::Log => "log",
            MathOp::Log1p => "log1p",
            MathOp::Expm1 => "expm1",
            MathOp::Square => "square",
            MathOp::Reciprocal => "reciprocal",
            MathOp::Rsqrt => "rsqrt",
            MathOp::Sign => "sign",
            MathOp::Floor => "floor",
            MathOp::Ceil => "ceil",
            MathOp::Round => "round",
            MathOp::Neg => "neg",
            MathOp::Sqrt => "sqrt",
            MathOp::Exp => "exp",
        }
    }

    /// Whether the function is defined for integers (else the tensor op uses `f64`).
    pub fn for_integers(self) -> bool {
        matches!(
            self,
            MathOp::Square
                | MathOp::Sign
                | MathOp::Floor
                | MathOp::Ceil
                | MathOp::Round
                | MathOp::Neg
        )
    }

    /// Whether the function is defined for complex numbers.
    pub fn for_complex(self) -> bool {
        !matches!(self, MathOp::Floor | MathOp::Ceil | MathOp::Round)
    }
}

/// `Ok` when `op` is defined for `T`, else the `UnsupportedDType` error both devices give.
pub(crate) fn check_defined<T: MathScalar>(op: MathOp) -> Result<()> {
    if T::math(op, T::zero().up()).is_some() {
        return Ok(());
    }
    Err(Error::UnsupportedDType {
        op: op.name(),
        dtype: T::DTYPE,
        supported: if op.for_complex() {
            "f32, f64, c32, c64, f16, bf16 (the tensor op computes integers in f64)"
        } else {
            "f32, f64, i32, i64, f16, bf16 (complex numbers have no floor, ceiling or rounding)"
        },
    })
}

/// Element-wise mathematical functions of one argument (every [`MathOp`]).
pub trait Math<T: MathScalar>: Device {
    /// `y[i] = op(x[i])` for `i < n`; `x == y` (in place) is allowed. A function that is
    /// not defined for `T` is `Error::UnsupportedDType`.
    ///
    /// # Safety
    /// `x` is valid for reads and `y` for writes of `n` elements; identical or disjoint.
    unsafe fn math(op: MathOp, n: usize, x: *const T, y: *mut T) -> Result<()>;
}

/// A function of two arguments of [`BinaryMath`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryMathOp {
    /// `x ^ y` (the rules are in the [module documentation](self)).
    Pow,
    /// `atan2(x, y)`: the angle of the point `(y, x)`, in `[-π, π]` (NumPy's `arctan2(x1,
    /// x2)`, C's `atan2(x, y)`); real types.
    Atan2,
    /// `sqrt(x² + y²)` without undue overflow or underflow (C's `hypot`); real types.
    Hypot,
    /// `|x|` with the sign of `y` (C's `copysign`); real types.
    Copysign,
    /// The remainder of `x / y` with the sign of `x` (C's `fmod`, NumPy's `fmod`); for
    /// integers truncated division's remainder, and 0 for a divisor of 0 (as NumPy).
    Fmod,
    /// `log(exp(x) + exp(y))` without overflow (NumPy's `logaddexp`); real types.
    Logaddexp,
}

impl BinaryMathOp {
    /// Every function, in the order of [`code`](Self::code).
    pub const ALL: [BinaryMathOp; 6] = [
        BinaryMathOp::Pow,
        BinaryMathOp::Atan2,
        BinaryMathOp::Hypot,
        BinaryMathOp::Copysign,
        BinaryMathOp::Fmod,
        BinaryMathOp::Logaddexp,
    ];

    /// The code the CUDA kernel takes (declaration order, from 0).
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The operation's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            BinaryMathOp::Pow => "pow",
            BinaryMathOp::Atan2 => "atan2",
            BinaryMathOp::Hypot => "hypot",
            BinaryMathOp::Copysign => "copysign",
            BinaryMathOp::Fmod => "fmod",
            BinaryMathOp::Logaddexp => "logaddexp",
        }
    }

    /// Whether the function is defined for integers (else the tensor op uses `f64`).
    pub fn for_integers(self) -> bool {
        matches!(self, BinaryMathOp::Pow | BinaryMathOp::Fmod)
    }

    /// Whether the function is defined for complex numbers.
    pub fn for_complex(self) -> bool {
        matches!(self, BinaryMathOp::Pow)
    }
}

/// `Ok` when `op` is defined for `T`, else the `UnsupportedDType` error both devices give.
pub(crate) fn check_binary_defined<T: MathScalar>(op: BinaryMathOp) -> Result<()> {
    let z = T::zero().up();
    if T::binary(op, z, z).is_some() {
        return Ok(());
    }
    Err(Error::UnsupportedDType {
        op: op.name(),
        dtype: T::DTYPE,
        supported: if op.for_integers() {
            "f32, f64, i32, i64, f16, bf16 (complex numbers have no remainder)"
        } else {
            "f32, f64, f16, bf16 (the tensor op computes integers in f64)"
        },
    })
}

/// Element-wise functions of two arguments.
pub trait BinaryMath<T: MathScalar>: Device {
    /// `out[i] = op(x[i], y[i])` for `i < n`; `out` may be identical to either input. A
    /// function that is not defined for `T` is `Error::UnsupportedDType`.
    ///
    /// # Safety
    /// `x`, `y` are valid for reads and `out` for writes of `n` elements; `out` is
    /// identical to or disjoint from each input.
    unsafe fn binary_math(
        op: BinaryMathOp,
        n: usize,
        x: *const T,
        y: *const T,
        out: *mut T,
    ) -> Result<()>;
}

/// Element-wise power: [`BinaryMath`] with [`BinaryMathOp::Pow`], under its former name.
pub trait Pow<T: MathScalar>: Device {
    /// `out[i] = x[i] ^ y[i]` for `i < n`, by the rules of [`MathScalar::pow`]; `out` may
    /// be identical to either input.
    ///
    /// # Safety
    /// `x`, `y` are valid for reads and `out` for writes of `n` elements; `out` is
    /// identical to or disjoint from each input.
    unsafe fn pow(n: usize, x: *const T, y: *const T, out: *mut T) -> Result<()>;
}

impl<T: MathScalar, D: BinaryMath<T>> Pow<T> for D {
    unsafe fn pow(n: usize, x: *const T, y: *const T, out: *mut T) -> Result<()> {
        // SAFETY: forwarded contract.
        unsafe { D::binary_math(BinaryMathOp::Pow, n, x, y, out) }
    }
}

/// How one element type computes the [`MathOp`]s and [`Pow`] (in its compute type).
pub trait MathScalar: Arith {
    /// `op(a)`, or `None` when the function is not defined for the type.
    fn math(op: MathOp, a: Self::Acc) -> Option<Self::Acc>;

    /// `a ^ b` (the rules are in the [module documentation](self)).
    fn pow(a: Self::Acc, b: Self::Acc) -> Self::Acc;

    /// `op(a, b)`, or `None` when the function is not defined for the type.
    fn binary(op: BinaryMathOp, a: Self::Acc, b: Self::Acc) -> Option<Self::Acc>;
}

/// The largest integer exponent a complex power takes by repeated multiplication.
pub const POW_BY_MULTIPLICATION: f64 = 100.0;

macro_rules! real_math {
    ($name:ident, $f:ty) => {
        fn $name(op: MathOp, a: $f) -> $f {
            match op {
                MathOp::Sin => a.sin(),
                MathOp::Cos => a.cos(),
                MathOp::Tan => a.tan(),
                MathOp::Log => a.ln(),
                MathOp::Log1p => a.ln_1p(),
                MathOp::Expm1 => a.exp_m1(),
                MathOp::Square => a * a,
                MathOp::Reciprocal => 1.0 / a,
                MathOp::Rsqrt => 1.0 / a.sqrt(),
                MathOp::Sign => {
                    if a > 0.0 {
                        1.0
                    } else if a < 0.0 {
                        -1.0
                    } else if a == 0.0 {
                        0.0 // +0 for either zero, as NumPy and the array API
                    } else {
                        a // NaN
                    }
                }
                MathOp::Floor => a.floor(),
                MathOp::Ceil => a.ceil(),
                MathOp::Round => a.round_ties_even(),
                MathOp::Neg => -a,
                MathOp::Sqrt => a.sqrt(),
                MathOp::Exp => a.exp(),
            }
        }
    };
}

real_math!(math_f32, f32);
real_math!(math_f64, f64);

macro_rules! real_scalar {
    ($($t:ty => $f:ty, $math:ident;)*) => {$(
        impl MathScalar for $t {
            fn math(op: MathOp, a: $f) -> Option<$f> {
                Some($math(op, a))
            }
            fn pow(a: $f, b: $f) -> $f {
                a.powf(b)
            }
            fn binary(op: BinaryMathOp, a: $f, b: $f) -> Option<$f> {
                Some(match op {
                    BinaryMathOp::Pow => a.powf(b),
                    BinaryMathOp::Atan2 => a.atan2(b),
                    BinaryMathOp::Hypot => a.hypot(b),
                    BinaryMathOp::Copysign => a.copysign(b),
                    // Rust's `%` on floats is C's fmod.
                    BinaryMathOp::Fmod => a % b,
                    // The larger plus log1p of the smaller's share; equal arguments
                    // (infinities included) give a + ln 2, NaN stays NaN.
                    BinaryMathOp::Logaddexp => {
                        if a == b {
                            a + std::f64::consts::LN_2 as $f
                        } else if a > b {
                            a + (b - a).exp().ln_1p()
                        } else if a < b {
                            b + (a - b).exp().ln_1p()
                        } else {
                            a + b
                        }
                    }
                })
            }
        }
    )*};
}
real_scalar! {
    f32 => f32, math_f32;
    f64 => f64, math_f64;
    f16 => f32, math_f32;
    bf16 => f32, math_f32;
}

macro_rules! int_math {
    ($($t:ty),*) => {$(
        impl MathScalar for $t {
            fn math(op: MathOp, a: $t) -> Option<$t> {
                match op {
                    MathOp::Square => Some(a.wrapping_mul(a)),
                    MathOp::Sign => Some(a.signum()),
                    MathOp::Floor | MathOp::Ceil | MathOp::Round => Some(a),
                    MathOp::Neg => Some(a.wrapping_neg()),
                    _ => None,
                }
            }
            fn pow(a: $t, b: $t) -> $t {
                if b < 0 {
                    // 1 / a^|b| truncated toward zero.
                    return match a {
                        1 => 1,
                        -1 => if b % 2 == 0 { 1 } else { -1 },
                        _ => 0,
                    };
                }
                let (mut r, mut base, mut e): ($t, $t, $t) = (1, a, b);
                while e > 0 {
                    if e & 1 == 1 {
                        r = r.wrapping_mul(base);
                    }
                    base = base.wrapping_mul(base);
                    e >>= 1;
                }
                r
            }
            fn binary(op: BinaryMathOp, a: $t, b: $t) -> Option<$t> {
                match op {
                    BinaryMathOp::Pow => Some(<Self as MathScalar>::pow(a, b)),
                    BinaryMathOp::Fmod => Some(if b == 0 { 0 } else { a.wrapping_rem(b) }),
                    _ => None,
                }
            }
        }
    )*};
}
int_math!(i32, i64);

macro_rules! complex_math {
    ($c:ty, $f:ty, $csqrt:path) => {
        impl MathScalar for $c {
            fn math(op: MathOp, z: $c) -> Option<$c> {
                let (x, y) = (z.re, z.im);
                let c = |re: $f, im: $f| <$c>::new(re, im);
                let inv = |w: $c| {
                    let d = w.re * w.re + w.im * w.im;
                    c(w.re / d, -w.im / d)
                };
                Some(match op {
                    MathOp::Sin => c(x.sin() * y.cosh(), x.cos() * y.sinh()),
                    MathOp::Cos => c(x.cos() * y.cosh(), -(x.sin() * y.sinh())),
                    MathOp::Tan => {
                        if y.abs() > 20.0 {
                            c(
                                2.0 * (2.0 * x).sin() * (-2.0 * y.abs()).exp(),
                                (1.0 as $f).copysign(y),
                            )
                        } else {
                            let d = (2.0 * x).cos() + (2.0 * y).cosh();
                            c((2.0 * x).sin() / d, (2.0 * y).sinh() / d)
                        }
                    }
                    MathOp::Log => c(x.hypot(y).ln(), y.atan2(x)),
                    MathOp::Log1p => {
                        if x.hypot(y) < 0.5 {
                            c(0.5 * (x * (2.0 + x) + y * y).ln_1p(), y.atan2(1.0 + x))
                        } else {
                            c((1.0 + x).hypot(y).ln(), y.atan2(1.0 + x))
                        }
                    }
                    MathOp::Expm1 => {
                        // C99's special values (the array API's): a real argument stays
                        // real, e^-inf - 1 is -1, e^(+inf + i inf or NaN) - 1 is inf + NaN i.
                        if y == 0.0 {
                            c(x.exp_m1(), y)
                        } else if x == <$f>::NEG_INFINITY {
                            let s = if y.is_finite() { y.sin() } else { 1.0 };
                            c(-1.0, (0.0 as $f).copysign(s))
                        } else if x == <$f>::INFINITY && !y.is_finite() {
                            c(<$f>::INFINITY, <$f>::NAN)
                        } else {
                            let h = (0.5 * y).sin();
                            c(x.exp_m1() * y.cos() - 2.0 * h * h, x.exp() * y.sin())
                        }
                    }
                    MathOp::Square => c(x * x - y * y, 2.0 * x * y),
                    MathOp::Reciprocal => inv(z),
                    MathOp::Rsqrt => {
                        let (re, im) = $csqrt(x, y);
                        inv(c(re, im))
                    }
                    MathOp::Sign => {
                        let m = x.hypot(y);
                        if m == 0.0 {
                            c(0.0, 0.0) // +0 + 0i for every signed zero
                        } else {
                            c(x / m, y / m)
                        }
                    }
                    MathOp::Neg => -z,
                    MathOp::Sqrt => <$c as Arith>::sqrt(z)?,
                    MathOp::Exp => <$c as Arith>::exp(z)?,
                    MathOp::Floor | MathOp::Ceil | MathOp::Round => return None,
                })
            }

            fn pow(z: $c, w: $c) -> $c {
                let c = |re: $f, im: $f| <$c>::new(re, im);
                let n = w.re;
                if w.im == 0.0 && n == n.trunc() && n.abs() <= POW_BY_MULTIPLICATION as $f {
                    // Square and multiply, then the reciprocal for a negative power.
                    let (mut r, mut b, mut e) = (c(1.0, 0.0), z, n.abs() as u32);
                    while e > 0 {
                        if e & 1 == 1 {
                            r *= b;
                        }
                        e >>= 1;
                        if e > 0 {
                            b = b * b;
                        }
                    }
                    if n < 0.0 {
                        let d = r.re * r.re + r.im * r.im;
                        r = c(r.re / d, -r.im / d);
                    }
                    return r;
                }
                if z.re == 0.0 && z.im == 0.0 {
                    return if w.re > 0.0 {
                        c(0.0, 0.0)
                    } else {
                        c(<$f>::NAN, <$f>::NAN)
                    };
                }
                let (l, a) = (z.re.hypot(z.im).ln(), z.im.atan2(z.re));
                let (tr, ti) = (w.re * l - w.im * a, w.re * a + w.im * l);
                let m = tr.exp();
                c(m * ti.cos(), m * ti.sin())
            }

            fn binary(op: BinaryMathOp, z: $c, w: $c) -> Option<$c> {
                match op {
                    BinaryMathOp::Pow => Some(Self::pow(z, w)),
                    _ => None,
                }
            }
        }
    };
}
complex_math!(c32, f32, crate::elementwise::arith::csqrt_f32);
complex_math!(c64, f64, crate::elementwise::arith::csqrt_f64);
