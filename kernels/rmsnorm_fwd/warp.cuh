/* rmsnorm_fwd/warp.cuh -- the warp family of RMSNorm forward: T threads
 * per row, B/T rows per block, a reduction in the row's lanes.  See common.cuh. */
#ifndef NT_RMSNORM_FWD_WARP_CUH
#define NT_RMSNORM_FWD_WARP_CUH

#include "rmsnorm_fwd/io.cuh"

/* ---- T threads per row, B/T rows per block ------------------------------ */

template <class X, class Wt, int T, int B, int C, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_warp(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E, R = B / T;
    static_assert(T >= 1 && T <= 32 && (T & (T - 1)) == 0 && B % 32 == 0, "T | 32, B % 32 == 0");
    const int tid = threadIdx.x, l = tid % T, g = tid / T;
    const nt_fwd_io<X> io(a);
    bool cov[C];
    io.template cover<C>(cov, T, l);
    typename F::xv xv[C];
    typename F::wv wv[C];
    /* the loop bound is the same for the whole block, so every lane of a
     * warp reaches the butterfly; lanes of rows past M only add zeros */
#pragma unroll 1
    for (long long base = (long long)blockIdx.x * R; base < io.M; base += (long long)gridDim.x * R) {
        const long long row = base + g;
        const bool ok = row < io.M;
        bool act[C];
#pragma unroll
        for (int j = 0; j < C; j++) act[j] = ok && cov[j];
        nt_fwd_load_x<X, C, E>(xv, act, io.x + row * io.rowb, T, l);
        nt_fwd_load_w<Wt, C, E>(wv, act, io.w, T, l);
        float s = nt_fwd_sumsq<X, C, E>(xv, act);
        s = nt_fwd_lanes<T>(s);
        const float r = io.r_of(s);
        if (ok && io.rstd && l == 0) io.rstd[row] = r;
        nt_fwd_store<X, Wt, C, E>(xv, wv, act, r, io.y + row * io.rowb, T, l);
    }
}

#endif
