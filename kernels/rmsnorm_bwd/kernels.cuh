/* rmsnorm_bwd/kernels.cuh -- RMSNorm backward device code, templated on the
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
 * a multiple of 8, so a row is a whole number of chunks.  Kernels:
 *
 *   nt_persist<TX, TW, TDW, B, C, S, K>
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
 *   nt_naive_row<TX, TW, TDW, C, F32>
 *                            one block per row: dx and an M x N partial of dw
 *                            (bf16, or fp32 when F32) in ws.
 *   nt_colsum_split<F32>     column sums of the M x N partial over nsplit row
 *                            slices (gridDim.y) -> nsplit x N fp32.
 *   nt_colsum_final<TDW, P>  column sum of nparts fp32 rows -> dw in TDW; P
 *                            says where the rows start in ws (0: at ws, 1/2:
 *                            after an M x N bf16/fp32 partial).
 *
 * TDW is a template argument of the row kernels only so that every kernel
 * of a chain is named by the problem's dtypes; they write fp32 partials.
 *
 * Column sums may be launched with programmatic dependent launch (sm_90):
 * they wait for the previous kernel with griddepcontrol.wait before reading
 * its output, and the kernels before them allow the early launch.
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
#ifndef NT_RMSNORM_BWD_CUH
#define NT_RMSNORM_BWD_CUH

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

/* ---- persistent chain ------------------------------------------------- */

template <class TX, class TW, class TDW, int B, int C, int S, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_persist(nt_args a) {
    constexpr int E = nt_bwd_chunk<TX>::E;
    typedef nt_vec<TX, E> VX;           /* one 16-byte chunk */
    typedef nt_vec<TW, E> VW;           /* 16 or 32 bytes */
    constexpr int WP = VW::W / 4;       /* 16-byte pieces of a w chunk */
    /* S > 1: [S][x, dy][C*B] row stages, then w [WP][C*B] (16-byte slots);
     * S == 1: unused */
    extern __shared__ nt_u4 nt_stage[];
    /* K (blocks per SM, 0 = as many as fit) only bounds the registers */
    __shared__ float red_buf[2][64];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const int G = gridDim.x, bid = blockIdx.x;
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
        act[j] = j * B + tid < nvec;
#pragma unroll
        for (int k = 0; k < E; k++) acc[j][k] = 0.f;
    }
    /* rows of this block: bid, bid+G, ...  (G <= M, so at least one) */
    const long long mine = (M - bid + G - 1) / G;

    if (S > 1) {
        /* each thread copies, and later reads, only its own slots: the
         * pipeline needs no barrier, only the thread's own cp.async waits */
        /* slot k (in 16-byte chunks) of this thread: base + 16 * k */
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
    } else {
        VW wv[C];
        VX xv[C], gv[C];
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (act[j])
                nt_ldg<VW::W, false>(wp + WP * (j * B + tid), wv[j].w);
            else
                wv[j].zero();
        }
#pragma unroll 1
        for (long long t = 0; t < mine; t++) {
            const long long off = (bid + t * G) * nvec + tid;
#pragma unroll
            for (int j = 0; j < C; j++) {
                if (act[j]) {
                    nt_ldg<VX::W, true>(x + off + j * B, xv[j].w);
                    nt_ldg<VX::W, true>(dy + off + j * B, gv[j].w);
                } else {
                    xv[j].zero();
                    gv[j].zero();
                }
            }
            nt_bwd_row<TX, TW, C>(nt_bwd_reg<VX>{xv}, nt_bwd_reg<VX>{gv}, nt_bwd_reg<VW>{wv}, act,
                                  acc, (float *)0, dx + off, B, invN, a.eps,
                                  red + 256u * (unsigned)(t & 1));
        }
    }
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

/* ---- naive chain ------------------------------------------------------ */

template <class TX, class TW, class TDW, int C, int F32>
__global__ void __launch_bounds__(1024) nt_naive_row(nt_args a) {
    constexpr int E = nt_bwd_chunk<TX>::E;
    typedef nt_vec<TX, E> VX;
    typedef nt_vec<TW, E> VW;
    constexpr int WP = VW::W / 4;
    __shared__ float red_buf[64];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x, B = blockDim.x;
    const int N = a.N, nvec = N / E;
    const long long row = blockIdx.x;
    const float invN = 1.0f / (float)N;
    const nt_u4 *x = (const nt_u4 *)a.t[NT_BWD_X] + row * nvec;
    const nt_u4 *dy = (const nt_u4 *)a.t[NT_BWD_DY] + row * nvec;
    const nt_u4 *wp = (const nt_u4 *)a.t[NT_BWD_W];
    bool act[C];
    VW wv[C];
    VX xv[C], gv[C];
    float part[E * C];
#pragma unroll
    for (int j = 0; j < C; j++) {
        const int v = j * B + tid;
        act[j] = v < nvec;
        if (act[j]) {
            nt_ldg<VW::W, false>(wp + WP * v, wv[j].w);
            nt_ldg<VX::W, true>(x + v, xv[j].w);
            nt_ldg<VX::W, true>(dy + v, gv[j].w);
        } else {
            wv[j].zero();
            xv[j].zero();
            gv[j].zero();
        }
    }
    nt_launch_next();
    nt_bwd_row<TX, TW, C>(nt_bwd_reg<VX>{xv}, nt_bwd_reg<VX>{gv}, nt_bwd_reg<VW>{wv}, act,
                          (float (*)[E])0, part, (nt_u4 *)a.t[NT_BWD_DX] + row * nvec + tid, B,
                          invN, a.eps, red);
    /* this row's dw partial: E values per chunk, fp32 or bf16 */
#pragma unroll
    for (int j = 0; j < C; j++) {
        if (!act[j]) continue;
        const long long v = row * nvec + j * B + tid;
        if (F32) {
#pragma unroll
            for (int q = 0; q < E / 4; q++) {
                nt_f4 f = {part[E * j + 4 * q], part[E * j + 4 * q + 1], part[E * j + 4 * q + 2],
                           part[E * j + 4 * q + 3]};
                ((nt_f4 *)a.ws)[(E / 4) * v + q] = f;
            }
        } else {
            nt_vec<nt_bf16, E> pv;
            pv.put(part + E * j);
            nt_bwd_put<nt_vec<nt_bf16, E>::W>((char *)a.ws + 2 * E * v, pv.w);
        }
    }
}

/* ---- column sums ------------------------------------------------------ */

/* Bytes of an M x N partial of element size es, rounded up to 256. */
__device__ __forceinline__ long long nt_part_bytes(long long M, int N, int es) {
    return ((M * N * es) + 255) & ~255LL;
}

/* Four columns c4*4.. of rows [r0, r1) summed into a float4 by a block of
 * 256 threads: CG column groups x (256/CG) row lanes.  Lane ty sums rows
 * r0+ty, r0+ty+RL, ... in order; the lanes are then added by a fixed tree.
 * Returns the sum in the threads of lane 0 (threadIdx.x < CG). */
template <int F32, int CG>
__device__ __forceinline__ nt_f4 nt_colsum4(const void *in, int N, long long r0, long long r1,
                                            bool ok, long long c4) {
    constexpr int RL = 256 / CG;
    __shared__ nt_f4 tile[RL][CG];
    const int tx = threadIdx.x % CG, ty = threadIdx.x / CG;
    nt_f4 s = {0.f, 0.f, 0.f, 0.f};
    if (ok) {
#pragma unroll 4
        for (long long r = r0 + ty; r < r1; r += RL) {
            if (F32) {
                nt_f4 v = ((const nt_f4 *)in)[(r * N >> 2) + c4];
                s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
            } else {
                nt_u2 v = ((const nt_u2 *)in)[(r * N >> 2) + c4];
                s.x += nt_lo(v.x); s.y += nt_hi(v.x); s.z += nt_lo(v.y); s.w += nt_hi(v.y);
            }
        }
    }
    tile[ty][tx] = s;
    __syncthreads();
#pragma unroll
    for (int h = RL / 2; h > 0; h >>= 1) {
        if (ty < h) {
            nt_f4 u = tile[ty + h][tx];
            s.x += u.x; s.y += u.y; s.z += u.z; s.w += u.w;
            tile[ty][tx] = s;
        }
        __syncthreads();
    }
    return s;
}

#define NT_SPLIT_CG 16        /* column sum over M rows: 64 columns a block */
#define NT_FINAL_CG 4         /* final column sum: 16 columns a block */

template <int F32>
__global__ void __launch_bounds__(256) nt_colsum_split(nt_args a) {
    const long long c4 = (long long)blockIdx.x * NT_SPLIT_CG + (threadIdx.x % NT_SPLIT_CG);
    const bool ok = c4 < (a.N >> 2);
    const long long per = (a.M + gridDim.y - 1) / gridDim.y;
    long long r0 = (long long)blockIdx.y * per, r1 = r0 + per;
    if (r1 > a.M) r1 = a.M;
    if (r0 > r1) r0 = r1;                                /* empty slice: zeros */
    nt_wait_prev();
    nt_launch_next();
    nt_f4 t = nt_colsum4<F32, NT_SPLIT_CG>(a.ws, a.N, r0, r1, ok, c4);
    float *out = (float *)((char *)a.ws + nt_part_bytes(a.M, a.N, F32 ? 4 : 2));
    if (ok && threadIdx.x < NT_SPLIT_CG) ((nt_f4 *)(out + (long long)blockIdx.y * a.N))[c4] = t;
}

template <class TDW, int P>
__global__ void __launch_bounds__(256) nt_colsum_final(nt_args a) {
    const long long c4 = (long long)blockIdx.x * NT_FINAL_CG + (threadIdx.x % NT_FINAL_CG);
    const bool ok = c4 < (a.N >> 2);
    const char *in = (const char *)a.ws + (P ? nt_part_bytes(a.M, a.N, P == 2 ? 4 : 2) : 0);
    nt_wait_prev();
    nt_f4 t = nt_colsum4<1, NT_FINAL_CG>(in, a.N, 0, a.nparts, ok, c4);
    if (!ok || threadIdx.x >= NT_FINAL_CG) return;
    const float f[4] = {t.x, t.y, t.z, t.w};
    nt_vec<TDW, 4> v;                   /* 4 columns: 8 or 16 bytes */
    v.put(f);
    nt_bwd_put<nt_vec<TDW, 4>::W>((char *)a.t[NT_BWD_DW] + sizeof(TDW) * 4 * c4, v.w);
}

#endif
