/* rmsnorm_bwd/families.c -- five RMSNorm backward families as data.
 *
 * rmsnorm_bwd.naive: the 3-kernel chain.  One block per row writes dx and
 *   an M x N partial of dw (bf16 or f32); a column sum splits the rows into
 *   nsplit slices (nsplit x N fp32); a final column sum gives dw.
 * rmsnorm_bwd.persistent: the 2-kernel chain.  A grid of k blocks per SM
 *   walks the rows, keeps its dw partial in registers and pipelines the
 *   loads of the next rows through shared memory (stages); a final column
 *   sum over the grid's partial rows gives dw.
 * rmsnorm_bwd.aligned: persistent with each block's rows accessed in a
 *   frame shifted onto the 32- to 128-byte line they start in (aligned.cuh).
 * rmsnorm_bwd.held: persistent's pipeline with each row read from shared
 *   memory and converted once, held in registers between the row's two
 *   passes (held.cuh).
 * rmsnorm_bwd.pcluster: aligned's rows with the dw partials of a thread
 *   block cluster added before the column sum (pcluster.cuh).
 *
 * The kernels (row.cuh, colsum.cuh, naive.cuh, persistent.cuh, aligned.cuh) are templates on the problem's dtypes, TX (x,
 * dy, dx), TW (w) and TDW (dw), named here by their ctypes and then by the
 * family's integers: "nt_persist<nt_bf16, float, float, 256, 2, 2, 0>".
 * These name expressions are the only spelling of a config's kernels: the
 * tuner compiles them with NVRTC and the export writes them for the
 * library.  A chunk is 16 bytes of the activation, E = 16 / sizeof(x)
 * elements (8 for bf16 and f16, 4 for f32).  Both families support every
 * M >= 1 and every N that is a multiple of 8 up to 16384 (naive: its row
 * kernel holds a row in the registers of one block of at most 1024
 * threads, which beyond 16384 would spill; persistent: N <= block * chunks
 * * E).  Longer rows, up to NT_MAX_N: the loop family (loop.c).
 *
 * Precision: every output carries its dtype's tolerance (plan.tol = 0),
 * except dw of naive with partial = bf16, which is only bf16-precise: such
 * a config is not eligible for an f32 or f16 dw (nt_plan_precise). */
#include <stdio.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/rmsnorm_bwd/plan.h"
#include "kernels/rmsnorm_bwd/tensors.h"

extern const nt_op nt_op_rmsnorm_bwd;
extern const nt_family nt_rmsnorm_bwd_persistent;
extern const nt_family nt_rmsnorm_bwd_aligned;
extern const nt_family nt_rmsnorm_bwd_pcluster;
extern const nt_family nt_rmsnorm_bwd_held;

#define SPLIT_COLS 64         /* columns per block of nt_colsum_split */
#define COLSUM_THREADS 256
#define RED_SMEM 512          /* static shared bytes of the row reduction */
#define MAX_THREADS 1024      /* threads per block */
#define NAIVE_MAX_N 16384     /* longest row of naive (its chunks: 2 for 16-bit x, 4 for fp32) */

/* The files each family's kernels are built from (its source hash covers
 * exactly these), the one NVRTC includes last. */
static const char *const naive_sources[] = {
    "nt_args.h", "common.cuh", "rmsnorm_bwd/tensors.h", "rmsnorm_bwd/row.cuh",
    "rmsnorm_bwd/colsum.cuh", "rmsnorm_bwd/naive.cuh", NULL,
};
static const char *const persist_sources[] = {
    "nt_args.h", "common.cuh", "rmsnorm_bwd/tensors.h", "rmsnorm_bwd/row.cuh",
    "rmsnorm_bwd/colsum.cuh", "rmsnorm_bwd/persistent.cuh", NULL,
};

static const char *const aligned_sources[] = {
    "nt_args.h", "common.cuh", "rmsnorm_bwd/tensors.h", "rmsnorm_bwd/row.cuh",
    "rmsnorm_bwd/colsum.cuh", "rmsnorm_bwd/aligned.cuh", NULL,
};

static const char *const held_sources[] = {
    "nt_args.h", "common.cuh", "rmsnorm_bwd/tensors.h", "rmsnorm_bwd/row.cuh",
    "rmsnorm_bwd/colsum.cuh", "rmsnorm_bwd/held.cuh", NULL,
};

static const char *const pcluster_sources[] = {
    "nt_args.h", "common.cuh", "rmsnorm_bwd/tensors.h", "rmsnorm_bwd/row.cuh",
    "rmsnorm_bwd/colsum.cuh", "rmsnorm_bwd/aligned.cuh", "rmsnorm_bwd/pcluster.cuh", NULL,
};

static const char *const partial_choices[] = {"bf16", "f32", NULL};

static const nt_param_def naive_params[] = {
    {"nsplit", NT_PARAM_INT, NULL, 1, 4096, "row slices of the first column sum"},
    {"partial", NT_PARAM_STR, partial_choices, 0, 0, "type of the M x N dw partial"},
};

/* Most rows in flight per block of persistent, aligned and pcluster: the
 * cp.async groups a thread keeps pending (stages - 1).  At few rows a
 * block (M <= 4096) more stages put all of a block's rows in flight at
 * once; shared memory bounds them (persist_smem). */
#define PERSIST_MAX_STAGES 8
#define STR_(x) #x
#define STR(x) STR_(x)

static const nt_param_def persistent_params[] = {
    {"block", NT_PARAM_INT, NULL, 32, 1024, "threads per block, a multiple of 32"},
    {"chunks", NT_PARAM_INT, NULL, 1, 16, "16-byte chunks of x per thread per row"},
    {"stages", NT_PARAM_INT, NULL, 1, PERSIST_MAX_STAGES,
     "rows in flight per block (1: no shared-memory pipeline)"},
    {"k", NT_PARAM_INT, NULL, 0, 32, "blocks per SM, 0 = as many as fit"},
};


static const nt_param_def pcluster_params[] = {
    {"cluster", NT_PARAM_INT, NULL, 2, 8, "blocks per cluster adding their dw partials: 2, 4 or 8"},
    {"block", NT_PARAM_INT, NULL, 32, 1024, "threads per block, a multiple of 32"},
    {"chunks", NT_PARAM_INT, NULL, 1, 16, "16-byte chunks of x per thread per row"},
    {"stages", NT_PARAM_INT, NULL, 1, PERSIST_MAX_STAGES,
     "rows in flight per block (1: no shared-memory pipeline)"},
    {"k", NT_PARAM_INT, NULL, 0, 32, "blocks per SM, 0 = as many as fit"},
};

/* ---- naive ------------------------------------------------------------ */

/* Chunks per thread of the row kernel: the fewest (power of two) that keep
 * the block at MAX_THREADS or fewer for N elements in chunks of E.  The only
 * spelling of this rule: the library runs the names plan() writes. */
static int naive_chunks(int64_t N, int E) {
    int ch = 1;
    while (nt_bwd_cdiv(N / E, ch) > MAX_THREADS) ch *= 2;
    return ch;
}

static int naive_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                       char *err, size_t errlen) {
    (void)dev;
    int ok = 1;
    int64_t nsplit = nt_params_int(p, "nsplit", &ok);
    const char *part = nt_params_get(p, "partial");
    if (!ok || nsplit < 1 || nsplit > 4096 || !part || (strcmp(part, "bf16") && strcmp(part, "f32"))) {
        nt_why(err, errlen, "naive needs nsplit in [1, 4096] and partial = bf16 | f32");
        return -1;
    }
    if (pr->N > NAIVE_MAX_N) {
        nt_why(err, errlen, "naive holds a row in one block's registers: N=%lld is above its "
                 "%d (%d chunks of %d threads would spill; the loop family walks longer rows)",
                 (long long)pr->N, NAIVE_MAX_N,
                 naive_chunks(pr->N, nt_bwd_chunk_elems(pr)), MAX_THREADS);
        return -1;
    }
    return 0;
}

/* The relative L2 error dw may carry with partial = bf16: the partial's
 * rounding makes dw only bf16-precise, looser than an f32 or f16 dw asks
 * (0: the dw dtype's own tolerance). */
static double bf16_partial_tol(const nt_problem *pr) {
    return NT_TOL_BF16 > nt_dtypes[pr->dtype[NT_BWD_SDW]].tol ? NT_TOL_BF16 : 0;
}

static int naive_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                      nt_plan *pl, char *err, size_t errlen) {
    if (naive_check(p, pr, dev, err, errlen)) return -1;
    int64_t nsplit = nt_params_int(p, "nsplit", NULL);
    int f32 = !strcmp(nt_params_get(p, "partial"), "f32");
    int E = nt_bwd_chunk_elems(pr), ch = naive_chunks(pr->N, E);
    char rest[32];
    memset(pl, 0, sizeof *pl);
    pl->nlaunch = 3;
    snprintf(rest, sizeof rest, "%d, %d", ch, f32);
    if (nt_bwd_kname(pl->l[0].name, sizeof pl->l[0].name, "nt_naive_row", pr, rest, err, errlen))
        return -1;
    pl->l[0].grid = (unsigned)pr->M;
    pl->l[0].grid_y = 1;
    pl->l[0].block = nt_bwd_cdiv(nt_bwd_cdiv(pr->N / E, ch), 32) * 32;
    pl->l[0].pdl = 1;          /* every launch of the chain waits first */
    snprintf(pl->l[1].name, sizeof pl->l[1].name, "nt_colsum_split<%d>", f32);
    pl->l[1].grid = nt_bwd_cdiv(pr->N, SPLIT_COLS);
    pl->l[1].grid_y = (unsigned)nsplit;
    pl->l[1].block = COLSUM_THREADS;
    pl->l[1].pdl = 1;
    nt_bwd_final_launch(pr, 1 + f32, &pl->l[2]);
    pl->nparts = (int)nsplit;
    if (!f32) pl->tol[NT_BWD_DW] = bf16_partial_tol(pr);
    pl->workspace = NT_BWD_ALIGN256((size_t)pr->M * (size_t)pr->N * (f32 ? 4 : 2)) +
                    NT_BWD_ALIGN256((size_t)nsplit * (size_t)pr->N * 4);
    return 0;
}

const nt_family nt_rmsnorm_bwd_naive = {
    .name = "rmsnorm_bwd.naive",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "3-kernel chain: per-row dx and M x N dw partials, two column sums",
    .nparams = 2,
    .params = naive_params,
    .check = naive_check,
    .plan = naive_plan,
    .sources = naive_sources,
    .own_n = 1,
};

/* ---- persistent ------------------------------------------------------- */

/* Dynamic shared memory of the persistent kernel, when pipelined (stages >
 * 1): per chunk slot, stages x (x, dy) 16-byte chunks and the chunk's E
 * weights. */
static unsigned persist_smem(const nt_problem *pr, int64_t block, int64_t chunks, int64_t stages) {
    int64_t wbytes = (int64_t)nt_bwd_chunk_elems(pr) * nt_dtypes[pr->dtype[NT_BWD_SW]].size;
    return stages > 1 ? (unsigned)((2 * stages * 16 + wbytes) * block * chunks) : 0;
}

/* Shared memory of pcluster's partial row, after persistent's: C*B*E fp32. */
static unsigned partial_smem(const nt_problem *pr, int64_t block, int64_t chunks) {
    return (unsigned)(4 * nt_bwd_chunk_elems(pr) * block * chunks);
}

/* The check of persistent, aligned and pcluster (fam: which, for the
 * message; partial_row: pcluster's partial row in shared memory as well):
 * the same parameters, rows, slots and shared memory. */
static int persist_check_of(const char *fam, int partial_row, const nt_params *p,
                            const nt_problem *pr, const nt_devinfo *dev, char *err,
                            size_t errlen) {
    int ok = 1;
    int64_t block = nt_params_int(p, "block", &ok), chunks = nt_params_int(p, "chunks", &ok);
    int64_t stages = nt_params_int(p, "stages", &ok), k = nt_params_int(p, "k", &ok);
    if (!ok || block < 32 || block > 1024 || block % 32 || chunks < 1 || chunks > 16 ||
        stages < 1 || stages > PERSIST_MAX_STAGES || k < 0 || k > 32) {
        nt_why(err, errlen, "%s needs block a multiple of 32 in [32, 1024], "
                 "chunks in [1, 16], stages in [1, " STR(PERSIST_MAX_STAGES) "], k in [0, 32]", fam);
        return -1;
    }
    if (nt_bwd_covers(pr, block * chunks, "block*chunks", err, errlen)) return -1;
    unsigned smem = persist_smem(pr, block, chunks, stages) +
                    (partial_row ? partial_smem(pr, block, chunks) : 0);
    return dev ? nt_bwd_fits_sm(dev, block, k, smem + RED_SMEM, err, errlen) : 0;
}

static int persist_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                         char *err, size_t errlen) {
    return persist_check_of("persistent", 0, p, pr, dev, err, errlen);
}

/* The chain of persistent or aligned (kernel: its name; f: its family). */
static int persist_plan_of(const nt_family *f, const char *kernel, const nt_params *p,
                           const nt_problem *pr, const nt_devinfo *dev, nt_plan *pl, char *err,
                           size_t errlen) {
    if (f->check(p, pr, dev, err, errlen)) return -1;
    int64_t block = nt_params_int(p, "block", NULL), chunks = nt_params_int(p, "chunks", NULL);
    int64_t stages = nt_params_int(p, "stages", NULL), k = nt_params_int(p, "k", NULL);
    memset(pl, 0, sizeof *pl);
    if (nt_bwd_kname_params(&pl->l[0], kernel, pr, f, p, err, errlen)) return -1;
    pl->l[0].smem = persist_smem(pr, block, chunks, stages);
    nt_bwd_persistent_chain(pr, dev, block, k, 1, pl);
    return 0;
}

static int persist_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                        nt_plan *pl, char *err, size_t errlen) {
    return persist_plan_of(&nt_rmsnorm_bwd_persistent, "nt_persist", p, pr, dev, pl, err, errlen);
}

const nt_family nt_rmsnorm_bwd_persistent = {
    .name = "rmsnorm_bwd.persistent",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "2-kernel chain: persistent rows with dw partials in registers, one column sum",
    .nparams = 4,
    .params = persistent_params,
    .check = persist_check,
    .plan = persist_plan,
    .sources = persist_sources,
    /* past its tuned N a row is most often not a multiple of 16 elements
     * and starts inside a sector: aligned, the same config shifted */
    .grown = &nt_rmsnorm_bwd_aligned,
};

/* ---- aligned ----------------------------------------------------------- */

static int aligned_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                         char *err, size_t errlen) {
    return persist_check_of("aligned", 0, p, pr, dev, err, errlen);
}

static int aligned_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                        nt_plan *pl, char *err, size_t errlen) {
    return persist_plan_of(&nt_rmsnorm_bwd_aligned, "nt_bwd_aligned", p, pr, dev, pl, err, errlen);
}

/* persistent's chain with each block's rows accessed in a frame shifted to
 * the 32- to 128-byte line they start in (aligned.cuh): rows that start
 * inside a 32-byte sector (16-bit x, N = 8 mod 16) without the extra
 * sector per warp access.  Its parameters and limits are persistent's. */
const nt_family nt_rmsnorm_bwd_aligned = {
    .name = "rmsnorm_bwd.aligned",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "persistent with each block's row accesses shifted onto 32- to 128-byte lines",
    .nparams = 4,
    .params = persistent_params,
    .check = aligned_check,
    .plan = aligned_plan,
    .sources = aligned_sources,
};

/* ---- held ------------------------------------------------------------- */

static int held_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                      char *err, size_t errlen) {
    int ok = 1;
    if (nt_params_int(p, "stages", &ok) < 2 && ok) {
        nt_why(err, errlen, "held needs stages >= 2 (with 1, persistent already holds "
                 "the row in registers)");
        return -1;
    }
    return persist_check_of("held", 0, p, pr, dev, err, errlen);
}

static int held_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                     nt_plan *pl, char *err, size_t errlen) {
    return persist_plan_of(&nt_rmsnorm_bwd_held, "nt_persist_held", p, pr, dev, pl, err, errlen);
}

/* persistent's pipelined chain with each row's x, dy and w read from shared
 * memory and converted once, held in registers between the two passes of
 * the row (held.cuh).  Its parameters and limits are persistent's, with
 * stages >= 2. */
const nt_family nt_rmsnorm_bwd_held = {
    .name = "rmsnorm_bwd.held",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "persistent's pipeline with each row read from shared memory once, held in registers",
    .nparams = 4,
    .params = persistent_params,
    .check = held_check,
    .plan = held_plan,
    .sources = held_sources,
};

/* ---- pcluster ---------------------------------------------------------- */

static int pcluster_check(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                          char *err, size_t errlen) {
    int ok = 1;
    int64_t Q = nt_params_int(p, "cluster", &ok);
    if (!ok || (Q != 2 && Q != 4 && Q != 8)) {
        nt_why(err, errlen, "pcluster needs cluster 2, 4 or 8");
        return -1;
    }
    if (nt_bwd_sm90(dev, "pcluster", "thread block clusters", err, errlen)) return -1;
    return persist_check_of("pcluster", 1, p, pr, dev, err, errlen);
}

static int pcluster_plan(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                         nt_plan *pl, char *err, size_t errlen) {
    if (pcluster_check(p, pr, dev, err, errlen)) return -1;
    int64_t Q = nt_params_int(p, "cluster", NULL), block = nt_params_int(p, "block", NULL);
    int64_t chunks = nt_params_int(p, "chunks", NULL), stages = nt_params_int(p, "stages", NULL);
    int64_t k = nt_params_int(p, "k", NULL);
    memset(pl, 0, sizeof *pl);
    if (nt_bwd_kname_params(&pl->l[0], "nt_bwd_pcluster", pr, &nt_rmsnorm_bwd_pcluster, p, err,
                            errlen))
        return -1;
    pl->l[0].smem = persist_smem(pr, block, chunks, stages) + partial_smem(pr, block, chunks);
    nt_bwd_cluster_chain(pr, dev, Q, block, k, pl);
    pl->l[0].grid_rows = (unsigned)Q;   /* at most one block per row */
    return 0;
}

/* aligned's rows with the dw partials of each thread block cluster added in
 * distributed shared memory (pcluster.cuh): Q times fewer partial rows for
 * the final column sum, for few rows. */
const nt_family nt_rmsnorm_bwd_pcluster = {
    .name = "rmsnorm_bwd.pcluster",
    .op = &nt_op_rmsnorm_bwd,
    .doc = "aligned's rows, dw partials added over a cluster (sm_90+) through DSMEM",
    .nparams = 5,
    .params = pcluster_params,
    .check = pcluster_check,
    .plan = pcluster_plan,
    .sources = pcluster_sources,
};
