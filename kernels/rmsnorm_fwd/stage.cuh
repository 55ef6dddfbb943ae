/* rmsnorm_fwd/stage.cuh -- the stage family of RMSNorm forward: one row per
 * block of B threads, copied whole into shared memory with cp.async, read
 * from there twice (the sum of squares, then y), with w loaded chunk by
 * chunk as y is written.  Nothing of the row is held in registers: a block
 * costs C*B*16 bytes of shared memory and few registers, so at long rows
 * more blocks (and bytes of x in flight) fit on an SM than when the row
 * lives in registers, whatever w's dtype.  The design QuACK uses for its
 * longest rows, without the cluster.  See common.cuh. */
#ifndef NT_RMSNORM_FWD_STAGE_CUH
#define NT_RMSNORM_FWD_STAGE_CUH

#include "rmsnorm_fwd/io.cuh"

template <class X, class Wt, int B, int C, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_stage(nt_args a) {
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E, WW = F::WW;
    /* [C*B] 16-byte slots: slot j*B + tid holds chunk j of this thread */
    extern __shared__ nt_u4 nt_fwd_xrow[];
    __shared__ float red_buf[2][32];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const nt_fwd_io<X> io(a);
    const unsigned mine = nt_saddr(nt_fwd_xrow) + 16u * (unsigned)tid;
    bool act[C];
    io.template cover<C>(act, B, tid);
    unsigned it = 0;
    /* Each thread copies and reads only its own slots, so no barrier
     * guards them: its reads of a row are done (their values stored as y)
     * before it copies the next row over them. */
#pragma unroll 1
    for (long long row = blockIdx.x; row < io.M; row += gridDim.x, it++) {
        const char *xrow = io.x + row * io.rowb;
#pragma unroll
        for (int j = 0; j < C; j++)
            if (act[j]) nt_cp16(mine + 16u * (unsigned)(j * B), xrow + 16 * (long long)(j * B + tid));
        nt_cp_commit();
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
            if (!act[j]) continue;
            nt_fwd_lds_x(xv, mine + 16u * (unsigned)(j * B));
            typename F::wv wv;
            nt_fwd_load_w<Wt, 1, E>(&wv, &act[j], io.w + 4 * WW * (long long)(j * B), B, tid);
            nt_fwd_store<X, Wt, 1, E>(&xv, &wv, &act[j], r,
                                      io.y + row * io.rowb + 16 * (long long)(j * B), B, tid);
        }
    }
}

#endif
