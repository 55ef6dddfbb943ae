/* output.c -- checked, atomic output files (see output.h).
 *
 * Two files are "the same" when they are the same inode, or, where one does
 * not exist yet, when their directories resolve to the same place and their
 * names match.  The temporary file is "<target>.tmp.XXXXXX" in the target's
 * directory, so the final rename never crosses a file system. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tuner/output.h"

static const char *const companions[] = {"", "-wal", "-shm", "-journal"};
#define NCOMP (sizeof companions / sizeof companions[0])

int nt_is_sqlite(const char *path) {
    static const char magic[16] = "SQLite format 3";  /* with its NUL */
    char head[16];
    FILE *f = fopen(path, "rb");
    size_t n;
    if (!f) return 0;
    n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && !memcmp(head, magic, sizeof head);
}

/* The canonical name of path, which need not exist: realpath of its
 * directory, a slash, and its last component.  Malloc'd, or NULL when the
 * directory does not resolve. */
static char *canon(const char *path) {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *dir, *real, *out;
    size_t dn = slash ? (size_t)(slash - path) : 0;
    if (!(dir = malloc(dn + 2))) return NULL;
    if (!slash) strcpy(dir, ".");
    else if (dn == 0) strcpy(dir, "/");
    else {
        memcpy(dir, path, dn);
        dir[dn] = 0;
    }
    real = realpath(dir, NULL);
    free(dir);
    if (!real) return NULL;
    out = malloc(strlen(real) + strlen(base) + 2);
    if (out) sprintf(out, "%s/%s", real, base);
    free(real);
    return out;
}

/* Do a and b name the same file (existing or not)? */
static int same_file(const char *a, const char *b) {
    struct stat sa, sb;
    char *ca, *cb;
    int same;
    if (!stat(a, &sa) && !stat(b, &sb)) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    ca = canon(a);
    cb = canon(b);
    same = ca && cb && !strcmp(ca, cb);
    free(ca);
    free(cb);
    return same;
}

int nt_out_check(const char *path, const char *const *protect, int nprotect, char *err,
                 size_t errlen) {
    struct stat st;
    char *dir;
    const char *slash;
    int i, ok;
    if (!path || !*path) {
        snprintf(err, errlen, "empty output path");
        return -1;
    }
    if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s is a directory", path);
        return -1;
    }
    if (nt_is_sqlite(path)) {
        snprintf(err, errlen, "%s is an SQLite database; refusing to overwrite it "
                 "(choose another output file)", path);
        return -1;
    }
    for (i = 0; i < nprotect; i++) {
        if (!protect[i]) continue;
        for (size_t c = 0; c < NCOMP; c++) {
            char *comp = malloc(strlen(protect[i]) + 10);
            if (!comp) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            sprintf(comp, "%s%s", protect[i], companions[c]);
            int same = same_file(path, comp);
            free(comp);
            if (same) {
                snprintf(err, errlen, "%s is the database %s%s; refusing to overwrite it "
                         "(choose another output file)", path, protect[i], companions[c]);
                return -1;
            }
        }
    }
    slash = strrchr(path, '/');
    if (!(dir = malloc(strlen(path) + 2))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (!slash) strcpy(dir, ".");
    else if (slash == path) strcpy(dir, "/");
    else {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = 0;
    }
    ok = !access(dir, W_OK | X_OK);
    if (!ok) snprintf(err, errlen, "cannot write %s: directory %s: %s", path, dir, strerror(errno));
    free(dir);
    return ok ? 0 : -1;
}

int nt_out_open(nt_out *o, const char *path, const char *const *protect, int nprotect,
                char *err, size_t errlen) {
    int fd;
    memset(o, 0, sizeof *o);
    if (nt_out_check(path, protect, nprotect, err, errlen)) return -1;
    o->tmp = malloc(strlen(path) + 16);
    o->path = strdup(path);
    if (!o->tmp || !o->path) {
        snprintf(err, errlen, "out of memory");
        nt_out_abort(o);
        return -1;
    }
    sprintf(o->tmp, "%s.tmp.XXXXXX", path);
    if ((fd = mkstemp(o->tmp)) < 0) {
        snprintf(err, errlen, "cannot create %s: %s", o->tmp, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        nt_out_abort(o);
        return -1;
    }
    if (!(o->f = fdopen(fd, "w"))) {
        snprintf(err, errlen, "cannot write %s: %s", o->tmp, strerror(errno));
        close(fd);
        nt_out_abort(o);
        return -1;
    }
    return 0;
}

int nt_out_commit(nt_out *o, char *err, size_t errlen) {
    mode_t um = umask(0);                    /* mkstemp makes 0600: use the */
    int fd = fileno(o->f);
    umask(um);                               /* mode a plain fopen would give */
    if (fflush(o->f) || ferror(o->f) || fchmod(fd, 0666 & ~um) || fsync(fd)) {
        snprintf(err, errlen, "cannot write %s: %s", o->tmp, strerror(errno));
        nt_out_abort(o);
        return -1;
    }
    if (fclose(o->f)) {
        o->f = NULL;
        snprintf(err, errlen, "cannot write %s: %s", o->tmp, strerror(errno));
        nt_out_abort(o);
        return -1;
    }
    o->f = NULL;
    /* checked again: the target may have become a database meanwhile */
    if (nt_is_sqlite(o->path)) {
        snprintf(err, errlen, "%s is an SQLite database; refusing to overwrite it", o->path);
        nt_out_abort(o);
        return -1;
    }
    if (rename(o->tmp, o->path)) {
        snprintf(err, errlen, "cannot rename %s to %s: %s", o->tmp, o->path, strerror(errno));
        nt_out_abort(o);
        return -1;
    }
    free(o->tmp);
    free(o->path);
    o->tmp = o->path = NULL;
    return 0;
}

void nt_out_abort(nt_out *o) {
    if (o->f) fclose(o->f);
    if (o->tmp) unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    memset(o, 0, sizeof *o);
}
