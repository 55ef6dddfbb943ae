/* rmsnorm_fwd/wlate.cuh -- the wlate family of RMSNorm forward: R
 * consecutive rows per block of B threads as in the rows family, but w is
 * not held across the reduction: each chunk of w is loaded (from L1/L2,
 * where every block of the SM reads the same N weights) just before the
 * chunk of y it scales, and dropped after.  The registers that stay live
 * are x's alone, so with an fp32 weight (whose chunk is 32 bytes next to
 * 16 of bf16 x) more blocks fit on an SM and more bytes of x are in
 * flight.  The price is w's load latency after the reduction, which the
 * other resident blocks hide.  See common.cuh and rows.cuh. */
#ifndef NT_RMSNORM_FWD_WLATE_CUH
#define NT_RMSNORM_FWD_WLATE_CUH

#include "rmsnorm_fwd/io.cuh"
#include "rmsnorm_fwd/rows.cuh"

template <class X, class Wt, int B, int C, int R, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_wlate(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E, WW = F::WW;
    static_assert(R >= 1 && B % 32 == 0, "R >= 1, B a multiple of 32");
    __shared__ float red_buf[2][R][32];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const nt_fwd_io<X> io(a);
    bool cov[C];
    io.template cover<C>(cov, B, tid);
    typename F::xv xv[R][C];
    unsigned it = 0;
    /* a block-uniform loop bound: every thread reaches the barrier */
#pragma unroll 1
    for (long long base = (long long)blockIdx.x * R; base < io.M; base += (long long)gridDim.x * R, it++) {
        bool act[R][C];
        float s[R], r[R];
#pragma unroll
        for (int i = 0; i < R; i++) {
            const bool ok = base + i < io.M;
#pragma unroll
            for (int j = 0; j < C; j++) act[i][j] = ok && cov[j];
            nt_fwd_load_x<X, C, E>(xv[i], act[i], io.x + (base + i) * io.rowb, B, tid);
        }
#pragma unroll
        for (int i = 0; i < R; i++) s[i] = nt_fwd_sumsq<X, C, E>(xv[i], act[i]);
        nt_fwd_block_sumv<B, R>(s, red + 128u * (unsigned)R * (it & 1u));
#pragma unroll
        for (int i = 0; i < R; i++) {
            r[i] = io.r_of(s[i]);
            if (io.rstd && tid == 0 && base + i < io.M) io.rstd[base + i] = r[i];
        }
        /* chunk by chunk: one chunk of w, then that chunk of every row */
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (!cov[j]) continue;
            nt_vec<Wt, E> wv;
            nt_fwd_load_w<Wt, 1, E>(&wv, &cov[j], io.w + 4 * WW * (long long)(j * B), B, tid);
#pragma unroll
            for (int i = 0; i < R; i++)   /* common.cuh's store, one chunk */
                nt_fwd_store<X, Wt, 1, E>(&xv[i][j], &wv, &act[i][j], r[i],
                                          io.y + (base + i) * io.rowb + 16 * (long long)(j * B), B, tid);
        }
    }
}

#endif
