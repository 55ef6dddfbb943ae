/* rmsnorm_bwd/wstage.c -- rmsnorm_bwd.wstage as data: warp's walk of short
 * rows (`tpr` threads per row, block/tpr rows a step, a persistent grid,
 * dw partials in registers) with the next `stages` - 1 steps' rows copied
 * into shared memory by cp.async while a step is computed (device code and
 * the design: wstage.cuh).  Every N a multiple of 8 with N <= tpr * chunks
 * * E (E = 16 / size(x): 8 for bf16 and f16, 4 for f32), every M >= 1,
 * every dtype combination at its dtypes' precision.
 *
 * Registers: x and dy pass through shared memory, and so does w (one copy
 * a block), so a thread holds chunks * E fp32 partials of dw and the
 * chunks of the step it computes.  Fitted to `normtune compile` (NVRTC,
 * sm_90a, CUDA 13.0) of every config of tpr, block 128 to 512, chunks 1 to
 * 8, stages 2 and 3 and k 0 to 8 in the three dtype combinations of x:
 * WSTAGE_REG_BASE + chunks * (E + 4) registers never spill (fewer did, by
 * 4 to 16 bytes, at chunks 1 and 2).  A config is refused when that
 * exceeds what __launch_bounds__(block, max(k, 1)) leaves a
 * thread (it would spill), or when its ring does not fit the SM. */
#include <stdio.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/rmsnorm_bwd/plan.h"
#include "kernels/rmsnorm_bwd/tensors.h"

extern const nt_op nt_op_rmsnorm_bwd;
extern const nt_family nt_rmsnorm_bwd_wstage;

#define WSTAGE_REG_BASE 44    /* registers beyond the row data (file comment) */

static const char *const wstage_sources[] = {
    "nt_args.h", "common.cuh", "rmsnorm_bwd/tensors.h", "rmsnorm_bwd/row.cuh",
    "rmsnorm_bwd/colsum.cuh", "rmsnorm_bwd/wstage.cuh", NULL,
};

static const nt_param_def wstage_params[] = {
    {"tpr", NT_PARAM_INT, NULL, 1, 32, "threads per row, a power of two"},
    {"block", NT_PARAM_INT, NULL, 32, 1024, "threads per block (block/tpr rows a step), a multiple of 32"},
    {"chunks", NT_PARAM_INT, NULL, 1, 8, "16-byte chunks of x per thread and row"},
    {"stages", NT_PARAM_INT, NULL, 2, 8, "steps in the shared-memory ring (stages - 1 copied ahead)"},
    {"k", NT_PARAM_INT, NULL, 0, 32, "blocks per SM (register cap and grid), 0 = as many as fit"},
};

/* Dynamic shared memory: the ring, stages x [x, dy] x chunks x block
 * 16-byte slots (it holds the end-of-block dw sum afterwards), then w,
 * tpr x chunks chunks of E weights. */
static unsigned wstage_smem(const nt_problem *pr, int64_t tpr, int64_t block, int64_t chunks,
                            int64_t stages) {
    int64_t wchunk = nt_bwd_chunk_elems(pr) * (int64_t)nt_dtypes[pr->dtype[NT_BWD_SW]].size;
    return (unsigned)(stages * 2 * chunks * block * 16 + tpr * chunks * wchunk);
}

static int64_t wstage_regs(const nt_problem *pr, int64_t chunks) {
    return WSTAGE_REG_BASE + chunks * (nt_bwd_chunk_elems(pr) + 4);
}

static int wstage_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                        char *err, size_t errlen) {
    int ok = 1;
    int64_t tpr = nt_params_int(p, "tpr", &ok), block = nt_params_int(p, "block", &ok);
    int64_t chunks = nt_params_int(p, "chunks", &ok), stages = nt_params_int(p, "stages", &ok);
    int64_t k = nt_params_int(p, "k", &ok);
    if (!ok || tpr < 1 || tpr > 32 || (tpr & (tpr - 1)) || block < 32 || block > 1024 ||
        block % 32 || chunks < 1 || chunks > 8 || stages < 2 || stages > 8 || k < 0 || k > 32) {
        nt_why(err, errlen, "wstage needs tpr a power of two in [1, 32], block a multiple of "
                              "32 in [32, 1024], chunks in [1, 8], stages in [2, 8], k in [0, 32]");
        return -1;
    }
    if (nt_bwd_covers(pr, tpr * chunks, "tpr*chunks", err, errlen)) return -1;
    if (nt_bwd_fits_regs(wstage_regs(pr, chunks), "chunks", chunks, block, 0, k, err, errlen))
        return -1;
    return dev ? nt_bwd_fits_sm(dev, block, k, wstage_smem(pr, tpr, block, chunks, stages),
                                         err, errlen)
               : 0;
}

static int wstage_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                       nt_plan *pl, char *err, size_t errlen) {
    if (wstage_check(p, pr, dev, err, errlen)) return -1;
    int64_t tpr = nt_params_int(p, "tpr", NULL), block = nt_params_int(p, "block", NULL);
    int64_t chunks = nt_params_int(p, "chunks", NULL), stages = nt_params_int(p, "stages", NULL);
    int64_t k = nt_params_int(p, "k", NULL);
    memset(pl, 0, sizeof *pl);
    if (nt_bwd_kname_params(&pl->l[0], "nt_bwd_wstage", pr, &nt_rmsnorm_bwd_wstage, p, err,
                            errlen))
        return -1;
    pl->l[0].smem = wstage_smem(pr, tpr, block, chunks, stages);
    nt_bwd_persistent_chain(pr, dev, block, k, block / tpr, pl);
    return 0;
}

const nt_family nt_rmsnorm_bwd_wstage = {
    .name = "rmsnorm_bwd.wstage",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "short rows: warp's walk with the next steps' rows copied ahead into shared memory",
    .nparams = 5,
    .params = wstage_params,
    .check = wstage_check,
    .plan = wstage_plan,
    .sources = wstage_sources,
};
