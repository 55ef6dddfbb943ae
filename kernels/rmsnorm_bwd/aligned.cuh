/* rmsnorm_bwd/aligned.cuh -- the persistent RMSNorm backward with each
 * block's rows accessed in a frame aligned to 32-byte sectors or more:
 * nt_bwd_aligned and nt_colsum_final<TDW, 0>.  See row.cuh for the math
 * and persistent.cuh, whose kernel this is but for the shift (persistent.cuh
 * stays as it is: its source hash keys the results stored for it).
 *
 * Why: persistent gives thread t chunk j*B+t of a row, so a warp's 32
 * chunks (512 bytes) start where the row starts.  In bf16 or f16 a row of
 * N = 8 (mod 16) elements is an odd number of 16-byte chunks, every other
 * row starts in the middle of a 32-byte sector, and each warp access to it
 * touches 17 sectors instead of 16.  On an H200 the best backward at
 * 16384 x 4104 ran 10% behind the pace of 4096 and 4112: the same DRAM
 * bytes, more sector requests (docs/guide.md, "Rows just past a tuned N").
 *
 * The shift: block b walks rows b, b+G, ..., which start G*nvec chunks
 * apart, so their offsets within a line of A chunks (A = 8, 128 bytes, or
 * the largest power of two that divides G*nvec) are all the same, h.
 * Thread t then owns chunks j*B + t - h of every row (j = 0 .. C-1): each
 * warp's accesses start on an A-chunk boundary, and a thread's columns stay
 * the same from row to row, so its w and its dw partial stay its own, and
 * nothing else of persistent changes (no barrier is added: each thread
 * still copies and reads only its own slots).  h is taken from x's address;
 * dy and dx share its alignment when their allocations do.  When the
 * shifted row does not fit the block's C*B slots (nvec + h > C*B) the block
 * uses h = 0, persistent's frame.  A first version that kept persistent's
 * frame and aligned only the cp.async copies, with a block barrier per row,
 * lost to persistent at every shape (docs/guide.md).
 *
 *   nt_bwd_aligned<TX, TW, TDW, B, C, S, K>   persistent's parameters,
 *                            grid, pipeline, dw partials and final column
 *                            sum. */
#ifndef NT_RMSNORM_BWD_ALIGNED_CUH
#define NT_RMSNORM_BWD_ALIGNED_CUH

#include "rmsnorm_bwd/row.cuh"
#include "rmsnorm_bwd/colsum.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define NT_BWD_ALIGNED_CLUSTER 1
#else
#define NT_BWD_ALIGNED_CLUSTER 0
#endif

/* The rows of block blockIdx.x and its dw partial, for nt_bwd_aligned (Q =
 * 1: the block's own partial row ws[b][N]) and nt_bwd_pcluster
 * (pcluster.cuh: the Q > 1 blocks of a thread block cluster add their
 * partials through distributed shared memory, and each writes 1/Q of the
 * cluster's row ws[b / Q][N]).  The kernels wait for the previous one
 * first. */
template <class TX, class TW, class TDW, int B, int C, int S, int Q>
__device__ __forceinline__ void nt_bwd_aligned_rows(const nt_args &a) {
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
    /* rows of this block: bid, bid+G, ...  (G <= M, so at least one) */
    const long long mine = (M - bid + G - 1) / G;
    /* the shift: this block's rows start h chunks into an A-chunk line,
     * the same h for each (they are G * nvec chunks apart) */
    int A = 8;
    while (A > 1 && ((long long)G * nvec) % A) A >>= 1;
    int h = (int)(((unsigned long long)(const void *)(x + (long long)bid * nvec) >> 4) & (A - 1));
    if (nvec + h > C * B) h = 0;        /* no room to shift: persistent's frame */
    const int me = tid - h;             /* chunk j of this thread: j * B + me */
    bool act[C];
    float acc[C][E];
#pragma unroll
    for (int j = 0; j < C; j++) {
        act[j] = j * B + me >= 0 && j * B + me < nvec;
#pragma unroll
        for (int k = 0; k < E; k++) acc[j][k] = 0.f;
    }

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
                nt_ldg<VW::W, false>(wp + WP * (j * B + me), v.w);
                nt_bwd_sts<VW::W, 16 * C * B>(sw + 16u * (unsigned)(j * B), v.w);
            }
#pragma unroll
        for (int s = 0; s < S - 1; s++) {
            if (s < mine) {
                const long long off = (bid + (long long)s * G) * nvec + me;
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
                const long long off = (bid + tn * G) * nvec + me;
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
                                  dx + row * nvec + me, B, invN, a.eps,
                                  red + 256u * (unsigned)(t & 1));
        }
        nt_cp_wait<0>();
    } else {
        VW wv[C];
        VX xv[C], gv[C];
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (act[j])
                nt_ldg<VW::W, false>(wp + WP * (j * B + me), wv[j].w);
            else
                wv[j].zero();
        }
#pragma unroll 1
        for (long long t = 0; t < mine; t++) {
            const long long off = (bid + t * G) * nvec + me;
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
    if constexpr (Q == 1) {
        /* this block's dw partial row: E floats per chunk */
        nt_f4 *out = (nt_f4 *)((float *)a.ws + (long long)bid * N);
#pragma unroll
        for (int j = 0; j < C; j++)
            if (act[j]) {
                const int v = j * B + me;
#pragma unroll
                for (int q = 0; q < E / 4; q++) {
                    nt_f4 f = {acc[j][4 * q], acc[j][4 * q + 1], acc[j][4 * q + 2],
                               acc[j][4 * q + 3]};
                    out[(E / 4) * v + q] = f;
                }
            }
    } else {
#if NT_BWD_ALIGNED_CLUSTER
        /* the partial row, column-indexed fp32, in this block's shared
         * memory after the pipeline's (the plan adds C*B*E floats) */
        const unsigned buf = nt_saddr(nt_stage) + (S > 1 ? 16u * C * B * (2 * S + WP) : 0u);
#pragma unroll
        for (int j = 0; j < C; j++)
            if (act[j]) {
                const unsigned at = buf + 16u * (unsigned)((E / 4) * (j * B + me));
#pragma unroll
                for (int q = 0; q < E / 4; q++) {
                    nt_u4 u = {__float_as_uint(acc[j][4 * q]), __float_as_uint(acc[j][4 * q + 1]),
                               __float_as_uint(acc[j][4 * q + 2]),
                               __float_as_uint(acc[j][4 * q + 3])};
                    nt_sts16(at + 16u * (unsigned)q, u);
                }
            }
        asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                     "barrier.cluster.wait.acquire.aligned;" ::: "memory");
        /* block `rank` adds its slice of the columns (4 floats a piece)
         * over the cluster's blocks in rank order: the same bits every run */
        unsigned rank;
        asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
        const int F = N / 4, lo = (int)rank * F / Q, hi = ((int)rank + 1) * F / Q;
        nt_f4 *out = (nt_f4 *)((float *)a.ws + (long long)(bid / Q) * N);
        for (int i = lo + tid; i < hi; i += B) {
            nt_f4 s4 = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
            for (int r = 0; r < Q; r++) {
                unsigned remote;
                float v0, v1, v2, v3;
                asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
                             : "=r"(remote) : "r"(buf + 16u * (unsigned)i), "r"(r));
                asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                             : "=f"(v0), "=f"(v1), "=f"(v2), "=f"(v3) : "r"(remote) : "memory");
                s4.x += v0;
                s4.y += v1;
                s4.z += v2;
                s4.w += v3;
            }
            out[i] = s4;
        }
        /* no block leaves while another may still read its partial */
        asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                     "barrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
        __trap();   /* no clusters on this arch: the family's check refuses it */
#endif
    }
}

template <class TX, class TW, class TDW, int B, int C, int S, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_bwd_aligned(nt_args a) {
    nt_wait_prev(); /* before any global access: launched early too (plan.c) */
    nt_bwd_aligned_rows<TX, TW, TDW, B, C, S, 1>(a);
}

#endif
