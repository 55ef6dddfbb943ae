/* replaydb.c -- a replay built from a results database (tuner/replaydb.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/replaydb.h"
#include "tuner/sweep.h"


/* 1 when row r is of the model of x's device and measured with the
 * current sources of its family (results of older kernels would answer
 * for code that no longer exists). */
static int same_model_current(const nt_replay_db *x, const store_hist_row *r) {
    const char *cur = store_family_hash(r->family);
    return !strcmp(r->device, x->model.device) && r->cc_major == x->model.cc_major &&
           r->cc_minor == x->model.cc_minor && r->sms == x->model.sms &&
           r->mem_clock_khz == x->model.mem_clock_khz && cur && !strcmp(cur, r->src_hash);
}

static int rd_row(void *ctx, const store_hist_row *r, char *err, size_t errlen) {
    nt_replay_db *x = ctx;
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
    nt_replay_db *x;
    size_t at;                /* next row of x to match (rows sorted by id) */
    int failed;
} smp;

/* Hand the samples of result s->id to the replay. */
static int flush(smp *s) {
    nt_replay_db *x = s->x;
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
static const nt_replay_db *sort_rd;
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
static int by_point_same(const nt_replay_db *x, size_t i, size_t j) {
    const nt_hist *p = &x->h[i], *q = &x->h[j];
    return p->dt == q->dt && p->M == q->M && p->N == q->N && p->p.fam == q->p.fam &&
           p->p.pt == q->p.pt;
}

/* Of several results of one point (GPUs of the model, or a point measured
 * again), keep the newest: the others are marked dropped (-2). */
static int drop_older(nt_replay_db *x) {
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

int nt_replay_db_load(store *db, nt_sweep *sw, int pool, nt_replay_db *x, char *err,
                      size_t errlen) {
    memset(x, 0, sizeof *x);
    x->sw = sw;
    x->pool = pool;
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

void nt_replay_db_free(nt_replay_db *x) {
    free(x->ids);
    free(x->devs);
    free(x->status);
    free(x->h);
    nt_replay_free(x->rp);
    memset(x, 0, sizeof *x);
}
