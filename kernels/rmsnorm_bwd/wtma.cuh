/* rmsnorm_bwd/wtma.cuh -- the warp family's short rows (N = 64 .. 1024, T
 * threads a row, a step of B / T rows, a persistent grid) with each step's
 * rows brought into a shared-memory ring by bulk copies (cp.async.bulk,
 * sm_90 and newer) that a producer warp issues S steps ahead.
 *
 *   nt_bwd_wtma<TX, TW, TDW, T, B, C, S, K>, then nt_colsum_final<TDW, 0>
 *
 * Why: wstage.cuh copies the next steps itself, every thread 2 C chunks a
 * step through its own cp.async groups, so what a block has in flight is
 * bounded by what its threads issue between steps.  A step's G = B / T
 * rows are consecutive in memory: one bulk copy of x and one of dy bring
 * all of them, and a warp that does nothing else keeps S steps in flight
 * whatever the B consumer threads are doing.
 *
 * The block: B consumer threads (G row groups of T lanes, as wstage) and
 * one producer warp after them (threads B .. B + 31; its lane 0 copies).
 * The ring: S stages of [x, dy] planes of 16 C B bytes; step t of the
 * block (rows (b + t grid) G ..) in stage t mod S, its rows packed as in
 * memory (row g of the step at g * 16 nvec bytes of the plane, so lane l
 * of group g reads chunk j * T + l at g * 16 nvec + 16 (j T + l)).  Two
 * mbarriers a stage: `full` (one arrival, the producer's, with the step's
 * bytes; the copies complete it) and `empty` (B arrivals, one per consumer
 * thread once it has read the step for the last time).  The producer
 * waits for a stage's `empty` before it fills the stage again, so no copy
 * overwrites a step still being read; consumers wait for `full`.  w, as in
 * wstage, once per block after the ring.  After the walk every step has
 * been waited for (no copy is in flight), and the ring holds the
 * end-of-block dw sum exactly as in wstage: bitwise identical from run to
 * run, no atomics.
 *
 * Math per row, as row.cuh: r = 1/sqrt(mean(x^2) + eps), c = mean(w dy x),
 * dx = r w dy - x c r^3, dw += dy x r, all in fp32. */
#ifndef NT_RMSNORM_BWD_WTMA_CUH
#define NT_RMSNORM_BWD_WTMA_CUH

#include "bulk.cuh"
#include "rmsnorm_bwd/row.cuh"
#include "rmsnorm_bwd/colsum.cuh"

template <class TX, class TW, class TDW, int T, int B, int C, int S, int K>
__global__ void __launch_bounds__(B + 32, (K > 0 ? K : 1)) nt_bwd_wtma(nt_args a) {
    nt_wait_prev(); /* before any global access: launched early too (families) */
#if NT_HAS_BULK
    constexpr int E = nt_bwd_chunk<TX>::E;
    constexpr int G = B / T;            /* row groups of the block: rows of a step */
    constexpr int NC = T * C * E;       /* columns one group covers */
    static_assert(T >= 1 && T <= 32 && (T & (T - 1)) == 0 && B % 32 == 0, "T | 32, B % 32 == 0");
    static_assert(S >= 2, "a ring of at least two stages");
    static_assert(B / 32 * NC * 4 <= S * 2 * C * B * 16, "the dw sum fits in the ring");
    typedef nt_vec<TX, E> VX;           /* one 16-byte chunk */
    typedef nt_vec<TW, E> VW;           /* 16 or 32 bytes */
    constexpr int WP = VW::W / 4;       /* 16-byte pieces of a w chunk */
    constexpr unsigned PLANE = 16u * C * B;      /* bytes of x (or dy) of one stage */
    extern __shared__ nt_u4 nt_bwd_wring[];
    __shared__ __align__(8) unsigned long long bar_buf[2 * S];   /* full[S], empty[S] */
    const int tid = threadIdx.x, l = tid % T, g = tid / T;
    const int N = a.N, nvec = N / E;
    const long long M = a.M;
    const float invN = 1.0f / (float)N;
    const unsigned rowb = 16u * (unsigned)nvec;  /* bytes of a row of x or dy */
    const char *x = (const char *)a.t[NT_BWD_X], *dy = (const char *)a.t[NT_BWD_DY];
    const nt_u4 *wp = (const nt_u4 *)a.t[NT_BWD_W];
    nt_u4 *dx = (nt_u4 *)a.t[NT_BWD_DX];
    const unsigned ring = nt_saddr(nt_bwd_wring);
    const unsigned full = nt_saddr(bar_buf), empty = full + 8u * S;

    nt_launch_next();
    const long long steps = (M + G - 1) / G;
    const long long bid = blockIdx.x, grid = gridDim.x;
    const long long mine = (steps - bid + grid - 1) / grid;   /* >= 1: grid <= steps */
    /* w, once per block, after the ring (as wstage) */
    const unsigned wbase = ring + 2u * PLANE * S;
    bool cov[C];
    float acc[C][E];
#pragma unroll
    for (int j = 0; j < C; j++) {
        cov[j] = tid < B && j * T + l < nvec;
        if (cov[j] && g == 0) {
            VW v;
            nt_ldg<VW::W, false>(wp + WP * (j * T + l), v.w);
            nt_bwd_sts<VW::W, 16 * T * C>(wbase + 16u * (unsigned)(j * T + l), v.w);
        }
#pragma unroll
        for (int k = 0; k < E; k++) acc[j][k] = 0.f;
    }
    if (tid == B) {
#pragma unroll
        for (int s = 0; s < S; s++) {
            nt_mbar_init(full + 8u * (unsigned)s, 1);
            nt_mbar_init(empty + 8u * (unsigned)s, B);
        }
        nt_mbar_init_fence();
    }
    __syncthreads();                    /* w is in place, the mbarriers initialised */
    if (tid >= B) {
        /* the producer: step t into stage t % S once its step t - S is read */
        if (tid == B)
#pragma unroll 1
            for (long long t = 0; t < mine; t++) {
                const unsigned s = (unsigned)(t % S);
                if (t >= S) nt_mbar_wait(empty + 8u * s, (unsigned)(t / S + 1) & 1u);
                const long long row0 = (bid + t * grid) * G;
                const long long rows = M - row0 < G ? M - row0 : G;
                const unsigned bytes = (unsigned)rows * rowb, bar = full + 8u * s;
                const unsigned st = ring + 2u * PLANE * s;
                nt_mbar_expect(bar, 2u * bytes);
                nt_bulk_copy(st, x + row0 * (long long)rowb, bytes, bar);
                nt_bulk_copy(st + PLANE, dy + row0 * (long long)rowb, bytes, bar);
            }
    } else {
        /* this thread's chunk 0 of its row, in stage 0 */
        const unsigned base = ring + (unsigned)g * rowb + 16u * (unsigned)l;
#pragma unroll 1
        for (long long t = 0; t < mine; t++) {
            const unsigned s = (unsigned)(t % S);
            nt_mbar_wait(full + 8u * s, (unsigned)(t / S) & 1u);
            const long long row = (bid + t * grid) * G + g;
            const bool ok = row < M;
            const unsigned st = base + 2u * PLANE * s;
            bool act[C];
            float sxy = 0.f, sxx = 0.f;
            /* two passes over the ring: the sums, then dx and dw */
#pragma unroll
            for (int j = 0; j < C; j++) {
                act[j] = ok && cov[j];
                if (!act[j]) continue;
                VX xv, gv;
                nt_bwd_lds<VX::W, 16>(st + 16u * (unsigned)(j * T), xv.w);
                nt_bwd_lds<VX::W, 16>(st + PLANE + 16u * (unsigned)(j * T), gv.w);
                VW wv;
                nt_bwd_lds<VW::W, 16 * T * C>(wbase + 16u * (unsigned)(j * T + l), wv.w);
                float xf[E], gf[E], wf[E];
                xv.get(xf);
                gv.get(gf);
                wv.get(wf);
#pragma unroll
                for (int k = 0; k < E; k++) {
                    sxy += wf[k] * gf[k] * xf[k];
                    sxx += xf[k] * xf[k];
                }
            }
#pragma unroll
            for (int o = T / 2; o > 0; o >>= 1) {
                sxy += __shfl_xor_sync(0xffffffffu, sxy, o);
                sxx += __shfl_xor_sync(0xffffffffu, sxx, o);
            }
            const float rs = rsqrtf(sxx * invN + a.eps);
            const float c = sxy * invN * rs * rs * rs;
#pragma unroll
            for (int j = 0; j < C; j++) {
                if (!act[j]) continue;
                VX xv, gv;
                nt_bwd_lds<VX::W, 16>(st + 16u * (unsigned)(j * T), xv.w);
                nt_bwd_lds<VX::W, 16>(st + PLANE + 16u * (unsigned)(j * T), gv.w);
                VW wv;
                nt_bwd_lds<VW::W, 16 * T * C>(wbase + 16u * (unsigned)(j * T + l), wv.w);
                float xf[E], gf[E], wf[E], o[E];
                xv.get(xf);
                gv.get(gf);
                wv.get(wf);
#pragma unroll
                for (int k = 0; k < E; k++) {
                    o[k] = rs * wf[k] * gf[k] - xf[k] * c;
                    acc[j][k] += gf[k] * xf[k] * rs;
                }
                VX ov;
                ov.put(o);
                nt_stg<VX::W, true>(dx + row * nvec + j * T + l, ov.w);
            }
            nt_mbar_arrive(empty + 8u * s);   /* this thread is done with the step */
        }
    }
    __syncthreads();                    /* every step was waited for: the ring is free */
    if (tid < B) {
        /* the groups of this warp: lanes l, l + T, ... hold the same columns */
#pragma unroll
        for (int o = T; o < 32; o <<= 1)
#pragma unroll
            for (int j = 0; j < C; j++)
#pragma unroll
                for (int k = 0; k < E; k++)
                    acc[j][k] += __shfl_xor_sync(0xffffffffu, acc[j][k], o);
        float *wsum = (float *)nt_bwd_wring;   /* [B / 32][NC] */
        const int lane = tid & 31, warp = tid >> 5;
        if (lane < T)
#pragma unroll
            for (int j = 0; j < C; j++)
                if (cov[j])
#pragma unroll
                    for (int k = 0; k < E; k++) wsum[warp * NC + (j * T + l) * E + k] = acc[j][k];
    }
    __syncthreads();
    if (tid < B) {
        const float *wsum = (const float *)nt_bwd_wring;
        float *out = (float *)a.ws + bid * N;
        for (int col = tid; col < N; col += B) {
            float sum = 0.f;
#pragma unroll 4
            for (int w = 0; w < B / 32; w++) sum += wsum[w * NC + col];
            out[col] = sum;
        }
    }
#else
    __trap();
#endif
}

#endif
