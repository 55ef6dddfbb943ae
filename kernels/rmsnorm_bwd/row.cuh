/* rmsnorm_bwd/row.cuh -- RMSNorm backward: what both chains share (the
 * per-row math, chunk loads and stores), templated on the
 * dtypes: TX for x, dy and dx (nt_bf16, nt_f16 or float), TW for w (TX or
 * float), TDW for dw (float or TW).
 *
 * One source for NVRTC (the tuner) and nvcc (the production library); it
 * includes no CUDA header, so NVRTC compiles it in a fraction of a second.
 * Every kernel takes one nt_args by value (nt_args.h) and finds its tensors
 * by the indices of rmsnorm_bwd/tensors.h.  A row is moved in 16-byte
 * chunks of the activation: E = 16 / sizeof(TX) elements (8 for bf16 and
 * fp16, 4 for fp32); the E weights of a chunk take E * sizeof(TW) bytes (16,
 * or 32 for fp32 weights of a 16-bit activation: two 16-byte pieces).  N is
 * a multiple of 8, so a row is a whole number of chunks.  The kernels are
 * in one file per family, so that each family's source hash (its sources
 * in kernels/<op>/families.c) changes only with what it runs:
 *
 *   nt_persist<TX, TW, TDW, B, C, S, K>       (persistent.cuh)
 *                            persistent rows: grid = K blocks per SM (at most
 *                            M), block b walks rows b, b+G, b+2G, ...; each
 *                            thread owns C chunks of a row (chunk j of thread
 *                            t is chunk j*B+t of the row), keeps its dw
 *                            partial in registers, and writes one fp32 row of
 *                            partials to ws[b][N] at the end.  S > 1: the next
 *                            S-1 rows are copied into shared memory with
 *                            cp.async while the current one is computed; each
 *                            thread copies and reads only its own slots, so
 *                            the pipeline needs no block barrier; w also sits
 *                            in shared memory (one plane per 16-byte piece,
 *                            so a warp's reads stay conflict free).  S == 1:
 *                            loads go straight to registers.
 *   nt_naive_row<TX, TW, TDW, C, F32>         (naive.cuh)
 *                            one block per row: dx and an M x N partial of dw
 *                            (bf16, or fp32 when F32) in ws.
 *   nt_colsum_split<F32>     (colsum.cuh) column sums of the M x N partial over nsplit row
 *                            slices (gridDim.y) -> nsplit x N fp32.
 *   nt_colsum_final<TDW, P>  (colsum.cuh) column sum of nparts fp32 rows -> dw in TDW; P
 *                            says where the rows start in ws (0: at ws, 1/2:
 *                            after an M x N bf16/fp32 partial).
 *
 * TDW is a template argument of the row kernels only so that every kernel
 * of a chain is named by the problem's dtypes; they write fp32 partials.
 *
 * Every kernel of a chain is launched with programmatic dependent launch
 * (sm_90), the first one included: each waits for the previous kernel with
 * griddepcontrol.wait before it touches global memory, and the row
 * kernels allow the column sums' early launch.
 *
 * Math, per row i with r = 1/sqrt(mean(x^2) + eps) and c = mean(w*dy*x):
 *   dx = r*w*dy - x*c*r^3,    dw += dy*x*r,
 * all in fp32 whatever the storage dtypes.
 *
 * Determinism: no float atomics; every reduction has a fixed order.  The
 * row reduction is nt_block_sum2 (common.cuh): a xor butterfly in each warp,
 * warp partials through shared memory, and a second butterfly that every
 * warp does on the same values.  The partial buffer alternates between two
 * halves from row to row, so one barrier per row suffices: a warp can only
 * write a half again after the next row's barrier, which every thread passes
 * only once it has read that half.  dw: each block (persistent) or row
 * (naive) writes its own fp32 partial row; the column sums add them in a
 * fixed order.
 *
 * Code shape: chunk sizes are compile-time (nt_vec<T, E> of W words), so a
 * chunk of x, dy or dx is one 16-byte load or store for every dtype and a
 * bf16 row moves exactly as many bytes per instruction as before the
 * dtypes were added.
 *
 * Napkin math: bytes = 3 * M * N * sizeof(TX) (read x, dy; write dx) plus
 * N * (sizeof(TW) + sizeof(TDW)).  M = 16384, N = 4096 at 4.2 TB/s:
 *   bf16 or fp16: 403 MB, 96 us;   fp32: 805 MB, 192 us.
 * The dw partials add about G * N * 8 bytes (persistent, G = grid: 1056 x
 * 4096 x 8 = 35 MB, 8 us) or M * N * (2 or 4) * 2 (naive: the partial is
 * written and read again, +67% or +133% for bf16). */
#ifndef NT_RMSNORM_BWD_ROW_CUH
#define NT_RMSNORM_BWD_ROW_CUH

#include "common.cuh"
#include "rmsnorm_bwd/tensors.h"

/* Elements of one 16-byte chunk of activation TX. */
template <class TX>
struct nt_bwd_chunk {
    static constexpr int E = 16 / (int)sizeof(TX);
};

/* W words (a multiple of 4) between registers and shared memory, in
 * 16-byte pieces PLANE bytes apart (one ld/st.shared.v4 per piece). */
template <int W, int PLANE>
__device__ __forceinline__ void nt_bwd_lds(unsigned a, unsigned *w) {
    static_assert(W % 4 == 0, "chunks are whole 16-byte pieces");
#pragma unroll
    for (int i = 0; i < W / 4; i++) {
        nt_u4 u = nt_lds16(a + (unsigned)(PLANE * i));
        w[4 * i] = u.x; w[4 * i + 1] = u.y; w[4 * i + 2] = u.z; w[4 * i + 3] = u.w;
    }
}
template <int W, int PLANE>
__device__ __forceinline__ void nt_bwd_sts(unsigned a, const unsigned *w) {
    static_assert(W % 4 == 0, "chunks are whole 16-byte pieces");
#pragma unroll
    for (int i = 0; i < W / 4; i++) {
        nt_u4 u = {w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]};
        nt_sts16(a + (unsigned)(PLANE * i), u);
    }
}

/* W words (2 or a multiple of 4) to global memory at p by ordinary stores
 * (partials and dw, which the next kernel reads again). */
template <int W>
__device__ __forceinline__ void nt_bwd_put(void *p, const unsigned *w) {
    if constexpr (W == 2) {
        nt_u2 v = {w[0], w[1]};
        *(nt_u2 *)p = v;
    } else {
        static_assert(W % 4 == 0, "W: 2 or a multiple of 4 words");
#pragma unroll
        for (int i = 0; i < W / 4; i++) {
            nt_u4 v = {w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]};
            ((nt_u4 *)p)[i] = v;
        }
    }
}

/* Where nt_bwd_row reads chunk j of x, dy or w: registers, or shared memory
 * at a + STRIDE * j (bytes), in 16-byte pieces PLANE bytes apart. */
template <class V>
struct nt_bwd_reg {
    const V *p;
    __device__ __forceinline__ V operator()(int j) const { return p[j]; }
};
template <class V, int STRIDE, int PLANE>
struct nt_bwd_smem {
    unsigned a;
    __device__ __forceinline__ V operator()(int j) const {
        V v;
        nt_bwd_lds<V::W, PLANE>(a + (unsigned)(STRIDE * j), v.w);
        return v;
    }
};

/* The per-row math on C chunks: reduce, write dx, and add dy*x*r into acc
 * (persistent) or store it into part (naive).  Chunk j of x, dy and w is
 * xs(j), gs(j), wsrc(j) (nt_bwd_reg or nt_bwd_smem); chunk j of dx goes to
 * dx + j * stride (16-byte chunks).  Shared memory slots are read again in
 * the second pass rather than held in registers across the block reduction
 * (that keeps large rows from spilling).  Inactive chunks (past the end of
 * the row) are skipped. */
template <class TX, class TW, int C, class XS, class GS, class WS>
__device__ __forceinline__ void nt_bwd_row(XS xs, GS gs, WS wsrc, const bool *act,
                                           float (*acc)[nt_bwd_chunk<TX>::E], float *part,
                                           nt_u4 *dx, int stride, float invN, float eps,
                                           unsigned red) {
    constexpr int E = nt_bwd_chunk<TX>::E;
    float sxy = 0.f, sxx = 0.f;
#pragma unroll
    for (int j = 0; j < C; j++) {
        if (!act[j]) continue;
        float x[E], g[E], w[E];
        xs(j).get(x);
        gs(j).get(g);
        wsrc(j).get(w);
#pragma unroll
        for (int k = 0; k < E; k++) {
            sxy += w[k] * g[k] * x[k];
            sxx += x[k] * x[k];
        }
    }
    nt_block_sum2(sxy, sxx, red);
    const float r = rsqrtf(sxx * invN + eps);
    const float c = sxy * invN * r * r * r;
#pragma unroll
    for (int j = 0; j < C; j++) {
        if (!act[j]) continue;
        float x[E], g[E], w[E], o[E];
        xs(j).get(x);
        gs(j).get(g);
        wsrc(j).get(w);
#pragma unroll
        for (int k = 0; k < E; k++) {
            o[k] = r * w[k] * g[k] - x[k] * c;
            if (acc) acc[j][k] += g[k] * x[k] * r;
            if (part) part[k + E * j] = g[k] * x[k] * r;
        }
        nt_vec<TX, E> ov;
        ov.put(o);
        nt_stg<nt_vec<TX, E>::W, true>(dx + j * stride, ov.w);
    }
}

#endif
