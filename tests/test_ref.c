/* test_ref.c -- the dtype helpers every op's reference and the runner use
 * (kernels/ref.c): bf16 and fp16 conversions (every 16-bit pattern round
 * trips; fp32 -> fp16 rounds as the compiler's _Float16 does, when it has
 * one), seeded fills in every dtype, exact conversion to double, and the
 * relative L2 error.  The ops' references are tested in their folders
 * (kernels/<op>/test_op.c). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/family.h"
#include "kernels/ref.h"
#include "tests/t.h"

static int close_rel(double a, double b, double tol) {
    return fabs(a - b) <= tol * fmax(1.0, fmax(fabs(a), fabs(b)));
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

TEST(f16_round_trip_and_rounding) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = nt_f16_to_f32((uint16_t)h);
        if (isnan(f)) {
            bad += !isnan(nt_f16_to_f32(nt_f32_to_f16(f)));
            continue;
        }
        bad += nt_f32_to_f16(f) != h;
    }
    CHECK(bad == 0, "%d fp16 values do not round-trip", bad);
    CHECK(nt_f16_to_f32(0x3c00) == 1.0f && nt_f16_to_f32(0x0001) == 0x1p-24f &&
              nt_f16_to_f32(0x7bff) == 65504.0f, "1, smallest subnormal, largest");
    CHECK(nt_f32_to_f16(1.0f + 0x1p-11f) == 0x3c00, "tie rounds down to even");
    CHECK(nt_f32_to_f16(1.0f + 3 * 0x1p-11f) == 0x3c02, "tie rounds up to even");
    CHECK(nt_f32_to_f16(65520.0f) == 0x7c00 && nt_f32_to_f16(65519.0f) == 0x7bff, "overflow");
    CHECK(nt_f32_to_f16(0x1p-25f) == 0 && nt_f32_to_f16(0x1.8p-25f) == 1, "subnormal ties");
    CHECK(nt_f32_to_f16(-0.0f) == 0x8000, "-0");
#ifdef __FLT16_MAX__
    /* every 2^20-th float pattern and a dense walk near 1, against _Float16 */
    int diff = 0;
    for (uint64_t i = 0; i < (1ull << 32); i += (i >> 20 == 0x3f8 ? 1 : 4099)) {
        uint32_t u = (uint32_t)i;
        float f;
        memcpy(&f, &u, 4);
        if (isnan(f)) continue;
        _Float16 g = (_Float16)f;
        uint16_t gb;
        memcpy(&gb, &g, 2);
        diff += gb != nt_f32_to_f16(f);
    }
    CHECK(diff == 0, "%d floats round differently from _Float16", diff);
#endif
}

TEST(fill_every_dtype) {
    uint16_t b[500], h[500];
    float f[500];
    double db[500], dh[500], df[500];
    nt_fill(NT_BF16, b, 500, -2, 2, 7);
    nt_fill(NT_F16, h, 500, -2, 2, 7);
    nt_fill(NT_F32, f, 500, -2, 2, 7);
    nt_to_f64(NT_BF16, b, 500, db);
    nt_to_f64(NT_F16, h, 500, dh);
    nt_to_f64(NT_F32, f, 500, df);
    uint16_t u[500];
    nt_fill_uniform(u, 500, -2, 2, 7);
    CHECK(!memcmp(u, b, sizeof u), "bf16 fill differs from nt_fill_uniform");
    int bad = 0;
    for (int i = 0; i < 500; i++) {
        /* the same draw, rounded to each dtype: within its half ulp */
        bad += fabs(db[i] - df[i]) > 0x1p-8 * fabs(df[i]) + 1e-30;
        bad += fabs(dh[i] - df[i]) > 0x1p-11 * fabs(df[i]) + 0x1p-25;
        bad += db[i] != nt_bf16_to_f32(b[i]) || dh[i] != nt_f16_to_f32(h[i]) || df[i] != f[i];
    }
    CHECK(bad == 0, "%d values off", bad);
    CHECK(nt_rel_l2_dt(NT_F16, dh, h, 500) == 0 && nt_rel_l2_dt(NT_F32, df, f, 500) == 0 &&
              nt_rel_l2_dt(NT_BF16, db, b, 500) == 0, "rel_l2_dt of equal values");
    CHECK(nt_rel_l2_dt(NT_F16, df, h, 500) > 0 && nt_rel_l2_dt(NT_F16, df, h, 500) < 1e-3,
          "fp16 rounding error %g", nt_rel_l2_dt(NT_F16, df, h, 500));
}

/* A fill large enough to be cut over threads gives the values of the one
 * sequential walk: each window (across the cuts too) equals a small,
 * single-threaded fill seeded where the walk would be there (splitmix's
 * state after k draws is seed + k * 0x9e3779b97f4a7c15). */
TEST(fill_threads_give_the_sequential_values) {
    size_t n = (3u << 22) + 12345, w = 64;
    uint16_t *big = malloc(n * sizeof *big), win[64];
    float *fb = malloc(n * sizeof *fb), fw[64];
    CHECK(big && fb, "out of memory");
    if (!big || !fb) return;
    nt_fill(NT_F16, big, n, -3, 3, 99);
    nt_fill(NT_F32, fb, n, -3, 3, 99);
    int bad = 0, windows = 0;
    for (int k = 0; k <= 64; k++) {
        size_t at = n / 64 * (size_t)k;
        at = at >= w / 2 ? at - w / 2 : 0;
        if (at + w > n) at = n - w;
        uint64_t seed = 99 + (uint64_t)at * 0x9e3779b97f4a7c15ULL;
        nt_fill(NT_F16, win, w, -3, 3, seed);
        nt_fill(NT_F32, fw, w, -3, 3, seed);
        bad += memcmp(win, big + at, sizeof win) != 0;
        bad += memcmp(fw, fb + at, sizeof fw) != 0;
        windows++;
    }
    uint16_t head[1000];
    nt_fill(NT_F16, head, 1000, -3, 3, 99);
    bad += memcmp(head, big, sizeof head) != 0;
    CHECK(bad == 0, "%d of %d windows differ from the sequential walk", bad, 2 * windows + 1);
    free(big);
    free(fb);
}

/* nt_fill_at draws any window of a fill, in every dtype: the bits nt_fill
 * writes there, whatever the window's start and length. */
TEST(fill_at_gives_the_window) {
    size_t n = 300007;
    static const size_t at[][2] = {{0, 1}, {0, 1000}, {1, 7}, {65535, 3}, {65536, 70000},
                                   {150000, 150007}, {299999, 8}};
    for (int dt = 0; dt < NT_NDTYPES; dt++) {
        size_t es = (size_t)nt_dtypes[dt].size;
        unsigned char *all = malloc(n * es), *win = malloc(n * es);
        CHECK(all && win, "out of memory");
        if (!all || !win) return;
        nt_fill(dt, all, n, -2, 2, 77);
        for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
            memset(win, 0xa5, n * es);
            nt_fill_at(dt, win, at[k][1], at[k][0], -2, 2, 77);
            CHECK(!memcmp(win, all + at[k][0] * es, at[k][1] * es), "%s: window %zu+%zu differs",
                  nt_dtypes[dt].name, at[k][0], at[k][1]);
            CHECK(win[at[k][1] * es] == 0xa5, "%s: window %zu+%zu wrote past its end",
                  nt_dtypes[dt].name, at[k][0], at[k][1]);
        }
        free(all);
        free(win);
    }
}

/* What the runner's check of the device reference rests on (tuner/runner.c,
 * ref_crosscheck): for every op and dtype combination, the host reference
 * of a problem made of some rows alone (drawn with nt_fill_at where the
 * whole problem has them) gives, for every output of M rows, exactly those
 * rows of the whole problem's reference. */
TEST(reference_rows_stand_alone) {
    static const int64_t rows[] = {0, 3, 17, 38};
    const int64_t M = 39, N = 72;
    for (int o = 0; nt_ops[o]; o++) {
        const nt_op *op = nt_ops[o];
        for (int x = 0; x < NT_NDTYPES; x++)
            for (int w = 0; w < NT_NDTYPES; w++) {
                nt_problem p, sub;
                char err[256];
                nt_problem_init(&p, op, M, N);
                p.dtype[0] = x;
                if (op->nslots > 1) p.dtype[1] = w;
                if (nt_problem_check(&p, err, sizeof err)) continue;
                sub = p;
                sub.M = 4;
                void *in[NT_MAX_TENSORS] = {0}, *sin[NT_MAX_TENSORS] = {0};
                double *out[NT_MAX_TENSORS] = {0}, *sout[NT_MAX_TENSORS] = {0};
                for (int i = 0; i < op->ntensors; i++) {
                    const nt_tensor_def *t = &op->tensors[i];
                    int dt = nt_tensor_dtype(&p, i);
                    size_t es = (size_t)nt_dtypes[dt].size, n = (size_t)nt_tensor_elems(&p, i);
                    size_t cols = n / (t->rows == NT_DIM_M ? (size_t)M : 1);
                    size_t sn = (t->rows == NT_DIM_M ? 4 : 1) * cols;
                    if (t->role == NT_OUT) {
                        out[i] = calloc(n, sizeof(double));
                        sout[i] = calloc(sn, sizeof(double));
                        continue;
                    }
                    in[i] = malloc(n * es);
                    sin[i] = malloc(sn * es);
                    nt_fill(dt, in[i], n, t->lo, t->hi, 1000 + (uint64_t)i);
                    for (int j = 0; j < (t->rows == NT_DIM_M ? 4 : 1); j++)
                        nt_fill_at(dt, (char *)sin[i] + (size_t)j * cols * es, cols,
                                   (uint64_t)(t->rows == NT_DIM_M ? rows[j] : 0) * cols, t->lo,
                                   t->hi, 1000 + (uint64_t)i);
                }
                CHECK(op->ref(&p, (const void *const *)in, out, 1e-6, 0) == 0 &&
                          op->ref(&sub, (const void *const *)sin, sout, 1e-6, 0) == 0,
                      "%s: reference failed", op->name);
                int checked = 0;
                for (int i = 0; i < op->ntensors; i++) {
                    const nt_tensor_def *t = &op->tensors[i];
                    if (t->role != NT_OUT || t->rows != NT_DIM_M) continue;
                    size_t cols = (size_t)nt_tensor_elems(&p, i) / (size_t)M;
                    for (int j = 0; j < 4; j++)
                        CHECK(!memcmp(sout[i] + (size_t)j * cols, out[i] + (size_t)rows[j] * cols,
                                      cols * sizeof(double)),
                              "%s x=%s w=%s: row %lld of %s differs alone", op->name,
                              nt_dtypes[x].name, nt_dtypes[w].name, (long long)rows[j], t->name);
                    checked++;
                }
                CHECK(checked > 0, "%s: no output of M rows", op->name);
                for (int i = 0; i < NT_MAX_TENSORS; i++) {
                    free(in[i]);
                    free(sin[i]);
                    free(out[i]);
                    free(sout[i]);
                }
            }
    }
}

int main(void) {
    RUN(bf16_round_trip_and_rounding);
    RUN(f16_round_trip_and_rounding);
    RUN(fill_every_dtype);
    RUN(fill_threads_give_the_sequential_values);
    RUN(fill_at_gives_the_window);
    RUN(reference_rows_stand_alone);
    RUN(fill_uniform_seeded);
    RUN(rel_l2);
    T_END();
}
