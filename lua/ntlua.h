/* ntlua.h -- load a Lua sweep script into plain C structs.
 *
 * The only module that includes lua.h.  A script returns
 * normtune.sweep{...}; ntl_load runs it in a sandboxed state (no os, no io
 * writes, no load of binary chunks), checks every field, and fills an
 * nt_sweep (search/sweep.h), the description of a space; search/ walks
 * it.  The state stays open so that `where` constraints can be called back:
 * ntl_load installs ntl_where and the walk budget calls below as the
 * sweep's nt_script_ops.  Errors read "file:line: message".
 *
 * Budgets: a sweep has one CPU-time and one wall-clock budget for both runs
 * of the script, all its where() calls and closing its states together
 * (docs/lua-api.md, "Budgets"; NORMTUNE_SCRIPT_BUDGET overrides them).  A
 * watchdog thread asks a script that overruns to stop (a Lua error at its
 * next instruction hook); one that does not come back within a grace period
 * (C code such as a pattern match, or a __gc finalizer, where Lua runs no
 * hooks) is ended: a message on stderr and _exit(1).  Nothing is stored
 * while a script or where() runs, so that loses nothing. */
#ifndef NT_LUA_H
#define NT_LUA_H

#include <stddef.h>
#include <stdint.h>
#include "../kernels/family.h"
#include "../kernels/nt.h"
#include "../search/sweep.h"

/* Load and check a script.  The script runs twice, in two states, and must
 * build the same sweep both times (the second run's print() is silent).  A
 * UTF-8 BOM and a first line starting with '#' are skipped as lua5.4 skips
 * them.  0, or -1 with "file:line: message" in err (also for a bad
 * NORMTUNE_SCRIPT_BUDGET); on failure *sw holds nothing that needs
 * freeing. */
int ntl_load(const char *path, nt_sweep *sw, char *err, size_t errlen);

/* Call family f's where(p, s) for a point of problem pr (s = {M=, N=,
 * dtype = {slot = "bf16", ...}}).  *accept = 1 when there is no
 * constraint.  0, or -1 with "file:line: message" (a runtime error in the
 * constraint, or a non-boolean result). */
int ntl_where(nt_sweep *sw, int f, const nt_params *p, const nt_problem *pr,
              int *accept, char *err, size_t errlen);

/* The budget and where(): nt_enumerate brackets its walks with
 * ntl_walk_begin/ntl_walk_end (the CPU time of the thread between them
 * counts; wall-clock time counts only inside where() calls) and calls
 * ntl_walk_poll now and then, which notices a stop the watchdog asked for
 * when no where() runs.  begin and poll return 0, or -1 with "file: stopped
 * after ..." in err once the budget is spent.  Brackets may nest. */
int ntl_walk_begin(nt_sweep *sw, char *err, size_t errlen);
void ntl_walk_end(nt_sweep *sw);
int ntl_walk_poll(nt_sweep *sw, char *err, size_t errlen);

/* Close the state (its finalizers run under the sweep's budget) and free
 * everything; safe on a zeroed or failed sweep. */
void ntl_free(nt_sweep *sw);

#endif
