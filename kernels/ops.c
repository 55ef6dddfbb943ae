/* ops.c -- the registry of ops: one line per op.
 *
 * Each op lives in its own folder kernels/<op>/ (device code, families,
 * float64 reference, its tests, its library calls in api.h) and defines
 * `const nt_op nt_op_<op>`.  Adding an op means adding its folder, its
 * sweep script lua/sweeps/<op>.lua and one X(...) line here: the tuner,
 * the library's calls (kernels/apigen.c), the tests and make tune's
 * default sweeps all follow from this list or the folders. */
#include <stddef.h>

#include "kernels/family.h"

#define NT_OPS(X) \
    X(rmsnorm_bwd) \
    X(rmsnorm_fwd)

#define NT_OP_EXTERN(op) extern const nt_op nt_op_##op;
#define NT_OP_ENTRY(op) &nt_op_##op,

NT_OPS(NT_OP_EXTERN)

const nt_op *const nt_ops[] = {NT_OPS(NT_OP_ENTRY) NULL};
