/* tune.c -- the ask/tell strategies of search/tune.h, as a table.
 *
 * A search keeps every point it has looked at in a small hash table: those
 * proposed (with the costs told, summed) and those feasible() refused, so
 * that no point is checked or proposed twice.  A strategy row has a next()
 * that yields one point (1), says it must first hear the costs of what it
 * asked (WAIT), or that it is done (0); tune_ask calls it until the batch
 * is full, the budget is spent or it stops.  Random draws go through
 * search_draw over the union of the families' spaces (family spaces one
 * after the other), so a budget of 10 over a space of 10^18 points costs
 * about ten feasible() calls per point kept, never a walk. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/tune.h"

#define WAIT 2                /* next(): nothing until the costs are told */
#define PROBE_SPAN 1.10      /* warm: a family whose best hint is within this of the best is tried */
#define NEAR 2               /* a climb moves a parameter to its 1st or 2nd nearest value */
#define MAX_REFUSED (1u << 20) /* random draws refused in a row before giving up */

/* One point looked at. */
typedef struct ent {
    uint64_t key;             /* fam << 56 | pt, plus one (0 = empty slot) */
    int state;                /* 0 refused, 1 proposed */
    int n;                    /* costs told */
    int failed;               /* one of them was INFINITY */
    double sum;               /* sum of the finite costs */
} ent;

typedef struct strat strat;

struct tune {
    const strat *s;
    tune_env env;
    uint64_t total;           /* points in all families */
    uint64_t start[TUNE_MAX_FAMILIES + 1]; /* first union number of each family */
    ent *tab;                 /* open addressing, power-of-two capacity */
    size_t cap, n;
    uint64_t spent, checks, pending;
    search_draw *draw;        /* random points, made on first use */
    int drawn_out;            /* the draw has nothing left */
    /* exhaustive */
    int cur_f;
    uint64_t cur_pt;
    /* hillclimb and warm */
    tune_pt *q;               /* points to propose next */
    size_t nq, capq;
    int have_center;          /* the point last expanded */
    tune_pt center;
    int nhint_used;           /* warm: hints proposed */
    int hint_i;               /* warm: next hint to look at */
    unsigned famseen;         /* bit f: a point of family f was proposed */
    int probe_f;              /* warm: next family to try once */
    search_draw *fdraw[TUNE_MAX_FAMILIES]; /* random points of one family */
    int fdrawn_out[TUNE_MAX_FAMILIES];
};

struct strat {
    const char *name;
    int adaptive;
    int (*next)(tune *t, tune_pt *p);
};

/* ---- the table of points looked at ------------------------------------- */

static uint64_t key_of(tune_pt p) {
    return (((uint64_t)p.fam << 56) | p.pt) + 1;
}

static size_t slot_of(const tune *t, uint64_t key) {
    size_t i = (size_t)search_mix(key) & (t->cap - 1);
    while (t->tab[i].key && t->tab[i].key != key) i = (i + 1) & (t->cap - 1);
    return i;
}

static ent *find(const tune *t, tune_pt p) {
    if (!t->cap) return NULL;
    size_t i = slot_of(t, key_of(p));
    return t->tab[i].key ? &t->tab[i] : NULL;
}

/* The entry of p, added (state 0) if new; NULL when out of memory. */
static ent *add(tune *t, tune_pt p) {
    if ((t->n + 1) * 2 > t->cap) {
        size_t ocap = t->cap, ncap = ocap ? 2 * ocap : 256;
        ent *old = t->tab, *nt = calloc(ncap, sizeof *nt);
        if (!nt) return NULL;
        t->tab = nt;
        t->cap = ncap;
        for (size_t i = 0; i < ocap; i++)
            if (old[i].key) t->tab[slot_of(t, old[i].key)] = old[i];
        free(old);
    }
    size_t i = slot_of(t, key_of(p));
    if (!t->tab[i].key) {
        t->tab[i].key = key_of(p);
        t->n++;
    }
    return &t->tab[i];
}

static tune_pt pt_of(uint64_t key) {
    tune_pt p = {(int)((key - 1) >> 56), (key - 1) & ((1ULL << 56) - 1)};
    return p;
}

/* Mean cost of an entry; INFINITY when it failed or has none. */
static double cost_of(const ent *e) {
    return e->n && !e->failed ? e->sum / e->n : INFINITY;
}

/* Is p new and feasible?  Marks it looked at.  1, 0, or -1 (feasible()'s
 * error). */
static int fresh(tune *t, tune_pt p) {
    if (find(t, p)) return 0;
    ent *e = add(t, p);
    if (!e) return -1;
    t->checks++;
    int ok = t->env.feasible ? t->env.feasible(t->env.ctx, p) : 1;
    if (ok < 0) return -1;
    e->state = ok ? 1 : 0;
    return ok;
}

/* The point of union number u. */
static tune_pt from_union(const tune *t, uint64_t u) {
    tune_pt p = {0, u};
    while (p.fam + 1 < t->env.nfam && u >= t->start[p.fam + 1]) p.fam++;
    p.pt = u - t->start[p.fam];
    return p;
}

/* A new feasible point drawn at random: 1, 0 when there is none left (or
 * MAX_REFUSED draws in a row were refused), -1 on an error. */
static int random_point(tune *t, tune_pt *p) {
    uint64_t u;
    if (t->drawn_out) return 0;
    if (!t->draw && !(t->draw = search_draw_new(t->total, t->env.seed))) return -1;
    for (unsigned refused = 0; refused < MAX_REFUSED; refused++) {
        if (!search_draw_next(t->draw, &u)) break;
        *p = from_union(t, u);
        int r = fresh(t, *p);
        if (r) return r;
    }
    t->drawn_out = 1;
    return 0;
}

/* A new feasible point of family f drawn at random: 1, 0, -1. */
static int random_in(tune *t, int f, tune_pt *p) {
    uint64_t u;
    if (t->fdrawn_out[f]) return 0;
    if (!t->fdraw[f] && !(t->fdraw[f] = search_draw_new(search_space_size(t->env.space[f]),
                                                        search_mix(t->env.seed + (uint64_t)f))))
        return -1;
    for (unsigned refused = 0; refused < MAX_REFUSED; refused++) {
        if (!search_draw_next(t->fdraw[f], &u)) break;
        p->fam = f;
        p->pt = u;
        int r = fresh(t, *p);
        if (r) return r;
    }
    t->fdrawn_out[f] = 1;
    return 0;
}

/* The best point told so far (lowest mean cost): 1, or 0 when none. */
static int best_of(const tune *t, tune_pt *p, double *cost) {
    double bc = INFINITY;
    uint64_t bk = 0;
    for (size_t i = 0; i < t->cap; i++) {
        const ent *e = &t->tab[i];
        if (!e->key || e->state != 1) continue;
        double c = cost_of(e);
        if (c < bc || (c == bc && bk && e->key < bk)) {   /* ties: the lower key */
            bc = c;
            bk = e->key;
        }
    }
    if (!bk) return 0;
    *p = pt_of(bk);
    if (cost) *cost = bc;
    return 1;
}

static int push(tune *t, tune_pt p) {
    if (t->nq == t->capq) {
        size_t cap = t->capq ? 2 * t->capq : 64;
        tune_pt *q = realloc(t->q, cap * sizeof *q);
        if (!q) return -1;
        t->q = q;
        t->capq = cap;
    }
    t->q[t->nq++] = p;
    return 0;
}

/* The point of family f at values idx. */
static tune_pt at(const search_space *sp, int f, const int *idx) {
    uint64_t u = 0;
    for (int e = 0; e < sp->ndim; e++) u = u * (uint64_t)sp->dim[e].nval + (uint64_t)idx[e];
    tune_pt n = {f, u};
    return n;
}

/* Look at point n: 1 when it can run (queued if new, *added counted), 0
 * when it cannot, -1 on an error. */
static int consider(tune *t, tune_pt n, int *added) {
    const ent *e = find(t, n);
    if (e) return e->state;
    int r = fresh(t, n);
    if (r != 1) return r;
    if (push(t, n)) return -1;
    (*added)++;
    return 1;
}

/* The nearest point to idx (which cannot run) that can, found by moving
 * one dimension other than skip (-1: any) to its nearest value that makes
 * it runnable (a family's coupled parameters: a block size that moves
 * takes its chunks along).  1 with it in *n and *isnew (a point not looked
 * at before), 0 when none can, -1 on an error. */
static int nearest_runnable(tune *t, const search_space *sp, int f, const int *idx, int skip,
                            tune_pt *n, int *isnew) {
    int j[SEARCH_MAX_DIMS], far = 0;
    for (int e = 0; e < sp->ndim; e++) far = sp->dim[e].nval > far ? sp->dim[e].nval : far;
    for (int dist = 1; dist < far; dist++)
        for (int e = 0; e < sp->ndim; e++)
            for (int sign = -1; e != skip && sign <= 1; sign += 2) {
                int w = idx[e] + sign * dist;
                if (w < 0 || w >= sp->dim[e].nval) continue;
                memcpy(j, idx, (size_t)sp->ndim * sizeof *j);
                j[e] = w;
                *n = at(sp, f, j);
                const ent *known = find(t, *n);
                *isnew = !known;
                int r = known ? known->state : fresh(t, *n);
                if (r) return r;
            }
    return 0;
}

/* idx, which cannot run, repaired by moving one other dimension than d
 * (nearest_runnable); the repaired point queued when new.  As consider(). */
static int repair(tune *t, const search_space *sp, int f, const int *idx, int d, int *added) {
    tune_pt n;
    int isnew = 0, r = nearest_runnable(t, sp, f, idx, d, &n, &isnew);
    if (r == 1 && isnew) {
        if (push(t, n)) return -1;
        (*added)++;
    }
    return r;
}

/* Queue the new feasible neighbours of c: each parameter moved to the
 * nearest value up, and down, that the point can run with, then to the
 * second nearest; the others kept, or, where the moved value cannot run
 * with them, one other moved as little as makes it runnable (repair()); a
 * value that cannot run either way is stepped over.  Their number, or
 * -1. */
static int expand(tune *t, tune_pt c) {
    const search_space *sp = t->env.space[c.fam];
    int idx[SEARCH_MAX_DIMS], j[SEARCH_MAX_DIMS], added = 0;
    search_space_point(sp, c.pt, idx);
    for (int reach = 1; reach <= NEAR; reach++)
        for (int d = 0; d < sp->ndim; d++)
            for (int delta = -1; delta <= 1; delta += 2) {
                int found = 0;
                for (int v = idx[d] + delta; v >= 0 && v < sp->dim[d].nval; v += delta) {
                    memcpy(j, idx, (size_t)sp->ndim * sizeof *j);
                    j[d] = v;
                    int r = consider(t, at(sp, c.fam, j), &added);
                    if (!r) r = repair(t, sp, c.fam, j, d, &added);
                    if (r < 0) return -1;
                    if (r && ++found == reach) break;   /* the reach-th runnable value */
                }
            }
    return added;
}

/* Order q[from..nq) by the hints' scores, the best first; points no hint
 * names keep their order, after the others (stable).  With a small budget
 * the climb reaches only the first few neighbours of its centre: those
 * the hints rank highest. */
static int order_by_hint(tune *t, size_t from) {
    size_t n = t->nq - from;
    if (n < 2 || !t->env.nhint) return 0;
    double *sc = malloc(n * sizeof *sc);
    if (!sc) return -1;
    for (size_t i = 0; i < n; i++) {
        sc[i] = INFINITY;
        for (int h = 0; h < t->env.nhint; h++)
            if (key_of(t->env.hint[h].p) == key_of(t->q[from + i])) {
                sc[i] = t->env.hint[h].score;
                break;
            }
    }
    for (size_t i = 1; i < n; i++) {      /* insertion sort: a few dozen points */
        tune_pt x = t->q[from + i];
        double sx = sc[i];
        size_t j = i;
        while (j > 0 && sc[j - 1] > sx) {
            t->q[from + j] = t->q[from + j - 1];
            sc[j] = sc[j - 1];
            j--;
        }
        t->q[from + j] = x;
        sc[j] = sx;
    }
    free(sc);
    return 0;
}

/* One step of a climb: the queue first; then, once every cost is told,
 * the neighbours of a new best, in the order of their hints.  1 with a
 * point, WAIT, or 0 when the best has been expanded already (a local
 * optimum) and the queue is empty. */
static int climb(tune *t, tune_pt *p) {
    tune_pt b;
    for (;;) {
        if (t->nq) {
            *p = t->q[0];
            memmove(t->q, t->q + 1, --t->nq * sizeof *t->q);
            return 1;
        }
        if (t->pending) return WAIT;
        if (!best_of(t, &b, NULL)) return 0;
        if (t->have_center && key_of(b) == key_of(t->center)) return 0;
        t->center = b;
        t->have_center = 1;
        size_t from = t->nq;
        if (expand(t, b) < 0 || order_by_hint(t, from)) return -1;
    }
}

/* ---- the strategies ---------------------------------------------------- */

static int exh_next(tune *t, tune_pt *p) {
    while (t->cur_f < t->env.nfam) {
        uint64_t size = search_space_size(t->env.space[t->cur_f]);
        if (t->cur_pt >= size) {
            t->cur_f++;
            t->cur_pt = 0;
            continue;
        }
        tune_pt c = {t->cur_f, t->cur_pt++};
        int r = fresh(t, c);
        if (r) {
            *p = c;
            return r;
        }
    }
    return 0;
}

static int rnd_next(tune *t, tune_pt *p) {
    return random_point(t, p);
}

/* Climb; at a local optimum start again from a random point. */
static int hill_next(tune *t, tune_pt *p) {
    int r = climb(t, p);
    if (r) return r;
    if ((r = random_point(t, p)) == 1) t->have_center = 0;
    return r;
}

/* The next hint not looked at yet: 1, 0 (none left), -1.  A hint that
 * cannot run at this shape (measured at others: its chunks cover another
 * N) is translated to the nearest point that can (nearest_runnable), when
 * that one is new: when exploring, when it is the best hint of a family
 * not proposed yet (within PROBE_SPAN of the first hint), or when its
 * score is within env.translate of the first hint's. */
static int next_hint(tune *t, tune_pt *p) {
    while (t->hint_i < t->env.nhint) {
        double score = t->env.hint[t->hint_i].score;
        tune_pt c = t->env.hint[t->hint_i++].p;
        if (c.fam < 0 || c.fam >= t->env.nfam ||
            c.pt >= search_space_size(t->env.space[c.fam]))
            continue;
        int seen = find(t, c) != NULL, r = fresh(t, c);
        double first = t->env.hint[0].score;
        if (!r && !seen &&
            (t->env.explore || (t->env.translate > 0 && score <= first * t->env.translate) ||
             (!(t->famseen & (1u << c.fam)) && score <= first * PROBE_SPAN))) {
            const search_space *sp = t->env.space[c.fam];
            int idx[SEARCH_MAX_DIMS], isnew = 0;
            search_space_point(sp, c.pt, idx);
            r = nearest_runnable(t, sp, c.fam, idx, -1, &c, &isnew);
            if (r == 1 && !isnew) r = 0;
        }
        if (r) {
            *p = c;
            t->nhint_used++;
            return r;
        }
    }
    return 0;
}

/* Hints, then a climb.  Without a budget: every hint, then the climb to
 * a local optimum.  The driver then measures the closest points again,
 * interleaved, before it names the pick (search/drive.c, rematch_one): a
 * proposal here is one measurement of a new point. */
static int warm_next(tune *t, tune_pt *p) {
    uint64_t b = t->env.budget;
    if (!b && t->hint_i >= t->env.nhint && t->nq == 0 && t->have_center) {
        tune_pt c;              /* no budget: over once the climb is */
        int r = t->pending ? WAIT : climb(t, &c);
        if (r == 1) *p = c;
        return r;
    }
    /* hints: half the budget (all of them without one) */
    uint64_t quota = t->env.hint_quota > 0 ? (uint64_t)t->env.hint_quota : b ? b : UINT64_MAX;
    if ((uint64_t)t->nhint_used < quota && (t->nhint_used == 0 || !t->env.explore)) {
        int r = next_hint(t, p);
        if (r) return r;
    }
    /* every family once (but those of skip_fam): its best hint, else a
     * random point of it */
    while (t->env.explore && t->probe_f < t->env.nfam) {
        int f = t->probe_f++, r = 0, known = 0;
        if ((t->famseen | t->env.skip_fam) & (1u << f) || !search_space_size(t->env.space[f]))
            continue;         /* (an empty space: a family this search leaves out) */
        for (int i = 0; i < t->env.nhint && !r; i++) {
            if (t->env.hint[i].p.fam != f) continue;
            known = 1;          /* a family known to be far behind is skipped */
            if (t->env.hint[i].score > t->env.hint[0].score * PROBE_SPAN) break;
            if ((r = fresh(t, t->env.hint[i].p)) == 1) *p = t->env.hint[i].p;
        }
        if (!r && !known) r = random_in(t, f, p);
        if (r) return r;
    }
    if ((uint64_t)t->nhint_used < quota) {
        int r = next_hint(t, p);
        if (r) return r;
    }
    int r = climb(t, p);
    if (r) return r;
    if ((r = next_hint(t, p))) return r;  /* at an optimum: the other hints */
    if ((r = random_point(t, p)) == 1) t->have_center = 0;
    return r;
}

static const strat strats[] = {
    {"exhaustive", 0, exh_next},
    {"random", 0, rnd_next},
    {"hillclimb", 1, hill_next},
    {"warm", 1, warm_next},
};
#define NSTRATS (sizeof strats / sizeof strats[0])

/* ---- the calls --------------------------------------------------------- */

int tune_adaptive(const char *name) {
    for (size_t i = 0; i < NSTRATS; i++)
        if (!strcmp(name, strats[i].name)) return strats[i].adaptive;
    return 0;
}

int tune_start(tune **out, const char *name, const tune_env *env, char *err, size_t errlen) {
    const strat *s = NULL;
    *out = NULL;
    for (size_t i = 0; i < NSTRATS; i++)
        if (!strcmp(name, strats[i].name)) s = &strats[i];
    if (!s) {
        snprintf(err, errlen, "unknown search strategy '%s' (allowed: exhaustive, random, "
                              "hillclimb, warm)", name);
        return -1;
    }
    if (env->nfam < 1 || env->nfam > TUNE_MAX_FAMILIES) {
        snprintf(err, errlen, "a search needs 1 to %d families, got %d", TUNE_MAX_FAMILIES,
                 env->nfam);
        return -1;
    }
    tune *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    t->s = s;
    t->env = *env;
    if (s->next == exh_next) t->env.budget = 0;   /* every point, whatever the budget */
    for (int f = 0; f < env->nfam; f++) {
        uint64_t size = search_space_size(env->space[f]);
        t->start[f] = t->total;
        t->total = t->total + size < t->total ? UINT64_MAX : t->total + size;
    }
    t->start[env->nfam] = t->total;
    *out = t;
    return 0;
}

int tune_ask(tune *t, tune_pt *out, int n) {
    int got = 0;
    while (got < n) {
        if (t->env.budget && t->spent >= t->env.budget) break;
        tune_pt p;
        int r = t->s->next(t, &p);
        if (r < 0) return -1;
        if (r != 1) break;
        out[got++] = p;
        t->famseen |= 1u << p.fam;
        t->spent++;
        t->pending++;
    }
    return got;
}

void tune_tell(tune *t, tune_pt p, double cost) {
    ent *e = find(t, p);
    if (!e || e->state != 1) return;
    if (t->pending) t->pending--;
    e->n++;
    if (isfinite(cost))
        e->sum += cost;
    else
        e->failed = 1;
}

int tune_best(const tune *t, tune_pt *p, double *cost) {
    double c;
    if (!best_of(t, p, &c) || !isfinite(c)) return -1;
    if (cost) *cost = c;
    return 0;
}

uint64_t tune_spent(const tune *t) {
    return t->spent;
}

uint64_t tune_checks(const tune *t) {
    return t->checks;
}

void tune_free(tune *t) {
    if (!t) return;
    search_draw_free(t->draw);
    for (int f = 0; f < TUNE_MAX_FAMILIES; f++) search_draw_free(t->fdraw[f]);
    free(t->tab);
    free(t->q);
    free(t);
}
