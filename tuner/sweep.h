/* sweep.h -- the sweep driver: script -> search -> evaluator -> store.
 *
 * nt_sweep_run walks the variants of a loaded script (search/enumerate.h),
 * skips those the database already holds for the same device, family source
 * hash and timing settings (that is how an interrupted sweep resumes), hands the
 * rest to an evaluator -- the GPU runner, or a fixture in the tests -- and
 * stores each result in its own transaction.  It never talks to CUDA. */
#ifndef NT_SWEEP_H
#define NT_SWEEP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "db/store.h"
#include "lua/ntlua.h"
#include "kernels/nt.h"

typedef struct nt_run_opts {
    int verbose;              /* a line per result on stderr */
    int progress;             /* a live progress line (stderr is a terminal) */
    volatile sig_atomic_t *stop; /* set asynchronously: stop after the current result */
    const char *src_hash;     /* source hash of every family (tests); NULL =
                                 each family's own (nt_family_hash) */
} nt_run_opts;

typedef struct nt_run_stats {
    uint64_t total;           /* variants the script asks for */
    uint64_t reused;          /* already in the database */
    uint64_t measured;        /* evaluated and stored now */
    uint64_t ok;              /* of those, status ok */
    int interrupted;          /* stopped by *stop */
    int64_t sweep_id;
    /* measured now, by family (the script's order, sw->fam) and status */
    uint64_t by_family[NT_SWEEP_MAX_FAMILIES][NT_NSTATUS];
    /* per family, the first line of the first message of a result that is
     * a failure of the kernel (nt_status_is_failure), or "" */
    char first_failure[NT_SWEEP_MAX_FAMILIES][NT_MSG_LEN];
} nt_run_stats;

/* 1 for the statuses that say a kernel is broken (compile_error,
 * launch_error, wrong, nondeterministic); 0 for ok and for the refusals a
 * sweep expects (resources: the device cannot hold the config;
 * unsupported: the family refuses the shape). */
int nt_status_is_failure(int status);

/* Run the sweep.  ev->dev and ev->copy_gbps are recorded with the sweep.
 * Returns 0 (also when interrupted: st->interrupted), or -1 with a message
 * (a database error, a where() error, an evaluator that broke). */
int nt_sweep_run(nt_sweep *sw, store *db, nt_evaluator *ev, const nt_run_opts *o,
                 nt_run_stats *st, char *err, size_t errlen);

/* What a run measured, family by family, onto out: a line per family with
 * results measured now ("  OP.FAMILY: 1420 ok, 1458 compile_error"),
 * and for a family with failures a warning naming their count and the first
 * message, so that a family that fails throughout (a source that does not
 * compile) is not lost in a total. */
void nt_sweep_summary(FILE *out, const nt_sweep *sw, const nt_run_stats *st);

/* Seconds on the monotonic clock (the driver's progress and `run`'s total). */
double nt_now_s(void);

#endif
