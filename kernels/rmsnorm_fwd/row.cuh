/* rmsnorm_fwd/row.cuh -- the row family of RMSNorm forward: one row per
 * block, the row in registers.  See common.cuh. */
#ifndef NT_RMSNORM_FWD_ROW_CUH
#define NT_RMSNORM_FWD_ROW_CUH

#include "rmsnorm_fwd/common.cuh"

/* ---- one row per block ------------------------------------------------ */

template <class X, class Wt, int B, int C, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_row(nt_args a) {
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E;
    __shared__ float red_buf[2][32];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const int N = a.N, nvec = N / E;
    const long long M = a.M;
    const float invN = 1.0f / (float)N;
    const char *x = (const char *)a.t[NT_FWD_X];
    const char *w = (const char *)a.t[NT_FWD_W];
    char *y = (char *)a.t[NT_FWD_Y];
    float *rstd = (float *)a.t[NT_FWD_RSTD];
    const long long rowb = (long long)N * (long long)sizeof(X);
    bool act[C];
#pragma unroll
    for (int j = 0; j < C; j++) act[j] = j * B + tid < nvec;
    typename F::xv xv[C];
    typename F::wv wv[C];
    unsigned it = 0;
#pragma unroll 1
    for (long long row = blockIdx.x; row < M; row += gridDim.x, it++) {
        /* x first: its loads go to DRAM; w's hit L1/L2 and land in time */
        nt_fwd_load_x<X, C, E>(xv, act, x + row * rowb, B, tid);
        nt_fwd_load_w<Wt, C, E>(wv, act, w, B, tid);
        float s = nt_fwd_sumsq<X, C, E>(xv, act);
        s = nt_fwd_block_sum<B>(s, red + 128u * (it & 1u));
        const float r = rsqrtf(s * invN + a.eps);
        if (rstd && tid == 0) rstd[row] = r;
        nt_fwd_store<X, Wt, C, E>(xv, wv, act, r, y + row * rowb, B, tid);
    }
}

#endif
