// Element-wise mathematical functions, one kernel per type with the function as a code
// (MathOp::code: 0 sin, 1 cos, 2 tan, 3 log, 4 log1p, 5 expm1, 6 square, 7 reciprocal,
// 8 rsqrt, 9 sign, 10 floor, 11 ceil, 12 round, 13 neg, 14 sqrt, 15 exp), and the binary
// functions (BinaryMathOp::code: 0 pow, 1 atan2, 2 hypot, 3 copysign, 4 fmod, 5 logaddexp). The
// formulas are those of kernels/src/elementwise/math.rs, line for line; the host refuses
// the codes a type does not take.

#define CT_REAL_MATH(R, F)                                                                     \
    __device__ inline R ct_math(int op, R a) {                                                 \
        switch (op) {                                                                          \
            case 0: return sin##F(a);                                                          \
            case 1: return cos##F(a);                                                          \
            case 2: return tan##F(a);                                                          \
            case 3: return log##F(a);                                                          \
            case 4: return log1p##F(a);                                                        \
            case 5: return expm1##F(a);                                                        \
            case 6: return a * a;                                                              \
            case 7: return (R)1 / a;                                                           \
            case 8: return (R)1 / sqrt##F(a);                                                  \
            case 9: return a > (R)0 ? (R)1 : (a < (R)0 ? (R)-1 : (a == (R)0 ? (R)0 : a));     \
            case 10: return floor##F(a);                                                       \
            case 11: return ceil##F(a);                                                        \
            case 13: return -a;                                                                \
            case 14: return ct_sqrt(a);                                                        \
            case 15: return ct_exp(a);                                                         \
            default: return rint##F(a);                                                        \
        }                                                                                      \
    }
CT_REAL_MATH(float, f)
CT_REAL_MATH(double, )

__device__ inline int ct_math(int op, int a) {
    return op == 6 ? ct_mul(a, a) : op == 9 ? (a > 0) - (a < 0) : op == 13 ? ct_neg(a) : a;
}
__device__ inline i64 ct_math(int op, i64 a) {
    return op == 6 ? ct_mul(a, a) : op == 9 ? (i64)((a > 0) - (a < 0)) : op == 13 ? ct_neg(a) : a;
}

#define CT_COMPLEX_MATH(Z, R, F)                                                               \
    __device__ inline Z ct_cinv(Z w) {                                                         \
        R d = w.re * w.re + w.im * w.im;                                                       \
        Z r = {w.re / d, -w.im / d};                                                           \
        return r;                                                                              \
    }                                                                                          \
    __device__ inline Z ct_math(int op, Z z) {                                                 \
        R x = z.re, y = z.im;                                                                  \
        Z r;                                                                                   \
        switch (op) {                                                                          \
            case 0: r.re = sin##F(x) * cosh##F(y); r.im = cos##F(x) * sinh##F(y); return r;    \
            case 1: r.re = cos##F(x) * cosh##F(y); r.im = -(sin##F(x) * sinh##F(y)); return r; \
            case 2:                                                                            \
                if (fabs##F(y) > (R)20) {                                                      \
                    r.re = (R)2 * sin##F((R)2 * x) * exp##F((R)-2 * fabs##F(y));               \
                    r.im = copysign##F((R)1, y);                                               \
                } else {                                                                       \
                    R d = cos##F((R)2 * x) + cosh##F((R)2 * y);                                \
                    r.re = sin##F((R)2 * x) / d; r.im = sinh##F((R)2 * y) / d;                 \
                }                                                                              \
                return r;                                                                      \
            case 3: r.re = log##F(hypot##F(x, y)); r.im = atan2##F(y, x); return r;            \
            case 4:                                                                            \
                if (hypot##F(x, y) < (R)0.5) r.re = (R)0.5 * log1p##F(x * ((R)2 + x) + y * y); \
                else r.re = log##F(hypot##F((R)1 + x, y));                                     \
                r.im = atan2##F(y, (R)1 + x);                                                  \
                return r;                                                                      \
            case 5: {                                                                          \
                R inf = (R)1 / (R)0;                                                           \
                if (y == (R)0) { r.re = expm1##F(x); r.im = y; return r; }                     \
                if (x == -inf) {                                                               \
                    r.re = (R)-1; r.im = copysign##F((R)0, isfinite(y) ? sin##F(y) : (R)1);    \
                    return r;                                                                  \
                }                                                                              \
                if (x == inf && !isfinite(y)) { r.re = inf; r.im = nan##F(""); return r; }     \
                R h = sin##F((R)0.5 * y);                                                      \
                r.re = expm1##F(x) * cos##F(y) - (R)2 * h * h; r.im = exp##F(x) * sin##F(y);   \
                return r;                                                                      \
            }                                                                                  \
            case 6: r.re = x * x - y * y; r.im = (R)2 * x * y; return r;                       \
            case 7: return ct_cinv(z);                                                         \
            case 8: return ct_cinv(ct_sqrt(z));                                                \
            case 13: return ct_neg(z);                                                         \
            case 14: return ct_sqrt(z);                                                        \
            case 15: return ct_exp(z);                                                         \
            default: {                                                                         \
                R m = hypot##F(x, y);                                                          \
                if (m == (R)0) { r.re = (R)0; r.im = (R)0; return r; }                         \
                r.re = x / m; r.im = y / m;                                                    \
                return r;                                                                      \
            }                                                                                  \
        }                                                                                      \
    }
CT_COMPLEX_MATH(ct_c32, float, f)
CT_COMPLEX_MATH(ct_c64, double, )

// Powers: the rules of MathScalar::pow in kernels/src/math.rs.
__device__ inline float ct_pow(float a, float b) { return powf(a, b); }
__device__ inline double ct_pow(double a, double b) { return pow(a, b); }
#define CT_INT_POW(I)                                                                          \
    __device__ inline I ct_pow(I a, I b) {                                                     \
        if (b < 0) return a == 1 ? (I)1 : a == -1 ? (b % 2 == 0 ? (I)1 : (I)-1) : (I)0;        \
        I r = 1, base = a, e = b;                                                              \
        while (e > 0) {                                                                        \
            if (e & 1) r = ct_mul(r, base);                                                    \
            base = ct_mul(base, base);                                                         \
            e >>= 1;                                                                           \
        }                                                                                      \
        return r;                                                                              \
    }
CT_INT_POW(int)
CT_INT_POW(i64)
#define CT_COMPLEX_POW(Z, R, F)                                                                \
    __device__ inline Z ct_pow(Z z, Z w) {                                                     \
        R n = w.re;                                                                            \
        Z r;                                                                                   \
        if (w.im == (R)0 && n == trunc##F(n) && fabs##F(n) <= (R)100) {                        \
            Z b = z;                                                                           \
            unsigned e = (unsigned)fabs##F(n);                                                 \
            r.re = (R)1; r.im = (R)0;                                                          \
            while (e > 0) {                                                                    \
                if (e & 1) r = ct_mul(r, b);                                                   \
                e >>= 1;                                                                       \
                if (e > 0) b = ct_mul(b, b);                                                   \
            }                                                                                  \
            return n < (R)0 ? ct_cinv(r) : r;                                                  \
        }                                                                                      \
        if (z.re == (R)0 && z.im == (R)0) {                                                    \
            r.re = r.im = w.re > (R)0 ? (R)0 : nan##F("");                                     \
            return r;                                                                          \
        }                                                                                      \
        R l = log##F(hypot##F(z.re, z.im)), a = atan2##F(z.im, z.re);                          \
        R tr = w.re * l - w.im * a, ti = w.re * a + w.im * l, m = exp##F(tr);                  \
        r.re = m * cos##F(ti); r.im = m * sin##F(ti);                                          \
        return r;                                                                              \
    }
CT_COMPLEX_POW(ct_c32, float, f)
CT_COMPLEX_POW(ct_c64, double, )

template <class T> __device__ void ct_math_kernel(u64 n, int op, const T* x, T* y) {
    typedef Ct<T> K;
    CT_GRID_STRIDE(i, n) y[i] = K::store(ct_math(op, K::load(x[i])));
}

#define CT_MATH(S, T)                                                                          \
    extern "C" __global__ void math_##S(u64 n, int op, const T* x, T* y) { ct_math_kernel<T>(n, op, x, y); }
CT_ALL_TYPES(CT_MATH)

// The binary functions: pow for every type, the others for real types (the host refuses
// the rest); an integer fmod by 0 (or by -1, where C's % may trap) is 0, as NumPy's.
#define CT_REAL_BINARY(R, F)                                                                   \
    __device__ inline R ct_binary_math(int op, R a, R b) {                                     \
        switch (op) {                                                                          \
            case 0: return ct_pow(a, b);                                                       \
            case 1: return atan2##F(a, b);                                                     \
            case 2: return hypot##F(a, b);                                                     \
            case 3: return copysign##F(a, b);                                                  \
            case 4: return fmod##F(a, b);                                                      \
            default:                                                                           \
                if (a == b) return a + (R)0.69314718055994530942;                              \
                if (a > b) return a + log1p##F(exp##F(b - a));                                 \
                if (a < b) return b + log1p##F(exp##F(a - b));                                 \
                return a + b;                                                                  \
        }                                                                                      \
    }
CT_REAL_BINARY(float, f)
CT_REAL_BINARY(double, )
#define CT_INT_BINARY(I)                                                                       \
    __device__ inline I ct_binary_math(int op, I a, I b) {                                     \
        if (op == 0) return ct_pow(a, b);                                                      \
        return (b == 0 || b == -1) ? (I)0 : a % b;                                             \
    }
CT_INT_BINARY(int)
CT_INT_BINARY(i64)
__device__ inline ct_c32 ct_binary_math(int, ct_c32 a, ct_c32 b) { return ct_pow(a, b); }
__device__ inline ct_c64 ct_binary_math(int, ct_c64 a, ct_c64 b) { return ct_pow(a, b); }

template <class T> __device__ void ct_binary_math_kernel(u64 n, int op, const T* x, const T* y, T* out) {
    typedef Ct<T> K;
    CT_GRID_STRIDE(i, n) out[i] = K::store(ct_binary_math(op, K::load(x[i]), K::load(y[i])));
}

#define CT_BINARY_MATH(S, T)                                                                   \
    extern "C" __global__ void binary_math_##S(u64 n, int op, const T* x, const T* y, T* out) { \
        ct_binary_math_kernel<T>(n, op, x, y, out);                                            \
    }
CT_ALL_TYPES(CT_BINARY_MATH)
