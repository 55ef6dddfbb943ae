/* rmsnorm_fwd/common.cuh -- RMSNorm forward: what the families share (the
 * loads, the reductions, the store of a row), templated on the
 * dtypes: x and y of type X (nt_bf16, nt_f16 or float), w of type Wt (X or
 * float), rstd fp32.
 *
 * Per row i: r_i = 1/sqrt(mean_j x_ij^2 + eps); y_ij = x_ij * r_i * w_j,
 * computed in fp32 and rounded once to X; rstd_i = r_i when a.t[NT_FWD_RSTD]
 * is not NULL (the library may pass NULL; the tuner always passes it).
 *
 * One source for NVRTC (the tuner) and nvcc (the production library); no
 * CUDA header.  Every kernel takes one nt_args by value and reads its
 * tensors from a.t[NT_FWD_*].  A row is moved in 16-byte chunks of x
 * (E = 16 / sizeof(X) elements: 8 for bf16/fp16, 4 for fp32); the weight
 * of a chunk is E elements of Wt (8, 16 or 32 bytes).  Chunk j of a thread
 * that is lane l of the T threads of a row covers vector j*T + l, so every
 * load and store instruction of a warp is contiguous.
 *
 * Design: the forward reads each element of x once and writes y once, so it
 * is a copy with one reduction per row in the middle.  What decides
 * bandwidth is bytes in flight per SM: by Little's law, ~4.8 TB/s x ~0.7 us
 * loaded latency / 132 SMs ~ 25 KB of loads outstanding per SM.  The
 * families reach it in different ways, one file each (so that each
 * family's source hash changes only with what it runs); every one starts
 * from io.cuh's nt_fwd_io (tensors, shape, chunk cover, rstd):
 *
 *   nt_fwd_row<X, Wt, B, C, K>      (row.cuh) one row per block of B threads (a loop of
 *                                   stride gridDim.x covers M beyond the grid
 *                                   limit); C chunks per thread,
 *                                   N <= B*C*E, the row and w in registers.
 *                                   Bytes in flight come from many resident
 *                                   blocks (K: blocks per SM for
 *                                   __launch_bounds__, 0 = no bound).  The
 *                                   block reduction is a warp butterfly,
 *                                   warp partials through shared memory and a
 *                                   second butterfly (one barrier per row).
 *   nt_fwd_rows<X, Wt, B, C, R, K>  (rows.cuh) R consecutive rows per block,
 *                                   each thread holding the same columns of
 *                                   all R: w is loaded once per block, and
 *                                   the R sums share one barrier.
 *   nt_fwd_wlate<X, Wt, B, C, R, K> (wlate.cuh) as rows, but each chunk of w
 *                                   is loaded after the reduction, just
 *                                   before the y it scales: only x stays in
 *                                   registers (for an fp32 w next to 16-bit
 *                                   x at long rows).
 *   nt_fwd_stage<X, Wt, B, C, K, G> (stage.cuh) one row per block copied
 *                                   whole into shared memory (cp.async) and
 *                                   read from there twice: QuACK's reload
 *                                   design for long rows, without its
 *                                   cluster.  Few registers; shared memory
 *                                   sets the blocks per SM.  G: when w is
 *                                   loaded (0: all of it with the first
 *                                   row's copy, held in registers; else G
 *                                   chunks at a time as y is written).
 *   nt_fwd_warp<X, Wt, T, B, C, K>  (warp.cuh) T = 1..32 threads per row, B/T rows per
 *                                   block: the reduction is a butterfly in
 *                                   the row's lanes only (no shared memory,
 *                                   no barrier), so small N neither wastes
 *                                   threads nor waits on block barriers.
 *   nt_fwd_persist<X, Wt, B, C, S, K>  (persist.cuh) persistent: K blocks per SM (0 = as
 *                                   many as fit) walk rows bid, bid+G, ...;
 *                                   w sits in registers for the whole walk.
 *                                   S > 1: the next S-1 rows are copied into
 *                                   shared memory with cp.async while the
 *                                   current one is reduced and written, so
 *                                   each block keeps S-1 rows of loads in
 *                                   flight through its own reduction bubble.
 *                                   Each thread copies and reads only its own
 *                                   slots, so the pipeline needs no barrier.
 *                                   S = 1: loads straight into registers.
 *   nt_fwd_cluster<X, Wt, S, B, C, K> (cluster.cuh) one row per cluster of S
 *                                   blocks on S SMs, each holding 1/S of
 *                                   the row in registers; the S partial sums
 *                                   meet through distributed shared memory.
 *
 * Launch: every forward kernel is launched with programmatic dependent
 * launch (nt_launch.pdl, set for all of them by families.c), so that on
 * sm_90 its blocks are scheduled while the kernel before it in the stream
 * drains.  Each kernel's first statement is nt_wait_prev(): no global
 * memory is read or written before the previous kernel has finished and
 * its writes are visible (test_compile checks this in the PTX of every
 * launch that sets pdl).  Measured back to back on an H200, this took
 * 1024 x 4096 bf16 from 7.23 to 5.89 us; a call after an idle GPU gains
 * nothing.
 *
 * Loads and stores: x with plain loads, or cp.async.cg (L2 only) in
 * persist's pipeline and in stage; w with plain loads (reused by every
 * row: L1/L2 resident); y with plain stores.  The read-once and streaming hints (.nc.L1::no_allocate,
 * .cs) were 0.6-2.9% slower at every shape measured, with the L2 holding
 * dirty lines as it does in use (data/peers-fwd-h200.md, table 4).
 *
 * Determinism: no atomics; a thread sums its chunks in a fixed order, the
 * butterflies leave the same bits in every lane (a + b == b + a), and the
 * block's warp partials are added in the same order by every warp.  The
 * partial buffer alternates between two halves from row to row, so one
 * barrier per row suffices (see common.cuh's nt_block_sum2).
 *
 * Napkin math: bytes = M*N*size(X) read + M*N*size(X) written + N*size(Wt)
 * + 4*M (rstd).  M = 16384, N = 4096: bf16 268.5 MB, 67 us at 4.0 TB/s
 * (a read-one/write-one copy on an H200); the 92% target is 73 us.  fp32:
 * 537 MB, 134 us (target 146 us).  Compute is ~3 flops per element (FMA
 * for the sum, two multiplies), ~1.6 GFLOP here: nothing next to the
 * bytes.  Registers per thread for the row data: C * (4 + 4*size(Wt)/size(X))
 * words (bf16 x with fp32 w: 12 C). */
#ifndef NT_RMSNORM_FWD_COMMON_CUH
#define NT_RMSNORM_FWD_COMMON_CUH

#include "common.cuh"
#include "rmsnorm_fwd/tensors.h"

/* E elements per 16-byte chunk of X; the vector types of x and w chunks. */
template <class X, class Wt>
struct nt_fwd_t {
    static constexpr int E = 16 / (int)sizeof(X);
    typedef nt_vec<X, E> xv;
    typedef nt_vec<Wt, E> wv;
    static constexpr int WW = nt_vec<Wt, E>::W;       /* words of w per chunk */
    static_assert(nt_vec<X, E>::W == 4, "x chunks are 16 bytes");
};

/* Sum over the T lanes of a group (T a power of two <= 32, groups aligned
 * in the warp): a xor butterfly; every lane of the group returns the same
 * bits.  Every lane of the warp must call it. */
template <int T>
__device__ __forceinline__ float nt_fwd_lanes(float v) {
#pragma unroll
    for (int o = T / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* Sum of v over a block of B threads; every thread returns the same bits.
 * buf: shared address of 32 floats, alternated by the caller between two
 * such halves from row to row (one barrier per row; see the file comment). */
template <int B>
__device__ __forceinline__ float nt_fwd_block_sum(float v, unsigned buf) {
    v = nt_fwd_lanes<32>(v);
    if (B == 32) return v;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) nt_sts4(buf + 4u * (unsigned)warp, v);
    __syncthreads();
    v = lane < B / 32 ? nt_lds4(buf + 4u * (unsigned)lane) : 0.f;
    return nt_fwd_lanes<32>(v);
}

/* Sum of squares of the active chunks xv[0..C) of this thread, in order. */
template <class X, int C, int E>
__device__ __forceinline__ float nt_fwd_sumsq(const nt_vec<X, E> *xv, const bool *act) {
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < C; j++) {
        if (!act[j]) continue;
        float f[E];
        xv[j].get(f);
#pragma unroll
        for (int k = 0; k < E; k++) s = fmaf(f[k], f[k], s);
    }
    return s;
}

/* Write y = x * r * w for the active chunks: chunk j to vector j*T + l of
 * the row at yrow. */
template <class X, class Wt, int C, int E>
__device__ __forceinline__ void nt_fwd_store(const nt_vec<X, E> *xv, const nt_vec<Wt, E> *wv,
                                             const bool *act, float r, char *yrow, int T, int l) {
#pragma unroll
    for (int j = 0; j < C; j++) {
        if (!act[j]) continue;
        float xf[E], wf[E], o[E];
        xv[j].get(xf);
        wv[j].get(wf);
#pragma unroll
        for (int k = 0; k < E; k++) o[k] = xf[k] * r * wf[k];
        nt_vec<X, E> ov;
        ov.put(o);
        nt_stg<4, false>(yrow + 16 * (long long)(j * T + l), ov.w);
    }
}

/* Load the active x chunks of a row into xv; zero the rest.  Plain loads:
 * read-once hints (ld.global.nc.L1::no_allocate) measured 0.6-2.9% slower
 * (data/peers-fwd-h200.md, table 4). */
template <class X, int C, int E>
__device__ __forceinline__ void nt_fwd_load_x(nt_vec<X, E> *xv, const bool *act, const char *xrow,
                                              int T, int l) {
#pragma unroll
    for (int j = 0; j < C; j++) {
        if (act[j]) nt_ldg<4, false>(xrow + 16 * (long long)(j * T + l), xv[j].w);
        else xv[j].zero();
    }
}

/* Load the active w chunks (ordinary loads: w is read by every row). */
template <class Wt, int C, int E>
__device__ __forceinline__ void nt_fwd_load_w(nt_vec<Wt, E> *wv, const bool *act, const char *w,
                                              int T, int l) {
    constexpr int WW = nt_vec<Wt, E>::W;
#pragma unroll
    for (int j = 0; j < C; j++) {
        if (act[j]) nt_ldg<WW, false>(w + 4 * WW * (long long)(j * T + l), wv[j].w);
        else wv[j].zero();
    }
}

#endif
