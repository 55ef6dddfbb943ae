/* cmd_export.c -- `normtune export`: the results database -> the dispatch
 * header.
 *
 *   normtune export --db FILE [--device NAME | --newest] [--check] -o FILE.h
 *
 * Opens the database read-only, asks store_best for the best row per
 * problem and shape of one device model (the results of its GPUs pooled:
 * db/store.h), has nt_export_write (tuner/export.c)
 * write one header for every op and dtype combination to a temporary file
 * next to the output and renames it into place, so a reader never sees
 * half a header.  A family measured with other sources than this build's
 * is named in a note (make lib refuses such a header). */
#include <getopt.h>          /* optind */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/cli.h"
#include "tuner/export.h"
#include "tuner/output.h"


static void usage(FILE *f) {
    fprintf(f, "usage: normtune export --db FILE [--device NAME | --newest] [--check] -o FILE.h\n\n"
               "Write the dispatch header: for one device model, every op and dtype\n"
               "combination (the best config per tuned shape over the results of every\n"
               "GPU of the model, the op's fallback for the rest), the configs' kernels\n"
               "and a lookup, as a self-contained C header (see docs/dispatch-header.md).\n"
               "The same database always gives the same bytes.\n\n"
               "  --db FILE         results database (opened read-only)\n"
               "  --device NAME     a GPU's name or uuid: its model (needed when several\n"
               "                    models have results and none is the one with, or\n"
               "                    covering all, the current results: docs/guide.md)\n"
               "  --newest          the model of the GPU that ran the database's newest\n"
               "                    sweep (make tune: the GPU it just tuned)\n"
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
    const char *dbpath = NULL, *device = NULL, *out = NULL;
    char err[512], stale[512];
    store *db = NULL;
    store_best_row *rows = NULL;
    store_prov prov;
    char newest[256];
    int n = 0, check = 0, latest = 0, rc;
    const nt_opt opts[] = {
        {"newest", 0, NT_OPT_FLAG, &latest, NULL},
        {"db", 0, NT_OPT_STR, &dbpath, NULL},
        {"device", 0, NT_OPT_STR, &device, NULL},
        {"output", 'o', NT_OPT_STR, &out, NULL},
        {"check", 0, NT_OPT_FLAG, &check, NULL},
    };
    if ((rc = nt_parse_opts("export", argc, argv, opts, NT_NOPTS(opts), usage)) >= 0) return rc;
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
    if (device && latest) {
        nt_errorf("export", "--device and --newest both name the model: give one");
        return NT_EXIT_USAGE;
    }
    if (check) return NT_EXIT_OK;
    memset(&prov, 0, sizeof prov);
    if (store_open(&db, dbpath, STORE_READ, err, sizeof err) ||
        (latest && store_newest_gpu(db, newest, sizeof newest, err, sizeof err)) ||
        store_best(db, latest ? newest : device, 1, &rows, &n, &prov, err, sizeof err)) {
        nt_errorf("export", "%s", err);
        goto done;
    }
    if (write_header(out, dbpath, rows, n, &prov, err, sizeof err)) {
        nt_errorf("export", "%s", err);
        goto done;
    }
    fprintf(stderr, "normtune export: %s: %d tuned shapes\n", out, n);
    if (nt_export_stale(rows, n, stale, sizeof stale))
        fprintf(stderr, "note: measured with other sources than this build's, so make lib "
                        "refuses this header: %s\n", stale);
    if (nt_export_unmeasured(&prov, stale, sizeof stale))
        fprintf(stderr, "note: no results of the current sources of %s on any %s of the "
                        "database, so the header does not use them; a sweep that lists them "
                        "measures them where its search proposes them (every point with "
                        "--strategy exhaustive; a resumed run skips what is stored)\n", stale,
                prov.device);
    rc = NT_EXIT_OK;
done:
    free(rows);
    if (db) store_close(db);
    return rc;
}
