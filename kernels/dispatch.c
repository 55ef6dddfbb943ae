/* dispatch.c -- the dispatch core (see dispatch.h): a dispatch header's
 * config -> a plan for one problem whose every launch is one of that
 * config's kernels.  Shared by the production library and the CPU drift
 * test; names no op, family or kernel. */
#include <stdio.h>
#include <string.h>

#include "kernels/dispatch.h"

int nt_dispatch_find(const nt_dispatch *d, const nt_problem *p) {
    char dt[160];
    if (nt_dtypes_canon(p, dt, sizeof dt)) return -1;
    for (int i = 0; i < d->nproblems; i++)
        if (!strcmp(d->problems[i].op, p->op->name) && !strcmp(d->problems[i].dtypes, dt))
            return i;
    return -1;
}

/* The kernel id among config g's kernels whose name is name, or -1. */
static int find_kernel(const nt_dispatch *d, const nt_dispatch_config *g, const char *name) {
    for (int i = 0; i < g->nk; i++) {
        int k = d->config_kernels[g->kfirst + i];
        if (k >= 0 && k < d->nkernels && !strcmp(d->kernel_names[k], name)) return k;
    }
    return -1;
}

int nt_dispatch_try(const nt_dispatch *d, int c, const nt_problem *p, const nt_devinfo *dev,
                    nt_dispatch_choice *out, char *err, size_t errlen) {
    char dt[160], why[256];
    memset(out, 0, sizeof *out);
    out->config = c;
    if (c < 0 || c >= d->nconfigs) {
        snprintf(err, errlen, "config %d: no such config (the header has %d)", c, d->nconfigs);
        return -1;
    }
    const nt_dispatch_config *g = &d->configs[c];
    if (g->family < 0 || g->family >= d->nfamilies || g->kfirst < 0 || g->nk < 0 ||
        g->kfirst + g->nk > d->nconfig_kernels) {
        snprintf(err, errlen, "config %d: family or kernel list out of range", c);
        return -1;
    }
    const char *fname = d->families[g->family].name;
    out->fam = nt_family_find(fname);
    if (!out->fam || out->fam->op != p->op) {
        snprintf(err, errlen, "config %d: family %s is %s", c, fname,
                 out->fam ? "of another op" : "unknown to this build");
        return -1;
    }
    if (nt_dtypes_canon(p, dt, sizeof dt) || strcmp(dt, g->dtypes)) {
        snprintf(err, errlen, "config %d: built for dtypes %s, the problem has %s", c, g->dtypes,
                 dt);
        return -1;
    }
    snprintf(why, sizeof why, "unparsable");
    if (nt_params_parse(g->params, &out->params) ||
        nt_params_validate(out->fam, &out->params, why, sizeof why)) {
        snprintf(err, errlen, "config %d: params '%s' of %s: %s", c, g->params, fname, why);
        return -1;
    }
    if (nt_problem_check(p, why, sizeof why) ||
        out->fam->check(&out->params, p, dev, why, sizeof why) ||
        out->fam->plan(&out->params, p, dev, &out->plan, why, sizeof why)) {
        snprintf(err, errlen, "config %d (%s %s): %s", c, fname, g->params, why);
        return -1;
    }
    if (out->plan.nlaunch < 1 || out->plan.nlaunch > NT_MAX_LAUNCH) {
        snprintf(err, errlen, "config %d (%s %s): plan of %d launches", c, fname, g->params,
                 out->plan.nlaunch);
        return -1;
    }
    if (!nt_plan_precise(&out->plan, p)) {
        snprintf(err, errlen, "config %d (%s %s): less precise than dtypes %s ask", c, fname,
                 g->params, dt);
        return -1;
    }
    for (int i = 0; i < out->plan.nlaunch; i++) {
        out->kid[i] = find_kernel(d, g, out->plan.l[i].name);
        if (out->kid[i] < 0) {
            snprintf(err, errlen, "config %d (%s %s): launch %d, kernel %s, is not one of its "
                     "kernels", c, fname, g->params, i, out->plan.l[i].name);
            return -1;
        }
    }
    return 0;
}

int nt_dispatch_check(const nt_dispatch *d, char *err, size_t errlen) {
    char why[256];
    for (int k = 0; k < d->nconfig_kernels; k++)
        if (d->config_kernels[k] < 0 || d->config_kernels[k] >= d->nkernels) {
            snprintf(err, errlen, "config kernel list entry %d: kernel id %d out of range", k,
                     d->config_kernels[k]);
            return -1;
        }
    for (int k = 0; k < d->nkernels; k++)
        if (!d->kernel_names[k] || !d->kernel_names[k][0]) {
            snprintf(err, errlen, "kernel %d has no name", k);
            return -1;
        }
    for (int f = 0; f < d->nfamilies; f++)
        if (!nt_family_find(d->families[f].name)) {
            snprintf(err, errlen, "family %s is unknown to this build", d->families[f].name);
            return -1;
        }
    for (int c = 0; c < d->nconfigs; c++) {
        const nt_dispatch_config *g = &d->configs[c];
        nt_problem p;
        nt_params pa;
        if (g->family < 0 || g->family >= d->nfamilies || g->kfirst < 0 || g->nk < 1 ||
            g->kfirst + g->nk > d->nconfig_kernels) {
            snprintf(err, errlen, "config %d: family or kernel list out of range", c);
            return -1;
        }
        const nt_family *fam = nt_family_find(d->families[g->family].name);
        nt_problem_init(&p, fam->op, 1, 8);
        if (nt_dtypes_parse(&p, g->dtypes, why, sizeof why) ||
            nt_params_parse(g->params, &pa) ||
            nt_params_validate(fam, &pa, why, sizeof why)) {
            snprintf(err, errlen, "config %d (%s %s %s): %s", c, fam->name, g->dtypes,
                     g->params, why);
            return -1;
        }
    }
    for (int i = 0; i < d->nproblems; i++) {
        const nt_dispatch_problem *q = &d->problems[i];
        const nt_op *op = nt_op_find(q->op);
        nt_problem p;
        if (!op) {
            snprintf(err, errlen, "problem %d: op %s is unknown to this build", i, q->op);
            return -1;
        }
        nt_problem_init(&p, op, 1, 8);
        if (nt_dtypes_parse(&p, q->dtypes, why, sizeof why)) {
            snprintf(err, errlen, "problem %d (%s %s): %s", i, q->op, q->dtypes, why);
            return -1;
        }
        if (q->fallback >= d->nconfigs ||
            (q->fallback >= 0 && strcmp(d->configs[q->fallback].dtypes, q->dtypes))) {
            snprintf(err, errlen, "problem %d (%s %s): fallback %d is not a config of its dtypes",
                     i, q->op, q->dtypes, q->fallback);
            return -1;
        }
        for (int j = 0; j < i; j++)
            if (!strcmp(d->problems[j].op, q->op) && !strcmp(d->problems[j].dtypes, q->dtypes)) {
                snprintf(err, errlen, "problems %d and %d are both %s %s", j, i, q->op, q->dtypes);
                return -1;
            }
    }
    return 0;
}
