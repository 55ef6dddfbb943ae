/* ref.c -- the dtype helpers of the float64 references (see ref.h): bf16
 * and fp16 conversions, seeded fills in every dtype, exact conversion to
 * double, and error metrics.  The references themselves are the ops'
 * (kernels/<op>/ref.c). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/family.h"
#include "kernels/fill.h"
#include "kernels/ref.h"


float nt_bf16_to_f32(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t nt_f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu))
        return (uint16_t)((u >> 16) | 0x0040u); /* NaN: keep sign, force quiet */
    uint32_t lsb = (u >> 16) & 1u;
    u += 0x7fffu + lsb;                         /* round to nearest, ties to even */
    return (uint16_t)(u >> 16);
}

float nt_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
    if (e == 0x1f) {
        u = sign | 0x7f800000u | (m << 13);             /* inf, NaN */
    } else if (e) {
        u = sign | ((e + 112) << 23) | (m << 13);       /* normal: bias 15 -> 127 */
    } else if (m) {                                     /* subnormal: normalize */
        int sh = 0;
        while (!(m & 0x400)) {
            m <<= 1;
            sh++;
        }
        u = sign | ((uint32_t)(113 - sh) << 23) | ((m & 0x3ff) << 13);
    } else {
        u = sign;
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t nt_f32_to_f16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) return sign | (a > 0x7f800000u ? 0x7e00 : 0x7c00);
    if (a >= 0x477ff000u) return sign | 0x7c00;          /* rounds to >= 65520: inf */
    if (a < 0x38800000u) {                               /* below 2^-14: subnormal */
        /* value = a's float; subnormal unit 2^-24: round(value * 2^24) */
        float v;
        memcpy(&v, &a, 4);
        double q = (double)v * 16777216.0;
        double fl = (double)(uint32_t)q, rem = q - fl;
        uint32_t r = (uint32_t)fl;
        if (rem > 0.5 || (rem == 0.5 && (r & 1))) r++;
        return sign | (uint16_t)r;
    }
    uint32_t e = (a >> 23) - 112, m = a & 0x7fffff;      /* rebias 127 -> 15 */
    uint32_t h = (e << 10) | (m >> 13), rest = m & 0x1fff;
    /* round to nearest, ties to even, without a branch (the rounding bit
     * of random values is a coin toss); a carry into e is fine */
    h += (uint32_t)(rest > 0x1000) | ((uint32_t)(rest == 0x1000) & h);
    return sign | (uint16_t)h;
}

void nt_fill_uniform(uint16_t *a, size_t n, double lo, double hi, uint64_t seed) {
    nt_fill(NT_BF16, a, n, lo, hi, seed);
}

/* The value of one draw, rounded to dtype and stored as a[i]. */
static void put(int dtype, void *a, size_t i, float v) {
    if (dtype == NT_F32)
        ((float *)a)[i] = v;
    else if (dtype == NT_F16)
        ((uint16_t *)a)[i] = nt_f32_to_f16(v);
    else
        ((uint16_t *)a)[i] = nt_f32_to_bf16(v);
}

/* Elements [i0, i1) of a fill, stored at a[i0 .. i1), drawn as elements
 * start + i of the seeded stream (kernels/fill.h): each is a function of
 * its index alone, so the values never depend on how the range is cut. */
typedef struct fill_job {
    int dtype;
    void *a;
    size_t i0, i1;
    double lo, hi;
    uint64_t seed;
    uint64_t start;
} fill_job;

static void *fill_range(void *arg) {
    const fill_job *j = arg;
    for (size_t i = j->i0; i < j->i1; i++)
        put(j->dtype, j->a, i, nt_fill_value(j->seed, j->start + i, j->lo, j->hi));
    return NULL;
}

#define FILL_THREADS 64       /* at most; one per online CPU */
#define FILL_PER_THREAD (1u << 16) /* elements a thread is worth starting for */

/* Run fn over [0, n) cut into ranges of at least `per` units, one thread
 * per range and at most one per online CPU: job's i0 and i1 set per
 * range, the rest copied.  A thread that cannot start leaves its range
 * to this one. */
static void split_run(void *(*fn)(void *), const fill_job *job, size_t n, size_t per) {
    fill_job j[FILL_THREADS];
    pthread_t th[FILL_THREADS];
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nt = n / per + 1;
    if (cpus > 0 && nt > (size_t)cpus) nt = (size_t)cpus;
    if (nt > FILL_THREADS) nt = FILL_THREADS;
    size_t started = 0;
    for (size_t t = 0; t < nt; t++) {
        j[t] = *job;
        j[t].i0 = n * t / nt;
        j[t].i1 = n * (t + 1) / nt;
        if (t == 0) continue;
        if (pthread_create(&th[t], NULL, fn, &j[t])) break;  /* the rest: here */
        started = t;
    }
    fn(&j[0]);
    for (size_t t = started + 1; t < nt; t++) fn(&j[t]);
    for (size_t t = 1; t <= started; t++) pthread_join(th[t], NULL);
}

void nt_fill(int dtype, void *a, size_t n, double lo, double hi, uint64_t seed) {
    nt_fill_at(dtype, a, n, 0, lo, hi, seed);
}

void nt_fill_at(int dtype, void *a, size_t n, uint64_t start, double lo, double hi,
                uint64_t seed) {
    fill_job j = {dtype, a, 0, 0, lo, hi, seed, start};
    split_run(fill_range, &j, n, FILL_PER_THREAD);
}

void nt_to_f64(int dtype, const void *src, size_t n, double *dst) {
    const uint16_t *h = src;
    const float *f = src;
    if (dtype == NT_F32)
        for (size_t i = 0; i < n; i++) dst[i] = f[i];
    else if (dtype == NT_F16)
        for (size_t i = 0; i < n; i++) dst[i] = nt_f16_to_f32(h[i]);
    else
        for (size_t i = 0; i < n; i++) dst[i] = nt_bf16_to_f32(h[i]);
}

/* ||a - ref|| / ||ref|| with a read through get(); +inf on a non-finite a. */
static double rel_l2(const double *ref, const void *a, size_t n,
                     double (*get)(const void *, size_t)) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double v = get(a, i);
        if (!isfinite(v)) return INFINITY;
        double d = v - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static double get_bf16(const void *a, size_t i) { return nt_bf16_to_f32(((const uint16_t *)a)[i]); }
static double get_f32(const void *a, size_t i) { return ((const float *)a)[i]; }
static double get_f64(const void *a, size_t i) { return ((const double *)a)[i]; }

static double get_f16(const void *a, size_t i) { return nt_f16_to_f32(((const uint16_t *)a)[i]); }

double nt_rel_l2_dt(int dtype, const double *ref, const void *a, size_t n) {
    return rel_l2(ref, a, n, dtype == NT_F32 ? get_f32 : dtype == NT_F16 ? get_f16 : get_bf16);
}

double nt_rel_l2_bf16(const double *ref, const uint16_t *a, size_t n) {
    return rel_l2(ref, a, n, get_bf16);
}

double nt_rel_l2_f32(const double *ref, const float *a, size_t n) {
    return rel_l2(ref, a, n, get_f32);
}

double nt_rel_l2(const double *ref, const double *a, size_t n) {
    return rel_l2(ref, a, n, get_f64);
}
