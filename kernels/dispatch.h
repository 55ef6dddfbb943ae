/* dispatch.h -- the dispatch core: from a dispatch header's tables to a
 * runnable plan, the same code in the production library and in the CPU
 * drift test.
 *
 * A dispatch header (format 5, docs/dispatch-header.md, written by
 * `normtune export`) lists families (name, source hash), problems (op,
 * dtypes, fallback config), configs (family, dtypes, params and the kernel
 * ids they may launch) and kernels (NVRTC name expressions).  This header
 * gives those tables one C shape, nt_dispatch, filled from an included
 * dispatch header by NT_DISPATCH_DEFINE, and the one function that turns
 * (config, problem, device) into a plan whose every launch is a kernel of
 * that config: nt_dispatch_try.  It names no op, tensor, family or kernel:
 * families are found by name in the registry (kernels/ops.c) and plan()
 * writes the names.  A config is refused -- never silently replaced by
 * another kernel -- when its family is unknown or of another op, its dtypes
 * are not the problem's, its params do not validate, the family's check or
 * plan refuses the problem, the plan is less precise than the problem's
 * output dtypes ask (nt_plan_precise), or a launch names a kernel that is
 * not in the config's list.
 *
 * Plain C, no CUDA: the library (kernels/normtune.cu) maps kernel ids to
 * the functions nvcc instantiated from the header's NORMTUNE_KERNELS
 * X-macro; tests/test_dispatch.c runs it with dev == NULL. */
#ifndef NT_DISPATCH_H
#define NT_DISPATCH_H

#include <stddef.h>

#include "kernels/family.h"

/* A family the header uses: its full name and the source hash its results
 * were measured with. */
typedef struct nt_dispatch_family {
    const char *name;         /* "rmsnorm_bwd.persistent" */
    const char *hash;         /* 16 hex digits (nt_family_hash) */
} nt_dispatch_family;

/* A problem the header serves: an op with one dtype combination. */
typedef struct nt_dispatch_problem {
    const char *op;           /* op name */
    const char *dtypes;       /* canonical dtypes (nt_dtypes_canon) */
    int fallback;             /* config the library runs where no tuned one
                                 can: the op's fallback; -1 if it has none */
    int first, count;         /* its tuned entries in the header's table */
} nt_dispatch_problem;

/* A config: a family, the dtypes it was instantiated for and its params. */
typedef struct nt_dispatch_config {
    int family;               /* index into families */
    const char *dtypes;       /* canonical dtypes */
    const char *params;       /* canonical params (nt_params_canon) */
    int kfirst, nk;           /* its kernels: kernels[kfirst .. kfirst + nk) */
} nt_dispatch_config;

/* A dispatch header's tables.  Every pointer refers to static data. */
typedef struct nt_dispatch {
    int nfamilies;
    const nt_dispatch_family *families;
    int nproblems;
    const nt_dispatch_problem *problems;
    int nconfigs;
    const nt_dispatch_config *configs;
    int nconfig_kernels;
    const int *config_kernels; /* kernel ids of every config, flat */
    int nkernels;
    const char *const *kernel_names; /* by kernel id */
} nt_dispatch;

/* A config made ready for one problem: its family and params, the plan and
 * the kernel id of each launch. */
typedef struct nt_dispatch_choice {
    int config;
    const nt_family *fam;
    nt_params params;
    nt_plan plan;
    int kid[NT_MAX_LAUNCH];   /* kernel id of launch i, i < plan.nlaunch */
} nt_dispatch_choice;

/* The index of the problem with p's op and dtypes, or -1 when the header
 * has none (a dtype combination it was not built for). */
int nt_dispatch_find(const nt_dispatch *d, const nt_problem *p);

/* Make config c ready for problem p (which has passed nt_problem_check) on
 * the device with facts dev (NULL: check and plan only what does not depend
 * on the device, as the export and the drift test do).  Fills *out and
 * returns 0, or -1 with why in err: see the top of this file. */
int nt_dispatch_try(const nt_dispatch *d, int c, const nt_problem *p, const nt_devinfo *dev,
                    nt_dispatch_choice *out, char *err, size_t errlen);

/* Check the tables themselves: every index in range, every family known to
 * this build, every config's dtypes and params valid for its family's op,
 * every problem's op known and its fallback a config of its dtypes.  0, or
 * -1 with the first problem found. */
int nt_dispatch_check(const nt_dispatch *d, char *err, size_t errlen);

/* ---- filling an nt_dispatch from an included dispatch header ------------
 * After #include of a format-3 dispatch header,
 *     NT_DISPATCH_DEFINE(static, lib_dispatch)
 * defines the row arrays and `static const nt_dispatch lib_dispatch`.  The
 * header's X-macros are expanded here, except NORMTUNE_KERNELS (the kernel
 * code, for C++ only): kernel names come from normtune_kernel_names[]. */
#define NT_DISPATCH_FAM_ROW(id, name, hash) {name, hash},
#define NT_DISPATCH_PROB_ROW(id, op, dtypes, fallback, first, count) \
    {op, dtypes, fallback, first, count},
#define NT_DISPATCH_CFG_ROW(id, family, dtypes, params, kfirst, nk) \
    {family, dtypes, params, kfirst, nk},

#define NT_DISPATCH_DEFINE(storage, name)                                                   \
    static const nt_dispatch_family name##_fams[] = {                                       \
        NORMTUNE_FAMILIES(NT_DISPATCH_FAM_ROW){NULL, NULL}};                                \
    static const nt_dispatch_problem name##_probs[] = {                                     \
        NORMTUNE_PROBLEMS(NT_DISPATCH_PROB_ROW){NULL, NULL, -1, 0, 0}};                     \
    static const nt_dispatch_config name##_cfgs[] = {                                       \
        NORMTUNE_CONFIGS(NT_DISPATCH_CFG_ROW){-1, NULL, NULL, 0, 0}};                       \
    storage const nt_dispatch name = {                                                      \
        NORMTUNE_NFAMILIES,     name##_fams,    NORMTUNE_NPROBLEMS,                         \
        name##_probs,           NORMTUNE_NCONFIGS, name##_cfgs,                             \
        NORMTUNE_NCONFIG_KERNELS, normtune_config_kernels, NORMTUNE_NKERNELS,               \
        normtune_kernel_names}

#endif
