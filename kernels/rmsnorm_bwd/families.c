/* rmsnorm_bwd/families.c -- the two RMSNorm backward families as data.
 *
 * rmsnorm_bwd.naive: the 3-kernel chain.  One block per row writes dx and
 *   an M x N partial of dw (bf16 or f32); a column sum splits the rows into
 *   nsplit slices (nsplit x N fp32); a final column sum gives dw.
 * rmsnorm_bwd.persistent: the 2-kernel chain.  A grid of k blocks per SM
 *   walks the rows, keeps its dw partial in registers and pipelines the
 *   loads of the next rows through shared memory (stages); a final column
 *   sum over the grid's partial rows gives dw.
 *
 * Device code: kernels.cuh.  Both support every M >= 1 and every N that
 * is a multiple of 8 up to 16384 (persistent: N <= block * chunks * 8). */
#include <stdio.h>
#include <string.h>

#include "kernels/family.h"

#define ALIGN256(x) (((x) + 255) & ~(size_t)255)
#define SPLIT_COLS 64         /* columns per block of nt_colsum_split */
#define FINAL_COLS 16         /* columns per block of nt_colsum_final */
#define COLSUM_THREADS 256
#define RED_SMEM 512          /* static shared bytes of the row reduction */

static const char *const partial_choices[] = {"bf16", "f32", NULL};

static const nt_param_def naive_params[] = {
    {"nsplit", NT_PARAM_INT, NULL, 1, 4096, "row slices of the first column sum"},
    {"partial", NT_PARAM_STR, partial_choices, 0, 0, "type of the M x N dw partial"},
};

static const nt_param_def persistent_params[] = {
    {"block", NT_PARAM_INT, NULL, 32, 1024, "threads per block, a multiple of 32"},
    {"chunks", NT_PARAM_INT, NULL, 1, 16, "16-byte vectors per thread per row"},
    {"stages", NT_PARAM_INT, NULL, 1, 4, "rows in flight per block (1: no shared-memory pipeline)"},
    {"k", NT_PARAM_INT, NULL, 0, 32, "blocks per SM, 0 = as many as fit"},
};

extern const nt_op nt_op_rmsnorm_bwd;
static const char *const sources[] = {"nt_args.h", "common.cuh", "rmsnorm_bwd/kernels.cuh", NULL};

static int check_shape(const nt_problem *s, char *err, size_t errlen) {
    return nt_problem_check(s, err, errlen);
}

static unsigned cdiv(int64_t a, int64_t b) { return (unsigned)((a + b - 1) / b); }

/* ---- naive ------------------------------------------------------------ */

/* Chunks per thread of the row kernel: the fewest (power of two) that keep
 * the block at 1024 threads or fewer. */
static int naive_chunks(int64_t N) {
    int ch = 1;
    while (cdiv(N / 8, ch) > 1024) ch *= 2;
    return ch;
}

static int naive_check(const nt_params *p, const nt_problem *s, const nt_devinfo *dev,
                       char *err, size_t errlen) {
    (void)dev;
    int ok = 1;
    int64_t nsplit = nt_params_int(p, "nsplit", &ok);
    const char *part = nt_params_get(p, "partial");
    if (!ok || nsplit < 1 || !part || (strcmp(part, "bf16") && strcmp(part, "f32"))) {
        snprintf(err, errlen, "naive needs nsplit >= 1 and partial = bf16 | f32");
        return -1;
    }
    return check_shape(s, err, errlen);
}

static int naive_plan(const nt_params *p, const nt_problem *s, const nt_devinfo *dev,
                      nt_plan *pl, char *err, size_t errlen) {
    if (naive_check(p, s, dev, err, errlen)) return -1;
    int64_t nsplit = nt_params_int(p, "nsplit", NULL);
    int f32 = !strcmp(nt_params_get(p, "partial"), "f32");
    int ch = naive_chunks(s->N);
    memset(pl, 0, sizeof *pl);
    pl->nlaunch = 3;
    snprintf(pl->l[0].name, sizeof pl->l[0].name, "nt_naive_row<%d, %d>", ch, f32);
    pl->l[0].grid = (unsigned)s->M;
    pl->l[0].grid_y = 1;
    pl->l[0].block = (cdiv(cdiv(s->N / 8, ch), 32)) * 32;
    snprintf(pl->l[1].name, sizeof pl->l[1].name, "nt_colsum_split<%d>", f32);
    pl->l[1].grid = cdiv(s->N, SPLIT_COLS);
    pl->l[1].grid_y = (unsigned)nsplit;
    pl->l[1].pdl = 1;
    pl->l[1].block = COLSUM_THREADS;
    snprintf(pl->l[2].name, sizeof pl->l[2].name, "nt_colsum_final<%d>", 1 + f32);
    pl->l[2].grid = cdiv(s->N, FINAL_COLS);
    pl->l[2].pdl = 1;
    pl->l[2].grid_y = 1;
    pl->l[2].block = COLSUM_THREADS;
    pl->nparts = (int)nsplit;
    pl->tol[4] = f32 ? 0 : NT_TOL_BF16;
    pl->workspace = ALIGN256((size_t)s->M * (size_t)s->N * (f32 ? 4 : 2)) +
                    ALIGN256((size_t)nsplit * (size_t)s->N * 4);
    return 0;
}

const nt_family nt_rmsnorm_bwd_naive = {
    "rmsnorm_bwd.naive", &nt_op_rmsnorm_bwd,
    "3-kernel chain: per-row dx and M x N dw partials, two column sums",
    2, naive_params, naive_check, naive_plan, sources,
};

/* ---- persistent ------------------------------------------------------- */

/* Dynamic shared memory of the persistent kernel: stages x (x, dy) rows
 * and w, when pipelined (stages > 1). */
static unsigned persist_smem(int64_t block, int64_t chunks, int64_t stages) {
    return stages > 1 ? (unsigned)((2 * stages + 1) * block * chunks * 16) : 0;
}

static int persist_check(const nt_params *p, const nt_problem *s, const nt_devinfo *dev,
                         char *err, size_t errlen) {
    int ok = 1;
    int64_t block = nt_params_int(p, "block", &ok), chunks = nt_params_int(p, "chunks", &ok);
    int64_t stages = nt_params_int(p, "stages", &ok), k = nt_params_int(p, "k", &ok);
    if (!ok || block < 32 || block > 1024 || block % 32 || chunks < 1 || chunks > 16 ||
        stages < 1 || stages > 4 || k < 0) {
        snprintf(err, errlen, "persistent needs block a multiple of 32 in [32, 1024], "
                              "chunks in [1, 16], stages in [1, 4], k >= 0");
        return -1;
    }
    if (check_shape(s, err, errlen)) return -1;
    if (s->N > block * chunks * 8) {
        snprintf(err, errlen, "N=%lld exceeds block*chunks*8 = %lld", (long long)s->N,
                 (long long)(block * chunks * 8));
        return -1;
    }
    if (dev) {
        unsigned smem = persist_smem(block, chunks, stages);
        if (smem + RED_SMEM > (unsigned)dev->smem_per_block_optin) {
            snprintf(err, errlen, "needs %u bytes of shared memory per block, the device allows %d",
                     smem + RED_SMEM, dev->smem_per_block_optin);
            return -1;
        }
        if (k && (k * block > dev->max_threads_per_sm ||
                  k * (smem + RED_SMEM) > (unsigned)dev->smem_per_sm)) {
            snprintf(err, errlen, "k=%lld blocks of %lld threads and %u bytes do not fit on one SM",
                     (long long)k, (long long)block, smem + RED_SMEM);
            return -1;
        }
    }
    return 0;
}

static int persist_plan(const nt_params *p, const nt_problem *s, const nt_devinfo *dev,
                        nt_plan *pl, char *err, size_t errlen) {
    if (persist_check(p, s, dev, err, errlen)) return -1;
    int64_t block = nt_params_int(p, "block", NULL), chunks = nt_params_int(p, "chunks", NULL);
    int64_t stages = nt_params_int(p, "stages", NULL), k = nt_params_int(p, "k", NULL);
    memset(pl, 0, sizeof *pl);
    pl->nlaunch = 2;
    snprintf(pl->l[0].name, sizeof pl->l[0].name, "nt_persist<%lld, %lld, %lld, %lld>",
             (long long)block, (long long)chunks, (long long)stages, (long long)k);
    pl->l[0].grid = 0;          /* the runner sizes it: SMs x k, at most M */
    pl->l[0].grid_y = 1;
    pl->l[0].block = (unsigned)block;
    pl->l[0].smem = persist_smem(block, chunks, stages);
    pl->l[0].blocks_per_sm = (int)k;
    snprintf(pl->l[1].name, sizeof pl->l[1].name, "nt_colsum_final<0>");
    pl->l[1].grid = cdiv(s->N, FINAL_COLS);
    pl->l[1].pdl = 1;
    pl->l[1].grid_y = 1;
    pl->l[1].block = COLSUM_THREADS;
    pl->nparts = 0;
    if (dev) {
        /* upper bound on resident blocks: by threads, or k */
        int64_t kmax = k ? k : dev->max_threads_per_sm / block;
        int64_t parts = (int64_t)dev->sms * kmax;
        if (parts > s->M) parts = s->M;
        pl->workspace = ALIGN256((size_t)parts * (size_t)s->N * 4);
    }
    return 0;
}

const nt_family nt_rmsnorm_bwd_persistent = {
    "rmsnorm_bwd.persistent", &nt_op_rmsnorm_bwd,
    "2-kernel chain: persistent rows with dw partials in registers, one column sum",
    4, persistent_params, persist_check, persist_plan, sources,
};
