/* cli.h -- the normtune commands, one function each, and shared CLI helpers.
 *
 * Every command takes (argc, argv) with argv[0] the command name, parses its
 * options with getopt_long, handles --help, and returns the process exit
 * code: 0 success, 1 failure (message on stderr), 2 usage error. */
#ifndef NT_CLI_H
#define NT_CLI_H

#define NT_EXIT_OK 0
#define NT_EXIT_FAIL 1
#define NT_EXIT_USAGE 2

int cmd_list(int argc, char **argv);    /* tuner/cmd_list.c */
int cmd_compile(int argc, char **argv); /* tuner/cmd_compile.c */
int cmd_run(int argc, char **argv);     /* tuner/cmd_run.c */
int cmd_export(int argc, char **argv);  /* tuner/cmd_export.c */
int cmd_query(int argc, char **argv);   /* tuner/query.c */
int cmd_report(int argc, char **argv);  /* tuner/query.c */
int cmd_plot(int argc, char **argv);    /* tuner/plot.c */
int cmd_merge(int argc, char **argv);   /* tuner/query.c */
int cmd_migrate(int argc, char **argv); /* tuner/query.c */

/* Print "normtune CMD: " + message + newline on stderr. */
void nt_errorf(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Parse a positive integer option value; returns 0 and sets *v, or prints a
 * usage error naming opt and returns -1. */
int nt_parse_pos(const char *cmd, const char *opt, const char *text, long long *v);

#endif
