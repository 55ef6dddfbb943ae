/* rmsnorm_fwd/arow.cuh -- the arow family of RMSNorm forward: the row
 * family (one row per block of B threads, the row in registers) with each
 * row read and written in its shifted frame (shift.cuh).  See common.cuh. */
#ifndef NT_RMSNORM_FWD_AROW_CUH
#define NT_RMSNORM_FWD_AROW_CUH

#include "rmsnorm_fwd/shift.cuh"

template <class X, class Wt, int B, int C, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_arow(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E;
    __shared__ float red_buf[2][32];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const nt_fwd_io<X> io(a);
    typename F::xv xv[C];
    typename F::wv wv[C];
    unsigned it = 0;
#pragma unroll 1
    for (long long row = blockIdx.x; row < io.M; row += gridDim.x, it++) {
        bool act[C];
        const int h = nt_fwd_shift<C>(act, io, row, true, B, tid);
        const long long at = row * io.rowb - 16LL * h;   /* the frame's start */
        nt_fwd_load_x<X, C, E>(xv, act, io.x + at, B, tid);
        nt_fwd_load_w<Wt, C, E>(wv, act, io.w - 4LL * F::WW * h, B, tid);
        float s = nt_fwd_sumsq<X, C, E>(xv, act);
        s = nt_fwd_block_sum<B>(s, red + 128u * (it & 1u));
        const float r = io.r_of(s);
        if (io.rstd && tid == 0) io.rstd[row] = r;
        nt_fwd_store<X, Wt, C, E>(xv, wv, act, r, io.y + at, B, tid);
    }
}

#endif
