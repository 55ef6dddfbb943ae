/* rmsnorm_fwd/stage.cuh -- the stage family of RMSNorm forward: one row per
 * block of B threads, copied whole into shared memory with cp.async and
 * read from there twice (the sum of squares, then y).  x is never held in
 * registers: a block costs C*B*16 bytes of shared memory and few registers,
 * so at long rows more blocks (and bytes of x in flight) fit on an SM than
 * when the row lives in registers.  The design QuACK uses for its longest
 * rows, without the cluster.  See common.cuh.
 *
 * G says when w is loaded, the one knob besides the shape of the block:
 *   G = 0       all C chunks of w once per block, issued right after the
 *               first row's cp.async so that their latency hides under
 *               x's, and held in registers (C * size(Wt)/4 words of them)
 *               for every row;
 *   G = 1 .. C  (G divides C) as y is written, G chunks at a time: each
 *               group of loads costs one L2 round trip after the
 *               reduction, during which the block has no loads in
 *               flight, and G chunks of w in registers.
 * G = 1 was the family's only behaviour before the parameter. */
#ifndef NT_RMSNORM_FWD_STAGE_CUH
#define NT_RMSNORM_FWD_STAGE_CUH

#include "rmsnorm_fwd/io.cuh"

template <class X, class Wt, int B, int C, int K, int G>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_stage(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E, WW = F::WW;
    static_assert(G >= 0 && G <= C && (G == 0 || C % G == 0), "G = 0, or G divides C");
    constexpr int GW = G == 0 ? C : G;          /* chunks of w in registers */
    /* [C*B] 16-byte slots: slot j*B + tid holds chunk j of this thread */
    extern __shared__ nt_u4 nt_fwd_xrow[];
    __shared__ float red_buf[2][32];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const nt_fwd_io<X> io(a);
    const unsigned mine = nt_saddr(nt_fwd_xrow) + 16u * (unsigned)tid;
    bool act[C];
    io.template cover<C>(act, B, tid);
    typename F::wv wv[GW];
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
