/* rmsnorm_bwd/ring.cuh -- rmsnorm_bwd.ring: persistent's chain (rows walked
 * by a resident grid, dw partials in registers, one fp32 partial row a
 * block, one column sum) with the rows brought into shared memory through
 * a ring of C + S chunk slots a thread, as the forward's ring (its ring.cuh)
 * does, instead of whole rows a stage.  See row.cuh.
 *
 * Why: on the H200 the pipelined persistent kernel was slowest where a
 * block held 64 KB or more of x and dy ahead of the row it computes (its
 * stages - 1 rows ahead, 4N bytes each): 7-11% slower than with 32 KB at N
 * = 8192 and M = 4096 to 16384, and at N = 16384 the only pipeline that
 * fits, 2 stages, is a whole row ahead, 64 KB (docs/guide.md, "The mid
 * shapes profiled").  Here a block has S/C of a row ahead: the S spare
 * slots past a row hold the next row's first S chunks, copied while the
 * row is reduced.
 *
 * The ring: thread t's slots for x are t, t + B, ..., (R - 1) B + t (R = C
 * + S, 16 bytes each), those for dy the same R B slots further on.  Chunk j
 * of the block's i-th row (vector j*B + t of the row) sits in slot (i*C +
 * j) mod R of both.  The row's two passes read its slots (the sums, then
 * dx and dw); once chunk j's dx is stored, its slots take the chunk R
 * places on: chunk j + S of the next row, or (j + S >= C) chunk j + S - C
 * of the row after.  Each thread copies into and reads only its own slots,
 * and the store of dx uses the values read, so a thread's reads of a slot
 * are done before it copies over it (instructions issue in order): no
 * barrier, only the thread's cp.async groups, one a chunk (x and dy),
 * committed even when empty, so that row i's last chunk always has exactly
 * S groups after it when the row is reduced.
 *
 * w is loaded once into registers (held's w; persistent keeps it in shared
 * memory).  The sums and dx, dw are nt_bwd_row's operations in its order,
 * so ring gives persistent's bits. */
#ifndef NT_RMSNORM_BWD_RING_CUH
#define NT_RMSNORM_BWD_RING_CUH

#include "rmsnorm_bwd/row.cuh"
#include "rmsnorm_bwd/colsum.cuh"

template <class TX, class TW, class TDW, int B, int C, int S, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_bwd_ring(nt_args a) {
    static_assert(S >= 1 && S <= C, "1 <= S <= C spare slots a thread");
    nt_wait_prev(); /* before any global access: launched early too (families.c) */
    constexpr int E = nt_bwd_chunk<TX>::E, R = C + S;
    typedef nt_vec<TX, E> VX;
    typedef nt_vec<TW, E> VW;
    constexpr int WP = VW::W / 4;
    extern __shared__ nt_u4 nt_bwd_ringx[];   /* [x, dy][R][B] 16-byte slots */
    __shared__ float red_buf[2][64];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const long long G = gridDim.x, bid = blockIdx.x;
    const int N = a.N, nvec = N / E;
    const long long M = a.M;
    const float invN = 1.0f / (float)N;
    const nt_u4 *x = (const nt_u4 *)a.t[NT_BWD_X], *dy = (const nt_u4 *)a.t[NT_BWD_DY];
    const nt_u4 *wp = (const nt_u4 *)a.t[NT_BWD_W];
    nt_u4 *dx = (nt_u4 *)a.t[NT_BWD_DX];

    nt_launch_next();
    bool act[C];
    float acc[C][E];
    VW wv[C];
#pragma unroll
    for (int j = 0; j < C; j++) {
        act[j] = j * B + tid < nvec;
#pragma unroll
        for (int k = 0; k < E; k++) acc[j][k] = 0.f;
        if (act[j])
            nt_ldg<VW::W, false>(wp + WP * (j * B + tid), wv[j].w);
        else
            wv[j].zero();
    }
    const long long rows = (M - bid + G - 1) / G;   /* >= 1: G <= M */
    const unsigned sx = nt_saddr(nt_bwd_ringx) + 16u * (unsigned)tid;
    const unsigned sg = sx + 16u * (unsigned)(R * B);
    /* the block's i-th row, from this thread's first vector, or -1 past its rows */
    auto row_at = [&](long long i) -> long long { return i < rows ? (bid + i * G) * nvec + tid : -1; };
    /* copy chunk q of the row at vector off (-1: none) into slot s, and
     * close its group */
    auto fetch = [&](long long off, int q, unsigned s) {
        if (off >= 0 && act[q]) {
            nt_cp_async<VX::W>(sx + 16u * (unsigned)B * s, x + off + q * B);
            nt_cp_async<VX::W>(sg + 16u * (unsigned)B * s, dy + off + q * B);
        }
        nt_cp_commit();
    };
    {
        const long long r0 = row_at(0), r1 = row_at(1);
#pragma unroll
        for (int q = 0; q < C; q++) fetch(r0, q, (unsigned)q);
#pragma unroll
        for (int q = 0; q < S; q++) fetch(r1, q, (unsigned)(C + q));
    }
    unsigned off = 0;                      /* (i * C) mod R: row i's first slot */
#pragma unroll 1
    for (long long i = 0; i < rows; i++) {
        nt_cp_wait<S>();                   /* row i's chunks (this thread's) have landed */
        float sxy = 0.f, sxx = 0.f;
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (!act[j]) continue;
            const unsigned sl = off + j < R ? off + j : off + j - R;
            VX xv, gv;
            nt_bwd_lds<VX::W, 0>(sx + 16u * (unsigned)B * sl, xv.w);
            nt_bwd_lds<VX::W, 0>(sg + 16u * (unsigned)B * sl, gv.w);
            float xf[E], gf[E], wf[E];
            xv.get(xf);
            gv.get(gf);
            wv[j].get(wf);
#pragma unroll
            for (int k = 0; k < E; k++) {
                sxy += wf[k] * gf[k] * xf[k];
                sxx += xf[k] * xf[k];
            }
        }
        nt_block_sum2(sxy, sxx, red + 256u * (unsigned)(i & 1));
        const float r = rsqrtf(sxx * invN + a.eps);
        const float c = sxy * invN * r * r * r;
        nt_u4 *dxr = dx + (bid + i * G) * nvec + tid;
        const long long r1 = row_at(i + 1), r2 = row_at(i + 2);
#pragma unroll
        for (int j = 0; j < C; j++) {
            const unsigned sl = off + j < R ? off + j : off + j - R;
            if (act[j]) {
                VX xv, gv;
                nt_bwd_lds<VX::W, 0>(sx + 16u * (unsigned)B * sl, xv.w);
                nt_bwd_lds<VX::W, 0>(sg + 16u * (unsigned)B * sl, gv.w);
                float xf[E], gf[E], wf[E], o[E];
                xv.get(xf);
                gv.get(gf);
                wv[j].get(wf);
#pragma unroll
                for (int k = 0; k < E; k++) {
                    o[k] = r * wf[k] * gf[k] - xf[k] * c;
                    acc[j][k] += gf[k] * xf[k] * r;
                }
                VX ov;
                ov.put(o);
                nt_stg<VX::W, true>(dxr + j * B, ov.w);
            }
            /* the slots' next chunk, R places on: chunk j + S of the next
             * row, or of the row after when j + S passes the row */
            fetch(j + S < C ? r1 : r2, (j + S) % C, sl);
        }
        off = off + C < R ? off + C : off + C - R;
    }
    nt_cp_wait<0>();
    nt_f4 *out = (nt_f4 *)((float *)a.ws + bid * N);
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

#endif
