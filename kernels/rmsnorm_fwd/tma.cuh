/* rmsnorm_fwd/tma.cuh -- the tma family of RMSNorm forward: one row per
 * block of B threads at a time, rows brought into shared memory by bulk
 * copies (cp.async.bulk, the Tensor Memory Accelerator's 1-D form; sm_90
 * and newer) S rows ahead.
 *
 * Why: in row, stage and persist every thread issues its own loads, C of
 * them per row, so the bytes a block has in flight are what its threads
 * have asked for.  Here one thread asks for whole rows: the block's next S
 * rows are in flight while it reduces and writes the current one, whatever
 * its number of threads, and the loads cost no instructions of the other
 * threads.  A persistent walk: block b takes rows b, b + G, ... (G the
 * grid), so each row of x is read once and w is loaded once per block.
 *
 * Rows sit in S buffers of C*B 16-byte slots, row t of the walk in buffer
 * t mod S, each with an mbarrier that the bulk copy completes (expect_tx:
 * the row's bytes).  A thread reads its chunks j*B + tid of the buffer
 * into registers (x is held as in row), the block reduces the sum of
 * squares (one barrier: after it no thread reads the buffer again), and
 * thread 0 then issues row t + S into the same buffer; y is written from
 * registers.  The copy needs 16-byte aligned rows and a multiple of 16
 * bytes: N a multiple of 8 elements (the op's rule) and x 16-byte aligned
 * (the library's).  Determinism as in row: a fixed order of additions.
 * The copies and their mbarriers: bulk.cuh. */
#ifndef NT_RMSNORM_FWD_TMA_CUH
#define NT_RMSNORM_FWD_TMA_CUH

#include "rmsnorm_fwd/io.cuh"
#include "bulk.cuh"

template <class X, class Wt, int B, int C, int S, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_tma(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
#if NT_HAS_BULK
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E;
    static_assert(S >= 1 && B % 32 == 0, "S >= 1, B a multiple of 32");
    extern __shared__ nt_u4 nt_fwd_tma_rows[];    /* S buffers of C*B slots */
    __shared__ __align__(8) unsigned long long bar_buf[S];
    __shared__ float red_buf[2][32];
    const unsigned red = nt_saddr(red_buf), bars = nt_saddr(bar_buf);
    const unsigned rows = nt_saddr(nt_fwd_tma_rows), stride = 16u * (unsigned)(C * B);
    const int tid = threadIdx.x;
    const nt_fwd_io<X> io(a);
    const unsigned bytes = (unsigned)io.rowb;
    const long long G = gridDim.x;
    bool act[C];
    io.template cover<C>(act, B, tid);
    typename F::xv xv[C];
    typename F::wv wv[C];
    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < S; s++) nt_mbar_init1(bars + 8u * (unsigned)s);
        nt_mbar_init_fence();
#pragma unroll
        for (int s = 0; s < S; s++)
            if (blockIdx.x + s * G < io.M)
                nt_bulk_load(rows + stride * (unsigned)s, io.x + (blockIdx.x + s * G) * io.rowb,
                             bytes, bars + 8u * (unsigned)s);
    }
    /* w once: a thread's columns are the same in every row */
    nt_fwd_load_w<Wt, C, E>(wv, act, io.w, B, tid);
    __syncthreads();          /* the barriers are initialised before anyone waits */
    unsigned it = 0;
#pragma unroll 1
    for (long long row = blockIdx.x; row < io.M; row += G, it++) {
        const unsigned s = it % S, buf = rows + stride * s, bar = bars + 8u * s;
        nt_mbar_wait(bar, (it / S) & 1u);
#pragma unroll
        for (int j = 0; j < C; j++) {
            if (act[j]) nt_fwd_lds_x(xv[j], buf + 16u * (unsigned)(j * B + tid));
            else xv[j].zero();
        }
        float sum = nt_fwd_sumsq<X, C, E>(xv, act);
        /* its barrier (a warp's shuffles when B = 32): every thread has
         * read its chunks of the buffer, which may then be refilled */
        sum = nt_fwd_block_sum<B>(sum, red + 128u * (it & 1u));
        if (tid == 0 && row + S * G < io.M)
            nt_bulk_load(buf, io.x + (row + S * G) * io.rowb, bytes, bar);
        const float r = io.r_of(sum);
        if (io.rstd && tid == 0) io.rstd[row] = r;
        nt_fwd_store<X, Wt, C, E>(xv, wv, act, r, io.y + row * io.rowb, B, tid);
    }
#else
    __trap();
#endif
}

#endif
