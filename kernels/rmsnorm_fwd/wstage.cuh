/* rmsnorm_fwd/wstage.cuh -- the staged warp family of RMSNorm forward:
 * warp.cuh's rows (T threads per row, B/T rows a step) walked by a
 * resident grid, the next S - 1 steps' rows copied into shared memory with
 * cp.async while a step is computed.  See common.cuh.
 *
 * Why: warp.cuh gives each block one step and loads its rows only when it
 * starts; the bytes in flight come from many short-lived blocks, and a
 * block's loads wait on nothing else.  Here each block keeps S - 1 steps of
 * loads in flight through its own sums and stores (the backward's
 * wstage.cuh was 4-8% faster than its warp at N = 64 .. 768 on an H200).
 *
 * The walk: block b takes steps b, b + grid, ... of G = B / T rows (group
 * g takes row g of a step); every lane of a block walks the same steps, so
 * every lane reaches each butterfly, and lanes of rows past M copy and
 * store nothing.  The ring: S stages of [C][B] 16-byte slots; thread t
 * copies chunk j of its row into slot (stage, j, t) and reads it back
 * itself, so the ring needs no barrier, only the thread's own cp.async
 * groups (one per step, committed even when empty).  w is loaded once into
 * registers. */
#ifndef NT_RMSNORM_FWD_WSTAGE_CUH
#define NT_RMSNORM_FWD_WSTAGE_CUH

#include "rmsnorm_fwd/io.cuh"

template <class X, class Wt, int T, int B, int C, int S, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_wstage(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E, G = B / T;
    static_assert(T >= 1 && T <= 32 && (T & (T - 1)) == 0 && B % 32 == 0, "T | 32, B % 32 == 0");
    static_assert(S >= 2, "a ring of at least two stages");
    extern __shared__ nt_u4 nt_fwd_ring[];
    const int tid = threadIdx.x, l = tid % T, g = tid / T;
    const nt_fwd_io<X> io(a);
    bool cov[C];
    io.template cover<C>(cov, T, l);
    typename F::wv wv[C];
    nt_fwd_load_w<Wt, C, E>(wv, cov, io.w, T, l);
    const long long steps = (io.M + G - 1) / G;
    const long long bid = blockIdx.x, grid = gridDim.x;
    const long long mine = (steps - bid + grid - 1) / grid;   /* >= 1: grid <= steps */
    const unsigned base = nt_saddr(nt_fwd_ring) + 16u * (unsigned)tid;
    /* the copies of this block's t-th step into stage t % S */
    auto fetch = [&](long long t) {
        const long long row = (bid + t * grid) * G + g;
        if (row >= io.M) return;
        const unsigned st = base + 16u * (unsigned)(C * B) * (unsigned)(t % S);
#pragma unroll
        for (int j = 0; j < C; j++)
            if (cov[j]) nt_cp16(st + 16u * (unsigned)(j * B), io.x + row * io.rowb + 16 * (long long)(j * T + l));
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
        const bool ok = row < io.M;
        const unsigned st = base + 16u * (unsigned)(C * B) * (unsigned)(t % S);
        bool act[C];
        typename F::xv xv[C];
#pragma unroll
        for (int j = 0; j < C; j++) {
            act[j] = ok && cov[j];
            if (act[j]) nt_fwd_lds_x(xv[j], st + 16u * (unsigned)(j * B));
            else xv[j].zero();
        }
        float s = nt_fwd_sumsq<X, C, E>(xv, act);
        s = nt_fwd_lanes<T>(s);
        const float r = io.r_of(s);
        if (ok && io.rstd && l == 0) io.rstd[row] = r;
        nt_fwd_store<X, Wt, C, E>(xv, wv, act, r, io.y + row * io.rowb, T, l);
    }
    nt_cp_wait<0>();
}

#endif
