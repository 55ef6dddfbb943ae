/* enumerate.c -- nt_enumerate (search/enumerate.h): the walk over a sweep
 * script's shapes x families x points that `list`, `compile` and the sweep
 * driver share, with its determinism check and progress line.  The `list`
 * command that prints the walk is in tuner/cmd_list.c. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "search/enumerate.h"
#include "search/search.h"
#include "search/tune.h"

#define PROGRESS_MIN 1000000   /* point visits from which a terminal sees progress */
#define PROGRESS_EVERY 0.25    /* seconds between progress updates */
#define POLL_MASK 1023         /* budget and progress looked at every 1024 points */

/* One nt_enumerate call: the sweep, the callback, the error buffer, and the
 * progress line ("enumerating: 1.2M of 4.0M points" on a terminal). */
typedef struct walker {
    nt_sweep *sw;
    nt_enum_fn fn;
    void *ctx;
    uint64_t *counts;         /* filled by the check's first walk, or NULL */
    char *err;
    size_t errlen;
    uint64_t done, total;     /* point visits so far, in all */
    int show;                 /* a progress line may be drawn */
    int shown;                /* one is on the screen */
    double next;              /* earliest time of the next update */
} walker;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* n as "999", "12.3k" or "4.0M" into buf. */
static const char *human(uint64_t n, char *buf, size_t len) {
    if (n >= 1000000)
        snprintf(buf, len, "%.1fM", (double)n / 1e6);
    else if (n >= 1000)
        snprintf(buf, len, "%.1fk", (double)n / 1e3);
    else
        snprintf(buf, len, "%" PRIu64, n);
    return buf;
}

/* Draw the progress line, at most every PROGRESS_EVERY seconds. */
static void progress(walker *w) {
    char a[32], b[32];
    double t = now_s();
    if (t < w->next) return;
    w->next = t + PROGRESS_EVERY;
    fprintf(stderr, "\renumerating: %s of %s points", human(w->done, a, sizeof a),
            human(w->total, b, sizeof b));
    fflush(stderr);
    w->shown = 1;
}

/* Count a visit; now and then look at the budget and the progress line.
 * 0, or -1 with a message (the where() budget is spent). */
static int tick(walker *w) {
    if ((++w->done & POLL_MASK) == 0) {
        if (w->sw->script && w->sw->script->walk_poll(w->sw, w->err, w->errlen)) return -1;
        if (w->show) progress(w);
    }
    return 0;
}

/* Mix of the bits of x (splitmix64's finalizer). */
static uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Hash of one visit: problem s, family f, point number i (< NT_SWEEP_MAX_SPACE),
 * accepted or not.  Summed per problem, so the order of visits does not
 * matter. */
static uint64_t visit_hash(int s, int f, uint64_t i, int acc) {
    return mix64(((uint64_t)s << 40) ^ ((uint64_t)f << 32) ^ (i << 1) ^ (uint64_t)(acc != 0));
}

/* Check one point (the family's check(), then where()); call fn when
 * accepted.  Sets *acc.  0, or -1 with a message in err. */
static int visit(walker *w, int s, int f, const int *idx, nt_enum_fn fn, int *acc) {
    nt_sweep *sw = w->sw;
    nt_params p;
    nt_problem pr;
    nt_sweep_point_params(sw, f, idx, &p);
    nt_sweep_problem(sw, s, &pr);
    if (nt_sweep_feasible(sw, f, &p, &pr, acc, w->err, w->errlen)) return -1;
    if (*acc && fn && fn(w->ctx, sw, s, f, idx, &p, w->err, w->errlen)) return -1;
    return tick(w);
}

/* Position j of a pseudo-random permutation of [0, size) chosen by key:
 * a bijection of [0, 2^bits) (multiply by an odd number, add, xor-shift)
 * applied until it lands below size ("cycle walking"). */
static uint64_t permute(uint64_t j, uint64_t size, uint64_t key) {
    int bits = 1;
    while (bits < 63 && (1ULL << bits) < size) bits++;
    uint64_t mask = (1ULL << bits) - 1, x = j;
    do {
        x = (x * 0x9e3779b97f4a7c15ULL + key) & mask;
        x ^= x >> (bits / 2 + 1);
        x = (x * 0xbf58476d1ce4e5b9ULL) & mask;
        x ^= x >> (bits / 2 + 1);
    } while (x >= size);
    return x;
}

/* Every point of family f's space for problem s: in order, or (scramble) in
 * a pseudo-random order of its own, so that a where() that keeps state
 * between calls sees other neighbours.  Adds the accepted points to *n and
 * the visits' hashes to *h. */
static int walk_space(walker *w, int s, int f, int scramble, nt_enum_fn fn, uint64_t *n,
                      uint64_t *h) {
    const search_space *sp = &w->sw->fam[f].space;
    uint64_t size = search_space_size(sp), key = mix64((uint64_t)s * 31 + (uint64_t)f + 1);
    int idx[SEARCH_MAX_DIMS], acc;
    for (uint64_t j = 0; j < size; j++) {
        uint64_t i = scramble ? permute(j, size, key) : j;
        search_space_point(sp, i, idx);
        if (visit(w, s, f, idx, fn, &acc)) return -1;
        *n += (uint64_t)acc;
        *h += visit_hash(s, f, i, acc);
    }
    return 0;
}

/* What the strategy walk's feasible() needs. */
typedef struct twalk {
    walker *w;
    int s;
    uint64_t *h;              /* the visits' hashes */
} twalk;

/* feasible() of the strategy walk: a visit (check, where) without the
 * callback, hashed. */
static int twalk_feasible(void *ctx, tune_pt p) {
    twalk *c = ctx;
    int idx[SEARCH_MAX_DIMS], acc;
    search_space_point(&c->w->sw->fam[p.fam].space, p.pt, idx);
    if (visit(c->w, c->s, p.fam, idx, NULL, &acc)) return -1;
    *c->h += visit_hash(c->s, p.fam, p.pt, acc);
    return acc;
}

static int walk_random(walker *w, int s, int only, uint64_t budget, nt_enum_fn fn, uint64_t *n,
                       uint64_t *h);

/* The points the script's random searches (no costs needed) propose for
 * problem s, as `run` draws them (search/drive.c: the same passes, seeds,
 * budgets and feasibility), and every point of the families searched
 * otherwise (an adaptive search may visit any, an exhaustive one visits
 * all): fn for each, the accepted ones per family added to n[f], the
 * visits' hashes to *h.  0 or -1. */
static int walk_strategy(walker *w, int s, nt_enum_fn fn, uint64_t *n, uint64_t *h) {
    nt_sweep *sw = w->sw;
    for (int i = 0; i < nt_sweep_npasses(sw); i++) {
        int only;
        const char *strategy;
        uint64_t budget;
        nt_sweep_pass(sw, i, &only, &strategy, &budget);
        if (!strcmp(strategy, "random")) {
            if (walk_random(w, s, only, budget, fn, n, h)) return -1;
            continue;
        }
        for (int f = 0; f < sw->nfam; f++)
            if ((only < 0 ? !sw->fam[f].own : f == only) && walk_space(w, s, f, 0, fn, &n[f], h))
                return -1;
    }
    return 0;
}

/* The random draws of pass `only` of problem s (walk_strategy). */
static int walk_random(walker *w, int s, int only, uint64_t budget, nt_enum_fn fn, uint64_t *n,
                       uint64_t *h) {
    nt_sweep *sw = w->sw;
    twalk c = {w, s, h};
    tune_env env;
    tune *t = NULL;
    tune_pt pts[64];
    char msg[256];
    int k, rc = 0;
    memset(&env, 0, sizeof env);
    env.nfam = sw->nfam;
    nt_sweep_pass_spaces(sw, only, env.space);
    env.feasible = twalk_feasible;
    env.ctx = &c;
    env.budget = budget;
    env.seed = nt_sweep_pass_seed(sw, s, 0, only);
    if (tune_start(&t, "random", &env, msg, sizeof msg)) {
        snprintf(w->err, w->errlen, "%s: %s", sw->path, msg);
        return -1;
    }
    while (!rc && (k = tune_ask(t, pts, 64)) != 0) {
        if (k < 0) {
            rc = -1;
            break;
        }
        for (int i = 0; i < k && !rc; i++) {
            int idx[SEARCH_MAX_DIMS];
            nt_params p;
            search_space_point(&sw->fam[pts[i].fam].space, pts[i].pt, idx);
            nt_sweep_point_params(sw, pts[i].fam, idx, &p);
            n[pts[i].fam]++;
            if (fn && fn(w->ctx, sw, s, pts[i].fam, idx, &p, w->err, w->errlen)) rc = -1;
        }
    }
    tune_free(t);
    return rc;
}

/* Visits of one walk: exhaustive, or through the strategy (its budget). */
static uint64_t walk_size(const nt_sweep *sw, int mode) {
    uint64_t n = 0;
    for (int f = 0; f < sw->nfam; f++) {
        uint64_t size = search_space_size(&sw->fam[f].space);
        uint64_t b = sw->fam[f].own ? sw->fam[f].budget : sw->search.budget;
        if (mode == NT_ENUM_STRATEGY && b && b < size)
            size = b;                   /* about: the budget is per problem */
        n += size;
    }
    return n * (uint64_t)nt_sweep_nproblems(sw);
}

/* "M=.. N=.. dtypes (shapes[i], dtypes[j])": problem s for messages. */
static void problem_text(const nt_sweep *sw, int s, char *buf, size_t len) {
    nt_problem p;
    char t[160];
    int d, i, own;
    nt_sweep_problem(sw, s, &p);
    nt_problem_text(&p, t, sizeof t);
    own = nt_sweep_problem_at(sw, s, &d, &i);
    if (own)
        snprintf(buf, len, "%s (dtypes[%d].shapes[%d])", t, d + 1, i + 1);
    else if (sw->ndt > 1)
        snprintf(buf, len, "%s (shapes[%d], dtypes[%d])", t, i + 1, d + 1);
    else
        snprintf(buf, len, "%s (shapes[%d])", t, i + 1);
}

/* "file: where() is not deterministic: ..." for problem s into err. */
static int not_deterministic(walker *w, int s, uint64_t was, uint64_t now) {
    const nt_sweep *sw = w->sw;
    char how[96], pt[256];
    problem_text(sw, s, pt, sizeof pt);
    if (was != now)
        snprintf(how, sizeof how, "%" PRIu64 " points, where an earlier walk accepted %" PRIu64, now,
                 was);
    else
        snprintf(how, sizeof how, "other points than an earlier walk (%" PRIu64 " of them)", now);
    snprintf(w->err, w->errlen,
             "%s: where() is not deterministic: for %s it accepted %s; where() must depend "
             "only on p and s (no math.random, no state kept between calls)",
             sw->path, pt, how);
    return -1;
}

/* Accepted points of problem s in the reference walk. */
static uint64_t ref_total(const nt_sweep *sw, int s) {
    uint64_t n = 0;
    for (int f = 0; f < sw->nfam; f++) n += sw->ref_count[(size_t)s * (size_t)sw->nfam + (size_t)f];
    return n;
}

/* The determinism check: two exhaustive walks, the second with problems,
 * families and points in other orders; the per-problem hashes must agree.
 * Keeps the first walk's hashes and counts in sw->ref_hash/ref_count.
 * 0, or -1 with a message naming the first problem that differs. */
static int check_walks(walker *w) {
    nt_sweep *sw = w->sw;
    int np = nt_sweep_nproblems(sw);
    size_t ns = (size_t)np, nf = (size_t)sw->nfam;
    uint64_t *h = calloc(4 * ns, sizeof *h), *cnt = calloc(ns * nf, sizeof *cnt);
    if (!h || !cnt) {
        free(h);
        free(cnt);
        snprintf(w->err, w->errlen, "out of memory");
        return -1;
    }
    uint64_t *tot = h + 2 * ns;   /* [pass * ns + s]: hashes in h, totals in tot */
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < np; k++) {
            int s = pass ? np - 1 - k : k;
            size_t at = (size_t)pass * ns + (size_t)s;
            for (int j = 0; j < sw->nfam; j++) {
                int f = pass ? sw->nfam - 1 - j : j;
                uint64_t n = 0;
                if (walk_space(w, s, f, pass, NULL, &n, &h[at])) goto fail;
                if (!pass) cnt[(size_t)s * nf + (size_t)f] = n;
                if (!pass && w->counts) w->counts[(size_t)s * nf + (size_t)f] = n;
                tot[at] += n;
            }
            if (!pass && tot[at] == 0) {
                char pt[256];
                problem_text(sw, s, pt, sizeof pt);
                snprintf(w->err, w->errlen, "%s: %s: no variant left after where constraints",
                         sw->path, pt);
                goto fail;
            }
        }
    for (int s = 0; s < np; s++)
        if (h[s] != h[ns + (size_t)s]) {
            not_deterministic(w, s, tot[s], tot[ns + (size_t)s]);
            goto fail;
        }
    sw->ref_hash = h;         /* the first ns entries: the first walk's */
    sw->ref_count = cnt;
    return 0;
fail:
    free(h);
    free(cnt);
    return -1;
}

/* Run the check of check_walks once per sweep (see enumerate.h). */
int nt_enum_check(nt_sweep *sw, char *err, size_t errlen) {
    return nt_enumerate(sw, NT_ENUM_EXHAUSTIVE, NULL, NULL, NULL, err, errlen);
}

/* Walk the sweep (see enumerate.h): the determinism check first when it
 * has not run; an exhaustive count without a callback is the check's. */
int nt_enumerate(nt_sweep *sw, int mode, nt_enum_fn fn, void *ctx, uint64_t *counts,
                 char *err, size_t errlen) {
    int check = !sw->ref_hash, reuse = mode == NT_ENUM_EXHAUSTIVE && !fn, rc = -1;
    walker w = {sw, fn, ctx, reuse ? counts : NULL, err, errlen, 0, 0, 0, 0, 0};
    size_t nf = (size_t)sw->nfam, np = (size_t)nt_sweep_nproblems(sw);
    w.total = (check ? 2 * walk_size(sw, NT_ENUM_EXHAUSTIVE) : 0) + (reuse ? 0 : walk_size(sw, mode));
    w.show = w.total >= PROGRESS_MIN && isatty(2);
    if (counts) memset(counts, 0, np * nf * sizeof *counts);
    if (sw->script && sw->script->walk_begin(sw, err, errlen)) return -1;
    if (check && check_walks(&w)) goto out;
    if (fn && w.show && isatty(1)) {  /* list prints the variants there: no line */
        if (w.shown) fputs("\r\033[K", stderr);
        w.show = w.shown = 0;
    }
    if (reuse) {
        if (counts) memcpy(counts, sw->ref_count, np * nf * sizeof *counts);
        rc = 0;
        goto out;
    }
    if (mode == NT_ENUM_STRATEGY && !sw->ref_strat &&
        !(sw->ref_strat = calloc(np, sizeof *sw->ref_strat))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int s = 0; s < (int)np; s++) {
        uint64_t total = 0, h = 0, n[NT_SWEEP_MAX_FAMILIES] = {0};
        if (mode == NT_ENUM_STRATEGY && walk_strategy(&w, s, fn, n, &h)) goto out;
        for (int f = 0; f < sw->nfam; f++) {
            if (mode != NT_ENUM_STRATEGY && walk_space(&w, s, f, 0, fn, &n[f], &h)) goto out;
            if (counts) counts[(size_t)s * nf + (size_t)f] = n[f];
            total += n[f];
        }
        /* the same points as the check's walk (or the first strategy walk) */
        if (mode == NT_ENUM_EXHAUSTIVE && h != sw->ref_hash[s]) {
            not_deterministic(&w, s, ref_total(sw, s), total);
            goto out;
        }
        if (mode == NT_ENUM_STRATEGY) {
            if (!sw->ref_strat[s]) sw->ref_strat[s] = h | 1;  /* 0 = not yet */
            if (sw->ref_strat[s] != (h | 1)) {
                not_deterministic(&w, s, total, total);
                goto out;
            }
        }
    }
    rc = 0;
out:
    if (sw->script) sw->script->walk_end(sw);
    if (w.shown) {            /* erase the progress line */
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    return rc;
}
