/* rmsnorm_bwd/persistent.cuh -- the persistent RMSNorm backward chain:
 * nt_persist (rows walked by a resident grid, dw partials in registers,
 * an optional cp.async pipeline) and nt_colsum_final<TDW, 0>.  See row.cuh. */
#ifndef NT_RMSNORM_BWD_PERSISTENT_CUH
#define NT_RMSNORM_BWD_PERSISTENT_CUH

#include "rmsnorm_bwd/row.cuh"
#include "rmsnorm_bwd/colsum.cuh"

/* ---- persistent chain ------------------------------------------------- */

template <class TX, class TW, class TDW, int B, int C, int S, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_persist(nt_args a) {
    nt_wait_prev(); /* before any global access: launched early too (families.c) */
    constexpr int E = nt_bwd_chunk<TX>::E;
    typedef nt_vec<TX, E> VX;           /* one 16-byte chunk */
    typedef nt_vec<TW, E> VW;           /* 16 or 32 bytes */
    constexpr int WP = VW::W / 4;       /* 16-byte pieces of a w chunk */
    /* S > 1: [S][x, dy][C*B] row stages, then w [WP][C*B] (16-byte slots);
     * S == 1: unused */
    extern __shared__ nt_u4 nt_stage[];
    /* K (blocks per SM, 0 = as many as fit) only bounds the registers */
    __shared__ float red_buf[2][64];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const int G = gridDim.x, bid = blockIdx.x;
    const int N = a.N, nvec = N / E;
    const long long M = a.M;
    const float invN = 1.0f / (float)N;
    const nt_u4 *x = (const nt_u4 *)a.t[NT_BWD_X], *dy = (const nt_u4 *)a.t[NT_BWD_DY];
    const nt_u4 *wp = (const nt_u4 *)a.t[NT_BWD_W];
    nt_u4 *dx = (nt_u4 *)a.t[NT_BWD_DX];

    nt_launch_next();
    bool act[C];
    float acc[C][E];
#pragma unroll
    for (int j = 0; j < C; j++) {
        act[j] = j * B + tid < nvec;
#pragma unroll
        for (int k = 0; k < E; k++) acc[j][k] = 0.f;
    }
    /* rows of this block: bid, bid+G, ...  (G <= M, so at least one) */
    const long long mine = (M - bid + G - 1) / G;

    if (S > 1) {
        /* each thread copies, and later reads, only its own slots: the
         * pipeline needs no barrier, only the thread's own cp.async waits */
        /* slot k (in 16-byte chunks) of this thread: base + 16 * k */
        const unsigned base = nt_saddr(nt_stage) + 16u * (unsigned)tid;
        const unsigned sw = base + 16u * (unsigned)(2 * C * B * S);
#pragma unroll
        for (int j = 0; j < C; j++)
            if (act[j]) {
                VW v;
                nt_ldg<VW::W, false>(wp + WP * (j * B + tid), v.w);
                nt_bwd_sts<VW::W, 16 * C * B>(sw + 16u * (unsigned)(j * B), v.w);
            }
#pragma unroll
        for (int s = 0; s < S - 1; s++) {
            if (s < mine) {
                const long long off = (bid + (long long)s * G) * nvec + tid;
                const unsigned st = base + 16u * (unsigned)(2 * C * B * s);
#pragma unroll
                for (int j = 0; j < C; j++)
                    if (act[j]) {
                        nt_cp_async<VX::W>(st + 16u * (unsigned)(j * B), x + off + j * B);
                        nt_cp_async<VX::W>(st + 16u * (unsigned)(C * B + j * B), dy + off + j * B);
                    }
            }
            nt_cp_commit();
        }
#pragma unroll 1
        for (long long t = 0; t < mine; t++) {
            const long long tn = t + S - 1;
            if (tn < mine) {
                const long long off = (bid + tn * G) * nvec + tid;
                const unsigned st = base + 16u * (unsigned)(2 * C * B * (int)(tn % S));
#pragma unroll
                for (int j = 0; j < C; j++)
                    if (act[j]) {
                        nt_cp_async<VX::W>(st + 16u * (unsigned)(j * B), x + off + j * B);
                        nt_cp_async<VX::W>(st + 16u * (unsigned)(C * B + j * B), dy + off + j * B);
                    }
            }
            nt_cp_commit();
            nt_cp_wait<S - 1>();                       /* row t has landed */
            const unsigned st = base + 16u * (unsigned)(2 * C * B * (int)(t % S));
            const long long row = bid + t * G;
            nt_bwd_row<TX, TW, C>(nt_bwd_smem<VX, 16 * B, 0>{st},
                                  nt_bwd_smem<VX, 16 * B, 0>{st + 16u * (unsigned)(C * B)},
                                  nt_bwd_smem<VW, 16 * B, 16 * C * B>{sw}, act, acc, (float *)0,
                                  dx + row * nvec + tid, B, invN, a.eps,
                                  red + 256u * (unsigned)(t & 1));
        }
        nt_cp_wait<0>();
    } else {
        VW wv[C];
        VX xv[C], gv[C];
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (act[j])
                nt_ldg<VW::W, false>(wp + WP * (j * B + tid), wv[j].w);
            else
                wv[j].zero();
        }
#pragma unroll 1
        for (long long t = 0; t < mine; t++) {
            const long long off = (bid + t * G) * nvec + tid;
#pragma unroll
            for (int j = 0; j < C; j++) {
                if (act[j]) {
                    nt_ldg<VX::W, true>(x + off + j * B, xv[j].w);
                    nt_ldg<VX::W, true>(dy + off + j * B, gv[j].w);
                } else {
                    xv[j].zero();
                    gv[j].zero();
                }
            }
            nt_bwd_row<TX, TW, C>(nt_bwd_reg<VX>{xv}, nt_bwd_reg<VX>{gv}, nt_bwd_reg<VW>{wv}, act,
                                  acc, (float *)0, dx + off, B, invN, a.eps,
                                  red + 256u * (unsigned)(t & 1));
        }
    }
    /* this block's dw partial row: E floats per chunk */
    nt_f4 *out = (nt_f4 *)((float *)a.ws + (long long)bid * N);
#pragma unroll
    for (int j = 0; j < C; j++)
        if (act[j]) {
            const int v = j * B + tid;
#pragma unroll
            for (int q = 0; q < E / 4; q++) {
                nt_f4 f = {acc[j][4 * q], acc[j][4 * q + 1], acc[j][4 * q + 2], acc[j][4 * q + 3]};
                out[(E / 4) * v + q] = f;
            }
        }
}

#endif
