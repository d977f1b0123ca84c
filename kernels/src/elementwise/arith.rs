//! Element arithmetic for the linalg kernels, for all eight element types.
//!
//! Half-precision types compute in `f32` and round once when stored; integers wrap on
//! overflow (as two's-complement hardware does, and never panic); integer division by
//! zero is rejected by the kernels before any element is written.

use ctensor_base::{bf16, c32, c64, f16, Scalar};

/// How one element type adds, multiplies and divides in the linalg kernels.
pub trait Arith: Scalar {
    /// The type computations are carried out in (`f32` for `f16`/`bf16`, else `Self`).
    type Acc: Copy + Send + Sync + PartialEq;
    /// Widens to the compute type.
    fn up(self) -> Self::Acc;
    /// Rounds a computed value back to `Self`.
    fn down(a: Self::Acc) -> Self;
    /// `a + b` (wrapping for integers).
    fn add(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// `a · b` (wrapping for integers).
    fn mul(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// `a · x` for an op's factor `a` (`alpha`, `beta`): [`mul`](Self::mul), except that a
    /// complex factor with a zero imaginary part scales both parts of `x` as the real
    /// number it is. So `(1 + 0i) · x == x` exactly, and `a + b` (computed as
    /// `1·a + 1·b`) is NumPy's `a + b` even where a part is infinite: the full product
    /// gives `1·re − 0·im`, which is NaN for an infinite `im`.
    #[inline(always)]
    fn scale(a: Self::Acc, x: Self::Acc) -> Self::Acc {
        Self::mul(a, x)
    }
    /// `a / b`; for integers truncating and wrapping (`MIN / -1 == MIN`); the caller
    /// guarantees `b != 0` for integers.
    fn div(a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// Whether division by this value is rejected (integer zero).
    fn is_bad_divisor(self) -> bool {
        false
    }
    /// `-a` (wrapping for integers).
    fn neg(a: Self::Acc) -> Self::Acc;
    /// `sqrt(a)` (principal branch for complex); `None` for integers.
    fn sqrt(a: Self::Acc) -> Option<Self::Acc>;
    /// `exp(a)`; `None` for integers.
    fn exp(a: Self::Acc) -> Option<Self::Acc>;
    /// `|x|` as the real type (the modulus for complex; wrapping for `MIN` integers).
    fn abs(self) -> Self::Real;
    /// `a > b` for ordered types, `None` for complex (which has no order).
    fn gt(a: Self::Acc, b: Self::Acc) -> Option<bool>;
    /// Whether `a` is NaN (never for integers; either part for complex).
    fn is_nan(a: Self::Acc) -> bool;
    /// Whether `a` is finite (always for integers; both parts for complex).
    fn is_finite(a: Self::Acc) -> bool;
}

/// Floating types compute in themselves; `$abs` and `$gt` differ between the real
/// and complex ones (the modulus; no order).
/// The principal square root of `re + i·im` without cancellation, overflow or needless
/// underflow (Kahan, "Branch cuts for complex elementary functions", 1987): with
/// `t = √((|re| + hypot(re, im)) / 2)` the parts are `t` and `im / (2t)`, swapped for
/// `re < 0` with the sign of `im` on the imaginary part. Inputs near the ends of the
/// exponent range are scaled by a power of 4 first. The CUDA prelude's `ct_csqrt` is the
/// same formula; non-finite inputs follow C99 Annex G (`csqrt`).
macro_rules! csqrt_fn {
    ($name:ident, $f:ty, $big:expr, $small:expr, $k:expr) => {
        pub(crate) fn $name(re: $f, im: $f) -> ($f, $f) {
            if im.is_infinite() {
                return (<$f>::INFINITY, im);
            }
            if re.is_nan() {
                return (re, if im.is_nan() { im } else { <$f>::NAN });
            }
            if re.is_infinite() {
                return if re > 0.0 {
                    (
                        re,
                        if im.is_nan() {
                            im
                        } else {
                            (0.0 as $f).copysign(im)
                        },
                    )
                } else {
                    (
                        if im.is_nan() { im.abs() } else { 0.0 },
                        <$f>::INFINITY.copysign(im),
                    )
                };
            }
            if im.is_nan() {
                return (<$f>::NAN, im);
            }
            if re == 0.0 && im == 0.0 {
                return (0.0, im);
            }
            let m = re.abs().max(im.abs());
            // √(4ᵏ z) = 2ᵏ √z: keep |re| + hypot away from overflow and underflow.
            let (s, back) = if m > $big {
                (0.25, 2.0)
            } else if m < $small {
                (<$f>::powi(4.0, $k), <$f>::powi(0.5, $k))
            } else {
                (1.0, 1.0)
            };
            let (x, y) = (re * s, im * s);
            let t = ((x.abs() + x.hypot(y)) * 0.5).sqrt();
            let other = y.abs() / (2.0 * t);
            if x >= 0.0 {
                (t * back, (other * back).copysign(im))
            } else {
                (other * back, (t * back).copysign(im))
            }
        }
    };
}
csqrt_fn!(csqrt_f32, f32, 2.0e37, 1.0e-30, 40);
csqrt_fn!(csqrt_f64, f64, 4.0e307, 1.0e-290, 300);

/// [`Arith::scale`] for a complex type. Written with selects on the (loop-invariant) test
/// rather than a branch, so element loops still vectorize; `x − 0` and `x + (−0)` are
/// `x` for every `x`, signed zeros, infinities and NaN included, so the real-factor case
/// is exactly `(a.re · x.re, a.re · x.im)`, as the CUDA prelude's `ct_factor`.
macro_rules! complex_factor {
    ($c:ty, $a:expr, $x:expr) => {{
        let (a, x) = ($a, $x);
        let real = a.im == 0.0;
        let t_re = if real { 0.0 } else { a.im * x.im };
        let t_im = if real { -0.0 } else { a.im * x.re };
        <$c>::new(a.re * x.re - t_re, a.re * x.im + t_im)
    }};
}

/// `a / b` for a complex type by Smith's method (R. L. Smith, "Algorithm 116: Complex
/// division", CACM 5(8), 1962), the method NumPy uses: divide through by the larger part
/// of `b`, so no `|b|²` is formed. The textbook `a·conj(b) / |b|²` overflows for
/// `|b| > 1.3e154` (c64; `1.8e19` for c32) and underflows below `1.5e-154` (`1.1e-19`),
/// where the quotient itself is finite: `(1 + i) / (1e-20 + 1e-20i)` in c32 is `1e20`, not
/// infinity. Division by zero gives the parts of `a` over `+0`, infinities or NaN, as
/// NumPy. A real divisor (`x / 2.0`, a zero imaginary part) divides each part: correctly
/// rounded, and `(0 + ∞i) / 2` is `0 + ∞i` where Smith's `(0 + ∞·0) / 2` is NaN. The
/// CUDA prelude's `ct_div` is the same arithmetic.
macro_rules! complex_quotient {
    ($c:ty, $a:expr, $b:expr) => {{
        let (a, b) = ($a, $b);
        let (br, bi) = (b.re.abs(), b.im.abs());
        if br >= bi {
            if br == 0.0 && bi == 0.0 {
                <$c>::new(a.re / br, a.im / br)
            } else if bi == 0.0 {
                <$c>::new(a.re / b.re, a.im / b.re)
            } else {
                let rat = b.im / b.re;
                let scl = 1.0 / (b.re + b.im * rat);
                <$c>::new((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl)
            }
        } else {
            let rat = b.re / b.im;
            let scl = 1.0 / (b.im + b.re * rat);
            <$c>::new((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl)
        }
    }};
}

macro_rules! impl_arith_float {
    ($($t:ty => $r:ty, |$x:ident| $abs:expr, |$a:ident, $b:ident| $gt:expr, |$q:ident| $sqrt:expr,
       |$da:ident, $db:ident| $div:expr $(, |$fa:ident, $fx:ident| $scale:expr)?);* $(;)?) => {$(
        impl Arith for $t {
            type Acc = $t;
            $(
                #[inline(always)]
                fn scale($fa: Self, $fx: Self) -> Self { $scale }
            )?
            #[inline(always)]
            fn up(self) -> Self { self }
            #[inline(always)]
            fn down(a: Self) -> Self { a }
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self { a + b }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self { a * b }
            #[inline(always)]
            fn div($da: Self, $db: Self) -> Self { $div }
            #[inline(always)]
            fn neg(a: Self) -> Self { -a }
            #[inline(always)]
            fn sqrt(a: Self) -> Option<Self> { let $q = a; Some($sqrt) }
            #[inline(always)]
            fn exp(a: Self) -> Option<Self> { Some(a.exp()) }
            #[inline(always)]
            fn abs(self) -> $r { let $x = self; $abs }
            #[inline(always)]
            #[allow(unused_variables)]
            fn gt($a: Self, $b: Self) -> Option<bool> { $gt }
            #[inline(always)]
            fn is_nan(a: Self) -> bool { a.is_nan() }
            #[inline(always)]
            fn is_finite(a: Self) -> bool { a.is_finite() }
        }
    )*};
}
impl_arith_float! {
    f32 => f32, |x| x.abs(), |a, b| Some(a > b), |q| q.sqrt(), |a, b| a / b;
    f64 => f64, |x| x.abs(), |a, b| Some(a > b), |q| q.sqrt(), |a, b| a / b;
    c32 => f32, |x| x.norm(), |a, b| None, |q| { let (re, im) = csqrt_f32(q.re, q.im); c32::new(re, im) },
        |a, b| complex_quotient!(c32, a, b), |a, x| complex_factor!(c32, a, x);
    c64 => f64, |x| x.norm(), |a, b| None, |q| { let (re, im) = csqrt_f64(q.re, q.im); c64::new(re, im) },
        |a, b| complex_quotient!(c64, a, b), |a, x| complex_factor!(c64, a, x);
}

macro_rules! impl_arith_int {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            type Acc = $t;
            #[inline(always)]
            fn up(self) -> Self { self }
            #[inline(always)]
            fn down(a: Self) -> Self { a }
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            #[inline(always)]
            fn div(a: Self, b: Self) -> Self { if b == 0 { 0 } else { a.wrapping_div(b) } }
            #[inline(always)]
            fn is_bad_divisor(self) -> bool { self == 0 }
            #[inline(always)]
            fn neg(a: Self) -> Self { a.wrapping_neg() }
            #[inline(always)]
            fn sqrt(_: Self) -> Option<Self> { None }
            #[inline(always)]
            fn exp(_: Self) -> Option<Self> { None }
            #[inline(always)]
            fn abs(self) -> Self { self.wrapping_abs() }
            #[inline(always)]
            fn gt(a: Self, b: Self) -> Option<bool> { Some(a > b) }
            #[inline(always)]
            fn is_nan(_: Self) -> bool { false }
            #[inline(always)]
            fn is_finite(_: Self) -> bool { true }
        }
    )*};
}
impl_arith_int!(i32, i64);

macro_rules! impl_arith_half {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            type Acc = f32;
            #[inline(always)]
            fn up(self) -> f32 { self.to_f32() }
            #[inline(always)]
            fn down(a: f32) -> Self { <$t>::from_f32(a) }
            #[inline(always)]
            fn add(a: f32, b: f32) -> f32 { a + b }
            #[inline(always)]
            fn mul(a: f32, b: f32) -> f32 { a * b }
            #[inline(always)]
            fn div(a: f32, b: f32) -> f32 { a / b }
            #[inline(always)]
            fn neg(a: f32) -> f32 { -a }
            #[inline(always)]
            fn sqrt(a: f32) -> Option<f32> { Some(a.sqrt()) }
            #[inline(always)]
            fn exp(a: f32) -> Option<f32> { Some(a.exp()) }
            #[inline(always)]
            fn abs(self) -> Self { <$t>::from_f32(self.to_f32().abs()) }
            #[inline(always)]
            fn gt(a: f32, b: f32) -> Option<bool> { Some(a > b) }
            #[inline(always)]
            fn is_nan(a: f32) -> bool { a.is_nan() }
            #[inline(always)]
            fn is_finite(a: f32) -> bool { a.is_finite() }
        }
    )*};
}
impl_arith_half!(f16, bf16);
