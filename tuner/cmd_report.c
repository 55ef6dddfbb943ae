/* cmd_report.c -- `normtune report`: the best config per shape as a
 * markdown table.
 *
 *   normtune report --db FILE [--device NAME | --newest] [--format F] [-o FILE]
 *
 * Prints, per problem sorted by (op, dtypes, N, M), the best family and
 * params (eligible ones, as `export` ships them), its bandwidth, its share
 * of the copy bandwidth and of the problem's own-traffic yardstick, and the
 * runner-up family with its time over the best (ranked as `best` ranks,
 * by warm's interleaved re-measure where one covers both), as a
 * markdown table that can be pasted into a note; or the rows as CSV or
 * JSON (--format, tuner/table.c); to stdout or to a file with -o (through
 * tuner/output.c: atomic, never over a database).  The table is collected
 * in memory first, so an error half-way prints no partial table.
 * Exit codes: 0 ok, 1 failure (one line on stderr), 2 usage error. */
#include <getopt.h>          /* optind */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/store.h"
#include "kernels/family.h"
#include "tuner/cli.h"
#include "tuner/table.h"

static void report_usage(FILE *f) {
    fprintf(f,
        "usage: normtune report --db FILE [--device NAME | --newest] [--format F] [-o FILE]\n\n"
        "Summary of the best config per problem as a markdown table, one row per\n"
        "(op, dtypes, N, M): the best family and params (the fastest whose every\n"
        "output is within the tolerance of its dtype), median time, GB/s, %% of the\n"
        "copy bandwidth, %% of a kernel with the op's own traffic on the same shape\n"
        "(measured in the same run), and the runner-up: the best other family, in\n"
        "the order `best` ranks (warm's interleaved re-measure first, where it made\n"
        "one), and its time over the best's: their re-measured medians where both\n"
        "were measured again together, else their medians.\n\n"
        "options:\n"
        "  --db FILE       the results database (opened read-only)\n"
        "  --device NAME   a GPU's name or uuid: its model, whose GPUs' results\n"
        "                  are ranked together (default: the one model with\n"
        "                  results, else with current results, else covering\n"
        "                  them all: docs/guide.md)\n"
        "  --newest        the model of the GPU that ran the newest sweep\n"
        "  --format F      table (default: the markdown report), csv or json\n"
        "                  (the rows only, with columns device, N, M, op, dtype,\n"
        "                  family, params, us, GB/s, %% copy, %% op, runner-up,\n"
        "                  runner-up/best)\n"
        "  -o, --output FILE  write there (atomically) instead of stdout; an\n"
        "                  SQLite database and the --db file are refused\n"
        "  -h, --help      this text\n");
}

#define MAX_FAM 16

/* Per family of one (op, dtype), its best successful result: the first in
 * the rows of store_report_shape (read once per shape: tbl_shape), which
 * rank as `best` does. */
typedef struct famtime {
    const char *op, *dtype;
    int n;
    char fam[MAX_FAM][64];         /* family names seen */
    double us[MAX_FAM];            /* their best result's median us */
    double rm[MAX_FAM];            /* and its re-measured median, 0: none */
    char rm_by[MAX_FAM][8];        /* how that re-measure was timed ("chain", "alone") */
    int c_op, c_dtype, c_fam, c_status, c_us, c_rm, c_rm_by; /* column indices, -1 = unknown */
} famtime;

static int col_index(int ncol, const char *const *cell, const char *name) {
    for (int i = 0; i < ncol; i++)
        if (!strcmp(cell[i], name)) return i;
    return -1;
}

/* store_row_fn: keep each family's first successful row (its best). */
static void famtime_row(void *ctx, int header, int ncol, const char *const *cell) {
    famtime *ft = ctx;
    if (header) {
        ft->c_op = col_index(ncol, cell, "op");
        ft->c_dtype = col_index(ncol, cell, "dtype");
        ft->c_fam = col_index(ncol, cell, "family");
        ft->c_status = col_index(ncol, cell, "status");
        ft->c_us = col_index(ncol, cell, "us");
        ft->c_rm = col_index(ncol, cell, "rematch us");
        ft->c_rm_by = col_index(ncol, cell, "rematch by");
        return;
    }
    if (ft->c_op < 0 || ft->c_dtype < 0 || ft->c_fam < 0 || ft->c_status < 0 || ft->c_us < 0)
        return;
    if (strcmp(cell[ft->c_op], ft->op) || strcmp(cell[ft->c_dtype], ft->dtype) ||
        strcmp(cell[ft->c_status], "ok"))
        return;
    double us = strtod(cell[ft->c_us], NULL);
    int k = 0;
    while (k < ft->n && strcmp(ft->fam[k], cell[ft->c_fam])) k++;
    if (k < ft->n || ft->n == MAX_FAM || !(us > 0)) return;   /* not its best, or no room */
    snprintf(ft->fam[ft->n], sizeof ft->fam[0], "%s", cell[ft->c_fam]);
    ft->us[ft->n] = us;
    ft->rm[ft->n] = ft->c_rm >= 0 ? strtod(cell[ft->c_rm], NULL) : 0;   /* "-": 0 */
    snprintf(ft->rm_by[ft->n], sizeof ft->rm_by[0], "%s", ft->c_rm_by >= 0 ? cell[ft->c_rm_by] : "-");
    ft->n++;
}

/* The family `name`'s index, or -1. */
static int fam_index(const famtime *ft, const char *name) {
    for (int k = 0; k < ft->n; k++)
        if (!strcmp(ft->fam[k], name)) return k;
    return -1;
}

/* The runner-up: the best-ranked family other than `winner`; its index, or
 * -1. */
static int runner_up(const famtime *ft, const char *winner) {
    for (int k = 0; k < ft->n; k++)
        if (strcmp(ft->fam[k], winner)) return k;
    return -1;
}

/* The runner-up's time over the winner's (best_us: the winner's median):
 * their re-measured medians where both have one timed the same way, else
 * their medians. */
static double runner_ratio(const famtime *ft, int next, int win, double best_us) {
    if (win >= 0 && ft->rm[win] > 0 && ft->rm[next] > 0 && !strcmp(ft->rm_by[win], ft->rm_by[next]))
        return ft->rm[next] / ft->rm[win];
    return ft->us[next] / best_us;
}

/* A family name without its op prefix ("<op>.naive" -> "naive"). */
static const char *short_family(const store_best_row *r) {
    size_t n = strlen(r->op);
    return !strncmp(r->family, r->op, n) && r->family[n] == '.' ? r->family + n + 1 : r->family;
}

/* Columns of the report: all of them in CSV and JSON; in the markdown
 * table device always goes, op and dtype when every row has the same. */
enum { R_DEV, R_N, R_M, R_OP, R_DTYPE, R_FAM, R_PARAMS, R_US, R_GBPS, R_PCT, R_PCTOP,
       R_NEXT, R_RATIO, R_NCOL };
static const char *const report_head[R_NCOL] = {
    "device", "N", "M", "op", "dtype", "family", "params", "us", "GB/s", "% copy", "% op",
    "runner-up", "runner-up/best"};

int cmd_report(int argc, char **argv) {
    nt_dbopts o;
    tbl t = {0};
    tbl_shapes shapes = {0};
    char err[512], c[R_NCOL][64];
    const char *cell[R_NCOL];
    store *db;
    store_best_row *rows = NULL;
    store_prov prov;
    nt_sink out;
    int n = 0, mixed = 0, ncol, fmt, rc = nt_parse_dbopts("report", argc, argv, "dDof", report_usage, &o);

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
    if ((fmt = nt_parse_format("report", o.format)) < 0) return NT_EXIT_USAGE;
    if (nt_sink_open("report", &out, o.out, o.db)) return NT_EXIT_FAIL;
    if (!(db = nt_open_db("report", o.db))) return nt_sink_close("report", &out, 0);
    if (nt_dbopts_model("report", db, &o)) {
        store_close(db);
        return nt_sink_close("report", &out, 0);
    }
    /* the configs the export would ship: within their outputs' dtypes */
    if (store_best(db, o.device, 0, &rows, &n, &prov, err, sizeof err)) {
        nt_errorf("report", "%s", err);
        store_close(db);
        return nt_sink_close("report", &out, 0);
    }
    shapes.db = db;
    shapes.rows = STORE_SHAPES_FAMBEST;         /* famtime_row reads no other row */
    shapes.dev = prov.device_id;               /* a GPU of the model store_best chose */
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
        famtime ft;
        memset(&ft, 0, sizeof ft);
        ft.op = r->op;
        ft.dtype = r->dtype;
        const tbl *sh = tbl_shape(&shapes, r->M, r->N, err, sizeof err);
        if (!sh) {
            nt_errorf("report", "%s", err);
            goto fail;
        }
        for (int j = 0; j < sh->nrow; j++)
            famtime_row(&ft, j == 0, sh->ncol, (const char *const *)sh->cell + j * sh->ncol);
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
        if (r->traffic_gbps > 0)
            snprintf(c[R_PCTOP], 64, "%.1f", 100.0 * r->gbps / r->traffic_gbps);
        else
            snprintf(c[R_PCTOP], 64, "-");
        int nx = runner_up(&ft, r->family), win = fam_index(&ft, r->family);
        if (nx >= 0 && r->median_us > 0) {
            store_best_row tmp = *r;
            snprintf(tmp.family, sizeof tmp.family, "%s", ft.fam[nx]);
            snprintf(c[R_NEXT], 64, "%s", short_family(&tmp));
            snprintf(c[R_RATIO], 64, "%.2f", runner_ratio(&ft, nx, win, r->median_us));
        } else {
            snprintf(c[R_NEXT], 64, "-");
            snprintf(c[R_RATIO], 64, "-");
        }
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
        int ngpus = 0;
        if (store_model_gpus(db, prov.device_id, &ngpus, err, sizeof err)) {
            nt_errorf("report", "%s", err);
            goto fail;
        }
        fprintf(f, "Device %s (cc %d.%d, %d SMs, memory clock %d kHz), the results of its %d "
                "GPU%s in the database ranked together; the best rows measured on",
                prov.device, prov.cc_major, prov.cc_minor, prov.sms, prov.mem_clock_khz, ngpus,
                ngpus == 1 ? "" : "s");
        for (int i = 0; i < prov.ngpus && i < STORE_PROV_GPUS; i++)
            fprintf(f, "%s %s (%d)", i ? "," : "", prov.gpus[i].uuid, prov.gpus[i].rows);
        if (prov.ngpus > STORE_PROV_GPUS)
            fprintf(f, " and %d more GPUs", prov.ngpus - STORE_PROV_GPUS);
        fprintf(f, ".\nDriver %s, CUDA runtime %s, NVRTC %s (%s).\n", prov.driver, prov.runtime,
                prov.nvrtc, prov.uuid);
        fprintf(f, "Kernel sources %s; %d sweep%s; newest result %s.\n", prov.src_hash,
                prov.nsweeps, prov.nsweeps == 1 ? "" : "s", prov.last_finished);
        if (!mixed) fprintf(f, "Op %s, dtype %s.\n", rows[0].op, rows[0].dtype);
        fprintf(f, "us: median time; GB/s: minimum bytes / median; %% copy: share of the\n"
                   "measured copy bandwidth; %% op: share of the bandwidth of a kernel with the\n"
                   "op's own traffic on the same shape, measured in the same run; runner-up:\n"
                   "the best other family as best ranks them, and its time over the best's\n"
                   "(re-measured medians where both were measured again together; above 1:\n"
                   "the winner is faster).\n\n");
        tbl_write(&t, TBL_MD, f);
    } else {
        tbl_write(&t, fmt, out.f);
    }
    tbl_free(&t);
    tbl_shapes_free(&shapes);
    free(rows);
    store_close(db);
    return nt_sink_close("report", &out, 1);
fail:
    tbl_free(&t);
    tbl_shapes_free(&shapes);
    free(rows);
    store_close(db);
    return nt_sink_close("report", &out, 0);
}
