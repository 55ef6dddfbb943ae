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
#include "tuner/replaydb.h"
#include "tuner/sweep.h"

#define WITHIN 1.02           /* a pick within 2% of the best */

static void usage(FILE *f) {
    fprintf(f, "usage: normtune replay --db FILE SCRIPT [--strategy S] [--budget B] [--seeds K]\n"
               "                       [--stored none|neighbours|model] [--misses] [--verbose]\n\n"
               "Run the sweep's search against the stored results of the GPU of FILE with\n"
               "the newest sweep of the script's op, without a GPU: each measurement is a\n"
               "seeded draw among its stored samples.  Prints per shape the variants\n"
               "spent, the share of seeds whose pick is within 2%% of the stored best and\n"
               "the worst pick, then the line\n"
               "  replay: S spent P%% of the sweep, S%% of shapes within 2%%, worst X.XXx\n\n"
               "  --strategy S  exhaustive, random, hillclimb or warm, for the whole sweep\n"
               "                (the families' own searches dropped); left out: the script's\n"
               "  --budget B    variants per shape (the script's budget, and its\n"
               "                budget_stored: B from stored results too)\n"
               "  --seeds K     campaigns, seeds 0..K-1 (1)\n"
               "  --stored W    none: start from nothing stored (the default);\n"
               "                neighbours: from the stored results of the device's model\n"
               "                at the other shapes; model: from those of the model's\n"
               "                other GPUs at every shape\n"
               "  --misses      after the table, a line per (shape, seed) whose pick is\n"
               "                more than 2%% behind: the pick and the stored best, each\n"
               "                with its family, params and stored median\n"
               "  --verbose     one line per simulated measurement on stderr, in the\n"
               "                order the search asked for them, as `normtune run\n"
               "                --verbose` prints them (each seed's after a line '# seed K')\n");
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

int cmd_replay(int argc, char **argv) {
    const char *dbpath = NULL, *strategy = NULL, *stored = "none";
    long long budget = 0, seeds = 1;
    int want_misses = 0, verbose = 0;
    miss *misses = NULL;
    size_t nmiss = 0, capmiss = 0;
    const nt_opt opts[] = {
        {"db", 0, NT_OPT_STR, &dbpath, NULL},
        {"strategy", 0, NT_OPT_FN, &strategy, nt_opt_strategy},
        {"budget", 0, NT_OPT_POS, &budget, NULL},
        {"seeds", 0, NT_OPT_POS, &seeds, NULL},
        {"stored", 0, NT_OPT_STR, &stored, NULL},
        {"misses", 0, NT_OPT_FLAG, &want_misses, NULL},
        {"verbose", 0, NT_OPT_FLAG, &verbose, NULL},
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
    nt_replay_db x;
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
        store_open(&db, dbpath, STORE_READ, err, sizeof err) ||
        /* --stored model: one GPU against the others */
        nt_replay_db_load(db, &sw, !model_too, &x, err, sizeof err)) {
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
        nt_store_ops so = {NULL, no_lookup, no_put, NULL, NULL, NULL, NULL};
        nt_run_opts o;
        nt_run_stats st;
        memset(&o, 0, sizeof o);
        o.quiet = 1;          /* no run's messages; with --verbose its lines per result */
        o.verbose = verbose;
        if (verbose) fprintf(stderr, "# seed %lld\n", k);
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
    nt_replay_db_free(&x);
    store_close(db);
    ntl_free(&sw);
    return rc;
}
