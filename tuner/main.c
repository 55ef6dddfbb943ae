/* main.c -- the normtune command line: a table of commands.
 *
 * normtune COMMAND [options]; each command lives in its own file and is
 * listed in cmds[] below.  Exit codes: 0 ok, 1 failure, 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/cli.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} cmds[] = {
    {"list", cmd_list, "print every (shape, family, params) a sweep script would visit"},
    {"families", cmd_families, "the kernel families of each op and the parameters they take"},
    {"compile", cmd_compile, "compile every variant of a script with NVRTC (no GPU needed)"},
    {"run", cmd_run, "run a sweep on the GPU into a results database"},
    {"export", cmd_export, "write the dispatch header from a results database"},
    {"query", cmd_query, "canned reports over a results database"},
    {"report", cmd_report, "summary of the best configs per shape, with family ratios"},
    {"plot", cmd_plot, "draw results or a CSV with gnuplot (.svg or .png)"},
    {"replay", cmd_replay, "run a search against stored results, without a GPU"},
    {"merge", cmd_merge, "fold two results databases into a new one"},
    {"migrate", cmd_migrate, "bring a database of an older normtune to this schema"},
};
#define NCMDS (sizeof cmds / sizeof cmds[0])

static void usage(FILE *f) {
    fprintf(f, "usage: normtune COMMAND [options]   (normtune COMMAND --help)\n\n"
               "Tunes normalization kernels on the GPU at hand, keeps every\n"
               "measurement in SQLite, and exports the winners as a C header.\n\n"
               "commands:\n");
    for (size_t i = 0; i < NCMDS; i++) fprintf(f, "  %-8s  %s\n", cmds[i].name, cmds[i].help);
    fprintf(f, "\nops (the families of each, the dtypes it takes):\n");
    for (int o = 0; nt_ops[o]; o++) {
        const nt_op *op = nt_ops[o];
        fprintf(f, "  %-12s  %s\n               ", op->name, op->doc);
        for (int i = 0; op->families[i]; i++)
            fprintf(f, "%s%s", i ? ", " : "", op->families[i]->name + strlen(op->name) + 1);
        fprintf(f, ";");
        for (int s = 0; s < op->nslots; s++) {
            fprintf(f, " %s=", op->slots[s].name);
            for (int d = 0, k = 0; d < NT_NDTYPES; d++)
                if (op->slots[s].allowed & (1u << d))
                    fprintf(f, "%s%s", k++ ? "|" : "", nt_dtypes[d].name);
        }
        fprintf(f, "\n");
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return NT_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return NT_EXIT_OK;
    }
    for (size_t i = 0; i < NCMDS; i++)
        if (!strcmp(argv[1], cmds[i].name)) return cmds[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "normtune: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return NT_EXIT_USAGE;
}
