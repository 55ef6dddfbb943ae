/* rmsnorm_bwd/op.c -- RMSNorm backward as an op: its tensors, dtype slots,
 * dtype rules, float64 reference and families.
 *
 * Given x (M x N), w (N) and dy (M x N), computes dx (M x N) and dw (N):
 *   dx = r w dy - x r^3 mean(dy w x),   dw = sum over rows of dy x r,
 * with r = 1 / sqrt(mean(x^2) + eps) per row.  x, dy and dx share one dtype
 * (bf16, f16, f32); w is that dtype or f32 (mixed-precision training keeps
 * norm weights in f32); dw is f32 or the weight's dtype.  The fill ranges
 * are those the runner has always used.  Device code: row.cuh, colsum.cuh, naive.cuh, persistent.cuh,
 * aligned.cuh, pcluster.cuh, held.cuh, tma.cuh, rows.cuh, warp.cuh, wstage.cuh, wtma.cuh, cluster.cuh, loop.cuh, fused.cuh, cstage.cuh, cols.cuh, ring.cuh;
 * families: families.c, rows.c, warp.c, wstage.c, cluster.c, loop.c, fused.c, cstage.c, cols.c, tma.c, wtma.c, ring.c; reference:
 * ref.c. */
#include <stdio.h>

#include "kernels/family.h"
#include "kernels/rmsnorm_bwd/ref.h"
#include "kernels/rmsnorm_bwd/tensors.h"

extern const nt_family nt_rmsnorm_bwd_naive;
extern const nt_family nt_rmsnorm_bwd_persistent;
extern const nt_family nt_rmsnorm_bwd_aligned;
extern const nt_family nt_rmsnorm_bwd_held;
extern const nt_family nt_rmsnorm_bwd_tma;
extern const nt_family nt_rmsnorm_bwd_wtma;
extern const nt_family nt_rmsnorm_bwd_ring;
extern const nt_family nt_rmsnorm_bwd_rows;
extern const nt_family nt_rmsnorm_bwd_pcluster;
extern const nt_family nt_rmsnorm_bwd_warp;
extern const nt_family nt_rmsnorm_bwd_cluster;
extern const nt_family nt_rmsnorm_bwd_loop;
extern const nt_family nt_rmsnorm_bwd_fused;
extern const nt_family nt_rmsnorm_bwd_cstage;
extern const nt_family nt_rmsnorm_bwd_cols;
extern const nt_family nt_rmsnorm_bwd_wstage;

#define ALL_DTYPES ((1u << NT_BF16) | (1u << NT_F16) | (1u << NT_F32))

static const nt_tensor_def tensors[NT_BWD_NTENSORS] = {
    [NT_BWD_X] = {.name = "x", .role = NT_IN, .rows = NT_DIM_M, .cols = NT_DIM_N,
                  .slot = NT_BWD_SX, .lo = -2, .hi = 2, .doc = "input of the forward pass"},
    [NT_BWD_W] = {.name = "w", .role = NT_IN, .rows = NT_DIM_1, .cols = NT_DIM_N,
                  .slot = NT_BWD_SW, .lo = 0.5, .hi = 1.5, .doc = "weight"},
    [NT_BWD_DY] = {.name = "dy", .role = NT_IN, .rows = NT_DIM_M, .cols = NT_DIM_N,
                   .slot = NT_BWD_SX, .lo = -1, .hi = 1, .doc = "gradient of the output"},
    [NT_BWD_DX] = {.name = "dx", .role = NT_OUT, .rows = NT_DIM_M, .cols = NT_DIM_N,
                   .slot = NT_BWD_SX, .doc = "gradient of x"},
    [NT_BWD_DW] = {.name = "dw", .role = NT_OUT, .rows = NT_DIM_1, .cols = NT_DIM_N,
                   .slot = NT_BWD_SDW, .doc = "gradient of w, summed over the rows"},
};

static const nt_slot_def slots[NT_BWD_NSLOTS] = {
    [NT_BWD_SX] = {.name = "x", .allowed = ALL_DTYPES, .def = NT_BF16,
                   .doc = "dtype of x, dy and dx"},
    [NT_BWD_SW] = {.name = "w", .allowed = ALL_DTYPES, .def = -1,
                   .doc = "dtype of w: the activation dtype (default) or f32"},
    [NT_BWD_SDW] = {.name = "dw", .allowed = ALL_DTYPES, .def = NT_F32,
                    .doc = "dtype of dw: f32 or the weight dtype"},
};

/* The dtype rules between slots (each slot's own choices and the shape are
 * checked by nt_problem_check): w is x's dtype or f32, dw is f32 or w's
 * dtype.  0, or -1 with a message naming the dtypes. */
static int check(const nt_problem *p, char *err, size_t errlen) {
    int x = p->dtype[NT_BWD_SX], w = p->dtype[NT_BWD_SW], dw = p->dtype[NT_BWD_SDW];
    for (int s = 0; s < NT_BWD_NSLOTS; s++)
        if (p->dtype[s] < 0 || p->dtype[s] >= NT_NDTYPES) {
            nt_why(err, errlen, "rmsnorm_bwd: no dtype %d for %s", p->dtype[s], slots[s].name);
            return -1;
        }
    if (w != x && w != NT_F32) {
        nt_why(err, errlen, "rmsnorm_bwd: w=%s must be the activation dtype (x=%s) or f32",
                 nt_dtypes[w].name, nt_dtypes[x].name);
        return -1;
    }
    if (dw != NT_F32 && dw != w) {
        nt_why(err, errlen, "rmsnorm_bwd: dw=%s must be f32 or the weight dtype (w=%s)",
                 nt_dtypes[dw].name, nt_dtypes[w].name);
        return -1;
    }
    return 0;
}

static const nt_family *const families[] = {
    &nt_rmsnorm_bwd_naive,
    &nt_rmsnorm_bwd_persistent,
    &nt_rmsnorm_bwd_warp,
    &nt_rmsnorm_bwd_cluster,
    &nt_rmsnorm_bwd_loop,
    &nt_rmsnorm_bwd_fused,
    &nt_rmsnorm_bwd_cstage,
    &nt_rmsnorm_bwd_aligned,
    &nt_rmsnorm_bwd_pcluster,
    &nt_rmsnorm_bwd_cols,
    &nt_rmsnorm_bwd_wstage,
    &nt_rmsnorm_bwd_held,
    &nt_rmsnorm_bwd_rows,
    &nt_rmsnorm_bwd_tma,
    &nt_rmsnorm_bwd_wtma,
    &nt_rmsnorm_bwd_ring,
    NULL,
};

/* nt_op.fallback: the loop chain (loop.c) with one chunk per thread of
 * 1024 (a tile of 8192 elements of 16-bit x, 4096 of fp32), one block per
 * SM: every N up to NT_MAX_N and every M, every dtype combination at its
 * precision (fp32 sums and partials), on any device, without spilling (63
 * or 64 registers of the 64 a block of 1024 leaves, sm_80 to sm_100a).  A
 * row of one tile is read once and its dw partial stays in registers. */
static const nt_family *fallback(const nt_problem *p, char *params, size_t len) {
    char err[128];
    if (check(p, err, sizeof err)) return NULL;
    snprintf(params, len, "block=1024,chunks=1,k=0");
    return &nt_rmsnorm_bwd_loop;
}

/* The device reference's kernels (dref.cuh), in launch order. */
static const char *const dref_kernels[] = {"nt_rmsnorm_bwd_dref_rows", "nt_rmsnorm_bwd_dref_dw",
                                           "nt_rmsnorm_bwd_dref_dwsum", NULL};

const nt_op nt_op_rmsnorm_bwd = {
    .name = "rmsnorm_bwd",
    .doc = "RMSNorm backward: dx and dw from x, w, dy",
    .nslots = NT_BWD_NSLOTS,
    .slots = slots,
    .ntensors = NT_BWD_NTENSORS,
    .tensors = tensors,
    .check = check,
    .ref = nt_rmsnorm_bwd_ref,
    .families = families,
    .fallback = fallback,
    .dref = "rmsnorm_bwd/dref.cuh",
    .dref_kernels = dref_kernels,
    /* untuned N = 8 (mod 16) ran the nearest N's persistent config, up to
     * 11 points of the add behind their tuned neighbours (data/lines-h200/) */
    .row_lines = 1,
};
