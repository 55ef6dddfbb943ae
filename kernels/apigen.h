/* apigen.h -- the production library's entry points of an op, from the
 * op's table.
 *
 * Every op of the registry has three C calls in the public header, whose
 * argument lists follow from its table (nt_op):
 *
 *   normtune_<op>(<tensors>, long long M, long long N, float eps, <dtypes>,
 *                 void *workspace, size_t workspace_bytes,
 *                 struct CUstream_st *stream)
 *   normtune_<op>_workspace_size(long long M, long long N, <dtypes>,
 *                                size_t *bytes)
 *   normtune_<op>_choice(long long M, long long N, <dtypes>,
 *                        normtune_choice *out)
 *
 * <tensors>: one pointer per tensor, in the table's order, named as the
 * tensor: const void * for an input, void * for an output (const float *
 * and float * for a tensor whose dtype is always fp32); <dtypes>: one
 * normtune_dtype <slot>_dtype per dtype slot, in the table's order.
 *
 * An op's prototypes and their documentation are written by hand in
 * kernels/<op>/api.h.  This module writes what follows from the tables:
 * the prototypes (nt_api_check compares an api.h with them), the public
 * normtune_ops.h (every op's api.h, checked, in the registry's order), the
 * library's definitions of the calls (normtune.cu includes them) and a
 * table of every op's calls behind one signature, for tests and
 * benchmarks.  Compiled with NT_APIGEN_MAIN it is the build tool `apigen`
 * that make lib runs (see the end of apigen.c).
 *
 * Plain C; every function returns 0, or -1 with a message in err. */
#ifndef NT_APIGEN_H
#define NT_APIGEN_H

#include <stddef.h>
#include <stdio.h>

#include "kernels/family.h"

/* The three calls of an op. */
enum { NT_API_RUN = 0, NT_API_WORKSPACE = 1, NT_API_CHOICE = 2, NT_API_NCALLS = 3 };

/* The prototype of call `which` of op, on one line without NORMTUNE_API or
 * the semicolon: "normtune_status normtune_rmsnorm_fwd(const void *x, ...)". */
int nt_api_proto(const nt_op *op, int which, char *buf, size_t len, char *err, size_t errlen);

/* Check header text `text` (an op's api.h; name says where it is from, in
 * messages): it declares op's three calls, each with the prototype the
 * table gives (spacing aside), and no other NORMTUNE_API function. */
int nt_api_check(const nt_op *op, const char *text, const char *name, char *err,
                 size_t errlen);

/* The names of the NORMTUNE_API functions text declares (comments and
 * preprocessor lines skipped), in order, into names[] (at most max, each
 * at most NT_API_NAME bytes); *n gets how many. */
#define NT_API_NAME 96
int nt_api_names(const char *text, char (*names)[NT_API_NAME], int max, int *n, char *err,
                 size_t errlen);

/* Write normtune_ops.h: every registered op's kernels/<op>/api.h (read
 * from dir kdir), checked with nt_api_check, in the registry's order. */
int nt_api_write_header(FILE *out, const char *kdir, char *err, size_t errlen);

/* Write the library's definitions of every op's calls (C++, for
 * normtune.cu: each binds its arguments to the op's table and calls
 * lib_run, lib_wsize or lib_describe). */
int nt_api_write_lib(FILE *out, char *err, size_t errlen);

/* Write nt_api_calls.h (C): nt_api_calls[], one row per op of the
 * registry, each call of the op behind one signature (tensors t[] in the
 * table's order, dtypes dt[] in slot order), ending with a NULL op. */
int nt_api_write_calls(FILE *out, char *err, size_t errlen);

#endif
