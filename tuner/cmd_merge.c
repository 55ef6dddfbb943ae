/* cmd_merge.c -- `normtune merge` and `normtune migrate`: the commands that
 * write a results database other than `run`.
 *
 * `merge A.db B.db [C.db ...] -o OUT.db` folds databases into a new one and
 * says on stderr how many results came from each input, how many B had that
 * A had too (identical, or measured differently: A's kept; with more than
 * two inputs, what each had that one before it had).  `migrate --db FILE`
 * brings an older schema to this build's, in place.  Both go through
 * db/store.c, which checks every database they open (integrity, schema,
 * that a written file can be written) before any work.
 * Exit codes: 0 ok, 1 failure (one line on stderr), 2 usage error. */
#include <getopt.h>          /* optind */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/store.h"
#include "tuner/cli.h"

/* ---- normtune merge ----------------------------------------------------------- */

static void merge_usage(FILE *f) {
    fprintf(f,
        "usage: normtune merge A.db B.db [C.db ...] -o OUT.db\n\n"
        "Fold two results databases (say, from two machines) into a new one:\n"
        "devices, sweeps, variants, shapes, results and their samples.  A result\n"
        "whose key (device, variant, kernel source, shape, timing settings) is in\n"
        "both is kept once, as A has it.  The inputs are opened read-only, checked\n"
        "for damage, and each is read as one snapshot, so a sweep may go on\n"
        "writing them; OUT must not exist.  Prints on stderr how many results\n"
        "came from A and from B, and how many of B's keys A had too: with the\n"
        "same measurement, or a different one (A's kept).  More inputs fold in\n"
        "the order given, each result kept as the first that has it has it (the\n"
        "shards of a job array: examples/slurm/merge-shards.sh); one input is\n"
        "a checked copy.\n\n"
        "options:\n"
        "  -o, --output FILE   the new database\n"
        "  -h, --help          this text\n");
}

int cmd_merge(int argc, char **argv) {
    const char *out = NULL;
    char err[1024];
    const nt_opt opts[] = {{"output", 'o', NT_OPT_STR, &out, NULL}};
    int rc = nt_parse_opts("merge", argc, argv, opts, NT_NOPTS(opts), merge_usage);
    if (rc >= 0) return rc;
    int n = argc - optind;
    if (n < 1 || !out) {
        nt_errorf("merge", "needs input databases and -o OUT.db (see normtune merge --help)");
        return NT_EXIT_USAGE;
    }
    store_merge_input *each = calloc((size_t)n, sizeof *each);
    int64_t total = 0;
    if (!each) {
        nt_errorf("merge", "out of memory");
        return NT_EXIT_FAIL;
    }
    if (store_merge_all((const char *const *)argv + optind, n, out, each, &total, err,
                        sizeof err)) {
        nt_errorf("merge", "%s", err);
        free(each);
        return NT_EXIT_FAIL;
    }
    if (n == 2) {
        fprintf(stderr, "normtune merge: %s: %lld results (%lld from A, %lld from B, %lld in "
                "both, %lld differ: kept A's)\n", out, (long long)total,
                (long long)each[0].added, (long long)each[1].added, (long long)each[1].same,
                (long long)each[1].differ);
    } else {
        long long same = 0, differ = 0;
        fprintf(stderr, "normtune merge: %s: %lld results (", out, (long long)total);
        for (int i = 0; i < n; i++) {
            fprintf(stderr, "%s%lld from %s", i ? ", " : "", (long long)each[i].added,
                    argv[optind + i]);
            same += each[i].same;
            differ += each[i].differ;
        }
        fprintf(stderr, "; %lld in an earlier input too, %lld differ: kept the earlier's)\n",
                same + differ, differ);
    }
    free(each);
    return NT_EXIT_OK;
}

/* ---- normtune migrate --------------------------------------------------------- */

static void migrate_usage(FILE *f) {
    fprintf(f,
        "usage: normtune migrate --db FILE\n\n"
        "Bring a results database written by an older normtune to this build's\n"
        "schema, in place, one transaction per version step.  Reading commands\n"
        "(query, report, export, merge) refuse an older schema and point here.\n"
        "A damaged or unwritable file is refused before anything is written; a\n"
        "file already at this schema is checked and left byte-identical.\n\n"
        "options:\n"
        "  --db FILE    the database\n"
        "  -h, --help   this text\n");
}

int cmd_migrate(int argc, char **argv) {
    const char *db = NULL;
    char err[1024];
    const nt_opt opts[] = {{"db", 0, NT_OPT_STR, &db, NULL}};
    int rc = nt_parse_opts("migrate", argc, argv, opts, NT_NOPTS(opts), migrate_usage);
    if (rc >= 0) return rc;
    if (!db || optind != argc) {
        nt_errorf("migrate", "needs --db FILE and nothing else (see normtune migrate --help)");
        return NT_EXIT_USAGE;
    }
    if (store_migrate(db, NULL, err, sizeof err)) {
        nt_errorf("migrate", "%s", err);
        return NT_EXIT_FAIL;
    }
    fprintf(stderr, "normtune migrate: %s is at schema %d\n", db, STORE_SCHEMA_VERSION);
    return NT_EXIT_OK;
}
