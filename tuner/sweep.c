/* sweep.c -- the sweep driver behind `normtune run` (tuner/cmd_run.c).
 *
 * nt_sweep_run (tuner/sweep.h) walks the variants of a loaded script,
 * skips those the database already holds (that is how an interrupted sweep
 * resumes), hands the rest to an evaluator, with compilation prefetched
 * ahead, and stores each result in its own transaction.  When *stop is
 * set it stops before the next variant (st->interrupted). */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "search/enumerate.h"
#include "tuner/runner.h"
#include "tuner/sweep.h"

#define PREFETCH 48           /* variants whose compilation may run ahead */

typedef struct item {
    int prob, fam;            /* problem (nt_sweep_problem) and family indices */
    nt_params p;
    char canon[160];
} item;

typedef struct items {
    item *v;
    size_t n, cap;
} items;

/* nt_enumerate callback: collect the point. */
static int collect(void *ctx, const nt_sweep *sw, int prob, int fam, const int *idx,
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
    x->prob = prob;
    x->fam = fam;
    x->p = *p;
    if (nt_params_canon(sw->fam[fam].fam, p, x->canon, sizeof x->canon))
        return snprintf(err, errlen, "parameters too long"), -1;
    return 0;
}

/* Seconds on the monotonic clock (see sweep.h). */
double nt_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The store key of item x: its problem's op, dtypes and shape, its family,
 * params and the family's source hash (o->src_hash when set), the sweep's
 * timing.  The texts live in *kb.  0, or -1 with a message. */
typedef struct keybuf {
    char dtypes[128];
    char src[17];
} keybuf;

static int key_of(const nt_sweep *sw, const item *x, int64_t dev, const nt_run_opts *o,
                  store_key *k, keybuf *kb, char *err, size_t errlen) {
    nt_problem pr;
    const nt_family *f = sw->fam[x->fam].fam;
    nt_sweep_problem(sw, x->prob, &pr);
    memset(k, 0, sizeof *k);
    if (nt_dtypes_canon(&pr, kb->dtypes, sizeof kb->dtypes))
        return snprintf(err, errlen, "dtypes too long"), -1;
    if (o->src_hash)
        snprintf(kb->src, sizeof kb->src, "%s", o->src_hash);
    else if (nt_family_hash(f, kb->src))
        return snprintf(err, errlen, "family %s: a source is not embedded", f->name), -1;
    k->device = dev;
    k->family = f->name;
    k->params = x->canon;
    k->src_hash = kb->src;
    k->op = sw->op->name;
    k->dtype = kb->dtypes;
    k->shape.M = pr.M;
    k->shape.N = pr.N;
    k->timing = sw->timing;
    return 0;
}

int nt_status_is_failure(int status) {
    return status == NT_COMPILE_ERROR || status == NT_LAUNCH_ERROR || status == NT_WRONG ||
           status == NT_NONDETERMINISTIC;
}

void nt_sweep_summary(FILE *out, const nt_sweep *sw, const nt_run_stats *st) {
    for (int i = 0; i < sw->nfam && i < NT_SWEEP_MAX_FAMILIES; i++) {
        uint64_t n = 0, bad = 0;
        for (int s = 0; s < NT_NSTATUS; s++) {
            n += st->by_family[i][s];
            if (nt_status_is_failure(s)) bad += st->by_family[i][s];
        }
        if (!n) continue;
        fprintf(out, "  %s:", sw->fam[i].fam->name);
        const char *sep = " ";
        for (int s = 0; s < NT_NSTATUS; s++) {
            if (!st->by_family[i][s]) continue;
            fprintf(out, "%s%" PRIu64 " %s", sep, st->by_family[i][s], nt_status_name(s));
            sep = ", ";
        }
        fputc('\n', out);
        if (bad)
            fprintf(out, "normtune run: warning: %s: %" PRIu64 " of %" PRIu64 " variants measured "
                         "now failed%s; the first: %s\n", sw->fam[i].fam->name, bad, n,
                    bad == n ? " (all of them)" : "", st->first_failure[i]);
    }
}

int nt_sweep_run(nt_sweep *sw, store *db, nt_evaluator *ev, const nt_run_opts *o,
                 nt_run_stats *st, char *err, size_t errlen) {
    items all = {0};
    size_t *todo = NULL, ntodo = 0;
    nt_result *res = NULL;
    int64_t dev = 0;
    int rc = -1, mode;
    keybuf kb;
    double t0 = nt_now_s(), last = 0;
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
        if (key_of(sw, &all.v[i], dev, o, &k, &kb, err, errlen)) goto out;
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
            nt_problem pp;
            nt_sweep_problem(sw, x->prob, &pp);
            ev->prefetch(ev->ctx, sw->fam[x->fam].fam, &x->p, &pp);
        }
        const item *x = &all.v[todo[t]];
        const nt_family *f = sw->fam[x->fam].fam;
        nt_problem pr;
        char ptxt[200];
        nt_sweep_problem(sw, x->prob, &pr);
        nt_problem_text(&pr, ptxt, sizeof ptxt);
        const nt_problem *s = &pr;
        store_key k;
        if (key_of(sw, x, dev, o, &k, &kb, err, errlen)) goto out;
        if (ev->eval(ev->ctx, f, &x->p, s, &sw->timing, res)) {
            snprintf(err, errlen, "evaluator failed on %s %s %s: %s", ptxt, f->name, x->canon,
                     res->msg);
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
        if (res->status >= 0 && res->status < NT_NSTATUS) st->by_family[x->fam][res->status]++;
        if (nt_status_is_failure(res->status) && !st->first_failure[x->fam][0]) {
            size_t n = strcspn(res->msg, "\n");
            snprintf(st->first_failure[x->fam], sizeof st->first_failure[x->fam], "%s %s %s: %.*s",
                     ptxt, f->name, x->canon, (int)n, res->msg);
        }
        double tn = nt_now_s();
        if (o->verbose) {
            fprintf(stderr, "[%zu/%zu] %s %s %s: %s", t + 1, ntodo, ptxt, f->name, x->canon,
                    nt_status_name(res->status));
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
        } else if (!o->progress && (t + 1 == ntodo || x->prob != all.v[todo[t + 1]].prob)) {
            fprintf(stderr, "  %s done (%zu/%zu, %.0f s)\n", ptxt, t + 1, ntodo, tn - t0);
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
