/* rmsnorm_bwd/fused.cuh -- the single-launch RMSNorm backward: persistent
 * rows, then a grid barrier, then the column sum of dw in the same kernel.
 * See row.cuh for the math and the dtypes.
 *
 *   nt_bwd_fused<TX, TW, TDW, B, C, S, K>
 *       grid G = K blocks per SM (0: as many as fit), at most M; launched
 *       cooperatively (every block resident at once: the barrier needs it).
 *       Rows, as the persistent chain walks them: block b takes rows b,
 *       b+G, b+2G, ...; thread t owns chunks j*B+t (j < C) of each row and
 *       keeps its dw partial in registers; the next S-1 rows (S >= 2) are
 *       copied into shared memory with cp.async while the current one is
 *       computed, each thread copying and reading only its own slots.
 *       Then each block writes its fp32 partial row to ws (row b at
 *       ws + 4 b N) and arrives at the grid barrier.
 *       Column sum: block b takes the W = ceil(N / 4G) float4 columns from
 *       b W on.  Each of its columns gets RL lanes (a power of two, RL W <=
 *       B where W <= B; else passes of B columns, one lane each); lane l
 *       adds rows l, l + RL, ... in order, and the lanes are added by a
 *       fixed tree in shared memory (the pipeline's slots, free by then);
 *       lane 0 writes dw.  Every order is fixed by (G, B, N): the result is
 *       the same bits from run to run on one device.
 *
 * The barrier uses the word the driver keeps for a cooperative launch (as
 * cooperative groups' grid sync does), so it needs no memory of the
 * caller's and no clearing before the launch.  Why one launch: at small M
 * the chain's second kernel (nt_colsum_final) costs a dependency wait and
 * a tail of its own, a large share of a few microseconds.
 *
 * Workspace: G * N * 4 bytes. */
#ifndef NT_RMSNORM_BWD_FUSED_CUH
#define NT_RMSNORM_BWD_FUSED_CUH

#include "rmsnorm_bwd/row.cuh"

/* The grid barrier word the driver keeps for a cooperative launch (the
 * one cooperative groups' grid sync uses): the launch's grid workspace is
 * at the address %envreg1:%envreg2 (high:low words), its barrier word 4
 * bytes in.  Between barriers its low 31 bits are 0; a barrier adds 2^31
 * in all, so bit 31 flips exactly when the last block arrives. */
__device__ __forceinline__ unsigned *nt_fused_barrier_word() {
    unsigned hi, lo;
    asm("mov.u32 %0, %%envreg1;" : "=r"(hi));
    asm("mov.u32 %0, %%envreg2;" : "=r"(lo));
    return (unsigned *)((((unsigned long long)hi << 32) | lo) + 4);
}

/* Every block of the grid arrives; none leaves before all have arrived,
 * and the global writes of each before it are visible to all after it.
 * Block 0 adds 2^31 - (G - 1), the others 1 (release, by one thread after
 * the block's barrier); each then waits (acquire) until bit 31 differs from
 * what it saw when it arrived. */
__device__ __forceinline__ void nt_fused_grid_sync() {
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned *bar = nt_fused_barrier_word();
        const unsigned add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1) : 1u;
        unsigned old, now;
        asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;" : "=r"(old) : "l"(bar), "r"(add)
                     : "memory");
        do {
            asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(bar) : "memory");
        } while (((old ^ now) & 0x80000000u) == 0);
    }
    __syncthreads();
}

/* A float4 of another block's partial row, from L2 (ld.global.cg). */
__device__ __forceinline__ nt_f4 nt_fused_ld4(const nt_f4 *p) {
    nt_f4 v;
    asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void nt_fused_add(nt_f4 &s, const nt_f4 &u) {
    s.x += u.x; s.y += u.y; s.z += u.z; s.w += u.w;
}
__device__ __forceinline__ void nt_fused_sts(unsigned a, const nt_f4 &v) {
    nt_u4 u = {__float_as_uint(v.x), __float_as_uint(v.y), __float_as_uint(v.z),
               __float_as_uint(v.w)};
    nt_sts16(a, u);
}
__device__ __forceinline__ nt_f4 nt_fused_lds(unsigned a) {
    nt_u4 u = nt_lds16(a);
    nt_f4 v = {__uint_as_float(u.x), __uint_as_float(u.y), __uint_as_float(u.z),
               __uint_as_float(u.w)};
    return v;
}

/* dw from the G partial rows at part (file comment, "Column sum").  smem:
 * shared address of at least 16 B bytes no longer in use. */
template <class TDW, int B>
__device__ __forceinline__ void nt_fused_colsum(const float *part, int N, void *dw, unsigned smem) {
    const int tid = threadIdx.x, G = gridDim.x;
    const int N4 = N >> 2, W = (N4 + G - 1) / G, c0 = blockIdx.x * W;
    const int CW = W < B ? W : B;            /* columns per pass */
    int RL = 1;                              /* lanes per column, a power of two */
    while (2 * RL * CW <= B) RL *= 2;
    const int c = tid % CW, lane = tid / CW;
    const nt_f4 *p4 = (const nt_f4 *)part;
    for (int pass = 0; pass < W; pass += CW) {
        const int col = c0 + pass + c;
        const bool ok = lane < RL && pass + c < W && col < N4;
        nt_f4 s = {0.f, 0.f, 0.f, 0.f};
        if (ok) {
#pragma unroll 4
            for (int r = lane; r < G; r += RL) nt_fused_add(s, nt_fused_ld4(p4 + (long long)r * N4 + col));
        }
        const unsigned slot = smem + 16u * (unsigned)tid;  /* = lane * CW + c */
        if (lane < RL) nt_fused_sts(slot, s);
        for (int h = RL / 2; h > 0; h >>= 1) {
            __syncthreads();
            if (lane < h) {
                nt_f4 u = nt_fused_lds(slot + 16u * (unsigned)(h * CW));
                nt_fused_add(s, u);
                nt_fused_sts(slot, s);
            }
        }
        if (lane == 0 && ok) {
            const float f[4] = {s.x, s.y, s.z, s.w};
            nt_vec<TDW, 4> v;                /* 4 columns: 8 or 16 bytes */
            v.put(f);
            nt_bwd_put<nt_vec<TDW, 4>::W>((char *)dw + sizeof(TDW) * 4 * col, v.w);
        }
        __syncthreads();                     /* the slots are written again */
    }
}

template <class TX, class TW, class TDW, int B, int C, int S, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_bwd_fused(nt_args a) {
    static_assert(S >= 2 && S <= 4, "the fused kernel pipelines 2 to 4 rows");
    static_assert(B % 32 == 0, "whole warps");
    nt_wait_prev();
    constexpr int E = nt_bwd_chunk<TX>::E;
    typedef nt_vec<TX, E> VX;
    typedef nt_vec<TW, E> VW;
    constexpr int WP = VW::W / 4;            /* 16-byte pieces of a w chunk */
    /* [S][x, dy][C*B] row stages, then w [WP][C*B], in 16-byte slots */
    extern __shared__ nt_u4 nt_stage[];
    __shared__ float red_buf[2][64];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x, G = gridDim.x, bid = blockIdx.x;
    const int N = a.N, nvec = N / E;
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
    const long long rows = (a.M - bid + G - 1) / G;   /* G <= M: at least one */
    const unsigned base = nt_saddr(nt_stage) + 16u * (unsigned)tid;
    const unsigned wslot = base + 16u * (unsigned)(2 * C * B * S);
    constexpr unsigned STAGE = 16u * 2 * C * B;        /* bytes of one row stage */

#pragma unroll
    for (int j = 0; j < C; j++)
        if (act[j]) {
            VW v;
            nt_ldg<VW::W, false>(wp + WP * (j * B + tid), v.w);
            nt_bwd_sts<VW::W, 16 * C * B>(wslot + 16u * (unsigned)(j * B), v.w);
        }
    /* row t of this block into stage t mod S (nothing past the last row) */
    auto fetch = [&](long long t) {
        if (t < rows) {
            const long long off = (bid + t * G) * nvec + tid;
            const unsigned st = base + STAGE * (unsigned)(t % S);
#pragma unroll
            for (int j = 0; j < C; j++)
                if (act[j]) {
                    nt_cp_async<VX::W>(st + 16u * (unsigned)(j * B), x + off + j * B);
                    nt_cp_async<VX::W>(st + 16u * (unsigned)(C * B + j * B), dy + off + j * B);
                }
        }
        nt_cp_commit();
    };
#pragma unroll
    for (int t = 0; t < S - 1; t++) fetch(t);
#pragma unroll 1
    for (long long t = 0; t < rows; t++) {
        fetch(t + S - 1);
        nt_cp_wait<S - 1>();                              /* row t has landed */
        const unsigned st = base + STAGE * (unsigned)(t % S);
        const long long row = bid + t * G;
        nt_bwd_row<TX, TW, C>(nt_bwd_smem<VX, 16 * B, 0>{st},
                              nt_bwd_smem<VX, 16 * B, 0>{st + 16u * (unsigned)(C * B)},
                              nt_bwd_smem<VW, 16 * B, 16 * C * B>{wslot}, act, acc, (float *)0,
                              dx + row * nvec + tid, B, invN, a.eps, red + 256u * (unsigned)(t & 1));
    }
    nt_cp_wait<0>();

    float *part = (float *)a.ws;
    nt_f4 *out = (nt_f4 *)(part + (long long)bid * N);
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
    nt_fused_grid_sync();
    /* the pipeline's slots are free: every thread has waited for its own
     * copies, and no thread reads a slot after the barrier */
    nt_fused_colsum<TDW, B>(part, N, a.t[NT_BWD_DW], nt_saddr(nt_stage));
}

#endif
