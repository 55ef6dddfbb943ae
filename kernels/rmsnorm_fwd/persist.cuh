/* rmsnorm_fwd/persist.cuh -- the persistent family of RMSNorm forward: a
 * resident grid walks the rows with w in registers and an optional cp.async
 * pipeline.  See common.cuh. */
#ifndef NT_RMSNORM_FWD_PERSIST_CUH
#define NT_RMSNORM_FWD_PERSIST_CUH

#include "rmsnorm_fwd/io.cuh"

/* ---- persistent rows -------------------------------------------------- */

/* Copy this thread's active chunks of the row at xrow into its slots of a
 * stage (slot j at st + 16*(j*B), the thread's base already in st). */
template <int B, int C>
__device__ __forceinline__ void nt_fwd_stage(unsigned st, const bool *act, const char *xrow, int tid) {
#pragma unroll
    for (int j = 0; j < C; j++)
        if (act[j]) nt_cp16(st + 16u * (unsigned)(j * B), xrow + 16 * (long long)(j * B + tid));
}

template <class X, class Wt, int B, int C, int S, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_persist(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E;
    static_assert(S >= 1, "stages >= 1");
    /* S > 1: [S][C*B] 16-byte slots of x rows; S == 1: unused */
    extern __shared__ nt_u4 nt_fwd_stages[];
    __shared__ float red_buf[2][32];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const int G = gridDim.x, bid = blockIdx.x;
    const nt_fwd_io<X> io(a);
    bool act[C];
    io.template cover<C>(act, B, tid);
    typename F::xv xv[C];
    typename F::wv wv[C];
    /* rows of this block: bid, bid+G, ...  (G <= M, so at least one) */
    const long long mine = (io.M - bid + G - 1) / G;
    if (S > 1) {
        const unsigned base = nt_saddr(nt_fwd_stages) + 16u * (unsigned)tid;
#pragma unroll
        for (int s = 0; s < S - 1; s++) {
            if (s < mine)
                nt_fwd_stage<B, C>(base + 16u * (unsigned)(C * B * s), act,
                                   io.x + (bid + (long long)s * G) * io.rowb, tid);
            nt_cp_commit();
        }
        nt_fwd_load_w<Wt, C, E>(wv, act, io.w, B, tid);
#pragma unroll 1
        for (long long t = 0; t < mine; t++) {
            /* refill the stage row t-1 used: this thread read it into
             * registers, and only this thread writes it */
            const long long tn = t + S - 1;
            if (tn < mine)
                nt_fwd_stage<B, C>(base + 16u * (unsigned)(C * B * (int)(tn % S)), act,
                                   io.x + (bid + tn * G) * io.rowb, tid);
            nt_cp_commit();
            nt_cp_wait<S - 1>();                       /* row t has landed */
            const unsigned st = base + 16u * (unsigned)(C * B * (int)(t % S));
#pragma unroll
            for (int j = 0; j < C; j++) {
                if (act[j]) nt_fwd_lds_x(xv[j], st + 16u * (unsigned)(j * B));
                else xv[j].zero();
            }
            const long long row = bid + t * G;
            float s = nt_fwd_sumsq<X, C, E>(xv, act);
            s = nt_fwd_block_sum<B>(s, red + 128u * (unsigned)(t & 1));
            const float r = io.r_of(s);
            if (io.rstd && tid == 0) io.rstd[row] = r;
            nt_fwd_store<X, Wt, C, E>(xv, wv, act, r, io.y + row * io.rowb, B, tid);
        }
        nt_cp_wait<0>();
    } else {
        nt_fwd_load_w<Wt, C, E>(wv, act, io.w, B, tid);
#pragma unroll 1
        for (long long t = 0; t < mine; t++) {
            const long long row = bid + t * G;
            nt_fwd_load_x<X, C, E>(xv, act, io.x + row * io.rowb, B, tid);
            float s = nt_fwd_sumsq<X, C, E>(xv, act);
            s = nt_fwd_block_sum<B>(s, red + 128u * (unsigned)(t & 1));
            const float r = io.r_of(s);
            if (io.rstd && tid == 0) io.rstd[row] = r;
            nt_fwd_store<X, Wt, C, E>(xv, wv, act, r, io.y + row * io.rowb, B, tid);
        }
    }
}

#endif
