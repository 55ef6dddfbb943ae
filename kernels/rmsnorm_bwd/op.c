/* TEMPORARY port (replaced by the helper's op.c) */
#include <stdlib.h>
#include "kernels/family.h"
#include "kernels/ref.h"
extern const nt_family nt_rmsnorm_bwd_naive, nt_rmsnorm_bwd_persistent;
static const nt_tensor_def tensors[] = {
    {"x", NT_IN, NT_DIM_M, NT_DIM_N, 0, 0, -2, 2, 0, "input"},
    {"w", NT_IN, NT_DIM_1, NT_DIM_N, 1, 0, 0.5, 1.5, 0, "weight"},
    {"dy", NT_IN, NT_DIM_M, NT_DIM_N, 0, 0, -1, 1, 0, "gradient of y"},
    {"dx", NT_OUT, NT_DIM_M, NT_DIM_N, 0, 0, 0, 0, 0, "gradient of x"},
    {"dw", NT_OUT, NT_DIM_1, NT_DIM_N, 2, 0, 0, 0, 0, "gradient of w"},
};
static const nt_slot_def slots[] = {
    {"x", 1u << NT_BF16, NT_BF16, "x, dy, dx"},
    {"w", 1u << NT_BF16, -1, "w"},
    {"dw", 1u << NT_F32, NT_F32, "dw"},
};
static int ref(const nt_problem *p, const void *const *t, double *const *out, double eps, int nth) {
    return nt_ref_rmsnorm_bwd(t[0], t[1], t[2], p->M, p->N, eps, out[3], out[4], nth);
}
static const nt_family *const fams[] = {&nt_rmsnorm_bwd_naive, &nt_rmsnorm_bwd_persistent, NULL};
const nt_op nt_op_rmsnorm_bwd = {"rmsnorm_bwd", "RMSNorm backward", 3, slots, 5, tensors, NULL, ref, fams, "naive", "nsplit=64,partial=f32"};
