/* replay.c -- the replay evaluator (search/replay.h): stored samples in an
 * array sorted by (dtype combination, M, N, family, point), found by
 * binary search; a measurement is the median of a seeded draw of them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/replay.h"

typedef struct rent {
    int dt;
    int64_t M, N;
    tune_pt p;
    int status;
    double median;            /* stored median; INFINITY when failed */
    double *us;               /* samples (owned) */
    int n;
} rent;

struct nt_replay {
    const nt_sweep *sw;
    rent *v;
    size_t n, cap;
    uint64_t seed, calls;
    uint64_t rcalls;          /* re-measures: draws of their own, so that they
                                 leave the measurements' draws as they were */
};

static int cmp_key(const rent *a, const rent *b) {
    if (a->dt != b->dt) return a->dt < b->dt ? -1 : 1;
    if (a->M != b->M) return a->M < b->M ? -1 : 1;
    if (a->N != b->N) return a->N < b->N ? -1 : 1;
    if (a->p.fam != b->p.fam) return a->p.fam < b->p.fam ? -1 : 1;
    return a->p.pt < b->p.pt ? -1 : a->p.pt > b->p.pt;
}

static int by_rent(const void *a, const void *b) {
    return cmp_key(a, b);
}

nt_replay *nt_replay_new(const nt_sweep *sw) {
    nt_replay *r = calloc(1, sizeof *r);
    if (r) r->sw = sw;
    return r;
}

int nt_replay_add(nt_replay *r, const nt_hist *h, int status, const double *us, int n) {
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 1024;
        rent *v = realloc(r->v, cap * sizeof *v);
        if (!v) return -1;
        r->v = v;
        r->cap = cap;
    }
    rent *e = &r->v[r->n];
    memset(e, 0, sizeof *e);
    e->dt = h->dt;
    e->M = h->M;
    e->N = h->N;
    e->p = h->p;
    e->status = status;
    e->median = h->us;
    if (n > 0) {
        if (!(e->us = malloc((size_t)n * sizeof *e->us))) return -1;
        memcpy(e->us, us, (size_t)n * sizeof *us);
        e->n = n;
    }
    r->n++;
    return 0;
}

void nt_replay_seal(nt_replay *r) {
    qsort(r->v, r->n, sizeof *r->v, by_rent);
}

/* The entry of point p at (dt, M, N), or NULL. */
static const rent *lookup(const nt_replay *r, int dt, int64_t M, int64_t N, tune_pt p) {
    rent k = {dt, M, N, p, 0, 0, NULL, 0};
    const rent *e = bsearch(&k, r->v, r->n, sizeof *r->v, by_rent);
    return e;
}

static void where_of(const nt_replay *r, int q, int *dt, nt_problem *pr) {
    int shape;
    nt_sweep_problem(r->sw, q, pr);
    nt_sweep_problem_at(r->sw, q, dt, &shape);
}

double nt_replay_stored(const nt_replay *r, int q, tune_pt p) {
    int dt;
    nt_problem pr;
    where_of(r, q, &dt, &pr);
    const rent *e = lookup(r, dt, pr.M, pr.N, p);
    return e ? e->median : INFINITY;
}

uint64_t nt_replay_count(const nt_replay *r, int q) {
    int dt;
    nt_problem pr;
    uint64_t n = 0;
    where_of(r, q, &dt, &pr);
    for (size_t i = 0; i < r->n; i++)
        n += r->v[i].dt == dt && r->v[i].M == pr.M && r->v[i].N == pr.N;
    return n;
}

double nt_replay_best_at(const nt_replay *r, int q, tune_pt *p) {
    int dt;
    nt_problem pr;
    double best = INFINITY;
    where_of(r, q, &dt, &pr);
    if (p) p->fam = -1, p->pt = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].dt == dt && r->v[i].M == pr.M && r->v[i].N == pr.N && r->v[i].median < best) {
            best = r->v[i].median;
            if (p) *p = r->v[i].p;
        }
    return best;
}

double nt_replay_best(const nt_replay *r, int q) { return nt_replay_best_at(r, q, NULL); }

static int by_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of k samples drawn with replacement from e's stored ones
 * (into buf, sorted), with the replay's next seeded draw (re: of a
 * re-measure, from a stream of their own). */
static double draw(nt_replay *r, const rent *e, int k, double *buf, int re) {
    uint64_t s = re ? search_mix(~r->seed ^ search_mix(++r->rcalls))
                    : search_mix(r->seed ^ search_mix(++r->calls));
    for (int i = 0; i < k; i++) buf[i] = e->us[search_rand(&s) % (uint64_t)e->n];
    qsort(buf, (size_t)k, sizeof *buf, by_double);
    return k % 2 ? buf[k / 2] : 0.5 * (buf[k / 2 - 1] + buf[k / 2]);
}

/* The stored entry of fam, p at pr, or NULL. */
static const rent *entry_of(const nt_replay *r, const nt_family *fam, const nt_params *p,
                            const nt_problem *pr) {
    int f = 0, dt = 0;
    while (f < r->sw->nfam && r->sw->fam[f].fam != fam) f++;
    while (dt < r->sw->ndt && memcmp(r->sw->dts[dt].dtype, pr->dtype, sizeof pr->dtype)) dt++;
    int64_t pt = f < r->sw->nfam ? nt_sweep_point_of(r->sw, f, p) : -1;
    return pt < 0 ? NULL : lookup(r, dt, pr->M, pr->N, (tune_pt){f, (uint64_t)pt});
}

/* eval() of the replay: the stored point's status; for an ok one the
 * median of n samples drawn with replacement from its stored ones. */
static int replay_eval(void *ctx, const nt_family *fam, const nt_params *p, const nt_problem *pr,
                       const nt_timing *t, nt_result *out) {
    nt_replay *r = ctx;
    (void)t;
    memset(out, 0, sizeof *out);
    const rent *e = entry_of(r, fam, p, pr);
    if (!e) {
        out->status = NT_UNSUPPORTED;
        snprintf(out->msg, sizeof out->msg, "replay: nothing stored");
        return 0;
    }
    out->status = e->status;
    if (e->status != NT_OK) return 0;
    out->median_us = e->median;
    if (e->n > 0 && e->n <= NT_MAX_SAMPLES) {
        out->median_us = draw(r, e, e->n, out->samples, 0);
        out->nsamples = e->n;
    }
    return 0;
}

/* rematch() of the replay: for each variant the median of the samples an
 * interleaved re-measure takes, drawn as eval() draws them (the stored
 * samples hold no drift for the interleaving to cancel).  A re-measure
 * alone is drawn the same way: the store holds back-to-back samples only,
 * so a replay does not tell the two methods apart. */
static int replay_rematch(void *ctx, int n, const nt_family *const *fam, const nt_params *p,
                          const nt_problem *pr, int alone, double *us, int *ns, char *msg,
                          size_t msglen) {
    nt_replay *r = ctx;
    (void)alone;              /* only back-to-back samples are stored to draw from */
    double buf[NT_REMATCH_ROUNDS * NT_REMATCH_SAMPLES];
    for (int i = 0; i < n; i++) {
        const rent *e = entry_of(r, fam[i], &p[i], pr);
        if (!e || e->status != NT_OK)
            return snprintf(msg, msglen, "replay: %s has no ok result stored", fam[i]->name), -1;
        us[i] = e->n > 0 ? draw(r, e, NT_REMATCH_ROUNDS * NT_REMATCH_SAMPLES, buf, 1) : e->median;
        ns[i] = NT_REMATCH_ROUNDS * NT_REMATCH_SAMPLES;
    }
    return 0;
}

void nt_replay_evaluator(nt_replay *r, uint64_t seed, nt_evaluator *ev) {
    memset(ev, 0, sizeof *ev);
    r->seed = seed;
    r->calls = 0;
    r->rcalls = 0;
    ev->ctx = r;
    ev->eval = replay_eval;
    ev->rematch = replay_rematch;
    snprintf(ev->dev.name, sizeof ev->dev.name, "replay");
    snprintf(ev->arch, sizeof ev->arch, "replay");
}

void nt_replay_free(nt_replay *r) {
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) free(r->v[i].us);
    free(r->v);
    free(r);
}
