/* output.h -- files that normtune writes, written so that they cannot hurt
 * results.
 *
 * Every output file (the dispatch header, plots, CSV/JSON written with -o)
 * goes through nt_out: the path is checked first, the bytes go to a
 * temporary file in the same directory, and only a complete, synced file is
 * renamed over the target.  A crash or an error leaves the old file as it
 * was.  A target that is an SQLite database, or the same file as a database
 * the command uses (or one of its -wal, -shm, -journal files), is refused
 * before anything is written, so `export --db r.db -o r.db` cannot replace
 * results with a header. */
#ifndef NT_OUTPUT_H
#define NT_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

typedef struct nt_out {
    FILE *f;                  /* write here between open and commit */
    char *tmp;                /* the temporary file, owned */
    char *path;               /* the target, owned */
} nt_out;

/* Check that path may be written: not a directory, not an SQLite database,
 * not the same file as any of the nprotect paths in protect[] (databases
 * the command reads or writes; NULL entries are skipped) nor their -wal,
 * -shm or -journal companions, and its directory is writable.  Nothing is
 * created.  0, or -1 with a message naming the file in err. */
int nt_out_check(const char *path, const char *const *protect, int nprotect, char *err,
                 size_t errlen);

/* nt_out_check, then create the temporary file and open o->f on it.
 * 0, or -1 with a message (nothing is left behind). */
int nt_out_open(nt_out *o, const char *path, const char *const *protect, int nprotect,
                char *err, size_t errlen);

/* Flush, sync and close o->f, give the file the mode a plain fopen would
 * give, and rename it over the target.  0, or -1 with a message (the
 * temporary is removed).  o is released either way. */
int nt_out_commit(nt_out *o, char *err, size_t errlen);

/* Drop the temporary file; the target is untouched.  Safe on a zeroed or
 * already released o. */
void nt_out_abort(nt_out *o);

/* Is path an SQLite database (its first 16 bytes are the SQLite magic)?
 * 1 yes, 0 no or unreadable. */
int nt_is_sqlite(const char *path);

#endif
