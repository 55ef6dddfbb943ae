/* rmsnorm_bwd/test_op.c -- CPU tests of the RMSNorm backward op: its
 * float64 reference, dtype rules, tolerances and kernel names.
 *
 * - The double reference matches central finite differences of the loss
 *   L(x, w) = sum_ij dy_ij rmsnorm(x, w)_ij element by element, and known
 *   values on a tiny row.
 * - The op's dtype-generic reference is bitwise independent of the thread
 *   count, and bitwise the double reference on the same values converted,
 *   for every allowed dtype combination.
 * - check() accepts exactly the allowed dtype combinations.
 * - plan(): naive with bf16 partials is not precise enough for an f32 or
 *   f16 dw, but is for a bf16 dw; every other plan is; every name
 *   expression starts with the problem's ctypes; the naive chunk rule is
 *   the fewest power of two keeping a block at 1024 threads; the persistent
 *   limits and shared memory follow the dtypes.
 * - cluster: check() refuses cluster sizes other than 2, 4, 8, devices
 *   below compute capability 9.0 (with a clear message), N beyond
 *   cluster*block*chunks*E, registers that would spill and k that cannot
 *   fit; plan() launches whole clusters sized by the launcher, and its
 *   workspace holds one partial row for every cluster the launcher may
 *   start (nt_grid_fit, nt_chain_nparts: kernels/launch.c), which keep the
 *   persistent grid as it was.
 * - loop: any N, the register rule (refusals name the numbers), the
 *   persistent grid and its workspace; the op's fallback (loop) plans
 *   every N up to NT_MAX_N for every dtype combination, precisely, on an
 *   sm_90 and an sm_80 device. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/launch.h"
#include "kernels/ref.h"
#include "kernels/rmsnorm_bwd/ref.h"
#include "kernels/rmsnorm_bwd/tensors.h"
#include "tests/t.h"

extern const nt_op nt_op_rmsnorm_bwd;
extern const nt_family nt_rmsnorm_bwd_naive;
extern const nt_family nt_rmsnorm_bwd_persistent;
extern const nt_family nt_rmsnorm_bwd_warp;
extern const nt_family nt_rmsnorm_bwd_cluster;
extern const nt_family nt_rmsnorm_bwd_loop;
extern const nt_family nt_rmsnorm_bwd_fused;
extern const nt_family nt_rmsnorm_bwd_cstage;
extern const nt_family nt_rmsnorm_bwd_aligned;
extern const nt_family nt_rmsnorm_bwd_held;
extern const nt_family nt_rmsnorm_bwd_tma;
extern const nt_family nt_rmsnorm_bwd_wtma;
extern const nt_family nt_rmsnorm_bwd_wstage;
extern const nt_family nt_rmsnorm_bwd_rows;
extern const nt_family nt_rmsnorm_bwd_cols;
extern const nt_family nt_rmsnorm_bwd_pcluster;
extern const nt_family nt_rmsnorm_bwd_ring;

#define OP (&nt_op_rmsnorm_bwd)
#define ALIGN256(x) (((x) + 255) / 256 * 256)

/* Uniform double in [lo, hi) from a tiny LCG (test-local). */
static double urand(uint64_t *s, double lo, double hi) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (double)(*s >> 11) / 9007199254740992.0;
}

/* L = sum dy * rmsnorm(x, w), the forward written out here. */
static double loss(const double *x, const double *w, const double *dy, int M, int N, double eps) {
    double l = 0;
    for (int i = 0; i < M; i++) {
        double ss = 0;
        for (int j = 0; j < N; j++) ss += x[i * N + j] * x[i * N + j];
        double r = 1.0 / sqrt(ss / N + eps);
        for (int j = 0; j < N; j++) l += dy[i * N + j] * x[i * N + j] * r * w[j];
    }
    return l;
}

static int close_rel(double a, double b, double tol) {
    return fabs(a - b) <= tol * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* 1 when (x, w, dw) is a dtype combination the op allows. */
static int allowed(int x, int w, int dw) {
    return (w == x || w == NT_F32) && (dw == NT_F32 || dw == w);
}

/* A problem of the op with dtypes (x, w, dw) and shape M x N. */
static nt_problem problem(int x, int w, int dw, int64_t M, int64_t N) {
    nt_problem p;
    nt_problem_init(&p, OP, M, N);
    p.dtype[NT_BWD_SX] = x;
    p.dtype[NT_BWD_SW] = w;
    p.dtype[NT_BWD_SDW] = dw;
    return p;
}

/* Compare grad[0..n) with central finite differences of the loss in each
 * element of v (x or w, perturbed in place and restored); report at most
 * 5 - bad mismatches; the number of mismatches. */
static int fd_check(double *v, int n, const double *grad, const char *name, const double *x,
                    const double *w, const double *dy, int M, int N, double eps, double h,
                    int seed, int bad) {
    int nbad = 0;
    for (int i = 0; i < n; i++) {
        double keep = v[i];
        v[i] = keep + h;
        double lp = loss(x, w, dy, M, N, eps);
        v[i] = keep - h;
        double lm = loss(x, w, dy, M, N, eps);
        v[i] = keep;
        double fd = (lp - lm) / (2 * h);
        if (!close_rel(grad[i], fd, 1e-6) && bad + nbad++ < 5)
            CHECK(0, "seed %d M=%d N=%d %s[%d] = %.12g, finite difference %.12g", seed, M, N,
                  name, i, grad[i], fd);
    }
    return nbad;
}

TEST(backward_matches_finite_differences) {
    const double h = 1e-5, eps = 1e-6;
    int bad = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        uint64_t s = seed * 7919;
        int M = 1 + (int)(urand(&s, 0, 5));          /* 1..5 */
        int N = 1 + (int)(urand(&s, 0, 24));         /* 1..24 */
        double x[5 * 24], w[24], dy[5 * 24], dx[5 * 24], dw[24];
        for (int i = 0; i < M * N; i++) {
            x[i] = urand(&s, -2, 2);
            dy[i] = urand(&s, -1, 1);
        }
        for (int j = 0; j < N; j++) w[j] = 1 + urand(&s, -0.5, 0.5);
        CHECK(nt_rmsnorm_bwd_ref_f64(x, w, dy, M, N, eps, dx, dw, 1) == 0, "seed %d", (int)seed);
        bad += fd_check(x, M * N, dx, "dx", x, w, dy, M, N, eps, h, (int)seed, bad);
        bad += fd_check(w, N, dw, "dw", x, w, dy, M, N, eps, h, (int)seed, bad);
    }
    CHECK(bad == 0, "%d elements off", bad);
}

TEST(backward_known_values) {
    /* one row x = (3, 4), w = (1, 2), dy = (1, 0), eps = 0:
     * ms = 12.5, r = 1/sqrt(12.5); dot = mean(dy w x) = 1.5
     * dx0 = r*1*1 - 3 r^3 1.5, dx1 = -4 r^3 1.5, dw = (3r, 0) */
    double x[2] = {3, 4}, w[2] = {1, 2}, dy[2] = {1, 0}, dx[2], dw[2];
    double r = 1 / sqrt(12.5);
    CHECK(nt_rmsnorm_bwd_ref_f64(x, w, dy, 1, 2, 0.0, dx, dw, 1) == 0, "rc");
    CHECK(close_rel(dx[0], r - 4.5 * r * r * r, 1e-14), "dx0 %.17g", dx[0]);
    CHECK(close_rel(dx[1], -6 * r * r * r, 1e-14), "dx1 %.17g", dx[1]);
    CHECK(close_rel(dw[0], 3 * r, 1e-14) && dw[1] == 0, "dw %.17g %.17g", dw[0], dw[1]);
}

/* Inputs of problem p filled as the runner fills them (the op's ranges),
 * their double conversions, and room for both references' outputs. */
typedef struct bufs {
    void *in[NT_BWD_NTENSORS];
    double *d[NT_BWD_NTENSORS];        /* inputs as double */
    double *o[NT_BWD_NTENSORS];        /* op.ref outputs */
    double *f[NT_BWD_NTENSORS];        /* f64 reference outputs */
} bufs;

static int64_t elems(const nt_problem *p, int i) {
    const nt_tensor_def *t = &p->op->tensors[i];
    return (t->rows == NT_DIM_M ? p->M : 1) * (t->cols == NT_DIM_N ? p->N : 1);
}

static void bufs_make(bufs *b, const nt_problem *p, uint64_t seed) {
    memset(b, 0, sizeof *b);
    for (int i = 0; i < NT_BWD_NTENSORS; i++) {
        const nt_tensor_def *t = &p->op->tensors[i];
        size_t n = (size_t)elems(p, i);
        int dt = p->dtype[t->slot];
        if (t->role == NT_IN) {
            b->in[i] = malloc(n * (size_t)nt_dtypes[dt].size);
            b->d[i] = malloc(n * sizeof(double));
            nt_fill(dt, b->in[i], n, t->lo, t->hi, seed + (uint64_t)i);
            nt_to_f64(dt, b->in[i], n, b->d[i]);
        } else {
            b->o[i] = malloc(n * sizeof(double));
            b->f[i] = malloc(n * sizeof(double));
        }
    }
}

static void bufs_free(bufs *b) {
    for (int i = 0; i < NT_BWD_NTENSORS; i++) free(b->in[i]), free(b->d[i]), free(b->o[i]), free(b->f[i]);
}

TEST(threads_bitwise_equal) {
    nt_problem p = problem(NT_BF16, NT_BF16, NT_F32, 301, 136);
    bufs b;
    bufs_make(&b, &p, 1);
    size_t nx = (size_t)p.M * (size_t)p.N, nw = (size_t)p.N;
    double *dx1 = malloc(nx * sizeof(double)), *dw1 = malloc(nw * sizeof(double));
    double *one[NT_BWD_NTENSORS] = {0};
    one[NT_BWD_DX] = dx1;
    one[NT_BWD_DW] = dw1;
    CHECK(OP->ref(&p, (const void *const *)b.in, one, 1e-6, 1) == 0, "1 thread");
    int nth[] = {7, 0, 64, 200};
    for (int k = 0; k < 4; k++) {
        CHECK(OP->ref(&p, (const void *const *)b.in, b.o, 1e-6, nth[k]) == 0, "%d threads", nth[k]);
        CHECK(!memcmp(dx1, b.o[NT_BWD_DX], nx * sizeof(double)), "dx differs, %d threads", nth[k]);
        CHECK(!memcmp(dw1, b.o[NT_BWD_DW], nw * sizeof(double)), "dw differs, %d threads", nth[k]);
    }
    /* M smaller than the thread count */
    p.M = 2;
    CHECK(OP->ref(&p, (const void *const *)b.in, one, 1e-6, 1) == 0, "M=2");
    CHECK(OP->ref(&p, (const void *const *)b.in, b.o, 1e-6, 16) == 0, "M=2");
    CHECK(!memcmp(dw1, b.o[NT_BWD_DW], nw * sizeof(double)), "M=2 dw differs");
    /* dw is not trivially zero, and dx of M=2 is the first two rows of dx of M=301 */
    double s = 0;
    for (size_t j = 0; j < nw; j++) s += fabs(dw1[j]);
    CHECK(s > 0, "dw all zero");
    free(dx1), free(dw1);
    bufs_free(&b);
}

TEST(generic_ref_is_f64_ref_on_converted_values) {
    int tried = 0;
    for (int x = 0; x < NT_NDTYPES; x++)
        for (int w = 0; w < NT_NDTYPES; w++)
            for (int dw = 0; dw < NT_NDTYPES; dw++) {
                if (!allowed(x, w, dw)) continue;
                nt_problem p = problem(x, w, dw, 37, 72);
                bufs b;
                bufs_make(&b, &p, 100 + (uint64_t)(9 * x + 3 * w + dw));
                CHECK(OP->ref(&p, (const void *const *)b.in, b.o, 1e-6, 3) == 0, "ref");
                CHECK(nt_rmsnorm_bwd_ref_f64(b.d[NT_BWD_X], b.d[NT_BWD_W], b.d[NT_BWD_DY], p.M,
                                             p.N, 1e-6, b.f[NT_BWD_DX], b.f[NT_BWD_DW], 5) == 0,
                      "f64 ref");
                CHECK(!memcmp(b.o[NT_BWD_DX], b.f[NT_BWD_DX], sizeof(double) * (size_t)(p.M * p.N)),
                      "dx: x=%s w=%s", nt_dtypes[x].name, nt_dtypes[w].name);
                CHECK(!memcmp(b.o[NT_BWD_DW], b.f[NT_BWD_DW], sizeof(double) * (size_t)p.N),
                      "dw: x=%s w=%s", nt_dtypes[x].name, nt_dtypes[w].name);
                /* the inputs kept their fill ranges and their dtype's rounding:
                 * an f32 input is not a 16-bit one (some value is not bf16) */
                int wide = 0;
                for (int64_t i = 0; i < p.M * p.N; i++) {
                    double v = b.d[NT_BWD_X][i];
                    CHECK(v >= -2 && v <= 2, "x[%lld] = %g out of [-2, 2] (rounded)", (long long)i, v);
                    wide |= (double)nt_bf16_to_f32(nt_f32_to_bf16((float)v)) != v;
                }
                CHECK(wide == (x != NT_BF16), "x=%s: values %s bf16", nt_dtypes[x].name,
                      wide ? "not all" : "all");
                bufs_free(&b);
                tried++;
            }
    CHECK(tried == 7, "%d allowed combinations, expected 7", tried);
}

TEST(check_accepts_exactly_the_allowed_dtypes) {
    char err[256];
    for (int x = 0; x < NT_NDTYPES; x++)
        for (int w = 0; w < NT_NDTYPES; w++)
            for (int dw = 0; dw < NT_NDTYPES; dw++) {
                nt_problem p = problem(x, w, dw, 4, 64);
                err[0] = 0;
                int rc = OP->check(&p, err, sizeof err);
                CHECK((rc == 0) == allowed(x, w, dw), "x=%s w=%s dw=%s: rc %d (%s)",
                      nt_dtypes[x].name, nt_dtypes[w].name, nt_dtypes[dw].name, rc, err);
                CHECK(rc == 0 || rc == -1, "rc %d", rc);
            }
    nt_problem p = problem(NT_BF16, NT_F16, NT_F32, 4, 64);
    CHECK(OP->check(&p, err, sizeof err) == -1 && strstr(err, "w=f16") && strstr(err, "x=bf16"),
          "message names the dtypes: %s", err);
    p = problem(NT_BF16, NT_F32, NT_BF16, 4, 64);
    CHECK(OP->check(&p, err, sizeof err) == -1 && strstr(err, "dw=bf16") && strstr(err, "w=f32"),
          "message names the dtypes: %s", err);
    /* the defaults are bf16, bf16, f32, and allowed */
    nt_problem_init(&p, OP, 4, 64);
    CHECK(p.dtype[NT_BWD_SX] == NT_BF16 && p.dtype[NT_BWD_SW] == NT_BF16 &&
              p.dtype[NT_BWD_SDW] == NT_F32 && OP->check(&p, err, sizeof err) == 0,
          "defaults");
}

TEST(op_table) {
    CHECK(OP->ntensors == NT_BWD_NTENSORS && OP->nslots == NT_BWD_NSLOTS, "counts");
    const char *names[] = {"x", "w", "dy", "dx", "dw"};
    for (int i = 0; i < NT_BWD_NTENSORS; i++)
        CHECK(!strcmp(OP->tensors[i].name, names[i]), "tensor %d is %s", i, OP->tensors[i].name);
    CHECK(OP->tensors[NT_BWD_DX].role == NT_OUT && OP->tensors[NT_BWD_DW].role == NT_OUT &&
              OP->tensors[NT_BWD_DY].role == NT_IN,
          "roles");
    CHECK(OP->tensors[NT_BWD_DY].slot == NT_BWD_SX && OP->tensors[NT_BWD_DX].slot == NT_BWD_SX &&
              OP->tensors[NT_BWD_W].slot == NT_BWD_SW && OP->tensors[NT_BWD_DW].slot == NT_BWD_SDW,
          "slots");
    int n = 0;
    for (; OP->families[n]; n++) {
        const nt_family *f = OP->families[n];
        CHECK(f->op == OP, "%s: op", f->name);
        CHECK(!strncmp(f->name, "rmsnorm_bwd.", 12), "%s", f->name);
        int k = 0;
        while (f->sources[k + 1]) k++;
        char want[64];   /* the family's own file: <op>/<family>.cuh */
        snprintf(want, sizeof want, "rmsnorm_bwd/%s.cuh", f->name + 12);
        CHECK(!strcmp(f->sources[k], want), "%s: last source %s", f->name, f->sources[k]);
    }
    /* the families this file's tests know, each registered once */
    static const char *const known[] = {"naive", "persistent", "warp", "cluster", "loop", "fused",
                                         "cstage", "aligned", "pcluster", NULL};
    for (int i = 0; known[i]; i++) {
        int seen = 0;
        for (int j = 0; j < n; j++) seen += !strcmp(OP->families[j]->name + 12, known[i]);
        CHECK(seen == 1, "rmsnorm_bwd.%s registered %d times", known[i], seen);
    }
}

/* Params from canonical text (test helper). */
static nt_params params(const char *text) {
    nt_params p;
    if (nt_params_parse(text, &p)) p.n = -1;
    return p;
}

static const char *const naive_cfg[] = {"nsplit=1,partial=bf16", "nsplit=64,partial=f32",
                                        "nsplit=7,partial=bf16", NULL};
static const char *const persist_cfg[] = {"block=256,chunks=2,stages=2,k=0",
                                          "block=512,chunks=4,stages=2,k=1",
                                          "block=1024,chunks=16,stages=1,k=0",
                                          "block=128,chunks=8,stages=4,k=2", NULL};
static const char *const cluster_cfg[] = {"cluster=2,block=256,chunks=2,k=0",
                                          "cluster=4,block=128,chunks=4,k=2",
                                          "cluster=8,block=512,chunks=1,k=1",
                                          "cluster=8,block=256,chunks=8,k=0", NULL};
static const char *const loop_cfg[] = {"block=1024,chunks=1,k=0", "block=256,chunks=4,k=1",
                                       "block=128,chunks=2,k=4", "block=32,chunks=6,k=0", NULL};

TEST(plan_precision_follows_the_dw_dtype) {
    char err[256];
    nt_plan pl;
    for (int x = 0; x < NT_NDTYPES; x++)
        for (int w = 0; w < NT_NDTYPES; w++)
            for (int dw = 0; dw < NT_NDTYPES; dw++) {
                if (!allowed(x, w, dw)) continue;
                nt_problem p = problem(x, w, dw, 1000, 1032);
                for (int c = 0; naive_cfg[c]; c++) {
                    nt_params q = params(naive_cfg[c]);
                    CHECK(nt_rmsnorm_bwd_naive.plan(&q, &p, NULL, &pl, err, sizeof err) == 0, "%s",
                          err);
                    int bf16part = strstr(naive_cfg[c], "bf16") != NULL;
                    int want = !bf16part || dw == NT_BF16;
                    CHECK(nt_plan_precise(&pl, &p) == want, "naive %s x=%s w=%s dw=%s: precise %d",
                          naive_cfg[c], nt_dtypes[x].name, nt_dtypes[w].name, nt_dtypes[dw].name,
                          !want);
                    CHECK(nt_plan_tol(&pl, &p, NT_BWD_DX) == nt_dtypes[x].tol, "dx tol");
                    double tdw = nt_plan_tol(&pl, &p, NT_BWD_DW);
                    CHECK(tdw == (bf16part ? fmax(NT_TOL_BF16, nt_dtypes[dw].tol) : nt_dtypes[dw].tol),
                          "dw tol %g", tdw);
                }
                for (int c = 0; persist_cfg[c]; c++) {
                    nt_params q = params(persist_cfg[c]);
                    CHECK(nt_rmsnorm_bwd_persistent.plan(&q, &p, NULL, &pl, err, sizeof err) == 0,
                          "%s", err);
                    CHECK(nt_plan_precise(&pl, &p), "persistent %s", persist_cfg[c]);
                }
                for (int c = 0; cluster_cfg[c]; c++) {
                    nt_params q = params(cluster_cfg[c]);
                    CHECK(nt_rmsnorm_bwd_cluster.plan(&q, &p, NULL, &pl, err, sizeof err) == 0,
                          "%s", err);
                    CHECK(nt_plan_precise(&pl, &p), "cluster %s", cluster_cfg[c]);
                }
                for (int c = 0; loop_cfg[c]; c++) {
                    nt_params q = params(loop_cfg[c]);
                    p.N = NT_MAX_N;
                    CHECK(nt_rmsnorm_bwd_loop.plan(&q, &p, NULL, &pl, err, sizeof err) == 0,
                          "loop %s x=%s w=%s: %s", loop_cfg[c], nt_dtypes[x].name,
                          nt_dtypes[w].name, err);
                    CHECK(nt_plan_precise(&pl, &p) && pl.tol[NT_BWD_DX] == 0 &&
                              pl.tol[NT_BWD_DW] == 0,
                          "loop %s", loop_cfg[c]);
                    p.N = 1032;
                }
            }
    /* bf16 partials must not serve an f32 dw */
    nt_problem p = problem(NT_BF16, NT_BF16, NT_F32, 7, 24);
    nt_params q = params("nsplit=64,partial=bf16");
    CHECK(nt_rmsnorm_bwd_naive.plan(&q, &p, NULL, &pl, err, sizeof err) == 0, "%s", err);
    CHECK(!nt_plan_precise(&pl, &p), "bf16 partials eligible for an f32 dw");
}

/* 1 when s starts with prefix. */
static int starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

TEST(name_expressions_start_with_the_ctypes) {
    char err[256], want[128], fin[128];
    nt_plan pl;
    int64_t Ns[] = {8, 24, 1032, 4096, 16384, 16392, NT_MAX_N};
    int named = 0;
    for (int x = 0; x < NT_NDTYPES; x++)
        for (int w = 0; w < NT_NDTYPES; w++)
            for (int dw = 0; dw < NT_NDTYPES; dw++) {
                if (!allowed(x, w, dw)) continue;
                snprintf(fin, sizeof fin, "nt_colsum_final<%s, ", nt_dtypes[dw].ctype);
                for (int n = 0; n < 7; n++) {
                    nt_problem p = problem(x, w, dw, 3, Ns[n]);
                    for (int c = 0; naive_cfg[c]; c++) {
                        nt_params q = params(naive_cfg[c]);
                        if (nt_rmsnorm_bwd_naive.plan(&q, &p, NULL, &pl, err, sizeof err)) {
                            CHECK(Ns[n] > 16384, "%s", err);   /* naive's longest row */
                            continue;
                        }
                        snprintf(want, sizeof want, "nt_naive_row<%s, %s, %s, ", nt_dtypes[x].ctype,
                                 nt_dtypes[w].ctype, nt_dtypes[dw].ctype);
                        CHECK(pl.nlaunch == 3 && starts(pl.l[0].name, want) &&
                                  starts(pl.l[1].name, "nt_colsum_split<") &&
                                  starts(pl.l[2].name, fin),
                              "%s | %s | %s", pl.l[0].name, pl.l[1].name, pl.l[2].name);
                        named++;
                    }
                    for (int c = 0; persist_cfg[c]; c++) {
                        nt_params q = params(persist_cfg[c]);
                        if (nt_rmsnorm_bwd_persistent.plan(&q, &p, NULL, &pl, err, sizeof err))
                            continue;              /* N too long for this config */
                        snprintf(want, sizeof want, "nt_persist<%s, %s, %s, ", nt_dtypes[x].ctype,
                                 nt_dtypes[w].ctype, nt_dtypes[dw].ctype);
                        CHECK(pl.nlaunch == 2 && starts(pl.l[0].name, want) &&
                                  starts(pl.l[1].name, fin),
                              "%s | %s", pl.l[0].name, pl.l[1].name);
                        named++;
                    }
                    for (int c = 0; cluster_cfg[c]; c++) {
                        nt_params q = params(cluster_cfg[c]);
                        if (nt_rmsnorm_bwd_cluster.plan(&q, &p, NULL, &pl, err, sizeof err))
                            continue;              /* N too long for this config */
                        snprintf(want, sizeof want, "nt_bwd_cluster<%s, %s, %s, ",
                                 nt_dtypes[x].ctype, nt_dtypes[w].ctype, nt_dtypes[dw].ctype);
                        CHECK(pl.nlaunch == 2 && starts(pl.l[0].name, want) &&
                                  starts(pl.l[1].name, fin) && pl.l[1].cluster <= 1,
                              "%s | %s", pl.l[0].name, pl.l[1].name);
                        named++;
                    }
                    for (int c = 0; loop_cfg[c]; c++) {
                        nt_params q = params(loop_cfg[c]);
                        if (nt_rmsnorm_bwd_loop.plan(&q, &p, NULL, &pl, err, sizeof err))
                            continue;              /* too many registers for these dtypes */
                        snprintf(want, sizeof want, "nt_bwd_loop<%s, %s, %s, ", nt_dtypes[x].ctype,
                                 nt_dtypes[w].ctype, nt_dtypes[dw].ctype);
                        CHECK(pl.nlaunch == 2 && starts(pl.l[0].name, want) &&
                                  starts(pl.l[1].name, fin) &&
                                  !strcmp(pl.l[1].name + strlen(fin), "0>"),
                              "%s | %s", pl.l[0].name, pl.l[1].name);
                        named++;
                    }
                }
            }
    CHECK(named > 250, "only %d plans", named);
    nt_problem p = problem(NT_BF16, NT_F32, NT_F32, 3, 4096);
    nt_params q = params("block=256,chunks=2,stages=2,k=0");
    CHECK(nt_rmsnorm_bwd_persistent.plan(&q, &p, NULL, &pl, err, sizeof err) == 0 &&
              !strcmp(pl.l[0].name, "nt_persist<nt_bf16, float, float, 256, 2, 2, 0>") &&
              !strcmp(pl.l[1].name, "nt_colsum_final<float, 0>"),
          "%s | %s", pl.l[0].name, pl.l[1].name);
    /* the cluster kernel's integers: cluster, block, chunks, k */
    q = params("cluster=4,block=256,chunks=2,k=1");
    CHECK(nt_rmsnorm_bwd_cluster.plan(&q, &p, NULL, &pl, err, sizeof err) == 0 &&
              !strcmp(pl.l[0].name, "nt_bwd_cluster<nt_bf16, float, float, 4, 256, 2, 1>") &&
              !strcmp(pl.l[1].name, "nt_colsum_final<float, 0>"),
          "%s | %s", pl.l[0].name, pl.l[1].name);
}

TEST(naive_chunks_fewest_power_of_two) {
    char err[256];
    nt_plan pl;
    nt_params q = params("nsplit=4,partial=f32");
    for (int x = 0; x < NT_NDTYPES; x++) {
        int E = 16 / nt_dtypes[x].size, bad = 0;
        for (int64_t N = 8; N <= 16384; N += 8) {   /* naive's longest row */
            nt_problem p = problem(x, x, NT_F32, 5, N);
            int ch = -1, f32 = -1;
            char tail[64];
            snprintf(tail, sizeof tail, "nt_naive_row<%s, %s, float, %%d, %%d>", nt_dtypes[x].ctype,
                     nt_dtypes[x].ctype);
            if (nt_rmsnorm_bwd_naive.plan(&q, &p, NULL, &pl, err, sizeof err) ||
                sscanf(pl.l[0].name, tail, &ch, &f32) != 2) {
                bad++;
                continue;
            }
            int64_t nvec = N / E, per = (nvec + ch - 1) / ch;
            int pow2 = ch > 0 && !(ch & (ch - 1));
            int fewest = ch == 1 || (nvec + ch / 2 - 1) / (ch / 2) > 1024;
            int block_ok = pl.l[0].block % 32 == 0 && pl.l[0].block <= 1024 &&
                           pl.l[0].block >= per && pl.l[0].block < per + 32;
            if (!pow2 || !fewest || !block_ok || f32 != 1 || (int64_t)pl.l[0].block * ch * E < N) {
                if (bad++ < 3)
                    CHECK(0, "x=%s N=%lld: %s block %u", nt_dtypes[x].name, (long long)N,
                          pl.l[0].name, pl.l[0].block);
            }
        }
        CHECK(bad == 0, "x=%s: %d lengths wrong", nt_dtypes[x].name, bad);
        /* beyond, its row would spill: refused, naming the length */
        nt_problem p = problem(x, x, NT_F32, 5, 16392);
        err[0] = 0;
        CHECK(nt_rmsnorm_bwd_naive.check(&q, &p, NULL, err, sizeof err) == -1 &&
                  strstr(err, "N=16392") && strstr(err, "16384") && strstr(err, "loop"),
              "x=%s N=16392: '%s'", nt_dtypes[x].name, err);
    }
}

TEST(persistent_limits_and_smem_follow_the_dtypes) {
    char err[256];
    nt_plan pl;
    nt_params q = params("block=256,chunks=2,stages=3,k=0");
    nt_problem p = problem(NT_BF16, NT_BF16, NT_F32, 100, 4096);  /* 256 * 2 * 8 */
    CHECK(nt_rmsnorm_bwd_persistent.check(&q, &p, NULL, err, sizeof err) == 0, "%s", err);
    CHECK(nt_rmsnorm_bwd_persistent.plan(&q, &p, NULL, &pl, err, sizeof err) == 0 &&
              pl.l[0].smem == (2 * 3 * 16 + 16) * 256 * 2,
          "bf16 smem %u", pl.l[0].smem);
    p.N = 4104;
    CHECK(nt_rmsnorm_bwd_persistent.check(&q, &p, NULL, err, sizeof err) == -1, "bf16 N=4104");
    p = problem(NT_BF16, NT_F32, NT_F32, 100, 4096);       /* f32 weights: 32 bytes a chunk */
    CHECK(nt_rmsnorm_bwd_persistent.plan(&q, &p, NULL, &pl, err, sizeof err) == 0 &&
              pl.l[0].smem == (2 * 3 * 16 + 32) * 256 * 2,
          "bf16/f32 smem %u", pl.l[0].smem);
    p = problem(NT_F32, NT_F32, NT_F32, 100, 4096);        /* 4 elements a chunk */
    CHECK(nt_rmsnorm_bwd_persistent.check(&q, &p, NULL, err, sizeof err) == -1 &&
              strstr(err, "x=f32"),
          "f32 N=4096 with 256 x 2 chunks: %s", err);
    p.N = 2048;
    CHECK(nt_rmsnorm_bwd_persistent.plan(&q, &p, NULL, &pl, err, sizeof err) == 0 &&
              pl.l[0].smem == (2 * 3 * 16 + 16) * 256 * 2,
          "f32 smem %u", pl.l[0].smem);
    q = params("block=256,chunks=2,stages=1,k=0");
    CHECK(nt_rmsnorm_bwd_persistent.plan(&q, &p, NULL, &pl, err, sizeof err) == 0 &&
              pl.l[0].smem == 0,
          "stages=1: no dynamic smem");
    /* a device too small for the stages */
    nt_devinfo dev = {.sms = 132, .cc_major = 9, .smem_per_block_optin = 8192,
                      .smem_per_sm = 233472, .max_threads_per_sm = 2048, .regs_per_sm = 65536};
    q = params("block=256,chunks=2,stages=3,k=0");
    CHECK(nt_rmsnorm_bwd_persistent.check(&q, &p, &dev, err, sizeof err) == -1, "smem limit");
    dev.smem_per_block_optin = 232448;
    CHECK(nt_rmsnorm_bwd_persistent.plan(&q, &p, &dev, &pl, err, sizeof err) == 0 &&
              pl.workspace >= (size_t)100 * 2048 * 4,
          "workspace %zu", pl.workspace);
}

/* warp: a row covers tpr * chunks * E columns; grid_rows is the rows of a
 * step; shared memory holds one row of partials per warp; a config whose
 * registers would spill is refused, with the numbers. */
TEST(warp_limits_grid_rows_and_workspace) {
    char err[256];
    nt_plan pl;
    nt_params q = params("tpr=16,block=256,chunks=1,rows=4,k=0");
    nt_problem p = problem(NT_BF16, NT_BF16, NT_F32, 1048576, 128);  /* 16 * 1 * 8 */
    CHECK(nt_rmsnorm_bwd_warp.plan(&q, &p, NULL, &pl, err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(pl.l[0].name, "nt_bwd_warp<nt_bf16, nt_bf16, float, 16, 256, 1, 4, 0>"), "%s",
          pl.l[0].name);
    CHECK(pl.nlaunch == 2 && !strcmp(pl.l[1].name, "nt_colsum_final<float, 0>"), "%s", pl.l[1].name);
    CHECK(pl.l[0].grid == 0 && pl.l[0].grid_rows == 256 / 16 * 4, "grid_rows %u", pl.l[0].grid_rows);
    CHECK(pl.l[0].smem == 256 / 32 * 128 * 4, "smem %u", pl.l[0].smem);
    CHECK(nt_plan_precise(&pl, &p), "warp is precise for an f32 dw");
    p.N = 136;
    CHECK(nt_rmsnorm_bwd_warp.check(&q, &p, NULL, err, sizeof err) == -1 && strstr(err, "N=136"),
          "N=136 past 128 columns: %s", err);
    p = problem(NT_F32, NT_F32, NT_F32, 1000, 128);        /* 4 elements a chunk */
    CHECK(nt_rmsnorm_bwd_warp.check(&q, &p, NULL, err, sizeof err) == -1 && strstr(err, "x=f32"),
          "f32 N=128 with 16 x 1 chunks: %s", err);
    /* registers: 8 rows x 8 chunks cannot fit; k = 8 of 256 threads leaves 32 */
    p = problem(NT_BF16, NT_BF16, NT_F32, 1000, 2048);
    q = params("tpr=32,block=256,chunks=8,rows=8,k=0");
    CHECK(nt_rmsnorm_bwd_warp.check(&q, &p, NULL, err, sizeof err) == -1 && strstr(err, "spill"),
          "8 x 8 chunks: %s", err);
    p.N = 1024;
    q = params("tpr=32,block=256,chunks=4,rows=2,k=0");
    CHECK(nt_rmsnorm_bwd_warp.check(&q, &p, NULL, err, sizeof err) == 0, "4 chunks, 2 rows: %s", err);
    q = params("tpr=32,block=256,chunks=4,rows=2,k=8");
    CHECK(nt_rmsnorm_bwd_warp.check(&q, &p, NULL, err, sizeof err) == -1 && strstr(err, "spill"),
          "k=8: %s", err);
    q = params("tpr=12,block=256,chunks=1,rows=1,k=0");
    CHECK(nt_rmsnorm_bwd_warp.check(&q, &p, NULL, err, sizeof err) == -1 && strstr(err, "power of two"),
          "tpr=12: %s", err);
    /* the workspace: one partial row per block, at most one block a step */
    nt_devinfo dev = {.sms = 132, .cc_major = 9, .smem_per_block_optin = 232448,
                      .smem_per_sm = 233472, .max_threads_per_sm = 2048, .regs_per_sm = 65536};
    p = problem(NT_BF16, NT_BF16, NT_F32, 1000, 128);
    q = params("tpr=16,block=256,chunks=1,rows=4,k=0");    /* 64 rows a step: 16 steps */
    CHECK(nt_rmsnorm_bwd_warp.plan(&q, &p, &dev, &pl, err, sizeof err) == 0 &&
              pl.workspace == 16 * 128 * 4,
          "workspace %zu", pl.workspace);
    p.M = 1048576;                                         /* 132 SMs x 8 blocks */
    CHECK(nt_rmsnorm_bwd_warp.plan(&q, &p, &dev, &pl, err, sizeof err) == 0 &&
              pl.workspace == (size_t)132 * 8 * 128 * 4,
          "workspace %zu", pl.workspace);
}

/* Bytes of n fp32 partial rows of N, rounded up to 256 (a plan's workspace). */
#define NT_BWD_WS(n, N) (((size_t)(n) * (size_t)(N) * 4 + 255) & ~(size_t)255)

/* An H200 as the planners see it (nt_devinfo). */
static const nt_devinfo h200 = {.sms = 132, .cc_major = 9, .cc_minor = 0,
                                .smem_per_block_optin = 232448, .smem_per_sm = 233472,
                                .max_threads_per_sm = 2048, .regs_per_sm = 65536};

/* 0 when family f accepts text for problem p on dev, else -1 with err. */
static int accepts(const nt_family *f, const char *text, const nt_problem *p,
                   const nt_devinfo *dev, char *err, size_t errlen) {
    nt_params q = params(text);
    err[0] = 0;
    return f->check(&q, p, dev, err, errlen);
}

TEST(cluster_check_limits) {
    const nt_family *f = &nt_rmsnorm_bwd_cluster;
    char err[256];
    nt_problem p = problem(NT_BF16, NT_BF16, NT_F32, 256, 4096);
    /* cluster sizes 2, 4 and 8 only, and the ranges of the other params */
    CHECK(accepts(f, "cluster=2,block=256,chunks=2,k=0", &p, &h200, err, sizeof err) == 0, "%s", err);
    CHECK(accepts(f, "cluster=4,block=128,chunks=2,k=0", &p, &h200, err, sizeof err) == 0, "%s", err);
    CHECK(accepts(f, "cluster=8,block=64,chunks=1,k=0", &p, &h200, err, sizeof err) == 0, "%s", err);
    const char *bad[] = {"cluster=3,block=256,chunks=2,k=0", "cluster=6,block=256,chunks=2,k=0",
                         "cluster=1,block=256,chunks=2,k=0", "cluster=2,block=48,chunks=2,k=0",
                         "cluster=2,block=256,chunks=0,k=0", "cluster=2,block=256,chunks=2,k=33",
                         "cluster=2,block=256,chunks=2", NULL};
    for (int i = 0; bad[i]; i++)
        CHECK(accepts(f, bad[i], &p, &h200, err, sizeof err) == -1 &&
                  strstr(err, "cluster 2, 4 or 8"),
              "%s: %s", bad[i], err);
    /* no clusters below compute capability 9.0, whatever the rest */
    nt_devinfo a100 = h200;
    a100.sms = 108, a100.cc_major = 8, a100.cc_minor = 0;
    CHECK(accepts(f, "cluster=2,block=256,chunks=2,k=0", &p, &a100, err, sizeof err) == -1 &&
              strstr(err, "needs thread block clusters (compute capability 9.0 or newer)") &&
              strstr(err, "8.0"),
          "cc 8.0: %s", err);
    /* without a device, only what does not depend on one */
    CHECK(accepts(f, "cluster=2,block=256,chunks=2,k=0", &p, NULL, err, sizeof err) == 0, "%s", err);
    /* N up to cluster * block * chunks * E, E by the activation dtype */
    for (int x = 0; x < NT_NDTYPES; x++) {
        int64_t E = 16 / nt_dtypes[x].size;
        p = problem(x, x, NT_F32, 300, 4 * 128 * 2 * E);
        CHECK(accepts(f, "cluster=4,block=128,chunks=2,k=0", &p, &h200, err, sizeof err) == 0,
              "x=%s N=%lld: %s", nt_dtypes[x].name, (long long)p.N, err);
        p.N += 8;
        CHECK(accepts(f, "cluster=4,block=128,chunks=2,k=0", &p, &h200, err, sizeof err) == -1 &&
                  strstr(err, "exceeds"),
              "x=%s N=%lld: %s", nt_dtypes[x].name, (long long)p.N, err);
    }
    /* registers (nvcc --resource-usage, cluster.c): 16-bit x keeps 9 chunks
     * in 255 registers, 4 in 128 (block 512 or k 2 x 256), 2 in 64 (block
     * 1024); fp32 x 13, 6 and 3 */
    static const struct {
        int x, w;
        const char *cfg;
        int ok;
    } regs[] = {
        {NT_BF16, NT_BF16, "cluster=8,block=256,chunks=9,k=0", 1},
        {NT_BF16, NT_BF16, "cluster=8,block=256,chunks=10,k=0", 0},
        {NT_BF16, NT_F32, "cluster=8,block=256,chunks=9,k=0", 1},
        {NT_F16, NT_F16, "cluster=8,block=512,chunks=4,k=0", 1},
        {NT_F16, NT_F16, "cluster=8,block=512,chunks=5,k=0", 0},
        {NT_BF16, NT_BF16, "cluster=8,block=256,chunks=4,k=2", 1},
        {NT_BF16, NT_BF16, "cluster=8,block=256,chunks=5,k=2", 0},
        {NT_BF16, NT_BF16, "cluster=8,block=1024,chunks=2,k=0", 1},
        {NT_BF16, NT_BF16, "cluster=8,block=1024,chunks=3,k=0", 0},
        {NT_F32, NT_F32, "cluster=8,block=256,chunks=13,k=0", 1},
        {NT_F32, NT_F32, "cluster=8,block=256,chunks=14,k=0", 0},
        {NT_F32, NT_F32, "cluster=8,block=512,chunks=6,k=0", 1},
        {NT_F32, NT_F32, "cluster=8,block=512,chunks=7,k=0", 0},
        {NT_F32, NT_F32, "cluster=8,block=1024,chunks=3,k=0", 1},
        {NT_F32, NT_F32, "cluster=8,block=1024,chunks=4,k=0", 0},
        {NT_F32, NT_F32, "cluster=8,block=256,chunks=1,k=8", 1},
        {NT_F32, NT_F32, "cluster=8,block=256,chunks=2,k=8", 0},
        {NT_BF16, NT_BF16, "cluster=8,block=256,chunks=1,k=8", 0},
    };
    for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++) {
        p = problem(regs[i].x, regs[i].w, NT_F32, 1000, 1024);
        int rc = accepts(f, regs[i].cfg, &p, NULL, err, sizeof err);
        CHECK(rc == (regs[i].ok ? 0 : -1) && (rc == 0 || strstr(err, "would spill")),
              "x=%s w=%s %s: rc %d (%s)", nt_dtypes[regs[i].x].name, nt_dtypes[regs[i].w].name,
              regs[i].cfg, rc, err);
    }
    /* k blocks per SM must fit its threads */
    p = problem(NT_BF16, NT_BF16, NT_F32, 1000, 1024);
    CHECK(accepts(f, "cluster=2,block=512,chunks=1,k=2", &p, &h200, err, sizeof err) == 0, "%s", err);
    CHECK(accepts(f, "cluster=2,block=1024,chunks=1,k=4", &p, NULL, err, sizeof err) == -1,
          "k=4 x 1024 threads (registers)");
    /* (on sm_90's 2048 threads an SM the register cap refuses such k
     * first; a device with fewer threads shows the thread check) */
    nt_devinfo small = h200;
    small.max_threads_per_sm = 1536;
    p = problem(NT_F32, NT_F32, NT_F32, 1000, 1024);
    CHECK(accepts(f, "cluster=2,block=512,chunks=1,k=3", &p, &small, err, sizeof err) == 0, "%s",
          err);
    CHECK(accepts(f, "cluster=2,block=1024,chunks=1,k=2", &p, &small, err, sizeof err) == -1 &&
              strstr(err, "do not fit"),
          "k=2 x 1024 threads on 1536: %s", err);
}

TEST(cluster_plan_grid_and_workspace) {
    const nt_family *f = &nt_rmsnorm_bwd_cluster;
    char err[256];
    nt_plan pl;
    nt_params q = params("cluster=4,block=256,chunks=2,k=0");
    nt_problem p = problem(NT_BF16, NT_BF16, NT_F32, 1000, 16384);
    CHECK(f->plan(&q, &p, &h200, &pl, err, sizeof err) == 0, "%s", err);
    CHECK(pl.nlaunch == 2 && pl.l[0].grid == 0 && pl.l[0].cluster == 4 &&
              pl.l[0].block == 256 && pl.l[0].blocks_per_sm == 0 && pl.l[0].smem == 0 &&
              pl.l[0].grid_y == 1 && pl.l[0].pdl && pl.l[1].pdl && pl.l[1].cluster <= 1 &&
              pl.nparts == 0,
          "launch 0: grid %u cluster %u block %u k %d smem %u; nparts %d", pl.l[0].grid,
          pl.l[0].cluster, pl.l[0].block, pl.l[0].blocks_per_sm, pl.l[0].smem, pl.nparts);
    /* compile-only: no device, no workspace (as persistent) */
    CHECK(f->plan(&q, &p, NULL, &pl, err, sizeof err) == 0 && pl.workspace == 0, "%zu",
          pl.workspace);
    /* The workspace holds a partial row for every cluster nt_chain_grid may
     * launch: k blocks per SM, or as many as fit (at most the threads'
     * worth: the occupancy query can only give fewer), in whole clusters,
     * at most M of them.  Exactly that bound, over devices, configs and M. */
    static const char *const cfgs[] = {"cluster=2,block=256,chunks=1,k=0",
                                       "cluster=4,block=128,chunks=2,k=0",
                                       "cluster=8,block=64,chunks=4,k=0",
                                       "cluster=8,block=1024,chunks=1,k=0",
                                       "cluster=4,block=512,chunks=1,k=1",
                                       "cluster=2,block=128,chunks=2,k=3",
                                       "cluster=8,block=256,chunks=1,k=2", NULL};
    static const int64_t Ms[] = {1, 3, 7, 8, 100, 255, 256, 1000, 4096, 100000};
    int sms[] = {132, 114, 16, 5, 1};
    int bad = 0;
    for (int d = 0; d < 5; d++) {
        nt_devinfo dev = h200;
        dev.sms = sms[d];
        for (int c = 0; cfgs[c]; c++)
            for (size_t m = 0; m < sizeof Ms / sizeof Ms[0]; m++) {
                p = problem(NT_BF16, NT_F32, NT_F32, Ms[m], 2048);
                q = params(cfgs[c]);
                if (f->plan(&q, &p, &dev, &pl, err, sizeof err)) {
                    CHECK(0, "%s: %s", cfgs[c], err);
                    continue;
                }
                const nt_launch *l = &pl.l[0];
                int64_t S = l->cluster, fit = dev.max_threads_per_sm / l->block;
                int64_t blocks = (int64_t)dev.sms * (l->blocks_per_sm ? l->blocks_per_sm : fit);
                /* the clusters resident at once (the occupancy query, as
                 * nt_chain_grid asks it): at least 1, at most the block
                 * slots of the threads' worth of blocks per SM */
                int64_t slots = (int64_t)dev.sms * fit / S;
                int64_t mcs[] = {1, slots / 2 > 1 ? slots / 2 : 1, slots > 1 ? slots : 1};
                for (int i = 0; i < 3; i++) {
                    int64_t mc = mcs[i];
                    long long g = nt_grid_fit(l->blocks_per_sm ? blocks : mc * S, l->cluster, mc,
                                              p.M, l->grid_rows);
                    int np = nt_chain_nparts(&pl, (unsigned)g);
                    size_t need = (size_t)np * (size_t)p.N * 4;
                    int ok = g >= S && g % S == 0 && g <= p.M * S && np == g / S &&
                             need <= pl.workspace;
                    if (!ok && bad++ < 5)
                        CHECK(0, "sms %d %s M=%lld mc %lld: grid %lld nparts %d workspace %zu "
                              "(need %zu)", dev.sms, cfgs[c], (long long)p.M, (long long)mc, g,
                              np, pl.workspace, need);
                }
                /* and no more than the largest grid needs */
                int64_t most = blocks / S < 1 ? 1 : blocks / S;
                if (most > p.M) most = p.M;
                if (pl.workspace != NT_BWD_WS(most, p.N) && bad++ < 5)
                    CHECK(0, "sms %d %s M=%lld: workspace %zu for %lld clusters", dev.sms,
                          cfgs[c], (long long)p.M, pl.workspace, (long long)most);
            }
    }
    CHECK(bad == 0, "%d plans wrong", bad);
}

TEST(grid_fit_whole_clusters) {
    /* no cluster: min(blocks, steps of grid_rows rows), as before */
    int bad = 0;
    long long Ms[] = {1, 2, 5, 131, 132, 133, 1000, 1LL << 31};
    long long blocks[] = {1, 7, 132, 264, 1056, 4224};
    unsigned rows[] = {0, 1, 2, 3, 8};
    for (size_t m = 0; m < sizeof Ms / sizeof Ms[0]; m++)
        for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
            for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
                for (unsigned c = 0; c < 2; c++) {
                    long long steps = rows[r] > 1 ? (Ms[m] + rows[r] - 1) / rows[r] : Ms[m];
                    long long want = blocks[b] < steps ? blocks[b] : steps;
                    long long got = nt_grid_fit(blocks[b], c, 0, Ms[m], rows[r]);
                    if (got != want && bad++ < 5)
                        CHECK(0, "blocks %lld cluster %u M %lld rows %u: %lld, want %lld",
                              blocks[b], c, Ms[m], rows[r], got, want);
                }
    CHECK(bad == 0, "%d grids differ from min(blocks, steps)", bad);
    /* clusters: whole ones, at least one, at most max_clusters, at most M */
    CHECK(nt_grid_fit(264, 4, 0, 1000, 0) == 264, "66 clusters of 4");
    CHECK(nt_grid_fit(132, 8, 0, 1000, 0) == 128, "16 clusters of 8 from 132 blocks");
    CHECK(nt_grid_fit(132, 8, 15, 1000, 0) == 120, "at most 15 clusters");
    CHECK(nt_grid_fit(1056, 2, 0, 256, 0) == 512, "256 rows: 256 clusters of 2");
    CHECK(nt_grid_fit(1056, 8, 0, 3, 0) == 24, "3 rows: 3 clusters of 8");
    CHECK(nt_grid_fit(1056, 8, 0, 1, 0) == 8, "1 row: one cluster");
    CHECK(nt_grid_fit(4, 8, 0, 100, 0) == 8, "fewer blocks than a cluster: one cluster");
    CHECK(nt_grid_fit(1056, 4, 0, 100, 8) == 52, "13 steps of 8 rows: 13 clusters");
    /* nparts: the plan's, else a partial row per block, or per cluster */
    nt_plan pl;
    memset(&pl, 0, sizeof pl);
    CHECK(nt_chain_nparts(&pl, 264) == 264, "no cluster");
    pl.l[0].cluster = 1;
    CHECK(nt_chain_nparts(&pl, 264) == 264, "cluster 1");
    pl.l[0].cluster = 4;
    CHECK(nt_chain_nparts(&pl, 264) == 66, "cluster 4");
    pl.nparts = 64;
    CHECK(nt_chain_nparts(&pl, 264) == 64, "the plan's nparts");
}

/* An A100 (sm_80, no clusters) as the tuner would describe it (h200:
 * above). */
static const nt_devinfo a100 = {.sms = 108, .cc_major = 8, .smem_per_block_optin = 166912,
                                .smem_per_sm = 167936, .max_threads_per_sm = 2048,
                                .regs_per_sm = 65536};

/* loop: every N, a register rule that refuses with numbers, the persistent
 * grid (sized by the launcher, at most M) and a workspace of one fp32
 * partial row per block that can be resident. */
TEST(loop_limits_registers_and_workspace) {
    char err[256];
    nt_plan pl;
    nt_params q = params("block=256,chunks=4,k=1");
    nt_problem p = problem(NT_BF16, NT_F32, NT_F32, 100000, NT_MAX_N);
    CHECK(nt_rmsnorm_bwd_loop.plan(&q, &p, &h200, &pl, err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(pl.l[0].name, "nt_bwd_loop<nt_bf16, float, float, 256, 4, 1>") &&
              !strcmp(pl.l[1].name, "nt_colsum_final<float, 0>"),
          "%s | %s", pl.l[0].name, pl.l[1].name);
    CHECK(pl.nlaunch == 2 && pl.l[0].grid == 0 && pl.l[0].blocks_per_sm == 1 &&
              pl.l[0].block == 256 && pl.l[0].smem == 0 && pl.l[0].cluster == 0 &&
              pl.l[0].grid_rows <= 1 && pl.l[0].pdl && pl.l[1].pdl && pl.nparts == 0,
          "launches");
    CHECK(pl.l[1].grid == NT_MAX_N / 16 && pl.l[1].block == 256, "final column sum %u x %u",
          pl.l[1].grid, pl.l[1].block);
    CHECK(pl.workspace == (size_t)132 * NT_MAX_N * 4, "workspace %zu (132 partial rows)",
          pl.workspace);
    /* k = 0: as many blocks as threads allow (2048 / 256 = 8 per SM), at
     * most M rows; 256-byte aligned */
    q = params("block=256,chunks=1,k=0");
    p = problem(NT_BF16, NT_BF16, NT_F32, 100000, 1032);
    CHECK(nt_rmsnorm_bwd_loop.plan(&q, &p, &a100, &pl, err, sizeof err) == 0 &&
              pl.workspace == ((size_t)108 * 8 * 1032 * 4 + 255) / 256 * 256,
          "workspace %zu", pl.workspace);
    p.M = 5;
    CHECK(nt_rmsnorm_bwd_loop.plan(&q, &p, &a100, &pl, err, sizeof err) == 0 &&
              pl.workspace == ((size_t)5 * 1032 * 4 + 255) / 256 * 256,
          "M=5: workspace %zu", pl.workspace);
    CHECK(nt_rmsnorm_bwd_loop.plan(&q, &p, NULL, &pl, err, sizeof err) == 0 && pl.workspace == 0,
          "no device: no workspace size");
    /* the register rule: 2 chunks of bf16 under block=1024's 64 registers
     * spill (nvcc: 268 bytes), fp32 fits (64 registers, no spill) */
    q = params("block=1024,chunks=2,k=0");
    p = problem(NT_BF16, NT_BF16, NT_F32, 7, 4096);
    err[0] = 0;
    CHECK(nt_rmsnorm_bwd_loop.check(&q, &p, NULL, err, sizeof err) == -1 &&
              strstr(err, "chunks=2") && strstr(err, "leave 64") && strstr(err, "spill") &&
              strstr(err, "x=bf16"),
          "'%s'", err);
    p = problem(NT_F32, NT_F32, NT_F32, 7, 4096);
    CHECK(nt_rmsnorm_bwd_loop.check(&q, &p, NULL, err, sizeof err) == 0, "f32: %s", err);
    /* more chunks need more registers, for every dtype combination; a
     * wider w needs more */
    for (int x = 0; x < NT_NDTYPES; x++)
        for (int w = 0; w < NT_NDTYPES; w++) {
            if (!allowed(x, w, NT_F32)) continue;
            p = problem(x, w, NT_F32, 7, 4096);
            int prev = 1;
            for (int c = 1; c <= 16; c++) {
                char t[64];
                snprintf(t, sizeof t, "block=256,chunks=%d,k=1", c);
                q = params(t);
                int okc = nt_rmsnorm_bwd_loop.check(&q, &p, NULL, err, sizeof err) == 0;
                CHECK(prev || !okc, "x=%s w=%s: chunks=%d accepted after %d refused",
                      nt_dtypes[x].name, nt_dtypes[w].name, c, c - 1);
                prev = okc;
            }
        }
    /* the params' ranges, and k blocks that do not fit an SM */
    q = params("block=96,chunks=1,k=0");
    CHECK(nt_rmsnorm_bwd_loop.check(&q, &p, NULL, err, sizeof err) == 0, "block=96: %s", err);
    q = params("block=100,chunks=1,k=0");
    CHECK(nt_rmsnorm_bwd_loop.check(&q, &p, NULL, err, sizeof err) == -1 &&
              strstr(err, "multiple of 32"), "block=100: '%s'", err);
    nt_devinfo small = h200;
    small.max_threads_per_sm = 1024;
    q = params("block=256,chunks=1,k=5");   /* 48 registers a thread */
    p = problem(NT_F32, NT_F32, NT_F32, 7, 4096);
    CHECK(nt_rmsnorm_bwd_loop.check(&q, &p, &h200, err, sizeof err) == 0, "h200: %s", err);
    err[0] = 0;
    CHECK(nt_rmsnorm_bwd_loop.check(&q, &p, &small, err, sizeof err) == -1 &&
              strstr(err, "k=5 blocks of 256 threads"), "'%s'", err);
}

/* The op's fallback: loop block=1024 chunks=1 k=0 for every dtype
 * combination, planning every N up to NT_MAX_N precisely on both devices
 * (M = 1 and 2^31 - 1), with a workspace of a partial row per block that
 * threads allow (2 blocks of 1024 per SM), at most M. */
TEST(the_fallback_covers_every_n) {
    static const nt_devinfo *const devs[] = {&h200, &a100, NULL};
    char err[256], fbp[128];
    int tried = 0, wrong = 0;
    for (int x = 0; x < NT_NDTYPES; x++)
        for (int w = 0; w < NT_NDTYPES; w++)
            for (int dw = 0; dw < NT_NDTYPES; dw++) {
                nt_problem p = problem(x, w, dw, 1, 8);
                const nt_family *f = OP->fallback(&p, fbp, sizeof fbp);
                if (!allowed(x, w, dw)) {
                    CHECK(f == NULL, "x=%d w=%d dw=%d: a fallback for refused dtypes", x, w, dw);
                    continue;
                }
                CHECK(f == &nt_rmsnorm_bwd_loop && !strcmp(fbp, "block=1024,chunks=1,k=0"),
                      "fallback %s %s", f ? f->name : "none", fbp);
                if (!f) continue;
                nt_params q = params(fbp);
                CHECK(nt_params_validate(f, &q, err, sizeof err) == 0, "%s", err);
                tried++;
                for (int64_t N = 8; N <= NT_MAX_N; N += 8)
                    for (int m = 0; m < 2; m++)
                        for (int d = 0; devs[d]; d++) {
                            nt_plan pl;
                            p = problem(x, w, dw, m ? 2147483647LL : 1, N);
                            int64_t parts = m ? 2 * devs[d]->sms : 1;
                            int rc = f->plan(&q, &p, devs[d], &pl, err, sizeof err);
                            if ((rc || !nt_plan_precise(&pl, &p) ||
                                 pl.workspace != ALIGN256((size_t)parts * (size_t)N * 4)) &&
                                wrong++ < 5)
                                CHECK(0, "fallback x=%s w=%s dw=%s M=%lld N=%lld cc %d: %s",
                                      nt_dtypes[x].name, nt_dtypes[w].name, nt_dtypes[dw].name,
                                      (long long)p.M, (long long)N, devs[d]->cc_major,
                                      rc ? err : "imprecise or wrong workspace");
                        }
            }
    CHECK(tried == 7 && wrong == 0, "%d combinations, %d plans wrong", tried, wrong);
}

/* fused: one cooperative launch with a grid the launcher sizes, the
 * persistent family's limits with stages 2 to 4, shared memory for the
 * pipeline (which the column sum reuses: at least 16 bytes a thread), and
 * a workspace of one partial row per block it may launch. */
TEST(fused_one_cooperative_launch) {
    const nt_family *f = &nt_rmsnorm_bwd_fused;
    char err[256];
    nt_plan pl;
    nt_problem p = problem(NT_BF16, NT_BF16, NT_F32, 1024, 4096);   /* 256 * 2 * 8 */
    nt_params q = params("block=256,chunks=2,stages=3,k=2");
    CHECK(f->plan(&q, &p, &h200, &pl, err, sizeof err) == 0, "%s", err);
    CHECK(pl.nlaunch == 1 && pl.l[0].coop == 1 && pl.l[0].pdl == 1 && pl.l[0].grid == 0 &&
              pl.l[0].blocks_per_sm == 2 && pl.l[0].block == 256 && pl.l[0].cluster <= 1,
          "launch: %d kernels, coop %d, grid %u", pl.nlaunch, pl.l[0].coop, pl.l[0].grid);
    CHECK(!strcmp(pl.l[0].name, "nt_bwd_fused<nt_bf16, nt_bf16, float, 256, 2, 3, 2>"), "%s",
          pl.l[0].name);
    CHECK(pl.l[0].smem == (2 * 3 * 16 + 16) * 256 * 2 && pl.l[0].smem >= 16 * 256,
          "smem %u", pl.l[0].smem);
    CHECK(pl.workspace == NT_BWD_WS(132 * 2, 4096), "workspace %zu", pl.workspace);
    CHECK(nt_plan_precise(&pl, &p), "fp32 partials: precise for an f32 dw");
    p.M = 100;                                             /* at most M blocks */
    CHECK(f->plan(&q, &p, &h200, &pl, err, sizeof err) == 0 &&
              pl.workspace == NT_BWD_WS(100, 4096), "workspace %zu", pl.workspace);
    /* stages 2 to 4 only: the kernel always pipelines */
    CHECK(accepts(f, "block=256,chunks=2,stages=1,k=0", &p, &h200, err, sizeof err) == -1 &&
              strstr(err, "stages in [2, 4]"), "stages=1: %s", err);
    /* N up to block * chunks * E, E by the activation dtype */
    p.N = 4104;
    CHECK(accepts(f, "block=256,chunks=2,stages=2,k=0", &p, &h200, err, sizeof err) == -1 &&
              strstr(err, "N=4104"), "N=4104: %s", err);
    p = problem(NT_F32, NT_F32, NT_F32, 1000, 2048);
    CHECK(accepts(f, "block=256,chunks=2,stages=2,k=0", &p, &h200, err, sizeof err) == 0, "%s", err);
    p.N = 2056;
    CHECK(accepts(f, "block=256,chunks=2,stages=2,k=0", &p, &h200, err, sizeof err) == -1 &&
              strstr(err, "x=f32"), "f32 N=2056: %s", err);
    /* what one SM cannot hold, and devices without the barrier's fences */
    p = problem(NT_BF16, NT_F32, NT_F32, 1000, 16384);
    CHECK(accepts(f, "block=1024,chunks=2,stages=4,k=0", &p, &h200, err, sizeof err) == -1 &&
              strstr(err, "shared memory"), "stages=4 at 16384: %s", err);
    CHECK(accepts(f, "block=1024,chunks=2,stages=2,k=2", &p, &h200, err, sizeof err) == -1 &&
              strstr(err, "do not fit on one SM"), "k=2 of 1024: %s", err);
    nt_devinfo old = h200;
    old.cc_major = 6;
    CHECK(accepts(f, "block=1024,chunks=2,stages=2,k=0", &p, &old, err, sizeof err) == -1 &&
              strstr(err, "compute capability 7.0"), "sm_60: %s", err);
}

/* cstage: the cluster chain with a pipeline: whole clusters the launcher
 * sizes, shared memory for `stages` slices of a row and w's, one partial
 * row per cluster, and the limits of its registers, its shared memory and
 * its device. */
TEST(cstage_plan_limits_and_smem) {
    const nt_family *f = &nt_rmsnorm_bwd_cstage;
    char err[256];
    nt_plan pl;
    nt_problem p = problem(NT_BF16, NT_BF16, NT_F32, 4096, 32768);  /* 2 * 512 * 4 * 8 */
    nt_params q = params("cluster=2,block=512,chunks=4,stages=2,k=1");
    CHECK(f->plan(&q, &p, &h200, &pl, err, sizeof err) == 0, "%s", err);
    CHECK(pl.nlaunch == 2 && pl.l[0].pdl == 1 && pl.l[0].grid == 0 && pl.l[0].cluster == 2 &&
              pl.l[0].blocks_per_sm == 1 && pl.l[0].block == 512 && !pl.l[0].coop,
          "launch: %d kernels, cluster %u, grid %u", pl.nlaunch, pl.l[0].cluster, pl.l[0].grid);
    CHECK(!strcmp(pl.l[0].name, "nt_bwd_cstage<nt_bf16, nt_bf16, float, 2, 512, 4, 2, 1>"), "%s",
          pl.l[0].name);
    CHECK(!strcmp(pl.l[1].name, "nt_colsum_final<float, 0>"), "%s", pl.l[1].name);
    /* two stages of x and dy (32 bytes a chunk) and w (16 bytes a chunk) */
    CHECK(pl.l[0].smem == (2 * 2 * 16 + 16) * 512 * 4, "smem %u", pl.l[0].smem);
    CHECK(pl.workspace == NT_BWD_WS(132 / 2, 32768), "workspace %zu", pl.workspace);
    CHECK(nt_plan_precise(&pl, &p), "fp32 partials: precise for an f32 dw");
    p.M = 10;                                               /* at most M clusters */
    CHECK(f->plan(&q, &p, &h200, &pl, err, sizeof err) == 0 &&
              pl.workspace == NT_BWD_WS(10, 32768), "workspace %zu", pl.workspace);
    /* an fp32 weight takes 32 bytes a chunk */
    p = problem(NT_BF16, NT_F32, NT_F32, 4096, 32768);
    CHECK(f->plan(&q, &p, &h200, &pl, err, sizeof err) == 0 &&
              pl.l[0].smem == (2 * 2 * 16 + 32) * 512 * 4, "f32 w smem %u: %s", pl.l[0].smem, err);
    /* the parameters' ranges */
    p = problem(NT_BF16, NT_BF16, NT_F32, 4096, 32768);
    const char *bad[] = {"cluster=3,block=512,chunks=4,stages=2,k=1",
                         "cluster=2,block=500,chunks=4,stages=2,k=1",
                         "cluster=2,block=512,chunks=4,stages=1,k=1",
                         "cluster=2,block=512,chunks=4,stages=5,k=1",
                         "cluster=2,block=512,chunks=17,stages=2,k=1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(accepts(f, bad[i], &p, &h200, err, sizeof err) == -1 && strstr(err, "cstage needs"),
              "%s: %s", bad[i], err);
    /* coverage: N up to cluster * block * chunks * E */
    CHECK(accepts(f, "cluster=2,block=512,chunks=3,stages=2,k=1", &p, &h200, err, sizeof err) == -1 &&
              strstr(err, "N=32768") && strstr(err, "cluster*block*chunks"), "short: %s", err);
    /* registers: 16 + 11 chunks for 16-bit x, at least 64 a thread */
    CHECK(accepts(f, "cluster=2,block=256,chunks=8,stages=2,k=4", &p, &h200, err, sizeof err) == -1 &&
              strstr(err, "would spill"), "chunks=8 at 64 registers: %s", err);
    CHECK(accepts(f, "cluster=4,block=256,chunks=4,stages=2,k=1", &p, &h200, err, sizeof err) == 0,
          "%s", err);
    CHECK(accepts(f, "cluster=8,block=512,chunks=1,stages=2,k=4", &p, NULL, err, sizeof err) == -1 &&
              strstr(err, "would spill"), "32 registers: %s", err);
    p.N = 8192;
    CHECK(accepts(f, "cluster=2,block=512,chunks=1,stages=2,k=2", &p, &h200, err, sizeof err) == 0,
          "64 registers: %s", err);
    /* shared memory: four stages of 512 x 4 chunks do not fit a block */
    p.N = 32768;
    CHECK(accepts(f, "cluster=2,block=512,chunks=4,stages=4,k=1", &p, &h200, err, sizeof err) == -1 &&
              strstr(err, "shared memory"), "stages=4: %s", err);
    /* no clusters before sm_90 */
    nt_devinfo old = h200;
    old.cc_major = 8;
    CHECK(accepts(f, "cluster=2,block=512,chunks=4,stages=2,k=1", &p, &old, err, sizeof err) == -1 &&
              strstr(err, "compute capability 9.0"), "sm_80: %s", err);
}

/* held: persistent's pipelined chain (the same parameters, launches,
 * shared memory and workspace) under its own kernel name, stages >= 2. */
TEST(held_is_persistent_pipelined) {
    const nt_family *f = &nt_rmsnorm_bwd_held;
    char err[256], err2[256];
    nt_plan pl, pp;
    nt_problem p = problem(NT_BF16, NT_BF16, NT_F32, 1024, 4096);
    nt_params q = params("block=256,chunks=2,stages=3,k=2");
    CHECK(f->plan(&q, &p, &h200, &pl, err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(pl.l[0].name, "nt_persist_held<nt_bf16, nt_bf16, float, 256, 2, 3, 2>"), "%s",
          pl.l[0].name);
    CHECK(nt_rmsnorm_bwd_persistent.plan(&q, &p, &h200, &pp, err, sizeof err) == 0, "%s", err);
    CHECK(pl.nlaunch == pp.nlaunch && pl.l[0].smem == pp.l[0].smem &&
              pl.l[0].smem == (2 * 3 * 16 + 16) * 256 * 2 && pl.workspace == pp.workspace &&
              pl.l[0].blocks_per_sm == 2 && pl.l[0].pdl && !strcmp(pl.l[1].name, pp.l[1].name),
          "smem %u/%u, workspace %zu/%zu", pl.l[0].smem, pp.l[0].smem, pl.workspace, pp.workspace);
    CHECK(f->nparams == nt_rmsnorm_bwd_persistent.nparams &&
              f->params == nt_rmsnorm_bwd_persistent.params, "persistent's parameters");
    CHECK(accepts(f, "block=256,chunks=2,stages=1,k=2", &p, &h200, err, sizeof err) == -1 &&
              strstr(err, "held needs stages >= 2"), "stages 1: %s", err);
    const char *cases[] = {"block=256,chunks=2,stages=9,k=2", "block=100,chunks=5,stages=2,k=2",
                           "block=128,chunks=4,stages=2,k=2", "block=1024,chunks=4,stages=4,k=2",
                           "block=512,chunks=1,stages=8,k=1"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int a = accepts(f, cases[i], &p, &h200, err, sizeof err);
        int b = accepts(&nt_rmsnorm_bwd_persistent, cases[i], &p, &h200, err2, sizeof err2);
        CHECK(a == b, "%s: held %d (%s), persistent %d (%s)", cases[i], a, err, b, err2);
    }
}

/* tma: held's chain with bulk-copied rows: its kernel name, shared memory
 * (stages x [x, dy] rows, no copy of w), persistent's launches and
 * workspace, and what it refuses (devices before sm_90, configs that would
 * spill, stages out of range, rows it does not cover). */
TEST(tma_is_held_with_bulk_rows) {
    const nt_family *f = &nt_rmsnorm_bwd_tma;
    char err[256];
    nt_plan pl, pp;
    nt_problem p = problem(NT_BF16, NT_F32, NT_F32, 1024, 4096);
    nt_params q = params("block=256,chunks=2,stages=3,k=2");
    CHECK(f->plan(&q, &p, &h200, &pl, err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(pl.l[0].name, "nt_bwd_tma<nt_bf16, float, float, 256, 2, 3, 2>"), "%s",
          pl.l[0].name);
    CHECK(nt_rmsnorm_bwd_persistent.plan(&q, &p, &h200, &pp, err, sizeof err) == 0, "%s", err);
    CHECK(pl.nlaunch == 2 && pl.l[0].smem == 3 * 2 * 16 * 256 * 2 && pl.l[0].pdl &&
              pl.l[0].blocks_per_sm == 2 && pl.workspace == pp.workspace &&
              !strcmp(pl.l[1].name, pp.l[1].name) && pl.l[1].grid == pp.l[1].grid,
          "smem %u, workspace %zu/%zu, %s", pl.l[0].smem, pl.workspace, pp.workspace,
          pl.l[1].name);
    /* no bulk copies before sm_90 */
    nt_devinfo old = h200;
    old.cc_major = 8;
    CHECK(accepts(f, "block=256,chunks=2,stages=3,k=2", &p, &old, err, sizeof err) == -1 &&
              strstr(err, "compute capability 9.0"), "sm_80: %s", err);
    /* registers: 4 chunks of bf16 need about 160, two blocks of 256 leave 128 */
    CHECK(accepts(f, "block=256,chunks=4,stages=2,k=1", &p, &h200, err, sizeof err) == 0, "%s",
          err);
    CHECK(accepts(f, "block=256,chunks=4,stages=2,k=2", &p, &h200, err, sizeof err) == -1 &&
              strstr(err, "spill"), "4 chunks, k 2: %s", err);
    /* fp32 x: 4 elements a chunk, fewer registers a chunk */
    nt_problem p32 = problem(NT_F32, NT_F32, NT_F32, 1024, 2048);
    CHECK(accepts(f, "block=128,chunks=4,stages=2,k=4", &p32, &h200, err, sizeof err) == 0, "%s",
          err);
    const char *bad[] = {"block=256,chunks=2,stages=0,k=2", "block=256,chunks=2,stages=9,k=2",
                         "block=100,chunks=5,stages=2,k=2", "block=256,chunks=9,stages=2,k=1",
                         "block=128,chunks=2,stages=2,k=1"};
    const char *why[] = {"stages in [1, 8]", "stages in [1, 8]", "multiple of 32",
                         "chunks in [1, 8]", "exceeds"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(accepts(f, bad[i], &p, &h200, err, sizeof err) == -1 && strstr(err, why[i]),
              "%s: %s", bad[i], err);
    /* shared memory: 8 stages of 512 threads of 2 chunks is 256 KB */
    nt_problem p8 = problem(NT_BF16, NT_BF16, NT_F32, 1024, 8192);
    CHECK(accepts(f, "block=512,chunks=2,stages=8,k=0", &p8, &h200, err, sizeof err) == -1 &&
              strstr(err, "shared memory"), "8 stages: %s", err);
    CHECK(accepts(f, "block=512,chunks=2,stages=3,k=1", &p8, &h200, err, sizeof err) == 0,
          "3 stages: %s", err);
    /* 16384 bf16 columns take 2048 slots: no block and chunks of them fit
     * the registers (the longest row in bf16 is 512 x 3 chunks, 12288) */
    nt_problem p16 = problem(NT_BF16, NT_BF16, NT_F32, 1024, 16384);
    const char *long_row[] = {"block=1024,chunks=2,stages=2,k=0", "block=512,chunks=4,stages=2,k=0",
                              "block=256,chunks=8,stages=2,k=0"};
    for (size_t i = 0; i < sizeof long_row / sizeof *long_row; i++)
        CHECK(accepts(f, long_row[i], &p16, &h200, err, sizeof err) == -1 && strstr(err, "spill"),
              "%s: %s", long_row[i], err);
}

/* wtma: wstage's ring and chain with a producer warp more: its kernel
 * name, shared memory (wstage's ring and w), a launch of block + 32
 * threads that still takes block/tpr rows a step, and what it refuses. */
TEST(wtma_is_wstage_with_a_producer_warp) {
    const nt_family *f = &nt_rmsnorm_bwd_wtma;
    char err[256];
    nt_plan pl, pw;
    nt_problem p = problem(NT_BF16, NT_F32, NT_F32, 32768, 512);
    const char *text = "tpr=32,block=256,chunks=2,stages=3,k=2";
    nt_params q = params(text);
    CHECK(f->plan(&q, &p, &h200, &pl, err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(pl.l[0].name, "nt_bwd_wtma<nt_bf16, float, float, 32, 256, 2, 3, 2>"), "%s",
          pl.l[0].name);
    CHECK(nt_rmsnorm_bwd_wstage.plan(&q, &p, &h200, &pw, err, sizeof err) == 0, "%s", err);
    CHECK(pl.nlaunch == 2 && pl.l[0].smem == pw.l[0].smem &&
              pl.l[0].smem == 3 * 2 * 2 * 256 * 16 + 32 * 2 * 8 * 4 && pl.l[0].block == 256 + 32 &&
              pw.l[0].block == 256 && pl.l[0].grid_rows == 256 / 32 &&
              pl.l[0].grid_rows == pw.l[0].grid_rows && pl.l[0].blocks_per_sm == 2 &&
              pl.l[0].pdl && !strcmp(pl.l[1].name, pw.l[1].name),
          "smem %u/%u, block %u, rows %u", pl.l[0].smem, pw.l[0].smem, pl.l[0].block,
          pl.l[0].grid_rows);
    /* no bulk copies before sm_90 */
    nt_devinfo old = h200;
    old.cc_major = 8;
    CHECK(accepts(f, text, &p, &old, err, sizeof err) == -1 && strstr(err, "compute capability 9.0"),
          "sm_80: %s", err);
    /* the registers are those of block + 32 threads: 2 x 256 leave 128 */
    nt_problem p8 = problem(NT_BF16, NT_BF16, NT_F32, 65536, 128);
    CHECK(accepts(f, "tpr=16,block=224,chunks=1,stages=2,k=2", &p8, &h200, err, sizeof err) == 0,
          "k 2 of 256 threads: %s", err);
    CHECK(accepts(f, "tpr=16,block=256,chunks=1,stages=2,k=4", &p8, &h200, err, sizeof err) == -1 &&
              strstr(err, "block=256 (+32) k=4 leaves 56"), "k 4 of 288 threads: %s", err);
    nt_problem p2 = problem(NT_BF16, NT_BF16, NT_F32, 65536, 2048);
    const struct {
        const char *params, *why;
        const nt_problem *pr;
    } bad[] = {
        {"tpr=12,block=256,chunks=2,stages=3,k=2", "power of two", &p},
        {"tpr=32,block=1024,chunks=2,stages=3,k=0", "[32, 992]", &p},
        {"tpr=32,block=256,chunks=2,stages=1,k=2", "stages in [2, 8]", &p},
        {"tpr=32,block=256,chunks=1,stages=3,k=2", "exceeds", &p},
        {"tpr=32,block=512,chunks=8,stages=2,k=2", "spill", &p2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(accepts(f, bad[i].params, bad[i].pr, &h200, err, sizeof err) == -1 &&
                  strstr(err, bad[i].why), "%s: %s", bad[i].params, err);
}

/* rows: persistent's pipelined chain over groups of rows: its kernel name
 * (the params in order), shared memory (stages x rows x (x, dy) chunks and
 * w), a grid of at most one block a group (the workspace's partial rows),
 * and its limits. */
TEST(rows_is_persistent_by_groups) {
    const nt_family *f = &nt_rmsnorm_bwd_rows;
    char err[256];
    nt_plan pl, pp;
    nt_problem p = problem(NT_BF16, NT_F32, NT_F32, 1024, 4096);
    nt_params q = params("block=256,chunks=2,rows=2,stages=2,k=2");
    nt_params qp = params("block=256,chunks=2,stages=2,k=2");
    CHECK(f->plan(&q, &p, &h200, &pl, err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(pl.l[0].name, "nt_bwd_rows<nt_bf16, float, float, 256, 2, 2, 2, 2>"), "%s",
          pl.l[0].name);
    CHECK(nt_rmsnorm_bwd_persistent.plan(&qp, &p, &h200, &pp, err, sizeof err) == 0, "%s", err);
    /* fp32 w: 32 bytes a chunk's weights */
    CHECK(pl.l[0].smem == (2 * 2 * 2 * 16 + 32) * 256 * 2, "smem %u", pl.l[0].smem);
    /* 512 groups of 2 rows, more than 2 blocks x 132 SMs: persistent's workspace */
    CHECK(pl.nlaunch == 2 && pl.l[0].grid_rows == 2 && pl.l[0].blocks_per_sm == 2 &&
              pl.l[0].pdl && !strcmp(pl.l[1].name, pp.l[1].name) &&
              pl.workspace == pp.workspace,
          "launches %d, grid_rows %u, workspace %zu/%zu", pl.nlaunch, pl.l[0].grid_rows,
          pl.workspace, pp.workspace);
    /* 256 rows in groups of 4: 64 groups, so 64 blocks and partial rows */
    nt_problem few = problem(NT_BF16, NT_BF16, NT_F32, 256, 4096);
    q = params("block=128,chunks=4,rows=4,stages=2,k=1");
    CHECK(f->plan(&q, &few, &h200, &pl, err, sizeof err) == 0 &&
              pl.workspace == (size_t)64 * 4096 * 4, "workspace %zu: %s", pl.workspace, err);
    q = params("block=256,chunks=2,rows=1,stages=2,k=2");
    CHECK(f->plan(&q, &few, &h200, &pl, err, sizeof err) == 0 &&
              nt_rmsnorm_bwd_persistent.plan(&qp, &few, &h200, &pp, err, sizeof err) == 0 &&
              pl.l[0].smem == pp.l[0].smem && pl.workspace == pp.workspace,
          "rows 1: persistent's shared memory and workspace (%u/%u)", pl.l[0].smem,
          pp.l[0].smem);
    const char *bad[] = {"block=256,chunks=2,rows=0,stages=2,k=2",
                         "block=256,chunks=2,rows=9,stages=2,k=2",
                         "block=256,chunks=2,rows=2,stages=1,k=2",
                         "block=100,chunks=2,rows=2,stages=2,k=2"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(accepts(f, bad[i], &few, &h200, err, sizeof err) == -1 &&
                  strstr(err, "rows needs block a multiple of 32"),
              "%s: %s", bad[i], err);
    CHECK(accepts(f, "block=256,chunks=1,rows=2,stages=2,k=2", &few, &h200, err, sizeof err) ==
                  -1 && strstr(err, "exceeds block*chunks"),
          "N not covered: %s", err);
    /* 8 rows x 8 stages x 32 bytes x 1024 threads: more shared memory than a block gets */
    CHECK(accepts(f, "block=1024,chunks=1,rows=8,stages=8,k=0", &few, &h200, err, sizeof err) ==
                  -1 && strstr(err, "shared memory"),
          "too much shared memory: %s", err);
}

/* aligned: persistent's chain, parameters, limits and shared memory under
 * its own kernel name. */
TEST(aligned_is_persistent_shifted) {
    const nt_family *f = &nt_rmsnorm_bwd_aligned;
    char err[256], err2[256];
    nt_plan pl, pp;
    nt_problem p = problem(NT_BF16, NT_BF16, NT_F32, 4096, 4104);  /* 513 chunks */
    nt_params q = params("block=128,chunks=5,stages=2,k=2");
    CHECK(f->plan(&q, &p, &h200, &pl, err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(pl.l[0].name, "nt_bwd_aligned<nt_bf16, nt_bf16, float, 128, 5, 2, 2>"), "%s",
          pl.l[0].name);
    CHECK(nt_rmsnorm_bwd_persistent.plan(&q, &p, &h200, &pp, err, sizeof err) == 0, "%s", err);
    CHECK(pl.nlaunch == 2 && pl.l[0].smem == pp.l[0].smem && pl.l[0].smem == (2 * 2 * 16 + 16) * 128 * 5 &&
              pl.workspace == pp.workspace && pl.l[0].blocks_per_sm == 2 && pl.l[0].pdl &&
              !strcmp(pl.l[1].name, pp.l[1].name),
          "smem %u/%u, workspace %zu/%zu", pl.l[0].smem, pp.l[0].smem, pl.workspace, pp.workspace);
    CHECK(f->nparams == nt_rmsnorm_bwd_persistent.nparams &&
              f->params == nt_rmsnorm_bwd_persistent.params, "persistent's parameters");
    const char *cases[] = {"block=128,chunks=5,stages=1,k=2", "block=128,chunks=5,stages=9,k=2",
                           "block=100,chunks=5,stages=2,k=2", "block=128,chunks=4,stages=2,k=2",
                           "block=1024,chunks=4,stages=4,k=2", "block=128,chunks=5,stages=3,k=0"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int a = accepts(f, cases[i], &p, &h200, err, sizeof err);
        int b = accepts(&nt_rmsnorm_bwd_persistent, cases[i], &p, &h200, err2, sizeof err2);
        CHECK(a == b, "%s: aligned %d (%s), persistent %d (%s)", cases[i], a, err, b, err2);
        if (i == 1) CHECK(a == -1 && strstr(err, "aligned needs"), "%s", err);
    }
}

/* pcluster: aligned's rows in whole clusters, at most one block per row
 * (grid_rows = cluster), shared memory for the pipeline and a partial row,
 * one partial row per cluster, and the limits of its parameters and
 * device. */
TEST(pcluster_plan_limits_and_smem) {
    const nt_family *f = &nt_rmsnorm_bwd_pcluster;
    char err[256];
    nt_plan pl;
    nt_problem p = problem(NT_BF16, NT_BF16, NT_F32, 256, 8192);
    nt_params q = params("cluster=4,block=256,chunks=4,stages=2,k=0");
    CHECK(f->plan(&q, &p, &h200, &pl, err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(pl.l[0].name, "nt_bwd_pcluster<nt_bf16, nt_bf16, float, 4, 256, 4, 2, 0>"), "%s",
          pl.l[0].name);
    CHECK(pl.nlaunch == 2 && pl.l[0].cluster == 4 && pl.l[0].grid_rows == 4 && pl.l[0].grid == 0 &&
              pl.l[0].pdl && !strcmp(pl.l[1].name, "nt_colsum_final<float, 0>"),
          "cluster %u, grid_rows %u", pl.l[0].cluster, pl.l[0].grid_rows);
    /* two stages of x and dy, w (16 bytes a chunk), and the fp32 partial
     * row (8 floats a chunk) */
    CHECK(pl.l[0].smem == (2 * 2 * 16 + 16 + 32) * 256 * 4, "smem %u", pl.l[0].smem);
    q = params("cluster=4,block=256,chunks=4,stages=1,k=0");
    CHECK(f->plan(&q, &p, &h200, &pl, err, sizeof err) == 0 && pl.l[0].smem == 32 * 256 * 4,
          "stages=1 smem %u: %s", pl.l[0].smem, err);
    CHECK(nt_plan_precise(&pl, &p), "fp32 partials: precise for an f32 dw");
    /* the launcher's grid: whole clusters, at most one block per row */
    CHECK(nt_grid_fit(1056, 4, 0, 256, 4) == 256, "grid at M = 256: %lld",
          nt_grid_fit(1056, 4, 0, 256, 4));
    CHECK(nt_grid_fit(1056, 4, 0, 250, 4) == 252, "M = 250: %lld", nt_grid_fit(1056, 4, 0, 250, 4));
    const char *bad[] = {"cluster=3,block=256,chunks=4,stages=2,k=0",
                         "cluster=16,block=256,chunks=4,stages=2,k=0",
                         "cluster=4,block=250,chunks=4,stages=2,k=0",
                         "cluster=4,block=256,chunks=4,stages=9,k=0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(accepts(f, bad[i], &p, &h200, err, sizeof err) == -1 && strstr(err, "pcluster needs"),
              "%s: %s", bad[i], err);
    CHECK(accepts(f, "cluster=4,block=256,chunks=3,stages=2,k=0", &p, &h200, err, sizeof err) == -1 &&
              strstr(err, "block*chunks"), "short: %s", err);
    CHECK(accepts(f, "cluster=4,block=1024,chunks=4,stages=4,k=0", &p, &h200, err, sizeof err) == -1 &&
              strstr(err, "shared memory"), "smem: %s", err);
    nt_devinfo old = h200;
    old.cc_major = 8;
    CHECK(accepts(f, "cluster=4,block=256,chunks=4,stages=2,k=0", &p, &old, err, sizeof err) == -1 &&
              strstr(err, "compute capability 9.0"), "sm_80: %s", err);
}

/* cols: the statistics kernel (one row a block, 128 or 256 threads by N)
 * then the column tiles (a block per cc column chunks, every row), dw
 * written by the tiles: no partial rows (nparts 0, workspace two floats a
 * row), shared memory for the row groups' sums; block, cc and k limits. */
TEST(cols_plan_and_limits) {
    const nt_family *f = &nt_rmsnorm_bwd_cols;
    char err[256] = "";
    nt_plan pl;
    nt_problem p = problem(NT_BF16, NT_BF16, NT_F32, 256, 8192);    /* 1024 chunks a row */
    nt_params q = params("block=256,cc=8,rows=2,k=2");
    CHECK(f->plan(&q, &p, &h200, &pl, err, sizeof err) == 0, "%s", err);
    CHECK(pl.nlaunch == 2 && !strcmp(pl.l[0].name, "nt_bwd_stats<nt_bf16, nt_bf16, float, 256>") &&
              pl.l[0].grid == 256 && pl.l[0].block == 256 && pl.l[0].pdl &&
              !strcmp(pl.l[1].name, "nt_bwd_cols<nt_bf16, nt_bf16, float, 256, 8, 2, 2>") &&
              pl.l[1].grid == 128 && pl.l[1].block == 256 && pl.l[1].smem == 256 * 8 * 4 &&
              pl.l[1].pdl && pl.nparts == 0 && pl.workspace == 2048,
          "%s grid %u / %s grid %u smem %u ws %zu", pl.l[0].name, pl.l[0].grid, pl.l[1].name,
          pl.l[1].grid, pl.l[1].smem, pl.workspace);
    /* short rows: 128 threads of statistics; fp32 x: 4 elements a chunk */
    p = problem(NT_F32, NT_F32, NT_F32, 1000, 1032);               /* 258 chunks */
    q = params("block=64,cc=64,rows=1,k=0");
    CHECK(f->plan(&q, &p, &h200, &pl, err, sizeof err) == 0 &&
              !strcmp(pl.l[0].name, "nt_bwd_stats<float, float, float, 128>") &&
              pl.l[1].grid == 5 && pl.l[1].smem == 64 * 4 * 4 && pl.workspace == 8192,
          "%s grid %u smem %u ws %zu: %s", pl.l[0].name, pl.l[1].grid, pl.l[1].smem,
          pl.workspace, err);
    const char *bad[] = {"block=256,cc=3,rows=1,k=0", "block=100,cc=4,rows=1,k=0",
                         "block=256,cc=128,rows=1,k=0", "block=256,cc=8,rows=1,k=33",
                         "block=256,cc=8,rows=9,k=0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(accepts(f, bad[i], &p, &h200, err, sizeof err) == -1 && strstr(err, "cols needs"),
              "%s: %s", bad[i], err);
    CHECK(accepts(f, "block=1024,cc=8,rows=1,k=4", &p, &h200, err, sizeof err) == -1 &&
              strstr(err, "do not fit"), "4 x 1024 threads: %s", err);
}

/* ring: persistent's chain (its launches, grid, workspace and column sum)
 * with (chunks + spare) slots a thread for x and as many for dy in dynamic
 * shared memory, the kernel named in the params' order; refused where
 * spare is not in [1, chunks], the row is not covered or the ring does
 * not fit.  Its slots and cp.async groups follow the forward ring's
 * schedule, which rmsnorm_fwd/test_op.c plays on a model
 * (ring_schedule_reads_every_chunk_landed). */
TEST(ring_is_persistent_through_a_ring) {
    const nt_family *f = &nt_rmsnorm_bwd_ring;
    char err[256];
    nt_plan pl, pp;
    nt_problem p = problem(NT_BF16, NT_BF16, NT_F32, 8192, 16384);
    nt_params q = params("block=512,chunks=4,spare=2,k=1");
    CHECK(f->plan(&q, &p, &h200, &pl, err, sizeof err) == 0, "%s", err);
    CHECK(!strcmp(pl.l[0].name, "nt_bwd_ring<nt_bf16, nt_bf16, float, 512, 4, 2, 1>"), "%s",
          pl.l[0].name);
    nt_params qp = params("block=512,chunks=4,stages=2,k=1");
    CHECK(nt_rmsnorm_bwd_persistent.plan(&qp, &p, &h200, &pp, err, sizeof err) == 0, "%s", err);
    CHECK(pl.nlaunch == pp.nlaunch && pl.l[0].grid == pp.l[0].grid &&
              pl.l[0].blocks_per_sm == 1 && pl.l[0].pdl && pl.workspace == pp.workspace &&
              !strcmp(pl.l[1].name, pp.l[1].name) && pl.l[0].smem == 2u * (4 + 2) * 512 * 16,
          "smem %u, workspace %zu/%zu, %s", pl.l[0].smem, pl.workspace, pp.workspace, pl.l[1].name);
    const char *bad[] = {"block=512,chunks=4,spare=5,k=1", "block=512,chunks=4,spare=0,k=1",
                         "block=500,chunks=4,spare=2,k=1", "block=512,chunks=4,spare=2,k=33"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(accepts(f, bad[i], &p, &h200, err, sizeof err) == -1 &&
                  strstr(err, "ring needs block a multiple of 32"), "%s: '%s'", bad[i], err);
    /* 512 x 3 chunks of 8 cover 12288 < 16384 */
    CHECK(accepts(f, "block=512,chunks=3,spare=2,k=1", &p, &h200, err, sizeof err) == -1 &&
              strstr(err, "exceeds"), "short: '%s'", err);
    /* 1024 threads x (8 + 8) slots x 32 bytes: 512 KB, more than a block
     * may have; two blocks of 512 x (4 + 4) (128 KB each) more than an SM */
    p = problem(NT_BF16, NT_BF16, NT_F32, 4096, 65536);
    CHECK(accepts(f, "block=1024,chunks=8,spare=8,k=1", &p, &h200, err, sizeof err) == -1 &&
              strstr(err, "shared memory"), "too large: '%s'", err);
    CHECK(accepts(f, "block=1024,chunks=8,spare=8,k=1", &p, NULL, err, sizeof err) == 0,
          "no device, no shared memory limit: %s", err);
    p = problem(NT_BF16, NT_BF16, NT_F32, 4096, 16384);
    CHECK(accepts(f, "block=512,chunks=4,spare=4,k=1", &p, &h200, err, sizeof err) == 0, "%s", err);
    CHECK(accepts(f, "block=512,chunks=4,spare=4,k=2", &p, &h200, err, sizeof err) == -1,
          "k 2 of 128 KB: '%s'", err);
}

int main(void) {
    RUN(backward_matches_finite_differences);
    RUN(backward_known_values);
    RUN(threads_bitwise_equal);
    RUN(generic_ref_is_f64_ref_on_converted_values);
    RUN(check_accepts_exactly_the_allowed_dtypes);
    RUN(op_table);
    RUN(plan_precision_follows_the_dw_dtype);
    RUN(name_expressions_start_with_the_ctypes);
    RUN(naive_chunks_fewest_power_of_two);
    RUN(persistent_limits_and_smem_follow_the_dtypes);
    RUN(warp_limits_grid_rows_and_workspace);
    RUN(cluster_check_limits);
    RUN(cluster_plan_grid_and_workspace);
    RUN(grid_fit_whole_clusters);
    RUN(loop_limits_registers_and_workspace);
    RUN(the_fallback_covers_every_n);
    RUN(fused_one_cooperative_launch);
    RUN(cstage_plan_limits_and_smem);
    RUN(aligned_is_persistent_shifted);
    RUN(held_is_persistent_pipelined);
    RUN(tma_is_held_with_bulk_rows);
    RUN(wtma_is_wstage_with_a_producer_warp);
    RUN(rows_is_persistent_by_groups);
    RUN(pcluster_plan_limits_and_smem);
    RUN(cols_plan_and_limits);
    RUN(ring_is_persistent_through_a_ring);
    T_END();
}
