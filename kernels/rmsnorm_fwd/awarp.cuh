/* rmsnorm_fwd/awarp.cuh -- the awarp family of RMSNorm forward: the warp
 * family (T threads per row, B/T rows per block, a reduction in the row's
 * lanes) with each row read and written in its shifted frame (shift.cuh).
 * See common.cuh. */
#ifndef NT_RMSNORM_FWD_AWARP_CUH
#define NT_RMSNORM_FWD_AWARP_CUH

#include "rmsnorm_fwd/shift.cuh"

template <class X, class Wt, int T, int B, int C, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_awarp(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E, R = B / T;
    static_assert(T >= 1 && T <= 32 && (T & (T - 1)) == 0 && B % 32 == 0, "T | 32, B % 32 == 0");
    const int tid = threadIdx.x, l = tid % T, g = tid / T;
    const nt_fwd_io<X> io(a);
    typename F::xv xv[C];
    typename F::wv wv[C];
    /* the loop bound is the same for the whole block, so every lane of a
     * warp reaches the butterfly; lanes of rows past M only add zeros */
#pragma unroll 1
    for (long long base = (long long)blockIdx.x * R; base < io.M; base += (long long)gridDim.x * R) {
        const long long row = base + g;
        const bool ok = row < io.M;
        bool act[C];
        const int h = nt_fwd_shift<C>(act, io, row, ok, T, l);
        /* the frame's start: h chunks before the row's (never before the
         * tensor: row * nvec >= h) */
        const long long at = row * io.rowb - 16LL * h;
        nt_fwd_load_x<X, C, E>(xv, act, io.x + at, T, l);
        nt_fwd_load_w<Wt, C, E>(wv, act, io.w - 4LL * F::WW * h, T, l);
        float s = nt_fwd_sumsq<X, C, E>(xv, act);
        s = nt_fwd_lanes<T>(s);
        const float r = io.r_of(s);
        if (ok && io.rstd && l == 0) io.rstd[row] = r;
        nt_fwd_store<X, Wt, C, E>(xv, wv, act, r, io.y + at, T, l);
    }
}

#endif
