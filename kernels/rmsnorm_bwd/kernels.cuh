/* rmsnorm_bwd/kernels.cuh -- RMSNorm backward device code, bf16 in, bf16 dx, fp32 dw.
 *
 * One source for NVRTC (the tuner) and nvcc (the production library); it
 * includes no CUDA header, so NVRTC compiles it in a fraction of a second.
 * Every kernel takes one nt_args by value (nt_args.h).  Kernels:
 *
 *   nt_persist<B, C, S, K>   persistent rows: grid = K blocks per SM (at most
 *                            M), block b walks rows b, b+G, b+2G, ...; each
 *                            thread owns C 16-byte chunks of a row (chunk j of
 *                            thread t covers vector j*B+t), keeps its dw
 *                            partial in registers, and writes one fp32 row of
 *                            partials to ws[b][N] at the end.  S > 1: the next
 *                            S-1 rows are copied into shared memory with
 *                            cp.async while the current one is computed; each
 *                            thread copies and reads only its own slots, so
 *                            the pipeline needs no block barrier; w also sits
 *                            in shared memory.  S == 1: loads go straight to
 *                            registers.
 *   nt_naive_row<C, F32>     one block per row: dx and an M x N partial of dw
 *                            (bf16 or fp32) in ws.
 *   nt_colsum_split<F32>     column sums of the M x N partial over nsplit row
 *                            slices (gridDim.y) -> nsplit x N fp32.
 *   nt_colsum_final<W>       column sum of nparts fp32 rows -> dw; W says where
 *                            the rows start in ws (0: at ws, 1/2: after an
 *                            M x N bf16/fp32 partial).
 *
 * Column sums may be launched with programmatic dependent launch (sm_90):
 * they wait for the previous kernel with griddepcontrol.wait before reading
 * its output, and the kernels before them allow the early launch.
 *
 * Math, per row i with r = 1/sqrt(mean(x^2) + eps) and c = mean(w*dy*x):
 *   dx = r*w*dy - x*c*r^3,    dw += dy*x*r.
 *
 * Determinism: no float atomics; every reduction has a fixed order.  The
 * row reduction is a xor butterfly in each warp (all lanes end with the same
 * bits), warp partials through shared memory, and a second butterfly that
 * every warp does on the same values.  The partial buffer alternates between
 * two halves from row to row, so one barrier per row suffices: a warp can only
 * write a half again after the next row's barrier, which every thread passes
 * only once it has read that half (the post's block_sum_f2 wrote smem[0]
 * with no barrier between the reads of the warp partials and that write).
 *
 * Napkin math: 3 * M * N * 2 bytes (read x, dy; write dx); M = 16384,
 * N = 4096: 403 MB, 96 us at 4.2 TB/s. */
#ifndef NT_RMSNORM_BWD_CUH
#define NT_RMSNORM_BWD_CUH

#include "common.cuh"

/* The per-row math on C chunks: reduce, write dx, and add dy*x*r into acc
 * (persistent) or store it into part (naive).  Chunk j of x, dy and w is
 * xs(j), gs(j), wsrc(j) (nt_reg_src or nt_smem_src); shared memory slots are
 * read again in the second pass rather than held in registers across the
 * block reduction (that keeps large rows from spilling).  Inactive chunks
 * (past the end of the row) are skipped. */
template <int C, class XS, class GS, class WS>
__device__ __forceinline__ void nt_row(XS xs, GS gs, WS wsrc, const bool *act,
                                       float (*acc)[8], float *part, nt_u4 *dxrow, int stride,
                                       float invN, float eps, unsigned red) {
    float sxy = 0.f, sxx = 0.f;
#pragma unroll
    for (int j = 0; j < C; j++) {
        if (!act[j]) continue;
        float x[8], g[8], w[8];
        nt_unpack8(xs(j), x);
        nt_unpack8(gs(j), g);
        nt_unpack8(wsrc(j), w);
#pragma unroll
        for (int k = 0; k < 8; k++) {
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
        float x[8], g[8], w[8], o[8];
        nt_unpack8(xs(j), x);
        nt_unpack8(gs(j), g);
        nt_unpack8(wsrc(j), w);
#pragma unroll
        for (int k = 0; k < 8; k++) {
            o[k] = r * w[k] * g[k] - x[k] * c;
            if (acc) acc[j][k] += g[k] * x[k] * r;
            if (part) part[k + 8 * j] = g[k] * x[k] * r;
        }
        nt_st16(dxrow + j * stride, nt_pack8(o));
    }
}

/* ---- persistent chain ------------------------------------------------- */

template <int B, int C, int S, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_persist(nt_args a) {
    /* S > 1: [S][x, dy][C*B] row stages, then w [C*B]; S == 1: unused */
    extern __shared__ nt_u4 nt_stage[];
    /* K (blocks per SM, 0 = as many as fit) only bounds the registers */
    __shared__ float red_buf[2][64];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const int G = gridDim.x, bid = blockIdx.x;
    const int N = a.N, nvec = N >> 3;
    const long long M = a.M;
    const float invN = 1.0f / (float)N;
    const nt_u4 *x = (const nt_u4 *)a.t[0], *dy = (const nt_u4 *)a.t[2];
    const nt_u4 *wp = (const nt_u4 *)a.t[1];
    nt_u4 *dx = (nt_u4 *)a.t[3];

    nt_launch_next();
    bool act[C];
    float acc[C][8];
#pragma unroll
    for (int j = 0; j < C; j++) {
        act[j] = j * B + tid < nvec;
#pragma unroll
        for (int k = 0; k < 8; k++) acc[j][k] = 0.f;
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
            if (act[j]) nt_sts16(sw + 16u * (unsigned)(j * B), wp[j * B + tid]);
#pragma unroll
        for (int s = 0; s < S - 1; s++) {
            if (s < mine) {
                const long long off = (bid + (long long)s * G) * nvec + tid;
                const unsigned st = base + 16u * (unsigned)(2 * C * B * s);
#pragma unroll
                for (int j = 0; j < C; j++)
                    if (act[j]) {
                        nt_cp16(st + 16u * (unsigned)(j * B), x + off + j * B);
                        nt_cp16(st + 16u * (unsigned)(C * B + j * B), dy + off + j * B);
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
                        nt_cp16(st + 16u * (unsigned)(j * B), x + off + j * B);
                        nt_cp16(st + 16u * (unsigned)(C * B + j * B), dy + off + j * B);
                    }
            }
            nt_cp_commit();
            nt_cp_wait<S - 1>();                       /* row t has landed */
            const unsigned st = base + 16u * (unsigned)(2 * C * B * (int)(t % S));
            const long long row = bid + t * G;
            nt_row<C>(nt_smem_src<B>{st}, nt_smem_src<B>{st + 16u * (unsigned)(C * B)},
                      nt_smem_src<B>{sw}, act, acc, (float *)0, dx + row * nvec + tid, B, invN,
                      a.eps, red + 256u * (unsigned)(t & 1));
        }
        nt_cp_wait<0>();
    } else {
        nt_u4 wv[C], xv[C], gv[C];
        const nt_u4 z = {0u, 0u, 0u, 0u};
#pragma unroll
        for (int j = 0; j < C; j++) wv[j] = act[j] ? wp[j * B + tid] : z;
#pragma unroll 1
        for (long long t = 0; t < mine; t++) {
            const long long off = (bid + t * G) * nvec + tid;
#pragma unroll
            for (int j = 0; j < C; j++) {
                xv[j] = act[j] ? nt_ld16(x + off + j * B) : z;
                gv[j] = act[j] ? nt_ld16(dy + off + j * B) : z;
            }
            nt_row<C>(nt_reg_src{xv}, nt_reg_src{gv}, nt_reg_src{wv}, act, acc, (float *)0,
                      dx + off, B, invN, a.eps, red + 256u * (unsigned)(t & 1));
        }
    }
    /* this block's dw partial row */
    nt_f4 *out = (nt_f4 *)((float *)a.ws + (long long)bid * N);
#pragma unroll
    for (int j = 0; j < C; j++)
        if (act[j]) {
            const int v = j * B + tid;
            nt_f4 lo = {acc[j][0], acc[j][1], acc[j][2], acc[j][3]};
            nt_f4 hi = {acc[j][4], acc[j][5], acc[j][6], acc[j][7]};
            out[2 * v] = lo;
            out[2 * v + 1] = hi;
        }
}

/* ---- naive chain ------------------------------------------------------ */

template <int C, int F32>
__global__ void __launch_bounds__(1024) nt_naive_row(nt_args a) {
    __shared__ float red_buf[64];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x, B = blockDim.x;
    const int N = a.N, nvec = N >> 3;
    const long long row = blockIdx.x;
    const float invN = 1.0f / (float)N;
    const nt_u4 *x = (const nt_u4 *)a.t[0] + row * nvec, *dy = (const nt_u4 *)a.t[2] + row * nvec;
    const nt_u4 *wp = (const nt_u4 *)a.t[1];
    bool act[C];
    nt_u4 wv[C], xv[C], gv[C];
    float part[8 * C];
#pragma unroll
    for (int j = 0; j < C; j++) {
        const int v = j * B + tid;
        act[j] = v < nvec;
        nt_u4 z = {0u, 0u, 0u, 0u};
        wv[j] = act[j] ? wp[v] : z;
        xv[j] = act[j] ? nt_ld16(x + v) : z;
        gv[j] = act[j] ? nt_ld16(dy + v) : z;
    }
    nt_launch_next();
    nt_row<C>(nt_reg_src{xv}, nt_reg_src{gv}, nt_reg_src{wv}, act, (float (*)[8])0, part,
              (nt_u4 *)a.t[3] + row * nvec + tid, B, invN, a.eps, red);
#pragma unroll
    for (int j = 0; j < C; j++) {
        if (!act[j]) continue;
        const long long v = row * nvec + j * B + tid;
        if (F32) {
            nt_f4 lo = {part[8 * j], part[8 * j + 1], part[8 * j + 2], part[8 * j + 3]};
            nt_f4 hi = {part[8 * j + 4], part[8 * j + 5], part[8 * j + 6], part[8 * j + 7]};
            ((nt_f4 *)a.ws)[2 * v] = lo;
            ((nt_f4 *)a.ws)[2 * v + 1] = hi;
        } else {
            ((nt_u4 *)a.ws)[v] = nt_pack8(part + 8 * j);
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

template <int W>
__global__ void __launch_bounds__(256) nt_colsum_final(nt_args a) {
    const long long c4 = (long long)blockIdx.x * NT_FINAL_CG + (threadIdx.x % NT_FINAL_CG);
    const bool ok = c4 < (a.N >> 2);
    const char *in = (const char *)a.ws + (W ? nt_part_bytes(a.M, a.N, W == 2 ? 4 : 2) : 0);
    nt_wait_prev();
    nt_f4 t = nt_colsum4<1, NT_FINAL_CG>(in, a.N, 0, a.nparts, ok, c4);
    if (!ok || threadIdx.x >= NT_FINAL_CG) return;
    if (0) {
        nt_u2 v = {nt_pack(t.x, t.y), nt_pack(t.z, t.w)};
        ((nt_u2 *)a.t[4])[c4] = v;
    } else {
        ((nt_f4 *)a.t[4])[c4] = t;
    }
}

#endif
