/* test_export.c -- the dispatch header writer (nt_export_write, format 3)
 * and the `normtune export` command line.
 *
 * Rows are made by hand: three N, several M, two families of the op, one
 * config used by two shapes and one that was the op's fallback (naive, up
 * to N = 16384; the fallback is now loop, which the rows do not name),
 * each row with its family's current source hash.  Nothing about the registry is
 * assumed: the counts, the tuned problem's index, the fallbacks and the
 * config ids the header must hold are computed here from kernels/ops.c
 * (nt_ops[], nt_op.fallback) and parsed back from the header's own
 * X-macro lines.  The header must come out byte-identical on a second
 * call (and for the rows in another order).  It must hold every problem
 * the ops allow in op then dtype order (the tuned one with its entries,
 * every dtype combination with its op's fallback), families with their
 * hashes, configs numbered per problem fallback first then in table order,
 * with kernel lists that hold every kernel their plans launch, and kernels
 * whose X-macro name and code are the same text as the data.  A C program
 * written here includes it, checks the lookup per problem on exact,
 * in-between and out-of-range shapes with a can_run that refuses configs
 * (and falls back), and is compiled with `$CC -std=c99 -Wall -Wextra
 * -Werror -pedantic` (and as C++) and run; two translation units including
 * the header must link together.  Refusals: an unknown op, family or
 * dtypes, params that do not validate, two rows for a shape, a malformed
 * hash, rows of one family with two source hashes (the message names the
 * family), a config too imprecise for its shape's dtypes.  Through a
 * database: results whose error exceeds what their dtype asks are never
 * exported, by name or uuid the same bytes, a failed export leaves the old
 * header. */
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/t.h"
#include "tuner/cli.h"
#include "db/store.h"
#include "tuner/export.h"

#define HASH "0123456789abcdef"       /* a source hash no family has now */
#define OP "rmsnorm_bwd"
#define DT "x=bf16,w=bf16,dw=f32"
#define PERS "rmsnorm_bwd.persistent"
#define ALIG "rmsnorm_bwd.aligned"    /* persistent's grown family: its stretches */
#define NAIVE "rmsnorm_bwd.naive"

/* The fixture's configs (canonical params). */
#define P1 "block=128,chunks=1,stages=2,k=1"
#define P2 "block=256,chunks=2,stages=2,k=0"
#define P5 "block=512,chunks=2,stages=3,k=2"
#define N64 "nsplit=64,partial=f32"
#define N128 "nsplit=128,partial=f32"
#define P1S "block=160,chunks=1,stages=2,k=1" /* P1's stretch: 128 threads cover 1024 */
#define P2S "block=288,chunks=2,stages=2,k=0" /* P2's: 256 x 2 chunks cover 4096 */
#define P5S "block=544,chunks=2,stages=3,k=2" /* P5's: 512 x 2 chunks cover 8192 */

/* The current source hash of family name into buf[17] (HASH when the
 * family or a source of it is not there: the check using it then fails). */
static const char *cur_hash(const char *name, char buf[17]) {
    const nt_family *f = nt_family_find(name);
    if (!f || nt_family_hash(f, buf)) snprintf(buf, 17, HASH);
    return buf;
}

static void row(store_best_row *r, int64_t M, int64_t N, const char *family, const char *params,
                double us) {
    char h[17];
    memset(r, 0, sizeof *r);
    r->M = M;
    r->N = N;
    snprintf(r->op, sizeof r->op, OP);
    snprintf(r->dtype, sizeof r->dtype, DT);
    snprintf(r->family, sizeof r->family, "%s", family);
    snprintf(r->params, sizeof r->params, "%s", params);
    snprintf(r->src_hash, sizeof r->src_hash, "%s", cur_hash(family, h));
    r->median_us = us;
    r->gbps = 3.0 * (double)M * (double)N * 2.0 / (us * 1e3);
    r->pct_copy = 50.0;
}

/* The fixture, deliberately not in (N, M) order.  Sorted by (N, M):
 *   (1024, 2048)  P1
 *   (1024, 16384) N64   (the op's fallback for DT before N went to 65536)
 *   (1024, 65536) P1    (again)
 *   (4096, 2048)  P2
 *   (4096, 65536) N128
 *   (8192, 16384) P5
 * The config ids are found in the header, not assumed. */
static int fixture(store_best_row *r, store_prov *p) {
    row(&r[0], 65536, 4096, NAIVE, N128, 400.0);
    row(&r[1], 2048, 1024, PERS, P1, 9.5);
    row(&r[2], 16384, 8192, PERS, P5, 210.25);
    row(&r[3], 16384, 1024, NAIVE, N64, 60.0);
    row(&r[4], 2048, 4096, PERS, P2, 25.0);
    row(&r[5], 65536, 1024, PERS, P1, 200.0);
    memset(p, 0, sizeof *p);
    snprintf(p->device, sizeof p->device, "NVIDIA H200");
    snprintf(p->uuid, sizeof p->uuid, "GPU-00000000-test");
    p->cc_major = 9;
    p->cc_minor = 0;
    snprintf(p->driver, sizeof p->driver, "13000");
    snprintf(p->runtime, sizeof p->runtime, "13000");
    snprintf(p->nvrtc, sizeof p->nvrtc, "13.0");
    snprintf(p->src_hash, sizeof p->src_hash, HASH);
    snprintf(p->last_finished, sizeof p->last_finished, "2024-05-06T07:08:09Z");
    p->nsweeps = 2;
    return 6;
}
/* Write the header for rows into path.  Returns nt_export_write's code. */
static int write_to(const char *path, const store_best_row *r, int n, const store_prov *p,
                    char *err, size_t errlen) {
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "cannot open %.200s", path);
        return -2;
    }
    int rc = nt_export_write(f, r, n, p, err, errlen);
    fclose(f);
    return rc;
}

/* Whole file into a malloc'd string (caller frees); NULL if unreadable. */
static char *slurp(const char *path, long *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = 0;
    fclose(f);
    if (len) *len = n;
    return s;
}

/* Run a shell command; its exit status, or -1. */
static int sh(const char *cmd) {
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static const char *cc(void) {
    const char *c = getenv("CC");
    return c && *c ? c : "cc";
}

/* ---- what the registry says the header must hold -------------------------
 * Computed here independently of the writer, from nt_ops[] alone. */

#define MAXP 256                       /* problems */
#define MAXC 1024                      /* configs */
#define TXT 160

/* One problem the header must hold, with its op's fallback. */
typedef struct eprob {
    nt_problem pr;                     /* op and dtypes */
    char dt[TXT];                      /* canonical dtypes */
    const nt_family *fb;               /* the op's fallback; NULL: none */
    char fbp[TXT];                     /* its canonical params */
} eprob;

/* One config the header must hold. */
typedef struct ecfg {
    const char *fam;                   /* family name */
    char dt[TXT], params[TXT];
} ecfg;

/* Canonical params text of family name from text into out (text itself
 * when it does not parse: the checks using it then fail). */
static void canon(const char *name, const char *text, char *out, size_t len) {
    const nt_family *f = nt_family_find(name);
    nt_params pa;
    if (!f || nt_params_parse(text, &pa) || nt_params_canon(f, &pa, out, len))
        snprintf(out, len, "%s", text);
}

/* Every problem the header must hold, into e[cap]: every dtype combination
 * of every op that its slots allow and the op accepts at some N, when the
 * op has a fallback (or, with tuned, it is problem OP DT), in op order then
 * slot by slot in dtype order.  Returns their number (all of them, even
 * beyond cap). */
static int enum_problems(eprob *e, int cap, int tuned) {
    int n = 0;
    char why[256];
    for (int o = 0; nt_ops[o]; o++) {
        const nt_op *op = nt_ops[o];
        int d[NT_MAX_SLOTS] = {0};
        for (;;) {
            nt_problem p;
            int ok = 1, acc = 0;
            nt_problem_init(&p, op, 1, 8);
            for (int s = 0; s < op->nslots; s++) {
                ok &= (op->slots[s].allowed >> d[s]) & 1u;
                p.dtype[s] = d[s];
            }
            for (int N = 8; ok && !acc && N <= NT_MAX_N; N += 8) {
                p.N = N;
                acc = nt_problem_check(&p, why, sizeof why) == 0;
            }
            char dt[TXT];
            nt_dtypes_canon(&p, dt, sizeof dt);
            if (acc && (op->fallback || (tuned && !strcmp(op->name, OP) && !strcmp(dt, DT)))) {
                if (n < cap) {
                    eprob *q = &e[n];
                    char fbp[TXT] = "";
                    memset(q, 0, sizeof *q);
                    q->pr = p;
                    snprintf(q->dt, sizeof q->dt, "%s", dt);
                    q->fb = op->fallback ? op->fallback(&p, fbp, sizeof fbp) : NULL;
                    if (q->fb) canon(q->fb->name, fbp, q->fbp, sizeof q->fbp);
                }
                n++;
            }
            int s = op->nslots - 1;
            while (s >= 0 && ++d[s] == NT_NDTYPES) d[s--] = 0;
            if (s < 0) break;
        }
    }
    return n;
}

/* The index of problem OP DT in e[n], or -1. */
static int tuned_index(const eprob *e, int n) {
    for (int i = 0; i < n; i++)
        if (!strcmp(e[i].pr.op->name, OP) && !strcmp(e[i].dt, DT)) return i;
    return -1;
}

/* Order rows by (N, M). */
static int cmp_nm(const void *a, const void *b) {
    const store_best_row *x = a, *y = b;
    if (x->N != y->N) return x->N < y->N ? -1 : 1;
    return x->M < y->M ? -1 : x->M > y->M;
}

/* Add config (fam, dt, params) to c[*n] unless it is in c[from .. *n);
 * its index. */
static int ecfg_add(ecfg *c, int *n, int from, const char *fam, const char *dt,
                    const char *params) {
    for (int i = from; i < *n; i++)
        if (!strcmp(c[i].fam, fam) && !strcmp(c[i].dt, dt) && !strcmp(c[i].params, params))
            return i;
    if (*n >= MAXC) return -1;
    c[*n].fam = fam;
    snprintf(c[*n].dt, sizeof c[*n].dt, "%s", dt);
    snprintf(c[*n].params, sizeof c[*n].params, "%s", params);
    return (*n)++;
}

/* The stretch the header must give row r's config (the rule of
 * docs/dispatch-header.md, written out here), in the family's grown family
 * G (itself when it names none), into *fam: when G is another family, the
 * same params if G accepts them at (M, N + 8); else, when the config does
 * not serve N + 8 itself or G is another family, the first of its "block"
 * + 32, + 64, ... then "chunks" + 1, + 2, ..., up to each parameter's
 * declared limit, that G accepts at (M, N + 8) with a plan as precise as
 * DT asks; its canonical params into out and 1, or 0. */
static int expect_stretch(const store_best_row *r, const char **fam, char *out, size_t len) {
    const nt_family *f = nt_family_find(r->family);
    nt_problem at;
    nt_params base;
    nt_plan pl;
    char why[256];
    if (!f || nt_params_parse(r->params, &base)) return 0;
    const nt_family *g = f->grown ? f->grown : f;
    *fam = g->name;
    nt_problem_init(&at, f->op, r->M, r->N + 8);
    if (nt_dtypes_parse(&at, DT, why, sizeof why) || nt_problem_check(&at, why, sizeof why) ||
        (g == f && f->check(&base, &at, NULL, why, sizeof why) == 0))
        return 0;
    if (g != f && g->check(&base, &at, NULL, why, sizeof why) == 0 &&
        g->plan(&base, &at, NULL, &pl, why, sizeof why) == 0 && nt_plan_precise(&pl, &at))
        return nt_params_canon(g, &base, out, len) == 0;
    const char *names[2] = {"block", "chunks"};
    const int steps[2] = {32, 1};
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < g->nparams; i++) {
            const nt_param_def *d = &g->params[i];
            if (strcmp(d->name, names[b]) || d->kind != NT_PARAM_INT) continue;
            int64_t v0 = nt_params_int(&base, d->name, NULL);
            for (int64_t v = v0 + steps[b]; v <= d->hi; v += steps[b]) {
                nt_params q = base;
                char txt[32];
                snprintf(txt, sizeof txt, "%lld", (long long)v);
                nt_params_set(&q, d->name, txt);
                if (g->check(&q, &at, NULL, why, sizeof why) == 0 &&
                    g->plan(&q, &at, NULL, &pl, why, sizeof why) == 0 && nt_plan_precise(&pl, &at))
                    return nt_params_canon(g, &q, out, len) == 0;
            }
        }
    return 0;
}

/* The configs the header must hold, into ec[MAXC]: per problem e[q] its
 * op's fallback (its index into want_fb[q], -1: none), then for the tuned
 * problem the configs of rows s[n] (sorted by (N, M); their indices into
 * row_cfg[i]) that are not there yet, then the rows' stretches likewise
 * (row_str[i], -1: none).  Returns their number. */
static int expect_configs(const eprob *e, int ne, int tuned, const store_best_row *s, int n,
                          ecfg *ec, int *want_fb, int *row_cfg, int *row_str) {
    int nc = 0;
    for (int q = 0; q < ne; q++) {
        int from = nc;
        want_fb[q] = e[q].fb ? ecfg_add(ec, &nc, from, e[q].fb->name, e[q].dt, e[q].fbp) : -1;
        for (int i = 0; q == tuned && i < n; i++) {
            const nt_family *f = nt_family_find(s[i].family);
            char par[TXT];
            canon(s[i].family, s[i].params, par, sizeof par);
            row_cfg[i] = ecfg_add(ec, &nc, from, f ? f->name : s[i].family, DT, par);
        }
        for (int i = 0; q == tuned && i < n; i++) {
            char par[TXT];
            const char *sf = NULL;
            int tuned8 = 0;     /* a row at N + 8: no stretch */
            for (int j = 0; j < n; j++) tuned8 |= s[j].N == s[i].N + 8;
            row_str[i] = !tuned8 && expect_stretch(&s[i], &sf, par, sizeof par)
                             ? ecfg_add(ec, &nc, from, sf, DT, par)
                             : -1;
        }
    }
    return nc;
}

/* ---- what the header says -------------------------------------------------
 * Its X-macro lines and counts, parsed back. */

typedef struct hfam {
    int id;
    char name[64], hash[24];
} hfam;

typedef struct hprob {
    int id;
    char op[64], dt[TXT];
    int fb, first, count;
} hprob;

typedef struct hcfg {
    int id, fam;
    char dt[TXT], params[TXT];
    int kfirst, nk;
} hcfg;

typedef struct htab {
    hfam fam[64];
    int nfam;
    hprob prob[MAXP];
    int nprob;
    hcfg cfg[MAXC];
    int ncfg;
    int nfamilies, nproblems, nconfigs, nentries; /* the #defines */
} htab;

/* The value of "#define name " in a, or -1. */
static int hdef(const char *a, const char *name) {
    char key[80];
    int v = -1;
    snprintf(key, sizeof key, "#define %s ", name);
    const char *s = strstr(a, key);
    if (s) sscanf(s + strlen(key), "%d", &v);
    return v;
}

/* The X(...) lines of macro (e.g. "NORMTUNE_CONFIGS") in a, one after
 * another: the k-th line's text after "X(", or NULL after the last. */
static const char *xline(const char *a, const char *macro, int k) {
    char key[80];
    snprintf(key, sizeof key, "#define %s(X)", macro);
    const char *s = strstr(a, key), *end = s ? strstr(s, "\n\n") : NULL;
    for (const char *c = s ? strstr(s, "\n    X(") : NULL; c && c < end;
         c = strstr(c + 1, "\n    X("))
        if (k-- == 0) return c + 7;
    return NULL;
}

/* Parse header a (caller frees); NULL when out of memory. */
static htab *parse(const char *a) {
    htab *h = calloc(1, sizeof *h);
    const char *l;
    if (!h) return NULL;
    for (; h->nfam < 64 && (l = xline(a, "NORMTUNE_FAMILIES", h->nfam)); h->nfam++) {
        hfam *f = &h->fam[h->nfam];
        if (sscanf(l, "%d, \"%63[^\"]\", \"%23[^\"]\")", &f->id, f->name, f->hash) != 3) f->id = -1;
    }
    for (; h->nprob < MAXP && (l = xline(a, "NORMTUNE_PROBLEMS", h->nprob)); h->nprob++) {
        hprob *p = &h->prob[h->nprob];
        if (sscanf(l, "%d, \"%63[^\"]\", \"%159[^\"]\", %d, %d, %d)", &p->id, p->op, p->dt, &p->fb,
                   &p->first, &p->count) != 6)
            p->id = -1;
    }
    for (; h->ncfg < MAXC && (l = xline(a, "NORMTUNE_CONFIGS", h->ncfg)); h->ncfg++) {
        hcfg *c = &h->cfg[h->ncfg];
        if (sscanf(l, "%d, %d, \"%159[^\"]\", \"%159[^\"]\", %d, %d)", &c->id, &c->fam, c->dt,
                   c->params, &c->kfirst, &c->nk) != 6)
            c->id = -1;
    }
    h->nfamilies = hdef(a, "NORMTUNE_NFAMILIES");
    h->nproblems = hdef(a, "NORMTUNE_NPROBLEMS");
    h->nconfigs = hdef(a, "NORMTUNE_NCONFIGS");
    h->nentries = hdef(a, "NORMTUNE_NENTRIES");
    return h;
}

/* The name of config c's family in h ("" when out of range). */
static const char *hcfg_fam(const htab *h, int c) {
    if (c < 0 || c >= h->ncfg || h->cfg[c].fam < 0 || h->cfg[c].fam >= h->nfam) return "";
    return h->fam[h->cfg[c].fam].name;
}

/* The id of the config of family fam with dtypes dt and params in h; -1
 * when none, -2 when more than one. */
static int hcfg_id(const htab *h, const char *fam, const char *dt, const char *params) {
    int id = -1;
    for (int c = 0; c < h->ncfg; c++)
        if (!strcmp(hcfg_fam(h, c), fam) && !strcmp(h->cfg[c].dt, dt) &&
            !strcmp(h->cfg[c].params, params))
            id = id == -1 ? c : -2;
    return id;
}

/* Check header a (what names it) against the registry and the rows it was
 * made from, the best row per shape, all of problem OP DT and measured with
 * every family's current sources: the counts; every problem in op then
 * dtype order, with its op's fallback, the tuned one with its entries;
 * the families every config uses, in registry order, with their current
 * hashes; the configs, per problem its fallback first then its tuned ones
 * in (N, M) order, dense; the entries in (N, M) order with their configs.
 * The number of configs, or -1. */
static int check_header(const char *a, const store_best_row *rows, int n, const char *what) {
    eprob *e = calloc(MAXP, sizeof *e);
    ecfg *ec = calloc(MAXC, sizeof *ec);
    store_best_row *s = calloc((size_t)n + 1, sizeof *s);
    htab *h = a ? parse(a) : NULL;
    int ne = 0, nc = 0, tuned = -1, fails = 0;
    int *want_fb = calloc(MAXP, sizeof *want_fb), *row_cfg = calloc((size_t)n + 1, sizeof(int));
    int *row_str = calloc((size_t)n + 1, sizeof(int));
#define HCHECK(cond, ...) do { if (!(cond)) fails++; CHECK(cond, __VA_ARGS__); } while (0)
    HCHECK(e && ec && s && h && want_fb && row_cfg && row_str, "%s: no header or out of memory",
           what);
    if (!e || !ec || !s || !h || !want_fb || !row_cfg || !row_str) goto done;
    ne = enum_problems(e, MAXP, n > 0);
    tuned = n > 0 ? tuned_index(e, ne < MAXP ? ne : MAXP) : -1;
    HCHECK(ne <= MAXP && (n == 0 || tuned >= 0), "%s: %d problems, tuned at %d", what, ne, tuned);
    if (ne > MAXP || (n > 0 && tuned < 0)) goto done;
    if (n) memcpy(s, rows, (size_t)n * sizeof *s);
    if (n) qsort(s, (size_t)n, sizeof *s, cmp_nm);
    nc = expect_configs(e, ne, tuned, s, n, ec, want_fb, row_cfg, row_str);
    HCHECK(nc < MAXC, "%s: too many configs", what);
    /* counts */
    HCHECK(h->nproblems == ne && h->nprob == ne, "%s: %d problems (%d lines), want %d", what,
           h->nproblems, h->nprob, ne);
    HCHECK(h->nconfigs == nc && h->ncfg == nc, "%s: %d configs (%d lines), want %d", what,
           h->nconfigs, h->ncfg, nc);
    HCHECK(h->nentries == n, "%s: %d entries, want %d", what, h->nentries, n);
    HCHECK(h->nfamilies == h->nfam, "%s: %d families, %d lines", what, h->nfamilies, h->nfam);
    /* problems */
    for (int q = 0; q < ne && q < h->nprob; q++) {
        const hprob *p = &h->prob[q];
        HCHECK(p->id == q && !strcmp(p->op, e[q].pr.op->name) && !strcmp(p->dt, e[q].dt),
               "%s: problem %d is %d %s %s, want %s %s", what, q, p->id, p->op, p->dt,
               e[q].pr.op->name, e[q].dt);
        HCHECK(p->fb == want_fb[q], "%s: problem %d (%s %s): fallback %d, want %d (%s %s)", what, q,
               p->op, p->dt, p->fb, want_fb[q], e[q].fb ? e[q].fb->name : "none", e[q].fbp);
        HCHECK(p->count == (q == tuned ? n : 0) && p->first == 0,
               "%s: problem %d (%s %s): entries %d..+%d", what, q, p->op, p->dt, p->first, p->count);
    }
    /* configs */
    for (int c = 0; c < nc && c < h->ncfg; c++)
        HCHECK(h->cfg[c].id == c && !strcmp(hcfg_fam(h, c), ec[c].fam) &&
                   !strcmp(h->cfg[c].dt, ec[c].dt) && !strcmp(h->cfg[c].params, ec[c].params),
               "%s: config %d is %d %s %s %s, want %s %s %s", what, c, h->cfg[c].id,
               hcfg_fam(h, c), h->cfg[c].dt, h->cfg[c].params, ec[c].fam, ec[c].dt, ec[c].params);
    /* families: those the configs use, in registry order, current hashes */
    {
        const nt_family *const *all = nt_all_families();
        int k = 0;
        for (int i = 0; all[i]; i++) {
            int used = 0;
            for (int c = 0; c < nc; c++) used |= !strcmp(ec[c].fam, all[i]->name);
            if (!used) continue;
            char cur[17];
            HCHECK(k < h->nfam && h->fam[k].id == k && !strcmp(h->fam[k].name, all[i]->name) &&
                       !strcmp(h->fam[k].hash, cur_hash(all[i]->name, cur)),
                   "%s: family %d is %s %s, want %s %s", what, k, k < h->nfam ? h->fam[k].name : "-",
                   k < h->nfam ? h->fam[k].hash : "-", all[i]->name, cur);
            k++;
        }
        HCHECK(k == h->nfam, "%s: %d families, want %d", what, h->nfam, k);
    }
    /* entries in (N, M) order, each with its config */
    {
        const char *at = strstr(a, "normtune_entries[NORMTUNE_NENTRIES + 1] = {");
        for (int i = 0; i < n; i++) {
            char want[120];
            snprintf(want, sizeof want, "    {%lldLL, %lldLL, %d, %.3f, ", (long long)s[i].N,
                     (long long)s[i].M, row_cfg[i], s[i].median_us);
            const char *hit = at ? strstr(at, want) : NULL;
            HCHECK(hit != NULL, "%s: entry %d '%s' missing or out of order", what, i, want);
            if (!hit) continue;
            /* then gbps, its stretch and own_n: its family's (runs any N) */
            long long eN, eM;
            int cfg, str = -2, own = -1;
            double us, gb;
            const nt_family *ef = nt_family_find(s[i].family);
            sscanf(hit, " {%lldLL, %lldLL, %d, %lf, %lf, %d, %d}", &eN, &eM, &cfg, &us, &gb, &str,
                   &own);
            HCHECK(str == row_str[i], "%s: entry %d '%s' has stretch %d, want %d", what, i, want,
                   str, row_str[i]);
            HCHECK(ef && own == (ef->own_n != 0), "%s: entry %d '%s' has own_n %d, its family %s %d",
                   what, i, want, own, s[i].family, ef ? ef->own_n : -1);
            at = hit + 1;
        }
    }
done:
#undef HCHECK
    free(e);
    free(ec);
    free(s);
    free(h);
    free(want_fb);
    free(row_cfg);
    free(row_str);
    return fails ? -1 : nc;
}

static char hdr[600];                  /* the fixture's header, made once */

TEST(write_deterministic) {
    store_best_row r[8];
    store_prov p;
    char err[512] = "", other[600];
    int n = fixture(r, &p);
    snprintf(hdr, sizeof hdr, "%s/normtune_dispatch.h", t_tmpdir());
    snprintf(other, sizeof other, "%s/again.h", t_tmpdir());
    CHECK(write_to(hdr, r, n, &p, err, sizeof err) == 0, "export: %s", err);
    CHECK(write_to(other, r, n, &p, err, sizeof err) == 0, "export again: %s", err);
    long la, lb;
    char *a = slurp(hdr, &la), *b = slurp(other, &lb);
    CHECK(a && b && la == lb && !memcmp(a, b, (size_t)la), "second export differs");
    free(b);
    /* the input order does not matter */
    store_best_row t = r[0];
    r[0] = r[5];
    r[5] = t;
    t = r[1];
    r[1] = r[3];
    r[3] = t;
    CHECK(write_to(other, r, n, &p, err, sizeof err) == 0, "export shuffled: %s", err);
    b = slurp(other, &lb);
    CHECK(a && b && la == lb && !memcmp(a, b, (size_t)la), "shuffled rows give another header");
    free(b);
    if (a) {
        CHECK(strstr(a, "DO NOT EDIT") != NULL, "no do-not-edit banner");
        CHECK(strstr(a, "#ifndef NORMTUNE_DISPATCH_H") != NULL, "no include guard");
        CHECK(strstr(a, "#define NORMTUNE_DISPATCH_VERSION 5\n") != NULL, "version macro");
        CHECK(strstr(a, "NVIDIA H200 (cc 9.0") != NULL, "device and cc not in banner");
        CHECK(strstr(a, "2024-05-06T07:08:09Z") != NULL, "newest result time not in banner");
        CHECK(strstr(a, "13.0") != NULL, "NVRTC version not in banner");
        fixture(r, &p);
        int nc = check_header(a, r, n, "fixture");
        /* the fixture's five configs are all there, distinct (one of them
         * may be the op's fallback: then it is not there twice) */
        CHECK(nc >= 5, "only %d configs", nc);
        htab *h = parse(a);
        if (h) {
            const char *fam[5] = {PERS, PERS, PERS, NAIVE, NAIVE};
            const char *par[5] = {P1, P2, P5, N64, N128};
            for (int i = 0; i < 5; i++)
                CHECK(hcfg_id(h, fam[i], DT, par[i]) >= 0, "config %s %s: id %d", fam[i], par[i],
                      hcfg_id(h, fam[i], DT, par[i]));
        }
        free(h);
    }
    free(a);
}

/* The C program that includes the header and checks the lookup and the
 * tables (its kernel X-macro expanded with the name only).  It finds the
 * ids of the fixture's configs itself, by family, dtypes and params in
 * normtune_configs; the test defines T_PROB (the tuned problem's index),
 * T_NCONF (the number of configs), T_FBFAM and T_FBPAR (the op's fallback
 * for DT) from the registry before it. */
static const char lookup_prog[] =
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "#include \"normtune_dispatch.h\"\n"
    "int other_tu(void);\n"
    "static int refused[NORMTUNE_NCONFIGS];\n"
    "static long long wantM, wantN;\n"
    "static int bad_args, token, p;\n"
    "static int can(void *ctx, int c, long long M, long long N)\n"
    "{\n"
    "    if (ctx != &token || M != wantM || N != wantN || c < 0 || c >= NORMTUNE_NCONFIGS)\n"
    "        bad_args++;\n"
    "    return !refused[c];\n"
    "}\n"
    "static int look(long long M, long long N)\n"
    "{\n"
    "    wantM = M; wantN = N;\n"
    "    return normtune_lookup(p, M, N, can, &token);\n"
    "}\n"
    "#define FAMNAME(id, name, hash) name,\n"
    "static const char *const fams[] = { NORMTUNE_FAMILIES(FAMNAME) 0 };\n"
    "static int fam(const char *name)\n"
    "{\n"
    "    int i;\n"
    "    for (i = 0; fams[i]; i++) if (!strcmp(fams[i], name)) return i;\n"
    "    return -1;\n"
    "}\n"
    "static int cfg(const char *family, const char *params)\n"
    "{\n"
    "    int i, f = fam(family);\n"
    "    for (i = 0; i < NORMTUNE_NCONFIGS; i++)\n"
    "        if (normtune_configs[i].family == f && !strcmp(normtune_configs[i].dtypes, DT) &&\n"
    "            !strcmp(normtune_configs[i].params, params)) return i;\n"
    "    return -1;\n"
    "}\n"
    "#define KCHECK(id, name, ...) if (strcmp(name, normtune_kernel_names[id]) || \\\n"
    "    strcmp(name, #__VA_ARGS__) || id != nk++) fails++;\n"
    "#define EXPECT(e, v) do { int g_ = (e); if (g_ != (v)) { \\\n"
    "    printf(\"line %d: %s = %d, expected %d\\n\", __LINE__, #e, g_, (v)); fails++; } } while (0)\n"
    "int main(void)\n"
    "{\n"
    "    int fails = 0, i, j, q, nk = 0, pers, alig, naive, fb, c1, c2, c5, n64, n128, c1s, c2s, c5s;\n"
    "    NORMTUNE_KERNELS(KCHECK)\n"
    "    EXPECT(nk, NORMTUNE_NKERNELS);\n"
    "    EXPECT(NORMTUNE_NCONFIGS, T_NCONF);\n"
    "    EXPECT(NORMTUNE_NENTRIES, 6);\n"
    "    EXPECT(NORMTUNE_DISPATCH_VERSION, 5);\n"
    "    p = normtune_problem_index(OP, DT);\n"
    "    EXPECT(p, T_PROB);\n"
    "    pers = fam(PERS);\n"
    "    alig = fam(ALIG);\n"
    "    naive = fam(NAIVE);\n"
    "    fb = cfg(T_FBFAM, T_FBPAR);\n"
    "    c1 = cfg(PERS, P1);\n"
    "    c2 = cfg(PERS, P2);\n"
    "    c5 = cfg(PERS, P5);\n"
    "    n64 = cfg(NAIVE, N64);\n"
    "    n128 = cfg(NAIVE, N128);\n"
    "    c1s = cfg(ALIG, P1S);\n"
    "    c2s = cfg(ALIG, P2S);\n"
    "    c5s = cfg(ALIG, P5S);\n"
    "    EXPECT(c1s > c5 && c2s > c5 && c5s > c5 && c1s != c2s && c2s != c5s && c1s != c5s &&\n"
    "           c5s < NORMTUNE_NCONFIGS, 1); /* after the tuned */\n"
    "    for (i = 0; i < NORMTUNE_NENTRIES; i++)\n"
    "        if (normtune_entries[i].config == c1) EXPECT(normtune_entries[i].stretch, c1s);\n"
    "        else if (normtune_entries[i].config == c2) EXPECT(normtune_entries[i].stretch, c2s);\n"
    "        else if (normtune_entries[i].config == c5) EXPECT(normtune_entries[i].stretch, c5s);\n"
    "        else if (normtune_entries[i].config == n64 || normtune_entries[i].config == n128)\n"
    "            EXPECT(normtune_entries[i].stretch, -1); /* naive serves every N */\n"
    "    for (i = 0; i < NORMTUNE_NENTRIES; i++) /* only naive's entries (any N) are own_n */\n"
    "        EXPECT(normtune_entries[i].own_n, normtune_entries[i].config == n64 ||\n"
    "                                          normtune_entries[i].config == n128);\n"
    "    if (p < 0 || pers < 0 || alig < 0 || naive < 0 || fb < 0 || c1 < 0 || c2 < 0 || c5 < 0 || n64 < 0 ||\n"
    "        n128 < 0) {\n"
    "        printf(\"missing: problem %d, families %d %d, configs %d %d %d %d %d %d\\n\", p, pers,\n"
    "               naive, fb, c1, c2, c5, n64, n128);\n"
    "        return 1;\n"
    "    }\n"
    "    EXPECT(c1 != c2 && c1 != c5 && c1 != n64 && c1 != n128 && c2 != c5 && c2 != n64 &&\n"
    "           c2 != n128 && c5 != n64 && c5 != n128 && n64 != n128, 1);\n"
    "    EXPECT(normtune_problem_index(OP, \"x=bf16\"), -1);\n"
    "    EXPECT(normtune_problem_index(\"nope\", DT), -1);\n"
    "    EXPECT(normtune_problems[p].fallback, fb);\n"
    "    EXPECT(normtune_configs[c5].family, pers);\n"
    "    EXPECT(normtune_configs[n128].family, naive);\n"
    "    EXPECT(normtune_tuned_config(p, 2048, 1024), c1);\n"
    "    EXPECT(normtune_tuned_config(p, 4096, 1024), -1);\n"
    "    EXPECT(normtune_tuned_config(NORMTUNE_NPROBLEMS, 2048, 1024), -1);\n"
    "    EXPECT(normtune_tuned_config(-1, 2048, 1024), -1);\n"
    "    /* the other problems: nothing tuned, their fallback, can_run not asked */\n"
    "    wantM = wantN = -1;\n"
    "    for (q = 0; q < NORMTUNE_NPROBLEMS; q++) {\n"
    "        if (q == p) continue;\n"
    "        EXPECT(normtune_tuned_config(q, 2048, 1024), -1);\n"
    "        EXPECT(normtune_lookup(q, 2048, 1024, can, &token), normtune_problems[q].fallback);\n"
    "    }\n"
    "    EXPECT(normtune_kernel_name(-1) == 0, 1);\n"
    "    EXPECT(normtune_kernel_name(NORMTUNE_NKERNELS) == 0, 1);\n"
    "    EXPECT(normtune_config_kernel(0, normtune_configs[0].nk), -1);\n"
    "    for (i = 0; i < NORMTUNE_NCONFIGS; i++) {\n"
    "        if (normtune_configs[i].nk < 1) fails++;\n"
    "        for (j = 1; j < normtune_configs[i].nk; j++)\n"
    "            if (normtune_config_kernel(i, j - 1) >= normtune_config_kernel(i, j)) fails++;\n"
    "    }\n"
    "    for (i = 0; i < NORMTUNE_NPROBLEMS; i++)\n"
    "        if (normtune_problems[i].fallback < 0 && normtune_problems[i].count == 0) fails++;\n"
    "    for (i = 1; i < NORMTUNE_NENTRIES; i++)\n"
    "        if (normtune_entries[i - 1].N > normtune_entries[i].N ||\n"
    "            (normtune_entries[i - 1].N == normtune_entries[i].N &&\n"
    "             normtune_entries[i - 1].M >= normtune_entries[i].M)) fails++;\n"
    "    /* exact shapes */\n"
    "    EXPECT(normtune_lookup(p, 2048, 1024, 0, 0), c1);\n"
    "    EXPECT(look(16384, 1024), n64);\n"
    "    EXPECT(look(65536, 1024), c1);\n"
    "    EXPECT(look(2048, 4096), c2);\n"
    "    EXPECT(look(65536, 4096), n128);\n"
    "    EXPECT(look(16384, 8192), c5);\n"
    "    /* same N, in-between M: nearest by ratio; a tie goes to the larger M */\n"
    "    EXPECT(look(4096, 1024), c1);    /* x2 from 2048, x4 from 16384 */\n"
    "    EXPECT(look(8192, 1024), n64);   /* x4 from 2048, x2 from 16384 */\n"
    "    EXPECT(look(32768, 1024), c1);   /* x2 either side: 65536 wins */\n"
    "    EXPECT(look(20000, 4096), n128); /* 2048 is x9.8 away, 65536 x3.3 */\n"
    "    /* in-between N: nearest N; a tie goes to the larger N */\n"
    "    EXPECT(look(16384, 2048), c1s);  /* N 1024 (1024 away); naive's entry (exact M) is\n"
    "                                        offered at its own N only: c1 at 65536, shorter */\n"
    "    EXPECT(look(16384, 6144), c5);   /* 4096 and 8192 both 2048 away */\n"
    "    EXPECT(look(2048, 5000), c2s);   /* N 4096 nearest, and shorter: its stretch first */\n"
    "    /* out of range */\n"
    "    EXPECT(look(1, 512), c1);        /* below everything: N 1024, M 2048 */\n"
    "    EXPECT(look(0, 512), c1);        /* M < 1 treated as 1 */\n"
    "    EXPECT(look(1000000000LL, 1000000LL), c5s); /* N 8192's stretch */\n"
    "    EXPECT(look(10000000000LL, 1024), c1); /* huge M: 65536 */\n"
    "    EXPECT(normtune_lookup(NORMTUNE_NPROBLEMS, 64, 64, can, &token), -1); /* no such problem */\n"
    "    EXPECT(normtune_lookup(-1, 64, 64, can, &token), -1);\n"
    "    /* refusals fall through to the next candidate, then the fallback */\n"
    "    refused[c1] = 1;\n"
    "    EXPECT(look(2048, 1024), n64);   /* same N: 16384 before 65536 */\n"
    "    /* past a refused config's N: its stretch, before the next entry */\n"
    "    EXPECT(look(2048, 1032), c1s);   /* block 128 -> 160 serves 1032 */\n"
    "    EXPECT(look(2048, 1016), c2);    /* below its N: no stretch; naive only at 1024 */\n"
    "    EXPECT(look(2048, 1024), n64);   /* ... where it serves */\n"
    "    refused[c1s] = 1;\n"
    "    EXPECT(look(2048, 1032), c2);\n"
    "    refused[c1s] = 0;\n"
    "    refused[n64] = 1;\n"
    "    EXPECT(look(2048, 1024), c2);    /* N 1024 used up: N 4096, M 2048 */\n"
    "    refused[c2] = 1;\n"
    "    EXPECT(look(2048, 1024), c5);    /* naive's N 4096 entry not offered at 1024 */\n"
    "    EXPECT(look(65536, 4096), n128); /* ... but at 4096 */\n"
    "    refused[n128] = 1;\n"
    "    EXPECT(look(2048, 1024), c5);\n"
    "    refused[c5] = 1;\n"
    "    EXPECT(look(2048, 1024), fb);    /* the fallback, not asked */\n"
    "    EXPECT(look(16384, 8192), c2s);  /* past N 4096: its entry's stretch */\n"
    "    refused[c2s] = 1;\n"
    "    EXPECT(look(16384, 8192), c1s);  /* then N 1024's */\n"
    "    refused[c1s] = 1;\n"
    "    EXPECT(look(16384, 8192), fb);\n"
    "    memset(refused, 0, sizeof refused);\n"
    "    for (i = 0; i < NORMTUNE_NCONFIGS; i++)\n"
    "        refused[i] = normtune_configs[i].family == pers || normtune_configs[i].family == alig;\n"
    "    EXPECT(look(2048, 8192), fb);    /* N 8192 refused; naive's entries not at 8192 */\n"
    "    EXPECT(look(2048, 4096), n128);  /* at its own N: 65536 naive */\n"
    "    EXPECT(look(2048, 1024), n64);\n"
    "    EXPECT(bad_args, 0);\n"
    "    EXPECT(other_tu(), c5 * 1000 + c1);\n"
    "    if (fails) printf(\"%d lookup checks failed\\n\", fails);\n"
    "    return fails ? 1 : 0;\n"
    "}\n";

/* A second translation unit including the same header. */
static const char other_prog[] =
    "#include \"normtune_dispatch.h\"\n"
    "int other_tu(void);\n"
    "int other_tu(void)\n"
    "{\n"
    "    int p = normtune_problem_index(OP, DT);\n"
    "    return normtune_lookup(p, 16384, 8192, 0, 0) * 1000 +\n"
    "           normtune_entries[normtune_problems[p].first].config;\n"
    "}\n";

/* Write defs then text into path. */
static void spit2(const char *path, const char *defs, const char *text) {
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(defs, f);
        fputs(text, f);
        fclose(f);
    }
}

TEST(header_compiles_and_looks_up) {
    char path[700], cmd[3000], defs[1500];
    store_best_row r[8];
    store_prov pv;
    eprob *e = calloc(MAXP, sizeof *e);
    CHECK(e != NULL, "out of memory");
    if (!e) return;
    int n = fixture(r, &pv), ne = enum_problems(e, MAXP, 1);
    int tp = ne <= MAXP ? tuned_index(e, ne) : -1;
    /* the number of configs, from the registry */
    ecfg *ec = calloc(MAXC, sizeof *ec);
    int want_fb[MAXP], row_cfg[8], row_str[8], nc = -1;
    if (ec && tp >= 0) {
        qsort(r, (size_t)n, sizeof *r, cmp_nm);
        nc = expect_configs(e, ne, tp, r, n, ec, want_fb, row_cfg, row_str);
    }
    free(ec);
    CHECK(tp >= 0 && e[tp].fb && nc > 0, "tuned problem %d, %d configs", tp, nc);
    snprintf(defs, sizeof defs,
             "#define OP \"%s\"\n#define DT \"%s\"\n#define PERS \"%s\"\n#define ALIG \"%s\"\n#define NAIVE \"%s\"\n"
             "#define P1 \"%s\"\n#define P2 \"%s\"\n#define P5 \"%s\"\n#define N64 \"%s\"\n"
             "#define N128 \"%s\"\n#define P1S \"%s\"\n#define P2S \"%s\"\n#define P5S \"%s\"\n#define T_PROB %d\n#define T_NCONF %d\n"
             "#define T_FBFAM \"%s\"\n#define T_FBPAR \"%s\"\n",
             OP, DT, PERS, ALIG, NAIVE, P1, P2, P5, N64, N128, P1S, P2S, P5S, tp, nc,
             tp >= 0 && e[tp].fb ? e[tp].fb->name : "none", tp >= 0 ? e[tp].fbp : "");
    free(e);
    snprintf(path, sizeof path, "%s/lookup.c", t_tmpdir());
    spit2(path, defs, lookup_prog);
    snprintf(path, sizeof path, "%s/other.c", t_tmpdir());
    spit2(path, defs, other_prog);
    const char *d = t_tmpdir();
    /* the header alone, strictest C */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && printf '#include \"normtune_dispatch.h\"\\n#include \"normtune_dispatch.h\"\\n"
             "int x;\\n' > alone.c && %s -std=c99 -Wall -Wextra -Werror -pedantic -Wshadow "
             "-Wstrict-prototypes -c alone.c -o alone.o",
             d, cc());
    CHECK(sh(cmd) == 0, "header alone does not compile: %s", cmd);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && %s -std=c99 -Wall -Wextra -Werror -pedantic -o lookup lookup.c other.c "
             "&& ./lookup",
             d, cc());
    int rc = sh(cmd);
    CHECK(rc == 0, "lookup program failed (status %d): %s", rc, cmd);
    /* as C++ too (nvcc compiles it as C++), when a C++ compiler is here */
    if (sh("command -v c++ >/dev/null 2>&1") == 0) {
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && cp lookup.c lookup.cc && cp other.c other.cc && c++ -std=c++11 -Wall "
                 "-Wextra -Werror -pedantic -o lookupxx lookup.cc other.cc && ./lookupxx",
                 d);
        rc = sh(cmd);
        CHECK(rc == 0, "lookup program as C++ failed (status %d): %s", rc, cmd);
    }
}

/* Check that config c of header a (parsed as h) lists every kernel its
 * plan launches for problem pr (its op, dtypes and shape): each name is
 * in normtune_kernel_names at an id in the config's list, with its
 * X-macro line.  Adds the launches checked to *checked. */
static void check_launches(const char *a, const htab *h, int c, const nt_problem *pr,
                           int *checked) {
    nt_params pa;
    nt_plan pl;
    char err[256] = "";
    CHECK(c >= 0 && c < h->ncfg, "config %d", c);
    if (c < 0 || c >= h->ncfg) return;
    const hcfg *g = &h->cfg[c];
    const nt_family *f = nt_family_find(hcfg_fam(h, c));
    int ok = f && nt_params_parse(g->params, &pa) == 0 &&
             f->plan(&pa, pr, NULL, &pl, err, sizeof err) == 0;
    CHECK(ok, "plan %s %s %s M=%lld N=%lld: %s", hcfg_fam(h, c), g->dt, g->params,
          (long long)pr->M, (long long)pr->N, err);
    if (!ok) return;
    /* the config's kernel ids, from the data array */
    const char *arr = strstr(a, "normtune_config_kernels[NORMTUNE_NCONFIG_KERNELS + 1] = {");
    int ids[64], nid = 0;
    if (arr) arr = strchr(arr, '{') + 1;
    for (int k = 0; arr && k < g->kfirst + g->nk && nid < 64; k++) {
        while (*arr && !(*arr == '-' || (*arr >= '0' && *arr <= '9'))) {
            if (*arr == '/' && arr[1] == '*') arr = strstr(arr, "*/") + 2;
            else arr++;
        }
        int v = (int)strtol(arr, (char **)&arr, 10);
        if (k >= g->kfirst) ids[nid++] = v;
    }
    CHECK(nid == g->nk, "config %d: %d kernel ids read, %d listed", c, nid, g->nk);
    for (int l = 0; l < pl.nlaunch; l++) {
        char q[200];
        int found = 0;
        snprintf(q, sizeof q, "    \"%s\",\n", pl.l[l].name);
        const char *names = strstr(a, "normtune_kernel_names[NORMTUNE_NKERNELS + 1] = {\n");
        const char *hit = names ? strstr(names, q) : NULL;
        int id = -1;
        for (const char *s = names ? strchr(names, '\n') + 1 : NULL; s && hit && s <= hit;
             s = strchr(s, '\n') + 1)
            id++;
        for (int k = 0; k < nid; k++) found |= ids[k] == id;
        CHECK(hit && found, "config %d %s %s N=%lld: kernel %s (id %d) not in its list", c,
              hcfg_fam(h, c), g->params, (long long)pr->N, pl.l[l].name, id);
        snprintf(q, sizeof q, "X(%d, \"%s\", %s)", id, pl.l[l].name, pl.l[l].name);
        CHECK(strstr(a, q) != NULL, "no X-macro line %s", q);
        (*checked)++;
    }
}

/* Every config's kernel list holds the kernels its plans launch: at every
 * tuned shape of the config, and for every problem's fallback at N = 8 and
 * NT_MAX_N (M = 1), parsed back from the header's text. */
/* An entry of a problem that has a tuned N + 8 gets no stretch: the lookup
 * serves N + 8 and every longer row from the entries of N + 8 first, so
 * the stretch would be a config the library never chose.  The fixture's P2
 * at 2048 x 4096 with aligned at 16384 x 4104 beside it: P2's stretch (P2S,
 * no other entry's) leaves the header; P1's and P5's stay. */
TEST(no_stretch_at_tuned_n8) {
    store_best_row r[8];
    store_prov p;
    char err[512] = "", path[600];
    int n = fixture(r, &p);
    row(&r[n++], 16384, 4104, ALIG, "block=256,chunks=3,stages=2,k=2", 105.0);
    snprintf(path, sizeof path, "%s/n8.h", t_tmpdir());
    CHECK(write_to(path, r, n, &p, err, sizeof err) == 0, "export: %s", err);
    long la;
    char *a = slurp(path, &la);
    htab *h = a ? parse(a) : NULL;
    CHECK(check_header(a, r, n, "N + 8 tuned") > 0, "header with N + 8 tuned");
    CHECK(h && hcfg_id(h, ALIG, DT, P2S) == -1, "P2's stretch %s is still a config", P2S);
    CHECK(h && hcfg_id(h, ALIG, DT, P1S) >= 0 && hcfg_id(h, ALIG, DT, P5S) >= 0,
          "P1's or P5's stretch is gone");
    free(h);
    free(a);
}

/* The lookup's row lines: every problem's normtune_problem_lines[] is
 * the elements of its rows in 128 bytes (64 for bf16 and fp16 rows, 32
 * for fp32) where its op asks for them (nt_op row_lines), else 0, and an N whose rows start on those lines when the tuned N's
 * do not (or the reverse) is an eighth of N farther.  With 4096
 * (persistent at M 2048, naive at 65536) and 4104 (aligned at 16384)
 * tuned: 4088 goes to 4104 (16 away, both off the lines) rather than to
 * 4096 (8 away, plus 511), where the plain nearest N would give 4096's
 * persistent at M 2048; 4160 to 4096 (64 away) rather than to 4104 (56
 * away, plus 520), there to its persistent entry, since naive's, which
 * runs any N, is offered at 4096 only. */
static const char lines_prog[] =
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "#include \"normtune_dispatch.h\"\n"
    "#define EXPECT(e, v) do { long long g_ = (e); if (g_ != (v)) { \\\n"
    "    printf(\"line %d: %s is %lld, want %lld\\n\", __LINE__, #e, g_, (long long)(v)); \\\n"
    "    fails++; } } while (0)\n"
    "#define FAMNAME(id, name, hash) name,\n"
    "static const char *const fams[] = { NORMTUNE_FAMILIES(FAMNAME) 0 };\n"
    "static int cfg(const char *family, const char *params)\n"
    "{\n"
    "    int i, f = -1;\n"
    "    for (i = 0; fams[i]; i++) if (!strcmp(fams[i], family)) f = i;\n"
    "    for (i = 0; i < NORMTUNE_NCONFIGS; i++)\n"
    "        if (normtune_configs[i].family == f && !strcmp(normtune_configs[i].dtypes, DT) &&\n"
    "            !strcmp(normtune_configs[i].params, params)) return i;\n"
    "    return -1;\n"
    "}\n"
    "int main(void)\n"
    "{\n"
    "    int fails = 0, i, p = normtune_problem_index(OP, DT);\n"
    "    int alig = cfg(ALIG, A4104), n128 = cfg(NAIVE, N128), c2 = cfg(PERS, P2);\n"
    "    static const int want[] = WANT_LINES;\n"
    "    EXPECT(sizeof want / sizeof want[0], NORMTUNE_NPROBLEMS + 1);\n"
    "    for (i = 0; i < NORMTUNE_NPROBLEMS; i++) EXPECT(normtune_problem_lines[i], want[i]);\n"
    "    EXPECT(normtune_problem_lines[NORMTUNE_NPROBLEMS], 0);\n"
    "    EXPECT(alig >= 0 && n128 >= 0 && c2 >= 0 && alig != n128, 1);\n"
    "    EXPECT(normtune_lookup(p, 16384, 4104, 0, 0), alig);\n"
    "    EXPECT(normtune_lookup(p, 2048, 4088, 0, 0), alig);   /* 16; 4096's 8 + 511 */\n"
    "    EXPECT(normtune_lookup(p, 16384, 4088, 0, 0), alig);\n"
    "    EXPECT(normtune_lookup(p, 2048, 4160, 0, 0), c2);     /* 64; 4104's 56 + 520 */\n"
    "    EXPECT(normtune_lookup(p, 16384, 4160, 0, 0), c2);    /* 4096's (naive's at 4096 only) */\n"
    "    EXPECT(normtune_lookup(p, 16384, 4096, 0, 0), n128);  /* M 65536 nearer than 2048 */\n"
    "    EXPECT(normtune_lookup(p, 16384, 4112, 0, 0), alig);  /* both off: 4104 nearer */\n"
    "    EXPECT(normtune_lookup(p, 16384, 4608, 0, 0), c2);    /* 512; 4104's 504 + 576 */\n"
    "    EXPECT(normtune_lookup(p, 16384, 4616, 0, 0), alig);  /* 512; 4096's 520 + 577 */\n"
    "    return fails ? 1 : 0;\n"
    "}\n";

TEST(lookup_row_lines) {
    store_best_row r[8];
    store_prov p;
    char err[512] = "", path[600], cmd[1800], defs[1400], want[600] = "{";
    int n = fixture(r, &p);
    row(&r[n++], 16384, 4104, ALIG, "block=256,chunks=3,stages=2,k=2", 105.0);
    const char *d = t_tmpdir();
    snprintf(path, sizeof path, "%s/lines/normtune_dispatch.h", d);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/lines'", d);
    CHECK(sh(cmd) == 0, "mkdir");
    CHECK(write_to(path, r, n, &p, err, sizeof err) == 0, "export: %s", err);
    /* the lines each problem should have, from the registry */
    long la;
    char *a = slurp(path, &la);
    htab *h = a ? parse(a) : NULL;
    CHECK(h && h->nprob > 1, "problems of the header");
    int lined = 0, unlined = 0;
    for (int q = 0; h && q < h->nprob; q++) {
        nt_problem pr;
        const nt_op *op = nt_op_find(h->prob[q].op);
        CHECK(op != NULL, "op %s", h->prob[q].op);
        if (!op) continue;
        nt_problem_init(&pr, op, 1, 64);
        CHECK(nt_dtypes_parse(&pr, h->prob[q].dt, err, sizeof err) == 0, "dtypes %s", h->prob[q].dt);
        int w = !op->row_lines ? 0 : pr.dtype[0] == NT_F32 ? 32 : 64;
        lined += w > 0;
        unlined += w == 0;
        snprintf(want + strlen(want), sizeof want - strlen(want), "%d, ", w);
    }
    snprintf(want + strlen(want), sizeof want - strlen(want), "0}");
    CHECK(lined > 0 && unlined > 0, "the ops ask for row lines %d times and not %d times (the "
          "test wants both)", lined, unlined);
    free(h);
    free(a);
    snprintf(defs, sizeof defs,
             "#define OP \"%s\"\n#define DT \"%s\"\n#define PERS \"%s\"\n#define ALIG \"%s\"\n"
             "#define NAIVE \"%s\"\n#define N128 \"%s\"\n#define P2 \"%s\"\n"
             "#define A4104 \"block=256,chunks=3,stages=2,k=2\"\n#define WANT_LINES %s\n",
             OP, DT, PERS, ALIG, NAIVE, N128, P2, want);
    snprintf(path, sizeof path, "%s/lines/lines.c", d);
    spit2(path, defs, lines_prog);
    snprintf(cmd, sizeof cmd,
             "cd '%s/lines' && %s -std=c99 -Wall -Wextra -Werror -pedantic -o lines lines.c && ./lines",
             d, cc());
    int rc = sh(cmd);
    CHECK(rc == 0, "row lines program failed (status %d): %s", rc, cmd);
}

TEST(kernel_lists) {
    long len = 0;
    char *a = slurp(hdr, &len);
    htab *h = a ? parse(a) : NULL;
    CHECK(a && h, "no header");
    if (!a || !h) {
        free(a);
        free(h);
        return;
    }
    store_best_row r[8];
    store_prov p;
    char err[256];
    int n = fixture(r, &p), checked = 0, pairs = 0;
    for (int i = 0; i < n; i++) {
        nt_problem pr;
        int c = hcfg_id(h, r[i].family, DT, r[i].params);
        CHECK(c >= 0, "no config line for %s %s", r[i].family, r[i].params);
        nt_problem_init(&pr, nt_op_find(OP), r[i].M, r[i].N);
        CHECK(nt_dtypes_parse(&pr, DT, err, sizeof err) == 0, "dtypes %s: %s", DT, err);
        if (c < 0) continue;
        check_launches(a, h, c, &pr, &checked);
        pairs++;
    }
    for (int q = 0; q < h->nprob; q++) {
        nt_problem pr;
        const nt_op *op = nt_op_find(h->prob[q].op);
        int fb = h->prob[q].fb;
        CHECK(op != NULL, "problem %d: op %s", q, h->prob[q].op);
        if (!op || fb < 0) continue;
        for (int m = 0; m < 2; m++) {
            nt_problem_init(&pr, op, 1, m ? NT_MAX_N : 8);
            CHECK(nt_dtypes_parse(&pr, h->prob[q].dt, err, sizeof err) == 0, "dtypes %s: %s",
                  h->prob[q].dt, err);
            CHECK(fb < h->ncfg && !strcmp(h->cfg[fb].dt, h->prob[q].dt),
                  "problem %d (%s %s): fallback %d has other dtypes", q, op->name, h->prob[q].dt, fb);
            check_launches(a, h, fb, &pr, &checked);
            pairs++;
        }
    }
    CHECK(pairs >= n + 2 && checked >= pairs, "only %d launches of %d plans checked", checked, pairs);
    free(h);
    free(a);
}

TEST(refusals) {
    store_best_row r[8];
    store_prov p;
    char err[512], path[700];
    int n = fixture(r, &p);
    snprintf(path, sizeof path, "%s/refused.h", t_tmpdir());

    char ph[17];
    cur_hash(PERS, ph);
    /* one family, two source hashes: refused naming the family */
    snprintf(r[2].src_hash, sizeof r[2].src_hash, "fedcba9876543210");
    err[0] = 0;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "two hashes in one family accepted");
    CHECK(strstr(err, PERS) && strstr(err, "fedcba9876543210") && strstr(err, ph),
          "message: %s", err);
    fixture(r, &p);
    /* ... but two families may have different hashes */
    for (int i = 0; i < n; i++)
        if (!strcmp(r[i].family, NAIVE)) snprintf(r[i].src_hash, sizeof r[i].src_hash, "fedcba9876543210");
    CHECK(write_to(path, r, n, &p, err, sizeof err) == 0, "per-family hashes refused: %s", err);
    char *h = slurp(path, NULL);
    char want[120];
    snprintf(want, sizeof want, "\"" PERS "\", \"%s\")", ph);
    CHECK(h && strstr(h, "\"" NAIVE "\", \"fedcba9876543210\")") && strstr(h, want),
          "per-family hashes not in the header");
    free(h);
    fixture(r, &p);

    for (int i = 0; i < n; i++) snprintf(r[i].src_hash, sizeof r[i].src_hash, "xyz");
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "malformed source hash accepted");
    fixture(r, &p);

    r[3].M = r[5].M;                   /* (1024, 65536) twice */
    err[0] = 0;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "two rows for one shape accepted");
    CHECK(strstr(err, "65536") != NULL, "message: %s", err);
    fixture(r, &p);

    snprintf(r[1].family, sizeof r[1].family, "rmsnorm_bwd.bogus");
    err[0] = 0;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "unknown family accepted");
    CHECK(strstr(err, "bogus") != NULL, "message: %s", err);
    fixture(r, &p);

    snprintf(r[1].op, sizeof r[1].op, "layernorm_bwd");
    err[0] = 0;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "unknown op accepted");
    CHECK(strstr(err, "layernorm_bwd") != NULL, "message: %s", err);
    fixture(r, &p);

    snprintf(r[1].params, sizeof r[1].params, "block=128,chunks=1");
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "incomplete params accepted");
    fixture(r, &p);

    snprintf(r[4].dtype, sizeof r[4].dtype, "x=bf16,w=bf16,dw=f64");
    err[0] = 0;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "unknown dtype accepted");
    CHECK(strstr(err, "f64") != NULL, "message: %s", err);
    fixture(r, &p);

    /* an fp32 dw through bf16 partials: too imprecise for its dtypes */
    snprintf(r[0].params, sizeof r[0].params, "nsplit=128,partial=bf16");
    err[0] = 0;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "an imprecise config was exported");
    CHECK(strstr(err, "precise") != NULL, "message: %s", err);
    fixture(r, &p);

    /* a shape its config cannot run (persistent N > block * chunks * 8) */
    snprintf(r[1].params, sizeof r[1].params, "block=32,chunks=1,stages=1,k=1");
    err[0] = 0;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "a config that cannot run its shape");
    CHECK(strstr(err, "block=32") != NULL, "message: %s", err);
    fixture(r, &p);

    /* no rows: the fallbacks alone */
    CHECK(write_to(path, r, 0, &p, err, sizeof err) == 0, "fallbacks-only header: %s", err);
    h = slurp(path, NULL);
    CHECK(h && strstr(h, "#define NORMTUNE_NENTRIES 0\n"), "fallbacks-only header has entries");
    check_header(h, r, 0, "fallbacks only");
    free(h);

    /* hostile provenance text cannot break the header */
    snprintf(p.device, sizeof p.device, "evil */ \"dev\\?\?/ \001");
    CHECK(write_to(path, r, n, &p, err, sizeof err) == 0, "export: %s", err);
    char cmd[1500];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && printf '#include \"refused.h\"\\nint y;\\n' > evil.c && %s -std=c99 "
             "-Wall -Wextra -Werror -pedantic -c evil.c -o evil.o",
             t_tmpdir(), cc());
    CHECK(sh(cmd) == 0, "header with a hostile device name does not compile");
}

/* nt_export_stale names the families measured with other sources. */
TEST(stale_note) {
    store_best_row r[8];
    store_prov p;
    char msg[512], cur[17];
    int n = fixture(r, &p);
    CHECK(nt_family_hash(nt_family_find(PERS), cur) == 0, "hash");
    int k = nt_export_stale(r, n, msg, sizeof msg);
    CHECK(k == 0 && !msg[0], "current rows stale: %d '%s'", k, msg);
    for (int i = 0; i < n; i++)
        if (!strcmp(r[i].family, PERS)) snprintf(r[i].src_hash, sizeof r[i].src_hash, HASH);
    k = nt_export_stale(r, n, msg, sizeof msg);
    CHECK(k == 1 && strstr(msg, PERS) && strstr(msg, HASH) && strstr(msg, cur) && !strstr(msg, NAIVE),
          "stale: %d '%s'", k, msg);
}

/* The banner names the model and the GPUs whose results are the tuned
 * shapes, most first; NORMTUNE_DEVICE_UUID is the first of them and
 * NORMTUNE_DEVICE_NGPUS their number.  A provenance filled by hand (no
 * GPU list) is one GPU with every shape; a long list ends in a count; a
 * hostile uuid is cleaned. */
TEST(gpus_banner) {
    store_best_row r[8];
    store_prov p;
    char path[700], err[512];
    int n = fixture(r, &p);
    snprintf(path, sizeof path, "%s/gpus.h", t_tmpdir());
    CHECK(write_to(path, r, n, &p, err, sizeof err) == 0, "%s", err);
    char *h = slurp(path, NULL);
    CHECK(h && strstr(h, " *   device          NVIDIA H200 (cc 9.0)\n") &&
              strstr(h, " *   GPUs            1 of the model measured the tuned shapes "
                        "(shapes, uuid):\n *                       6  GPU-00000000-test\n") &&
              strstr(h, "#define NORMTUNE_DEVICE_NGPUS 1\n"), "one GPU:\n%.900s", h ? h : "");
    free(h);
    p.sms = 132;
    p.mem_clock_khz = 3201000;
    p.ngpus = 2;
    snprintf(p.gpus[0].uuid, sizeof p.gpus[0].uuid, "GPU-00000000-test");
    p.gpus[0].rows = 4;
    snprintf(p.gpus[1].uuid, sizeof p.gpus[1].uuid, "GPU-*/\"x");
    p.gpus[1].rows = 2;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == 0, "%s", err);
    h = slurp(path, NULL);
    CHECK(h && strstr(h, " *   device          NVIDIA H200 (cc 9.0, 132 SMs, memory clock "
                         "3201000 kHz)\n") &&
              strstr(h, " *   GPUs            2 of the model measured the tuned shapes "
                        "(shapes, uuid):\n *                       4  GPU-00000000-test\n"
                        " *                       2  GPU-___x\n *   driver") &&
              strstr(h, "#define NORMTUNE_DEVICE_UUID \"GPU-00000000-test\"\n"
                        "#define NORMTUNE_DEVICE_NGPUS 2\n"), "two GPUs:\n%.1200s", h ? h : "");
    free(h);
    p.ngpus = STORE_PROV_GPUS + 4;
    for (int i = 0; i < STORE_PROV_GPUS; i++) {
        snprintf(p.gpus[i].uuid, sizeof p.gpus[i].uuid, "GPU-%02d", i);
        p.gpus[i].rows = 1;
    }
    CHECK(write_to(path, r, n, &p, err, sizeof err) == 0, "%s", err);
    h = slurp(path, NULL);
    CHECK(h && strstr(h, "  GPU-15\n *                          and 4 more\n *   driver") &&
              strstr(h, "#define NORMTUNE_DEVICE_NGPUS 20\n"), "many GPUs:\n%.2000s", h ? h : "");
    free(h);
}

/* nt_export_unmeasured names the families of this build that the device
 * has no current result of, and only those. */
TEST(unmeasured_note) {
    static store_prov p;
    char msg[2048];
    const nt_family *const *all = nt_all_families();
    int nall = 0;
    memset(&p, 0, sizeof p);
    for (; all[nall]; nall++) snprintf(p.families[nall], sizeof p.families[0], "%s", all[nall]->name);
    p.nfamilies = nall;
    CHECK(nall >= 2, "%d families", nall);
    int k = nt_export_unmeasured(&p, msg, sizeof msg);
    CHECK(k == 0 && !msg[0], "every family measured, yet %d: '%s'", k, msg);
    /* drop the first family and the last one that is no family's grown
     * family (a grown family of a measured one counts as measured: its
     * stretches); a name of no family changes nothing */
    int last = nall - 1;
    for (int again = 1; again && last > 1;) {
        again = 0;
        for (int i = 0; i < nall; i++) again |= all[i]->grown == all[last];
        last -= again;
    }
    CHECK(last > 1, "a family that is no family's grown");
    snprintf(p.families[0], sizeof p.families[0], "no_op.no_family");
    snprintf(p.families[last], sizeof p.families[0], "%s", all[nall - 1]->name);
    p.nfamilies = nall - 1;
    k = nt_export_unmeasured(&p, msg, sizeof msg);
    CHECK(k == 2 && strstr(msg, all[0]->name) && strstr(msg, all[last]->name) &&
              !strstr(msg, all[1]->name) && !strstr(msg, "no_family"),
          "two unmeasured: %d '%s' (%s)", k, msg, all[last]->name);
    p.nfamilies = 0;
    k = nt_export_unmeasured(&p, msg, sizeof msg);
    CHECK(k == nall, "none measured: %d of %d", k, nall);
}

/* Run cmd_export in this process with the words given; its exit code. */
static int export_cmd6(const char *a1, const char *a2, const char *a3, const char *a4,
                       const char *a5, const char *a6) {
    char *argv[8] = {(char *)"export"};
    int argc = 1;
    const char *in[] = {a1, a2, a3, a4, a5, a6};
    for (int i = 0; i < 6 && in[i]; i++) argv[argc++] = (char *)in[i];
    fflush(stdout);
    return cmd_export(argc, argv);
}
#define export_cmd(a, b, c, d, e) export_cmd6(a, b, c, d, e, NULL)

TEST(command_line) {
    char db[700], out[700];
    struct stat st;
    snprintf(db, sizeof db, "%s/missing.db", t_tmpdir());
    snprintf(out, sizeof out, "%s/never.h", t_tmpdir());
    CHECK(export_cmd("--help", NULL, NULL, NULL, NULL) == 0, "--help");
    CHECK(export_cmd(NULL, NULL, NULL, NULL, NULL) == 2, "no arguments is not a usage error");
    CHECK(export_cmd("--db", db, NULL, NULL, NULL) == 2, "no -o is not a usage error");
    CHECK(export_cmd("--db", db, "-o", out, "--bogus") == 2, "unknown option");
    CHECK(export_cmd("--db", db, "-o", out, "--op") == 2, "--op is gone (one header for all)");
    CHECK(export_cmd("--db", db, "-o", out, "extra") == 2, "extra argument");
    CHECK(export_cmd("--db", db, "-o", out, NULL) == 1, "missing database is not a failure");
    CHECK(stat(out, &st) != 0, "a failed export left %s", out);
    CHECK(stat(db, &st) != 0, "a read-only export created the database");
}

/* An H200 of the given uuid, as the tests' results are recorded under. */
static void test_device(nt_device *d, const char *uuid) {
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "NVIDIA H200");
    snprintf(d->uuid, sizeof d->uuid, "%s", uuid);
    d->cc_major = 9;
}

/* The dw error put() records (0: none recorded) and a dx error put()
 * records beside it (0: none). */
static double put_err_dw, put_err_dx;

/* Put one ok result for (M, N, family, params) under sweep sw, with the
 * family's current source hash. */
static int put(store *db, int64_t dev, int64_t sw, int64_t M, int64_t N, const char *fam,
               const char *params, double us, char *err, size_t errlen) {
    static nt_result res;
    char hash[17];
    store_key k;
    memset(&k, 0, sizeof k);
    memset(&res, 0, sizeof res);
    if (nt_family_hash(nt_family_find(fam), hash)) snprintf(hash, sizeof hash, HASH);
    k.device = dev;
    k.family = fam;
    k.params = params;
    k.src_hash = hash;
    k.op = OP;
    k.dtype = DT;
    k.shape.M = M;
    k.shape.N = N;
    k.timing.warmup = 1;
    k.timing.min_samples = 2;
    k.timing.max_samples = 4;
    k.timing.rel_ci = 0.01;
    res.status = NT_OK;
    res.median_us = res.p10_us = res.p90_us = us;
    res.nsamples = 2;
    res.samples[0] = res.samples[1] = us;
    res.gbps = 6.0 * (double)M * (double)N / (us * 1e3);
    if (put_err_dx > 0) res.errs[res.nerr++] = (nt_error){"dx", put_err_dx, 1e-2, NT_TOL_BF16};
    if (put_err_dw > 0) res.errs[res.nerr++] = (nt_error){"dw", put_err_dw, NT_TOL_F32, NT_TOL_F32};
    return store_put(db, sw, &k, &res, err, errlen);
}

/* A result whose error exceeds what its output's dtype asks (an fp32 dw
 * through bf16 partials, 1.6e-3) is never the config of its shape, even
 * when it is the fastest; the next fastest eligible one is. */
TEST(eligibility) {
    char db[700], out[700], err[512] = "";
    store *s = NULL;
    nt_device d;
    int64_t dev = 0, sw = 0;
    test_device(&d, "GPU-prec");
    snprintf(db, sizeof db, "%s/prec.db", t_tmpdir());
    snprintf(out, sizeof out, "%s/prec.h", t_tmpdir());
    int ok = store_open(&s, db, STORE_CREATE, err, sizeof err) == 0 &&
             store_device(s, &d, &dev, err, sizeof err) == 0 &&
             store_sweep_begin(s, dev, "t.lua", "00", 100.0, &sw, err, sizeof err) == 0;
    put_err_dw = 1.6e-3;
    ok = ok && put(s, dev, sw, 1024, 1024, NAIVE, "nsplit=32,partial=bf16", 7.8, err, sizeof err) == 0;
    put_err_dw = 2e-7;
    put_err_dx = 1e-3;
    ok = ok && put(s, dev, sw, 1024, 1024, PERS, "block=128,chunks=1,stages=3,k=2", 8.3, err, sizeof err) == 0 &&
         put(s, dev, sw, 1024, 1024, NAIVE, "nsplit=64,partial=f32", 9.0, err, sizeof err) == 0;
    put_err_dx = 0;
    put_err_dw = 1.6e-3;                /* a shape with no eligible result at all */
    ok = ok && put(s, dev, sw, 4096, 1024, NAIVE, "nsplit=32,partial=bf16", 9.9, err, sizeof err) == 0 &&
         store_sweep_end(s, sw, "done", err, sizeof err) == 0;
    put_err_dw = 0;
    CHECK(ok, "making the database: %s", err);
    if (s) store_close(s);
    if (!ok) return;
    CHECK(export_cmd("--db", db, "-o", out, NULL) == 0, "export failed");
    long n = 0;
    char *h = slurp(out, &n);
    CHECK(h != NULL, "no header");
    if (!h) return;
    CHECK(strstr(h, "partial=bf16") == NULL, "a config with bf16 partials was exported for an fp32 dw");
    CHECK(strstr(h, "\"block=128,chunks=1,stages=3,k=2\", ") != NULL,
          "the fastest eligible config is not the one exported");
    CHECK(strstr(h, "#define NORMTUNE_NENTRIES 1\n") != NULL,
          "a shape with no eligible result is in the table");
    /* 1024 x 1024 uses it: its config id is found in the header */
    store_best_row w;
    row(&w, 1024, 1024, PERS, "block=128,chunks=1,stages=3,k=2", 8.3);
    check_header(h, &w, 1, "eligibility");
    free(h);
}

TEST(end_to_end) {
    char db[700], out[700], out2[700], err[512] = "";
    store *s = NULL;
    nt_device d;
    int64_t dev = 0, sw = 0;
    test_device(&d, "GPU-test");
    snprintf(d.driver, sizeof d.driver, "13000");
    snprintf(d.runtime, sizeof d.runtime, "13000");
    snprintf(d.nvrtc, sizeof d.nvrtc, "13.0");
    snprintf(db, sizeof db, "%s/e2e.db", t_tmpdir());
    snprintf(out, sizeof out, "%s/e2e/dispatch.h", t_tmpdir());
    snprintf(out2, sizeof out2, "%s/e2e/dispatch2.h", t_tmpdir());
    char dir[720];
    snprintf(dir, sizeof dir, "%s/e2e", t_tmpdir());
    mkdir(dir, 0755);
    int ok = store_open(&s, db, STORE_CREATE, err, sizeof err) == 0 &&
             store_device(s, &d, &dev, err, sizeof err) == 0 &&
             store_sweep_begin(s, dev, "t.lua", "00", 100.0, &sw, err, sizeof err) == 0 &&
             put(s, dev, sw, 2048, 1024, PERS, "block=128,chunks=1,stages=2,k=1", 9.5, err, sizeof err) == 0 &&
             put(s, dev, sw, 2048, 1024, NAIVE, "nsplit=64,partial=f32", 19.5, err, sizeof err) == 0 &&
             put(s, dev, sw, 16384, 1024, NAIVE, "nsplit=32,partial=f32", 60.0, err, sizeof err) == 0 &&
             put(s, dev, sw, 2048, 4096, PERS, "block=256,chunks=2,stages=2,k=0", 25.0, err, sizeof err) == 0 &&
             store_sweep_end(s, sw, "done", err, sizeof err) == 0;
    CHECK(ok, "making the database: %s", err);
    if (s) store_close(s);
    if (!ok) return;
    CHECK(export_cmd("--db", db, "-o", out, NULL) == 0, "export failed");
    CHECK(export_cmd("--db", db, "--device", "NVIDIA H200", "-o") == 2, "-o without a value");
    char *argv[] = {"export", "--db", db, "--device", "GPU-test", "--output", out2};
    fflush(stdout);
    CHECK(cmd_export(7, argv) == 0, "export by uuid failed");
    long la = -1, lb = -2;
    char *a = slurp(out, &la), *b = slurp(out2, &lb);
    CHECK(a && b && la == lb && !memcmp(a, b, (size_t)la), "two exports of one database differ");
    if (a) {
        CHECK(strstr(a, "#define NORMTUNE_NENTRIES 3\n") != NULL, "3 shapes expected");
        CHECK(strstr(a, "\"nsplit=32,partial=f32\", ") != NULL, "naive config");
        /* the best per shape: (2048, 1024) the persistent one, not naive
         * nsplit=64; counts, ids and order as the registry says */
        store_best_row w[3];
        row(&w[0], 2048, 1024, PERS, P1, 9.5);
        row(&w[1], 16384, 1024, NAIVE, "nsplit=32,partial=f32", 60.0);
        row(&w[2], 2048, 4096, PERS, P2, 25.0);
        CHECK(check_header(a, w, 3, "end to end") > 0, "end-to-end header");
        CHECK(strstr(a, "NVIDIA H200 (cc 9.0") != NULL, "device in banner");
    }
    free(a);
    free(b);
    struct stat st;
    mode_t um = umask(0);
    umask(um);
    CHECK(stat(out, &st) == 0 && (st.st_mode & 0777) == (0666 & ~um),
          "header mode %o, not %o as fopen would make it", (unsigned)(st.st_mode & 0777),
          (unsigned)(0666 & ~um));
    /* nothing but the two headers in the output directory: no temp files */
    char cmd[900];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 2", dir);
    CHECK(sh(cmd) == 0, "temporary files left in %s", dir);
    CHECK(export_cmd6("--db", db, "--device", "NVIDIA B200", "-o", out) == 1, "unknown device");
    a = slurp(out, &la);
    CHECK(a && la == lb, "a failed export changed the existing header");
    free(a);
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 2", dir);
    CHECK(sh(cmd) == 0, "a failed export left files in %s", dir);
}

int main(void) {
    RUN(write_deterministic);
    RUN(header_compiles_and_looks_up);
    RUN(kernel_lists);
    RUN(no_stretch_at_tuned_n8);
    RUN(lookup_row_lines);
    RUN(refusals);
    RUN(stale_note);
    RUN(gpus_banner);
    RUN(unmeasured_note);
    RUN(command_line);
    RUN(end_to_end);
    RUN(eligibility);
    T_END();
}
