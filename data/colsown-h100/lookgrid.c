/* lookgrid.c -- what the library's lookup picks over a grid: for the bf16
 * problems of a dispatch header (the backward with an fp32 dw, the
 * forward), at M = 256 .. 65536 by every N from 64 to 20480 in steps of 8,
 * "op M N family params" a line, with the dispatch core as can_run (as
 * tests/drift_check.c has it).  lookup_changes.diff is the diff of its
 * output for the header before (format 4, commit 7a870a9, built in a
 * worktree of it) and after (format 5).  From the repository root:
 *   cc -std=c11 -O1 -D_GNU_SOURCE -I. '-DNT_DISPATCH_HEADER="kernels/normtune_dispatch.h"' \
 *     -o lookgrid data/colsown-h100/lookgrid.c kernels/dispatch.c kernels/family.c \
 *     kernels/ops.c kernels/ref.c $(find kernels -mindepth 2 -name '*.c' ! -name 'test_*') \
 *     -lm -lpthread */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/dispatch.h"
#include "kernels/family.h"
#include NT_DISPATCH_HEADER
NT_DISPATCH_DEFINE(static, hdr);
static int can_run(void *ctx, int c, long long M, long long N) {
    nt_problem p = *(const nt_problem *)ctx;
    nt_dispatch_choice ch;
    char err[256];
    p.M = M; p.N = N;
    return nt_dispatch_try(&hdr, c, &p, NULL, &ch, err, sizeof err) == 0;
}
int main(void) {
    static const long long Ms[] = {256, 512, 1024, 2048, 4096, 8192, 16384, 65536};
    const char *want[] = {"x=bf16,w=bf16,dw=f32", "x=bf16,w=bf16"};
    for (int q = 0; q < hdr.nproblems; q++) {
        if (strcmp(hdr.problems[q].dtypes, want[0]) && strcmp(hdr.problems[q].dtypes, want[1])) continue;
        const nt_op *op = nt_op_find(hdr.problems[q].op);
        char err[256];
        for (int m = 0; m < 8; m++)
            for (long long N = 64; N <= 20480; N += 8) {
                nt_problem p;
                nt_problem_init(&p, op, Ms[m], N);
                nt_dtypes_parse(&p, hdr.problems[q].dtypes, err, sizeof err);
                int c = normtune_lookup(q, Ms[m], N, can_run, &p);
                printf("%s %lld %lld %s %s\n", hdr.problems[q].op, Ms[m], N,
                       hdr.families[hdr.configs[c].family].name, hdr.configs[c].params);
            }
    }
    return 0;
}
