/* rmsnorm_bwd/api.h -- the library's calls for RMSNorm backward, part of
 * the public header (normtune.h includes it through normtune_ops.h, which
 * the build gathers from every op's api.h; it is not meant to be included
 * on its own).  What the three calls of an op share -- workspace, stream,
 * alignment, errors -- is said once in normtune.h; the argument lists
 * follow from the op's table (op.c), which a test compares them with. */
#ifndef NORMTUNE_RMSNORM_BWD_API_H
#define NORMTUNE_RMSNORM_BWD_API_H

/* ---- RMSNorm backward ------------------------------------------------- */

/* Bytes of workspace normtune_rmsnorm_bwd needs (normtune.h:
 * normtune_<op>_workspace_size). */
NORMTUNE_API normtune_status normtune_rmsnorm_bwd_workspace_size(long long M, long long N,
                                                                 normtune_dtype x_dtype,
                                                                 normtune_dtype w_dtype,
                                                                 normtune_dtype dw_dtype,
                                                                 size_t *bytes);

/* RMSNorm backward on stream: for each row i of M,
 *   r_i = 1 / sqrt(mean_j x_ij^2 + eps)
 *   dx_ij = r_i w_j dy_ij - x_ij r_i^3 mean_k(w_k dy_ik x_ik)
 *   dw_j = sum_i dy_ij x_ij r_i
 * x, dy, dx: M x N of x_dtype, row-major; w: N of w_dtype; dw: N of
 * dw_dtype (x_dtype bf16, fp16 or fp32; w_dtype x_dtype or fp32; dw_dtype
 * fp32 or w_dtype).  The rest as normtune.h says of normtune_<op>. */
NORMTUNE_API normtune_status normtune_rmsnorm_bwd(const void *x, const void *w, const void *dy,
                                                  void *dx, void *dw, long long M, long long N,
                                                  float eps, normtune_dtype x_dtype,
                                                  normtune_dtype w_dtype,
                                                  normtune_dtype dw_dtype, void *workspace,
                                                  size_t workspace_bytes,
                                                  struct CUstream_st *stream);

/* Fill *out with the configuration normtune_rmsnorm_bwd would run. */
NORMTUNE_API normtune_status normtune_rmsnorm_bwd_choice(long long M, long long N,
                                                         normtune_dtype x_dtype,
                                                         normtune_dtype w_dtype,
                                                         normtune_dtype dw_dtype,
                                                         normtune_choice *out);

#endif
