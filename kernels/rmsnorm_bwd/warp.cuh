/* rmsnorm_bwd/warp.cuh -- the warp family of the RMSNorm backward: short
 * rows (per-head norms, N = 64 .. 1024), T threads per row.
 *
 *   nt_bwd_warp<TX, TW, TDW, T, B, C, R, K>, then nt_colsum_final<TDW, 0>
 *
 * Why: a row of 128 bf16 elements is 16 chunks of 16 bytes.  The other
 * families give a row a whole block and reduce it through shared memory
 * behind a barrier, so at N = 128 most of a block's threads idle and the
 * barriers, not the bytes, set the pace (19% of the add's bandwidth at
 * 1048576 x 128).  Here a row belongs to T lanes of one warp (T = 1 .. 32,
 * a power of two) and is reduced by a butterfly in those lanes: no barrier
 * and no shared memory until the block's last row.
 *
 * The walk: a block of B threads is G = B / T row groups.  A step is G * R
 * rows: group g takes rows g, g + G, ..., g + (R - 1) G of the step, so at
 * each of the R rows the groups of a warp read neighbouring rows and a
 * warp's loads stay contiguous when T * C * E = N.  All R rows' x and dy
 * are loaded before any is used: 2 R C loads of 16 bytes in flight per
 * thread.  The grid is persistent (K blocks per SM, at most one block per
 * step: nt_launch.grid_rows); block b takes steps b, b + grid, ...  Every
 * lane of a warp walks the same steps (the bound is the block's), so every
 * lane reaches each butterfly; lanes of rows past M load nothing and add
 * zeros.
 *
 * Lane l of a group holds chunks j * T + l (j < C) of every row it takes,
 * the E weights of those chunks (loaded once), and its fp32 dw partial of
 * those columns, kept in registers across all its rows.
 *
 * dw, deterministic: at the end the groups of a warp, which hold the same
 * columns in lanes l, l + T, ..., are summed by a xor butterfly over
 * offsets T, 2T, .. 16 (every lane ends with the same bits); lane l < T of
 * each warp stores its sums in the warp's row of shared memory (B / 32
 * rows of T * C * E floats: dynamic shared memory); after one barrier
 * thread t sums column t, t + B, ... over the warps in order and writes
 * the block's fp32 partial row ws[b][N].  nt_colsum_final adds the grid's
 * partial rows in a fixed order.  No atomics: bitwise identical from run
 * to run.
 *
 * Math per row, as row.cuh: r = 1/sqrt(mean(x^2) + eps), c = mean(w dy x),
 * dx = r w dy - x c r^3, dw += dy x r, all in fp32. */
#ifndef NT_RMSNORM_BWD_WARP_CUH
#define NT_RMSNORM_BWD_WARP_CUH

#include "rmsnorm_bwd/row.cuh"
#include "rmsnorm_bwd/colsum.cuh"

/* a and b summed over the T lanes of a group (T a power of two, at most
 * 32): every lane of the group ends with the same bits. */
template <int T>
__device__ __forceinline__ void nt_bwd_lanes2(float &a, float &b) {
#pragma unroll
    for (int o = T / 2; o > 0; o >>= 1) {
        a += __shfl_xor_sync(0xffffffffu, a, o);
        b += __shfl_xor_sync(0xffffffffu, b, o);
    }
}

template <class TX, class TW, class TDW, int T, int B, int C, int R, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_bwd_warp(nt_args a) {
    nt_wait_prev(); /* before any global access: launched early too (families) */
    constexpr int E = nt_bwd_chunk<TX>::E;
    constexpr int G = B / T;            /* row groups of the block */
    constexpr int NC = T * C * E;       /* columns one group covers */
    static_assert(T >= 1 && T <= 32 && (T & (T - 1)) == 0 && B % 32 == 0, "T | 32, B % 32 == 0");
    typedef nt_vec<TX, E> VX;           /* one 16-byte chunk */
    typedef nt_vec<TW, E> VW;           /* 16 or 32 bytes */
    constexpr int WP = VW::W / 4;       /* 16-byte pieces of a w chunk */
    extern __shared__ float nt_bwd_wsum[]; /* [B / 32][NC], used at the end */
    const int tid = threadIdx.x, l = tid % T, g = tid / T;
    const int N = a.N, nvec = N / E;
    const long long M = a.M;
    const float invN = 1.0f / (float)N;
    const nt_u4 *x = (const nt_u4 *)a.t[NT_BWD_X], *dy = (const nt_u4 *)a.t[NT_BWD_DY];
    const nt_u4 *wp = (const nt_u4 *)a.t[NT_BWD_W];
    nt_u4 *dx = (nt_u4 *)a.t[NT_BWD_DX];

    nt_launch_next();
    bool cov[C];
    VW wv[C];
    float acc[C][E];
#pragma unroll
    for (int j = 0; j < C; j++) {
        cov[j] = j * T + l < nvec;
        if (cov[j])
            nt_ldg<VW::W, false>(wp + WP * (j * T + l), wv[j].w);
        else
            wv[j].zero();
#pragma unroll
        for (int k = 0; k < E; k++) acc[j][k] = 0.f;
    }
    const long long step = (long long)G * R;
    const long long steps = (M + step - 1) / step;
#pragma unroll 1
    for (long long s = blockIdx.x; s < steps; s += gridDim.x) {
        VX xv[R][C], gv[R][C];
        bool act[R][C];
#pragma unroll
        for (int r = 0; r < R; r++) {
            const long long row = s * step + (long long)r * G + g;
#pragma unroll
            for (int j = 0; j < C; j++) {
                act[r][j] = row < M && cov[j];
                if (act[r][j]) {
                    const long long v = row * nvec + j * T + l;
                    nt_ldg<VX::W, true>(x + v, xv[r][j].w);
                    nt_ldg<VX::W, true>(dy + v, gv[r][j].w);
                }
            }
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
            const long long row = s * step + (long long)r * G + g;
            float sxy = 0.f, sxx = 0.f;
#pragma unroll
            for (int j = 0; j < C; j++) {
                if (!act[r][j]) continue;
                float xf[E], gf[E], wf[E];
                xv[r][j].get(xf);
                gv[r][j].get(gf);
                wv[j].get(wf);
#pragma unroll
                for (int k = 0; k < E; k++) {
                    sxy += wf[k] * gf[k] * xf[k];
                    sxx += xf[k] * xf[k];
                }
            }
            nt_bwd_lanes2<T>(sxy, sxx);
            const float rs = rsqrtf(sxx * invN + a.eps);
            const float c = sxy * invN * rs * rs * rs;
#pragma unroll
            for (int j = 0; j < C; j++) {
                if (!act[r][j]) continue;
                float xf[E], gf[E], wf[E], o[E];
                xv[r][j].get(xf);
                gv[r][j].get(gf);
                wv[j].get(wf);
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
    }
    /* the groups of this warp: lanes l, l + T, ... hold the same columns */
#pragma unroll
    for (int o = T; o < 32; o <<= 1)
#pragma unroll
        for (int j = 0; j < C; j++)
#pragma unroll
            for (int k = 0; k < E; k++) acc[j][k] += __shfl_xor_sync(0xffffffffu, acc[j][k], o);
    const int lane = tid & 31, warp = tid >> 5;
    if (lane < T)
#pragma unroll
        for (int j = 0; j < C; j++)
            if (cov[j])
#pragma unroll
                for (int k = 0; k < E; k++) nt_bwd_wsum[warp * NC + (j * T + l) * E + k] = acc[j][k];
    __syncthreads();
    float *out = (float *)a.ws + (long long)blockIdx.x * N;
    for (int col = tid; col < N; col += B) {
        float sum = 0.f;
#pragma unroll 4
        for (int w = 0; w < B / 32; w++) sum += nt_bwd_wsum[w * NC + col];
        out[col] = sum;
    }
}

#endif
