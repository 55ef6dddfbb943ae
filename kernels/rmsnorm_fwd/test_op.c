/* rmsnorm_fwd/test_op.c -- the RMSNorm forward op on the CPU: its float64
 * reference against a direct computation written here, for every dtype
 * combination; rstd; independence of the thread count; the dtype
 * combinations check() accepts; and every family's plans over a grid of
 * problems and parameters (well-formed launches, N covered, name
 * expressions with the problem's ctypes), with at least one family
 * accepting every problem; the loop family's limits; and the op's
 * fallback (loop) planning every N up to NT_MAX_N for every dtype
 * combination on an sm_90 and an sm_80 device (what the library relies
 * on); the shifted families (awarp, arow) as their bases' grown
 * families, with their bases' rules. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/ref.h"
#include "kernels/rmsnorm_fwd/ref.h"
#include "kernels/rmsnorm_fwd/tensors.h"
#include "tests/t.h"

extern const nt_op nt_op_rmsnorm_fwd;
extern const nt_family nt_rmsnorm_fwd_row, nt_rmsnorm_fwd_warp, nt_rmsnorm_fwd_persist,
    nt_rmsnorm_fwd_rows, nt_rmsnorm_fwd_wlate, nt_rmsnorm_fwd_stage, nt_rmsnorm_fwd_cluster,
    nt_rmsnorm_fwd_loop, nt_rmsnorm_fwd_awarp, nt_rmsnorm_fwd_arow, nt_rmsnorm_fwd_tma,
    nt_rmsnorm_fwd_cstage, nt_rmsnorm_fwd_ring;

static const nt_op *const op = &nt_op_rmsnorm_fwd;

/* The allowed (x, w) dtype pairs, and some refused ones. */
static const int good[][2] = {
    {NT_BF16, NT_BF16}, {NT_BF16, NT_F32}, {NT_F16, NT_F16}, {NT_F16, NT_F32}, {NT_F32, NT_F32},
};
static const int bad[][2] = {
    {NT_BF16, NT_F16}, {NT_F16, NT_BF16}, {NT_F32, NT_BF16}, {NT_F32, NT_F16},
};
#define NGOOD (int)(sizeof good / sizeof good[0])
#define NBAD (int)(sizeof bad / sizeof bad[0])

/* An H200 as the tuner would describe it, and an A100 (sm_80). */
static const nt_devinfo h200 = {132, 9, 0, 232448, 233472, 2048, 65536};
static const nt_devinfo a100 = {108, 8, 0, 166912, 167936, 2048, 65536};

static void problem(nt_problem *p, int x, int w, int64_t M, int64_t N) {
    nt_problem_init(p, op, M, N);
    p->dtype[NT_FWD_SX] = x;
    p->dtype[NT_FWD_SW] = w;
}

/* Element i of an array of dtype dt as double, decoded here (not by
 * nt_to_f64): bf16 is the top half of a float; fp16 through ref.h. */
static double elem(int dt, const void *a, size_t i) {
    if (dt == NT_F32) return ((const float *)a)[i];
    uint16_t h = ((const uint16_t *)a)[i];
    if (dt == NT_F16) return nt_f16_to_f32(h);
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Inputs of problem p filled as the runner fills them (tensor defs' ranges). */
static void fill(const nt_problem *p, void *x, void *w, uint64_t seed) {
    const nt_tensor_def *t = op->tensors;
    nt_fill(p->dtype[NT_FWD_SX], x, (size_t)(p->M * p->N), t[NT_FWD_X].lo, t[NT_FWD_X].hi, seed);
    nt_fill(p->dtype[NT_FWD_SW], w, (size_t)p->N, t[NT_FWD_W].lo, t[NT_FWD_W].hi, seed + 1);
}

TEST(table_is_consistent) {
    CHECK(!strcmp(op->name, "rmsnorm_fwd"), "%s", op->name);
    CHECK(op->ntensors == NT_FWD_NTENSORS && op->nslots == NT_FWD_NSLOTS, "%d %d", op->ntensors,
          op->nslots);
    const char *names[] = {"x", "w", "y", "rstd"};
    for (int i = 0; i < NT_FWD_NTENSORS; i++)
        CHECK(!strcmp(op->tensors[i].name, names[i]), "tensor %d is %s", i, op->tensors[i].name);
    const nt_tensor_def *r = &op->tensors[NT_FWD_RSTD];
    CHECK(r->role == NT_OUT && r->slot < 0 && r->fixed == NT_F32 && r->optional &&
          r->rows == NT_DIM_M && r->cols == NT_DIM_1, "rstd: M x 1 fp32 optional output");
    CHECK(op->tensors[NT_FWD_Y].role == NT_OUT && !op->tensors[NT_FWD_Y].optional &&
          op->tensors[NT_FWD_Y].slot == NT_FWD_SX, "y: required output of x's dtype");
    CHECK(op->tensors[NT_FWD_W].rows == NT_DIM_1 && op->tensors[NT_FWD_W].slot == NT_FWD_SW,
          "w: 1 x N of slot w");
    int nf = 0;
    for (const nt_family *const *f = op->families; *f; f++, nf++) {
        CHECK((*f)->op == op, "%s: op", (*f)->name);
        CHECK(!strncmp((*f)->name, "rmsnorm_fwd.", 12), "%s", (*f)->name);
        int ns = 0;
        while ((*f)->sources[ns]) ns++;
        char want[64];   /* the family's own file: <op>/<family>.cuh */
        snprintf(want, sizeof want, "rmsnorm_fwd/%s.cuh", (*f)->name + 12);
        CHECK(ns >= 1 && !strcmp((*f)->sources[ns - 1], want),
              "%s: its own file %s must be the last source", (*f)->name, want);
    }
    CHECK(nf == 14, "%d families", nf);
}

TEST(check_accepts_the_right_dtypes) {
    char err[256];
    nt_problem p;
    for (int i = 0; i < NGOOD; i++) {
        problem(&p, good[i][0], good[i][1], 4, 64);
        err[0] = 0;
        CHECK(op->check(&p, err, sizeof err) == 0, "x=%d w=%d refused: %s", good[i][0],
              good[i][1], err);
        CHECK(nt_problem_check(&p, err, sizeof err) == 0, "x=%d w=%d: %s", good[i][0],
              good[i][1], err);
    }
    for (int i = 0; i < NBAD; i++) {
        problem(&p, bad[i][0], bad[i][1], 4, 64);
        err[0] = 0;
        CHECK(op->check(&p, err, sizeof err) == -1, "x=%d w=%d accepted", bad[i][0], bad[i][1]);
        CHECK(strstr(err, "w must be"), "message: %s", err);
        CHECK(nt_problem_check(&p, err, sizeof err) == -1, "x=%d w=%d accepted", bad[i][0],
              bad[i][1]);
    }
    problem(&p, NT_BF16, NT_BF16, 1, 64);
    CHECK(p.dtype[NT_FWD_SX] == NT_BF16 && nt_problem_bytes(&p) == 64 * 2 * 3 + 4,
          "bytes of 1 x 64 bf16: %g", nt_problem_bytes(&p));
}

TEST(reference_matches_direct_computation) {
    const double eps = 1e-5;
    int bad_elems = 0;
    for (int c = 0; c < NGOOD; c++)
        for (uint64_t seed = 1; seed <= 4; seed++) {
            int64_t M = 1 + (int64_t)((seed * 7 + (uint64_t)c) % 6), N = 8 * (1 + (int64_t)((seed * 5 + (uint64_t)c * 3) % 9));
            nt_problem p;
            problem(&p, good[c][0], good[c][1], M, N);
            float x[6 * 72], w[72];            /* large enough for any dtype */
            double y[6 * 72], rstd[6];
            fill(&p, x, w, seed * 100 + (uint64_t)c);
            const void *t[NT_MAX_TENSORS] = {0};
            double *out[NT_MAX_TENSORS] = {0};
            t[NT_FWD_X] = x;
            t[NT_FWD_W] = w;
            out[NT_FWD_Y] = y;
            out[NT_FWD_RSTD] = rstd;
            CHECK(op->ref(&p, t, out, eps, 1) == 0, "ref failed");
            for (int64_t i = 0; i < M; i++) {
                double ss = 0;
                for (int64_t j = 0; j < N; j++) {
                    double v = elem(p.dtype[NT_FWD_SX], x, (size_t)(i * N + j));
                    ss += v * v;
                }
                double r = 1 / sqrt(ss / (double)N + eps);
                if (fabs(rstd[i] - r) > 1e-14 * r && bad_elems++ < 5)
                    CHECK(0, "combo %d M=%lld N=%lld rstd[%lld] %.17g vs %.17g", c, (long long)M,
                          (long long)N, (long long)i, rstd[i], r);
                for (int64_t j = 0; j < N; j++) {
                    double want = elem(p.dtype[NT_FWD_SX], x, (size_t)(i * N + j)) * r *
                                  elem(p.dtype[NT_FWD_SW], w, (size_t)j);
                    if (fabs(y[i * N + j] - want) > 1e-14 * fmax(1, fabs(want)) && bad_elems++ < 5)
                        CHECK(0, "combo %d M=%lld N=%lld y[%lld][%lld] %.17g vs %.17g", c,
                              (long long)M, (long long)N, (long long)i, (long long)j,
                              y[i * N + j], want);
                }
            }
        }
    CHECK(bad_elems == 0, "%d elements off", bad_elems);
}

TEST(reference_known_row) {
    /* x = (3, 4, 0, 0, 0, 0, 0, 0), w = 2 (f32), eps = 0: mean x^2 = 25/8,
     * r = sqrt(8)/5; y0 = 3 * 2 r, y1 = 4 * 2 r */
    float x[8] = {3, 4, 0, 0, 0, 0, 0, 0}, w[8] = {2, 2, 2, 2, 2, 2, 2, 2};
    double y[8], r;
    CHECK(nt_ref_rmsnorm_fwd(NT_F32, NT_F32, x, w, 1, 8, 0.0, y, &r, 1) == 0, "ref failed");
    double want = sqrt(8.0) / 5;
    CHECK(fabs(r - want) < 1e-15, "rstd %.17g, want %.17g", r, want);
    CHECK(fabs(y[0] - 6 * want) < 1e-14 && fabs(y[1] - 8 * want) < 1e-14 && y[2] == 0,
          "y = %g %g %g", y[0], y[1], y[2]);
}

TEST(reference_without_rstd_and_any_nthreads) {
    nt_problem p;
    problem(&p, NT_BF16, NT_F32, 1000, 520);
    size_t n = (size_t)(p.M * p.N);
    uint16_t *x = malloc(n * 2);
    float *w = malloc((size_t)p.N * 4);
    double *y1 = malloc(n * 8), *y2 = malloc(n * 8), *y3 = malloc(n * 8);
    double *r1 = malloc((size_t)p.M * 8), *r3 = malloc((size_t)p.M * 8);
    if (!x || !w || !y1 || !y2 || !y3 || !r1 || !r3) {
        CHECK(0, "out of memory");
        return;
    }
    fill(&p, x, w, 42);
    const void *t[NT_MAX_TENSORS] = {0};
    double *out[NT_MAX_TENSORS] = {0};
    t[NT_FWD_X] = x;
    t[NT_FWD_W] = w;
    out[NT_FWD_Y] = y1;
    out[NT_FWD_RSTD] = r1;
    CHECK(op->ref(&p, t, out, 1e-6, 1) == 0, "1 thread");
    out[NT_FWD_Y] = y2;
    out[NT_FWD_RSTD] = NULL;
    CHECK(op->ref(&p, t, out, 1e-6, 3) == 0, "3 threads, no rstd");
    out[NT_FWD_Y] = y3;
    out[NT_FWD_RSTD] = r3;
    CHECK(op->ref(&p, t, out, 1e-6, 0) == 0, "online CPUs");
    CHECK(!memcmp(y1, y2, n * 8), "y differs between 1 and 3 threads");
    CHECK(!memcmp(y1, y3, n * 8), "y differs between 1 thread and the online CPUs");
    CHECK(!memcmp(r1, r3, (size_t)p.M * 8), "rstd differs between 1 thread and the online CPUs");
    free(x), free(w), free(y1), free(y2), free(y3), free(r1), free(r3);
}

/* ---- plans ------------------------------------------------------------- */

/* A family with the values of its parameter grid (the test's own). */
typedef struct grid {
    const nt_family *f;
    const char *keys[4];
    const int *vals[4];
    int nvals[4];
    const char *kernel;       /* name expression prefix */
} grid;

static const int blocks[] = {32, 64, 96, 128, 256, 512, 1024};
static const int chunks[] = {1, 2, 3, 4, 6, 8, 12, 16};
static const int ks[] = {0, 1, 2, 4, 8, 32};
static const int tprs[] = {1, 2, 4, 8, 16, 32};
static const int stages[] = {1, 2, 3, 8};
static const int nrows[] = {1, 2, 3, 4, 8};
static const int sizes[] = {1, 2, 3, 4, 8};   /* 1 and 3 refused */
static const int wgs[] = {0, 1, 2, 3, 4, 16};  /* stage: divisors of chunks, or 0 */

static const grid grids[] = {
    {&nt_rmsnorm_fwd_row, {"block", "chunks", "k"}, {blocks, chunks, ks}, {7, 8, 6}, "nt_fwd_row<"},
    {&nt_rmsnorm_fwd_warp, {"tpr", "block", "chunks", "k"}, {tprs, blocks, chunks, ks},
     {6, 7, 8, 6}, "nt_fwd_warp<"},
    {&nt_rmsnorm_fwd_persist, {"block", "chunks", "stages", "k"}, {blocks, chunks, stages, ks},
     {7, 8, 4, 6}, "nt_fwd_persist<"},
    {&nt_rmsnorm_fwd_rows, {"block", "chunks", "rows", "k"}, {blocks, chunks, nrows, ks},
     {7, 8, 5, 6}, "nt_fwd_rows<"},
    {&nt_rmsnorm_fwd_wlate, {"block", "chunks", "rows", "k"}, {blocks, chunks, nrows, ks},
     {7, 8, 5, 6}, "nt_fwd_wlate<"},
    {&nt_rmsnorm_fwd_stage, {"block", "chunks", "k", "wg"}, {blocks, chunks, ks, wgs},
     {7, 8, 6, 6}, "nt_fwd_stage<"},
    {&nt_rmsnorm_fwd_cluster, {"cluster", "block", "chunks", "k"}, {sizes, blocks, chunks, ks},
     {5, 7, 8, 6}, "nt_fwd_cluster<"},
    {&nt_rmsnorm_fwd_loop, {"block", "chunks", "k"}, {blocks, chunks, ks}, {7, 8, 6}, "nt_fwd_loop<"},
};
#define NGRIDS (int)(sizeof grids / sizeof grids[0])

static int nkeys(const grid *g) { return g->keys[3] ? 4 : 3; }

/* The idx-th point of g's grid into p; 0, or -1 past the end. */
static int point(const grid *g, long idx, nt_params *p) {
    char v[16];
    p->n = 0;
    for (int i = nkeys(g) - 1; i >= 0; i--) {
        snprintf(v, sizeof v, "%d", g->vals[i][idx % g->nvals[i]]);
        nt_params_set(p, g->keys[i], v);
        idx /= g->nvals[i];
    }
    return idx ? -1 : 0;
}

/* Threads that share a row under params p of family f. */
static int64_t row_threads(const nt_family *f, const nt_params *p) {
    if (f == &nt_rmsnorm_fwd_cluster)
        return nt_params_int(p, "cluster", NULL) * nt_params_int(p, "block", NULL);
    return nt_params_int(p, f == &nt_rmsnorm_fwd_warp ? "tpr" : "block", NULL);
}

/* Check one accepted plan; returns the number of failed checks (reported). */
static int check_plan(const grid *g, const nt_params *p, const nt_problem *pr, const nt_plan *pl) {
    int e = 16 / nt_dtypes[pr->dtype[NT_FWD_SX]].size, fails = 0;
    const nt_launch *l = &pl->l[0];
    int64_t B = nt_params_int(p, "block", NULL), T = row_threads(g->f, p);
    int64_t C = nt_params_int(p, "chunks", NULL), K = nt_params_int(p, "k", NULL);
    char pre[96];
    snprintf(pre, sizeof pre, "%s%s, %s, ", g->kernel, nt_dtypes[pr->dtype[NT_FWD_SX]].ctype,
             nt_dtypes[pr->dtype[NT_FWD_SW]].ctype);
#define PCHECK(cond, ...)                                                                    \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fails++;                                                                         \
            CHECK(cond, __VA_ARGS__);                                                        \
        }                                                                                    \
    } while (0)
    PCHECK(pl->nlaunch == 1 && pl->workspace == 0, "%s: one launch, no workspace", l->name);
    PCHECK(!strncmp(l->name, pre, strlen(pre)) && l->name[strlen(l->name) - 1] == '>',
           "name %s, want prefix %s", l->name, pre);
    PCHECK(l->block == (unsigned)B && B <= 1024 && B % 32 == 0, "%s: block %u", l->name, l->block);
    if (g->f != &nt_rmsnorm_fwd_loop)   /* loop walks the row in tiles: any N */
        PCHECK(T * C * e >= pr->N, "%s: N=%lld not covered", l->name, (long long)pr->N);
    for (int i = 0; i < NT_MAX_TENSORS; i++) PCHECK(pl->tol[i] == 0, "%s: tol[%d]", l->name, i);
    if (g->f == &nt_rmsnorm_fwd_persist) {
        int64_t S = nt_params_int(p, "stages", NULL);
        PCHECK(l->grid == 0 && l->blocks_per_sm == K, "%s: persistent grid", l->name);
        PCHECK(l->smem == (S > 1 ? S * C * B * 16 : 0) && l->smem <= (unsigned)h200.smem_per_block_optin,
               "%s: smem %u", l->name, l->smem);
    } else if (g->f == &nt_rmsnorm_fwd_cluster) {
        /* S blocks per row, the grid a multiple of S (clusters loop past
         * the 1-D limit) */
        int64_t S = nt_params_int(p, "cluster", NULL);
        int64_t want = pr->M < 2147483647LL / S ? pr->M * S : 2147483647LL / S * S;
        PCHECK((S == 2 || S == 4 || S == 8) && l->cluster == (unsigned)S &&
                   l->grid == (unsigned)want && l->grid % S == 0 && l->smem == 0,
               "%s: cluster %u, grid %u for M=%lld", l->name, l->cluster, l->grid,
               (long long)pr->M);
    } else {
        PCHECK(l->cluster <= 1, "%s: cluster %u", l->name, l->cluster);
        int64_t rows = g->f == &nt_rmsnorm_fwd_rows || g->f == &nt_rmsnorm_fwd_wlate
                           ? nt_params_int(p, "rows", NULL) : B / T;
        int64_t need = (pr->M + rows - 1) / rows;
        unsigned smem = g->f == &nt_rmsnorm_fwd_stage ? (unsigned)(C * B * 16) : 0;
        PCHECK(l->grid == (need < 2147483647LL ? need : 2147483647LL) && l->smem == smem &&
                   smem <= (unsigned)h200.smem_per_block_optin,
               "%s: grid %u for M=%lld", l->name, l->grid, (long long)pr->M);
    }
    return fails;
}

TEST(plans_are_well_formed_and_cover_every_problem) {
    static const int64_t Ns[] = {8, 16, 24, 40, 96, 128, 1000, 1032, 2048, 4096, 4104, 8192,
                                 12288, 16376, 16384, 16392, 32768, 40968, NT_MAX_N};
    static const int64_t Ms[] = {1, 7, 65536, 3000000000LL};
    char err[256], err2[256];
    long accepted = 0, refused = 0;
    int fails = 0;
    for (int c = 0; c < NGOOD && fails < 10; c++)
        for (size_t m = 0; m < sizeof Ms / sizeof Ms[0]; m++)
            for (size_t n = 0; n < sizeof Ns / sizeof Ns[0]; n++) {
                nt_problem pr;
                problem(&pr, good[c][0], good[c][1], Ms[m], Ns[n]);
                int any = 0;
                for (int gi = 0; gi < NGRIDS; gi++) {
                    const grid *g = &grids[gi];
                    nt_params p;
                    for (long idx = 0; point(g, idx, &p) == 0; idx++) {
                        nt_plan pl;
                        int ck = g->f->check(&p, &pr, &h200, err, sizeof err);
                        int ck0 = g->f->check(&p, &pr, NULL, err2, sizeof err2);
                        int pn = g->f->plan(&p, &pr, &h200, &pl, err2, sizeof err2);
                        if (ck != pn || (ck == 0 && ck0 != 0)) {
                            fails++;
                            CHECK(0, "%s: check %d (no device %d), plan %d", g->f->name, ck, ck0,
                                  pn);
                        }
                        if (ck) {
                            refused++;
                            CHECK(err[0], "%s: refused without a message", g->f->name);
                            continue;
                        }
                        CHECK(nt_params_validate(g->f, &p, err, sizeof err) == 0, "%s", err);
                        accepted++;
                        any = 1;
                        fails += check_plan(g, &p, &pr, &pl);
                    }
                }
                if (!any) fails++;
                CHECK(any, "no family accepts x=%d w=%d M=%lld N=%lld", good[c][0], good[c][1],
                      (long long)Ms[m], (long long)Ns[n]);
            }
    CHECK(accepted > 1000 && refused > 1000, "accepted %ld, refused %ld", accepted, refused);
}

/* The cluster family needs thread block clusters: an sm_80 device is
 * refused by check and plan with a message naming why, an sm_90 one not. */
TEST(cluster_needs_sm90) {
    nt_problem pr;
    nt_params p;
    nt_plan pl;
    char err[256] = "";
    problem(&pr, NT_BF16, NT_BF16, 4096, 16384);
    CHECK(nt_params_parse("cluster=2,block=512,chunks=2,k=0", &p) == 0, "params");
    CHECK(nt_rmsnorm_fwd_cluster.check(&p, &pr, &h200, err, sizeof err) == 0, "h200: %s", err);
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_cluster.check(&p, &pr, &a100, err, sizeof err) != 0 &&
              strstr(err, "compute capability") != NULL,
          "sm_80 accepted or no reason: '%s'", err);
    CHECK(nt_rmsnorm_fwd_cluster.plan(&p, &pr, &a100, &pl, err, sizeof err) != 0, "sm_80 planned");
    CHECK(nt_rmsnorm_fwd_cluster.plan(&p, &pr, &h200, &pl, err, sizeof err) == 0 &&
              pl.l[0].cluster == 2 && pl.l[0].grid == 8192,
          "h200 plan: cluster %u grid %u", pl.l[0].cluster, pl.l[0].grid);
}

TEST(the_fallback_covers_every_n) {
    /* loop with block=1024, chunks=16384/(1024*E), k=0 runs every N (every
     * multiple of 8 up to NT_MAX_N) of every dtype combination, on an
     * sm_90 and an sm_80 device, one block per row at full precision */
    static const nt_devinfo *const devs[] = {&h200, &a100, NULL};
    char err[256], params[128];
    int wrong = 0;
    for (int c = 0; c < NGOOD; c++) {
        nt_problem pr;
        problem(&pr, good[c][0], good[c][1], 5, 8);
        const nt_family *f = op->fallback(&pr, params, sizeof params);
        char want[64];
        snprintf(want, sizeof want, "block=1024,chunks=%d,k=0",
                 16384 / (1024 * (16 / nt_dtypes[good[c][0]].size)));
        CHECK(f == &nt_rmsnorm_fwd_loop && !strcmp(params, want), "x=%d w=%d: fallback %s %s",
              good[c][0], good[c][1], f ? f->name : "none", f ? params : "");
        if (!f) continue;
        nt_params p;
        CHECK(nt_params_parse(params, &p) == 0 && nt_params_validate(f, &p, err, sizeof err) == 0,
              "%s: %s", params, err);
        for (int64_t N = 8; N <= NT_MAX_N; N += 8)
            for (int m = 0; m < 2; m++)
                for (int d = 0; devs[d]; d++) {
                    nt_plan pl;
                    problem(&pr, good[c][0], good[c][1], m ? 3000000000LL : 5, N);
                    int rc = f->plan(&p, &pr, devs[d], &pl, err, sizeof err);
                    if ((rc || !nt_plan_precise(&pl, &pr) || pl.nlaunch != 1 ||
                         pl.l[0].block != 1024 || pl.l[0].grid != (m ? 2147483647u : 5u) ||
                         pl.workspace != 0) &&
                        wrong++ < 5)
                        CHECK(0, "fallback x=%d w=%d M=%lld N=%lld cc %d: rc %d %s", good[c][0],
                              good[c][1], (long long)pr.M, (long long)N, devs[d]->cc_major, rc,
                              rc ? err : pl.l[0].name);
                }
    }
    CHECK(wrong == 0, "%d fallback plans wrong", wrong);
    nt_problem pr;
    problem(&pr, NT_F16, NT_F32, 7, NT_MAX_N);
    CHECK(op->fallback(&pr, params, sizeof params) == &nt_rmsnorm_fwd_loop, "f16/f32 fallback");
    problem(&pr, NT_BF16, NT_F16, 7, 1024);
    CHECK(op->fallback(&pr, params, sizeof params) == NULL, "a refused dtype pair has a fallback");
}

/* The loop family: any N with any block and chunks, the same name as row
 * (the kernel's template), one block per row; refused with numbers where
 * the registers would not do, or k blocks would not fit an SM. */
TEST(loop_limits_and_names) {
    nt_problem pr;
    nt_params p;
    nt_plan pl;
    char err[256] = "";
    problem(&pr, NT_BF16, NT_F32, 3, NT_MAX_N);
    CHECK(nt_params_parse("block=128,chunks=3,k=2", &p) == 0, "params");
    CHECK(nt_rmsnorm_fwd_loop.plan(&p, &pr, &a100, &pl, err, sizeof err) == 0 &&
              !strcmp(pl.l[0].name, "nt_fwd_loop<nt_bf16, float, 128, 3, 2>") &&
              pl.l[0].grid == 3 && pl.l[0].block == 128 && pl.l[0].pdl && pl.l[0].smem == 0 &&
              pl.l[0].cluster == 0,
          "%s grid %u: %s", pl.l[0].name, pl.l[0].grid, err);
    pr.N = 8;        /* one chunk of one thread */
    CHECK(nt_rmsnorm_fwd_loop.check(&p, &pr, NULL, err, sizeof err) == 0, "N=8: %s", err);
    /* 16 chunks of bf16 x and fp32 w under the 64 registers of 1024
     * threads: refused, saying how many it needs and has */
    CHECK(nt_params_parse("block=1024,chunks=16,k=0", &p) == 0, "params");
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_loop.check(&p, &pr, NULL, err, sizeof err) == -1 &&
              strstr(err, "chunks=16") && strstr(err, "leave 64") && strstr(err, "spill"),
          "'%s'", err);
    /* 4 blocks of 512 (32 registers each are enough for one bf16 chunk)
     * on a device of 1024 threads per SM */
    nt_devinfo small = h200;
    small.max_threads_per_sm = 1024;
    problem(&pr, NT_BF16, NT_BF16, 3, NT_MAX_N);
    CHECK(nt_params_parse("block=512,chunks=1,k=4", &p) == 0, "params");
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_loop.check(&p, &pr, &h200, err, sizeof err) == 0 &&
              nt_rmsnorm_fwd_loop.check(&p, &pr, &small, err, sizeof err) == -1 &&
              strstr(err, "k=4 blocks of 512 threads"),
          "k=4 x 512 threads: '%s'", err);
    CHECK(nt_params_parse("block=100,chunks=1,k=0", &p) == 0, "params");
    CHECK(nt_rmsnorm_fwd_loop.check(&p, &pr, NULL, err, sizeof err) == -1 &&
              strstr(err, "multiple of 32"), "block=100: '%s'", err);
}

/* awarp and arow: the grown families of warp and row (the export makes
 * their stretches there; rows and wlate grow in themselves); each takes
 * its base's parameters and accepts exactly what it accepts, on an H200
 * and on no device, and plans one launch of the same grid and block under
 * its own kernel name. */
TEST(shifted_families_are_their_bases) {
    static const struct {
        const nt_family *f, *base;
        const char *kernel;
        const char *cases[6];
    } t[] = {
        {&nt_rmsnorm_fwd_awarp, &nt_rmsnorm_fwd_warp, "nt_fwd_awarp<nt_bf16, float, 32, 512, 5, 0>",
         {"tpr=32,block=512,chunks=5,k=0", "tpr=32,block=512,chunks=4,k=0",
          "tpr=24,block=512,chunks=5,k=0", "tpr=32,block=96,chunks=16,k=0",
          "tpr=32,block=1024,chunks=16,k=2", "tpr=8,block=128,chunks=16,k=8"}},
        {&nt_rmsnorm_fwd_arow, &nt_rmsnorm_fwd_row, "nt_fwd_arow<nt_bf16, float, 32, 5, 0>",
         {"block=32,chunks=5,k=0", "block=32,chunks=4,k=0", "block=100,chunks=2,k=0",
          "block=1024,chunks=16,k=2", "block=160,chunks=1,k=8", "block=32,chunks=5,k=33"}},
    };
    CHECK(nt_rmsnorm_fwd_warp.grown == &nt_rmsnorm_fwd_awarp &&
              nt_rmsnorm_fwd_row.grown == &nt_rmsnorm_fwd_arow &&
              !nt_rmsnorm_fwd_rows.grown && !nt_rmsnorm_fwd_wlate.grown,
          "grown families");
    nt_problem pr;
    problem(&pr, NT_BF16, NT_F32, 4096, 1032);    /* 129 chunks a row */
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        CHECK(t[i].f->nparams == t[i].base->nparams && t[i].f->params == t[i].base->params &&
                  !t[i].f->grown && t[i].f->op == op,
              "%s: its base's parameters", t[i].f->name);
        for (int c = 0; c < 6; c++) {
            nt_params p;
            nt_plan pl, pb;
            char e1[256] = "", e2[256] = "";
            CHECK(nt_params_parse(t[i].cases[c], &p) == 0, "%s", t[i].cases[c]);
            for (int d = 0; d < 2; d++) {
                const nt_devinfo *dev = d ? &h200 : NULL;
                int a = t[i].f->check(&p, &pr, dev, e1, sizeof e1);
                int b = t[i].base->check(&p, &pr, dev, e2, sizeof e2);
                CHECK(a == b, "%s %s: %d (%s), base %d (%s)", t[i].f->name, t[i].cases[c], a, e1, b,
                      e2);
                /* a message that names the family names the shifted one */
                char own[64], bn[64];
                snprintf(own, sizeof own, "%s needs", t[i].f->name + strlen("rmsnorm_fwd."));
                snprintf(bn, sizeof bn, "%s needs", t[i].base->name + strlen("rmsnorm_fwd."));
                if (a) CHECK(!strstr(e2, bn) || strstr(e1, own), "%s: '%s'", t[i].f->name, e1);
            }
            if (t[i].f->plan(&p, &pr, &h200, &pl, e1, sizeof e1)) continue;
            CHECK(t[i].base->plan(&p, &pr, &h200, &pb, e2, sizeof e2) == 0 && pl.nlaunch == 1 &&
                      pl.l[0].grid == pb.l[0].grid && pl.l[0].block == pb.l[0].block &&
                      pl.l[0].smem == pb.l[0].smem && pl.l[0].pdl,
                  "%s %s: plan", t[i].f->name, t[i].cases[c]);
            if (c == 0) CHECK(!strcmp(pl.l[0].name, t[i].kernel), "%s", pl.l[0].name);
        }
    }
}

/* tma: sm_90 and newer; a persistent grid (0: the launcher sizes it) of k
 * blocks per SM; shared memory of `stages` rows of block x chunks slots,
 * refused when it does not fit the device; its own kernel name. */
TEST(tma_plan_and_limits) {
    nt_problem pr;
    nt_params p;
    nt_plan pl;
    char err[256] = "";
    problem(&pr, NT_BF16, NT_F32, 4096, 16384);
    CHECK(nt_params_parse("block=512,chunks=4,stages=3,k=1", &p) == 0, "params");
    CHECK(nt_rmsnorm_fwd_tma.plan(&p, &pr, &h200, &pl, err, sizeof err) == 0 && pl.nlaunch == 1 &&
              pl.l[0].grid == 0 && pl.l[0].blocks_per_sm == 1 && pl.l[0].block == 512 &&
              pl.l[0].smem == 3u * 4 * 512 * 16 && pl.l[0].pdl &&
              !strcmp(pl.l[0].name, "nt_fwd_tma<nt_bf16, float, 512, 4, 3, 1>"),
          "%s grid %u smem %u: %s", pl.l[0].name, pl.l[0].grid, pl.l[0].smem, err);
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_tma.check(&p, &pr, &a100, err, sizeof err) == -1 &&
              strstr(err, "compute capability 9.0"), "sm_80: '%s'", err);
    /* 4 rows of 32768 bf16 (64 KB each) do not fit, 3 do; stages 5 is out of range */
    CHECK(nt_params_parse("block=1024,chunks=4,stages=4,k=0", &p) == 0, "params");
    problem(&pr, NT_BF16, NT_BF16, 4096, 32768);
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_tma.check(&p, &pr, &h200, err, sizeof err) == -1 &&
              strstr(err, "shared memory"), "4 x 64 KB: '%s'", err);
    CHECK(nt_params_parse("block=1024,chunks=4,stages=3,k=0", &p) == 0, "params");
    CHECK(nt_rmsnorm_fwd_tma.check(&p, &pr, &h200, err, sizeof err) == 0, "3 x 64 KB: %s", err);
    CHECK(nt_params_parse("block=1024,chunks=4,stages=5,k=0", &p) == 0, "params");
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_tma.check(&p, &pr, NULL, err, sizeof err) == -1 &&
              strstr(err, "stages in [1, 4]"), "stages 5: '%s'", err);
}

/* cstage: a resident grid of clusters (grid 0, cluster size and k set), the
 * ring in dynamic shared memory, refused below sm_90, past the register
 * rule and where the ring does not fit */
TEST(cstage_plan_and_limits) {
    nt_problem pr;
    nt_params p;
    nt_plan pl;
    char err[256] = "";
    problem(&pr, NT_BF16, NT_BF16, 1024, 65536);
    CHECK(nt_params_parse("cluster=8,block=128,chunks=8,stages=3,k=0", &p) == 0, "params");
    CHECK(nt_rmsnorm_fwd_cstage.plan(&p, &pr, &h200, &pl, err, sizeof err) == 0 &&
              pl.nlaunch == 1 && pl.l[0].grid == 0 && pl.l[0].cluster == 8 &&
              pl.l[0].blocks_per_sm == 0 && pl.l[0].block == 128 &&
              pl.l[0].smem == 3u * 8 * 128 * 16 && pl.l[0].pdl &&
              !strcmp(pl.l[0].name, "nt_fwd_cstage<nt_bf16, nt_bf16, 8, 128, 8, 3, 0>"),
          "%s grid %u cluster %u smem %u: %s", pl.l[0].name, pl.l[0].grid, pl.l[0].cluster,
          pl.l[0].smem, err);
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_cstage.check(&p, &pr, &a100, err, sizeof err) == -1 &&
              strstr(err, "compute capability 9.0"), "sm_80: '%s'", err);
    /* 8 x 128 x 7 chunks of 8 cover 57344 < 65536 */
    CHECK(nt_params_parse("cluster=8,block=128,chunks=7,stages=3,k=0", &p) == 0, "params");
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_cstage.check(&p, &pr, NULL, err, sizeof err) == -1 &&
              strstr(err, "exceeds"), "short: '%s'", err);
    /* block 1024 at k 2 leaves 32 registers: chunks 1 fit with two stages,
     * not with three (the next row's sum ahead), chunks 2 would spill */
    problem(&pr, NT_BF16, NT_BF16, 1024, 32768);
    CHECK(nt_params_parse("cluster=2,block=1024,chunks=2,stages=3,k=2", &p) == 0, "params");
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_cstage.check(&p, &pr, NULL, err, sizeof err) == -1 &&
              strstr(err, "spill"), "spill: '%s'", err);
    CHECK(nt_params_parse("cluster=4,block=1024,chunks=1,stages=2,k=2", &p) == 0, "params");
    CHECK(nt_rmsnorm_fwd_cstage.check(&p, &pr, &h200, err, sizeof err) == 0, "fits: %s", err);
    CHECK(nt_params_parse("cluster=4,block=1024,chunks=1,stages=3,k=2", &p) == 0, "params");
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_cstage.check(&p, &pr, NULL, err, sizeof err) == -1 &&
              strstr(err, "spill"), "ahead: '%s'", err);
    /* four stages of 256 threads x 16 chunks (256 KB) fit no SM */
    CHECK(nt_params_parse("cluster=2,block=256,chunks=16,stages=4,k=0", &p) == 0, "params");
    problem(&pr, NT_BF16, NT_BF16, 1024, 65536);
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_cstage.check(&p, &pr, &h200, err, sizeof err) == -1 &&
              strstr(err, "shared memory"), "ring: '%s'", err);
    CHECK(nt_params_parse("cluster=3,block=128,chunks=8,stages=3,k=0", &p) == 0, "params");
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_cstage.check(&p, &pr, NULL, err, sizeof err) == -1 &&
              strstr(err, "cluster 2, 4 or 8"), "cluster 3: '%s'", err);
}

/* ring: a resident grid (grid 0, k set), chunks + spare slots a thread of
 * dynamic shared memory, the kernel named in the params' order; refused
 * where spare is not in [1, chunks], wg does not divide chunks, the
 * registers would spill (w held at 16 chunks) or the ring does not fit */
TEST(ring_plan_and_limits) {
    nt_problem pr;
    nt_params p;
    nt_plan pl;
    char err[256] = "";
    problem(&pr, NT_BF16, NT_BF16, 1024, 65536);
    CHECK(nt_params_parse("block=512,chunks=16,spare=8,k=0,wg=1", &p) == 0, "params");
    CHECK(nt_rmsnorm_fwd_ring.plan(&p, &pr, &h200, &pl, err, sizeof err) == 0 &&
              pl.nlaunch == 1 && pl.l[0].grid == 0 && pl.l[0].blocks_per_sm == 0 &&
              pl.l[0].block == 512 && pl.l[0].smem == 24u * 512 * 16 && pl.l[0].pdl &&
              pl.l[0].cluster <= 1 && pl.workspace == 0 &&
              !strcmp(pl.l[0].name, "nt_fwd_ring<nt_bf16, nt_bf16, 512, 16, 8, 0, 1>"),
          "%s grid %u smem %u: %s", pl.l[0].name, pl.l[0].grid, pl.l[0].smem, err);
    /* w of 16 chunks held in registers beside the walk would spill */
    CHECK(nt_params_parse("block=512,chunks=16,spare=8,k=0,wg=0", &p) == 0, "params");
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_ring.check(&p, &pr, NULL, err, sizeof err) == -1 &&
              strstr(err, "spill"), "wg 0: '%s'", err);
    /* 16 + 16 slots of 512 threads: 256 KB, more than a block may have */
    CHECK(nt_params_parse("block=512,chunks=16,spare=16,k=0,wg=1", &p) == 0, "params");
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_ring.check(&p, &pr, &h200, err, sizeof err) == -1 &&
              strstr(err, "shared memory"), "ring too large: '%s'", err);
    CHECK(nt_rmsnorm_fwd_ring.check(&p, &pr, NULL, err, sizeof err) == 0,
          "no device, no shared memory limit: %s", err);
    CHECK(nt_params_parse("block=512,chunks=16,spare=17,k=0,wg=1", &p) == 0, "params");
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_ring.check(&p, &pr, NULL, err, sizeof err) == -1 &&
              strstr(err, "spare in [1, chunks=16]"), "spare 17: '%s'", err);
    CHECK(nt_params_parse("block=512,chunks=16,spare=0,k=0,wg=1", &p) == 0, "params");
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_ring.check(&p, &pr, NULL, err, sizeof err) == -1 &&
              strstr(err, "spare in [1, chunks=16]"), "spare 0: '%s'", err);
    CHECK(nt_params_parse("block=512,chunks=16,spare=8,k=0,wg=3", &p) == 0, "params");
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_ring.check(&p, &pr, NULL, err, sizeof err) == -1 &&
              strstr(err, "divisor of chunks"), "wg 3: '%s'", err);
    /* 512 x 15 chunks of 8 cover 61440 < 65536 */
    CHECK(nt_params_parse("block=512,chunks=15,spare=8,k=0,wg=1", &p) == 0, "params");
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_ring.check(&p, &pr, NULL, err, sizeof err) == -1 &&
              strstr(err, "exceeds"), "short: '%s'", err);
    /* k 2 blocks of 512 x (4 + 4) slots (64 KB each) fit an SM; k 4 not */
    problem(&pr, NT_BF16, NT_BF16, 4096, 16384);
    CHECK(nt_params_parse("block=512,chunks=4,spare=4,k=2,wg=0", &p) == 0, "params");
    CHECK(nt_rmsnorm_fwd_ring.plan(&p, &pr, &h200, &pl, err, sizeof err) == 0 &&
              pl.l[0].blocks_per_sm == 2 && pl.l[0].smem == 8u * 512 * 16 &&
              !strcmp(pl.l[0].name, "nt_fwd_ring<nt_bf16, nt_bf16, 512, 4, 4, 2, 0>"),
          "%s smem %u: %s", pl.l[0].name, pl.l[0].smem, err);
    CHECK(nt_params_parse("block=512,chunks=4,spare=4,k=4,wg=0", &p) == 0, "params");
    err[0] = 0;
    CHECK(nt_rmsnorm_fwd_ring.check(&p, &pr, &h200, err, sizeof err) == -1, "k 4: '%s'", err);
}

/* ring's schedule (ring.cuh), one thread's program order played on a model
 * of its slots and cp.async groups: the prologue copies row 0's C chunks
 * into slots 0..C-1 and row 1's first S into C..C+S-1, a group each; row i
 * waits until at most S groups are pending (cp.async.wait_group S: only
 * the older ones are sure to have landed), reads chunk j from slot
 * (i*C + j) mod (C + S) for its sum and again for y, and after y's read of
 * chunk j copies into the same slot chunk j + S of row i + 1, or chunk
 * j + S - C of row i + 2, a group each (empty past the last row).  Every
 * read must find the chunk it wants, landed, and no copy may land in a
 * slot whose chunk is still to be read. */
TEST(ring_schedule_reads_every_chunk_landed) {
    enum { MAXR = 32, MAXG = 4096 };
    int wrong = 0;
    for (int C = 1; C <= 16 && !wrong; C++)
        for (int S = 1; S <= C && !wrong; S++)
            for (int rows = 1; rows <= 7 && !wrong; rows++) {
                const int R = C + S;
                int slot_row[MAXR], slot_chunk[MAXR], slot_group[MAXR];
                int ngroups = 0;
                for (int k = 0; k < R; k++) slot_row[k] = -1, slot_chunk[k] = -1, slot_group[k] = -1;
                /* a copy of (row, chunk) into slot k, in a group of its own */
                #define RING_COPY(row, chunk, k)                                      \
                    do {                                                          \
                        if ((row) < rows) {                                       \
                            slot_row[k] = (row), slot_chunk[k] = (chunk);         \
                            slot_group[k] = ngroups;                              \
                        }                                                         \
                        ngroups++;                                                \
                    } while (0)
                for (int q = 0; q < C; q++) RING_COPY(0, q, q);
                for (int q = 0; q < S; q++) RING_COPY(1, q, C + q);
                for (int i = 0; i < rows && !wrong; i++) {
                    const int landed = ngroups - S;   /* groups [0, landed) are done */
                    for (int pass = 0; pass < 2; pass++)
                        for (int j = 0; j < C; j++) {
                            const int k = (i * C + j) % R;
                            if (slot_row[k] != i || slot_chunk[k] != j || slot_group[k] >= landed) {
                                CHECK(0, "C=%d S=%d rows=%d: row %d chunk %d read slot %d holding "
                                      "row %d chunk %d (group %d, %d landed)", C, S, rows, i, j,
                                      k, slot_row[k], slot_chunk[k], slot_group[k], landed);
                                wrong = 1;
                                break;
                            }
                            if (pass == 1) {          /* y stored: the slot's next chunk */
                                if (j + S < C) RING_COPY(i + 1, j + S, k);
                                else RING_COPY(i + 2, j + S - C, k);
                            }
                        }
                    CHECK(ngroups < MAXG, "groups");
                }
                #undef RING_COPY
            }
    CHECK(!wrong, "the ring's schedule");
}

int main(void) {
    RUN(table_is_consistent);
    RUN(check_accepts_the_right_dtypes);
    RUN(reference_matches_direct_computation);
    RUN(reference_known_row);
    RUN(reference_without_rstd_and_any_nthreads);
    RUN(plans_are_well_formed_and_cover_every_problem);
    RUN(cluster_needs_sm90);
    RUN(the_fallback_covers_every_n);
    RUN(loop_limits_and_names);
    RUN(shifted_families_are_their_bases);
    RUN(tma_plan_and_limits);
    RUN(cstage_plan_and_limits);
    RUN(ring_plan_and_limits);
    RUN(ring_schedule_reads_every_chunk_landed);
    T_END();
}
