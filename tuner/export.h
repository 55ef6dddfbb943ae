/* export.h -- the dispatch header writer behind `normtune export`.
 *
 * nt_export_write turns the best result per problem and shape of one device
 * (rows from store_best, with the provenance store_best fills) into a
 * self-contained C header, format 3: families with their source hashes,
 * every problem (op, dtypes) the ops allow with its fallback config,
 * configs with the kernel ids they may launch, the kernels as an X-macro
 * (name as a string and as code), the tuned entries per problem (each
 * with its stretch: its config grown to serve a little past its N) and an
 * inline lookup.  It is pure: the text depends on its arguments and on the
 * ops and families of this build only (never on the clock or the rows'
 * order), so the same database gives a byte-identical header.  The format
 * is described in docs/dispatch-header.md.  cmd_export (tuner/cli.h) wraps
 * it with the database and an atomic rename. */
#ifndef NT_EXPORT_H
#define NT_EXPORT_H

#include <stddef.h>
#include <stdio.h>

#include "db/store.h"

/* Version of the header format (NORMTUNE_DISPATCH_VERSION in the output). */
#define NT_EXPORT_VERSION 5

/* Write the header for rows[0..n) (any order; n may be 0: fallbacks only)
 * to f.  Returns 0, or -1 with a message in err and possibly part of a
 * header written (cmd_export writes to a temporary file): see the top of
 * tuner/export.c for what is refused.  Nothing is allocated that outlives
 * the call. */
int nt_export_write(FILE *f, const store_best_row *rows, int n, const store_prov *prov,
                    char *err, size_t errlen);

/* How many families of the rows were measured with sources other than
 * this build's (make lib will refuse their header); msg gets "family
 * (measured H, now H2), ..." for them.  Rows of unknown families are
 * skipped. */
int nt_export_stale(const store_best_row *rows, int n, char *msg, size_t len);

/* How many families of this build have no ok result of their current
 * sources on the exported device (prov->families) and are not the grown
 * family of one that has (whose stretches they run): the header cannot use
 * them until a sweep measures them there.  msg gets their names, ", "
 * between. */
int nt_export_unmeasured(const store_prov *prov, char *msg, size_t len);

#endif
