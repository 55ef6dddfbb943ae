/* family.h -- dtypes, ops, problems and kernel families as data.
 *
 * An op (nt_op) is a table of tensors by role, dtype slots, a float64
 * reference and its families; a problem (nt_problem) is an op with its
 * dtypes and a shape M x N.  A family (nt_family) is a table entry: its
 * name, its named parameters, a check that says whether (params, problem,
 * device) can run, a planner that turns them into NVRTC name expressions
 * and a launch plan, and the sources its kernels are built from.  Each op
 * lives in its own folder kernels/<op>/; adding one means adding the folder
 * and one line to nt_ops[] in kernels/ops.c.  The driver never names an op,
 * a tensor or a family.
 *
 * Plain C, no CUDA headers: the tuner, the Lua binding, the tests and the
 * production library all include it.  Every external symbol starts nt_. */
#ifndef NT_FAMILY_H
#define NT_FAMILY_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/nt_args.h"

#define NT_MAX_PARAMS 8       /* parameters per family */
#define NT_NAME_LEN 32        /* parameter names and values, with NUL */
#define NT_MAX_LAUNCH 4       /* kernels in one chain */
#define NT_MAX_N 65536        /* largest row length an op serves (its fallback: every N) */
#define NT_MAX_M 2147483647LL /* most rows of a problem (2^31 - 1: a grid of one
                                 block per row; M * NT_MAX_N * 8 fits 64 bits) */

/* A shape: M rows of N elements (a sweep's shapes; a problem adds the op
 * and the dtypes). */
typedef struct nt_shape {
    int64_t M;                /* rows */
    int64_t N;                /* columns (hidden size) */
} nt_shape;

/* ---- dtypes -------------------------------------------------------------
 * The element types of tensors.  Kernels are templated on the device type
 * named by ctype (kernels/common.cuh defines nt_bf16 and nt_f16; fp32 is
 * float).  tol is the relative L2 error vs float64 an output of this dtype
 * may carry: its rounding alone is 2^-p / sqrt(3) relative RMS (bf16, p = 9:
 * 1.1e-3, 1.7e-3 measured for dx; fp16, p = 12: 1.4e-4; fp32 sums of up to
 * 65536 rows stay near 1e-6, at most 2.4e-7 measured on the H200).  An
 * output's precision is part of what the user asked for: a config whose
 * plan allows more error for an output than its dtype's tol is never
 * exported, nor chosen by the library, for that dtype. */
typedef enum nt_dtype { NT_BF16 = 0, NT_F16 = 1, NT_F32 = 2, NT_NDTYPES } nt_dtype;

typedef struct nt_dtype_info {
    const char *name;         /* "bf16", "f16", "f32" (scripts, database, header) */
    const char *ctype;        /* device type of the kernels' templates */
    int size;                 /* bytes per element */
    double tol;               /* relative L2 error an output may carry */
} nt_dtype_info;

extern const nt_dtype_info nt_dtypes[NT_NDTYPES];
#define NT_TOL_BF16 1e-2
#define NT_TOL_F16 2e-3
#define NT_TOL_F32 1e-5

/* The dtype called name, or -1. */
int nt_dtype_parse(const char *name);

/* ---- ops and problems -----------------------------------------------------
 * An op (rmsnorm_bwd, rmsnorm_fwd) describes its tensors by role, the
 * dtypes a problem chooses (slots), a float64 reference and its families.
 * A problem is (op, dtypes, M, N).  The driver, runner, store, Lua binding
 * and export handle problems and named tensors only; nothing outside
 * kernels/<op>/ names an op's tensors. */
#define NT_MAX_SLOTS 4        /* dtype choices of one op */

enum { NT_IN = 0, NT_OUT = 1 };          /* tensor roles */
enum { NT_DIM_M = 0, NT_DIM_N = 1, NT_DIM_1 = 2 }; /* extents: M, N or 1 */

/* One tensor of an op: rows x cols elements of its dtype, row-major. */
typedef struct nt_tensor_def {
    const char *name;         /* "x", "dw" (error rows, messages) */
    int role;                 /* NT_IN or NT_OUT */
    int rows, cols;           /* NT_DIM_M or NT_DIM_1, NT_DIM_N or NT_DIM_1 */
    int slot;                 /* dtype: the problem's dtype[slot], or -1 */
    int fixed;                /* the dtype when slot < 0 (rstd: NT_F32) */
    double lo, hi;            /* inputs: filled uniform in [lo, hi) */
    int optional;             /* outputs: the library may be passed NULL */
    const char *doc;
} nt_tensor_def;

/* One dtype choice of an op: which dtypes it may take, and its default. */
typedef struct nt_slot_def {
    const char *name;         /* "x" (the dtype of x, dy, dx), "w", "dw" */
    unsigned allowed;         /* bit d set: dtype d allowed */
    int def;                  /* default dtype; -1: the dtype of slot 0
                                 (w defaults to the activation dtype) */
    const char *doc;
} nt_slot_def;

struct nt_op;
struct nt_family;

typedef struct nt_problem {
    const struct nt_op *op;
    int dtype[NT_MAX_SLOTS];  /* by the op's slots */
    int64_t M;                /* rows */
    int64_t N;                /* columns (hidden size) */
} nt_problem;

typedef struct nt_op {
    const char *name;         /* "rmsnorm_bwd" */
    const char *doc;          /* one line */
    int nslots;
    const nt_slot_def *slots;
    int ntensors;
    const nt_tensor_def *tensors; /* in nt_args.t[] order */
    /* Dtype combinations and shapes the op supports: 0, or -1 with why. */
    int (*check)(const nt_problem *p, char *err, size_t errlen);
    /* The float64 reference on the host: t[i] holds input i in its dtype
     * (bits as the kernels read them; NULL for outputs), out[i] receives
     * output i as double (NULL for inputs).  nthreads <= 0: the online
     * CPUs; the result must not depend on it.  0, or -1 when memory or
     * threads cannot be had. */
    int (*ref)(const nt_problem *p, const void *const *t, double *const *out, double eps,
               int nthreads);
    const struct nt_family *const *families; /* NULL-terminated */
    /* The config the production library runs where no tuned config can,
     * for the dtypes of problem p: returns a family of the op and writes
     * its canonical params into params.  It must run every problem with
     * those dtypes (M >= 1, N a multiple of 8 up to NT_MAX_N) at their
     * precision; the ops' tests check it.  NULL when p's dtypes are not
     * the op's. */
    const struct nt_family *(*fallback)(const nt_problem *p, char *params, size_t len);
    /* The float64 reference on the device (kernels/dref.h), which the
     * runner checks against ref: the embedded name of its source
     * ("rmsnorm_bwd/dref.cuh") and its kernels in launch order, each
     * __global__ void k(nt_dref_args), NULL-terminated (at most
     * NT_MAX_LAUNCH). */
    const char *dref;
    const char *const *dref_kernels;
    /* 1: where a shape is not tuned, the production library's lookup
     * prefers tuned N whose rows start in their 128-byte lines as the
     * asked rows do (the export's normtune_problem_lines[], nonzero only
     * for such ops; docs/dispatch-header.md).  Set where it was measured
     * to help (data/lines-h200/). */
    int row_lines;
} nt_op;

extern const nt_op *const nt_ops[];        /* NULL-terminated (kernels/ops.c) */

/* The op called name, or NULL. */
const nt_op *nt_op_find(const char *name);

/* The dtype of tensor i of problem p. */
int nt_tensor_dtype(const nt_problem *p, int i);

/* Elements of tensor i of problem p (rows x cols). */
int64_t nt_tensor_elems(const nt_problem *p, int i);

/* Minimum bytes the op moves through device memory: every tensor once. */
double nt_problem_bytes(const nt_problem *p);

/* A problem of op with its default dtypes and M x N. */
void nt_problem_init(nt_problem *p, const nt_op *op, int64_t M, int64_t N);

/* Canonical text of p's dtypes, "x=bf16,w=f32,dw=f32" in slot order; and
 * back (slots not named take their default, after the named ones: a slot
 * whose default follows slot 0 takes slot 0's dtype; unknown slot or dtype
 * names, or a dtype a slot does not allow, are -1 with a message).  0 or
 * -1. */
int nt_dtypes_canon(const nt_problem *p, char *buf, size_t len);
int nt_dtypes_parse(nt_problem *p, const char *text, char *err, size_t errlen);

/* A refusal's message: snprintf(err, errlen, fmt, ...) where errlen > 0;
 * nothing at all (not even the formatting) where errlen is 0, as a caller
 * that only asks whether a shape runs passes (the export plans every
 * config at every N).  snprintf's return value, 0 when errlen is 0.
 * Every check() and plan() of kernels/ writes its messages through it. */
int nt_why(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Validate p: its dtypes allowed by the slots, then the op's check, with
 * the shape rules every op shares (M in [1, NT_MAX_M], N a multiple of 8
 * in [8, NT_MAX_N]).  0, or -1 with a message. */
int nt_problem_check(const nt_problem *p, char *err, size_t errlen);

/* One parameter value: the text as written in the script ("256", "f32"),
 * and, where the text is an integer, its value (parsed once by
 * nt_params_set: the families' check() and plan() read their integers
 * for every N an export plans a config at). */
typedef struct nt_kv {
    char key[NT_NAME_LEN];
    char val[NT_NAME_LEN];
    int64_t ival;             /* val as strtoll reads it, when isint */
    int isint;                /* val is a whole integer */
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
    unsigned grid_rows;       /* for grid == 0: rows one block takes per step; the
                                 grid is at most ceil(M / grid_rows) (0 = 1) */
    int pdl;                  /* 1 = may launch early (programmatic dependent launch) */
    unsigned cluster;         /* blocks per thread block cluster (along x; grid a
                                 multiple of it), 0 or 1 = no cluster */
    int coop;                 /* 1 = a cooperative launch: every block resident at
                                 once (a grid barrier), or the launch fails */
} nt_launch;

/* A launch plan: the kernels to run in order and the workspace they need. */
typedef struct nt_plan {
    int nlaunch;
    nt_launch l[NT_MAX_LAUNCH];
    size_t workspace;         /* bytes of scratch the chain needs (upper bound) */
    int nparts;               /* partial rows in ws: 0 = one per block, or cluster, of launch 0 */
    double tol[NT_MAX_TENSORS]; /* per output: the relative L2 error vs float64
                                 the chain may carry; 0 = its dtype's tol
                                 (more than that: not eligible for it) */
} nt_plan;

/* The tolerance output i of problem p is checked against under plan pl:
 * pl->tol[i], or the dtype's when 0. */
double nt_plan_tol(const nt_plan *pl, const nt_problem *p, int i);

/* 1 when every output of p is as precise under pl as its dtype asks. */
int nt_plan_precise(const nt_plan *pl, const nt_problem *p);

/* A family descriptor.  All functions return 0 on success, else -1 with a
 * message in err (size errlen). */
typedef struct nt_family {
    const char *name;         /* "rmsnorm_bwd.persistent" */
    const nt_op *op;
    const char *doc;          /* one line */
    int nparams;
    const nt_param_def *params;
    /* Can these params run this problem on this device (dev may be NULL:
     * check only what does not depend on the device)?  The problem itself
     * has passed nt_problem_check.  0 yes, -1 no with reason. */
    int (*check)(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                 char *err, size_t errlen);
    /* Fill plan for (params, problem, device).  dev may be NULL for
     * compile-only use, in which case grids are left as 0. */
    int (*plan)(const nt_params *p, const nt_problem *pr, const nt_devinfo *dev,
                nt_plan *plan, char *err, size_t errlen);
    /* The embedded sources the family's kernels are built from, NULL-
     * terminated, the one NVRTC includes last ({"nt_args.h", "common.cuh",
     * "rmsnorm_bwd/row.cuh", ..., "rmsnorm_bwd/naive.cuh", NULL}: by
     * convention the last is <op>/<family>.cuh): the family's source hash covers
     * exactly these, so changing one family re-measures only it. */
    const char *const *sources;
    /* The family that runs this one's configs on rows longer than those
     * they were tuned at, with the same parameters (the export's stretch,
     * tuner/export.c); NULL: this family itself. */
    const struct nt_family *grown;
    /* 1: its configs are not sized to a row length (a row walked in tiles,
     * a block a row of any length, or column tiles over every row), so one
     * config runs rows far longer or shorter than those it was tuned at;
     * the dispatch lookup offers such a family's tuned entries at their
     * own N only (the entries' own_n, tuner/export.c), where it would
     * otherwise catch every row that the configs of nearer N cannot run,
     * at any M.  0: its configs cover about the rows they were tuned at. */
    int own_n;
} nt_family;

/* Families of every op, in op then family order (NULL-terminated); filled
 * from nt_ops[] on first use. */
const nt_family *const *nt_all_families(void);

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

/* The device sources families compile (nt_args.h, common.cuh and the
 * .cuh and tensors.h files of each op), embedded at build time: names
 * relative to kernels/ ("rmsnorm_bwd/naive.cuh") and texts.  Linked into the tuner,
 * not into the production library. */
extern const char *const nt_kernel_names[];
extern const char *const nt_kernel_texts[];
extern const int nt_kernel_count;

/* A family's source hash: 16 hex digits of FNV-1a 64 over name, NUL, text
 * of each of its sources in order, into buf[17].  The hash stored with
 * each result and checked by the library build.  0, or -1 when a source
 * is not embedded. */
int nt_family_hash(const nt_family *f, char buf[17]);

/* FNV-1a 64-bit hash of bytes, continuing from h (start with NT_FNV_INIT). */
#define NT_FNV_INIT 0xcbf29ce484222325ULL
uint64_t nt_fnv1a(uint64_t h, const void *data, size_t n);

#endif
