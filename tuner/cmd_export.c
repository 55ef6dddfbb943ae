/* cmd_export.c -- `normtune export`: the results database -> the dispatch
 * header.
 *
 *   normtune export --db FILE [--device NAME] [--op OP] [--dtypes D] [--check] -o FILE.h
 *
 * Opens the database read-only, asks store_best for the best row per
 * problem of one device, keeps one op's problems of one dtype combination
 * (the first op of kernels/ops.c and its default dtypes unless --op and
 * --dtypes say otherwise), has nt_export_write (tuner/export.c) write the
 * header to a temporary file next to the output and renames it into place,
 * so a reader never sees half a header. */
#include <getopt.h>          /* optind */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/cli.h"
#include "tuner/export.h"
#include "tuner/output.h"


static void usage(FILE *f) {
    fprintf(f, "usage: normtune export --db FILE [--device NAME] [--op OP] [--dtypes D] [--check]\n"
               "                       -o FILE.h\n\n"
               "Write the dispatch header: the best config per tuned shape of one device,\n"
               "one op and one dtype combination, as a self-contained C header (see\n"
               "docs/dispatch-header.md).  The same database always gives the same bytes.\n\n"
               "  --db FILE         results database (opened read-only)\n"
               "  --device NAME     device name or uuid (needed when the database has several)\n"
               "  --op OP           the op (default: the first op normtune lists)\n"
               "  --dtypes D        its dtypes, e.g. x=bf16,w=f32 (default: the op's defaults)\n"
               "  -o, --output FILE header to write (replaced atomically; an SQLite\n"
               "                    database, or the --db file, is refused)\n"
               "  --check           only check that -o may be written (make tune runs\n"
               "                    this before the sweep); the database may not exist yet\n"
               "  -h, --help        this help\n");
}

/* Write the header for the rows through nt_out (checked, atomic; the
 * database is protected).  0, or -1 with a message. */
static int write_header(const char *out, const char *dbpath, const store_best_row *rows, int n,
                        const store_prov *prov, char *err, size_t errlen) {
    nt_out o;
    if (nt_out_open(&o, out, &dbpath, 1, err, errlen)) return -1;
    if (nt_export_write(o.f, rows, n, prov, err, errlen)) {
        nt_out_abort(&o);
        return -1;
    }
    return nt_out_commit(&o, err, errlen);
}

/* normtune export: see usage(). */
int cmd_export(int argc, char **argv) {
    const char *dbpath = NULL, *device = NULL, *out = NULL, *opname = NULL, *dtypes = NULL;
    char err[512], want[160];
    store *db = NULL;
    store_best_row *rows = NULL;
    store_prov prov;
    int n = 0, check = 0, rc;
    const nt_opt opts[] = {
        {"db", 0, NT_OPT_STR, &dbpath, NULL},
        {"device", 0, NT_OPT_STR, &device, NULL},
        {"output", 'o', NT_OPT_STR, &out, NULL},
        {"check", 0, NT_OPT_FLAG, &check, NULL},
        {"op", 0, NT_OPT_STR, &opname, NULL},
        {"dtypes", 0, NT_OPT_STR, &dtypes, NULL},
    };
    if ((rc = nt_parse_opts("export", argc, argv, opts, 6, usage)) >= 0) return rc;
    rc = NT_EXIT_FAIL;
    if (optind < argc) {
        nt_errorf("export", "unexpected argument '%s' (see normtune export --help)", argv[optind]);
        return NT_EXIT_USAGE;
    }
    if (!dbpath || !out) {
        nt_errorf("export", "needs --db FILE and -o FILE.h (see normtune export --help)");
        return NT_EXIT_USAGE;
    }
    if (nt_out_check(out, &dbpath, 1, err, sizeof err)) {
        nt_errorf("export", "%s", err);
        return NT_EXIT_FAIL;
    }
    const nt_op *op = opname ? nt_op_find(opname) : nt_ops[0];
    nt_problem pr;
    if (!op) {
        nt_errorf("export", "--op: unknown op '%s'", opname);
        return NT_EXIT_USAGE;
    }
    nt_problem_init(&pr, op, 1, 8);
    if ((dtypes && nt_dtypes_parse(&pr, dtypes, err, sizeof err)) ||
        nt_problem_check(&pr, err, sizeof err) || nt_dtypes_canon(&pr, want, sizeof want)) {
        nt_errorf("export", "--dtypes: %s", err);
        return NT_EXIT_USAGE;
    }
    if (check) return NT_EXIT_OK;
    memset(&prov, 0, sizeof prov);
    if (store_open(&db, dbpath, STORE_READ, err, sizeof err) ||
        store_best(db, device, 1, &rows, &n, &prov, err, sizeof err)) {
        nt_errorf("export", "%s", err);
        goto done;
    }
    int k = 0;                /* keep the problems asked for */
    for (int i = 0; i < n; i++)
        if (!strcmp(rows[i].op, op->name) && !strcmp(rows[i].dtype, want)) rows[k++] = rows[i];
    n = k;
    if (n == 0) {
        nt_errorf("export", "%s: no eligible result for %s %s", dbpath, op->name, want);
        goto done;
    }
    if (write_header(out, dbpath, rows, n, &prov, err, sizeof err)) {
        nt_errorf("export", "%s", err);
        goto done;
    }
    fprintf(stderr, "normtune export: %s: %d shapes\n", out, n);
    rc = NT_EXIT_OK;
done:
    free(rows);
    if (db) store_close(db);
    return rc;
}
