/* cmd_query.c -- `normtune query`: canned reports over a results database.
 *
 *   normtune query --db FILE [--device NAME | --newest] [--format F] [-o FILE] [REPORT]
 *
 * The read side of the results database for performance engineers: one of
 * the store's canned reports (best per shape, one shape's variants ranked,
 * one result's samples, the sweeps) printed as a plain-text table whose
 * column widths come from the data, numbers aligned right, or as CSV or
 * JSON (--format, tuner/table.c), to stdout or to a file with -o (through
 * tuner/output.c: atomic, never over a database).
 *
 * The table is collected in memory (tbl) from the store's row callbacks and
 * printed once complete, so an error half-way prints no partial table.
 * Exit codes: 0 ok, 1 failure (one line on stderr), 2 usage error. */
#include <getopt.h>          /* optind */
#include <stdio.h>
#include <string.h>

#include "db/store.h"
#include "tuner/cli.h"
#include "tuner/table.h"

static void query_usage(FILE *f) {
    fprintf(f,
        "usage: normtune query --db FILE [--device NAME | --newest] [--format F] [-o FILE]\n"
        "                      [REPORT]\n\n"
        "Canned reports over a results database, as aligned text tables, CSV\n"
        "or JSON.\n\n"
        "reports:\n"
        "  best            best successful result per (device model, shape), over\n"
        "                  the results of every GPU of the model (default)\n"
        "  shape N M       every result of one shape on the GPUs of the model, the\n"
        "                  successful ones ranked as best ranks them (by median\n"
        "                  time, or by warm's re-measure in turn where it made\n"
        "                  one: columns 'rematch us' and 'rematch by', chain\n"
        "                  or alone) with %% of the best and\n"
        "                  their GPU (uuid prefix), then the failures;\n"
        "                  N first, as in every table (also: N=4096 M=1024, in\n"
        "                  any order)\n"
        "  samples ID      the raw timing samples of result ID (column 'result')\n"
        "  sweeps          every sweep: device, script, times, status, copy GB/s\n\n"
        "options:\n"
        "  --db FILE       the results database (opened read-only)\n"
        "  --device NAME   a GPU's name or uuid: its model (best: default all\n"
        "                  models; shape: default as in report: docs/guide.md)\n"
        "  --newest        the model of the GPU that ran the newest sweep\n"
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
    nt_dbopts o;
    tbl t = {0};
    char err[512];
    store *db;
    nt_sink out;
    int rc = nt_parse_dbopts("query", argc, argv, "dDof", query_usage, &o), n, src, fmt;
    long long M = 0, N = 0, id = 0;
    const char *what;

    if (rc >= 0) return rc;
    what = optind < argc ? argv[optind] : "best";
    n = argc - optind - (optind < argc);        /* arguments after the report name */
    if (!o.db) {
        nt_errorf("query", "needs --db FILE (see normtune query --help)");
        return NT_EXIT_USAGE;
    }
    if ((fmt = nt_parse_format("query", o.format)) < 0) return NT_EXIT_USAGE;
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

    if (nt_sink_open("query", &out, o.out, o.db)) return NT_EXIT_FAIL;
    if (!(db = nt_open_db("query", o.db))) return nt_sink_close("query", &out, 0);
    if (nt_dbopts_model("query", db, &o)) {
        store_close(db);
        return nt_sink_close("query", &out, 0);
    }
    if (!strcmp(what, "best"))
        src = store_report_best(db, o.device, tbl_row, &t, err, sizeof err);
    else if (!strcmp(what, "shape")) {
        int64_t dev;
        src = store_find_device(db, o.device, &dev, err, sizeof err);
        if (src == STORE_OK)
            src = store_report_shape(db, dev, M, N, tbl_row, &t, err, sizeof err);
    }
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
        return nt_sink_close("query", &out, 0);
    }
    tbl_write(&t, fmt, out.f);
    tbl_free(&t);
    return nt_sink_close("query", &out, 1);
}
