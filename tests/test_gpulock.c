/* test_gpulock.c -- tuner/gpulock.c, one normtune run per GPU: a second
 * lock of a GPU, from another process, is refused with who holds it; it
 * is free again once the holder closes it or exits; a UUID cannot name a
 * file outside the lock folder; a lock folder that does not exist is a
 * clear error.  No GPU: the UUIDs are made up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/t.h"
#include "tuner/gpulock.h"

/* In a child process: lock uuid; exit 0 when that succeeded (want_ok) or
 * failed with a message holding want_text (!want_ok), else 1. */
static int in_child(const char *uuid, int want_ok, const char *want_text) {
    pid_t pid = fork();
    if (pid == 0) {
        char err[512] = "";
        int fd = nt_gpu_lock(uuid, err, sizeof err);
        if (want_ok) _exit(fd >= 0 ? 0 : 1);
        if (fd >= 0 || !strstr(err, want_text)) {
            printf("  child: fd %d, message '%s'\n", fd, err);
            fflush(stdout);
            _exit(1);
        }
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

TEST(second_lock_refused_then_free) {
    char err[512], uuid[64], who[64];
    snprintf(uuid, sizeof uuid, "GPU-test-%ld", (long)getpid());
    int fd = nt_gpu_lock(uuid, err, sizeof err);
    CHECK(fd >= 0, "first lock: %s", err);
    snprintf(who, sizeof who, "pid %ld", (long)getpid());
    CHECK(in_child(uuid, 0, "in use by another normtune run"), "a second lock was not refused");
    CHECK(in_child(uuid, 0, who), "the refusal does not name the holder (%s)", who);
    CHECK(in_child("GPU-test-other", 1, NULL), "another GPU's lock was refused");
    close(fd);
    CHECK(in_child(uuid, 1, NULL), "not free after the holder closed it");
}

TEST(holder_exit_frees) {
    char err[512], uuid[64];
    snprintf(uuid, sizeof uuid, "GPU-test-exit-%ld", (long)getpid());
    pid_t pid = fork();
    if (pid == 0) {
        int fd = nt_gpu_lock(uuid, err, sizeof err);
        _exit(fd >= 0 ? 0 : 1);          /* exits holding it */
    }
    int st = 0;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child could not lock");
    int fd = nt_gpu_lock(uuid, err, sizeof err);
    CHECK(fd >= 0, "not free after its holder exited: %s", err);
    if (fd >= 0) close(fd);
}

TEST(uuid_stays_in_the_folder) {
    char err[512], path[700];
    int fd = nt_gpu_lock("../GPU/x y", err, sizeof err);
    CHECK(fd >= 0, "lock: %s", err);
    snprintf(path, sizeof path, "%s/normtune-___GPU_x_y.lock", getenv("TMPDIR"));
    struct stat s;
    CHECK(stat(path, &s) == 0, "no %s", path);
    if (fd >= 0) close(fd);
}

TEST(missing_folder_is_an_error) {
    char err[512] = "", dir[700];
    const char *keep = getenv("TMPDIR");
    char saved[600];
    snprintf(saved, sizeof saved, "%s", keep ? keep : "");
    snprintf(dir, sizeof dir, "%s/no/such/folder", saved);
    setenv("TMPDIR", dir, 1);
    int fd = nt_gpu_lock("GPU-test-x", err, sizeof err);
    CHECK(fd < 0, "locked in a folder that does not exist");
    CHECK(strstr(err, "cannot make the lock") != NULL, "message '%s'", err);
    setenv("TMPDIR", saved, 1);
}

int main(void) {
    setenv("TMPDIR", t_tmpdir(), 1);
    RUN(second_lock_refused_then_free);
    RUN(holder_exit_frees);
    RUN(uuid_stays_in_the_folder);
    RUN(missing_folder_is_an_error);
    T_END();
}
