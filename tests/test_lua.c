/* test_lua.c -- the Lua binding (lua/ntlua.h) and the variant walk
 * (search/enumerate.h), on CPU.
 *
 * Every script is written by the test into t_tmpdir().  Good scripts are
 * loaded and their enumeration counted against numbers worked out by hand;
 * bad ones must fail with "file:line: message" where the line is the one
 * that holds the mistake and the message names what is allowed.  Also
 * the CPU and wall-clock budgets (soft stops only: a hard stop ends the
 * process, tests/test_list.sh runs those), the caps on spaces, walks, M and
 * N, a BOM and a #! line, the determinism checks, and the progress line on
 * a pseudo-terminal. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "lua/ntlua.h"
#include "tests/t.h"
#include "search/enumerate.h"

/* Write text to t_tmpdir()/name; returns the path (static buffer). */
static const char *script(const char *name, const char *text) {
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", t_tmpdir(), name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(2);
    }
    fputs(text, f);
    fclose(f);
    return path;
}

/* Load a script that must fail: 1 when it failed, its message in err. */
static int load_fails(const char *name, const char *text, char *err, size_t errlen) {
    nt_sweep sw;
    err[0] = 0;
    if (ntl_load(script(name, text), &sw, err, errlen) == 0) {
        ntl_free(&sw);
        return 0;
    }
    ntl_free(&sw);            /* must be harmless after a failure */
    return 1;
}

/* Check a bad script: fails, message has "name:line:" and every needle. */
#define BAD(name, line, text, ...)                                                  \
    do {                                                                            \
        char err_[1024], pos_[128];                                                 \
        const char *needles_[] = {__VA_ARGS__, NULL};                               \
        int failed_ = load_fails(name, text, err_, sizeof err_);                    \
        CHECK(failed_, "%s loaded but should not", name);                           \
        snprintf(pos_, sizeof pos_, "%s:%d: ", name, line);                         \
        CHECK(strstr(err_, pos_) != NULL, "want '%s' in: %s", pos_, err_);          \
        for (int i_ = 0; needles_[i_]; i_++)                                        \
            CHECK(strstr(err_, needles_[i_]) != NULL, "want '%s' in: %s", needles_[i_], err_); \
    } while (0)

/* A small script with a range and where() constraints.  Hand count:
 *
 * persistent: block in range(64, 256, 64) = {64, 128, 192, 256}, chunks
 *   {1, 2, 4}, stages {1, 2}, k {0}: 24 points; where keeps
 *   block*chunks*8 >= N and stages <= 2 (always true).
 *   N=1024 (block*chunks >= 128): 64:{2,4} 128:{1,2,4} 192:{1,2,4}
 *     256:{1,2,4} = 11 pairs x 2 stages = 22.
 *   N=2048 (block*chunks >= 256): 64:{4} 128:{2,4} 192:{2,4} 256:{1,2,4}
 *     = 8 pairs x 2 stages = 16.
 * naive: nsplit {32} x partial {bf16, f32}; where keeps M > 10 or f32:
 *   M=4: 1, M=100: 2.
 * Shape 1: 1 + 22 = 23; shape 2: 2 + 16 = 18; total 41.
 * Families come in nt_families[] order: naive (0), persistent (1). */
static const char small_lua[] =
    "local shapes = {{M = 4, N = 1024}, {M = 100, N = 2048}}\n"
    "return normtune.sweep {\n"
    "  op = \"rmsnorm_bwd\", dtype = \"bf16\", shapes = shapes,\n"
    "  families = {\n"
    "    persistent = {\n"
    "      params = {block = normtune.range(64, 256, 64), chunks = {1, 2, 4},\n"
    "                stages = {1, 2}, k = {0}},\n"
    "      where = function(p, s) return p.block * p.chunks * 8 >= s.N and p.stages <= 2 end,\n"
    "    },\n"
    "    naive = {params = {nsplit = {32}, partial = {\"bf16\", \"f32\"}},\n"
    "             where = function(p, s) return s.M > 10 or p.partial == \"f32\" end},\n"
    "  },\n"
    "  search = {strategy = \"random\", budget = 5, seed = 7},\n"
    "  timing = {warmup = 2, min_samples = 3, max_samples = 9, rel_ci = 0.5},\n"
    "  eps = 1e-5,\n"
    "}\n";

TEST(t_counts) {
    nt_sweep sw;
    char err[1024];
    uint64_t counts[4];
    int rc = ntl_load(script("small.lua", small_lua), &sw, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    CHECK(sw.nshape == 2 && sw.shapes[1].M == 100 && sw.shapes[1].N == 2048, "shapes");
    CHECK(sw.nfam == 2, "nfam %d", sw.nfam);
    CHECK(!strcmp(sw.fam[0].fam->name, "rmsnorm_bwd.naive"), "fam0 %s", sw.fam[0].fam->name);
    CHECK(!strcmp(sw.fam[1].fam->name, "rmsnorm_bwd.persistent"), "fam1 %s", sw.fam[1].fam->name);
    CHECK(search_space_size(&sw.fam[1].space) == 24, "persistent space %llu",
          (unsigned long long)search_space_size(&sw.fam[1].space));
    rc = nt_enumerate(&sw, NT_ENUM_EXHAUSTIVE, NULL, NULL, counts, err, sizeof err);
    CHECK(rc == 0, "enumerate: %s", err);
    CHECK(counts[0] == 1 && counts[1] == 22, "shape 1: %llu %llu", (unsigned long long)counts[0],
          (unsigned long long)counts[1]);
    CHECK(counts[2] == 2 && counts[3] == 16, "shape 2: %llu %llu", (unsigned long long)counts[2],
          (unsigned long long)counts[3]);
    CHECK(sw.search.race == 1, "a random search is not raced");
    CHECK(!strcmp(sw.search.strategy, "random") && sw.search.budget == 5 && sw.search.seed == 7,
          "search %s %llu %llu", sw.search.strategy, (unsigned long long)sw.search.budget,
          (unsigned long long)sw.search.seed);
    CHECK(sw.timing.warmup == 2 && sw.timing.min_samples == 3 && sw.timing.max_samples == 9 &&
              sw.timing.rel_ci == 0.5, "timing");
    CHECK(sw.eps == 1e-5, "eps %g", sw.eps);
    ntl_free(&sw);
}

/* Every family of every op fits the tables that hold families (a sweep's,
 * the registry's list of all), so none is dropped without a word. */
TEST(t_family_limits) {
    int total = 0, all = 0;
    for (int i = 0; nt_ops[i]; i++) {
        int n = 0;
        while (nt_ops[i]->families[n]) n++;
        CHECK(n >= 1 && n <= NT_SWEEP_MAX_FAMILIES, "op %s has %d families; a sweep holds %d",
              nt_ops[i]->name, n, NT_SWEEP_MAX_FAMILIES);
        total += n;
    }
    for (const nt_family *const *fp = nt_all_families(); *fp; fp++) all++;
    CHECK(all == total, "nt_all_families lists %d of the ops' %d families", all, total);
}

/* Dims in declared order with texts; point params; where() sees integers. */
TEST(t_space_and_params) {
    nt_sweep sw;
    char err[1024], canon[256];
    int rc = ntl_load(script("small2.lua", small_lua), &sw, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    const search_space *sp = &sw.fam[1].space;
    static const char *const names[] = {"block", "chunks", "stages", "k"};
    CHECK(sp->ndim == 4, "ndim %d", sp->ndim);
    for (int d = 0; d < 4 && d < sp->ndim; d++)
        CHECK(!strcmp(sp->dim[d].name, names[d]), "dim %d is %s", d, sp->dim[d].name);
    CHECK(sp->dim[0].nval == 4 && !strcmp(sp->dim[0].val[2], "192"), "block values");
    int idx[4] = {2, 1, 0, 0};
    nt_params p;
    nt_sweep_point_params(&sw, 1, idx, &p);
    nt_params_canon(sw.fam[1].fam, &p, canon, sizeof canon);
    CHECK(!strcmp(canon, "block=192,chunks=2,stages=1,k=0"), "canon %s", canon);
    int acc = -1;
    nt_problem big, small;
    nt_problem_init(&big, sw.op, 8, 8192);
    nt_problem_init(&small, sw.op, 8, 1024);
    CHECK(ntl_where(&sw, 1, &p, &big, &acc, err, sizeof err) == 0 && acc == 0,
          "192*2*8 < 8192 must be rejected (acc %d, %s)", acc, err);
    CHECK(ntl_where(&sw, 1, &p, &small, &acc, err, sizeof err) == 0 && acc == 1,
          "192*2*8 >= 1024 must be accepted (acc %d, %s)", acc, err);
    ntl_free(&sw);
}

/* The random strategy: the budget of proposals per shape, over all
 * families, all of them points the exhaustive walk accepts, the same on
 * every run. */
typedef struct seen {
    int n;
    char line[64][128];
} seen;

static int collect(void *ctx, const nt_sweep *sw, int s, int f, const int *idx,
                   const nt_params *p, char *err, size_t errlen) {
    seen *c = ctx;
    char canon[96];
    (void)idx, (void)err, (void)errlen;
    nt_params_canon(sw->fam[f].fam, p, canon, sizeof canon);
    if (c->n < 64) snprintf(c->line[c->n++], 128, "%d %d %s", s, f, canon);
    return 0;
}

TEST(t_random_strategy) {
    nt_sweep sw;
    char err[1024];
    uint64_t counts[4];
    seen a = {0}, b = {0};
    int rc = ntl_load(script("small3.lua", small_lua), &sw, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    rc = nt_enumerate(&sw, NT_ENUM_STRATEGY, collect, &a, counts, err, sizeof err);
    CHECK(rc == 0, "random: %s", err);
    /* the budget (5) per shape, over both families: 23 and 18 points run */
    CHECK(counts[0] + counts[1] == 5 && counts[2] + counts[3] == 5, "counts %llu+%llu, %llu+%llu",
          (unsigned long long)counts[0], (unsigned long long)counts[1],
          (unsigned long long)counts[2], (unsigned long long)counts[3]);
    CHECK(counts[0] <= 1 && counts[2] <= 2, "naive: more than the points that run: %llu %llu",
          (unsigned long long)counts[0], (unsigned long long)counts[2]);
    rc = nt_enumerate(&sw, NT_ENUM_STRATEGY, collect, &b, NULL, err, sizeof err);
    CHECK(rc == 0 && a.n == b.n, "second run: %d vs %d points", b.n, a.n);
    for (int i = 0; i < a.n && i < b.n; i++)
        CHECK(!strcmp(a.line[i], b.line[i]), "run differs at %d: %s vs %s", i, a.line[i], b.line[i]);
    ntl_free(&sw);
}

/* Defaults, and the hash of the exact script bytes (worked out with an
 * independent FNV-1a 64 implementation). */
static const char minimal_lua[] =
    "return normtune.sweep {\n"
    "  op = \"rmsnorm_bwd\",\n"
    "  shapes = {{M = 1, N = 8}},\n"
    "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
    "}\n";

TEST(t_defaults_and_hash) {
    nt_sweep sw;
    char err[1024];
    int rc = ntl_load(script("minimal.lua", minimal_lua), &sw, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    CHECK(!strcmp(sw.hash, "c626b869f589ee1d"), "hash %s", sw.hash);
    char dt[128];
    nt_dtypes_canon(&sw.dts[0], dt, sizeof dt);
    CHECK(!strcmp(sw.op->name, "rmsnorm_bwd") && sw.ndt == 1 && !strcmp(dt, "x=bf16,w=bf16,dw=f32"),
          "op %s, %d dtypes, %s", sw.op->name, sw.ndt, dt);
    CHECK(!strcmp(sw.search.strategy, "exhaustive") && sw.search.budget == 0 &&
              sw.search.budget_stored == 0, "search default");
    CHECK(sw.timing.warmup == 10 && sw.timing.min_samples == 20 && sw.timing.max_samples == 200 &&
              sw.timing.rel_ci == 0.01, "timing defaults %d %d %d %g", sw.timing.warmup,
          sw.timing.min_samples, sw.timing.max_samples, sw.timing.rel_ci);
    CHECK(sw.eps == 1e-6, "eps %g", sw.eps);
    CHECK(sw.nfam == 1 && sw.fam[0].where_ref < 0, "one family without where");
    CHECK(strstr(sw.path, "minimal.lua") != NULL, "path %s", sw.path);
    ntl_free(&sw);
}

/* warm's budget_stored: read as given; absent, 0 (the budget). */
TEST(t_budget_stored) {
    nt_sweep sw;
    char err[1024];
    static const char with[] =
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"warm\", budget = 13, budget_stored = 5},\n"
        "}\n";
    static const char without[] =
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"warm\", budget = 13},\n"
        "}\n";
    int rc = ntl_load(script("bstored.lua", with), &sw, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    CHECK(!strcmp(sw.search.strategy, "warm") && sw.search.budget == 13 &&
              sw.search.budget_stored == 5, "search %s %llu %llu", sw.search.strategy,
          (unsigned long long)sw.search.budget, (unsigned long long)sw.search.budget_stored);
    ntl_free(&sw);
    rc = ntl_load(script("bstored0.lua", without), &sw, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    CHECK(sw.search.budget == 13 && sw.search.budget_stored == 0, "without: %llu %llu",
          (unsigned long long)sw.search.budget, (unsigned long long)sw.search.budget_stored);
    CHECK(sw.search.remeasure_alone == 0, "the re-measure is chain by default");
    ntl_free(&sw);
}

/* A family's own search (families.X.search): its strategy and budget,
 * the passes the driver runs in that order (search/sweep.h), and the
 * sweep's search for the others; bad ones refused with their line. */
TEST(t_family_search) {
    nt_sweep sw;
    char err[1024];
    static const char text[] =
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 1024}},\n"
        "  families = {naive = {params = {nsplit = {1, 2}, partial = {\"f32\"}},\n"
        "                       search = {strategy = \"exhaustive\"}},\n"
        "              persistent = {params = {block = {128, 256}, chunks = {4}, stages = {1},\n"
        "                                      k = {0}}, search = {strategy = \"random\",\n"
        "                                                         budget = 1}},\n"
        "              warp = {params = {tpr = {32}, block = {128}, chunks = {4}, rows = {1},\n"
        "                                k = {0}}}},\n"
        "  search = {strategy = \"warm\", budget = 3},\n"
        "}\n";
    int rc = ntl_load(script("famsearch.lua", text), &sw, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    int only[4] = {9, 9, 9, 9}, np = nt_sweep_npasses(&sw);
    const char *st[4] = {""};
    uint64_t b[4] = {0};
    for (int i = 0; i < np && i < 4; i++) nt_sweep_pass(&sw, i, &only[i], &st[i], &b[i]);
    CHECK(np == 3, "%d passes", np);
    CHECK(np == 3 && !strcmp(sw.fam[only[0]].fam->name, "rmsnorm_bwd.naive") &&
              !strcmp(st[0], "exhaustive") && b[0] == 0, "pass 1: %d %s %llu", only[0], st[0],
          (unsigned long long)b[0]);
    CHECK(np == 3 && !strcmp(sw.fam[only[1]].fam->name, "rmsnorm_bwd.persistent") &&
              !strcmp(st[1], "random") && b[1] == 1, "pass 2: %d %s %llu", only[1], st[1],
          (unsigned long long)b[1]);
    CHECK(np == 3 && only[2] == -1 && !strcmp(st[2], "warm") && b[2] == 3, "pass 3: %d %s %llu",
          only[2], st[2], (unsigned long long)b[2]);
    CHECK(nt_sweep_uses(&sw, "random") && nt_sweep_uses(&sw, "exhaustive") &&
              nt_sweep_uses(&sw, "warm") && !nt_sweep_uses(&sw, "hillclimb"), "uses");
    nt_sweep_drop_own(&sw);
    CHECK(nt_sweep_npasses(&sw) == 1 && !nt_sweep_uses(&sw, "random"), "dropped: %d passes",
          nt_sweep_npasses(&sw));
    ntl_free(&sw);
    BAD("famsearch_strategy.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}, search = {strategy = \"best\"}}},\n"
        "}\n",
        "families.naive.search.strategy: unknown strategy 'best' (allowed: exhaustive, random, "
        "hillclimb, warm)");
    BAD("famsearch_none.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}, search = {budget = 2}}},\n"
        "}\n",
        "families.naive.search: missing field 'strategy'");
    BAD("famsearch_budget.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}, search = {strategy = \"random\", budget = 0}}},\n"
        "}\n",
        "families.naive.search.budget must be a positive integer, got 0");
    BAD("famsearch_exh.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}, search = {strategy = \"exhaustive\", budget = 2}}},\n"
        "}\n",
        "families.naive.search.budget: strategy exhaustive measures every point, it takes no "
        "budget");
    BAD("famsearch_field.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}, search = {strategy = \"random\", seed = 2}}},\n"
        "}\n",
        "unknown field 'seed'", "allowed: strategy, budget");
    BAD("famsearch_type.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}, search = \"random\"}},\n"
        "}\n",
        "families.naive.search: expected table, got string");
}

/* warm's re-measure method: "chain" (the default) or "alone". */
TEST(t_remeasure) {
    nt_sweep sw;
    char err[1024];
    static const char *const text[] = {
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"warm\", budget = 4, remeasure = \"alone\"},\n"
        "}\n",
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"exhaustive\", remeasure = \"chain\"},\n"
        "}\n",
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"warm\"},\n"
        "}\n"};
    for (int i = 0; i < 3; i++) {
        static const char *const name[] = {"rm_alone.lua", "rm_chain.lua", "rm_none.lua"};
        int rc = ntl_load(script(name[i], text[i]), &sw, err, sizeof err);
        CHECK(rc == 0, "load: %s", err);
        if (rc) return;
        CHECK(sw.search.remeasure_alone == (i == 0) && sw.search.remeasure_set == (i < 2),
              "script %d: remeasure_alone %d, set %d", i, sw.search.remeasure_alone,
              sw.search.remeasure_set);
        ntl_free(&sw);
    }
}

/* Lua's own errors: syntax, runtime, a script that returns something else,
 * an endless loop. */
TEST(t_lua_errors) {
    BAD("syntax.lua", 3, "local a = 1\nlocal b = 2\nlocal c = = 3\n", "unexpected symbol");
    BAD("runtime.lua", 2, "local t = {}\nlocal x = t.a.b\n", "attempt to index a nil value");
    BAD("errorcall.lua", 4, "local function f()\n  return 1\nend\nerror(\"my own message\")\n",
        "my own message");
    BAD("loop.lua", 2, "local i = 0\nwhile true do i = i + 1 end\n", "instructions");
    char err[512];
    CHECK(load_fails("ret.lua", "return 42\n", err, sizeof err), "return 42 must fail");
    CHECK(strstr(err, "ret.lua: ") && strstr(err, "must return normtune.sweep"), "%s", err);
    CHECK(load_fails("empty.lua", "", err, sizeof err) && strstr(err, "returned nil"),
          "empty script: %s", err);
    /* a sweep released by <close> before the return is not handed over */
    CHECK(load_fails("closed.lua",
                     "local s <close> = normtune.sweep {\n"
                     "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
                     "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
                     "}\n"
                     "return s\n",
                     err, sizeof err) &&
              strstr(err, "closed.lua: ") && strstr(err, "closed"),
          "closed sweep: %s", err);
}

/* Unknown names: the message names the allowed ones, at the key's line. */
TEST(t_unknown_names) {
    BAD("fam.lua", 5,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {\n"
        "    naive = {params = {nsplit = {1}, partial = {\"f32\"}}},\n"
        "    persistant = {params = {}},\n"
        "  },\n"
        "}\n",
        "unknown family 'persistant'", "allowed: naive, persistent");
    BAD("top.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  famlies = {},\n"
        "}\n",
        "unknown field 'famlies'", "allowed: op, dtype, dtypes, shapes, families, search, timing, eps");
    BAD("param.lua", 6,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {\n"
        "    persistent = {\n"
        "      params = {block = {64}, chunks = {1}, stages = {1},\n"
        "                blocks_per_sm = {0}},\n"
        "    },\n"
        "  },\n"
        "}\n",
        "unknown parameter 'blocks_per_sm'", "allowed: block, chunks, stages, k");
    BAD("entry.lua", 5,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {\n"
        "    naive = {params = {nsplit = {1}, partial = {\"f32\"}},\n"
        "             wehre = function() return true end},\n"
        "  },\n"
        "}\n",
        "unknown field 'wehre'", "allowed: params, where");
    /* a list field given a string (found by fuzz_script: lua_next on a
     * string crashed) */
    BAD("dtypes_string.lua", 1,
        "return normtune.sweep { op = \"rmsnorm_bwd\", dtypes = \"bf16\",\n"
        "  shapes = {{M = 1, N = 8}}, families = {naive = {params = {nsplit = {1}}}} }\n",
        "dtypes: expected a list, got string");
    BAD("search.lua", 5,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"random\",\n"
        "            budjet = 10},\n"
        "}\n",
        "unknown field 'budjet'", "allowed: strategy, budget, budget_stored, seed");
    BAD("strategy.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"genetic\"},\n"
        "}\n",
        "unknown strategy 'genetic'", "exhaustive", "random");
    BAD("timing.lua", 5,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  timing = {warmup = 1,\n"
        "            samples = 10},\n"
        "}\n",
        "unknown field 'samples'", "allowed: warmup, min_samples, max_samples, rel_ci");
    BAD("op.lua", 2,
        "return normtune.sweep {\n"
        "  op = \"layernorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "}\n",
        "unknown op 'layernorm_bwd'", "allowed: rmsnorm_bwd");
    BAD("choice.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1},\n"
        "                                 partial = {\"f32\", \"f16\"}}}},\n"
        "}\n",
        "partial[2]: 'f16' is not allowed", "allowed: bf16, f32");
    BAD("missing.lua", 5,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {\n"
        "    persistent = {\n"
        "      params = {block = {64}, chunks = {1}, stages = {1}},\n"
        "    },\n"
        "  },\n"
        "}\n",
        "missing parameter 'k'", "block, chunks, stages, k");
}

/* Wrong types, out-of-range and repeated values. */
TEST(t_types_and_values) {
    BAD("shapes_type.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\",\n"
        "  shapes = 5,\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "}\n",
        "shapes: expected table, got number");
    BAD("op_type.lua", 2,
        "return normtune.sweep {\n"
        "  op = 3, shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "}\n",
        "op: expected string, got number");
    BAD("val_type.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {\"64\"}, partial = {\"f32\"}}}},\n"
        "}\n",
        "nsplit[1]: expected an integer, got 64");
    BAD("str_type.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {32}}}},\n"
        "}\n",
        "partial[1]: expected a string, got number");
    BAD("where_type.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}},\n"
        "                       where = true}},\n"
        "}\n",
        "where: expected function, got boolean");
    BAD("frac.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1.5}, partial = {\"f32\"}}}},\n"
        "}\n",
        "expected an integer");
    BAD("range_val.lua", 5,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {\n"
        "    persistent = {\n"
        "      params = {block = {64, 2048}, chunks = {1}, stages = {1}, k = {0}},\n"
        "    },\n"
        "  },\n"
        "}\n",
        "block[2]: 2048 is out of the allowed range [32, 1024]");
    BAD("dup.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1, 2, 1}, partial = {\"f32\"}}}},\n"
        "}\n",
        "value 1 appears twice");
    BAD("eps.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  eps = -1,\n"
        "}\n",
        "eps must be a positive number");
    BAD("maxs.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  timing = {max_samples = 100000},\n"
        "}\n",
        "timing.max_samples must be in [1, 2000]");
    BAD("relci.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  timing = {rel_ci = 1.5},\n"
        "}\n",
        "timing.rel_ci must be in (0, 1)");
    BAD("budget.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"random\", budget = 0},\n"
        "}\n",
        "search.budget must be a positive integer");
    BAD("remeasure.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"warm\", remeasure = \"iso\"},\n"
        "}\n",
        "search.remeasure: unknown method 'iso' (allowed: chain, alone)");
    BAD("remeasure_strategy.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"random\", budget = 3, remeasure = \"alone\"},\n"
        "}\n",
        "search.remeasure is a step of strategies warm and exhaustive, not of random");
    BAD("remeasure_type.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"warm\", remeasure = true},\n"
        "}\n",
        "search.remeasure: expected string, got boolean");
    BAD("budget_stored.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"warm\", budget = 8, budget_stored = 0},\n"
        "}\n",
        "search.budget_stored must be a positive integer, got 0");
    BAD("budget_stored_frac.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"warm\", budget = 8, budget_stored = 2.5},\n"
        "}\n",
        "search.budget_stored: expected an integer, got number with a fraction");
    BAD("budget_stored_str.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"warm\", budget = 8, budget_stored = \"5\"},\n"
        "}\n",
        "search.budget_stored: expected an integer, got string");
    BAD("budget_stored_random.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"random\", budget = 8, budget_stored = 5},\n"
        "}\n",
        "search.budget_stored is a budget of strategy warm, not of random");
    BAD("budget_stored_exh.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {budget_stored = 5},\n"
        "}\n",
        "search.budget_stored is a budget of strategy warm, not of exhaustive");
    BAD("budget_stored_alone.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"warm\", budget_stored = 5},\n"
        "}\n",
        "search.budget_stored needs search.budget");
    BAD("dtype.lua", 2,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", dtype = \"fp8\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "}\n",
        "dtype: rmsnorm_bwd: x=fp8 is not a dtype it takes", "allowed: bf16, f16, f32");
}

/* Empty lists and ranges, non-positive shapes. */
TEST(t_empty_and_nonpositive) {
    BAD("empty_list.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {}, partial = {\"f32\"}}}},\n"
        "}\n",
        "families.naive.params.nsplit: empty list");
    BAD("empty_shapes.lua", 2,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "}\n",
        "shapes: empty list");
    BAD("empty_range.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {\n"
        "    nsplit = normtune.range(64, 32), partial = {\"f32\"}}}},\n"
        "}\n",
        "empty range");
    BAD("step.lua", 1, "local r = normtune.range(1, 4, 0)\n", "step must be a positive integer");
    BAD("m_zero.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\",\n"
        "  shapes = {{M = 1, N = 8},\n"
        "            {M = 0, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "}\n",
        "shapes[2].M must be a positive integer, got 0");
    BAD("n_neg.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\",\n"
        "  shapes = {{M = 1, N = -8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "}\n",
        "shapes[1].N must be a positive integer, got -8");
    BAD("no_fam.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {},\n"
        "}\n",
        "no family given");
}

/* Space empty after where(): the enumeration names the shape. */
TEST(t_space_empty_after_where) {
    nt_sweep sw;
    char err[1024];
    const char *path = script("emptied.lua",
                              "return normtune.sweep {\n"
                              "  op = \"rmsnorm_bwd\",\n"
                              "  shapes = {{M = 64, N = 1024}, {M = 64, N = 16384}},\n"
                              "  families = {naive = {params = {nsplit = {1, 2}, partial = {\"f32\"}},\n"
                              "                       where = function(p, s) return s.N < 8192 end}},\n"
                              "}\n");
    int rc = ntl_load(path, &sw, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    uint64_t counts[2] = {99, 99};
    rc = nt_enumerate(&sw, NT_ENUM_EXHAUSTIVE, NULL, NULL, counts, err, sizeof err);
    CHECK(rc == -1, "enumerate must fail");
    CHECK(strstr(err, "emptied.lua: M=64 N=16384 x=bf16,w=bf16,dw=f32 (shapes[2]): no variant left after "
                  "where constraints") != NULL,
          "message: %s", err);
    CHECK(counts[0] == 2, "first shape counted %llu", (unsigned long long)counts[0]);
    ntl_free(&sw);
}

/* Errors raised by where(): runtime error at its line; a non-boolean result
 * at the line where the function is defined. */
TEST(t_where_errors) {
    nt_sweep sw;
    char err[1024];
    int rc = ntl_load(script("where_err.lua",
                             "return normtune.sweep {\n"
                             "  op = \"rmsnorm_bwd\", shapes = {{M = 2, N = 64}},\n"
                             "  families = {\n"
                             "    naive = {params = {nsplit = {1}, partial = {\"f32\"}},\n"
                             "             where = function(p, s)\n"
                             "               return p.nsplit + p.partial > 0\n"
                             "             end},\n"
                             "    persistent = {params = {block = {64}, chunks = {1}, stages = {1}, k = {0}},\n"
                             "                  where = function(p, s) return p.block end},\n"
                             "  },\n"
                             "}\n"),
                      &sw, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    rc = nt_enumerate(&sw, NT_ENUM_EXHAUSTIVE, NULL, NULL, NULL, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "where_err.lua:6: ") && strstr(err, "attempt to"),
          "runtime error in where: %s", err);
    nt_params p;
    int idx[4] = {0, 0, 0, 0}, acc = 7;
    nt_problem p0;
    nt_sweep_point_params(&sw, 1, idx, &p);
    nt_sweep_problem(&sw, 0, &p0);
    rc = ntl_where(&sw, 1, &p, &p0, &acc, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "where_err.lua:9: ") && strstr(err, "must return a boolean, got number"),
          "non-boolean: %s", err);
    /* the state is still usable after an error */
    rc = ntl_where(&sw, 1, &p, &p0, &acc, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "where_err.lua:9: "), "again: %s", err);
    ntl_free(&sw);
}

/* where() sees integer params as Lua integers and strings as strings. */
TEST(t_where_types) {
    nt_sweep sw;
    char err[1024];
    uint64_t counts[1];
    int rc = ntl_load(script("where_types.lua",
                             "return normtune.sweep {\n"
                             "  op = \"rmsnorm_bwd\", shapes = {{M = 3, N = 64}},\n"
                             "  families = {naive = {params = {nsplit = {1, 2}, partial = {\"bf16\"}},\n"
                             "    where = function(p, s)\n"
                             "      assert(math.type(p.nsplit) == \"integer\", \"nsplit not an integer\")\n"
                             "      assert(type(p.partial) == \"string\", \"partial not a string\")\n"
                             "      assert(math.type(s.M) == \"integer\" and s.N == 64, \"shape\")\n"
                             "      return p.nsplit == 2 and p.partial == \"bf16\"\n"
                             "    end}},\n"
                             "}\n"),
                      &sw, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    rc = nt_enumerate(&sw, NT_ENUM_EXHAUSTIVE, NULL, NULL, counts, err, sizeof err);
    CHECK(rc == 0 && counts[0] == 1, "rc %d count %llu: %s", rc, (unsigned long long)counts[0], err);
    ntl_free(&sw);
}

/* The sandbox: no os, no io, no load/loadfile/dofile/require; nothing can
 * be run or written. */
TEST(t_sandbox) {
    char touched[1024], code[2048];
    snprintf(touched, sizeof touched, "%s/touched", t_tmpdir());
    snprintf(code, sizeof code, "local x = 1\nos.execute(\"touch %s\")\n", touched);
    BAD("os_execute.lua", 2, code, "global 'os'");
    snprintf(code, sizeof code, "local x = 1\nlocal f = io.popen(\"touch %s\")\n", touched);
    BAD("io_popen.lua", 2, code, "global 'io'");
    snprintf(code, sizeof code, "local x = 1\n\nlocal f = io.open(\"%s\", \"w\")\n", touched);
    BAD("io_open.lua", 3, code, "global 'io'");
    BAD("load.lua", 1, "local f = load(\"return 1\")\n", "global 'load'");
    BAD("loadfile.lua", 1, "local f = loadfile(\"x.lua\")\n", "global 'loadfile'");
    BAD("dofile.lua", 1, "dofile(\"x.lua\")\n", "global 'dofile'");
    BAD("require.lua", 1, "local m = require(\"os\")\n", "global 'require'");
    BAD("debug.lua", 1, "debug.sethook()\n", "global 'debug'");
    BAD("package.lua", 1, "package.loadlib(\"libc.so.6\", \"system\")\n", "global 'package'");
    CHECK(access(touched, F_OK) != 0, "a sandboxed script created %s", touched);
    /* memory is capped */
    char err2[512];
    CHECK(load_fails("memory.lua", "local s = string.rep(\"x\", 1 << 30)\n", err2, sizeof err2) &&
              strstr(err2, "memory.lua") && strstr(err2, "not enough memory"),
          "memory cap: %s", err2);
    /* a binary chunk is refused */
    char err[512];
    CHECK(load_fails("binary.lua", "\033Lua\x54\x00 junk", err, sizeof err) &&
              strstr(err, "binary.lua") && strstr(err, "binary"),
          "binary chunk: %s", err);
}

/* The line of a mistake is found past comments, strings and function
 * bodies, and list items are told apart. */
TEST(t_error_lines) {
    BAD("lines.lua", 12,
        "-- blok = 1 in a comment does not count\n"
        "local shapes = {{M = 1, N = 8}}\n"
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = shapes,\n"
        "  families = {\n"
        "    naive = {params = {nsplit = {1}, partial = {\"f32\"}},\n"
        "             where = function(p, s)\n"
        "               local blok = \"blok = 2\"   -- a local in a function body\n"
        "               return true\n"
        "             end},\n"
        "    persistent = {params = {block = {64}, chunks = {1}, stages = {1}, k = {0},\n"
        "                            blok = {1}}},\n"
        "  },\n"
        "}\n",
        "unknown parameter 'blok'");
    BAD("items.lua", 4,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\",\n"
        "  shapes = {{M = 1, N = 8}, {M = 2, N = 8},\n"
        "            {M = 3, N = 0}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "}\n",
        "shapes[3].N must be a positive integer, got 0");
    BAD("repeat.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8},\n"
        "                                 {M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "}\n",
        "shapes[2]: M=1 N=8 repeats shapes[1]");
    BAD("budget0.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8},\n"
        "                                 {M = 2, N = 8, budget = 0}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "}\n",
        "shapes[2].budget must be a positive integer, got 0");
    BAD("budgetstr.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", dtypes = {{x = \"bf16\", shapes = {{M = 1, N = 8},\n"
        "                                                       {M = 2, N = 8,\n"
        "                                                        budget = \"few\"}}}},\n"
        "  shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "}\n",
        "dtypes[1].shapes[2].budget");
}

/* A shape's own budget (shapes[i].budget, in the sweep's list and in a
 * dtype combination's): read per problem, 0 where a shape has none; a list
 * where no shape has one keeps no budgets at all. */
TEST(t_shape_budgets) {
    char err[1024];
    nt_sweep sw;
    const char *p = script("budgets.lua",
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\",\n"
        "  dtypes = {\"bf16\", {x = \"f16\", shapes = {{M = 3, N = 8, budget = 7}, {M = 4, N = 8}}},\n"
        "            {x = \"f32\", shapes = {{M = 5, N = 8}}}},\n"
        "  shapes = {{M = 1, N = 8}, {M = 2, N = 16, budget = 4}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"warm\", budget = 9},\n"
        "}\n");
    int rc = ntl_load(p, &sw, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    static const uint64_t want[] = {0, 4, 7, 0, 0};
    CHECK(nt_sweep_nproblems(&sw) == 5, "%d problems", nt_sweep_nproblems(&sw));
    for (int q = 0; q < 5 && q < nt_sweep_nproblems(&sw); q++)
        CHECK(nt_sweep_problem_budget(&sw, q) == want[q], "problem %d: budget %llu, want %llu", q,
              (unsigned long long)nt_sweep_problem_budget(&sw, q), (unsigned long long)want[q]);
    CHECK(sw.budgets && sw.dbudgets[1] && !sw.dbudgets[2] && !sw.dbudgets[0],
          "budget lists: sweep %p, dtypes %p %p %p", (void *)sw.budgets, (void *)sw.dbudgets[0],
          (void *)sw.dbudgets[1], (void *)sw.dbudgets[2]);
    ntl_free(&sw);
}

/* ---- budgets, caps, determinism, BOM and #! ------------------------------ */

/* A script with family naive on one shape, nsplit 1..n by 2 partial
 * dtypes (2n points); body is the body of its where function. */
static const char *with_where(const char *name, int n, const char *body) {
    static char text[2048];
    snprintf(text, sizeof text,
             "return normtune.sweep {\n"
             "  op = \"rmsnorm_bwd\", shapes = {{M = 8, N = 1024}},\n"
             "  families = {naive = {params = {nsplit = normtune.range(1, %d), partial = {\"bf16\", \"f32\"}},\n"
             "    where = function(p, s)\n"
             "%s\n"
             "    end}},\n"
             "}\n",
             n, body);
    return script(name, text);
}

/* where() that is slow on every call (about 10-20 ms of Lua) stays under the
 * per-call instruction limit; its total (2048 points, walked three times:
 * a minute or more) is stopped by the CPU budget, at the line running, and
 * later calls fail at once.  The wall-clock budget stops it the same way.
 * Each budget is tested with the other far away, so that the one reached
 * first does not depend on the machine's load. */
TEST(t_budget_where) {
    static const char body[] = "      local x = 0\n      for i = 1, 4e6 do x = x + i end\n      return true";
    const char *const env[] = {"0.2,1000", "1000,0.2"};
    const char *const kind[] = {"of CPU in where() (budget 0.2 s", "of wall-clock time in where() (budget 0.2 s"};
    for (int k = 0; k < 2; k++) {
        nt_sweep sw;
        char err[1024];
        setenv("NORMTUNE_SCRIPT_BUDGET", env[k], 1);
        int rc = ntl_load(with_where("slow_where.lua", 1024, body), &sw, err, sizeof err);
        CHECK(rc == 0, "load: %s", err);
        if (rc) continue;
        rc = nt_enumerate(&sw, NT_ENUM_EXHAUSTIVE, NULL, NULL, NULL, err, sizeof err);
        CHECK(rc == -1 && strstr(err, "slow_where.lua:6: stopped after ") && strstr(err, kind[k]),
              "budget %s: rc %d: %s", env[k], rc, err);
        nt_params p;
        int idx[2] = {0, 0}, acc;
        nt_problem p0;
        nt_sweep_point_params(&sw, 0, idx, &p);
        nt_sweep_problem(&sw, 0, &p0);
        rc = ntl_where(&sw, 0, &p, &p0, &acc, err, sizeof err);
        CHECK(rc == -1 && strstr(err, "slow_where.lua: stopped after"), "later call: %s", err);
        ntl_free(&sw);
    }
    unsetenv("NORMTUNE_SCRIPT_BUDGET");
}

/* A load that overruns its budget fails, even when the script catches the
 * stop (the instruction limit alone let this one load); a bad budget
 * variable is refused.  The CPU budget, 0.02 s, is reached before the
 * instruction limit (5e7 instructions: 0.25 s of CPU on a 2025 x86-64
 * core) and long after the hook's interval (1e5 instructions); load does
 * not change that, only a CPU ten times faster would. */
TEST(t_budget_load) {
    char err[1024];
    setenv("NORMTUNE_SCRIPT_BUDGET", "0.02,1000", 1);  /* the CPU budget comes first */
    CHECK(load_fails("caught.lua",
                     "local ok = pcall(function() while true do end end)\n"
                     "return normtune.sweep {\n"
                     "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
                     "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
                     "}\n",
                     err, sizeof err) &&
              strstr(err, "caught.lua: stopped after ") &&
              strstr(err, "of CPU while loading the script (budget 0.02 s"),
          "caught stop: %s", err);
    CHECK(load_fails("spin.lua", "local i = 0\nwhile true do i = i + 1 end\n", err, sizeof err) &&
              strstr(err, "spin.lua:2: stopped after "),
          "plain loop: %s", err);
    const char *const bad[] = {"abc", "0", "-1", "1,", "1,0", "1x", "1e9"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("NORMTUNE_SCRIPT_BUDGET", bad[i], 1);
        CHECK(load_fails("budget_env.lua", small_lua, err, sizeof err) &&
                  strstr(err, "NORMTUNE_SCRIPT_BUDGET must be"),
              "NORMTUNE_SCRIPT_BUDGET=%s: %s", bad[i], err);
    }
    unsetenv("NORMTUNE_SCRIPT_BUDGET");
    nt_sweep sw;
    int rc = ntl_load(script("budget_ok.lua", small_lua), &sw, err, sizeof err);
    CHECK(rc == 0, "default budget: %s", err);
    ntl_free(&sw);
}

/* The raw product of a family's space, and of a walk, is capped before any
 * enumeration; the message names the family, the dimensions and the cap. */
TEST(t_space_caps) {
    BAD("range_no_step.lua", 5,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 8, N = 1024}},\n"
        "  families = {\n"
        "    persistent = {\n"
        "      params = {\n"
        "        block = normtune.range(32, 1024), chunks = normtune.range(1, 16),\n"
        "        stages = {1, 2, 3, 4}, k = normtune.range(0, 32)},\n"
        "    },\n"
        "  },\n"
        "}\n",
        "families.persistent.params: the space of family rmsnorm_bwd.persistent has "
        "993 x 16 x 4 x 33 = 2097216 points (block x chunks x stages x k), more than the cap of 1048576");
    /* 993 x 16 x 4 x 16 = 1016832 points, under the cap; 17 shapes of it are
     * 17286144, over the 2^24 of a walk */
    BAD("walk_cap.lua", 4,
        "local shapes = {}\n"
        "for i = 1, 17 do shapes[i] = {M = i, N = 1024} end\n"
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = shapes, families = {\n"
        "    persistent = {params = {block = normtune.range(32, 1024), chunks = normtune.range(1, 16),\n"
        "        stages = {1, 2, 3, 4}, k = normtune.range(0, 15)}},\n"
        "  },\n"
        "}\n",
        "the sweep has 17 problems (dtype combinations x their shapes) x 1016832 points (all families' spaces) = 17286144, more than the cap of 16777216");
}

/* M and N are bounded so that M*N*element sizes cannot overflow. */
TEST(t_shape_bounds) {
    BAD("huge_m.lua", 3,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 8, N = 8},\n"
        "    {M = 2305843009213693952, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "}\n",
        "shapes[2].M must be at most 2147483647 (2^31 - 1), got 2305843009213693952");
    BAD("huge_n.lua", 2,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 8, N = 16777224}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "}\n",
        "shapes[1].N must be at most 16777216 (2^24), got 16777224");
    nt_sweep sw;
    char err[1024];
    int rc = ntl_load(script("largest.lua",
                             "return normtune.sweep {\n"
                             "  op = \"rmsnorm_bwd\", shapes = {{M = 2147483647, N = 16777216}},\n"
                             "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
                             "}\n"),
                      &sw, err, sizeof err);
    CHECK(rc == 0 && sw.shapes[0].M == 2147483647 && sw.shapes[0].N == 16777216, "largest: %s", err);
    ntl_free(&sw);
}

/* A UTF-8 BOM and a first '#' line load as lua5.4 loads them; line numbers
 * of errors stay those of the file. */
TEST(t_bom_shebang) {
    static const char body[] =
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 8, N = 1024}},\n"
        "  families = {naive = {params = {nsplit = {1, 2}, partial = {\"f32\"}}}},\n"
        "}\n";
    const char *const heads[] = {"\xEF\xBB\xBF", "#!/usr/bin/env lua5.4\n",
                                 "\xEF\xBB\xBF#!/usr/bin/env lua5.4\n", "# a comment line\n"};
    for (int i = 0; i < 4; i++) {
        char text[1024], err[1024];
        nt_sweep sw;
        snprintf(text, sizeof text, "%s%s", heads[i], body);
        int rc = ntl_load(script("head.lua", text), &sw, err, sizeof err);
        CHECK(rc == 0 && sw.nshape == 1, "head %d: %s", i, err);
        if (rc == 0) {
            uint64_t counts[1];
            rc = nt_enumerate(&sw, NT_ENUM_EXHAUSTIVE, NULL, NULL, counts, err, sizeof err);
            CHECK(rc == 0 && counts[0] == 2, "head %d: %s", i, err);
        }
        ntl_free(&sw);
    }
    BAD("bom_syntax.lua", 3, "\xEF\xBB\xBF#!/usr/bin/env lua5.4\nlocal a = 1\nlocal b = = 2\n",
        "unexpected symbol");
    BAD("bom_runtime.lua", 2, "#!/usr/bin/env lua5.4\nlocal x = nil + 1\n", "arithmetic");
    BAD("bom_field.lua", 5,
        "\xEF\xBB\xBF#!/usr/bin/env lua5.4\n"
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 8, N = 1024}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"},\n"
        "    nsplti = {2}}}},\n"
        "}\n",
        "unknown parameter 'nsplti'");
    /* a binary chunk after the first line is still refused */
    char err[512];
    CHECK(load_fails("bin_after.lua", "#!/bin/lua\n\033Lua\x54\x00 junk", err, sizeof err) &&
              strstr(err, "binary"),
          "binary after #!: %s", err);
    /* a '#' anywhere else is still Lua's length operator or a syntax error */
    CHECK(load_fails("hash2.lua", "local x = 1\n# not a comment\n", err, sizeof err) &&
              strstr(err, "hash2.lua:2:"),
          "# on line 2: %s", err);
}

/* A where() using math.random, or keeping state between calls, is caught
 * by the first walk, naming the first shape where the walks differ. */
TEST(t_where_determinism) {
    static const char *const bodies[] = {
        "      return math.random() < 0.5",
        "      calls = (calls or 0) + 1\n      return calls % 2 == 0",
        "      calls = (calls or 0) + 1\n      return calls <= 40",
    };
    for (int i = 0; i < 3; i++) {
        nt_sweep sw;
        char err[1024];
        uint64_t counts[1];
        int rc = ntl_load(with_where("nondet.lua", 32, bodies[i]), &sw, err, sizeof err);
        CHECK(rc == 0, "load: %s", err);
        if (rc) continue;
        rc = nt_enumerate(&sw, NT_ENUM_EXHAUSTIVE, NULL, NULL, counts, err, sizeof err);
        CHECK(rc == -1 && strstr(err, "nondet.lua: where() is not deterministic: for M=8 N=1024 x=bf16,w=bf16,dw=f32 (shapes[1])"),
              "where %d: rc %d: %s", i, rc, err);
        ntl_free(&sw);
    }
    /* a deterministic where gives the same counts on every walk and mode */
    nt_sweep sw;
    char err[1024];
    uint64_t c1[1], c2[1];
    int rc = ntl_load(with_where("det.lua", 32, "      return p.nsplit % 3 == 0 or p.partial == \"f32\""), &sw, err,
                      sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    rc = nt_enum_check(&sw, err, sizeof err);
    CHECK(rc == 0, "check: %s", err);
    rc = nt_enumerate(&sw, NT_ENUM_EXHAUSTIVE, NULL, NULL, c1, err, sizeof err) ||
         nt_enumerate(&sw, NT_ENUM_STRATEGY, NULL, NULL, c2, err, sizeof err);
    /* 32 f32 points, and bf16 for nsplit 3, 6, ..., 30: 10 */
    CHECK(rc == 0 && c1[0] == 42 && c2[0] == 42, "rc %d counts %llu %llu: %s", rc,
          (unsigned long long)c1[0], (unsigned long long)c2[0], err);
    ntl_free(&sw);
}

/* The script runs twice and must build the same sweep: tostring() of a
 * table differs between states. */
TEST(t_load_twice) {
    char err[1024];
    CHECK(load_fails("address.lua",
                     "local M = tonumber(tostring({}):match(\"0x(%x+)\"), 16) % 100000 + 1\n"
                     "return normtune.sweep {\n"
                     "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}, {M = M, N = 8}},\n"
                     "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
                     "}\n",
                     err, sizeof err) &&
              strstr(err, "address.lua: the script built a different sweep when run a second time (shapes[2] is M="),
          "address: %s", err);
}

/* Run fn with stderr going to fd; returns what was written to it, read
 * back through rfd (at most len - 1 bytes, NUL-terminated). */
static void with_stderr(int fd, void (*fn)(void), int rfd, char *out, size_t len) {
    int saved = dup(2);
    fflush(stderr);
    dup2(fd, 2);
    fn();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < len && (r = read(rfd, out + n, len - 1 - n)) > 0) n += (size_t)r;
    out[n] = 0;
}

static int progress_rc;

/* 16 shapes x 32 x 16 x 4 x 33 = 1081344 points a walk; the check walks
 * twice: 2162688 visits, "2.2M".  Counting needs no third walk. */
static void big_walk(void) {
    nt_sweep sw;
    char err[1024];
    progress_rc = -1;
    if (ntl_load(script("big.lua",
                        "local shapes = {}\n"
                        "for i = 1, 16 do shapes[i] = {M = i, N = 1024} end\n"
                        "return normtune.sweep {\n"
                        "  op = \"rmsnorm_bwd\", shapes = shapes, families = {\n"
                        "    persistent = {params = {block = normtune.range(32, 1024, 32),\n"
                        "      chunks = normtune.range(1, 16), stages = {1, 2, 3, 4}, k = normtune.range(0, 32)}}},\n"
                        "}\n"),
                 &sw, err, sizeof err) == 0)
        progress_rc = nt_enumerate(&sw, NT_ENUM_EXHAUSTIVE, NULL, NULL, NULL, err, sizeof err);
    ntl_free(&sw);
}

/* A large walk shows a progress line on a terminal, erased at the end;
 * nothing when stderr is a file. */
TEST(t_progress) {
    char out[4096];
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    CHECK(m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0, "no pseudo-terminal");
    if (m < 0) return;
    int sl = open(ptsname(m), O_RDWR | O_NOCTTY);
    CHECK(sl >= 0, "pty slave");
    if (sl < 0) return;
    struct termios tio;       /* raw: no newline translation */
    tcgetattr(sl, &tio);
    cfmakeraw(&tio);
    tcsetattr(sl, TCSANOW, &tio);
    fcntl(m, F_SETFL, O_NONBLOCK);
    with_stderr(sl, big_walk, m, out, sizeof out);
    CHECK(progress_rc == 0, "walk failed");
    CHECK(!strncmp(out, "\renumerating: ", 14) && strstr(out, " of 2.2M points"), "terminal: '%s'", out);
    size_t n = strlen(out);
    CHECK(n >= 4 && !strcmp(out + n - 4, "\r\033[K"), "not erased: '%s'", out);
    close(sl);
    close(m);
    char path[1024];
    snprintf(path, sizeof path, "%s/stderr.txt", t_tmpdir());
    int f = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    int r = open(path, O_RDONLY);
    with_stderr(f, big_walk, r, out, sizeof out);
    CHECK(progress_rc == 0 && out[0] == 0, "not a terminal: '%s'", out);
    close(f);
    close(r);
}

/* dtypes: a list of combinations; the problems are every combination x
 * every shape, dtypes outer; where() sees s.dtype. */
TEST(t_dtypes) {
    nt_sweep sw;
    char err[1024], dt[128];
    int rc = ntl_load(script("dtypes.lua",
                             "return normtune.sweep {\n"
                             "  op = \"rmsnorm_bwd\",\n"
                             "  dtypes = {{x = \"bf16\"}, {x = \"f16\", w = \"f32\"}, \"f32\"},\n"
                             "  shapes = {{M = 8, N = 1024}, {M = 16, N = 2048}},\n"
                             "  families = {naive = {params = {nsplit = {1, 2}, partial = {\"f32\"}},\n"
                             "    where = function(p, s) return s.dtype.w ~= \"f32\" or p.nsplit == 1 end}},\n"
                             "}\n"),
                      &sw, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    static const char *const want[] = {"x=bf16,w=bf16,dw=f32", "x=f16,w=f32,dw=f32",
                                       "x=f32,w=f32,dw=f32"};
    CHECK(sw.ndt == 3 && nt_sweep_nproblems(&sw) == 6, "%d dtypes, %d problems", sw.ndt,
          nt_sweep_nproblems(&sw));
    for (int q = 0; q < nt_sweep_nproblems(&sw) && sw.ndt == 3; q++) {
        nt_problem p;
        nt_sweep_problem(&sw, q, &p);
        nt_dtypes_canon(&p, dt, sizeof dt);
        CHECK(!strcmp(dt, want[q / 2]) && p.M == (q % 2 ? 16 : 8), "problem %d: %s M=%lld", q,
              dt, (long long)p.M);
    }
    uint64_t counts[6] = {0};
    rc = nt_enumerate(&sw, NT_ENUM_EXHAUSTIVE, NULL, NULL, counts, err, sizeof err);
    CHECK(rc == 0, "enumerate: %s", err);
    /* w = f32 (problems 2 and 3) keeps nsplit = 1 only */
    CHECK(counts[0] == 2 && counts[1] == 2 && counts[2] == 1 && counts[3] == 1 && counts[4] == 1,
          "counts %llu %llu %llu %llu %llu", (unsigned long long)counts[0],
          (unsigned long long)counts[1], (unsigned long long)counts[2],
          (unsigned long long)counts[3], (unsigned long long)counts[4]);
    ntl_free(&sw);
}

/* A dtype combination may carry its own shapes (fewer for fp32). */
TEST(t_dtypes_own_shapes) {
    nt_sweep sw;
    char err[1024], dt[128];
    int rc = ntl_load(script("dshapes.lua",
                             "return normtune.sweep {\n"
                             "  op = \"rmsnorm_fwd\",\n"
                             "  dtypes = {\"bf16\", {x = \"f32\", shapes = {{M = 4, N = 64}}}},\n"
                             "  shapes = {{M = 8, N = 1024}, {M = 16, N = 2048}},\n"
                             "  families = {row = {params = {block = {128}, chunks = {1, 2}, k = {0}}}},\n"
                             "}\n"),
                      &sw, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    CHECK(nt_sweep_nproblems(&sw) == 3, "%d problems", nt_sweep_nproblems(&sw));
    nt_problem p;
    int d = -1, i = -1;
    nt_sweep_problem(&sw, 2, &p);
    nt_dtypes_canon(&p, dt, sizeof dt);
    CHECK(p.M == 4 && p.N == 64 && !strcmp(dt, "x=f32,w=f32"), "problem 3: M=%lld N=%lld %s",
          (long long)p.M, (long long)p.N, dt);
    CHECK(nt_sweep_problem_at(&sw, 2, &d, &i) == 1 && d == 1 && i == 0, "own shapes: %d %d", d, i);
    CHECK(nt_sweep_problem_at(&sw, 1, &d, &i) == 0 && d == 0 && i == 1, "sweep's shapes: %d %d", d, i);
    ntl_free(&sw);
    BAD("dshapes_bad.lua", 3,
        "return normtune.sweep {\n  op = \"rmsnorm_fwd\",\n"
        "  dtypes = {{x = \"f32\", shapes = {{M = 4, N = 64}, {M = 4, N = 64}}}},\n"
        "  shapes = {{M = 8, N = 1024}},\n"
        "  families = {row = {params = {block = {128}, chunks = {1}, k = {0}}}},\n}\n",
        "dtypes[1].shapes[2]: M=4 N=64 repeats dtypes[1].shapes[1]");
}

/* normtune.grid(Ns, Ms): every (N, M), N outer; bad lists are errors. */
/* dtype as a table: one combination, slots not named take their defaults
 * (this once popped one value too many and lost the returned sweep). */
TEST(t_dtype_table) {
    nt_sweep sw;
    char err[1024], dt[128];
    int rc = ntl_load(script("dtype_table.lua",
                             "return normtune.sweep {\n"
                             "  op = \"rmsnorm_bwd\", dtype = {x = \"bf16\", w = \"f32\"},\n"
                             "  shapes = {{M = 8, N = 1024}},\n"
                             "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
                             "}\n"),
                      &sw, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    nt_dtypes_canon(&sw.dts[0], dt, sizeof dt);
    CHECK(sw.ndt == 1 && !strcmp(dt, "x=bf16,w=f32,dw=f32"), "%d: %s", sw.ndt, dt);
    ntl_free(&sw);
}

TEST(t_grid) {
    nt_sweep sw;
    char err[1024];
    int rc = ntl_load(script("grid.lua",
                             "return normtune.sweep {\n"
                             "  op = \"rmsnorm_fwd\",\n"
                             "  shapes = normtune.grid({1024, 2048}, {8, 16, 32}),\n"
                             "  families = {row = {params = {block = {128}, chunks = {1, 2}, k = {0}}}},\n"
                             "}\n"),
                      &sw, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    static const int64_t want[6][2] = {{8, 1024}, {16, 1024}, {32, 1024},
                                       {8, 2048}, {16, 2048}, {32, 2048}};
    CHECK(sw.nshape == 6, "%d shapes", sw.nshape);
    for (int i = 0; i < 6 && i < sw.nshape; i++)
        CHECK(sw.shapes[i].M == want[i][0] && sw.shapes[i].N == want[i][1],
              "shape %d: M=%lld N=%lld", i, (long long)sw.shapes[i].M, (long long)sw.shapes[i].N);
    ntl_free(&sw);
    BAD("grid_bad.lua", 3,
        "return normtune.sweep {\n  op = \"rmsnorm_fwd\",\n"
        "  shapes = normtune.grid({1024}, {8, \"x\"}),\n"
        "  families = {row = {params = {block = {128}, chunks = {1}, k = {0}}}},\n}\n",
        "normtune.grid: Ms[2] is not an integer");
}

/* normtune.join(list, ...): the lists' elements in order; a non-list is an
 * error that names the argument. */
TEST(t_join) {
    nt_sweep sw;
    char err[1024];
    int rc = ntl_load(script("join.lua",
                             "return normtune.sweep {\n"
                             "  op = \"rmsnorm_fwd\",\n"
                             "  shapes = normtune.join(normtune.grid({1024}, {8, 16}), {},\n"
                             "                         {{M = 3, N = 64}}),\n"
                             "  families = {row = {params = {block = {128}, chunks = {1, 2}, k = {0}}}},\n"
                             "}\n"),
                      &sw, err, sizeof err);
    CHECK(rc == 0, "load: %s", err);
    if (rc) return;
    static const int64_t want[3][2] = {{8, 1024}, {16, 1024}, {3, 64}};
    CHECK(sw.nshape == 3, "%d shapes", sw.nshape);
    for (int i = 0; i < 3 && i < sw.nshape; i++)
        CHECK(sw.shapes[i].M == want[i][0] && sw.shapes[i].N == want[i][1],
              "shape %d: M=%lld N=%lld", i, (long long)sw.shapes[i].M, (long long)sw.shapes[i].N);
    ntl_free(&sw);
    BAD("join_bad.lua", 3,
        "return normtune.sweep {\n  op = \"rmsnorm_fwd\",\n"
        "  shapes = normtune.join({{M = 1, N = 8}}, 7),\n"
        "  families = {row = {params = {block = {128}, chunks = {1}, k = {0}}}},\n}\n",
        "normtune.join: argument 2 is a number, not a list");
}

TEST(t_dtypes_errors) {
    const char *fam = "  shapes = {{M = 1, N = 8}},\n"
                      "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n}\n";
    char text[1024];
#define DT(name, line, field, ...)                                                       \
    snprintf(text, sizeof text, "return normtune.sweep {\n  op = \"rmsnorm_bwd\",\n%s%s", \
             field, fam);                                                                 \
    BAD(name, line, text, __VA_ARGS__)
    DT("dt_both.lua", 3, "  dtype = \"bf16\", dtypes = {\"bf16\"},\n", "not both");
    DT("dt_repeat.lua", 3, "  dtypes = {{x = \"bf16\"}, \"bf16\"},\n",
       "dtypes[2]: x=bf16,w=bf16,dw=f32 repeats dtypes[1]");
    DT("dt_slot.lua", 3, "  dtypes = {{y = \"bf16\"}},\n", "unknown dtype 'y'", "allowed: x, w, dw");
    DT("dt_type.lua", 3, "  dtypes = {{x = 16}},\n", "dtypes[1].x: expected a dtype name");
    DT("dt_combo.lua", 3, "  dtypes = {{x = \"bf16\", w = \"f16\"}},\n", "dtypes[1]: ",
       "rmsnorm_bwd");
    DT("dt_empty.lua", 3, "  dtypes = {},\n", "dtypes: empty list");
#undef DT
}

int main(void) {
    RUN(t_counts);
    RUN(t_shape_budgets);
    RUN(t_family_limits);
    RUN(t_space_and_params);
    RUN(t_random_strategy);
    RUN(t_defaults_and_hash);
    RUN(t_budget_stored);
    RUN(t_remeasure);
    RUN(t_family_search);
    RUN(t_lua_errors);
    RUN(t_unknown_names);
    RUN(t_types_and_values);
    RUN(t_dtypes);
    RUN(t_dtypes_own_shapes);
    RUN(t_dtypes_errors);
    RUN(t_grid);
    RUN(t_join);
    RUN(t_dtype_table);
    RUN(t_empty_and_nonpositive);
    RUN(t_space_empty_after_where);
    RUN(t_where_errors);
    RUN(t_where_types);
    RUN(t_sandbox);
    RUN(t_error_lines);
    RUN(t_budget_where);
    RUN(t_budget_load);
    RUN(t_space_caps);
    RUN(t_shape_bounds);
    RUN(t_bom_shebang);
    RUN(t_where_determinism);
    RUN(t_load_twice);
    RUN(t_progress);
    T_END();
}
