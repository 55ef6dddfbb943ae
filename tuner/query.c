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
 * pasted into a note.  Both also write CSV or JSON (--format, tuner/table.c)
 * and write to a file with -o (through tuner/output.c: atomic, never over a
 * database).
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
#include "kernels/family.h"
#include "tuner/cli.h"
#include "tuner/output.h"
#include "tuner/table.h"

/* ---- option parsing ------------------------------------------------------- */

/* Options the commands share; which of them one accepts is given to parse(). */
typedef struct opts {
    const char *db, *device, *out, *format;
} opts;

/* Parse argv for cmd, accepting the options whose letters are in accept
 * ('d' --db, 'D' --device, 'o' -o/--output, 'f' --format; --help always).
 * Returns -1 to go on (positionals start at optind), else the exit code to
 * return (help printed: 0, usage error: 2). */
static int parse(const char *cmd, int argc, char **argv, const char *accept,
                 void (*usage)(FILE *), opts *o) {
    const char *shortopts = strchr(accept, 'o') ? ":ho:" : ":h";
    static const struct option longopts[] = {
        {"db", required_argument, NULL, 'd'},
        {"device", required_argument, NULL, 'D'},
        {"output", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, 'f'},
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
        else if (c == 'f') o->format = optarg;
    }
    return -1;
}

/* The TBL_* format of --format (default: table), or -1 with a usage error
 * printed. */
static int parse_format(const char *cmd, const char *name) {
    int f = name ? tbl_format(name) : TBL_TABLE;
    if (f < 0) nt_errorf(cmd, "unknown --format '%s' (table, csv or json)", name);
    return f;
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

/* Where a command's output goes: stdout, or -o FILE through nt_out (never
 * the database db).  out_open: 0, or -1 with the error printed. */
typedef struct sink {
    nt_out o;
    int file;                      /* 1: writing o */
    FILE *f;
} sink;

static int out_open(const char *cmd, sink *s, const char *path, const char *db) {
    char err[512];
    const char *protect[1] = {db};
    memset(s, 0, sizeof *s);
    s->f = stdout;
    if (!path) return 0;
    if (nt_out_open(&s->o, path, protect, 1, err, sizeof err)) {
        nt_errorf(cmd, "%s", err);
        return -1;
    }
    s->file = 1;
    s->f = s->o.f;
    return 0;
}

/* Finish the output: commit the file (ok) or drop it (!ok).  Returns the
 * exit code: NT_EXIT_OK only when ok and the output was written. */
static int out_close(const char *cmd, sink *s, int ok) {
    char err[512];
    if (!s->file) {
        if (fflush(stdout) || ferror(stdout)) {
            nt_errorf(cmd, "cannot write the output");
            return NT_EXIT_FAIL;
        }
        return ok ? NT_EXIT_OK : NT_EXIT_FAIL;
    }
    if (!ok) {
        nt_out_abort(&s->o);
        return NT_EXIT_FAIL;
    }
    if (nt_out_commit(&s->o, err, sizeof err)) {
        nt_errorf(cmd, "%s", err);
        return NT_EXIT_FAIL;
    }
    return NT_EXIT_OK;
}

/* ---- normtune query --------------------------------------------------------- */

static void query_usage(FILE *f) {
    fprintf(f,
        "usage: normtune query --db FILE [--device NAME] [--format F] [-o FILE] [REPORT]\n\n"
        "Canned reports over a results database, as aligned text tables, CSV\n"
        "or JSON.\n\n"
        "reports:\n"
        "  best            best successful result per (device, shape) (default)\n"
        "  shape N M       every result of one shape, the successful ones ranked\n"
        "                  by median time with %% of the best, then the failures;\n"
        "                  N first, as in every table (also: N=4096 M=1024, in\n"
        "                  any order)\n"
        "  samples ID      the raw timing samples of result ID (column 'result')\n"
        "  sweeps          every sweep: device, script, times, status, copy GB/s\n\n"
        "options:\n"
        "  --db FILE       the results database (opened read-only)\n"
        "  --device NAME   device name or uuid (best: default all devices;\n"
        "                  shape: default the only device with results)\n"
        "  --format F      table (default), csv (RFC 4180, one header line) or\n"
        "                  json (an array of objects keyed by column name)\n"
        "  -o, --output FILE  write there (atomically) instead of stdout; an\n"
        "                  SQLite database and the --db file are refused\n"
        "  -h, --help      this text\n\n"
        "Times are microseconds, bandwidth GB/s (1e9 B/s) of the op's minimum\n"
        "bytes, %% copy its share of the sweep's measured copy bandwidth.  SQL\n"
        "NULL is '-' in a table, an empty field in CSV, null in JSON.\n");
}

/* Parse the shape of `query shape`: two bare numbers (N then M) or N=V and
 * M=V in either order.  0, or a usage error printed and -1. */
static int parse_shape(int n, char **arg, long long *N, long long *M) {
    static const char use[] = "usage: normtune query --db FILE shape N M "
                              "(or shape N=4096 M=1024)";
    int named = 0;
    *N = *M = 0;
    if (n != 2) {
        nt_errorf("query", "%s", use);
        return -1;
    }
    for (int i = 0; i < 2; i++) named += strchr(arg[i], '=') != NULL;
    if (named == 1) {
        nt_errorf("query", "shape: name both or neither of N and M (%s)", use);
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        const char *a = arg[i], *v = a;
        long long *slot = i == 0 ? N : M;
        if (named) {
            int k = a[0] == 'N' || a[0] == 'n' ? 'N' : a[0] == 'M' || a[0] == 'm' ? 'M' : 0;
            if (!k || a[1] != '=') {
                nt_errorf("query", "shape: '%s' is not N=VALUE or M=VALUE (%s)", a, use);
                return -1;
            }
            slot = k == 'N' ? N : M;
            v = a + 2;
            if (*slot) {
                nt_errorf("query", "shape: %c given twice (%s)", k, use);
                return -1;
            }
        }
        if (nt_parse_pos("query", slot == N ? "N" : "M", v, slot)) return -1;
    }
    return 0;
}

int cmd_query(int argc, char **argv) {
    opts o;
    tbl t = {0};
    char err[512];
    store *db;
    sink out;
    int rc = parse("query", argc, argv, "dDof", query_usage, &o), n, src, fmt;
    long long M = 0, N = 0, id = 0;
    const char *what;

    if (rc >= 0) return rc;
    what = optind < argc ? argv[optind] : "best";
    n = argc - optind - (optind < argc);        /* arguments after the report name */
    if (!o.db) {
        nt_errorf("query", "needs --db FILE (see normtune query --help)");
        return NT_EXIT_USAGE;
    }
    if ((fmt = parse_format("query", o.format)) < 0) return NT_EXIT_USAGE;
    if (!strcmp(what, "best") || !strcmp(what, "sweeps")) {
        if (n != 0) {
            nt_errorf("query", "'%s' takes no arguments", what);
            return NT_EXIT_USAGE;
        }
    } else if (!strcmp(what, "shape")) {
        if (parse_shape(n, argv + optind + 1, &N, &M)) return NT_EXIT_USAGE;
    } else if (!strcmp(what, "samples")) {
        if (n != 1) {
            nt_errorf("query", "usage: normtune query --db FILE samples RESULT_ID");
            return NT_EXIT_USAGE;
        }
        if (nt_parse_pos("query", "RESULT_ID", argv[optind + 1], &id)) return NT_EXIT_USAGE;
    } else {
        nt_errorf("query", "unknown report '%s' (best, shape N M, samples ID, sweeps)", what);
        return NT_EXIT_USAGE;
    }

    if (out_open("query", &out, o.out, o.db)) return NT_EXIT_FAIL;
    if (!(db = open_db("query", o.db))) return out_close("query", &out, 0);
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
        return out_close("query", &out, 0);
    }
    tbl_write(&t, fmt, out.f);
    tbl_free(&t);
    return out_close("query", &out, 1);
}

/* ---- normtune report -------------------------------------------------------- */

static void report_usage(FILE *f) {
    fprintf(f,
        "usage: normtune report --db FILE [--device NAME] [--format F] [-o FILE]\n\n"
        "Summary of the best config per shape as a markdown table, one row per\n"
        "(N, M): the best family and params (as `normtune export` ships them:\n"
        "the fastest whose fp32 dw is within 1e-5 of float64), median time, GB/s, %% of copy\n"
        "bandwidth, and persistent/naive: the best persistent time over the\n"
        "best naive time for that shape (below 1: persistent is faster).\n\n"
        "options:\n"
        "  --db FILE       the results database (opened read-only)\n"
        "  --device NAME   device name or uuid (default: the only device with\n"
        "                  results)\n"
        "  --format F      table (default: the markdown report), csv or json\n"
        "                  (the rows only, with columns device, N, M, op, dtype,\n"
        "                  family, params, us, GB/s, %% copy, persistent/naive)\n"
        "  -o, --output FILE  write there (atomically) instead of stdout; an\n"
        "                  SQLite database and the --db file are refused\n"
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

/* Columns of the report: all of them in CSV and JSON; in the markdown
 * table device always goes, op and dtype when every row has the same. */
enum { R_DEV, R_N, R_M, R_OP, R_DTYPE, R_FAM, R_PARAMS, R_US, R_GBPS, R_PCT, R_RATIO, R_NCOL };
static const char *const report_head[R_NCOL] = {
    "device", "N", "M", "op", "dtype", "family", "params", "us", "GB/s", "% copy",
    "persistent/naive"};

int cmd_report(int argc, char **argv) {
    opts o;
    tbl t = {0};
    char err[512], c[R_NCOL][64];
    const char *cell[R_NCOL];
    store *db;
    store_best_row *rows = NULL;
    store_prov prov;
    sink out;
    int n = 0, mixed = 0, ncol, fmt, rc = parse("report", argc, argv, "dDof", report_usage, &o);

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
    if ((fmt = parse_format("report", o.format)) < 0) return NT_EXIT_USAGE;
    if (out_open("report", &out, o.out, o.db)) return NT_EXIT_FAIL;
    if (!(db = open_db("report", o.db))) return out_close("report", &out, 0);
    /* the configs the export would ship: precise enough for an fp32 dw */
    if (store_best_within(db, o.device, NT_TOL_F32, &rows, &n, &prov, err, sizeof err)) {
        nt_errorf("report", "%s", err);
        store_close(db);
        return out_close("report", &out, 0);
    }
    for (int i = 1; i < n; i++)
        mixed |= strcmp(rows[i].op, rows[0].op) || strcmp(rows[i].dtype, rows[0].dtype);

    /* which columns: keep[] */
    int keep[R_NCOL];
    for (int j = 0; j < R_NCOL; j++) keep[j] = 1;
    if (fmt == TBL_TABLE) {
        keep[R_DEV] = 0;                        /* said in the title */
        keep[R_OP] = keep[R_DTYPE] = mixed;     /* said once above the table */
    }
    ncol = 0;
    for (int j = 0; j < R_NCOL; j++)
        if (keep[j]) cell[ncol++] = report_head[j];
    tbl_add(&t, ncol, cell);
    for (int i = 0; i < n && !t.oom; i++) {
        const store_best_row *r = &rows[i];
        famtime ft = {r->op, r->dtype, 0, 0, -1, -1, -1, -1, -1};
        if (store_report_shape(db, o.device, r->M, r->N, famtime_row, &ft, err, sizeof err)) {
            nt_errorf("report", "%s", err);
            goto fail;
        }
        const char *all[R_NCOL];
        for (int j = 0; j < R_NCOL; j++) all[j] = c[j];
        all[R_DEV] = prov.device;
        snprintf(c[R_N], 64, "%lld", (long long)r->N);
        snprintf(c[R_M], 64, "%lld", (long long)r->M);
        all[R_OP] = r->op;
        all[R_DTYPE] = r->dtype;
        all[R_FAM] = short_family(r);
        all[R_PARAMS] = r->params;
        snprintf(c[R_US], 64, "%.2f", r->median_us);
        snprintf(c[R_GBPS], 64, "%.1f", r->gbps);
        snprintf(c[R_PCT], 64, "%.1f", r->pct_copy);
        if (ft.persistent > 0 && ft.naive > 0)
            snprintf(c[R_RATIO], 64, "%.2f", ft.persistent / ft.naive);
        else
            snprintf(c[R_RATIO], 64, "-");
        int k = 0;
        for (int j = 0; j < R_NCOL; j++)
            if (keep[j]) cell[k++] = all[j];
        tbl_add(&t, ncol, cell);
    }
    if (t.oom) {
        nt_errorf("report", "out of memory");
        goto fail;
    }
    if (fmt == TBL_TABLE) {
        FILE *f = out.f;
        fprintf(f, "## normtune report: %s\n\n", prov.device);
        fprintf(f, "Device %s (uuid %s, cc %d.%d), driver %s, CUDA runtime %s, NVRTC %s.\n",
                prov.device, prov.uuid, prov.cc_major, prov.cc_minor, prov.driver,
                prov.runtime, prov.nvrtc);
        fprintf(f, "Kernel sources %s; %d sweep%s; newest result %s.\n", prov.src_hash,
                prov.nsweeps, prov.nsweeps == 1 ? "" : "s", prov.last_finished);
        if (!mixed) fprintf(f, "Op %s, dtype %s.\n", rows[0].op, rows[0].dtype);
        fprintf(f, "us: median time; GB/s: minimum bytes / median; %% copy: share of the\n"
                   "measured copy bandwidth; persistent/naive: best persistent time over best\n"
                   "naive time (below 1: persistent is faster).\n\n");
        tbl_write(&t, TBL_MD, f);
    } else {
        tbl_write(&t, fmt, out.f);
    }
    tbl_free(&t);
    free(rows);
    store_close(db);
    return out_close("report", &out, 1);
fail:
    tbl_free(&t);
    free(rows);
    store_close(db);
    return out_close("report", &out, 0);
}
