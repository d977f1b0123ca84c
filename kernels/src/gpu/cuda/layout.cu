// Layout kernels: strided copies (permute, stride, inflate, strided sync), a tiled 2-D
// transpose, strided fill, clearing one triangle of a matrix, and gathering by indices.
// None of them is safe in place; the host routes overlapping calls through a temporary.

// dst[offset_a(i)] = (conj ? conj : id)(src[offset_b(i)]) for the i-th element of the
// row-major walk of d.shape; d.a are the destination strides, d.b the source strides.
template <class T> __device__ void ct_copy_strided(u64 n, CtDims d, const T* src, T* dst, int conj) {
    typedef Ct<T> K;
    CT_GRID_STRIDE(i, n) {
        u64 oa, ob;
        ct_offsets(d, i, &oa, &ob);
        T v = src[ob];
        dst[oa] = conj ? K::store(ct_conj(K::load(v))) : v;
    }
}

template <class T> __device__ void ct_set_strided(u64 n, CtDims d, T value, T* dst) {
    CT_GRID_STRIDE(i, n) {
        u64 oa, ob;
        ct_offsets(d, i, &oa, &ob);
        dst[oa] = value;
    }
}

// The transpose of a rows x cols row-major matrix (dst is cols x rows), through 32 x 33
// shared-memory tiles so that both the reads and the writes are coalesced. Tiles are
// walked with grid-stride loops in both directions (blockIdx.x over columns of tiles,
// blockIdx.y over rows of tiles), so any grid covers any size.
#define CT_TILE 32
template <class T>
__device__ void ct_transpose2d(u64 rows, u64 cols, const T* src, T* dst, int conj) {
    typedef Ct<T> K;
    __shared__ T tile[CT_TILE][CT_TILE + 1];
    u64 tiles_r = (rows + CT_TILE - 1) / CT_TILE, tiles_c = (cols + CT_TILE - 1) / CT_TILE;
    for (u64 tr = blockIdx.y; tr < tiles_r; tr += gridDim.y) {
        for (u64 tc = blockIdx.x; tc < tiles_c; tc += gridDim.x) {
            u64 r0 = tr * CT_TILE, c0 = tc * CT_TILE;
            for (u32 k = threadIdx.y; k < CT_TILE; k += blockDim.y) {
                u64 r = r0 + k, c = c0 + threadIdx.x;
                if (r < rows && c < cols) tile[k][threadIdx.x] = src[r * cols + c];
            }
            __syncthreads();
            for (u32 k = threadIdx.y; k < CT_TILE; k += blockDim.y) {
                u64 c = c0 + k, r = r0 + threadIdx.x;  // dst row c, column r
                if (r < rows && c < cols) {
                    T v = tile[threadIdx.x][k];
                    dst[c * rows + r] = conj ? K::store(ct_conj(K::load(v))) : v;
                }
            }
            __syncthreads();
        }
    }
}

// Rows between the dense row-major [outer, size, inner] array and the [outer, nidx,
// inner] one, element k of the small one being (o, j, i) in row-major order: gathering
// (index_select) dst[o, j, i] = src[o, idx[j], i]; scattering (index_copy)
// dst[o, idx[j], i] = src[o, j, i]. The host checks every index against size (and, to
// scatter, that they are distinct) before the launch.
template <class T, bool Scatter>
__device__ void ct_index_move(u64 outer, u64 size, u64 inner, const i64* idx, u64 nidx, const T* src, T* dst) {
    u64 total = outer * nidx * inner;
    CT_GRID_STRIDE(k, total) {
        u64 i = k % inner, rest = k / inner;
        u64 j = rest % nidx, o = rest / nidx;
        u64 far = (o * size + (u64)idx[j]) * inner + i;
        if (Scatter) dst[far] = src[k];
        else dst[k] = src[far];
    }
}

// Zeroes the strict lower (keep_upper != 0) or upper triangle of the n x n column-major a.
template <class T> __device__ void ct_set_matrix(int keep_upper, u64 n, T* a, u64 lda) {
    const T zero = Ct<T>::store(ct_zero<typename Ct<T>::C>());
    CT_GRID_STRIDE(idx, n * n) {
        u64 i = idx % n, j = idx / n;  // row i, column j
        if (keep_upper ? (i > j) : (i < j)) a[i + j * lda] = zero;
    }
}

// Whether a value is finite (x - x is 0 for finite x, NaN for NaN and infinities;
// NVRTC does not assume finite math unless told to).
__device__ inline bool ct_finite(float a) { return a - a == 0.0f; }
__device__ inline bool ct_finite(double a) { return a - a == 0.0; }
__device__ inline bool ct_finite(ct_c32 a) { return ct_finite(a.re) && ct_finite(a.im); }
__device__ inline bool ct_finite(ct_c64 a) { return ct_finite(a.re) && ct_finite(a.im); }

// *first = m·n - k for the lowest column-major index k = i + j·m of a non-finite entry
// of the m × n matrix a (leading dimension lda) inside `part` (0 the whole matrix, 1 the
// lower triangle with the diagonal, 2 the upper one); 0 when there is none.
template <class T> __device__ void ct_nonfinite(int part, u64 m, u64 n, const T* a, u64 lda, u64* first) {
    u64 total = m * n;
    CT_GRID_STRIDE(k, total) {
        u64 i = k % m, j = k / m;
        bool inside = part == 0 || (part == 1 ? i >= j : i <= j);
        if (inside && !ct_finite(Ct<T>::load(a[i + j * lda]))) atomicMax(first, total - k);
    }
}

#define CT_LAYOUT_FLOATING(S, T)                                                               \
    extern "C" __global__ void nonfinite_##S(int part, u64 m, u64 n, const T* a, u64 lda, u64* first) { \
        ct_nonfinite<T>(part, m, n, a, lda, first);                                            \
    }
CT_FLOATING(CT_LAYOUT_FLOATING)

#define CT_LAYOUT(S, T)                                                                        \
    extern "C" __global__ void copy_strided_##S(u64 n, CtDims d, const T* src, T* dst, int conj) { \
        ct_copy_strided<T>(n, d, src, dst, conj);                                              \
    }                                                                                          \
    extern "C" __global__ void set_strided_##S(u64 n, CtDims d, T value, T* dst) {             \
        ct_set_strided<T>(n, d, value, dst);                                                   \
    }                                                                                          \
    extern "C" __global__ void transpose2d_##S(u64 rows, u64 cols, const T* src, T* dst, int conj) { \
        ct_transpose2d<T>(rows, cols, src, dst, conj);                                         \
    }                                                                                          \
    extern "C" __global__ void set_matrix_##S(int keep_upper, u64 n, T* a, u64 lda) {          \
        ct_set_matrix<T>(keep_upper, n, a, lda);                                               \
    }                                                                                          \
    extern "C" __global__ void index_select_##S(u64 outer, u64 size, u64 inner, const i64* idx, \
                                                u64 nidx, const T* src, T* dst) {              \
        ct_index_move<T, false>(outer, size, inner, idx, nidx, src, dst);                      \
    }                                                                                          \
    extern "C" __global__ void index_copy_##S(u64 outer, u64 size, u64 inner, const i64* idx,   \
                                              u64 nidx, const T* src, T* dst) {                \
        ct_index_move<T, true>(outer, size, inner, idx, nidx, src, dst);                       \
    }
CT_ALL_TYPES(CT_LAYOUT)
