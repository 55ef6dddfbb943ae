/* ref.h -- what the float64 references of the ops share: bf16 and fp16
 * conversions, seeded input fills in every dtype, exact conversion to
 * double and error metrics.  Each op's reference is in its folder
 * (kernels/<op>/ref.h) and reads its inputs in their dtypes through these.
 * Plain C (no CUDA): the tuner, the tests and the production library's
 * tests all link it.  Every external symbol starts nt_. */
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

/* Elements start .. start + n - 1 of that fill into a[0 .. n): a row of a
 * tensor alone, the same bits nt_fill writes there (kernels/fill.h). */
void nt_fill_at(int dtype, void *a, size_t n, uint64_t start, double lo, double hi,
                uint64_t seed);

/* n elements of dtype at src, converted exactly to double into dst. */
void nt_to_f64(int dtype, const void *src, size_t n, double *dst);

/* Relative L2 error of n elements of dtype at a against ref (as below). */
double nt_rel_l2_dt(int dtype, const double *ref, const void *a, size_t n);

/* Relative L2 error ||a - ref|| / ||ref|| of n values against a float64
 * reference: a as bf16 bits, as float, or as double.  +inf if any element of
 * a is NaN or infinite; when ||ref|| is 0 the absolute L2 error is returned. */
double nt_rel_l2_bf16(const double *ref, const uint16_t *a, size_t n);
double nt_rel_l2_f32(const double *ref, const float *a, size_t n);
double nt_rel_l2(const double *ref, const double *a, size_t n);

#endif
