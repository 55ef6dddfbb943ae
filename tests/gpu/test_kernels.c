/* test_kernels.c -- GPU tests: every op x dtype combination x family on
 * random shapes, through the GPU runner's evaluator.
 *
 * The evaluator poisons every output with NaN, checks every element of
 * every output against the op's float64 reference (a named error per
 * output, within its tolerance), runs twice more and compares every output
 * bitwise, then times a few samples.  A variant passes when its status is
 * ok.  Nothing here names an op or a family: the ops come from kernels/ops.c,
 * the dtype combinations from each op's slots (those nt_problem_check
 * accepts), and each family's parameters from a generic probe: typical
 * values within the declared ranges, tried in a seeded random order, the
 * first two that the family accepts for the problem on this device (and
 * always the op's fallback config).
 *
 * Shapes (seeded): M = 1, small M, and random M up to 20000; N = 8, 16384,
 * NT_MAX_N and random multiples of 8 up to NT_MAX_N (odd multiples
 * included), so that partial vectors, partial blocks and tiles, persistent
 * grids larger than M and the longest rows are all met.  M * N stays below
 * 2^25 except for two large shapes per problem (2^26: 16387 x 4096 and
 * 1027 x NT_MAX_N), and a short row (N <= 1024) over up to 300000 rows
 * (per-head norms), fewer where M * N passes 2^25.
 *
 *   build/gpu/test_kernels           full grid
 *   build/gpu/test_kernels --small   two dtype combinations per op, small
 *                                    shapes (for compute-sanitizer)
 *   ... --check-only                 every variant run once and validated:
 *                                    one set of inputs, no yardstick, no
 *                                    determinism runs, nothing timed (the
 *                                    runner's check_only, for the
 *                                    sanitizers, which slow every launch)
 *   ... --no-fallback                the ops' fallbacks left out (an op
 *                                    with nothing left is passed over)
 *   ... --family NAME                only the families NAME names (a
 *                                    family, "op." for an op's, or a
 *                                    comma-separated list), plus each
 *                                    op's fallback
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/t.h"
#include "tuner/runner.h"

#define MAX_PROBS 64          /* problems of one op */
#define MAX_JOBS 65536
#define PREFETCH 48           /* compilations started ahead */
#define PER_FAMILY 2          /* probed configs per (problem, family) */

static nt_runner *run;
static nt_evaluator ev;
static int small;
static const char *only;        /* --family: names to keep, or NULL */
static int no_fallback;         /* --no-fallback */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* splitmix64 */
static uint64_t next(void) {
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* One evaluation to do. */
typedef struct job {
    const nt_family *fam;
    nt_params p;
    nt_problem pr;
    int fallback;             /* the op's fallback config */
} job;

static job jobs[MAX_JOBS];
static int njobs;

/* Every dtype combination of op that nt_problem_check accepts, into out. */
static int dtype_combos(const nt_op *op, nt_problem *out, int max) {
    int n = 0, total = 1;
    for (int s = 0; s < op->nslots; s++) total *= NT_NDTYPES;
    for (int c = 0; c < total && n < max; c++) {
        nt_problem p;
        char err[256];
        nt_problem_init(&p, op, 1, 8);
        for (int s = 0, k = c; s < op->nslots; s++, k /= NT_NDTYPES) p.dtype[s] = k % NT_NDTYPES;
        if (!nt_problem_check(&p, err, sizeof err)) out[n++] = p;
    }
    return n;
}

/* Typical values of an integer parameter within [lo, hi]. */
static int int_values(const nt_param_def *d, int64_t *v) {
    static const int64_t typ[] = {0, 1, 2, 3, 4, 6, 8, 16, 32, 64, 128, 256, 512, 1024};
    int n = 0;
    for (size_t i = 0; i < sizeof typ / sizeof typ[0]; i++)
        if (typ[i] >= d->lo && typ[i] <= d->hi) v[n++] = typ[i];
    return n;
}

/* Up to `want` params of f that accept problem pr on this device, probed in
 * a seeded random order over the typical values; appended to the jobs. */
static int probe(const nt_family *f, const nt_problem *pr, int want) {
    int64_t vals[NT_MAX_PARAMS][16];
    int nv[NT_MAX_PARAMS];
    uint64_t total = 1;
    const nt_devinfo *di = nt_runner_devinfo(run);
    for (int i = 0; i < f->nparams; i++) {
        const nt_param_def *d = &f->params[i];
        if (d->kind == NT_PARAM_INT) {
            nv[i] = int_values(d, vals[i]);
        } else {
            nv[i] = 0;
            while (d->choices[nv[i]]) nv[i]++;
        }
        total *= (uint64_t)nv[i];
    }
    int got = 0;
    /* a prime step that does not divide total visits every point once */
    static const uint64_t primes[] = {7919, 7907, 7901, 7883};
    uint64_t start = next() % total, step = 1;
    for (size_t i = 0; i < sizeof primes / sizeof primes[0] && step == 1; i++)
        if (total % primes[i]) step = primes[i] % total ? primes[i] % total : 1;
    for (uint64_t k = 0; k < total && got < want && njobs < MAX_JOBS; k++) {
        uint64_t idx = (start + k * step) % total;
        nt_params p;
        char err[256], txt[NT_NAME_LEN];
        nt_plan pl;
        memset(&p, 0, sizeof p);
        for (int i = f->nparams - 1; i >= 0; i--) {
            int j = (int)(idx % (uint64_t)nv[i]);
            idx /= (uint64_t)nv[i];
            if (f->params[i].kind == NT_PARAM_INT)
                snprintf(txt, sizeof txt, "%lld", (long long)vals[i][j]);
            else
                snprintf(txt, sizeof txt, "%s", f->params[i].choices[j]);
            nt_params_set(&p, f->params[i].name, txt);
        }
        if (nt_params_validate(f, &p, err, sizeof err) || f->check(&p, pr, di, err, sizeof err) ||
            f->plan(&p, pr, di, &pl, err, sizeof err) || !nt_plan_precise(&pl, pr))
            continue;
        jobs[njobs++] = (job){f, p, *pr, 0};
        got++;
    }
    return got;
}

/* The shapes of one problem (seeded): M and N pairs into ms[], ns[]. */
static int shapes(int64_t *ms, int64_t *ns) {
    int n = 0;
    ms[n] = 1, ns[n++] = 8;
    ms[n] = 7, ns[n++] = 16384;
    ms[n] = 5, ns[n++] = NT_MAX_N;                         /* the longest rows */
    ms[n] = 1 + (int64_t)(next() % 300), ns[n++] = 8 * (1 + 2 * (int64_t)(next() % 1024)); /* odd */
    /* a short row over many rows (per-head norms): N <= 1024 */
    ms[n] = 1 + (int64_t)(next() % (small ? 3000 : 300000)), ns[n] = 8 * (1 + (int64_t)(next() % 128));
    while (ms[n] * ns[n] > (1 << 25)) ms[n] /= 2;
    n++;
    if (!small) {
        for (int i = 0; i < 4; i++) {
            int64_t N = 8 * (1 + (int64_t)(next() % (NT_MAX_N / 8)));
            int64_t M = 1 + (int64_t)(next() % 20000);
            while (M * N > (1 << 25)) M /= 2;
            ms[n] = M, ns[n++] = N;
        }
        ms[n] = 16384 + 3, ns[n++] = 4096;                 /* two large shapes */
        ms[n] = 1024 + 3, ns[n++] = NT_MAX_N;
    }
    return n;
}

/* Evaluate the jobs in order with compilation prefetched; count failures.
 * A probed config the device cannot hold (status resources: e.g. fewer
 * blocks per SM fit than its k asks, which only the occupancy query knows)
 * is counted in *skip; the op's fallback must always run. */
static void evaluate(int *ok, int *bad, int *skip) {
    nt_timing t = {.warmup = 1, .min_samples = 3, .max_samples = 5, .rel_ci = 0.5};
    static nt_result res;
    int pre = 0;
    for (int i = 0; i < njobs; i++) {
        for (; pre < njobs && pre < i + PREFETCH; pre++)
            ev.prefetch(ev.ctx, jobs[pre].fam, &jobs[pre].p, &jobs[pre].pr);
        job *j = &jobs[i];
        char canon[256], pt[200], dt[128];
        nt_params_canon(j->fam, &j->p, canon, sizeof canon);
        nt_dtypes_canon(&j->pr, dt, sizeof dt);
        snprintf(pt, sizeof pt, "M=%lld N=%lld %s", (long long)j->pr.M, (long long)j->pr.N, dt);
        if (ev.eval(ev.ctx, j->fam, &j->p, &j->pr, &t, &res)) {
            printf("  evaluator failed at %s %s %s: %s\n", pt, j->fam->name, canon, res.msg);
            (*bad)++;
            return;
        }
        if (res.status == NT_RESOURCES && !j->fallback) {
            (*skip)++;
        } else if (res.status != NT_OK) {
            printf("  %s %s %s%s: %s: %s\n", pt, j->fam->name, canon,
                   j->fallback ? " (fallback)" : "", nt_status_name(res.status), res.msg);
            (*bad)++;
        } else {
            (*ok)++;
        }
    }
}

/* 1 when family name f is one --family asks for (every family without it):
 * an item of the comma-separated list equal to f, or a prefix of it that
 * ends in '.' (an op's families). */
static int wanted(const char *f) {
    if (!only) return 1;
    for (const char *q = only; *q;) {
        size_t n = strcspn(q, ",");
        if ((n == strlen(f) && !strncmp(q, f, n)) || (n && q[n - 1] == '.' && !strncmp(q, f, n)))
            return 1;
        q += n + (q[n] == ',');
    }
    return 0;
}

/* Every op x dtype combination x family on its shapes. */
TEST(every_op_dtype_family) {
    for (int o = 0; nt_ops[o]; o++) {
        const nt_op *op = nt_ops[o];
        nt_problem dts[MAX_PROBS];
        int nd = dtype_combos(op, dts, MAX_PROBS), ok = 0, bad = 0, skip = 0, missing = 0;
        njobs = 0;
        if (small && nd > 2) dts[1] = dts[nd - 1], nd = 2;   /* the first and last combination */
        for (int d = 0; d < nd; d++) {
            int64_t ms[16], ns[16];
            int nsh = shapes(ms, ns);
            for (int s = 0; s < nsh; s++) {
                nt_problem pr = dts[d];
                char params[160];
                pr.M = ms[s];
                pr.N = ns[s];
                const nt_family *fb = op->fallback(&pr, params, sizeof params);
                CHECK(fb != NULL, "%s: no fallback", op->name);
                if (fb && !no_fallback && njobs < MAX_JOBS) {
                    jobs[njobs] = (job){fb, {0}, pr, 1};
                    nt_params_parse(params, &jobs[njobs].p);
                    njobs++;
                }
                for (int f = 0; op->families[f]; f++)
                    if (wanted(op->families[f]->name))
                        missing += probe(op->families[f], &pr, small ? 1 : PER_FAMILY) == 0;
            }
        }
        printf("  %s: %d dtype combinations, %d evaluations, %d (problem, family) pairs with "
               "no probed config\n", op->name, nd, njobs, missing);
        fflush(stdout);
        if (!njobs && no_fallback) continue;    /* none of the families asked for */
        evaluate(&ok, &bad, &skip);
        printf("  %s: %d ok, %d failed, %d the device cannot hold (resources)\n", op->name, ok,
               bad, skip);
        CHECK(bad == 0 && ok + skip == njobs && skip * 10 < njobs, "%s: %d of %d variants failed",
              op->name, bad, njobs);
    }
}

/* The runner must catch a variant that cannot run: k larger than fits, or
 * N above a family's capacity -- for every family with a `k` parameter:
 * k = 32 blocks of the largest block (a family that covers every N, such
 * as loop, is refused by k alone), the other parameters at their least. */
TEST(refuses_what_does_not_fit) {
    nt_timing t = {.warmup = 1, .min_samples = 3, .max_samples = 5, .rel_ci = 0.5};
    static nt_result res;
    const nt_family *const *all = nt_all_families();
    for (int i = 0; all[i]; i++) {
        const nt_family *f = all[i];
        nt_problem pr;
        nt_params p;
        int has_k = 0;
        nt_problem_init(&pr, f->op, 64, 16384);
        memset(&p, 0, sizeof p);
        for (int j = 0; j < f->nparams; j++) {
            const nt_param_def *d = &f->params[j];
            char v[NT_NAME_LEN];
            has_k |= !strcmp(d->name, "k");
            if (d->kind == NT_PARAM_STR)
                snprintf(v, sizeof v, "%s", d->choices[0]);
            else   /* the largest k and block: more blocks per SM than fit */
                snprintf(v, sizeof v, "%lld",
                         (long long)(!strcmp(d->name, "k") || !strcmp(d->name, "block") ? d->hi
                                                                                        : d->lo));
            nt_params_set(&p, d->name, v);
        }
        if (!has_k || !wanted(f->name)) continue;
        CHECK(ev.eval(ev.ctx, f, &p, &pr, &t, &res) == 0, "%s: evaluator failed", f->name);
        CHECK(res.status == NT_UNSUPPORTED || res.status == NT_RESOURCES, "%s: status %s", f->name,
              nt_status_name(res.status));
    }
}

int main(int argc, char **argv) {
    char err[512];
    nt_runner_opts o = {.device = 0, .seed = 7, .use_cache = 1, .eps = 1e-6};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--small")) {
            small = 1;
        } else if (!strcmp(argv[i], "--no-fallback")) {
            no_fallback = 1;
        } else if (!strcmp(argv[i], "--check-only")) {
            o.check_only = 1;
        } else if (!strcmp(argv[i], "--family") && i + 1 < argc) {
            only = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--small] [--check-only] [--no-fallback] [--family NAME[,NAME...]]\n", argv[0]);
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);     /* lines as they come, also into a file */
    if (nt_runner_open(&run, &o, err, sizeof err)) {
        printf("FAIL open: %s\n", err);
        t_failed++;
        T_END();
    }
    nt_runner_evaluator(run, &ev);
    RUN(every_op_dtype_family);
    RUN(refuses_what_does_not_fit);
    nt_runner_close(run);
    T_END();
}
