/* rmsnorm_fwd/pstage.cuh -- stage's rows (stage.cuh: one row at a time in
 * shared memory, copied with cp.async and read twice) walked by a resident
 * grid of k blocks an SM, each block asking L2 for its row P steps ahead
 * (row + P x gridDim) while it works on this one (l2pf.cuh).  stage runs a
 * grid of M blocks: at 1024 x 65536 one block of 128 KB an SM, and an SM
 * has nothing in flight while it sums a row and writes it.  Here DRAM keeps
 * streaming the rows to come, with no shared memory for them, and a
 * block's copies of a row come from L2.  P = 0: the resident walk alone.
 * G: stage's wg. */
#ifndef NT_RMSNORM_FWD_PSTAGE_CUH
#define NT_RMSNORM_FWD_PSTAGE_CUH

#include "rmsnorm_fwd/io.cuh"
#include "l2pf.cuh"

template <class X, class Wt, int B, int C, int K, int G, int P>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_pstage(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E, WW = F::WW;
    static_assert(G >= 0 && G <= C && (G == 0 || C % G == 0), "G = 0, or G divides C");
    static_assert(P >= 0, "P: rows ahead, 0 or more");
    constexpr int GW = G == 0 ? C : G;
    extern __shared__ nt_u4 nt_fwd_xrow[];
    __shared__ float red_buf[2][32];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const nt_fwd_io<X> io(a);
    const unsigned mine = nt_saddr(nt_fwd_xrow) + 16u * (unsigned)tid;
    const long long step = gridDim.x;
    bool act[C];
    io.template cover<C>(act, B, tid);
    typename F::wv wv[GW];
    unsigned it = 0;
    /* as stage: each thread copies and reads only its own slots */
#pragma unroll 1
    for (long long row = blockIdx.x; row < io.M; row += step, it++) {
        const char *xrow = io.x + row * io.rowb;
#pragma unroll
        for (int j = 0; j < C; j++)
            if (act[j]) nt_cp16(mine + 16u * (unsigned)(j * B), xrow + 16 * (long long)(j * B + tid));
        nt_cp_commit();
        /* the rows P steps on (all P of them at the first row) */
        for (int s = it == 0 ? 1 : P; s <= P; s++)
            if (row + s * step < io.M) nt_l2_prefetch(xrow + s * step * io.rowb, io.rowb, tid, B);
        if (G == 0 && it == 0) nt_fwd_load_w<Wt, GW, E>(wv, act, io.w, B, tid);
        nt_cp_wait<0>();
        typename F::xv xv;
        float s = 0.f;
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (!act[j]) continue;
            nt_fwd_lds_x(xv, mine + 16u * (unsigned)(j * B));
            s += nt_fwd_sumsq<X, 1, E>(&xv, &act[j]);
        }
        s = nt_fwd_block_sum<B>(s, red + 128u * (it & 1u));
        const float r = io.r_of(s);
        if (io.rstd && tid == 0) io.rstd[row] = r;
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (G > 0 && j % GW == 0)
                nt_fwd_load_w<Wt, GW, E>(wv, &act[j], io.w + 4 * WW * (long long)(j * B), B, tid);
            if (!act[j]) continue;
            nt_fwd_lds_x(xv, mine + 16u * (unsigned)(j * B));
            nt_fwd_store<X, Wt, 1, E>(&xv, &wv[G == 0 ? j : j % GW], &act[j], r,
                                      io.y + row * io.rowb + 16 * (long long)(j * B), B, tid);
        }
    }
}

#endif
