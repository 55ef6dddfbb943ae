/* bench_add.cu -- the backward's yardstick for `make bench`
 * (tests/gpu/bench.c): c = a + b over n bf16 elements, reading two tensors
 * and writing one, the bytes the RMSNorm backward moves through device
 * memory (x and dy in, dx out; w and dw are N elements).
 *
 * 16-byte loads and stores (8 bf16), the sum in fp32 rounded to bf16,
 * UNROLL independent vectors in flight per thread, one tile of BLOCK *
 * UNROLL vectors per block over as many blocks as tiles (as PyTorch's
 * elementwise kernels do: a persistent grid-stride loop measured 6% slower
 * than torch.add at 131072 x 4096 on an H200); the elements past the last
 * whole vector (n not a multiple of 8) are done by the first threads.  Built with nvcc by the Makefile's bench rule, for the
 * library's architectures. */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "tests/gpu/bench_add.h"

#define BLOCK 256
#define UNROLL 4

/* Eight bf16 sums of two 16-byte vectors. */
static __device__ __forceinline__ uint4 add8(uint4 a, uint4 b) {
    const __nv_bfloat162 *x = reinterpret_cast<const __nv_bfloat162 *>(&a);
    const __nv_bfloat162 *y = reinterpret_cast<const __nv_bfloat162 *>(&b);
    uint4 r;
    __nv_bfloat162 *z = reinterpret_cast<__nv_bfloat162 *>(&r);
#pragma unroll
    for (int i = 0; i < 4; i++) {
        float2 u = __bfloat1622float2(x[i]), v = __bfloat1622float2(y[i]);
        z[i] = __floats2bfloat162_rn(u.x + v.x, u.y + v.y);
    }
    return r;
}

/* c[i] = a[i] + b[i] for i < n; nv = n / 8 whole vectors.  Block b takes
 * the tile of BLOCK * UNROLL vectors at b * BLOCK * UNROLL: thread t loads
 * vectors t, t + BLOCK, ... of it (each load instruction of a warp reads
 * 512 contiguous bytes), all UNROLL pairs before any sum. */
static __global__ void __launch_bounds__(BLOCK) add_bf16(const uint4 *__restrict__ a,
                                                          const uint4 *__restrict__ b,
                                                          uint4 *__restrict__ c, size_t nv,
                                                          const __nv_bfloat16 *ta,
                                                          const __nv_bfloat16 *tb,
                                                          __nv_bfloat16 *tc, size_t ntail) {
    const size_t base = (size_t)blockIdx.x * BLOCK * UNROLL + threadIdx.x;
    if (base + (UNROLL - 1) * BLOCK < nv) {
        uint4 va[UNROLL], vb[UNROLL];
#pragma unroll
        for (int k = 0; k < UNROLL; k++) {
            va[k] = a[base + k * BLOCK];
            vb[k] = b[base + k * BLOCK];
        }
#pragma unroll
        for (int k = 0; k < UNROLL; k++) c[base + k * BLOCK] = add8(va[k], vb[k]);
    } else {
        for (size_t i = base; i < nv; i += BLOCK) c[i] = add8(a[i], b[i]);
    }
    if (blockIdx.x == 0 && threadIdx.x < ntail)
        tc[threadIdx.x] = __float2bfloat16_rn(__bfloat162float(ta[threadIdx.x]) +
                                              __bfloat162float(tb[threadIdx.x]));
}

extern "C" int bench_add_bf16(const void *a, const void *b, void *c, size_t n,
                              cudaStream_t stream) {
    if (((uintptr_t)a | (uintptr_t)b | (uintptr_t)c) % 16) return (int)cudaErrorMisalignedAddress;
    size_t nv = n / 8, done = nv * 8;
    size_t tiles = (nv + BLOCK * UNROLL - 1) / (BLOCK * UNROLL);
    if (tiles > 2147483647u) return (int)cudaErrorInvalidConfiguration;
    add_bf16<<<(unsigned)(tiles ? tiles : 1), BLOCK, 0, stream>>>(
        (const uint4 *)a, (const uint4 *)b, (uint4 *)c, nv, (const __nv_bfloat16 *)a + done,
        (const __nv_bfloat16 *)b + done, (__nv_bfloat16 *)c + done, n - done);
    return (int)cudaGetLastError();
}
