// Matrix product for the element types cuBLAS has no gemm for (i32, i64, f16, bf16):
// C := alpha * op(A) * op(B) + beta * C, column-major, op in {N, T} (C is T for these
// real types). One thread per element of C; f16/bf16 accumulate in f32, integers wrap.
// When beta is zero C is not read (so NaN there does not propagate), as in BLAS.

template <class T>
__device__ void ct_matmul(int ta, int tb, u64 m, u64 n, u64 k, T alpha, const T* a, u64 lda,
                          const T* b, u64 ldb, T beta, T* c, u64 ldc, int beta_zero) {
    typedef Ct<T> K;
    typedef typename K::C C;
    C al = K::load(alpha), be = K::load(beta);
    CT_GRID_STRIDE(idx, m * n) {
        u64 i = idx % m, j = idx / m;
        C acc = ct_zero<C>();
        for (u64 l = 0; l < k; ++l) {
            C x = K::load(ta ? a[l + i * lda] : a[i + l * lda]);
            C y = K::load(tb ? b[j + l * ldb] : b[l + j * ldb]);
            acc = ct_add(acc, ct_mul(x, y));
        }
        C out = ct_mul(al, acc);
        if (!beta_zero) out = ct_add(out, ct_mul(be, K::load(c[i + j * ldc])));
        c[i + j * ldc] = K::store(out);
    }
}

#define CT_MATMUL(S, T)                                                                        \
    extern "C" __global__ void matmul_##S(int ta, int tb, u64 m, u64 n, u64 k, T alpha,        \
                                          const T* a, u64 lda, const T* b, u64 ldb, T beta,    \
                                          T* c, u64 ldc, int beta_zero) {                      \
        ct_matmul<T>(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, beta_zero);         \
    }
CT_INTS(CT_MATMUL)
CT_MATMUL(f16, ct_f16)
CT_MATMUL(bf16, ct_bf16)
