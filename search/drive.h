/* drive.h -- the sweep loop: problems, ask/tell, evaluator, store.
 *
 * nt_drive runs a loaded sweep (search/sweep.h) problem by problem: it
 * starts the sweep's strategy (search/tune.h) for each problem, asks it for
 * a batch of points (at most the compile look-ahead), tells it at once the
 * stored result of each point the store already holds (that is how an
 * interrupted sweep resumes, with the same choices), hands the others to
 * the evaluator (the GPU runner, the replay evaluator of search/replay.h,
 * or a test's fixture) with compilation prefetched, stores each result and
 * tells the strategy its median, or INFINITY for a failure.  The store is
 * a seam too (nt_store_ops): tuner/sweep.c puts it over db/store.h.
 *
 * The strategy `warm` starts each problem from hints: the points ranked by
 * the results known at other shapes (opts->hist: stored results of the
 * device model, and those this run has measured), nearest shapes weighing
 * most, and from stored results a point that is the best at the problem's
 * shape in other dtype combinations (two results or more) second; with
 * none known it is a cold campaign, each problem starting from
 * those tuned before it in the run.  At the end of each problem's search
 * the points within 2% of its pick are measured again, interleaved (the
 * evaluator's rematch; stored, and told back on a resume), and the fastest
 * there is the pick.  Once every problem has its pick, a
 * cross pass tries at each problem the nearest other problems' picks not
 * measured there (one per problem in a cold campaign, out of its budget;
 * with stored results only what a search left unspent). */
#ifndef NT_SEARCH_DRIVE_H
#define NT_SEARCH_DRIVE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../kernels/nt.h"
#include "../search/sweep.h"
#include "../search/tune.h"

#define NT_DRIVE_BATCH 48     /* points asked at once: the compile look-ahead */
#define NT_REMATCH_SPAN 0.02  /* warm re-measures the points this much slower than
                                 the fastest at their problem, or less */
#define NT_REMATCH_N 3        /* ... the fastest this many of them */
/* search.remeasure = "alone": the points this much slower, the fastest this
 * many: a pick timed back to back can be several percent behind alone
 * (data/alone-h200/: within 6% and 6 of them held the best alone at 16
 * of 16 shapes, within 2% and 3 at 11) */
#define NT_REMATCH_ALONE_SPAN 0.06
#define NT_REMATCH_ALONE_N NT_REMATCH_MAX

/* What the driver stores and finds stored.  lookup: the result stored for
 * point params of family f at problem q: *found (0: none; 1: stored by
 * this run's device; 2: by another device whose results this one reuses,
 * a GPU of the same model), and *out filled (status and median at least).
 * put: store a new result.  Both 0, or -1 with a message. */
typedef struct nt_store_ops {
    void *ctx;
    int (*lookup)(void *ctx, const nt_sweep *sw, int q, int f, const nt_params *p,
                  int *found, nt_result *out, char *err, size_t errlen);
    int (*put)(void *ctx, const nt_sweep *sw, int q, int f, const nt_params *p,
               const nt_result *r, char *err, size_t errlen);
    /* Optional (NULL: not stored): re-measures of the n points (f[i],
     * p[i]) at problem q, each stored already (db/store.h,
     * store_rematch_get and store_rematch_put).  rematch_get: *found 1
     * and us[] when the store holds one of exactly these points. */
    int (*rematch_get)(void *ctx, const nt_sweep *sw, int q, int n, const int *f,
                       const nt_params *p, int *found, double *us, char *err, size_t errlen);
    int (*rematch_put)(void *ctx, const nt_sweep *sw, int q, int n, const int *f,
                       const nt_params *p, const double *us, const int *ns, char *err,
                       size_t errlen);
    /* Optional (NULL: no claims): claim takes the claim of point p of
     * family f at problem q before the driver measures it (db/store.h,
     * store_claim): *got 1, or 0 while another writer of the store holds
     * it; release drops the claim held.  claim 0, or -1 with a message. */
    int (*claim)(void *ctx, const nt_sweep *sw, int q, int f, const nt_params *p, int *got,
                 char *err, size_t errlen);
    void (*release)(void *ctx);
} nt_store_ops;

/* A known result that may start a warm search: a point of the sweep at a
 * shape of one of its dtype combinations. */
typedef struct nt_hist {
    int dt;                   /* dtype combination (sw->dts) */
    int64_t M, N;
    tune_pt p;
    double us;                /* median, INFINITY for a failure */
    int64_t grp;              /* results measured together (a device's):
                                 ratios are taken within a group; 0 = this run */
    double w;                 /* weight of the row (kernel sources that are
                                 not the ones measured now weigh less) */
    int raced;                /* its sampling was stopped (NT_RACED): no ok
                                 result to re-measure */
} nt_hist;

typedef struct nt_run_opts {
    int verbose;              /* a line per result on stderr */
    int progress;             /* a live progress line (stderr is a terminal) */
    int quiet;                /* no lines at all (replay) */
    volatile sig_atomic_t *stop; /* set asynchronously: stop after the current result */
    const char *src_hash;     /* source hash of every family (tests); NULL =
                                 each family's own (nt_family_hash) */
    const nt_hist *hist;      /* warm: known results (may be NULL) */
    size_t nhist;
    int hist_same_shape;      /* warm: hist rows of the problem's own shape
                                 may be hints (0: only other shapes') */
    const unsigned char *shape_stored; /* warm, per problem: 1 when the store
                                 has a result of the model there (any
                                 sources); 0: a new shape, where every family
                                 is tried once.  NULL: every one known */
    uint64_t seed;            /* mixed into the sweep's seed (replay's runs) */
    int sharded;              /* a shard of the script (run --shard): another
                                 run of it is expected (tuner/sweep.c) */
} nt_run_opts;

typedef struct nt_run_stats {
    uint64_t total;           /* variants proposed (reused + measured) */
    uint64_t reused;          /* already in the store */
    uint64_t reused_other;    /* ... of those, stored by another device (lookup's
                                 *found 2: another GPU of the model) */
    uint64_t waited;          /* ... of those, points another writer of the store
                                 measured after this run looked them up (its
                                 claim, nt_store_ops: looked up again under
                                 the claim, waited for while another held it) */
    uint64_t measured;        /* evaluated and stored now */
    uint64_t ok;              /* of those, status ok */
    uint64_t rematched;       /* problems whose closest points were measured
                                 again now, interleaved (warm's last step) */
    int interrupted;          /* stopped by *stop */
    int64_t sweep_id;         /* the store's id of this run (tuner/sweep.c) */
    /* measured now, by family (the script's order, sw->fam) and status */
    uint64_t by_family[NT_SWEEP_MAX_FAMILIES][NT_NSTATUS];
    /* per family, the first line of the first message of a result that is
     * a failure of the kernel (nt_status_is_failure), or "" */
    char first_failure[NT_SWEEP_MAX_FAMILIES][NT_MSG_LEN];
    /* per problem (malloc'd, nt_sweep_nproblems entries, freed by
     * nt_run_stats_free): the pick, its mean median told, and the points
     * proposed; pick fam -1 when nothing succeeded */
    tune_pt *pick;
    double *pick_us;
    uint64_t *spent;
} nt_run_stats;

/* 1 for the statuses that say a kernel is broken (compile_error,
 * launch_error, wrong, nondeterministic); 0 for ok and for the refusals a
 * sweep expects (resources: the device cannot hold the config;
 * unsupported: the family refuses the shape). */
int nt_status_is_failure(int status);

/* Run the sweep (see above).  Returns 0 (also when interrupted:
 * st->interrupted), or -1 with a message (a store error, a where() error,
 * an evaluator that broke).  st is the caller's; free its arrays with
 * nt_run_stats_free. */
int nt_drive(nt_sweep *sw, nt_evaluator *ev, const nt_store_ops *so, const nt_run_opts *o,
             nt_run_stats *st, char *err, size_t errlen);
void nt_run_stats_free(nt_run_stats *st);

/* The point number of params p in family f's space, or -1 when a value is
 * not one of the space's. */
int64_t nt_sweep_point_of(const nt_sweep *sw, int f, const nt_params *p);

/* Seconds on the monotonic clock. */
double nt_now_s(void);

#endif
