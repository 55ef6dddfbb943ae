/* rmsnorm_bwd/plan.h -- what the RMSNorm backward families' planners
 * share (plan.c): name expressions on the problem's dtypes, chunk sizes and
 * the final column sum that every chain ends with.  Each family's table
 * entry lives in a file of its own (families.c: naive and persistent;
 * warp.c ...). */
#ifndef NT_RMSNORM_BWD_PLAN_H
#define NT_RMSNORM_BWD_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/family.h"

#define NT_BWD_ALIGN256(x) (((x) + 255) & ~(size_t)255)

/* ceil(a / b) for the grid sizes of a plan. */
unsigned nt_bwd_cdiv(int64_t a, int64_t b);

/* Elements of one 16-byte chunk of p's activation (8 for bf16 and f16, 4
 * for f32). */
int nt_bwd_chunk_elems(const nt_problem *p);

/* The name expression "kernel<TX, TW, TDW, rest>" of p into buf: the
 * dtypes' ctypes, then the family's integers (rest).  0, or -1 with a
 * message if it does not fit. */
int nt_bwd_kname(char *buf, size_t len, const char *kernel, const nt_problem *p, const char *rest,
                 char *err, size_t errlen);

/* The name expression of launch l: kernel<TX, TW, TDW, then the integer
 * parameters of family f in their declared order, from p> (the kernels of
 * persistent, warp, cluster, loop and fused take exactly those).  0, or -1
 * with a message. */
int nt_bwd_kname_params(nt_launch *l, const char *kernel, const nt_problem *pr,
                        const nt_family *f, const nt_params *p, char *err, size_t errlen);

/* Whether `slots` chunks of a row (what: how they are counted, such as
 * "block*chunks") cover p's N.  0, or -1 with "N=... exceeds what*E = ..."
 * in err. */
int nt_bwd_covers(const nt_problem *p, int64_t slots, const char *what, char *err,
                  size_t errlen);

/* Whether a block of `block` threads with smem bytes of shared memory fits
 * dev (its opt-in limit per block), and k of them one SM (k = 0: no such
 * requirement).  0, or -1 with why in err. */
int nt_bwd_fits_sm(const nt_devinfo *dev, int64_t block, int64_t k, unsigned smem, char *err,
                   size_t errlen);

/* Whether `need` registers a thread (set by what = value, such as
 * "chunks" = 4) fit what __launch_bounds__(block + extra, max(k, 1))
 * leaves a thread (extra: threads a family launches beyond `block`).  0,
 * or -1 with "... it would spill" in err. */
int nt_bwd_fits_regs(int64_t need, const char *what, int64_t value, int64_t block, int64_t extra,
                     int64_t k, char *err, size_t errlen);

/* Whether dev (NULL: not asked yet) has compute capability 9.0 or newer,
 * which family fam needs for `what`.  0, or -1 with why in err. */
int nt_bwd_sm90(const nt_devinfo *dev, const char *fam, const char *what, char *err,
                size_t errlen);

/* The final column sum into dw: "nt_colsum_final<TDW, where>" (where the
 * fp32 partial rows start in ws: 0 at ws, 1/2 after an M x N bf16/f32
 * partial), as launch l. */
void nt_bwd_final_launch(const nt_problem *p, int where, nt_launch *l);

/* The rest of a 2-kernel persistent chain once launch 0's name and shared
 * memory are set: launch 0 with a grid the launcher sizes (k blocks per SM
 * of `block` threads, 0 = as many as fit; at most one block per step of
 * step_rows rows, 1 = a row), then the final column sum over the grid's
 * fp32 partial rows; with dev, a workspace for the largest such grid. */
void nt_bwd_persistent_chain(const nt_problem *p, const nt_devinfo *dev, int64_t block, int64_t k,
                             int64_t step_rows, nt_plan *pl);

/* The rest of a 2-kernel cluster chain (cluster, cstage) once launch 0's
 * name and shared memory are set: launch 0 in clusters of `cluster`
 * blocks of `block` threads with a grid the launcher sizes (k blocks per
 * SM, 0 = as many clusters as can be resident; at most M clusters), then
 * the final column sum over one fp32 partial row per cluster; with dev, a
 * workspace for the largest such grid. */
void nt_bwd_cluster_chain(const nt_problem *p, const nt_devinfo *dev, int64_t cluster,
                          int64_t block, int64_t k, nt_plan *pl);

/* Registers a thread may have under __launch_bounds__(block, max(k, 1)):
 * 65536 / (k block) in steps of 8, at most 255 (what ptxas bounds with on
 * sm_90). */
#define NT_BWD_REGS_PER_SM 65536
#define NT_BWD_REG_MAX 255
int64_t nt_bwd_reg_limit(int64_t block, int64_t k);

#endif
