/* rmsnorm_fwd/loop.cuh -- the loop family of RMSNorm forward: one row per
 * block of B threads, the row walked in tiles of B*C 16-byte chunks, twice,
 * so that any N up to NT_MAX_N (65536) runs on any device with C chunks of
 * x and w in registers, whatever the length of the row.  The op's
 * fallback.  See common.cuh for what the families share.
 *
 * Pass 1 loads the row tile by tile (thread tid holds chunks j*B + tid of
 * the tile, j < C, as row.cuh's thread does for the whole row) and adds the
 * squares into one float per thread, tiles in order, chunks in order; the
 * block sum (nt_fwd_block_sum) then gives every thread the same bits.  Pass
 * 2 walks the tiles backwards: the last tile is still in registers from
 * pass 1, the others are read again -- mostly from L2, which saw them a
 * moment ago, the most recent first -- and y = x * r * w is written tile by
 * tile, w loaded with each tile.  A row of one tile (N <= B*C*E) is read
 * once: then the kernel is row.cuh's, plus a loop of one trip.
 *
 * One row per block, grid = M (a loop of stride gridDim.x past the 1-D grid
 * limit), not persistent: a persistent block could only keep w in
 * registers across rows, and a long row's w does not fit there; what the
 * second pass needs of L2 is the rows in flight, resident blocks x row
 * bytes, the same for either schedule (H200, bf16, N = 65536, two blocks of
 * 1024 threads per SM: 264 x 128 KB = 33 MiB of its 60 MiB of L2), and
 * one row per block leaves the balancing of the SMs to the hardware, with
 * no grid for the launcher to size and no workspace.
 *
 * Registers: C chunks of x (4 words each) and, in pass 2, C chunks of w,
 * the same data as row.cuh's; the family's register rule (families.c,
 * fits_regs) refuses configs that would spill.  Determinism: a fixed order
 * everywhere (the tiles, the chunks, the butterflies), no atomics; the
 * reduction buffer alternates between two halves from row to row (one
 * barrier per row). */
#ifndef NT_RMSNORM_FWD_LOOP_CUH
#define NT_RMSNORM_FWD_LOOP_CUH

#include "rmsnorm_fwd/io.cuh"

template <class X, class Wt, int B, int C, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_loop(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E, WW = F::WW, TILE = B * C;  /* chunks per tile */
    __shared__ float red_buf[2][32];
    const unsigned red = nt_saddr(red_buf);
    const int tid = threadIdx.x;
    const nt_fwd_io<X> io(a);
    const int last = (io.nvec - 1) / TILE;              /* the last tile */
    typename F::xv xv[C];
    typename F::wv wv[C];
    bool act[C];
    unsigned it = 0;
#pragma unroll 1
    for (long long row = blockIdx.x; row < io.M; row += gridDim.x, it++) {
        const char *xrow = io.x + row * io.rowb;
        char *yrow = io.y + row * io.rowb;
        float s = 0.f;
        /* pass 1: the sum of squares, tile by tile; xv ends with the last */
#pragma unroll 1
        for (int t = 0; t <= last; t++) {
            const int base = t * TILE;
#pragma unroll
            for (int j = 0; j < C; j++) act[j] = base + j * B + tid < io.nvec;
            nt_fwd_load_x<X, C, E>(xv, act, xrow + 16 * (long long)base, B, tid);
            s += nt_fwd_sumsq<X, C, E>(xv, act);
        }
        s = nt_fwd_block_sum<B>(s, red + 128u * (it & 1u));
        const float r = io.r_of(s);
        if (io.rstd && tid == 0) io.rstd[row] = r;
        /* pass 2: y, the last tile first (still in registers), then the
         * others backwards, each read again */
#pragma unroll 1
        for (int t = last; t >= 0; t--) {
            const int base = t * TILE;
            if (t != last) {
#pragma unroll
                for (int j = 0; j < C; j++) act[j] = base + j * B + tid < io.nvec;
                nt_fwd_load_x<X, C, E>(xv, act, xrow + 16 * (long long)base, B, tid);
            }
            nt_fwd_load_w<Wt, C, E>(wv, act, io.w + 4 * WW * (long long)base, B, tid);
            nt_fwd_store<X, Wt, C, E>(xv, wv, act, r, yrow + 16 * (long long)base, B, tid);
        }
    }
}

#endif
