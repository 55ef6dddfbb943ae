/* test_fanout.c -- tuner/fanout.c, the processes of `run --devices`: every
 * child runs, each of its stderr lines comes out whole after its label
 * (also a last line without a newline, and one longer than the line
 * buffer), stdout passes through, and the exit status is 0 when all
 * succeed, the first failure's otherwise, and 130 when one was
 * interrupted, whatever the others did.  The children are this program
 * again (nt_fanout runs /proc/self/exe), told what to do by their
 * arguments: "child CODE LINES" prints LINES numbered lines on stderr and
 * exits CODE ("int": dies of SIGINT; "long": one 10000-character line). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/t.h"
#include "tuner/fanout.h"

static int child(int argc, char **argv) {
    int lines = argc > 3 ? atoi(argv[3]) : 0;
    if (argc > 2 && !strcmp(argv[2], "long")) {
        for (int i = 0; i < 10000; i++) fputc('x', stderr);
        fputc('\n', stderr);
        return 0;
    }
    for (int i = 0; i < lines; i++) fprintf(stderr, "line %d of %s\n", i, argv[2]);
    fprintf(stderr, "no newline at the end");
    printf("stdout of %s\n", argv[2]);
    fflush(NULL);
    if (!strcmp(argv[2], "int")) {
        signal(SIGINT, SIG_DFL);  /* a test started in the background ignores it */
        raise(SIGINT);
    }
    return atoi(argv[2]);
}

/* Run children with the given codes ("0", "3", "int", "long"), stderr into
 * a file; the status, and the file's text into *text (malloc'd). */
static int fan(int n, const char *const *code, int lines, char **text) {
    char path[600], nl[16];
    snprintf(path, sizeof path, "%s/fanout_err.txt", t_tmpdir());
    snprintf(nl, sizeof nl, "%d", lines);
    char *args[8][5];
    char **argvs[8];
    const char *labels[8] = {"[a]", "[b]", "[c]", "[d]", "[e]", "[f]", "[g]", "[h]"};
    for (int i = 0; i < n; i++) {
        args[i][0] = "test_fanout";
        args[i][1] = "child";
        args[i][2] = (char *)code[i];
        args[i][3] = nl;
        args[i][4] = NULL;
        argvs[i] = args[i];
    }
    fflush(stderr);
    int saved = dup(2);
    FILE *f = freopen(path, "w", stderr);
    char err[256] = "";
    int rc = nt_fanout(n, argvs, labels, err, sizeof err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    (void)f;
    f = fopen(path, "r");
    *text = NULL;
    if (f) {
        size_t cap = 1 << 16, got = 0;
        *text = malloc(cap + 1);
        while (*text && (got += fread(*text + got, 1, cap - got, f)) < cap && !feof(f)) {
        }
        if (*text) (*text)[got] = 0;
        fclose(f);
    }
    return rc;
}

TEST(all_succeed_lines_labelled) {
    const char *code[] = {"0", "0", "0"};
    char *t = NULL;
    int rc = fan(3, code, 50, &t);
    CHECK(rc == 0, "exit %d", rc);
    CHECK(t != NULL, "no output");
    if (!t) return;
    const char *lab[] = {"[a]", "[b]", "[c]"};
    for (int k = 0; k < 3; k++) {
        char want[64];
        snprintf(want, sizeof want, "%s line 49 of 0\n", lab[k]);
        CHECK(strstr(t, want) != NULL, "no '%s'", want);
        snprintf(want, sizeof want, "%s no newline at the end\n", lab[k]);
        CHECK(strstr(t, want) != NULL, "the last line without a newline: no '%s'", want);
    }
    /* every line whole, after a label */
    int lines = 0, bad = 0;
    for (char *p = t; *p; lines++) {
        bad += !(p[0] == '[' && p[2] == ']' && p[3] == ' ');
        char *e = strchr(p, '\n');
        if (!e) break;
        p = e + 1;
    }
    CHECK(lines == 3 * 51, "%d lines, want %d", lines, 3 * 51);
    CHECK(bad == 0, "%d lines without a label", bad);
    free(t);
}

TEST(first_failure_is_the_status) {
    const char *code[] = {"0", "3", "5"};
    char *t = NULL;
    int rc = fan(3, code, 2, &t);
    CHECK(rc == 3 || rc == 5, "exit %d, want a child's failure", rc);
    CHECK(rc == 3, "exit %d, want the first child's failure (3)", rc);
    CHECK(t && strstr(t, "[a] line 1 of 0\n"), "the children that succeeded ran");
    free(t);
}

TEST(interrupted_wins) {
    const char *code[] = {"4", "int", "0"};
    char *t = NULL;
    int rc = fan(3, code, 1, &t);
    CHECK(rc == 130, "exit %d, want 130", rc);
    free(t);
}

TEST(long_line_in_pieces) {
    const char *code[] = {"long"};
    char *t = NULL;
    int rc = fan(1, code, 0, &t);
    CHECK(rc == 0, "exit %d", rc);
    size_t xs = 0;
    for (char *p = t; p && *p; p++) xs += *p == 'x';
    CHECK(xs == 10000, "%zu of the 10000 characters", xs);
    CHECK(t && !strncmp(t, "[a] xxx", 7), "labelled: '%.20s'", t ? t : "");
    free(t);
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "child")) return child(argc, argv);
    RUN(all_succeed_lines_labelled);
    RUN(first_failure_is_the_status);
    RUN(interrupted_wins);
    RUN(long_line_in_pieces);
    T_END();
}
