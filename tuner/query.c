/* query.c -- placeholder until its owner lands it. */
#include "tuner/cli.h"
#include <stdio.h>
int cmd_query(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "not implemented yet\n"); return 1; }
int cmd_report(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "not implemented yet\n"); return 1; }
int cmd_merge(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "not implemented yet\n"); return 1; }
