/* rmsnorm_bwd/warp.c -- rmsnorm_bwd.warp as data: `tpr` threads per row,
 * block/tpr rows a block at a time, `rows` such rows per thread in flight,
 * a persistent grid and dw partials in registers (device code and the
 * design: warp.cuh).  The family for short rows: every N a multiple of 8
 * with N <= tpr * chunks * E (E = 16 / size(x): 8 for bf16 and f16, 4 for
 * f32), every M >= 1, every dtype combination at its dtypes' precision.
 *
 * Registers: a thread holds rows * chunks chunks of x and of dy, and ptxas
 * keeps their unpacked floats for the second pass over a row as well; it
 * holds chunks chunks of w and chunks * E fp32 partials of dw.  Fitted to
 * nvcc --resource-usage (sm_90a, CUDA 13.0) of 15 instantiations from
 * 66 to 250 registers: about WARP_REG_BASE + rows * chunks * (E + 5) +
 * chunks * (E + 6), never below the measured count.  A config is refused
 * when that exceeds what __launch_bounds__(block, max(k, 1)) leaves a
 * thread: such a kernel spills (the 3 of the 15 that did were refused). */
#include <stdio.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/rmsnorm_bwd/plan.h"
#include "kernels/rmsnorm_bwd/tensors.h"

extern const nt_op nt_op_rmsnorm_bwd;
extern const nt_family nt_rmsnorm_bwd_warp;

#define WARP_REG_BASE 42      /* registers beyond the row data (file comment) */

static const char *const warp_sources[] = {
    "nt_args.h", "common.cuh", "rmsnorm_bwd/tensors.h", "rmsnorm_bwd/row.cuh",
    "rmsnorm_bwd/colsum.cuh", "rmsnorm_bwd/warp.cuh", NULL,
};

static const nt_param_def warp_params[] = {
    {"tpr", NT_PARAM_INT, NULL, 1, 32, "threads per row, a power of two"},
    {"block", NT_PARAM_INT, NULL, 32, 1024, "threads per block (block/tpr rows at a time), a multiple of 32"},
    {"chunks", NT_PARAM_INT, NULL, 1, 8, "16-byte chunks of x per thread and row"},
    {"rows", NT_PARAM_INT, NULL, 1, 8, "rows per thread loaded before any is reduced"},
    {"k", NT_PARAM_INT, NULL, 0, 32, "blocks per SM (register cap and grid), 0 = as many as fit"},
};

/* Dynamic shared memory of the end-of-block dw sum: B/32 warps x the
 * tpr * chunks * E columns of a group, fp32. */
static unsigned warp_smem(const nt_problem *pr, int64_t tpr, int64_t block, int64_t chunks) {
    return (unsigned)(block / 32 * tpr * chunks * nt_bwd_chunk_elems(pr) * 4);
}

/* Registers per thread the row data of a config takes (see the file
 * comment); nt_bwd_reg_limit says what __launch_bounds__(block, max(k, 1))
 * leaves. */
static int64_t warp_regs(const nt_problem *pr, int64_t chunks, int64_t rows) {
    int64_t E = nt_bwd_chunk_elems(pr);
    return WARP_REG_BASE + rows * chunks * (E + 5) + chunks * (E + 6);
}

static int warp_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev, char *err,
                      size_t errlen) {
    int ok = 1;
    int64_t tpr = nt_params_int(p, "tpr", &ok), block = nt_params_int(p, "block", &ok);
    int64_t chunks = nt_params_int(p, "chunks", &ok), rows = nt_params_int(p, "rows", &ok);
    int64_t k = nt_params_int(p, "k", &ok);
    if (!ok || tpr < 1 || tpr > 32 || (tpr & (tpr - 1)) || block < 32 || block > 1024 ||
        block % 32 || chunks < 1 || chunks > 8 || rows < 1 || rows > 8 || k < 0 || k > 32) {
        nt_why(err, errlen, "warp needs tpr a power of two in [1, 32], block a multiple of 32 "
                              "in [32, 1024], chunks in [1, 8], rows in [1, 8], k in [0, 32]");
        return -1;
    }
    if (nt_bwd_covers(pr, tpr * chunks, "tpr*chunks", err, errlen)) return -1;
    if (nt_bwd_fits_regs(warp_regs(pr, chunks, rows), "rows*chunks", rows * chunks, block, 0, k,
                         err, errlen))
        return -1;
    return dev ? nt_bwd_fits_sm(dev, block, k, warp_smem(pr, tpr, block, chunks), err, errlen) : 0;
}

static int warp_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev, nt_plan *pl,
                     char *err, size_t errlen) {
    if (warp_check(p, pr, dev, err, errlen)) return -1;
    int64_t tpr = nt_params_int(p, "tpr", NULL), block = nt_params_int(p, "block", NULL);
    int64_t chunks = nt_params_int(p, "chunks", NULL), rows = nt_params_int(p, "rows", NULL);
    int64_t k = nt_params_int(p, "k", NULL);
    memset(pl, 0, sizeof *pl);
    if (nt_bwd_kname_params(&pl->l[0], "nt_bwd_warp", pr, &nt_rmsnorm_bwd_warp, p, err, errlen))
        return -1;
    pl->l[0].smem = warp_smem(pr, tpr, block, chunks);
    nt_bwd_persistent_chain(pr, dev, block, k, block / tpr * rows, pl);
    return 0;
}

const nt_family nt_rmsnorm_bwd_warp = {
    .name = "rmsnorm_bwd.warp",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "short rows: tpr threads per row, a lane butterfly, dw partials in registers",
    .nparams = 5,
    .params = warp_params,
    .check = warp_check,
    .plan = warp_plan,
    .sources = warp_sources,
};
