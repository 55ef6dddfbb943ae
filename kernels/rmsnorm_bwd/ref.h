/* rmsnorm_bwd/ref.h -- the float64 CPU reference of RMSNorm backward.
 *
 * Every GPU config of the op is checked against nt_rmsnorm_bwd_ref (the
 * op's nt_op.ref): it reads the inputs in their dtypes, converts them
 * exactly to double and computes dx and dw in double precision.  The
 * double-input entry point serves the finite-difference test.  Plain C (no
 * CUDA).  Every external symbol starts nt_. */
#ifndef NT_RMSNORM_BWD_REF_H
#define NT_RMSNORM_BWD_REF_H

#include <stdint.h>

#include "kernels/family.h"

/* Backward RMSNorm in double on double inputs (row-major, w and dw of N):
 *   dx_ij = r_i w_j dy_ij - x_ij r_i^3 mean_k(dy_ik w_k x_ik)
 *   dw_j  = sum_i dy_ij x_ij r_i,    r_i = 1 / sqrt(mean_k x_ik^2 + eps).
 * Rows are split over nthreads pthreads (<= 0: the online CPUs); dw is
 * summed from partials of fixed row slices in a fixed order, so the bits
 * never depend on nthreads or on timing.  The caller owns every buffer.
 * Returns 0, or -1 when memory or threads cannot be had (or M < 0, N < 1). */
int nt_rmsnorm_bwd_ref_f64(const double *x, const double *w, const double *dy, int64_t M,
                           int64_t N, double eps, double *dx, double *dw, int nthreads);

/* The op's reference (nt_op.ref of nt_op_rmsnorm_bwd): t[NT_BWD_X],
 * t[NT_BWD_W], t[NT_BWD_DY] hold the inputs in the problem's dtypes;
 * out[NT_BWD_DX] (M x N) and out[NT_BWD_DW] (N) receive the outputs as
 * double.  Bitwise the same as nt_rmsnorm_bwd_ref_f64 on the inputs
 * converted to double.  0 or -1 (as above). */
int nt_rmsnorm_bwd_ref(const nt_problem *p, const void *const *t, double *const *out, double eps,
                       int nthreads);

#endif
