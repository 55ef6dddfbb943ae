/* rmsnorm_bwd/loop.cuh -- the loop RMSNorm backward chain: nt_bwd_loop
 * (persistent blocks walk the rows, each row in tiles of B*C 16-byte
 * chunks, twice) and nt_colsum_final<TDW, 0> (colsum.cuh).  Any N up to
 * NT_MAX_N (65536) on any device, with C chunks per thread in registers
 * whatever the length of the row: the op's fallback.  See row.cuh for the
 * math, the chunk layout and the column sums.
 *
 *   nt_bwd_loop<TX, TW, TDW, B, C, K>
 *       grid = K blocks per SM (0: as many as fit), at most M, sized by
 *       the launcher; block b walks rows b, b+G, b+2G, ...  A tile is B*C
 *       chunks: chunk j of thread t is chunk j*B + t of the tile, so every
 *       warp's loads and stores are contiguous, and a thread owns the same
 *       columns in every row.  Per row:
 *         pass 1: the tiles in order, x, dy and w of each loaded into
 *                 registers; every thread adds w*dy*x and x*x of its chunks
 *                 in order; then the block sum (nt_block_sum2, fixed
 *                 order): every thread has the same sums, hence r and c.
 *         pass 2: the last tile first (still in registers from pass 1),
 *                 then the others backwards (the most recently read first,
 *                 most likely still in L2), x, dy and w loaded again: dx =
 *                 r*w*dy - x*c*r^3 is written, and dy*x*r added to this
 *                 block's fp32 partial row: in registers (acc) for the last
 *                 tile, whose columns a thread owns in every row, and in
 *                 ws[b][N] for the other tiles (read, add, write back; the
 *                 block's first row writes without reading, so no byte of
 *                 the workspace is read before it is written).
 *       At the end each thread writes acc into the last tile's columns of
 *       ws[b][N].  Every element of ws[b] belongs to one thread of block b:
 *       no race, no barrier, no atomics; each partial element is a sum of
 *       the block's rows in row order.  A row of one tile (N <= B*C*E) is
 *       read once and never touches ws before the end: then this is
 *       persistent.cuh's kernel with stages = 1.
 *   nt_colsum_final<TDW, 0>
 *       dw = the sum of the grid's G partial rows, in row order.
 *
 * Why persistent: the partial of dw is one row per block, G x N floats in
 * all, which the final column sum reads once; one block per row would make
 * it M x N (the naive chain).  The price is the read-modify-write of ws[b]
 * for every row with more than one tile: 8 bytes per element of those
 * tiles, into the G x N x 4 bytes of partial rows, which stay in L2 while
 * they fit (H200, 132 blocks, N = 32768: 17 MiB of its 60 MiB); the re-read
 * of x and dy in pass 2 needs G x N x 2 x sizeof(TX) bytes of L2 (bf16, N
 * = 32768: 17 MiB), k sets G.
 *
 * Registers per thread: C chunks of x, dy and w (4, 4 and 4 * sizeof(TW) /
 * sizeof(TX) words each), acc (E floats a chunk) and, in pass 2, the E
 * partial floats a chunk read from ws: the family's register rule (loop.c)
 * refuses a config whose chunks would not fit what __launch_bounds__
 * leaves a thread.
 *
 * Determinism: fixed orders everywhere (a thread's chunks and tiles, the
 * butterflies of nt_block_sum2, a block's rows, the column sum's rows); the
 * reduction buffer alternates between two halves from row to row (one
 * barrier per row, see common.cuh).
 *
 * Napkin math (bf16, M = 4096, N = 65536, H200 at ~4.2 TB/s): x, dy read
 * and dx written once is 1.61 GB, 384 us; the second read of x and dy
 * (1.07 GB) comes mostly from L2, the partial rows' read-modify-write
 * (2.1 GB) from L2 while G x N x 4 fits (132 x 256 KiB = 33 MiB). */
#ifndef NT_RMSNORM_BWD_LOOP_CUH
#define NT_RMSNORM_BWD_LOOP_CUH

#include "rmsnorm_bwd/row.cuh"
#include "rmsnorm_bwd/colsum.cuh"

/* Load this thread's active chunks of x and dy (read-once loads) and w of
 * the tile whose first chunk is base; inactive chunks are zeros. */
template <class TX, class TW, int B, int C>
__device__ __forceinline__ void nt_bwd_loop_load(nt_vec<TX, nt_bwd_chunk<TX>::E> *xv,
                                                 nt_vec<TX, nt_bwd_chunk<TX>::E> *gv,
                                                 nt_vec<TW, nt_bwd_chunk<TX>::E> *wv,
                                                 const bool *act, const nt_u4 *x,
                                                 const nt_u4 *dy, const nt_u4 *wp, int base) {
    typedef nt_vec<TX, nt_bwd_chunk<TX>::E> VX;
    typedef nt_vec<TW, nt_bwd_chunk<TX>::E> VW;
    constexpr int WP = VW::W / 4;       /* 16-byte pieces of a w chunk */
    const int t = base + (int)threadIdx.x;
#pragma unroll
    for (int j = 0; j < C; j++) {
        if (act[j]) {
            nt_ldg<VX::W, true>(x + t + j * B, xv[j].w);
            nt_ldg<VX::W, true>(dy + t + j * B, gv[j].w);
            nt_ldg<VW::W, false>(wp + WP * (t + j * B), wv[j].w);
        } else {
            xv[j].zero();
            gv[j].zero();
            wv[j].zero();
        }
    }
}

/* Pass 2 on one tile (first chunk base) whose x, dy and w are in xv, gv,
 * wv: dx to its chunks at dx + base, and dy*x*r added to acc (ACC) or to
 * the partial row part (its E floats of chunk v at part + E*v; FIRST: the
 * block's first row, written without reading). */
template <class TX, class TW, int B, int C, bool ACC, bool FIRST>
__device__ __forceinline__ void nt_bwd_loop_out(const nt_vec<TX, nt_bwd_chunk<TX>::E> *xv,
                                                const nt_vec<TX, nt_bwd_chunk<TX>::E> *gv,
                                                const nt_vec<TW, nt_bwd_chunk<TX>::E> *wv,
                                                const bool *act,
                                                float (*acc)[nt_bwd_chunk<TX>::E],
                                                float *part, nt_u4 *dx, int base, float r,
                                                float c) {
    constexpr int E = nt_bwd_chunk<TX>::E;
    const int t = base + (int)threadIdx.x;
#pragma unroll
    for (int j = 0; j < C; j++) {
        if (!act[j]) continue;
        float xf[E], g[E], w[E], o[E], p[E];
        xv[j].get(xf);
        gv[j].get(g);
        wv[j].get(w);
        nt_f4 *pp = (nt_f4 *)(part + (long long)E * (t + j * B));
        if (!ACC && !FIRST) {
#pragma unroll
            for (int q = 0; q < E / 4; q++) {
                const nt_f4 v = pp[q];
                p[4 * q] = v.x; p[4 * q + 1] = v.y; p[4 * q + 2] = v.z; p[4 * q + 3] = v.w;
            }
        }
#pragma unroll
        for (int k = 0; k < E; k++) {
            o[k] = r * w[k] * g[k] - xf[k] * c;
            const float d = g[k] * xf[k] * r;
            if (ACC) acc[j][k] += d;
            else p[k] = FIRST ? d : p[k] + d;
        }
        if (!ACC) {
#pragma unroll
            for (int q = 0; q < E / 4; q++) {
                const nt_f4 v = {p[4 * q], p[4 * q + 1], p[4 * q + 2], p[4 * q + 3]};
                pp[q] = v;
            }
        }
        nt_vec<TX, E> ov;
        ov.put(o);
        nt_stg<nt_vec<TX, E>::W, true>(dx + t + j * B, ov.w);
    }
}

template <class TX, class TW, class TDW, int B, int C, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_bwd_loop(nt_args a) {
    nt_wait_prev(); /* before any global access: launched early too (loop.c) */
    constexpr int E = nt_bwd_chunk<TX>::E, TILE = B * C;     /* chunks per tile */
    typedef nt_vec<TX, E> VX;
    typedef nt_vec<TW, E> VW;
    /* K (blocks per SM, 0 = as many as fit) only bounds the registers */
    __shared__ float red_buf[2][64];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const int G = gridDim.x, bid = blockIdx.x;
    const int N = a.N, nvec = N / E, last = (nvec - 1) / TILE;
    const long long M = a.M;
    const float invN = 1.0f / (float)N;
    const nt_u4 *x = (const nt_u4 *)a.t[NT_BWD_X], *dy = (const nt_u4 *)a.t[NT_BWD_DY];
    const nt_u4 *wp = (const nt_u4 *)a.t[NT_BWD_W];
    nt_u4 *dx = (nt_u4 *)a.t[NT_BWD_DX];
    float *part = (float *)a.ws + (long long)bid * N;       /* this block's partial row */

    nt_launch_next();
    bool lact[C];                       /* the last tile's chunks of this thread */
    float acc[C][E];                    /* its dw partial */
#pragma unroll
    for (int j = 0; j < C; j++) {
        lact[j] = last * TILE + j * B + tid < nvec;
#pragma unroll
        for (int k = 0; k < E; k++) acc[j][k] = 0.f;
    }
    VX xv[C], gv[C];
    VW wv[C];
    bool act[C];
    /* rows of this block: bid, bid+G, ...  (G <= M, so at least one) */
    const long long mine = (M - bid + G - 1) / G;
#pragma unroll 1
    for (long long t = 0; t < mine; t++) {
        const long long off = (bid + t * G) * nvec;
        const nt_u4 *xr = x + off, *gr = dy + off;
        nt_u4 *dr = dx + off;
        float sxy = 0.f, sxx = 0.f;
        /* pass 1: the tiles in order; the registers end with the last */
#pragma unroll 1
        for (int u = 0; u <= last; u++) {
            const int base = u * TILE;
#pragma unroll
            for (int j = 0; j < C; j++) act[j] = base + j * B + tid < nvec;
            nt_bwd_loop_load<TX, TW, B, C>(xv, gv, wv, act, xr, gr, wp, base);
#pragma unroll
            for (int j = 0; j < C; j++) {
                if (!act[j]) continue;
                float xf[E], g[E], w[E];
                xv[j].get(xf);
                gv[j].get(g);
                wv[j].get(w);
#pragma unroll
                for (int k = 0; k < E; k++) {
                    sxy += w[k] * g[k] * xf[k];
                    sxx += xf[k] * xf[k];
                }
            }
        }
        nt_block_sum2(sxy, sxx, red + 256u * (unsigned)(t & 1));
        const float r = rsqrtf(sxx * invN + a.eps);
        const float c = sxy * invN * r * r * r;
        /* pass 2: the last tile from registers, its partial in acc ... */
        nt_bwd_loop_out<TX, TW, B, C, true, false>(xv, gv, wv, lact, acc, part, dr,
                                                   last * TILE, r, c);
        /* ... then the other tiles backwards, read again, their partials
         * in ws (every chunk of a tile before the last is in the row) */
#pragma unroll 1
        for (int u = last - 1; u >= 0; u--) {
            const int base = u * TILE;
#pragma unroll
            for (int j = 0; j < C; j++) act[j] = true;
            nt_bwd_loop_load<TX, TW, B, C>(xv, gv, wv, act, xr, gr, wp, base);
            if (t == 0)
                nt_bwd_loop_out<TX, TW, B, C, false, true>(xv, gv, wv, act, acc, part, dr,
                                                           base, r, c);
            else
                nt_bwd_loop_out<TX, TW, B, C, false, false>(xv, gv, wv, act, acc, part, dr,
                                                            base, r, c);
        }
    }
    /* the last tile's columns of this block's partial row */
#pragma unroll
    for (int j = 0; j < C; j++)
        if (lact[j]) {
            nt_f4 *pp = (nt_f4 *)(part + (long long)E * (last * TILE + j * B + tid));
#pragma unroll
            for (int q = 0; q < E / 4; q++) {
                const nt_f4 f = {acc[j][4 * q], acc[j][4 * q + 1], acc[j][4 * q + 2],
                                 acc[j][4 * q + 3]};
                pp[q] = f;
            }
        }
}

#endif
