/* rmsnorm_bwd/ref.c -- the float64 CPU reference of RMSNorm backward (see
 * ref.h).
 *
 * What every GPU config is validated against, so it must be both exact
 * enough (double accumulation of inputs that are exact in double, whatever
 * their dtype) and fast enough for M x N = 65536 x 16384 in a sweep: rows
 * are split over pthreads.  dw needs a sum over all rows; the rows are cut
 * into REF_SLICES fixed slices, each thread owns whole slices and writes one
 * dw partial row per slice, and the partials are added slice by slice at
 * the end.  The slicing depends only on M, never on the thread count, so the
 * bits of dw never depend on nthreads or on scheduling.  Inputs are read a
 * row at a time, converted to double with nt_to_f64. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/ref.h"
#include "kernels/rmsnorm_bwd/ref.h"
#include "kernels/rmsnorm_bwd/tensors.h"

#define REF_SLICES 64         /* fixed row slices for dw partials */
#define REF_F64 (-1)          /* "dtype" of double inputs */

/* One input matrix: elements of dtype dt (REF_F64: double). */
typedef struct bwd_in {
    const void *p;
    int dt;
} bwd_in;

/* The work of one thread. */
typedef struct bwd_job {
    bwd_in x, w, dy;
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

/* Row i of input in (N elements) into buf[N] as doubles. */
static void load_row(const bwd_in *in, int64_t i, int64_t N, double *buf) {
    if (in->dt == REF_F64) {
        memcpy(buf, (const double *)in->p + i * N, (size_t)N * sizeof *buf);
        return;
    }
    const char *row = (const char *)in->p + (size_t)i * (size_t)N * (size_t)nt_dtypes[in->dt].size;
    nt_to_f64(in->dt, row, (size_t)N, buf);
}

/* One thread: dx for its rows and one dw partial row per slice.  Returns
 * NULL, or non-NULL when out of memory. */
static void *bwd_worker(void *arg) {
    bwd_job *j = arg;
    int64_t N = j->N;
    double *wv = malloc(3 * (size_t)N * sizeof *wv);
    if (!wv) return (void *)1;
    double *xv = wv + N, *gv = wv + 2 * N;
    load_row(&j->w, 0, N, wv);
    for (int s = j->slice0; s < j->slice1; s++) {
        int64_t lo, hi;
        double *pw = j->part + (size_t)s * (size_t)N;
        memset(pw, 0, (size_t)N * sizeof *pw);
        slice_rows(j->M, s, &lo, &hi);
        for (int64_t i = lo; i < hi; i++) {
            double ss = 0, dot = 0, *dxr = j->dx + i * N;
            load_row(&j->x, i, N, xv);
            load_row(&j->dy, i, N, gv);
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

/* Run tmpl's rows over nthreads threads, then sum the slices into dw.
 * 0 or -1. */
static int bwd_run(const bwd_job *tmpl, double *dw, int nthreads) {
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

int nt_rmsnorm_bwd_ref_f64(const double *x, const double *w, const double *dy, int64_t M,
                           int64_t N, double eps, double *dx, double *dw, int nthreads) {
    bwd_job j;
    memset(&j, 0, sizeof j);
    j.x = (bwd_in){x, REF_F64};
    j.w = (bwd_in){w, REF_F64};
    j.dy = (bwd_in){dy, REF_F64};
    j.M = M;
    j.N = N;
    j.eps = eps;
    j.dx = dx;
    return bwd_run(&j, dw, nthreads);
}

int nt_rmsnorm_bwd_ref(const nt_problem *p, const void *const *t, double *const *out, double eps,
                       int nthreads) {
    bwd_job j;
    memset(&j, 0, sizeof j);
    j.x = (bwd_in){t[NT_BWD_X], p->dtype[NT_BWD_SX]};
    j.w = (bwd_in){t[NT_BWD_W], p->dtype[NT_BWD_SW]};
    j.dy = (bwd_in){t[NT_BWD_DY], p->dtype[NT_BWD_SX]};
    j.M = p->M;
    j.N = p->N;
    j.eps = eps;
    j.dx = out[NT_BWD_DX];
    return bwd_run(&j, out[NT_BWD_DW], nthreads);
}
