/* cmd_families.c -- `normtune families [NAME ...]`: every family of every
 * op (or of the ops and families named), what it is, and the parameters a
 * sweep script gives it: each one's kind, allowed values and meaning, from
 * the families' own tables (the .c files of kernels/OP), the same ones
 * `run` and `list` check a script against.  No GPU, no script.
 * Exit codes: 0 ok, 2 usage (an unknown name). */
#include <getopt.h>          /* optind */
#include <stdio.h>
#include <string.h>

#include "tuner/cli.h"

static void families_usage(FILE *f) {
    fprintf(f,
        "usage: normtune families [NAME ...]\n\n"
        "Print the kernel families a sweep script can name, each with what it\n"
        "is and its parameters: kind, allowed values, meaning.  NAME is an op\n"
        "(its families), a family (OP.FAMILY) or a family's short name (the\n"
        "family of that name in every op that has one); none: every family of\n"
        "every op (normtune --help lists them).  A family's own check() may\n"
        "refuse more (shared memory, registers, the device): `normtune list`\n"
        "and `compile` say why.\n\n"
        "options:\n"
        "  -h, --help   this text\n");
}

/* 1 when family f of op o is named by one of names[0..n) (none: all). */
static int named(const nt_op *o, const nt_family *f, char **names, int n) {
    if (n == 0) return 1;
    const char *shortname = f->name + strlen(o->name) + 1;
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], o->name) || !strcmp(names[i], f->name) ||
            !strcmp(names[i], shortname))
            return 1;
    return 0;
}

static void print_family(const nt_family *f) {
    printf("%s: %s\n", f->name, f->doc);
    for (int i = 0; i < f->nparams; i++) {
        const nt_param_def *d = &f->params[i];
        char allowed[128];
        if (d->kind == NT_PARAM_STR) {
            size_t at = 0;
            allowed[0] = 0;
            for (int c = 0; d->choices && d->choices[c] && at < sizeof allowed; c++)
                at += (size_t)snprintf(allowed + at, sizeof allowed - at, "%s%s", c ? ", " : "",
                                       d->choices[c]);
        } else {
            snprintf(allowed, sizeof allowed, "%lld .. %lld", (long long)d->lo, (long long)d->hi);
        }
        printf("  %-8s  %-7s  %-12s  %s\n", d->name, d->kind == NT_PARAM_STR ? "string" : "integer",
               allowed, d->doc);
    }
}

int cmd_families(int argc, char **argv) {
    int rc = nt_parse_opts("families", argc, argv, NULL, 0, families_usage);
    if (rc >= 0) return rc;
    char **names = argv + optind;
    int n = argc - optind;
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (int o = 0; nt_ops[o] && !found; o++)
            for (int k = 0; nt_ops[o]->families[k] && !found; k++)
                found = named(nt_ops[o], nt_ops[o]->families[k], names + i, 1);
        if (!found) {
            nt_errorf("families", "'%s' is no op or family (normtune families lists them)",
                      names[i]);
            return NT_EXIT_USAGE;
        }
    }
    int first = 1;
    for (int o = 0; nt_ops[o]; o++)
        for (int k = 0; nt_ops[o]->families[k]; k++) {
            const nt_family *f = nt_ops[o]->families[k];
            if (!named(nt_ops[o], f, names, n)) continue;
            if (!first) printf("\n");
            first = 0;
            print_family(f);
        }
    if (fflush(stdout) || ferror(stdout)) {
        nt_errorf("families", "cannot write the list");
        return NT_EXIT_FAIL;
    }
    return NT_EXIT_OK;
}
