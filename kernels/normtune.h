/* normtune.h -- the normtune production library: tuned RMSNorm backward.
 *
 * One C call runs RMSNorm backward on a CUDA stream with the kernel
 * configuration the tuner measured fastest for the shape (or the nearest
 * tuned shape, or a generic default): bf16 x, w, dy in; bf16 dx and fp32
 * (or bf16) dw out.  The caller owns every buffer, including a workspace
 * whose size the library tells.  The call allocates nothing, copies nothing
 * between host and device and never synchronizes: it only enqueues kernels
 * on the stream.  Results are bitwise identical from call to call for the
 * same shape on the same device.
 *
 * Plain C (C99 or later) and C++; the header needs no CUDA header: a
 * cudaStream_t is a struct CUstream_st *, so pass one (or 0 for the legacy
 * default stream) as it is.  Link with -lnormtune and the CUDA runtime
 * (pkg-config --libs normtune).  API documentation: docs/api.md. */
#ifndef NORMTUNE_H
#define NORMTUNE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define NORMTUNE_API __attribute__((visibility("default")))
#else
#define NORMTUNE_API
#endif

#define NORMTUNE_MAX_N 16384          /* largest N the library runs */

struct CUstream_st;                   /* = cudaStream_t's target */

/* Status of every call.  0 is success; each bad argument has its own code
 * and is reported before anything is launched. */
typedef enum normtune_status {
    NORMTUNE_SUCCESS = 0,
    NORMTUNE_ERROR_NULL_POINTER = 1,  /* x, w, dy, dx, dw or an out-parameter is NULL */
    NORMTUNE_ERROR_INVALID_SHAPE = 2, /* M or N below 1, or M above 2^31 - 1 */
    NORMTUNE_ERROR_UNSUPPORTED_N = 3, /* N not a multiple of 8, or above NORMTUNE_MAX_N */
    NORMTUNE_ERROR_MISALIGNED = 4,    /* a pointer (workspace included) not 16-byte aligned */
    NORMTUNE_ERROR_WORKSPACE = 5,     /* workspace NULL, or smaller than the size query says */
    NORMTUNE_ERROR_INVALID_EPS = 6,   /* eps negative, NaN or infinite */
    NORMTUNE_ERROR_INVALID_FLAGS = 7, /* a flag bit the library does not know */
    NORMTUNE_ERROR_CUDA = 8,          /* no device, or a device query or launch failed
                                         (normtune_last_cuda_error says which) */
    NORMTUNE_ERROR_INTERNAL = 9       /* no configuration could be planned (a bug) */
} normtune_status;

/* Flags of normtune_rmsnorm_bwd (bitwise or). */
#define NORMTUNE_DW_BF16 1u           /* write dw as bf16 (default: fp32) */

/* A one-line English description of status s ("unknown status" if s is not
 * one).  The text is static; never free it. */
NORMTUNE_API const char *normtune_strerror(normtune_status s);

/* The cudaError_t (as an int) behind this thread's latest
 * NORMTUNE_ERROR_CUDA, 0 if none. */
NORMTUNE_API int normtune_last_cuda_error(void);

/* Bytes of workspace normtune_rmsnorm_bwd needs for M rows of N columns on
 * the current CUDA device (cudaGetDevice): an exact bound for the config the
 * call will choose there.  Writes *bytes; returns NORMTUNE_SUCCESS or the
 * error of the arguments (as normtune_rmsnorm_bwd would) or
 * NORMTUNE_ERROR_CUDA when there is no usable device. */
NORMTUNE_API normtune_status normtune_rmsnorm_bwd_workspace_size(long long M, long long N,
                                                                 size_t *bytes);

/* RMSNorm backward on stream: for each row i of M,
 *   r_i = 1 / sqrt(mean_j x_ij^2 + eps)
 *   dx_ij = r_i w_j dy_ij - x_ij r_i^3 mean_k(w_k dy_ik x_ik)
 *   dw_j = sum_i dy_ij x_ij r_i
 * x, dy, dx: M x N bf16, row-major; w: N bf16; dw: N fp32, or N bf16 with
 * NORMTUNE_DW_BF16.  All device pointers, 16-byte aligned; outputs must not
 * overlap inputs or each other.  workspace: device memory of at least the
 * bytes normtune_rmsnorm_bwd_workspace_size gives (workspace_bytes says how
 * much there is); its contents on entry do not matter and it is in use until
 * the work on the stream completes.  N: a multiple of 8 up to NORMTUNE_MAX_N.
 * Returns after enqueueing the kernels (asynchronous, like a kernel launch),
 * NORMTUNE_SUCCESS or an error code; on an argument error nothing is
 * launched. */
NORMTUNE_API normtune_status normtune_rmsnorm_bwd(const void *x, const void *w, const void *dy,
                                                  void *dx, void *dw, long long M, long long N,
                                                  float eps, unsigned flags, void *workspace,
                                                  size_t workspace_bytes,
                                                  struct CUstream_st *stream);

/* Which configuration the library runs for a shape on the current device. */
typedef struct normtune_choice {
    int config;                       /* dispatch table config id, -1 = generic default */
    int tuned;                        /* 1: (M, N) itself is a tuned shape with this config */
    char family[48];                  /* "rmsnorm_bwd.persistent" */
    char params[160];                 /* "block=256,chunks=4,stages=2,k=0" */
    size_t workspace;                 /* bytes of workspace the call needs */
    unsigned grid;                    /* blocks of the first kernel */
    int nlaunch;                      /* kernels in the chain */
    double tol_dx, tol_dw;            /* the tuner's accepted relative L2 error vs float64 */
} normtune_choice;

/* Fill *out with the configuration normtune_rmsnorm_bwd would run for M x N
 * on the current device.  Returns as normtune_rmsnorm_bwd_workspace_size. */
NORMTUNE_API normtune_status normtune_rmsnorm_bwd_choice(long long M, long long N,
                                                         normtune_choice *out);

/* Provenance of the build: "normtune <version> rmsnorm_bwd bf16, kernel
 * source <hash>, tuned on <device>, <n> shapes, <n> configs".  Static. */
NORMTUNE_API const char *normtune_version(void);

#ifdef __cplusplus
}
#endif

#endif
