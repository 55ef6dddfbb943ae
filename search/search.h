/* search.h -- finite parameter spaces, a sweep's search settings, and
 * seeded draws.
 *
 * A space is a list of dimensions, each with a finite list of value texts.
 * A point is an array of value indices, one per dimension.  The strategies
 * that walk spaces are the ask/tell table of search/tune.h.  Plain C: no
 * CUDA, Lua or SQLite. */
#ifndef NT_SEARCH_H
#define NT_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#define SEARCH_MAX_DIMS 8
#define SEARCH_MAX_VALUES 1024
#define SEARCH_VAL_LEN 32

typedef struct search_dim {
    char name[SEARCH_VAL_LEN];
    int nval;
    char (*val)[SEARCH_VAL_LEN];  /* nval value texts, owned by the space */
} search_dim;

typedef struct search_space {
    int ndim;
    search_dim dim[SEARCH_MAX_DIMS];
} search_space;

/* Add a dimension with n values (copied).  0, or -1 with a message. */
int search_space_add(search_space *s, const char *name, const char *const *vals,
                     int n, char *err, size_t errlen);
/* Release the value arrays (the struct itself is the caller's). */
void search_space_clear(search_space *s);
/* Number of points (product of nval); 0 for an empty space. */
uint64_t search_space_size(const search_space *s);
/* Point number i (0 <= i < size) as indices, last dimension fastest. */
void search_space_point(const search_space *s, uint64_t i, int *idx);

typedef struct search_cfg {
    char strategy[16];        /* a strategy of search/tune.h */
    uint64_t budget;          /* most proposals per problem (0 = no limit) */
    uint64_t budget_stored;   /* warm: the budget per problem when the search
                                 starts from stored results of the model at
                                 other shapes (not a cold campaign); 0 = budget */
    uint64_t seed;            /* mixed with each problem */
    int race;                 /* `run`: stop sampling a variant once it cannot
                                 be the best (kernels/nt.h, NT_RACE) */
    int remeasure_alone;      /* the re-measure times each chain alone after
                                 an L2 flush ("alone"), not back to back
                                 ("chain", 0) */
    int remeasure_set;        /* the script or `run --remeasure` named the
                                 method: an exhaustive sweep re-measures too
                                 (warm always does) */
} search_cfg;

/* Names of the strategies of search/tune.h, NULL-terminated (for
 * messages and docs). */
extern const char *const search_strategies[];

/* 1 when a search with this strategy may end each problem with the
 * re-measure of its closest points (search/drive.c): warm always does,
 * exhaustive when search.remeasure names a method. */
int search_remeasures(const char *strategy);

/* splitmix64: the one PRNG of normtune's search (state *s advances). */
uint64_t search_rand(uint64_t *s);
/* Mix of the bits of x (splitmix64's finalizer), for seeds and hashes. */
uint64_t search_mix(uint64_t x);

/* Distinct numbers of [0, size) in a seeded pseudo-random order, one at a
 * time (a sparse Fisher-Yates shuffle: memory grows with the draws made,
 * never with size). */
typedef struct search_draw search_draw;
/* NULL when out of memory. */
search_draw *search_draw_new(uint64_t size, uint64_t seed);
/* The next number into *out: 1, or 0 when all size have been drawn (or
 * memory ran out). */
int search_draw_next(search_draw *d, uint64_t *out);
void search_draw_free(search_draw *d);

#endif
