/* nt_args.h -- the one argument every normtune kernel takes, by value.
 *
 * Shared by host C (the tuner, the production library) and device code
 * (the .cuh files of kernels/, compiled by NVRTC and by nvcc), so it holds
 * only plain types with the same layout on both sides.  Every kernel of
 * every family is declared  __global__ void k(nt_args a)  and reads what it
 * needs.  Tensors are bound by the op's tensor order: t[i] is tensor i of
 * the op's table (kernels/<op>/tensors.h names the indices for both the C
 * descriptor and the device code). */
#ifndef NT_ARGS_H
#define NT_ARGS_H

#define NT_MAX_TENSORS 8      /* tensors of one op, inputs and outputs */

typedef struct nt_args {
    void *t[NT_MAX_TENSORS];  /* device pointers by tensor index (inputs are
                                 only read); NULL for an output the caller
                                 does not want, where the op allows it */
    void *ws;                 /* workspace, plan.workspace bytes, 256-aligned */
    long long M;              /* rows */
    int N;                    /* columns, a multiple of 8 */
    int nparts;               /* partial rows in ws (set by the launcher) */
    float eps;                /* added to the mean square */
} nt_args;

#endif
