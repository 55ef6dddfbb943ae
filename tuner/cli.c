/* cli.c -- helpers shared by the command implementations. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "tuner/cli.h"

void nt_errorf(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "normtune %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int nt_parse_pos(const char *cmd, const char *opt, const char *text, long long *v) {
    char *end;
    long long x = strtoll(text, &end, 10);
    if (!*text || *end || x <= 0) {
        nt_errorf(cmd, "%s needs a positive integer, got '%s'", opt, text);
        return -1;
    }
    *v = x;
    return 0;
}

