/* history.c -- stored results read back for the search (db/history.h):
 * one query over result, variant, shape and device, and one over the
 * samples of a device.  Read-only; statements prepared per call (a call
 * reads thousands of rows, so preparing is not what costs). */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "db/history.h"

/* The text of column i into buf. */
static void col_text(sqlite3_stmt *st, int i, char *buf, size_t len) {
    const unsigned char *t = sqlite3_column_text(st, i);
    snprintf(buf, len, "%s", t ? (const char *)t : "");
}

int store_history(store *db, const char *op, store_hist_fn fn, void *ctx, char *err,
                  size_t errlen) {
    static const char *sql =
        "SELECT r.id, r.device_id, d.name, d.cc_major, d.cc_minor, d.sms, d.mem_clock_khz, "
        "v.family, v.params, s.dtype, s.M, s.N, r.status, coalesce(r.median_us, 0), r.sweep_id, v.src_hash "
        "FROM result r JOIN variant v ON v.id = r.variant_id JOIN shape s ON s.id = r.shape_id "
        "JOIN device d ON d.id = r.device_id WHERE s.op = ?1 ORDER BY r.id";
    sqlite3 *h = store_handle(db);
    sqlite3_stmt *st = NULL;
    int rc;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "reading results: %s", sqlite3_errmsg(h));
        return STORE_ERR;
    }
    sqlite3_bind_text(st, 1, op, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        store_hist_row r;
        char status[32];
        memset(&r, 0, sizeof r);
        r.result_id = sqlite3_column_int64(st, 0);
        r.device_id = sqlite3_column_int64(st, 1);
        col_text(st, 2, r.device, sizeof r.device);
        r.cc_major = sqlite3_column_int(st, 3);
        r.cc_minor = sqlite3_column_int(st, 4);
        r.sms = sqlite3_column_int(st, 5);
        r.mem_clock_khz = sqlite3_column_int(st, 6);
        col_text(st, 7, r.family, sizeof r.family);
        col_text(st, 8, r.params, sizeof r.params);
        col_text(st, 9, r.dtype, sizeof r.dtype);
        r.M = sqlite3_column_int64(st, 10);
        r.N = sqlite3_column_int64(st, 11);
        col_text(st, 12, status, sizeof status);
        r.status = nt_status_parse(status);
        r.median_us = sqlite3_column_double(st, 13);
        r.sweep_id = sqlite3_column_int64(st, 14);
        col_text(st, 15, r.src_hash, sizeof r.src_hash);
        if (fn(ctx, &r, err, errlen)) {
            sqlite3_finalize(st);
            return STORE_ERR;
        }
    }
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "reading results: %s", sqlite3_errmsg(h));
        sqlite3_finalize(st);
        return STORE_ERR;
    }
    sqlite3_finalize(st);
    return STORE_OK;
}

int store_device_samples(store *db, const char *op, int64_t dev, store_sample_fn fn, void *ctx,
                         char *err, size_t errlen) {
    static const char *sql =
        "SELECT sa.result_id, sa.us FROM sample sa JOIN result r ON r.id = sa.result_id "
        "JOIN shape s ON s.id = r.shape_id WHERE r.device_id = ?1 AND s.op = ?2 "
        "ORDER BY sa.result_id, sa.idx";
    sqlite3 *h = store_handle(db);
    sqlite3_stmt *st = NULL;
    int rc;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "reading samples: %s", sqlite3_errmsg(h));
        return STORE_ERR;
    }
    sqlite3_bind_int64(st, 1, dev);
    sqlite3_bind_text(st, 2, op, -1, SQLITE_STATIC);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (fn(ctx, sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1))) {
            snprintf(err, errlen, "out of memory");
            sqlite3_finalize(st);
            return STORE_ERR;
        }
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "reading samples: %s", sqlite3_errmsg(h));
        sqlite3_finalize(st);
        return STORE_ERR;
    }
    sqlite3_finalize(st);
    return STORE_OK;
}
