/* ops.c -- the registry of ops: one line per op.
 *
 * Each op lives in its own folder kernels/<op>/ (device code, families,
 * float64 reference, its tests) and defines `const nt_op nt_op_<op>`.
 * Adding an op means adding its folder and one X(...) line here. */
#include <stddef.h>

#include "kernels/family.h"

#define NT_OPS(X) \
    X(rmsnorm_bwd) \
    X(rmsnorm_fwd)

#define NT_OP_EXTERN(op) extern const nt_op nt_op_##op;
#define NT_OP_ENTRY(op) &nt_op_##op,

NT_OPS(NT_OP_EXTERN)

const nt_op *const nt_ops[] = {NT_OPS(NT_OP_ENTRY) NULL};
