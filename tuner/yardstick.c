/* yardstick.c -- see yardstick.h. */
#include <string.h>

#include "tuner/yardstick.h"

nt_yard_key nt_yard_key_of(long long M, const nt_traffic_desc *d, const nt_timing *t) {
    nt_yard_key k;
    memset(&k, 0, sizeof k);
    k.M = M;
    k.d = *d;
    k.warmup = t->warmup;
    k.min_samples = t->min_samples;
    k.max_samples = t->max_samples;
    k.rel_ci = t->rel_ci;
    return k;
}

static int same(const nt_yard_key *a, const nt_yard_key *b) {
    if (a->M != b->M || a->warmup != b->warmup || a->min_samples != b->min_samples ||
        a->max_samples != b->max_samples || a->rel_ci != b->rel_ci)
        return 0;
    for (int i = 0; i < 8; i++)
        if (a->d.row16[i] != b->d.row16[i] || a->d.out[i] != b->d.out[i]) return 0;
    return 1;
}

static int find(const nt_yard_cache *c, const nt_yard_key *k) {
    for (int i = 0; i < c->n; i++)
        if (same(&c->key[i], k)) return i;
    return -1;
}

double nt_yard_find(const nt_yard_cache *c, const nt_yard_key *k) {
    int i = find(c, k);
    return i < 0 ? 0 : c->gbps[i];
}

void nt_yard_put(nt_yard_cache *c, const nt_yard_key *k, double gbps) {
    if (!(gbps > 0)) return;
    int i = find(c, k);
    if (i < 0) {
        if (c->n < NT_YARD_MAX) {
            i = c->n++;
        } else {
            i = c->next;
            c->next = (c->next + 1) % NT_YARD_MAX;
        }
        c->key[i] = *k;
    }
    c->gbps[i] = gbps;
}
