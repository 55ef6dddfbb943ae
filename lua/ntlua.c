/* ntlua.c -- the Lua binding: sweep scripts into plain C structs.
 *
 * A sweep script is Lua 5.4 run in a sandbox (base without load/loadfile/
 * dofile, table, string, math, utf8; no os, io, package or debug), with a
 * memory cap and an instruction budget.  It returns normtune.sweep{...}:
 * a C function that checks every field of the table and packs the result
 * into a userdata of type "normtune.sweep" (an nt_sweep plus an ownership
 * flag; its __gc frees what has not been handed over).  ntl_load then moves
 * the nt_sweep out to the caller and keeps the state open, because the
 * families' `where` constraints stay in the registry and are called back by
 * ntl_where during enumeration.
 *
 * Errors read "file:line: path: message".  Lua's own errors (syntax, runtime)
 * carry the position Lua gives them; errors found by normtune.sweep start at
 * the line of the normtune.sweep call and are refined by looking up the
 * offending field's key in the script text (families -> persistent ->
 * params -> blok), skipping comments, strings and function bodies. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lua/ntlua.h"

#define NTL_MEM_LIMIT ((size_t)256 << 20)  /* bytes a script's state may hold */
#define NTL_MAX_SCRIPT ((size_t)4 << 20)   /* largest script file accepted */
#define NTL_HOOK_EVERY 100000              /* VM instructions between hook calls */
#define NTL_MAX_HOOKS 500                  /* hook calls per run: 5e7 instructions */
#define NTL_SWEEP_MT "normtune.sweep"

/* Per-state context, the allocator's user data (lua_getallocf finds it). */
typedef struct ntl_ctx {
    size_t used;              /* bytes held by the state */
    int hooks;                /* count-hook calls since the current run began */
    char *src;                /* the script text, for locating keys */
    size_t nsrc;
} ntl_ctx;

/* What normtune.sweep returns: the checked sweep, and whether the userdata
 * still owns its allocations (ntl_load clears it when it takes them). */
typedef struct ntl_box {
    nt_sweep sw;
    int owned;
} ntl_box;

/* Where normtune.sweep was called: for error positions. */
typedef struct ntl_chk {
    lua_State *L;
    const char *src;          /* script text, or NULL when not our chunk */
    size_t nsrc;
    int line;                 /* line of the normtune.sweep call */
    char where[LUA_IDSIZE];   /* short source name */
} ntl_chk;

static const char *const top_fields[] = {"op", "dtype", "shapes", "families",
                                         "search", "timing", "eps", NULL};
static const char *const fam_fields[] = {"params", "where", NULL};
static const char *const shape_fields[] = {"M", "N", NULL};
static const char *const search_fields[] = {"strategy", "budget", "seed", NULL};
static const char *const timing_fields[] = {"warmup", "min_samples", "max_samples",
                                            "rel_ci", NULL};
static const char *const dtypes[] = {"bf16", NULL};

/* ---- state: allocator, hook, message handler ---------------------------- */

/* The allocator: realloc with a cap on the bytes the state holds. */
static void *ntl_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    ntl_ctx *c = ud;
    if (!ptr) osize = 0;      /* osize encodes the object type then */
    if (nsize == 0) {
        free(ptr);
        c->used -= osize;
        return NULL;
    }
    if (nsize > osize && c->used + (nsize - osize) > NTL_MEM_LIMIT) return NULL;
    void *q = realloc(ptr, nsize);
    if (q) c->used = c->used - osize + nsize;
    return q;
}

/* Count hook: stop a script (or a where()) that runs away. */
static void ntl_hook(lua_State *L, lua_Debug *ar) {
    void *ud;
    (void)ar;
    lua_getallocf(L, &ud);
    if (++((ntl_ctx *)ud)->hooks > NTL_MAX_HOOKS) {
        /* no position here: the message handler adds the running line */
        lua_pushfstring(L, "script ran for more than %d instructions (an endless loop?)",
                        NTL_HOOK_EVERY * NTL_MAX_HOOKS);
        lua_error(L);
    }
}

/* Does msg already start with "source:line:"? */
static int has_pos(const char *msg, const char *src) {
    size_t n = strlen(src);
    if (strncmp(msg, src, n) || msg[n] != ':' || !isdigit((unsigned char)msg[n + 1])) return 0;
    return 1;
}

/* Message handler for every pcall: returns the error as one string
 * "file:line: message".  An error without a position (error(x, 0), an
 * error object that is not a string, the instruction limit) gets the
 * position of the innermost Lua function on the stack that has a line. */
static int ntl_msgh(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (!msg) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            msg = lua_tostring(L, -1);
        else
            msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    lua_Debug ar;
    for (int lvl = 0; lua_getstack(L, lvl, &ar); lvl++) {
        lua_getinfo(L, "Sl", &ar);
        if (ar.currentline <= 0) continue;
        if (!has_pos(msg, ar.short_src))
            msg = lua_pushfstring(L, "%s:%d: %s", ar.short_src, ar.currentline, msg);
        break;
    }
    lua_pushstring(L, msg);
    return 1;
}

/* print() writes to stderr: stdout belongs to the commands' output. */
static int ntl_print(lua_State *L) {
    int n = lua_gettop(L);
    for (int i = 1; i <= n; i++) {
        size_t len;
        const char *s = luaL_tolstring(L, i, &len);
        if (i > 1) fputc('\t', stderr);
        fwrite(s, 1, len, stderr);
        lua_pop(L, 1);
    }
    fputc('\n', stderr);
    return 0;
}

/* ---- locating a field in the script text -------------------------------- */

/* Length of a long bracket opening at s ("[[", "[==["), or 0. */
static size_t long_open(const char *s, const char *e, int *level) {
    const char *p = s + 1;
    if (*s != '[') return 0;
    while (p < e && *p == '=') p++;
    if (p >= e || *p != '[') return 0;
    *level = (int)(p - s - 1);
    return (size_t)(p - s + 1);
}

/* Skip to the end of a long bracket of the given level; counts newlines. */
static const char *long_skip(const char *p, const char *e, int level, int *line) {
    for (; p < e; p++) {
        if (*p == '\n') (*line)++;
        if (*p != ']') continue;
        const char *q = p + 1;
        while (q < e && *q == '=') q++;
        if (q < e && *q == ']' && q - p - 1 == level) return q + 1;
    }
    return e;
}

/* Line of the nth (from 1) `key =` (not `==`, not `x.key =`) at or after
 * line `from` in the script, outside comments, strings and function bodies
 * that start after `from`; 0 if none. */
static int key_line(const char *s, size_t n, int from, const char *key, int nth) {
    const char *p = s, *e = s + n;
    size_t klen = strlen(key);
    int line = 1, depth = 0, level;
    while (p < e) {
        char ch = *p;
        if (ch == '\n') {
            line++;
            p++;
        } else if (ch == '-' && p + 1 < e && p[1] == '-') {
            size_t lo = long_open(p + 2, e, &level);
            if (lo)
                p = long_skip(p + 2 + lo, e, level, &line);
            else
                while (p < e && *p != '\n') p++;
        } else if (ch == '"' || ch == '\'') {
            for (p++; p < e && *p != ch && *p != '\n'; p++)
                if (*p == '\\' && p + 1 < e) {
                    if (p[1] == '\n') line++;
                    p++;
                }
            if (p < e && *p == ch) p++;
        } else if (ch == '[' && long_open(p, e, &level)) {
            p = long_skip(p + long_open(p, e, &level), e, level, &line);
        } else if (isalpha((unsigned char)ch) || ch == '_') {
            const char *w = p;
            while (p < e && (isalnum((unsigned char)*p) || *p == '_')) p++;
            size_t wl = (size_t)(p - w);
#define IS(kw) (wl == sizeof kw - 1 && !memcmp(w, kw, wl))
            if (line >= from && (IS("function") || IS("if") || IS("do") || IS("repeat")))
                depth++;
            else if (line >= from && (IS("end") || IS("until")) && depth > 0)
                depth--;
#undef IS
            else if (line >= from && !depth && wl == klen && !memcmp(w, key, klen) &&
                     (w == s || w[-1] != '.')) {
                const char *q = p;
                while (q < e && (*q == ' ' || *q == '\t')) q++;
                if (q < e && *q == '=' && (q + 1 >= e || q[1] != '=') && --nth <= 0) return line;
            }
        } else {
            p++;
        }
    }
    return 0;
}

/* Raise "file:line: path: message".  keys is the NULL-terminated chain of
 * field names that leads to the culprit; the line is that of the last one
 * found in the text after the normtune.sweep call, else the call's line. */
static int chk_fail(const ntl_chk *k, const char *const *keys, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int chk_fail(const ntl_chk *k, const char *const *keys, const char *fmt, ...) {
    int line = k->line;
    if (k->src)
        for (int i = 0; keys && keys[i]; i++) {
            /* "M#3": the third `M =` (a field of the third list item) */
            char key[64];
            const char *hash = strchr(keys[i], '#');
            int nth = hash ? atoi(hash + 1) : 1, l;
            snprintf(key, sizeof key, "%.*s", hash ? (int)(hash - keys[i]) : 63, keys[i]);
            l = key_line(k->src, k->nsrc, line, key, nth);
            if (l > 0) line = l;
        }
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    lua_pushfstring(k->L, "%s:%d: %s", k->where, line, msg);
    return lua_error(k->L);
}

/* ", "-joined list of names into buf. */
static const char *join(const char *const *names, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; names[i] && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
    return buf;
}

static int in_list(const char *const *names, const char *s) {
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], s)) return 1;
    return 0;
}

/* ---- checking the sweep table ------------------------------------------- */

/* Check that the table at idx has only string keys from allowed[]; noun
 * names them in messages ("field", "parameter"). */
static void check_keys(const ntl_chk *k, int idx, const char *const *allowed,
                       const char *const *keys, const char *what, const char *noun) {
    lua_State *L = k->L;
    char list[256];
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            chk_fail(k, keys, "%s: %s names must be strings, got a %s key (allowed: %s)",
                     what, noun, luaL_typename(L, -1), join(allowed, list, sizeof list));
        const char *name = lua_tostring(L, -1);
        if (!in_list(allowed, name)) {
            const char *chain[8];
            int n = 0;
            while (keys && keys[n] && n < 6) chain[n] = keys[n], n++;
            chain[n++] = name;
            chain[n] = NULL;
            chk_fail(k, chain, "%s: unknown %s '%s' (allowed: %s)", what, noun, name,
                     join(allowed, list, sizeof list));
        }
    }
}

/* Push field name of table idx; check its type (LUA_TNIL allowed when
 * optional).  Returns the type found. */
static int get_field(const ntl_chk *k, int idx, const char *name, int type, int optional,
                     const char *const *keys, const char *what) {
    int t = lua_getfield(k->L, idx, name);
    if (t == LUA_TNIL && optional) return t;
    const char *chain[8];
    int n = 0;
    while (keys && keys[n] && n < 6) chain[n] = keys[n], n++;
    if (!n || strcmp(chain[n - 1], name)) chain[n++] = name;
    chain[n] = NULL;
    if (t != type)
        chk_fail(k, chain, "%s%s%s: expected %s, got %s", what, *what ? "." : "", name,
                 lua_typename(k->L, type), luaL_typename(k->L, -1));
    return t;
}

/* The value at the top as an integer, or an error naming the field. */
static lua_Integer get_int(const ntl_chk *k, const char *const *keys, const char *what) {
    int isint = 0;
    lua_Integer v = 0;
    if (lua_type(k->L, -1) == LUA_TNUMBER) v = lua_tointegerx(k->L, -1, &isint);
    if (!isint)
        chk_fail(k, keys, "%s: expected an integer, got %s%s", what, luaL_typename(k->L, -1),
                 lua_type(k->L, -1) == LUA_TNUMBER ? " with a fraction" : "");
    return v;
}

/* Length of the list at idx; error unless keys are exactly 1..n with n > 0. */
static int list_len(const ntl_chk *k, int idx, const char *const *keys, const char *what) {
    lua_State *L = k->L;
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx), count = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        lua_Integer i;
        int isint = lua_type(L, -1) == LUA_TNUMBER;
        i = isint ? lua_tointegerx(L, -1, &isint) : 0;
        if (!isint || i < 1 || i > n)
            chk_fail(k, keys, "%s: expected a list, found key %s", what,
                     luaL_tolstring(L, -1, NULL));
        count++;
    }
    if (count != n) chk_fail(k, keys, "%s: expected a list without holes", what);
    if (n == 0) chk_fail(k, keys, "%s: empty list", what);
    return (int)n;
}

/* Values of one parameter space (list at idx) as texts, checked against the
 * family's declaration d, added to space sp as a dimension. */
static void read_space(const ntl_chk *k, int idx, const nt_family *f, const nt_param_def *d,
                       search_space *sp, const char *const *keys) {
    lua_State *L = k->L;
    char what[128], err[256], list[256];
    snprintf(what, sizeof what, "families.%s.params.%s", f->name + strlen(f->op) + 1, d->name);
    int n = list_len(k, idx, keys, what);
    if (n > SEARCH_MAX_VALUES)
        chk_fail(k, keys, "%s: %d values, at most %d", what, n, SEARCH_MAX_VALUES);
    /* value texts and pointers live in a userdata: freed by the GC on error */
    char (*val)[SEARCH_VAL_LEN] = lua_newuserdatauv(L, (size_t)n * (SEARCH_VAL_LEN + sizeof(char *)), 0);
    const char **ptr = (const char **)(val + n);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, idx, i + 1);
        if (d->kind == NT_PARAM_INT) {
            int isint = 0;
            lua_Integer v = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &isint) : 0;
            if (!isint)
                chk_fail(k, keys, "%s[%d]: expected an integer, got %s", what, i + 1,
                         lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : luaL_typename(L, -1));
            if (v < d->lo || v > d->hi)
                chk_fail(k, keys, "%s[%d]: %lld is out of the allowed range [%lld, %lld]", what,
                         i + 1, (long long)v, (long long)d->lo, (long long)d->hi);
            snprintf(val[i], SEARCH_VAL_LEN, "%lld", (long long)v);
        } else {
            if (lua_type(L, -1) != LUA_TSTRING)
                chk_fail(k, keys, "%s[%d]: expected a string, got %s", what, i + 1,
                         luaL_typename(L, -1));
            const char *v = lua_tostring(L, -1);
            if (!in_list(d->choices, v))
                chk_fail(k, keys, "%s[%d]: '%s' is not allowed (allowed: %s)", what, i + 1, v,
                         join(d->choices, list, sizeof list));
            snprintf(val[i], SEARCH_VAL_LEN, "%s", v);
        }
        lua_pop(L, 1);
        for (int j = 0; j < i; j++)
            if (!strcmp(val[j], val[i]))
                chk_fail(k, keys, "%s: value %s appears twice", what, val[i]);
        ptr[i] = val[i];
    }
    if (search_space_add(sp, d->name, ptr, n, err, sizeof err))
        chk_fail(k, keys, "%s: %s", what, err);
    lua_pop(L, 1);            /* the value buffer */
}

/* Read families (table at idx) into box->sw.fam, in nt_families[] order. */
static void read_families(const ntl_chk *k, int idx, ntl_box *box) {
    lua_State *L = k->L;
    nt_sweep *sw = &box->sw;
    const char *names[NTL_MAX_FAMILIES + 1];
    const nt_family *fams[NTL_MAX_FAMILIES];
    int nf = 0;
    char list[256];
    for (int i = 0; nt_families[i] && nf < NTL_MAX_FAMILIES; i++)
        if (!strcmp(nt_families[i]->op, sw->op)) {
            fams[nf] = nt_families[i];
            names[nf++] = nt_families[i]->name + strlen(sw->op) + 1;
        }
    names[nf] = NULL;
    /* every key a family of this op */
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            chk_fail(k, (const char *[]){"families", NULL},
                     "families: keys must be family names, got a %s key (allowed: %s)",
                     luaL_typename(L, -1), join(names, list, sizeof list));
        const char *name = lua_tostring(L, -1);
        if (!nt_family_find2(sw->op, name))
            chk_fail(k, (const char *[]){"families", name, NULL},
                     "families: unknown family '%s' for op %s (allowed: %s)", name, sw->op,
                     join(names, list, sizeof list));
    }
    for (int i = 0; i < nf; i++) {
        const nt_family *f = fams[i];
        const char *sn = names[i];
        char what[96];
        snprintf(what, sizeof what, "families.%s", sn);
        const char *const keys[] = {"families", sn, NULL};
        if (lua_getfield(L, idx, sn) == LUA_TNIL) {
            lua_pop(L, 1);
            continue;
        }
        if (!lua_istable(L, -1))
            chk_fail(k, keys, "%s: expected table, got %s", what, luaL_typename(L, -1));
        int ft = lua_gettop(L);
        check_keys(k, ft, fam_fields, keys, what, "field");
        nt_sweep_family *sf = &sw->fam[sw->nfam++];
        sf->fam = f;
        sf->where_ref = -1;
        /* params: every declared one, nothing else */
        const char *const pkeys[] = {"families", sn, "params", NULL};
        get_field(k, ft, "params", LUA_TTABLE, 0, keys, what);
        int pt = lua_gettop(L);
        char pwhat[128], pl[256];
        const char *pn[NT_MAX_PARAMS + 1];
        for (int j = 0; j < f->nparams; j++) pn[j] = f->params[j].name;
        pn[f->nparams] = NULL;
        snprintf(pwhat, sizeof pwhat, "%s.params", what);
        check_keys(k, pt, pn, pkeys, pwhat, "parameter");
        for (int j = 0; j < f->nparams; j++) {
            const nt_param_def *d = &f->params[j];
            const char *const vkeys[] = {"families", sn, "params", d->name, NULL};
            int t = lua_getfield(L, pt, d->name);
            if (t == LUA_TNIL)
                chk_fail(k, pkeys, "%s: missing parameter '%s' (family %s needs: %s)", pwhat,
                         d->name, f->name, join(pn, pl, sizeof pl));
            if (t != LUA_TTABLE)
                chk_fail(k, vkeys, "%s.%s: expected a list or normtune.range(), got %s", pwhat,
                         d->name, luaL_typename(L, -1));
            read_space(k, lua_gettop(L), f, d, &sf->space, vkeys);
            lua_pop(L, 1);
        }
        lua_pop(L, 1);        /* params */
        if (get_field(k, ft, "where", LUA_TFUNCTION, 1, keys, what) == LUA_TFUNCTION)
            sf->where_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        else
            lua_pop(L, 1);
        lua_pop(L, 1);        /* the family table */
    }
    if (sw->nfam == 0)
        chk_fail(k, (const char *[]){"families", NULL}, "families: no family given (allowed: %s)",
                 join(names, list, sizeof list));
}

/* Read shapes (list at idx) into box->sw.shapes. */
static void read_shapes(const ntl_chk *k, int idx, ntl_box *box) {
    lua_State *L = k->L;
    nt_sweep *sw = &box->sw;
    const char *const keys[] = {"shapes", NULL};
    int n = list_len(k, idx, keys, "shapes");
    if (n > NTL_MAX_SHAPES) chk_fail(k, keys, "shapes: %d shapes, at most %d", n, NTL_MAX_SHAPES);
    sw->shapes = calloc((size_t)n, sizeof *sw->shapes);
    if (!sw->shapes) chk_fail(k, keys, "out of memory");
    for (int i = 0; i < n; i++) {
        char what[64];
        snprintf(what, sizeof what, "shapes[%d]", i + 1);
        lua_rawgeti(L, idx, i + 1);
        if (!lua_istable(L, -1))
            chk_fail(k, keys, "%s: expected table {M=, N=}, got %s", what, luaL_typename(L, -1));
        int st = lua_gettop(L);
        check_keys(k, st, shape_fields, keys, what, "field");
        int64_t v[2];
        char occ[2][32];      /* "M#i": the i-th M = after shapes */
        snprintf(occ[0], sizeof occ[0], "M#%d", i + 1);
        snprintf(occ[1], sizeof occ[1], "N#%d", i + 1);
        for (int j = 0; j < 2; j++) {
            const char *const vkeys[] = {"shapes", occ[j], NULL};
            char fw[80];
            snprintf(fw, sizeof fw, "%s.%s", what, shape_fields[j]);
            if (lua_getfield(L, st, shape_fields[j]) == LUA_TNIL)
                chk_fail(k, (const char *[]){"shapes", occ[0], NULL}, "%s: missing %s", what,
                         shape_fields[j]);
            v[j] = get_int(k, vkeys, fw);
            if (v[j] < 1) chk_fail(k, vkeys, "%s must be a positive integer, got %lld", fw, (long long)v[j]);
            lua_pop(L, 1);
        }
        for (int j = 0; j < i; j++)
            if (sw->shapes[j].M == v[0] && sw->shapes[j].N == v[1])
                chk_fail(k, (const char *[]){"shapes", occ[0], NULL},
                         "%s: M=%lld N=%lld repeats shapes[%d]", what, (long long)v[0],
                         (long long)v[1], j + 1);
        sw->shapes[i].M = v[0];
        sw->shapes[i].N = v[1];
        sw->nshape = i + 1;
        lua_pop(L, 1);
    }
}

/* Read the optional search table (at the top, or nil). */
static void read_search(const ntl_chk *k, int idx, nt_sweep *sw) {
    lua_State *L = k->L;
    const char *const keys[] = {"search", NULL};
    char list[256];
    snprintf(sw->search.strategy, sizeof sw->search.strategy, "exhaustive");
    if (lua_isnil(L, idx)) return;
    check_keys(k, idx, search_fields, keys, "search", "field");
    if (get_field(k, idx, "strategy", LUA_TSTRING, 1, keys, "search") == LUA_TSTRING) {
        const char *s = lua_tostring(L, -1);
        if (!in_list(search_strategies, s) || strlen(s) >= sizeof sw->search.strategy)
            chk_fail(k, (const char *[]){"search", "strategy", NULL},
                     "search.strategy: unknown strategy '%s' (allowed: %s)", s,
                     join(search_strategies, list, sizeof list));
        snprintf(sw->search.strategy, sizeof sw->search.strategy, "%s", s);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, idx, "budget") != LUA_TNIL) {
        const char *const bk[] = {"search", "budget", NULL};
        lua_Integer b = get_int(k, bk, "search.budget");
        if (b < 1) chk_fail(k, bk, "search.budget must be a positive integer, got %lld", (long long)b);
        sw->search.budget = (uint64_t)b;
    }
    lua_pop(L, 1);
    if (lua_getfield(L, idx, "seed") != LUA_TNIL) {
        const char *const sk[] = {"search", "seed", NULL};
        lua_Integer s = get_int(k, sk, "search.seed");
        if (s < 0) chk_fail(k, sk, "search.seed must be >= 0, got %lld", (long long)s);
        sw->search.seed = (uint64_t)s;
    }
    lua_pop(L, 1);
}

/* Read the optional timing table (at idx, or nil) over the defaults. */
static void read_timing(const ntl_chk *k, int idx, nt_sweep *sw) {
    lua_State *L = k->L;
    const char *const keys[] = {"timing", NULL};
    nt_timing *t = &sw->timing;
    t->warmup = 10;
    t->min_samples = 20;
    t->max_samples = 200;
    t->rel_ci = 0.01;
    if (lua_isnil(L, idx)) return;
    check_keys(k, idx, timing_fields, keys, "timing", "field");
    static const struct {
        const char *name;
        lua_Integer lo;
        size_t off;
    } ints[] = {
        {"warmup", 0, offsetof(nt_timing, warmup)},
        {"min_samples", 1, offsetof(nt_timing, min_samples)},
        {"max_samples", 1, offsetof(nt_timing, max_samples)},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        const char *const fk[] = {"timing", ints[i].name, NULL};
        char what[64];
        snprintf(what, sizeof what, "timing.%s", ints[i].name);
        if (lua_getfield(L, idx, ints[i].name) != LUA_TNIL) {
            lua_Integer v = get_int(k, fk, what);
            if (v < ints[i].lo || v > NT_MAX_SAMPLES)
                chk_fail(k, fk, "%s must be in [%lld, %d], got %lld", what, (long long)ints[i].lo,
                         NT_MAX_SAMPLES, (long long)v);
            *(int *)((char *)t + ints[i].off) = (int)v;
        }
        lua_pop(L, 1);
    }
    if (t->max_samples < t->min_samples)
        chk_fail(k, (const char *[]){"timing", "max_samples", NULL},
                 "timing.max_samples (%d) is below timing.min_samples (%d)", t->max_samples,
                 t->min_samples);
    if (get_field(k, idx, "rel_ci", LUA_TNUMBER, 1, keys, "timing") == LUA_TNUMBER) {
        double r = lua_tonumber(L, -1);
        if (!(r > 0 && r < 1))
            chk_fail(k, (const char *[]){"timing", "rel_ci", NULL},
                     "timing.rel_ci must be in (0, 1), got %g", r);
        t->rel_ci = r;
    }
    lua_pop(L, 1);
}

/* Release what a box owns (shapes, spaces, where refs). */
static void box_release(lua_State *L, ntl_box *b) {
    if (!b->owned) return;
    for (int i = 0; i < b->sw.nfam; i++) {
        search_space_clear(&b->sw.fam[i].space);
        if (b->sw.fam[i].where_ref >= 0) luaL_unref(L, LUA_REGISTRYINDEX, b->sw.fam[i].where_ref);
    }
    free(b->sw.shapes);
    memset(&b->sw, 0, sizeof b->sw);   /* nothing left to hand over */
    b->owned = 0;
}

static int box_gc(lua_State *L) {
    box_release(L, luaL_checkudata(L, 1, NTL_SWEEP_MT));
    return 0;
}

static int box_tostring(lua_State *L) {
    ntl_box *b = luaL_checkudata(L, 1, NTL_SWEEP_MT);
    lua_pushfstring(L, "normtune.sweep(%s, %d shapes, %d families)", b->sw.op, b->sw.nshape,
                    b->sw.nfam);
    return 1;
}

/* normtune.sweep{...}: check the table, return a normtune.sweep userdata. */
static int ntl_sweep(lua_State *L) {
    ntl_chk k = {L, NULL, 0, 0, "?"};
    lua_Debug ar;
    char list[256];
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "Sl", &ar)) {
        void *ud;
        lua_getallocf(L, &ud);
        k.line = ar.currentline;
        snprintf(k.where, sizeof k.where, "%s", ar.short_src);
        if (ar.source[0] == '@') {    /* our script file: keys can be looked up */
            k.src = ((ntl_ctx *)ud)->src;
            k.nsrc = ((ntl_ctx *)ud)->nsrc;
        }
    }
    ntl_box *box = lua_newuserdatauv(L, sizeof *box, 0);    /* index 2 */
    memset(box, 0, sizeof *box);
    box->owned = 1;
    luaL_setmetatable(L, NTL_SWEEP_MT);
    nt_sweep *sw = &box->sw;
    check_keys(&k, 1, top_fields, NULL, "normtune.sweep", "field");

    const char *const opk[] = {"op", NULL};
    get_field(&k, 1, "op", LUA_TSTRING, 0, opk, "");
    const char *op = lua_tostring(L, -1);
    const char *ops[16];
    int nops = 0, known = 0;
    for (int i = 0; nt_families[i]; i++) {
        int seen = 0;
        for (int j = 0; j < nops; j++) seen |= !strcmp(ops[j], nt_families[i]->op);
        if (!seen && nops < 15) ops[nops++] = nt_families[i]->op;
        known |= !strcmp(op, nt_families[i]->op);
    }
    ops[nops] = NULL;
    if (!known || strlen(op) >= sizeof sw->op)
        chk_fail(&k, opk, "op: unknown op '%s' (allowed: %s)", op, join(ops, list, sizeof list));
    snprintf(sw->op, sizeof sw->op, "%s", op);
    lua_pop(L, 1);

    const char *const dk[] = {"dtype", NULL};
    if (get_field(&k, 1, "dtype", LUA_TSTRING, 1, dk, "") == LUA_TNIL) {
        snprintf(sw->dtype, sizeof sw->dtype, "bf16");
    } else {
        const char *dt = lua_tostring(L, -1);
        if (!in_list(dtypes, dt))
            chk_fail(&k, dk, "dtype: unknown dtype '%s' (allowed: %s)", dt,
                     join(dtypes, list, sizeof list));
        snprintf(sw->dtype, sizeof sw->dtype, "%s", dt);
    }
    lua_pop(L, 1);

    get_field(&k, 1, "shapes", LUA_TTABLE, 0, (const char *[]){"shapes", NULL}, "");
    read_shapes(&k, lua_gettop(L), box);
    lua_pop(L, 1);

    get_field(&k, 1, "families", LUA_TTABLE, 0, (const char *[]){"families", NULL}, "");
    read_families(&k, lua_gettop(L), box);
    lua_pop(L, 1);

    get_field(&k, 1, "search", LUA_TTABLE, 1, (const char *[]){"search", NULL}, "");
    read_search(&k, lua_gettop(L), sw);
    lua_pop(L, 1);

    get_field(&k, 1, "timing", LUA_TTABLE, 1, (const char *[]){"timing", NULL}, "");
    read_timing(&k, lua_gettop(L), sw);
    lua_pop(L, 1);

    sw->eps = 1e-6;
    if (get_field(&k, 1, "eps", LUA_TNUMBER, 1, (const char *[]){"eps", NULL}, "") != LUA_TNIL) {
        double e = lua_tonumber(L, -1);
        if (!(e > 0) || !isfinite(e))
            chk_fail(&k, (const char *[]){"eps", NULL}, "eps must be a positive number, got %g", e);
        sw->eps = e;
    }
    lua_settop(L, 2);
    return 1;
}

/* normtune.range(lo, hi[, step]): the list {lo, lo+step, ..., <= hi}. */
static int ntl_range(lua_State *L) {
    lua_Integer lo = luaL_checkinteger(L, 1), hi = luaL_checkinteger(L, 2);
    lua_Integer step = luaL_optinteger(L, 3, 1);
    luaL_argcheck(L, step > 0, 3, "step must be a positive integer");
    if (hi < lo) return luaL_error(L, "normtune.range(%I, %I): empty range (hi < lo)", lo, hi);
    lua_Unsigned n = ((lua_Unsigned)hi - (lua_Unsigned)lo) / (lua_Unsigned)step + 1;
    if (n > SEARCH_MAX_VALUES)
        return luaL_error(L, "normtune.range(%I, %I, %I): %I values, at most %d", lo, hi, step,
                          (lua_Integer)n, SEARCH_MAX_VALUES);
    lua_createtable(L, (int)n, 0);
    for (lua_Unsigned i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)((lua_Unsigned)lo + i * (lua_Unsigned)step));
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

static const luaL_Reg ntl_funcs[] = {
    {"sweep", ntl_sweep},
    {"range", ntl_range},
    {NULL, NULL},
};

static const luaL_Reg ntl_sweep_meta[] = {
    {"__gc", box_gc},
    {"__close", box_gc},
    {"__tostring", box_tostring},
    {NULL, NULL},
};

/* The libraries a script gets, and the globals taken out of base. */
static const luaL_Reg ntl_libs[] = {
    {LUA_GNAME, luaopen_base},
    {LUA_TABLIBNAME, luaopen_table},
    {LUA_STRLIBNAME, luaopen_string},
    {LUA_MATHLIBNAME, luaopen_math},
    {LUA_UTF8LIBNAME, luaopen_utf8},
    {NULL, NULL},
};
static const char *const ntl_removed[] = {"dofile", "loadfile", "load", "require", NULL};

/* Open the sandbox: libraries, normtune table, deterministic math.random. */
static int ntl_open(lua_State *L) {
    for (const luaL_Reg *lib = ntl_libs; lib->func; lib++) {
        luaL_requiref(L, lib->name, lib->func, 1);
        lua_pop(L, 1);
    }
    for (int i = 0; ntl_removed[i]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, ntl_removed[i]);
    }
    lua_pushcfunction(L, ntl_print);
    lua_setglobal(L, "print");
    luaL_newmetatable(L, NTL_SWEEP_MT);
    luaL_setfuncs(L, ntl_sweep_meta, 0);
    lua_pop(L, 1);
    luaL_newlib(L, ntl_funcs);
    lua_setglobal(L, "normtune");
    lua_getglobal(L, "math");
    lua_getfield(L, -1, "randomseed");
    lua_pushinteger(L, 0);    /* the same script, the same sweep */
    lua_call(L, 1, 0);
    lua_pop(L, 1);
    return 0;
}

/* Read a whole file into a malloc'd buffer (*n bytes); NULL with err set. */
static char *read_file(const char *path, size_t *n, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    buf = malloc(NTL_MAX_SCRIPT + 1);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto err;
    }
    *n = fread(buf, 1, NTL_MAX_SCRIPT + 1, f);
    if (ferror(f)) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        goto err;
    }
    if (*n > NTL_MAX_SCRIPT) {
        snprintf(err, errlen, "%s: larger than %zu bytes", path, NTL_MAX_SCRIPT);
        goto err;
    }
    fclose(f);
    buf[*n] = 0;
    return buf;
err:
    free(buf);
    fclose(f);
    return NULL;
}

/* The message of a failed pcall into err.  Lua calls no message handler
 * for a memory error, so that one gets the path here. */
static void pcall_error(lua_State *L, int rc, const char *path, char *err, size_t errlen) {
    if (rc == LUA_ERRMEM)
        snprintf(err, errlen, "%s: not enough memory (a script may hold %zu MiB)", path,
                 NTL_MEM_LIMIT >> 20);
    else
        snprintf(err, errlen, "%s", lua_tostring(L, -1));
}

/* Load and check a script (see ntlua.h).  On success *sw owns the shapes,
 * the spaces, the Lua state and its context; ntl_free releases them. */
int ntl_load(const char *path, nt_sweep *sw, char *err, size_t errlen) {
    ntl_ctx *c = NULL;
    lua_State *L = NULL;
    char chunk[1100];
    int rc;
    memset(sw, 0, sizeof *sw);
    if (strlen(path) >= sizeof sw->path) {
        snprintf(err, errlen, "%s: path too long", path);
        return -1;
    }
    if (!(c = calloc(1, sizeof *c))) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    if (!(c->src = read_file(path, &c->nsrc, err, errlen))) goto err;
    if (!(L = lua_newstate(ntl_alloc, c))) {
        snprintf(err, errlen, "%s: cannot create a Lua state", path);
        goto err;
    }
    lua_sethook(L, ntl_hook, LUA_MASKCOUNT, NTL_HOOK_EVERY);
    lua_pushcfunction(L, ntl_msgh);                            /* 1 */
    lua_pushcfunction(L, ntl_open);
    if (lua_pcall(L, 0, 0, 1) != LUA_OK) {
        snprintf(err, errlen, "%s: %s", path, lua_tostring(L, -1));
        goto err;
    }
    snprintf(chunk, sizeof chunk, "@%s", path);
    if (luaL_loadbufferx(L, c->src, c->nsrc, chunk, "t") != LUA_OK) {  /* 2 */
        const char *msg = lua_tostring(L, -1), *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        if (strstr(msg, base))    /* a syntax error names the file and line */
            snprintf(err, errlen, "%s", msg);
        else                      /* a binary chunk: no position */
            snprintf(err, errlen, "%s: %s", path, msg);
        goto err;
    }
    c->hooks = 0;
    if ((rc = lua_pcall(L, 0, 1, 1)) != LUA_OK) {
        pcall_error(L, rc, path, err, errlen);
        goto err;
    }
    ntl_box *box = luaL_testudata(L, -1, NTL_SWEEP_MT);
    if (!box) {
        snprintf(err, errlen, "%s: the script must return normtune.sweep{...}, it returned %s",
                 path, luaL_typename(L, -1));
        goto err;
    }
    if (!box->owned) {        /* a to-be-closed variable released it */
        snprintf(err, errlen, "%s: the returned sweep was closed (<close>) before the return", path);
        goto err;
    }
    *sw = box->sw;            /* the caller owns shapes, spaces and refs now */
    box->owned = 0;
    lua_settop(L, 0);
    snprintf(sw->path, sizeof sw->path, "%s", path);
    snprintf(sw->hash, sizeof sw->hash, "%016llx",
             (unsigned long long)nt_fnv1a(NT_FNV_INIT, c->src, c->nsrc));
    sw->L = L;
    return 0;
err:
    if (L) lua_close(L);
    if (c) free(c->src);
    free(c);
    memset(sw, 0, sizeof *sw);
    return -1;
}

/* Call family f's where(p, shape); see ntlua.h. */
int ntl_where(nt_sweep *sw, int f, const nt_params *p, const nt_shape *s, int *accept,
              char *err, size_t errlen) {
    const nt_sweep_family *sf = &sw->fam[f];
    lua_State *L = sw->L;
    void *ud;
    int rc;
    *accept = 1;
    if (sf->where_ref < 0) return 0;
    int top = lua_gettop(L);
    lua_pushcfunction(L, ntl_msgh);
    lua_rawgeti(L, LUA_REGISTRYINDEX, sf->where_ref);
    lua_createtable(L, 0, sf->fam->nparams);
    for (int i = 0; i < sf->fam->nparams; i++) {
        const nt_param_def *d = &sf->fam->params[i];
        const char *v = nt_params_get(p, d->name);
        if (!v) continue;
        if (d->kind == NT_PARAM_INT)
            lua_pushinteger(L, (lua_Integer)strtoll(v, NULL, 10));
        else
            lua_pushstring(L, v);
        lua_setfield(L, -2, d->name);
    }
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, (lua_Integer)s->M);
    lua_setfield(L, -2, "M");
    lua_pushinteger(L, (lua_Integer)s->N);
    lua_setfield(L, -2, "N");
    lua_getallocf(L, &ud);
    ((ntl_ctx *)ud)->hooks = 0;
    if ((rc = lua_pcall(L, 2, 1, top + 1)) != LUA_OK) {
        pcall_error(L, rc, sw->path, err, errlen);
        lua_settop(L, top);
        return -1;
    }
    if (!lua_isboolean(L, -1)) {
        lua_Debug ar;
        const char *got = luaL_typename(L, -1);
        lua_rawgeti(L, LUA_REGISTRYINDEX, sf->where_ref);
        lua_getinfo(L, ">S", &ar);
        snprintf(err, errlen, "%s:%d: where() of family %s must return a boolean, got %s",
                 ar.short_src, ar.linedefined, sf->fam->name, got);
        lua_settop(L, top);
        return -1;
    }
    *accept = lua_toboolean(L, -1);
    lua_settop(L, top);
    return 0;
}

/* Params of family f at point idx: texts copied from the space. */
void ntl_point_params(const nt_sweep *sw, int f, const int *idx, nt_params *p) {
    const search_space *sp = &sw->fam[f].space;
    p->n = 0;
    for (int d = 0; d < sp->ndim; d++) nt_params_set(p, sp->dim[d].name, sp->dim[d].val[idx[d]]);
}

/* Free everything ntl_load gave *sw; safe on a zeroed or failed sweep. */
void ntl_free(nt_sweep *sw) {
    for (int i = 0; i < sw->nfam; i++) search_space_clear(&sw->fam[i].space);
    free(sw->shapes);
    if (sw->L) {
        lua_State *L = sw->L;
        void *ud;
        lua_getallocf(L, &ud);
        lua_close(L);
        if (ud) free(((ntl_ctx *)ud)->src);
        free(ud);
    }
    memset(sw, 0, sizeof *sw);
}
