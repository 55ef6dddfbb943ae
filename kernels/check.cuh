/* check.cuh -- device helpers of the GPU runner's validation, not kernels of
 * any family (so they are not part of the kernel source hash).
 *
 * nt_check_err: relative L2 error terms of an output of dtype dt (the enum
 *   nt_dtype of kernels/family.h: 0 bf16, 1 fp16, 2 fp32) against a float64
 *   reference: per block, the sums of (out - ref)^2, ref^2 and the count of
 *   non-finite outputs, added in a fixed order (3 doubles per block); the
 *   host adds the blocks in order, so the figure is the same every time.
 * nt_check_diff: the number of 32-bit words in which two buffers differ
 *   (integer atomics: the count does not depend on the order).
 * nt_traffic: the per-problem yardstick (below).
 * nt_fill_dev: a seeded input drawn on the device, the bits the host's
 *   nt_fill draws (fill.h); it lets the kernel after it start at once. */

#include "nt_args.h"
#include "traffic.h"
#include "fill.h"

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
nt_fill_dev(void *a, int dt, long long n, double lo, double hi, unsigned long long seed) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    /* the chain the runner validates next may start while this fill still
     * writes its inputs (runner.c, run_once): only its waits hold it back */
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += 256LL * gridDim.x) {
        const float v = nt_fill_value(seed, (unsigned long long)i, lo, hi);
        if (dt == 2) {
            ((float *)a)[i] = v;
        } else if (dt == 0) {                /* bf16: to nearest, ties to even */
            const unsigned u = __float_as_uint(v);
            ((unsigned short *)a)[i] = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
        } else {                             /* fp16: to nearest, ties to even */
            unsigned short h;
            asm("{\n\t.reg .b16 t;\n\tcvt.rn.f16.f32 t, %1;\n\tmov.b16 %0, t;\n\t}"
                : "=h"(h) : "f"(v));
            ((unsigned short *)a)[i] = h;
        }
    }
}

extern "C" __global__ void __launch_bounds__(256)
nt_check_diff(const unsigned *a, const unsigned *b, long long n, unsigned long long *count) {
    unsigned long long c = 0;
    for (long long i = blockIdx.x * 256LL + threadIdx.x; i < n; i += 256LL * gridDim.x)
        c += a[i] != b[i];
    if (c) atomicAdd(count, c);
}

/* nt_traffic: the yardstick of a problem -- a kernel with the op's own
 * traffic over the same rotating tensors the variants use: it reads every
 * M x N input and writes every M x N output, and touches nothing else; each
 * thread moves NT_TRAFFIC_U 16-byte vectors of each tensor per step,
 * coalesced, all loads before the stores, and writes an integer sum of the
 * inputs, so that nothing is optimized away.  For RMSNorm backward that is
 * an add reading two tensors and writing one; for the forward, a copy of x
 * into y.  a.ws points to its nt_traffic_desc (traffic.h); a.t[] are the
 * tensors of the set.
 *
 * Two ways to walk the tensors, since neither wins everywhere:
 *   nt_traffic, nt_traffic_nc            row by row like the ops' kernels,
 *       one block per row (a loop beyond the grid), the block as wide as
 *       the runner makes it;
 *   nt_traffic_flat, nt_traffic_flat_nc  each tensor as one array (its rows
 *       are contiguous), NT_TRAFFIC_U * blockDim.x vectors a block (then
 *       the grid's stride).
 * At short rows a block per row leaves most threads idle (N = 64 in bf16:
 * a warp with 8 lanes busy): the ops' short-row kernels ran at up to 8.3
 * times that yardstick, and the flat walk runs N <= 256 1.6 to 7.9 times
 * faster.  The first flat version was 2-5% slower than the rows at some
 * mid shapes (an H200, 2026-12-03, data/yardstick-h200/).
 *
 * And two cache policies, since neither wins everywhere either (an H200,
 * 2026-12-01, bf16 copies of 128-256 MB: plain loads and stores were 3.7%
 * faster at 16384 x 4096 and 0.5-0.7% slower at 4096 x 16384 and
 * 65536 x 2048): plain ld.global / st.global, or (_nc) read-once loads
 * (ld.global.nc.L1::no_allocate) and streaming stores (st.global.cs).  The runner times all four ways and keeps the fastest,
 * so that the yardstick is the best of them, never the weaker. */

/* One step of a thread: vectors j = j0 + u * blockDim.x (u <
 * NT_TRAFFIC_U) of each tensor k, those below len[k], at row * len[k] + j
 * (FLAT: at j, row 0); NC: the read-once / streaming policy.  (A policy
 * chosen at run time, a branch at each access, put each load in a block of
 * its own, not issued together: the backward's yardstick up to 10% slower,
 * data/yardstick-h200/policy-branch/.) */
template <bool FLAT, bool NC>
__device__ __forceinline__ void nt_traffic_step(const nt_args &a, const long long *len,
                                                const int *out, long long row, long long j0) {
    constexpr int U = NT_TRAFFIC_U;
    const long long B = blockDim.x;
    unsigned s[U][4];
#pragma unroll
    for (int u = 0; u < U; u++) s[u][0] = s[u][1] = s[u][2] = s[u][3] = 0;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        if (out[k] || !len[k]) continue;
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long j = j0 + u * B;
            if (j >= len[k]) continue;
            unsigned v0, v1, v2, v3;
            const char *q = (const char *)a.t[k] + 16 * (FLAT ? j : row * len[k] + j);
            if (NC) asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                                 : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3) : "l"(q));
            else asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                              : "=r"(v0), "=r"(v1), "=r"(v2), "=r"(v3) : "l"(q));
            s[u][0] += v0; s[u][1] += v1; s[u][2] += v2; s[u][3] += v3;
        }
    }
#pragma unroll
    for (int k = 0; k < 8; k++) {
        if (!out[k] || !len[k]) continue;
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long j = j0 + u * B;
            if (j >= len[k]) continue;
            char *q = (char *)a.t[k] + 16 * (FLAT ? j : row * len[k] + j);
            if (NC) asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};"
                                 :: "l"(q), "r"(s[u][0]), "r"(s[u][1]), "r"(s[u][2]),
                                    "r"(s[u][3]) : "memory");
            else asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};"
                              :: "l"(q), "r"(s[u][0]), "r"(s[u][1]), "r"(s[u][2]),
                                 "r"(s[u][3]) : "memory");
        }
    }
}

/* The descriptor's tensors, each len[k] = rows * its vectors a row (n: the
 * longest). */
__device__ __forceinline__ void nt_traffic_desc_load(const nt_args &a, long long rows,
                                                     long long *len, int *out, long long *n) {
    const nt_traffic_desc *d = (const nt_traffic_desc *)a.ws;
    *n = 0;
#pragma unroll
    for (int k = 0; k < 8; k++) {
        len[k] = rows * d->row16[k];
        out[k] = d->out[k];
        *n = len[k] > *n ? len[k] : *n;
    }
}

/* The runner launches the yardstick as the forward's kernels are launched,
 * with programmatic dependent launch, so that back to back it hides the
 * same launch gap they do and "% op" compares like with like: wait for
 * the previous kernel before touching any global memory (the descriptor
 * included).  A no-op without the launch attribute and before sm_90. */
__device__ __forceinline__ void nt_traffic_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* Row by row: block b takes rows b, b + grid, ..., each in steps of its
 * threads. */
template <bool NC>
__device__ __forceinline__ void nt_traffic_rows(const nt_args &a) {
    long long len[8], n;
    int out[8];
    nt_traffic_desc_load(a, 1, len, out, &n);
    const long long step = (long long)NT_TRAFFIC_U * blockDim.x;
    for (long long row = blockIdx.x; row < a.M; row += gridDim.x)
        for (long long j0 = threadIdx.x; j0 < n; j0 += step)
            nt_traffic_step<false, NC>(a, len, out, row, j0);
}

/* Flat: each tensor one array (M rows of it), the blocks taking turns at
 * its steps. */
template <bool NC>
__device__ __forceinline__ void nt_traffic_arrays(const nt_args &a) {
    long long len[8], n;
    int out[8];
    nt_traffic_desc_load(a, a.M, len, out, &n);
    const long long step = (long long)NT_TRAFFIC_U * blockDim.x;
    for (long long j0 = blockIdx.x * step + threadIdx.x; j0 < n; j0 += gridDim.x * step)
        nt_traffic_step<true, NC>(a, len, out, 0, j0);
}

extern "C" __global__ void __launch_bounds__(NT_TRAFFIC_B) nt_traffic(nt_args a) {
    nt_traffic_wait();
    nt_traffic_rows<false>(a);
}

extern "C" __global__ void __launch_bounds__(NT_TRAFFIC_B) nt_traffic_nc(nt_args a) {
    nt_traffic_wait();
    nt_traffic_rows<true>(a);
}

extern "C" __global__ void __launch_bounds__(NT_TRAFFIC_B) nt_traffic_flat(nt_args a) {
    nt_traffic_wait();
    nt_traffic_arrays<false>(a);
}

extern "C" __global__ void __launch_bounds__(NT_TRAFFIC_B) nt_traffic_flat_nc(nt_args a) {
    nt_traffic_wait();
    nt_traffic_arrays<true>(a);
}
