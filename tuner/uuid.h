/* uuid.h -- a CUDA device's UUID as nvidia-smi prints it ("GPU-xxxxxxxx-
 * xxxx-xxxx-xxxx-xxxxxxxxxxxx"): how the store names a GPU (device.uuid)
 * and how the dispatch header names the GPU it was tuned on
 * (NORMTUNE_DEVICE_UUID).  Used by the runner (tuner/runner.c) and the
 * library's speed test (tests/gpu/test_lib.c). */
#ifndef NT_UUID_H
#define NT_UUID_H

#include <stdio.h>

#include <cuda_runtime.h>

static inline void nt_uuid_text(const struct cudaDeviceProp *p, char *buf, size_t len) {
    const unsigned char *u = (const unsigned char *)p->uuid.bytes;
    snprintf(buf, len,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
             u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
}

#endif
