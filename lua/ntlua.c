/* ntlua.c -- the Lua binding: sweep scripts into plain C structs.
 *
 * A sweep script is Lua 5.4 run in a sandbox (base without load/loadfile/
 * dofile, table, string, math, utf8; no os, io, package or debug), with a
 * memory cap, an instruction limit per run and CPU/wall-clock budgets.  It
 * returns normtune.sweep{...}: a C function that checks every field of the
 * table (with caps on M, N and the size of the spaces) and packs the result
 * into a userdata of type "normtune.sweep" (an nt_sweep plus an ownership
 * flag; its __gc frees what has not been handed over).  ntl_load runs the
 * script twice, in two states, and compares the two sweeps; it then moves
 * the first nt_sweep out to the caller and keeps its state open, because
 * the families' `where` constraints stay in the registry and are called
 * back by ntl_where during enumeration.  A UTF-8 BOM and a first '#' line
 * are skipped as luaL_loadfilex skips them.
 *
 * Errors read "file:line: path: message".  Lua's own errors (syntax, runtime)
 * carry the position Lua gives them; errors found by normtune.sweep start at
 * the line of the normtune.sweep call and are refined by looking up the
 * offending field's key in the script text (families -> persistent ->
 * params -> blok), skipping comments, strings and function bodies.
 *
 * Budgets: a watchdog thread (one per process, started by the first load)
 * keeps a list of guards, one per loaded sweep.  A guard holds one CPU-time
 * and one wall-clock budget for everything the sweep's Lua does: both runs
 * of the script, every where() call, and closing its states.  It is in at
 * most one section at a time -- a run of the script, a walk over the
 * sweep's points (where() calls), or closing a state -- and knows the
 * section's CPU clock (pthread_getcpuclockid of the thread in it) and
 * start, and what the closed sections spent.  The watchdog sleeps until the
 * earliest moment a budget could run out (a thread uses at most one second
 * of CPU per second), then looks: on an overrun it sets the guard's stop
 * flag, which the count hook turns into a Lua error; when the section has
 * not come back after the grace period (CPU seconds of its thread, or
 * wall-clock seconds, whichever comes first) it writes the message and
 * calls _exit(1).  With the defaults a runaway script ends within
 * NTL_WALL + NTL_GRACE_WALL = 8 s of wall-clock time however loaded the
 * machine is, and within NTL_CPU + NTL_GRACE = 6 s on an idle one. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lua/ntlua.h"

#define NTL_MEM_LIMIT ((size_t)256 << 20)  /* bytes a script's state may hold */
#define NT_SWEEP_MAX_SCRIPT ((size_t)4 << 20)   /* largest script file accepted */
#define NTL_HOOK_EVERY 100000              /* VM instructions between hook calls */
#define NT_SWEEP_MAX_HOOKS 500                  /* hook calls per run: 5e7 instructions */
#define NTL_SWEEP_MT "normtune.sweep"
#define NTL_BUDGET_ENV "NORMTUNE_SCRIPT_BUDGET"
#define NTL_CPU 5.0                        /* default budget: CPU seconds of a sweep's Lua */
#define NTL_WALL 7.0                       /* ... and its wall-clock seconds */
#define NTL_GRACE 1.0                      /* CPU seconds a stopped script has to return */
#define NTL_GRACE_WALL 1.0                 /* ... or wall-clock seconds, if sooner */
#define NTL_BUDGET_MAX 86400.0             /* largest budget the variable may set */

/* The sections a guard times, as messages name them: "stopped after 1.0 s
 * of CPU <what>". */
enum { PH_LOAD, PH_WHERE, PH_CLOSE, PH_N };
static const char *const ntl_phase[PH_N] = {
    "while loading the script",
    "in where()",
    "in a __gc finalizer while closing the script",
};

/* The budgets of one sweep and the section it is in.  Fields below mu are
 * read by the watchdog and written under wd.mu. */
typedef struct ntl_guard {
    struct ntl_guard *next;   /* the watchdog's list */
    char path[1024];          /* for messages */
    double cpu_max, wall_max; /* the budgets, all sections together */
    double grace;             /* CPU seconds after a stop (or NTL_GRACE_WALL) */
    int phase;                /* section open: PH_*, or -1 */
    int depth;                /* nested PH_WHERE sections */
    clockid_t clk;            /* CPU clock of the thread in the section */
    double cpu0, wall0;       /* the section's start: that clock, monotonic */
    int in_call;              /* PH_WHERE: inside a where() call since call0 */
    double call0;
    double used_cpu, used_wall;     /* spent in closed sections (and, for the
                                       wall clock, in ended where() calls) */
    int spent;                /* the budget is gone: every section is stopped */
    double stop_at;           /* when a stop was asked for in this section, or 0 */
    double stop_cpu;          /* the section thread's CPU time then */
    int acked;                /* the section saw the stop (no hard stop then) */
    char msg[256];            /* "stopped after ..." */
    atomic_int stop;          /* asked to stop: read by the count hook */
} ntl_guard;

/* Per-state context, the allocator's user data (lua_getallocf finds it). */
typedef struct ntl_ctx {
    size_t used;              /* bytes held by the state */
    int hooks;                /* count-hook calls since the current run began */
    char *src;                /* the script text as parsed, for locating keys */
    size_t nsrc;
    char *buf;                /* the file's bytes, owned (NULL in a check state) */
    ntl_guard *g;             /* budgets; owned by the state of the sweep */
    int quiet;                /* print() writes nothing (the second run) */
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

static const char *const top_fields[] = {"op", "dtype", "dtypes", "shapes", "families",
                                         "search", "timing", "eps", NULL};
static const char *const fam_fields[] = {"params", "where", "search", NULL};
static const char *const fam_search_fields[] = {"strategy", "budget", NULL};
static const char *const shape_fields[] = {"M", "N", "budget", NULL};
static const char *const search_fields[] = {"strategy", "budget", "budget_stored", "seed", "race",
                                            "remeasure", NULL};
static const char *const timing_fields[] = {"warmup", "min_samples", "max_samples",
                                            "rel_ci", NULL};

/* ---- budgets: the watchdog ---------------------------------------------- */

static struct {
    pthread_once_t once;
    pthread_mutex_t mu;
    pthread_cond_t cv;        /* on CLOCK_MONOTONIC */
    ntl_guard *list;
    int ok;                   /* the thread runs */
} wd = {PTHREAD_ONCE_INIT, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0};

static double mono_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Seconds on a CPU clock; -1 when it cannot be read (thread gone). */
static double cpu_s(clockid_t c) {
    struct timespec t;
    if (clock_gettime(c, &t)) return -1;
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The guard's stop message for err: "path: stopped after ...". */
static void gd_errmsg(ntl_guard *g, char *err, size_t errlen) {
    pthread_mutex_lock(&wd.mu);
    snprintf(err, errlen, "%s: %s", g->path, g->msg);
    pthread_mutex_unlock(&wd.mu);
}

/* End the process: the section did not return within the grace period. */
static void gd_hard_stop(ntl_guard *g) {
    char m[1536];
    int n = snprintf(m, sizeof m,
                     "%snormtune: %s: %s; it did not stop within %g s of CPU (or %g s of "
                     "wall-clock time) of being asked to, so normtune exits (a long string "
                     "pattern match or a __gc finalizer cannot be interrupted)\n",
                     isatty(2) ? "\r\033[K" : "", g->path, g->msg, g->grace, NTL_GRACE_WALL);
    if (n > (int)sizeof m - 1) n = (int)sizeof m - 1;
    ssize_t w = write(2, m, (size_t)n);
    (void)w;
    _exit(1);
}

/* The stop message of phase p: kind is "CPU" or "wall-clock time". */
static void gd_msg(ntl_guard *g, int p, const char *kind, double used, double max) {
    snprintf(g->msg, sizeof g->msg,
             "stopped after %.*f s of %s %s (budget %g s; " NTL_BUDGET_ENV " changes it)",
             used < 1 ? 2 : 1, used, kind, ntl_phase[p], max);
}

/* Ask the open section to stop; the budget is spent from now on. */
static void gd_soft_stop(ntl_guard *g, double now, const char *kind, double used, double max) {
    gd_msg(g, g->phase, kind, used, max);
    g->stop_at = now;
    g->stop_cpu = cpu_s(g->clk);
    g->acked = 0;
    g->spent = 1;
    atomic_store(&g->stop, 1);
}

/* Look at one guard (wd.mu held): stop its open section when the budget is
 * spent, end the process when a stopped section overran its grace period.
 * Returns how long the watchdog may sleep before this guard needs another
 * look (an idle guard needs none: opening a section wakes the watchdog). */
static double gd_check(ntl_guard *g, double now) {
    int p = g->phase;
    if (p < 0) return INFINITY;
    if (g->stop_at > 0) {     /* asked already: wait for it, or end it */
        if (g->acked) return INFINITY;
        double c = cpu_s(g->clk);
        c = c < 0 ? 0 : c - g->stop_cpu;
        if (c >= g->grace || now - g->stop_at >= NTL_GRACE_WALL) gd_hard_stop(g);
        return fmin(g->grace - c, g->stop_at + NTL_GRACE_WALL - now);
    }
    double cpu = cpu_s(g->clk), wall = g->used_wall;
    cpu = g->used_cpu + (cpu < 0 ? 0 : cpu - g->cpu0);
    if (p != PH_WHERE)
        wall += now - g->wall0;
    else if (g->in_call)      /* where(): only the calls' time counts */
        wall += now - g->call0;
    if (cpu >= g->cpu_max) {
        gd_soft_stop(g, now, "CPU", cpu, g->cpu_max);
        return g->grace;
    }
    if (wall >= g->wall_max) {
        gd_soft_stop(g, now, "wall-clock time", wall, g->wall_max);
        return g->grace;
    }
    return fmin(g->cpu_max - cpu, g->wall_max - wall);
}

/* The watchdog thread: look at every guard, sleep until the next moment one
 * could need it (a new guard or section wakes it early). */
static void *wd_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&wd.mu);
    for (;;) {
        double now = mono_s(), wait = 3600;
        for (ntl_guard *g = wd.list; g; g = g->next) wait = fmin(wait, gd_check(g, now));
        if (!wd.list) {
            pthread_cond_wait(&wd.cv, &wd.mu);
            continue;
        }
        wait = fmax(wait, 0.002) + now;
        struct timespec ts = {(time_t)wait, (long)((wait - floor(wait)) * 1e9)};
        pthread_cond_timedwait(&wd.cv, &wd.mu, &ts);
    }
    return NULL;
}

/* Start the watchdog with every signal blocked (they go to other threads). */
static void wd_start(void) {
    pthread_condattr_t ca;
    pthread_attr_t at;
    sigset_t all, old;
    pthread_t t;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_destroy(&wd.cv);
    pthread_cond_init(&wd.cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    wd.ok = pthread_create(&t, &at, wd_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&at);
}

/* Parse NORMTUNE_SCRIPT_BUDGET ("CPU" or "CPU,WALL" seconds) into g, over
 * the defaults; a lone CPU figure gives a wall budget three times it.
 * 0, or -1 with a message. */
static int gd_budgets(ntl_guard *g, char *err, size_t errlen) {
    const char *e = getenv(NTL_BUDGET_ENV);
    g->cpu_max = NTL_CPU;
    g->wall_max = NTL_WALL;
    g->grace = NTL_GRACE;
    if (!e || !*e) return 0;
    char *end;
    double c = strtod(e, &end), w = 3 * c;
    if (end != e && *end == ',') {
        const char *q = end + 1;
        w = strtod(q, &end);
        if (end == q) end = (char *)e;
    }
    if (end == e || *end || !(c > 0 && c <= NTL_BUDGET_MAX) || !(w > 0 && w <= NTL_BUDGET_MAX)) {
        snprintf(err, errlen, "%s must be CPU seconds or CPU,WALL seconds, each in (0, %g], got '%s'",
                 NTL_BUDGET_ENV, NTL_BUDGET_MAX, e);
        return -1;
    }
    g->cpu_max = c;
    g->wall_max = w;
    g->grace = fmin(NTL_GRACE, c);
    return 0;
}

/* A new guard for path, on the watchdog's list.  NULL with a message. */
static ntl_guard *gd_new(const char *path, char *err, size_t errlen) {
    ntl_guard *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    if (gd_budgets(g, err, errlen)) {
        free(g);
        return NULL;
    }
    pthread_once(&wd.once, wd_start);
    if (!wd.ok) {
        snprintf(err, errlen, "%s: cannot start the thread that keeps scripts to their budget", path);
        free(g);
        return NULL;
    }
    snprintf(g->path, sizeof g->path, "%s", path);
    g->phase = -1;
    atomic_init(&g->stop, 0);
    pthread_mutex_lock(&wd.mu);
    g->next = wd.list;
    wd.list = g;
    pthread_cond_signal(&wd.cv);
    pthread_mutex_unlock(&wd.mu);
    return g;
}

/* Take g off the list and free it; NULL is fine. */
static void gd_free(ntl_guard *g) {
    if (!g) return;
    pthread_mutex_lock(&wd.mu);
    for (ntl_guard **q = &wd.list; *q; q = &(*q)->next)
        if (*q == g) {
            *q = g->next;
            break;
        }
    pthread_mutex_unlock(&wd.mu);
    free(g);
}

/* Open a section of the calling thread.  A PH_WHERE section inside an open
 * one nests.  Every section draws on the guard's one budget; once that is
 * spent, a section starts stopped: a where() section fails at once (no
 * call is made), a load or close section has the grace period to return. */
static void gd_open(ntl_guard *g, int phase) {
    pthread_mutex_lock(&wd.mu);
    if (g->phase == PH_WHERE && phase == PH_WHERE) {
        g->depth++;
        pthread_mutex_unlock(&wd.mu);
        return;
    }
    g->phase = phase;
    g->depth = 1;
    if (pthread_getcpuclockid(pthread_self(), &g->clk)) g->clk = CLOCK_THREAD_CPUTIME_ID;
    g->cpu0 = cpu_s(CLOCK_THREAD_CPUTIME_ID);
    g->wall0 = mono_s();
    g->in_call = 0;
    g->stop_at = 0;
    g->acked = 0;
    if (g->spent) {
        g->stop_at = g->wall0;
        g->stop_cpu = g->cpu0;
        g->acked = phase == PH_WHERE;  /* no call is made: nothing to wait for */
    }
    atomic_store(&g->stop, g->spent);
    pthread_cond_signal(&wd.cv);
    pthread_mutex_unlock(&wd.mu);
}

/* Close the innermost section: what it spent counts against the budget
 * (a where() section's wall-clock time was counted call by call).  A
 * section that overran between two looks of the watchdog spends the
 * budget, so the next one starts stopped. */
static void gd_close(ntl_guard *g) {
    pthread_mutex_lock(&wd.mu);
    if (g->phase >= 0 && --g->depth <= 0) {
        double c = cpu_s(CLOCK_THREAD_CPUTIME_ID);
        if (c >= g->cpu0) g->used_cpu += c - g->cpu0;
        if (g->phase != PH_WHERE) g->used_wall += mono_s() - g->wall0;
        if (!g->spent && g->used_cpu >= g->cpu_max) {
            gd_msg(g, g->phase, "CPU", g->used_cpu, g->cpu_max);
            g->spent = 1;
        } else if (!g->spent && g->used_wall >= g->wall_max) {
            gd_msg(g, g->phase, "wall-clock time", g->used_wall, g->wall_max);
            g->spent = 1;
        }
        if (g->stop_at > 0) g->acked = 1;
        g->phase = -1;
        g->in_call = 0;
    }
    pthread_mutex_unlock(&wd.mu);
}

/* Was a stop asked for?  Marks it seen, so the watchdog does not end the
 * process.  1 or 0. */
static int gd_stopped(ntl_guard *g) {
    if (!atomic_load(&g->stop)) return 0;
    pthread_mutex_lock(&wd.mu);
    g->acked = 1;
    pthread_mutex_unlock(&wd.mu);
    return 1;
}

/* Begin a where() call: its wall-clock time counts.  -1 when the budget is
 * spent (no call then). */
static int gd_call_begin(ntl_guard *g) {
    if (gd_stopped(g)) return -1;
    pthread_mutex_lock(&wd.mu);
    g->in_call = 1;
    g->call0 = mono_s();
    pthread_mutex_unlock(&wd.mu);
    return 0;
}

/* End a where() call; 1 when a stop was asked for during it. */
static int gd_call_end(ntl_guard *g) {
    pthread_mutex_lock(&wd.mu);
    if (g->in_call) g->used_wall += mono_s() - g->call0;
    g->in_call = 0;
    pthread_mutex_unlock(&wd.mu);
    return gd_stopped(g);
}

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

/* Count hook: stop a script (or a where()) that runs away, or that the
 * watchdog asked to stop (its budget is spent). */
static void ntl_hook(lua_State *L, lua_Debug *ar) {
    void *ud;
    (void)ar;
    lua_getallocf(L, &ud);
    ntl_guard *g = ((ntl_ctx *)ud)->g;
    if (g && atomic_load_explicit(&g->stop, memory_order_relaxed)) {
        char msg[256];
        pthread_mutex_lock(&wd.mu);
        snprintf(msg, sizeof msg, "%s", g->msg);
        pthread_mutex_unlock(&wd.mu);
        lua_pushstring(L, msg);   /* the message handler adds the line */
        lua_error(L);
    }
    if (++((ntl_ctx *)ud)->hooks > NT_SWEEP_MAX_HOOKS) {
        /* no position here: the message handler adds the running line */
        lua_pushfstring(L, "script ran for more than %d instructions (an endless loop?)",
                        NTL_HOOK_EVERY * NT_SWEEP_MAX_HOOKS);
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

/* print() writes to stderr: stdout belongs to the commands' output.  The
 * second (checking) run of a script prints nothing. */
static int ntl_print(lua_State *L) {
    int n = lua_gettop(L);
    void *ud;
    lua_getallocf(L, &ud);
    if (((ntl_ctx *)ud)->quiet) return 0;
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
    if (lua_type(L, idx) != LUA_TTABLE)      /* lua_next needs a table */
        chk_fail(k, keys, "%s: expected a list, got %s", what, luaL_typename(L, idx));
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
    snprintf(what, sizeof what, "families.%s.params.%s", f->name + strlen(f->op->name) + 1,
             d->name);
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

/* Read families (table at idx) into box->sw.fam, in the op's order. */
/* A family's own search (the table at idx, families.<sn>.search): its
 * strategy (required) and budget per problem (optional, not with
 * exhaustive, which measures every point) into sf. */
static void read_family_search(const ntl_chk *k, int idx, const char *sn, nt_sweep_family *sf) {
    lua_State *L = k->L;
    const char *const keys[] = {"families", sn, "search", NULL};
    const char *const sk[] = {"families", sn, "search", "strategy", NULL};
    const char *const bk[] = {"families", sn, "search", "budget", NULL};
    char what[96], list[256];
    snprintf(what, sizeof what, "families.%s.search", sn);
    check_keys(k, idx, fam_search_fields, keys, what, "field");
    if (get_field(k, idx, "strategy", LUA_TSTRING, 1, keys, what) != LUA_TSTRING)
        chk_fail(k, keys, "%s: missing field 'strategy' (allowed: %s)", what,
                 join(search_strategies, list, sizeof list));
    const char *st = lua_tostring(L, -1);
    if (!in_list(search_strategies, st) || strlen(st) >= sizeof sf->strategy)
        chk_fail(k, sk, "%s.strategy: unknown strategy '%s' (allowed: %s)", what, st,
                 join(search_strategies, list, sizeof list));
    snprintf(sf->strategy, sizeof sf->strategy, "%s", st);
    lua_pop(L, 1);
    sf->budget = 0;
    if (lua_getfield(L, idx, "budget") != LUA_TNIL) {
        char bwhat[128];
        snprintf(bwhat, sizeof bwhat, "%s.budget", what);
        lua_Integer b = get_int(k, bk, bwhat);
        if (b < 1) chk_fail(k, bk, "%s must be a positive integer, got %lld", bwhat, (long long)b);
        if (!strcmp(sf->strategy, "exhaustive"))
            chk_fail(k, bk, "%s: strategy exhaustive measures every point, it takes no budget",
                     bwhat);
        sf->budget = (uint64_t)b;
    }
    lua_pop(L, 1);
    sf->own = 1;
}

static void read_families(const ntl_chk *k, int idx, ntl_box *box) {
    lua_State *L = k->L;
    nt_sweep *sw = &box->sw;
    const char *names[NT_SWEEP_MAX_FAMILIES + 1];
    const nt_family *fams[NT_SWEEP_MAX_FAMILIES];
    int nf = 0;
    char list[256];
    for (int i = 0; sw->op->families[i] && nf < NT_SWEEP_MAX_FAMILIES; i++) {
        fams[nf] = sw->op->families[i];
        names[nf] = fams[nf]->name + strlen(sw->op->name) + 1;
        nf++;
    }
    names[nf] = NULL;
    /* never drop a family silently (tests/test_lua.c checks every op fits) */
    if (nf == NT_SWEEP_MAX_FAMILIES && sw->op->families[nf])
        chk_fail(k, (const char *[]){"families", NULL},
                 "families: op %s has more than %d families, more than a sweep holds "
                 "(NT_SWEEP_MAX_FAMILIES in lua/ntlua.h)", sw->op->name, NT_SWEEP_MAX_FAMILIES);
    /* every key a family of this op */
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            chk_fail(k, (const char *[]){"families", NULL},
                     "families: keys must be family names, got a %s key (allowed: %s)",
                     luaL_typename(L, -1), join(names, list, sizeof list));
        const char *name = lua_tostring(L, -1);
        if (!nt_family_find2(sw->op->name, name))
            chk_fail(k, (const char *[]){"families", name, NULL},
                     "families: unknown family '%s' for op %s (allowed: %s)", name, sw->op->name,
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
        uint64_t size = search_space_size(&sf->space);
        if (size > NT_SWEEP_MAX_SPACE) {
            char dims[160] = "", dnames[160] = "";
            size_t nd = 0, nn = 0;
            for (int j = 0; j < sf->space.ndim && nd < sizeof dims && nn < sizeof dnames; j++) {
                nd += (size_t)snprintf(dims + nd, sizeof dims - nd, "%s%d", j ? " x " : "",
                                       sf->space.dim[j].nval);
                nn += (size_t)snprintf(dnames + nn, sizeof dnames - nn, "%s%s", j ? " x " : "",
                                       sf->space.dim[j].name);
            }
            chk_fail(k, pkeys,
                     "%s: the space of family %s has %s = %llu points (%s), more than the cap "
                     "of %llu (did a normtune.range miss its step?)",
                     pwhat, f->name, dims, (unsigned long long)size, dnames,
                     (unsigned long long)NT_SWEEP_MAX_SPACE);
        }
        if (get_field(k, ft, "where", LUA_TFUNCTION, 1, keys, what) == LUA_TFUNCTION)
            sf->where_ref = luaL_ref(L, LUA_REGISTRYINDEX);
        else
            lua_pop(L, 1);
        if (get_field(k, ft, "search", LUA_TTABLE, 1, keys, what) == LUA_TTABLE)
            read_family_search(k, lua_gettop(L), sn, sf);
        lua_pop(L, 1);
        lua_pop(L, 1);        /* the family table */
    }
    if (sw->nfam == 0)
        chk_fail(k, (const char *[]){"families", NULL}, "families: no family given (allowed: %s)",
                 join(names, list, sizeof list));
}

/* One dtype combination: the table at idx ({x = "bf16", w = "f32"}) or a
 * string (the dtype of the first slot), over the op's defaults, checked
 * by the op; into *p.  what names it in messages. */
static void read_shape_list(const ntl_chk *k, int idx, const char *const *keys, const char *pre,
                            nt_shape **out, uint64_t **bout, int *nout);

static void read_dtype1(const ntl_chk *k, int idx, const char *const *keys, const char *what,
                        const nt_op *op, nt_problem *p, nt_shape **shapes, uint64_t **budgets,
                        int *nshape) {
    lua_State *L = k->L;
    char text[256] = "", err[256];
    size_t u = 0;
    nt_problem_init(p, op, 1, 8);
    if (lua_type(L, idx) == LUA_TSTRING) {
        snprintf(text, sizeof text, "%s=%s", op->slots[0].name, lua_tostring(L, idx));
    } else if (lua_istable(L, idx)) {
        const char *sn[NT_MAX_SLOTS + 2];
        for (int i = 0; i < op->nslots; i++) sn[i] = op->slots[i].name;
        sn[op->nslots] = shapes ? "shapes" : NULL;
        sn[op->nslots + 1] = NULL;
        check_keys(k, idx, sn, keys, what, "dtype");
        if (shapes) {
            if (lua_getfield(k->L, idx, "shapes") != LUA_TNIL) {
                char pre[64];
                const char *const sk[] = {keys[0], "shapes", NULL};
                snprintf(pre, sizeof pre, "%s.shapes", what);
                if (!lua_istable(k->L, -1))
                    chk_fail(k, sk, "%s: expected a list of {M=, N=}, got %s", pre,
                             luaL_typename(k->L, -1));
                read_shape_list(k, lua_gettop(k->L), sk, pre, shapes, budgets, nshape);
            }
            lua_pop(k->L, 1);
        }
        for (int i = 0; i < op->nslots; i++) {
            if (lua_getfield(L, idx, sn[i]) != LUA_TNIL) {
                if (lua_type(L, -1) != LUA_TSTRING)
                    chk_fail(k, keys, "%s.%s: expected a dtype name, got %s", what, sn[i],
                             luaL_typename(L, -1));
                u += (size_t)snprintf(text + u, sizeof text - u, "%s%s=%s", u ? "," : "", sn[i],
                                      lua_tostring(L, -1));
            }
            lua_pop(L, 1);
            if (u >= sizeof text) chk_fail(k, keys, "%s: too long", what);
        }
    } else {
        chk_fail(k, keys, "%s: expected a dtype name or a table {%s = ...}, got %s", what,
                 op->slots[0].name, luaL_typename(L, idx));
    }
    if (nt_dtypes_parse(p, text, err, sizeof err) || nt_problem_check(p, err, sizeof err))
        chk_fail(k, keys, "%s: %s", what, err);
}

/* Read dtype (one combination) or dtypes (a list of them) into box->sw;
 * neither: the op's defaults. */
static void read_dtypes(const ntl_chk *k, ntl_box *box) {
    lua_State *L = k->L;
    nt_sweep *sw = &box->sw;
    const char *const dk[] = {"dtype", NULL}, *const dsk[] = {"dtypes", NULL};
    int t1 = lua_getfield(L, 1, "dtype"), t2 = lua_getfield(L, 1, "dtypes");
    if (t1 != LUA_TNIL && t2 != LUA_TNIL)
        chk_fail(k, dsk, "give dtype (one combination) or dtypes (a list), not both");
    if (t2 != LUA_TNIL) {
        int n = list_len(k, lua_gettop(L), dsk, "dtypes");
        if (n > NT_SWEEP_MAX_DTYPES)
            chk_fail(k, dsk, "dtypes: %d combinations, at most %d", n, NT_SWEEP_MAX_DTYPES);
        for (int i = 0; i < n; i++) {
            char what[32], a[128], b[128];
            snprintf(what, sizeof what, "dtypes[%d]", i + 1);
            lua_rawgeti(L, -1, i + 1);
            read_dtype1(k, lua_gettop(L), dsk, what, sw->op, &sw->dts[i], &sw->dshapes[i],
                        &sw->dbudgets[i], &sw->ndshape[i]);
            lua_pop(L, 1);
            nt_dtypes_canon(&sw->dts[i], a, sizeof a);
            for (int j = 0; j < i; j++)
                if (!nt_dtypes_canon(&sw->dts[j], b, sizeof b) && !strcmp(a, b))
                    chk_fail(k, dsk, "%s: %s repeats dtypes[%d]", what, a, j + 1);
            sw->ndt = i + 1;
        }
    } else if (t1 != LUA_TNIL) {
        read_dtype1(k, lua_gettop(L) - 1, dk, "dtype", sw->op, &sw->dts[0], NULL, NULL, NULL);
        sw->ndt = 1;
    } else {
        nt_problem_init(&sw->dts[0], sw->op, 1, 8);
        sw->ndt = 1;
    }
    lua_pop(L, 2);
}

/* Read a shape list (at idx) into *out and the shapes' own budgets into
 * *bout (both malloc'd; stored at once, so that the box frees them if a
 * check fails; *bout freed again and NULL when no shape has a budget) and
 * *nout.  pre names the list in messages and in the key path that finds
 * its line ("shapes", or "dtypes[2].shapes"); keys is that path. */
static void read_shape_list(const ntl_chk *k, int idx, const char *const *keys, const char *pre,
                            nt_shape **out, uint64_t **bout, int *nout) {
    lua_State *L = k->L;
    int n = list_len(k, idx, keys, pre), any = 0;
    if (n > NT_SWEEP_MAX_SHAPES) chk_fail(k, keys, "%s: %d shapes, at most %d", pre, n, NT_SWEEP_MAX_SHAPES);
    *out = calloc((size_t)n, sizeof **out);
    *bout = calloc((size_t)(n ? n : 1), sizeof **bout);
    if (!*out || !*bout) chk_fail(k, keys, "out of memory");
    nt_shape *sh = *out;
    for (int i = 0; i < n; i++) {
        char what[96];
        snprintf(what, sizeof what, "%s[%d]", pre, i + 1);
        lua_rawgeti(L, idx, i + 1);
        if (!lua_istable(L, -1))
            chk_fail(k, keys, "%s: expected table {M=, N=}, got %s", what, luaL_typename(L, -1));
        int st = lua_gettop(L);
        check_keys(k, st, shape_fields, keys, what, "field");
        int64_t v[2];
        static const long long vmax[2] = {NT_SWEEP_MAX_M, NT_SWEEP_MAX_N};
        char occ[2][32];      /* "M#i": the i-th M = after shapes */
        snprintf(occ[0], sizeof occ[0], "M#%d", i + 1);
        snprintf(occ[1], sizeof occ[1], "N#%d", i + 1);
        /* the path to this shape's M: its line in messages */
        const char *const okeys[] = {keys[0], keys[1] ? keys[1] : occ[0], keys[1] ? occ[0] : NULL,
                                     NULL};
        for (int j = 0; j < 2; j++) {
            const char *const vkeys[] = {keys[0], keys[1] ? keys[1] : occ[j],
                                         keys[1] ? occ[j] : NULL, NULL};
            char fw[112];
            snprintf(fw, sizeof fw, "%s.%s", what, shape_fields[j]);
            if (lua_getfield(L, st, shape_fields[j]) == LUA_TNIL)
                chk_fail(k, okeys, "%s: missing %s", what, shape_fields[j]);
            v[j] = get_int(k, vkeys, fw);
            if (v[j] < 1) chk_fail(k, vkeys, "%s must be a positive integer, got %lld", fw, (long long)v[j]);
            if (v[j] > vmax[j])
                chk_fail(k, vkeys, "%s must be at most %lld (%s), got %lld", fw, vmax[j],
                         j ? "2^24" : "2^31 - 1", (long long)v[j]);
            lua_pop(L, 1);
        }
        for (int j = 0; j < i; j++)
            if (sh[j].M == v[0] && sh[j].N == v[1])
                chk_fail(k, okeys, "%s: M=%lld N=%lld repeats %s[%d]", what, (long long)v[0],
                         (long long)v[1], pre, j + 1);
        sh[i].M = v[0];
        sh[i].N = v[1];
        /* a budget of its own: variants measured at this shape
         * (drive.c, plan()) */
        if (lua_getfield(L, st, "budget") != LUA_TNIL) {
            char fw[112];
            snprintf(fw, sizeof fw, "%s.budget", what);
            lua_Integer b = get_int(k, okeys, fw);
            if (b < 1) chk_fail(k, okeys, "%s must be a positive integer, got %lld", fw, (long long)b);
            (*bout)[i] = (uint64_t)b;
            any = 1;
        }
        lua_pop(L, 1);
        *nout = i + 1;
        lua_pop(L, 1);
    }
    if (!any) {
        free(*bout);
        *bout = NULL;
    }
}

/* Read the sweep's shapes (list at idx) into box->sw.shapes. */
static void read_shapes(const ntl_chk *k, int idx, ntl_box *box) {
    const char *const keys[] = {"shapes", NULL};
    read_shape_list(k, idx, keys, "shapes", &box->sw.shapes, &box->sw.budgets, &box->sw.nshape);
}

/* Read the optional search table (at the top, or nil). */
static void read_search(const ntl_chk *k, int idx, nt_sweep *sw) {
    lua_State *L = k->L;
    const char *const keys[] = {"search", NULL};
    char list[256];
    snprintf(sw->search.strategy, sizeof sw->search.strategy, "exhaustive");
    sw->search.race = 0;
    sw->search.remeasure_alone = sw->search.remeasure_set = 0;
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
    /* warm's budget when it starts from stored results (drive.c, plan()) */
    sw->search.budget_stored = 0;
    if (lua_getfield(L, idx, "budget_stored") != LUA_TNIL) {
        const char *const bk[] = {"search", "budget_stored", NULL};
        lua_Integer b = get_int(k, bk, "search.budget_stored");
        if (b < 1)
            chk_fail(k, bk, "search.budget_stored must be a positive integer, got %lld",
                     (long long)b);
        if (strcmp(sw->search.strategy, "warm"))
            chk_fail(k, bk, "search.budget_stored is a budget of strategy warm, not of %s",
                     sw->search.strategy);
        if (!sw->search.budget)
            chk_fail(k, bk, "search.budget_stored needs search.budget (the cold campaign's)");
        sw->search.budget_stored = (uint64_t)b;
    }
    lua_pop(L, 1);
    if (lua_getfield(L, idx, "seed") != LUA_TNIL) {
        const char *const sk[] = {"search", "seed", NULL};
        lua_Integer s = get_int(k, sk, "search.seed");
        if (s < 0) chk_fail(k, sk, "search.seed must be >= 0, got %lld", (long long)s);
        sw->search.seed = (uint64_t)s;
    }
    lua_pop(L, 1);
    /* racing: on for a search, off for an exhaustive sweep (a reference) */
    sw->search.race = strcmp(sw->search.strategy, "exhaustive") != 0;
    if (get_field(k, idx, "race", LUA_TBOOLEAN, 1, (const char *[]){"search", NULL}, "search") ==
        LUA_TBOOLEAN)
        sw->search.race = lua_toboolean(L, -1);
    lua_pop(L, 1);
    /* how warm's last step re-measures the closest points (drive.c) */
    if (get_field(k, idx, "remeasure", LUA_TSTRING, 1, keys, "search") == LUA_TSTRING) {
        const char *const rk[] = {"search", "remeasure", NULL};
        const char *m = lua_tostring(L, -1);
        if (strcmp(m, "chain") && strcmp(m, "alone"))
            chk_fail(k, rk, "search.remeasure: unknown method '%s' (allowed: chain, alone)", m);
        if (!search_remeasures(sw->search.strategy))
            chk_fail(k, rk, "search.remeasure is a step of strategies warm and exhaustive, not "
                     "of %s", sw->search.strategy);
        sw->search.remeasure_alone = !strcmp(m, "alone");
        sw->search.remeasure_set = 1;
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
    free(b->sw.budgets);
    for (int d = 0; d < NT_SWEEP_MAX_DTYPES; d++) {
        free(b->sw.dshapes[d]);
        free(b->sw.dbudgets[d]);
    }
    memset(&b->sw, 0, sizeof b->sw);   /* nothing left to hand over */
    b->owned = 0;
}

static int box_gc(lua_State *L) {
    box_release(L, luaL_checkudata(L, 1, NTL_SWEEP_MT));
    return 0;
}

static int box_tostring(lua_State *L) {
    ntl_box *b = luaL_checkudata(L, 1, NTL_SWEEP_MT);
    lua_pushfstring(L, "normtune.sweep(%s, %d dtypes, %d shapes, %d families)",
                    b->sw.op ? b->sw.op->name : "?", b->sw.ndt, b->sw.nshape, b->sw.nfam);
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
    int nops = 0;
    for (int i = 0; nt_ops[i] && nops < 15; i++) ops[nops++] = nt_ops[i]->name;
    ops[nops] = NULL;
    if (!(sw->op = nt_op_find(op)))
        chk_fail(&k, opk, "op: unknown op '%s' (allowed: %s)", op, join(ops, list, sizeof list));
    lua_pop(L, 1);

    read_dtypes(&k, box);

    get_field(&k, 1, "shapes", LUA_TTABLE, 0, (const char *[]){"shapes", NULL}, "");
    read_shapes(&k, lua_gettop(L), box);
    lua_pop(L, 1);

    get_field(&k, 1, "families", LUA_TTABLE, 0, (const char *[]){"families", NULL}, "");
    read_families(&k, lua_gettop(L), box);
    lua_pop(L, 1);

    uint64_t walk = 0;        /* spaces are capped: no overflow */
    for (int f = 0; f < sw->nfam; f++) walk += search_space_size(&sw->fam[f].space);
    uint64_t np = (uint64_t)nt_sweep_nproblems(sw);
    if (walk * np > NT_SWEEP_MAX_WALK)
        chk_fail(&k, (const char *[]){"families", NULL},
                 "the sweep has %llu problems (dtype combinations x their shapes) x %llu "
                 "points (all families' spaces) = %llu, more than the cap of %llu points a "
                 "walk over the sweep may visit", (unsigned long long)np,
                 (unsigned long long)walk,
                 (unsigned long long)(walk * np), (unsigned long long)NT_SWEEP_MAX_WALK);

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

/* normtune.grid(Ns, Ms): the shapes {M = m, N = n} of every n of the list
 * Ns and m of Ms, N outer (a list of shapes for `shapes`). */
static int ntl_grid(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_Integer nn = luaL_len(L, 1), nm = luaL_len(L, 2);
    if (nn < 1 || nm < 1 || nn * nm > NT_SWEEP_MAX_SHAPES)
        return luaL_error(L, "normtune.grid: %I x %I shapes (want 1 to %d)", nn, nm,
                          NT_SWEEP_MAX_SHAPES);
    lua_createtable(L, (int)(nn * nm), 0);
    for (lua_Integer i = 1; i <= nn; i++)
        for (lua_Integer j = 1; j <= nm; j++) {
            lua_createtable(L, 0, 2);
            lua_geti(L, 2, j);
            if (!lua_isinteger(L, -1))
                return luaL_error(L, "normtune.grid: Ms[%I] is not an integer", j);
            lua_setfield(L, -2, "M");
            lua_geti(L, 1, i);
            if (!lua_isinteger(L, -1))
                return luaL_error(L, "normtune.grid: Ns[%I] is not an integer", i);
            lua_setfield(L, -2, "N");
            lua_rawseti(L, -2, (i - 1) * nm + j);
        }
    return 1;
}

/* normtune.join(list, ...): one list of the elements of every list, in
 * order (the shapes of several grids, say). */
static int ntl_join(lua_State *L) {
    int nargs = lua_gettop(L);
    lua_Integer n = 0;
    for (int a = 1; a <= nargs; a++) {
        if (!lua_istable(L, a))
            return luaL_error(L, "normtune.join: argument %d is a %s, not a list", a,
                              luaL_typename(L, a));
        n += luaL_len(L, a);
        if (n > NT_SWEEP_MAX_SHAPES)
            return luaL_error(L, "normtune.join: more than %d elements", NT_SWEEP_MAX_SHAPES);
    }
    lua_createtable(L, (int)n, 0);
    lua_Integer k = 0;
    for (int a = 1; a <= nargs; a++)
        for (lua_Integer i = 1, m = luaL_len(L, a); i <= m; i++) {
            lua_geti(L, a, i);
            lua_rawseti(L, -2, ++k);
        }
    return 1;
}

static const luaL_Reg ntl_funcs[] = {
    {"sweep", ntl_sweep},
    {"range", ntl_range},
    {"grid", ntl_grid},
    {"join", ntl_join},
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
    buf = malloc(NT_SWEEP_MAX_SCRIPT + 1);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto err;
    }
    *n = fread(buf, 1, NT_SWEEP_MAX_SCRIPT + 1, f);
    if (ferror(f)) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        goto err;
    }
    if (*n > NT_SWEEP_MAX_SCRIPT) {
        snprintf(err, errlen, "%s: larger than %zu bytes", path, NT_SWEEP_MAX_SCRIPT);
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

/* The text Lua parses, as luaL_loadfilex sees a file: a UTF-8 BOM skipped,
 * and a first line starting with '#' (a "#!" line) blanked to spaces but
 * for its newline, so that line numbers stay right.  When a binary chunk
 * follows that line, the text starts at it (and is refused as binary).
 * Changes buf in place; returns the offset of the text in it. */
static size_t skip_head(char *buf, size_t n) {
    size_t o = n >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3) ? 3 : 0;
    if (o < n && buf[o] == '#') {
        size_t e = o;
        while (e < n && buf[e] != '\n') buf[e++] = ' ';
        if (e + 1 < n && buf[e + 1] == LUA_SIGNATURE[0]) o = e + 1;
    }
    return o;
}

/* Free what a sweep moved out of a box holds (shapes, spaces); the where
 * refs go with the state. */
static void sweep_release(nt_sweep *sw) {
    for (int i = 0; i < sw->nfam; i++) search_space_clear(&sw->fam[i].space);
    free(sw->shapes);
    free(sw->budgets);
    for (int d = 0; d < NT_SWEEP_MAX_DTYPES; d++) {
        free(sw->dshapes[d]);
        free(sw->dbudgets[d]);
    }
    memset(sw, 0, sizeof *sw);
}

/* The first difference between two runs' sweeps, in d; 0 when equal. */
static int sweep_diff(const nt_sweep *a, const nt_sweep *b, char *d, size_t n) {
    if (a->op != b->op)
        return snprintf(d, n, "op %s, then %s", a->op->name, b->op->name), 1;
    if (a->ndt != b->ndt)
        return snprintf(d, n, "%d dtype combinations, then %d", a->ndt, b->ndt), 1;
    for (int i = 0; i < a->ndt; i++) {
        char x[128], y[128];
        nt_dtypes_canon(&a->dts[i], x, sizeof x);
        nt_dtypes_canon(&b->dts[i], y, sizeof y);
        if (strcmp(x, y)) return snprintf(d, n, "dtypes[%d] is %.100s, then %.100s", i + 1, x, y), 1;
    }
    if (a->nshape != b->nshape)
        return snprintf(d, n, "%d shapes, then %d", a->nshape, b->nshape), 1;
    for (int i = 0; i < a->nshape; i++)
        if (a->shapes[i].M != b->shapes[i].M || a->shapes[i].N != b->shapes[i].N)
            return snprintf(d, n, "shapes[%d] is M=%lld N=%lld, then M=%lld N=%lld", i + 1,
                            (long long)a->shapes[i].M, (long long)a->shapes[i].N,
                            (long long)b->shapes[i].M, (long long)b->shapes[i].N), 1;
    if (nt_sweep_nproblems(a) != nt_sweep_nproblems(b))
        return snprintf(d, n, "%d problems, then %d", nt_sweep_nproblems(a), nt_sweep_nproblems(b)), 1;
    for (int q = 0; q < nt_sweep_nproblems(a); q++) {
        nt_problem x, y;
        nt_sweep_problem(a, q, &x);
        nt_sweep_problem(b, q, &y);
        if (nt_sweep_problem_budget(a, q) != nt_sweep_problem_budget(b, q))
            return snprintf(d, n, "problem %d has budget %llu, then %llu", q + 1,
                            (unsigned long long)nt_sweep_problem_budget(a, q),
                            (unsigned long long)nt_sweep_problem_budget(b, q)), 1;
        if (x.M != y.M || x.N != y.N)
            return snprintf(d, n, "problem %d is M=%lld N=%lld, then M=%lld N=%lld", q + 1,
                            (long long)x.M, (long long)x.N, (long long)y.M, (long long)y.N), 1;
    }
    if (a->nfam != b->nfam) return snprintf(d, n, "%d families, then %d", a->nfam, b->nfam), 1;
    for (int f = 0; f < a->nfam; f++) {
        const search_space *x = &a->fam[f].space, *y = &b->fam[f].space;
        const char *name = a->fam[f].fam->name;
        if (a->fam[f].fam != b->fam[f].fam || x->ndim != y->ndim)
            return snprintf(d, n, "family %s, then %s", name, b->fam[f].fam->name), 1;
        if ((a->fam[f].where_ref < 0) != (b->fam[f].where_ref < 0))
            return snprintf(d, n, "family %s has a where() only in one run", name), 1;
        if (a->fam[f].own != b->fam[f].own || a->fam[f].budget != b->fam[f].budget ||
            (a->fam[f].own && strcmp(a->fam[f].strategy, b->fam[f].strategy)))
            return snprintf(d, n, "family %s: its own search differs", name), 1;
        for (int j = 0; j < x->ndim; j++) {
            if (x->dim[j].nval != y->dim[j].nval)
                return snprintf(d, n, "%s %s has %d values, then %d", name, x->dim[j].name,
                                x->dim[j].nval, y->dim[j].nval), 1;
            for (int v = 0; v < x->dim[j].nval; v++)
                if (strcmp(x->dim[j].val[v], y->dim[j].val[v]))
                    return snprintf(d, n, "%s %s[%d] is %s, then %s", name, x->dim[j].name, v + 1,
                                    x->dim[j].val[v], y->dim[j].val[v]), 1;
        }
    }
    if (memcmp(&a->search, &b->search, sizeof a->search))
        return snprintf(d, n, "the search settings differ"), 1;
    if (memcmp(&a->timing, &b->timing, sizeof a->timing) || a->eps != b->eps)
        return snprintf(d, n, "the timing settings or eps differ"), 1;
    return 0;
}

/* One run of the script in a new state with context c (a load section of
 * c->g is open).  *out is the state, also after a failure (NULL when none
 * was made): the caller closes it, in a section of its own.  On success the
 * sweep is moved into *sw.  0, or -1 with a message. */
static int run_once(ntl_ctx *c, const char *path, nt_sweep *sw, lua_State **out, char *err,
                    size_t errlen) {
    lua_State *L;
    char chunk[1100];
    int rc;
    if (!(*out = L = lua_newstate(ntl_alloc, c))) {
        snprintf(err, errlen, "%s: cannot create a Lua state", path);
        return -1;
    }
    lua_sethook(L, ntl_hook, LUA_MASKCOUNT, NTL_HOOK_EVERY);
    lua_pushcfunction(L, ntl_msgh);                            /* 1 */
    lua_pushcfunction(L, ntl_open);
    if (lua_pcall(L, 0, 0, 1) != LUA_OK) {
        snprintf(err, errlen, "%s: %s", path, lua_tostring(L, -1));
        return -1;
    }
    snprintf(chunk, sizeof chunk, "@%s", path);
    if (luaL_loadbufferx(L, c->src, c->nsrc, chunk, "t") != LUA_OK) {  /* 2 */
        const char *msg = lua_tostring(L, -1), *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        if (strstr(msg, base))    /* a syntax error names the file and line */
            snprintf(err, errlen, "%s", msg);
        else                      /* a binary chunk: no position */
            snprintf(err, errlen, "%s: %s", path, msg);
        return -1;
    }
    c->hooks = 0;
    rc = lua_pcall(L, 0, 1, 1);
    if (gd_stopped(c->g)) {       /* also when the script caught the stop */
        const char *m = rc == LUA_OK ? NULL : lua_tostring(L, -1);
        if (m && strstr(m, "stopped after"))
            snprintf(err, errlen, "%s", m);
        else
            gd_errmsg(c->g, err, errlen);
        return -1;
    }
    if (rc != LUA_OK) {
        pcall_error(L, rc, path, err, errlen);
        return -1;
    }
    ntl_box *box = luaL_testudata(L, -1, NTL_SWEEP_MT);
    if (!box) {
        snprintf(err, errlen, "%s: the script must return normtune.sweep{...}, it returned %s",
                 path, luaL_typename(L, -1));
        return -1;
    }
    if (!box->owned) {        /* a to-be-closed variable released it */
        snprintf(err, errlen, "%s: the returned sweep was closed (<close>) before the return", path);
        return -1;
    }
    *sw = box->sw;            /* the caller owns shapes, spaces and refs now */
    box->owned = 0;
    lua_settop(L, 0);
    return 0;
}

/* Close a state (NULL is fine) in a close section: its finalizers run. */
static void close_state(ntl_guard *g, lua_State *L) {
    if (!L) return;
    gd_open(g, PH_CLOSE);
    lua_close(L);
    gd_close(g);
}

/* The answers search/ asks for (search/sweep.h). */
static const nt_script_ops script_ops = {ntl_where, ntl_walk_begin, ntl_walk_end, ntl_walk_poll};

/* Load and check a script (see ntlua.h): run it, run it again in a second
 * state and compare.  On success *sw owns the shapes, the spaces, the Lua
 * state and its context (with the file buffer and the guard); ntl_free
 * releases them. */
int ntl_load(const char *path, nt_sweep *sw, char *err, size_t errlen) {
    ntl_ctx *c = NULL, c2;
    ntl_guard *g = NULL;
    lua_State *L = NULL, *L2 = NULL;
    nt_sweep sw2;
    size_t nbuf = 0, off;
    char diff[256], hash[sizeof sw->hash];
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
    if (!(c->buf = read_file(path, &nbuf, err, errlen))) goto err;
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)nt_fnv1a(NT_FNV_INIT, c->buf, nbuf));
    off = skip_head(c->buf, nbuf);
    c->src = c->buf + off;
    c->nsrc = nbuf - off;
    if (!(g = c->g = gd_new(path, err, errlen))) goto err;
    gd_open(g, PH_LOAD);
    rc = run_once(c, path, sw, &L, err, errlen);
    gd_close(g);
    if (rc) {
        close_state(g, L);
        L = NULL;
        goto err;
    }
    /* the second run: the same script must build the same sweep */
    c2 = *c;
    c2.used = 0;
    c2.buf = NULL;
    c2.quiet = 1;
    memset(&sw2, 0, sizeof sw2);
    gd_open(g, PH_LOAD);
    rc = run_once(&c2, path, &sw2, &L2, err, errlen);
    if (rc == 0 && (rc = sweep_diff(sw, &sw2, diff, sizeof diff)))
        snprintf(err, errlen,
                 "%s: the script built a different sweep when run a second time (%s); it must "
                 "build the same one every time (tostring() of a table or function, and the "
                 "order of pairs(), change from run to run)",
                 path, diff);
    gd_close(g);
    sweep_release(&sw2);
    close_state(g, L2);
    if (rc) goto err;
    snprintf(sw->path, sizeof sw->path, "%s", path);
    memcpy(sw->hash, hash, sizeof hash);
    sw->L = L;
    sw->script = &script_ops;
    return 0;
err:
    if (L) {
        sweep_release(sw);
        close_state(g, L);
    }
    gd_free(g);
    if (c) free(c->buf);
    free(c);
    memset(sw, 0, sizeof *sw);
    return -1;
}

/* The guard of a loaded sweep. */
static ntl_guard *guard_of(const nt_sweep *sw) {
    void *ud;
    lua_getallocf(sw->L, &ud);
    return ((ntl_ctx *)ud)->g;
}

/* Call family f's where(p, shape); see ntlua.h.  Outside a walk the call
 * is a where() section of its own. */
int ntl_where(nt_sweep *sw, int f, const nt_params *p, const nt_problem *s, int *accept,
              char *err, size_t errlen) {
    const nt_sweep_family *sf = &sw->fam[f];
    lua_State *L = sw->L;
    void *ud;
    int rc, own = 0;
    *accept = 1;
    if (sf->where_ref < 0) return 0;
    ntl_guard *g = guard_of(sw);
    if (g->phase != PH_WHERE) {   /* only this thread changes it */
        gd_open(g, PH_WHERE);
        own = 1;
    }
    if (gd_call_begin(g)) {
        gd_errmsg(g, err, errlen);
        if (own) gd_close(g);
        return -1;
    }
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
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, (lua_Integer)s->M);
    lua_setfield(L, -2, "M");
    lua_pushinteger(L, (lua_Integer)s->N);
    lua_setfield(L, -2, "N");
    lua_createtable(L, 0, s->op->nslots);
    for (int i = 0; i < s->op->nslots; i++) {
        lua_pushstring(L, nt_dtypes[s->dtype[i]].name);
        lua_setfield(L, -2, s->op->slots[i].name);
    }
    lua_setfield(L, -2, "dtype");
    lua_getallocf(L, &ud);
    ((ntl_ctx *)ud)->hooks = 0;
    rc = lua_pcall(L, 2, 1, top + 1);
    int stopped = gd_call_end(g);
    if (own) gd_close(g);
    if (rc != LUA_OK) {
        pcall_error(L, rc, sw->path, err, errlen);
        lua_settop(L, top);
        return -1;
    }
    if (stopped) {                /* the script caught the stop */
        gd_errmsg(g, err, errlen);
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

/* Open a walk: a where() section (see ntlua.h). */
int ntl_walk_begin(nt_sweep *sw, char *err, size_t errlen) {
    ntl_guard *g = guard_of(sw);
    gd_open(g, PH_WHERE);
    if (atomic_load(&g->stop)) {
        gd_errmsg(g, err, errlen);
        gd_close(g);
        return -1;
    }
    return 0;
}

void ntl_walk_end(nt_sweep *sw) {
    gd_close(guard_of(sw));
}

/* Has the watchdog asked the walk to stop? */
int ntl_walk_poll(nt_sweep *sw, char *err, size_t errlen) {
    ntl_guard *g = guard_of(sw);
    if (!gd_stopped(g)) return 0;
    gd_errmsg(g, err, errlen);
    return -1;
}

/* Free everything ntl_load gave *sw; safe on a zeroed or failed sweep.  The
 * state is closed in a section of its own: its finalizers run then. */
void ntl_free(nt_sweep *sw) {
    if (sw->L) {
        lua_State *L = sw->L;
        ntl_ctx *c;
        void *ud;
        lua_getallocf(L, &ud);
        c = ud;
        gd_open(c->g, PH_CLOSE);
        lua_close(L);
        gd_close(c->g);
        gd_free(c->g);
        free(c->buf);
        free(c);
    }
    nt_sweep_clear(sw);
}
