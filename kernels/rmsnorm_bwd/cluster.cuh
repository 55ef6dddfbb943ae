/* rmsnorm_bwd/cluster.cuh -- the cluster RMSNorm backward chain: a
 * persistent grid of thread block clusters of S blocks (sm_90 and newer),
 * each row split over the S blocks of one cluster (nt_bwd_cluster), then
 * nt_colsum_final<TDW, 0> over the clusters' dw partial rows.  See row.cuh
 * for the math and the other chains.
 *
 * Why: the persistent chain gives each block whole rows, so at few rows
 * (M = 256 .. 1024) most of the SMs idle, and a long row must fit one
 * block's registers.  Here a row is held by S blocks on S SMs (QuACK splits
 * rows the same way): S times the SMs at a given M, S times the row length
 * at a given register budget.
 *
 *   nt_bwd_cluster<TX, TW, TDW, S, B, C, K>
 *       grid = a whole number Q of clusters of S blocks (the launcher sizes
 *       it: nt_chain_grid, at most as many clusters as are resident at
 *       once and at most M); cluster q walks rows q, q+Q, q+2Q, ...  Thread
 *       l = s*B + tid of the cluster's T = S*B (s: the block's rank in the
 *       cluster) owns chunks j*T + l (j < C) of every row, so each warp's
 *       loads and stores stay contiguous; w for those chunks is loaded once,
 *       and the dw partial of those columns is kept in registers (C x E
 *       floats) across all the cluster's rows.  At the end each block
 *       writes its columns of the cluster's fp32 partial row ws[q][N];
 *       nt_colsum_final adds the Q rows (nt_args.nparts = grid / S).
 *
 * The row sums (sum w*dy*x and sum x*x): each block reduces its part with
 * nt_block_sum2 (fixed order), thread 0 stores the pair in the block's
 * slot, the cluster barrier (arrive.release / wait.acquire) publishes the
 * slots, and every thread reads the S pairs through distributed shared
 * memory (mapa + ld.shared::cluster) and adds them in rank order from 0:
 * every block adds the same floats in the same order, so all compute the
 * same r and c bits, from run to run.  Slots alternate between two halves
 * from row to row: a block writes half h for row t + 2 only after the
 * barrier of row t + 1, which every block reaches after its reads of row
 * t.  A last barrier keeps each block resident until no block of its
 * cluster can still read its slots.  All blocks of a cluster walk the same
 * rows, so all meet every barrier.
 *
 * Determinism: no float atomics; the block sums, the sum over the slots
 * and the final column sum all have a fixed order, whatever the timing.
 *
 * Built for an arch without clusters (the library's sm_80 code) the kernel
 * traps after its wait; the family's check refuses such a device first.
 * The launch sets the cluster's size (nt_launch.cluster). */
#ifndef NT_RMSNORM_BWD_CLUSTER_CUH
#define NT_RMSNORM_BWD_CLUSTER_CUH

#include "rmsnorm_bwd/row.cuh"
#include "rmsnorm_bwd/colsum.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define NT_BWD_HAS_CLUSTER 1
#else
#define NT_BWD_HAS_CLUSTER 0
#endif

/* Every thread of every block of the cluster: arrive (releasing this
 * thread's writes, shared memory included), then wait (acquiring the
 * others'). */
__device__ __forceinline__ void nt_bwd_cluster_sync() {
#if NT_BWD_HAS_CLUSTER
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

/* The two floats at shared address saddr (8-byte aligned, this block's
 * layout) of the cluster's block `rank`, into a and b. */
__device__ __forceinline__ void nt_bwd_cluster_ld2(unsigned saddr, unsigned rank, float &a,
                                                   float &b) {
    a = b = 0.f;
#if NT_BWD_HAS_CLUSTER
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(saddr), "r"(rank));
    asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];"
                 : "=f"(a), "=f"(b) : "r"(remote) : "memory");
#endif
}

template <class TX, class TW, class TDW, int S, int B, int C, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_bwd_cluster(nt_args a) {
    nt_wait_prev(); /* before any global access: launched early too (cluster.c) */
#if NT_BWD_HAS_CLUSTER
    constexpr int E = nt_bwd_chunk<TX>::E, T = S * B;
    typedef nt_vec<TX, E> VX;           /* one 16-byte chunk */
    typedef nt_vec<TW, E> VW;           /* 16 or 32 bytes */
    constexpr int WP = VW::W / 4;       /* 16-byte pieces of a w chunk */
    __shared__ float red_buf[2][64];    /* nt_block_sum2's halves */
    __shared__ __align__(8) float slot_buf[2][2]; /* [half][sum w*dy*x, sum x*x] */
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
    VW wv[C];
    VX xv[C], gv[C];
#pragma unroll
    for (int j = 0; j < C; j++) {
        act[j] = j * T + l < nvec;
#pragma unroll
        for (int k = 0; k < E; k++) acc[j][k] = 0.f;
        if (act[j])
            nt_ldg<VW::W, false>(wp + WP * (j * T + l), wv[j].w);
        else
            wv[j].zero();
    }
    /* rows of this cluster: q, q+Q, ...  (Q <= M, so at least one) */
    const long long mine = q < M ? (M - q + Q - 1) / Q : 0;
#pragma unroll 1
    for (long long t = 0; t < mine; t++) {
        const long long off = (q + t * Q) * nvec + l;
        float sxy = 0.f, sxx = 0.f;
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (act[j]) {
                nt_ldg<VX::W, true>(x + off + j * T, xv[j].w);
                nt_ldg<VX::W, true>(dy + off + j * T, gv[j].w);
            } else {
                xv[j].zero();
                gv[j].zero();
            }
        }
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (!act[j]) continue;
            float xf[E], gf[E], wf[E];
            xv[j].get(xf);
            gv[j].get(gf);
            wv[j].get(wf);
#pragma unroll
            for (int k = 0; k < E; k++) {
                sxy += wf[k] * gf[k] * xf[k];
                sxx += xf[k] * xf[k];
            }
        }
        nt_block_sum2(sxy, sxx, red + 256u * (unsigned)(t & 1));
        const unsigned slot = slots + 8u * (unsigned)(t & 1);
        if (tid == 0) {
            nt_sts4(slot, sxy);
            nt_sts4(slot + 4u, sxx);
        }
        nt_bwd_cluster_sync();
        float ty = 0.f, tx = 0.f;
#pragma unroll
        for (int c = 0; c < S; c++) {
            float py, px;
            nt_bwd_cluster_ld2(slot, (unsigned)c, py, px);
            ty += py;
            tx += px;
        }
        const float r = rsqrtf(tx * invN + a.eps);
        const float cr = ty * invN * r * r * r;
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (!act[j]) continue;
            float xf[E], gf[E], wf[E], o[E];
            xv[j].get(xf);
            gv[j].get(gf);
            wv[j].get(wf);
#pragma unroll
            for (int k = 0; k < E; k++) {
                o[k] = r * wf[k] * gf[k] - xf[k] * cr;
                acc[j][k] += gf[k] * xf[k] * r;
            }
            VX ov;
            ov.put(o);
            nt_stg<VX::W, true>(dx + off + j * T, ov.w);
        }
    }
    nt_bwd_cluster_sync();   /* no block leaves while another may read its slots */
    /* this block's columns of the cluster's dw partial row: E floats a chunk */
    nt_f4 *out = (nt_f4 *)((float *)a.ws + q * N);
#pragma unroll
    for (int j = 0; j < C; j++)
        if (act[j]) {
            const int v = j * T + l;
#pragma unroll
            for (int h = 0; h < E / 4; h++) {
                nt_f4 f = {acc[j][4 * h], acc[j][4 * h + 1], acc[j][4 * h + 2], acc[j][4 * h + 3]};
                out[(E / 4) * v + h] = f;
            }
        }
#else
    __trap();
#endif
}

#endif
