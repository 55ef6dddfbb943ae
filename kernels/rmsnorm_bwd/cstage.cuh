/* rmsnorm_bwd/cstage.cuh -- the pipelined cluster RMSNorm backward chain:
 * a persistent grid of thread block clusters of S blocks (sm_90 and newer),
 * each row split over the S blocks of one cluster as in cluster.cuh, and
 * the next P - 1 rows of each block's slice copied into shared memory with
 * cp.async while the current one is computed, as persistent.cuh does for
 * whole rows; then nt_colsum_final<TDW, 0> over the clusters' dw partial
 * rows.  See row.cuh for the math and the other chains.
 *
 * Why: a pipelined block holds P rows of x and dy in shared memory, which
 * at N = 24576 (bf16) no longer fits one SM twice (96 KB a row); the
 * cluster family splits the row but keeps it in registers, so no load of
 * the next row is in flight while a row is reduced.  Here each block holds
 * P slices of 1/S of a row: at S = 2, two stages of a 32768-element row
 * take 128 KB a block.
 *
 *   nt_bwd_cstage<TX, TW, TDW, S, B, C, P, K>
 *       grid = a whole number Q of clusters of S blocks (the launcher sizes
 *       it, as for nt_bwd_cluster); cluster q walks rows q, q+Q, ...
 *       Thread l = s*B + tid of the cluster's T = S*B (s: the block's rank)
 *       owns chunks j*T + l (j < C) of every row.  Dynamic shared memory:
 *       [P][x, dy][C*B] 16-byte slots, then w's [WP][C*B] pieces; slot
 *       j*B + tid (of each plane) is thread tid's chunk j, so every thread
 *       copies and later reads only its own slots and the pipeline needs
 *       no block barrier, only the thread's own cp.async waits.
 *
 * The row sums go through the cluster as in cluster.cuh: nt_block_sum2 in
 * each block, thread 0 stores the pair in the block's slot for the row,
 * the cluster barrier publishes them, and every thread adds the S pairs in
 * rank order through distributed shared memory, so all blocks compute the
 * same r and c bits.  The barrier is split in its halves so that its
 * latency is hidden: with three stages or more (AHEAD), a block computes
 * and stores the sums of row t + 1 (already landed) before it waits for
 * the cluster's sums of row t, and arrives for row t + 1 once it has read
 * them.  Slots rotate over four rows: a block writes slot (t + 1) & 3
 * while another may still read its slot (t - 1) & 3 (it has not arrived
 * for row t yet), and slot (t + 1) & 3 was last read for row t - 3, before
 * every block's arrival for row t - 2, which this block's wait of row t - 1
 * has seen.  With two stages row t + 1 is still on its way, and a row is
 * reduced, published and waited for in turn.  The dw partial of a thread's
 * chunks stays in registers (C x E floats) across the cluster's rows and
 * is written to ws[q][N] at the end; a last cluster barrier keeps every
 * block resident until no block of its cluster can still read its slots.
 *
 * Determinism: no float atomics; the block sums, the slot sums and the
 * final column sum all have a fixed order.  Built for an arch without
 * clusters the kernel traps after its wait (the family's check refuses
 * such a device first). */
#ifndef NT_RMSNORM_BWD_CSTAGE_CUH
#define NT_RMSNORM_BWD_CSTAGE_CUH

#include "rmsnorm_bwd/cluster.cuh"

/* The 16-byte chunks j < C of this thread's slice of a row (global offset
 * off, in chunks, of its first one; chunk j at off + j * T) into the
 * x and dy planes of the stage at shared address st. */
template <int C, int B, int T>
__device__ __forceinline__ void nt_bwd_cstage_fetch(unsigned st, const nt_u4 *x, const nt_u4 *dy,
                                                    long long off, const bool *act) {
#pragma unroll
    for (int j = 0; j < C; j++)
        if (act[j]) {
            nt_cp_async<4>(st + 16u * (unsigned)(j * B), x + off + j * T);
            nt_cp_async<4>(st + 16u * (unsigned)(C * B + j * B), dy + off + j * T);
        }
}

/* The cluster barrier in its two halves: arrive (releasing this thread's
 * writes, shared memory included), and wait (acquiring the others'). */
__device__ __forceinline__ void nt_bwd_cstage_arrive() {
#if NT_BWD_HAS_CLUSTER
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void nt_bwd_cstage_wait() {
#if NT_BWD_HAS_CLUSTER
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

template <class TX, class TW, class TDW, int S, int B, int C, int P, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_bwd_cstage(nt_args a) {
    nt_wait_prev(); /* before any global access: launched early too (cstage.c) */
#if NT_BWD_HAS_CLUSTER
    static_assert(P >= 2, "cstage pipelines at least two rows");
    /* with a third stage, row t + 1 has landed while row t is finished */
    constexpr bool AHEAD = P >= 3;
    constexpr int E = nt_bwd_chunk<TX>::E, T = S * B;
    typedef nt_vec<TX, E> VX;           /* one 16-byte chunk */
    typedef nt_vec<TW, E> VW;           /* 16 or 32 bytes */
    constexpr int WP = VW::W / 4;       /* 16-byte pieces of a w chunk */
    extern __shared__ nt_u4 nt_stage[];
    __shared__ float red_buf[2][64];    /* nt_block_sum2's halves */
    __shared__ __align__(8) float slot_buf[4][2]; /* [row & 3][sum w*dy*x, sum x*x] */
    const unsigned red = nt_saddr(red_buf), slots = nt_saddr(slot_buf);
    const int tid = threadIdx.x;
    const int l = (int)(blockIdx.x % S) * B + tid;  /* thread of the cluster */
    const long long q = blockIdx.x / S, Q = gridDim.x / S;
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
        act[j] = j * T + l < nvec;
#pragma unroll
        for (int k = 0; k < E; k++) acc[j][k] = 0.f;
    }
    /* this thread's slots: stage s, plane p (0 x, 1 dy), chunk j at
     * base + 16 * ((2 s + p) C B + j B); w's chunk j at sw + 16 j B */
    const unsigned base = nt_saddr(nt_stage) + 16u * (unsigned)tid;
    const unsigned sw = base + 16u * (unsigned)(2 * C * B * P);
#pragma unroll
    for (int j = 0; j < C; j++)
        if (act[j]) {
            VW v;
            nt_ldg<VW::W, false>(wp + WP * (j * T + l), v.w);
            nt_bwd_sts<VW::W, 16 * C * B>(sw + 16u * (unsigned)(j * B), v.w);
        }
    /* rows of this cluster: q, q+Q, ...  (Q <= M, so at least one) */
    const long long mine = q < M ? (M - q + Q - 1) / Q : 0;
#pragma unroll
    for (int s = 0; s < P - 1; s++) {
        if (s < mine)
            nt_bwd_cstage_fetch<C, B, T>(base + 16u * (unsigned)(2 * C * B * s), x, dy,
                                         (q + (long long)s * Q) * nvec + l, act);
        nt_cp_commit();
    }
    /* The first half of row t, once its slice has landed: this block's
     * sums, reduced over the block, into slot t & 3 (thread 0). */
    auto head = [&](long long t) {
        const unsigned st = base + 16u * (unsigned)(2 * C * B * (int)(t % P));
        const nt_bwd_smem<VX, 16 * B, 0> xs{st}, gs{st + 16u * (unsigned)(C * B)};
        const nt_bwd_smem<VW, 16 * B, 16 * C * B> ws{sw};
        float sxy = 0.f, sxx = 0.f;
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (!act[j]) continue;
            float xf[E], gf[E], wf[E];
            xs(j).get(xf);
            gs(j).get(gf);
            ws(j).get(wf);
#pragma unroll
            for (int k = 0; k < E; k++) {
                sxy += wf[k] * gf[k] * xf[k];
                sxx += xf[k] * xf[k];
            }
        }
        nt_block_sum2(sxy, sxx, red + 256u * (unsigned)(t & 1));
        if (tid == 0) {
            const unsigned slot = slots + 8u * (unsigned)(t & 3);
            nt_sts4(slot, sxy);
            nt_sts4(slot + 4u, sxx);
        }
    };
    if (AHEAD && mine > 0) {
        nt_cp_wait<(AHEAD ? P - 2 : 0)>();                /* row 0 has landed */
        head(0);
        nt_bwd_cstage_arrive();
    }
#pragma unroll 1
    for (long long t = 0; t < mine; t++) {
        const long long tn = t + P - 1;
        if (tn < mine)
            nt_bwd_cstage_fetch<C, B, T>(base + 16u * (unsigned)(2 * C * B * (int)(tn % P)), x,
                                         dy, (q + tn * Q) * nvec + l, act);
        nt_cp_commit();
        if (AHEAD) {
            /* row t + 1's sums while the cluster's of row t are on their way */
            if (t + 1 < mine) {
                nt_cp_wait<(AHEAD ? P - 2 : 0)>();        /* row t + 1 has landed */
                head(t + 1);
            }
        } else {
            nt_cp_wait<P - 1>();                          /* row t has landed */
            head(t);
            nt_bwd_cstage_arrive();
        }
        nt_bwd_cstage_wait();                             /* every block's slot t & 3 */
        const unsigned slot = slots + 8u * (unsigned)(t & 3);
        float ty = 0.f, tx = 0.f;
#pragma unroll
        for (int c = 0; c < S; c++) {
            float py, px;
            nt_bwd_cluster_ld2(slot, (unsigned)c, py, px);
            ty += py;
            tx += px;
        }
        if (AHEAD && t + 1 < mine) nt_bwd_cstage_arrive();   /* publishes slot (t + 1) & 3 */
        const float r = rsqrtf(tx * invN + a.eps);
        const float cr = ty * invN * r * r * r;
        const unsigned st = base + 16u * (unsigned)(2 * C * B * (int)(t % P));
        const nt_bwd_smem<VX, 16 * B, 0> xs{st}, gs{st + 16u * (unsigned)(C * B)};
        const nt_bwd_smem<VW, 16 * B, 16 * C * B> ws{sw};
        nt_u4 *out = dx + (q + t * Q) * nvec + l;
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (!act[j]) continue;
            float xf[E], gf[E], wf[E], o[E];
            xs(j).get(xf);
            gs(j).get(gf);
            ws(j).get(wf);
#pragma unroll
            for (int k = 0; k < E; k++) {
                o[k] = r * wf[k] * gf[k] - xf[k] * cr;
                acc[j][k] += gf[k] * xf[k] * r;
            }
            VX ov;
            ov.put(o);
            nt_stg<VX::W, true>(out + j * T, ov.w);
        }
    }
    nt_cp_wait<0>();
    nt_bwd_cluster_sync();   /* no block leaves while another may read its slots */
    /* this block's columns of the cluster's dw partial row: E floats a chunk */
    nt_f4 *part = (nt_f4 *)((float *)a.ws + q * N);
#pragma unroll
    for (int j = 0; j < C; j++)
        if (act[j]) {
            const int v = j * T + l;
#pragma unroll
            for (int h = 0; h < E / 4; h++) {
                nt_f4 f = {acc[j][4 * h], acc[j][4 * h + 1], acc[j][4 * h + 2], acc[j][4 * h + 3]};
                part[(E / 4) * v + h] = f;
            }
        }
#else
    __trap();
#endif
}

#endif
