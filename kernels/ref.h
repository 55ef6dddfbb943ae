/* ref.h -- the float64 CPU reference of RMSNorm (forward and backward), bf16
 * conversions, seeded input fills and error metrics.
 *
 * The GPU runner validates every variant against nt_ref_rmsnorm_bwd: it
 * takes the same bf16 inputs as the kernels and computes dx and dw in double
 * precision.  Plain C (no CUDA): the tuner, the tests and the production
 * library's tests all link it.  Every external symbol starts nt_. */
#ifndef NT_REF_H
#define NT_REF_H

#include <stddef.h>
#include <stdint.h>

/* bf16 bits -> float (exact). */
float nt_bf16_to_f32(uint16_t b);

/* float -> bf16 bits, rounding to nearest even; NaN stays NaN (quiet),
 * infinities and overflow to infinity as IEEE rounding says. */
uint16_t nt_f32_to_bf16(float f);

/* fp16 bits -> float (exact), and float -> fp16 bits rounding to nearest
 * even (overflow to infinity, NaN stays NaN, subnormals kept). */
float nt_f16_to_f32(uint16_t h);
uint16_t nt_f32_to_f16(float f);

/* Fill a[n] with the bf16 of values uniform in [lo, hi), from a PRNG seeded
 * with seed (same seed, same values, on every machine). */
void nt_fill_uniform(uint16_t *a, size_t n, double lo, double hi, uint64_t seed);

/* The same for any dtype (enum nt_dtype of kernels/family.h): a holds n
 * elements of dtype; the values drawn are those of nt_fill_uniform, each
 * rounded to the dtype. */
void nt_fill(int dtype, void *a, size_t n, double lo, double hi, uint64_t seed);

/* n elements of dtype at src, converted exactly to double into dst. */
void nt_to_f64(int dtype, const void *src, size_t n, double *dst);

/* Relative L2 error of n elements of dtype at a against ref (as below). */
double nt_rel_l2_dt(int dtype, const double *ref, const void *a, size_t n);

/* Forward RMSNorm in double: y_ij = x_ij * r_i * w_j with
 * r_i = 1 / sqrt(mean_j x_ij^2 + eps).  y is M x N, row-major. */
void nt_ref_forward(const double *x, const double *w, int64_t M, int64_t N, double eps,
                    double *y);

/* Backward RMSNorm in double on double inputs:
 *   dx_ij = r_i w_j dy_ij - x_ij r_i^3 mean_k(dy_ik w_k x_ik)
 *   dw_j  = sum_i dy_ij x_ij r_i
 * dx is M x N, dw is N.  Rows are split over nthreads pthreads (<= 0: the
 * online CPUs);
 * dw is summed from per-thread partials in a fixed order over a fixed split
 * of the rows, so the result is the same for any nthreads and any timing.
 * Returns 0, or -1 when memory or threads cannot be had. */
int nt_ref_rmsnorm_bwd_f64(const double *x, const double *w, const double *dy, int64_t M,
                           int64_t N, double eps, double *dx, double *dw, int nthreads);

/* The same on bf16 inputs (bit patterns), which it converts exactly to double.
 * Returns 0 or -1. */
int nt_ref_rmsnorm_bwd(const uint16_t *x, const uint16_t *w, const uint16_t *dy, int64_t M,
                       int64_t N, double eps, double *dx, double *dw, int nthreads);

/* Relative L2 error ||a - ref|| / ||ref|| of n values against a float64
 * reference: a as bf16 bits, as float, or as double.  +inf if any element of
 * a is NaN or infinite; when ||ref|| is 0 the absolute L2 error is returned. */
double nt_rel_l2_bf16(const double *ref, const uint16_t *a, size_t n);
double nt_rel_l2_f32(const double *ref, const float *a, size_t n);
double nt_rel_l2(const double *ref, const double *a, size_t n);

#endif
