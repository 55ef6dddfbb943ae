/* rmsnorm_bwd/pcluster.cuh -- the aligned persistent backward with its dw
 * partials added over a thread block cluster (sm_90 and newer):
 * nt_bwd_pcluster, then nt_colsum_final<TDW, 0>.  See row.cuh for the
 * math and aligned.cuh for the rows (nt_bwd_aligned_rows).
 *
 * Why: at few rows each block of persistent or aligned walks one row or
 * two, yet writes a whole fp32 partial row of dw, which the final column
 * sum reads again: at 256 x 8192 bf16 that is 8 MB written and read beside
 * the 12.6 MB the op itself moves.  Here the Q blocks of a cluster (2, 4
 * or 8, on Q SMs) each walk their rows as aligned does, then put their
 * partials in shared memory; after a cluster barrier block r adds slice r
 * of the columns over the Q blocks in rank order (distributed shared
 * memory) and writes it into the cluster's partial row: Q times fewer
 * partial rows, and the adds in a fixed order, so the same bits every run.
 * A second cluster barrier keeps every block resident until no block can
 * still read its shared memory.
 *
 *   nt_bwd_pcluster<TX, TW, TDW, Q, B, C, S, K>
 *       grid = whole clusters of Q blocks, at most one block per row (the
 *       launcher: nt_chain_grid with grid_rows = Q), block b walking rows
 *       b, b + G, ...; nt_colsum_final adds the grid / Q partial rows.
 *
 * Built for an arch without clusters (the library's sm_80 code) the kernel
 * traps; the family's check refuses such a device first. */
#ifndef NT_RMSNORM_BWD_PCLUSTER_CUH
#define NT_RMSNORM_BWD_PCLUSTER_CUH

#include "rmsnorm_bwd/aligned.cuh"

template <class TX, class TW, class TDW, int Q, int B, int C, int S, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_bwd_pcluster(nt_args a) {
    static_assert(Q == 2 || Q == 4 || Q == 8, "clusters of 2, 4 or 8 blocks");
    nt_wait_prev(); /* before any global access: launched early too (families.c) */
    nt_bwd_aligned_rows<TX, TW, TDW, B, C, S, Q>(a);
}

#endif
