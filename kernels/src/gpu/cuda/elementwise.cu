// Element-wise kernels. Each thread reads element i of its inputs and writes element i
// of its output, so every kernel is correct in place (output identical to an input).

template <class T> __device__ void ct_set(u64 n, T value, T* dst) {
    CT_GRID_STRIDE(i, n) dst[i] = value;
}

// y = alpha * x  (x := alpha * x when y == x)
template <class T> __device__ void ct_scale(u64 n, T alpha, const T* x, T* y) {
    typedef Ct<T> K;
    typename K::C a = K::load(alpha);
    CT_GRID_STRIDE(i, n) y[i] = K::store(ct_factor(a, K::load(x[i])));
}

// z = alpha * x + beta * y
template <class T> __device__ void ct_add_kernel(u64 n, T alpha, const T* x, T beta, const T* y, T* z) {
    typedef Ct<T> K;
    typename K::C a = K::load(alpha), b = K::load(beta);
    CT_GRID_STRIDE(i, n) z[i] = K::store(ct_add(ct_factor(a, K::load(x[i])), ct_factor(b, K::load(y[i]))));
}

// z = alpha * x * y
template <class T> __device__ void ct_mul_kernel(u64 n, T alpha, const T* x, const T* y, T* z) {
    typedef Ct<T> K;
    typename K::C a = K::load(alpha);
    CT_GRID_STRIDE(i, n) z[i] = K::store(ct_mul(ct_factor(a, K::load(x[i])), K::load(y[i])));
}

// z = alpha * x / y
template <class T> __device__ void ct_div_kernel(u64 n, T alpha, const T* x, const T* y, T* z) {
    typedef Ct<T> K;
    typename K::C a = K::load(alpha);
    CT_GRID_STRIDE(i, n) z[i] = K::store(ct_div(ct_factor(a, K::load(x[i])), K::load(y[i])));
}

// out = alpha * x * y + beta * z, rounded once
template <class T>
__device__ void ct_fma_kernel(u64 n, T alpha, const T* x, const T* y, T beta, const T* z, T* out) {
    typedef Ct<T> K;
    typename K::C a = K::load(alpha), b = K::load(beta);
    CT_GRID_STRIDE(i, n) {
        out[i] = K::store(ct_add(ct_mul(ct_factor(a, K::load(x[i])), K::load(y[i])), ct_factor(b, K::load(z[i]))));
    }
}

template <class T> __device__ void ct_conj_kernel(u64 n, const T* src, T* dst) {
    typedef Ct<T> K;
    CT_GRID_STRIDE(i, n) dst[i] = K::store(ct_conj(K::load(src[i])));
}

// y = (x == s) ? 1 : 0, IEEE equality (NaN equals nothing)
template <class T> __device__ void ct_eq_scalar(u64 n, const T* x, T s, T* y) {
    typedef Ct<T> K;
    typename K::C c = K::load(s);
    typedef typename K::C C;
    CT_GRID_STRIDE(i, n) y[i] = K::store(ct_eq(K::load(x[i]), c) ? ct_one<C>() : ct_zero<C>());
}

// *first = n - i for the lowest i with y[i] == 0, 0 when there is none (the host checks
// integer divisors before dividing, and names the first zero as the CPU does).
template <class T> __device__ void ct_any_zero(u64 n, const T* y, u64* first) {
    CT_GRID_STRIDE(i, n) if (y[i] == 0) atomicMax(first, n - i);
}

// |x| in the real type (the modulus for complex; MIN stays MIN for integers)
__device__ inline float ct_abs(float a) { return fabsf(a); }
__device__ inline double ct_abs(double a) { return fabs(a); }
__device__ inline int ct_abs(int a) { return a < 0 ? ct_neg(a) : a; }
__device__ inline i64 ct_abs(i64 a) { return a < 0 ? ct_neg(a) : a; }
__device__ inline float ct_abs(ct_c32 a) { return hypotf(a.re, a.im); }
__device__ inline double ct_abs(ct_c64 a) { return hypot(a.re, a.im); }
template <class T, class R> __device__ void ct_abs_kernel(u64 n, const T* x, R* y) {
    CT_GRID_STRIDE(i, n) y[i] = Ct<R>::store(ct_abs(Ct<T>::load(x[i])));
}

// ---- the entry points, one per element type ---------------------------------------------

#define CT_EW_ALL(S, T)                                                                       \
    extern "C" __global__ void set_##S(u64 n, T value, T* dst) { ct_set<T>(n, value, dst); }  \
    extern "C" __global__ void scale_##S(u64 n, T alpha, const T* x, T* y) { ct_scale<T>(n, alpha, x, y); } \
    extern "C" __global__ void add_##S(u64 n, T alpha, const T* x, T beta, const T* y, T* z) { \
        ct_add_kernel<T>(n, alpha, x, beta, y, z);                                             \
    }                                                                                          \
    extern "C" __global__ void mul_##S(u64 n, T alpha, const T* x, const T* y, T* z) {         \
        ct_mul_kernel<T>(n, alpha, x, y, z);                                                   \
    }                                                                                          \
    extern "C" __global__ void div_##S(u64 n, T alpha, const T* x, const T* y, T* z) {         \
        ct_div_kernel<T>(n, alpha, x, y, z);                                                   \
    }                                                                                          \
    extern "C" __global__ void fma_##S(u64 n, T alpha, const T* x, const T* y, T beta, const T* z, T* out) { \
        ct_fma_kernel<T>(n, alpha, x, y, beta, z, out);                                        \
    }                                                                                          \
    extern "C" __global__ void conj_##S(u64 n, const T* src, T* dst) { ct_conj_kernel<T>(n, src, dst); } \
    extern "C" __global__ void eq_scalar_##S(u64 n, const T* x, T s, T* y) { ct_eq_scalar<T>(n, x, s, y); }
CT_ALL_TYPES(CT_EW_ALL)


#define CT_EW_INTS(S, T)                                                                      \
    extern "C" __global__ void any_zero_##S(u64 n, const T* y, u64* first) { ct_any_zero<T>(n, y, first); }
CT_INTS(CT_EW_INTS)

#define CT_EW_ABS(S, T, R)                                                                    \
    extern "C" __global__ void abs_##S(u64 n, const T* x, R* y) { ct_abs_kernel<T, R>(n, x, y); }
CT_EW_ABS(f32, float, float)
CT_EW_ABS(f64, double, double)
CT_EW_ABS(i32, int, int)
CT_EW_ABS(i64, i64, i64)
CT_EW_ABS(c32, ct_c32, float)
CT_EW_ABS(c64, ct_c64, double)
CT_EW_ABS(f16, ct_f16, ct_f16)
CT_EW_ABS(bf16, ct_bf16, ct_bf16)
