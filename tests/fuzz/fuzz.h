/* fuzz.h -- what the libFuzzer harnesses in tests/fuzz/ share.
 *
 * Each harness defines LLVMFuzzerTestOneInput.  The loaders under test take
 * a path, so fz_file writes the input to a file in a scratch folder of this
 * process ($TMPDIR, else /tmp; removed at exit), rewritten for every input. */
#ifndef NT_FUZZ_H
#define NT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fz_dir[512];

/* Remove the scratch folder and what is in it (names fz_file gave out). */
static inline void fz_cleanup(void) {
    static const char *const names[] = {"in", "in-wal", "in-shm", "in-journal", "x.db",
                                        "x.db-wal", "x.db-shm", "x.db-journal", NULL};
    char p[600];
    for (int i = 0; names[i]; i++) {
        snprintf(p, sizeof p, "%s/%s", fz_dir, names[i]);
        unlink(p);
    }
    rmdir(fz_dir);
}

/* The scratch folder, created on first use; exits when it cannot be. */
static inline const char *fz_scratch(void) {
    if (!fz_dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(fz_dir, sizeof fz_dir, "%s/ntfuzz.XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(fz_dir)) {
            perror("mkdtemp");
            exit(2);
        }
        atexit(fz_cleanup);
    }
    return fz_dir;
}

/* Write data to <scratch>/name (replacing it and any -wal/-shm beside it);
 * returns the path (static buffer).  Exits when the write fails. */
static inline const char *fz_file(const char *name, const uint8_t *data, size_t size) {
    static char path[600];
    char side[700];
    snprintf(path, sizeof path, "%s/%s", fz_scratch(), name);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-journal", path);
    unlink(side);
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f)) {
        perror(path);
        exit(2);
    }
    return path;
}

#endif
