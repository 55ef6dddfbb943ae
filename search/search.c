/* search.c -- search strategies over a finite parameter space.
 *
 * A space (search_space) is a list of dimensions with finite value lists; a
 * point is one value index per dimension, numbered in mixed radix with the
 * last dimension fastest.  A strategy is an entry of the strategies[] table
 * below (name plus start/next/report/free functions); search_start picks one
 * by name, so adding a strategy (e.g. "anneal") means adding a row.
 *
 *   exhaustive  every point once, in index order.
 *   random      distinct points drawn without replacement by a seeded
 *               PRNG (splitmix64), at most `budget` of them (0, or a budget
 *               larger than the space, means every point).  The same seed
 *               gives the same sequence on every machine: the draw is a
 *               sparse Fisher-Yates shuffle whose displaced slots live in a
 *               small hash table, so memory grows with the proposals made,
 *               never with the size of the space.
 *
 * search_report records every cost, keeps the best one seen and its point
 * (for strategies that steer by cost; exhaustive and random ignore it).
 * Plain C: no CUDA, Lua or SQLite. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/search.h"

/* ---- spaces ------------------------------------------------------------ */

/* Copy n value texts into a new dimension.  Returns 0, or -1 with a message
 * (too many dimensions, no values, too many values, a text too long, a
 * duplicate dimension name, out of memory).  The space owns the copies. */
int search_space_add(search_space *s, const char *name, const char *const *vals,
                     int n, char *err, size_t errlen) {
    if (s->ndim >= SEARCH_MAX_DIMS) {
        snprintf(err, errlen, "too many parameters: '%s' would be number %d, at most %d",
                 name, s->ndim + 1, SEARCH_MAX_DIMS);
        return -1;
    }
    if (!name || !*name || strlen(name) >= SEARCH_VAL_LEN) {
        snprintf(err, errlen, "parameter name '%s' must be 1 to %d characters",
                 name ? name : "", SEARCH_VAL_LEN - 1);
        return -1;
    }
    if (n <= 0) {
        snprintf(err, errlen, "parameter '%s' has an empty list of values", name);
        return -1;
    }
    if (n > SEARCH_MAX_VALUES) {
        snprintf(err, errlen, "parameter '%s' has %d values, at most %d", name, n,
                 SEARCH_MAX_VALUES);
        return -1;
    }
    for (int d = 0; d < s->ndim; d++)
        if (!strcmp(s->dim[d].name, name)) {
            snprintf(err, errlen, "parameter '%s' given twice", name);
            return -1;
        }
    for (int i = 0; i < n; i++)
        if (!vals[i] || strlen(vals[i]) >= SEARCH_VAL_LEN) {
            snprintf(err, errlen, "parameter '%s': value %d is missing or longer than %d characters",
                     name, i + 1, SEARCH_VAL_LEN - 1);
            return -1;
        }
    search_dim *dm = &s->dim[s->ndim];
    dm->val = calloc((size_t)n, sizeof *dm->val);
    if (!dm->val) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(dm->name, sizeof dm->name, "%s", name);
    for (int i = 0; i < n; i++) snprintf(dm->val[i], SEARCH_VAL_LEN, "%s", vals[i]);
    dm->nval = n;
    s->ndim++;
    return 0;
}

/* Free every dimension's values and leave an empty space. */
void search_space_clear(search_space *s) {
    for (int d = 0; d < s->ndim; d++) {
        free(s->dim[d].val);
        s->dim[d].val = NULL;
        s->dim[d].nval = 0;
    }
    s->ndim = 0;
}

/* Product of the value counts; 0 for an empty space.  Saturates at
 * UINT64_MAX (a space that large cannot be searched exhaustively anyway). */
uint64_t search_space_size(const search_space *s) {
    if (s->ndim <= 0) return 0;
    uint64_t n = 1;
    for (int d = 0; d < s->ndim; d++) {
        uint64_t v = (uint64_t)s->dim[d].nval;
        if (v == 0) return 0;
        if (n > UINT64_MAX / v) return UINT64_MAX;
        n *= v;
    }
    return n;
}

/* Decode point number i into idx[ndim], last dimension fastest. */
void search_space_point(const search_space *s, uint64_t i, int *idx) {
    for (int d = s->ndim - 1; d >= 0; d--) {
        uint64_t v = (uint64_t)s->dim[d].nval;
        idx[d] = (int)(i % v);
        i /= v;
    }
}

/* Inverse of search_space_point. */
static uint64_t point_index(const search_space *s, const int *idx) {
    uint64_t i = 0;
    for (int d = 0; d < s->ndim; d++) i = i * (uint64_t)s->dim[d].nval + (uint64_t)idx[d];
    return i;
}

/* ---- the state every strategy shares ----------------------------------- */

typedef struct strategy strategy;

struct search_state {
    const strategy *st;       /* the table row */
    const search_space *sp;   /* not owned */
    search_cfg cfg;
    uint64_t size;            /* points in the space */
    uint64_t limit;           /* most proposals this search makes */
    uint64_t count;           /* proposals made */
    uint64_t nreport;         /* costs reported */
    double best_cost;         /* lowest reported cost, INFINITY if none */
    int best_idx[SEARCH_MAX_DIMS]; /* its point */
    void *priv;               /* the strategy's own data */
};

/* A strategy: start sets st->limit and st->priv (0 or -1 + message); next
 * writes the point number of the next proposal (1) or says there is none
 * (0); report sees each cost; free releases priv. */
struct strategy {
    const char *name;
    int (*start)(search_state *st, char *err, size_t errlen);
    int (*next)(search_state *st, uint64_t *point);
    void (*report)(search_state *st, uint64_t point, double cost);
    void (*free)(search_state *st);
};

/* ---- exhaustive -------------------------------------------------------- */

static int exh_start(search_state *st, char *err, size_t errlen) {
    (void)err; (void)errlen;
    st->limit = st->size;
    return 0;
}

static int exh_next(search_state *st, uint64_t *point) {
    if (st->count >= st->limit) return 0;
    *point = st->count;                /* index order */
    return 1;
}

/* ---- random: sparse Fisher-Yates with splitmix64 ----------------------- */

/* One displaced slot of the virtual array 0..size-1: slot key holds val. */
typedef struct slot {
    uint64_t key, val;
    int used;
} slot;

typedef struct rnd {
    uint64_t s;               /* splitmix64 state */
    slot *tab;                /* open addressing, power-of-two capacity */
    size_t cap, n;
} rnd;

/* splitmix64 (Steele, Lea, Flood): a fixed, portable 64-bit generator. */
static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform integer in [0, r), r > 0, without modulo bias (rejection). */
static uint64_t uniform(uint64_t *s, uint64_t r) {
    uint64_t floor = (0 - r) % r;      /* 2^64 mod r */
    for (;;) {
        uint64_t x = splitmix64(s);
        if (x >= floor) return x % r;
    }
}

static size_t slot_hash(uint64_t k, size_t cap) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k & (cap - 1);
}

/* Slot for key k: its entry if present, else the empty slot where it goes. */
static slot *slot_find(rnd *r, uint64_t k) {
    size_t i = slot_hash(k, r->cap);
    while (r->tab[i].used && r->tab[i].key != k) i = (i + 1) & (r->cap - 1);
    return &r->tab[i];
}

/* Value at virtual position k (k itself unless displaced). */
static uint64_t slot_get(rnd *r, uint64_t k) {
    slot *e = slot_find(r, k);
    return e->used ? e->val : k;
}

/* Set position k to v, growing the table at half load.  0 or -1 (memory). */
static int slot_set(rnd *r, uint64_t k, uint64_t v) {
    if ((r->n + 1) * 2 > r->cap) {
        size_t ncap = r->cap * 2;
        slot *old = r->tab, *nt = calloc(ncap, sizeof *nt);
        if (!nt) return -1;
        size_t ocap = r->cap;
        r->tab = nt;
        r->cap = ncap;
        for (size_t i = 0; i < ocap; i++)
            if (old[i].used) *slot_find(r, old[i].key) = old[i];
        free(old);
    }
    slot *e = slot_find(r, k);
    if (!e->used) {
        e->used = 1;
        e->key = k;
        r->n++;
    }
    e->val = v;
    return 0;
}

static int rnd_start(search_state *st, char *err, size_t errlen) {
    rnd *r = calloc(1, sizeof *r);
    if (r) r->tab = calloc(64, sizeof *r->tab);
    if (!r || !r->tab) {
        if (r) free(r);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    r->cap = 64;
    r->s = st->cfg.seed;
    st->priv = r;
    st->limit = (st->cfg.budget == 0 || st->cfg.budget > st->size) ? st->size : st->cfg.budget;
    return 0;
}

/* Step k of the shuffle: swap position k with a uniform position in
 * [k, size) and propose what lands at k.  Distinct by construction. */
static int rnd_next(search_state *st, uint64_t *point) {
    rnd *r = st->priv;
    uint64_t k = st->count;
    if (k >= st->limit) return 0;
    uint64_t j = k + uniform(&r->s, st->size - k);
    uint64_t vj = slot_get(r, j), vk = slot_get(r, k);
    if (slot_set(r, j, vk)) {          /* out of memory: stop proposing */
        st->limit = st->count;
        return 0;
    }
    *point = vj;
    return 1;
}

static void rnd_free(search_state *st) {
    rnd *r = st->priv;
    if (r) free(r->tab);
    free(r);
    st->priv = NULL;
}

/* ---- draws without replacement, for search/tune.c ----------------------- */

struct search_draw {
    search_state st;          /* size, limit and count of the shuffle */
};

search_draw *search_draw_new(uint64_t size, uint64_t seed) {
    search_draw *d = calloc(1, sizeof *d);
    char err[64];
    if (!d) return NULL;
    d->st.size = size;
    d->st.cfg.seed = seed;
    if (rnd_start(&d->st, err, sizeof err)) {
        free(d);
        return NULL;
    }
    return d;
}

int search_draw_next(search_draw *d, uint64_t *out) {
    if (!d || !rnd_next(&d->st, out)) return 0;
    d->st.count++;
    return 1;
}

void search_draw_free(search_draw *d) {
    if (!d) return;
    rnd_free(&d->st);
    free(d);
}

uint64_t search_rand(uint64_t *s) {
    return splitmix64(s);
}

uint64_t search_mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* ---- the table --------------------------------------------------------- */

static const strategy strategies[] = {
    {"exhaustive", exh_start, exh_next, NULL, NULL},
    {"random", rnd_start, rnd_next, NULL, rnd_free},
};
#define NSTRATEGIES (sizeof strategies / sizeof strategies[0])

const char *const search_strategies[] = {"exhaustive", "random", "hillclimb", "warm", NULL};

/* ---- the driver calls -------------------------------------------------- */

/* Allocate a state for strategy c->strategy over s.  *out is the caller's,
 * released with search_free.  0, or -1 with a message naming the allowed
 * strategies when the name is unknown. */
int search_start(search_state **out, const search_space *s, const search_cfg *c,
                 char *err, size_t errlen) {
    const strategy *pick = NULL;
    *out = NULL;
    for (size_t i = 0; i < NSTRATEGIES; i++)
        if (!strncmp(c->strategy, strategies[i].name, sizeof c->strategy)) pick = &strategies[i];
    if (!pick) {
        char list[128];
        size_t used = 0;
        list[0] = 0;
        for (int i = 0; search_strategies[i] && used < sizeof list; i++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                     search_strategies[i]);
        snprintf(err, errlen, "unknown search strategy '%.*s' (allowed: %s)",
                 (int)sizeof c->strategy, c->strategy, list);
        return -1;
    }
    search_state *st = calloc(1, sizeof *st);
    if (!st) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    st->st = pick;
    st->sp = s;
    st->cfg = *c;
    st->size = search_space_size(s);
    st->best_cost = INFINITY;
    for (int d = 0; d < SEARCH_MAX_DIMS; d++) st->best_idx[d] = -1;
    if (pick->start(st, err, errlen)) {
        free(st);
        return -1;
    }
    *out = st;
    return 0;
}

/* Next proposal into idx[ndim]; 1, or 0 when the search is over. */
int search_next(search_state *st, int *idx) {
    uint64_t point;
    if (!st || st->count >= st->limit) return 0;
    if (!st->st->next(st, &point)) return 0;
    search_space_point(st->sp, point, idx);
    st->count++;
    return 1;
}

/* Note a proposal's cost: keep the lowest (ties: the first reported), then
 * let the strategy see it. */
void search_report(search_state *st, const int *idx, double cost) {
    if (!st || !idx) return;
    st->nreport++;
    if (cost < st->best_cost) {
        st->best_cost = cost;
        for (int d = 0; d < st->sp->ndim; d++) st->best_idx[d] = idx[d];
    }
    if (st->st->report) st->st->report(st, point_index(st->sp, idx), cost);
}

int search_done(const search_state *st) {
    return !st || st->count >= st->limit;
}

uint64_t search_count(const search_state *st) {
    return st ? st->count : 0;
}

/* Release the state and the strategy's data (the space is not touched). */
void search_free(search_state *st) {
    if (!st) return;
    if (st->st->free) st->st->free(st);
    free(st);
}
