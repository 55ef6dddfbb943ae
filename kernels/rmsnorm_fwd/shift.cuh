/* rmsnorm_fwd/shift.cuh -- the shifted frame of the aligned forward
 * families (awarp, arow; rmsnorm_bwd/aligned.cuh does the same for the
 * backward).
 *
 * Row i of x starts i * nvec chunks into the tensor.  When nvec is not a
 * multiple of 8 (N = 8 mod 16 in bf16, say), most rows start part way into
 * a 128-byte line, and a warp whose 32 lanes read 32 consecutive chunks
 * touches five lines instead of four: every load and store instruction of
 * the row pays for a line more.  The aligned families read row i in a
 * frame shifted back by h = (i * nvec) mod 8 chunks: slot j of lane l
 * covers vector j*T + l - h of the row, so each group of 8 slots sits on
 * one line (with x and y 128-byte aligned, as cudaMalloc returns them;
 * otherwise the frame is only slower).  The first h slots and those past
 * the row hold nothing.  The shift depends on the row index only, never on
 * an address, so the results are the same bits for every allocation.  A
 * row whose shifted frame would not fit the T * C slots (nvec + h > T * C)
 * keeps h = 0: the family's check asks only N <= T * C * E, as the
 * unshifted families do.  w is read in the row's frame too (its chunk of
 * vector v for vector v of x), so the aligned families load it per row, as
 * warp and row do.  (Rows with w loaded once for several rows cannot
 * shift: a thread's columns would change from row to row.  A rows family
 * loading w per row in each row's frame lost to rows at every shape
 * measured.) */
#ifndef NT_RMSNORM_FWD_SHIFT_CUH
#define NT_RMSNORM_FWD_SHIFT_CUH

#include "rmsnorm_fwd/io.cuh"

/* Row `row`'s shift h for T lanes of C slots each, and act[j]: slot j of
 * lane l holds a vector of the row (and the row exists: ok). */
template <int C, class X>
__device__ __forceinline__ int nt_fwd_shift(bool *act, const nt_fwd_io<X> &io, long long row,
                                            bool ok, int T, int l) {
    int h = (int)((row * (long long)io.nvec) & 7);
    if (io.nvec + h > T * C) h = 0;
#pragma unroll
    for (int j = 0; j < C; j++) {
        const int v = j * T + l - h;
        act[j] = ok && v >= 0 && v < io.nvec;
    }
    return h;
}

#endif
