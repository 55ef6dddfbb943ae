/* cmd_replay.c -- `normtune replay`: a search against stored results.
 *
 *   normtune replay --db DB SCRIPT [--strategy S] [--budget B] [--seeds K]
 *                   [--stored none|neighbours]
 *
 * The simulated device is the model of the GPU of DB with the newest sweep
 * of the script's op (with --stored model: that GPU alone): each
 * measurement is answered with a seeded draw from the stored samples of
 * the point's newest result on a GPU of the model with the family's
 * current sources (search/replay.h).  The campaign (search/drive.h, the loop of
 * `run`) runs K times, seeds 0..K-1, with nothing stored (--stored none:
 * a warm search starts only from the shapes this campaign has tuned) or
 * with the results of the device's model at the other shapes (--stored
 * neighbours; every GPU of the model, the simulated one too, but never the
 * shape being tuned), or with the results of the model's other GPUs at
 * every shape, the simulated one's left out (--stored model: a warm start
 * from another GPU's sweep as hints; `run` itself reuses such results as
 * its own when their sources are the current ones, and starts from them
 * as hints when not).  A table per shape, then the line
 *
 *   replay: <strategy> spent P% of the sweep, S% of shapes within 2%, worst X.XXx
 *
 * P: the proposals over the variants of the exhaustive sweep (`list
 * --count`'s total) times K; S: the (shape, seed) runs whose pick's stored
 * median is within 2% of the shape's stored best (the fastest of the
 * points the script keeps there: check() and where()); X: the largest pick's
 * stored median over that best.  Only problems whose every point has a
 * stored result (swept exhaustively) are scored (P, S and X): elsewhere
 * the best is not known.  The others are run, shown with "-", and counted
 * in a note on stderr. */
#include <getopt.h>          /* optind */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/history.h"
#include "lua/ntlua.h"
#include "search/enumerate.h"
#include "search/replay.h"
#include "tuner/cli.h"
#include "tuner/sweep.h"

#define WITHIN 1.02           /* a pick within 2% of the best */

static void usage(FILE *f) {
    fprintf(f, "usage: normtune replay --db FILE SCRIPT [--strategy S] [--budget B] [--seeds K]\n"
               "                       [--stored none|neighbours|model] [--misses]\n\n"
               "Run the sweep's search against the stored results of the GPU of FILE with\n"
               "the newest sweep of the script's op, without a GPU: each measurement is a\n"
               "seeded draw among its stored samples.  Prints per shape the variants\n"
               "spent, the share of seeds whose pick is within 2%% of the stored best and\n"
               "the worst pick, then the line\n"
               "  replay: S spent P%% of the sweep, S%% of shapes within 2%%, worst X.XXx\n\n"
               "  --strategy S  exhaustive, random, hillclimb or warm, for the whole sweep\n"
               "                (the families' own searches dropped); none: the script's\n"
               "  --budget B    variants per shape (the script's budget, and its\n"
               "                budget_stored: B from stored results too)\n"
               "  --seeds K     campaigns, seeds 0..K-1 (1)\n"
               "  --stored W    none: start from nothing stored (the default);\n"
               "                neighbours: from the stored results of the device's model\n"
               "                at the other shapes; model: from those of the model's\n"
               "                other GPUs at every shape\n"
               "  --misses      after the table, a line per (shape, seed) whose pick is\n"
               "                more than 2%% behind: the pick and the stored best, each\n"
               "                with its family, params and stored median\n");
}

/* The store seam of a replay: nothing stored, nothing kept. */
static int no_lookup(void *ctx, const nt_sweep *sw, int q, int f, const nt_params *p, int *found,
                     nt_result *out, char *err, size_t errlen) {
    (void)ctx, (void)sw, (void)q, (void)f, (void)p, (void)out, (void)err, (void)errlen;
    *found = 0;
    return 0;
}

static int no_put(void *ctx, const nt_sweep *sw, int q, int f, const nt_params *p,
                  const nt_result *r, char *err, size_t errlen) {
    (void)ctx, (void)sw, (void)q, (void)f, (void)p, (void)r, (void)err, (void)errlen;
    return 0;
}

/* Point p of sw as "family k=v,k=v" (its canonical params) into buf. */
static void point_text(const nt_sweep *sw, tune_pt p, char *buf, size_t len) {
    int idx[SEARCH_MAX_DIMS];
    nt_params par;
    char canon[160];
    const nt_family *f = sw->fam[p.fam].fam;
    search_space_point(&sw->fam[p.fam].space, p.pt, idx);
    nt_sweep_point_params(sw, p.fam, idx, &par);
    if (nt_params_canon(f, &par, canon, sizeof canon)) canon[0] = 0;
    snprintf(buf, len, "%s %s", f->name, canon);
}

/* A (problem, seed) run whose pick is more than 2% behind (--misses). */
typedef struct miss {
    int q;
    long long seed;
    tune_pt pick;             /* fam -1: nothing it measured ran */
    double us, ratio;
} miss;

/* Reading the database: the simulated device, its rows, their samples. */
typedef struct rd {
    nt_sweep *sw;             /* (its where() runs on the rows) */
    int pass;                 /* 0: find the device; 1: keep its rows */
    int pool;                 /* 1: every GPU of the device's model */
    int64_t dev, newest;      /* the device, its newest sweep */
    store_hist_row model;     /* a row of it (its model) */
    char src[NT_SWEEP_MAX_FAMILIES][24]; /* its kernel sources per family */
    nt_replay *rp;
    int64_t *ids;             /* result id of each row kept */
    int64_t *devs;            /* its GPU */
    int *status;              /* -1: added to the replay; -2: dropped (a newer
                                 result of the same point is kept) */
    nt_hist *h;
    size_t n, cap;
} rd;

/* 1 when row r is of the model of x's device and measured with the
 * current sources of its family (results of older kernels would answer
 * for code that no longer exists). */
static int same_model_current(const rd *x, const store_hist_row *r) {
    const char *cur = store_family_hash(r->family);
    return !strcmp(r->device, x->model.device) && r->cc_major == x->model.cc_major &&
           r->cc_minor == x->model.cc_minor && r->sms == x->model.sms &&
           r->mem_clock_khz == x->model.mem_clock_khz && cur && !strcmp(cur, r->src_hash);
}

static int rd_row(void *ctx, const store_hist_row *r, char *err, size_t errlen) {
    rd *x = ctx;
    nt_hist h;
    if (x->pass == 0) {
        if (r->sweep_id > x->newest && !nt_hist_of_row(x->sw, r, &h)) {
            x->newest = r->sweep_id;
            x->dev = r->device_id;
            x->model = *r;
        }
        return 0;
    }
    if ((r->device_id != x->dev && !(x->pool && same_model_current(x, r))) ||
        nt_hist_of_row(x->sw, r, &h))
        return 0;
    /* only points the sweep keeps at the row's shape: a result of another
     * sweep (wider where()) is no best the search could find */
    nt_problem pr;
    nt_params p;
    int keep = 0;
    nt_problem_init(&pr, x->sw->op, r->M, r->N);
    memcpy(pr.dtype, x->sw->dts[h.dt].dtype, sizeof pr.dtype);
    if (nt_params_parse(r->params, &p))      /* parsed once already (nt_hist_of_row) */
        return snprintf(err, errlen, "result %" PRId64 ": bad params '%s'", r->result_id,
                        r->params), -1;
    if (nt_sweep_feasible(x->sw, h.p.fam, &p, &pr, &keep, err, errlen) < 0) return -1;
    if (!keep) return 0;
    snprintf(x->src[h.p.fam], sizeof x->src[h.p.fam], "%s", r->src_hash);
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 4096;
        int64_t *ids = realloc(x->ids, cap * sizeof *ids);
        if (ids) x->ids = ids;
        int *st = realloc(x->status, cap * sizeof *st);
        if (st) x->status = st;
        int64_t *dv = realloc(x->devs, cap * sizeof *dv);
        if (dv) x->devs = dv;
        nt_hist *hv = realloc(x->h, cap * sizeof *hv);
        if (hv) x->h = hv;
        if (!ids || !st || !hv || !dv) return snprintf(err, errlen, "out of memory"), -1;
        x->cap = cap;
    }
    x->ids[x->n] = r->result_id;
    x->devs[x->n] = r->device_id;
    x->status[x->n] = r->status;
    x->h[x->n++] = h;           /* a newer result of the same point comes later */
    return 0;
}

/* Samples by result: kept in one growing buffer, then handed over. */
typedef struct smp {
    int64_t id;
    double *us;
    int n, cap;
    rd *x;
    size_t at;                /* next row of x to match (rows sorted by id) */
    int failed;
} smp;

/* Hand the samples of result s->id to the replay. */
static int flush(smp *s) {
    rd *x = s->x;
    while (s->at < x->n && x->ids[s->at] < s->id) s->at++;
    if (s->at < x->n && x->ids[s->at] == s->id && x->status[s->at] != -2) {
        if (nt_replay_add(x->rp, &x->h[s->at], x->status[s->at], s->us, s->n)) return -1;
        x->status[s->at] = -1;  /* added */
    }
    s->n = 0;
    return 0;
}

static int on_sample(void *ctx, int64_t id, double us) {
    smp *s = ctx;
    if (id != s->id) {
        if (s->n && flush(s)) return -1;
        s->id = id;
    }
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 256;
        double *v = realloc(s->us, (size_t)cap * sizeof *v);
        if (!v) return -1;
        s->us = v;
        s->cap = cap;
    }
    s->us[s->n++] = us;
    return 0;
}

/* Kept rows by point (dtypes, shape, family, point), then by result id. */
static const rd *sort_rd;
static int by_point(const void *a, const void *b) {
    const nt_hist *p = &sort_rd->h[*(const size_t *)a], *q = &sort_rd->h[*(const size_t *)b];
    if (p->dt != q->dt) return p->dt < q->dt ? -1 : 1;
    if (p->M != q->M) return p->M < q->M ? -1 : 1;
    if (p->N != q->N) return p->N < q->N ? -1 : 1;
    if (p->p.fam != q->p.fam) return p->p.fam < q->p.fam ? -1 : 1;
    if (p->p.pt != q->p.pt) return p->p.pt < q->p.pt ? -1 : 1;
    int64_t i = sort_rd->ids[*(const size_t *)a], j = sort_rd->ids[*(const size_t *)b];
    return i < j ? -1 : i > j;
}

/* 1 when kept rows i and j are of the same point. */
static int by_point_same(const rd *x, size_t i, size_t j) {
    const nt_hist *p = &x->h[i], *q = &x->h[j];
    return p->dt == q->dt && p->M == q->M && p->N == q->N && p->p.fam == q->p.fam &&
           p->p.pt == q->p.pt;
}

/* Of several results of one point (GPUs of the model, or a point measured
 * again), keep the newest: the others are marked dropped (-2). */
static int drop_older(rd *x) {
    size_t *o = malloc((x->n ? x->n : 1) * sizeof *o);
    if (!o) return -1;
    for (size_t i = 0; i < x->n; i++) o[i] = i;
    sort_rd = x;
    qsort(o, x->n, sizeof *o, by_point);
    for (size_t i = 0; i + 1 < x->n; i++)
        if (by_point_same(x, o[i], o[i + 1])) x->status[o[i]] = -2;
    free(o);
    return 0;
}

/* Build the replay of the newest device of db for sw (with x->pool, of
 * every GPU of its model).  0 or -1. */
static int load(store *db, const nt_sweep *sw, rd *x, char *err, size_t errlen) {
    smp s = {0, NULL, 0, 0, x, 0, 0};
    if (store_history(db, sw->op->name, rd_row, x, err, errlen)) return -1;
    if (!x->dev) {
        snprintf(err, errlen, "no stored result of the sweep's points (op %s)", sw->op->name);
        return -1;
    }
    x->pass = 1;
    if (store_history(db, sw->op->name, rd_row, x, err, errlen)) return -1;
    if (!(x->rp = nt_replay_new(sw)) || drop_older(x))
        return snprintf(err, errlen, "out of memory"), -1;
    /* the samples of each GPU whose rows were kept (rows and samples both
     * in result order) */
    int64_t done[64];
    int ndone = 0;
    for (size_t i = 0; i < x->n; i++) {
        int64_t dev = x->devs[i];
        int seen = 0;
        for (int k = 0; k < ndone; k++) seen |= done[k] == dev;
        if (seen || ndone == 64) continue;
        done[ndone++] = dev;
        s.at = 0;
        s.id = 0;
        if (store_device_samples(db, sw->op->name, dev, on_sample, &s, err, errlen) ||
            (s.n && flush(&s))) {
            free(s.us);
            return snprintf(err, errlen, "out of memory"), -1;
        }
    }
    free(s.us);
    /* failures have no samples: add them as they are */
    for (size_t i = 0; i < x->n; i++)
        if (x->status[i] >= 0 && nt_replay_add(x->rp, &x->h[i], x->status[i], NULL, 0))
            return snprintf(err, errlen, "out of memory"), -1;
    nt_replay_seal(x->rp);
    return 0;
}

int cmd_replay(int argc, char **argv) {
    const char *dbpath = NULL, *strategy = NULL, *stored = "none";
    long long budget = 0, seeds = 1;
    int want_misses = 0;
    miss *misses = NULL;
    size_t nmiss = 0, capmiss = 0;
    const nt_opt opts[] = {
        {"db", 0, NT_OPT_STR, &dbpath, NULL},
        {"strategy", 0, NT_OPT_FN, &strategy, nt_opt_strategy},
        {"budget", 0, NT_OPT_POS, &budget, NULL},
        {"seeds", 0, NT_OPT_POS, &seeds, NULL},
        {"stored", 0, NT_OPT_STR, &stored, NULL},
        {"misses", 0, NT_OPT_FLAG, &want_misses, NULL},
    };
    int rc;
    if ((rc = nt_parse_opts("replay", argc, argv, opts, NT_NOPTS(opts), usage)) >= 0) return rc;
    if (optind != argc - 1 || !dbpath) {
        nt_errorf("replay", "needs --db FILE and one SCRIPT");
        usage(stderr);
        return NT_EXIT_USAGE;
    }
    int neighbours = !strcmp(stored, "neighbours"), model_too = !strcmp(stored, "model");
    if (!neighbours && !model_too && strcmp(stored, "none")) {
        nt_errorf("replay", "--stored takes none, neighbours or model, got '%s'", stored);
        return NT_EXIT_USAGE;
    }
    char err[2048];
    nt_sweep sw;
    store *db = NULL;
    rd x;
    nt_hist *hist = NULL;
    size_t nhist = 0;
    uint64_t *counts = NULL, *spent = NULL, *within = NULL;
    double *worst = NULL;
    memset(&x, 0, sizeof x);
    rc = NT_EXIT_FAIL;
    if (ntl_load(argv[optind], &sw, err, sizeof err)) {
        nt_errorf("replay", "%s", err);
        return NT_EXIT_FAIL;
    }
    if (strategy) {           /* the whole sweep: the families' own searches too */
        snprintf(sw.search.strategy, sizeof sw.search.strategy, "%s", strategy);
        nt_sweep_drop_own(&sw);
    }
    strategy = sw.search.strategy;
    /* --budget B: B per shape, cold or from stored results */
    if (budget) sw.search.budget = (uint64_t)budget, sw.search.budget_stored = 0;
    x.sw = &sw;
    x.pool = !model_too;        /* --stored model: one GPU against the others */
    int np = nt_sweep_nproblems(&sw);
    counts = calloc((size_t)np * (size_t)sw.nfam, sizeof *counts);
    spent = calloc((size_t)np, sizeof *spent);
    within = calloc((size_t)np, sizeof *within);
    worst = calloc((size_t)np, sizeof *worst);
    if (!counts || !spent || !within || !worst) {
        nt_errorf("replay", "out of memory");
        goto out;
    }
    if (nt_enumerate(&sw, NT_ENUM_EXHAUSTIVE, NULL, NULL, counts, err, sizeof err) ||
        store_open(&db, dbpath, STORE_READ, err, sizeof err) || load(db, &sw, &x, err, sizeof err)) {
        nt_errorf("replay", "%s", err);
        goto out;
    }
    if (neighbours || model_too) {
        nt_device model;
        memset(&model, 0, sizeof model);
        snprintf(model.name, sizeof model.name, "%s", x.model.device);
        model.cc_major = x.model.cc_major;
        model.cc_minor = x.model.cc_minor;
        model.sms = x.model.sms;
        model.mem_clock_khz = x.model.mem_clock_khz;
        if (nt_stored_hints(db, &sw, &model, model_too ? x.dev : 0, 0, (const char (*)[24])x.src,
                            &hist, &nhist, NULL, err, sizeof err)) {
            nt_errorf("replay", "%s", err);
            goto out;
        }
    }
    /* a problem is scored only when every point of its space has a stored
     * result (an exhaustive sweep): elsewhere the best is not known and a
     * pick of a point never measured has no time.  The others are run but
     * left out of the summary, and said so */
    uint64_t total = 0, spent_all = 0, runs = 0, ok_runs = 0;
    int unscored = 0;
    double worst_all = 1.0;
    char *scored = calloc((size_t)np, 1);
    if (!scored) {
        nt_errorf("replay", "out of memory");
        goto out;
    }
    for (int q = 0; q < np; q++) {
        uint64_t c = 0;
        for (int f = 0; f < sw.nfam; f++) c += counts[(size_t)q * (size_t)sw.nfam + (size_t)f];
        scored[q] = isfinite(nt_replay_best(x.rp, q)) && nt_replay_count(x.rp, q) >= c;
        if (!scored[q]) {
            unscored++;
            continue;
        }
        total += c;
    }
    if (unscored == np) {
        nt_errorf("replay", "%s: no problem of %s has every point of its space stored", dbpath,
                  sw.path);
        free(scored);
        goto out;
    }
    for (long long k = 0; k < seeds; k++) {
        nt_evaluator ev;
        nt_store_ops so = {NULL, no_lookup, no_put, NULL, NULL};
        nt_run_opts o;
        nt_run_stats st;
        memset(&o, 0, sizeof o);
        o.quiet = 1;
        o.seed = (uint64_t)k;
        o.hist = hist;
        o.nhist = nhist;
        o.hist_same_shape = model_too;
        nt_replay_evaluator(x.rp, (uint64_t)k, &ev);
        if (nt_drive(&sw, &ev, &so, &o, &st, err, sizeof err)) {
            nt_errorf("replay", "%s", err);
            nt_run_stats_free(&st);
            free(scored);
            goto out;
        }
        for (int q = 0; q < np; q++) {
            double best = nt_replay_best(x.rp, q), got = INFINITY;
            spent[q] += st.spent[q];
            if (!scored[q]) continue;
            if (st.pick[q].fam >= 0) got = nt_replay_stored(x.rp, q, st.pick[q]);
            double ratio = isfinite(got) ? got / best : INFINITY;
            spent_all += st.spent[q];
            within[q] += ratio <= WITHIN;
            if (ratio > worst[q]) worst[q] = ratio;
            runs++;
            ok_runs += ratio <= WITHIN;
            if (ratio > worst_all) worst_all = ratio;
            if (want_misses && ratio > WITHIN) {
                if (nmiss == capmiss) {
                    size_t cap = capmiss ? 2 * capmiss : 64;
                    miss *m = realloc(misses, cap * sizeof *m);
                    if (!m) {
                        nt_errorf("replay", "out of memory");
                        nt_run_stats_free(&st);
                        free(scored);
                        goto out;
                    }
                    misses = m;
                    capmiss = cap;
                }
                misses[nmiss++] = (miss){q, k, st.pick[q], got, ratio};
            }
        }
        nt_run_stats_free(&st);
    }
    char bud[64] = "";
    if (nhist && !strcmp(strategy, "warm") && sw.search.budget && sw.search.budget_stored)
        snprintf(bud, sizeof bud, ", budget_stored %" PRIu64, sw.search.budget_stored);
    printf("# %s on %s (%s, device %" PRId64 "), strategy %s, budget %" PRIu64 "%s, %lld seed%s, "
           "stored %s\n", sw.path, dbpath, x.model.device, x.dev, strategy, sw.search.budget, bud,
           seeds, seeds == 1 ? "" : "s", stored);
    printf("%-44s %9s %9s %8s %7s\n", "problem", "variants", "spent", "within", "worst");
    for (int q = 0; q < np; q++) {
        nt_problem pr;
        char pt[200];
        uint64_t c = 0;
        for (int f = 0; f < sw.nfam; f++) c += counts[(size_t)q * (size_t)sw.nfam + (size_t)f];
        nt_sweep_problem(&sw, q, &pr);
        nt_problem_text(&pr, pt, sizeof pt);
        if (!scored[q])
            printf("%-44s %9" PRIu64 " %9.1f %8s %7s\n", pt, c, (double)spent[q] / (double)seeds,
                   "-", "-");
        else
            printf("%-44s %9" PRIu64 " %9.1f %7.0f%% %6.3fx\n", pt, c,
                   (double)spent[q] / (double)seeds, 100.0 * (double)within[q] / (double)seeds,
                   worst[q]);
    }
    if (want_misses) {
        printf("# misses: %zu (shape, seed) run%s whose pick is more than 2%% behind the stored "
               "best\n", nmiss, nmiss == 1 ? "" : "s");
        for (size_t i = 0; i < nmiss; i++) {
            nt_problem pr;
            tune_pt bp;
            char pt[200], a[512], b[512];
            double best = nt_replay_best_at(x.rp, misses[i].q, &bp);
            nt_sweep_problem(&sw, misses[i].q, &pr);
            nt_problem_text(&pr, pt, sizeof pt);
            point_text(&sw, bp, b, sizeof b);
            if (misses[i].pick.fam < 0)
                printf("miss %s seed %lld: nothing it measured ran; best %s (%.2f us)\n", pt,
                       misses[i].seed, b, best);
            else {
                point_text(&sw, misses[i].pick, a, sizeof a);
                if (isfinite(misses[i].us))
                    printf("miss %s seed %lld: %.3fx, picked %s (%.2f us); best %s (%.2f us)\n",
                           pt, misses[i].seed, misses[i].ratio, a, misses[i].us, b, best);
                else
                    printf("miss %s seed %lld: picked %s (not stored as run); best %s (%.2f "
                           "us)\n", pt, misses[i].seed, a, b, best);
            }
        }
    }
    if (unscored)
        fprintf(stderr, "normtune replay: %d of %d problems are not stored whole (every point "
                        "of the space) in %s: left out of the summary (their rows say -)\n",
                unscored, np, dbpath);
    free(scored);
    printf("replay: %s spent %.1f%% of the sweep, %.1f%% of shapes within 2%%, worst %.2fx\n",
           strategy, 100.0 * (double)spent_all / ((double)total * (double)seeds),
           100.0 * (double)ok_runs / (double)runs, worst_all);
    rc = fflush(stdout) ? NT_EXIT_FAIL : NT_EXIT_OK;
out:
    free(misses);
    free(counts);
    free(spent);
    free(within);
    free(worst);
    free(hist);
    free(x.ids);
    free(x.devs);
    free(x.status);
    free(x.h);
    nt_replay_free(x.rp);
    store_close(db);
    ntl_free(&sw);
    return rc;
}
