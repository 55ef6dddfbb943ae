/* fanout.h -- run several copies of this program at once: `run --devices`,
 * one process per GPU.
 *
 * Each child is this program with an argument list of its own, started
 * with fork and exec (nothing of the parent's CUDA state survives into
 * it).  Its stdout is passed through; its stderr is read line by line and
 * each line printed with the child's label before it ("[gpu 1] ..."), so
 * that the children's progress lines stay apart.  A Ctrl-C reaches the
 * children from the terminal (they are in the parent's process group):
 * each finishes its result in progress, stores it and exits 130; the
 * parent waits for them.  A SIGTERM sent to the parent alone is passed on
 * to every child. */
#ifndef NT_FANOUT_H
#define NT_FANOUT_H

#include <stddef.h>

/* Run the n argument lists argv[i] (argv[i][0] is ignored: this program,
 * /proc/self/exe, runs) at once, label[i] before each stderr line of
 * child i, and wait for all.  Returns the exit status to give: 130 when
 * any child was interrupted (it exited 130, or died of SIGINT or
 * SIGTERM), else the first other non-zero status (a child killed by
 * another signal counts as 1), else 0; or -1 with a message in err when a
 * child could not be started (the others are waited for first). */
int nt_fanout(int n, char **const *argv, const char *const *label, char *err, size_t errlen);

#endif
