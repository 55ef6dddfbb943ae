/* search.c -- parameter spaces and the seeded draws the search makes.
 *
 * A space (search_space) is a list of dimensions with finite value lists; a
 * point is one value index per dimension, numbered in mixed radix with the
 * last dimension fastest.  The strategies that walk spaces are the ask/tell
 * table of search/tune.c.
 *
 * A draw (search_draw) gives distinct numbers of [0, size) in a seeded
 * order, the same on every machine: a sparse Fisher-Yates shuffle driven by
 * splitmix64, whose displaced slots live in a small hash table, so memory
 * grows with the draws made, never with the size of the space.
 * Plain C: no CUDA, Lua or SQLite. */
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

/* ---- draws: sparse Fisher-Yates with splitmix64 ------------------------ */

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

struct search_draw {
    rnd r;
    uint64_t size;            /* numbers to draw from */
    uint64_t count;           /* drawn so far */
};

search_draw *search_draw_new(uint64_t size, uint64_t seed) {
    search_draw *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    if (!(d->r.tab = calloc(64, sizeof *d->r.tab))) {
        free(d);
        return NULL;
    }
    d->r.cap = 64;
    d->r.s = seed;
    d->size = size;
    return d;
}

/* Step k of the shuffle: swap position k with a uniform position in
 * [k, size) and hand out what lands at k.  Distinct by construction. */
int search_draw_next(search_draw *d, uint64_t *out) {
    if (!d || d->count >= d->size) return 0;
    uint64_t k = d->count;
    uint64_t j = k + uniform(&d->r.s, d->size - k);
    uint64_t vj = slot_get(&d->r, j), vk = slot_get(&d->r, k);
    if (slot_set(&d->r, j, vk)) {      /* out of memory: nothing more */
        d->size = d->count;
        return 0;
    }
    *out = vj;
    d->count++;
    return 1;
}

void search_draw_free(search_draw *d) {
    if (!d) return;
    free(d->r.tab);
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

const char *const search_strategies[] = {"exhaustive", "random", "hillclimb", "warm", NULL};

int search_remeasures(const char *strategy) {
    return !strcmp(strategy, "warm") || !strcmp(strategy, "exhaustive");
}
