/* TEMPORARY (replaced by the helper's op) */
#include <stdlib.h>
#include "kernels/family.h"
static const nt_tensor_def tensors[] = {
    {"x", NT_IN, NT_DIM_M, NT_DIM_N, 0, 0, -2, 2, 0, "input"},
};
static const nt_slot_def slots[] = {{"x", 1u << NT_BF16, NT_BF16, "x"}};
static const nt_family *const fams[] = {NULL};
const nt_op nt_op_rmsnorm_fwd = {"rmsnorm_fwd", "RMSNorm forward", 1, slots, 1, tensors, NULL, NULL, fams, NULL, NULL};
