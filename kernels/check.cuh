/* check.cuh -- device helpers of the GPU runner's validation, not kernels of
 * any family (so they are not part of the kernel source hash).
 *
 * nt_check_err: relative L2 error terms of an output of dtype dt (the enum
 *   nt_dtype of kernels/family.h: 0 bf16, 1 fp16, 2 fp32) against a float64
 *   reference: per block, the sums of (out - ref)^2, ref^2 and the count of
 *   non-finite outputs, added in a fixed order (3 doubles per block); the
 *   host adds the blocks in order, so the figure is the same every time.
 * nt_check_diff: the number of 32-bit words in which two buffers differ
 *   (integer atomics: the count does not depend on the order). */

/* Element i of an output of dtype dt, as float (exact). */
__device__ __forceinline__ float nt_check_get(const void *out, int dt, long long i) {
    if (dt == 2) return ((const float *)out)[i];
    const unsigned short h = ((const unsigned short *)out)[i];
    if (dt == 0) return __uint_as_float((unsigned)h << 16);
    float f;
    asm("{\n\t.reg .b16 t;\n\tmov.b16 t, %1;\n\tcvt.f32.f16 %0, t;\n\t}" : "=f"(f) : "h"(h));
    return f;
}

extern "C" __global__ void __launch_bounds__(256)
nt_check_err(const void *out, int dt, const double *ref, long long n, double *part) {
    __shared__ double s[3][256];
    double num = 0, den = 0, bad = 0;
    for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += 256LL * gridDim.x) {
        const float v = nt_check_get(out, dt, i);
        const double d = (double)v - ref[i];
        if (!(v == v) || v - v != 0.f) bad += 1;   /* NaN or infinite */
        num += d * d;
        den += ref[i] * ref[i];
    }
    s[0][threadIdx.x] = num;
    s[1][threadIdx.x] = den;
    s[2][threadIdx.x] = bad;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (threadIdx.x < h)
            for (int k = 0; k < 3; k++) s[k][threadIdx.x] += s[k][threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x < 3) part[3 * blockIdx.x + threadIdx.x] = s[threadIdx.x][0];
}

extern "C" __global__ void __launch_bounds__(256)
nt_check_diff(const unsigned *a, const unsigned *b, long long n, unsigned long long *count) {
    unsigned long long c = 0;
    for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += 256LL * gridDim.x)
        c += a[i] != b[i];
    if (c) atomicAdd(count, c);
}
