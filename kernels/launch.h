/* launch.h -- launching a family's chain: the one code path the tuner and
 * the production library share, so the library runs exactly what was timed.
 *
 * Plain C over the CUDA runtime API.  Kernels are passed as the runtime's
 * function handles (a cudaKernel_t from cudaLibraryGetKernel cast to
 * const void *, or the address of an nvcc-compiled __global__ function). */
#ifndef NT_LAUNCH_H
#define NT_LAUNCH_H

#include <cuda_runtime.h>
#include "kernels/family.h"
#include "kernels/nt_args.h"

/* Size the grid of launch 0 when the plan leaves it to the launcher (a
 * persistent kernel: grid 0): blocks_per_sm (or as many as fit) x SMs, at
 * most the steps of grid_rows rows that cover M.  Otherwise the plan's grid.  Returns cudaSuccess, or an error with
 * a message in err (nothing fits, or k larger than fits).  A launch in
 * clusters (l.cluster > 1) gets whole clusters, at most as many as can be
 * resident at once (cudaOccupancyMaxActiveClusters), which is also what
 * blocks_per_sm = 0 asks for, and at most one cluster per step of rows:
 * nt_grid_fit. */
cudaError_t nt_chain_grid(const nt_plan *pl, const void *kernel0, int sms, long long M,
                          unsigned *grid0, char *err, size_t errlen);

/* nt_chain_grid's arithmetic: `blocks` blocks asked for, in whole clusters
 * of `cluster` blocks (0 or 1: none) and at least one, at most max_clusters
 * of them (0: no limit) and at most one per step of grid_rows rows (0 = 1)
 * that cover M rows.  The grid in blocks. */
long long nt_grid_fit(long long blocks, unsigned cluster, long long max_clusters, long long M,
                      unsigned grid_rows);

/* The partial rows launch 0 leaves in the workspace (nt_args.nparts): the
 * plan's nparts, or else one per block, or per cluster, of grid0. */
int nt_chain_nparts(const nt_plan *pl, unsigned grid0);

/* Make the kernels accept the plan's dynamic shared memory (the default
 * limit, 48 KB, counts static shared memory too, so every kernel with
 * dynamic shared memory opts in to its amount). */
cudaError_t nt_chain_prepare(const nt_plan *pl, const void *const *kernels);

/* Launch the chain on stream st: kernels[i] with the plan's grid (grid0
 * for launch 0 when its grid is 0), block and shared memory,
 * argument *a, programmatic dependent launch where the plan asks for it,
 * thread block clusters of l.cluster blocks where it is above 1, and a
 * cooperative launch where l.coop is set. */
cudaError_t nt_chain_launch(const nt_plan *pl, const void *const *kernels, unsigned grid0,
                            const nt_args *a, cudaStream_t st);

#endif
