/* rmsnorm_bwd/ring.c -- rmsnorm_bwd.ring as data: persistent's chain with
 * the rows brought through a ring of chunks + spare slots a thread, so
 * that spare/chunks of the next row is in flight while a row is reduced
 * (device code and the design: ring.cuh).
 *
 * Two kernels, as persistent: nt_bwd_ring<TX, TW, TDW, B, C, S, K> on a
 * grid the launcher sizes (k blocks per SM, 0 = as many as fit), then
 * nt_colsum_final over the grid's fp32 partial rows.  Covers N <= block *
 * chunks * E (E = 16 / sizeof(x)), every M >= 1 and every dtype
 * combination at its dtypes' precision, on any device with cp.async (sm_80
 * and newer; the runner's floor).  w sits in registers (chunks x E weights
 * a thread beside the dw partials), so a config with many chunks may
 * spill, as held's may: the sweep's where() keeps such points out.
 *
 * ring.cuh repeats held's start (w and the dw partials in registers) and
 * the end every persistent chain shares (the block's fp32 partial row)
 * rather than move them into row.cuh or colsum.cuh: those files are in
 * every backward family's sources, so a helper there would change every
 * family's source hash and leave the shipped header's results of older
 * sources until the next re-tune.  Fold them in with that re-tune. */
#include <stdio.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/rmsnorm_bwd/plan.h"
#include "kernels/rmsnorm_bwd/tensors.h"

extern const nt_op nt_op_rmsnorm_bwd;
extern const nt_family nt_rmsnorm_bwd_ring;

#define RED_BYTES 512         /* static shared bytes of the row reduction */

static const char *const ring_sources[] = {
    "nt_args.h", "common.cuh", "rmsnorm_bwd/tensors.h", "rmsnorm_bwd/row.cuh",
    "rmsnorm_bwd/colsum.cuh", "rmsnorm_bwd/ring.cuh", NULL,
};

static const nt_param_def ring_params[] = {
    {"block", NT_PARAM_INT, NULL, 32, 1024, "threads per block, a multiple of 32"},
    {"chunks", NT_PARAM_INT, NULL, 1, 16, "16-byte chunks of x per thread per row"},
    {"spare", NT_PARAM_INT, NULL, 1, 16,
     "ring slots a thread beyond its row's chunks (at most chunks): that many chunks of the "
     "next row copied while a row is reduced"},
    {"k", NT_PARAM_INT, NULL, 0, 32, "blocks per SM, 0 = as many as fit"},
};

/* Dynamic shared memory: (chunks + spare) 16-byte slots a thread for x and
 * as many for dy. */
static unsigned ring_smem(int64_t block, int64_t chunks, int64_t spare) {
    return (unsigned)(2 * (chunks + spare) * block * 16);
}

static int ring_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                      char *err, size_t errlen) {
    int ok = 1;
    int64_t block = nt_params_int(p, "block", &ok), chunks = nt_params_int(p, "chunks", &ok);
    int64_t spare = nt_params_int(p, "spare", &ok), k = nt_params_int(p, "k", &ok);
    if (!ok || block < 32 || block > 1024 || block % 32 || chunks < 1 || chunks > 16 ||
        spare < 1 || spare > chunks || k < 0 || k > 32) {
        nt_why(err, errlen, "ring needs block a multiple of 32 in [32, 1024], chunks in "
                 "[1, 16], spare in [1, chunks], k in [0, 32]");
        return -1;
    }
    if (nt_bwd_covers(pr, block * chunks, "block*chunks", err, errlen)) return -1;
    return dev ? nt_bwd_fits_sm(dev, block, k, ring_smem(block, chunks, spare) + RED_BYTES, err,
                                errlen)
               : 0;
}

static int ring_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                     nt_plan *pl, char *err, size_t errlen) {
    if (ring_check(p, pr, dev, err, errlen)) return -1;
    int64_t block = nt_params_int(p, "block", NULL), chunks = nt_params_int(p, "chunks", NULL);
    int64_t spare = nt_params_int(p, "spare", NULL), k = nt_params_int(p, "k", NULL);
    memset(pl, 0, sizeof *pl);
    if (nt_bwd_kname_params(&pl->l[0], "nt_bwd_ring", pr, &nt_rmsnorm_bwd_ring, p, err, errlen))
        return -1;
    pl->l[0].smem = ring_smem(block, chunks, spare);
    nt_bwd_persistent_chain(pr, dev, block, k, 1, pl);
    return 0;
}

const nt_family nt_rmsnorm_bwd_ring = {
    .name = "rmsnorm_bwd.ring",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "persistent's chain through a ring of chunk slots, part of the next row copied ahead",
    .nparams = 4,
    .params = ring_params,
    .check = ring_check,
    .plan = ring_plan,
    .sources = ring_sources,
};
