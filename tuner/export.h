/* export.h -- the dispatch header writer behind `normtune export`.
 *
 * nt_export_write turns the best result per shape of one device (rows from
 * store_best, with the provenance store_best fills) into a self-contained C
 * header: banner, source hash, X-macro config lists per family, a table
 * sorted by (N, M) and an inline lookup.  It is pure: the text depends on its
 * arguments only (never on the clock), so the same database gives a
 * byte-identical header.  The format is described in docs/dispatch-header.md.
 * cmd_export (declared in tuner/cli.h) wraps it with the database and an
 * atomic rename. */
#ifndef NT_EXPORT_H
#define NT_EXPORT_H

#include <stddef.h>
#include <stdio.h>

#include "db/store.h"

/* Version of the header format (NORMTUNE_DISPATCH_VERSION in the output). */
#define NT_EXPORT_VERSION 1

/* Write the header for rows[0..n) (sorted by (N, M) here; the input order
 * does not matter) to f.  Returns 0, or -1 with a message in err: no rows,
 * a "mixed" or malformed source hash, rows of several ops or dtypes, two rows
 * for one shape, an unknown family, params that do not validate, or a write
 * error.  Nothing is allocated that outlives the call. */
int nt_export_write(FILE *f, const store_best_row *rows, int n, const store_prov *prov,
                    char *err, size_t errlen);

#endif
