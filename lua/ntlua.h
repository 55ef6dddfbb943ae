/* ntlua.h -- load a Lua sweep script into plain C structs.
 *
 * The only module that includes lua.h.  A script returns
 * normtune.sweep{...}; ntl_load runs it in a sandboxed state (no os, no io
 * writes, no load of binary chunks), checks every field, and fills an
 * nt_sweep.  The state stays open so that `where` constraints can be called
 * back with ntl_where.  Errors read "file:line: message". */
#ifndef NT_LUA_H
#define NT_LUA_H

#include <stddef.h>
#include <stdint.h>
#include "../kernels/family.h"
#include "../search/search.h"
#include "../tuner/eval.h"

#define NTL_MAX_FAMILIES 8
#define NTL_MAX_SHAPES 4096

typedef struct nt_sweep_family {
    const nt_family *fam;     /* the family descriptor */
    search_space space;       /* its parameter space, dims in declared order */
    int where_ref;            /* Lua registry ref of where(), or -1 */
} nt_sweep_family;

typedef struct nt_sweep {
    char path[1024];          /* script path as given */
    char hash[17];            /* FNV-1a 64 of the script bytes, hex */
    char op[32];              /* "rmsnorm_bwd" */
    char dtype[16];           /* "bf16" */
    int nshape;
    nt_shape *shapes;         /* nshape shapes, owned */
    int nfam;
    nt_sweep_family fam[NTL_MAX_FAMILIES];
    search_cfg search;        /* strategy, budget, seed */
    nt_timing timing;
    double eps;               /* epsilon, default 1e-6 */
    void *L;                  /* lua_State, owned */
} nt_sweep;

/* Load and check a script.  0, or -1 with "file:line: message" in err;
 * on failure *sw holds nothing that needs freeing. */
int ntl_load(const char *path, nt_sweep *sw, char *err, size_t errlen);

/* Call family f's where(p, shape) for a point.  *accept = 1 when there is no
 * constraint.  0, or -1 with "file:line: message" (a runtime error in the
 * constraint, or a non-boolean result). */
int ntl_where(nt_sweep *sw, int f, const nt_params *p, const nt_shape *s,
              int *accept, char *err, size_t errlen);

/* Params of family f for the point idx (values as texts). */
void ntl_point_params(const nt_sweep *sw, int f, const int *idx, nt_params *p);

void ntl_free(nt_sweep *sw);

#endif
