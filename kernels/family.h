/* family.h -- kernel families as data: parameters, source, launch plan.
 *
 * A family is a table entry (nt_family): its name, its named parameters,
 * a check that says whether (params, shape, device) can run, a planner that
 * turns them into NVRTC source text and a launch plan, and the minimum number
 * of bytes the op must move (for GB/s).  Adding a family means adding an
 * entry to nt_families[] in family.c; the driver never names a family.
 *
 * Plain C, no CUDA headers: the tuner, the Lua binding, the tests and the
 * production library all include it.  Every external symbol starts nt_. */
#ifndef NT_FAMILY_H
#define NT_FAMILY_H

#include <stddef.h>
#include <stdint.h>

#define NT_MAX_PARAMS 8       /* parameters per family */
#define NT_NAME_LEN 32        /* parameter names and values, with NUL */
#define NT_MAX_LAUNCH 4       /* kernels in one chain */
#define NT_MAX_N 16384        /* largest row length any family supports */

/* A problem shape: M rows of N elements. */
typedef struct nt_shape {
    int64_t M;                /* rows */
    int64_t N;                /* columns (hidden size) */
} nt_shape;

/* One parameter value: the text as written in the script ("256", "f32"). */
typedef struct nt_kv {
    char key[NT_NAME_LEN];
    char val[NT_NAME_LEN];
} nt_kv;

/* A point in a family's parameter space. */
typedef struct nt_params {
    int n;                    /* number of entries in kv */
    nt_kv kv[NT_MAX_PARAMS];
} nt_params;

enum { NT_PARAM_INT = 0, NT_PARAM_STR = 1 };

/* A parameter a family declares. */
typedef struct nt_param_def {
    const char *name;         /* e.g. "block" */
    int kind;                 /* NT_PARAM_INT or NT_PARAM_STR */
    const char *const *choices; /* NULL-terminated allowed strings (STR only) */
    int64_t lo, hi;           /* allowed integer range, inclusive (INT only) */
    const char *doc;          /* one line for --help and docs */
} nt_param_def;

/* What the tuner knows of the device when planning. */
typedef struct nt_devinfo {
    int sms;                  /* multiprocessors */
    int cc_major, cc_minor;   /* compute capability */
    int smem_per_block_optin; /* bytes of shared memory a block may opt in to */
    int smem_per_sm;          /* bytes of shared memory per multiprocessor */
    int max_threads_per_sm;
    int regs_per_sm;
} nt_devinfo;

/* One kernel launch of a chain.  Arguments are fixed per family and listed
 * by the family's argument kinds; the runner binds buffers by role. */
typedef struct nt_launch {
    char name[128];           /* name expression for NVRTC, e.g. "nt_persist<256,2,2>" */
    unsigned grid;            /* blocks (1-D); 0 = as many as fit (persistent) */
    unsigned grid_y;          /* second grid dimension, 1 if unused */
    unsigned block;           /* threads per block */
    unsigned smem;            /* dynamic shared memory bytes */
    int blocks_per_sm;        /* for grid == 0: blocks per SM, 0 = as many as fit */
    int pdl;                  /* 1 = may launch early (programmatic dependent launch) */
} nt_launch;

/* A launch plan: the kernels to run in order and the workspace they need. */
typedef struct nt_plan {
    int nlaunch;
    nt_launch l[NT_MAX_LAUNCH];
    size_t workspace;         /* bytes of scratch the chain needs (upper bound) */
    int nparts;               /* dw partial rows: 0 = the grid of launch 0 */
    double tol_dx, tol_dw;    /* relative L2 error allowed vs float64 */
} nt_plan;

/* The relative L2 error vs float64 an output of each dtype may carry.  An
 * output's precision is part of what the user asked for: a bf16 result
 * carries a rounding error of about 2^-9 / sqrt(3) = 1.1e-3 relative RMS
 * (1.7e-3 measured for dx), an fp32 sum of up to 65536 rows stays near
 * 1e-6 (at most 2.4e-7 measured on the H200).  A config whose plan allows
 * more than NT_TOL_F32 for an fp32 output (dw through bf16 partials) is
 * never exported, nor chosen by the library, for that output. */
#define NT_TOL_BF16 1e-2
#define NT_TOL_F32 1e-5

/* A family descriptor.  All functions return 0 on success, else -1 with a
 * message in err (size errlen). */
typedef struct nt_family {
    const char *name;         /* "rmsnorm_bwd.persistent" */
    const char *op;           /* "rmsnorm_bwd" */
    const char *doc;          /* one line */
    int nparams;
    const nt_param_def *params;
    /* Can these params run this shape on this device (dev may be NULL: check
     * only what does not depend on the device)?  0 yes, -1 no with reason. */
    int (*check)(const nt_params *p, const nt_shape *s, const nt_devinfo *dev,
                 char *err, size_t errlen);
    /* Fill plan for (params, shape, device).  dev may be NULL for compile-only
     * use, in which case grids are left as 0. */
    int (*plan)(const nt_params *p, const nt_shape *s, const nt_devinfo *dev,
                nt_plan *plan, char *err, size_t errlen);
    /* The header NVRTC compiles for this family ("rmsnorm_bwd/kernels.cuh"). */
    const char *source;
    /* Minimum bytes moved through device memory by the op. */
    double (*min_bytes)(const nt_shape *s);
} nt_family;

extern const nt_family *const nt_families[]; /* NULL-terminated */

/* Look up a family by full name ("rmsnorm_bwd.persistent"); NULL if none. */
const nt_family *nt_family_find(const char *name);

/* Look up a family by op and short name ("rmsnorm_bwd", "persistent"). */
const nt_family *nt_family_find2(const char *op, const char *shortname);

/* Parameter helpers.  nt_params_get returns the value text or NULL;
 * nt_params_int parses an integer value (returns 0 and sets *ok = 0 when
 * missing or not an integer). */
const char *nt_params_get(const nt_params *p, const char *key);
int64_t nt_params_int(const nt_params *p, const char *key, int *ok);
int nt_params_set(nt_params *p, const char *key, const char *val);

/* Canonical text of params: "key=val,key=val" with keys in the family's
 * declared order.  Returns 0, or -1 if buf is too small. */
int nt_params_canon(const nt_family *f, const nt_params *p, char *buf, size_t len);

/* Parse canonical text back into params.  Returns 0 or -1. */
int nt_params_parse(const char *text, nt_params *p);

/* Validate params against the family's declaration: every declared param
 * present, no unknown key, values within range/choices.  0 or -1 + message. */
int nt_params_validate(const nt_family *f, const nt_params *p, char *err, size_t errlen);

/* The device sources every family compiles (nt_args.h and the .cuh files of kernels/),
 * embedded at build time: names ("rmsnorm_bwd/kernels.cuh"), texts, and one hash
 * over all of them (16 hex digits, FNV-1a 64 of name, NUL, text per file),
 * the "kernel source hash" stored with results and checked by the library. */
extern const char *const nt_kernel_names[];
extern const char *const nt_kernel_texts[];
extern const int nt_kernel_count;
extern const char nt_kernel_hash[];

/* FNV-1a 64-bit hash of bytes, continuing from h (start with NT_FNV_INIT). */
#define NT_FNV_INIT 0xcbf29ce484222325ULL
uint64_t nt_fnv1a(uint64_t h, const void *data, size_t n);

#endif
