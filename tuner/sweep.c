/* sweep.c -- the sweep driver behind `normtune run` (tuner/cmd_run.c):
 * the loop of search/drive.h over the results database.
 *
 * The store seam of the loop is db/store.h under the run's device: a
 * result is looked up under its device model (every GPU of the same name,
 * compute capability, SM count and memory clock: what any of them measured
 * is this run's own stored result), variant, family source hash, problem
 * and timing settings, and stored under the run's own device.  A warm
 * search also starts from the model's results of other kernel sources
 * (db/history.h), which no lookup reuses. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/history.h"
#include "tuner/runner.h"
#include "tuner/sweep.h"

#define OTHER_SRC_W 0.02      /* weight of a hint measured with other kernel sources */

/* The store key of a point: its problem's op, dtypes and shape, its family,
 * params and the family's source hash (o->src_hash when set), the sweep's
 * timing.  The texts live in *kb.  0, or -1 with a message. */
typedef struct keybuf {
    char dtypes[128];
    char src[17];
    char canon[160];
} keybuf;

static int key_of(const nt_sweep *sw, int q, int fam, const nt_params *p, int64_t dev,
                  const nt_run_opts *o, store_key *k, keybuf *kb, char *err, size_t errlen) {
    nt_problem pr;
    const nt_family *f = sw->fam[fam].fam;
    nt_sweep_problem(sw, q, &pr);
    if (nt_params_canon(f, p, kb->canon, sizeof kb->canon))
        return snprintf(err, errlen, "parameters too long"), -1;
    memset(k, 0, sizeof *k);
    if (nt_dtypes_canon(&pr, kb->dtypes, sizeof kb->dtypes))
        return snprintf(err, errlen, "dtypes too long"), -1;
    if (o->src_hash)
        snprintf(kb->src, sizeof kb->src, "%s", o->src_hash);
    else if (nt_family_hash(f, kb->src))
        return snprintf(err, errlen, "family %s: a source is not embedded", f->name), -1;
    k->device = dev;
    k->family = f->name;
    k->params = kb->canon;
    k->src_hash = kb->src;
    k->op = sw->op->name;
    k->dtype = kb->dtypes;
    k->shape.M = pr.M;
    k->shape.N = pr.N;
    k->timing = sw->timing;
    return 0;
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


/* The store seam of one run: the database, the device, the options. */
typedef struct run_store {
    store *db;
    int64_t dev, sweep;
    const nt_run_opts *o;
} run_store;

static int rs_lookup(void *ctx, const nt_sweep *sw, int q, int f, const nt_params *p, int *found,
                     nt_result *out, char *err, size_t errlen) {
    run_store *rs = ctx;
    store_key k;
    keybuf kb;
    if (key_of(sw, q, f, p, rs->dev, rs->o, &k, &kb, err, errlen)) return -1;
    return store_lookup(rs->db, &k, found, out, err, errlen);
}

static int rs_put(void *ctx, const nt_sweep *sw, int q, int f, const nt_params *p,
                  const nt_result *r, char *err, size_t errlen) {
    run_store *rs = ctx;
    store_key k;
    keybuf kb;
    if (key_of(sw, q, f, p, rs->dev, rs->o, &k, &kb, err, errlen)) return -1;
    return store_put(rs->db, rs->sweep, &k, r, err, errlen);
}

static int rs_claim(void *ctx, const nt_sweep *sw, int q, int f, const nt_params *p, int *got,
                    char *err, size_t errlen) {
    run_store *rs = ctx;
    store_key k;
    keybuf kb;
    if (key_of(sw, q, f, p, rs->dev, rs->o, &k, &kb, err, errlen)) return -1;
    return store_claim(rs->db, &k, got, err, errlen);
}

static void rs_release(void *ctx) {
    store_release(((run_store *)ctx)->db);
}

/* Re-measures: the store keys of the n points, then store_rematch_*. */
static int rs_rematch(run_store *rs, const nt_sweep *sw, int q, int n, const int *f,
                      const nt_params *p, store_key *k, keybuf *kb, char *err, size_t errlen) {
    if (n > STORE_REMATCH_MAX) return snprintf(err, errlen, "re-measure of %d points", n), -1;
    for (int i = 0; i < n; i++)
        if (key_of(sw, q, f[i], &p[i], rs->dev, rs->o, &k[i], &kb[i], err, errlen)) return -1;
    return 0;
}

static int rs_rematch_get(void *ctx, const nt_sweep *sw, int q, int n, const int *f,
                          const nt_params *p, int *found, double *us, char *err, size_t errlen) {
    store_key k[STORE_REMATCH_MAX];
    keybuf kb[STORE_REMATCH_MAX];
    if (rs_rematch(ctx, sw, q, n, f, p, k, kb, err, errlen)) return -1;
    return store_rematch_get(((run_store *)ctx)->db,
                             sw->search.remeasure_alone ? STORE_ALONE : STORE_CHAIN, n, k, found,
                             us, err, errlen);
}

static int rs_rematch_put(void *ctx, const nt_sweep *sw, int q, int n, const int *f,
                          const nt_params *p, const double *us, const int *ns, char *err,
                          size_t errlen) {
    run_store *rs = ctx;
    store_key k[STORE_REMATCH_MAX];
    keybuf kb[STORE_REMATCH_MAX];
    if (rs_rematch(rs, sw, q, n, f, p, k, kb, err, errlen)) return -1;
    return store_rematch_put(rs->db, rs->sweep,
                             sw->search.remeasure_alone ? STORE_ALONE : STORE_CHAIN, n, k, us, ns,
                             err, errlen);
}

int nt_hist_of_row(const nt_sweep *sw, const store_hist_row *r, nt_hist *h) {
    nt_problem pr;
    nt_params p;
    char err[128];
    int f = 0, dt = 0;
    if (strcmp(r->family + strcspn(r->family, "."), "") == 0) return -1;
    while (f < sw->nfam && strcmp(sw->fam[f].fam->name, r->family)) f++;
    if (f == sw->nfam) return -1;
    nt_problem_init(&pr, sw->op, r->M, r->N);
    if (nt_dtypes_parse(&pr, r->dtype, err, sizeof err)) return -1;
    while (dt < sw->ndt && memcmp(sw->dts[dt].dtype, pr.dtype, sizeof pr.dtype)) dt++;
    if (dt == sw->ndt) return -1;
    if (nt_params_parse(r->params, &p)) return -1;
    int64_t pt = nt_sweep_point_of(sw, f, &p);
    if (pt < 0) return -1;
    h->dt = dt;
    h->M = r->M;
    h->N = r->N;
    h->p.fam = f;
    h->p.pt = (uint64_t)pt;
    h->us = r->status == NT_OK && r->median_us > 0 ? r->median_us : INFINITY;
    h->grp = r->device_id;
    h->w = 1.0;
    h->raced = r->status == NT_RACED;
    return 0;
}

int nt_same_model(const store_hist_row *r, const nt_device *d) {
    return !strcmp(r->device, d->name) && r->cc_major == d->cc_major &&
           r->cc_minor == d->cc_minor && r->sms == d->sms && r->mem_clock_khz == d->mem_clock_khz;
}

/* Collecting the stored results of a model as hints. */
typedef struct hist_acc {
    const nt_sweep *sw;
    const nt_device *model;   /* NULL: every device */
    int64_t skip_device;      /* a device whose results are left out, or 0 */
    int other_src_only;       /* only results of other sources than src[] */
    char src[NT_SWEEP_MAX_FAMILIES][24]; /* per family: the sources measured now */
    nt_hist *v;
    size_t n, cap;
    unsigned char *seen;      /* per problem: a row of any sources (or NULL) */
    int last;                 /* the problem of the previous row */
} hist_acc;

/* The problem of sw at dtypes dt and shape M x N (from last on), or -1. */
static int problem_of(const nt_sweep *sw, int dt, int64_t M, int64_t N, int last) {
    int np = nt_sweep_nproblems(sw);
    for (int k = 0; k < np; k++) {
        int q = (last + k) % np, qdt, shape;
        nt_problem pr;
        nt_sweep_problem_at(sw, q, &qdt, &shape);
        if (qdt != dt) continue;
        nt_sweep_problem(sw, q, &pr);
        if (pr.M == M && pr.N == N) return q;
    }
    return -1;
}

/* store_history callback: keep a row of the sweep's points on the model. */
static int hist_keep(void *ctx, const store_hist_row *r, char *err, size_t errlen) {
    hist_acc *a = ctx;
    nt_hist h;
    if (a->model && !nt_same_model(r, a->model)) return 0;
    if (r->device_id == a->skip_device) return 0;
    if (r->status != NT_OK && r->status != NT_UNSUPPORTED && r->status != NT_RESOURCES &&
        !nt_status_is_failure(r->status))
        return 0;
    if (nt_hist_of_row(a->sw, r, &h)) return 0;
    if (a->seen) {
        int q = problem_of(a->sw, h.dt, h.M, h.N, a->last);
        if (q >= 0) a->seen[q] = 1, a->last = q;
    }
    if (strcmp(r->src_hash, a->src[h.p.fam])) h.w = OTHER_SRC_W;
    else if (a->other_src_only) return 0;
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 4096;
        nt_hist *v = realloc(a->v, cap * sizeof *v);
        if (!v) return snprintf(err, errlen, "out of memory"), -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = h;
    return 0;
}

int nt_stored_hints(store *db, const nt_sweep *sw, const nt_device *model, int64_t skip_device,
                    int other_src_only, const char (*src)[24], nt_hist **out, size_t *n,
                    unsigned char *seen, char *err, size_t errlen) {
    hist_acc a;
    memset(&a, 0, sizeof a);
    a.sw = sw;
    a.seen = seen;
    a.model = model;
    a.skip_device = skip_device;
    a.other_src_only = other_src_only;
    for (int f = 0; f < sw->nfam; f++)
        if (src)
            memcpy(a.src[f], src[f], sizeof a.src[f]);
        else if (nt_family_hash(sw->fam[f].fam, a.src[f]))
            a.src[f][0] = 0;
    *out = NULL;
    *n = 0;
    if (store_history(db, sw->op->name, hist_keep, &a, err, errlen)) {
        free(a.v);
        return -1;
    }
    *out = a.v;
    *n = a.n;
    return 0;
}

/* store_sweep_peers: a warning for each other run of the script. */
static void say_peer(void *ctx, int64_t pid, const char *uuid) {
    fprintf(stderr, "normtune run: warning: another run of %s (pid %lld, GPU %s) is writing "
                    "into this database on a GPU of this model: the two walk the same "
                    "variants in the same order, so one mostly waits for the other's "
                    "results (claims keep either from measuring what the other does); to "
                    "split a sweep over GPUs, run it with --devices (one host) or --shard "
                    "(a job array)\n",
            (const char *)ctx, (long long)pid, uuid && *uuid ? uuid : "none");
}

int nt_sweep_run(nt_sweep *sw, store *db, nt_evaluator *ev, const nt_run_opts *o,
                 nt_run_stats *st, char *err, size_t errlen) {
    run_store rs = {db, 0, 0, o};
    nt_store_ops so = {&rs, rs_lookup, rs_put, rs_rematch_get, rs_rematch_put, rs_claim,
                       rs_release};
    nt_run_opts ro = *o;
    nt_hist *hist = NULL;
    size_t nhist = 0;
    unsigned char *seen = NULL;
    int rc = -1;
    memset(st, 0, sizeof *st);
    if (store_device(db, &ev->dev, &rs.dev, err, errlen)) return -1;
    if (nt_sweep_uses(sw, "warm") && !o->hist) {
        /* The model's results of the sources measured now are this run's
         * own (any GPU of the model): told as they are proposed, so that a
         * resumed run, on this GPU or another of the model, makes the same
         * choices.  Its results of other sources, which no lookup reuses
         * and this run never adds to, are hints at every shape. */
        char src[NT_SWEEP_MAX_FAMILIES][24];
        for (int f = 0; f < sw->nfam; f++)
            if (o->src_hash)
                snprintf(src[f], sizeof src[f], "%s", o->src_hash);
            else if (nt_family_hash(sw->fam[f].fam, src[f]))
                src[f][0] = 0;
        if (!(seen = calloc((size_t)nt_sweep_nproblems(sw), 1)))
            return snprintf(err, errlen, "out of memory"), -1;
        if (nt_stored_hints(db, sw, &ev->dev, 0, 1, (const char (*)[24])src, &hist, &nhist, seen,
                            err, errlen)) {
            free(seen);
            return -1;
        }
        ro.hist = hist;
        ro.nhist = nhist;
        ro.hist_same_shape = 1;
        ro.shape_stored = seen;
    }
    /* another run of the whole script into this database on this model
     * measures the same variants wherever neither has stored one yet */
    if (!o->sharded && !o->quiet &&
        store_sweep_peers(db, rs.dev, sw->hash, say_peer, (void *)sw->path, err, errlen) < 0)
        goto out;
    if (store_sweep_begin(db, rs.dev, sw->path, sw->hash, ev->copy_gbps, &rs.sweep, err, errlen))
        goto out;
    st->sweep_id = rs.sweep;
    if (nt_drive(sw, ev, &so, &ro, st, err, errlen)) {
        int64_t id = rs.sweep;
        store_sweep_end(db, id, "failed", NULL, 0);
        st->sweep_id = id;
        goto out;
    }
    st->sweep_id = rs.sweep;
    if (store_sweep_end(db, rs.sweep, st->interrupted ? "interrupted" : "done", err, errlen))
        goto out;
    rc = 0;
out:
    free(hist);
    free(seen);
    return rc;
}
