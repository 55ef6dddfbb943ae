/* rmsnorm_bwd/wtma.c -- rmsnorm_bwd.wtma as data: wstage's walk of short
 * rows (`tpr` threads per row, block/tpr rows a step, a persistent grid,
 * dw partials in registers) with each step's rows brought into the
 * shared-memory ring by two bulk copies that a producer warp issues
 * `stages` steps ahead (device code and the design: wtma.cuh; the copies:
 * bulk.cuh).  sm_90 and newer.  Every N a multiple of 8 with N <= tpr *
 * chunks * E (E = 16 / size(x)), every M >= 1, every dtype combination at
 * its dtypes' precision.
 *
 * `block` counts the consumer threads; the launch has one warp more (the
 * producer), and k blocks of block + 32 threads must fit an SM.
 *
 * Registers: as wstage, a thread holds its chunks * E fp32 dw partials and
 * the step it computes, and the mbarrier waits' state.  Fitted to
 * `normtune compile` (NVRTC, sm_90a, CUDA 13.0) of tpr 32, block 128 to
 * 512, chunks 1 to 8, stages 2 and 4, k 0 and 2, in bf16, bf16 with an
 * fp32 w and fp32 (the most a config took, bf16: 61, 72, 82, 96, 113, 118,
 * 128 and 157 at 1 to 8 chunks; none spilled): WTMA_REG_BASE + chunks *
 * (E + 6) registers cover them all.  A config is refused when that
 * exceeds what __launch_bounds__(block + 32, max(k, 1)) leaves a thread
 * (it would spill), or when its ring does not fit. */
#include <stdio.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/rmsnorm_bwd/plan.h"
#include "kernels/rmsnorm_bwd/tensors.h"

extern const nt_op nt_op_rmsnorm_bwd;
extern const nt_family nt_rmsnorm_bwd_wtma;

#define WTMA_REG_BASE 48      /* registers beyond the row data (file comment) */
#define WTMA_MAX_STAGES 8
#define WTMA_STATIC_SMEM (16 * WTMA_MAX_STAGES) /* the mbarriers (at most) */

static const char *const wtma_sources[] = {
    "nt_args.h", "common.cuh", "rmsnorm_bwd/tensors.h", "rmsnorm_bwd/row.cuh",
    "rmsnorm_bwd/colsum.cuh", "bulk.cuh", "rmsnorm_bwd/wtma.cuh", NULL,
};

static const nt_param_def wtma_params[] = {
    {"tpr", NT_PARAM_INT, NULL, 1, 32, "threads per row, a power of two"},
    {"block", NT_PARAM_INT, NULL, 32, 992,
     "consumer threads per block (block/tpr rows a step), a multiple of 32; one producer warp more"},
    {"chunks", NT_PARAM_INT, NULL, 1, 8, "16-byte chunks of x per thread and row"},
    {"stages", NT_PARAM_INT, NULL, 2, WTMA_MAX_STAGES,
     "steps in the shared-memory ring, each filled by two bulk copies"},
    {"k", NT_PARAM_INT, NULL, 0, 32, "blocks per SM (register cap and grid), 0 = as many as fit"},
};

/* Dynamic shared memory: the ring, stages x [x, dy] x chunks x block
 * 16-byte slots (it holds the end-of-block dw sum afterwards), then w,
 * tpr x chunks chunks of E weights. */
static unsigned wtma_smem(const nt_problem *pr, int64_t tpr, int64_t block, int64_t chunks,
                          int64_t stages) {
    int64_t wchunk = nt_bwd_chunk_elems(pr) * (int64_t)nt_dtypes[pr->dtype[NT_BWD_SW]].size;
    return (unsigned)(stages * 2 * chunks * block * 16 + tpr * chunks * wchunk);
}

static int wtma_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                      char *err, size_t errlen) {
    int ok = 1;
    int64_t tpr = nt_params_int(p, "tpr", &ok), block = nt_params_int(p, "block", &ok);
    int64_t chunks = nt_params_int(p, "chunks", &ok), stages = nt_params_int(p, "stages", &ok);
    int64_t k = nt_params_int(p, "k", &ok);
    if (!ok || tpr < 1 || tpr > 32 || (tpr & (tpr - 1)) || block < 32 || block > 992 ||
        block % 32 || chunks < 1 || chunks > 8 || stages < 2 || stages > WTMA_MAX_STAGES ||
        k < 0 || k > 32) {
        nt_why(err, errlen, "wtma needs tpr a power of two in [1, 32], block a multiple of "
                 "32 in [32, 992], chunks in [1, 8], stages in [2, %d], k in [0, 32]",
                 WTMA_MAX_STAGES);
        return -1;
    }
    if (nt_bwd_covers(pr, tpr * chunks, "tpr*chunks", err, errlen)) return -1;
    int64_t need = WTMA_REG_BASE + chunks * (nt_bwd_chunk_elems(pr) + 6);
    if (nt_bwd_fits_regs(need, "chunks", chunks, block, 32, k, err, errlen)) return -1;
    if (!dev) return 0;
    if (nt_bwd_sm90(dev, "wtma", "the bulk copies of cp.async.bulk", err, errlen)) return -1;
    return nt_bwd_fits_sm(dev, block + 32, k,
                          wtma_smem(pr, tpr, block, chunks, stages) + WTMA_STATIC_SMEM, err,
                          errlen);
}

static int wtma_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                     nt_plan *pl, char *err, size_t errlen) {
    if (wtma_check(p, pr, dev, err, errlen)) return -1;
    int64_t tpr = nt_params_int(p, "tpr", NULL), block = nt_params_int(p, "block", NULL);
    int64_t chunks = nt_params_int(p, "chunks", NULL), stages = nt_params_int(p, "stages", NULL);
    int64_t k = nt_params_int(p, "k", NULL);
    memset(pl, 0, sizeof *pl);
    if (nt_bwd_kname_params(&pl->l[0], "nt_bwd_wtma", pr, &nt_rmsnorm_bwd_wtma, p, err, errlen))
        return -1;
    pl->l[0].smem = wtma_smem(pr, tpr, block, chunks, stages);
    /* block/tpr rows a step; the launch has the producer warp as well */
    nt_bwd_persistent_chain(pr, dev, block + 32, k, block / tpr, pl);
    return 0;
}

const nt_family nt_rmsnorm_bwd_wtma = {
    .name = "rmsnorm_bwd.wtma",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "short rows: wstage's walk with each step's rows bulk-copied by a producer warp (sm_90+)",
    .nparams = 5,
    .params = wtma_params,
    .check = wtma_check,
    .plan = wtma_plan,
    .sources = wtma_sources,
};
