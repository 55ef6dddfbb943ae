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
 * a message in err (nothing fits, or k larger than fits). */
cudaError_t nt_chain_grid(const nt_plan *pl, const void *kernel0, int sms, long long M,
                          unsigned *grid0, char *err, size_t errlen);

/* Make the kernels accept the plan's dynamic shared memory (the default
 * limit, 48 KB, counts static shared memory too, so every kernel with
 * dynamic shared memory opts in to its amount). */
cudaError_t nt_chain_prepare(const nt_plan *pl, const void *const *kernels);

/* Launch the chain on stream st: kernels[i] with the plan's grid (grid0 for
 * launch 0 when its grid is 0), block and shared memory, argument *a,
 * programmatic dependent launch where the plan asks for it, and thread
 * block clusters of l.cluster blocks where it is above 1. */
cudaError_t nt_chain_launch(const nt_plan *pl, const void *const *kernels, unsigned grid0,
                            const nt_args *a, cudaStream_t st);

#endif
