/* ref.c -- float64 CPU reference of RMSNorm backward, bf16 helpers, seeded
 * fills and error metrics (see ref.h).
 *
 * The backward reference is what every GPU variant is validated against, so
 * it must be both exact enough (double accumulation of bf16 inputs, which
 * are exact in double) and fast enough for M x N = 65536 x 16384 in a sweep:
 * rows are split over pthreads.  dw needs a sum over all rows; each thread
 * owns a fixed block of rows ("slice") and writes its partial dw row, and the
 * partials are added slice by slice at the end.  The slicing depends only on
 * M, never on the thread count, so the bits of dw never depend on nthreads
 * or on scheduling. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/family.h"
#include "kernels/ref.h"

#define REF_SLICES 64         /* fixed row slices for dw partials */

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
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++; /* may carry into e: fine */
    return sign | (uint16_t)h;
}

/* splitmix64: a small, well-mixed, seedable generator. */
static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void nt_fill_uniform(uint16_t *a, size_t n, double lo, double hi, uint64_t seed) {
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        double u = (double)(splitmix(&s) >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
        a[i] = nt_f32_to_bf16((float)(lo + (hi - lo) * u));
    }
}

/* The value of one draw, rounded to dtype and stored as a[i]. */
static void put(int dtype, void *a, size_t i, double v) {
    if (dtype == NT_F32)
        ((float *)a)[i] = (float)v;
    else if (dtype == NT_F16)
        ((uint16_t *)a)[i] = nt_f32_to_f16((float)v);
    else
        ((uint16_t *)a)[i] = nt_f32_to_bf16((float)v);
}

void nt_fill(int dtype, void *a, size_t n, double lo, double hi, uint64_t seed) {
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        double u = (double)(splitmix(&s) >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
        put(dtype, a, i, lo + (hi - lo) * u);
    }
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

void nt_ref_forward(const double *x, const double *w, int64_t M, int64_t N, double eps,
                    double *y) {
    for (int64_t i = 0; i < M; i++) {
        const double *xr = x + i * N;
        double ss = 0;
        for (int64_t j = 0; j < N; j++) ss += xr[j] * xr[j];
        double r = 1.0 / sqrt(ss / (double)N + eps);
        for (int64_t j = 0; j < N; j++) y[i * N + j] = xr[j] * r * w[j];
    }
}

/* Inputs of the backward pass, as double rows or as bf16 rows. */
typedef struct bwd_job {
    const double *x, *w, *dy;         /* double inputs, or NULL */
    const uint16_t *bx, *bw, *bdy;    /* bf16 inputs, or NULL */
    int64_t M, N;
    double eps;
    double *dx;
    double *part;                     /* REF_SLICES x N dw partials */
    int slice0, slice1;               /* this thread's slices [slice0, slice1) */
} bwd_job;

/* Rows of slice s: [lo, hi). */
static void slice_rows(int64_t M, int s, int64_t *lo, int64_t *hi) {
    *lo = M * s / REF_SLICES;
    *hi = M * (s + 1) / REF_SLICES;
}

/* Row i of a double or bf16 matrix into buf[N] as doubles. */
static void load_row(const double *d, const uint16_t *b, int64_t i, int64_t N, double *buf) {
    if (d) {
        memcpy(buf, d + i * N, (size_t)N * sizeof *buf);
        return;
    }
    for (int64_t k = 0; k < N; k++) buf[k] = (double)nt_bf16_to_f32(b[i * N + k]);
}

/* One thread: dx for its rows and one dw partial row per slice.  Returns
 * NULL, or non-NULL when out of memory. */
static void *bwd_worker(void *arg) {
    bwd_job *j = arg;
    int64_t N = j->N;
    double *wv = malloc(3 * (size_t)N * sizeof *wv);
    if (!wv) return (void *)1;
    double *xv = wv + N, *gv = wv + 2 * N;
    load_row(j->w, j->bw, 0, N, wv);
    for (int s = j->slice0; s < j->slice1; s++) {
        int64_t lo, hi;
        double *pw = j->part + (size_t)s * (size_t)N;
        memset(pw, 0, (size_t)N * sizeof *pw);
        slice_rows(j->M, s, &lo, &hi);
        for (int64_t i = lo; i < hi; i++) {
            double ss = 0, dot = 0, *dxr = j->dx + i * N;
            load_row(j->x, j->bx, i, N, xv);
            load_row(j->dy, j->bdy, i, N, gv);
            for (int64_t k = 0; k < N; k++) {
                ss += xv[k] * xv[k];
                dot += gv[k] * wv[k] * xv[k];
            }
            double r = 1.0 / sqrt(ss / (double)N + j->eps);
            double c = r * r * r * (dot / (double)N);
            for (int64_t k = 0; k < N; k++) {
                dxr[k] = r * wv[k] * gv[k] - xv[k] * c;
                pw[k] += gv[k] * xv[k] * r;
            }
        }
    }
    free(wv);
    return NULL;
}

/* Shared driver of both input kinds.  0 or -1. */
static int bwd_run(bwd_job *tmpl, double *dw, int nthreads) {
    int64_t N = tmpl->N;
    if (tmpl->M < 0 || N <= 0) return -1;
    if (nthreads < 1) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n > 0 ? (int)n : 1;
    }
    if (nthreads > REF_SLICES) nthreads = REF_SLICES;
    double *part = malloc((size_t)REF_SLICES * (size_t)N * sizeof *part);
    bwd_job *jobs = calloc((size_t)nthreads, sizeof *jobs);
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    int *started = calloc((size_t)nthreads, sizeof *started);
    int rc = -1;
    if (!part || !jobs || !th || !started) goto done;
    rc = 0;
    for (int t = 0; t < nthreads; t++) {
        jobs[t] = *tmpl;
        jobs[t].part = part;
        jobs[t].slice0 = REF_SLICES * t / nthreads;
        jobs[t].slice1 = REF_SLICES * (t + 1) / nthreads;
        /* a thread that cannot start has its share done below, here */
        if (t > 0 && pthread_create(&th[t], NULL, bwd_worker, &jobs[t]) == 0) started[t] = 1;
    }
    if (bwd_worker(&jobs[0])) rc = -1;
    for (int t = 1; t < nthreads; t++) {
        void *ret = NULL;
        if (started[t])
            pthread_join(th[t], &ret);
        else
            ret = bwd_worker(&jobs[t]);
        if (ret) rc = -1;
    }
    if (rc == 0) {
        for (int64_t k = 0; k < N; k++) dw[k] = 0;
        for (int s = 0; s < REF_SLICES; s++)
            for (int64_t k = 0; k < N; k++) dw[k] += part[(size_t)s * (size_t)N + k];
    }
done:
    free(part);
    free(jobs);
    free(th);
    free(started);
    return rc;
}

int nt_ref_rmsnorm_bwd_f64(const double *x, const double *w, const double *dy, int64_t M,
                           int64_t N, double eps, double *dx, double *dw, int nthreads) {
    bwd_job j;
    memset(&j, 0, sizeof j);
    j.x = x;
    j.w = w;
    j.dy = dy;
    j.M = M;
    j.N = N;
    j.eps = eps;
    j.dx = dx;
    return bwd_run(&j, dw, nthreads);
}

int nt_ref_rmsnorm_bwd(const uint16_t *x, const uint16_t *w, const uint16_t *dy, int64_t M,
                       int64_t N, double eps, double *dx, double *dw, int nthreads) {
    bwd_job j;
    memset(&j, 0, sizeof j);
    j.bx = x;
    j.bw = w;
    j.bdy = dy;
    j.M = M;
    j.N = N;
    j.eps = eps;
    j.dx = dx;
    return bwd_run(&j, dw, nthreads);
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
