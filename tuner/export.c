/* export.c -- the dispatch header writer behind `normtune export`
 * (tuner/cmd_export.c): the results database -> the dispatch header.
 *
 * nt_export_write is the pure part: from the best row per shape of one
 * device and its provenance it writes a self-contained C header (C99, and
 * C++ for nvcc) that a production build compiles into its dispatch table:
 *
 *   banner      do-not-edit, device, cc, driver, runtime, NVRTC, kernel
 *               source hash, sweeps, time of the newest result (never the
 *               clock: the same database gives a byte-identical header);
 *   macros      NORMTUNE_DISPATCH_VERSION, NORMTUNE_SOURCE_HASH, the op,
 *               dtype and device, NORMTUNE_DEFAULT_CONFIG (-1);
 *   configs     an X-macro per family, X(config, params in declared order),
 *               string values as bare identifiers; config ids dense 0..K-1
 *               in order of first appearance in the (N, M)-sorted table;
 *               the same configs as data in normtune_configs[] (string
 *               values as the index into the family's choices);
 *   table       normtune_table[] {N, M, config, median_us, gbps}, by (N, M);
 *   lookup      normtune_lookup(M, N, can_run): exact shape, else same N by
 *               nearest M (ratio), else nearest N, ..., else -1.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/family.h"
#include "tuner/export.h"
#include "tuner/output.h"

/* One distinct config: a family and its params, as texts and as ints. */
typedef struct xcfg {
    const nt_family *fam;
    int fidx;                       /* index in the header's family enum */
    char canon[160];                /* canonical params (dedup key) */
    char txt[NT_MAX_PARAMS][NT_NAME_LEN]; /* values, declared order */
    int val[NT_MAX_PARAMS];         /* ints; strings as their choice index */
} xcfg;

/* One table entry. */
typedef struct xent {
    int64_t N, M;
    int cfg;
    double median_us, gbps;
} xent;

/* Everything the writer derives from the rows before printing. */
typedef struct xport {
    const nt_family *fams[16];      /* families of the op, table order */
    int nfam;
    int maxp;                       /* most params of any of them */
    xcfg *cfg;                      /* ncfg distinct configs, malloc'd */
    int ncfg;
    xent *ent;                      /* nent entries sorted by (N, M), malloc'd */
    int nent;
} xport;

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

/* Upper-case C identifier from a family name: "rmsnorm_bwd.naive" ->
 * "RMSNORM_BWD_NAIVE". */
static void macro_name(const char *s, char *out, size_t len) {
    size_t i = 0;
    for (; *s && i + 1 < len; s++)
        out[i++] = isalnum((unsigned char)*s) ? (char)toupper((unsigned char)*s) : '_';
    out[i] = 0;
}

/* 1 if s is a C identifier (what a string value must be to go bare into an
 * X-macro). */
static int is_ident(const char *s) {
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
    return 1;
}

/* 1 if s is exactly 16 hex digits. */
static int is_hash16(const char *s) {
    int i = 0;
    for (; s[i]; i++)
        if (!isxdigit((unsigned char)s[i])) return 0;
    return i == 16;
}

/* Sort key of a row: (N, M), then input position (a stable order). */
typedef struct rkey {
    int64_t N, M;
    int i;
} rkey;

static int cmp_key(const void *a, const void *b) {
    const rkey *x = a, *y = b;
    if (x->N != y->N) return x->N < y->N ? -1 : 1;
    if (x->M != y->M) return x->M < y->M ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* ---- building the tables ----------------------------------------------- */

/* Fill c from a row: family lookup, params parsed, validated and read in
 * declared order.  0, or -1 with a message naming the shape. */
static int make_cfg(const xport *x, const store_best_row *r, xcfg *c, char *err, size_t errlen) {
    char why[256];
    nt_params p;
    memset(c, 0, sizeof *c);
    c->fam = nt_family_find(r->family);
    if (!c->fam) {
        snprintf(err, errlen, "shape M=%lld N=%lld: unknown family '%s'", (long long)r->M,
                 (long long)r->N, r->family);
        return -1;
    }
    c->fidx = -1;
    for (int i = 0; i < x->nfam; i++)
        if (x->fams[i] == c->fam) c->fidx = i;
    if (c->fidx < 0) {
        snprintf(err, errlen, "shape M=%lld N=%lld: family %s is not of op %s", (long long)r->M,
                 (long long)r->N, r->family, r->op);
        return -1;
    }
    if (nt_params_parse(r->params, &p) || nt_params_validate(c->fam, &p, why, sizeof why) ||
        nt_params_canon(c->fam, &p, c->canon, sizeof c->canon)) {
        snprintf(err, errlen, "shape M=%lld N=%lld: bad params '%s' for %s", (long long)r->M,
                 (long long)r->N, r->params, r->family);
        return -1;
    }
    for (int k = 0; k < c->fam->nparams; k++) {
        const nt_param_def *d = &c->fam->params[k];
        const char *v = nt_params_get(&p, d->name);
        snprintf(c->txt[k], sizeof c->txt[k], "%s", v);
        if (d->kind == NT_PARAM_INT) {
            int ok = 1;
            int64_t iv = nt_params_int(&p, d->name, &ok);
            if (!ok || iv < -2147483647 || iv > 2147483647) {
                snprintf(err, errlen, "%s.%s = '%s' does not fit an int", r->family, d->name, v);
                return -1;
            }
            c->val[k] = (int)iv;
        } else {
            if (!is_ident(v)) {
                snprintf(err, errlen, "%s.%s = '%s' is not a C identifier", r->family, d->name, v);
                return -1;
            }
            c->val[k] = -1;
            for (int j = 0; d->choices[j]; j++)
                if (!strcmp(d->choices[j], v)) c->val[k] = j;
        }
    }
    return 0;
}

/* Check the inputs and derive families, configs and entries into x (whose
 * arrays the caller frees).  0, or -1 with a message. */
static int build(xport *x, const store_best_row *rows, int n, const store_prov *prov, char *err,
                 size_t errlen) {
    rkey *ord = NULL;
    int rc = -1;
    if (n <= 0 || !rows) {
        snprintf(err, errlen, "no successful results to export");
        return -1;
    }
    if (!strcmp(prov->src_hash, "mixed")) {
        snprintf(err, errlen, "the best results come from different kernel sources (source hash "
                              "\"mixed\"); re-run the sweep with the current kernels");
        return -1;
    }
    if (!is_hash16(prov->src_hash)) {
        snprintf(err, errlen, "kernel source hash '%s' is not 16 hex digits", prov->src_hash);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (rows[i].src_hash[0] && strcmp(rows[i].src_hash, prov->src_hash)) {
            snprintf(err, errlen, "shape M=%lld N=%lld was measured with kernel source %s, not %s "
                                  "(mixed sources)", (long long)rows[i].M, (long long)rows[i].N,
                     rows[i].src_hash, prov->src_hash);
            return -1;
        }
        if (strcmp(rows[i].op, rows[0].op) || strcmp(rows[i].dtype, rows[0].dtype)) {
            snprintf(err, errlen, "results of several ops or dtypes (%s/%s and %s/%s); one header "
                                  "holds one", rows[0].op, rows[0].dtype, rows[i].op, rows[i].dtype);
            return -1;
        }
        if (rows[i].M < 1 || rows[i].N < 1) {
            snprintf(err, errlen, "bad shape M=%lld N=%lld", (long long)rows[i].M,
                     (long long)rows[i].N);
            return -1;
        }
    }
    if (!is_ident(rows[0].op) || !is_ident(rows[0].dtype)) {
        snprintf(err, errlen, "op '%s' or dtype '%s' is not an identifier", rows[0].op, rows[0].dtype);
        return -1;
    }
    /* the families of this op, in its order */
    const nt_op *op = nt_op_find(rows[0].op);
    if (!op) {
        snprintf(err, errlen, "op '%s' is not one this normtune knows", rows[0].op);
        return -1;
    }
    for (int i = 0; op->families[i]; i++) {
        const nt_family *f = op->families[i];
        if (x->nfam >= (int)(sizeof x->fams / sizeof x->fams[0])) continue;
        x->fams[x->nfam++] = f;
        if (f->nparams > x->maxp) x->maxp = f->nparams;
    }
    if (x->maxp < 1) x->maxp = 1;
    ord = malloc(sizeof *ord * (size_t)n);
    x->cfg = calloc((size_t)n, sizeof *x->cfg);
    x->ent = calloc((size_t)n, sizeof *x->ent);
    if (!ord || !x->cfg || !x->ent) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        ord[i].N = rows[i].N;
        ord[i].M = rows[i].M;
        ord[i].i = i;
    }
    qsort(ord, (size_t)n, sizeof *ord, cmp_key);
    for (int i = 0; i < n; i++) {
        const store_best_row *r = &rows[ord[i].i];
        xcfg c;
        int id = -1;
        if (i && r->N == ord[i - 1].N && r->M == ord[i - 1].M) {
            snprintf(err, errlen, "two results for shape M=%lld N=%lld", (long long)r->M,
                     (long long)r->N);
            goto done;
        }
        if (make_cfg(x, r, &c, err, errlen)) goto done;
        for (int k = 0; k < x->ncfg && id < 0; k++)
            if (x->cfg[k].fam == c.fam && !strcmp(x->cfg[k].canon, c.canon)) id = k;
        if (id < 0) {
            id = x->ncfg++;
            x->cfg[id] = c;
        }
        xent *e = &x->ent[x->nent++];
        e->N = r->N;
        e->M = r->M;
        e->cfg = id;
        e->median_us = isfinite(r->median_us) ? r->median_us : 0.0;
        e->gbps = isfinite(r->gbps) ? r->gbps : 0.0;
    }
    rc = 0;
done:
    free(ord);
    return rc;
}

/* ---- writing ----------------------------------------------------------- */

/* The fixed part after the data: the lookup and its helpers.  Plain C99
 * that is also valid C++; no includes, no allocation. */
static const char lookup_text[] =
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
    "/* 1 when table entry i comes before entry j in the lookup order for\n"
    " * (M, N): nearer N (ties: the larger N), then nearer M by ratio (ties:\n"
    " * the larger M), then table position. */\n"
    "static inline int normtune_priv_before(long long M, long long N, int i, int j)\n"
    "{\n"
    "    const normtune_entry *a = &normtune_table[i], *b = &normtune_table[j];\n"
    "    long long da = a->N > N ? a->N - N : N - a->N;\n"
    "    long long db = b->N > N ? b->N - N : N - b->N;\n"
    "    int c;\n"
    "    if (da != db) return da < db;\n"
    "    if (a->N != b->N) return a->N > b->N;\n"
    "    c = normtune_priv_mcmp(M, a->M, b->M);\n"
    "    if (c != 0) return c < 0;\n"
    "    if (a->M != b->M) return a->M > b->M;\n"
    "    return i < j;\n"
    "}\n"
    "\n"
    "/* The config to run for M rows of N: the exact shape if its config can\n"
    " * run, else the tuned shapes in order of preference (same N by nearest\n"
    " * M, then the nearest N by nearest M, and so on), the first whose config\n"
    " * can_run accepts (can_run NULL: every config can).  Returns a config id\n"
    " * (0 .. NORMTUNE_NCONFIGS-1) or NORMTUNE_DEFAULT_CONFIG (-1): use the\n"
    " * generic default.  No allocation; O(TABLE_SIZE) per candidate tried. */\n"
    "static inline int normtune_lookup(long long M, long long N,\n"
    "                                  int (*can_run)(int config, long long rows, long long cols))\n"
    "{\n"
    "    int prev = -1, best, k;\n"
    "    long long m = M < 1 ? 1 : M;\n"
    "    for (;;) {\n"
    "        best = -1;\n"
    "        for (k = 0; k < NORMTUNE_TABLE_SIZE; k++) {\n"
    "            if (prev >= 0 && !normtune_priv_before(m, N, prev, k)) continue;\n"
    "            if (best < 0 || normtune_priv_before(m, N, k, best)) best = k;\n"
    "        }\n"
    "        if (best < 0) return NORMTUNE_DEFAULT_CONFIG;\n"
    "        if (!can_run || can_run(normtune_table[best].config, M, N))\n"
    "            return normtune_table[best].config;\n"
    "        prev = best;\n"
    "    }\n"
    "}\n"
    "\n"
    "/* Family of config c (enum normtune_family), -1 if c is not a config. */\n"
    "static inline int normtune_config_family(int c)\n"
    "{\n"
    "    return c >= 0 && c < NORMTUNE_NCONFIGS ? normtune_configs[c].family : -1;\n"
    "}\n"
    "\n"
    "/* Parameter i of config c (declared order; a string parameter as the\n"
    " * index of its value in the family's choices), -1 if there is none. */\n"
    "static inline int normtune_config_param(int c, int i)\n"
    "{\n"
    "    if (c < 0 || c >= NORMTUNE_NCONFIGS || i < 0 || i >= normtune_configs[c].nparams)\n"
    "        return -1;\n"
    "    return normtune_configs[c].param[i];\n"
    "}\n";

/* Print the banner and the macros. */
static void put_head(FILE *f, const xport *x, const store_best_row *r0, const store_prov *p) {
    char dev[128], uuid[64], drv[32], rt[32], nv[32], last[32];
    clean(p->device, dev, sizeof dev);
    clean(p->uuid, uuid, sizeof uuid);
    clean(p->driver, drv, sizeof drv);
    clean(p->runtime, rt, sizeof rt);
    clean(p->nvrtc, nv, sizeof nv);
    clean(p->last_finished, last, sizeof last);
    fprintf(f,
            "/* normtune dispatch header -- %s (%s).\n"
            " *\n"
            " * GENERATED by `normtune export` from a results database: DO NOT EDIT.\n"
            " * Re-run the sweep and the export instead.\n"
            " *\n"
            " *   device          %s (cc %d.%d, %s)\n"
            " *   driver          %s\n"
            " *   runtime         %s\n"
            " *   NVRTC           %s\n"
            " *   kernel source   %s\n"
            " *   sweeps          %d\n"
            " *   newest result   %s\n"
            " *   shapes          %d, configs %d\n"
            " *\n"
            " * Each shape's config is its fastest result whose fp32 dw stayed within\n"
            " * %.0e relative L2 error of float64 (an output's precision is part of\n"
            " * what is asked: bf16 partials are not eligible for an fp32 dw).\n"
            " * normtune_lookup(M, N, can_run) gives the config for a shape: exact,\n"
            " * else the nearest tuned shape, else NORMTUNE_DEFAULT_CONFIG.  A build\n"
            " * must refuse this header when NORMTUNE_SOURCE_HASH differs from the hash\n"
            " * of the kernels it compiles.  Format: docs/dispatch-header.md. */\n"
            "#ifndef NORMTUNE_DISPATCH_H\n"
            "#define NORMTUNE_DISPATCH_H\n"
            "\n"
            "#define NORMTUNE_DISPATCH_VERSION %d\n"
            "#define NORMTUNE_SOURCE_HASH \"%s\"\n"
            "#define NORMTUNE_OP \"%s\"\n"
            "#define NORMTUNE_DTYPE \"%s\"\n"
            "#define NORMTUNE_DEVICE \"%s\"\n"
            "#define NORMTUNE_DEVICE_CC %d\n"
            "#define NORMTUNE_DEFAULT_CONFIG (-1)\n"
            "\n",
            r0->op, r0->dtype, dev, p->cc_major, p->cc_minor, uuid, drv, rt, nv, p->src_hash,
            p->nsweeps, last, x->nent, x->ncfg, NT_TOL_F32, NT_EXPORT_VERSION, p->src_hash,
            r0->op, r0->dtype,
            dev, p->cc_major * 10 + p->cc_minor);
}

/* Print the family enum, one X-macro per family, and normtune_configs[]. */
static void put_configs(FILE *f, const xport *x) {
    char mn[96];
    fprintf(f, "/* Kernel families (normtune_configs[].family), in the tuner's table order. */\n"
               "enum normtune_family {\n");
    for (int i = 0; i < x->nfam; i++) {
        macro_name(x->fams[i]->name, mn, sizeof mn);
        fprintf(f, "    NORMTUNE_FAMILY_%s = %d%s /* %s */\n", mn, i, i + 1 < x->nfam ? "," : "",
                x->fams[i]->name);
    }
    fprintf(f, "};\n#define NORMTUNE_NFAMILIES %d\n#define NORMTUNE_MAX_PARAMS %d\n\n", x->nfam,
            x->maxp);
    fprintf(f, "/* The configs this table uses, per family: X(config, params...) with the\n"
               " * params in the family's declared order and string values as bare\n"
               " * identifiers.  The production build instantiates exactly these.  A\n"
               " * family with no config here has an empty list. */\n");
    for (int i = 0; i < x->nfam; i++) {
        const nt_family *fm = x->fams[i];
        int cnt = 0;
        macro_name(fm->name, mn, sizeof mn);
        fprintf(f, "/* %s: X(config", fm->name);
        for (int k = 0; k < fm->nparams; k++) fprintf(f, ", %s", fm->params[k].name);
        fprintf(f, ")");
        for (int k = 0; k < fm->nparams; k++) {
            if (fm->params[k].kind != NT_PARAM_STR) continue;
            fprintf(f, "; %s index:", fm->params[k].name);
            for (int j = 0; fm->params[k].choices[j]; j++)
                fprintf(f, "%s %s = %d", j ? "," : "", fm->params[k].choices[j], j);
        }
        fprintf(f, " */\n");
        for (int c = 0; c < x->ncfg; c++) cnt += x->cfg[c].fam == fm;
        fprintf(f, "#define NORMTUNE_%s_NCONFIGS %d\n#define NORMTUNE_%s_CONFIGS(X)", mn, cnt, mn);
        for (int c = 0; c < x->ncfg; c++) {
            if (x->cfg[c].fam != fm) continue;
            fprintf(f, " \\\n    X(%d", c);
            for (int k = 0; k < fm->nparams; k++) fprintf(f, ", %s", x->cfg[c].txt[k]);
            fprintf(f, ")");
        }
        fprintf(f, "\n\n");
    }
    fprintf(f, "#define NORMTUNE_NCONFIGS %d\n\n", x->ncfg);
    fprintf(f, "/* The same configs as data, indexed by config id. */\n"
               "typedef struct normtune_config {\n"
               "    int family;                     /* enum normtune_family */\n"
               "    int nparams;                    /* params used in param[] */\n"
               "    int param[NORMTUNE_MAX_PARAMS]; /* declared order; strings: choice index */\n"
               "} normtune_config;\n\n"
               "static const normtune_config normtune_configs[NORMTUNE_NCONFIGS] = {\n");
    for (int c = 0; c < x->ncfg; c++) {
        const xcfg *g = &x->cfg[c];
        macro_name(g->fam->name, mn, sizeof mn);
        fprintf(f, "    {NORMTUNE_FAMILY_%s, %d, {", mn, g->fam->nparams);
        for (int k = 0; k < x->maxp; k++)
            fprintf(f, "%s%d", k ? ", " : "", k < g->fam->nparams ? g->val[k] : 0);
        fprintf(f, "}}%s /* %d: %s */\n", c + 1 < x->ncfg ? "," : "", c, g->canon);
    }
    fprintf(f, "};\n\n");
}

/* Print normtune_table[] and the lookup, and close the guard. */
static void put_table(FILE *f, const xport *x) {
    fprintf(f, "/* Best config per tuned shape, sorted by (N, M). */\n"
               "typedef struct normtune_entry {\n"
               "    long long N, M;                 /* columns, rows */\n"
               "    int config;                     /* index into normtune_configs */\n"
               "    double median_us, gbps;         /* as measured */\n"
               "} normtune_entry;\n\n"
               "#define NORMTUNE_TABLE_SIZE %d\n"
               "static const normtune_entry normtune_table[NORMTUNE_TABLE_SIZE] = {\n",
            x->nent);
    for (int i = 0; i < x->nent; i++) {
        const xent *e = &x->ent[i];
        fprintf(f, "    {%lldLL, %lldLL, %d, %.3f, %.1f}%s\n", (long long)e->N, (long long)e->M,
                e->cfg, e->median_us, e->gbps, i + 1 < x->nent ? "," : "");
    }
    fprintf(f, "};\n\n%s\n#endif /* NORMTUNE_DISPATCH_H */\n", lookup_text);
}

/* See export.h. */
int nt_export_write(FILE *f, const store_best_row *rows, int n, const store_prov *prov,
                    char *err, size_t errlen) {
    xport x;
    int rc = -1;
    memset(&x, 0, sizeof x);
    if (build(&x, rows, n, prov, err, errlen)) goto done;
    put_head(f, &x, &rows[0], prov);
    put_configs(f, &x);
    put_table(f, &x);
    if (fflush(f) || ferror(f)) {
        snprintf(err, errlen, "write failed: %s", strerror(errno));
        goto done;
    }
    rc = 0;
done:
    free(x.cfg);
    free(x.ent);
    return rc;
}
