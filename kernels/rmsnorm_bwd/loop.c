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
 * __launch_bounds__(block, max(k, 1)) leaves a thread (65536 / (k block),
 * in steps of 8, at most 255): such a kernel spills.  loop_regs is fitted
 * to nvcc --resource-usage (sm_90a, CUDA 13.0) of nt_bwd_loop at block =
 * 128 and k = 1 .. 8 (register caps 64 .. 255), chunks 1 .. 16, for x=bf16
 * with w=bf16 or f32 and x=w=f32: it refuses every one that spills and
 * keeps all but a few of those that do not (x=bf16 chunks=3 under a cap of
 * 96, say); `normtune compile lua/sweeps/rmsnorm_bwd_large_n.lua` reports
 * no spill for any config it keeps. */
#include <stdio.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/rmsnorm_bwd/plan.h"
#include "kernels/rmsnorm_bwd/tensors.h"

extern const nt_op nt_op_rmsnorm_bwd;

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

/* Registers __launch_bounds__(B, max(K, 1)) leaves a thread. */
static int64_t reg_limit(int64_t B, int64_t K) {
    int64_t limit = REGS_PER_SM / ((K > 0 ? K : 1) * B) / 8 * 8;
    return limit > REG_MAX ? REG_MAX : limit;
}

/* Registers nt_bwd_loop needs with C chunks per thread for p's dtypes:
 * 16 + 3 E, plus per chunk 6 + half its words of data (x and dy 4 each, w
 * 4 size(w) / size(x), acc and the partial read from ws E each). */
static int64_t loop_regs(const nt_problem *p, int64_t C) {
    int64_t E = nt_bwd_chunk_elems(p);
    int64_t words = 8 + 4 * nt_dtypes[p->dtype[NT_BWD_SW]].size / nt_dtypes[p->dtype[NT_BWD_SX]].size +
                    2 * E;
    return 16 + 3 * E + C * (6 + words / 2);
}

static int loop_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev, char *err,
                      size_t errlen) {
    int ok = 1;
    int64_t block = nt_params_int(p, "block", &ok), chunks = nt_params_int(p, "chunks", &ok);
    int64_t k = nt_params_int(p, "k", &ok);
    if (!ok || block < 32 || block > 1024 || block % 32 || chunks < 1 || chunks > 16 || k < 0 ||
        k > 32) {
        snprintf(err, errlen, "loop needs block a multiple of 32 in [32, 1024], chunks in [1, 16], "
                              "k in [0, 32]");
        return -1;
    }
    int64_t need = loop_regs(pr, chunks), limit = reg_limit(block, k);
    if (need > limit) {
        snprintf(err, errlen, "chunks=%lld need ~%lld registers per thread (x=%s, w=%s), block=%lld "
                 "k=%lld leave %lld (would spill)", (long long)chunks, (long long)need,
                 nt_dtypes[pr->dtype[NT_BWD_SX]].name, nt_dtypes[pr->dtype[NT_BWD_SW]].name,
                 (long long)block, (long long)k, (long long)limit);
        return -1;
    }
    if (dev && (block > dev->max_threads_per_sm ||
                (k && (k * block > dev->max_threads_per_sm || k * RED_SMEM > dev->smem_per_sm)))) {
        snprintf(err, errlen, "k=%lld blocks of %lld threads do not fit on one SM (%d threads)",
                 (long long)k, (long long)block, dev->max_threads_per_sm);
        return -1;
    }
    return 0;
}

static int loop_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev, nt_plan *pl,
                     char *err, size_t errlen) {
    if (loop_check(p, pr, dev, err, errlen)) return -1;
    int64_t block = nt_params_int(p, "block", NULL), chunks = nt_params_int(p, "chunks", NULL);
    int64_t k = nt_params_int(p, "k", NULL);
    char rest[64];
    memset(pl, 0, sizeof *pl);
    pl->nlaunch = 2;
    snprintf(rest, sizeof rest, "%lld, %lld, %lld", (long long)block, (long long)chunks,
             (long long)k);
    if (nt_bwd_kname(pl->l[0].name, sizeof pl->l[0].name, "nt_bwd_loop", pr, rest, err, errlen))
        return -1;
    pl->l[0].grid = 0;          /* the launcher sizes it: SMs x k (or as fit), at most M */
    pl->l[0].grid_y = 1;
    pl->l[0].block = (unsigned)block;
    pl->l[0].blocks_per_sm = (int)k;
    pl->l[0].pdl = 1;           /* every launch of the chain waits first */
    nt_bwd_final_launch(pr, 0, &pl->l[1]);
    pl->nparts = 0;             /* the grid's partial rows */
    if (dev) {
        /* at most as many partial rows as blocks can be resident (by
         * threads, or k) on every SM, and as rows */
        int64_t kmax = k ? k : dev->max_threads_per_sm / block;
        int64_t parts = (int64_t)dev->sms * kmax;
        if (parts > pr->M) parts = pr->M;
        pl->workspace = NT_BWD_ALIGN256((size_t)parts * (size_t)pr->N * 4);
    }
    return 0;
}

const nt_family nt_rmsnorm_bwd_loop = {
    .name = "rmsnorm_bwd.loop",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "2-kernel chain: persistent rows walked in tiles twice, fp32 partial rows, one column sum",
    .nparams = 3,
    .params = loop_params,
    .check = loop_check,
    .plan = loop_plan,
    .sources = loop_sources,
};
