/* rmsnorm_bwd/cstage.c -- rmsnorm_bwd.cstage as data: the cluster backward
 * (each row split over the S blocks of a thread block cluster, sm_90 and
 * newer) with persistent's cp.async pipeline (device code and the design:
 * cstage.cuh).
 *
 * The 2-kernel chain nt_bwd_cstage<TX, TW, TDW, S, B, C, P, K> then
 * nt_colsum_final<TDW, 0>.  Launch 0's grid is left to the launcher
 * (nt_chain_grid, kernels/launch.c): whole clusters of S blocks, k blocks
 * per SM (0: as many clusters as can be resident at once), at most M
 * clusters; the final column sum adds one fp32 partial row per cluster.
 *
 * Covers N <= S * block * chunks * E (E = 16 / sizeof(x)), every M >= 1 and
 * every dtype combination, at the dtypes' precision (fp32 sums and
 * partials).  Refused: devices below compute capability 9.0 (no clusters),
 * shared memory or k blocks per SM that do not fit, and configs whose
 * registers would spill (cstage_regs). */
#include <stdio.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/rmsnorm_bwd/plan.h"
#include "kernels/rmsnorm_bwd/tensors.h"

extern const nt_op nt_op_rmsnorm_bwd;
extern const nt_family nt_rmsnorm_bwd_cstage;

#define SMEM_STATIC 544       /* the kernel's static shared memory: reduction and slots */

static const char *const cstage_sources[] = {
    "nt_args.h", "common.cuh", "rmsnorm_bwd/tensors.h", "rmsnorm_bwd/row.cuh",
    "rmsnorm_bwd/colsum.cuh", "rmsnorm_bwd/cluster.cuh", "rmsnorm_bwd/cstage.cuh", NULL,
};

static const nt_param_def cstage_params[] = {
    {"cluster", NT_PARAM_INT, NULL, 2, 8, "blocks per cluster, sharing each row: 2, 4 or 8"},
    {"block", NT_PARAM_INT, NULL, 32, 1024, "threads per block, a multiple of 32"},
    {"chunks", NT_PARAM_INT, NULL, 1, 16, "16-byte chunks of x per thread per row"},
    {"stages", NT_PARAM_INT, NULL, 2, 4, "rows in flight per block (cp.async pipeline)"},
    {"k", NT_PARAM_INT, NULL, 0, 32, "blocks per SM, 0 = as many as fit"},
};

/* Dynamic shared memory: per chunk slot, stages x (x, dy) 16-byte chunks
 * and the chunk's E weights. */
static unsigned cstage_smem(const nt_problem *pr, int64_t block, int64_t chunks, int64_t stages) {
    int64_t wbytes = (int64_t)nt_bwd_chunk_elems(pr) * nt_dtypes[pr->dtype[NT_BWD_SW]].size;
    return (unsigned)((2 * stages * 16 + wbytes) * block * chunks);
}

/* Registers a thread of nt_bwd_cstage needs for C chunks a row: the dw
 * partial (C x E floats) stays in registers across the cluster's rows,
 * while x, dy and w are read from shared memory a chunk at a time.
 * Fitted to NVRTC 13.0 (normtune compile, sm_90a) of cluster 2 and 8,
 * block 128..1024, chunks 1..16, stages 2 and 3 and k 0, 1, 2, 4 for
 * x/w bf16/bf16, bf16/f32 and f32/f32 (2880 configs that fit an SM): the
 * largest chunks without a spill at a bound of 64 and 128 registers were 4
 * (5 for some) and 10 (11 for some) for 16-bit x, 7 and 15 for fp32 x; at
 * 32 registers (k x block = 2048) every config spilled.  16 + 11 C and
 * 8 + 8 C, with at least 64 registers, accept 1760 of them, none that
 * spills.  The shipped kernel (its barrier split, after the fit) compiled
 * without a spill at the rule's edges (54 configs) and in all 360 kernel
 * sets of the default sweep's cstage variants. */
#define REG_MIN 64            /* below this bound every config spills */
static int64_t cstage_regs(const nt_problem *pr, int64_t C) {
    return nt_dtypes[pr->dtype[NT_BWD_SX]].size == 4 ? 8 + 8 * C : 16 + 11 * C;
}

static int cstage_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                        char *err, size_t errlen) {
    int ok = 1;
    int64_t S = nt_params_int(p, "cluster", &ok), B = nt_params_int(p, "block", &ok);
    int64_t C = nt_params_int(p, "chunks", &ok), P = nt_params_int(p, "stages", &ok);
    int64_t K = nt_params_int(p, "k", &ok);
    if (!ok || (S != 2 && S != 4 && S != 8) || B < 32 || B > 1024 || B % 32 || C < 1 ||
        C > 16 || P < 2 || P > 4 || K < 0 || K > 32) {
        nt_why(err, errlen, "cstage needs cluster 2, 4 or 8, block a multiple of 32 in "
                              "[32, 1024], chunks in [1, 16], stages in [2, 4], k in [0, 32]");
        return -1;
    }
    if (nt_bwd_sm90(dev, "cstage", "thread block clusters", err, errlen)) return -1;
    if (nt_bwd_covers(pr, S * B * C, "cluster*block*chunks", err, errlen)) return -1;
    int64_t need = cstage_regs(pr, C), limit = nt_bwd_reg_limit(B, K);
    if (need > limit || limit < REG_MIN) {
        nt_why(err, errlen, "chunks=%lld need ~%lld registers per thread, block=%lld k=%lld "
                 "leave %lld (would spill)", (long long)C, (long long)need, (long long)B,
                 (long long)K, (long long)limit);
        return -1;
    }
    return dev ? nt_bwd_fits_sm(dev, B, K, cstage_smem(pr, B, C, P) + SMEM_STATIC, err, errlen)
               : 0;
}

static int cstage_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                       nt_plan *pl, char *err, size_t errlen) {
    if (cstage_check(p, pr, dev, err, errlen)) return -1;
    int64_t S = nt_params_int(p, "cluster", NULL), B = nt_params_int(p, "block", NULL);
    int64_t C = nt_params_int(p, "chunks", NULL), P = nt_params_int(p, "stages", NULL);
    int64_t K = nt_params_int(p, "k", NULL);
    memset(pl, 0, sizeof *pl);
    if (nt_bwd_kname_params(&pl->l[0], "nt_bwd_cstage", pr, &nt_rmsnorm_bwd_cstage, p, err,
                            errlen))
        return -1;
    pl->l[0].smem = cstage_smem(pr, B, C, P);
    nt_bwd_cluster_chain(pr, dev, S, B, K, pl);
    return 0;
}

const nt_family nt_rmsnorm_bwd_cstage = {
    .name = "rmsnorm_bwd.cstage",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "2-kernel chain: persistent clusters (sm_90+) split each row, pipelined through "
           "shared memory",
    .nparams = 5,
    .params = cstage_params,
    .check = cstage_check,
    .plan = cstage_plan,
    .sources = cstage_sources,
};
