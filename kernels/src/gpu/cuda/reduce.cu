// Row reductions: dst[r] = sum (or max / min) of src[r*inner .. r*inner + inner).
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
