/* rmsnorm_fwd/tensors.h -- the RMSNorm forward op's tensor and dtype-slot
 * indices, shared by the C descriptor (op.c, families.c) and the device
 * code (*.cuh): nt_args.t[NT_FWD_X] is x, and so on.  Plain C enums
 * only, so that C and NVRTC/nvcc read the same text. */
#ifndef NT_RMSNORM_FWD_TENSORS_H
#define NT_RMSNORM_FWD_TENSORS_H

/* Tensors, in nt_args.t[] order (and the order of the op's table). */
enum {
    NT_FWD_X = 0,             /* in:  M x N, dtype of slot x */
    NT_FWD_W = 1,             /* in:  1 x N, dtype of slot w */
    NT_FWD_Y = 2,             /* out: M x N, dtype of slot x */
    NT_FWD_RSTD = 3,          /* out: M x 1, fp32, optional (may be NULL) */
    NT_FWD_NTENSORS = 4
};

/* Dtype slots of a problem (nt_problem.dtype[]). */
enum {
    NT_FWD_SX = 0,            /* x and y */
    NT_FWD_SW = 1,            /* w: x's dtype or f32 */
    NT_FWD_NSLOTS = 2
};

#endif
