/* replaydb.h -- a replay (search/replay.h) built from a results database:
 * the simulated device behind `normtune replay` and `normtune run
 * --simulate`.
 *
 * The simulated device is the GPU of the database with the newest sweep of
 * the sweep's op (with pool, every GPU of its model): each point the sweep
 * keeps (check() and where()) that it stored is answered from the samples
 * of its newest result there measured with its family's current sources
 * (results of older kernels would answer for code that no longer
 * exists). */
#ifndef NT_REPLAYDB_H
#define NT_REPLAYDB_H

#include <stddef.h>
#include <stdint.h>

#include "db/history.h"
#include "db/store.h"
#include "search/replay.h"
#include "search/sweep.h"

/* Reading the database: the simulated device, its rows, their samples. */
typedef struct nt_replay_db {
    nt_sweep *sw;             /* (its where() runs on the rows) */
    int pass;                 /* 0: find the device; 1: keep its rows */
    int pool;                 /* 1: every GPU of the device's model */
    int64_t dev, newest;      /* the device, its newest sweep */
    store_hist_row model;     /* a row of it (its model) */
    char src[NT_SWEEP_MAX_FAMILIES][24]; /* its kernel sources per family */
    nt_replay *rp;
    int64_t *ids;             /* result id of each row kept */
    int64_t *devs;            /* its GPU */
    int *status;              /* -1: added to the replay; -2: dropped (a newer
                                 result of the same point is kept) */
    nt_hist *h;
    size_t n, cap;
} nt_replay_db;

/* Build x->rp, the replay of the newest device of db for sw (with pool, of
 * every GPU of its model): x->dev is that device, x->model a row of it,
 * x->src its kernel sources per family.  0, or -1 with a message; free x
 * with nt_replay_db_free either way. */
int nt_replay_db_load(store *db, nt_sweep *sw, int pool, nt_replay_db *x, char *err,
                      size_t errlen);
void nt_replay_db_free(nt_replay_db *x);

#endif
