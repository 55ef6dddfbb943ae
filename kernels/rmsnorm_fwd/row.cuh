/* rmsnorm_fwd/row.cuh -- the row family of RMSNorm forward: one row per
 * block, the row in registers.  See common.cuh. */
#ifndef NT_RMSNORM_FWD_ROW_CUH
#define NT_RMSNORM_FWD_ROW_CUH

#include "rmsnorm_fwd/io.cuh"

/* ---- one row per block ------------------------------------------------ */

template <class X, class Wt, int B, int C, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_row(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E;
    __shared__ float red_buf[2][32];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const nt_fwd_io<X> io(a);
    bool act[C];
    io.template cover<C>(act, B, tid);
    typename F::xv xv[C];
    typename F::wv wv[C];
    unsigned it = 0;
#pragma unroll 1
    for (long long row = blockIdx.x; row < io.M; row += gridDim.x, it++) {
        /* x first: its loads go to DRAM; w's hit L1/L2 and land in time */
        nt_fwd_load_x<X, C, E>(xv, act, io.x + row * io.rowb, B, tid);
        nt_fwd_load_w<Wt, C, E>(wv, act, io.w, B, tid);
        float s = nt_fwd_sumsq<X, C, E>(xv, act);
        s = nt_fwd_block_sum<B>(s, red + 128u * (it & 1u));
        const float r = io.r_of(s);
        if (io.rstd && tid == 0) io.rstd[row] = r;
        nt_fwd_store<X, Wt, C, E>(xv, wv, act, r, io.y + row * io.rowb, B, tid);
    }
}

#endif
