/* t.h -- the tiny test harness every CPU and GPU test program uses.
 *
 * A test program defines TEST(name) functions and runs them from main with
 * RUN(name); CHECK(cond, fmt, ...) records a failed assertion with file and
 * line.  A test passes when none of its checks failed.  T_END() prints
 * "RESULT passed failed", which tests/run.sh adds up into the final
 * "N passed, N failed" line.  NT_ONLY="a,b" runs only the tests named
 * there (a GPU session short of time reruns what it needs). */
#ifndef NT_T_H
#define NT_T_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_passed, t_failed, t_cur;

#define TEST(name) static void name(void)
#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            t_cur++;                                                        \
            printf("  %s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            printf(__VA_ARGS__);                                            \
            printf("\n");                                                   \
        }                                                                   \
    } while (0)

static void t_run(const char *name, void (*fn)(void)) {
    const char *only = getenv("NT_ONLY");
    if (only && *only) {
        size_t n = strlen(name);
        const char *at = only;
        while ((at = strstr(at, name)) && ((at != only && at[-1] != ',') ||
                                           (at[n] && at[n] != ',')))
            at += n;
        if (!at) return;
    }
    t_cur = 0;
    fn();
    if (t_cur) {
        t_failed++;
        printf("FAIL %s\n", name);
    } else {
        t_passed++;
        printf("PASS %s\n", name);
    }
    fflush(stdout);
}
#define RUN(name) t_run(#name, name)
#define T_END()                                            \
    do {                                                   \
        printf("RESULT %d %d\n", t_passed, t_failed);      \
        return t_failed ? 1 : 0;                           \
    } while (0)

/* A fresh temporary directory for the test's files; removed by the caller
 * (tests/run.sh removes $NT_TMP at the end). */
static inline const char *t_tmpdir(void) {
    static char dir[512];
    if (!dir[0]) {
        const char *base = getenv("NT_TMP");
        snprintf(dir, sizeof dir, "%s/XXXXXX", base && *base ? base : "/tmp");
        extern char *mkdtemp(char *);
        if (!mkdtemp(dir)) { perror("mkdtemp"); exit(2); }
    }
    return dir;
}

#endif
