/* bench_add.h -- the add yardstick of tests/gpu/bench.c (bench_add.cu):
 * C linkage, no CUDA header needed. */
#ifndef BENCH_ADD_H
#define BENCH_ADD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

/* Enqueue c = a + b over n bf16 elements on stream (a, b, c device
 * pointers, 16-byte aligned, c overlapping neither).  0, or the
 * cudaError_t of the launch or of the device query. */
int bench_add_bf16(const void *a, const void *b, void *c, size_t n, struct CUstream_st *stream);

#ifdef __cplusplus
}
#endif

#endif
