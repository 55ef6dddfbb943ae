/* sweep.h -- the sweep model: the space a script describes.
 *
 * A sweep (nt_sweep) is an op, its dtype combinations, each with its shapes
 * (its own, or the sweep's), the families to try with one search_space
 * each, the search strategy and budget, the timing settings and eps.  The
 * problems of a sweep are every dtype combination x its shapes, dtypes
 * outer.  A script loader fills it (lua/ntlua.h) and answers where()
 * through the nt_script_ops it installs; everything that walks the space
 * (search/enumerate.h, search/drive.h) is in search/ and reaches the script
 * only through those calls.  Plain C: no Lua, CUDA or SQLite. */
#ifndef NT_SEARCH_SWEEP_H
#define NT_SEARCH_SWEEP_H

#include <stddef.h>
#include <stdint.h>
#include "../kernels/family.h"
#include "../kernels/nt.h"
#include "../search/search.h"

#define NT_SWEEP_MAX_FAMILIES 32             /* families of one op a sweep can hold (bit masks of unsigned) */
#define NT_SWEEP_MAX_SHAPES 4096
#define NT_SWEEP_MAX_DTYPES 16               /* dtype combinations of one sweep */
/* Largest M and N a shape may have: M*N*16 bytes stays below 2^59, so sizes
 * computed from M, N and an element size cannot overflow 64 bits; a launch
 * of one block per row fits CUDA's grid limit (2^31 - 1); N fits an int. */
#define NT_SWEEP_MAX_M 2147483647LL          /* 2^31 - 1 */
#define NT_SWEEP_MAX_N 16777216LL            /* 2^24 */
/* Most points a family's space may have (product of its value counts), and
 * most points one exhaustive walk over the sweep may visit (shapes x the
 * points of all families' spaces). */
#define NT_SWEEP_MAX_SPACE 1048576ULL        /* 2^20 */
#define NT_SWEEP_MAX_WALK 16777216ULL        /* 2^24 */

struct nt_sweep;

/* What the script loader answers for a sweep (lua/ntlua.c installs them).
 * where: family f's constraint for a point of problem pr; *accept = 1 when
 * there is none; 0, or -1 with "file:line: message".  walk_begin/walk_end
 * bracket a walk (the where() budget counts between them; brackets nest);
 * walk_poll notices a stop asked for between where() calls.  begin and
 * poll return 0, or -1 with a message once the budget is spent. */
typedef struct nt_script_ops {
    int (*where)(struct nt_sweep *sw, int f, const nt_params *p, const nt_problem *pr,
                 int *accept, char *err, size_t errlen);
    int (*walk_begin)(struct nt_sweep *sw, char *err, size_t errlen);
    void (*walk_end)(struct nt_sweep *sw);
    int (*walk_poll)(struct nt_sweep *sw, char *err, size_t errlen);
} nt_script_ops;

typedef struct nt_sweep_family {
    const nt_family *fam;     /* the family descriptor */
    search_space space;       /* its parameter space, dims in declared order */
    int where_ref;            /* the loader's handle of where(), or -1: none */
    /* a search of its own (the script's families.X.search): own 1, its
     * strategy and budget per problem (0 = no limit); 0: the sweep's */
    int own;
    char strategy[16];
    uint64_t budget;
} nt_sweep_family;

typedef struct nt_sweep {
    char path[1024];          /* script path as given */
    char hash[17];            /* FNV-1a 64 of the script bytes, hex */
    const nt_op *op;          /* the op the script names */
    int ndt;                  /* dtype combinations (field dtypes, or dtype) */
    nt_problem dts[NT_SWEEP_MAX_DTYPES]; /* their dtypes (M and N unused) */
    nt_shape *dshapes[NT_SWEEP_MAX_DTYPES]; /* a combination's own shapes
                                 (owned), or NULL: the sweep's */
    uint64_t *dbudgets[NT_SWEEP_MAX_DTYPES]; /* their own budgets (owned,
                                 one per shape, 0: none), or NULL: none */
    int ndshape[NT_SWEEP_MAX_DTYPES];
    int nshape;
    nt_shape *shapes;         /* nshape shapes, owned */
    uint64_t *budgets;        /* a shape's own budget (owned, one per shape;
                                 0: the search's), or NULL: none has one */
    int nfam;
    nt_sweep_family fam[NT_SWEEP_MAX_FAMILIES];
    search_cfg search;        /* strategy, budget per problem, seed */
    nt_timing timing;
    double eps;               /* epsilon, default 1e-6 */
    const nt_script_ops *script; /* the loader's answers (where, budget) */
    void *L;                  /* the loader's state, owned by it */
    /* Set by the determinism check of search/enumerate.h (malloc'd, freed
     * with the sweep); NULL until it has run. */
    uint64_t *ref_hash;       /* per problem: hash of the exhaustive walk */
    uint64_t *ref_count;      /* per problem x family: points it accepted */
    uint64_t *ref_strat;      /* per problem: hash of the first strategy walk */
} nt_sweep;

/* Problems of the sweep, and problem q (dtypes outer, see nt_sweep). */
int nt_sweep_nproblems(const nt_sweep *sw);
void nt_sweep_problem(const nt_sweep *sw, int q, nt_problem *p);

/* Where problem q comes from: its dtype combination *dt and the index
 * *shape in that combination's shapes; returns 1 when those are the
 * combination's own (dtypes[dt].shapes), 0 when the sweep's. */
int nt_sweep_problem_at(const nt_sweep *sw, int q, int *dt, int *shape);

/* Problem q's own budget (its shape's `budget` field in the script:
 * variants measured there), or 0 when it has none (the search's). */
uint64_t nt_sweep_problem_budget(const nt_sweep *sw, int q);

/* A problem as text for messages: "M=4096 N=1024 x=bf16,w=bf16,dw=f32". */
void nt_problem_text(const nt_problem *p, char *buf, size_t len);

/* Params of family f for the point idx (values as texts). */
void nt_sweep_point_params(const nt_sweep *sw, int f, const int *idx, nt_params *p);

/* Family f's where() for params p of problem pr, through the loader (see
 * nt_script_ops); *accept = 1 when the sweep has no loader. */
int nt_sweep_where(nt_sweep *sw, int f, const nt_params *p, const nt_problem *pr, int *accept,
                   char *err, size_t errlen);

/* Can params p of family f run problem pr?  The family's check() (what
 * does not depend on the device) first, then the script's where(); *ok = 1
 * when both accept.  0, or -1 with where()'s error. */
int nt_sweep_feasible(nt_sweep *sw, int f, const nt_params *p, const nt_problem *pr, int *ok,
                      char *err, size_t errlen);

/* The seed of problem q's search: the sweep's seed and run (a replay's
 * seed; 0 for `run` and `list`) mixed with the problem's dtype combination
 * and shape. */
uint64_t nt_sweep_seed(const nt_sweep *sw, int q, uint64_t run);

/* The passes of each problem's search: first one per family with a search
 * of its own (sw->fam[f].own), in the script's order, each over that
 * family alone with its strategy and budget; then the sweep's search
 * (sw->search) over the other families, when there are any.  Their
 * number; pass i's family into *only (-1: the sweep's pass over the
 * others), its strategy and budget (the sweep's pass: sw->search's). */
int nt_sweep_npasses(const nt_sweep *sw);
void nt_sweep_pass(const nt_sweep *sw, int i, int *only, const char **strategy,
                   uint64_t *budget);
/* The seed of pass `only` (nt_sweep_pass) of problem q: nt_sweep_seed's,
 * mixed with the family for a family's own search. */
uint64_t nt_sweep_pass_seed(const nt_sweep *sw, int q, uint64_t run, int only);
/* The spaces a pass searches into space[nfam]: its families' own, an
 * empty space (no point) for the others. */
void nt_sweep_pass_spaces(const nt_sweep *sw, int only, const search_space **space);
/* 1 when the sweep's search or a family's own one is strategy name. */
int nt_sweep_uses(const nt_sweep *sw, const char *name);
/* The whole sweep searched by the sweep's strategy: every family's own
 * search dropped (a command line's --strategy). */
void nt_sweep_drop_own(nt_sweep *sw);

/* Keep only shard i of n (0 <= i < n) of the sweep's shapes, for a run
 * split over the tasks of a job array (`run --shard I/N`).  A shard takes
 * whole hidden sizes: every shape of an N, in every dtype combination (a
 * warm search learns along M).  The distinct N are dealt heaviest first
 * (the most problems; ties: the smaller N), each to the shard with the
 * fewest problems so far (ties: the lower shard), so that the shards are
 * about as long.  With fewer distinct N than shards the shapes themselves
 * are dealt so, keyed by (N, M).  The same script and n give the same
 * split on every machine; the shards' problems are disjoint and together
 * the whole sweep.  Returns the problems kept (0: an empty shard), or -1
 * with a message (i or n out of range). */
int nt_sweep_shard(nt_sweep *sw, int i, int n, char *err, size_t errlen);

/* Free what search/ keeps in a sweep (the walks' reference hashes, the
 * spaces, the shapes); the loader frees its state first. */
void nt_sweep_clear(nt_sweep *sw);

#endif
