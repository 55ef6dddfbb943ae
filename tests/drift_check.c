/* drift_check.c -- the drift check tests/test_dispatch.c compiles against a
 * dispatch header: does the library's dispatch core, fed the header as the
 * library is, run every exported config with its own kernels?
 *
 * Built by the test with -DNT_DISPATCH_HEADER='"path/to/header.h"' and the
 * dispatch core, the op registry and the op folders' C files (no CUDA); the
 * header is included in C, so its kernel X-macro stays unexpanded.  With
 * dev = NULL, as the export plans, it checks:
 *
 *   tables      nt_dispatch_check accepts them; every config is a problem's
 *               fallback, some tuned shape's config or some tuned shape's
 *               stretch
 *   tuned       every tuned shape of every problem: its config resolves,
 *               every launch to a kernel of that config's own list under
 *               the very name its plan writes, and normtune_lookup (with the
 *               core as can_run) picks that config, not a fallback
 *   fallback    every problem's fallback resolves for N every multiple of 8
 *               up to NT_MAX_N at M = 1, 7, 1000 and 65536 wherever the op
 *               accepts the shape, and the lookup then gives a config that
 *               resolves (at every such N up to DENSE_N, the longest rows
 *               the default sweeps tune, and at every 13th beyond it and
 *               NT_MAX_N: see DENSE_N)
 *   tampered    for every config and every kernel of its list, the config
 *               with that kernel dropped is refused at a shape whose plan
 *               launches it (never served by another kernel) and still
 *               resolves where the plan does not need it; a config asked
 *               for a problem of other dtypes is refused
 *
 * Prints "FAIL what" lines and a summary; exit 0 only when nothing failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/family.h"
#include NT_DISPATCH_HEADER

NT_DISPATCH_DEFINE(static, hdr);

static int fails;

#define FAIL(...)                                                                          \
    do {                                                                                   \
        if (fails++ < 40) {                                                                \
            printf("FAIL ");                                                               \
            printf(__VA_ARGS__);                                                           \
            printf("\n");                                                                  \
        }                                                                                  \
    } while (0)

/* Problem q of the header at M x N into *p.  0, or -1 (a FAIL printed). */
static int problem(int q, long long M, long long N, nt_problem *p) {
    char err[256];
    const nt_op *op = nt_op_find(hdr.problems[q].op);
    if (!op) {
        FAIL("problem %d: op %s unknown", q, hdr.problems[q].op);
        return -1;
    }
    nt_problem_init(p, op, M, N);
    if (nt_dtypes_parse(p, hdr.problems[q].dtypes, err, sizeof err)) {
        FAIL("problem %d: %s", q, err);
        return -1;
    }
    return 0;
}

/* 1 when kernel id k is in config c's list of table d. */
static int in_list(const nt_dispatch *d, int c, int k) {
    for (int i = 0; i < d->configs[c].nk; i++)
        if (d->config_kernels[d->configs[c].kfirst + i] == k) return 1;
    return 0;
}

/* Resolve config c for p on table d and check the kernels are its own,
 * under the plan's names.  0 resolved, -1 refused (message in err). */
static int resolve(const nt_dispatch *d, int c, const nt_problem *p, nt_dispatch_choice *ch,
                   char *err, size_t errlen) {
    if (nt_dispatch_try(d, c, p, NULL, ch, err, errlen)) return -1;
    for (int i = 0; i < ch->plan.nlaunch; i++)
        if (!in_list(d, c, ch->kid[i]) || strcmp(d->kernel_names[ch->kid[i]], ch->plan.l[i].name))
            FAIL("config %d launch %d: resolved to kernel %d (%s), not its own %s", c, i,
                 ch->kid[i], d->kernel_names[ch->kid[i]], ch->plan.l[i].name);
    return 0;
}

/* normtune_lookup's veto: the core with dev = NULL. */
static int can_run(void *ctx, int c, long long M, long long N) {
    nt_problem p = *(const nt_problem *)ctx;
    nt_dispatch_choice ch;
    char err[256];
    p.M = M;
    p.N = N;
    return nt_dispatch_try(&hdr, c, &p, NULL, &ch, err, sizeof err) == 0;
}

static const long long Ms[] = {1, 7, 1000, 65536};
/* The slow searches -- a lookup, which tries every entry of the problem
 * before it gives the fallback where no tuned config covers the row, and
 * the search for a shape whose plan does not launch a kernel, which fails
 * only after the whole grid for a config that always launches it -- visit
 * every N up to DENSE_N (the default sweeps' longest rows) and every 13th
 * multiple of 8 beyond it, and NT_MAX_N: every N to NT_MAX_N made the drift
 * check 4 times as slow as at NT_MAX_N = 16384. */
#define DENSE_N 16384
static int sparse(long long N) { return N > DENSE_N && N < NT_MAX_N && (N / 8) % 13; }

static void check_tables(void) {
    char err[256];
    int *used = calloc((size_t)hdr.nconfigs + 1, sizeof *used);
    if (nt_dispatch_check(&hdr, err, sizeof err)) FAIL("tables: %s", err);
    for (int q = 0; q < hdr.nproblems; q++) {
        if (hdr.problems[q].fallback >= 0) used[hdr.problems[q].fallback] = 1;
        for (int e = hdr.problems[q].first; e < hdr.problems[q].first + hdr.problems[q].count; e++)
        {
            used[normtune_entries[e].config] = 1;
            if (normtune_entries[e].stretch >= 0) used[normtune_entries[e].stretch] = 1;
        }
    }
    for (int c = 0; c < hdr.nconfigs; c++)
        if (!used[c]) FAIL("config %d is neither a fallback nor a tuned shape's config or stretch", c);
    free(used);
    if (NORMTUNE_NKERNELS != hdr.nkernels || normtune_kernel_names[NORMTUNE_NKERNELS] != NULL)
        FAIL("kernel names: %d, not NORMTUNE_NKERNELS", hdr.nkernels);
}

/* Tuned entry t of problem q with a stretch: see "stretched" above. */
static void check_stretch(int q, const normtune_entry *t) {
    char err[256];
    nt_problem p;
    nt_dispatch_choice ch;
    if (problem(q, t->M, t->N + 8, &p)) return;
    /* a stretch in the config's own family only where the config cannot
     * serve N + 8 (one in its grown family may have the same params) */
    if (normtune_configs[t->config].family == normtune_configs[t->stretch].family &&
        resolve(&hdr, t->config, &p, &ch, err, sizeof err) == 0)
        FAIL("%s %s M=%lld N=%lld: config %d serves N + 8 itself, yet has stretch %d",
             hdr.problems[q].op, hdr.problems[q].dtypes, t->M, t->N, t->config, t->stretch);
    if (resolve(&hdr, t->stretch, &p, &ch, err, sizeof err)) {
        FAIL("stretch %d of %s %s M=%lld N=%lld at N + 8: %s", t->stretch, hdr.problems[q].op,
             hdr.problems[q].dtypes, t->M, t->N, err);
        return;
    }
    /* the lookup asks this entry (its exact M) first at N + 8, unless the
     * entry of another N comes before it in the lookup's order (one as near,
     * or one whose rows start at the offsets of N + 8's) */
    int nearer = 0, self = (int)(t - normtune_entries);
    for (int o = hdr.problems[q].first; o < hdr.problems[q].first + hdr.problems[q].count; o++)
        nearer |= normtune_entries[o].N != t->N &&
                  normtune_priv_before(t->M, t->N + 8, normtune_problem_lines[q], o, self);
    int got = normtune_lookup(q, t->M, t->N + 8, can_run, &p);
    if (got < 0 || resolve(&hdr, got, &p, &ch, err, sizeof err))
        FAIL("%s %s M=%lld N=%lld + 8: lookup gives config %d, which does not resolve",
             hdr.problems[q].op, hdr.problems[q].dtypes, t->M, t->N, got);
    else if (!nearer && got != t->stretch)
        FAIL("%s %s M=%lld N=%lld + 8: lookup gives config %d, not the stretch %d",
             hdr.problems[q].op, hdr.problems[q].dtypes, t->M, t->N, got, t->stretch);
}

static int stretched;         /* tuned entries with a stretch, checked */

static int check_tuned(void) {
    int n = 0;
    char err[256];
    for (int q = 0; q < hdr.nproblems; q++)
        for (int e = hdr.problems[q].first; e < hdr.problems[q].first + hdr.problems[q].count;
             e++) {
            const normtune_entry *t = &normtune_entries[e];
            nt_problem p;
            nt_dispatch_choice ch;
            if (problem(q, t->M, t->N, &p)) continue;
            n++;
            if (resolve(&hdr, t->config, &p, &ch, err, sizeof err)) {
                FAIL("tuned %s %s M=%lld N=%lld: %s", hdr.problems[q].op, hdr.problems[q].dtypes,
                     t->M, t->N, err);
                continue;
            }
            int got = normtune_lookup(q, t->M, t->N, can_run, &p);
            if (got != t->config)
                FAIL("tuned %s %s M=%lld N=%lld: lookup gives config %d (fallback %d), not %d",
                     hdr.problems[q].op, hdr.problems[q].dtypes, t->M, t->N, got,
                     hdr.problems[q].fallback, t->config);
            if (t->stretch >= 0) {
                stretched++;
                check_stretch(q, t);
            }
        }
    return n;
}

static long check_fallbacks(void) {
    long n = 0;
    char err[256];
    for (int q = 0; q < hdr.nproblems; q++) {
        int fb = hdr.problems[q].fallback, bad = 0;
        if (fb < 0) {
            if (!hdr.problems[q].count) FAIL("problem %d has neither fallback nor tuned shapes", q);
            continue;
        }
        for (long long N = 8; N <= NT_MAX_N && bad < 3; N += 8)
            for (size_t m = 0; m < sizeof Ms / sizeof Ms[0]; m++) {
                nt_problem p;
                nt_dispatch_choice ch;
                if (problem(q, Ms[m], N, &p) || nt_problem_check(&p, err, sizeof err)) continue;
                n++;
                if (resolve(&hdr, fb, &p, &ch, err, sizeof err)) {
                    FAIL("fallback of %s %s M=%lld N=%lld: %s", hdr.problems[q].op,
                         hdr.problems[q].dtypes, Ms[m], N, err);
                    bad++;
                    continue;
                }
                if (sparse(N)) continue;
                int c = normtune_lookup(q, Ms[m], N, can_run, &p);
                if (c < 0 || resolve(&hdr, c, &p, &ch, err, sizeof err)) {
                    FAIL("%s %s M=%lld N=%lld: lookup gives config %d, which does not resolve",
                         hdr.problems[q].op, hdr.problems[q].dtypes, Ms[m], N, c);
                    bad++;
                }
            }
    }
    return n;
}

/* A shape of config c's problem whose plan launches kernel k (want = 1) or
 * does not (want = 0): its tuned shapes first, then the N grid at each M.
 * 0 found (in *p), -1 none. */
static int shape_for(int c, int k, int want, nt_problem *p) {
    int q = -1;
    char err[256];
    for (int i = 0; i < hdr.nproblems && q < 0; i++)
        if (!strcmp(hdr.problems[i].dtypes, hdr.configs[c].dtypes) &&
            nt_family_find(hdr.families[hdr.configs[c].family].name)->op ==
                nt_op_find(hdr.problems[i].op))
            q = i;
    if (q < 0) return -1;
    for (int pass = 0; pass < 2; pass++)
        for (long long N = 8; N <= NT_MAX_N; N += 8)
            for (size_t m = 0; m < (pass ? sizeof Ms / sizeof Ms[0] : 1); m++) {
                long long M = pass ? Ms[m] : 0;
                if (!pass) {  /* the tuned shapes of the config at this N */
                    int e = hdr.problems[q].first;
                    while (e < hdr.problems[q].first + hdr.problems[q].count &&
                           !(normtune_entries[e].config == c && normtune_entries[e].N == N))
                        e++;
                    if (e == hdr.problems[q].first + hdr.problems[q].count) continue;
                    M = normtune_entries[e].M;
                }
                nt_dispatch_choice ch;
                int uses = 0;
                if ((!want && sparse(N)) || problem(q, M, N, p) ||
                    nt_dispatch_try(&hdr, c, p, NULL, &ch, err, sizeof err))
                    continue;
                for (int i = 0; i < ch.plan.nlaunch; i++) uses |= ch.kid[i] == k;
                if (uses == want) return 0;
            }
    return -1;
}

static int check_tampered(void) {
    int n = 0;
    int *kl = malloc(sizeof(int) * (size_t)(hdr.nconfig_kernels + 1));
    nt_dispatch_config *cf = malloc(sizeof *cf * (size_t)(hdr.nconfigs + 1));
    char err[256];
    for (int c = 0; c < hdr.nconfigs; c++)
        for (int j = 0; j < hdr.configs[c].nk; j++) {
            nt_dispatch t = hdr;
            nt_problem p;
            nt_dispatch_choice ch;
            int k = hdr.config_kernels[hdr.configs[c].kfirst + j];
            /* config c's list without its j-th kernel */
            memcpy(kl, hdr.config_kernels, sizeof(int) * (size_t)hdr.nconfig_kernels);
            memcpy(cf, hdr.configs, sizeof *cf * (size_t)hdr.nconfigs);
            memmove(kl + cf[c].kfirst + j, kl + cf[c].kfirst + j + 1,
                    sizeof(int) * (size_t)(hdr.nconfig_kernels - cf[c].kfirst - j - 1));
            cf[c].nk--;
            for (int i = 0; i < hdr.nconfigs; i++)
                if (cf[i].kfirst > cf[c].kfirst) cf[i].kfirst--;
            t.config_kernels = kl;
            t.nconfig_kernels--;
            t.configs = cf;
            if (shape_for(c, k, 1, &p)) {
                FAIL("config %d: no shape launches its kernel %s", c, hdr.kernel_names[k]);
                continue;
            }
            n++;
            if (nt_dispatch_try(&t, c, &p, NULL, &ch, err, sizeof err) == 0)
                FAIL("config %d without kernel %s still resolves M=%lld N=%lld", c,
                     hdr.kernel_names[k], (long long)p.M, (long long)p.N);
            else if (!strstr(err, hdr.kernel_names[k]))
                FAIL("config %d without kernel %s: refused for another reason: %s", c,
                     hdr.kernel_names[k], err);
            if (shape_for(c, k, 0, &p) == 0 && resolve(&t, c, &p, &ch, err, sizeof err))
                FAIL("config %d without kernel %s: refused where it is not needed: %s", c,
                     hdr.kernel_names[k], err);
        }
    /* a config asked for a problem of other dtypes */
    for (int c = 0; c < hdr.nconfigs; c++)
        for (int q = 0; q < hdr.nproblems; q++) {
            nt_problem p;
            nt_dispatch_choice ch;
            if (!strcmp(hdr.problems[q].dtypes, hdr.configs[c].dtypes) || problem(q, 64, 1024, &p))
                continue;
            n++;
            if (nt_dispatch_try(&hdr, c, &p, NULL, &ch, err, sizeof err) == 0)
                FAIL("config %d (%s) resolves for %s %s", c, hdr.configs[c].dtypes,
                     hdr.problems[q].op, hdr.problems[q].dtypes);
        }
    free(kl);
    free(cf);
    return n;
}

int main(void) {
    check_tables();
    int tuned = check_tuned();
    long fb = check_fallbacks();
    int tam = check_tampered();
    printf("drift: %d problems, %d configs, %d kernels: %d tuned shapes resolved to their own "
           "kernels, %d stretches 8 columns past theirs, %ld fallback shapes, %d tampered "
           "configs refused; %d failures\n",
           hdr.nproblems, hdr.nconfigs, hdr.nkernels, tuned, stretched, fb, tam, fails);
    return fails ? 1 : 0;
}
