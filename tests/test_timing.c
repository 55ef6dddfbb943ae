/* test_timing.c -- the runner's stopping rule (tuner/timing.h) on sample
 * sequences made here.
 *
 * Steady samples (deterministic noise of +-0.5%) stop at once under rel_ci
 * 1% and not under 0.01%; the median, p10 and p90 are the order statistics
 * of the samples; a wide spread keeps sampling; a step in speed (the trace
 * seen on an H200: 23 samples near 700 us, then 663 us) keeps sampling at
 * 80 samples although the median's CI is already narrow, and stops once the
 * second half lies past the step, with the median at the later speed.
 * Racing stops a variant whose CI lies more than 2% above the best. */
#include <math.h>

#include "tests/t.h"
#include "tuner/timing.h"

#define MAXN 256

/* Deterministic noise in [-1, 1): a small LCG. */
static double noise(unsigned *st) {
    *st = *st * 1664525u + 1013904223u;
    return (double)(*st >> 8) / (double)(1u << 23) - 1.0;
}

TEST(steady_samples_stop) {
    double s[MAXN], scratch[MAXN];
    unsigned st = 7;
    nt_sample_stats ss;
    for (int i = 0; i < 20; i++) s[i] = 100.0 * (1.0 + 0.005 * noise(&st));
    CHECK(nt_timing_done(s, 20, 0.01, scratch, &ss) == 1, "20 steady samples, rel_ci 1%%: not done");
    CHECK(nt_timing_done(s, 20, 0.0001, scratch, &ss) == 0, "rel_ci 0.01%% met by +-0.5%% noise");
    CHECK(fabs(ss.median - 100.0) < 0.5, "median %.3f", ss.median);
    CHECK(ss.p10 <= ss.median && ss.median <= ss.p90, "p10 %.3f median %.3f p90 %.3f", ss.p10,
          ss.median, ss.p90);
}

TEST(order_statistics) {
    double s[MAXN], scratch[MAXN];
    nt_sample_stats ss;
    /* 1..11 in a scrambled order: median 6, p10 = 2nd smallest, p90 = 10th */
    static const double v[11] = {7, 3, 11, 1, 9, 5, 2, 10, 4, 8, 6};
    memcpy(s, v, sizeof v);
    nt_timing_done(s, 11, 0.5, scratch, &ss);
    CHECK(ss.median == 6 && ss.p10 == 2 && ss.p90 == 10, "median %g p10 %g p90 %g", ss.median,
          ss.p10, ss.p90);
    CHECK(memcmp(s, v, sizeof v) == 0, "the samples were reordered");
    /* even count: mean of the middle two */
    nt_timing_done(s, 10, 0.5, scratch, &ss);
    CHECK(ss.median == 6.0, "median of 10: %g", ss.median);
}

TEST(wide_spread_keeps_sampling) {
    double s[MAXN], scratch[MAXN];
    unsigned st = 11;
    nt_sample_stats ss;
    for (int i = 0; i < 40; i++) s[i] = 100.0 * (1.0 + 0.2 * noise(&st));
    CHECK(nt_timing_done(s, 40, 0.01, scratch, &ss) == 0, "+-20%% noise done at 40 samples");
    CHECK(ss.ci_half > 0.01 * ss.median, "CI half-width %.3f", ss.ci_half);
}

TEST(step_in_speed_keeps_sampling) {
    double s[MAXN], scratch[MAXN];
    unsigned st = 3;
    nt_sample_stats ss;
    for (int i = 0; i < MAXN; i++) s[i] = (i < 23 ? 700.0 : 663.0) * (1.0 + 0.004 * noise(&st));
    /* at 40 samples: first half mostly 700, second half 663 */
    CHECK(nt_timing_done(s, 40, 0.01, scratch, &ss) == 0, "done across the step (halves %.1f, %.1f)",
          ss.first, ss.second);
    CHECK(ss.first > 690 && ss.second < 670, "halves %.1f, %.1f", ss.first, ss.second);
    /* at 80 (where the H200 run stopped): the median's CI alone is narrow */
    CHECK(nt_timing_done(s, 80, 0.01, scratch, &ss) == 0, "done at 80 across the step");
    CHECK(ss.ci_half <= 0.01 * ss.median, "CI half-width %.2f: the halves rule is not what "
          "keeps sampling", ss.ci_half);
    int n = 40;
    while (n < MAXN && !nt_timing_done(s, n, 0.01, scratch, &ss)) n++;
    CHECK(n < MAXN, "never done");
    /* the first half turns to 663 once the 23 slow samples are its minority */
    CHECK(n >= 90 && n <= 100, "done at %d samples, want 90..100", n);
    CHECK(fabs(ss.median - 663.0) < 663.0 * 0.01, "median %.1f, not the later speed", ss.median);
}

/* Racing: a variant whose median's CI lies wholly more than 2% above the
 * best so far stops; one whose CI reaches within 2% of it, or with no best
 * yet (0), goes on. */
TEST(racing) {
    double s[MAXN], scratch[MAXN];
    unsigned st = 11;
    nt_sample_stats ss;
    for (int i = 0; i < 20; i++) s[i] = 110.0 * (1.0 + 0.005 * noise(&st));
    nt_timing_done(s, 20, 0.01, scratch, &ss);
    CHECK(nt_timing_raced(&ss, 100.0), "10%% slower than the best, CI %.2f: not raced",
          ss.ci_half);
    CHECK(!nt_timing_raced(&ss, 108.5), "within 2%% of the best: raced");
    CHECK(!nt_timing_raced(&ss, 0), "raced with no best");
    for (int i = 0; i < 20; i++) s[i] = 103.0 * (1.0 + 0.05 * noise(&st));   /* a wide CI */
    nt_timing_done(s, 20, 0.01, scratch, &ss);
    CHECK(!nt_timing_raced(&ss, 100.0), "3%% slower with a CI of +-%.2f: raced", ss.ci_half);
}

int main(void) {
    RUN(steady_samples_stop);
    RUN(racing);
    RUN(order_statistics);
    RUN(wide_spread_keeps_sampling);
    RUN(step_in_speed_keeps_sampling);
    T_END();
}
