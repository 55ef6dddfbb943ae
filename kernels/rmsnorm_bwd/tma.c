/* rmsnorm_bwd/tma.c -- rmsnorm_bwd.tma as data: held's chain (persistent
 * rows, each row read from shared memory once and held in registers, dw
 * partials in registers, one column sum) with each row of x and dy brought
 * into shared memory by one bulk copy of thread 0, `stages` rows ahead
 * (device code and the design: tma.cuh; the copies: bulk.cuh).  sm_90 and
 * newer.  Every N a multiple of 8 with N <= block * chunks * E (E = 16 /
 * size(x)), every M >= 1, every dtype combination at its dtypes'
 * precision (the same bits as persistent).
 *
 * Parameters: persistent's (block, chunks, stages, k), stages counting the
 * rows a block has in flight (1: a row is asked for only once the one
 * before is done).  Shared memory: stages x [x, dy] x chunks x block
 * 16-byte slots, and the static mbarriers and reduction buffer.
 *
 * Registers: a thread holds a row's x, dy and w as fp32 (3 E a chunk), its
 * dw partials (E a chunk) and w as loaded.  Fitted to `normtune compile`
 * (NVRTC, sm_90a, CUDA 13.0) of block 128, chunks 1 to 8, k 0, in bf16, bf16
 * with an fp32 w and fp32: TMA_REG_BASE + chunks * (4 E + 1) registers
 * cover every config that did not spill (bf16: 58, 90, 124, 158, 189, 225
 * and 252 at 1 to 7 chunks; 8 spilled at 255); a config is refused when
 * that exceeds what __launch_bounds__(block, max(k, 1)) leaves a thread. */
#include <stdio.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/rmsnorm_bwd/plan.h"
#include "kernels/rmsnorm_bwd/tensors.h"

extern const nt_op nt_op_rmsnorm_bwd;
extern const nt_family nt_rmsnorm_bwd_tma;

#define TMA_MAX_STAGES 8
#define TMA_REG_BASE 28       /* registers beyond the row data (file comment) */
#define TMA_STATIC_SMEM (512 + 8 * TMA_MAX_STAGES) /* reduction buffer, mbarriers (at most) */

static const char *const tma_sources[] = {
    "nt_args.h", "common.cuh", "rmsnorm_bwd/tensors.h", "rmsnorm_bwd/row.cuh",
    "rmsnorm_bwd/colsum.cuh", "rmsnorm_bwd/held.cuh", "bulk.cuh", "rmsnorm_bwd/tma.cuh", NULL,
};

static const nt_param_def tma_params[] = {
    {"block", NT_PARAM_INT, NULL, 32, 1024, "threads per block, a multiple of 32"},
    {"chunks", NT_PARAM_INT, NULL, 1, 8, "16-byte chunks of x per thread per row"},
    {"stages", NT_PARAM_INT, NULL, 1, TMA_MAX_STAGES,
     "rows in flight per block, each in a shared-memory buffer a bulk copy fills"},
    {"k", NT_PARAM_INT, NULL, 0, 32, "blocks per SM, 0 = as many as fit"},
};

/* Dynamic shared memory: stages buffers of a row of x and one of dy. */
static unsigned tma_smem(int64_t block, int64_t chunks, int64_t stages) {
    return (unsigned)(stages * 2 * 16 * block * chunks);
}

static int tma_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                     char *err, size_t errlen) {
    int ok = 1;
    int64_t block = nt_params_int(p, "block", &ok), chunks = nt_params_int(p, "chunks", &ok);
    int64_t stages = nt_params_int(p, "stages", &ok), k = nt_params_int(p, "k", &ok);
    if (!ok || block < 32 || block > 1024 || block % 32 || chunks < 1 || chunks > 8 ||
        stages < 1 || stages > TMA_MAX_STAGES || k < 0 || k > 32) {
        nt_why(err, errlen, "tma needs block a multiple of 32 in [32, 1024], chunks in [1, 8], "
                 "stages in [1, %d], k in [0, 32]", TMA_MAX_STAGES);
        return -1;
    }
    if (nt_bwd_covers(pr, block * chunks, "block*chunks", err, errlen)) return -1;
    int64_t need = TMA_REG_BASE + chunks * (4 * nt_bwd_chunk_elems(pr) + 1);
    if (nt_bwd_fits_regs(need, "chunks", chunks, block, 0, k, err, errlen)) return -1;
    if (!dev) return 0;
    if (nt_bwd_sm90(dev, "tma", "the bulk copies of cp.async.bulk", err, errlen)) return -1;
    return nt_bwd_fits_sm(dev, block, k, tma_smem(block, chunks, stages) + TMA_STATIC_SMEM, err,
                          errlen);
}

static int tma_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                    nt_plan *pl, char *err, size_t errlen) {
    if (tma_check(p, pr, dev, err, errlen)) return -1;
    int64_t block = nt_params_int(p, "block", NULL), chunks = nt_params_int(p, "chunks", NULL);
    int64_t stages = nt_params_int(p, "stages", NULL), k = nt_params_int(p, "k", NULL);
    memset(pl, 0, sizeof *pl);
    if (nt_bwd_kname_params(&pl->l[0], "nt_bwd_tma", pr, &nt_rmsnorm_bwd_tma, p, err, errlen))
        return -1;
    pl->l[0].smem = tma_smem(block, chunks, stages);
    nt_bwd_persistent_chain(pr, dev, block, k, 1, pl);
    return 0;
}

const nt_family nt_rmsnorm_bwd_tma = {
    .name = "rmsnorm_bwd.tma",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "held's rows brought into shared memory by bulk copies, stages rows ahead (sm_90+)",
    .nparams = 4,
    .params = tma_params,
    .check = tma_check,
    .plan = tma_plan,
    .sources = tma_sources,
};
