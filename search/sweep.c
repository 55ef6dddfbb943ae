/* sweep.c -- the sweep model's accessors (search/sweep.h): the problems of
 * a sweep (dtype combinations x their shapes), a point's params, and the
 * way to the loader's where(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/sweep.h"

/* The shapes of dtype combination d: its own, or the sweep's. */
static int shapes_of(const nt_sweep *sw, int d, const nt_shape **s) {
    if (sw->dshapes[d]) {
        *s = sw->dshapes[d];
        return sw->ndshape[d];
    }
    *s = sw->shapes;
    return sw->nshape;
}

int nt_sweep_nproblems(const nt_sweep *sw) {
    int n = 0;
    const nt_shape *s;
    for (int d = 0; d < sw->ndt; d++) n += shapes_of(sw, d, &s);
    return n;
}

int nt_sweep_problem_at(const nt_sweep *sw, int q, int *dt, int *shape) {
    const nt_shape *s;
    for (int d = 0; d < sw->ndt; d++) {
        int n = shapes_of(sw, d, &s);
        if (q < n) {
            *dt = d;
            *shape = q;
            return sw->dshapes[d] != NULL;
        }
        q -= n;
    }
    *dt = *shape = 0;
    return 0;
}

void nt_sweep_problem(const nt_sweep *sw, int q, nt_problem *p) {
    int d, i;
    const nt_shape *s;
    nt_sweep_problem_at(sw, q, &d, &i);
    shapes_of(sw, d, &s);
    *p = sw->dts[d];
    p->M = s[i].M;
    p->N = s[i].N;
}

uint64_t nt_sweep_problem_budget(const nt_sweep *sw, int q) {
    int d, i;
    nt_sweep_problem_at(sw, q, &d, &i);
    const uint64_t *b = sw->dshapes[d] ? sw->dbudgets[d] : sw->budgets;
    return b ? b[i] : 0;
}

void nt_problem_text(const nt_problem *p, char *buf, size_t len) {
    char dt[128];
    if (nt_dtypes_canon(p, dt, sizeof dt)) dt[0] = 0;
    snprintf(buf, len, "M=%lld N=%lld %s", (long long)p->M, (long long)p->N, dt);
}

/* Params of family f at point idx: texts copied from the space. */
void nt_sweep_point_params(const nt_sweep *sw, int f, const int *idx, nt_params *p) {
    const search_space *sp = &sw->fam[f].space;
    p->n = 0;
    for (int d = 0; d < sp->ndim; d++) nt_params_set(p, sp->dim[d].name, sp->dim[d].val[idx[d]]);
}

int nt_sweep_where(nt_sweep *sw, int f, const nt_params *p, const nt_problem *pr, int *accept,
                   char *err, size_t errlen) {
    *accept = 1;
    if (!sw->script || !sw->script->where) return 0;
    return sw->script->where(sw, f, p, pr, accept, err, errlen);
}

int nt_sweep_feasible(nt_sweep *sw, int f, const nt_params *p, const nt_problem *pr, int *ok,
                      char *err, size_t errlen) {
    const nt_family *fam = sw->fam[f].fam;
    char why[NT_MSG_LEN];
    *ok = 0;
    if (fam->check && fam->check(p, pr, NULL, why, sizeof why)) return 0;
    return nt_sweep_where(sw, f, p, pr, ok, err, errlen);
}

uint64_t nt_sweep_seed(const nt_sweep *sw, int q, uint64_t run) {
    nt_problem p;
    int dt, shape;
    nt_sweep_problem(sw, q, &p);
    nt_sweep_problem_at(sw, q, &dt, &shape);
    uint64_t h = search_mix(sw->search.seed ^ search_mix(run + 0x51ed));
    h = search_mix(h ^ (uint64_t)dt);
    h = search_mix(h ^ (uint64_t)p.M);
    return search_mix(h ^ ((uint64_t)p.N << 1));
}

int nt_sweep_npasses(const nt_sweep *sw) {
    int n = 0, rest = 0;
    for (int f = 0; f < sw->nfam; f++) {
        n += sw->fam[f].own != 0;
        rest += !sw->fam[f].own;
    }
    return n + (rest > 0);
}

void nt_sweep_pass(const nt_sweep *sw, int i, int *only, const char **strategy,
                   uint64_t *budget) {
    for (int f = 0; f < sw->nfam; f++)
        if (sw->fam[f].own && i-- == 0) {
            *only = f;
            *strategy = sw->fam[f].strategy;
            *budget = sw->fam[f].budget;
            return;
        }
    *only = -1;
    *strategy = sw->search.strategy;
    *budget = sw->search.budget;
}

uint64_t nt_sweep_pass_seed(const nt_sweep *sw, int q, uint64_t run, int only) {
    uint64_t h = nt_sweep_seed(sw, q, run);
    return only < 0 ? h : search_mix(h ^ (uint64_t)(only + 1));
}

void nt_sweep_pass_spaces(const nt_sweep *sw, int only, const search_space **space) {
    static const search_space none;   /* no dimension: no point */
    for (int f = 0; f < sw->nfam; f++)
        space[f] = (only < 0 ? !sw->fam[f].own : f == only) ? &sw->fam[f].space : &none;
}

int nt_sweep_uses(const nt_sweep *sw, const char *name) {
    int rest = 0;
    for (int f = 0; f < sw->nfam; f++) {
        if (sw->fam[f].own && !strcmp(sw->fam[f].strategy, name)) return 1;
        rest += !sw->fam[f].own;
    }
    return rest && !strcmp(sw->search.strategy, name);
}

/* ---- shards ------------------------------------------------------------ */

/* The key a shape is dealt by: its N (by_n), else M and N in one number
 * (N in the high bits: shapes sort by N, then M). */
static int64_t shard_key(const nt_shape *s, int by_n) {
    return by_n ? s->N : (s->N << 31) | s->M;
}

/* A distinct key, its shape entries (over every shape list) and its shard. */
typedef struct skey {
    int64_t key;
    int weight, shard;
} skey;

static int by_skey(const void *a, const void *b) {
    int64_t x = ((const skey *)a)->key, y = ((const skey *)b)->key;
    return x < y ? -1 : x > y;
}

static int by_weight(const void *a, const void *b) {
    const skey *x = *(const skey *const *)a, *y = *(const skey *const *)b;
    if (x->weight != y->weight) return x->weight > y->weight ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

/* Keep the shapes of list s[0..*n) (and their budgets b, if any) whose
 * key is shard i's among keys[0..nk) (sorted by key). */
static void shard_keep(nt_shape *s, uint64_t *b, int *n, const skey *keys, int nk, int by_n,
                       int i) {
    int k = 0;
    for (int j = 0; j < *n; j++) {
        skey want = {shard_key(&s[j], by_n), 0, 0};
        const skey *at = bsearch(&want, keys, (size_t)nk, sizeof *keys, by_skey);
        if (!at || at->shard != i) continue;
        if (b) b[k] = b[j];
        s[k++] = s[j];
    }
    *n = k;
}

int nt_sweep_shard(nt_sweep *sw, int i, int n, char *err, size_t errlen) {
    if (n < 1 || i < 0 || i >= n) {
        snprintf(err, errlen, "shard %d/%d: needs 0 <= I < N", i, n);
        return -1;
    }
    int total = sw->nshape;
    for (int d = 0; d < sw->ndt; d++) total += sw->dshapes[d] ? sw->ndshape[d] : 0;
    size_t cap = (size_t)(total ? total : 1);
    skey *keys = malloc(cap * sizeof *keys);
    skey **ord = malloc(cap * sizeof *ord);
    int64_t *load = calloc((size_t)n, sizeof *load);
    if (!keys || !ord || !load) {
        free(keys);
        free(ord);
        free(load);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* the distinct keys with their shape entries: the problems of every
     * dtype combination that takes the sweep's shapes count each */
    int nk = 0, by_n = 1, shared = 0;
    for (int d = 0; d < sw->ndt; d++) shared += !sw->dshapes[d];
    for (int pass = 0; pass < 2; pass++) {
        nk = 0;
        for (int j = 0; j < sw->nshape; j++)
            keys[nk++] = (skey){shard_key(&sw->shapes[j], by_n), shared, 0};
        for (int d = 0; d < sw->ndt; d++)
            for (int j = 0; sw->dshapes[d] && j < sw->ndshape[d]; j++)
                keys[nk++] = (skey){shard_key(&sw->dshapes[d][j], by_n), 1, 0};
        qsort(keys, (size_t)nk, sizeof *keys, by_skey);
        int u = 0;
        for (int j = 0; j < nk; j++) {
            if (u && keys[u - 1].key == keys[j].key)
                keys[u - 1].weight += keys[j].weight;
            else
                keys[u++] = keys[j];
        }
        nk = u;
        if (!by_n || nk >= n) break;
        by_n = 0;             /* fewer hidden sizes than shards: deal the shapes */
    }
    /* the heaviest first, each to the shard with the fewest problems so far
     * (ties: the lower shard) */
    for (int k = 0; k < nk; k++) ord[k] = &keys[k];
    qsort(ord, (size_t)nk, sizeof *ord, by_weight);
    for (int k = 0; k < nk; k++) {
        int m = 0;
        for (int j = 1; j < n; j++)
            if (load[j] < load[m]) m = j;
        ord[k]->shard = m;
        load[m] += ord[k]->weight;
    }
    shard_keep(sw->shapes, sw->budgets, &sw->nshape, keys, nk, by_n, i);
    for (int d = 0; d < sw->ndt; d++)
        if (sw->dshapes[d])
            shard_keep(sw->dshapes[d], sw->dbudgets[d], &sw->ndshape[d], keys, nk, by_n, i);
    free(keys);
    free(ord);
    free(load);
    return nt_sweep_nproblems(sw);
}

void nt_sweep_drop_own(nt_sweep *sw) {
    for (int f = 0; f < sw->nfam; f++) sw->fam[f].own = 0;
}

/* Free the spaces, shapes and reference hashes; the struct stays the
 * caller's (zeroed). */
void nt_sweep_clear(nt_sweep *sw) {
    for (int i = 0; i < sw->nfam; i++) search_space_clear(&sw->fam[i].space);
    free(sw->shapes);
    free(sw->budgets);
    for (int d = 0; d < NT_SWEEP_MAX_DTYPES; d++) {
        free(sw->dshapes[d]);
        free(sw->dbudgets[d]);
    }
    free(sw->ref_hash);
    free(sw->ref_count);
    free(sw->ref_strat);
    memset(sw, 0, sizeof *sw);
}
