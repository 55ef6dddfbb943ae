/* rmsnorm_bwd/wstage.cuh -- the staged warp family of the RMSNorm
 * backward: short rows (N = 64 .. 1024) as warp.cuh walks them, T threads
 * per row, with the next S - 1 steps' rows copied into shared memory by
 * cp.async while the current step is computed.
 *
 *   nt_bwd_wstage<TX, TW, TDW, T, B, C, S, K>, then nt_colsum_final<TDW, 0>
 *
 * Why: warp.cuh holds a thread's chunks of x and dy, its w and its dw
 * partials in registers and loads a step's rows only when it gets to
 * them.  At N = 512 .. 768 that is 96 to 123 registers a thread, so an SM
 * holds 16 warps, and each waits for its own loads at every step: the
 * loads of the next step are not issued before the current one is
 * reduced and written.  Here the loads of the next S - 1 steps are in
 * flight while a step is computed, and x, dy and w pass through shared
 * memory rather than registers (each read twice, once for the row's sums
 * and once for dx and dw): a thread keeps only its dw partials.
 *
 * The walk is warp.cuh's with R = 1: a block of B threads is G = B / T
 * row groups, a step is G rows (group g takes row g of the step), the grid
 * is persistent (K blocks per SM, at most one block per step) and block b
 * takes steps b, b + grid, ...  Every lane of a block walks the same steps,
 * so every lane reaches each butterfly; lanes of rows past M copy nothing
 * and add zeros.
 *
 * The ring: S stages of [x, dy][C][B] 16-byte slots; thread t copies chunk
 * j of its row of x into slot (stage, 0, j, t) and reads it back itself,
 * so the ring needs no block barrier, only the thread's own cp.async
 * groups (one per step, committed even when empty so that the count of
 * pending groups stays fixed).  A warp's slots are 512 consecutive bytes:
 * no bank conflict.  After the walk the ring is free (each thread's groups
 * are done, then one barrier) and holds the end-of-block dw sum, as
 * warp.cuh's: the groups of a warp summed by a xor butterfly over lanes T,
 * 2T, .. 16, lane l < T of each warp storing its columns, then thread t
 * summing column t, t + B, ... over the warps in order into the block's
 * fp32 partial row ws[b][N]; nt_colsum_final adds the rows in a fixed
 * order.  No atomics: bitwise identical from run to run.
 *
 * Math per row, as row.cuh: r = 1/sqrt(mean(x^2) + eps), c = mean(w dy x),
 * dx = r w dy - x c r^3, dw += dy x r, all in fp32.
 *
 * Shared memory: the ring, S * 2 * C * B * 16 bytes (at least the dw
 * sum's B / 32 * T * C * E * 4), then w, T * C chunks of E * sizeof(TW)
 * bytes. */
#ifndef NT_RMSNORM_BWD_WSTAGE_CUH
#define NT_RMSNORM_BWD_WSTAGE_CUH

#include "rmsnorm_bwd/row.cuh"
#include "rmsnorm_bwd/colsum.cuh"

template <class TX, class TW, class TDW, int T, int B, int C, int S, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_bwd_wstage(nt_args a) {
    nt_wait_prev(); /* before any global access: launched early too (families) */
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
    extern __shared__ nt_u4 nt_bwd_ring[];
    const int tid = threadIdx.x, l = tid % T, g = tid / T;
    const int N = a.N, nvec = N / E;
    const long long M = a.M;
    const float invN = 1.0f / (float)N;
    const nt_u4 *x = (const nt_u4 *)a.t[NT_BWD_X], *dy = (const nt_u4 *)a.t[NT_BWD_DY];
    const nt_u4 *wp = (const nt_u4 *)a.t[NT_BWD_W];
    nt_u4 *dx = (nt_u4 *)a.t[NT_BWD_DX];
    /* this thread's slot of chunk 0 of x in stage 0; chunk j of x of stage
     * s at + 2 PLANE s + 16 B j, of dy at + PLANE more */
    const unsigned base = nt_saddr(nt_bwd_ring) + 16u * (unsigned)tid;

    nt_launch_next();
    /* w, once per block, after the ring: piece q of chunk v (v = j * T + l,
     * the chunks lane l of every group holds) at wbase + 16 (q T C + v);
     * the groups of a warp read the same slot (a broadcast) */
    const unsigned wbase = nt_saddr(nt_bwd_ring) + 2u * PLANE * S;
    bool cov[C];
    float acc[C][E];
#pragma unroll
    for (int j = 0; j < C; j++) {
        cov[j] = j * T + l < nvec;
        if (cov[j] && g == 0) {
            VW v;
            nt_ldg<VW::W, false>(wp + WP * (j * T + l), v.w);
            nt_bwd_sts<VW::W, 16 * T * C>(wbase + 16u * (unsigned)(j * T + l), v.w);
        }
#pragma unroll
        for (int k = 0; k < E; k++) acc[j][k] = 0.f;
    }
    __syncthreads();                    /* w is in place */
    const long long steps = (M + G - 1) / G;
    const long long bid = blockIdx.x, grid = gridDim.x;
    const long long mine = (steps - bid + grid - 1) / grid;   /* >= 1: grid <= steps */
    /* the copies of this block's t-th step into stage t % S */
    auto fetch = [&](long long t) {
        const long long row = (bid + t * grid) * G + g;
        if (row >= M) return;
        const unsigned st = base + 2u * PLANE * (unsigned)(t % S);
#pragma unroll
        for (int j = 0; j < C; j++)
            if (cov[j]) {
                const long long v = row * nvec + j * T + l;
                nt_cp16(st + 16u * (unsigned)(j * B), x + v);
                nt_cp16(st + PLANE + 16u * (unsigned)(j * B), dy + v);
            }
    };
#pragma unroll
    for (int s = 0; s < S - 1; s++) {
        if (s < mine) fetch(s);
        nt_cp_commit();
    }
#pragma unroll 1
    for (long long t = 0; t < mine; t++) {
        if (t + S - 1 < mine) fetch(t + S - 1);
        nt_cp_commit();
        nt_cp_wait<S - 1>();            /* step t's copies (this thread's) have landed */
        const long long row = (bid + t * grid) * G + g;
        const bool ok = row < M;
        const unsigned st = base + 2u * PLANE * (unsigned)(t % S);
        bool act[C];
        float sxy = 0.f, sxx = 0.f;
        /* two passes over the ring: the sums, then dx and dw (x and dy read
         * again rather than held in registers across the butterfly) */
#pragma unroll
        for (int j = 0; j < C; j++) {
            act[j] = ok && cov[j];
            if (!act[j]) continue;
            VX xv, gv;
            nt_bwd_lds<VX::W, 16>(st + 16u * (unsigned)(j * B), xv.w);
            nt_bwd_lds<VX::W, 16>(st + PLANE + 16u * (unsigned)(j * B), gv.w);
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
            nt_bwd_lds<VX::W, 16>(st + 16u * (unsigned)(j * B), xv.w);
            nt_bwd_lds<VX::W, 16>(st + PLANE + 16u * (unsigned)(j * B), gv.w);
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
    }
    nt_cp_wait<0>();
    __syncthreads();                    /* every thread is done with the ring */
    /* the groups of this warp: lanes l, l + T, ... hold the same columns */
#pragma unroll
    for (int o = T; o < 32; o <<= 1)
#pragma unroll
        for (int j = 0; j < C; j++)
#pragma unroll
            for (int k = 0; k < E; k++) acc[j][k] += __shfl_xor_sync(0xffffffffu, acc[j][k], o);
    float *wsum = (float *)nt_bwd_ring;  /* [B / 32][NC] */
    const int lane = tid & 31, warp = tid >> 5;
    if (lane < T)
#pragma unroll
        for (int j = 0; j < C; j++)
            if (cov[j])
#pragma unroll
                for (int k = 0; k < E; k++) wsum[warp * NC + (j * T + l) * E + k] = acc[j][k];
    __syncthreads();
    float *out = (float *)a.ws + bid * N;
    for (int col = tid; col < N; col += B) {
        float sum = 0.f;
#pragma unroll 4
        for (int w = 0; w < B / 32; w++) sum += wsum[w * NC + col];
        out[col] = sum;
    }
}

#endif
