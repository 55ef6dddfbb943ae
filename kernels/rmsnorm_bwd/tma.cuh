/* rmsnorm_bwd/tma.cuh -- rmsnorm_bwd.tma: held's chain (rows walked by a
 * resident grid, each row's x, dy and w converted once and held in
 * registers for its two passes, dw partials in registers, one column sum)
 * with the rows brought into shared memory by bulk copies (cp.async.bulk,
 * the Tensor Memory Accelerator's 1-D form; sm_90 and newer) S rows ahead.
 *
 * Why: in persistent and held every thread issues its own copies, 2 C of
 * them a row, and waits on its own groups; at 4096 x 4096 the H200's issue
 * slots were 61% busy with 4 warps a scheduler (docs/guide.md, make
 * bench).  Here thread 0 asks for a whole row of x and one of dy with two
 * instructions, the bytes in flight do not depend on the threads' own
 * loads, and the other threads spend no instruction on them.
 *
 * Rows sit in S buffers of [x, dy] x C*B 16-byte slots (chunk j of thread
 * t at slot j*B + t, as the row lies in memory, so one copy a tensor), row
 * t of the walk in buffer t mod S with an mbarrier that both copies
 * complete (bulk.cuh).  nt_bwd_row_held (held.cuh) reads a thread's chunks
 * once, before the row's block reduction; after that barrier no thread
 * reads the buffer again, and thread 0 refills it with row t + S once the
 * row is done.  The same operations in the same order as persistent and
 * held: the same bits. */
#ifndef NT_RMSNORM_BWD_TMA_CUH
#define NT_RMSNORM_BWD_TMA_CUH

#include "bulk.cuh"
#include "rmsnorm_bwd/row.cuh"
#include "rmsnorm_bwd/colsum.cuh"
#include "rmsnorm_bwd/held.cuh"

template <class TX, class TW, class TDW, int B, int C, int S, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_bwd_tma(nt_args a) {
    nt_wait_prev(); /* before any global access: launched early too (families.c) */
#if NT_HAS_BULK
    static_assert(S >= 1 && B % 32 == 0, "S >= 1, B a multiple of 32");
    constexpr int E = nt_bwd_chunk<TX>::E;
    typedef nt_vec<TX, E> VX;
    typedef nt_vec<TW, E> VW;
    constexpr int WP = VW::W / 4;
    constexpr unsigned HALF = 16u * (unsigned)(C * B);  /* one tensor's row slots */
    extern __shared__ nt_u4 nt_bwd_tma_rows[];          /* [S][x, dy][C*B] slots */
    __shared__ __align__(8) unsigned long long bar_buf[S];
    __shared__ float red_buf[2][64];
    const unsigned red = nt_saddr(red_buf), bars = nt_saddr(bar_buf);
    const unsigned rows = nt_saddr(nt_bwd_tma_rows);
    const int tid = threadIdx.x;
    const int G = gridDim.x, bid = blockIdx.x;
    const int N = a.N, nvec = N / E;
    const long long M = a.M;
    const float invN = 1.0f / (float)N;
    const unsigned rowb = 16u * (unsigned)nvec;          /* bytes of a row of x or dy */
    const char *x = (const char *)a.t[NT_BWD_X], *dy = (const char *)a.t[NT_BWD_DY];
    const nt_u4 *wp = (const nt_u4 *)a.t[NT_BWD_W];
    nt_u4 *dx = (nt_u4 *)a.t[NT_BWD_DX];

    nt_launch_next();
    /* rows of this block: bid, bid+G, ...  (G <= M, so at least one) */
    const long long mine = (M - bid + G - 1) / G;
    /* row t of the walk into buffer s: one arrival, two copies */
    auto fill = [&](long long t, unsigned s) {
        const long long off = (bid + t * G) * (long long)rowb;
        const unsigned buf = rows + 2u * HALF * s, bar = bars + 8u * s;
        nt_mbar_expect(bar, 2u * rowb);
        nt_bulk_copy(buf, x + off, rowb, bar);
        nt_bulk_copy(buf + HALF, dy + off, rowb, bar);
    };
    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < S; s++) nt_mbar_init1(bars + 8u * (unsigned)s);
        nt_mbar_init_fence();
#pragma unroll
        for (int s = 0; s < S; s++)
            if (s < mine) fill(s, (unsigned)s);
    }
    bool act[C];
    float acc[C][E];
    VW wv[C];
#pragma unroll
    for (int j = 0; j < C; j++) {
        act[j] = j * B + tid < nvec;
#pragma unroll
        for (int k = 0; k < E; k++) acc[j][k] = 0.f;
        if (act[j])
            nt_ldg<VW::W, false>(wp + WP * (j * B + tid), wv[j].w);
        else
            wv[j].zero();
    }
    __syncthreads();          /* the mbarriers are initialised before anyone waits */
#pragma unroll 1
    for (long long t = 0; t < mine; t++) {
        const unsigned s = (unsigned)(t % S);
        const unsigned buf = rows + 2u * HALF * s + 16u * (unsigned)tid;
        nt_mbar_wait(bars + 8u * s, (unsigned)(t / S) & 1u);
        const long long row = bid + t * G;
        nt_bwd_row_held<TX, TW, C, VX, VW>(buf, buf + HALF, wv, act, acc,
                                           dx + row * nvec + tid, B, B, invN, a.eps,
                                           red + 256u * (unsigned)(t & 1));
        /* every thread has passed the row's reduction, after its last read
         * of the buffer: refill it */
        if (tid == 0 && t + S < mine) fill(t + S, s);
    }
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
#else
    __trap();
#endif
}

#endif
