/* rmsnorm_bwd/cluster.c -- rmsnorm_bwd.cluster as data: the persistent
 * backward with each row split over the S blocks of a thread block cluster
 * (sm_90 and newer; cluster.cuh).
 *
 * The 2-kernel chain nt_bwd_cluster<TX, TW, TDW, S, B, C, K> then
 * nt_colsum_final<TDW, 0>.  Launch 0's grid is left to the launcher
 * (nt_chain_grid, kernels/launch.c): whole clusters of S blocks, k blocks
 * per SM (0: as many clusters as can be resident at once), at most M
 * clusters; the final column sum adds one fp32 partial row per cluster
 * (nt_args.nparts = grid / S, nt_chain_nparts).
 *
 * Covers N <= S * block * chunks * E (E = 16 / sizeof(x)), every M >= 1 and
 * every dtype combination, at the dtypes' precision.  Refused: devices
 * below compute capability 9.0 (no clusters), k blocks per SM that cannot
 * fit, and configs whose registers would spill (cluster_regs). */
#include <stdio.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/rmsnorm_bwd/plan.h"
#include "kernels/rmsnorm_bwd/tensors.h"

extern const nt_op nt_op_rmsnorm_bwd;
extern const nt_family nt_rmsnorm_bwd_cluster;

#define SMEM_STATIC 528       /* the kernel's shared memory: reduction and slots */
#define SMEM_RESERVED 1024    /* shared memory the runtime reserves per block (sm_80+) */

static const char *const cluster_sources[] = {
    "nt_args.h", "common.cuh", "rmsnorm_bwd/tensors.h", "rmsnorm_bwd/row.cuh",
    "rmsnorm_bwd/colsum.cuh", "rmsnorm_bwd/cluster.cuh", NULL,
};

static const nt_param_def cluster_params[] = {
    {"cluster", NT_PARAM_INT, NULL, 2, 8, "blocks per cluster, sharing each row: 2, 4 or 8"},
    {"block", NT_PARAM_INT, NULL, 32, 1024, "threads per block, a multiple of 32"},
    {"chunks", NT_PARAM_INT, NULL, 1, 16, "16-byte chunks of x per thread per row"},
    {"k", NT_PARAM_INT, NULL, 0, 32, "blocks per SM, 0 = as many as fit"},
};

/* Registers a thread of nt_bwd_cluster needs for C chunks a row, and what
 * __launch_bounds__(B, max(K, 1)) leaves it (65536 / (K B) in steps of 8,
 * at most 255).  The kernel holds x, dy, w and the dw partial of its chunks
 * across the cluster barrier; ptxas keeps them unpacked, so the count does
 * not follow the bytes.  Fitted to nvcc 13.0 --resource-usage (sm_90a) of
 * block 256 with k 0, 2, 4, 8 (limits 255, 128, 64, 32), cluster 2 and 8,
 * chunks 1..16, x/w bf16/bf16, bf16/f32, f16/f16, f32/f32: the largest
 * chunks without a spill were, for 16-bit x, 9 (10 with an fp32 w), 4, 2
 * and none; for fp32 x, 13, 6, 3 and 1.  16 + 24 C (16-bit x) and 8 + 18 C
 * (fp32 x) accept exactly those (one chunk fewer for bf16 x with an fp32 w
 * at 255).  Checked with NVRTC (normtune compile, sm_90a): all 696 configs
 * this accepts of block 32..1024, k 0, 1, 2, 4, 8, cluster 2, 4, 8 and
 * chunks 1..16 for x/w bf16/bf16, bf16/f32 and f32/f32 compiled without a
 * spill (at most 249 registers); make test-compile compiles
 * lua/sweeps/rmsnorm_bwd_cluster.lua, and the library's sm_100a build may
 * allocate differently. */
static int64_t cluster_regs(const nt_problem *pr, int64_t C) {
    return nt_dtypes[pr->dtype[NT_BWD_SX]].size == 4 ? 8 + 18 * C : 16 + 24 * C;
}

static int cluster_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                         char *err, size_t errlen) {
    int ok = 1;
    int64_t S = nt_params_int(p, "cluster", &ok), B = nt_params_int(p, "block", &ok);
    int64_t C = nt_params_int(p, "chunks", &ok), K = nt_params_int(p, "k", &ok);
    if (!ok || (S != 2 && S != 4 && S != 8) || B < 32 || B > 1024 || B % 32 || C < 1 ||
        C > 16 || K < 0 || K > 32) {
        nt_why(err, errlen, "cluster needs cluster 2, 4 or 8, block a multiple of 32 in "
                              "[32, 1024], chunks in [1, 16], k in [0, 32]");
        return -1;
    }
    if (nt_bwd_sm90(dev, "cluster", "thread block clusters", err, errlen)) return -1;
    if (nt_bwd_covers(pr, S * B * C, "cluster*block*chunks", err, errlen)) return -1;
    int64_t need = cluster_regs(pr, C), limit = nt_bwd_reg_limit(B, K);
    if (need > limit) {
        nt_why(err, errlen, "chunks=%lld need ~%lld registers per thread, block=%lld k=%lld "
                 "leave %lld (would spill)", (long long)C, (long long)need, (long long)B,
                 (long long)K, (long long)limit);
        return -1;
    }
    if (dev && (B > dev->max_threads_per_sm ||
                (K && (K * B > dev->max_threads_per_sm ||
                       K * (SMEM_STATIC + SMEM_RESERVED) > dev->smem_per_sm)))) {
        nt_why(err, errlen, "k=%lld blocks of %lld threads do not fit on one SM", (long long)K,
                 (long long)B);
        return -1;
    }
    return 0;
}

static int cluster_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                        nt_plan *pl, char *err, size_t errlen) {
    if (cluster_check(p, pr, dev, err, errlen)) return -1;
    int64_t S = nt_params_int(p, "cluster", NULL), B = nt_params_int(p, "block", NULL);
    int64_t K = nt_params_int(p, "k", NULL);
    memset(pl, 0, sizeof *pl);
    if (nt_bwd_kname_params(&pl->l[0], "nt_bwd_cluster", pr, &nt_rmsnorm_bwd_cluster, p, err,
                            errlen))
        return -1;
    nt_bwd_cluster_chain(pr, dev, S, B, K, pl);
    return 0;
}

const nt_family nt_rmsnorm_bwd_cluster = {
    .name = "rmsnorm_bwd.cluster",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "2-kernel chain: persistent clusters (sm_90+) split each row, sums through DSMEM",
    .nparams = 4,
    .params = cluster_params,
    .check = cluster_check,
    .plan = cluster_plan,
    .sources = cluster_sources,
};
