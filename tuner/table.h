/* table.h -- tables of texts, and the one place that writes and reads them
 * in the output formats of `query`, `report` and `plot`.
 *
 * The store's reports arrive as rows of text cells through a callback
 * (store_row_fn, "-" for SQL NULL); tbl collects them, so that nothing is
 * printed until a report is complete.  tbl_write prints a tbl as an aligned
 * text table, a markdown table, CSV (RFC 4180) or JSON (an array of
 * objects); tbl_read_csv reads such CSV back, for `plot --csv`; tbl_shape
 * keeps the shape reports of a device model, read once each. */
#ifndef NT_TABLE_H
#define NT_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "db/store.h"

/* A table of texts: row 0 is the header; cells are owned (malloc'd). */
typedef struct tbl {
    int ncol;
    int nrow, cap;                 /* rows including the header */
    char **cell;                   /* nrow * ncol */
    int oom;                       /* an allocation failed, or a row had the
                                      wrong number of cells */
} tbl;

/* Output formats of tbl_write. */
enum { TBL_TABLE, TBL_MD, TBL_CSV, TBL_JSON };

/* Free the cells and zero t. */
void tbl_free(tbl *t);

/* Append a row of ncol texts (copied; NULL is taken as "").  The first row
 * fixes ncol.  On failure t->oom is set and the row is dropped. */
void tbl_add(tbl *t, int ncol, const char *const *cells);

/* A store_row_fn collecting into the tbl ctx; a header arriving again
 * restarts the table. */
void tbl_row(void *ctx, int header, int ncol, const char *const *cell);

/* The shape reports (store_report_shape) of one device model, kept:
 * `report` and `plot` look at a shape once for every op and dtype tuned at
 * it, and its ok results only.  The first tbl_shape reads every shape's
 * at once (store_report_shapes: one query, not one a shape).
 * Zero-initialize, set db and dev. */
typedef struct tbl_shapes {
    store *db;
    int64_t dev;                   /* a device of the model read (store_find_device,
                                      store_prov) */
    int rows;                      /* which rows and columns: STORE_SHAPES_* */
    int loaded;                    /* every shape read */
    int oom;
    int n, cap;
    struct tbl_shape {
        int64_t M, N;
        struct tbl *t;
    } *e;
} tbl_shapes;

/* The shape report of (M, N), read on first use; NULL with a message in
 * err on a store error or when out of memory.  c owns it. */
const struct tbl *tbl_shape(tbl_shapes *c, int64_t M, int64_t N, char *err, size_t errlen);
void tbl_shapes_free(tbl_shapes *c);

/* Cell (r, c); row 0 is the header. */
const char *tbl_at(const tbl *t, int r, int c);

/* Index of the header cell named name, or -1. */
int tbl_col(const tbl *t, const char *name);

/* 1 if s is a whole number text ("12.5", "-3", "1e9"), else 0. */
int tbl_is_num(const char *s);

/* The format named "table", "csv" or "json" (TBL_*), or -1. */
int tbl_format(const char *name);

/* Write t to f in format fmt:
 *   TBL_TABLE  aligned columns, numbers right, a rule under the header,
 *              "(no rows)" when empty;
 *   TBL_MD     a markdown table padded to read as text;
 *   TBL_CSV    one header line, then a line per row; a field holding a
 *              comma, a double quote, CR or LF is quoted, quotes doubled
 *              (RFC 4180), lines end in LF; "-" (NULL) is an empty field;
 *   TBL_JSON   an array of objects keyed by the header; in a column whose
 *              cells are all numbers (or "-"), numbers are JSON numbers;
 *              "-" is null; strings escaped, bytes that are not UTF-8
 *              written as U+FFFD. */
void tbl_write(const tbl *t, int fmt, FILE *f);

/* Read CSV (RFC 4180: quoted fields may hold commas, quotes doubled, CR LF
 * or LF line ends; blank lines skipped) from f into an empty t; the first
 * line is the header.  0, or -1 with a message in err (a line number where
 * it helps). */
int tbl_read_csv(tbl *t, FILE *f, char *err, size_t errlen);

#endif
