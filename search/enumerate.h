/* enumerate.h -- walk the variants a sweep script asks for.
 *
 * nt_enumerate visits problems x families x points of each family's space,
 * in that order (problems: the script's dtype combinations x its shapes,
 * nt_sweep_problem; families in the op's order, points last dimension fastest), calls the family's `where` for
 * each point and hands the accepted ones to a callback.  `normtune list`
 * prints them; the sweep runner measures them.  Implemented in
 * search/enumerate.c.  where() runs in the sweep's Lua state: one thread at a
 * time per nt_sweep.
 *
 * Determinism: the first nt_enumerate of a sweep (or nt_enum_check) first
 * walks every point twice, the second time in other orders, and compares a
 * hash of (problem, family, point, accepted) per problem; every later walk
 * is compared with it too.  A where() that uses math.random or keeps state
 * between calls is an error naming the first problem where the walks differ,
 * so `list`, `list --count`, `compile` and `run` cannot disagree.
 *
 * The walks run under the script's where() budget (the loader's
 * nt_script_ops: walk_begin, walk_poll, walk_end).  When
 * stderr is a terminal and a call visits at least a million points, a line
 * "enumerating: 1.2M of 4.0M points" shows progress (at most four updates a
 * second) and is erased at the end; not over a walk with a callback when
 * stdout is a terminal too (`list` prints the variants there). */
#ifndef NT_ENUMERATE_H
#define NT_ENUMERATE_H

#include <stddef.h>
#include <stdint.h>
#include "../search/sweep.h"

/* How points are chosen. */
enum {
    NT_ENUM_EXHAUSTIVE = 0,   /* every point of the space; a problem left with
                                 no point in any family is an error */
    NT_ENUM_STRATEGY = 1,     /* the script's search strategy (budget, seed),
                                 one search per (problem, family); accepted
                                 points are reported cost 0, rejected ones
                                 INFINITY.  For strategies that do not learn
                                 from costs (exhaustive, random). */
};

/* Called for each accepted point: problem index (nt_sweep_problem), family index
 * into sw->fam, the point's indices and its params.  Return 0 to go on, or
 * -1 with a message in err to stop the walk (nt_enumerate returns -1). */
typedef int (*nt_enum_fn)(void *ctx, const nt_sweep *sw, int problem, int fam,
                          const int *idx, const nt_params *p, char *err, size_t errlen);

/* Walk the sweep.  fn may be NULL (count only; an exhaustive count is the
 * determinism check's, without another walk).  counts, when not NULL, has
 * nt_sweep_nproblems(sw) * sw->nfam entries and receives the accepted points per
 * (problem, family) at counts[problem * sw->nfam + fam].  Returns 0, or -1 with
 * a message in err: a where() error ("file:line: ..."), a spent budget
 * ("file:line: stopped after ..."), a search error, the callback's error,
 * "file: M=.. N=.. dtypes (shapes[i]): no variant left after where
 * constraints" (every problem needs a point in the exhaustive walk,
 * whatever the mode), or "file: where() is not deterministic: for M=..
 * N=.. dtypes (shapes[i]) ...". */
int nt_enumerate(nt_sweep *sw, int mode, nt_enum_fn fn, void *ctx, uint64_t *counts,
                 char *err, size_t errlen);

/* The determinism check alone (a no-op once done): what the first
 * nt_enumerate does before its walk.  `run` calls it before any GPU work.
 * 0, or -1 with a message as nt_enumerate's. */
int nt_enum_check(nt_sweep *sw, char *err, size_t errlen);

#endif
