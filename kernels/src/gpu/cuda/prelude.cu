// ctensor's CUDA prelude: element types, their arithmetic and the grid-stride loop.
// Every kernel source is compiled with this text in front of it (see gpu/source.rs);
// it includes no header, so NVRTC alone compiles it.
//
// Element types and how they compute (the same rules as the CPU kernels):
//   f32 f64      native
//   i32 i64      wrapping (computed on the unsigned type, so overflow is defined)
//   c32 c64      {re, im} structs, bit-compatible with num_complex and cuComplex
//   f16 bf16     16-bit storage; loaded to f32, computed in f32, rounded once to
//                nearest even on store
// Sizes and indices are 64-bit throughout.

typedef unsigned long long u64;
typedef long long i64;
typedef unsigned int u32;

struct __align__(2) ct_f16 { unsigned short bits; };
struct __align__(2) ct_bf16 { unsigned short bits; };
struct __align__(8) ct_c32 { float re, im; };
struct __align__(16) ct_c64 { double re, im; };

// Every custom kernel walks its index space with this loop, so any grid size covers any n.
#define CT_GRID_STRIDE(i, n)                                                          \
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < (u64)(n);           \
         i += (u64)blockDim.x * gridDim.x)

// ---- 16-bit floats -----------------------------------------------------------------

__device__ inline float ct_f16_to_f32(unsigned short h) {
    unsigned sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    float v;
    if (exp == 0) v = ldexpf((float)man, -24);
    else if (exp == 31) v = man ? __int_as_float(0x7fc00000) : __int_as_float(0x7f800000);
    else v = ldexpf((float)(man | 0x400), (int)exp - 25);
    return sign ? -v : v;
}

__device__ inline float ct_bf16_to_f32(unsigned short b) {
    return __int_as_float(((unsigned)b) << 16);
}

// v / 2^s rounded to nearest, ties to even (s >= 0).
__device__ inline u64 ct_rne_shift(u64 v, int s) {
    if (s <= 0) return v;
    if (s >= 64) return 0;
    u64 q = v >> s, r = v & ((1ULL << s) - 1), half = 1ULL << (s - 1);
    if (r > half || (r == half && (q & 1))) q++;
    return q;
}

// A double rounded once to a binary float with `man` mantissa bits and exponent bias
// `bias` (f16: 10, 15; bf16: 7, 127), as its bit pattern. Exact for f32 inputs too,
// since every f32 is a double.
__device__ inline unsigned short ct_round_small(double x, int man, int bias) {
    u64 b = (u64)__double_as_longlong(x);
    unsigned short sign = (unsigned short)((b >> 63) << 15);
    int exp = (int)((b >> 52) & 0x7ff);
    u64 frac = b & 0xfffffffffffffULL;
    unsigned short inf = (unsigned short)(((2 * bias + 1) << man));
    if (exp == 0x7ff) return sign | inf | (frac ? (1 << (man - 1)) : 0);
    if (exp == 0) return sign;  // double subnormals are far below either type's range
    int e = exp - 1023;
    if (e > bias) return sign | inf;
    u64 sig = frac | (1ULL << 52);
    int emin = 1 - bias;
    u64 bits;
    if (e >= emin) bits = ((u64)(e + bias - 1) << man) + ct_rne_shift(sig, 52 - man);
    else bits = ct_rne_shift(sig, 52 + emin - man - e);
    if (bits >= inf) return sign | inf;
    return sign | (unsigned short)bits;
}

// An i64 as a double rounded to odd (toward zero, last bit set when inexact), so that
// ct_round_small of it rounds once, as from the exact integer (see base/src/cast.rs).
__device__ inline double ct_i64_odd(i64 x) {
    u64 m = x < 0 ? 0ULL - (u64)x : (u64)x;
    if (m < (1ULL << 53)) return (double)x;
    int top = 63;
    while (!((m >> top) & 1)) --top;
    int shift = top - 52;  // keep 53 significant bits
    u64 q = (m >> shift) | ((m & ((1ULL << shift) - 1)) ? 1ULL : 0ULL);
    double v = (double)q * (double)(1ULL << shift);  // both exact
    return x < 0 ? -v : v;
}

// ---- the compute type of each element type -----------------------------------------

template <class T> struct Ct;
template <> struct Ct<float> {
    typedef float C;
    static __device__ float load(float x) { return x; }
    static __device__ float store(float c) { return c; }
};
template <> struct Ct<double> {
    typedef double C;
    static __device__ double load(double x) { return x; }
    static __device__ double store(double c) { return c; }
};
template <> struct Ct<int> {
    typedef int C;
    static __device__ int load(int x) { return x; }
    static __device__ int store(int c) { return c; }
};
template <> struct Ct<i64> {
    typedef i64 C;
    static __device__ i64 load(i64 x) { return x; }
    static __device__ i64 store(i64 c) { return c; }
};
template <> struct Ct<ct_c32> {
    typedef ct_c32 C;
    static __device__ ct_c32 load(ct_c32 x) { return x; }
    static __device__ ct_c32 store(ct_c32 c) { return c; }
};
template <> struct Ct<ct_c64> {
    typedef ct_c64 C;
    static __device__ ct_c64 load(ct_c64 x) { return x; }
    static __device__ ct_c64 store(ct_c64 c) { return c; }
};
template <> struct Ct<ct_f16> {
    typedef float C;
    static __device__ float load(ct_f16 x) { return ct_f16_to_f32(x.bits); }
    static __device__ ct_f16 store(float c) { ct_f16 h; h.bits = ct_round_small((double)c, 10, 15); return h; }
};
template <> struct Ct<ct_bf16> {
    typedef float C;
    static __device__ float load(ct_bf16 x) { return ct_bf16_to_f32(x.bits); }
    static __device__ ct_bf16 store(float c) { ct_bf16 h; h.bits = ct_round_small((double)c, 7, 127); return h; }
};

// ---- arithmetic on compute types -------------------------------------------------------

__device__ inline float ct_add(float a, float b) { return a + b; }
__device__ inline double ct_add(double a, double b) { return a + b; }
__device__ inline int ct_add(int a, int b) { return (int)((u32)a + (u32)b); }
__device__ inline i64 ct_add(i64 a, i64 b) { return (i64)((u64)a + (u64)b); }
__device__ inline ct_c32 ct_add(ct_c32 a, ct_c32 b) { ct_c32 r = {a.re + b.re, a.im + b.im}; return r; }
__device__ inline ct_c64 ct_add(ct_c64 a, ct_c64 b) { ct_c64 r = {a.re + b.re, a.im + b.im}; return r; }

__device__ inline float ct_mul(float a, float b) { return a * b; }
__device__ inline double ct_mul(double a, double b) { return a * b; }
__device__ inline int ct_mul(int a, int b) { return (int)((u32)a * (u32)b); }
__device__ inline i64 ct_mul(i64 a, i64 b) { return (i64)((u64)a * (u64)b); }
__device__ inline ct_c32 ct_mul(ct_c32 a, ct_c32 b) {
    ct_c32 r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; return r;
}
__device__ inline ct_c64 ct_mul(ct_c64 a, ct_c64 b) {
    ct_c64 r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; return r;
}

// a * x for an op's factor a (alpha, beta), as the host's Arith::scale: ct_mul, except that
// a complex factor with a zero imaginary part scales both parts as the real number it is,
// so (1 + 0i) * x == x even where x has an infinite part (the full product's 0 * inf is
// NaN). The test is on a kernel argument: every thread takes the same side.
template <class C> __device__ inline C ct_factor(C a, C x) { return ct_mul(a, x); }
__device__ inline ct_c32 ct_factor(ct_c32 a, ct_c32 x) {
    if (a.im == 0.0f) { ct_c32 r = {a.re * x.re, a.re * x.im}; return r; }
    return ct_mul(a, x);
}
__device__ inline ct_c64 ct_factor(ct_c64 a, ct_c64 x) {
    if (a.im == 0.0) { ct_c64 r = {a.re * x.re, a.re * x.im}; return r; }
    return ct_mul(a, x);
}

// Integer division truncates; MIN / -1 wraps to MIN; the host checks for zero divisors
// before launching, so b == 0 never reaches here (it gives 0 rather than a trap).
__device__ inline float ct_div(float a, float b) { return a / b; }
__device__ inline double ct_div(double a, double b) { return a / b; }
__device__ inline int ct_div(int a, int b) { return b == 0 ? 0 : (b == -1 ? (int)(0u - (u32)a) : a / b); }
__device__ inline i64 ct_div(i64 a, i64 b) { return b == 0 ? 0 : (b == -1 ? (i64)(0ull - (u64)a) : a / b); }
// Complex a / b by Smith's method (CACM 5(8), 1962; NumPy's too): divide through by the
// larger part of b, so no |b|^2 is formed, which would overflow for |b| > 1.3e154 (c64;
// 1.8e19 for c32) and underflow below 1.5e-154 (1.1e-19) while the quotient is finite.
// Division by zero gives the parts of a over +0, as NumPy; a real divisor (zero imaginary
// part) divides each part, so (0 + inf i) / 2 is 0 + inf i. As the host's Arith::div.
#define CT_SMITH_DIV(C, R)                                                             \
    __device__ inline C ct_div(C a, C b) {                                             \
        R br = fabs(b.re), bi = fabs(b.im);                                            \
        C r;                                                                           \
        if (br >= bi) {                                                                \
            if (br == (R)0 && bi == (R)0) {                                            \
                r.re = a.re / br; r.im = a.im / br;                                    \
            } else if (bi == (R)0) {                                                   \
                r.re = a.re / b.re; r.im = a.im / b.re;                                \
            } else {                                                                   \
                R rat = b.im / b.re, scl = (R)1 / (b.re + b.im * rat);                 \
                r.re = (a.re + a.im * rat) * scl; r.im = (a.im - a.re * rat) * scl;    \
            }                                                                          \
        } else {                                                                       \
            R rat = b.re / b.im, scl = (R)1 / (b.im + b.re * rat);                     \
            r.re = (a.re * rat + a.im) * scl; r.im = (a.im * rat - a.re) * scl;        \
        }                                                                              \
        return r;                                                                      \
    }
CT_SMITH_DIV(ct_c32, float)
CT_SMITH_DIV(ct_c64, double)

__device__ inline float ct_neg(float a) { return -a; }
__device__ inline double ct_neg(double a) { return -a; }
__device__ inline int ct_neg(int a) { return (int)(0u - (u32)a); }
__device__ inline i64 ct_neg(i64 a) { return (i64)(0ull - (u64)a); }
__device__ inline ct_c32 ct_neg(ct_c32 a) { ct_c32 r = {-a.re, -a.im}; return r; }
__device__ inline ct_c64 ct_neg(ct_c64 a) { ct_c64 r = {-a.re, -a.im}; return r; }

template <class C> __device__ inline C ct_conj(C a) { return a; }
template <> __device__ inline ct_c32 ct_conj(ct_c32 a) { ct_c32 r = {a.re, -a.im}; return r; }
template <> __device__ inline ct_c64 ct_conj(ct_c64 a) { ct_c64 r = {a.re, -a.im}; return r; }

__device__ inline bool ct_eq(float a, float b) { return a == b; }
__device__ inline bool ct_eq(double a, double b) { return a == b; }
__device__ inline bool ct_eq(int a, int b) { return a == b; }
__device__ inline bool ct_eq(i64 a, i64 b) { return a == b; }
__device__ inline bool ct_eq(ct_c32 a, ct_c32 b) { return a.re == b.re && a.im == b.im; }
__device__ inline bool ct_eq(ct_c64 a, ct_c64 b) { return a.re == b.re && a.im == b.im; }

template <class C> __device__ inline C ct_zero() { return (C)0; }
template <> __device__ inline ct_c32 ct_zero() { ct_c32 r = {0.0f, 0.0f}; return r; }
template <> __device__ inline ct_c64 ct_zero() { ct_c64 r = {0.0, 0.0}; return r; }
template <class C> __device__ inline C ct_one() { return (C)1; }
template <> __device__ inline ct_c32 ct_one() { ct_c32 r = {1.0f, 0.0f}; return r; }
template <> __device__ inline ct_c64 ct_one() { ct_c64 r = {1.0, 0.0}; return r; }

// ---- square roots (elementwise.cu and math.cu) --------------------------------------

__device__ inline float ct_sqrt(float a) { return sqrtf(a); }
__device__ inline double ct_sqrt(double a) { return sqrt(a); }
// The principal square root: re >= 0, im with the sign of the input's im.
// The principal square root without cancellation, overflow or needless underflow
// (Kahan 1987): t = sqrt((|re| + hypot(re, im)) / 2), the other part |im| / (2t), swapped
// for re < 0, the sign of im on the imaginary part; inputs near the ends of the exponent
// range scaled by a power of 4. The same formula as the CPU's csqrt_f32/csqrt_f64
// (kernels/src/arith.rs); non-finite inputs as C99 Annex G.
template <class R, class Z> __device__ inline Z ct_csqrt(Z a, R big, R small, R up, R down) {
    const R inf = (R)1 / (R)0;
    R re = a.re, im = a.im;
    Z z;
    if (im == inf || im == -inf) { z.re = inf; z.im = im; return z; }
    if (re != re) { z.re = re; z.im = (im != im) ? im : re; return z; }
    if (re == inf) { z.re = re; z.im = (im != im) ? im : copysign((R)0, im); return z; }
    if (re == -inf) { z.re = (im != im) ? fabs(im) : (R)0; z.im = copysign(inf, im); return z; }
    if (im != im) { z.re = im; z.im = im; return z; }
    if (re == 0 && im == 0) { z.re = 0; z.im = im; return z; }
    R m = fmax(fabs(re), fabs(im));
    R s = 1, back = 1;
    if (m > big) { s = (R)0.25; back = 2; }
    else if (m < small) { s = up; back = down; }
    R x = re * s, y = im * s;
    R t = sqrt((fabs(x) + hypot(x, y)) * (R)0.5);
    R other = fabs(y) / (2 * t);
    if (x >= 0) { z.re = t * back; z.im = copysign(other * back, im); }
    else { z.re = other * back; z.im = copysign(t * back, im); }
    return z;
}
// Scaled by 4^k before the root and by 2^-k after: k = 40 (c32) and 300 (c64), written as
// exact powers of two (2^80 and 2^-40; 2^600 and 2^-300).
__device__ inline ct_c32 ct_sqrt(ct_c32 a) { return ct_csqrt<float, ct_c32>(a, 2.0e37f, 1.0e-30f, 1.2089258196146292e24f, 9.094947017729282e-13f); }
__device__ inline ct_c64 ct_sqrt(ct_c64 a) { return ct_csqrt<double, ct_c64>(a, 4.0e307, 1.0e-290, 4.149515568880993e180, 4.909093465297727e-91); }

// exp: real, and complex as e^re (cos im + i sin im) with the corner cases of C99's cexp
// (the same as the host's num-complex): exp(±inf + i·(inf or NaN)) is 0 for -inf and
// (inf, NaN) for +inf, exp(+inf + 0i) = +inf + 0i, exp(NaN + 0i) = NaN + 0i.
__device__ inline float ct_exp(float a) { return expf(a); }
__device__ inline double ct_exp(double a) { return exp(a); }
#define CT_CEXP(Z, R, F)                                                                       \
    __device__ inline Z ct_exp(Z a) {                                                          \
        R re = a.re, im = a.im;                                                                \
        Z z;                                                                                   \
        if (isinf(re)) {                                                                       \
            if (re < (R)0) {                                                                   \
                if (!isfinite(im)) { z.re = (R)0; z.im = (R)0; return z; }                     \
            } else if (im == (R)0 || !isfinite(im)) {                                          \
                if (isinf(im)) im = nan##F("");                                                \
                z.re = re; z.im = im; return z;                                                \
            }                                                                                  \
        } else if (isnan(re) && im == (R)0) {                                                  \
            return a;                                                                          \
        }                                                                                      \
        R m = exp##F(re);                                                                      \
        z.re = m * cos##F(im); z.im = m * sin##F(im);                                          \
        return z;                                                                              \
    }
CT_CEXP(ct_c32, float, f)
CT_CEXP(ct_c64, double, )

// The element types, as (suffix, storage type) pairs, for instantiating kernels.
#define CT_REAL_FLOATS(X) X(f32, float) X(f64, double) X(f16, ct_f16) X(bf16, ct_bf16)
#define CT_INTS(X) X(i32, int) X(i64, i64)
#define CT_COMPLEX(X) X(c32, ct_c32) X(c64, ct_c64)
#define CT_ORDERED(X) CT_REAL_FLOATS(X) CT_INTS(X)
#define CT_FLOATING(X) CT_REAL_FLOATS(X) CT_COMPLEX(X)
#define CT_ALL_TYPES(X) CT_ORDERED(X) CT_COMPLEX(X)

// Shapes and strides of a strided view, passed by value (rank after merging axes).
#define CT_MAX_RANK 16
struct CtDims {
    int rank;
    u64 shape[CT_MAX_RANK];
    u64 a[CT_MAX_RANK];  // strides (in elements) of the first view
    u64 b[CT_MAX_RANK];  // strides of the second view
};

// The offsets in the two views of the i-th element in row-major order.
__device__ inline void ct_offsets(const CtDims& d, u64 i, u64* oa, u64* ob) {
    u64 a = 0, b = 0;
    for (int k = d.rank - 1; k >= 0; --k) {
        u64 s = d.shape[k];
        u64 q = i / s, r = i - q * s;
        a += r * d.a[k];
        b += r * d.b[k];
        i = q;
    }
    *oa = a;
    *ob = b;
}
