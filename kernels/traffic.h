/* traffic.h -- what the runner's yardstick kernels (nt_traffic and
 * nt_traffic_nc, kernels/check.cuh) read from the descriptor the runner
 * uploads (tuner/runner.c, measure_traffic).  Shared by host C and NVRTC's
 * device code, so plain types only. */
#ifndef NT_TRAFFIC_H
#define NT_TRAFFIC_H

typedef struct nt_traffic_desc {
    long long row16[8];       /* 16-byte vectors per row of each tensor
                                 (0: not touched) */
    int out[8];               /* 1: written, 0: read */
} nt_traffic_desc;

#define NT_TRAFFIC_B 256       /* threads a block: flat; at most, by rows */
#define NT_TRAFFIC_U 4         /* vectors per thread and tensor in one step */

#endif
