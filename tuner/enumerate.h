/* enumerate.h -- walk the variants a sweep script asks for.
 *
 * nt_enumerate visits shapes x families x points of each family's space, in
 * that order (shapes as the script lists them, families in nt_families[]
 * order, points last dimension fastest), calls the family's `where` for
 * each point and hands the accepted ones to a callback.  `normtune list`
 * prints them; the sweep runner measures them.  Implemented in
 * tuner/cmd_list.c.  where() runs in the sweep's Lua state: one thread at a
 * time per nt_sweep. */
#ifndef NT_ENUMERATE_H
#define NT_ENUMERATE_H

#include <stddef.h>
#include <stdint.h>
#include "../lua/ntlua.h"

/* How points are chosen. */
enum {
    NT_ENUM_EXHAUSTIVE = 0,   /* every point of the space; a shape left with no
                                 point in any family is an error */
    NT_ENUM_STRATEGY = 1,     /* the script's search strategy (budget, seed),
                                 one search per (shape, family); accepted
                                 points are reported cost 0, rejected ones
                                 INFINITY.  For strategies that do not learn
                                 from costs (exhaustive, random). */
};

/* Called for each accepted point: shape index into sw->shapes, family index
 * into sw->fam, the point's indices and its params.  Return 0 to go on, or
 * -1 with a message in err to stop the walk (nt_enumerate returns -1). */
typedef int (*nt_enum_fn)(void *ctx, const nt_sweep *sw, int shape, int fam,
                          const int *idx, const nt_params *p, char *err, size_t errlen);

/* Walk the sweep.  fn may be NULL (count only).  counts, when not NULL, has
 * sw->nshape * sw->nfam entries and receives the accepted points per
 * (shape, family) at counts[shape * sw->nfam + fam].  Returns 0, or -1 with
 * a message in err: a where() error ("file:line: ..."), a search error, the
 * callback's error, or (exhaustive) "file: shape M=.. N=..: no variant left
 * after where constraints". */
int nt_enumerate(nt_sweep *sw, int mode, nt_enum_fn fn, void *ctx, uint64_t *counts,
                 char *err, size_t errlen);

#endif
