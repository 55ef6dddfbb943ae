/* launch.c -- launch a family's chain (see launch.h). */
#include <stdio.h>

#include "kernels/launch.h"

/* How many clusters of l's size, block and shared memory can be resident
 * at once (cudaOccupancyMaxActiveClusters) into *n: at least 1, or an error
 * with a message. */
static cudaError_t nt_chain_clusters(const nt_launch *l, const void *kernel, long long *n,
                                     char *err, size_t errlen) {
    cudaLaunchAttribute at;
    cudaLaunchConfig_t c = {0};
    int nc = 0;
    c.gridDim.x = l->cluster;
    c.gridDim.y = c.gridDim.z = 1;
    c.blockDim.x = l->block;
    c.blockDim.y = c.blockDim.z = 1;
    c.dynamicSmemBytes = l->smem;
    at.id = cudaLaunchAttributeClusterDimension;
    at.val.clusterDim.x = l->cluster;
    at.val.clusterDim.y = at.val.clusterDim.z = 1;
    c.attrs = &at;
    c.numAttrs = 1;
    cudaError_t e = cudaOccupancyMaxActiveClusters(&nc, kernel, &c);
    if (e != cudaSuccess) {
        nt_why(err, errlen, "cluster occupancy query: %s", cudaGetErrorString(e));
        return e;
    }
    if (nc < 1) {
        nt_why(err, errlen, "no cluster of %u blocks of %u threads with %u bytes of dynamic "
                 "shared memory fits on the device", l->cluster, l->block, l->smem);
        return cudaErrorInvalidConfiguration;
    }
    *n = nc;
    return cudaSuccess;
}

cudaError_t nt_chain_grid(const nt_plan *pl, const void *kernel0, int sms, long long M,
                          unsigned *grid0, char *err, size_t errlen) {
    const nt_launch *l0 = &pl->l[0];
    int fit = 0;
    *grid0 = l0->grid;
    if (l0->grid) return cudaSuccess;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel0, (int)l0->block,
                                                                  l0->smem);
    if (e != cudaSuccess) {
        nt_why(err, errlen, "occupancy query: %s", cudaGetErrorString(e));
        return e;
    }
    if (fit == 0) {
        nt_why(err, errlen, "no block of %u threads with %u bytes of dynamic shared memory "
                 "fits on an SM", l0->block, l0->smem);
        return cudaErrorInvalidConfiguration;
    }
    if (l0->blocks_per_sm > fit) {
        nt_why(err, errlen, "k=%d blocks per SM requested, only %d fit", l0->blocks_per_sm, fit);
        return cudaErrorInvalidConfiguration;
    }
    long long g = (long long)sms * (l0->blocks_per_sm ? l0->blocks_per_sm : fit), mc = 0;
    if (l0->cluster > 1 && (e = nt_chain_clusters(l0, kernel0, &mc, err, errlen)) != cudaSuccess)
        return e;
    *grid0 = (unsigned)nt_grid_fit(l0->blocks_per_sm || l0->cluster <= 1 ? g : mc * l0->cluster,
                                   l0->cluster, mc, M, l0->grid_rows);
    return cudaSuccess;
}

long long nt_grid_fit(long long blocks, unsigned cluster, long long max_clusters, long long M,
                      unsigned grid_rows) {
    long long S = cluster > 1 ? cluster : 1, units = blocks / S;
    long long steps = grid_rows > 1 ? (M + grid_rows - 1) / grid_rows : M;
    if (units < 1) units = 1;
    if (max_clusters > 0 && units > max_clusters) units = max_clusters;
    return (units < steps ? units : steps) * S;
}

int nt_chain_nparts(const nt_plan *pl, unsigned grid0) {
    if (pl->nparts) return pl->nparts;
    return (int)(grid0 / (pl->l[0].cluster > 1 ? pl->l[0].cluster : 1));
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
        cudaLaunchAttribute at[3];
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
        if (l->coop) {
            at[c.numAttrs].id = cudaLaunchAttributeCooperative;
            at[c.numAttrs++].val.cooperative = 1;
        }
        cudaError_t e = cudaLaunchKernelExC(&c, kernels[i], args);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}
