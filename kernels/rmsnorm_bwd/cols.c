/* rmsnorm_bwd/cols.c -- the cols RMSNorm backward family as data: the
 * 2-kernel chain of cols.cuh, rows' statistics then column tiles that
 * hold every row, for few rows (dw is summed in each tile: no partial rows,
 * no column-sum kernel).
 *
 *   nt_bwd_stats<TX, TW, TDW, stats_threads(N)>   nt_bwd_cols<TX, TW, TDW, block, cc, rows, k>
 *
 * Params: `block` threads a tile, `cc` 16-byte column chunks a tile (the
 * block is cc columns by block/cc row groups), `rows` rows a thread has in
 * flight at a time, `k` blocks per SM for
 * __launch_bounds__.  Every N that is a multiple of 8 up to NT_MAX_N and
 * every M (the tiles loop over the rows); the statistics kernel's block
 * is set by N (stats_threads).  Workspace: two floats a row.  Shared
 * memory: the row groups' dw sums, block x E floats. */
#include <stdio.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/rmsnorm_bwd/plan.h"
#include "kernels/rmsnorm_bwd/tensors.h"

extern const nt_op nt_op_rmsnorm_bwd;
extern const nt_family nt_rmsnorm_bwd_cols;

static const char *const cols_sources[] = {
    "nt_args.h", "common.cuh", "rmsnorm_bwd/tensors.h", "rmsnorm_bwd/row.cuh",
    "rmsnorm_bwd/cols.cuh", NULL,
};

static const nt_param_def cols_params[] = {
    {"block", NT_PARAM_INT, NULL, 32, 1024, "threads per column tile, a multiple of 32"},
    {"cc", NT_PARAM_INT, NULL, 1, 64, "16-byte column chunks per tile, a divisor of block"},
    {"rows", NT_PARAM_INT, NULL, 1, 8, "rows a thread loads before it uses any"},
    {"k", NT_PARAM_INT, NULL, 0, 32, "blocks per SM to compile for (register cap), 0 = none"},
};

/* Threads of the statistics kernel: 128 for rows of up to 512 chunks, else
 * 256 (a thread sums every block-th chunk of its row). */
static int stats_threads(const nt_problem *pr) {
    return pr->N / nt_bwd_chunk_elems(pr) <= 512 ? 128 : 256;
}

/* Dynamic shared memory of a tile: each thread's E sums of dw. */
static unsigned cols_smem(const nt_problem *pr, int64_t B) {
    return (unsigned)(B * nt_bwd_chunk_elems(pr) * 4);
}

static int cols_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev, char *err,
                      size_t errlen) {
    int ok = 1;
    int64_t B = nt_params_int(p, "block", &ok), CC = nt_params_int(p, "cc", &ok);
    int64_t R = nt_params_int(p, "rows", &ok), K = nt_params_int(p, "k", &ok);
    if (!ok || B < 32 || B > 1024 || B % 32 || CC < 1 || CC > 64 || B % CC || R < 1 || R > 8 ||
        K < 0 || K > 32) {
        nt_why(err, errlen, "cols needs block a multiple of 32 in [32, 1024], cc in [1, 64] "
                 "dividing it, rows in [1, 8], k in [0, 32]");
        return -1;
    }
    return dev ? nt_bwd_fits_sm(dev, B, K, cols_smem(pr, B), err, errlen) : 0;
}

static int cols_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev, nt_plan *pl,
                     char *err, size_t errlen) {
    if (cols_check(p, pr, dev, err, errlen)) return -1;
    int64_t B = nt_params_int(p, "block", NULL), CC = nt_params_int(p, "cc", NULL);
    char rest[32];
    memset(pl, 0, sizeof *pl);
    pl->nlaunch = 2;
    snprintf(rest, sizeof rest, "%d", stats_threads(pr));
    if (nt_bwd_kname(pl->l[0].name, sizeof pl->l[0].name, "nt_bwd_stats", pr, rest, err, errlen))
        return -1;
    pl->l[0].grid = (unsigned)(pr->M < 2147483647LL ? pr->M : 2147483647LL);
    pl->l[0].grid_y = 1;
    pl->l[0].block = (unsigned)stats_threads(pr);
    pl->l[0].pdl = 1;          /* every launch of the chain waits first */
    if (nt_bwd_kname_params(&pl->l[1], "nt_bwd_cols", pr, &nt_rmsnorm_bwd_cols, p, err, errlen))
        return -1;
    pl->l[1].grid = nt_bwd_cdiv(pr->N / nt_bwd_chunk_elems(pr), CC);
    pl->l[1].grid_y = 1;
    pl->l[1].block = (unsigned)B;
    pl->l[1].smem = cols_smem(pr, B);
    pl->l[1].pdl = 1;
    pl->nparts = 0;
    pl->workspace = NT_BWD_ALIGN256((size_t)pr->M * 8);
    return 0;
}

const nt_family nt_rmsnorm_bwd_cols = {
    .name = "rmsnorm_bwd.cols",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "rows' statistics, then column tiles holding every row: dw summed in each tile",
    .nparams = 4,
    .params = cols_params,
    .check = cols_check,
    .plan = cols_plan,
    .sources = cols_sources,
    .own_n = 1,
};
