/* rmsnorm_bwd/plan.c -- what the RMSNorm backward planners share (plan.h). */
#include <stdio.h>

#include "kernels/rmsnorm_bwd/plan.h"
#include "kernels/rmsnorm_bwd/tensors.h"

#define FINAL_COLS 16         /* columns per block of nt_colsum_final */
#define COLSUM_THREADS 256

unsigned nt_bwd_cdiv(int64_t a, int64_t b) { return (unsigned)((a + b - 1) / b); }

int nt_bwd_chunk_elems(const nt_problem *p) { return 16 / nt_dtypes[p->dtype[NT_BWD_SX]].size; }

int nt_bwd_kname(char *buf, size_t len, const char *kernel, const nt_problem *p, const char *rest,
                 char *err, size_t errlen) {
    int n = snprintf(buf, len, "%s<%s, %s, %s, %s>", kernel, nt_dtypes[p->dtype[NT_BWD_SX]].ctype,
                     nt_dtypes[p->dtype[NT_BWD_SW]].ctype, nt_dtypes[p->dtype[NT_BWD_SDW]].ctype,
                     rest);
    if (n < 0 || (size_t)n >= len) {
        nt_why(err, errlen, "name expression of %s too long", kernel);
        return -1;
    }
    return 0;
}

int nt_bwd_kname_params(nt_launch *l, const char *kernel, const nt_problem *pr,
                        const nt_family *f, const nt_params *p, char *err, size_t errlen) {
    char rest[96] = "";
    size_t used = 0;
    for (int i = 0; i < f->nparams && used < sizeof rest; i++)
        used += (size_t)snprintf(rest + used, sizeof rest - used, "%s%lld", i ? ", " : "",
                                 (long long)nt_params_int(p, f->params[i].name, NULL));
    if (used >= sizeof rest) {
        nt_why(err, errlen, "name expression of %s too long", kernel);
        return -1;
    }
    return nt_bwd_kname(l->name, sizeof l->name, kernel, pr, rest, err, errlen);
}

int nt_bwd_covers(const nt_problem *p, int64_t slots, const char *what, char *err,
                  size_t errlen) {
    int64_t E = nt_bwd_chunk_elems(p);
    if (p->N <= slots * E) return 0;
    nt_why(err, errlen, "N=%lld exceeds %s*%lld = %lld (x=%s)", (long long)p->N, what,
             (long long)E, (long long)(slots * E), nt_dtypes[p->dtype[NT_BWD_SX]].name);
    return -1;
}

int nt_bwd_fits_sm(const nt_devinfo *dev, int64_t block, int64_t k, unsigned smem, char *err,
                   size_t errlen) {
    if (smem > (unsigned)dev->smem_per_block_optin) {
        nt_why(err, errlen, "needs %u bytes of shared memory per block, the device allows %d",
                 smem, dev->smem_per_block_optin);
        return -1;
    }
    if (k && (k * block > dev->max_threads_per_sm || k * smem > (unsigned)dev->smem_per_sm)) {
        nt_why(err, errlen, "k=%lld blocks of %lld threads and %u bytes do not fit on one SM",
                 (long long)k, (long long)block, smem);
        return -1;
    }
    return 0;
}

int nt_bwd_fits_regs(int64_t need, const char *what, int64_t value, int64_t block, int64_t extra,
                     int64_t k, char *err, size_t errlen) {
    int64_t have = nt_bwd_reg_limit(block + extra, k);
    if (need <= have) return 0;
    char more[32] = "";
    if (extra) snprintf(more, sizeof more, " (+%lld)", (long long)extra);
    nt_why(err, errlen, "%s=%lld needs about %lld registers a thread, block=%lld%s k=%lld "
             "leaves %lld: it would spill", what, (long long)value, (long long)need,
             (long long)block, more, (long long)k, (long long)have);
    return -1;
}

int nt_bwd_sm90(const nt_devinfo *dev, const char *fam, const char *what, char *err,
                size_t errlen) {
    if (!dev || dev->cc_major >= 9) return 0;
    nt_why(err, errlen, "%s needs %s (compute capability 9.0 or newer), the device has %d.%d",
           fam, what, dev->cc_major, dev->cc_minor);
    return -1;
}

void nt_bwd_final_launch(const nt_problem *p, int where, nt_launch *l) {
    snprintf(l->name, sizeof l->name, "nt_colsum_final<%s, %d>",
             nt_dtypes[p->dtype[NT_BWD_SDW]].ctype, where);
    l->grid = nt_bwd_cdiv(p->N, FINAL_COLS);
    l->grid_y = 1;
    l->block = COLSUM_THREADS;
    l->pdl = 1;
}

void nt_bwd_persistent_chain(const nt_problem *p, const nt_devinfo *dev, int64_t block, int64_t k,
                             int64_t step_rows, nt_plan *pl) {
    pl->nlaunch = 2;
    pl->l[0].grid = 0;          /* the launcher sizes it */
    pl->l[0].grid_y = 1;
    pl->l[0].pdl = 1;           /* every launch of the chain waits first */
    pl->l[0].block = (unsigned)block;
    pl->l[0].blocks_per_sm = (int)k;
    pl->l[0].grid_rows = step_rows > 1 ? (unsigned)step_rows : 0;
    nt_bwd_final_launch(p, 0, &pl->l[1]);
    pl->nparts = 0;             /* the grid's partial rows */
    if (dev) {
        /* at most as many blocks as can be resident (by threads, or k),
         * and one per step of rows */
        int64_t kmax = k ? k : dev->max_threads_per_sm / block;
        int64_t parts = (int64_t)dev->sms * kmax;
        int64_t steps = nt_bwd_cdiv(p->M, step_rows > 1 ? step_rows : 1);
        if (parts > steps) parts = steps;
        pl->workspace = NT_BWD_ALIGN256((size_t)parts * (size_t)p->N * 4);
    }
}

void nt_bwd_cluster_chain(const nt_problem *p, const nt_devinfo *dev, int64_t cluster,
                          int64_t block, int64_t k, nt_plan *pl) {
    pl->nlaunch = 2;
    pl->l[0].grid = 0;          /* the launcher sizes it: whole clusters, at most M */
    pl->l[0].grid_y = 1;
    pl->l[0].pdl = 1;           /* every launch of the chain waits first */
    pl->l[0].block = (unsigned)block;
    pl->l[0].blocks_per_sm = (int)k;
    pl->l[0].cluster = (unsigned)cluster;
    nt_bwd_final_launch(p, 0, &pl->l[1]);
    pl->nparts = 0;             /* one partial row per cluster: grid / cluster */
    if (dev) {
        /* upper bound on the clusters nt_chain_grid launches: k (or what
         * the threads allow) blocks per SM, in whole clusters, at least one,
         * at most M */
        int64_t kmax = k ? k : dev->max_threads_per_sm / block;
        int64_t parts = (int64_t)dev->sms * kmax / cluster;
        if (parts < 1) parts = 1;
        if (parts > p->M) parts = p->M;
        pl->workspace = NT_BWD_ALIGN256((size_t)parts * (size_t)p->N * 4);
    }
}

int64_t nt_bwd_reg_limit(int64_t block, int64_t k) {
    int64_t limit = NT_BWD_REGS_PER_SM / ((k > 0 ? k : 1) * block) / 8 * 8;
    return limit > NT_BWD_REG_MAX ? NT_BWD_REG_MAX : limit;
}
