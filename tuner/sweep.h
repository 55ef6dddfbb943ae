/* sweep.h -- the sweep driver: script -> search -> evaluator -> store.
 *
 * nt_sweep_run runs the loop of search/drive.h over the results database:
 * a result already stored for the same device model (by this GPU or any
 * other of the model), variant, family source hash, problem and timing
 * settings is told to the search instead of measured (that is how an
 * interrupted sweep resumes, and how a GPU starts from what others of its
 * model measured), each new one is stored in its own transaction under
 * this GPU, and a warm search starts from the model's results of other
 * kernel sources.  The evaluator is the GPU runner, or a fixture in the
 * tests.  It never talks to CUDA. */
#ifndef NT_SWEEP_H
#define NT_SWEEP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "db/history.h"
#include "db/store.h"
#include "kernels/nt.h"
#include "search/drive.h"
#include "search/sweep.h"

/* Run the sweep (st's arrays: nt_run_stats_free).  ev->dev and ev->copy_gbps are recorded with the sweep.
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

/* A stored result as a point of the sweep (nt_hist): 0, or -1 when it is
 * not one (another family, dtype combination or parameter value). */
int nt_hist_of_row(const nt_sweep *sw, const store_hist_row *r, nt_hist *h);

/* 1 when row r was measured on a GPU of the model of d (name, compute
 * capability, SM count, memory clock). */
int nt_same_model(const store_hist_row *r, const nt_device *d);

/* The stored results of the sweep's points on GPUs of model (NULL: any)
 * other than device id skip_device (0: none left out), as hints of a warm
 * search, grouped by device; a result of other kernel sources than src[f]
 * for family f (src NULL: the build's, nt_family_hash) weighs less, and
 * with other_src_only only those are kept (the others are what a run
 * reuses).  *out malloc'd, caller frees.  0, or -1 with a message. */
int nt_stored_hints(store *db, const nt_sweep *sw, const nt_device *model, int64_t skip_device,
                    int other_src_only, const char (*src)[24], nt_hist **out, size_t *n,
                    unsigned char *seen, char *err, size_t errlen);

#endif
