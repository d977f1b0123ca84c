// Row reductions: dst[r] = sum (or max / min, or the index of either) of
// src[r*inner .. r*inner + inner), and running sums along rows.
// One block per row (rows walked grid-stride over blockIdx.x), a strided partial per
// thread, then a tree in shared memory. Sums of f16/bf16 accumulate in f32, integers
// wrap. The host routes in-place calls (dst == src) through a temporary.

#define CT_RED_THREADS 256

template <class T> __device__ void ct_reduce_sum(u64 rows, u64 inner, const T* src, T* dst) {
    typedef Ct<T> K;
    typedef typename K::C C;
    __shared__ C part[CT_RED_THREADS];
    for (u64 r = blockIdx.x; r < rows; r += gridDim.x) {
        C acc = ct_zero<C>();
        for (u64 j = threadIdx.x; j < inner; j += blockDim.x) acc = ct_add(acc, K::load(src[r * inner + j]));
        part[threadIdx.x] = acc;
        __syncthreads();
        for (u32 s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s) part[threadIdx.x] = ct_add(part[threadIdx.x], part[threadIdx.x + s]);
            __syncthreads();
        }
        if (threadIdx.x == 0) dst[r] = K::store(part[0]);
        __syncthreads();
    }
}

// NaN wins, as in NumPy's max/min.
template <class C> __device__ inline bool ct_isnan(C a) { return a != a; }
template <class C> __device__ inline C ct_pick(C a, C b, bool max) {
    if (ct_isnan(a)) return a;
    if (ct_isnan(b)) return b;
    return max ? (b > a ? b : a) : (b < a ? b : a);
}

template <class T>
__device__ void ct_reduce_extreme(int max, u64 rows, u64 inner, const T* src, T* dst) {
    typedef Ct<T> K;
    typedef typename K::C C;
    __shared__ C part[CT_RED_THREADS];
    __shared__ int has[CT_RED_THREADS];
    for (u64 r = blockIdx.x; r < rows; r += gridDim.x) {
        C acc = ct_zero<C>();
        int any = 0;
        for (u64 j = threadIdx.x; j < inner; j += blockDim.x) {
            C v = K::load(src[r * inner + j]);
            acc = any ? ct_pick(acc, v, max != 0) : v;
            any = 1;
        }
        part[threadIdx.x] = acc;
        has[threadIdx.x] = any;
        __syncthreads();
        for (u32 s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s && has[threadIdx.x + s]) {
                part[threadIdx.x] = has[threadIdx.x] ? ct_pick(part[threadIdx.x], part[threadIdx.x + s], max != 0)
                                                     : part[threadIdx.x + s];
                has[threadIdx.x] = 1;
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) dst[r] = K::store(part[0]);
        __syncthreads();
    }
}

// Whether (b, ib) replaces (a, ia) as the row's extreme: a NaN wins, the first NaN
// first; otherwise a strictly better value, or an equal one further left.
template <class C> __device__ inline bool ct_arg_better(C a, i64 ia, C b, i64 ib, bool max) {
    bool na = ct_isnan(a), nb = ct_isnan(b);
    if (na || nb) return nb && (!na || ib < ia);
    if (max ? b > a : b < a) return true;
    return b == a && ib < ia;
}

// dst[r] = the index of the row's max (min); one block per row as above, each thread's
// partial carrying its index (-1 for none) through the tree.
template <class T>
__device__ void ct_arg_extreme(int max, u64 rows, u64 inner, const T* src, i64* dst) {
    typedef Ct<T> K;
    typedef typename K::C C;
    __shared__ C part[CT_RED_THREADS];
    __shared__ i64 at[CT_RED_THREADS];
    for (u64 r = blockIdx.x; r < rows; r += gridDim.x) {
        C acc = ct_zero<C>();
        i64 ia = -1;
        for (u64 j = threadIdx.x; j < inner; j += blockDim.x) {
            C v = K::load(src[r * inner + j]);
            if (ia < 0 || ct_arg_better(acc, ia, v, (i64)j, max != 0)) { acc = v; ia = (i64)j; }
        }
        part[threadIdx.x] = acc;
        at[threadIdx.x] = ia;
        __syncthreads();
        for (u32 s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s) {
                i64 ib = at[threadIdx.x + s];
                if (ib >= 0 && (at[threadIdx.x] < 0 ||
                                ct_arg_better(part[threadIdx.x], at[threadIdx.x], part[threadIdx.x + s], ib, max != 0))) {
                    part[threadIdx.x] = part[threadIdx.x + s];
                    at[threadIdx.x] = ib;
                }
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) dst[r] = at[0];
        __syncthreads();
    }
}

// Running sums of each row: one block per row; thread t sums its chunk of
// ceil(inner / blockDim.x) elements, thread 0 turns the partials into offsets, then each
// thread rewrites its chunk from its offset. A thread reads its chunk before writing it,
// so dst == src works.
template <class T> __device__ void ct_cumsum(u64 rows, u64 inner, const T* src, T* dst) {
    typedef Ct<T> K;
    typedef typename K::C C;
    __shared__ C part[CT_RED_THREADS];
    u64 chunk = (inner + blockDim.x - 1) / blockDim.x;
    u64 lo = threadIdx.x * chunk, hi = lo + chunk < inner ? lo + chunk : inner;
    for (u64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* x = src + r * inner;
        T* y = dst + r * inner;
        C acc = ct_zero<C>();
        for (u64 j = lo; j < hi; j++) acc = ct_add(acc, K::load(x[j]));
        part[threadIdx.x] = acc;
        __syncthreads();
        if (threadIdx.x == 0) {
            C run = ct_zero<C>();
            for (u32 t = 0; t < blockDim.x; t++) {
                C v = part[t];
                part[t] = run;
                run = ct_add(run, v);
            }
        }
        __syncthreads();
        acc = part[threadIdx.x];
        for (u64 j = lo; j < hi; j++) {
            acc = ct_add(acc, K::load(x[j]));
            y[j] = K::store(acc);
        }
        __syncthreads();
    }
}

#define CT_REDUCE_SUM(S, T)                                                                    \
    extern "C" __global__ void reduce_sum_##S(u64 rows, u64 inner, const T* src, T* dst) {     \
        ct_reduce_sum<T>(rows, inner, src, dst);                                               \
    }
CT_ALL_TYPES(CT_REDUCE_SUM)

#define CT_REDUCE_EXTREME(S, T)                                                                \
    extern "C" __global__ void reduce_extreme_##S(int max, u64 rows, u64 inner, const T* src, T* dst) { \
        ct_reduce_extreme<T>(max, rows, inner, src, dst);                                      \
    }
CT_ORDERED(CT_REDUCE_EXTREME)

#define CT_ARG_EXTREME(S, T)                                                                   \
    extern "C" __global__ void arg_extreme_##S(int max, u64 rows, u64 inner, const T* src, i64* dst) { \
        ct_arg_extreme<T>(max, rows, inner, src, dst);                                         \
    }
CT_ORDERED(CT_ARG_EXTREME)

#define CT_CUMSUM(S, T)                                                                        \
    extern "C" __global__ void cumsum_##S(u64 rows, u64 inner, const T* src, T* dst) {         \
        ct_cumsum<T>(rows, inner, src, dst);                                                   \
    }
CT_ALL_TYPES(CT_CUMSUM)
