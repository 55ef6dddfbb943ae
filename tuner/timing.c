/* timing.c -- the stopping rule of timing (see timing.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/timing.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of v[0..n), sorting v in place. */
static double median_of(double *v, int n) {
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int nt_timing_done(const double *s, int n, double rel_ci, double *scratch, nt_sample_stats *st) {
    int h = n / 2;
    memcpy(scratch, s, (size_t)n * sizeof s[0]);
    st->first = h > 0 ? median_of(scratch, h) : s[0];
    memcpy(scratch, s + h, (size_t)(n - h) * sizeof s[0]);
    st->second = median_of(scratch, n - h);
    memcpy(scratch, s, (size_t)n * sizeof s[0]);
    st->median = median_of(scratch, n);
    st->p10 = scratch[(int)(0.1 * (n - 1))];
    st->p90 = scratch[(int)(0.9 * (n - 1))];
    int lo = (int)floor(n / 2.0 - 0.98 * sqrt((double)n));
    int hi = (int)ceil(n / 2.0 + 0.98 * sqrt((double)n));
    if (lo < 0) lo = 0;
    if (hi > n - 1) hi = n - 1;
    st->ci_half = (scratch[hi] - scratch[lo]) / 2;
    double lower = st->first < st->second ? st->first : st->second;
    return st->ci_half <= rel_ci * st->median && fabs(st->first - st->second) <= 2 * rel_ci * lower;
}

int nt_timing_raced(const nt_sample_stats *st, double race_us) {
    return race_us > 0 && st->median - st->ci_half > race_us * (1.0 + NT_RACE);
}
