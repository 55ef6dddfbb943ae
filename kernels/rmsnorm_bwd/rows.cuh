/* rmsnorm_bwd/rows.cuh -- rmsnorm_bwd.rows: persistent's pipelined chain
 * (rows walked by a resident grid, the next rows copied into shared memory
 * by cp.async, dw partials in registers, one column sum) that walks groups
 * of R consecutive rows: the 2R sums of a group (w*dy*x and x*x of each
 * row) are reduced together behind one block barrier, where persistent
 * waits at one barrier a row.  Why: at mid M (4096 x 4096 bf16, 31 rows a
 * block) Nsight Compute has persistent's issue slots 61% busy with 4 warps
 * a scheduler, each row's reduction and barrier with too few warps to
 * overlap them (docs/guide.md, make bench); the forward's `rows` family,
 * the same idea, wins most mid and long rows.
 *
 *   nt_bwd_rows<TX, TW, TDW, B, C, R, S, K>
 *       groups of R rows: group g is rows g*R .. g*R+R-1 (the last one cut
 *       at M); grid G = K blocks per SM (0: as many as fit), at most the
 *       number of groups; block b walks groups b, b+G, ...; thread t owns
 *       chunks j*B+t (j < C) of each row, as in persistent; the next S-1
 *       groups (S >= 2) are copied into shared memory with cp.async while
 *       the current one is computed, each thread copying and reading only
 *       its own slots (no barrier for the pipeline); w sits in shared
 *       memory, one plane per 16-byte piece.  Dynamic shared memory:
 *       (S * R * 2 * 16 + 16 * WP) * C * B bytes.
 *
 * Per row the same operations in the same order as nt_bwd_row (row.cuh),
 * and nt_bwd_block_sumv adds each sum as nt_block_sum2 does: with R = 1
 * the same bits as persistent by construction (not yet compared on a GPU).  dw: each block's fp32 partial row, then
 * nt_colsum_final, as persistent. */
#ifndef NT_RMSNORM_BWD_ROWS_CUH
#define NT_RMSNORM_BWD_ROWS_CUH

#include "rmsnorm_bwd/row.cuh"
#include "rmsnorm_bwd/colsum.cuh"

/* The NV sums v[0..NV) over the block, each as nt_block_sum2 adds its two
 * (a xor butterfly in each warp, the warp partials through shared memory,
 * the same butterfly over them in every warp): every thread returns the
 * same bits.  buf: shared address of NV*32 floats, alternated by the
 * caller between two such halves from group to group (one barrier a
 * group: see row.cuh). */
template <int NV>
__device__ __forceinline__ void nt_bwd_block_sumv(float *v, unsigned buf) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nw = (blockDim.x + 31) >> 5;
#pragma unroll
    for (int o = 16; o; o >>= 1) {
#pragma unroll
        for (int i = 0; i < NV; i++) v[i] += __shfl_xor_sync(0xffffffffu, v[i], o);
    }
    if (lane == 0) {
#pragma unroll
        for (int i = 0; i < NV; i++) nt_sts4(buf + 4u * (unsigned)(32 * i + warp), v[i]);
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < NV; i++)
        v[i] = lane < nw ? nt_lds4(buf + 4u * (unsigned)(32 * i + lane)) : 0.f;
#pragma unroll
    for (int o = 16; o; o >>= 1) {
#pragma unroll
        for (int i = 0; i < NV; i++) v[i] += __shfl_xor_sync(0xffffffffu, v[i], o);
    }
}

template <class TX, class TW, class TDW, int B, int C, int R, int S, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_bwd_rows(nt_args a) {
    nt_wait_prev(); /* before any global access: launched early too (families.c) */
    static_assert(S >= 2 && R >= 1, "rows: a pipeline of S >= 2 stages of R >= 1 rows");
    constexpr int E = nt_bwd_chunk<TX>::E;
    typedef nt_vec<TX, E> VX;           /* one 16-byte chunk */
    typedef nt_vec<TW, E> VW;           /* 16 or 32 bytes */
    constexpr int WP = VW::W / 4;       /* 16-byte pieces of a w chunk */
    /* 16-byte slots: [S][R][x, dy][C*B], then w [WP][C*B] */
    constexpr unsigned ROWB = 16u * 2u * C * B;   /* bytes of one row's x and dy */
    constexpr unsigned STAGEB = ROWB * R;         /* bytes of one stage */
    extern __shared__ nt_u4 nt_stage[];
    __shared__ float red_buf[2][2 * R][32];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const int G = gridDim.x, bid = blockIdx.x;
    const int N = a.N, nvec = N / E;
    const long long M = a.M, groups = (M + R - 1) / R;
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
    /* groups of this block: bid, bid+G, ...  (G <= groups, so at least one) */
    const long long mine = (groups - bid + G - 1) / G;
    /* slot k (in 16-byte chunks) of this thread: base + 16 * k */
    const unsigned base = nt_saddr(nt_stage) + 16u * (unsigned)tid;
    const unsigned sw = base + STAGEB * S;
#pragma unroll
    for (int j = 0; j < C; j++)
        if (act[j]) {
            VW v;
            nt_ldg<VW::W, false>(wp + WP * (j * B + tid), v.w);
            nt_bwd_sts<VW::W, 16 * C * B>(sw + 16u * (unsigned)(j * B), v.w);
        }
    /* the rows of group g (those below M) into stage slot st */
    auto copy = [&](long long g, unsigned st) {
#pragma unroll
        for (int r = 0; r < R; r++) {
            const long long row = g * R + r;
            if (row >= M) break;
            const long long off = row * nvec + tid;
            const unsigned sr = st + ROWB * (unsigned)r;
#pragma unroll
            for (int j = 0; j < C; j++)
                if (act[j]) {
                    nt_cp_async<VX::W>(sr + 16u * (unsigned)(j * B), x + off + j * B);
                    nt_cp_async<VX::W>(sr + 16u * (unsigned)(C * B + j * B), dy + off + j * B);
                }
        }
    };
#pragma unroll
    for (int s = 0; s < S - 1; s++) {
        if (s < mine) copy(bid + (long long)s * G, base + STAGEB * (unsigned)s);
        nt_cp_commit();
    }
#pragma unroll 1
    for (long long t = 0; t < mine; t++) {
        const long long tn = t + S - 1;
        if (tn < mine) copy(bid + tn * G, base + STAGEB * (unsigned)(tn % S));
        nt_cp_commit();
        nt_cp_wait<S - 1>();                       /* group t has landed */
        const unsigned st = base + STAGEB * (unsigned)(t % S);
        const long long row0 = (bid + t * G) * R;
        /* the sums of each row: v[2r] = sum w*dy*x, v[2r+1] = sum x*x (rows
         * past M add nothing and keep zeros, so every thread reaches the
         * barrier) */
        float v[2 * R];
#pragma unroll
        for (int r = 0; r < R; r++) {
            float sxy = 0.f, sxx = 0.f;
            if (row0 + r < M) {
                const unsigned sr = st + ROWB * (unsigned)r;
#pragma unroll
                for (int j = 0; j < C; j++) {
                    if (!act[j]) continue;
                    VX xv, gv;
                    VW wv;
                    float xf[E], gf[E], wf[E];
                    nt_bwd_lds<VX::W, 0>(sr + 16u * (unsigned)(j * B), xv.w);
                    nt_bwd_lds<VX::W, 0>(sr + 16u * (unsigned)(C * B + j * B), gv.w);
                    nt_bwd_lds<VW::W, 16 * C * B>(sw + 16u * (unsigned)(j * B), wv.w);
                    xv.get(xf);
                    gv.get(gf);
                    wv.get(wf);
#pragma unroll
                    for (int k = 0; k < E; k++) {
                        sxy += wf[k] * gf[k] * xf[k];
                        sxx += xf[k] * xf[k];
                    }
                }
            }
            v[2 * r] = sxy;
            v[2 * r + 1] = sxx;
        }
        nt_bwd_block_sumv<2 * R>(v, red + 256u * (unsigned)R * (unsigned)(t & 1));
#pragma unroll
        for (int r = 0; r < R; r++) {
            const long long row = row0 + r;
            if (row >= M) break;
            const float rr = rsqrtf(v[2 * r + 1] * invN + a.eps);
            const float c = v[2 * r] * invN * rr * rr * rr;
            const unsigned sr = st + ROWB * (unsigned)r;
            nt_u4 *out = dx + row * nvec + tid;
#pragma unroll
            for (int j = 0; j < C; j++) {
                if (!act[j]) continue;
                VX xv, gv;
                VW wv;
                float xf[E], gf[E], wf[E], o[E];
                nt_bwd_lds<VX::W, 0>(sr + 16u * (unsigned)(j * B), xv.w);
                nt_bwd_lds<VX::W, 0>(sr + 16u * (unsigned)(C * B + j * B), gv.w);
                nt_bwd_lds<VW::W, 16 * C * B>(sw + 16u * (unsigned)(j * B), wv.w);
                xv.get(xf);
                gv.get(gf);
                wv.get(wf);
#pragma unroll
                for (int k = 0; k < E; k++) {
                    o[k] = rr * wf[k] * gf[k] - xf[k] * c;
                    acc[j][k] += gf[k] * xf[k] * rr;
                }
                VX ov;
                ov.put(o);
                nt_stg<VX::W, true>(out + j * B, ov.w);
            }
        }
    }
    nt_cp_wait<0>();
    /* this block's dw partial row: E floats per chunk */
    nt_f4 *part = (nt_f4 *)((float *)a.ws + (long long)bid * N);
#pragma unroll
    for (int j = 0; j < C; j++)
        if (act[j]) {
            const int vi = j * B + tid;
#pragma unroll
            for (int q = 0; q < E / 4; q++) {
                nt_f4 f = {acc[j][4 * q], acc[j][4 * q + 1], acc[j][4 * q + 2], acc[j][4 * q + 3]};
                part[(E / 4) * vi + q] = f;
            }
        }
}

#endif
