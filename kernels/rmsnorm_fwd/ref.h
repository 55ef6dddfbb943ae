/* rmsnorm_fwd/ref.h -- the float64 CPU reference of RMSNorm forward, on
 * inputs of any dtype (the op's nt_op.ref uses it; the tests call it).
 *
 * Plain C, no CUDA.  Every external symbol starts nt_. */
#ifndef NT_RMSNORM_FWD_REF_H
#define NT_RMSNORM_FWD_REF_H

#include <stdint.h>

/* RMSNorm forward in double: for each row i of x (M x N elements of dtype
 * xdt, row-major) r_i = 1 / sqrt(mean_j x_ij^2 + eps), y_ij = x_ij * r_i * w_j
 * (w: N elements of dtype wdt), rstd_i = r_i.  The inputs are converted
 * exactly to double.  y (M x N) and rstd (M, or NULL: not computed) are the
 * caller's.  Rows are split over nthreads pthreads (<= 0: the online CPUs;
 * fewer for small problems); every row is computed the same way whatever
 * thread does it, so the result does not depend on nthreads.  Returns 0, or
 * -1 for a bad argument or when memory cannot be had. */
int nt_ref_rmsnorm_fwd(int xdt, int wdt, const void *x, const void *w, int64_t M, int64_t N,
                       double eps, double *y, double *rstd, int nthreads);

#endif
