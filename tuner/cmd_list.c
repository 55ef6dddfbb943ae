/* cmd_list.c -- `normtune list`: what a sweep script would visit.
 *
 *   normtune list [--count] [--shard I/N] SCRIPT
 *
 * Loads the script (lua/ntlua.h), walks its problems (dtype combinations x
 * shapes) x families x points, keeps the points the families' where()
 * constraints accept, and prints one line per variant ("M=4096 N=1024
 * x=bf16,w=bf16,dw=f32 <op>.persistent block=128,chunks=1,stages=2,k=0"),
 * then a table of counts per problem and family with totals.  With a "random" strategy the points are those the
 * strategy proposes (its budget and seed), in its order.  Nothing is
 * compiled or run: this is the dry run of a sweep.  The walk itself is
 * nt_enumerate (search/enumerate.c). */
#include <getopt.h>          /* optind */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua/ntlua.h"
#include "tuner/cli.h"
#include "search/enumerate.h"

/* Callback of list: one line per variant on stdout. */
static int print_variant(void *ctx, const nt_sweep *sw, int s, int f, const int *idx,
                         const nt_params *p, char *err, size_t errlen) {
    char canon[512];
    (void)ctx;
    (void)idx;
    if (nt_params_canon(sw->fam[f].fam, p, canon, sizeof canon)) {
        snprintf(err, errlen, "%s: params of %s too long", sw->path, sw->fam[f].fam->name);
        return -1;
    }
    nt_problem pr;
    char pt[200];
    nt_sweep_problem(sw, s, &pr);
    nt_problem_text(&pr, pt, sizeof pt);
    printf("%s %s %s\n", pt, sw->fam[f].fam->name, canon);
    return 0;
}

/* The family's name after "op.". */
static const char *short_name(const nt_sweep *sw, int f) {
    return sw->fam[f].fam->name + strlen(sw->op->name) + 1;
}

/* The counts table: a row per problem, a column per family, totals; and a
 * last column "budget" (the shape's own, or -) when a shape has one. */
static void print_counts(const nt_sweep *sw, const uint64_t *counts) {
    int w[NT_SWEEP_MAX_FAMILIES], lw = 24, own = 0;
    uint64_t coltot[NT_SWEEP_MAX_FAMILIES] = {0}, all = 0;
    char label[200];
    for (int s = 0; s < nt_sweep_nproblems(sw); s++) {
        nt_problem pr;
        nt_sweep_problem(sw, s, &pr);
        nt_problem_text(&pr, label, sizeof label);
        if ((int)strlen(label) > lw) lw = (int)strlen(label);
        own |= nt_sweep_problem_budget(sw, s) > 0;
    }
    printf("# %s (hash %s): %s, %d problems (%d dtype combination%s), %d families, "
           "strategy %s", sw->path, sw->hash, sw->op->name, nt_sweep_nproblems(sw), sw->ndt,
           sw->ndt == 1 ? "" : "s", sw->nfam, sw->search.strategy);
    /* the families searched on their own (families.X.search) */
    for (int f = 0, n = 0; f < sw->nfam; f++)
        if (sw->fam[f].own) {
            printf("%s %s %s", n++ ? "," : "; on their own:", short_name(sw, f),
                   sw->fam[f].strategy);
            if (sw->fam[f].budget) printf(" %" PRIu64, sw->fam[f].budget);
        }
    putchar('\n');
    printf("%-*s", lw, "problem");
    for (int f = 0; f < sw->nfam; f++) {
        w[f] = (int)strlen(short_name(sw, f));
        if (w[f] < 10) w[f] = 10;
        printf(" %*s", w[f], short_name(sw, f));
    }
    printf(" %10s%s\n", "total", own ? "     budget" : "");
    for (int s = 0; s < nt_sweep_nproblems(sw); s++) {
        nt_problem pr;
        uint64_t row = 0;
        nt_sweep_problem(sw, s, &pr);
        nt_problem_text(&pr, label, sizeof label);
        printf("%-*s", lw, label);
        for (int f = 0; f < sw->nfam; f++) {
            uint64_t c = counts[(size_t)s * (size_t)sw->nfam + (size_t)f];
            printf(" %*" PRIu64, w[f], c);
            row += c;
            coltot[f] += c;
        }
        printf(" %10" PRIu64, row);
        if (own && nt_sweep_problem_budget(sw, s))
            printf(" %10" PRIu64, nt_sweep_problem_budget(sw, s));
        else if (own)
            printf(" %10s", "-");
        printf("\n");
        all += row;
    }
    printf("%-*s", lw, "total");
    for (int f = 0; f < sw->nfam; f++) printf(" %*" PRIu64, w[f], coltot[f]);
    printf(" %10" PRIu64 "\n", all);
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: normtune list [--count] [--shard I/N] SCRIPT\n\n"
            "Load a Lua sweep script and print every (problem, family, params) the\n"
            "search would visit after the families' where() constraints, one line\n"
            "per variant:\n"
            "  M=4096 N=1024 <dtypes: x=bf16,...> <op>.<family> <params: block=128,...>\n"
            "then the number of variants per problem and family, and the total\n"
            "(and a shape's own budget, where the script gives one).\n"
            "Nothing is compiled or run.\n\n"
            "options:\n"
            "  -c, --count   print only the counts\n"
            "  --shard I/N   only shard I of N (from 0) of the script's shapes, as\n"
            "                run --shard splits them: its hidden sizes N dealt\n"
            "                whole, evening out the shards' problems (the shapes\n"
            "                themselves when there are fewer N than shards)\n"
            "  -h, --help    print this help\n");
}

int cmd_list(int argc, char **argv) {
    int only_counts = 0, rc = NT_EXIT_FAIL, shard[2] = {0, 1};
    const nt_opt opts[] = {{"count", 'c', NT_OPT_FLAG, &only_counts, NULL},
                           {"shard", 0, NT_OPT_FN, shard, nt_opt_shard}};
    char err[1024];
    nt_sweep sw;
    uint64_t *counts = NULL;
    if ((rc = nt_parse_opts("list", argc, argv, opts, NT_NOPTS(opts), usage)) >= 0) return rc;
    rc = NT_EXIT_FAIL;
    if (optind != argc - 1) {
        nt_errorf("list", "%s (usage: normtune list [--count] [--shard I/N] SCRIPT)",
                  optind == argc ? "needs a SCRIPT" : "takes one SCRIPT");
        return NT_EXIT_USAGE;
    }
    if (ntl_load(argv[optind], &sw, err, sizeof err)) {
        nt_errorf("list", "%s", err);
        return NT_EXIT_FAIL;
    }
    int kept = nt_apply_shard("list", &sw, shard);
    if (kept <= 0) {
        rc = kept ? NT_EXIT_USAGE : NT_EXIT_OK;
        goto done;
    }
    counts = calloc((size_t)nt_sweep_nproblems(&sw) * (size_t)sw.nfam, sizeof *counts);
    if (!counts) {
        nt_errorf("list", "out of memory");
        goto done;
    }
    /* the determinism check walks everything and checks every problem keeps a
     * variant, before any output */
    if (nt_enumerate(&sw, NT_ENUM_EXHAUSTIVE, NULL, NULL, counts, err, sizeof err)) {
        nt_errorf("list", "%s", err);
        goto done;
    }
    /* random: the points it draws; an adaptive strategy (hillclimb, warm)
     * may visit any point, depending on the times it is told (a family's
     * own search too: search/enumerate.c) */
    int mode = nt_sweep_uses(&sw, "random") ? NT_ENUM_STRATEGY : NT_ENUM_EXHAUSTIVE;
    if (mode == NT_ENUM_STRATEGY || !only_counts) {
        if (nt_enumerate(&sw, mode, only_counts ? NULL : print_variant, NULL, counts, err,
                         sizeof err)) {
            nt_errorf("list", "%s", err);
            goto done;
        }
        if (!only_counts) printf("\n");
    }
    print_counts(&sw, counts);
    rc = fflush(stdout) ? NT_EXIT_FAIL : NT_EXIT_OK;
    if (rc) nt_errorf("list", "cannot write the output");
done:
    free(counts);
    ntl_free(&sw);
    return rc;
}
