// Comparisons to i32 0/1 masks, classification (NaN, finite, infinite), selection by a
// mask, and the element-wise maximum and minimum: the rules of kernels/src/compare.rs and
// cpu/compare.rs. f16/bf16 compare in f32, which holds their values exactly.

__device__ inline bool ct_isnan(float a) { return a != a; }
__device__ inline bool ct_isnan(double a) { return a != a; }
__device__ inline bool ct_isnan(int) { return false; }
__device__ inline bool ct_isnan(i64) { return false; }
__device__ inline bool ct_isnan(ct_c32 a) { return a.re != a.re || a.im != a.im; }
__device__ inline bool ct_isnan(ct_c64 a) { return a.re != a.re || a.im != a.im; }

// x - x is 0 for finite x and NaN for infinities and NaN.
__device__ inline bool ct_isfinite(float a) { return a - a == 0.0f; }
__device__ inline bool ct_isfinite(double a) { return a - a == 0.0; }
__device__ inline bool ct_isfinite(int) { return true; }
__device__ inline bool ct_isfinite(i64) { return true; }
__device__ inline bool ct_isfinite(ct_c32 a) { return ct_isfinite(a.re) && ct_isfinite(a.im); }
__device__ inline bool ct_isfinite(ct_c64 a) { return ct_isfinite(a.re) && ct_isfinite(a.im); }

// a > b for ordered compute types; complex types are refused on the host.
__device__ inline bool ct_gt(float a, float b) { return a > b; }
__device__ inline bool ct_gt(double a, double b) { return a > b; }
__device__ inline bool ct_gt(int a, int b) { return a > b; }
__device__ inline bool ct_gt(i64 a, i64 b) { return a > b; }
__device__ inline bool ct_gt(ct_c32, ct_c32) { return false; }
__device__ inline bool ct_gt(ct_c64, ct_c64) { return false; }

// op: 0 <, 1 <=, 2 >, 3 >=, 4 ==, 5 != (CmpOp::code).
template <class T> __device__ void ct_compare(u64 n, int op, const T* x, const T* y, int* out) {
    typedef Ct<T> K;
    CT_GRID_STRIDE(i, n) {
        typename K::C a = K::load(x[i]), b = K::load(y[i]);
        bool nan = ct_isnan(a) || ct_isnan(b), r;
        switch (op) {
            case 0: r = ct_gt(b, a); break;
            case 1: r = !nan && !ct_gt(a, b); break;
            case 2: r = ct_gt(a, b); break;
            case 3: r = !nan && !ct_gt(b, a); break;
            case 4: r = ct_eq(a, b); break;
            default: r = !ct_eq(a, b); break;
        }
        out[i] = r ? 1 : 0;
    }
}

// what: 0 NaN, 1 finite, 2 infinite (Class).
template <class T> __device__ void ct_classify(u64 n, int what, const T* x, int* out) {
    typedef Ct<T> K;
    CT_GRID_STRIDE(i, n) {
        typename K::C a = K::load(x[i]);
        bool r = what == 0 ? ct_isnan(a) : what == 1 ? ct_isfinite(a) : (!ct_isnan(a) && !ct_isfinite(a));
        out[i] = r ? 1 : 0;
    }
}

template <class T> __device__ void ct_select(u64 n, const int* mask, const T* x, const T* y, T* out) {
    CT_GRID_STRIDE(i, n) out[i] = mask[i] != 0 ? x[i] : y[i];
}

// NaN in either operand gives NaN (NumPy's maximum/minimum); ties keep x.
template <class T> __device__ void ct_extreme2(u64 n, int max, const T* x, const T* y, T* out) {
    typedef Ct<T> K;
    CT_GRID_STRIDE(i, n) {
        T p = x[i], q = y[i];
        typename K::C a = K::load(p), b = K::load(q);
        // q only when strictly beyond p (ties, -0 and +0, keep x).
        bool beyond = max != 0 ? ct_gt(b, a) : ct_gt(a, b);
        out[i] = ct_isnan(a) ? p : (ct_isnan(b) || beyond) ? q : p;
    }
}

#define CT_COMPARE_ALL(S, T)                                                                   \
    extern "C" __global__ void compare_##S(u64 n, int op, const T* x, const T* y, int* out) {  \
        ct_compare<T>(n, op, x, y, out);                                                       \
    }                                                                                          \
    extern "C" __global__ void classify_##S(u64 n, int what, const T* x, int* out) {           \
        ct_classify<T>(n, what, x, out);                                                       \
    }                                                                                          \
    extern "C" __global__ void select_##S(u64 n, const int* mask, const T* x, const T* y, T* out) { \
        ct_select<T>(n, mask, x, y, out);                                                      \
    }
CT_ALL_TYPES(CT_COMPARE_ALL)

#define CT_COMPARE_ORDERED(S, T)                                                               \
    extern "C" __global__ void extreme2_##S(u64 n, int max, const T* x, const T* y, T* out) {  \
        ct_extreme2<T>(n, max, x, y, out);                                                     \
    }
CT_ORDERED(CT_COMPARE_ORDERED)
