/* tune.h -- the ask/tell search of one problem over a sweep's families.
 *
 * A point of a problem is (family, point number in that family's space).
 * A strategy is a row of the table in search/tune.c; the driver
 * (search/drive.h) starts one per problem, asks it for a batch of points,
 * has them measured and tells it each median, or INFINITY for a point that
 * failed, and goes on until the strategy has nothing more to ask:
 *
 *   exhaustive  every point of every family, in order (no budget).
 *   random      points drawn at random without replacement over the union
 *               of the families' spaces; no walk of the space.
 *   hillclimb   from a random point, the neighbours of the best point so
 *               far (one parameter one value up or down), again from a new
 *               random point when no neighbour improves.
 *   warm        the hints first (points ranked by what is known of other
 *               shapes: search/drive.c; one that cannot run here, when
 *               exploring, among a new family's best or within translate
 *               of the first hint's score, becomes the nearest point that
 *               can), with explore every family once,
 *               then a climb from the best (its neighbours in the order
 *               of their hints' scores); without a budget, every hint
 *               and the climb to a local optimum.
 *
 * Every point is asked through the environment's feasible() first (the
 * family's check() and the script's where()): a point it refuses is never
 * proposed and costs no budget.  The budget counts proposals (each one is
 * a measurement).  The seed is the caller's, mixed
 * with the problem.  Plain C. */
#ifndef NT_SEARCH_TUNE_H
#define NT_SEARCH_TUNE_H

#include <stddef.h>
#include <stdint.h>
#include "../search/search.h"

#define TUNE_MAX_FAMILIES 32

typedef struct tune_pt {
    int fam;                  /* family index */
    uint64_t pt;              /* point number in its space */
} tune_pt;

/* A warm start: a point and its predicted standing (lower is better). */
typedef struct tune_hint {
    tune_pt p;
    double score;
} tune_hint;

typedef struct tune_env {
    int nfam;
    const search_space *space[TUNE_MAX_FAMILIES]; /* not owned */
    /* 1 when the point can run (check, where), 0 when not, -1 on an error
     * (the caller keeps its message). */
    int (*feasible)(void *ctx, tune_pt p);
    void *ctx;
    const tune_hint *hint;    /* warm: best first; not owned, may be NULL */
    int nhint;
    int hint_quota;           /* warm: most hints proposed before the climb;
                                 0 = the budget */
    int explore;              /* warm: try every family once (its best hint,
                                 or a random point of it) before the climb */
    unsigned skip_fam;        /* warm, explore: bit f, family f is not tried */
    double translate;         /* warm: a hint that cannot run here whose score is
                                 within this factor of the first hint's becomes
                                 the nearest point that can; 0 = only when
                                 exploring or a new family's best */
    uint64_t budget;          /* most proposals; 0 = no limit */
    uint64_t seed;            /* mixed with the problem by the caller */
} tune_env;

typedef struct tune tune;

/* Start strategy name over env (copied; the spaces and hints must outlive
 * the search).  0, or -1 with a message (unknown strategy, memory). */
int tune_start(tune **out, const char *name, const tune_env *env, char *err, size_t errlen);

/* Up to n points to measure next into out: their count, 0 when the search
 * is over, -1 when feasible() failed.  No point is proposed twice. */
int tune_ask(tune *t, tune_pt *out, int n);

/* The median of a proposed point in microseconds, INFINITY for a failure. */
void tune_tell(tune *t, tune_pt p, double cost);

/* The pick: the point with the lowest cost told (for a point told several
 * times, the mean of its costs).  0, or -1 when none succeeded. */
int tune_best(const tune *t, tune_pt *p, double *cost);

/* Proposals made (the budget spent) and feasible() calls so far. */
uint64_t tune_spent(const tune *t);
uint64_t tune_checks(const tune *t);

/* 1 when name is a strategy that steers by the times it is told. */
int tune_adaptive(const char *name);

void tune_free(tune *t);

#endif
