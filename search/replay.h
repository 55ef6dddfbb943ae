/* replay.h -- a simulated device behind the evaluator seam.
 *
 * A replay holds, for points of a sweep, the raw samples one device stored
 * (db/history.h reads them; tuner/cmd_replay.c builds the replay).  Its
 * evaluator answers a measurement with the median of a seeded draw (with
 * replacement) of as many samples as were stored, so repeated measurements
 * of a point differ as real ones do; a point with nothing stored answers
 * `unsupported`.  Plain C. */
#ifndef NT_SEARCH_REPLAY_H
#define NT_SEARCH_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include "../kernels/nt.h"
#include "../search/drive.h"
#include "../search/sweep.h"

typedef struct nt_replay nt_replay;

/* An empty replay of sweep sw (which must outlive it); NULL on no memory. */
nt_replay *nt_replay_new(const nt_sweep *sw);
/* Add what the device stored for point h (h->us: its stored median, or
 * INFINITY for a failure) with its samples (copied).  0 or -1 (memory). */
int nt_replay_add(nt_replay *r, const nt_hist *h, int status, const double *us, int n);
/* Sort what was added; call once before measuring. */
void nt_replay_seal(nt_replay *r);
/* The stored median of point p at problem q (INFINITY when it failed or
 * is not stored), and the best of problem q over every stored point. */
double nt_replay_stored(const nt_replay *r, int q, tune_pt p);
double nt_replay_best(const nt_replay *r, int q);
/* The same, with the point that has it in *p (fam -1 when none; the first
 * stored of the fastest, in point order, on a tie). */
double nt_replay_best_at(const nt_replay *r, int q, tune_pt *p);

/* The stored results (points) of problem q: one per point once the
 * caller has kept one result per point. */
uint64_t nt_replay_count(const nt_replay *r, int q);
/* An evaluator answering from r; seed picks the draws. */
void nt_replay_evaluator(nt_replay *r, uint64_t seed, nt_evaluator *ev);
void nt_replay_free(nt_replay *r);

#endif
