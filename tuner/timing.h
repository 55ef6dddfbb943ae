/* timing.h -- when a variant has been timed enough (the runner's stopping
 * rule, kept apart from CUDA so that CI can test it).
 *
 * A variant is done when, over its n samples so far,
 *   - the 95% confidence interval of the median (order statistics: ranks
 *     n/2 -+ 0.98 sqrt(n)) has a half-width within rel_ci of the median, and
 *   - the medians of the first and the second half of the samples agree
 *     within 2 rel_ci: the GPU did not change speed while it was timed.
 * Seen on an H200: a 690 us chain that ran at 700 us for 23 samples, then
 * at 663 us for the rest.  Sampling on moves the second half past such a
 * step, so the median settles on the later speed (or max_samples ends it). */
#ifndef NT_TIMING_H
#define NT_TIMING_H

#include "kernels/nt.h"

typedef struct nt_sample_stats {
    double median, p10, p90;  /* of all n samples */
    double ci_half;           /* half-width of the median's 95% CI */
    double first, second;     /* medians of samples [0, n/2) and [n/2, n) */
} nt_sample_stats;

/* Statistics of s[0..n) (n >= 1); scratch holds n doubles.  Returns 1 when
 * sampling may stop under rel_ci, else 0. */
int nt_timing_done(const double *s, int n, double rel_ci, double *scratch, nt_sample_stats *st);

/* Racing: 1 when the lower end of the median's 95% CI is more than NT_RACE
 * above race_us (race_us > 0): the variant cannot be the best. */
int nt_timing_raced(const nt_sample_stats *st, double race_us);

#endif
