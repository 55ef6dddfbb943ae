/* check.cuh -- device helpers of the GPU runner's validation, not kernels of
 * any family (so they are not part of the kernel source hash).
 *
 * nt_check_err: relative L2 error terms of a bf16 output against a float64
 *   reference: per block, the sums of (out - ref)^2, ref^2 and the count of
 *   non-finite outputs, added in a fixed order (3 doubles per block); the
 *   host adds the blocks in order, so the figure is the same every time.
 * nt_check_diff: the number of 32-bit words in which two buffers differ
 *   (integer atomics: the count does not depend on the order). */

extern "C" __global__ void __launch_bounds__(256)
nt_check_err(const unsigned short *out, const double *ref, long long n, double *part) {
    __shared__ double s[3][256];
    double num = 0, den = 0, bad = 0;
    for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += 256LL * gridDim.x) {
        const float v = __uint_as_float((unsigned)out[i] << 16);
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
