/* rmsnorm_fwd/api.h -- the library's calls for RMSNorm forward, part of
 * the public header (normtune.h includes it through normtune_ops.h, which
 * the build gathers from every op's api.h; it is not meant to be included
 * on its own).  What the three calls of an op share -- workspace, stream,
 * alignment, errors -- is said once in normtune.h; the argument lists
 * follow from the op's table (op.c), which a test compares them with. */
#ifndef NORMTUNE_RMSNORM_FWD_API_H
#define NORMTUNE_RMSNORM_FWD_API_H

/* ---- RMSNorm forward -------------------------------------------------- */

/* Bytes of workspace normtune_rmsnorm_fwd needs, often 0 (normtune.h:
 * normtune_<op>_workspace_size). */
NORMTUNE_API normtune_status normtune_rmsnorm_fwd_workspace_size(long long M, long long N,
                                                                 normtune_dtype x_dtype,
                                                                 normtune_dtype w_dtype,
                                                                 size_t *bytes);

/* RMSNorm forward on stream: for each row i of M,
 *   rstd_i = 1 / sqrt(mean_j x_ij^2 + eps),   y_ij = x_ij rstd_i w_j
 * x, y: M x N of x_dtype (bf16, fp16 or fp32); w: N of w_dtype (x_dtype or
 * fp32); rstd: M floats, or NULL when not wanted.  The rest as normtune.h
 * says of normtune_<op>. */
NORMTUNE_API normtune_status normtune_rmsnorm_fwd(const void *x, const void *w, void *y,
                                                  float *rstd, long long M, long long N,
                                                  float eps, normtune_dtype x_dtype,
                                                  normtune_dtype w_dtype, void *workspace,
                                                  size_t workspace_bytes,
                                                  struct CUstream_st *stream);

/* Fill *out with the configuration normtune_rmsnorm_fwd would run. */
NORMTUNE_API normtune_status normtune_rmsnorm_fwd_choice(long long M, long long N,
                                                         normtune_dtype x_dtype,
                                                         normtune_dtype w_dtype,
                                                         normtune_choice *out);

#endif
