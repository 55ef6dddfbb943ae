/* rmsnorm_fwd/op.c -- the RMSNorm forward op as data: its tensors by role,
 * its dtype slots, the dtype combinations it accepts, its float64
 * reference and its families (families.c).
 *
 *   x    in   M x N  slot x (bf16 | f16 | f32)   filled uniform in [-2, 2)
 *   w    in   1 x N  slot w (x's dtype or f32)   filled uniform in [0.5, 1.5)
 *   y    out  M x N  slot x                      y = x * rstd * w
 *   rstd out  M x 1  fp32, optional              1 / sqrt(mean(x^2) + eps)
 *
 * The order of the table is nt_args.t[]'s (tensors.h names the indices). */
#include <stdio.h>

#include "kernels/family.h"
#include "kernels/rmsnorm_fwd/ref.h"
#include "kernels/rmsnorm_fwd/tensors.h"

#define ANY ((1u << NT_BF16) | (1u << NT_F16) | (1u << NT_F32))

extern const nt_family nt_rmsnorm_fwd_row;
extern const nt_family nt_rmsnorm_fwd_warp;
extern const nt_family nt_rmsnorm_fwd_persist;
extern const nt_family nt_rmsnorm_fwd_rows;
extern const nt_family nt_rmsnorm_fwd_wlate;
extern const nt_family nt_rmsnorm_fwd_stage;
extern const nt_family nt_rmsnorm_fwd_cluster;
extern const nt_family nt_rmsnorm_fwd_loop;
extern const nt_family nt_rmsnorm_fwd_awarp;
extern const nt_family nt_rmsnorm_fwd_arow;
extern const nt_family nt_rmsnorm_fwd_tma;
extern const nt_family nt_rmsnorm_fwd_wstage;
extern const nt_family nt_rmsnorm_fwd_cstage;
extern const nt_family nt_rmsnorm_fwd_ring;

static const nt_slot_def fwd_slots[NT_FWD_NSLOTS] = {
    [NT_FWD_SX] = {"x", ANY, NT_BF16, "dtype of x and y"},
    [NT_FWD_SW] = {"w", ANY, -1, "dtype of w: x's dtype (default) or f32"},
};

static const nt_tensor_def fwd_tensors[NT_FWD_NTENSORS] = {
    [NT_FWD_X] = {"x", NT_IN, NT_DIM_M, NT_DIM_N, NT_FWD_SX, 0, -2.0, 2.0, 0, "input rows"},
    [NT_FWD_W] = {"w", NT_IN, NT_DIM_1, NT_DIM_N, NT_FWD_SW, 0, 0.5, 1.5, 0, "weight"},
    [NT_FWD_Y] = {"y", NT_OUT, NT_DIM_M, NT_DIM_N, NT_FWD_SX, 0, 0, 0, 0,
                  "normalized rows: x * rstd * w"},
    [NT_FWD_RSTD] = {"rstd", NT_OUT, NT_DIM_M, NT_DIM_1, -1, NT_F32, 0, 0, 1,
                     "1 / sqrt(mean(x^2) + eps) per row (optional)"},
};

static const nt_family *const fwd_families[] = {
    &nt_rmsnorm_fwd_row,
    &nt_rmsnorm_fwd_warp,
    &nt_rmsnorm_fwd_persist,
    &nt_rmsnorm_fwd_rows,
    &nt_rmsnorm_fwd_wlate,
    &nt_rmsnorm_fwd_stage,
    &nt_rmsnorm_fwd_cluster,
    &nt_rmsnorm_fwd_loop,
    &nt_rmsnorm_fwd_awarp,
    &nt_rmsnorm_fwd_arow,
    &nt_rmsnorm_fwd_tma,
    &nt_rmsnorm_fwd_wstage,
    &nt_rmsnorm_fwd_cstage,
    &nt_rmsnorm_fwd_ring,
    NULL,
};

/* The dtype combinations: w is x's dtype or f32.  0, or -1 with why. */
static int fwd_check(const nt_problem *p, char *err, size_t errlen) {
    int x = p->dtype[NT_FWD_SX], w = p->dtype[NT_FWD_SW];
    if (x < 0 || x >= NT_NDTYPES || w < 0 || w >= NT_NDTYPES) {
        nt_why(err, errlen, "rmsnorm_fwd: unknown dtype (x=%d, w=%d)", x, w);
        return -1;
    }
    if (w != x && w != NT_F32) {
        nt_why(err, errlen, "rmsnorm_fwd: w must be x's dtype (%s) or f32, not %s",
                 nt_dtypes[x].name, nt_dtypes[w].name);
        return -1;
    }
    return 0;
}

/* nt_op.ref: y and rstd in double from x and w in their dtypes. */
static int fwd_ref(const nt_problem *p, const void *const *t, double *const *out, double eps,
                   int nthreads) {
    return nt_ref_rmsnorm_fwd(p->dtype[NT_FWD_SX], p->dtype[NT_FWD_SW], t[NT_FWD_X],
                              t[NT_FWD_W], p->M, p->N, eps, out[NT_FWD_Y], out[NT_FWD_RSTD],
                              nthreads);
}

/* nt_op.fallback: loop, one row per block of 1024 threads walked in tiles
 * of FALLBACK_TILE elements (2 chunks a thread for 16-bit x, 4 for fp32):
 * every N up to NT_MAX_N, every M, on any device, without spilling
 * (families.c); a row of up to FALLBACK_TILE elements is one tile, read
 * once, as the row family's block=1024 config (the fallback before N went
 * past 16384) reads it. */
#define FALLBACK_TILE 16384
static const nt_family *fwd_fallback(const nt_problem *p, char *params, size_t len) {
    char err[128];
    if (fwd_check(p, err, sizeof err)) return NULL;
    snprintf(params, len, "block=1024,chunks=%d,k=0",
             FALLBACK_TILE / (1024 * (16 / nt_dtypes[p->dtype[NT_FWD_SX]].size)));
    return &nt_rmsnorm_fwd_loop;
}

/* The device reference's kernel (dref.cuh). */
static const char *const fwd_dref_kernels[] = {"nt_rmsnorm_fwd_dref", NULL};

const nt_op nt_op_rmsnorm_fwd = {
    "rmsnorm_fwd",
    "RMSNorm forward: y = x * rstd * w, rstd = 1/sqrt(mean(x^2) + eps) per row",
    NT_FWD_NSLOTS, fwd_slots,
    NT_FWD_NTENSORS, fwd_tensors,
    fwd_check,
    fwd_ref,
    fwd_families,
    fwd_fallback,
    "rmsnorm_fwd/dref.cuh",
    fwd_dref_kernels,
    /* row_lines: not measured to help the forward, whose small-N `rows`
     * configs run rows of either start alike (data/lines-h200/) */
    0,
};
