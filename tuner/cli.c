/* cli.c -- helpers shared by the command implementations: messages,
 * number options, and the options, database and output of the commands
 * that read a database (query, report). */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- the commands that read a database (query, report) ------------------- */

/* Parse argv for cmd, accepting the options whose letters are in accept
 * ('d' --db, 'D' --device, 'o' -o/--output, 'f' --format; --help always).
 * Returns -1 to go on (positionals start at optind), else the exit code to
 * return (help printed: 0, usage error: 2). */
int nt_parse_dbopts(const char *cmd, int argc, char **argv, const char *accept,
                    void (*usage)(FILE *), nt_dbopts *o) {
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
