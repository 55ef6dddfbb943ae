/* cmd_list.c -- placeholder until its owner lands it. */
#include "tuner/cli.h"
#include <stdio.h>
int cmd_list(int argc, char **argv) {
    (void)argc; (void)argv;
    fprintf(stderr, "normtune list: not implemented yet\n");
    return NT_EXIT_FAIL;
}
