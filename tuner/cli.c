/* cli.c -- helpers shared by the command implementations: messages,
 * number options, and the options, database and output of the commands
 * that read a database (query, report). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "search/search.h"
#include "search/sweep.h"
#include "tuner/cli.h"
#include "tuner/table.h"

void nt_errorf(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "normtune %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int nt_parse_pos(const char *cmd, const char *opt, const char *text, long long *v) {
    char *end;
    long long x = strtoll(text, &end, 10);
    if (!*text || *end || x <= 0) {
        nt_errorf(cmd, "%s needs a positive integer, got '%s'", opt, text);
        return -1;
    }
    *v = x;
    return 0;
}

/* ---- the option parser ----------------------------------------------------- */

/* getopt_long's value for option i of the table (above any char). */
#define OPT_VAL(i) (256 + (i))

/* Store value v of option o (see nt_opt).  0, or -1 with a usage error
 * printed. */
static int opt_store(const char *cmd, const nt_opt *o, const char *v) {
    char name[64];
    switch (o->kind) {
    case NT_OPT_FLAG: *(int *)o->dst = 1; return 0;
    case NT_OPT_STR: *(const char **)o->dst = v; return 0;
    case NT_OPT_POS:
        snprintf(name, sizeof name, "--%s", o->name);
        return nt_parse_pos(cmd, name, v, o->dst);
    default: return o->fn(cmd, v, o->dst);
    }
}

/* Parse argv's options from the table opts (see cli.h): the table becomes
 * getopt_long's, so abbreviations, "--" and permutation are GNU's. */
int nt_parse_opts(const char *cmd, int argc, char **argv, const nt_opt *opts, int nopt,
                  void (*usage)(FILE *)) {
    struct option lo[NT_MAX_OPTS + 2];
    char so[3 * NT_MAX_OPTS + 4] = ":h";
    size_t ns = 2;
    int c;
    if (nopt > NT_MAX_OPTS) nopt = NT_MAX_OPTS;
    for (int i = 0; i < nopt; i++) {
        int val = opts[i].kind != NT_OPT_FLAG;
        lo[i] = (struct option){opts[i].name, val ? required_argument : no_argument, NULL,
                                OPT_VAL(i)};
        if (opts[i].letter) {
            so[ns++] = opts[i].letter;
            if (val) so[ns++] = ':';
        }
    }
    so[ns] = 0;
    lo[nopt] = (struct option){"help", no_argument, NULL, 'h'};
    lo[nopt + 1] = (struct option){NULL, 0, NULL, 0};
    optind = 0;                                 /* full reset (GNU) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
        int i = c >= OPT_VAL(0) ? c - OPT_VAL(0) : -1;
        if (c == 'h') {
            usage(stdout);
            return NT_EXIT_OK;
        }
        if (c == ':') {
            nt_errorf(cmd, "option %s needs a value", argv[optind - 1]);
            return NT_EXIT_USAGE;
        }
        for (int j = 0; i < 0 && c != '?' && j < nopt; j++)
            if (opts[j].letter == c) i = j;     /* a short form */
        if (i < 0 || i >= nopt) {
            nt_errorf(cmd, "unknown option '%s' (see normtune %s --help)", argv[optind - 1],
                      cmd);
            return NT_EXIT_USAGE;
        }
        if (opt_store(cmd, &opts[i], optarg)) return NT_EXIT_USAGE;
    }
    return -1;
}

/* ---- the commands that read a database (query, report) ------------------- */

/* Parse argv for cmd, accepting the options whose letters are in accept
 * ('d' --db, 'D' --device, 'o' -o/--output, 'f' --format; --help always).
 * Returns -1 to go on (positionals start at optind), else the exit code to
 * return (help printed: 0, usage error: 2). */
int nt_parse_dbopts(const char *cmd, int argc, char **argv, const char *accept,
                    void (*usage)(FILE *), nt_dbopts *o) {
    const nt_opt all[] = {
        {"db", 0, NT_OPT_STR, &o->db, NULL},
        {"device", 0, NT_OPT_STR, &o->device, NULL},
        {"newest", 0, NT_OPT_FLAG, &o->newest, NULL},
        {"output", 'o', NT_OPT_STR, &o->out, NULL},
        {"format", 0, NT_OPT_STR, &o->format, NULL},
    };
    static const char letters[] = "dDDof";      /* of all[], for accept */
    nt_opt t[5];
    int n = 0;
    memset(o, 0, sizeof *o);
    for (int i = 0; i < 5; i++)
        if (strchr(accept, letters[i])) t[n++] = all[i];
    int rc = nt_parse_opts(cmd, argc, argv, t, n, usage);
    if (rc < 0 && o->device && o->newest) {
        nt_errorf(cmd, "--device and --newest both name the model: give one");
        return NT_EXIT_USAGE;
    }
    return rc;
}

int nt_dbopts_model(const char *cmd, store *db, nt_dbopts *o) {
    char err[512];
    if (!o->newest) return 0;
    if (store_newest_gpu(db, o->newest_gpu, sizeof o->newest_gpu, err, sizeof err)) {
        nt_errorf(cmd, "%s", err);
        return -1;
    }
    o->device = o->newest_gpu;
    return 0;
}

/* The TBL_* format of --format (default: table), or -1 with a usage error
 * printed. */
int nt_parse_format(const char *cmd, const char *name) {
    int f = name ? tbl_format(name) : TBL_TABLE;
    if (f < 0) nt_errorf(cmd, "unknown --format '%s' (table, csv or json)", name);
    return f;
}

/* Open --db read-only; prints the error and returns NULL on failure. */
store *nt_open_db(const char *cmd, const char *path) {
    char err[512];
    store *db = NULL;
    if (store_open(&db, path, STORE_READ, err, sizeof err)) {
        nt_errorf(cmd, "%s", err);
        return NULL;
    }
    return db;
}

/* Open the output: stdout, or path through nt_out, never over db (see cli.h). */
int nt_sink_open(const char *cmd, nt_sink *s, const char *path, const char *db) {
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
int nt_sink_close(const char *cmd, nt_sink *s, int ok) {
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

int nt_opt_strategy(const char *cmd, const char *value, void *dst) {
    char list[128] = "";
    for (int i = 0; search_strategies[i]; i++) {
        if (!strcmp(search_strategies[i], value) &&
            strlen(value) < sizeof ((search_cfg *)0)->strategy) {
            *(const char **)dst = search_strategies[i];
            return 0;
        }
        size_t n = strlen(list);
        snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", search_strategies[i]);
    }
    nt_errorf(cmd, "unknown strategy '%s' (allowed: %s)", value, list);
    return -1;
}

int nt_opt_shard(const char *cmd, const char *value, void *dst) {
    int *s = dst;
    char *end;
    long i, n;
    errno = 0;
    i = strtol(value, &end, 10);
    if (end == value || *end != '/' || errno || value[0] == '-' || value[0] == '+') goto bad;
    const char *v = end + 1;
    n = strtol(v, &end, 10);
    if (end == v || *end || errno || v[0] == '-' || v[0] == '+') goto bad;
    if (n < 1 || n > NT_SHARDS_MAX || i >= n) {
        nt_errorf(cmd, "--shard %s: needs 0 <= I < N and 1 <= N <= %d", value, NT_SHARDS_MAX);
        return -1;
    }
    s[0] = (int)i;
    s[1] = (int)n;
    return 0;
bad:
    nt_errorf(cmd, "--shard needs I/N, two whole numbers (shard I of N, from 0), got '%s'",
              value);
    return -1;
}

int nt_apply_shard(const char *cmd, nt_sweep *sw, const int shard[2]) {
    char err[256];
    int all = nt_sweep_nproblems(sw), n;
    if (shard[1] <= 1) return all;
    if ((n = nt_sweep_shard(sw, shard[0], shard[1], err, sizeof err)) < 0) {
        nt_errorf(cmd, "%s", err);
        return -1;
    }
    if (!n)
        fprintf(stderr, "normtune %s: shard %d/%d has no shape of %s (%d problems in all): "
                        "nothing to do\n", cmd, shard[0], shard[1], sw->path, all);
    else
        fprintf(stderr, "normtune %s: shard %d/%d: %d of the script's %d problems\n", cmd,
                shard[0], shard[1], n, all);
    return n;
}

int nt_same_file(const char *a, const char *b) {
    struct stat x, y;
    return !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}
