/* export.c -- the dispatch header writer behind `normtune export`
 * (tuner/cmd_export.c): the best results of one device model (its GPUs'
 * results pooled) -> dispatch header
 * format 5 (docs/dispatch-header.md).
 *
 * nt_export_write is the pure part.  From the best row per problem and
 * shape (store_best) and their provenance it derives, with no op, family
 * or kernel named here:
 *
 *   families  every family a config uses, with its source hash: the rows'
 *             (all rows of a family must agree), or the current one for a
 *             family only the fallbacks use;
 *   problems  every (op, dtypes) with rows, and every other dtype
 *             combination each op of kernels/ops.c allows (the slots'
 *             allowed dtypes, kept when nt_problem_check accepts them),
 *             in op order then slot-major dtype order; an op with no
 *             fallback serves only the combinations that have rows;
 *   configs   (family, dtypes, canonical params): per problem its op's
 *             fallback first, then its tuned configs in (N, M) order, then
 *             their stretches in the same order; the ids are dense in order
 *             of first appearance;
 *   kernels   every name expression a config's plan() writes, planned with
 *             dev = NULL for every N multiple of 8 up to NT_MAX_N at
 *             M = 1 and 65536 and at the config's tuned shapes (shapes the
 *             family refuses, or plans less precise than the dtypes ask,
 *             are skipped); ids in name order; per config the ids it uses;
 *   entries   per problem its tuned shapes {N, M, config, median_us,
 *             gbps, stretch, own_n}, sorted by (N, M).  The stretch of an entry is
 *             its config for rows a little longer than its N (N + 8), in
 *             the family's `grown` family (kernels/family.h; itself when
 *             NULL): there the same params first when the family is
 *             another and they serve N + 8, else the params grown: the
 *             family's "block" raised by 32 at a time, else its "chunks"
 *             by 1 at a time, up to the parameter's declared limit, the
 *             first value the family's check accepts at (M, N + 8) with a
 *             plan as precise as the dtypes ask; -1 when the family is
 *             its own grown family and the config serves N + 8 itself, or
 *             no such value does.  The lookup tries it for N past the
 *             entry's before the entry's own config (a stretch in the
 *             same family exists only where the config cannot serve
 *             N + 8, nor then any longer row).  own_n is the config's
 *             family's (kernels/family.h): 1 for a family whose configs
 *             are not sized to a row length, whose entries the lookup
 *             offers at their own N only.
 *
 * It refuses (a message, nothing written) rather than write a header the
 * library would not serve as the database says: an unknown op or family, a
 * family of another op, params that do not validate, dtypes or a shape the
 * op refuses, two rows for one problem and shape, a malformed source hash,
 * rows of one family with different source hashes (naming the family), a
 * tuned config that cannot plan its own shape precisely enough, an op's
 * fallback that cannot plan a shape its op accepts, or a kernel name that
 * is not safe to print as C. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/family.h"
#include "tuner/export.h"

#define XNAME 128             /* a kernel name, with its NUL (nt_launch.name) */
#define XTEXT 160             /* dtypes and params texts */
#define PLAN_M2 65536         /* the second row count kernels are planned at */

/* One family the header uses. */
typedef struct xfam {
    const nt_family *f;
    char hash[24];
    int from_rows;            /* 1: hash from the rows (measured) */
} xfam;

/* One problem. */
typedef struct xprob {
    nt_problem pr;            /* op and dtypes; M, N unused */
    char dt[XTEXT];           /* canonical dtypes */
    int fallback;             /* config id, -1: none */
    int first, count;         /* entries */
    int line;                 /* elements of its rows in a 128-byte line, 0: none */
} xprob;

/* One config. */
typedef struct xcfg {
    const nt_family *f;
    int fam;                  /* index into families */
    int prob;                 /* its problem (a config has one dtypes) */
    char params[XTEXT];       /* canonical */
    int kfirst, nk;           /* its kernel ids in kids[] */
} xcfg;

/* One tuned entry. */
typedef struct xent {
    int prob;
    int64_t N, M;
    int cfg;
    double median_us, gbps;
    int row;                  /* index of its row (stable order, messages) */
    int stretch;              /* config id serving a little past N, -1: none */
    int own_n;                /* its family's own_n: offered at its own N only */
} xent;

/* Everything derived before printing; every array malloc'd, xfree frees. */
typedef struct xport {
    xfam *fam;
    int nfam, capfam;
    xprob *prob;
    int nprob, capprob;
    xcfg *cfg;
    int ncfg, capcfg;
    xent *ent;
    int nent;
    char (*kname)[XNAME];     /* kernel names by id (sorted) */
    int nk, capk;
    int *kids;                /* kernel ids of every config, flat */
    int nkids, capkids;
} xport;

static void xfree(xport *x) {
    free(x->fam);
    free(x->prob);
    free(x->cfg);
    free(x->ent);
    free(x->kname);
    free(x->kids);
}

/* Grow *arr (element size sz) to hold n + 1 elements.  0, or -1. */
static int grow(void **arr, int *cap, int n, size_t sz) {
    if (n < *cap) return 0;
    int c = *cap ? 2 * *cap : 16;
    void *p = realloc(*arr, (size_t)c * sz);
    if (!p) return -1;
    *arr = p;
    *cap = c;
    return 0;
}
#define GROW(arr, cap, n) grow((void **)&(arr), &(cap), (n), sizeof *(arr))

/* ---- text helpers ------------------------------------------------------ */

/* Copy s into out (size len), replacing every character that could end a
 * comment, start an escape or a trigraph, or is not printable ASCII by '_'.
 * The result is safe both inside a comment and inside a string literal. */
static void clean(const char *s, char *out, size_t len) {
    size_t i = 0;
    for (; s && *s && i + 1 < len; s++) {
        unsigned char c = (unsigned char)*s;
        int bad = c < 0x20 || c > 0x7e || strchr("*/\\?\"`", c);
        out[i++] = bad ? '_' : (char)c;
    }
    out[i] = 0;
    if (!i && len > 1) snprintf(out, len, "unknown");
}

/* 1 if s may be printed inside a string literal, inside a comment and (for
 * kernel names) as code: printable ASCII without quotes, backslash, '#',
 * '/', '*', '?', ';', braces or backquote. */
static int safe_text(const char *s) {
    if (!*s) return 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c > 0x7e || strchr("\"'\\#/*?;{}`", c)) return 0;
    }
    return 1;
}

/* 1 if s is exactly 16 hex digits. */
static int is_hash16(const char *s) {
    int i = 0;
    for (; s[i]; i++)
        if (!isxdigit((unsigned char)s[i])) return 0;
    return i == 16;
}

/* ---- building the tables ----------------------------------------------- */

/* Index of family f in x, added (with hash) when new.  -1 out of memory. */
static int fam_index(xport *x, const nt_family *f) {
    for (int i = 0; i < x->nfam; i++)
        if (x->fam[i].f == f) return i;
    if (GROW(x->fam, x->capfam, x->nfam)) return -1;
    memset(&x->fam[x->nfam], 0, sizeof x->fam[0]);
    x->fam[x->nfam].f = f;
    return x->nfam++;
}

/* Index of the problem with p's op and dtypes, or -1. */
static int prob_index(const xport *x, const nt_problem *p) {
    for (int i = 0; i < x->nprob; i++) {
        if (x->prob[i].pr.op != p->op) continue;
        int same = 1;
        for (int s = 0; s < p->op->nslots; s++) same &= x->prob[i].pr.dtype[s] == p->dtype[s];
        if (same) return i;
    }
    return -1;
}

/* Id of config (f, problem q, canonical params), added when new.  -1 out of
 * memory. */
static int cfg_index(xport *x, const nt_family *f, int q, const char *params) {
    for (int i = 0; i < x->ncfg; i++)
        if (x->cfg[i].f == f && x->cfg[i].prob == q && !strcmp(x->cfg[i].params, params))
            return i;
    int fi = fam_index(x, f);
    if (fi < 0 || GROW(x->cfg, x->capcfg, x->ncfg)) return -1;
    xcfg *c = &x->cfg[x->ncfg];
    memset(c, 0, sizeof *c);
    c->f = f;
    c->fam = fi;
    c->prob = q;
    snprintf(c->params, sizeof c->params, "%s", params);
    return x->ncfg++;
}

/* The problem of row r (op, dtypes, M x N), checked.  0, or -1 with a
 * message naming the row. */
static int row_problem(const store_best_row *r, nt_problem *p, char *err, size_t errlen) {
    char why[256];
    const nt_op *op = nt_op_find(r->op);
    if (!op) {
        snprintf(err, errlen, "results for op '%s', which this normtune does not know", r->op);
        return -1;
    }
    nt_problem_init(p, op, r->M, r->N);
    if (nt_dtypes_parse(p, r->dtype, why, sizeof why) || nt_problem_check(p, why, sizeof why)) {
        snprintf(err, errlen, "%s %s M=%lld N=%lld: %s", r->op, r->dtype, (long long)r->M,
                 (long long)r->N, why);
        return -1;
    }
    return 0;
}

/* Canonical params of family f from text, into out.  0, or -1 with why. */
static int canon_params(const nt_family *f, const char *text, char *out, size_t len, char *why,
                        size_t wlen) {
    nt_params p;
    snprintf(why, wlen, "params '%s' do not parse", text);
    if (nt_params_parse(text, &p) || nt_params_validate(f, &p, why, wlen)) return -1;
    if (nt_params_canon(f, &p, out, len) || !safe_text(out)) {
        snprintf(why, wlen, "params '%s' are too long or not printable", text);
        return -1;
    }
    return 0;
}

/* Sort rows' entries by (problem, N, M), then row index. */
static int cmp_ent(const void *a, const void *b) {
    const xent *x = a, *y = b;
    if (x->prob != y->prob) return x->prob < y->prob ? -1 : 1;
    if (x->N != y->N) return x->N < y->N ? -1 : 1;
    if (x->M != y->M) return x->M < y->M ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* Add every dtype combination op allows (and accepts at some N) that is
 * not a problem yet, when the op has a fallback to serve it with.  0 or -1
 * (out of memory). */
static int add_combos(xport *x, const nt_op *op) {
    int d[NT_MAX_SLOTS] = {0}, ns = op->nslots;
    char why[256];
    if (!op->fallback || ns < 1 || ns > NT_MAX_SLOTS) return 0;
    for (;;) {
        nt_problem p;
        int ok = 1;
        nt_problem_init(&p, op, 1, 8);
        for (int s = 0; s < ns; s++) {
            ok &= (op->slots[s].allowed >> d[s]) & 1u;
            p.dtype[s] = d[s];
        }
        int accepted = 0;
        for (int64_t N = 8; ok && !accepted && N <= NT_MAX_N; N += 8) {
            p.N = N;
            accepted = nt_problem_check(&p, why, sizeof why) == 0;
        }
        if (accepted && prob_index(x, &p) < 0) {
            if (GROW(x->prob, x->capprob, x->nprob)) return -1;
            memset(&x->prob[x->nprob], 0, sizeof x->prob[0]);
            x->prob[x->nprob].pr = p;
            x->prob[x->nprob++].fallback = -1;
        }
        int s = ns - 1;       /* next combination, the last slot fastest */
        while (s >= 0 && ++d[s] == NT_NDTYPES) d[s--] = 0;
        if (s < 0) return 0;
    }
}

/* Sort problems: op order (kernels/ops.c), then dtypes slot by slot. */
static int op_rank(const nt_op *op) {
    int i = 0;
    while (nt_ops[i] && nt_ops[i] != op) i++;
    return i;
}

static int cmp_prob(const void *a, const void *b) {
    const xprob *x = a, *y = b;
    int ra = op_rank(x->pr.op), rb = op_rank(y->pr.op);
    if (ra != rb) return ra < rb ? -1 : 1;
    for (int s = 0; s < x->pr.op->nslots; s++)
        if (x->pr.dtype[s] != y->pr.dtype[s]) return x->pr.dtype[s] < y->pr.dtype[s] ? -1 : 1;
    return 0;
}

/* Add name to the local set names[*n] (cap NT_MAX_LAUNCH * 64). */
typedef struct kset {
    char (*name)[XNAME];
    int n, cap;
} kset;

static int kset_has(const kset *k, const char *name) {
    for (int i = 0; i < k->n; i++)
        if (!strcmp(k->name[i], name)) return 1;
    return 0;
}

static int kset_add(kset *k, const char *name) {
    if (kset_has(k, name)) return 0;
    if (GROW(k->name, k->cap, k->n)) return -1;
    snprintf(k->name[k->n++], XNAME, "%s", name);
    return 0;
}

/* Plan config c of x at M x N (dev NULL) and add its kernel names to *k.
 * Returns 1 when added, 0 when the family refuses the shape or the plan is
 * less precise than the dtypes ask (why says which), -1 on a bad kernel
 * name or out of memory (message in err). */
static int plan_names(const xport *x, int c, const nt_params *pa, int64_t M, int64_t N, kset *k,
                      char *why, size_t wlen, char *err, size_t errlen) {
    const xcfg *g = &x->cfg[c];
    nt_problem p = x->prob[g->prob].pr;
    nt_plan pl;
    p.M = M;
    p.N = N;
    if (nt_problem_check(&p, why, wlen)) return 0;
    if (g->f->check(pa, &p, NULL, why, wlen) || g->f->plan(pa, &p, NULL, &pl, why, wlen))
        return 0;
    if (pl.nlaunch < 1 || pl.nlaunch > NT_MAX_LAUNCH) {
        snprintf(why, wlen, "a plan of %d launches", pl.nlaunch);
        return 0;
    }
    if (!nt_plan_precise(&pl, &p)) {
        snprintf(why, wlen, "its plan is less precise than dtypes %s ask", x->prob[g->prob].dt);
        return 0;
    }
    for (int i = 0; i < pl.nlaunch; i++) {
        pl.l[i].name[sizeof pl.l[i].name - 1] = 0;
        if (kset_has(k, pl.l[i].name)) continue;   /* checked when it was added */
        if (!safe_text(pl.l[i].name)) {
            snprintf(err, errlen, "%s %s: plan() wrote kernel name '%.60s', which cannot be "
                     "printed as C", g->f->name, g->params, pl.l[i].name);
            return -1;
        }
        if (kset_add(k, pl.l[i].name)) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 1;
}

/* Collect the kernel names of config c into *k: the N grid at M = 1 and
 * PLAN_M2, then its tuned shapes (each must plan), and for a fallback
 * every shape the op accepts on the grid must plan.  0, or -1 with a
 * message. */
static int config_kernels(const xport *x, int c, int is_fallback, kset *k, char *err,
                          size_t errlen) {
    const xcfg *g = &x->cfg[c];
    const xprob *q = &x->prob[g->prob];
    char why[256];
    nt_params pa;             /* parsed once: planned at every N */
    static const int64_t Ms[] = {1, PLAN_M2};
    if (nt_params_parse(g->params, &pa)) {
        snprintf(err, errlen, "%s %s: params '%s' do not parse", q->pr.op->name, g->f->name,
                 g->params);
        return -1;
    }
    for (int64_t N = 8; N <= NT_MAX_N; N += 8)
        for (size_t m = 0; m < sizeof Ms / sizeof Ms[0]; m++) {
            nt_problem p = q->pr;
            p.M = Ms[m];
            p.N = N;
            char pwhy[256];
            /* no refusal message (nt_why formats none): most N are refused */
            int rc = plan_names(x, c, &pa, Ms[m], N, k, why, 0, err, errlen);
            if (rc < 0) return -1;
            if (rc == 0 && is_fallback && nt_problem_check(&p, pwhy, sizeof pwhy) == 0) {
                plan_names(x, c, &pa, Ms[m], N, k, why, sizeof why, err, errlen);
                snprintf(err, errlen, "op %s: its fallback %s %s cannot run %s M=%lld N=%lld: %s",
                         q->pr.op->name, g->f->name, g->params, q->dt, (long long)Ms[m],
                         (long long)N, why);
                return -1;
            }
        }
    for (int e = q->first; e < q->first + q->count; e++) {
        if (x->ent[e].cfg != c) continue;
        int rc = plan_names(x, c, &pa, x->ent[e].M, x->ent[e].N, k, why, sizeof why, err,
                            errlen);
        if (rc < 0) return -1;
        if (rc == 0) {
            snprintf(err, errlen, "%s %s M=%lld N=%lld: its best config %s %s cannot run it here: "
                     "%s", q->pr.op->name, q->dt, (long long)x->ent[e].M, (long long)x->ent[e].N,
                     g->f->name, g->params, why);
            return -1;
        }
    }
    return 0;
}

static int cmp_name(const void *a, const void *b) { return strcmp(a, b); }
static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* One thread of build_kernels: configs t, t + T, ... in turn, each into
 * per[c]; the first that fails is bad (its message in err), and the
 * thread stops there. */
typedef struct kjob {
    const xport *x;
    kset *per;
    int t, T;
    int bad;                  /* config that failed, or -1 */
    char err[1024];
} kjob;

static void *kjob_run(void *arg) {
    kjob *j = arg;
    for (int c = j->t; c < j->x->ncfg; c += j->T) {
        int fb = j->x->prob[j->x->cfg[c].prob].fallback == c;
        if (config_kernels(j->x, c, fb, &j->per[c], j->err, sizeof j->err)) {
            j->bad = c;
            break;
        }
    }
    return NULL;
}

/* Kernel names of every config: the sorted global list and each config's
 * ids.  Each config is planned at every N (config_kernels), on up to
 * KTHREADS threads (the configs are independent, and each lands in its own
 * per[c]: the header is the same whatever the threads); a failure is the
 * lowest config's that fails, as one thread would find it.  0, or -1 with
 * a message. */
#define KTHREADS 16
static int build_kernels(xport *x, char *err, size_t errlen) {
    kset *per = calloc((size_t)(x->ncfg ? x->ncfg : 1), sizeof *per);
    kset all = {NULL, 0, 0};
    kjob jobs[KTHREADS];
    pthread_t th[KTHREADS];
    int rc = -1, T = 1, started = 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (!per) goto oom;
    if (cpus > 1) T = cpus < KTHREADS ? (int)cpus : KTHREADS;
    for (int t = 0; t < T; t++) {
        jobs[t] = (kjob){x, per, t, T, -1, ""};
        /* the first runs here; a thread that cannot start leaves its
         * configs to this one */
        if (t > 0 && !pthread_create(&th[t], NULL, kjob_run, &jobs[t])) started |= 1 << t;
    }
    kjob_run(&jobs[0]);
    for (int t = 1; t < T; t++) {
        if (started & (1 << t)) pthread_join(th[t], NULL);
        else kjob_run(&jobs[t]);
    }
    int bad = -1;
    for (int t = 0; t < T; t++)
        if (jobs[t].bad >= 0 && (bad < 0 || jobs[t].bad < jobs[bad].bad)) bad = t;
    if (bad >= 0) {
        snprintf(err, errlen, "%s", jobs[bad].err);
        goto done;
    }
    for (int c = 0; c < x->ncfg; c++) {
        for (int i = 0; i < per[c].n; i++)
            if (kset_add(&all, per[c].name[i])) goto oom;
    }
    if (all.n) qsort(all.name, (size_t)all.n, XNAME, cmp_name);
    x->kname = all.name;
    x->nk = all.n;
    all.name = NULL;
    for (int c = 0; c < x->ncfg; c++) {
        x->cfg[c].kfirst = x->nkids;
        for (int i = 0; i < per[c].n; i++) {
            char(*hit)[XNAME] = bsearch(per[c].name[i], x->kname, (size_t)x->nk, XNAME, cmp_name);
            if (GROW(x->kids, x->capkids, x->nkids)) goto oom;
            x->kids[x->nkids++] = (int)(hit - x->kname);
        }
        x->cfg[c].nk = per[c].n;
        qsort(x->kids + x->cfg[c].kfirst, (size_t)per[c].n, sizeof(int), cmp_int);
    }
    rc = 0;
    goto done;
oom:
    snprintf(err, errlen, "out of memory");
done:
    for (int c = 0; per && c < x->ncfg; c++) free(per[c].name);
    free(per);
    free(all.name);
    return rc;
}

/* Sort families by their place in the registry (nt_all_families). */
static int fam_rank(const nt_family *f) {
    const nt_family *const *all = nt_all_families();
    int i = 0;
    while (all[i] && all[i] != f) i++;
    return i;
}

static int cmp_fam(const void *a, const void *b) {
    int x = fam_rank(((const xfam *)a)->f), y = fam_rank(((const xfam *)b)->f);
    return x < y ? -1 : x > y;
}

/* Check the rows and derive every table into x (xfree frees).  0, or -1
 * with a message. */
/* The parameters an entry's config is grown by, in order, and the step of
 * each (see the top of this file, "stretch"). */
static const struct {
    const char *name;
    int step;
} stretch_by[] = {{"block", 32}, {"chunks", 1}};

/* Whether (f, p) runs problem at with a plan as precise as its dtypes ask. */
static int serves(const nt_family *f, const nt_params *p, const nt_problem *at) {
    char why[256];
    nt_plan pl;
    return f->check(p, at, NULL, why, sizeof why) == 0 &&
           f->plan(p, at, NULL, &pl, why, sizeof why) == 0 && nt_plan_precise(&pl, at);
}

/* The stretch of config (f, canonical params) for problem q at M x N, made
 * in f's grown family (*sf: f->grown, else f): the canonical params of the
 * config into out, 1; or 0 when there is none.  In another family the
 * params themselves come first (when they serve N + 8 there); in f itself
 * there is no stretch when the config serves N + 8.  Then the params grown
 * by stretch_by, the first that serves N + 8. */
static int stretch_params(const xport *x, const nt_family *f, const char *params, int q, int64_t M,
                          int64_t N, const nt_family **sf, char *out, size_t len) {
    char why[256];
    nt_problem at = x->prob[q].pr;
    nt_params p;
    at.M = M;
    at.N = N + 8;
    *sf = f->grown ? f->grown : f;
    if (nt_problem_check(&at, why, sizeof why) || nt_params_parse(params, &p)) return 0;
    if (f->check(&p, &at, NULL, why, sizeof why) == 0 && *sf == f) return 0;
    f = *sf;
    if (nt_params_validate(f, &p, why, sizeof why) == 0 && serves(f, &p, &at))
        return nt_params_canon(f, &p, out, len) == 0 && safe_text(out);
    for (size_t b = 0; b < sizeof stretch_by / sizeof stretch_by[0]; b++) {
        const nt_param_def *d = NULL;
        for (int i = 0; i < f->nparams; i++)
            if (!strcmp(f->params[i].name, stretch_by[b].name) && f->params[i].kind == NT_PARAM_INT)
                d = &f->params[i];
        int ok = 1;
        int64_t cur = nt_params_int(&p, stretch_by[b].name, &ok);
        if (!d || !ok) continue;
        for (int64_t v = cur + stretch_by[b].step; v <= d->hi; v += stretch_by[b].step) {
            nt_params g = p;
            char val[32];
            snprintf(val, sizeof val, "%lld", (long long)v);
            if (nt_params_set(&g, stretch_by[b].name, val) ||
                nt_params_validate(f, &g, why, sizeof why) || !serves(f, &g, &at))
                continue;
            return nt_params_canon(f, &g, out, len) == 0 && safe_text(out);
        }
    }
    return 0;
}

/* The elements of one row of problem p's M x N tensors in a 128-byte line
 * (their narrowest dtype: 64 for bf16 and fp16, 32 for fp32): a row whose
 * N is a multiple of it starts every row of every such tensor on a line.
 * 0 when the op does not ask the lookup to tell rows by their start
 * (nt_op row_lines) or has no M x N tensor. */
static int row_line(const nt_problem *p) {
    int size = 0;
    if (!p->op->row_lines) return 0;
    for (int t = 0; t < p->op->ntensors; t++) {
        const nt_tensor_def *d = &p->op->tensors[t];
        if (d->rows != NT_DIM_M || d->cols != NT_DIM_N) continue;
        int s = nt_dtypes[d->slot >= 0 ? p->dtype[d->slot] : d->fixed].size;
        if (s > 0 && (!size || s < size)) size = s;
    }
    return size ? 128 / size : 0;
}

static int build(xport *x, const store_best_row *rows, int n, char *err, size_t errlen) {
    char why[256], canon[XTEXT];
    if (n < 0 || (n > 0 && !rows)) {
        snprintf(err, errlen, "no rows");
        return -1;
    }
    x->ent = calloc((size_t)(n ? n : 1), sizeof *x->ent);
    if (!x->ent) goto oom;
    /* the problems with rows, and each row's family and hash */
    for (int i = 0; i < n; i++) {
        const store_best_row *r = &rows[i];
        nt_problem p;
        if (row_problem(r, &p, err, errlen)) return -1;
        const nt_family *f = nt_family_find(r->family);
        if (!f || f->op != p.op) {
            snprintf(err, errlen, "%s %s M=%lld N=%lld: %s family '%s'", r->op, r->dtype,
                     (long long)r->M, (long long)r->N, f ? "another op's" : "unknown", r->family);
            return -1;
        }
        if (canon_params(f, r->params, canon, sizeof canon, why, sizeof why)) {
            snprintf(err, errlen, "%s %s M=%lld N=%lld: %s: %s", r->op, r->dtype, (long long)r->M,
                     (long long)r->N, r->family, why);
            return -1;
        }
        if (!is_hash16(r->src_hash)) {
            snprintf(err, errlen, "family %s: source hash '%s' (M=%lld N=%lld) is not 16 hex "
                     "digits", f->name, r->src_hash, (long long)r->M, (long long)r->N);
            return -1;
        }
        int fi = fam_index(x, f);
        if (fi < 0) goto oom;
        if (!x->fam[fi].from_rows) {
            snprintf(x->fam[fi].hash, sizeof x->fam[fi].hash, "%s", r->src_hash);
            x->fam[fi].from_rows = 1;
        } else if (strcmp(x->fam[fi].hash, r->src_hash)) {
            snprintf(err, errlen, "family %s: its best results were measured with different "
                     "sources (hash %s and %s, e.g. %s %s M=%lld N=%lld); re-run its sweep with "
                     "the current kernels", f->name, x->fam[fi].hash, r->src_hash, r->op, r->dtype,
                     (long long)r->M, (long long)r->N);
            return -1;
        }
        if (prob_index(x, &p) < 0) {
            if (GROW(x->prob, x->capprob, x->nprob)) goto oom;
            memset(&x->prob[x->nprob], 0, sizeof x->prob[0]);
            x->prob[x->nprob].pr = p;
            x->prob[x->nprob++].fallback = -1;
        }
    }
    /* every other combination of every op, then the order */
    for (int o = 0; nt_ops[o]; o++)
        if (add_combos(x, nt_ops[o])) goto oom;
    if (x->nprob) qsort(x->prob, (size_t)x->nprob, sizeof *x->prob, cmp_prob);
    for (int q = 0; q < x->nprob; q++) x->prob[q].line = row_line(&x->prob[q].pr);
    for (int q = 0; q < x->nprob; q++)
        if (nt_dtypes_canon(&x->prob[q].pr, x->prob[q].dt, sizeof x->prob[q].dt) ||
            !safe_text(x->prob[q].dt)) {
            snprintf(err, errlen, "op %s: dtypes text too long", x->prob[q].pr.op->name);
            return -1;
        }
    /* entries, sorted; duplicates refused */
    for (int i = 0; i < n; i++) {
        nt_problem p;
        row_problem(&rows[i], &p, err, errlen);
        xent *e = &x->ent[x->nent++];
        e->prob = prob_index(x, &p);
        e->N = rows[i].N;
        e->M = rows[i].M;
        e->row = i;
        e->median_us = isfinite(rows[i].median_us) ? rows[i].median_us : 0.0;
        e->gbps = isfinite(rows[i].gbps) ? rows[i].gbps : 0.0;
        e->stretch = -1;
    }
    if (x->nent) qsort(x->ent, (size_t)x->nent, sizeof *x->ent, cmp_ent);
    for (int i = 1; i < x->nent; i++)
        if (x->ent[i].prob == x->ent[i - 1].prob && x->ent[i].N == x->ent[i - 1].N &&
            x->ent[i].M == x->ent[i - 1].M) {
            snprintf(err, errlen, "two results for %s %s M=%lld N=%lld",
                     x->prob[x->ent[i].prob].pr.op->name, x->prob[x->ent[i].prob].dt,
                     (long long)x->ent[i].M, (long long)x->ent[i].N);
            return -1;
        }
    for (int i = 0; i < x->nent; i++) {
        xprob *q = &x->prob[x->ent[i].prob];
        if (!q->count) q->first = i;
        q->count++;
    }
    /* configs: per problem the fallback, then the tuned ones in table order */
    for (int q = 0; q < x->nprob; q++) {
        const nt_op *op = x->prob[q].pr.op;
        char fbp[160] = "";
        const nt_family *fb = op->fallback ? op->fallback(&x->prob[q].pr, fbp, sizeof fbp) : NULL;
        if (op->fallback) {
            if (!fb || canon_params(fb, fbp, canon, sizeof canon, why, sizeof why)) {
                snprintf(err, errlen, "op %s %s: its fallback %s %s is not a valid config%s%s",
                         op->name, x->prob[q].dt, fb ? fb->name : "(none)", fbp, fb ? ": " : "",
                         fb ? why : "");
                return -1;
            }
            if ((x->prob[q].fallback = cfg_index(x, fb, q, canon)) < 0) goto oom;
        }
        for (int e = x->prob[q].first; e < x->prob[q].first + x->prob[q].count; e++) {
            const store_best_row *r = &rows[x->ent[e].row];
            const nt_family *f = nt_family_find(r->family);
            canon_params(f, r->params, canon, sizeof canon, why, sizeof why);
            if ((x->ent[e].cfg = cfg_index(x, f, q, canon)) < 0) goto oom;
            x->ent[e].own_n = f->own_n ? 1 : 0;
        }
        for (int e = x->prob[q].first; e < x->prob[q].first + x->prob[q].count; e++) {
            const xcfg *g = &x->cfg[x->ent[e].cfg];
            const nt_family *sf;
            char grown[XTEXT];
            /* none where the problem has a tuned N + 8: the lookup serves
             * those rows, and every longer one, from its entries first */
            int tuned8 = 0;
            for (int o = x->prob[q].first; o < x->prob[q].first + x->prob[q].count; o++)
                tuned8 |= x->ent[o].N == x->ent[e].N + 8;
            if (tuned8) continue;
            if (stretch_params(x, g->f, g->params, q, x->ent[e].M, x->ent[e].N, &sf, grown,
                               sizeof grown) &&
                (x->ent[e].stretch = cfg_index(x, sf, q, grown)) < 0)
                goto oom;
        }
    }
    /* families in registry order (the ids do not depend on the rows' order) */
    if (x->nfam) qsort(x->fam, (size_t)x->nfam, sizeof *x->fam, cmp_fam);
    for (int c = 0; c < x->ncfg; c++)
        x->cfg[c].fam = fam_index(x, x->cfg[c].f);
    /* hashes of the families only fallbacks use: the current sources' */
    for (int i = 0; i < x->nfam; i++) {
        const char *h = x->fam[i].from_rows ? "" : store_family_hash(x->fam[i].f->name);
        if (!h) {
            snprintf(err, errlen, "family %s: a source of it is not embedded in this normtune",
                     x->fam[i].f->name);
            return -1;
        }
        if (!x->fam[i].from_rows) snprintf(x->fam[i].hash, sizeof x->fam[i].hash, "%s", h);
    }
    return build_kernels(x, err, errlen);
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

/* ---- writing ----------------------------------------------------------- */

/* The fixed part after the data: accessors and the lookup.  Plain C99 that
 * is also valid C++; no includes, no allocation. */
static const char lookup_text[] =
    "/* 1 when strings a and b are equal. */\n"
    "static inline int normtune_priv_streq(const char *a, const char *b)\n"
    "{\n"
    "    while (*a && *a == *b) { a++; b++; }\n"
    "    return *a == *b;\n"
    "}\n"
    "\n"
    "/* The index of the problem of op with canonical dtypes (\"x=bf16,w=f32,...\"),\n"
    " * or -1: the header serves no such problem. */\n"
    "static inline int normtune_problem_index(const char *op, const char *dtypes)\n"
    "{\n"
    "    int i;\n"
    "    for (i = 0; i < NORMTUNE_NPROBLEMS; i++)\n"
    "        if (normtune_priv_streq(normtune_problems[i].op, op) &&\n"
    "            normtune_priv_streq(normtune_problems[i].dtypes, dtypes))\n"
    "            return i;\n"
    "    return -1;\n"
    "}\n"
    "\n"
    "/* The name of kernel k, or 0 if there is none. */\n"
    "static inline const char *normtune_kernel_name(int k)\n"
    "{\n"
    "    return k >= 0 && k < NORMTUNE_NKERNELS ? normtune_kernel_names[k] : 0;\n"
    "}\n"
    "\n"
    "/* Kernel i of config c's list (see NORMTUNE_CONFIGS), or -1. */\n"
    "static inline int normtune_config_kernel(int c, int i)\n"
    "{\n"
    "    return c >= 0 && c < NORMTUNE_NCONFIGS && i >= 0 && i < normtune_configs[c].nk\n"
    "               ? normtune_config_kernels[normtune_configs[c].kfirst + i] : -1;\n"
    "}\n"
    "\n"
    "/* Compare how far the tuned row counts a and b are from M, by ratio\n"
    " * (|log(M / a)| against |log(M / b)|): < 0 a is nearer, > 0 b is nearer,\n"
    " * 0 equally near.  Exact in integers below 2^32, else in doubles. */\n"
    "static inline int normtune_priv_mcmp(long long M, long long a, long long b)\n"
    "{\n"
    "    unsigned long long ha, la, hb, lb, x, y;\n"
    "    if (M < 1) M = 1;\n"
    "    ha = (unsigned long long)(M > a ? M : a);\n"
    "    la = (unsigned long long)(M > a ? a : M);\n"
    "    hb = (unsigned long long)(M > b ? M : b);\n"
    "    lb = (unsigned long long)(M > b ? b : M);\n"
    "    if (ha <= 0xffffffffULL && hb <= 0xffffffffULL) {\n"
    "        x = ha * lb;\n"
    "        y = hb * la;\n"
    "        return x < y ? -1 : x > y ? 1 : 0;\n"
    "    } else {\n"
    "        double dx = (double)ha / (double)la, dy = (double)hb / (double)lb;\n"
    "        return dx < dy ? -1 : dx > dy ? 1 : 0;\n"
    "    }\n"
    "}\n"
    "\n"
    "/* How far tuned N e is from N for the lookup: |N - e|, plus N / 8 when\n"
    " * one of them is a multiple of line (its rows start on 128-byte lines)\n"
    " * and the other is not (line 0: never).  Rows of the other kind start at\n"
    " * other offsets in their lines, which the configs tuned for them assume. */\n"
    "static inline long long normtune_priv_ndist(long long N, long long e, long long line)\n"
    "{\n"
    "    long long d = e > N ? e - N : N - e;\n"
    "    if (line > 0 && (N % line == 0) != (e % line == 0)) d += N / 8;\n"
    "    return d;\n"
    "}\n"
    "\n"
    "/* 1 when entry i comes before entry j in the lookup order for (M, N) of a\n"
    " * problem whose rows take line elements a line: nearer N\n"
    " * (normtune_priv_ndist; ties: the larger N), then nearer M by ratio\n"
    " * (ties: the larger M), then table position. */\n"
    "static inline int normtune_priv_before(long long M, long long N, long long line, int i,\n"
    "                                       int j)\n"
    "{\n"
    "    const normtune_entry *a = &normtune_entries[i], *b = &normtune_entries[j];\n"
    "    long long da = normtune_priv_ndist(N, a->N, line);\n"
    "    long long db = normtune_priv_ndist(N, b->N, line);\n"
    "    int c;\n"
    "    if (da != db) return da < db;\n"
    "    if (a->N != b->N) return a->N > b->N;\n"
    "    c = normtune_priv_mcmp(M, a->M, b->M);\n"
    "    if (c != 0) return c < 0;\n"
    "    if (a->M != b->M) return a->M > b->M;\n"
    "    return i < j;\n"
    "}\n"
    "\n"
    "/* The config to run for M rows of N of problem p: the exact tuned shape\n"
    " * if can_run accepts its config, else the problem's tuned shapes in order\n"
    " * of preference (same N by nearest M, then the nearest N by nearest M,\n"
    " * and so on, where an N whose rows start on 128-byte lines when N's do\n"
    " * not, or the reverse, is an eighth of N farther: normtune_priv_ndist),\n"
    " * the first whose config can_run(ctx, config, M, N) accepts\n"
    " * (can_run NULL: every config can), where an entry of a shorter N than\n"
    " * N offers its stretch before its config, and an entry marked own_n is\n"
    " * offered at its own N only; when none does, the problem's\n"
    " * fallback config (not asked to can_run).  -1 when p is not a problem or\n"
    " * has no fallback.  No allocation; one scan of the problem's entries per\n"
    " * candidate tried. */\n"
    "static inline int normtune_lookup(int p, long long M, long long N,\n"
    "                                  int (*can_run)(void *ctx, int config, long long rows,\n"
    "                                                 long long cols),\n"
    "                                  void *ctx)\n"
    "{\n"
    "    int prev = -1, best, k, lo, hi;\n"
    "    long long m = M < 1 ? 1 : M, line;\n"
    "    if (p < 0 || p >= NORMTUNE_NPROBLEMS) return -1;\n"
    "    line = normtune_problem_lines[p];\n"
    "    lo = normtune_problems[p].first;\n"
    "    hi = lo + normtune_problems[p].count;\n"
    "    for (;;) {\n"
    "        best = -1;\n"
    "        for (k = lo; k < hi; k++) {\n"
    "            if (normtune_entries[k].own_n && normtune_entries[k].N != N) continue;\n"
    "            if (prev >= 0 && !normtune_priv_before(m, N, line, prev, k)) continue;\n"
    "            if (best < 0 || normtune_priv_before(m, N, line, k, best)) best = k;\n"
    "        }\n"
    "        if (best < 0) return normtune_problems[p].fallback;\n"
    "        if (normtune_entries[best].stretch >= 0 && normtune_entries[best].N < N &&\n"
    "            (!can_run || can_run(ctx, normtune_entries[best].stretch, M, N)))\n"
    "            return normtune_entries[best].stretch;\n"
    "        if (!can_run || can_run(ctx, normtune_entries[best].config, M, N))\n"
    "            return normtune_entries[best].config;\n"
    "        prev = best;\n"
    "    }\n"
    "}\n"
    "\n"
    "/* The config tuned for exactly M x N of problem p, or -1 if that shape was\n"
    " * not tuned. */\n"
    "static inline int normtune_tuned_config(int p, long long M, long long N)\n"
    "{\n"
    "    int k;\n"
    "    if (p < 0 || p >= NORMTUNE_NPROBLEMS) return -1;\n"
    "    for (k = normtune_problems[p].first;\n"
    "         k < normtune_problems[p].first + normtune_problems[p].count; k++)\n"
    "        if (normtune_entries[k].M == M && normtune_entries[k].N == N)\n"
    "            return normtune_entries[k].config;\n"
    "    return -1;\n"
    "}\n";

/* Print the banner and the counts.  The device is a model; its GPUs that
 * measured the tuned shapes are listed, most shapes first (a provenance
 * with ngpus 0 is one GPU, p->uuid, with every shape). */
static void put_head(FILE *f, const xport *x, const store_prov *p) {
    char dev[128], uuid[64], drv[32], rt[32], nv[32], last[32], model[96] = "", g[64];
    int tuned = 0, ngpus = p->ngpus > 0 ? p->ngpus : 1;
    clean(p->device, dev, sizeof dev);
    clean(p->uuid, uuid, sizeof uuid);
    clean(p->driver, drv, sizeof drv);
    clean(p->runtime, rt, sizeof rt);
    clean(p->nvrtc, nv, sizeof nv);
    clean(p->last_finished, last, sizeof last);
    if (p->sms > 0)
        snprintf(model, sizeof model, ", %d SMs, memory clock %d kHz", p->sms, p->mem_clock_khz);
    for (int q = 0; q < x->nprob; q++) tuned += x->prob[q].count > 0;
    fprintf(f,
            "/* normtune dispatch header -- %s (cc %d.%d).\n"
            " *\n"
            " * GENERATED by `normtune export` from a results database: DO NOT EDIT.\n"
            " * Re-run the sweep and the export instead.\n"
            " *\n"
            " *   device          %s (cc %d.%d%s)\n"
            " *   GPUs            %d of the model measured the tuned shapes (shapes, uuid):\n",
            dev, p->cc_major, p->cc_minor, dev, p->cc_major, p->cc_minor, model, ngpus);
    if (p->ngpus <= 0) {
        fprintf(f, " *                   %5d  %s\n", x->nent, uuid);
    } else {
        for (int i = 0; i < p->ngpus && i < STORE_PROV_GPUS; i++) {
            clean(p->gpus[i].uuid, g, sizeof g);
            fprintf(f, " *                   %5d  %s\n", p->gpus[i].rows, g);
        }
        if (p->ngpus > STORE_PROV_GPUS)
            fprintf(f, " *                          and %d more\n", p->ngpus - STORE_PROV_GPUS);
    }
    fprintf(f,
            " *   driver          %s\n"
            " *   runtime         %s\n"
            " *   NVRTC           %s\n"
            " *   sweeps          %d\n"
            " *   newest result   %s\n"
            " *   problems        %d (%d tuned), tuned shapes %d\n"
            " *   configs         %d, kernels %d\n"
            " *\n"
            " * Each tuned shape's config is its fastest result on any GPU of the\n"
            " * model whose every output stayed within the tolerance of its dtype\n"
            " * (an output's precision is part of what is asked).  Every dtype\n"
            " * combination an op allows is a problem; its op's fallback config\n"
            " * serves the shapes no tuned config can run.  The kernels are every\n"
            " * name expression the configs' plans write.  A build must refuse this\n"
            " * header when a family's source hash differs from the hash of the\n"
            " * sources it compiles.  Format: docs/dispatch-header.md. */\n"
            "#ifndef NORMTUNE_DISPATCH_H\n"
            "#define NORMTUNE_DISPATCH_H\n"
            "\n"
            "#define NORMTUNE_DISPATCH_VERSION %d\n"
            "#define NORMTUNE_DEVICE \"%s\"\n"
            "#define NORMTUNE_DEVICE_CC %d\n"
            "#define NORMTUNE_DEVICE_UUID \"%s\"\n"
            "#define NORMTUNE_DEVICE_NGPUS %d\n"
            "#define NORMTUNE_NFAMILIES %d\n"
            "#define NORMTUNE_NPROBLEMS %d\n"
            "#define NORMTUNE_NCONFIGS %d\n"
            "#define NORMTUNE_NCONFIG_KERNELS %d\n"
            "#define NORMTUNE_NKERNELS %d\n"
            "#define NORMTUNE_NENTRIES %d\n"
            "\n",
            drv, rt, nv, p->nsweeps, last, x->nprob, tuned, x->nent, x->ncfg, x->nk,
            NT_EXPORT_VERSION, dev, p->cc_major * 10 + p->cc_minor, uuid, ngpus, x->nfam,
            x->nprob, x->ncfg, x->nkids, x->nk, x->nent);
}

/* Print the X-macros: families, problems, configs, kernels. */
static void put_macros(FILE *f, const xport *x) {
    fprintf(f, "/* Families: X(id, name, source hash).  The hash is that of the sources\n"
               " * the family's results were measured with (a family only fallbacks use:\n"
               " * the sources at export time). */\n"
               "#define NORMTUNE_FAMILIES(X)");
    for (int i = 0; i < x->nfam; i++)
        fprintf(f, " \\\n    X(%d, \"%s\", \"%s\")", i, x->fam[i].f->name, x->fam[i].hash);
    fprintf(f, "\n\n/* Problems: X(id, op, dtypes, fallback config, first entry, entries):\n"
               " * its tuned shapes are normtune_entries[first .. first + entries). */\n"
               "#define NORMTUNE_PROBLEMS(X)");
    for (int q = 0; q < x->nprob; q++)
        fprintf(f, " \\\n    X(%d, \"%s\", \"%s\", %d, %d, %d)", q, x->prob[q].pr.op->name,
                x->prob[q].dt, x->prob[q].fallback, x->prob[q].count ? x->prob[q].first : 0,
                x->prob[q].count);
    fprintf(f, "\n\n/* Configs: X(id, family, dtypes, params, first kernel, kernels): the\n"
               " * kernel ids it may launch are normtune_config_kernels[first .. first +\n"
               " * kernels). */\n"
               "#define NORMTUNE_CONFIGS(X)");
    for (int c = 0; c < x->ncfg; c++)
        fprintf(f, " \\\n    X(%d, %d, \"%s\", \"%s\", %d, %d)", c, x->cfg[c].fam,
                x->prob[x->cfg[c].prob].dt, x->cfg[c].params, x->cfg[c].kfirst, x->cfg[c].nk);
    fprintf(f, "\n\n/* Kernels: X(id, name, ...): the name expression once as a string and\n"
               " * once as code (the variadic part).  Only the library's C++ build expands\n"
               " * it, instantiating exactly these; C code reads normtune_kernel_names[]. */\n"
               "#define NORMTUNE_KERNELS(X)");
    for (int k = 0; k < x->nk; k++)
        fprintf(f, " \\\n    X(%d, \"%s\", %s)", k, x->kname[k], x->kname[k]);
    fprintf(f, "\n\n");
}

/* Print the data tables. */
static void put_data(FILE *f, const xport *x) {
    fprintf(f, "#ifdef __cplusplus\n#define NORMTUNE_PRIV_STATIC static constexpr\n#else\n"
               "#define NORMTUNE_PRIV_STATIC static\n#endif\n\n"
               "/* Kernel names by id, the strings of NORMTUNE_KERNELS. */\n"
               "NORMTUNE_PRIV_STATIC const char *const normtune_kernel_names[NORMTUNE_NKERNELS + 1]"
               " = {\n");
    for (int k = 0; k < x->nk; k++) fprintf(f, "    \"%s\",\n", x->kname[k]);
    fprintf(f, "    0\n};\n\n/* Kernel ids of every config, config after config. */\n"
               "NORMTUNE_PRIV_STATIC const int normtune_config_kernels[NORMTUNE_NCONFIG_KERNELS + "
               "1] = {\n");
    for (int c = 0; c < x->ncfg; c++) {
        fprintf(f, "   ");
        for (int i = 0; i < x->cfg[c].nk; i++) fprintf(f, " %d,", x->kids[x->cfg[c].kfirst + i]);
        fprintf(f, " /* %d */\n", c);
    }
    fprintf(f, "    -1\n};\n\n"
               "typedef struct normtune_problem {\n"
               "    const char *op, *dtypes;        /* op name, canonical dtypes */\n"
               "    int fallback;                   /* config, -1: none */\n"
               "    int first, count;               /* its entries */\n"
               "} normtune_problem;\n\n"
               "typedef struct normtune_config {\n"
               "    int family;                     /* NORMTUNE_FAMILIES id */\n"
               "    const char *dtypes, *params;    /* canonical texts */\n"
               "    int kfirst, nk;                 /* its kernels in normtune_config_kernels */\n"
               "} normtune_config;\n\n"
               "typedef struct normtune_entry {\n"
               "    long long N, M;                 /* columns, rows */\n"
               "    int config;                     /* NORMTUNE_CONFIGS id */\n"
               "    double median_us, gbps;         /* as measured */\n"
               "    int stretch;                    /* config for rows a little past N, -1: none */\n"
               "    int own_n;                      /* 1: offered at this N only */\n"
               "} normtune_entry;\n\n"
               "#define NORMTUNE_PRIV_PROBLEM(id, op, dtypes, fallback, first, count) \\\n"
               "    {op, dtypes, fallback, first, count},\n"
               "#define NORMTUNE_PRIV_CONFIG(id, family, dtypes, params, kfirst, nk) \\\n"
               "    {family, dtypes, params, kfirst, nk},\n\n"
               "NORMTUNE_PRIV_STATIC const normtune_problem normtune_problems[NORMTUNE_NPROBLEMS + "
               "1] = {\n"
               "    NORMTUNE_PROBLEMS(NORMTUNE_PRIV_PROBLEM) {0, 0, -1, 0, 0}\n};\n\n"
               "NORMTUNE_PRIV_STATIC const normtune_config normtune_configs[NORMTUNE_NCONFIGS + 1] "
               "= {\n"
               "    NORMTUNE_CONFIGS(NORMTUNE_PRIV_CONFIG) {-1, 0, 0, 0, 0}\n};\n\n"
               "/* Per problem, the elements of one row of its M x N tensors in a 128-byte\n"
               " * line (0: none): rows of N a multiple of it start on lines; the lookup\n"
               " * prefers tuned N of the same kind. */\n"
               "NORMTUNE_PRIV_STATIC const int normtune_problem_lines[NORMTUNE_NPROBLEMS + 1] = {\n"
               "   ");
    for (int q = 0; q < x->nprob; q++) fprintf(f, " %d,", x->prob[q].line);
    fprintf(f, " 0\n};\n\n"
               "/* Tuned shapes, problem after problem, each sorted by (N, M). */\n"
               "NORMTUNE_PRIV_STATIC const normtune_entry normtune_entries[NORMTUNE_NENTRIES + 1] "
               "= {\n");
    for (int i = 0; i < x->nent; i++) {
        const xent *e = &x->ent[i];
        if (i == 0 || e->prob != x->ent[i - 1].prob)
            fprintf(f, "    /* %d: %s %s */\n", e->prob, x->prob[e->prob].pr.op->name,
                    x->prob[e->prob].dt);
        fprintf(f, "    {%lldLL, %lldLL, %d, %.3f, %.1f, %d, %d},\n", (long long)e->N,
                (long long)e->M, e->cfg, e->median_us, e->gbps, e->stretch, e->own_n);
    }
    fprintf(f, "    {0LL, 0LL, -1, 0.0, 0.0, -1, 0}\n};\n\n");
}

/* See export.h. */
int nt_export_write(FILE *f, const store_best_row *rows, int n, const store_prov *prov,
                    char *err, size_t errlen) {
    xport x;
    int rc = -1;
    memset(&x, 0, sizeof x);
    if (build(&x, rows, n, err, errlen)) goto done;
    if (x.nprob == 0) {
        snprintf(err, errlen, "no problem to export (no results and no op with a fallback)");
        goto done;
    }
    put_head(f, &x, prov);
    put_macros(f, &x);
    put_data(f, &x);
    fprintf(f, "%s\n#endif /* NORMTUNE_DISPATCH_H */\n", lookup_text);
    if (fflush(f) || ferror(f)) {
        snprintf(err, errlen, "write failed: %s", strerror(errno));
        goto done;
    }
    rc = 0;
done:
    xfree(&x);
    return rc;
}

/* See export.h. */
int nt_export_unmeasured(const store_prov *prov, char *msg, size_t len) {
    const nt_family *const *all = nt_all_families();
    int missing = 0;
    size_t used = 0;
    msg[0] = 0;
    for (int i = 0; all[i]; i++) {
        int found = 0;
        for (int j = 0; j < prov->nfamilies && !found; j++) {
            const nt_family *m = nt_family_find(prov->families[j]);
            /* measured, or the grown family of a measured one (its stretches) */
            found = !strcmp(prov->families[j], all[i]->name) || (m && m->grown == all[i]);
        }
        if (found) continue;
        missing++;
        if (used < len)
            used += (size_t)snprintf(msg + used, len - used, "%s%s", missing > 1 ? ", " : "",
                                     all[i]->name);
    }
    return missing;
}

int nt_export_stale(const store_best_row *rows, int n, char *msg, size_t len) {
    int stale = 0;
    size_t used = 0;
    msg[0] = 0;
    for (int i = 0; i < n; i++) {
        const nt_family *f = nt_family_find(rows[i].family);
        const char *cur = f ? store_family_hash(f->name) : NULL;
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= !strcmp(rows[j].family, rows[i].family);
        if (seen || !cur || !strcmp(cur, rows[i].src_hash)) continue;
        stale++;
        if (used < len)
            used += (size_t)snprintf(msg + used, len - used, "%s%s (measured %s, now %s)",
                                     stale > 1 ? ", " : "", f->name, rows[i].src_hash, cur);
    }
    return stale;
}
