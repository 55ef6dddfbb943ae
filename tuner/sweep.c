/* sweep.c -- `normtune run` and the sweep driver behind it.
 *
 *   normtune run SCRIPT [--db FILE] [--device N] [--seed S] [--jobs N]
 *                [--no-cache] [--verbose]
 *
 * Loads the script, opens (or creates) the database, opens the GPU, measures
 * the copy bandwidth, then measures every variant the script asks for that
 * the database does not already hold (resume), one transaction per result.
 * Ctrl-C finishes the result in progress, stores it, marks the sweep
 * interrupted and says so; a second Ctrl-C exits at once (the database
 * keeps every result stored so far: each is one transaction).  A kernel that
 * faults loses the CUDA context: its result is stored and normtune restarts
 * itself to resume. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tuner/cli.h"
#include "tuner/enumerate.h"
#include "tuner/runner.h"
#include "tuner/sweep.h"

#define PREFETCH 48           /* variants whose compilation may run ahead */
#define MAX_RESTARTS 8        /* self-restarts after a lost CUDA context */
#define DEFAULT_SETTLE_S 15.0 /* run --settle: seconds of copies before measuring */

typedef struct item {
    int shape, fam;
    nt_params p;
    char canon[160];
} item;

typedef struct items {
    item *v;
    size_t n, cap;
} items;

/* nt_enumerate callback: collect the point. */
static int collect(void *ctx, const nt_sweep *sw, int shape, int fam, const int *idx,
                   const nt_params *p, char *err, size_t errlen) {
    items *it = ctx;
    (void)idx;
    if (it->n == it->cap) {
        size_t cap = it->cap ? 2 * it->cap : 1024;
        item *v = realloc(it->v, cap * sizeof *v);
        if (!v) return snprintf(err, errlen, "out of memory"), -1;
        it->v = v;
        it->cap = cap;
    }
    item *x = &it->v[it->n++];
    x->shape = shape;
    x->fam = fam;
    x->p = *p;
    if (nt_params_canon(sw->fam[fam].fam, p, x->canon, sizeof x->canon))
        return snprintf(err, errlen, "parameters too long"), -1;
    return 0;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void key_of(const nt_sweep *sw, const item *x, int64_t dev, const char *src,
                   store_key *k) {
    memset(k, 0, sizeof *k);
    k->device = dev;
    k->family = sw->fam[x->fam].fam->name;
    k->params = x->canon;
    k->src_hash = src;
    k->op = sw->op;
    k->dtype = sw->dtype;
    k->shape = sw->shapes[x->shape];
    k->timing = sw->timing;
}

int nt_sweep_run(nt_sweep *sw, store *db, nt_evaluator *ev, const nt_run_opts *o,
                 nt_run_stats *st, char *err, size_t errlen) {
    items all = {0};
    size_t *todo = NULL, ntodo = 0;
    nt_result *res = NULL;
    int64_t dev = 0;
    int rc = -1, mode;
    const char *src = o->src_hash ? o->src_hash : nt_kernel_hash;
    double t0 = now_s(), last = 0;
    memset(st, 0, sizeof *st);

    mode = strcmp(sw->search.strategy, "exhaustive") ? NT_ENUM_STRATEGY : NT_ENUM_EXHAUSTIVE;
    if (nt_enumerate(sw, mode, collect, &all, NULL, err, errlen)) goto out;
    st->total = all.n;
    res = malloc(sizeof *res);
    todo = malloc((all.n + 1) * sizeof *todo);
    if (!res || !todo) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (store_device(db, &ev->dev, &dev, err, errlen)) goto out;
    /* what is already measured is not measured again */
    for (size_t i = 0; i < all.n; i++) {
        store_key k;
        int found = 0;
        key_of(sw, &all.v[i], dev, src, &k);
        if (store_lookup(db, &k, &found, NULL, err, errlen)) goto out;
        if (found)
            st->reused++;
        else
            todo[ntodo++] = i;
    }
    if (store_sweep_begin(db, dev, sw->path, sw->hash, ev->copy_gbps, &st->sweep_id, err,
                          errlen))
        goto out;
    fprintf(stderr, "normtune run: %zu variants, %" PRIu64 " already measured, %zu to go\n",
            all.n, st->reused, ntodo);
    size_t pre = 0;             /* todo entries prefetched so far */
    for (size_t t = 0; t < ntodo; t++) {
        if (o->stop && *o->stop) {
            st->interrupted = 1;
            break;
        }
        for (; ev->prefetch && pre < ntodo && pre < t + PREFETCH; pre++) {
            const item *x = &all.v[todo[pre]];
            ev->prefetch(ev->ctx, sw->fam[x->fam].fam, &x->p, &sw->shapes[x->shape]);
        }
        const item *x = &all.v[todo[t]];
        const nt_family *f = sw->fam[x->fam].fam;
        const nt_shape *s = &sw->shapes[x->shape];
        store_key k;
        key_of(sw, x, dev, src, &k);
        if (ev->eval(ev->ctx, f, &x->p, s, &sw->timing, res)) {
            snprintf(err, errlen, "evaluator failed on M=%lld N=%lld %s %s: %s", (long long)s->M,
                     (long long)s->N, f->name, x->canon, res->msg);
            /* a variant that broke the evaluator is still a result */
            char e2[256];
            if (res->status != NT_OK) store_put(db, st->sweep_id, &k, res, e2, sizeof e2);
            store_sweep_end(db, st->sweep_id, "failed", NULL, 0);
            goto out;
        }
        if (res->status == NT_OK && ev->copy_gbps > 0)
            res->pct_copy = 100.0 * res->gbps / ev->copy_gbps;
        if (store_put(db, st->sweep_id, &k, res, err, errlen)) goto out;
        st->measured++;
        st->ok += res->status == NT_OK;
        double tn = now_s();
        if (o->verbose) {
            fprintf(stderr, "[%zu/%zu] M=%lld N=%lld %s %s: %s", t + 1, ntodo, (long long)s->M,
                    (long long)s->N, f->name, x->canon, nt_status_name(res->status));
            if (res->status == NT_OK)
                fprintf(stderr, " %.2f us %.0f GB/s %.1f%%", res->median_us, res->gbps,
                        res->pct_copy);
            else
                fprintf(stderr, " (%s)", res->msg);
            fputc('\n', stderr);
        } else if (o->progress && (tn - last > 0.2 || t + 1 == ntodo)) {
            double eta = (tn - t0) / (double)(t + 1) * (double)(ntodo - t - 1);
            fprintf(stderr, "\r[%zu/%zu] M=%-6lld N=%-6lld %-24s %5.0f s left   ", t + 1, ntodo,
                    (long long)s->M, (long long)s->N, f->name, eta);
            last = tn;
        } else if (!o->progress && (t + 1 == ntodo || x->shape != all.v[todo[t + 1]].shape)) {
            fprintf(stderr, "  M=%lld N=%lld done (%zu/%zu, %.0f s)\n", (long long)s->M,
                    (long long)s->N, t + 1, ntodo, tn - t0);
        }
    }
    if (o->progress && !o->verbose && ntodo) fputc('\n', stderr);
    if (store_sweep_end(db, st->sweep_id, st->interrupted ? "interrupted" : "done", err, errlen))
        goto out;
    rc = 0;
out:
    free(all.v);
    free(todo);
    free(res);
    return rc;
}

/* ---- normtune run ------------------------------------------------------ */

static volatile sig_atomic_t stop_flag;

static void on_sigint(int sig) {
    if (stop_flag) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    stop_flag = 1;
    static const char msg[] = "\nnormtune run: interrupted: finishing the current result "
                              "(Ctrl-C again to quit now)\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
}

static void run_usage(FILE *f) {
    fprintf(f, "usage: normtune run SCRIPT [--db FILE] [--device SEL | --gpu N] [--seed S]\n"
               "                    [--jobs N] [--settle SECONDS] [--no-cache] [--verbose]\n\n"
               "Measure every variant of the sweep script on the GPU into FILE\n"
               "(default results.db); variants already measured there with the same\n"
               "device, kernel source and timing settings are skipped (resume).\n\n"
               "  --db FILE     results database, created if missing (results.db)\n"
               "  --device SEL  the GPU whose name or UUID (or UUID prefix) is SEL, as\n"
               "                nvidia-smi -L prints them; the same meaning as in the\n"
               "                reading commands\n"
               "  --gpu N       or the GPU with CUDA ordinal N (0)\n"
               "  --seed S      input seed (1)\n"
               "  --jobs N      NVRTC compiler threads (online CPUs)\n"
               "  --settle S    keep the GPU copying S seconds before measuring, so\n"
               "                clocks and temperature start near steady state (15)\n"
               "  --no-cache    do not use the compiled-kernel cache\n"
               "  --verbose     one line per result\n");
}

int cmd_run(int argc, char **argv) {
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},    {"device", required_argument, 0, 'D'},
        {"seed", required_argument, 0, 's'},  {"jobs", required_argument, 0, 'j'},
        {"no-cache", no_argument, 0, 'n'},    {"verbose", no_argument, 0, 'v'},
        {"settle", required_argument, 0, 'S'}, {"help", no_argument, 0, 'h'},
        {"gpu", required_argument, 0, 'g'},
        {0, 0, 0, 0},
    };
    const char *dbpath = "results.db";
    nt_runner_opts ro = {.device = 0, .seed = 1, .use_cache = 1, .eps = 1e-6};
    nt_run_opts o = {0};
    double settle = DEFAULT_SETTLE_S;
    long long v;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd': dbpath = optarg; break;
        case 'D':                 /* one meaning in every command: name or UUID */
            if (optarg[strspn(optarg, "0123456789")] == 0) {
                nt_errorf("run", "--device takes a GPU's name or UUID, as in every command; "
                          "for the CUDA ordinal use --gpu %s", optarg);
                return NT_EXIT_USAGE;
            }
            ro.select = optarg;
            break;
        case 'g':
            if (!strcmp(optarg, "0")) { ro.device = 0; break; }
            if (nt_parse_pos("run", "--gpu", optarg, &v)) return NT_EXIT_USAGE;
            ro.device = (int)v;
            break;
        case 's':
            if (nt_parse_pos("run", "--seed", optarg, &v)) return NT_EXIT_USAGE;
            ro.seed = (uint64_t)v;
            break;
        case 'j':
            if (nt_parse_pos("run", "--jobs", optarg, &v)) return NT_EXIT_USAGE;
            ro.jobs = (int)v;
            break;
        case 'n': ro.use_cache = 0; break;
        case 'v': o.verbose = 1; break;
        case 'S': {
            char *end;
            errno = 0;
            long s = strtol(optarg, &end, 10);
            if (end == optarg || *end || errno || s < 0 || s > 3600) {
                nt_errorf("run", "--settle needs whole seconds from 0 to 3600, got '%s'", optarg);
                return NT_EXIT_USAGE;
            }
            settle = (double)s;
            break;
        }
        case 'h': run_usage(stdout); return NT_EXIT_OK;
        default: run_usage(stderr); return NT_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        nt_errorf("run", "expected one SCRIPT argument");
        run_usage(stderr);
        return NT_EXIT_USAGE;
    }
    char err[2048];
    nt_sweep sw;
    store *db = NULL;
    nt_runner *r = NULL;
    nt_evaluator ev;
    nt_run_stats st;
    int rc = NT_EXIT_FAIL;
    if (ntl_load(argv[optind], &sw, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return NT_EXIT_FAIL;
    }
    /* where() deterministic and within budget, every shape with a variant:
     * known before the GPU is touched */
    if (nt_enum_check(&sw, err, sizeof err)) {
        nt_errorf("run", "%s", err);
        ntl_free(&sw);
        return NT_EXIT_FAIL;
    }
    ro.eps = sw.eps;
    if (nt_runner_open(&r, &ro, err, sizeof err)) {
        nt_errorf("run", "%s", err);
        goto out;
    }
    if (store_open(&db, dbpath, STORE_CREATE, err, sizeof err)) {
        nt_errorf("run", "%s", err);
        goto out;
    }
    nt_runner_evaluator(r, &ev);
    fprintf(stderr, "normtune run: %s (%s, %d SMs), %s%.0f s, then measuring copy bandwidth\n",
            ev.dev.name, ev.arch, ev.dev.sms, "settling the GPU with copies for ", settle);
    if (nt_runner_copy_bw(r, settle, &ev.copy_gbps, err, sizeof err)) {
        nt_errorf("run", "%s", err);
        goto out;
    }
    fprintf(stderr, "normtune run: copy bandwidth %.0f GB/s (read + write)\n", ev.copy_gbps);
    o.progress = isatty(2);
    o.stop = &stop_flag;
    signal(SIGINT, on_sigint);
    signal(SIGTERM, on_sigint);
    double t0 = now_s();
    int failed = nt_sweep_run(&sw, db, &ev, &o, &st, err, sizeof err);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (failed) {
        nt_errorf("run", "%s", err);
        if (nt_runner_broken(r)) {
            /* the context is gone; everything measured is stored: go again */
            const char *e = getenv("NORMTUNE_RESTARTS");
            int n = e ? atoi(e) : 0;
            if (n < MAX_RESTARTS) {
                char buf[16];
                snprintf(buf, sizeof buf, "%d", n + 1);
                setenv("NORMTUNE_RESTARTS", buf, 1);
                fprintf(stderr, "normtune run: CUDA context lost; restarting to resume\n");
                store_close(db);
                execv("/proc/self/exe", argv - 1);
                nt_errorf("run", "cannot restart; run the same command again to resume");
            }
        }
        goto out;
    }
    fprintf(stderr, "normtune run: %s: %" PRIu64 " measured (%" PRIu64 " ok), %" PRIu64
            " reused, %.1f s\n", dbpath, st.measured, st.ok, st.reused, now_s() - t0);
    if (st.interrupted) {
        fprintf(stderr, "normtune run: interrupted; every finished result is stored, run the "
                        "same command again to resume\n");
        rc = 130;
        goto out;
    }
    rc = NT_EXIT_OK;
out:
    store_close(db);
    nt_runner_close(r);
    ntl_free(&sw);
    return rc;
}
