/* rmsnorm_bwd/tensors.h -- the tensors and dtype slots of RMSNorm backward,
 * by index.
 *
 * One list for the C descriptor (op.c: the order of nt_op.tensors[] and
 * nt_op.slots[]) and the device code (*.cuh: nt_args.t[] by the same
 * indices), so the two cannot disagree.  Plain C, nothing but enums: it is
 * included by C files, by nvcc and by NVRTC (by its name
 * "rmsnorm_bwd/tensors.h", part of the families' source hash). */
#ifndef NT_RMSNORM_BWD_TENSORS_H
#define NT_RMSNORM_BWD_TENSORS_H

/* Tensors in nt_args.t[] order. */
enum {
    NT_BWD_X = 0,             /* in:  M x N, dtype slot x */
    NT_BWD_W = 1,             /* in:  1 x N, dtype slot w */
    NT_BWD_DY = 2,            /* in:  M x N, dtype slot x */
    NT_BWD_DX = 3,            /* out: M x N, dtype slot x */
    NT_BWD_DW = 4,            /* out: 1 x N, dtype slot dw */
    NT_BWD_NTENSORS = 5
};

/* Dtype slots in nt_problem.dtype[] order. */
enum {
    NT_BWD_SX = 0,            /* x, dy and dx */
    NT_BWD_SW = 1,            /* w */
    NT_BWD_SDW = 2,           /* dw */
    NT_BWD_NSLOTS = 3
};

#endif
