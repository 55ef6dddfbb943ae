/* query.c -- `normtune query` and `normtune report` (merge and migrate:
 * tuner/cmd_merge.c).
 *
 * The read side of the results database for performance engineers.
 * `query` runs one of the store's canned reports (best per shape, one shape's
 * variants ranked, one result's samples, the sweeps) and prints it as a
 * plain-text table whose column widths come from the data, numbers aligned
 * right.  `report` prints, per shape sorted by (N, M), the best family and
 * params, its bandwidth and share of copy bandwidth, and the time of the best
 * persistent variant over the best naive one, as a markdown table that can be
 * pasted into a note.
 *
 * The tables are collected in memory (tbl) from the store's row callbacks
 * and printed once complete, so an error half-way prints no partial table.
 * Exit codes: 0 ok, 1 failure (one line on stderr), 2 usage error. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/store.h"
#include "tuner/cli.h"

/* ---- tables ---------------------------------------------------------------- */

/* A table of texts: row 0 is the header; cells are owned (malloc'd). */
typedef struct tbl {
    int ncol;
    int nrow, cap;                 /* rows including the header */
    char **cell;                   /* nrow * ncol */
    int oom;                       /* an allocation failed */
} tbl;

static void tbl_free(tbl *t) {
    for (int i = 0; i < t->nrow * t->ncol; i++) free(t->cell[i]);
    free(t->cell);
    memset(t, 0, sizeof *t);
}

/* Append a row of ncol texts (copied).  The first row fixes ncol; a header
 * arriving again restarts the table (a report run twice into one tbl). */
static void tbl_add(tbl *t, int ncol, const char *const *cells) {
    if (t->oom) return;
    if (t->nrow == 0) t->ncol = ncol;
    if (ncol != t->ncol) {
        t->oom = 1;
        return;
    }
    if (t->nrow == t->cap) {
        int cap = t->cap ? 2 * t->cap : 32;
        char **c = realloc(t->cell, (size_t)cap * (size_t)ncol * sizeof *c);
        if (!c) {
            t->oom = 1;
            return;
        }
        t->cell = c;
        t->cap = cap;
    }
    for (int i = 0; i < ncol; i++) {
        char *s = strdup(cells[i] ? cells[i] : "");
        if (!s) {
            for (int j = 0; j < i; j++) free(t->cell[t->nrow * ncol + j]);
            t->oom = 1;
            return;
        }
        t->cell[t->nrow * ncol + i] = s;
    }
    t->nrow++;
}

/* store_row_fn collecting into a tbl (ctx). */
static void tbl_row(void *ctx, int header, int ncol, const char *const *cell) {
    tbl *t = ctx;
    if (header && t->nrow) {
        int keep = t->oom;
        tbl_free(t);
        t->oom = keep;
    }
    tbl_add(t, ncol, cell);
}

static const char *tbl_at(const tbl *t, int r, int c) {
    return t->cell[r * t->ncol + c];
}

/* 1 if s is a number as a whole ("12.5", "-3"), or "-" (no value). */
static int is_num(const char *s) {
    char *end;
    if (!strcmp(s, "-")) return 1;
    if (!*s) return 0;
    strtod(s, &end);
    return *end == 0;
}

/* Column widths and alignment (1 = right: every data cell is a number). */
static void tbl_layout(const tbl *t, int *w, int *right) {
    for (int c = 0; c < t->ncol; c++) {
        w[c] = 0;
        right[c] = t->nrow > 1;
        for (int r = 0; r < t->nrow; r++) {
            int n = (int)strlen(tbl_at(t, r, c));
            if (n > w[c]) w[c] = n;
            if (r > 0 && !is_num(tbl_at(t, r, c))) right[c] = 0;
        }
    }
}

/* Print t as a plain aligned table: header, a rule of dashes, the rows. */
static void tbl_print(const tbl *t, FILE *f) {
    int *w = calloc((size_t)t->ncol, sizeof *w), *right = calloc((size_t)t->ncol, sizeof *right);
    if (!w || !right) goto done;
    tbl_layout(t, w, right);
    for (int r = 0; r < t->nrow; r++) {
        int end = t->ncol;                      /* no trailing blanks */
        while (end > 1 && !right[end - 1] && !*tbl_at(t, r, end - 1)) end--;
        for (int c = 0; c < end; c++) {
            int last = c == end - 1;
            const char *s = tbl_at(t, r, c);
            if (right[c]) fprintf(f, "%*s", w[c], s);
            else fprintf(f, "%-*s", last ? 0 : w[c], s);
            fputs(last ? "\n" : "  ", f);
        }
        if (r == 0) {
            for (int c = 0; c < t->ncol; c++) {
                for (int i = 0; i < w[c]; i++) fputc('-', f);
                fputs(c == t->ncol - 1 ? "\n" : "  ", f);
            }
        }
    }
    if (t->nrow == 1) fputs("(no rows)\n", f);
done:
    free(w);
    free(right);
}

/* Print t as a markdown table, padded so that it also reads as plain text. */
static void tbl_print_md(const tbl *t, FILE *f) {
    int *w = calloc((size_t)t->ncol, sizeof *w), *right = calloc((size_t)t->ncol, sizeof *right);
    if (!w || !right) goto done;
    tbl_layout(t, w, right);
    for (int c = 0; c < t->ncol; c++)
        if (w[c] < 4) w[c] = 4;                 /* room for "---:" */
    for (int r = 0; r < t->nrow; r++) {
        for (int c = 0; c < t->ncol; c++)
            fprintf(f, right[c] ? "| %*s " : "| %-*s ", w[c], tbl_at(t, r, c));
        fputs("|\n", f);
        if (r == 0) {
            for (int c = 0; c < t->ncol; c++) {
                fputs("| ", f);
                for (int i = 0; i < w[c] - right[c]; i++) fputc('-', f);
                fputs(right[c] ? ": " : " ", f);
            }
            fputs("|\n", f);
        }
    }
done:
    free(w);
    free(right);
}

/* ---- option parsing ------------------------------------------------------- */

/* Options the commands share; which of them one accepts is given to parse(). */
typedef struct opts {
    const char *db, *device, *out;
} opts;

/* Parse argv for cmd, accepting the options whose letters are in accept
 * ('d' --db, 'D' --device, 'o' -o/--output; --help always).  Returns -1 to
 * go on (positionals start at optind), else the exit code to return (help
 * printed: 0, usage error: 2). */
static int parse(const char *cmd, int argc, char **argv, const char *accept,
                 void (*usage)(FILE *), opts *o) {
    const char *shortopts = strchr(accept, 'o') ? ":ho:" : ":h";
    static const struct option longopts[] = {
        {"db", required_argument, NULL, 'd'},
        {"device", required_argument, NULL, 'D'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    memset(o, 0, sizeof *o);
    optind = 0;                                 /* full reset (GNU) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return NT_EXIT_OK;
        }
        if (c == ':') {
            nt_errorf(cmd, "option %s needs a value", argv[optind - 1]);
            return NT_EXIT_USAGE;
        }
        /* a long option a command does not take comes back as itself */
        if (c == '?' || !strchr(accept, c)) {
            nt_errorf(cmd, "unknown option '%s' (see normtune %s --help)", argv[optind - 1],
                      cmd);
            return NT_EXIT_USAGE;
        }
        if (c == 'd') o->db = optarg;
        else if (c == 'D') o->device = optarg;
        else if (c == 'o') o->out = optarg;
    }
    return -1;
}

/* Open --db read-only; prints the error and returns NULL on failure. */
static store *open_db(const char *cmd, const char *path) {
    char err[512];
    store *db = NULL;
    if (store_open(&db, path, STORE_READ, err, sizeof err)) {
        nt_errorf(cmd, "%s", err);
        return NULL;
    }
    return db;
}

/* ---- normtune query --------------------------------------------------------- */

static void query_usage(FILE *f) {
    fprintf(f,
        "usage: normtune query --db FILE [--device NAME] [REPORT]\n\n"
        "Canned reports over a results database, as aligned text tables.\n\n"
        "reports:\n"
        "  best            best successful result per (device, shape) (default)\n"
        "  shape M N       every result of one shape, the successful ones ranked\n"
        "                  by median time with %% of the best, then the failures\n"
        "  samples ID      the raw timing samples of result ID (column 'result')\n"
        "  sweeps          every sweep: device, script, times, status, copy GB/s\n\n"
        "options:\n"
        "  --db FILE       the results database (opened read-only)\n"
        "  --device NAME   device name or uuid (best: default all devices;\n"
        "                  shape: default the only device with results)\n"
        "  -h, --help      this text\n\n"
        "Times are microseconds, bandwidth GB/s (1e9 B/s) of the op's minimum\n"
        "bytes, %% copy its share of the sweep's measured copy bandwidth.\n");
}

int cmd_query(int argc, char **argv) {
    opts o;
    tbl t = {0};
    char err[512];
    store *db;
    int rc = parse("query", argc, argv, "dD", query_usage, &o), n, src;
    long long M = 0, N = 0, id = 0;
    const char *what;

    if (rc >= 0) return rc;
    what = optind < argc ? argv[optind] : "best";
    n = argc - optind - (optind < argc);        /* arguments after the report name */
    if (!o.db) {
        nt_errorf("query", "needs --db FILE (see normtune query --help)");
        return NT_EXIT_USAGE;
    }
    if (!strcmp(what, "best") || !strcmp(what, "sweeps")) {
        if (n != 0) {
            nt_errorf("query", "'%s' takes no arguments", what);
            return NT_EXIT_USAGE;
        }
    } else if (!strcmp(what, "shape")) {
        if (n != 2) {
            nt_errorf("query", "usage: normtune query --db FILE shape M N");
            return NT_EXIT_USAGE;
        }
        if (nt_parse_pos("query", "M", argv[optind + 1], &M) ||
            nt_parse_pos("query", "N", argv[optind + 2], &N))
            return NT_EXIT_USAGE;
    } else if (!strcmp(what, "samples")) {
        if (n != 1) {
            nt_errorf("query", "usage: normtune query --db FILE samples RESULT_ID");
            return NT_EXIT_USAGE;
        }
        if (nt_parse_pos("query", "RESULT_ID", argv[optind + 1], &id)) return NT_EXIT_USAGE;
    } else {
        nt_errorf("query", "unknown report '%s' (best, shape M N, samples ID, sweeps)", what);
        return NT_EXIT_USAGE;
    }

    if (!(db = open_db("query", o.db))) return NT_EXIT_FAIL;
    if (!strcmp(what, "best"))
        src = store_report_best(db, o.device, tbl_row, &t, err, sizeof err);
    else if (!strcmp(what, "shape"))
        src = store_report_shape(db, o.device, M, N, tbl_row, &t, err, sizeof err);
    else if (!strcmp(what, "samples"))
        src = store_report_samples(db, id, tbl_row, &t, err, sizeof err);
    else
        src = store_report_sweeps(db, tbl_row, &t, err, sizeof err);
    store_close(db);
    if (src == STORE_OK && t.oom) {
        snprintf(err, sizeof err, "out of memory");
        src = STORE_ERR;
    }
    if (src != STORE_OK) {
        nt_errorf("query", "%s", err);
        tbl_free(&t);
        return NT_EXIT_FAIL;
    }
    tbl_print(&t, stdout);
    tbl_free(&t);
    return NT_EXIT_OK;
}

/* ---- normtune report -------------------------------------------------------- */

static void report_usage(FILE *f) {
    fprintf(f,
        "usage: normtune report --db FILE [--device NAME]\n\n"
        "Summary of the best config per shape as a markdown table, one row per\n"
        "(N, M): the best family and params, median time, GB/s, %% of copy\n"
        "bandwidth, and persistent/naive: the best persistent time over the\n"
        "best naive time for that shape (below 1: persistent is faster).\n\n"
        "options:\n"
        "  --db FILE       the results database (opened read-only)\n"
        "  --device NAME   device name or uuid (default: the only device with\n"
        "                  results)\n"
        "  -h, --help      this text\n");
}

/* The fastest successful time per family kind of one (op, dtype), found in
 * the rows of store_report_shape. */
typedef struct famtime {
    const char *op, *dtype;
    double persistent, naive;      /* best median us, 0 = none */
    int c_op, c_dtype, c_fam, c_status, c_us; /* column indices, -1 = unknown */
} famtime;

static int col_index(int ncol, const char *const *cell, const char *name) {
    for (int i = 0; i < ncol; i++)
        if (!strcmp(cell[i], name)) return i;
    return -1;
}

/* store_row_fn: keep the best time of the persistent and naive families. */
static void famtime_row(void *ctx, int header, int ncol, const char *const *cell) {
    famtime *ft = ctx;
    if (header) {
        ft->c_op = col_index(ncol, cell, "op");
        ft->c_dtype = col_index(ncol, cell, "dtype");
        ft->c_fam = col_index(ncol, cell, "family");
        ft->c_status = col_index(ncol, cell, "status");
        ft->c_us = col_index(ncol, cell, "us");
        return;
    }
    if (ft->c_op < 0 || ft->c_dtype < 0 || ft->c_fam < 0 || ft->c_status < 0 || ft->c_us < 0)
        return;
    if (strcmp(cell[ft->c_op], ft->op) || strcmp(cell[ft->c_dtype], ft->dtype) ||
        strcmp(cell[ft->c_status], "ok"))
        return;
    const char *kind = strrchr(cell[ft->c_fam], '.');
    kind = kind ? kind + 1 : cell[ft->c_fam];
    double us = strtod(cell[ft->c_us], NULL), *best = !strcmp(kind, "persistent") ? &ft->persistent
                                                    : !strcmp(kind, "naive")    ? &ft->naive
                                                                                : NULL;
    if (best && us > 0 && (*best == 0 || us < *best)) *best = us;
}

/* A family name without its op prefix ("rmsnorm_bwd.naive" -> "naive"). */
static const char *short_family(const store_best_row *r) {
    size_t n = strlen(r->op);
    return !strncmp(r->family, r->op, n) && r->family[n] == '.' ? r->family + n + 1 : r->family;
}

int cmd_report(int argc, char **argv) {
    opts o;
    tbl t = {0};
    char err[512], c[10][64];
    const char *cell[10];
    store *db;
    store_best_row *rows = NULL;
    store_prov prov;
    int n = 0, mixed = 0, ncol, rc = parse("report", argc, argv, "dD", report_usage, &o);

    if (rc >= 0) return rc;
    if (optind < argc) {
        nt_errorf("report", "unexpected argument '%s' (see normtune report --help)",
                  argv[optind]);
        return NT_EXIT_USAGE;
    }
    if (!o.db) {
        nt_errorf("report", "needs --db FILE (see normtune report --help)");
        return NT_EXIT_USAGE;
    }
    if (!(db = open_db("report", o.db))) return NT_EXIT_FAIL;
    if (store_best(db, o.device, &rows, &n, &prov, err, sizeof err)) {
        nt_errorf("report", "%s", err);
        store_close(db);
        return NT_EXIT_FAIL;
    }
    for (int i = 1; i < n; i++)
        mixed |= strcmp(rows[i].op, rows[0].op) || strcmp(rows[i].dtype, rows[0].dtype);

    static const char *const head[] = {"N", "M", "op", "dtype", "family", "params",
                                       "us", "GB/s", "% copy", "persistent/naive"};
    /* one op and dtype: said once above the table instead of in columns */
    const char *const *hd = head;
    const char *hdr2[10];
    ncol = 10;
    if (!mixed) {
        hdr2[0] = head[0];
        hdr2[1] = head[1];
        for (int i = 4; i < 10; i++) hdr2[i - 2] = head[i];
        hd = hdr2;
        ncol = 8;
    }
    tbl_add(&t, ncol, hd);
    for (int i = 0; i < n && !t.oom; i++) {
        const store_best_row *r = &rows[i];
        famtime ft = {r->op, r->dtype, 0, 0, -1, -1, -1, -1, -1};
        if (store_report_shape(db, o.device, r->M, r->N, famtime_row, &ft, err, sizeof err)) {
            nt_errorf("report", "%s", err);
            goto fail;
        }
        int k = 0;
        snprintf(c[k++], 64, "%lld", (long long)r->N);
        snprintf(c[k++], 64, "%lld", (long long)r->M);
        if (mixed) {
            snprintf(c[k++], 64, "%s", r->op);
            snprintf(c[k++], 64, "%s", r->dtype);
        }
        snprintf(c[k++], 64, "%s", short_family(r));
        k++;                                    /* params: may be long, pointed to */
        snprintf(c[k++], 64, "%.2f", r->median_us);
        snprintf(c[k++], 64, "%.1f", r->gbps);
        snprintf(c[k++], 64, "%.1f", r->pct_copy);
        if (ft.persistent > 0 && ft.naive > 0) snprintf(c[k++], 64, "%.2f", ft.persistent / ft.naive);
        else snprintf(c[k++], 64, "-");
        for (int j = 0; j < ncol; j++) cell[j] = c[j];
        cell[mixed ? 5 : 3] = r->params;
        tbl_add(&t, ncol, cell);
    }
    if (t.oom) {
        nt_errorf("report", "out of memory");
        goto fail;
    }
    printf("## normtune report: %s\n\n", prov.device);
    printf("Device %s (uuid %s, cc %d.%d), driver %s, CUDA runtime %s, NVRTC %s.\n",
           prov.device, prov.uuid, prov.cc_major, prov.cc_minor, prov.driver, prov.runtime,
           prov.nvrtc);
    printf("Kernel sources %s; %d sweep%s; newest result %s.\n", prov.src_hash, prov.nsweeps,
           prov.nsweeps == 1 ? "" : "s", prov.last_finished);
    if (!mixed) printf("Op %s, dtype %s.\n", rows[0].op, rows[0].dtype);
    printf("us: median time; GB/s: minimum bytes / median; %% copy: share of the\n"
           "measured copy bandwidth; persistent/naive: best persistent time over best\n"
           "naive time (below 1: persistent is faster).\n\n");
    tbl_print_md(&t, stdout);
    tbl_free(&t);
    free(rows);
    store_close(db);
    return NT_EXIT_OK;
fail:
    tbl_free(&t);
    free(rows);
    store_close(db);
    return NT_EXIT_FAIL;
}
