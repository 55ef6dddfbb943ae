/* rmsnorm_bwd/cols.cuh -- the cols family of RMSNorm backward: two passes,
 * the rows' statistics, then the columns in tiles that hold every row.
 *
 * Why: at few rows (M = 256 .. 2048) the chains that walk rows end each
 * block's walk with a whole fp32 partial row of dw, which a second kernel
 * reads again (at 256 x 8192 bf16, 132 partial rows: 4.3 MB beside the
 * op's 12.6 MB), and each block has only a row or two to keep loads in
 * flight.  Here dw needs no partial rows at all:
 *
 *   nt_bwd_stats<TX, TW, TDW, B1>   one row per block of B1 threads (a
 *                            loop of stride gridDim.x past the grid): the
 *                            row's r = 1/sqrt(mean(x^2) + eps) and
 *                            c = mean(w*dy*x) * r^3 into ws (two floats a
 *                            row), the sums in a fixed order (each thread's
 *                            chunks j*B1 + tid in order, then nt_block_sum2).
 *   nt_bwd_cols<TX, TW, TDW, B, CC, R, K>  block b owns column chunks
 *                            b*CC .. b*CC + CC - 1 of every row: thread t
 *                            takes chunk t mod CC of rows t/CC, t/CC + G, ...
 *                            (G = B/CC row groups), R of them a step with
 *                            their loads in flight together, writes dx = r*w*dy - x*c
 *                            and adds dy*x*r in registers; the G groups'
 *                            sums meet in shared memory and are added in
 *                            group order, and dw is written, in its dtype,
 *                            by the block that owns the columns.
 *
 * x and dy are read twice, the second time mostly from L2 (at these sizes
 * the two tensors fit in it many times over); the chain moves the op's
 * bytes and 8 bytes a row more.  dw and dx have the same bits on every
 * run: no atomics, every sum in a fixed order. */
#ifndef NT_RMSNORM_BWD_COLS_CUH
#define NT_RMSNORM_BWD_COLS_CUH

#include "rmsnorm_bwd/row.cuh"

template <class TX, class TW, class TDW, int B1>
__global__ void __launch_bounds__(B1) nt_bwd_stats(nt_args a) {
    constexpr int E = nt_bwd_chunk<TX>::E;
    typedef nt_vec<TX, E> XV;
    typedef nt_vec<TW, E> WV;
    __shared__ float red_buf[2][64];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x, nvec = a.N / E;
    const float invN = 1.0f / (float)a.N;
    const char *x = (const char *)a.t[NT_BWD_X], *dy = (const char *)a.t[NT_BWD_DY];
    const char *w = (const char *)a.t[NT_BWD_W];
    float2 *stat = (float2 *)a.ws;
    nt_wait_prev();
    nt_launch_next();
    unsigned it = 0;
#pragma unroll 1
    for (long long row = blockIdx.x; row < a.M; row += gridDim.x, it++) {
        const long long at = row * (long long)nvec;
        float sxy = 0.f, sxx = 0.f;
#pragma unroll 4
        for (int j = tid; j < nvec; j += B1) {
            XV xv, gv;
            WV wv;
            nt_ldg<XV::W, false>(x + 16 * (at + j), xv.w);
            nt_ldg<XV::W, false>(dy + 16 * (at + j), gv.w);
            nt_ldg<WV::W, false>(w + (long long)sizeof(TW) * E * j, wv.w);
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
        nt_block_sum2(sxy, sxx, red + 256u * (it & 1u));
        if (tid == 0) {
            const float r = rsqrtf(sxx * invN + a.eps);
            stat[row] = make_float2(r, sxy * invN * r * r * r);
        }
    }
}

template <class TX, class TW, class TDW, int B, int CC, int R, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_bwd_cols(nt_args a) {
    constexpr int E = nt_bwd_chunk<TX>::E, G = B / CC;
    static_assert(CC >= 1 && B % CC == 0 && B % 32 == 0 && R >= 1, "CC divides B, B % 32 == 0, R >= 1");
    typedef nt_vec<TX, E> XV;
    typedef nt_vec<TW, E> WV;
    typedef nt_vec<TDW, E> DV;
    extern __shared__ float nt_bwd_cols_sum[];    /* [G][CC * E] */
    const int tid = threadIdx.x, cc = tid % CC, g = tid / CC, nvec = a.N / E;
    const int col = blockIdx.x * CC + cc;          /* this thread's column chunk */
    const bool ok = col < nvec;
    const char *x = (const char *)a.t[NT_BWD_X], *dy = (const char *)a.t[NT_BWD_DY];
    char *dx = (char *)a.t[NT_BWD_DX];
    const float2 *stat = (const float2 *)a.ws;
    float acc[E];
#pragma unroll
    for (int k = 0; k < E; k++) acc[k] = 0.f;
    /* w and the first step's rows of x and dy are the op's inputs, which
     * the statistics kernel does not write: their loads are issued before
     * the wait for it (this kernel is launched once every block of it has
     * passed its own wait for the work before the chain), so that they
     * overlap it; only its r and c are read after the wait */
    float wf[E];
    XV xv[R], gv[R];
    WV wv;
    const long long step = (long long)G * R;
    if (ok) {
        nt_ldg<WV::W, false>((const char *)a.t[NT_BWD_W] + (long long)sizeof(TW) * E * col, wv.w);
#pragma unroll
        for (int i = 0; i < R; i++) {
            const long long row = g + (long long)G * i;
            if (row >= a.M) continue;
            const long long off = 16 * (row * (long long)nvec + col);
            nt_ldg<XV::W, false>(x + off, xv[i].w);
            nt_ldg<XV::W, false>(dy + off, gv[i].w);
        }
    }
    nt_wait_prev();
    if (ok) {
        wv.get(wf);
/* R rows a step, their loads issued before any is used */
#pragma unroll 1
        for (long long row0 = g; row0 < a.M; row0 += step) {
            float2 s[R];
#pragma unroll
            for (int i = 0; i < R; i++) {
                const long long row = row0 + (long long)G * i;
                if (row >= a.M) continue;
                if (row0 != g) {
                    const long long off = 16 * (row * (long long)nvec + col);
                    nt_ldg<XV::W, false>(x + off, xv[i].w);
                    nt_ldg<XV::W, false>(dy + off, gv[i].w);
                }
                s[i] = stat[row];
            }
#pragma unroll
            for (int i = 0; i < R; i++) {
                const long long row = row0 + (long long)G * i;
                if (row >= a.M) continue;
                float xf[E], gf[E], o[E];
                xv[i].get(xf);
                gv[i].get(gf);
#pragma unroll
                for (int k = 0; k < E; k++) {
                    o[k] = s[i].x * wf[k] * gf[k] - xf[k] * s[i].y;
                    acc[k] += gf[k] * xf[k] * s[i].x;
                }
                XV ov;
                ov.put(o);
                nt_stg<XV::W, true>(dx + 16 * (row * (long long)nvec + col), ov.w);
            }
        }
    }
    /* the G row groups' sums of each column, added in group order */
    float *mine = nt_bwd_cols_sum + (g * CC + cc) * E;
#pragma unroll
    for (int k = 0; k < E; k++) mine[k] = acc[k];
    __syncthreads();
    if (g == 0 && ok) {
        float t[E];
#pragma unroll
        for (int k = 0; k < E; k++) t[k] = nt_bwd_cols_sum[cc * E + k];
        for (int h = 1; h < G; h++) {
#pragma unroll
            for (int k = 0; k < E; k++) t[k] += nt_bwd_cols_sum[(h * CC + cc) * E + k];
        }
        DV dv;
        dv.put(t);
        nt_bwd_put<DV::W>((char *)a.t[NT_BWD_DW] + (long long)sizeof(TDW) * E * col, dv.w);
    }
}

#endif
