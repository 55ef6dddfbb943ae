/* rmsnorm_bwd/loop.c -- the loop RMSNorm backward family as data: the
 * 2-kernel chain of loop.cuh.  Persistent blocks (k per SM, 0 = as many as
 * fit; the launcher sizes the grid, at most M) walk the rows, each row in
 * tiles of block*chunks 16-byte chunks, twice (the sums, then dx and the dw
 * partials); a final column sum over the grid's fp32 partial rows gives
 * dw.  No coverage rule: every N that is a multiple of 8 up to NT_MAX_N,
 * every M >= 1, every dtype combination, on any device (no cluster, no
 * shared memory beyond the reduction's), at the dtypes' precision (fp32
 * sums and partials: plan.tol = 0).  The op's fallback (op.c).
 *
 *   nt_bwd_loop<TX, TW, TDW, block, chunks, k>   nt_colsum_final<TDW, 0>
 *
 * Registers: a config is refused when its chunks would not fit what
 * __launch_bounds__(block, max(k, 1)) leaves a thread (reg_limit): such a
 * kernel spills.  loop_regs is fitted to the register and spill counts of
 * nvcc --resource-usage and `normtune compile` (CUDA 13.0) of nt_bwd_loop
 * for every dtype combination at block = 32, 96, 128, 256, 512 and 1024,
 * chunks 1 .. 16, k in {0, 1, 2, 3, 4, 6, 8, 16} (register caps 64 ..
 * 255): none of the 994 kernels it keeps there spills, for sm_80, sm_90a
 * or sm_100a, and it refuses few that would not on sm_90a (x=bf16
 * chunks=2 under a cap of 80, say; x=bf16 w=f32 chunks=4 under 128, which
 * spills on sm_80). */
#include <stdio.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/rmsnorm_bwd/plan.h"
#include "kernels/rmsnorm_bwd/tensors.h"

extern const nt_op nt_op_rmsnorm_bwd;
extern const nt_family nt_rmsnorm_bwd_loop;

#define REGS_PER_SM 65536     /* register file of sm_80..sm_90 (what ptxas bounds with) */
#define REG_MAX 255           /* registers a thread may have */
#define RED_SMEM 512          /* static shared bytes of the row reduction */

static const char *const loop_sources[] = {
    "nt_args.h", "common.cuh", "rmsnorm_bwd/tensors.h", "rmsnorm_bwd/row.cuh",
    "rmsnorm_bwd/colsum.cuh", "rmsnorm_bwd/loop.cuh", NULL,
};

static const nt_param_def loop_params[] = {
    {"block", NT_PARAM_INT, NULL, 32, 1024, "threads per block, a multiple of 32"},
    {"chunks", NT_PARAM_INT, NULL, 1, 16, "16-byte chunks of x per thread per tile"},
    {"k", NT_PARAM_INT, NULL, 0, 32, "blocks per SM (register cap), 0 = as many as fit"},
};

/* Registers __launch_bounds__(B, max(K, 1)) leaves a thread: ptxas fits
 * the K blocks' warps on the SM's four schedulers, each with a quarter of
 * the register file, so a thread gets 65536 / 4 / 32 / ceil(K ceil(B / 32)
 * / 4) registers, in steps of 8, at most 255 (block=96 k=3: 9 warps, 3 on
 * one scheduler, 168 registers, not 65536 / 288 = 224). */
static int64_t reg_limit(int64_t B, int64_t K) {
    int64_t warps = (K > 0 ? K : 1) * ((B + 31) / 32), per = (warps + 3) / 4;
    int64_t limit = REGS_PER_SM / 4 / 32 / per / 8 * 8;
    return limit > REG_MAX ? REG_MAX : limit;
}

/* Registers nt_bwd_loop needs with C chunks per thread for p's dtypes:
 * 24 + 2 E, plus per chunk the words it holds across the reduction (x and
 * dy 4 each, w 4 size(w) / size(x), acc E). */
static int64_t loop_regs(const nt_problem *p, int64_t C) {
    int64_t E = nt_bwd_chunk_elems(p);
    int64_t wwords = 4 * nt_dtypes[p->dtype[NT_BWD_SW]].size / nt_dtypes[p->dtype[NT_BWD_SX]].size;
    return 24 + 2 * E + C * (8 + wwords + E);
}

static int loop_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev, char *err,
                      size_t errlen) {
    int ok = 1;
    int64_t block = nt_params_int(p, "block", &ok), chunks = nt_params_int(p, "chunks", &ok);
    int64_t k = nt_params_int(p, "k", &ok);
    if (!ok || block < 32 || block > 1024 || block % 32 || chunks < 1 || chunks > 16 || k < 0 ||
        k > 32) {
        nt_why(err, errlen, "loop needs block a multiple of 32 in [32, 1024], chunks in [1, 16], "
                              "k in [0, 32]");
        return -1;
    }
    int64_t need = loop_regs(pr, chunks), limit = reg_limit(block, k);
    if (need > limit) {
        nt_why(err, errlen, "chunks=%lld need ~%lld registers per thread (x=%s, w=%s), "
                 "block=%lld k=%lld leave %lld (would spill)", (long long)chunks, (long long)need,
                 nt_dtypes[pr->dtype[NT_BWD_SX]].name, nt_dtypes[pr->dtype[NT_BWD_SW]].name,
                 (long long)block, (long long)k, (long long)limit);
        return -1;
    }
    if (dev && (block > dev->max_threads_per_sm ||
                (k && (k * block > dev->max_threads_per_sm || k * RED_SMEM > dev->smem_per_sm)))) {
        nt_why(err, errlen, "k=%lld blocks of %lld threads do not fit on one SM (%d threads)",
                 (long long)k, (long long)block, dev->max_threads_per_sm);
        return -1;
    }
    return 0;
}

static int loop_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev, nt_plan *pl,
                     char *err, size_t errlen) {
    if (loop_check(p, pr, dev, err, errlen)) return -1;
    int64_t block = nt_params_int(p, "block", NULL), k = nt_params_int(p, "k", NULL);
    memset(pl, 0, sizeof *pl);
    if (nt_bwd_kname_params(&pl->l[0], "nt_bwd_loop", pr, &nt_rmsnorm_bwd_loop, p, err, errlen))
        return -1;
    nt_bwd_persistent_chain(pr, dev, block, k, 1, pl);
    return 0;
}

const nt_family nt_rmsnorm_bwd_loop = {
    .name = "rmsnorm_bwd.loop",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "2-kernel chain: persistent rows walked in tiles twice, fp32 partial rows, a column sum",
    .nparams = 3,
    .params = loop_params,
    .check = loop_check,
    .plan = loop_plan,
    .sources = loop_sources,
    .own_n = 1,
};
