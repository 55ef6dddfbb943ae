/* cmd_compile.c -- `normtune compile`: every variant a sweep script names,
 * compiled with NVRTC for one architecture, with no GPU.
 *
 *   normtune compile SCRIPT --arch ARCH [--jobs N] [--no-cache]
 *
 * Walks the script (search/enumerate.h), groups the variants whose plans name
 * the same kernels from the same sources into one compile unit, runs the units on the compiler
 * pool with the disk cache (tuner/compile.h), and prints one line per
 * variant and a summary.  CI runs it to prove every variant builds. */
#include <getopt.h>          /* optind */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/nt.h"
#include "lua/ntlua.h"
#include "tuner/cli.h"
#include "tuner/compile.h"
#include "search/enumerate.h"


/* A compile unit: one (family, name expressions) -- the kernels of one
 * variant, shared by every variant and shape that plans the same names. */
typedef struct cunit {
    const nt_family *fam;
    nt_plan plan;             /* a plan that names these kernels */
    char exprs[NT_MAX_LAUNCH * 130]; /* "name;name;..." */
    long ticket;
    int taken;                /* result read back */
    int rc;
    nt_cubin res;             /* resources only (data freed) */
    char err[NT_MSG_LEN];
} cunit;

/* One printed line: a (family, dtypes, params) variant and its unit. */
typedef struct cvariant {
    int fam;                  /* index into the sweep's families */
    char dtypes[128];         /* canonical dtypes of the problem */
    char params[256];         /* canonical params */
    int unit;                 /* index into the units */
    int first;                /* 1: the first variant of its unit */
} cvariant;

typedef struct cctx {
    cunit *u;
    int nu, capu;
    cvariant *v;
    int nv, capv;
} cctx;

static void exprs_of(const nt_plan *pl, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < pl->nlaunch && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ";" : "", pl->l[i].name);
}

/* 1 when families a and b are built from the same sources. */
static int same_sources(const nt_family *a, const nt_family *b) {
    int i = 0;
    for (; a->sources[i] && b->sources[i]; i++)
        if (strcmp(a->sources[i], b->sources[i])) return 0;
    return !a->sources[i] && !b->sources[i];
}

/* Add (family f, dtypes, params text, plan) to the lists unless already
 * there.  Returns 0, or -1 when out of memory. */
static int add_variant(cctx *c, int f, const nt_family *fam, const char *dtypes,
                       const char *params, const nt_plan *pl) {
    char ex[sizeof c->u[0].exprs];
    exprs_of(pl, ex, sizeof ex);
    int unit = -1;
    for (int i = 0; i < c->nu; i++)
        if (same_sources(c->u[i].fam, fam) && !strcmp(c->u[i].exprs, ex)) {
            unit = i;
            break;
        }
    for (int i = 0; i < c->nv && unit >= 0; i++)
        if (c->v[i].fam == f && c->v[i].unit == unit && !strcmp(c->v[i].params, params) &&
            !strcmp(c->v[i].dtypes, dtypes))
            return 0;
    if (unit < 0) {
        if (c->nu == c->capu) {
            int cap = c->capu ? 2 * c->capu : 64;
            cunit *q = realloc(c->u, (size_t)cap * sizeof *q);
            if (!q) return -1;
            c->u = q;
            c->capu = cap;
        }
        unit = c->nu++;
        memset(&c->u[unit], 0, sizeof c->u[unit]);
        c->u[unit].fam = fam;
        c->u[unit].plan = *pl;
        c->u[unit].ticket = -1;
        snprintf(c->u[unit].exprs, sizeof c->u[unit].exprs, "%s", ex);
    }
    if (c->nv == c->capv) {
        int cap = c->capv ? 2 * c->capv : 64;
        cvariant *q = realloc(c->v, (size_t)cap * sizeof *q);
        if (!q) return -1;
        c->v = q;
        c->capv = cap;
    }
    cvariant *v = &c->v[c->nv++];
    v->fam = f;
    snprintf(v->params, sizeof v->params, "%s", params);
    snprintf(v->dtypes, sizeof v->dtypes, "%s", dtypes);
    v->unit = unit;
    v->first = 1;
    for (int i = 0; i < c->nv - 1; i++) v->first &= c->v[i].unit != unit;
    return 0;
}

/* nt_enumerate callback: plan the point for its problem and add it.
 * Points the family refuses for the problem (check/plan) are skipped: they
 * are not compiled because they would never run. */
static int on_point(void *ctx, const nt_sweep *sw, int prob, int f, const int *idx,
                    const nt_params *p, char *err, size_t errlen) {
    cctx *c = ctx;
    const nt_family *fam = sw->fam[f].fam;
    nt_problem s;
    char canon[256], why[256], dt[128];
    nt_plan pl;
    (void)idx;
    nt_sweep_problem(sw, prob, &s);
    if (nt_params_canon(fam, p, canon, sizeof canon) || nt_dtypes_canon(&s, dt, sizeof dt)) {
        snprintf(err, errlen, "%s: parameters too long", fam->name);
        return -1;
    }
    if (fam->check(p, &s, NULL, why, sizeof why) || fam->plan(p, &s, NULL, &pl, why, sizeof why))
        return 0;
    if (add_variant(c, f, fam, dt, canon, &pl)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}

static void compile_usage(FILE *f) {
    fprintf(f,
            "usage: normtune compile SCRIPT --arch ARCH [--jobs N] [--no-cache]\n\n"
            "Compile every kernel variant a sweep script visits with NVRTC, for ARCH\n"
            "(e.g. sm_90a), without a GPU.  One line per (family, params): status,\n"
            "registers, spill store bytes, static shared memory, cache hit or miss,\n"
            "milliseconds; then a summary.  Exit 1 if any variant fails to compile.\n\n"
            "  -a, --arch ARCH   target architecture (required), e.g. sm_90a\n"
            "  -j, --jobs N      compiler threads (default: online CPUs)\n"
            "      --no-cache    neither read nor write the cubin cache\n"
            "  -h, --help        this text\n\n"
            "The cache lives in $NORMTUNE_CACHE, else $XDG_CACHE_HOME/normtune,\n"
            "else ~/.cache/normtune.\n");
}

/* Is arch a name NVRTC can make a cubin for ("sm_" + digits + optional a/f)? */
static int arch_ok(const char *a) {
    if (strncmp(a, "sm_", 3) || !(a[3] >= '0' && a[3] <= '9')) return 0;
    const char *p = a + 3;
    while (*p >= '0' && *p <= '9') p++;
    if (*p == 'a' || *p == 'f') p++;
    return *p == 0 && strlen(a) < 16;
}

int cmd_compile(int argc, char **argv) {
    const char *arch = NULL;
    long long jobs = 0;
    int no_cache = 0, use_cache, rc;
    char err[1024], dir[1024];
    const nt_opt opts[] = {
        {"arch", 'a', NT_OPT_STR, &arch, NULL},
        {"jobs", 'j', NT_OPT_POS, &jobs, NULL},
        {"no-cache", 0, NT_OPT_FLAG, &no_cache, NULL},
    };
    if ((rc = nt_parse_opts("compile", argc, argv, opts, NT_NOPTS(opts), compile_usage)) >= 0) return rc;
    rc = NT_EXIT_FAIL;
    use_cache = !no_cache;
    if (optind != argc - 1) {
        nt_errorf("compile", optind >= argc ? "missing SCRIPT (see --help)"
                                            : "expected one SCRIPT, got %d arguments", argc - optind);
        return NT_EXIT_USAGE;
    }
    if (!arch) {
        nt_errorf("compile", "--arch is required (e.g. --arch sm_90a)");
        return NT_EXIT_USAGE;
    }
    if (!arch_ok(arch)) {
        nt_errorf("compile", "--arch must look like sm_90a or sm_80, got '%s'", arch);
        return NT_EXIT_USAGE;
    }
    if (jobs > 1024) jobs = 1024;
    if (use_cache && nt_cache_dir(dir, sizeof dir, err, sizeof err)) {
        nt_errorf("compile", "%s (use --no-cache to compile without it)", err);
        return NT_EXIT_FAIL;
    }

    nt_sweep sw;
    cctx cx;
    nt_pool *pool = NULL;
    memset(&cx, 0, sizeof cx);
    if (ntl_load(argv[optind], &sw, err, sizeof err)) {
        nt_errorf("compile", "%s", err);
        return NT_EXIT_FAIL;
    }
    double t0 = nt_now_ms();
    if (nt_enumerate(&sw, NT_ENUM_EXHAUSTIVE, on_point, &cx, NULL, err, sizeof err)) {
        nt_errorf("compile", "%s", err);
        goto done;
    }
    if (!(pool = nt_pool_start((int)jobs, 0, err, sizeof err))) {
        nt_errorf("compile", "%s", err);
        goto done;
    }
    fprintf(stderr, "normtune compile: %d variants, %d distinct kernel sets, %s, %d threads, cache %s\n",
            cx.nv, cx.nu, arch, nt_pool_threads(pool), use_cache ? dir : "off");
    for (int i = 0; i < cx.nu; i++) {
        nt_job job;
        memset(&job, 0, sizeof job);
        job.fam = cx.u[i].fam;
        job.plan = cx.u[i].plan;
        snprintf(job.arch, sizeof job.arch, "%s", arch);
        job.use_cache = use_cache;
        if ((cx.u[i].ticket = nt_pool_submit(pool, &job)) < 0) {
            nt_errorf("compile", "cannot queue a compile job");
            goto done;
        }
    }
    int nok = 0, nfail = 0, nhit = 0;
    printf("%-24s %-20s %-36s %-13s %4s %5s %6s %-5s %7s  %s\n", "family", "dtypes", "params",
           "status", "regs", "spill", "smem", "cache", "ms", "kernel");
    for (int i = 0; i < cx.nv; i++) {
        cvariant *v = &cx.v[i];
        cunit *u = &cx.u[v->unit];
        if (!u->taken) {
            u->rc = nt_pool_wait(pool, u->ticket, &u->res, u->err, sizeof u->err);
            free(u->res.data);
            u->res.data = NULL;
            u->taken = 1;
            if (u->res.hit) nhit++;
        }
        const char *cache = !v->first ? "same" : u->res.hit ? "hit" : "miss";
        printf("%-24s %-20s %-36s %-13s %4d %5d %6d %-5s %7.1f  %s\n", sw.fam[v->fam].fam->name,
               v->dtypes, v->params, nt_status_name(u->rc ? NT_COMPILE_ERROR : NT_OK), u->res.max_regs,
               u->res.max_spill, u->res.max_smem, cache, v->first ? u->res.ms : 0.0,
               u->plan.l[0].name);
        fflush(stdout);
        if (u->rc) {
            nfail++;
            if (v->first)
                fprintf(stderr, "normtune compile: %s %s %s: %s\n", sw.fam[v->fam].fam->name,
                        v->dtypes, v->params, u->err);
        } else {
            nok++;
        }
    }
    printf("variants %d, ok %d, failed %d, compiled kernel sets %d, cache hits %d, wall %.2f s\n",
           cx.nv, nok, nfail, cx.nu, nhit, (nt_now_ms() - t0) / 1e3);
    rc = nfail ? NT_EXIT_FAIL : NT_EXIT_OK;
done:
    nt_pool_stop(pool, 0);
    free(cx.u);
    free(cx.v);
    ntl_free(&sw);
    return rc;
}
