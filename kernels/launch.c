/* launch.c -- launch a family's chain (see launch.h). */
#include <stdio.h>

#include "kernels/launch.h"

cudaError_t nt_chain_grid(const nt_plan *pl, const void *kernel0, int sms, long long M,
                          unsigned *grid0, char *err, size_t errlen) {
    const nt_launch *l0 = &pl->l[0];
    int fit = 0;
    *grid0 = l0->grid;
    if (l0->grid) return cudaSuccess;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel0, (int)l0->block,
                                                                  l0->smem);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "occupancy query: %s", cudaGetErrorString(e));
        return e;
    }
    if (fit == 0) {
        snprintf(err, errlen, "no block of %u threads with %u bytes of dynamic shared memory "
                 "fits on an SM", l0->block, l0->smem);
        return cudaErrorInvalidConfiguration;
    }
    if (l0->blocks_per_sm > fit) {
        snprintf(err, errlen, "k=%d blocks per SM requested, only %d fit", l0->blocks_per_sm, fit);
        return cudaErrorInvalidConfiguration;
    }
    long long g = (long long)sms * (l0->blocks_per_sm ? l0->blocks_per_sm : fit);
    long long steps = l0->grid_rows > 1 ? (M + l0->grid_rows - 1) / l0->grid_rows : M;
    *grid0 = (unsigned)(g < steps ? g : steps);
    return cudaSuccess;
}

cudaError_t nt_chain_prepare(const nt_plan *pl, const void *const *kernels) {
    for (int i = 0; i < pl->nlaunch; i++) {
        /* the 48 KB default covers static and dynamic shared memory
         * together: opt in for any dynamic amount, so that 48 KB of
         * dynamic next to a static reduction buffer still fits */
        if (pl->l[i].smem == 0) continue;
        cudaError_t e = cudaFuncSetAttribute(kernels[i], cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)pl->l[i].smem);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

cudaError_t nt_chain_launch(const nt_plan *pl, const void *const *kernels, unsigned grid0,
                            const nt_args *a, cudaStream_t st) {
    nt_args arg = *a;
    void *args[] = {&arg};
    for (int i = 0; i < pl->nlaunch; i++) {
        const nt_launch *l = &pl->l[i];
        cudaLaunchAttribute at[2];
        cudaLaunchConfig_t c = {0};
        c.gridDim.x = i == 0 && l->grid == 0 ? grid0 : l->grid;
        c.gridDim.y = l->grid_y ? l->grid_y : 1;
        c.gridDim.z = 1;
        c.blockDim.x = l->block;
        c.blockDim.y = c.blockDim.z = 1;
        c.dynamicSmemBytes = l->smem;
        c.stream = st;
        c.attrs = at;
        if (l->pdl) {
            at[c.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
            at[c.numAttrs++].val.programmaticStreamSerializationAllowed = 1;
        }
        if (l->cluster > 1) {
            at[c.numAttrs].id = cudaLaunchAttributeClusterDimension;
            at[c.numAttrs].val.clusterDim.x = l->cluster;
            at[c.numAttrs].val.clusterDim.y = 1;
            at[c.numAttrs++].val.clusterDim.z = 1;
        }
        cudaError_t e = cudaLaunchKernelExC(&c, kernels[i], args);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}
