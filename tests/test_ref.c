/* test_ref.c -- the float64 reference (kernels/ref.c) against finite
 * differences, its thread-count independence, and the bf16 helpers.
 *
 * L(x, w) = sum_ij dy_ij * rmsnorm(x, w)_ij; dL/dx and dL/dw by central
 * differences of nt_ref_forward must match nt_ref_rmsnorm_bwd_f64 element by
 * element.  The bf16 reference must be bitwise the same for 1 and many
 * threads. */
#include <math.h>
#include <stdint.h>

#include "kernels/ref.h"
#include "tests/t.h"

/* Uniform double in [lo, hi) from a tiny LCG (test-local). */
static double urand(uint64_t *s, double lo, double hi) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (double)(*s >> 11) / 9007199254740992.0;
}

/* L = sum dy * forward(x, w). */
static double loss(const double *x, const double *w, const double *dy, int M, int N,
                   double eps, double *y) {
    nt_ref_forward(x, w, M, N, eps, y);
    double l = 0;
    for (int i = 0; i < M * N; i++) l += dy[i] * y[i];
    return l;
}

static int close_rel(double a, double b, double tol) {
    return fabs(a - b) <= tol * fmax(1.0, fmax(fabs(a), fabs(b)));
}

TEST(backward_matches_finite_differences) {
    const double h = 1e-5, eps = 1e-6;
    int bad = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        uint64_t s = seed * 7919;
        int M = 1 + (int)(urand(&s, 0, 5));          /* 1..5 */
        int N = 1 + (int)(urand(&s, 0, 24));         /* 1..24 */
        double x[5 * 24], w[24], dy[5 * 24], y[5 * 24], dx[5 * 24], dw[24];
        for (int i = 0; i < M * N; i++) {
            x[i] = urand(&s, -2, 2);
            dy[i] = urand(&s, -1, 1);
        }
        for (int j = 0; j < N; j++) w[j] = 1 + urand(&s, -0.5, 0.5);
        CHECK(nt_ref_rmsnorm_bwd_f64(x, w, dy, M, N, eps, dx, dw, 1) == 0, "seed %d", (int)seed);
        for (int i = 0; i < M * N; i++) {
            double keep = x[i];
            x[i] = keep + h;
            double lp = loss(x, w, dy, M, N, eps, y);
            x[i] = keep - h;
            double lm = loss(x, w, dy, M, N, eps, y);
            x[i] = keep;
            double fd = (lp - lm) / (2 * h);
            if (!close_rel(dx[i], fd, 1e-6) && bad++ < 5)
                CHECK(0, "seed %d M=%d N=%d dx[%d] = %.12g, finite difference %.12g", (int)seed, M,
                      N, i, dx[i], fd);
        }
        for (int j = 0; j < N; j++) {
            double keep = w[j];
            w[j] = keep + h;
            double lp = loss(x, w, dy, M, N, eps, y);
            w[j] = keep - h;
            double lm = loss(x, w, dy, M, N, eps, y);
            w[j] = keep;
            double fd = (lp - lm) / (2 * h);
            if (!close_rel(dw[j], fd, 1e-6) && bad++ < 5)
                CHECK(0, "seed %d M=%d N=%d dw[%d] = %.12g, finite difference %.12g", (int)seed, M,
                      N, j, dw[j], fd);
        }
    }
    CHECK(bad == 0, "%d elements off", bad);
}

TEST(backward_known_values) {
    /* one row x = (3, 4), w = (1, 2), dy = (1, 0), eps = 0:
     * ms = 12.5, r = 1/sqrt(12.5); dot = mean(dy w x) = 1.5
     * dx0 = r*1*1 - 3 r^3 1.5, dx1 = -4 r^3 1.5, dw = (3r, 0) */
    double x[2] = {3, 4}, w[2] = {1, 2}, dy[2] = {1, 0}, dx[2], dw[2];
    double r = 1 / sqrt(12.5);
    CHECK(nt_ref_rmsnorm_bwd_f64(x, w, dy, 1, 2, 0.0, dx, dw, 1) == 0, "rc");
    CHECK(close_rel(dx[0], r - 4.5 * r * r * r, 1e-14), "dx0 %.17g", dx[0]);
    CHECK(close_rel(dx[1], -6 * r * r * r, 1e-14), "dx1 %.17g", dx[1]);
    CHECK(close_rel(dw[0], 3 * r, 1e-14) && dw[1] == 0, "dw %.17g %.17g", dw[0], dw[1]);
}

TEST(threads_bitwise_equal) {
    const int M = 301, N = 136;
    uint16_t *x = malloc(sizeof *x * M * N), *dy = malloc(sizeof *dy * M * N), w[136];
    double *dx1 = malloc(sizeof(double) * M * N), *dx7 = malloc(sizeof(double) * M * N);
    double dw1[136], dw7[136], dw0[136], *dx0 = malloc(sizeof(double) * M * N);
    nt_fill_uniform(x, (size_t)M * N, -2, 2, 1);
    nt_fill_uniform(dy, (size_t)M * N, -1, 1, 2);
    nt_fill_uniform(w, N, 0.5, 1.5, 3);
    CHECK(nt_ref_rmsnorm_bwd(x, w, dy, M, N, 1e-6, dx1, dw1, 1) == 0, "1 thread");
    CHECK(nt_ref_rmsnorm_bwd(x, w, dy, M, N, 1e-6, dx7, dw7, 7) == 0, "7 threads");
    CHECK(nt_ref_rmsnorm_bwd(x, w, dy, M, N, 1e-6, dx0, dw0, 0) == 0, "default threads");
    CHECK(!memcmp(dx1, dx7, sizeof(double) * M * N), "dx differs between 1 and 7 threads");
    CHECK(!memcmp(dw1, dw7, sizeof dw1), "dw differs between 1 and 7 threads");
    CHECK(!memcmp(dw1, dw0, sizeof dw1), "dw differs between 1 and default threads");
    /* the bf16 entry point is the f64 one on converted inputs */
    double *xd = malloc(sizeof(double) * M * N), *gd = malloc(sizeof(double) * M * N), wd[136];
    for (int i = 0; i < M * N; i++) {
        xd[i] = nt_bf16_to_f32(x[i]);
        gd[i] = nt_bf16_to_f32(dy[i]);
    }
    for (int j = 0; j < N; j++) wd[j] = nt_bf16_to_f32(w[j]);
    CHECK(nt_ref_rmsnorm_bwd_f64(xd, wd, gd, M, N, 1e-6, dx7, dw7, 3) == 0, "f64");
    CHECK(!memcmp(dx1, dx7, sizeof(double) * M * N) && !memcmp(dw1, dw7, sizeof dw1),
          "bf16 and f64 entry points differ");
    /* M smaller than the thread count */
    CHECK(nt_ref_rmsnorm_bwd(x, w, dy, 2, N, 1e-6, dx7, dw7, 16) == 0, "M=2");
    CHECK(nt_ref_rmsnorm_bwd(x, w, dy, 2, N, 1e-6, dx1, dw1, 1) == 0, "M=2");
    CHECK(!memcmp(dw1, dw7, sizeof dw1), "M=2 dw differs");
    free(x), free(dy), free(dx1), free(dx7), free(dx0), free(xd), free(gd);
}

TEST(bf16_round_trip_and_rounding) {
    /* every bf16 that is not NaN survives bf16 -> f32 -> bf16 */
    int bad = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        float f = nt_bf16_to_f32((uint16_t)b);
        if (isnan(f)) {
            bad += !isnan(nt_bf16_to_f32(nt_f32_to_bf16(f)));
            continue;
        }
        bad += nt_f32_to_bf16(f) != b;
    }
    CHECK(bad == 0, "%d bf16 values do not round-trip", bad);
    CHECK(nt_bf16_to_f32(0x3f80) == 1.0f, "0x3f80 is 1.0");
    CHECK(nt_f32_to_bf16(1.0f) == 0x3f80, "1.0");
    CHECK(nt_f32_to_bf16(-2.0f) == 0xc000, "-2.0");
    /* ties: 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even is 1 */
    CHECK(nt_f32_to_bf16(1.0f + 0x1p-8f) == 0x3f80, "tie rounds down to even");
    /* 1 + 3*2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6 (even) */
    CHECK(nt_f32_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3f82, "tie rounds up to even");
    CHECK(nt_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 0x3f81, "above tie rounds up");
    CHECK(nt_f32_to_bf16(nanf("")) != 0 && isnan(nt_bf16_to_f32(nt_f32_to_bf16(nanf("")))), "NaN");
    /* a NaN whose payload lies only in the low 16 bits must stay NaN */
    uint32_t u = 0x7f800001u;
    float snan;
    memcpy(&snan, &u, 4);
    CHECK(isnan(nt_bf16_to_f32(nt_f32_to_bf16(snan))), "low-payload NaN became %g",
          nt_bf16_to_f32(nt_f32_to_bf16(snan)));
    CHECK(nt_f32_to_bf16(INFINITY) == 0x7f80, "inf");
    CHECK(nt_f32_to_bf16(3.4e38f) == 0x7f80, "overflow rounds to inf");
}

TEST(fill_uniform_seeded) {
    uint16_t a[1000], b[1000], c[1000];
    nt_fill_uniform(a, 1000, -2, 2, 42);
    nt_fill_uniform(b, 1000, -2, 2, 42);
    nt_fill_uniform(c, 1000, -2, 2, 43);
    CHECK(!memcmp(a, b, sizeof a), "same seed, different values");
    CHECK(memcmp(a, c, sizeof a), "different seeds, same values");
    double lo = 1e9, hi = -1e9, sum = 0;
    int zeros = 0;
    for (int i = 0; i < 1000; i++) {
        double v = nt_bf16_to_f32(a[i]);
        lo = fmin(lo, v), hi = fmax(hi, v), sum += v;
        zeros += v == 0;
    }
    CHECK(lo >= -2 && hi <= 2, "range [%g, %g]", lo, hi);
    CHECK(lo < -1.9 && hi > 1.9, "range too narrow [%g, %g]", lo, hi);
    CHECK(fabs(sum / 1000) < 0.2, "mean %g", sum / 1000);
    CHECK(zeros < 5, "%d zeros", zeros);
}

TEST(rel_l2) {
    double ref[4] = {1, -2, 3, 4}, a[4] = {1, -2, 3, 4};
    float f[4] = {1, -2, 3, 4};
    uint16_t b[4];
    for (int i = 0; i < 4; i++) b[i] = nt_f32_to_bf16(f[i]);
    CHECK(nt_rel_l2(ref, a, 4) == 0, "equal doubles");
    CHECK(nt_rel_l2_f32(ref, f, 4) == 0, "equal floats");
    CHECK(nt_rel_l2_bf16(ref, b, 4) == 0, "equal bf16");
    a[3] = 5; /* error 1, norm sqrt(30) */
    CHECK(close_rel(nt_rel_l2(ref, a, 4), 1 / sqrt(30.0), 1e-14), "%g", nt_rel_l2(ref, a, 4));
    f[0] = nanf("");
    CHECK(isinf(nt_rel_l2_f32(ref, f, 4)), "NaN not flagged");
    f[0] = INFINITY;
    CHECK(isinf(nt_rel_l2_f32(ref, f, 4)), "inf not flagged");
    b[2] = 0x7fc0; /* bf16 NaN */
    CHECK(isinf(nt_rel_l2_bf16(ref, b, 4)), "bf16 NaN not flagged");
    double z[2] = {0, 0}, e[2] = {3, 4};
    CHECK(nt_rel_l2(z, e, 2) == 5, "zero reference gives the absolute error");
}

int main(void) {
    RUN(backward_matches_finite_differences);
    RUN(backward_known_values);
    RUN(threads_bitwise_equal);
    RUN(bf16_round_trip_and_rounding);
    RUN(fill_uniform_seeded);
    RUN(rel_l2);
    T_END();
}
