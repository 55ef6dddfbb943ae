/* test_lua.c -- the Lua binding (lua/ntlua.h) and the variant walk
 * (tuner/enumerate.h), on CPU.
 *
 * Every script is written by the test into t_tmpdir().  Good scripts are
 * loaded and their enumeration counted against numbers worked out by hand;
 * bad ones must fail with "file:line: message" where the line is the one
 * that holds the mistake and the message names what is allowed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lua/ntlua.h"
#include "tests/t.h"
#include "tuner/enumerate.h"

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
    CHECK(!strcmp(sw.search.strategy, "random") && sw.search.budget == 5 && sw.search.seed == 7,
          "search %s %llu %llu", sw.search.strategy, (unsigned long long)sw.search.budget,
          (unsigned long long)sw.search.seed);
    CHECK(sw.timing.warmup == 2 && sw.timing.min_samples == 3 && sw.timing.max_samples == 9 &&
              sw.timing.rel_ci == 0.5, "timing");
    CHECK(sw.eps == 1e-5, "eps %g", sw.eps);
    ntl_free(&sw);
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
    ntl_point_params(&sw, 1, idx, &p);
    nt_params_canon(sw.fam[1].fam, &p, canon, sizeof canon);
    CHECK(!strcmp(canon, "block=192,chunks=2,stages=1,k=0"), "canon %s", canon);
    int acc = -1;
    nt_shape big = {8, 8192};
    CHECK(ntl_where(&sw, 1, &p, &big, &acc, err, sizeof err) == 0 && acc == 0,
          "192*2*8 < 8192 must be rejected (acc %d, %s)", acc, err);
    nt_shape small = {8, 1024};
    CHECK(ntl_where(&sw, 1, &p, &small, &acc, err, sizeof err) == 0 && acc == 1,
          "192*2*8 >= 1024 must be accepted (acc %d, %s)", acc, err);
    ntl_free(&sw);
}

/* The random strategy: at most budget proposals per (shape, family), all of
 * them points the exhaustive walk accepts, the same on every run. */
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
    CHECK(counts[0] == 1, "naive shape 1 keeps 1 of 2 points, got %llu", (unsigned long long)counts[0]);
    CHECK(counts[2] == 2, "naive shape 2 keeps both, got %llu", (unsigned long long)counts[2]);
    CHECK(counts[1] <= 5 && counts[3] <= 5 && counts[1] + counts[3] > 0, "persistent %llu %llu",
          (unsigned long long)counts[1], (unsigned long long)counts[3]);
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
    CHECK(!strcmp(sw.op, "rmsnorm_bwd") && !strcmp(sw.dtype, "bf16"), "op %s dtype %s", sw.op, sw.dtype);
    CHECK(!strcmp(sw.search.strategy, "exhaustive") && sw.search.budget == 0, "search default");
    CHECK(sw.timing.warmup == 10 && sw.timing.min_samples == 20 && sw.timing.max_samples == 200 &&
              sw.timing.rel_ci == 0.01, "timing defaults %d %d %d %g", sw.timing.warmup,
          sw.timing.min_samples, sw.timing.max_samples, sw.timing.rel_ci);
    CHECK(sw.eps == 1e-6, "eps %g", sw.eps);
    CHECK(sw.nfam == 1 && sw.fam[0].where_ref < 0, "one family without where");
    CHECK(strstr(sw.path, "minimal.lua") != NULL, "path %s", sw.path);
    ntl_free(&sw);
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
        "unknown field 'famlies'", "allowed: op, dtype, shapes, families, search, timing, eps");
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
    BAD("search.lua", 5,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "  search = {strategy = \"random\",\n"
        "            budjet = 10},\n"
        "}\n",
        "unknown field 'budjet'", "allowed: strategy, budget, seed");
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
    BAD("dtype.lua", 2,
        "return normtune.sweep {\n"
        "  op = \"rmsnorm_bwd\", dtype = \"fp8\", shapes = {{M = 1, N = 8}},\n"
        "  families = {naive = {params = {nsplit = {1}, partial = {\"f32\"}}}},\n"
        "}\n",
        "unknown dtype 'fp8'", "allowed: bf16");
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
    CHECK(strstr(err, "emptied.lua: shape M=64 N=16384: no variant left after where constraints") != NULL,
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
    ntl_point_params(&sw, 1, idx, &p);
    rc = ntl_where(&sw, 1, &p, &sw.shapes[0], &acc, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "where_err.lua:9: ") && strstr(err, "must return a boolean, got number"),
          "non-boolean: %s", err);
    /* the state is still usable after an error */
    rc = ntl_where(&sw, 1, &p, &sw.shapes[0], &acc, err, sizeof err);
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
}

int main(void) {
    RUN(t_counts);
    RUN(t_space_and_params);
    RUN(t_random_strategy);
    RUN(t_defaults_and_hash);
    RUN(t_lua_errors);
    RUN(t_unknown_names);
    RUN(t_types_and_values);
    RUN(t_empty_and_nonpositive);
    RUN(t_space_empty_after_where);
    RUN(t_where_errors);
    RUN(t_where_types);
    RUN(t_sandbox);
    RUN(t_error_lines);
    T_END();
}
