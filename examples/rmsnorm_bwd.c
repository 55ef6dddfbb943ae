/* rmsnorm_bwd.c -- the normtune library in one page: RMSNorm backward of a
 * 4096 x 4096 bf16 batch (bf16 weight, fp32 dw) on a CUDA stream.
 *
 * Build against an installed normtune (make install PREFIX=...):
 *   PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig make -C examples
 * or from the repository root against the build tree: make examples.
 *
 * Steps: ask the workspace size, allocate everything once, call
 * normtune_rmsnorm_bwd (asynchronous, no allocation inside), synchronize
 * and look at the result. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>

#include <cuda_runtime.h>
#include <normtune.h>

/* float -> bf16 bits, round to nearest even (finite values only) */
static uint16_t to_bf16(float f) {
    union { float f; uint32_t u; } v = {f};
    return (uint16_t)((v.u + 0x7fff + ((v.u >> 16) & 1)) >> 16);
}

int main(void) {
    const long long M = 4096, N = 4096;  /* rows (tokens) x hidden size */
    const size_t n = (size_t)(M * N);
    size_t ws_bytes = 0;
    void *x, *w, *dy, *dx, *dw, *ws;

    normtune_status st = normtune_rmsnorm_bwd_workspace_size(M, N, NORMTUNE_BF16, NORMTUNE_BF16,
                                                             NORMTUNE_F32, &ws_bytes);
    if (st != NORMTUNE_SUCCESS) {
        fprintf(stderr, "rmsnorm_bwd: %s\n", normtune_strerror(st));
        return 1;
    }
    uint16_t *h = malloc(n * 2);
    for (size_t i = 0; i < n; i++) h[i] = to_bf16((float)((i * 7919 % 2001) - 1000) / 1000.0f);
    if (cudaMalloc(&x, n * 2) || cudaMalloc(&dy, n * 2) || cudaMalloc(&dx, n * 2) ||
        cudaMalloc(&w, (size_t)N * 2) || cudaMalloc(&dw, (size_t)N * 4) ||
        cudaMalloc(&ws, ws_bytes)) {
        fprintf(stderr, "rmsnorm_bwd: cudaMalloc failed\n");
        return 1;
    }
    cudaMemcpy(x, h, n * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(dy, h + 1, (n - 1) * 2, cudaMemcpyHostToDevice);
    cudaMemset(dy, 0, 2);
    for (long long j = 0; j < N; j++) h[j] = to_bf16(1.0f);
    cudaMemcpy(w, h, (size_t)N * 2, cudaMemcpyHostToDevice);

    cudaStream_t stream;
    cudaStreamCreate(&stream);
    st = normtune_rmsnorm_bwd(x, w, dy, dx, dw, M, N, 1e-6f, NORMTUNE_BF16 /* x, dy, dx */,
                              NORMTUNE_BF16 /* w */, NORMTUNE_F32 /* dw */, ws, ws_bytes, stream);
    if (st != NORMTUNE_SUCCESS) {
        fprintf(stderr, "rmsnorm_bwd: %s\n", normtune_strerror(st));
        return 1;
    }
    if (cudaStreamSynchronize(stream) != cudaSuccess) {
        fprintf(stderr, "rmsnorm_bwd: the kernels failed\n");
        return 1;
    }

    float dw0[4];
    normtune_choice ch;
    cudaMemcpy(dw0, dw, sizeof dw0, cudaMemcpyDeviceToHost);
    normtune_rmsnorm_bwd_choice(M, N, NORMTUNE_BF16, NORMTUNE_BF16, NORMTUNE_F32, &ch);
    printf("%s\n", normtune_version());
    printf("M=%lld N=%lld %s: %s %s (config %d%s), workspace %zu bytes\n", M, N, ch.dtypes,
           ch.family, ch.params, ch.config, ch.tuned ? ", tuned" : "", ws_bytes);
    printf("dw[0..3] = %g %g %g %g\n", dw0[0], dw0[1], dw0[2], dw0[3]);
    cudaFree(x); cudaFree(w); cudaFree(dy); cudaFree(dx); cudaFree(dw); cudaFree(ws);
    cudaStreamDestroy(stream);
    free(h);
    return 0;
}
