/* fanout.c -- several copies of this program at once, stderr labelled
 * (tuner/fanout.h). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tuner/fanout.h"

#define LINE_MAX_KEEP 4096    /* a longer stderr line is printed in pieces */

typedef struct child {
    pid_t pid;
    int fd;                   /* read end of its stderr, -1 once at EOF */
    char buf[LINE_MAX_KEEP];
    size_t n;
} child;

static volatile sig_atomic_t got_term;

static void on_term(int sig) {
    (void)sig;
    got_term = 1;
}

/* Print child c's buffered text up to its last newline (all of it when
 * flush), each line after label. */
static void emit(child *c, const char *label, int flush) {
    size_t start = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->buf[i] == '\n') {
            fprintf(stderr, "%s %.*s\n", label, (int)(i - start), c->buf + start);
            start = i + 1;
        }
    if ((flush || start == 0) && start < c->n && (flush || c->n == sizeof c->buf)) {
        fprintf(stderr, "%s %.*s\n", label, (int)(c->n - start), c->buf + start);
        start = c->n;
    }
    memmove(c->buf, c->buf + start, c->n - start);
    c->n -= start;
}

int nt_fanout(int n, char **const *argv, const char *const *label, char *err, size_t errlen) {
    child *c = calloc((size_t)(n > 0 ? n : 1), sizeof *c);
    struct pollfd *pf = calloc((size_t)(n > 0 ? n : 1), sizeof *pf);
    int started = 0, failed = 0, rc = 0, interrupted = 0;
    struct sigaction sa, old_term, old_int;
    if (!c || !pf) {
        free(c);
        free(pf);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, &old_term);
    /* Ctrl-C is the children's to handle (they see it from the terminal) */
    sa.sa_handler = SIG_IGN;
    sigaction(SIGINT, &sa, &old_int);
    got_term = 0;
    fflush(NULL);
    for (; started < n; started++) {
        int p[2];
        if (pipe(p)) {
            snprintf(err, errlen, "cannot start %s: %s", label[started], strerror(errno));
            failed = 1;
            break;
        }
        pid_t pid = fork();
        if (pid < 0) {
            snprintf(err, errlen, "cannot start %s: %s", label[started], strerror(errno));
            close(p[0]);
            close(p[1]);
            failed = 1;
            break;
        }
        if (pid == 0) {
            sigaction(SIGINT, &old_int, NULL);
            sigaction(SIGTERM, &old_term, NULL);
            dup2(p[1], 2);
            close(p[0]);
            close(p[1]);
            execv("/proc/self/exe", argv[started]);
            fprintf(stderr, "cannot run /proc/self/exe: %s\n", strerror(errno));
            _exit(127);
        }
        close(p[1]);
        c[started].pid = pid;
        c[started].fd = p[0];
    }
    for (;;) {
        int open_fds = 0;
        for (int i = 0; i < started; i++) {
            pf[i].fd = c[i].fd;
            pf[i].events = POLLIN;
            pf[i].revents = 0;
            open_fds += c[i].fd >= 0;
        }
        if (!open_fds) break;
        if (got_term) {
            for (int i = 0; i < started; i++) kill(c[i].pid, SIGTERM);
            got_term = 0;
        }
        if (poll(pf, (nfds_t)started, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < started; i++) {
            if (c[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t k = read(c[i].fd, c[i].buf + c[i].n, sizeof c[i].buf - c[i].n);
            if (k > 0) {
                c[i].n += (size_t)k;
                emit(&c[i], label[i], 0);
            } else if (k == 0 || errno != EINTR) {
                emit(&c[i], label[i], 1);
                close(c[i].fd);
                c[i].fd = -1;
            }
        }
    }
    for (int i = 0; i < started; i++) {
        int st = 0;
        while (waitpid(c[i].pid, &st, 0) < 0 && errno == EINTR) {
        }
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
        if ((WIFEXITED(st) && code == 130) ||
            (WIFSIGNALED(st) && (WTERMSIG(st) == SIGINT || WTERMSIG(st) == SIGTERM)))
            interrupted = 1;
        else if (code && !rc)
            rc = code;
    }
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGINT, &old_int, NULL);
    free(c);
    free(pf);
    if (failed) return -1;
    return interrupted ? 130 : rc;
}
