/* dref.h -- the float64 reference on the device: what the runner passes
 * to an op's reference kernels (kernels/<op>/dref.cuh) and the helpers
 * they share.
 *
 * The runner (tuner/runner.c) draws a problem's inputs on the GPU
 * (nt_fill_dev, the host's own formula: fill.h) and computes every
 * output's float64 reference there, from the inputs of set 0, with the
 * op's reference kernels, launched in the order the op lists them
 * (nt_op.dref_kernels), each on NT_DREF_GRID blocks of NT_DREF_BLOCK
 * threads.  Every one of them is a plain double computation, fixed in its
 * order (so its bits do not move from run to run), over 64-bit indices.
 * The host's reference (kernels/<op>/ref.c) checks it on every problem:
 * on sampled rows always, and whole where the problem is small
 * (tuner/runner.c, ref_crosscheck); make test-gpu checks it whole against
 * the host's at shapes of every dtype combination (tests/gpu/test_dref.c).
 *
 * Plain types shared by host C and NVRTC's device code. */
#ifndef NT_DREF_H
#define NT_DREF_H

#include "nt_args.h"

#define NT_DREF_BLOCK 256     /* threads of a reference kernel's block */
#define NT_DREF_GRID 1024     /* its blocks: each walks its share */
#define NT_DREF_SLICES 256    /* row slices of a reduction over rows */

typedef struct nt_dref_args {
    const void *t[NT_MAX_TENSORS]; /* inputs (set 0) in their dtypes; NULL for outputs */
    double *ref[NT_MAX_TENSORS];   /* outputs: their float64 references; NULL for inputs */
    int dt[NT_MAX_TENSORS];        /* every tensor's dtype (enum nt_dtype) */
    double *scratch;               /* NT_DREF_SCRATCH(M, N) doubles */
    long long M, N;
    double eps;
} nt_dref_args;

/* The scratch a reference may use: a double per row, and NT_DREF_SLICES
 * per column (the partials of a sum over rows). */
#define NT_DREF_SCRATCH(M, N) ((M) + (long long)NT_DREF_SLICES * (N))

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
/* Element i of a tensor of dtype dt (0 bf16, 1 fp16, 2 fp32), exactly. */
__device__ __forceinline__ double nt_dref_get(const void *p, int dt, long long i) {
    if (dt == 2) return (double)((const float *)p)[i];
    const unsigned short h = ((const unsigned short *)p)[i];
    if (dt == 0) return (double)__uint_as_float((unsigned)h << 16);
    float f;
    asm("{\n\t.reg .b16 t;\n\tmov.b16 t, %1;\n\tcvt.f32.f16 %0, t;\n\t}" : "=f"(f) : "h"(h));
    return (double)f;
}

/* The sum of v over the block (NT_DREF_BLOCK threads), in a fixed order;
 * every thread gets it.  s: NT_DREF_BLOCK doubles of shared memory. */
__device__ __forceinline__ double nt_dref_block_sum(double v, double *s) {
    __syncthreads();                 /* s is free: the last sum is read */
    s[threadIdx.x] = v;
    __syncthreads();
    for (int h = NT_DREF_BLOCK / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
        __syncthreads();
    }
    return s[0];
}
#endif

#endif
