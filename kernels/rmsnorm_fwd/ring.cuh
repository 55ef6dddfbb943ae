/* rmsnorm_fwd/ring.cuh -- the ring family of RMSNorm forward: stage.cuh's
 * rows (one row at a time per block of B threads, C 16-byte chunks a
 * thread, the row in shared memory and read from there twice: the sum of
 * squares, then y) walked by a resident grid through a ring of C + S slots
 * a thread, so that the next row's copies go out before this row is done.
 * See common.cuh.
 *
 * Why: stage loads a row only when the one before is written, so an SM
 * has nothing in flight while a block reduces and writes; at N = 65536 a
 * row of 128 KB leaves room for one block an SM, and at 1024 x 65536 the
 * H200's DRAM ran at 66% of its peak, no eligible warp 57% of the cycles
 * (docs/guide.md, make bench).  persist keeps `stages` whole rows in
 * flight, which 65536 columns do not fit twice.  Here a thread needs only
 * S spare slots beside its row's C.
 *
 * The ring: thread t's slots are t, t + B, ..., (C + S - 1) B + t (16 bytes
 * each); chunk j of a block's i-th row (vector j*B + t of the row) sits in
 * slot (i*C + j) mod (C + S).  So the S slots past a row hold the first S
 * chunks of the next, copied while the row is summed, and the slot that
 * chunk j frees once its y is stored takes the chunk C + S places on: chunk
 * j + S of the next row, or (j + S >= C) chunk j + S - C of the row after.
 * Each thread copies into and reads only its own slots, and its read of a
 * slot is done (the value stored as y) before it copies over it, so the
 * ring needs no barrier, only the thread's own cp.async groups: one a
 * chunk, committed even when empty, so that row i's last chunk always has
 * exactly S groups after it when the row is summed.  w as in stage: with
 * G = 0 all C chunks once, into registers; with G > 0 G chunks at a time as
 * y is written (a long row's w does not fit in registers beside the walk:
 * N = 65536 in bf16), their L2 round trips no longer idle the SM, whose
 * next row's copies are in flight. */
#ifndef NT_RMSNORM_FWD_RING_CUH
#define NT_RMSNORM_FWD_RING_CUH

#include "rmsnorm_fwd/io.cuh"

template <class X, class Wt, int B, int C, int S, int K, int G>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_ring(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E, WW = F::WW, R = C + S;
    static_assert(S >= 1 && S <= C, "1 <= S <= C spare slots a thread");
    static_assert(G >= 0 && G <= C && (G == 0 || C % G == 0), "G = 0, or G divides C");
    constexpr int GW = G == 0 ? C : G;          /* chunks of w in registers */
    extern __shared__ nt_u4 nt_fwd_ringx[];
    __shared__ float red_buf[2][32];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const nt_fwd_io<X> io(a);
    bool act[C];
    io.template cover<C>(act, B, tid);
    const long long bid = blockIdx.x, grid = gridDim.x;
    const long long rows = (io.M - bid + grid - 1) / grid; /* >= 1: grid <= M */
    const unsigned mine = nt_saddr(nt_fwd_ringx) + 16u * (unsigned)tid;
    const char *x0 = io.x + 16 * (long long)tid;
    /* this thread's part of the block's i-th row, or NULL past its rows */
    auto row_at = [&](long long i) -> const char * {
        return i < rows ? x0 + (bid + i * grid) * io.rowb : nullptr;
    };
    /* copy chunk q of a row (at xr, NULL: none) into slot s, and close its
     * group */
    auto fetch = [&](const char *xr, bool on, int q, unsigned s) {
        if (on && xr) nt_cp16(mine + 16u * (unsigned)B * s, xr + 16 * (long long)(q * B));
        nt_cp_commit();
    };
    {
        const char *r0 = row_at(0), *r1 = row_at(1);
#pragma unroll
        for (int q = 0; q < C; q++) fetch(r0, act[q], q, (unsigned)q);
#pragma unroll
        for (int q = 0; q < S; q++) fetch(r1, act[q], q, (unsigned)(C + q));
    }
    typename F::wv wv[GW];
    if (G == 0) nt_fwd_load_w<Wt, GW, E>(wv, act, io.w, B, tid);
    unsigned off = 0;                      /* (i * C) mod R: row i's first slot */
#pragma unroll 1
    for (long long i = 0; i < rows; i++) {
        const long long row = bid + i * grid;
        nt_cp_wait<S>();                   /* row i's chunks (this thread's) have landed */
        typename F::xv xv;
        float s = 0.f;
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (!act[j]) continue;
            const unsigned sl = off + j < R ? off + j : off + j - R;
            nt_fwd_lds_x(xv, mine + 16u * (unsigned)B * sl);
            s += nt_fwd_sumsq<X, 1, E>(&xv, &act[j]);
        }
        s = nt_fwd_block_sum<B>(s, red + 128u * (unsigned)(i & 1));
        const float r = io.r_of(s);
        if (io.rstd && tid == 0) io.rstd[row] = r;
        const char *r1 = row_at(i + 1), *r2 = row_at(i + 2);
#pragma unroll
        for (int j = 0; j < C; j++) {
            const unsigned sl = off + j < R ? off + j : off + j - R;
            if (G > 0 && j % GW == 0)
                nt_fwd_load_w<Wt, GW, E>(wv, &act[j], io.w + 4 * WW * (long long)(j * B), B, tid);
            if (act[j]) {
                nt_fwd_lds_x(xv, mine + 16u * (unsigned)B * sl);
                nt_fwd_store<X, Wt, 1, E>(&xv, &wv[G == 0 ? j : j % GW], &act[j], r,
                                          io.y + row * io.rowb + 16 * (long long)(j * B), B, tid);
            }
            /* the slot's next chunk, C + S places on: chunk j + S of the
             * next row, or of the row after when j + S passes the row */
            fetch(j + S < C ? r1 : r2, act[(j + S) % C], (j + S) % C, sl);
        }
        off = off + C < R ? off + C : off + C - R;
    }
    nt_cp_wait<0>();
}

#endif
