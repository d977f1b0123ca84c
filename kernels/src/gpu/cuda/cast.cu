// Conversions between every pair of element types, by the rules of ctensor_base::cast:
//   float -> integer truncates toward zero and saturates, NaN -> 0 (PTX cvt.rzi.sat does
//   exactly this for the C++ casts below); integer narrowing wraps; to f16/bf16 rounds
//   once to nearest even from the exact value; complex -> real keeps the real part;
//   real -> complex has a zero imaginary part.

// Every source value as a double or i64 "wide" value, without loss where possible.
__device__ inline double ct_wide(float x) { return x; }
__device__ inline double ct_wide(double x) { return x; }
__device__ inline i64 ct_wide(int x) { return x; }
__device__ inline i64 ct_wide(i64 x) { return x; }
__device__ inline double ct_wide(ct_f16 x) { return ct_f16_to_f32(x.bits); }
__device__ inline double ct_wide(ct_bf16 x) { return ct_bf16_to_f32(x.bits); }
__device__ inline double ct_wide(ct_c32 x) { return x.re; }
__device__ inline double ct_wide(ct_c64 x) { return x.re; }
__device__ inline double ct_wide_im(ct_c32 x) { return x.im; }
__device__ inline double ct_wide_im(ct_c64 x) { return x.im; }
template <class S> __device__ inline double ct_wide_im(S) { return 0.0; }

// Float-to-integer: truncate, saturate, NaN to 0 (as Rust's `as`).
template <class I> __device__ inline I ct_sat(double v, double lo, double hi, I imin, I imax) {
    if (v != v) return 0;
    if (v <= lo) return imin;
    if (v >= hi) return imax;
    return (I)v;
}

__device__ inline void ct_put(float* d, double v, double) { *d = (float)v; }
__device__ inline void ct_put(double* d, double v, double) { *d = v; }
__device__ inline void ct_put(int* d, double v, double) {
    *d = ct_sat<int>(v, -2147483648.0, 2147483647.0, (int)0x80000000, 0x7fffffff);
}
__device__ inline void ct_put(i64* d, double v, double) {
    *d = ct_sat<i64>(v, -9223372036854775808.0, 9223372036854775807.0,
                     (i64)0x8000000000000000ULL, 0x7fffffffffffffffLL);
}
__device__ inline void ct_put(ct_f16* d, double v, double) { d->bits = ct_round_small(v, 10, 15); }
__device__ inline void ct_put(ct_bf16* d, double v, double) { d->bits = ct_round_small(v, 7, 127); }
__device__ inline void ct_put(ct_c32* d, double re, double im) { d->re = (float)re; d->im = (float)im; }
__device__ inline void ct_put(ct_c64* d, double re, double im) { d->re = re; d->im = im; }

// Integer sources keep full precision where the destination can.
__device__ inline void ct_put(float* d, i64 v, double) { *d = (float)v; }
__device__ inline void ct_put(double* d, i64 v, double) { *d = (double)v; }
__device__ inline void ct_put(int* d, i64 v, double) { *d = (int)(u32)(u64)v; }
__device__ inline void ct_put(i64* d, i64 v, double) { *d = v; }
__device__ inline void ct_put(ct_f16* d, i64 v, double) { d->bits = ct_round_small(ct_i64_odd(v), 10, 15); }
__device__ inline void ct_put(ct_bf16* d, i64 v, double) { d->bits = ct_round_small(ct_i64_odd(v), 7, 127); }
__device__ inline void ct_put(ct_c32* d, i64 v, double) { d->re = (float)v; d->im = 0.0f; }
__device__ inline void ct_put(ct_c64* d, i64 v, double) { d->re = (double)v; d->im = 0.0; }

// A complex destination from a complex source converts both parts; from a real source
// the imaginary part is zero (ct_wide_im gives 0).
template <class D, class S> __device__ void ct_cast(u64 n, const S* src, D* dst) {
    CT_GRID_STRIDE(i, n) {
        D out;
        ct_put(&out, ct_wide(src[i]), ct_wide_im(src[i]));
        dst[i] = out;
    }
}

#define CT_CAST_FROM(SD, TD)                                                                   \
    CT_CAST_ONE(SD, TD, f32, float) CT_CAST_ONE(SD, TD, f64, double)                           \
    CT_CAST_ONE(SD, TD, i32, int) CT_CAST_ONE(SD, TD, i64, i64)                                \
    CT_CAST_ONE(SD, TD, c32, ct_c32) CT_CAST_ONE(SD, TD, c64, ct_c64)                          \
    CT_CAST_ONE(SD, TD, f16, ct_f16) CT_CAST_ONE(SD, TD, bf16, ct_bf16)
#define CT_CAST_ONE(SD, TD, SS, TS)                                                            \
    extern "C" __global__ void cast_##SD##_##SS(u64 n, const TS* src, TD* dst) {               \
        ct_cast<TD, TS>(n, src, dst);                                                          \
    }
CT_ALL_TYPES(CT_CAST_FROM)
