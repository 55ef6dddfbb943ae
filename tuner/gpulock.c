/* gpulock.c -- one normtune run per GPU at a time (tuner/gpulock.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "tuner/gpulock.h"

int nt_gpu_lock(const char *uuid, char *err, size_t errlen) {
    const char *dir = getenv("TMPDIR");
    char path[1024], name[160];
    size_t k = 0;
    if (!dir || !*dir) dir = "/tmp";
    /* the UUID as a file name: letters, digits and '-' only */
    for (const char *p = uuid; *p && k + 1 < sizeof name; p++)
        name[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                            (*p >= '0' && *p <= '9') || *p == '-' ? *p : '_';
    name[k] = 0;
    snprintf(path, sizeof path, "%s/normtune-%s.lock", dir, name);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) fd = open(path, O_RDONLY | O_CLOEXEC);  /* another user's file */
    if (fd < 0) {
        snprintf(err, errlen, "cannot make the lock %s of GPU %s: %s", path, uuid,
                 strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        int e = errno;
        char who[256] = "";
        ssize_t n = pread(fd, who, sizeof who - 1, 0);
        who[n > 0 ? n : 0] = 0;
        who[strcspn(who, "\n")] = 0;
        if (e == EWOULDBLOCK)
            snprintf(err, errlen, "GPU %s is in use by another normtune run (%s; lock %s): "
                     "two runs on one GPU disturb each other's timings; wait for it to end, "
                     "or give this run another GPU (--gpu, --device, --devices)", uuid,
                     who[0] ? who : "its pid unknown", path);
        else
            snprintf(err, errlen, "cannot lock %s for GPU %s: %s", path, uuid, strerror(e));
        close(fd);
        return -1;
    }
    /* say who holds it, for the message of the next one (best effort) */
    char me[128];
    int m = snprintf(me, sizeof me, "pid %ld\n", (long)getpid());
    if (ftruncate(fd, 0) == 0 && m > 0) {
        ssize_t w = pwrite(fd, me, (size_t)m, 0);
        (void)w;
    }
    return fd;
}
