/* rmsnorm_bwd/ppersist.cuh -- persistent's pipelined chain (persistent.cuh:
 * a resident grid walks the rows, the next S - 1 rows of x and dy copied
 * into shared memory with cp.async, dw partials in registers, then the
 * final column sum) with each block asking L2 for the rows P steps past its
 * pipeline (l2pf.cuh) as it issues the copies of the row S - 1 on.  Shared
 * memory bounds the pipeline: at 4096 x 20480 (bf16) one row of x and dy
 * takes 80 KB, so a block of 2 stages has one row in flight while it works
 * on the other.  The prefetch keeps DRAM streaming the rows after those,
 * with no shared memory or registers held for them; the copies then find
 * them in L2.  P = 0 builds persistent's walk. */
#ifndef NT_RMSNORM_BWD_PPERSIST_CUH
#define NT_RMSNORM_BWD_PPERSIST_CUH

#include "rmsnorm_bwd/row.cuh"
#include "rmsnorm_bwd/colsum.cuh"
#include "l2pf.cuh"

template <class TX, class TW, class TDW, int B, int C, int S, int K, int P>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_ppersist(nt_args a) {
    static_assert(S > 1, "ppersist is the pipelined walk: stages 2 or more");
    nt_wait_prev(); /* before any global access: launched early too (families.c) */
    constexpr int E = nt_bwd_chunk<TX>::E;
    typedef nt_vec<TX, E> VX;
    typedef nt_vec<TW, E> VW;
    constexpr int WP = VW::W / 4;
    /* [S][x, dy][C*B] row stages, then w [WP][C*B] (16-byte slots) */
    extern __shared__ nt_u4 nt_stage[];
    __shared__ float red_buf[2][64];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const int G = gridDim.x, bid = blockIdx.x;
    const int N = a.N, nvec = N / E;
    const long long M = a.M, rowb = (long long)N * (long long)sizeof(TX);
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
    const long long mine = (M - bid + G - 1) / G;
    /* the rows of walk steps [from, to) of this block into L2 */
    auto ahead = [&](long long from, long long to) {
        for (long long s = from; s < to && s < mine; s++) {
            const long long off = (bid + s * G) * rowb;
            nt_l2_prefetch((const char *)x + off, rowb, tid, B);
            nt_l2_prefetch((const char *)dy + off, rowb, tid, B);
        }
    };
    /* as persistent: each thread copies, and later reads, only its own
     * slots; slot k (in 16-byte chunks) of this thread: base + 16 * k */
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
    if (P > 0) ahead(S, S + P - 1);        /* the steps the loop's first prefetch skips */
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
        if (P > 0) ahead(tn + P, tn + P + 1);
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
