/* rmsnorm_fwd/ref.c -- float64 reference of RMSNorm forward (see ref.h).
 *
 * What every forward kernel is validated against, so it must be exact
 * enough (double sums of inputs that are exact in double) and fast enough
 * for 65536 x 16384 in a sweep: rows are split over pthreads.  Each row is
 * converted straight into its row of y, reduced, then scaled in place, so
 * a thread needs no buffer of its own. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "kernels/family.h"
#include "kernels/ref.h"
#include "kernels/rmsnorm_fwd/ref.h"

#define MIN_ELEMS_PER_THREAD 65536  /* below this a thread costs more than it saves */

/* One thread's share: rows [r0, r1). */
typedef struct fwd_job {
    int xdt;
    const char *x;                  /* M x N of xdt */
    const double *w;                /* N, already in double */
    int64_t N, r0, r1;
    double eps;
    double *y, *rstd;
} fwd_job;

static void *fwd_worker(void *arg) {
    const fwd_job *j = arg;
    const size_t rowb = (size_t)j->N * (size_t)nt_dtypes[j->xdt].size;
    for (int64_t i = j->r0; i < j->r1; i++) {
        double *yr = j->y + i * j->N;
        nt_to_f64(j->xdt, j->x + (size_t)i * rowb, (size_t)j->N, yr);
        double ss = 0;
        for (int64_t k = 0; k < j->N; k++) ss += yr[k] * yr[k];
        const double r = 1.0 / sqrt(ss / (double)j->N + j->eps);
        for (int64_t k = 0; k < j->N; k++) yr[k] = yr[k] * r * j->w[k];
        if (j->rstd) j->rstd[i] = r;
    }
    return NULL;
}

int nt_ref_rmsnorm_fwd(int xdt, int wdt, const void *x, const void *w, int64_t M, int64_t N,
                       double eps, double *y, double *rstd, int nthreads) {
    if (xdt < 0 || xdt >= NT_NDTYPES || wdt < 0 || wdt >= NT_NDTYPES || M < 0 || N <= 0 ||
        !x || !w || !y)
        return -1;
    if (nthreads < 1) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n > 0 ? (int)n : 1;
    }
    int64_t most = M * N / MIN_ELEMS_PER_THREAD + 1;
    if (most > M) most = M;
    if (nthreads > most) nthreads = most > 0 ? (int)most : 1;
    double *wd = malloc((size_t)N * sizeof *wd);
    fwd_job *jobs = calloc((size_t)nthreads, sizeof *jobs);
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    int *started = calloc((size_t)nthreads, sizeof *started);
    int rc = -1;
    if (!wd || !jobs || !th || !started) goto done;
    nt_to_f64(wdt, w, (size_t)N, wd);
    for (int t = 0; t < nthreads; t++) {
        jobs[t] = (fwd_job){xdt, x, wd, N, M * t / nthreads, M * (t + 1) / nthreads, eps, y, rstd};
        /* a thread that cannot start has its share done below, here */
        if (t > 0 && pthread_create(&th[t], NULL, fwd_worker, &jobs[t]) == 0) started[t] = 1;
    }
    fwd_worker(&jobs[0]);
    for (int t = 1; t < nthreads; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        else
            fwd_worker(&jobs[t]);
    }
    rc = 0;
done:
    free(wd);
    free(jobs);
    free(th);
    free(started);
    return rc;
}
