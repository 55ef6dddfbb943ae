/* rmsnorm_fwd/cluster.cuh -- the cluster family of RMSNorm forward: one
 * row per thread block cluster of S blocks (sm_90 and newer), each block
 * holding 1/S of the row in registers.
 *
 * Why: at long rows and few of them (4096 x 16384) a block that holds a
 * whole row is a large unit of work: the SMs drain unevenly at the end of
 * the grid, and the first y is written only after a whole row has been
 * read by one SM.  Split over S blocks on S SMs, a row is read S times as
 * fast and the grid ends in smaller steps.  QuACK splits rows the same way
 * for N above 16K; here S is a parameter the sweep searches.
 *
 * The row's columns: thread l = rank * B + tid of the cluster's T = S * B
 * holds vectors j * T + l (j < C), as row.cuh's thread tid of B does, so
 * every warp's loads and stores stay contiguous.  The sum of squares: each
 * block reduces its part (nt_fwd_block_sum), thread 0 stores it in the
 * block's slot, the cluster barrier (release/acquire) publishes the slots,
 * and every thread reads the S slots through distributed shared memory in
 * rank order: every block adds the same floats in the same order, so all
 * of them compute the same rstd bits, from run to run.
 *
 * Slots alternate between two halves from row to row: a block writes half
 * h for row i + 2 only after the barrier of row i + 1, which every block
 * reaches after its reads of row i.  A last barrier keeps each block
 * resident until no other block of its cluster can still read its slots.
 *
 * The launch sets the cluster's size (nt_launch.cluster); the grid is S
 * blocks per row, so every block of a cluster walks the same rows and
 * meets every barrier.  Built for an arch without clusters the kernel
 * traps; the family's check refuses such a device first.
 *
 * Measured on an H200 (data/peers-fwd-h200.md): 23-62% slower than the
 * best of row and stage at every long-row problem tried, so not in the
 * default sweep.  (common.cuh's list of the families and io.cuh's "all six"
 * predate this one: those files are in every forward family's source
 * hash, so they change with the next re-tune.) */
#ifndef NT_RMSNORM_FWD_CLUSTER_CUH
#define NT_RMSNORM_FWD_CLUSTER_CUH

#include "rmsnorm_fwd/io.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define NT_FWD_HAS_CLUSTER 1
#else
#define NT_FWD_HAS_CLUSTER 0
#endif

/* Every thread of every block of the cluster: arrive (releasing this
 * thread's writes, shared memory included), then wait (acquiring the
 * others'). */
__device__ __forceinline__ void nt_fwd_cluster_sync() {
#if NT_FWD_HAS_CLUSTER
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

/* The float at shared address saddr (this block's layout) of the cluster's
 * block `rank`. */
__device__ __forceinline__ float nt_fwd_cluster_ld(unsigned saddr, unsigned rank) {
    float v = 0.f;
#if NT_FWD_HAS_CLUSTER
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(saddr), "r"(rank));
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote) : "memory");
#endif
    return v;
}

template <class X, class Wt, int S, int B, int C, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_cluster(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
#if NT_FWD_HAS_CLUSTER
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E, T = S * B;
    __shared__ float red_buf[2][32];
    __shared__ float slot_buf[2];
    const unsigned red = nt_saddr(red_buf), slots = nt_saddr(slot_buf);
    const int tid = threadIdx.x, l = (int)(blockIdx.x % S) * B + tid;
    const nt_fwd_io<X> io(a);
    bool act[C];
    io.template cover<C>(act, T, l);
    typename F::xv xv[C];
    typename F::wv wv[C];
    unsigned it = 0;
#pragma unroll 1
    for (long long row = blockIdx.x / S; row < io.M; row += gridDim.x / S, it++) {
        nt_fwd_load_x<X, C, E>(xv, act, io.x + row * io.rowb, T, l);
        nt_fwd_load_w<Wt, C, E>(wv, act, io.w, T, l);
        float s = nt_fwd_sumsq<X, C, E>(xv, act);
        s = nt_fwd_block_sum<B>(s, red + 128u * (it & 1u));
        const unsigned slot = slots + 4u * (it & 1u);
        if (tid == 0) nt_sts4(slot, s);
        nt_fwd_cluster_sync();
        float t = 0.f;
#pragma unroll
        for (int c = 0; c < S; c++) t += nt_fwd_cluster_ld(slot, (unsigned)c);
        const float r = io.r_of(t);
        if (io.rstd && l == 0) io.rstd[row] = r;
        nt_fwd_store<X, Wt, C, E>(xv, wv, act, r, io.y + row * io.rowb, T, l);
    }
    nt_fwd_cluster_sync();
#else
    __trap();
#endif
}

#endif
