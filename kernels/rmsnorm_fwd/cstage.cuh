/* rmsnorm_fwd/cstage.cuh -- the pipelined cluster RMSNorm forward: a
 * resident grid of thread block clusters of S blocks (sm_90 and newer),
 * each row split over the S blocks of one cluster as in cluster.cuh, and
 * the next P - 1 rows of each block's slice copied into shared memory with
 * cp.async while the current one is summed and written, as stage.cuh keeps
 * one whole row there.
 *
 * Why: at rows past 16384 and few of them (1024 x 65536 bf16) the families
 * that hold a row in one block leave an SM one or two rows at a time with
 * nothing in flight while a row is reduced: `stage` holds 128 KB of shared
 * memory for one such row, so one block fits an SM and its loads stop at
 * every row's reduction (92% of a copy's bandwidth at 1024 x 65536 on an
 * H200, where QuACK, which splits rows over a cluster, reached 95-97%).
 * `cluster` splits the row but keeps it in registers and loads a row only
 * when the last one is written, so its SMs wait in lockstep at every
 * cluster barrier (docs/guide.md).  Here each block holds P slices of
 * 1/S of a row, the next rows' copies in flight across the barrier: the
 * design of the backward's `cstage`, which was 1.15-1.29x faster than its
 * `cluster` at N = 24576 .. 65536.
 *
 *   nt_fwd_cstage<X, Wt, S, B, C, P, K>
 *       grid = a whole number Q of clusters of S blocks (the launcher sizes
 *       it: k blocks per SM, or with k = 0 as many clusters as can be
 *       resident at once; at most M); cluster q walks rows q, q+Q, ...
 *       Thread l = s*B + tid of the cluster's T = S*B (s: the block's rank)
 *       owns chunks j*T + l (j < C) of every row, so every warp's accesses
 *       are contiguous.  Dynamic shared memory: [P][C*B] 16-byte slots;
 *       slot j*B + tid of a stage is thread tid's chunk j, so every thread
 *       copies and later reads only its own slots and the ring needs no
 *       block barrier, only the thread's own cp.async waits.  w's C chunks
 *       are held in registers for the walk, loaded once under the first
 *       rows' copies.
 *
 * The row's sum of squares goes through the cluster as in cluster.cuh:
 * nt_fwd_block_sum in each block, thread 0 stores it in the block's slot
 * for the row, the cluster barrier publishes the slots, and every thread
 * adds the S of them in rank order through distributed shared memory, so
 * all blocks compute the same rstd bits, from run to run.  The barrier is
 * split in its halves so that its latency hides behind work: with three
 * stages or more (AHEAD) a block sums and publishes row t + 1 (already
 * landed) before it waits for the cluster's sums of row t.  Slots rotate
 * over four rows: a block writes slot (t + 1) & 3 while another may still
 * read its slot (t - 1) & 3 (it has not arrived for row t yet), and slot
 * (t + 1) & 3 was last read for row t - 3, before every block's arrival
 * for row t - 2, which this block's wait of row t - 1 has seen.  With two
 * stages row t + 1 is still on its way, and a row is reduced, published
 * and waited for in turn.  A last cluster barrier keeps every block
 * resident until no block of its cluster can still read its slots.  Built
 * for an arch without clusters the kernel traps after its wait (the
 * family's check refuses such a device first). */
#ifndef NT_RMSNORM_FWD_CSTAGE_CUH
#define NT_RMSNORM_FWD_CSTAGE_CUH

#include "rmsnorm_fwd/cluster.cuh"

/* The cluster barrier in its two halves: arrive (releasing this thread's
 * writes, shared memory included), and wait (acquiring the others'). */
__device__ __forceinline__ void nt_fwd_cstage_arrive() {
#if NT_FWD_HAS_CLUSTER
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void nt_fwd_cstage_wait() {
#if NT_FWD_HAS_CLUSTER
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

template <class X, class Wt, int S, int B, int C, int P, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_cstage(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
#if NT_FWD_HAS_CLUSTER
    static_assert(P >= 2 && P <= 4, "cstage pipelines 2 to 4 rows");
    constexpr bool AHEAD = P >= 3;  /* row t + 1 has landed while row t is finished */
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E, T = S * B;
    extern __shared__ nt_u4 nt_fwd_ring[];
    __shared__ float red_buf[2][32];    /* nt_fwd_block_sum's halves */
    __shared__ float slot_buf[4];       /* [row & 3]: this block's sum of squares */
    const unsigned red = nt_saddr(red_buf), slots = nt_saddr(slot_buf);
    const int tid = threadIdx.x, l = (int)(blockIdx.x % S) * B + tid;
    const long long q = blockIdx.x / S, Q = gridDim.x / S;
    const nt_fwd_io<X> io(a);
    bool act[C];
    io.template cover<C>(act, T, l);
    /* this thread's slots: stage s, chunk j at base + 16 (s C B + j B) */
    const unsigned base = nt_saddr(nt_fwd_ring) + 16u * (unsigned)tid;
    /* rows of this cluster: q, q+Q, ...  (Q <= M, so at least one) */
    const long long mine = q < io.M ? (io.M - q + Q - 1) / Q : 0;
    auto stage_of = [&](long long t) { return base + 16u * (unsigned)(C * B * (int)(t % P)); };
    auto fetch = [&](long long t) {
        const unsigned st = stage_of(t);
        const char *xrow = io.x + (q + t * Q) * io.rowb;
#pragma unroll
        for (int j = 0; j < C; j++)
            if (act[j]) nt_cp16(st + 16u * (unsigned)(j * B), xrow + 16 * (long long)(j * T + l));
    };
#pragma unroll
    for (int s = 0; s < P - 1; s++) {
        if (s < mine) fetch(s);
        nt_cp_commit();
    }
    typename F::wv wv[C];
    nt_fwd_load_w<Wt, C, E>(wv, act, io.w, T, l);
    /* The first half of row t, once its slice has landed: this block's
     * sum of squares, reduced over the block, into slot t & 3 (thread 0). */
    auto head = [&](long long t) {
        const unsigned st = stage_of(t);
        typename F::xv xv;
        float s = 0.f;
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (!act[j]) continue;
            nt_fwd_lds_x(xv, st + 16u * (unsigned)(j * B));
            s += nt_fwd_sumsq<X, 1, E>(&xv, &act[j]);
        }
        s = nt_fwd_block_sum<B>(s, red + 128u * (unsigned)(t & 1));
        if (tid == 0) nt_sts4(slots + 4u * (unsigned)(t & 3), s);
    };
    if (AHEAD && mine > 0) {
        nt_cp_wait<(AHEAD ? P - 2 : 0)>();                /* row 0 has landed */
        head(0);
        nt_fwd_cstage_arrive();
    }
#pragma unroll 1
    for (long long t = 0; t < mine; t++) {
        const long long tn = t + P - 1;
        if (tn < mine) fetch(tn);                         /* into row t - 1's stage */
        nt_cp_commit();
        if (AHEAD) {
            /* row t + 1's sum while the cluster's of row t are on their way */
            if (t + 1 < mine) {
                nt_cp_wait<(AHEAD ? P - 2 : 0)>();        /* row t + 1 has landed */
                head(t + 1);
            }
        } else {
            nt_cp_wait<P - 1>();                          /* row t has landed */
            head(t);
            nt_fwd_cstage_arrive();
        }
        nt_fwd_cstage_wait();                             /* every block's slot t & 3 */
        const unsigned slot = slots + 4u * (unsigned)(t & 3);
        float tot = 0.f;
#pragma unroll
        for (int c = 0; c < S; c++) tot += nt_fwd_cluster_ld(slot, (unsigned)c);
        if (AHEAD && t + 1 < mine) nt_fwd_cstage_arrive();   /* publishes slot (t + 1) & 3 */
        const float r = io.r_of(tot);
        const long long row = q + t * Q;
        if (io.rstd && l == 0) io.rstd[row] = r;
        const unsigned st = stage_of(t);
        char *yrow = io.y + row * io.rowb;
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (!act[j]) continue;
            typename F::xv xv;
            nt_fwd_lds_x(xv, st + 16u * (unsigned)(j * B));
            nt_fwd_store<X, Wt, 1, E>(&xv, &wv[j], &act[j], r, yrow + 16 * (long long)(j * T), T, l);
        }
    }
    nt_cp_wait<0>();
    nt_fwd_cluster_sync();   /* no block leaves while another may read its slots */
#else
    __trap();
#endif
}

#endif
