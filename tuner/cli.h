/* cli.h -- the normtune commands, one function each, and shared CLI helpers.
 *
 * Every command takes (argc, argv) with argv[0] the command name, parses its
 * options with nt_parse_opts from a table of its own (--help included), and
 * returns the process exit code: 0 success, 1 failure (message on stderr),
 * 2 usage error. */
#ifndef NT_CLI_H
#define NT_CLI_H

#include <stdio.h>

#include "db/store.h"
#include "search/sweep.h"
#include "tuner/output.h"

#define NT_EXIT_OK 0
#define NT_EXIT_FAIL 1
#define NT_EXIT_USAGE 2

int cmd_list(int argc, char **argv);    /* tuner/cmd_list.c */
int cmd_families(int argc, char **argv); /* tuner/cmd_families.c */
int cmd_compile(int argc, char **argv); /* tuner/cmd_compile.c */
int cmd_run(int argc, char **argv);     /* tuner/cmd_run.c */
int cmd_export(int argc, char **argv);  /* tuner/cmd_export.c */
int cmd_query(int argc, char **argv);   /* tuner/cmd_query.c */
int cmd_report(int argc, char **argv);  /* tuner/cmd_report.c */
int cmd_plot(int argc, char **argv);    /* tuner/cmd_plot.c */
int cmd_merge(int argc, char **argv);   /* tuner/cmd_merge.c */
int cmd_replay(int argc, char **argv);  /* tuner/cmd_replay.c */
int cmd_migrate(int argc, char **argv); /* tuner/cmd_merge.c */

/* Print "normtune CMD: " + message + newline on stderr. */
void nt_errorf(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Parse a positive integer option value; returns 0 and sets *v, or prints a
 * usage error naming opt and returns -1. */
int nt_parse_pos(const char *cmd, const char *opt, const char *text, long long *v);

/* An NT_OPT_FN for --strategy: one of search/search.h's search_strategies
 * into *(const char **)dst; otherwise a usage error naming them all. */
int nt_opt_strategy(const char *cmd, const char *value, void *dst);

/* An NT_OPT_FN for --shard I/N (run, list): 0 <= I < N <= NT_SHARDS_MAX
 * into ((int *)dst)[0] and [1] (search/sweep.h, nt_sweep_shard); otherwise
 * a usage error.  Under a Slurm job array, I/N is
 * $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT (docs/guide.md). */
#define NT_SHARDS_MAX 4096
int nt_opt_shard(const char *cmd, const char *value, void *dst);

/* Apply --shard to a loaded sweep: its problem count, 0 printing on stderr
 * that shard I/N has no shape of the script (the caller exits 0: a job
 * array larger than the sweep is no error), or -1 with a message. */
int nt_apply_shard(const char *cmd, nt_sweep *sw, const int shard[2]);

/* 1 when paths a and b name one existing file (a link, another spelling),
 * else 0. */
int nt_same_file(const char *a, const char *b);

/* ---- the option parser of every command ---- */

/* How an option's value is stored (nt_opt.kind). */
enum {
    NT_OPT_FLAG,              /* no value; *(int *)dst = 1 */
    NT_OPT_STR,               /* *(const char **)dst = the value */
    NT_OPT_POS,               /* *(long long *)dst = the value, a positive
                                 integer (nt_parse_pos, named "--NAME") */
    NT_OPT_FN,                /* fn(cmd, value, dst) stores it: 0, or -1 with
                                 a usage error printed */
};

/* One option of a command: --NAME, and -LETTER when letter is not 0.  A
 * value is given as "--NAME V", "--NAME=V", "-L V" or "-LV". */
typedef struct nt_opt {
    const char *name;
    char letter;
    int kind;                 /* NT_OPT_* */
    void *dst;
    int (*fn)(const char *cmd, const char *value, void *dst);
} nt_opt;

#define NT_MAX_OPTS 16        /* options of one command, --help not counted */

/* Parse the options of argv for cmd from the table opts (nopt entries),
 * GNU style: options and positionals in any order, "--" ends the options,
 * a long name may be abbreviated to a unique prefix.  --help and -h print
 * usage on stdout.  Each value is stored as the table says, in the order
 * given.  Returns -1 to go on (the positionals are argv[optind..argc-1]),
 * else the exit code to return: 0 (help printed) or 2, with
 * "normtune CMD: option --x needs a value" or
 * "normtune CMD: unknown option '--x' (see normtune CMD --help)" or the
 * value's own usage error printed. */
int nt_parse_opts(const char *cmd, int argc, char **argv, const nt_opt *opts, int nopt,
                  void (*usage)(FILE *));

/* The entries of an option table (an array, not a pointer), for nopt: a
 * count written by hand would silently drop an option added later. */
#define NT_NOPTS(opts) ((int)(sizeof(opts) / sizeof((opts)[0])))

/* ---- the commands that read a database (query, report) ---- */

/* Their options; which of them one accepts is given to nt_parse_dbopts. */
typedef struct nt_dbopts {
    const char *db, *device, *out, *format;
    int newest;               /* --newest: the model of the newest sweep's GPU */
    char newest_gpu[256];     /* ... its uuid, once nt_dbopts_model resolved it */
} nt_dbopts;

/* Parse argv for cmd, accepting the options whose letters are in accept
 * ('d' --db, 'D' --device and --newest, 'o' -o/--output, 'f' --format;
 * --help always, printed with usage).  --device with --newest is a usage
 * error.  Returns -1 to go on (positionals start at optind), else the exit
 * code to return (help printed: 0, usage error: 2). */
int nt_parse_dbopts(const char *cmd, int argc, char **argv, const char *accept,
                    void (*usage)(FILE *), nt_dbopts *o);

/* With --newest, set o->device to the GPU that ran db's newest sweep
 * (store_newest_gpu).  0, or -1 with the error printed. */
int nt_dbopts_model(const char *cmd, store *db, nt_dbopts *o);

/* The TBL_* format of --format (default: table), or -1 with a usage error
 * printed. */
int nt_parse_format(const char *cmd, const char *name);

/* Open the database read-only; prints the error and returns NULL on
 * failure.  The caller closes it (store_close). */
store *nt_open_db(const char *cmd, const char *path);

/* Where a command's output goes: stdout, or -o FILE through nt_out (never
 * the database). */
typedef struct nt_sink {
    nt_out o;
    int file;                      /* 1: writing o */
    FILE *f;                       /* where to write: stdout or o.f */
} nt_sink;

/* Open the output: stdout when path is NULL, else path (never over db).
 * 0, or -1 with the error printed. */
int nt_sink_open(const char *cmd, nt_sink *s, const char *path, const char *db);

/* Finish the output: commit the file (ok) or drop it (!ok).  Returns the
 * exit code: NT_EXIT_OK only when ok and the output was written. */
int nt_sink_close(const char *cmd, nt_sink *s, int ok);

#endif
