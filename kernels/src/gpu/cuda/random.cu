// Counter-based random numbers: Philox4x32-10 (Salmon et al., SC'11), the formula of
// kernels/src/random.rs line for line. Value q of stream `seed` depends only on (seed, q),
// so every thread computes its own values and the host computes the same ones.

__device__ inline void ct_philox4x32_10(u32 c[4], u32 k0, u32 k1) {
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        u64 p0 = (u64)0xD2511F53u * c[0];
        u64 p1 = (u64)0xCD9E8D57u * c[2];
        u32 n0 = (u32)(p1 >> 32) ^ c[1] ^ k0;
        u32 n2 = (u32)(p0 >> 32) ^ c[3] ^ k1;
        c[0] = n0;
        c[1] = (u32)p1;
        c[2] = n2;
        c[3] = (u32)p0;
    }
}

// normal == 0: uniform on [0, 1) with `bits` bits; otherwise standard normal (Box-Muller).
__device__ inline double ct_random_value(int normal, int bits, u64 seed, u64 q) {
    u32 w[4] = {(u32)q, (u32)(q >> 32), 0u, 0u};
    ct_philox4x32_10(w, (u32)seed, (u32)(seed >> 32));
    u64 x = ((u64)w[0] << 32) | w[1];
    if (!normal) {
        if (bits < 1) bits = 1;
        if (bits > 53) bits = 53;
        return ldexp((double)(x >> (64 - bits)), -bits);
    }
    u64 y = ((u64)w[2] << 32) | w[3];
    double u1 = (double)((x >> 11) + 1) * 1.1102230246251565e-16;  // 2^-53
    double u2 = (double)(y >> 11) * 1.1102230246251565e-16;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.141592653589793 * u2);
}

extern "C" __global__ void random_f64(u64 n, int normal, int bits, u64 seed, u64 offset, double* dst) {
    CT_GRID_STRIDE(i, n) { dst[i] = ct_random_value(normal, bits, seed, offset + i); }
}
