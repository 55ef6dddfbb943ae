/* rmsnorm_fwd/warp.cuh -- the warp family of RMSNorm forward: T threads
 * per row, B/T rows per block, a reduction in the row's lanes.  See common.cuh. */
#ifndef NT_RMSNORM_FWD_WARP_CUH
#define NT_RMSNORM_FWD_WARP_CUH

#include "rmsnorm_fwd/common.cuh"

/* ---- T threads per row, B/T rows per block ------------------------------ */

template <class X, class Wt, int T, int B, int C, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_warp(nt_args a) {
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E, R = B / T;
    static_assert(T >= 1 && T <= 32 && (T & (T - 1)) == 0 && B % 32 == 0, "T | 32, B % 32 == 0");
    const int tid = threadIdx.x, l = tid % T, g = tid / T;
    const int N = a.N, nvec = N / E;
    const long long M = a.M;
    const float invN = 1.0f / (float)N;
    const char *x = (const char *)a.t[NT_FWD_X];
    const char *w = (const char *)a.t[NT_FWD_W];
    char *y = (char *)a.t[NT_FWD_Y];
    float *rstd = (float *)a.t[NT_FWD_RSTD];
    const long long rowb = (long long)N * (long long)sizeof(X);
    bool cov[C];
#pragma unroll
    for (int j = 0; j < C; j++) cov[j] = j * T + l < nvec;
    typename F::xv xv[C];
    typename F::wv wv[C];
    /* the loop bound is the same for the whole block, so every lane of a
     * warp reaches the butterfly; lanes of rows past M only add zeros */
#pragma unroll 1
    for (long long base = (long long)blockIdx.x * R; base < M; base += (long long)gridDim.x * R) {
        const long long row = base + g;
        const bool ok = row < M;
        bool act[C];
#pragma unroll
        for (int j = 0; j < C; j++) act[j] = ok && cov[j];
        nt_fwd_load_x<X, C, E>(xv, act, x + row * rowb, T, l);
        nt_fwd_load_w<Wt, C, E>(wv, act, w, T, l);
        float s = nt_fwd_sumsq<X, C, E>(xv, act);
        s = nt_fwd_lanes<T>(s);
        const float r = rsqrtf(s * invN + a.eps);
        if (ok && rstd && l == 0) rstd[row] = r;
        nt_fwd_store<X, Wt, C, E>(xv, wv, act, r, y + row * rowb, T, l);
    }
}

#endif
