/* nt_args.h -- the one argument every normtune kernel takes, by value.
 *
 * Shared by host C (the tuner, the production library) and device code
 * (the .cuh files of kernels/, compiled by NVRTC and by nvcc), so it holds only plain
 * types with the same layout on both sides.  Every kernel of every family
 * is declared  __global__ void k(nt_args a)  and reads what it needs. */
#ifndef NT_ARGS_H
#define NT_ARGS_H

typedef struct nt_args {
    const void *x;            /* M x N bf16, row-major */
    const void *w;            /* N bf16 */
    const void *dy;           /* M x N bf16 */
    void *dx;                 /* M x N bf16, output */
    void *dw;                 /* N fp32 (or bf16 if dw_bf16), output */
    void *ws;                 /* workspace, plan.workspace bytes, 256-aligned */
    long long M;              /* rows */
    int N;                    /* columns, a multiple of 8 */
    int nparts;               /* partial rows of dw in ws (set by the launcher) */
    float eps;                /* added to the mean square */
    int dw_bf16;              /* 1: write dw as bf16 */
} nt_args;

#endif
