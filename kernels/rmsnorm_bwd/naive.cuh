/* rmsnorm_bwd/naive.cuh -- the naive RMSNorm backward chain: nt_naive_row
 * (one block per row, an M x N dw partial) and the two column sums.  See
 * row.cuh. */
#ifndef NT_RMSNORM_BWD_NAIVE_CUH
#define NT_RMSNORM_BWD_NAIVE_CUH

#include "rmsnorm_bwd/row.cuh"
#include "rmsnorm_bwd/colsum.cuh"

/* ---- naive chain ------------------------------------------------------ */

template <class TX, class TW, class TDW, int C, int F32>
__global__ void __launch_bounds__(1024) nt_naive_row(nt_args a) {
    nt_wait_prev(); /* before any global access: launched early too (families.c) */
    constexpr int E = nt_bwd_chunk<TX>::E;
    typedef nt_vec<TX, E> VX;
    typedef nt_vec<TW, E> VW;
    constexpr int WP = VW::W / 4;
    __shared__ float red_buf[64];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x, B = blockDim.x;
    const int N = a.N, nvec = N / E;
    const long long row = blockIdx.x;
    const float invN = 1.0f / (float)N;
    const nt_u4 *x = (const nt_u4 *)a.t[NT_BWD_X] + row * nvec;
    const nt_u4 *dy = (const nt_u4 *)a.t[NT_BWD_DY] + row * nvec;
    const nt_u4 *wp = (const nt_u4 *)a.t[NT_BWD_W];
    bool act[C];
    VW wv[C];
    VX xv[C], gv[C];
    float part[E * C];
#pragma unroll
    for (int j = 0; j < C; j++) {
        const int v = j * B + tid;
        act[j] = v < nvec;
        if (act[j]) {
            nt_ldg<VW::W, false>(wp + WP * v, wv[j].w);
            nt_ldg<VX::W, true>(x + v, xv[j].w);
            nt_ldg<VX::W, true>(dy + v, gv[j].w);
        } else {
            wv[j].zero();
            xv[j].zero();
            gv[j].zero();
        }
    }
    nt_launch_next();
    nt_bwd_row<TX, TW, C>(nt_bwd_reg<VX>{xv}, nt_bwd_reg<VX>{gv}, nt_bwd_reg<VW>{wv}, act,
                          (float (*)[E])0, part, (nt_u4 *)a.t[NT_BWD_DX] + row * nvec + tid, B,
                          invN, a.eps, red);
    /* this row's dw partial: E values per chunk, fp32 or bf16 */
#pragma unroll
    for (int j = 0; j < C; j++) {
        if (!act[j]) continue;
        const long long v = row * nvec + j * B + tid;
        if (F32) {
#pragma unroll
            for (int q = 0; q < E / 4; q++) {
                nt_f4 f = {part[E * j + 4 * q], part[E * j + 4 * q + 1], part[E * j + 4 * q + 2],
                           part[E * j + 4 * q + 3]};
                ((nt_f4 *)a.ws)[(E / 4) * v + q] = f;
            }
        } else {
            nt_vec<nt_bf16, E> pv;
            pv.put(part + E * j);
            nt_bwd_put<nt_vec<nt_bf16, E>::W>((char *)a.ws + 2 * E * v, pv.w);
        }
    }
}

#endif
