/* rmsnorm_bwd/rows.c -- rmsnorm_bwd.rows as data: persistent's pipelined
 * chain walking groups of `rows` consecutive rows, the sums of a group
 * reduced behind one barrier (device code and the design: rows.cuh).
 *
 * Two kernels, as persistent: nt_bwd_rows<TX, TW, TDW, B, C, R, S, K> on a
 * grid the launcher sizes (k blocks per SM, 0 = as many as fit, at most
 * one block a group of R rows), then nt_colsum_final over the grid's fp32
 * partial rows.  Covers N <= block * chunks * E (E = 16 / sizeof(x)), every
 * M >= 1 and every dtype combination at its dtypes' precision, on any
 * device with cp.async (sm_80 and newer; the runner's floor). */
#include <stdio.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/rmsnorm_bwd/plan.h"
#include "kernels/rmsnorm_bwd/tensors.h"

extern const nt_op nt_op_rmsnorm_bwd;
extern const nt_family nt_rmsnorm_bwd_rows;

#define ROWS_MAX 8            /* rows a group */
#define ROWS_MAX_STAGES 8     /* groups in flight a block (stages - 1 pending) */
#define RED_BYTES 512         /* static shared bytes of the reduction, per row of a group */

static const char *const rows_sources[] = {
    "nt_args.h", "common.cuh", "rmsnorm_bwd/tensors.h", "rmsnorm_bwd/row.cuh",
    "rmsnorm_bwd/colsum.cuh", "rmsnorm_bwd/rows.cuh", NULL,
};

static const nt_param_def rows_params[] = {
    {"block", NT_PARAM_INT, NULL, 32, 1024, "threads per block, a multiple of 32"},
    {"chunks", NT_PARAM_INT, NULL, 1, 16, "16-byte chunks of x per thread per row"},
    {"rows", NT_PARAM_INT, NULL, 1, ROWS_MAX, "consecutive rows a group, reduced together"},
    {"stages", NT_PARAM_INT, NULL, 2, ROWS_MAX_STAGES, "groups in flight per block (cp.async)"},
    {"k", NT_PARAM_INT, NULL, 0, 32, "blocks per SM, 0 = as many as fit"},
};

/* Dynamic shared memory: per chunk slot, stages x rows x (x, dy) 16-byte
 * chunks and the chunk's E weights. */
static unsigned rows_smem(const nt_problem *pr, int64_t block, int64_t chunks, int64_t rows,
                          int64_t stages) {
    int64_t wbytes = (int64_t)nt_bwd_chunk_elems(pr) * nt_dtypes[pr->dtype[NT_BWD_SW]].size;
    return (unsigned)((2 * stages * rows * 16 + wbytes) * block * chunks);
}

static int rows_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                      char *err, size_t errlen) {
    int ok = 1;
    int64_t block = nt_params_int(p, "block", &ok), chunks = nt_params_int(p, "chunks", &ok);
    int64_t rows = nt_params_int(p, "rows", &ok), stages = nt_params_int(p, "stages", &ok);
    int64_t k = nt_params_int(p, "k", &ok);
    if (!ok || block < 32 || block > 1024 || block % 32 || chunks < 1 || chunks > 16 ||
        rows < 1 || rows > ROWS_MAX || stages < 2 || stages > ROWS_MAX_STAGES || k < 0 ||
        k > 32) {
        nt_why(err, errlen, "rows needs block a multiple of 32 in [32, 1024], chunks in "
                 "[1, 16], rows in [1, %d], stages in [2, %d], k in [0, 32]", ROWS_MAX,
                 ROWS_MAX_STAGES);
        return -1;
    }
    if (nt_bwd_covers(pr, block * chunks, "block*chunks", err, errlen)) return -1;
    unsigned smem = rows_smem(pr, block, chunks, rows, stages) + RED_BYTES * (unsigned)rows;
    return dev ? nt_bwd_fits_sm(dev, block, k, smem, err, errlen) : 0;
}

static int rows_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                     nt_plan *pl, char *err, size_t errlen) {
    if (rows_check(p, pr, dev, err, errlen)) return -1;
    int64_t block = nt_params_int(p, "block", NULL), chunks = nt_params_int(p, "chunks", NULL);
    int64_t rows = nt_params_int(p, "rows", NULL), stages = nt_params_int(p, "stages", NULL);
    int64_t k = nt_params_int(p, "k", NULL);
    memset(pl, 0, sizeof *pl);
    if (nt_bwd_kname_params(&pl->l[0], "nt_bwd_rows", pr, &nt_rmsnorm_bwd_rows, p, err, errlen))
        return -1;
    pl->l[0].smem = rows_smem(pr, block, chunks, rows, stages);
    nt_bwd_persistent_chain(pr, dev, block, k, rows, pl);
    return 0;
}

const nt_family nt_rmsnorm_bwd_rows = {
    .name = "rmsnorm_bwd.rows",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "persistent's pipeline over groups of rows, each group's sums behind one barrier",
    .nparams = 5,
    .params = rows_params,
    .check = rows_check,
    .plan = rows_plan,
    .sources = rows_sources,
};
