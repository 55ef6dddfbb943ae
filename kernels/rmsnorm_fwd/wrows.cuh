/* rmsnorm_fwd/wrows.cuh -- the wrows family of RMSNorm forward: T threads
 * per row as in warp, in a resident grid whose groups walk the rows with
 * the next R rows' loads in flight.
 *
 * A block of B threads has G = B/T groups of T threads.  Block step t of
 * block b covers rows (t * gridDim.x + b) * G .. + G, one per group, so
 * that the groups of a warp read consecutive rows (every load instruction
 * of a warp stays contiguous).  Each group keeps a ring of R rows in
 * registers: when it has written y of the row in slot r, it loads the row
 * R steps ahead into that slot.  So loads stay in flight while a row is
 * reduced and written, across the whole walk: where warp's blocks each
 * load, reduce and write one row per group and leave (a grid of many
 * short-lived blocks, each wave of them waiting on its own loads), these
 * blocks stream.  w is loaded once per thread, behind the first rows'
 * loads.  See common.cuh. */
#ifndef NT_RMSNORM_FWD_WROWS_CUH
#define NT_RMSNORM_FWD_WROWS_CUH

#include "rmsnorm_fwd/io.cuh"

template <class X, class Wt, int T, int B, int C, int R, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_wrows(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E, G = B / T;
    static_assert(T >= 1 && T <= 32 && (T & (T - 1)) == 0 && B % 32 == 0 && R >= 1,
                  "T | 32, B % 32 == 0, R >= 1");
    const int tid = threadIdx.x, l = tid % T, g = tid / T;
    const nt_fwd_io<X> io(a);
    const long long first = (long long)blockIdx.x * G, stride = (long long)gridDim.x * G;
    bool cov[C];
    io.template cover<C>(cov, T, l);
    typename F::xv xv[R][C];
    typename F::wv wv[C];
    /* the ring's first R rows; x first: its loads go to DRAM, w's hit L1/L2 */
#pragma unroll
    for (int r = 0; r < R; r++) {
        const long long row = first + r * stride + g;
        bool act[C];
#pragma unroll
        for (int j = 0; j < C; j++) act[j] = row < io.M && cov[j];
        nt_fwd_load_x<X, C, E>(xv[r], act, io.x + row * io.rowb, T, l);
    }
    nt_fwd_load_w<Wt, C, E>(wv, cov, io.w, T, l);
    /* the step's first row is the same for the whole block, so every lane
     * of a warp reaches the butterflies; lanes of rows past M add zeros */
#pragma unroll 1
    for (long long t = 0; first + t * stride < io.M; t += R) {
#pragma unroll
        for (int r = 0; r < R; r++) {
            const long long step = first + (t + r) * stride;
            if (step >= io.M) break;
            const long long row = step + g, next = row + R * stride;
            bool act[C], nact[C];
#pragma unroll
            for (int j = 0; j < C; j++) {
                act[j] = row < io.M && cov[j];
                nact[j] = next < io.M && cov[j];
            }
            float s = nt_fwd_sumsq<X, C, E>(xv[r], act);
            s = nt_fwd_lanes<T>(s);
            if (row < io.M) {
                const float rr = io.r_of(s);
                if (io.rstd && l == 0) io.rstd[row] = rr;
                nt_fwd_store<X, Wt, C, E>(xv[r], wv, act, rr, io.y + row * io.rowb, T, l);
            }
            nt_fwd_load_x<X, C, E>(xv[r], nact, io.x + next * io.rowb, T, l);
        }
    }
}

#endif
