/* compile.c -- placeholder until its owner lands it. */
#include "tuner/cli.h"
#include <stdio.h>
int cmd_compile(int argc, char **argv) {
    (void)argc; (void)argv;
    fprintf(stderr, "normtune compile: not implemented yet\n");
    return NT_EXIT_FAIL;
}
