/* drive.c -- nt_drive (search/drive.h): the sweep loop, problem by problem,
 * ask -> stored? -> evaluate -> store -> tell, with the hints of `warm`,
 * then warm's cross pass (cross_pass()).
 *
 * Hints: every known result (opts->hist, and each result of this run as it
 * comes) is a row at a shape; a shape's rows are scored against the best
 * of that shape (its median over the shape's best median).  For a problem,
 * a point's score is the mean of its ratios over the known shapes, each
 * weighted by how near the shape is (log2 of N and M; another dtype
 * combination counts a fifth), shrunk towards a poor ratio where little is
 * known; the points with the lowest scores are the hints, the first few
 * of them chosen as a portfolio (portfolio()): together they cover the
 * nearby shapes, rather than being neighbours of one point.  The
 * best-scored measured point leads them all: the main-effects model of a
 * cold campaign can score points never measured below it.  From stored
 * results, a point that is the best at the problem's very shape in other
 * dtype combinations (twice or more) comes second (agree_second()), and a
 * point a little behind at the stored M on either side third (bracket()). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search/drive.h"

#define NHINT 256             /* hints handed to a warm search */
#define MODEL_MAX 65536       /* largest family space the main-effects model scores */
#define UNSEEN 1.1             /* a model score of a point never measured, times this */
#define OTHER_DT 0.2
#define SIGMA2 1.0
#define M_WEIGHT 0.1          /* a step in log2 M counts this x one in log2 N */
#define PRIOR_W 0.02          /* weight of the shrinkage towards PRIOR_RATIO */
#define PRIOR_RATIO 1.3
#define FAIL_RATIO 4.0        /* ratio of a point that failed at a shape */
#define OWN_W 1e6             /* weight of the problem's own shape when allowed */
#define CANDIDATES 64         /* hints a portfolio is chosen from */
#define PORTFOLIO 8           /* hints ordered as a portfolio */
#define GOOD 1.01             /* a ratio this low counts as the best (with stored
                                 results; a cold campaign's portfolio has no floor) */
#define SECOND_SPAN 1.10     /* the second shape of an N probes the families this close
                                 to the best at its anchor (second_skip()) */
#define ANCHOR_X 2            /* a cold campaign's anchors: this many times the budget */
#define TREND_RIDGE 1.0       /* a hint's trend: its slopes shrunk by this x the weight */
#define CROSS 1               /* warm's cross pass: other problems' picks tried per problem */
#define AGREE 2               /* results of other dtype combinations at the problem's
                                 shape that must name one point their best for it
                                 to go second */
#define TRANSLATE 1.02        /* from stored results, a hint that cannot run here
                                 within this of the first hint's score stands for
                                 the nearest point that can (start_problem) */
#define CLIMB 1               /* a cold campaign's search keeps this many proposals
                                 of its budget for the climb (start_problem) */
#define CROSS_NEAR 0.05       /* the cross pass tries the picks of shapes at least
                                 this near (the hints' weights; cross_pass()) */
#define BRACKET_AT 2          /* from stored results, the point least behind at the
                                 stored M on either side goes this far down the
                                 hints (0 = first; bracket()) */
#define BRACKET_LIM 1.03      /* ... when it is within this of the best at both */
#define CLAIM_POLL_NS 2000000L /* a point another writer claimed: looked at again
                                 after this long (2 ms) */
#define BRACKET_SKIP 1.01     /* ... unless a hint before it is within this of it */

double nt_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int nt_status_is_failure(int status) {
    return status == NT_COMPILE_ERROR || status == NT_LAUNCH_ERROR || status == NT_WRONG ||
           status == NT_NONDETERMINISTIC;
}

int64_t nt_sweep_point_of(const nt_sweep *sw, int f, const nt_params *p) {
    const search_space *sp = &sw->fam[f].space;
    uint64_t u = 0;
    for (int d = 0; d < sp->ndim; d++) {
        const char *v = nt_params_get(p, sp->dim[d].name);
        int i = 0;
        if (!v) return -1;
        while (i < sp->dim[d].nval && strcmp(sp->dim[d].val[i], v)) i++;
        if (i == sp->dim[d].nval) return -1;
        u = u * (uint64_t)sp->dim[d].nval + (uint64_t)i;
    }
    return (int64_t)u;
}

void nt_run_stats_free(nt_run_stats *st) {
    free(st->pick);
    free(st->pick_us);
    free(st->spent);
    st->pick = NULL;
    st->pick_us = NULL;
    st->spent = NULL;
}

/* ---- known results, by shape ------------------------------------------- */

typedef struct kshape {
    int dt;
    int64_t M, N;
    int64_t grp;
    double best;              /* lowest finite median */
    size_t *row;              /* its rows (indices into known.v) */
    size_t n, cap;
} kshape;

typedef struct known {
    nt_hist *v;
    size_t n, cap;
    kshape *s;
    size_t ns, caps;
} known;

static void known_free(known *k) {
    for (size_t i = 0; i < k->ns; i++) free(k->s[i].row);
    free(k->s);
    free(k->v);
}

/* Add a row (a copy).  0 or -1 (memory). */
static int known_add(known *k, const nt_hist *h) {
    size_t s = 0;
    while (s < k->ns && !(k->s[s].dt == h->dt && k->s[s].M == h->M && k->s[s].N == h->N &&
                         k->s[s].grp == h->grp))
        s++;
    if (s == k->ns) {
        if (k->ns == k->caps) {
            size_t cap = k->caps ? 2 * k->caps : 64;
            kshape *v = realloc(k->s, cap * sizeof *v);
            if (!v) return -1;
            k->s = v;
            k->caps = cap;
        }
        k->s[k->ns++] = (kshape){h->dt, h->M, h->N, h->grp, INFINITY, NULL, 0, 0};
    }
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 1024;
        nt_hist *v = realloc(k->v, cap * sizeof *v);
        if (!v) return -1;
        k->v = v;
        k->cap = cap;
    }
    kshape *ks = &k->s[s];
    if (ks->n == ks->cap) {
        size_t cap = ks->cap ? 2 * ks->cap : 64;
        size_t *v = realloc(ks->row, cap * sizeof *v);
        if (!v) return -1;
        ks->row = v;
        ks->cap = cap;
    }
    ks->row[ks->n++] = k->n;
    k->v[k->n++] = *h;
    if (h->us < ks->best) ks->best = h->us;
    return 0;
}

typedef struct wsum {
    uint64_t key;             /* fam << 56 | pt */
    double wr, w;             /* sum of weight x ratio, of weights */
    double m[9];              /* the trend's weighted moments, x and y the log2 of
                                 N and M over the problem's, l the log ratio: w, wx,
                                 wy, wxx, wxy, wyy, wl, wxl, wyl */
} wsum;

/* The ratio a point's trend predicts at the problem's shape: a weighted
 * least-squares plane log ratio = c + gx x + gy y through the shapes it
 * was measured at, the slopes shrunk (ridge TREND_RIDGE x the weight) so
 * that one or two shapes give about their mean; exp(c), at least 1 (no
 * point beats the best at a shape), or 0 when the system is singular.  At
 * a shape amid the measured ones it is close to the weighted mean; at the
 * edge of the swept shapes (the smallest M, say) it follows the trend
 * where the mean would lag behind it. */
static double trend_ratio(const double *m) {
    double r = TREND_RIDGE * m[0];
    double A[3][4] = {{m[0], m[1], m[2], m[6]},
                      {m[1], m[3] + r, m[4], m[7]},
                      {m[2], m[4], m[5] + r, m[8]}};
    if (!(m[0] > 0)) return 0;
    for (int c = 0; c < 3; c++) {       /* Gauss-Jordan, partial pivoting */
        int piv = c;
        for (int i = c + 1; i < 3; i++)
            if (fabs(A[i][c]) > fabs(A[piv][c])) piv = i;
        if (fabs(A[piv][c]) < 1e-12) return 0;
        for (int j = 0; j < 4; j++) {
            double t = A[c][j];
            A[c][j] = A[piv][j];
            A[piv][j] = t;
        }
        for (int i = 0; i < 3; i++) {
            if (i == c) continue;
            double f = A[i][c] / A[c][c];
            for (int j = c; j < 4; j++) A[i][j] -= f * A[c][j];
        }
    }
    double t = exp(A[0][3] / A[0][0]);
    return t < 1 ? 1 : t;
}

static int by_key(const void *a, const void *b) {
    uint64_t x = ((const wsum *)a)->key, y = ((const wsum *)b)->key;
    return x < y ? -1 : x > y;
}

static int by_score(const void *a, const void *b) {
    const tune_hint *x = a, *y = b;
    if (x->score != y->score) return x->score < y->score ? -1 : 1;
    uint64_t kx = ((uint64_t)x->p.fam << 56) | x->p.pt, ky = ((uint64_t)y->p.fam << 56) | y->p.pt;
    return kx < ky ? -1 : kx > ky;
}

/* Main effects of family f's parameters, from the rows in a[0..na) (before
 * folding): per dimension and value the weighted mean log ratio, shrunk
 * towards the family's mean by one average row's weight.  Into pred[pt]
 * (the space's size entries): exp(mean + the sum of the effects).  0 when
 * the family has no row, 1 when pred is filled, -1 (memory). */
static int main_effects(const search_space *sp, int f, const wsum *a, size_t na, double *pred) {
    size_t nv = 0, off[SEARCH_MAX_DIMS + 1];
    for (int d = 0; d < sp->ndim; d++) {
        off[d] = nv;
        nv += (size_t)sp->dim[d].nval;
    }
    double *es = calloc(2 * nv, sizeof *es), *ew = es + nv, tot = 0, totw = 0;
    int idx[SEARCH_MAX_DIMS];
    size_t nrow = 0;
    if (!es) return -1;
    for (size_t i = 0; i < na; i++) {
        if ((int)(a[i].key >> 56) != f || a[i].w <= 0) continue;
        double lr = log(a[i].wr / a[i].w);
        search_space_point(sp, a[i].key & ((1ULL << 56) - 1), idx);
        for (int d = 0; d < sp->ndim; d++) {
            es[off[d] + (size_t)idx[d]] += a[i].w * lr;
            ew[off[d] + (size_t)idx[d]] += a[i].w;
        }
        tot += a[i].w * lr;
        totw += a[i].w;
        nrow++;
    }
    if (totw <= 0) {
        free(es);
        return 0;
    }
    double m = tot / totw, k = totw / (double)nrow;
    for (size_t j = 0; j < nv; j++) es[j] = (es[j] + k * m) / (ew[j] + k) - m;
    uint64_t size = search_space_size(sp);
    for (uint64_t pt = 0; pt < size; pt++) {
        double lp = m;
        search_space_point(sp, pt, idx);
        for (int d = 0; d < sp->ndim; d++) lp += es[off[d] + (size_t)idx[d]];
        pred[pt] = exp(lp);
    }
    free(es);
    return 1;
}

typedef struct cand {
    uint64_t key;             /* fam << 56 | pt */
    size_t c;                 /* its place among the candidates */
} cand;

static int by_cand(const void *a, const void *b) {
    uint64_t x = ((const cand *)a)->key, y = ((const cand *)b)->key;
    return x < y ? -1 : x > y;
}

/* Order the first PORTFOLIO hints of all[0..n) (sorted by score) as a
 * portfolio: each next one is the candidate (of the CANDIDATES best) that
 * most lowers the weighted sum, over the known shapes (weight ws[s], 0 =
 * not near), of the log of the best ratio the hints so far reach there,
 * ratios below good counting as good (a pick within 2% is what counts, so
 * once a shape is covered, a hint that covers another one is worth more
 * than one a little faster there).  A candidate not measured at a shape
 * counts its score there.  The other hints keep their order.  0 or -1
 * (memory).
 *
 * good is GOOD where the known results are stored ones (whole problems or
 * a sweep's worth of points at each shape: a ratio is to a shape's true
 * best), and 1 (no floor) in a cold campaign, where a shape's ratios are
 * to the best of the few points measured there, so a hint 1% ahead of
 * that best is still worth taking there (replay of the default backward
 * cold at 10 per shape, 5 seeds: 97.3% -> 98.0% of shapes within 2%, worst
 * 1.06x -> 1.05x; 12 seeds: 96.5% -> 96.8%, 1.06x -> 1.05x; the forward
 * at 8: 95.7% -> 96.1% and 95.2% -> 95.4%, worst 1.08x both; the runs
 * from the neighbours keep GOOD: at 1 the backward's at 4 per shape went
 * 97.5% -> 94.7%, worst 1.04x -> 1.10x). */
static int portfolio(const known *k, const double *ws, double good, tune_hint *all, size_t n) {
    size_t ns = k->ns, nc = n < CANDIDATES ? n : CANDIDATES, m = 0;
    if (nc < 2) return 0;
    double *cur = malloc(ns * sizeof *cur), *r = malloc(nc * ns * sizeof *r);
    cand *ck = malloc(nc * sizeof *ck);
    unsigned char *used = calloc(nc, 1);
    tune_hint *out = malloc(nc * sizeof *out);
    int rc = -1;
    if (!cur || !r || !ck || !used || !out) goto done;
    for (size_t c = 0; c < nc; c++) {
        ck[c] = (cand){((uint64_t)all[c].p.fam << 56) | all[c].p.pt, c};
        for (size_t s = 0; s < ns; s++) r[c * ns + s] = all[c].score;
    }
    qsort(ck, nc, sizeof *ck, by_cand);
    for (size_t s = 0; s < ns; s++) {
        const kshape *ks = &k->s[s];
        cur[s] = FAIL_RATIO;
        for (size_t i = 0; ws[s] > 0 && i < ks->n; i++) {
            const nt_hist *h = &k->v[ks->row[i]];
            cand key = {((uint64_t)h->p.fam << 56) | h->p.pt, 0};
            const cand *f = bsearch(&key, ck, nc, sizeof *ck, by_cand);
            if (f) r[f->c * ns + s] = isfinite(h->us) ? h->us / ks->best : FAIL_RATIO;
        }
    }
    for (; m < nc && m < PORTFOLIO; m++) {
        size_t bc = nc;
        double bl = INFINITY;
        for (size_t c = 0; c < nc; c++) {
            double l = 0;
            if (used[c]) continue;
            for (size_t s = 0; s < ns; s++) {
                if (ws[s] <= 0) continue;
                double x = r[c * ns + s] < cur[s] ? r[c * ns + s] : cur[s];
                l += ws[s] * log(x > good ? x : good);
            }
            if (l < bl) {       /* ties: the better score (the earlier) */
                bl = l;
                bc = c;
            }
        }
        if (bc == nc) break;
        used[bc] = 1;
        out[m] = all[bc];
        for (size_t s = 0; s < ns; s++)
            if (r[bc * ns + s] < cur[s]) cur[s] = r[bc * ns + s];
    }
    for (size_t c = 0; c < nc; c++)
        if (!used[c]) out[m++] = all[c];
    memcpy(all, out, nc * sizeof *all);
    rc = 0;
done:
    free(cur);
    free(r);
    free(ck);
    free(used);
    free(out);
    return rc;
}

/* Where the stored results (whole problems) of other dtype combinations at
 * the problem's shape name one point their best at least AGREE times (each
 * combination on each GPU of the model counts: a group of known_add), that
 * point goes second among the hints all[0..n) (of several such points the
 * best-scored; none moves when it is first already).  Only rows of the
 * current kernel sources count (h->w 1: a best of other sources says little
 * of them), each against the best of its group.  The hints weigh another
 * dtype combination a fifth, so the same shape there is outweighed by the
 * problem's own combination at the M on either side, whose trend cannot
 * see a standing that dips between them: at 4096 x 1024 of the backward,
 * warp with 256 threads a block wins in every combination with 16-bit x,
 * but at bf16's M = 1024 and 16384 it is 2% and 10% behind, so it ranked
 * 14th.  Replay, 5 seeds, against no such rule: the backward from its
 * neighbours at 4 per shape 97.5% -> 98.3% of shapes within 2%, worst
 * 1.04x -> 1.03x; at 3 91.4% -> 93.9%, 1.20x -> 1.21x; at 5 and 6 99.2%
 * -> 100%; the forward at 4 96.8% -> 98.4%, at 5 and 6 97.9% -> 98.4%, at
 * 7 98.4% -> 98.9%.  The point placed third: the same.  AGREE 1: the
 * backward at 4 97.5% and 1.04x, at 3 89.5%; AGREE 3, or each combination
 * counted once however many GPUs measured it: the forward unchanged, the
 * backward at 4 98.1-98.3%.  Rows of other sources counted too, or the
 * first such point in the hints' order rather than the best-scored: the
 * backward at 4 unchanged, 97.5% and 1.04x (persistent with 128 threads,
 * 4 stages, k 2 goes second: the best on the GPUs of the model that
 * measured only persistent and naive there).  In a cold campaign a shape's best is only the best of the few
 * points measured there; the rule changed nothing there (5 and 20 seeds)
 * and is not applied (but at the shapes it tunes last, as from stored
 * results: start_problem).  0, or -1 (memory). */
static int agree_second(const known *k, const double *ws, int dt, const nt_problem *pr,
                        tune_hint *all, size_t n) {
    typedef struct agree {
        uint64_t key;         /* fam << 56 | pt */
        int n;                /* groups whose best it is */
    } agree;
    agree *v = NULL;
    size_t nv = 0, cap = 0, bi = n;
    int rc = -1;
    for (size_t s = 0; s < k->ns; s++) {
        const kshape *ks = &k->s[s];
        if (ks->dt == dt || ks->M != pr->M || ks->N != pr->N || !(ws[s] > 0)) continue;
        for (size_t r = 0; r < ks->n; r++) {
            const nt_hist *h = &k->v[ks->row[r]];
            if (!(h->w >= 1) || !(h->us <= ks->best)) continue;
            uint64_t key = ((uint64_t)h->p.fam << 56) | h->p.pt;
            size_t i = 0;
            while (i < nv && v[i].key != key) i++;
            if (i == nv) {
                if (nv == cap) {
                    size_t nc = cap ? 2 * cap : 16;
                    agree *w = realloc(v, nc * sizeof *w);
                    if (!w) goto out;
                    v = w;
                    cap = nc;
                }
                v[nv++] = (agree){key, 0};
            }
            v[i].n++;
        }
    }
    for (size_t i = 0; i < nv; i++) {
        if (v[i].n < AGREE) continue;
        for (size_t j = 0; j < n; j++)
            if ((((uint64_t)all[j].p.fam << 56) | all[j].p.pt) == v[i].key) {
                if (bi == n || all[j].score < all[bi].score) bi = j;
                break;
            }
    }
    if (bi < n && bi > 1) {
        tune_hint x = all[bi];
        memmove(all + 2, all + 1, (bi - 1) * sizeof *all);
        all[1] = x;
    }
    rc = 0;
out:
    free(v);
    return rc;
}

/* Where the problem's M lies between two M of the stored results at its N
 * and dtype combination (the nearest below and the nearest above), the
 * point whose ratio to the best at the worse of those two shapes is the
 * least (each shape's results group by group, as stored; a point measured
 * at only one of them does not count) goes BRACKET_AT-th among the hints
 * all[0..n), the first NHINT of them considered, when that ratio is within
 * BRACKET_LIM, the point is further down, and no hint up to that place is
 * within BRACKET_SKIP of it at the worse of the two.  The portfolio takes
 * the points that win at either shape; a point a little behind at both can
 * be the best between them, and neither rule ranks it (the hints' trend
 * weighs the other N at the same M as well).  At 2048 x 1024 of the
 * backward (bf16) the best, warp with 256 threads of 4 chunks, is 2.2% and
 * 1.0% behind at M = 1024 and 4096; from the neighbours at 5 a shape it
 * was never proposed, and the pick was 1.11x behind.  Replay from the
 * neighbours of the default sweeps with the bf16 grid of "Kernels at every
 * shape" (16 N by 8 M; docs/lua-api.md), 5 seeds: the backward 98.3% ->
 * 99.0% of shapes within 2%, worst 1.11x -> 1.05x; the forward 99.2%, worst
 * 1.04x -> 1.03x.  The default sweeps as they are, 5 seeds: at 5 and 6 a
 * shape unchanged (100%, 1.02x both), at 4 unchanged but the forward 99.8%
 * -> 99.7% (1.03x both), at 3 the backward 94.2% -> 96.8% and the forward
 * 98.2% -> 98.4% (1.10x and 1.06x both).  Without the skip (the point moved
 * whenever it is further down): the backward at 4 100% -> 98.6%, 1.02x ->
 * 1.10x (at 4096 x 32768 it took the place of the point the other dtype
 * combinations agree on, agree_second()); second rather than third: the
 * same with the skip.  Not in a cold campaign: its shapes are tuned by
 * rising M, so the M above has no results yet (replay: nothing changed);
 * but at the shapes it tunes last, as from stored results (start_problem).
 * 0, or -1 (memory). */
static int bracket(const known *k, int dt, const nt_problem *pr, tune_hint *all, size_t n) {
    int64_t lo = -1, hi = -1;
    for (size_t s = 0; s < k->ns; s++) {
        const kshape *ks = &k->s[s];
        if (ks->dt != dt || ks->N != pr->N || !isfinite(ks->best)) continue;
        if (ks->M < pr->M && ks->M > lo) lo = ks->M;
        if (ks->M > pr->M && (hi < 0 || ks->M < hi)) hi = ks->M;
    }
    size_t nc = n < NHINT ? n : NHINT;
    if (lo < 0 || hi < 0 || nc <= BRACKET_AT + 1) return 0;
    double *at = malloc(2 * nc * sizeof *at);  /* at[2c]: below, at[2c + 1]: above */
    cand *ck = malloc(nc * sizeof *ck);
    if (!at || !ck) {
        free(at);
        free(ck);
        return -1;
    }
    for (size_t c = 0; c < nc; c++) {
        ck[c] = (cand){((uint64_t)all[c].p.fam << 56) | all[c].p.pt, c};
        at[2 * c] = at[2 * c + 1] = INFINITY;
    }
    qsort(ck, nc, sizeof *ck, by_cand);
    for (size_t s = 0; s < k->ns; s++) {
        const kshape *ks = &k->s[s];
        if (ks->dt != dt || ks->N != pr->N || (ks->M != lo && ks->M != hi) || !isfinite(ks->best))
            continue;
        for (size_t r = 0; r < ks->n; r++) {
            const nt_hist *h = &k->v[ks->row[r]];
            cand key = {((uint64_t)h->p.fam << 56) | h->p.pt, 0};
            const cand *f = bsearch(&key, ck, nc, sizeof *ck, by_cand);
            double x = h->us / ks->best, *y;
            if (!f || !isfinite(x)) continue;
            y = &at[2 * f->c + (ks->M == hi)];
            if (x < *y) *y = x;
        }
    }
    size_t bc = nc;
    double bv = INFINITY;
    for (size_t c = 0; c < nc; c++) {
        double v = at[2 * c] > at[2 * c + 1] ? at[2 * c] : at[2 * c + 1];
        if (v < bv) {
            bv = v;
            bc = c;
        }
    }
    int move = bc < nc && bc > BRACKET_AT && bv <= BRACKET_LIM;
    for (size_t c = 0; move && c <= BRACKET_AT; c++) {
        double v = at[2 * c] > at[2 * c + 1] ? at[2 * c] : at[2 * c + 1];
        if (v <= bv * BRACKET_SKIP) move = 0;
    }
    if (move) {
        tune_hint x = all[bc];
        memmove(all + BRACKET_AT + 1, all + BRACKET_AT, (bc - BRACKET_AT) * sizeof *all);
        all[BRACKET_AT] = x;
    }
    free(at);
    free(ck);
    return 0;
}

/* The hints for problem pr of dtype combination dt into hint[NHINT]:
 * their number, or -1 (memory).  A point measured at nearby shapes scores
 * the ratio its weighted trend over them predicts here (trend_ratio; else
 * its weighted mean ratio), shrunk towards PRIOR_RATIO.  With cold set
 * (a cold campaign: nothing stored; but not at the shapes it tunes last,
 * start_problem()), every point of a family of at most
 * MODEL_MAX points also scores the prediction of the main-effects model
 * (main_effects), so that points never measured can be hints too, and the
 * portfolio has no floor (portfolio()'s good); without it, the best of
 * other dtype combinations at this shape may come second (agree_second),
 * and a point a little behind at the M on either side third (bracket). */
static int make_hints(const nt_sweep *sw, const known *k, int dt, const nt_problem *pr, int own_ok,
                      int cold, tune_hint *hint) {
    size_t na = 0, nall = 0;
    double *pred[NT_SWEEP_MAX_FAMILIES] = {0};
    for (size_t s = 0; s < k->ns; s++) na += k->s[s].n;
    if (!na) return 0;
    wsum *a = malloc(na * sizeof *a);
    double *ws = calloc(k->ns, sizeof *ws);
    if (!a || !ws) {
        free(a);
        free(ws);
        return -1;
    }
    na = 0;
    for (size_t s = 0; s < k->ns; s++) {
        const kshape *ks = &k->s[s];
        int own = ks->dt == dt && ks->M == pr->M && ks->N == pr->N;
        if ((own && !own_ok) || !isfinite(ks->best)) continue;
        double dn = log2((double)ks->N / (double)pr->N), dm = log2((double)ks->M / (double)pr->M);
        double w = own ? OWN_W : exp(-(dn * dn + M_WEIGHT * dm * dm) / SIGMA2);
        if (ks->dt != dt) w *= OTHER_DT;
        if (w < 1e-6) continue;
        ws[s] = w;
        for (size_t r = 0; r < ks->n; r++) {
            const nt_hist *h = &k->v[ks->row[r]];
            double ratio = isfinite(h->us) ? h->us / ks->best : FAIL_RATIO;
            double ww = w * h->w, l = log(ratio);
            a[na++] = (wsum){((uint64_t)h->p.fam << 56) | h->p.pt, ww * ratio, ww,
                             {ww, ww * dn, ww * dm, ww * dn * dn, ww * dn * dm, ww * dm * dm,
                              ww * l, ww * dn * l, ww * dm * l}};
        }
    }
    int rc = -1;
    tune_hint *all = NULL;
    for (int f = 0; cold && f < sw->nfam; f++) {
        uint64_t size = search_space_size(&sw->fam[f].space);
        if (size > MODEL_MAX) continue;
        if (!(pred[f] = malloc((size_t)size * sizeof *pred[f]))) goto out;
        int got = main_effects(&sw->fam[f].space, f, a, na, pred[f]);
        if (got < 0) goto out;
        if (!got) {
            free(pred[f]);
            pred[f] = NULL;
            continue;
        }
        nall += (size_t)size;
    }
    qsort(a, na, sizeof *a, by_key);
    double wmax = 0;
    size_t nu = 0;
    for (size_t i = 0; i < na; i++) {      /* fold equal keys */
        if (nu && a[nu - 1].key == a[i].key) {
            a[nu - 1].wr += a[i].wr;
            a[nu - 1].w += a[i].w;
            for (int j = 0; j < 9; j++) a[nu - 1].m[j] += a[i].m[j];
        } else {
            a[nu++] = a[i];
        }
    }
    for (size_t i = 0; i < nu; i++)
        if (a[i].w > wmax) wmax = a[i].w;
    if (!(all = malloc((nu + nall + 1) * sizeof *all))) goto out;
    size_t n = 0;
    tune_hint bestm = {{-1, 0}, INFINITY};  /* the best point measured near here */
    for (size_t i = 0; i < nu; i++) {
        double pw = PRIOR_W * wmax;
        int f = (int)(a[i].key >> 56);
        uint64_t pt = a[i].key & ((1ULL << 56) - 1);
        double prior = PRIOR_RATIO;
        all[n].p.fam = f;
        all[n].p.pt = pt;
        double tr = trend_ratio(a[i].m);      /* else the weighted mean */
        all[n].score = ((tr > 0 ? tr * a[i].w : a[i].wr) + pw * prior) / (a[i].w + pw);
        if (all[n].score < bestm.score) bestm = all[n];
        n++;
        if (pred[f]) pred[f][pt] = -1;     /* scored already */
    }
    for (int f = 0; f < sw->nfam; f++) {
        if (!pred[f]) continue;
        uint64_t size = search_space_size(&sw->fam[f].space);
        for (uint64_t pt = 0; pt < size; pt++)
            if (pred[f][pt] >= 0) {
                all[n].p.fam = f;
                all[n].p.pt = pt;
                all[n++].score = pred[f][pt] * UNSEEN;
            }
    }
    qsort(all, n, sizeof *all, by_score);
    if (portfolio(k, ws, cold ? 1.0 : GOOD, all, n)) goto out;
    /* the best measured point goes first: the model's points follow */
    for (size_t i = 0; bestm.p.fam >= 0 && i < n; i++)
        if (all[i].p.fam == bestm.p.fam && all[i].p.pt == bestm.p.pt) {
            memmove(all + 1, all, i * sizeof *all);
            all[0] = bestm;
            break;
        }
    if (!cold && (agree_second(k, ws, dt, pr, all, n) || bracket(k, dt, pr, all, n))) goto out;
    rc = n < NHINT ? (int)n : NHINT;
    memcpy(hint, all, (size_t)rc * sizeof *hint);
out:
    for (int f = 0; f < NT_SWEEP_MAX_FAMILIES; f++) free(pred[f]);
    free(all);
    free(a);
    free(ws);
    return rc;
}

/* ---- one problem ------------------------------------------------------- */

typedef struct drive {
    nt_sweep *sw;
    nt_evaluator *ev;
    const nt_store_ops *so;
    const nt_run_opts *o;
    nt_run_stats *st;
    known k;
    char *err;
    size_t errlen;
    int q, dt;                /* the problem at hand */
    nt_problem pr;
    int failed;               /* feasible() hit an error */
    double t0;
    tune_hint hint[NHINT];    /* the hints of the problem at hand */
    int stored_hints;         /* opts->hist has rows */
    int *order;               /* problems in the order they are tuned */
    uint64_t *budget;         /* per problem: its budget */
    unsigned char *anchor;    /* per problem: an anchor of a cold campaign */
    int *cross;               /* per problem: the cross pass's budget */
    uint64_t *ospent;         /* per problem: proposals of the families' own
                                 searches (nt_sweep_pass) */
    unsigned char *second;    /* per problem: the second shape of its N in the anchors'
                                 dtype combination (a cold campaign; in anchor's
                                 allocation, after it) */
    int pos;                  /* problems finished before the one at hand */
    double last_live;         /* when the live line was last drawn */
} drive;

/* feasible() of the search: the family's check (no device) and where(). */
static int feasible(void *ctx, tune_pt p) {
    drive *d = ctx;
    int idx[SEARCH_MAX_DIMS], acc;
    nt_params par;
    search_space_point(&d->sw->fam[p.fam].space, p.pt, idx);
    nt_sweep_point_params(d->sw, p.fam, idx, &par);
    if (nt_sweep_feasible(d->sw, p.fam, &par, &d->pr, &acc, d->err, d->errlen)) {
        d->failed = 1;
        return -1;
    }
    return acc;
}

static int key_eq(tune_pt a, tune_pt b) {
    return a.fam == b.fam && a.pt == b.pt;
}

static void params_of(const nt_sweep *sw, tune_pt p, nt_params *par) {
    int idx[SEARCH_MAX_DIMS];
    search_space_point(&sw->fam[p.fam].space, p.pt, idx);
    nt_sweep_point_params(sw, p.fam, idx, par);
}

/* The cost a strategy is told of result r: its median when it has one
 * (ok, or raced: slower than the best by more than NT_RACE), else
 * INFINITY. */
static double cost_of_result(const nt_result *r) {
    return (r->status == NT_OK || r->status == NT_RACED) && r->median_us > 0 ? r->median_us
                                                                            : INFINITY;
}

/* Note result r of point p: stats, the first failure, a known row. */
static int note(drive *d, tune_pt p, const nt_result *r, int now) {
    nt_run_stats *st = d->st;
    nt_hist h = {d->dt, d->pr.M, d->pr.N, p, cost_of_result(r), 0, 1.0,
                 r->status == NT_RACED};
    if (now) {
        st->measured++;
        st->ok += r->status == NT_OK;
        if (r->status >= 0 && r->status < NT_NSTATUS) st->by_family[p.fam][r->status]++;
        if (nt_status_is_failure(r->status) && !st->first_failure[p.fam][0]) {
            char pt[200], canon[160];
            nt_params par;
            size_t n = strcspn(r->msg, "\n");
            params_of(d->sw, p, &par);
            nt_problem_text(&d->pr, pt, sizeof pt);
            if (nt_params_canon(d->sw->fam[p.fam].fam, &par, canon, sizeof canon)) canon[0] = 0;
            snprintf(st->first_failure[p.fam], sizeof st->first_failure[p.fam], "%s %s %s: %.*s",
                     pt, d->sw->fam[p.fam].fam->name, canon, (int)n, r->msg);
        }
    } else {
        st->reused++;
    }
    st->total++;
    if (known_add(&d->k, &h)) return snprintf(d->err, d->errlen, "out of memory"), -1;
    return 0;
}

/* Measure point p now, raced against race_us (0: not raced): evaluate,
 * store, note.  0, or -1 with a message. */
static int measure_now(drive *d, tune_pt p, double race_us, nt_result *res) {
    const nt_family *f = d->sw->fam[p.fam].fam;
    nt_params par;
    nt_timing tm = d->sw->timing;
    char ptxt[200], canon[160];
    tm.race_us = race_us;
    params_of(d->sw, p, &par);
    if (d->ev->eval(d->ev->ctx, f, &par, &d->pr, &tm, res)) {
        char e2[256];
        nt_problem_text(&d->pr, ptxt, sizeof ptxt);
        if (nt_params_canon(f, &par, canon, sizeof canon)) canon[0] = 0;
        snprintf(d->err, d->errlen, "evaluator failed on %s %s %s: %s", ptxt, f->name, canon,
                 res->msg);
        /* a variant that broke the evaluator is still a result */
        if (res->status != NT_OK) d->so->put(d->so->ctx, d->sw, d->q, p.fam, &par, res, e2, sizeof e2);
        return -1;
    }
    if (res->status == NT_OK && d->ev->copy_gbps > 0)
        res->pct_copy = 100.0 * res->gbps / d->ev->copy_gbps;
    if (d->so->put(d->so->ctx, d->sw, d->q, p.fam, &par, res, d->err, d->errlen)) return -1;
    if (d->o->progress && !d->o->verbose && !d->o->quiet && nt_now_s() - d->last_live > 0.1) {
        /* the live line: redrawn in place, at most ten times a second */
        nt_problem_text(&d->pr, ptxt, sizeof ptxt);
        fprintf(stderr, "\r\033[K[%d/%d] %s: %s, %" PRIu64 " measured in all, %.0f s", d->pos + 1,
                nt_sweep_nproblems(d->sw), ptxt, f->name, d->st->measured + 1,
                nt_now_s() - d->t0);
        fflush(stderr);
        d->last_live = nt_now_s();
    }
    if (d->o->verbose) {
        nt_problem_text(&d->pr, ptxt, sizeof ptxt);
        if (nt_params_canon(f, &par, canon, sizeof canon)) canon[0] = 0;
        fprintf(stderr, "[%" PRIu64 "] %s %s %s: %s", d->st->measured + 1, ptxt, f->name, canon,
                nt_status_name(res->status));
        if (res->status == NT_OK)
            fprintf(stderr, res->gbps > 0 ? " %.2f us %.0f GB/s %.1f%%" : " %.2f us",
                    res->median_us, res->gbps, res->pct_copy);   /* replay: no bytes moved */
        else
            fprintf(stderr, " (%s)", res->msg);
        fputc('\n', stderr);
    }
    return note(d, p, res, 1);
}

/* Point p's result into *res: measured now (measure_now) under the point's
 * claim (nt_store_ops.claim), or, where another writer of the store
 * measured it since this run looked it up (the lookup is made again under
 * the claim), that writer's result: reused.  A claim another writer holds
 * is waited for: it is released when that writer's result is stored, or
 * when it failed or its process ended, and then this run measures the
 * point itself.  The wait is polled (CLAIM_POLL_NS), so that *o->stop
 * ends it.  0; 1 when stopped while waiting (nothing in *res); -1 with a
 * message. */
static int measure(drive *d, tune_pt p, double race_us, nt_result *res) {
    if (!d->so->claim) return measure_now(d, p, race_us, res);
    nt_params par;
    int got = 0, found = 0;
    params_of(d->sw, p, &par);
    for (;;) {
        if (d->so->claim(d->so->ctx, d->sw, d->q, p.fam, &par, &got, d->err, d->errlen))
            return -1;
        if (got) break;
        if (d->o->stop && *d->o->stop) return 1;
        nanosleep(&(struct timespec){0, CLAIM_POLL_NS}, NULL);
    }
    /* looked up again under the claim: another writer may have stored it
     * since this run looked (with or without a wait) */
    if (d->so->lookup(d->so->ctx, d->sw, d->q, p.fam, &par, &found, res, d->err, d->errlen)) {
        d->so->release(d->so->ctx);
        return -1;
    }
    if (found) {
        d->so->release(d->so->ctx);
        d->st->waited++;
        d->st->reused_other += found == 2;
        return note(d, p, res, 0);
    }
    int rc = measure_now(d, p, race_us, res);
    d->so->release(d->so->ctx);
    return rc;
}

/* 1 when the caller says the store has no result of the model at problem
 * q but has some at others (opts->shape_stored): a new shape next to
 * stored ones.  (With nothing stored, a cold campaign has its anchors.) */
static int new_shape(const drive *d, int q) {
    const unsigned char *s = d->o->shape_stored;
    if (!s || s[q]) return 0;
    for (int k = 0, np = nt_sweep_nproblems(d->sw); k < np; k++)
        if (s[k]) return 1;
    return 0;
}

/* The second shape of an N: the families its probe skips (*skip, bit f),
 * those whose best at the anchor (the same N and dtype combination, a
 * smaller M) is more than span behind the anchor's best.  1 when a family
 * other than the anchor's best is left to probe, else 0. */
static int second_skip(const drive *d, unsigned *skip) {
    double fb[NT_SWEEP_MAX_FAMILIES], best = INFINITY;
    int bf = -1;
    for (int f = 0; f < NT_SWEEP_MAX_FAMILIES; f++) fb[f] = INFINITY;
    for (size_t s = 0; s < d->k.ns; s++) {
        const kshape *ks = &d->k.s[s];
        if (ks->dt != d->dt || ks->N != d->pr.N || ks->M >= d->pr.M) continue;
        for (size_t r = 0; r < ks->n; r++) {
            const nt_hist *h = &d->k.v[ks->row[r]];
            if (h->us < fb[h->p.fam]) fb[h->p.fam] = h->us;
            if (h->us < best) best = h->us, bf = h->p.fam;
        }
    }
    *skip = 0;
    int left = 0;
    for (int f = 0; f < d->sw->nfam; f++) {
        if (isfinite(fb[f]) && fb[f] > best * SECOND_SPAN) *skip |= 1u << f;
        else if (f != bf && isfinite(fb[f])) left = 1;
    }
    return left;
}

/* Start pass `pass` of problem q's search into *t (nt_sweep_pass: a
 * family's own search over it alone, or the sweep's over the others, with
 * the cold campaign's budgets and rules).  0, or -1 with a message. */
static int start_problem(drive *d, int q, int pass, tune **t, tune_hint *hint) {
    int shape, only;
    const char *strategy;
    uint64_t budget;
    tune_env env;
    char msg[256];
    memset(&env, 0, sizeof env);
    d->q = q;
    nt_sweep_problem(d->sw, q, &d->pr);
    nt_sweep_problem_at(d->sw, q, &d->dt, &shape);
    nt_sweep_pass(d->sw, pass, &only, &strategy, &budget);
    env.nfam = d->sw->nfam;
    nt_sweep_pass_spaces(d->sw, only, env.space);
    env.feasible = feasible;
    env.ctx = d;
    env.budget = only < 0 ? d->budget[q] : budget;
    env.seed = nt_sweep_pass_seed(d->sw, q, d->o->seed, only);
    if (only >= 0 && !strcmp(strategy, "warm")) {
        /* a family's own warm search: the hints of its points, and (in a
         * cold campaign) its last proposal for the climb */
        int n = make_hints(d->sw, &d->k, d->dt, &d->pr, d->o->hist_same_shape, !d->stored_hints,
                           hint);
        if (n < 0) return snprintf(d->err, d->errlen, "out of memory"), -1;
        env.hint = hint;
        env.nhint = n;
        if (d->stored_hints) env.translate = TRANSLATE;
        else if (env.budget > CLIMB) env.hint_quota = (int)(env.budget - CLIMB);
    } else if (only < 0 && !strcmp(strategy, "warm")) {
        /* a cold campaign tunes the shapes with a budget of their own
         * after every other shape (plan()); by then its own results cover
         * their neighbourhood as stored ones would, so they are searched
         * as from stored results (known ranks the points of those results:
         * the hints are points measured near here, with no main-effects
         * model; the translation below; every proposal a hint, none kept
         * for the climb).  The shapes measured cold rank only the few
         * points measured there, yet those are the points worth trying: a
         * point the campaign never measured near a late shape rarely wins
         * there, and the climb's step from the best hint spends a proposal
         * the next hint spends better.  Replay of the default forward cold
         * (its grid's 78 shapes beyond the core have a budget of 5 of their
         * own), 1, 5 and 20 seeds: 96.6%, 96.5%, 95.6% of shapes within 2%
         * -> 98.1%, 97.8%, 96.4%, worst 1.04x, 1.05x, 1.08x unchanged,
         * spent 13.6% -> 13.6-13.7%; at those shapes' budgets 3 to 7 (10
         * seeds) +0.6 to +1.2 points each.  The parts alone (20 seeds): the
         * hints only 95.7%, with the translation 95.9%, every proposal a
         * hint without them 96.0%; the main-effects model kept with the
         * other two 96.1%.  Without the portfolio's floor (GOOD) 96.2%;
         * without the agreement and bracket rules the same 96.4% */
        int late = !d->stored_hints && nt_sweep_problem_budget(d->sw, q) > 0;
        int stored = d->stored_hints || late;
        int n = make_hints(d->sw, &d->k, d->dt, &d->pr, d->o->hist_same_shape, !stored, hint);
        if (n < 0) return snprintf(d->err, d->errlen, "out of memory"), -1;
        env.hint = hint;
        env.nhint = n;
        /* from stored results, a hint within TRANSLATE of the first one's
         * score that cannot run here (its chunks cover another N) stands
         * for the nearest point that can, as the best hint of a family not
         * tried yet does: at a hidden size between the stored ones the
         * hints that rank highest are those of the N on either side, and
         * this N's points, known at another M only, are shrunk far below
         * them (at 65536 x 768 of the backward, wstage with 128 threads,
         * 3 chunks, 2 stages and k 2 is 4% ahead of every other point and
         * 27th among the hints; its 4-chunk sibling of N = 1024 is 4th,
         * 1.6% behind the first).  Replay from the neighbours at the
         * scripts' budget_stored (5), 1, 5 and 20 seeds: the backward
         * 99.2%, 99.2% and 99.1% of shapes within 2%, worst 1.04x each ->
         * 100%, 1.02x each; the forward 100% and 1.02x unchanged.  5 seeds
         * at other budgets: the backward at 4 97.8% -> 99.7% (1.06x both),
         * at 3 94.2% -> 95.3%, worst 1.10x -> 1.21x, at 6 100%, 1.01x ->
         * 1.02x; the forward at 3 98.4% -> 98.8% (1.06x both), at 4, 6 and
         * 7 unchanged.  Within 1.04 to 1.08: the same at 5 (1.03: 99.8% over
         * 5 seeds), but the forward at 4 99.1% and 1.06x (1.05); within
         * PROBE_SPAN (1.10), or every hint that cannot run: the backward
         * over 20 seeds 100% but 1.06x (at 1024 x 32768 a cluster hint of
         * N = 20480, 3 chunks away, took the proposal the best cstage
         * point was next for).  Not in a cold campaign, whose main-effects
         * model scores the runnable points next to an unrunnable hint
         * already: the backward cold over 5 and 20 seeds 95.9% -> 93.7%,
         * 95.3% -> 93.5% */
        if (stored) env.translate = TRANSLATE;
        /* in a cold campaign the last CLIMB proposals of a search are the
         * climb's (the anchors and the second shapes, exploring, keep half
         * the budget for it; below): one step from the best point measured
         * to its best-hinted neighbour.  The hints there are the
         * main-effects model over the few points the campaign measured,
         * and it learns a parameter's value only where one was measured:
         * at N = 4096 of the backward, persistent with k 1 and 3 or 4
         * stages wins at every M, and the anchor's 25 proposals tried k 1
         * twice, with another block and stages, so the hints of every
         * other shape of that N ranked k 2 first (the best was 19th of the
         * runnable points at 16384 x 4096).  The climb's steps measure
         * such values next to the best, and the later shapes' hints follow
         * (f16 at 16384 x 4096 now finds it from a hint).  Replay cold at
         * the scripts' budgets, 1, 5 and 20 seeds: the backward 89.8%,
         * 94.2%, 95.3% of shapes within 2% -> 94.1%, 95.9%, 95.3%, worst
         * 1.05x, 1.08x, 1.08x -> 1.05x, 1.05x, 1.08x (at 1 seed the misses
         * at N = 4096, 8 of the 12, -> 3 of 7); the forward 98.4%, 96.7%,
         * 97.3% -> 98.9%, 99.0%, 98.0%, worst 1.03x, 1.08x, 1.08x ->
         * 1.03x, 1.06x, 1.08x.  CLIMB 2: the backward 94.9%, 95.3%, 94.6%,
         * the forward over 20 seeds 97.2% and 1.11x; half the budget for
         * the climb: the backward over 20 seeds 92.1% and 1.21x.  Not from
         * stored results, which rank the points well enough that every
         * proposal is best spent on the hints (from the neighbours at 4 a
         * shape, 5 seeds: the backward 99.7% -> 96.3%, worst 1.06x ->
         * 1.21x; the forward 99.8% -> 98.4%, 1.03x -> 1.06x) */
        if (!stored && env.budget > CLIMB) env.hint_quota = (int)(env.budget - CLIMB);
        /* an anchor of a cold campaign tries every family, and keeps half
         * its budget for the climb; so does a shape the stored results
         * never saw: standings at other shapes say little where the
         * regime changes (short rows, rows past what fits a block), and
         * a family with no result near it would never be tried.  So does
         * the second shape of each N of the anchors' combination in a
         * cold campaign (its own budget, not the anchors'; plan()) */
        unsigned skip = 0;
        int sec = !d->stored_hints && d->second[q] && second_skip(d, &skip);
        if ((!d->stored_hints && d->anchor[q]) || sec || new_shape(d, q)) {
            env.skip_fam = skip;
            env.hint_quota = (int)(env.budget / 2 > 0 ? env.budget / 2 : 1);
            env.explore = 1;
        }
    }
    if (tune_start(t, strategy, &env, msg, sizeof msg))
        return snprintf(d->err, d->errlen, "%s: %s", d->sw->path, msg), -1;
    return 0;
}

/* Order of the re-measure's candidates: the fastest first. */
static int by_us(const void *a, const void *b) {
    const nt_hist *x = a, *y = b;
    if (x->us != y->us) return x->us < y->us ? -1 : 1;
    uint64_t kx = ((uint64_t)x->p.fam << 56) | x->p.pt, ky = ((uint64_t)y->p.fam << 56) | y->p.pt;
    return kx < ky ? -1 : kx > ky;
}

/* warm's last step at problem q (the problem at hand), at the end of its
 * search and again in the cross pass where the pass changes the pick (the
 * evaluator holds the problem's inputs then: setting them up again costs
 * more than the re-measure): the ok points measured in this run within
 * NT_REMATCH_SPAN of the fastest there (noise can
 * order those either way: a variant's median moves by about 0.3% between
 * runs, and the sweep's drift more), the fastest NT_REMATCH_N of them,
 * are measured again interleaved (the evaluator's rematch) and the fastest
 * there becomes the pick.  With search.remeasure "alone", those within
 * NT_REMATCH_ALONE_SPAN, the fastest NT_REMATCH_ALONE_N, each chain timed
 * alone after an L2 flush.  The re-measure is stored (the store's
 * rematch_put; `best` then ranks them in its order), and a stored one of
 * the same points is told instead of measuring again, so a resumed run
 * makes the same choice.  Nothing happens without an evaluator that can
 * re-measure.  0, or -1 with a message. */
static int rematch_one(drive *d, int q) {
    int n = 0, found = 0;
    nt_hist c[NT_REMATCH_MAX + 1];
    nt_params par[NT_REMATCH_MAX];
    const nt_family *fam[NT_REMATCH_MAX];
    int fi[NT_REMATCH_MAX], ns[NT_REMATCH_MAX];
    double us[NT_REMATCH_MAX];
    const int alone = d->sw->search.remeasure_alone;
    const double span = alone ? NT_REMATCH_ALONE_SPAN : NT_REMATCH_SPAN;
    const int most = alone ? NT_REMATCH_ALONE_N : NT_REMATCH_N;
    if (!d->ev->rematch || d->st->pick[q].fam < 0) return 0;
    for (size_t s = 0; s < d->k.ns; s++) {
        const kshape *ks = &d->k.s[s];
        if (ks->grp || ks->dt != d->dt || ks->M != d->pr.M || ks->N != d->pr.N) continue;
        for (size_t i = 0; i < ks->n; i++) {
            const nt_hist *h = &d->k.v[ks->row[i]];
            int dup = 0;
            /* within the span of the shape's fastest median, an ok result
             * (a raced one has no full set of samples) */
            if (h->raced || !(h->us <= (1 + span) * ks->best)) continue;
            for (int j = 0; j < n; j++) dup |= key_eq(c[j].p, h->p);
            if (dup) continue;
            c[n++] = *h;
            qsort(c, (size_t)n, sizeof *c, by_us);
            if (n > most) n = most;
        }
    }
    if (n < 2) return 0;
    for (int i = 0; i < n; i++) {
        fi[i] = c[i].p.fam;
        fam[i] = d->sw->fam[fi[i]].fam;
        params_of(d->sw, c[i].p, &par[i]);
    }
    if (d->so->rematch_get &&
        d->so->rematch_get(d->so->ctx, d->sw, q, n, fi, par, &found, us, d->err, d->errlen))
        return -1;
    if (!found) {
        char msg[NT_MSG_LEN];
        if (d->o->stop && *d->o->stop) {
            d->st->interrupted = 1;
            return 0;
        }
        /* their kernels compiled at once (the evaluator's pool), not one
         * after another as the re-measure loads them: points reused from
         * the store were not compiled in this run (a run seeded with the
         * model's results re-measures nothing it compiled) */
        for (int i = 0; d->ev->prefetch && i < n; i++)
            d->ev->prefetch(d->ev->ctx, fam[i], &par[i], &d->pr);
        if (d->ev->rematch(d->ev->ctx, n, fam, par, &d->pr, alone, us, ns, msg, sizeof msg)) {
            /* the pick stands: the re-measure only refines it (a broken
             * device fails the next measurement, which the run reports) */
            if (!d->o->quiet) {
                char ptxt[200];
                nt_problem_text(&d->pr, ptxt, sizeof ptxt);
                fprintf(stderr, "%snormtune run: warning: %s: the re-measure failed (%s); the "
                                "search's pick stands\n", d->o->progress ? "\r\033[K" : "",
                        ptxt, msg);
            }
            return 0;
        }
        if (d->so->rematch_put &&
            d->so->rematch_put(d->so->ctx, d->sw, q, n, fi, par, us, ns, d->err, d->errlen))
            return -1;
        d->st->rematched++;
    }
    int w = 0, was = -1;
    for (int i = 0; i < n; i++) {
        if (us[i] < us[w]) w = i;
        if (key_eq(c[i].p, d->st->pick[q])) was = i;
    }
    if (w != was && !d->o->quiet && !d->o->verbose) {
        char ptxt[200], a[160] = "", b[160] = "";
        nt_params pp;
        const nt_family *pf = d->sw->fam[d->st->pick[q].fam].fam;
        nt_problem_text(&d->pr, ptxt, sizeof ptxt);
        nt_params_canon(fam[w], &par[w], a, sizeof a);
        params_of(d->sw, d->st->pick[q], &pp);
        nt_params_canon(pf, &pp, b, sizeof b);
        fprintf(stderr, "%sre-measure: %s: %s %s is %.1f%% faster than the pick %s %s, "
                        "measured in turn\n", d->o->progress ? "\r\033[K" : "", ptxt,
                fam[w]->name, a, was >= 0 ? 100.0 * (us[was] / us[w] - 1) : 0.0, pf->name, b);
    }
    d->st->pick[q] = c[w].p;
    d->st->pick_us[q] = c[w].us;
    return 0;
}

/* Ask, look up, measure and tell until pass `pass` of problem q's search
 * is over (nt_sweep_pass); its proposals added to *spent, its pick, where
 * faster than *best (fam -1: none yet), into *best and *best_us.  0, or -1
 * with a message (an interrupt: 0 with st->interrupted set). */
static int run_pass(drive *d, int q, int pass, nt_result *res, uint64_t *spent, tune_pt *best,
                    double *best_us) {
    tune *t = NULL;
    tune_pt pts[NT_DRIVE_BATCH], b;
    double bu;
    int todo[NT_DRIVE_BATCH];
    int n, rc = -1;
    if (start_problem(d, q, pass, &t, d->hint)) return -1;
    while ((n = tune_ask(t, pts, NT_DRIVE_BATCH)) > 0) {
        int ntodo = 0;
        for (int i = 0; i < n; i++) {
            nt_params par;
            int found = 0;
            params_of(d->sw, pts[i], &par);
            if (d->so->lookup(d->so->ctx, d->sw, q, pts[i].fam, &par, &found, res, d->err,
                              d->errlen))
                goto out;
            if (!found) {
                todo[ntodo++] = i;
                continue;
            }
            if (note(d, pts[i], res, 0)) goto out;
            d->st->reused_other += found == 2;
            tune_tell(t, pts[i], cost_of_result(res));
        }
        for (int i = 0; d->ev->prefetch && i < ntodo; i++) {
            nt_params par;
            params_of(d->sw, pts[todo[i]], &par);
            d->ev->prefetch(d->ev->ctx, d->sw->fam[pts[todo[i]].fam].fam, &par, &d->pr);
        }
        for (int i = 0; i < ntodo; i++) {
            if (d->o->stop && *d->o->stop) {
                d->st->interrupted = 1;
                rc = 0;
                goto out;
            }
            tune_pt bp;
            double race = 0;    /* raced against the best so far (of every pass) */
            if (d->sw->search.race && tune_best(t, &bp, &race)) race = 0;
            if (d->sw->search.race && best->fam >= 0 && (!(race > 0) || *best_us < race))
                race = *best_us;
            int m = measure(d, pts[todo[i]], isfinite(race) ? race : 0, res);
            if (m > 0) {
                d->st->interrupted = 1;
                rc = 0;
            }
            if (m) goto out;
            tune_tell(t, pts[todo[i]], cost_of_result(res));
        }
    }
    if (n < 0) {
        if (!d->failed) snprintf(d->err, d->errlen, "out of memory");
        goto out;
    }
    rc = 0;
out:
    if (t) {
        *spent += tune_spent(t);
        if (!tune_best(t, &b, &bu) && (best->fam < 0 || bu < *best_us)) {
            *best = b;
            *best_us = bu;
        }
    }
    tune_free(t);
    return rc;
}

/* Problem q's search, pass after pass (nt_sweep_pass), then warm's
 * re-measure of the closest points.  0, or -1 with a message. */
static int run_problem(drive *d, int q, nt_result *res) {
    uint64_t before = d->st->measured, reused = d->st->reused;
    int np = nt_sweep_npasses(d->sw);
    d->st->spent[q] = 0;
    d->st->pick[q].fam = -1;
    for (int i = 0; i < np && !d->st->interrupted; i++) {
        uint64_t was = d->st->spent[q];
        int only;
        const char *strategy;
        uint64_t budget;
        if (run_pass(d, q, i, res, &d->st->spent[q], &d->st->pick[q], &d->st->pick_us[q]))
            return -1;
        nt_sweep_pass(d->sw, i, &only, &strategy, &budget);
        if (only >= 0) d->ospent[q] += d->st->spent[q] - was;
    }
    if (d->st->interrupted) return 0;
    /* warm re-measures the closest points now, while the evaluator holds
     * the problem's inputs (the cross pass again where it changes the pick) */
    if ((nt_sweep_uses(d->sw, "warm") ||
         (d->sw->search.remeasure_set && search_remeasures(d->sw->search.strategy))) &&
        rematch_one(d, q))
        return -1;
    if (!d->o->quiet && !d->o->verbose) {
        char ptxt[200], canon[160] = "";
        nt_problem_text(&d->pr, ptxt, sizeof ptxt);
        if (d->st->pick[q].fam >= 0) {
            nt_params par;
            params_of(d->sw, d->st->pick[q], &par);
            nt_params_canon(d->sw->fam[d->st->pick[q].fam].fam, &par, canon, sizeof canon);
        }
        /* what is left, at the pace of the problems done so far */
        int nq = nt_sweep_nproblems(d->sw), done = d->pos + 1;
        double el = nt_now_s() - d->t0;
        fprintf(stderr, "%s[%d/%d] %s done (%" PRIu64 " measured, %" PRIu64 " reused; best %s %s); "
                        "%.0f s, about %.0f s left\n", d->o->progress ? "\r\033[K" : "", done, nq,
                ptxt, d->st->measured - before, d->st->reused - reused,
                d->st->pick[q].fam >= 0 ? d->sw->fam[d->st->pick[q].fam].fam->name : "none",
                canon, el, el / done * (nq - done));
    }
    return 0;
}

/* The cross pass's share of each warm problem's budget: CROSS of it
 * where the budget is over twice that, else none (d->cross). */
static void reserve_cross(drive *d) {
    for (int q = 0, np = nt_sweep_nproblems(d->sw); q < np; q++)
        if (d->budget[q] > 2 * CROSS) {
            d->budget[q] -= CROSS;
            d->cross[q] = CROSS;
        }
}

/* The order and budgets of the problems.  A warm search with nothing
 * stored is a cold campaign: at each N of the dtype combination with the
 * most problems one shape, the smallest M, is an anchor, tuned first with
 * ANCHOR_X times the budget and a look at every family; the next shape of
 * that N (its smallest M but one) looks once, with its share of the
 * budget, at each family within SECOND_SPAN of the best at the anchor
 * (second_skip(); none when only the anchor's best family is left): a
 * family a little behind at the anchor's M can win from the next M on
 * (rows at 4096 x 2048 of the forward, 3% behind at 1024 x 2048), and the
 * hints of the larger M follow the anchor's trend.  Replay, 5 seeds,
 * against no such look: the forward cold 96.1% -> 98.0% of shapes within
 * 2%, worst 1.08x both (20 seeds 94.8% -> 96.4%, 1.11x -> 1.08x); the
 * backward cold 98.0%, 1.05x both (20 seeds 96.1%, 1.05x both).  Every family, not only the close ones: the
 * forward 97.3%, 1.08x (20 seeds 96.9%, 1.09x), the backward 97.6%,
 * 1.05x, but 20 seeds 96.9%, 1.08x (4096 x 32768 bf16: the look at loop
 * and cluster, 1.4x and 1.13x behind at the anchor, leaves cstage's climb
 * four proposals); within 5%: the forward 97.3%, 20 seeds 96.1%, 1.08x;
 * within 20%: the forward 20 seeds 1.11x, the backward 97.1%, 1.06x.  The
 * same at the second shape of every dtype combination: the forward 15.1%
 * of the sweep, the backward 95.8% (before the re-measure).  The other shapes
 * follow with hints from the anchors and share what is left, so that the
 * campaign spends at most the budget times the problems, the cross
 * pass's CROSS a problem included (reserve_cross).  The smallest M, not the
 * middle one: there the standings differ most from the other shapes (the
 * dw reduction and the tail weigh most), and the larger M follow the
 * trend of the smallest and of the neighbouring N (replay of the default
 * backward on data/results.db, 12 seeds: 94.8% of shapes within 2% and
 * the worst 1.20x, against 91.1% and 1.26x from the middle M).  The
 * shapes with a budget of their own (the script's shapes[i].budget) are
 * neither anchors nor second shapes and share nothing of the pool: they
 * come last, in the script's order, each with its own budget, and start
 * from the results of all the others (shapes between the others: the
 * bf16 grid of hidden sizes and rows in the default forward, whose
 * standings at its new M and N its neighbours rank well; docs/lua-api.md).
 * Otherwise problems keep the script's order and each has the budget (a
 * shape's own where it has one);
 * warm with stored results (not a cold campaign) has the script's
 * budget_stored instead where it sets one: the model's results at the
 * other shapes rank the points well enough that fewer proposals find the
 * best (replay of the default sweeps on data/results.db from the
 * neighbours at 5 a shape: the backward 9.3% of the sweep, 99.2% of the
 * shapes within 2%, the worst 1.02x, against 23.1% at its budget of 13;
 * the forward 9.7%, 98.4%, 1.03x), a shape's own budget no more than
 * that.  No share is kept for the cross pass there: it takes what the
 * search left. */
static int plan(drive *d) {
    int np = nt_sweep_nproblems(d->sw), k = 0;
    uint64_t b = d->sw->search.budget;
    if (!strcmp(d->sw->search.strategy, "warm") && d->stored_hints && b &&
        d->sw->search.budget_stored)
        b = d->sw->search.budget_stored;
    d->order = malloc((size_t)np * sizeof *d->order);
    d->budget = malloc((size_t)np * sizeof *d->budget);
    d->anchor = calloc(2 * (size_t)np, 1);
    d->cross = calloc((size_t)np, sizeof *d->cross);
    d->ospent = calloc((size_t)np, sizeof *d->ospent);
    if (!d->order || !d->budget || !d->anchor || !d->cross || !d->ospent) return -1;
    d->second = d->anchor + np;
    /* a shape's own budget (the script's `budget` of that shape) replaces
     * the search's; from stored results it is at most budget_stored */
    int nown = 0;
    for (int q = 0; q < np; q++) {
        uint64_t own = nt_sweep_problem_budget(d->sw, q);
        d->order[q] = q;
        d->budget[q] = own && !(d->stored_hints && b && own > b) ? own : b;
        nown += own > 0;
    }
    if (strcmp(d->sw->search.strategy, "warm") || d->stored_hints || !b) return 0;
    /* anchors only in the dtype combination with the most problems (the
     * first of those): the others' standings follow its (their hints
     * weigh its results), and an anchor of their own, at few shapes,
     * cost more than it taught (replay on data/results.db) */
    int main_dt = 0, most = 0;
    for (int t = 0; t < d->sw->ndt; t++) {
        int cnt = 0;
        for (int q = 0; q < np; q++) {
            int dt, sh;
            nt_sweep_problem_at(d->sw, q, &dt, &sh);
            cnt += dt == t;
        }
        if (cnt > most) {
            most = cnt;
            main_dt = t;
        }
    }
    /* the shapes with a budget of their own take no part in the anchors,
     * the second shapes or the pool */
    int nanchor = 0;
    for (int q = 0; q < np; q++) {   /* the smallest M of each N */
        nt_problem p, o;
        int dt, sh, od, os, below = 0;
        nt_sweep_problem(d->sw, q, &p);
        nt_sweep_problem_at(d->sw, q, &dt, &sh);
        if (dt != main_dt || nt_sweep_problem_budget(d->sw, q)) continue;
        for (int r = 0; r < np; r++) {
            nt_sweep_problem(d->sw, r, &o);
            nt_sweep_problem_at(d->sw, r, &od, &os);
            if (r == q || od != dt || o.N != p.N || nt_sweep_problem_budget(d->sw, r)) continue;
            below += o.M < p.M;
        }
        if (!below) d->anchor[q] = 1;
        d->second[q] = below == 1;
        nanchor += d->anchor[q];
    }
    uint64_t pool = b * (uint64_t)(np - nown), ab = ANCHOR_X * b;
    if (nanchor && ab * (uint64_t)nanchor > pool) ab = pool / (uint64_t)nanchor;
    uint64_t rest = pool - ab * (uint64_t)nanchor, nf = (uint64_t)(np - nown - nanchor);
    for (int q = 0; q < np; q++)
        if (d->anchor[q]) {
            d->order[k++] = q;
            d->budget[q] = ab;
        }
    for (int q = 0; q < np; q++)
        if (!d->anchor[q] && !nt_sweep_problem_budget(d->sw, q)) {
            d->order[k++] = q;
            d->budget[q] = nf ? (rest / nf > 0 ? rest / nf : 1) : b;
        }
    /* then the shapes with their own budget, in the script's order: from
     * the results of all the others */
    for (int q = 0; q < np; q++)
        if (nt_sweep_problem_budget(d->sw, q)) d->order[k++] = q;
    reserve_cross(d);
    return 0;
}

/* A candidate of the cross pass: a point and how near the shape it won at. */
typedef struct xcand {
    double w;
    tune_pt p;
} xcand;

static int by_nearness(const void *a, const void *b) {
    const xcand *x = a, *y = b;
    if (x->w != y->w) return x->w > y->w ? -1 : 1;
    uint64_t kx = ((uint64_t)x->p.fam << 56) | x->p.pt, ky = ((uint64_t)y->p.fam << 56) | y->p.pt;
    return kx < ky ? -1 : kx > ky;
}

/* 1 when point p has a known row at the shape of the problem at hand. */
static int known_here(const drive *d, tune_pt p) {
    for (size_t s = 0; s < d->k.ns; s++) {
        const kshape *ks = &d->k.s[s];
        if (ks->dt != d->dt || ks->M != d->pr.M || ks->N != d->pr.N) continue;
        for (size_t i = 0; i < ks->n; i++)
            if (key_eq(d->k.v[ks->row[i]].p, p)) return 1;
    }
    return 0;
}

/* warm's cross pass, once every problem has its pick: at each problem,
 * in the order they were tuned, the picks of the other problems, nearest
 * shape first (the hints' weights), that can run there and are not known
 * there yet, up to CROSS of them; one that beats the problem's pick
 * becomes it.  A search sees only the shapes tuned before it; this pass
 * hands back what the later ones found (replay of a cold campaign of the
 * default backward, 12 seeds: 96.5% of shapes within 2% and the worst
 * 1.06x, against 95.0% and 1.20x without it, for 1.9% less of the sweep).
 * Only the picks of shapes of weight CROSS_NEAR or more (at the same M,
 * the same combination within about 1.7 in log2 N, another within 1.2):
 * a pick of a shape farther away seldom wins (replay cold, 20
 * seeds: of the forward's 545 such tries one took a shape to within 2%,
 * of the backward's 140 none; of those of weight 0.5 or more 43 and 23
 * did), and what it costs is measured, not spent on a better bet: the
 * forward cold spends 15.1% -> 14.8% of the sweep at 1, 5 and 20 seeds,
 * the backward 22.0%, 21.7%, 21.8% -> 21.8%, 21.6%, 21.6%, shapes within
 * 2% and the worst unchanged (0.1: the forward 14.7%, the same picks).
 * Stored results are told as in the search, so a resumed run makes the
 * same choices.  0, or -1 with a message. */
static int cross_pass(drive *d, nt_result *res) {
    int np = nt_sweep_nproblems(d->sw), rc = -1;
    xcand *c = malloc((size_t)np * sizeof *c);
    if (!c) return snprintf(d->err, d->errlen, "out of memory"), -1;
    for (d->pos = 0; d->pos < np && !d->st->interrupted; d->pos++) {
        int q = d->order[d->pos], nc = 0, shape, taken = 0;
        tune_pt before = d->st->pick[q];
        d->q = q;
        nt_sweep_problem(d->sw, q, &d->pr);
        nt_sweep_problem_at(d->sw, q, &d->dt, &shape);
        for (int o = 0; o < np; o++) {
            nt_problem po;
            int dto, sho;
            if (o == q || d->st->pick[o].fam < 0) continue;
            nt_sweep_problem(d->sw, o, &po);
            nt_sweep_problem_at(d->sw, o, &dto, &sho);
            double dn = log2((double)po.N / (double)d->pr.N);
            double dm = log2((double)po.M / (double)d->pr.M);
            double w = exp(-(dn * dn + M_WEIGHT * dm * dm) / SIGMA2);
            c[nc++] = (xcand){dto == d->dt ? w : w * OTHER_DT, d->st->pick[o]};
        }
        qsort(c, (size_t)nc, sizeof *c, by_nearness);
        /* the sweep's pass only: a family with a search of its own keeps
         * to it (nt_sweep_pass) */
        uint64_t own = d->budget[q] + (uint64_t)d->cross[q], sp = d->st->spent[q] - d->ospent[q];
        int quota = !d->sw->search.budget ? CROSS : own > sp ? (int)(own - sp) : 0;
        if (quota > CROSS) quota = CROSS;
        for (int i = 0; i < nc && taken < quota && !d->st->interrupted; i++) {
            int dup = 0, found = 0;
            for (int j = 0; j < i; j++) dup |= key_eq(c[j].p, c[i].p);
            if (c[i].w < CROSS_NEAR) break;      /* the rest are farther */
            if (dup || d->sw->fam[c[i].p.fam].own || known_here(d, c[i].p)) continue;
            int ok = feasible(d, c[i].p);
            if (ok < 0) goto out;
            if (!ok) continue;
            nt_params par;
            params_of(d->sw, c[i].p, &par);
            if (d->so->lookup(d->so->ctx, d->sw, q, c[i].p.fam, &par, &found, res, d->err,
                              d->errlen))
                goto out;
            if (found) {
                if (note(d, c[i].p, res, 0)) goto out;
                d->st->reused_other += found == 2;
            } else if (d->o->stop && *d->o->stop) {
                d->st->interrupted = 1;
                break;
            } else {
                double race = d->sw->search.race && d->st->pick[q].fam >= 0 ? d->st->pick_us[q] : 0;
                int m = measure(d, c[i].p, race, res);
                if (m < 0) goto out;
                if (m) {
                    d->st->interrupted = 1;
                    break;
                }
            }
            taken++;
            double cost = cost_of_result(res);
            if (cost < d->st->pick_us[q] || d->st->pick[q].fam < 0) {
                if (!d->o->quiet && !d->o->verbose && isfinite(cost)) {
                    char ptxt[200], canon[160] = "";
                    nt_problem_text(&d->pr, ptxt, sizeof ptxt);
                    nt_params_canon(d->sw->fam[c[i].p.fam].fam, &par, canon, sizeof canon);
                    fprintf(stderr, "%scross pass: %s: %s %s is %.1f%% faster than the "
                                    "search's pick\n", d->o->progress ? "\r\033[K" : "", ptxt,
                            d->sw->fam[c[i].p.fam].fam->name, canon,
                            d->st->pick[q].fam >= 0 ? 100.0 * (d->st->pick_us[q] / cost - 1) : 0.0);
                }
                if (isfinite(cost)) {
                    d->st->pick[q] = c[i].p;
                    d->st->pick_us[q] = cost;
                }
            }
        }
        d->st->spent[q] += (uint64_t)taken;
        if (!d->st->interrupted && !key_eq(before, d->st->pick[q]) && rematch_one(d, q)) goto out;
    }
    rc = 0;
out:
    free(c);
    return rc;
}

/* For strategies that do not steer by time: count the variants and how
 * many are stored, as one line, before anything is measured (the passes
 * of families whose own search steers by time left out). */
static int count_stored(drive *d, nt_result *res) {
    uint64_t total = 0, stored = 0, other = 0;
    tune_pt pts[NT_DRIVE_BATCH];
    for (int q = 0; q < nt_sweep_nproblems(d->sw); q++) {
        for (int pass = 0; pass < nt_sweep_npasses(d->sw); pass++) {
            tune *t = NULL;
            int n, only;
            const char *strategy;
            uint64_t budget;
            nt_sweep_pass(d->sw, pass, &only, &strategy, &budget);
            if (tune_adaptive(strategy)) continue;
            if (start_problem(d, q, pass, &t, d->hint)) return -1;
            while ((n = tune_ask(t, pts, NT_DRIVE_BATCH)) > 0)
                for (int i = 0; i < n; i++) {
                    nt_params par;
                    int found = 0;
                    params_of(d->sw, pts[i], &par);
                    if (d->so->lookup(d->so->ctx, d->sw, q, pts[i].fam, &par, &found, res, d->err,
                                      d->errlen)) {
                        tune_free(t);
                        return -1;
                    }
                    total++;
                    stored += found != 0;
                    other += found == 2;
                }
            tune_free(t);
            if (n < 0) {
                if (!d->failed) snprintf(d->err, d->errlen, "out of memory");
                return -1;
            }
        }
    }
    fprintf(stderr, "normtune run: %" PRIu64 " variants, %" PRIu64 " already measured, %" PRIu64
                    " to go\n", total, stored, total - stored);
    if (other)
        fprintf(stderr, "normtune run: %" PRIu64 " of those measured by other GPUs of the "
                        "model, reused\n", other);
    return 0;
}

int nt_drive(nt_sweep *sw, nt_evaluator *ev, const nt_store_ops *so, const nt_run_opts *o,
             nt_run_stats *st, char *err, size_t errlen) {
    static drive d0;
    drive d = d0;
    d.sw = sw;
    d.ev = ev;
    d.so = so;
    d.o = o;
    d.st = st;
    d.err = err;
    d.errlen = errlen;
    d.t0 = nt_now_s();
    int np = nt_sweep_nproblems(sw), rc = -1;
    nt_result *res = malloc(sizeof *res);
    memset(st, 0, sizeof *st);
    st->pick = calloc((size_t)np, sizeof *st->pick);
    st->pick_us = calloc((size_t)np, sizeof *st->pick_us);
    st->spent = calloc((size_t)np, sizeof *st->spent);
    if (!res || !st->pick || !st->pick_us || !st->spent) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int q = 0; q < np; q++) st->pick[q].fam = -1;
    d.stored_hints = o->nhist > 0;
    if (plan(&d)) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < o->nhist; i++)
        if (known_add(&d.k, &o->hist[i])) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
    /* no walk bracket: where() calls are budgeted one by one, so that the
     * time spent measuring never counts as the script's */
    if (!o->quiet) {
        int warm = !strcmp(sw->search.strategy, "warm");
        if (tune_adaptive(sw->search.strategy) && warm && d.stored_hints && sw->search.budget &&
            sw->search.budget_stored) {
            fprintf(stderr, "normtune run: %d problems, strategy %s, budget %" PRIu64 " per "
                            "problem (stored results at other shapes; %" PRIu64 " cold)\n",
                    np, sw->search.strategy, sw->search.budget_stored, sw->search.budget);
        } else if (tune_adaptive(sw->search.strategy)) {
            int nown = 0;
            for (int q = 0; q < np; q++) nown += nt_sweep_problem_budget(sw, q) > 0;
            fprintf(stderr, "normtune run: %d problems, strategy %s, budget %" PRIu64 " per "
                            "problem%s", np, sw->search.strategy, sw->search.budget,
                    !sw->search.budget ? " (none)" : d.anchor && !d.stored_hints &&
                    warm ? " on average (a cold campaign)" : "");
            if (nown && sw->search.budget)
                fprintf(stderr, "; %d with a budget of their own%s", nown,
                        d.anchor && !d.stored_hints && warm ? ", tuned last" : "");
            fputc('\n', stderr);
        } else if (count_stored(&d, res)) {
            goto out;
        }
        /* the families searched on their own (families.X.search) */
        int nown = 0;
        for (int f = 0; f < sw->nfam; f++)
            if (sw->fam[f].own) {
                fprintf(stderr, "%s %s %s", nown++ ? "," : "normtune run: searched on their own:",
                        sw->fam[f].fam->name, sw->fam[f].strategy);
                if (sw->fam[f].budget) fprintf(stderr, " %" PRIu64, sw->fam[f].budget);
            }
        if (nown) fputc('\n', stderr);
    }
    for (int q = 0; ev->expect && q < np; q++) {
        nt_problem p;
        nt_sweep_problem(sw, q, &p);
        ev->expect(ev->ctx, &p);
    }
    for (d.pos = 0; d.pos < np && !st->interrupted; d.pos++)
        if (run_problem(&d, d.order[d.pos], res)) goto out;
    if (!strcmp(sw->search.strategy, "warm") && !st->interrupted &&
        cross_pass(&d, res))
        goto out;
    rc = 0;
out:
    free(d.order);
    free(d.budget);
    free(d.anchor);
    free(d.cross);
    free(d.ospent);
    known_free(&d.k);
    free(res);
    return rc;
}
