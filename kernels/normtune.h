/* normtune.h -- the normtune production library: tuned RMSNorm forward and
 * backward in bf16, fp16 and fp32.
 *
 * One C call runs RMSNorm backward (or forward) on a CUDA stream with the
 * kernel configuration the tuner measured fastest for the op, its dtypes
 * and the shape (or the nearest tuned shape, or the op's fallback).  The
 * dtypes are arguments: activations (x, dy, dx, y) bf16, fp16 or fp32; the
 * weight the activation dtype or fp32; dw fp32 or the weight dtype (see
 * docs/api.md for what each op allows).  The caller owns every buffer,
 * including a workspace whose size the library tells.  A call allocates
 * nothing, copies nothing between host and device and never synchronizes:
 * it only enqueues kernels on the stream.  Results are bitwise identical
 * from call to call for the same shape and dtypes on the same device.
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

#define NORMTUNE_MAX_N 65536          /* largest N the library runs */
#define NORMTUNE_MAX_LAUNCH 4         /* kernels one call launches, at most */
#define NORMTUNE_MAX_OUTPUTS 4        /* outputs of one op, at most */

struct CUstream_st;                   /* = cudaStream_t's target */

/* Element types of tensors (the values are those of the tuner's nt_dtype). */
typedef enum normtune_dtype {
    NORMTUNE_BF16 = 0,                /* bfloat16 */
    NORMTUNE_F16 = 1,                 /* IEEE half */
    NORMTUNE_F32 = 2                  /* float */
} normtune_dtype;

/* Status of every call.  0 is success; each bad argument has its own code
 * and is reported before anything is launched. */
typedef enum normtune_status {
    NORMTUNE_SUCCESS = 0,
    NORMTUNE_ERROR_NULL_POINTER = 1,  /* a required pointer or an out-parameter is NULL */
    NORMTUNE_ERROR_INVALID_SHAPE = 2, /* M or N below 1, or M above 2^31 - 1 */
    NORMTUNE_ERROR_UNSUPPORTED_N = 3, /* N not a multiple of 8, above NORMTUNE_MAX_N, or
                                         refused by the op for these dtypes */
    NORMTUNE_ERROR_MISALIGNED = 4,    /* a pointer (workspace included) not 16-byte aligned */
    NORMTUNE_ERROR_WORKSPACE = 5,     /* workspace NULL or smaller than the size query says */
    NORMTUNE_ERROR_INVALID_EPS = 6,   /* eps negative, NaN or infinite */
    NORMTUNE_ERROR_UNSUPPORTED_DTYPE = 7, /* a dtype combination the op does not allow or
                                         the library was not built for */
    NORMTUNE_ERROR_CUDA = 8,          /* no device, or a device query or launch failed
                                         (normtune_last_cuda_error says which) */
    NORMTUNE_ERROR_INTERNAL = 9       /* no configuration could be planned (a bug) */
} normtune_status;

/* A one-line English description of status s ("unknown status" if s is not
 * one).  The text is static; never free it. */
NORMTUNE_API const char *normtune_strerror(normtune_status s);

/* The cudaError_t (as an int) behind this thread's latest
 * NORMTUNE_ERROR_CUDA, 0 if none. */
NORMTUNE_API int normtune_last_cuda_error(void);

/* Which configuration a call runs, for a shape and dtypes on the current
 * device. */
typedef struct normtune_choice {
    int config;                       /* config id in the dispatch header */
    int tuned;                        /* 1: M x N is a tuned shape and runs its config */
    int fallback;                     /* 1: the op's fallback (no tuned config could run) */
    char op[32];                      /* "rmsnorm_bwd" */
    char dtypes[64];                  /* "x=bf16,w=f32,dw=f32" */
    char family[48];                  /* "rmsnorm_bwd.persistent" */
    char params[160];                 /* "block=256,chunks=4,stages=2,k=0" */
    size_t workspace;                 /* bytes of workspace the call needs */
    unsigned grid;                    /* blocks of the first kernel */
    int nlaunch;                      /* kernels in the chain */
    char kernel[NORMTUNE_MAX_LAUNCH][128]; /* their name expressions */
    int nout;                         /* outputs of the op */
    struct normtune_out_tol {
        char tensor[16];              /* "dw" */
        double tol;                   /* relative L2 error vs float64 the config may
                                         carry (at most its dtype's tolerance) */
    } out[NORMTUNE_MAX_OUTPUTS];
} normtune_choice;

/* ---- the ops ------------------------------------------------------------
 *
 * Every op has three calls, declared with its documentation in the op's
 * own header (kernels/<op>/api.h), which normtune_ops.h gathers in the
 * order of the op registry (kernels/ops.c).  Their arguments follow from
 * the op's table (kernels/<op>/op.c): one pointer per tensor, in the
 * table's order and named as the tensor (const void * for an input, void *
 * for an output; float * for one that is always fp32), and one
 * normtune_dtype <slot>_dtype per dtype slot, in the table's order.
 *
 *   normtune_<op>_workspace_size(M, N, <dtypes>, size_t *bytes)
 *       Bytes of workspace normtune_<op> needs for M rows of N columns in
 *       these dtypes on the current CUDA device (cudaGetDevice): an exact
 *       bound for the config the call will choose there.  Writes *bytes;
 *       returns NORMTUNE_SUCCESS or the error of the arguments (as the call
 *       would), or NORMTUNE_ERROR_CUDA when there is no usable device.
 *
 *   normtune_<op>(<tensors>, M, N, eps, <dtypes>, workspace,
 *                 workspace_bytes, stream)
 *       The op on stream.  Tensors: device pointers, 16-byte aligned; M x N
 *       ones row-major; outputs must not overlap inputs or each other; an
 *       output the op calls optional may be NULL (not written).  workspace:
 *       device memory of at least the bytes normtune_<op>_workspace_size
 *       gives (workspace_bytes says how much there is; NULL only when that
 *       size is 0); its contents on entry do not matter and it is in use
 *       until the work on the stream completes.  N: a multiple of 8 up to
 *       NORMTUNE_MAX_N.  Returns after enqueueing the kernels (asynchronous,
 *       like a kernel launch), NORMTUNE_SUCCESS or an error code; on an
 *       argument error nothing is launched.
 *
 *   normtune_<op>_choice(M, N, <dtypes>, normtune_choice *out)
 *       Fills *out with the configuration normtune_<op> would run.  Returns
 *       as normtune_<op>_workspace_size. */
#include "normtune_ops.h"

/* Provenance of the build: "normtune <version>, dispatch header format 5
 * tuned on <device>: <n> problems, <n> tuned shapes, <n> configs, <n>
 * kernels; families <name>@<source hash> ...".  Static. */
NORMTUNE_API const char *normtune_version(void);

#ifdef __cplusplus
}
#endif

#endif
