/* rmsnorm_fwd/rows.cuh -- the rows family of RMSNorm forward: R
 * consecutive rows per block of B threads, each thread holding the same
 * columns of all R, so w is loaded once per block and reused R times, and
 * the R row sums are reduced together behind one barrier.  See common.cuh. */
#ifndef NT_RMSNORM_FWD_ROWS_CUH
#define NT_RMSNORM_FWD_ROWS_CUH

#include "rmsnorm_fwd/io.cuh"

/* The R sums v[0..R) over a block of B threads; every thread gets the same
 * bits.  buf: shared address of R*32 floats, alternated by the caller
 * between two such halves from group to group (one barrier per group). */
template <int B, int R>
__device__ __forceinline__ void nt_fwd_block_sumv(float *v, unsigned buf) {
#pragma unroll
    for (int r = 0; r < R; r++) v[r] = nt_fwd_lanes<32>(v[r]);
    if (B == 32) return;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
#pragma unroll
        for (int r = 0; r < R; r++) nt_sts4(buf + 4u * (unsigned)(32 * r + warp), v[r]);
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; r++) {
        const float t = lane < B / 32 ? nt_lds4(buf + 4u * (unsigned)(32 * r + lane)) : 0.f;
        v[r] = nt_fwd_lanes<32>(t);
    }
}

template <class X, class Wt, int B, int C, int R, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_rows(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E;
    static_assert(R >= 1 && B % 32 == 0, "R >= 1, B a multiple of 32");
    __shared__ float red_buf[2][R][32];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const nt_fwd_io<X> io(a);
    bool cov[C];
    io.template cover<C>(cov, B, tid);
    typename F::xv xv[R][C];
    typename F::wv wv[C];
    unsigned it = 0;
    /* the loop bound is the same for the whole block, so every thread
     * reaches the barrier; rows past M only add zeros and store nothing */
#pragma unroll 1
    for (long long base = (long long)blockIdx.x * R; base < io.M; base += (long long)gridDim.x * R, it++) {
        bool act[R][C];
#pragma unroll
        for (int r = 0; r < R; r++) {
            const bool ok = base + r < io.M;
#pragma unroll
            for (int j = 0; j < C; j++) act[r][j] = ok && cov[j];
        }
        /* x first: its loads go to DRAM; w's (once per block) hit L1/L2 */
#pragma unroll
        for (int r = 0; r < R; r++)
            nt_fwd_load_x<X, C, E>(xv[r], act[r], io.x + (base + r) * io.rowb, B, tid);
        if (it == 0) nt_fwd_load_w<Wt, C, E>(wv, cov, io.w, B, tid);
        float s[R];
#pragma unroll
        for (int r = 0; r < R; r++) s[r] = nt_fwd_sumsq<X, C, E>(xv[r], act[r]);
        nt_fwd_block_sumv<B, R>(s, red + 128u * (unsigned)R * (it & 1u));
#pragma unroll
        for (int r = 0; r < R; r++) {
            if (base + r >= io.M) break;
            const float rr = io.r_of(s[r]);
            if (io.rstd && tid == 0) io.rstd[base + r] = rr;
            nt_fwd_store<X, Wt, C, E>(xv[r], wv, act[r], rr, io.y + (base + r) * io.rowb, B, tid);
        }
    }
}

#endif
