/* rmsnorm_bwd/fused.c -- rmsnorm_bwd.fused as data: the persistent
 * backward and its column sum in one launch (device code and the design:
 * fused.cuh).
 *
 * One kernel, nt_bwd_fused<TX, TW, TDW, B, C, S, K>: a persistent grid the
 * launcher sizes (k blocks per SM, 0 = as many as fit, at most M), launched
 * cooperatively so that every block is resident at once; the blocks walk
 * the rows with an S-row cp.async pipeline, meet at a grid barrier, then
 * sum the grid's fp32 partial rows into dw in a fixed order.  The barrier
 * is the driver's word for cooperative launches: the workspace holds only
 * the partial rows.
 *
 * Covers N <= block * chunks * E (E = 16 / sizeof(x)), every M >= 1 and
 * every dtype combination at its dtypes' precision (fp32 partials and
 * sums), on any device with cooperative launch (compute capability 6.0 and
 * newer; the fences need 7.0). */
#include <stdio.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/rmsnorm_bwd/plan.h"
#include "kernels/rmsnorm_bwd/tensors.h"

extern const nt_op nt_op_rmsnorm_bwd;
extern const nt_family nt_rmsnorm_bwd_fused;

#define RED_SMEM 512          /* static shared bytes of the row reduction */

static const char *const fused_sources[] = {
    "nt_args.h", "common.cuh", "rmsnorm_bwd/tensors.h", "rmsnorm_bwd/row.cuh",
    "rmsnorm_bwd/fused.cuh", NULL,
};

static const nt_param_def fused_params[] = {
    {"block", NT_PARAM_INT, NULL, 32, 1024, "threads per block, a multiple of 32"},
    {"chunks", NT_PARAM_INT, NULL, 1, 16, "16-byte chunks of x per thread per row"},
    {"stages", NT_PARAM_INT, NULL, 2, 4, "rows in flight per block (cp.async pipeline)"},
    {"k", NT_PARAM_INT, NULL, 0, 32, "blocks per SM, 0 = as many as fit"},
};

/* Dynamic shared memory: per chunk slot, stages x (x, dy) 16-byte chunks
 * and the chunk's E weights. */
static unsigned fused_smem(const nt_problem *pr, int64_t block, int64_t chunks, int64_t stages) {
    int64_t wbytes = (int64_t)nt_bwd_chunk_elems(pr) * nt_dtypes[pr->dtype[NT_BWD_SW]].size;
    return (unsigned)((2 * stages * 16 + wbytes) * block * chunks);
}


static int fused_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                       char *err, size_t errlen) {
    int ok = 1;
    int64_t block = nt_params_int(p, "block", &ok), chunks = nt_params_int(p, "chunks", &ok);
    int64_t stages = nt_params_int(p, "stages", &ok), k = nt_params_int(p, "k", &ok);
    if (!ok || block < 32 || block > 1024 || block % 32 || chunks < 1 || chunks > 16 ||
        stages < 2 || stages > 4 || k < 0 || k > 32) {
        nt_why(err, errlen, "fused needs block a multiple of 32 in [32, 1024], "
                              "chunks in [1, 16], stages in [2, 4], k in [0, 32]");
        return -1;
    }
    if (nt_bwd_covers(pr, block * chunks, "block*chunks", err, errlen)) return -1;
    if (dev && dev->cc_major < 7) {
        nt_why(err, errlen, "fused needs compute capability 7.0 or newer (its grid barrier), "
                 "the device has %d.%d", dev->cc_major, dev->cc_minor);
        return -1;
    }
    return dev ? nt_bwd_fits_sm(dev, block, k, fused_smem(pr, block, chunks, stages) + RED_SMEM,
                                err, errlen)
               : 0;
}

static int fused_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                      nt_plan *pl, char *err, size_t errlen) {
    if (fused_check(p, pr, dev, err, errlen)) return -1;
    int64_t block = nt_params_int(p, "block", NULL), chunks = nt_params_int(p, "chunks", NULL);
    int64_t stages = nt_params_int(p, "stages", NULL), k = nt_params_int(p, "k", NULL);
    memset(pl, 0, sizeof *pl);
    if (nt_bwd_kname_params(&pl->l[0], "nt_bwd_fused", pr, &nt_rmsnorm_bwd_fused, p, err, errlen))
        return -1;
    pl->nlaunch = 1;
    pl->l[0].grid = 0;          /* the launcher sizes it: k (or what fits) per SM, at most M */
    pl->l[0].grid_y = 1;
    pl->l[0].block = (unsigned)block;
    pl->l[0].smem = fused_smem(pr, block, chunks, stages);
    pl->l[0].blocks_per_sm = (int)k;
    pl->l[0].pdl = 1;           /* it waits for the previous kernel first */
    pl->l[0].coop = 1;          /* the grid barrier needs every block resident */
    pl->nparts = 0;
    if (dev) {
        int64_t kmax = k ? k : dev->max_threads_per_sm / block;
        int64_t parts = (int64_t)dev->sms * kmax;
        if (parts > pr->M) parts = pr->M;
        pl->workspace = NT_BWD_ALIGN256((size_t)parts * (size_t)pr->N * 4);
    }
    return 0;
}

const nt_family nt_rmsnorm_bwd_fused = {
    .name = "rmsnorm_bwd.fused",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "one launch: persistent rows, a grid barrier, then dw's column sum in fixed order",
    .nparams = 4,
    .params = fused_params,
    .check = fused_check,
    .plan = fused_plan,
    .sources = fused_sources,
};
