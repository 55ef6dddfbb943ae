/* ntlua.h -- load a Lua sweep script into plain C structs.
 *
 * The only module that includes lua.h.  A script returns
 * normtune.sweep{...}; ntl_load runs it in a sandboxed state (no os, no io
 * writes, no load of binary chunks), checks every field, and fills an
 * nt_sweep.  The state stays open so that `where` constraints can be called
 * back with ntl_where.  Errors read "file:line: message".
 *
 * Budgets: a sweep has one CPU-time and one wall-clock budget for both runs
 * of the script, all its where() calls and closing its states together
 * (docs/lua-api.md, "Budgets"; NORMTUNE_SCRIPT_BUDGET overrides them).  A
 * watchdog thread asks a script that overruns to stop (a Lua error at its
 * next instruction hook); one that does not come back within a grace period
 * (C code such as a pattern match, or a __gc finalizer, where Lua runs no
 * hooks) is ended: a message on stderr and _exit(1).  Nothing is stored
 * while a script or where() runs, so that loses nothing. */
#ifndef NT_LUA_H
#define NT_LUA_H

#include <stddef.h>
#include <stdint.h>
#include "../kernels/family.h"
#include "../search/search.h"
#include "../kernels/nt.h"

#define NTL_MAX_FAMILIES 16                  /* families of one op a sweep can hold */
#define NTL_MAX_SHAPES 4096
#define NTL_MAX_DTYPES 16                    /* dtype combinations of one sweep */
/* Largest M and N a shape may have: M*N*16 bytes stays below 2^59, so sizes
 * computed from M, N and an element size cannot overflow 64 bits; a launch
 * of one block per row fits CUDA's grid limit (2^31 - 1); N fits an int. */
#define NTL_MAX_M 2147483647LL               /* 2^31 - 1 */
#define NTL_MAX_N 16777216LL                 /* 2^24 */
/* Most points a family's space may have (product of its value counts), and
 * most points one walk over the sweep may visit (shapes x the points of all
 * families' spaces). */
#define NTL_MAX_SPACE 1048576ULL             /* 2^20 */
#define NTL_MAX_WALK 16777216ULL             /* 2^24 */

typedef struct nt_sweep_family {
    const nt_family *fam;     /* the family descriptor */
    search_space space;       /* its parameter space, dims in declared order */
    int where_ref;            /* Lua registry ref of where(), or -1 */
} nt_sweep_family;

typedef struct nt_sweep {
    char path[1024];          /* script path as given */
    char hash[17];            /* FNV-1a 64 of the script bytes, hex */
    const nt_op *op;          /* the op the script names */
    int ndt;                  /* dtype combinations (field dtypes, or dtype) */
    nt_problem dts[NTL_MAX_DTYPES]; /* their dtypes (M and N unused) */
    nt_shape *dshapes[NTL_MAX_DTYPES]; /* a combination's own shapes (owned),
                                 or NULL: the sweep's */
    int ndshape[NTL_MAX_DTYPES];
    int nshape;
    nt_shape *shapes;         /* nshape shapes, owned */
    /* The problems of the sweep are every dtype combination x its shapes
     * (its own, or the sweep's), dtypes outer (ntl_problem). */
    int nfam;
    nt_sweep_family fam[NTL_MAX_FAMILIES];
    search_cfg search;        /* strategy, budget, seed */
    nt_timing timing;
    double eps;               /* epsilon, default 1e-6 */
    void *L;                  /* lua_State, owned */
    /* Set by the determinism check of tuner/enumerate.h (malloc'd, freed by
     * ntl_free); NULL until it has run. */
    uint64_t *ref_hash;       /* per problem: hash of the exhaustive walk */
    uint64_t *ref_count;      /* per problem x family: points it accepted */
    uint64_t *ref_strat;      /* per problem: hash of the first strategy walk */
} nt_sweep;

/* Load and check a script.  The script runs twice, in two states, and must
 * build the same sweep both times (the second run's print() is silent).  A
 * UTF-8 BOM and a first line starting with '#' are skipped as lua5.4 skips
 * them.  0, or -1 with "file:line: message" in err (also for a bad
 * NORMTUNE_SCRIPT_BUDGET); on failure *sw holds nothing that needs
 * freeing. */
int ntl_load(const char *path, nt_sweep *sw, char *err, size_t errlen);

/* Problems of the sweep, and problem q (see nt_sweep). */
int ntl_nproblems(const nt_sweep *sw);
void ntl_problem(const nt_sweep *sw, int q, nt_problem *p);

/* Where problem q comes from: its dtype combination *dt and the index
 * *shape in that combination's shapes; returns 1 when those are the
 * combination's own (dtypes[dt].shapes), 0 when the sweep's. */
int ntl_problem_at(const nt_sweep *sw, int q, int *dt, int *shape);

/* A problem as text for messages: "M=4096 N=1024 x=bf16,w=bf16,dw=f32". */
void ntl_problem_text(const nt_problem *p, char *buf, size_t len);

/* Call family f's where(p, s) for a point of problem pr (s = {M=, N=,
 * dtype = {slot = "bf16", ...}}).  *accept = 1 when there is no
 * constraint.  0, or -1 with "file:line: message" (a runtime error in the
 * constraint, or a non-boolean result). */
int ntl_where(nt_sweep *sw, int f, const nt_params *p, const nt_problem *pr,
              int *accept, char *err, size_t errlen);

/* The budget and where(): nt_enumerate brackets its walks with
 * ntl_walk_begin/ntl_walk_end (the CPU time of the thread between them
 * counts; wall-clock time counts only inside where() calls) and calls
 * ntl_walk_poll now and then, which notices a stop the watchdog asked for
 * when no where() runs.  begin and poll return 0, or -1 with "file: stopped
 * after ..." in err once the budget is spent.  Brackets may nest. */
int ntl_walk_begin(nt_sweep *sw, char *err, size_t errlen);
void ntl_walk_end(nt_sweep *sw);
int ntl_walk_poll(nt_sweep *sw, char *err, size_t errlen);

/* Params of family f for the point idx (values as texts). */
void ntl_point_params(const nt_sweep *sw, int f, const int *idx, nt_params *p);

/* Close the state (its finalizers run under the sweep's budget) and free
 * everything; safe on a zeroed or failed sweep. */
void ntl_free(nt_sweep *sw);

#endif
