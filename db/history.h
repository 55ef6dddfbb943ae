/* history.h -- reading stored results back for the search: the results of
 * an op with their device model (warm starts of search/drive.h), and the
 * raw samples of one device (the replay evaluator of search/replay.h).
 * Functions return 0 (STORE_OK) or -1 (STORE_ERR) with a message. */
#ifndef NT_DB_HISTORY_H
#define NT_DB_HISTORY_H

#include <stddef.h>
#include <stdint.h>
#include "../db/store.h"

/* One stored result. */
typedef struct store_hist_row {
    int64_t result_id, device_id;
    char device[128];         /* the device's model: name, cc, SMs, memory clock */
    int cc_major, cc_minor, sms, mem_clock_khz;
    char family[64];          /* "<op>.<family>" */
    char params[160];         /* canonical */
    char src_hash[24];        /* the family's kernel sources when measured */
    char dtype[128];          /* canonical dtypes */
    int64_t M, N;
    int status;               /* nt_status */
    double median_us;         /* 0 when none */
    int64_t sweep_id;
} store_hist_row;

/* Called per row; return 0 to go on, -1 to stop (store_history returns -1
 * with the message the callback left in err). */
typedef int (*store_hist_fn)(void *ctx, const store_hist_row *r, char *err, size_t errlen);

/* Every result of op, oldest first, on every device. */
int store_history(store *db, const char *op, store_hist_fn fn, void *ctx, char *err,
                  size_t errlen);

/* Called per sample of a result, in the order taken. */
typedef int (*store_sample_fn)(void *ctx, int64_t result_id, double us);

/* The raw samples of every result of op on device id dev, by result. */
int store_device_samples(store *db, const char *op, int64_t dev, store_sample_fn fn, void *ctx,
                         char *err, size_t errlen);

/* The connection behind db (db/store.c), for the files of db/. */
void *store_handle(store *db);

#endif
