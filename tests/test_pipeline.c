/* test_pipeline.c -- the whole tuner pipeline on the CPU, through the seam.
 *
 * script (Lua) -> enumeration/search -> fixture evaluator -> SQLite store ->
 * resume -> export.  The fixture evaluator stands in for the GPU runner: it
 * returns a made-up but deterministic time per (params, shape), fails some
 * variants on purpose, and can ask the driver to stop after a number of
 * results, as Ctrl-C does. */
#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "db/store.h"
#include "lua/ntlua.h"
#include "tests/t.h"
#include "search/enumerate.h"
#include "tuner/cli.h"
#include "tuner/export.h"
#include "tuner/sweep.h"

static const char *script =
    "return normtune.sweep {\n"
    "  op = 'rmsnorm_bwd', dtype = 'bf16',\n"
    "  shapes = {{M = 1000, N = 1024}, {M = 64, N = 2048}, {M = 5000, N = 2048}},\n"
    "  families = {\n"
    "    naive = {params = {nsplit = {16, 64}, partial = {'f32'}}},\n"
    "    persistent = {\n"
    "      params = {block = {128, 256}, chunks = {1, 2, 3}, stages = {1, 2}, k = {0, 1}},\n"
    "      where = function(p, s) return p.block * p.chunks * 8 >= s.N end,\n"
    "    },\n"
    "  },\n"
    "  timing = {warmup = 1, min_samples = 3, max_samples = 5, rel_ci = 0.05},\n"
    "}\n";

/* What the fixture evaluated, when log is set: one "M N family params
 * race R" line per call (R: the race's bound, 0 none). */
typedef struct evlog {
    char (*line)[128];
    int n, cap;
} evlog;

typedef struct fixture {
    int calls;
    evlog *log;               /* NULL: no log */
    int sleep_us;             /* make each evaluation this slow */
    int stop_after;           /* set *stop after this many calls (0 = never) */
    volatile sig_atomic_t *stop;
    int naive64;              /* naive evaluations at M = 64 */
} fixture;

/* The made-up time of a variant: persistent beats naive, and among
 * persistent variants block 256 and stages 2 are best; chunks = 3 is wrong. */
static double fake_us(const nt_family *f, const nt_params *p, const nt_problem *s) {
    double base = (double)s->M * (double)s->N * 6.0 / 4e3 / 1e3; /* 4 TB/s */
    if (!strcmp(f->name, "rmsnorm_bwd.naive"))
        return base * (1.7 + nt_params_int(p, "nsplit", NULL) / 1000.0);
    return base * (1.0 + fabs((double)nt_params_int(p, "block", NULL) - 256) / 1000.0 +
                   (nt_params_int(p, "stages", NULL) == 2 ? 0.0 : 0.05) +
                   0.01 * (double)nt_params_int(p, "k", NULL) +
                   0.02 * (double)nt_params_int(p, "chunks", NULL));
}

static int fix_eval(void *ctx, const nt_family *f, const nt_params *p, const nt_problem *s,
                    const nt_timing *t, nt_result *out) {
    fixture *fx = ctx;
    memset(out, 0, sizeof *out);
    out->bytes = nt_problem_bytes(s);
    if (++fx->calls == fx->stop_after && fx->stop) *fx->stop = 1;
    fx->naive64 += !strcmp(f->name, "rmsnorm_bwd.naive") && s->M == 64;
    if (fx->log && fx->log->n < fx->log->cap) {
        char canon[96];
        if (nt_params_canon(f, p, canon, sizeof canon)) canon[0] = 0;
        snprintf(fx->log->line[fx->log->n++], sizeof fx->log->line[0], "%lld %lld %s %s race %.6g",
                 (long long)s->M, (long long)s->N, f->name, canon, t->race_us);
    }
    if (fx->sleep_us) {
        struct timespec ts = {0, fx->sleep_us * 1000L};
        nanosleep(&ts, NULL);
    }
    if (nt_params_int(p, "chunks", NULL) == 3) {
        out->status = NT_WRONG;
        snprintf(out->msg, sizeof out->msg, "fixture: chunks=3 is wrong");
        return 0;
    }
    double us = fake_us(f, p, s);
    out->nsamples = t->min_samples;
    for (int i = 0; i < out->nsamples; i++) out->samples[i] = us * (1 + 0.001 * i);
    out->median_us = out->samples[out->nsamples / 2];
    out->p10_us = out->samples[0];
    out->p90_us = out->samples[out->nsamples - 1];
    out->gbps = out->bytes / (out->median_us * 1e-6) / 1e9;
    out->status = NT_OK;
    return 0;
}

/* The evaluator's expect(): counts its calls, and those that came after
 * an eval. */
static int expects, expects_late;
static int64_t expect_max_mn;
static void fix_expect(void *ctx, const nt_problem *s) {
    const fixture *fx = ctx;
    expects++;
    expects_late += fx->calls > 0;
    if (s->M * s->N > expect_max_mn) expect_max_mn = s->M * s->N;
}

static char path_script[600], path_db[600];
static nt_sweep sw;
static fixture fx;
static nt_evaluator ev;
static volatile sig_atomic_t stop;
static int picks;            /* run_sweep leaves st's arrays to the caller */

static uint64_t expected_total(void) {
    char err[512];
    uint64_t *counts = calloc((size_t)(sw.nshape * sw.nfam), sizeof *counts), n = 0;
    if (nt_enumerate(&sw, NT_ENUM_EXHAUSTIVE, NULL, NULL, counts, err, sizeof err)) return 0;
    for (int i = 0; i < sw.nshape * sw.nfam; i++) n += counts[i];
    free(counts);
    return n;
}

static int run_sweep(nt_run_stats *st, int stop_after) {
    char err[512];
    store *db = NULL;
    nt_run_opts o = {0};
    stop = 0;
    fx.calls = 0;
    fx.stop_after = stop_after;
    fx.stop = &stop;
    o.stop = &stop;
    if (store_open(&db, path_db, STORE_CREATE, err, sizeof err)) {
        printf("  store_open: %s\n", err);
        return -1;
    }
    int rc = nt_sweep_run(&sw, db, &ev, &o, st, err, sizeof err);
    if (rc) printf("  nt_sweep_run: %s\n", err);
    store_close(db);
    if (!picks) nt_run_stats_free(st);
    return rc;
}

/* An adaptive search (hillclimb, then warm) interrupted and resumed makes
 * the same choices as one never interrupted: the same points proposed per
 * problem, the same picks. */
TEST(adaptive_resume_same_choices) {
    /* the third: warm, with persistent searched on its own (hillclimb, 4) */
    static const char *strat[] = {"hillclimb", "warm", "warm"};
    char saved[sizeof path_db];
    search_cfg keep = sw.search;
    int fp = -1;
    for (int i = 0; i < sw.nfam; i++)
        if (!strcmp(sw.fam[i].fam->name, "rmsnorm_bwd.persistent")) fp = i;
    CHECK(fp >= 0, "test setup");
    if (fp < 0) return;
    memcpy(saved, path_db, sizeof saved);
    for (int k = 0; k < 3; k++) {
        nt_run_stats a, b;
        sw.fam[fp].own = k == 2;
        snprintf(sw.fam[fp].strategy, sizeof sw.fam[fp].strategy, "hillclimb");
        sw.fam[fp].budget = 4;
        snprintf(sw.search.strategy, sizeof sw.search.strategy, "%s", strat[k]);
        sw.search.budget = 7;
        sw.search.seed = 5;
        snprintf(path_db, sizeof path_db, "%s/adapt%d_a.db", t_tmpdir(), k);
        picks = 1;
        CHECK(run_sweep(&a, 0) == 0, "%s: uninterrupted run", strat[k]);
        snprintf(path_db, sizeof path_db, "%s/adapt%d_b.db", t_tmpdir(), k);
        picks = 0;
        CHECK(run_sweep(&b, 4) == 0 && b.interrupted && b.measured == 4, "%s: interrupted",
              strat[k]);
        picks = 1;
        CHECK(run_sweep(&b, 0) == 0 && !b.interrupted, "%s: resumed", strat[k]);
        CHECK(b.reused == 4 && b.reused + b.measured == a.measured, "%s: reused %llu + measured "
              "%llu, want %llu", strat[k], (unsigned long long)b.reused,
              (unsigned long long)b.measured, (unsigned long long)a.measured);
        CHECK(a.measured <= (k == 2 ? 7 + 4 : 7) * 3, "%s: %llu measured over budget", strat[k],
              (unsigned long long)a.measured);
        for (int q = 0; q < nt_sweep_nproblems(&sw); q++)
            CHECK(a.pick[q].fam == b.pick[q].fam && a.pick[q].pt == b.pick[q].pt &&
                      a.spent[q] == b.spent[q],
                  "%s: problem %d: pick %d/%llu after a resume, %d/%llu without", strat[k], q,
                  b.pick[q].fam, (unsigned long long)b.pick[q].pt, a.pick[q].fam,
                  (unsigned long long)a.pick[q].pt);
        nt_run_stats_free(&a);
        nt_run_stats_free(&b);
    }
    sw.fam[fp].own = 0;
    picks = 0;
    sw.search = keep;
    memcpy(path_db, saved, sizeof saved);
}

/* Hand count: naive 2 per shape; persistent 2 blocks x 3 chunks x 2 x 2 = 24
 * points, kept when block*chunks*8 >= N: N=1024: all 24; N=2048: (128,2),
 * (128,3), (256,1), (256,2), (256,3) -> 5 x 4 = 20.  Total 2*3 + 24 + 20 + 20. */
TEST(counts_by_hand) {
    CHECK(expected_total() == 70, "total %llu", (unsigned long long)expected_total());
}

TEST(interrupt_then_resume) {
    nt_run_stats st;
    uint64_t ok = 0;
    CHECK(run_sweep(&st, 10) == 0, "first run");
    ok += st.ok;
    CHECK(st.interrupted == 1, "not interrupted");
    CHECK(st.measured == 10, "measured %llu before stopping", (unsigned long long)st.measured);
    CHECK(run_sweep(&st, 0) == 0, "second run");
    CHECK(!st.interrupted, "interrupted again");
    CHECK(st.reused == 10, "reused %llu", (unsigned long long)st.reused);
    CHECK(st.measured == 60, "measured %llu", (unsigned long long)st.measured);
    CHECK(st.total == 70, "total %llu", (unsigned long long)st.total);
    ok += st.ok;
    /* the fixture fails chunks = 3: 2 blocks x 2 stages x 2 k = 8 per shape */
    CHECK(ok == 70 - 3 * 8, "ok %llu", (unsigned long long)ok);
    CHECK(run_sweep(&st, 0) == 0 && st.measured == 0 && st.reused == 70,
          "third run measured %llu", (unsigned long long)st.measured);
}

/* A run's summary counts each family's results by status and warns, with
 * the first message, about a family whose kernels fail; a resumed run that
 * measures nothing prints nothing. */
TEST(summary_names_failures) {
    char saved[sizeof path_db], *text = NULL;
    size_t len = 0;
    nt_run_stats st;
    memcpy(saved, path_db, sizeof saved);
    snprintf(path_db, sizeof path_db, "%s/summary.db", t_tmpdir());
    CHECK(run_sweep(&st, 0) == 0 && st.measured == 70, "measured %llu",
          (unsigned long long)st.measured);
    int naive = -1, pers = -1;
    for (int i = 0; i < sw.nfam; i++) {
        if (!strcmp(sw.fam[i].fam->name, "rmsnorm_bwd.naive")) naive = i;
        if (!strcmp(sw.fam[i].fam->name, "rmsnorm_bwd.persistent")) pers = i;
    }
    CHECK(naive >= 0 && pers >= 0, "families %d %d", naive, pers);
    if (naive < 0 || pers < 0) goto out;
    CHECK(st.by_family[naive][NT_OK] == 6 && st.by_family[pers][NT_OK] == 40 &&
              st.by_family[pers][NT_WRONG] == 24,
          "naive ok %llu, persistent ok %llu wrong %llu", (unsigned long long)st.by_family[naive][NT_OK],
          (unsigned long long)st.by_family[pers][NT_OK], (unsigned long long)st.by_family[pers][NT_WRONG]);
    FILE *m = open_memstream(&text, &len);
    if (!m) goto out;
    nt_sweep_summary(m, &sw, &st);
    fclose(m);
    CHECK(strstr(text, "  rmsnorm_bwd.naive: 6 ok\n") != NULL, "summary:\n%s", text);
    CHECK(strstr(text, "  rmsnorm_bwd.persistent: 40 ok, 24 wrong\n") != NULL, "summary:\n%s", text);
    CHECK(strstr(text, "warning: rmsnorm_bwd.persistent: 24 of 64 variants measured now failed; "
                       "the first: M=") != NULL, "summary:\n%s", text);
    CHECK(strstr(text, "chunks=3") && strstr(text, "fixture: chunks=3 is wrong\n"), "summary:\n%s", text);
    CHECK(strstr(text, "warning: rmsnorm_bwd.naive") == NULL, "summary:\n%s", text);
    free(text);
    text = NULL;
    /* resumed: nothing measured, nothing to say */
    CHECK(run_sweep(&st, 0) == 0 && st.measured == 0, "resumed run measured %llu",
          (unsigned long long)st.measured);
    m = open_memstream(&text, &len);
    if (!m) goto out;
    nt_sweep_summary(m, &sw, &st);
    fclose(m);
    CHECK(len == 0, "resumed summary:\n%s", text);
out:
    free(text);
    memcpy(path_db, saved, sizeof saved);
}

/* The store holds every result once, failures included. */
TEST(store_has_everything_once) {
    char err[512];
    store *db = NULL;
    int found = 0, nok = 0, nwrong = 0;
    static nt_result r;
    CHECK(store_open(&db, path_db, STORE_READ, err, sizeof err) == 0, "%s", err);
    if (!db) return;
    for (int s = 0; s < sw.nshape; s++) {
        store_key k = {0};
        char hash[17];
        nt_family_hash(nt_family_find("rmsnorm_bwd.persistent"), hash);
        k.family = "rmsnorm_bwd.persistent";
        k.src_hash = hash;
        k.op = "rmsnorm_bwd";
        k.dtype = "x=bf16,w=bf16,dw=f32";
        k.shape = sw.shapes[s];
        k.timing = sw.timing;
        k.device = 1;
        const char *ps[] = {"block=256,chunks=2,stages=2,k=0", "block=256,chunks=3,stages=1,k=1"};
        for (int i = 0; i < 2; i++) {
            k.params = ps[i];
            CHECK(store_lookup(db, &k, &found, &r, err, sizeof err) == 0, "%s", err);
            CHECK(found, "missing %s", ps[i]);
            nok += found && r.status == NT_OK;
            nwrong += found && r.status == NT_WRONG;
            if (found && r.status == NT_OK) {
                nt_params p;
                nt_params_parse(ps[i], &p);
                nt_problem pr;
                nt_problem_init(&pr, nt_op_find("rmsnorm_bwd"), k.shape.M, k.shape.N);
                double want = fake_us(nt_family_find(k.family), &p, &pr) * 1.001;
                CHECK(r.nsamples == 3, "samples %d", r.nsamples);
                CHECK(fabs(r.median_us - want) < 1e-9 * want, "median %g, want %g", r.median_us, want);
            }
        }
    }
    CHECK(nok == 3 && nwrong == 3, "ok %d wrong %d", nok, nwrong);
    store_close(db);
}

/* Export picks, per shape, the fastest successful variant: by the fixture's
 * formula block=256, chunks = smallest that fits, stages=2, k=0. */
TEST(export_picks_the_fastest) {
    char err[512];
    store *db = NULL;
    store_best_row *rows = NULL;
    store_prov prov;
    int n = 0;
    CHECK(store_open(&db, path_db, STORE_READ, err, sizeof err) == 0, "%s", err);
    if (!db) return;
    CHECK(store_best(db, NULL, 1, &rows, &n, &prov, err, sizeof err) == 0, "%s", err);
    CHECK(n == 3, "%d rows", n);
    for (int i = 0; i < n; i++) {
        /* N=1024 and N=2048 both fit block=256 with one chunk */
        const char *want = "block=256,chunks=1,stages=2,k=0";
        CHECK(!strcmp(rows[i].family, "rmsnorm_bwd.persistent"), "family %s", rows[i].family);
        CHECK(!strcmp(rows[i].params, want), "M=%lld N=%lld best %s", (long long)rows[i].M,
              (long long)rows[i].N, rows[i].params);
    }
    char hash[17];
    nt_family_hash(nt_family_find("rmsnorm_bwd.persistent"), hash);
    CHECK(!strcmp(prov.src_hash, hash), "hash %s", prov.src_hash);
    char hpath[700];
    snprintf(hpath, sizeof hpath, "%s/dispatch.h", t_tmpdir());
    FILE *f = fopen(hpath, "w");
    CHECK(f && nt_export_write(f, rows, n, &prov, err, sizeof err) == 0, "%s", err);
    if (f) fclose(f);
    /* the header names the winning config and the kernel source hash */
    f = fopen(hpath, "r");
    char buf[1 << 16];
    size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[len] = 0;
    if (f) fclose(f);
    CHECK(strstr(buf, hash) != NULL, "no source hash in header");
    CHECK(strstr(buf, "block=256,chunks=1,stages=2,k=0") != NULL, "winning config not listed");
    free(rows);
    store_close(db);
}

/* Point number of persistent (block, chunks, stages, k) in sw; -1 if none. */
static int64_t pers_pt(int f, int block, int chunks, int stages, int k) {
    nt_params p;
    char v[4][16];
    memset(&p, 0, sizeof p);
    snprintf(v[0], sizeof v[0], "%d", block);
    snprintf(v[1], sizeof v[1], "%d", chunks);
    snprintf(v[2], sizeof v[2], "%d", stages);
    snprintf(v[3], sizeof v[3], "%d", k);
    if (nt_params_set(&p, "block", v[0]) || nt_params_set(&p, "chunks", v[1]) ||
        nt_params_set(&p, "stages", v[2]) || nt_params_set(&p, "k", v[3]) ||
        nt_params_set(&p, "partial", "f32"))
        return -1;
    return nt_sweep_point_of(&sw, f, &p);
}

/* The fixture's persistent family (its index in sw) into *f and the
 * problem M = 1000, N = 1024 into *q0, each -1 when missing. */
static void persistent_at_1000(int *f, int *q0) {
    *f = *q0 = -1;
    for (int i = 0; i < sw.nfam; i++)
        if (!strcmp(sw.fam[i].fam->name, "rmsnorm_bwd.persistent")) *f = i;
    for (int q = 0; q < nt_sweep_nproblems(&sw); q++) {
        nt_problem pr;
        nt_sweep_problem(&sw, q, &pr);
        if (pr.M == 1000 && pr.N == 1024) *q0 = q;
    }
}

/* The sweep's search: strategy at budget per problem, seed 1, no
 * budget_stored (the caller restores sw.search). */
static void set_search(const char *strategy, uint64_t budget) {
    snprintf(sw.search.strategy, sizeof sw.search.strategy, "%s", strategy);
    sw.search.budget = budget;
    sw.search.budget_stored = 0;
    sw.search.seed = 1;
}

/* Run warm over sw at a budget of `budget` (seed 1, no budget_stored) from
 * the known results h[0..nh) into a new database t_tmpdir()/name, the
 * sweep's search and path_db as they were after.  0 with *st the caller's
 * to free, or -1 after a failed check. */
static int warm_from(const char *name, uint64_t budget, const nt_hist *h, size_t nh,
                     nt_run_stats *st) {
    char saved[sizeof path_db], err[512];
    search_cfg keep = sw.search;
    store *db = NULL;
    nt_run_opts o = {0};
    int rc = -1;
    memset(st, 0, sizeof *st);
    memcpy(saved, path_db, sizeof saved);
    snprintf(path_db, sizeof path_db, "%s/%s", t_tmpdir(), name);
    set_search("warm", budget);
    o.quiet = 1;
    o.hist = h;
    o.nhist = nh;
    CHECK(store_open(&db, path_db, STORE_CREATE, err, sizeof err) == 0, "%s", err);
    if (db && nt_sweep_run(&sw, db, &ev, &o, st, err, sizeof err) == 0) rc = 0;
    CHECK(rc == 0, "run: %s", err);
    if (rc) nt_run_stats_free(st);
    store_close(db);
    sw.search = keep;
    memcpy(path_db, saved, sizeof saved);
    return rc;
}

/* warm's first hints are a portfolio.  Known results at two shapes on
 * either side of N = 1024 (M = 1000): P1 and two points nearly as good as
 * it win at the one, and are 5% behind at the other, where P2 wins; P2 is
 * 20% behind at the first.  By mean ratio alone P1 and its twins rank
 * first, so a budget of 2 would measure two of them; the portfolio
 * measures P1 and then P2, the point that covers the other shape, and P2
 * (the fixture's best at M = 1000, N = 1024) is the pick. */
TEST(warm_hints_cover_the_neighbours) {
    int f, q0;
    persistent_at_1000(&f, &q0);
    int64_t p1 = pers_pt(f, 128, 1, 1, 0), p1a = pers_pt(f, 128, 1, 1, 1),
            p1b = pers_pt(f, 128, 2, 1, 0), p2 = pers_pt(f, 256, 1, 2, 0);
    CHECK(f >= 0 && q0 >= 0 && p1 >= 0 && p1a >= 0 && p1b >= 0 && p2 >= 0, "test setup");
    if (f < 0 || q0 < 0 || p1 < 0 || p1a < 0 || p1b < 0 || p2 < 0) return;
    const int64_t pt[4] = {p1, p1a, p1b, p2};
    const double at_a[4] = {10.0, 10.01, 10.02, 12.0}, at_b[4] = {10.5, 10.5, 10.5, 10.0};
    nt_hist h[8];
    for (int i = 0; i < 4; i++) {
        h[i] = (nt_hist){0, 1000, 724, {f, (uint64_t)pt[i]}, at_a[i], 1, 1.0, 0};
        h[4 + i] = (nt_hist){0, 1000, 1448, {f, (uint64_t)pt[i]}, at_b[i], 1, 1.0, 0};
    }
    nt_run_stats st;
    if (warm_from("portfolio.db", 2, h, 8, &st)) return;
    CHECK(st.spent[q0] == 2, "spent %llu", (unsigned long long)st.spent[q0]);
    CHECK(st.pick[q0].fam == f && st.pick[q0].pt == (uint64_t)p2,
          "pick %d/%llu, want P2 = %d/%lld", st.pick[q0].fam,
          (unsigned long long)st.pick[q0].pt, f, (long long)p2);
    nt_run_stats_free(&st);
}

/* From stored results, a point a little behind at the M on either side
 * goes third among the hints (search/drive.c, bracket()).  Known results
 * at M = 500 and 2000 (N = 1024, the problem's N) and at N = 724 and 1448
 * (M = 1000): P1 (128 threads) and its sibling P1a (k 1) win at M = 500
 * and both N, 6-7% behind at M = 2000; P2 (one stage) wins at M = 2000 and
 * is 6% behind elsewhere; P3 (256 threads, 2 stages: the fixture's best at
 * 1000 x 1024) is 2% behind at both M and 8% at both N.  By the hints'
 * scores and the portfolio the first three are P1, P2 and P1a, and the
 * pick of a budget of 3 would be P2; with P3 third, P3 is the pick. */
TEST(warm_bracket_hint_between_m) {
    int f, q0;
    persistent_at_1000(&f, &q0);
    int64_t p1 = pers_pt(f, 128, 1, 2, 0), p1a = pers_pt(f, 128, 1, 2, 1),
            p2 = pers_pt(f, 256, 1, 1, 0), p3 = pers_pt(f, 256, 1, 2, 0);
    CHECK(f >= 0 && q0 >= 0 && p1 >= 0 && p1a >= 0 && p2 >= 0 && p3 >= 0, "test setup");
    if (f < 0 || q0 < 0 || p1 < 0 || p1a < 0 || p2 < 0 || p3 < 0) return;
    const int64_t pt[4] = {p1, p1a, p2, p3};
    /* ratios at M = 500, at M = 2000, at each of N = 724 and 1448 */
    const double at[4][3] = {{1.0, 1.06, 1.0}, {1.005, 1.07, 1.005}, {1.06, 1.0, 1.06},
                             {1.02, 1.02, 1.08}};
    const int64_t shape[4][2] = {{500, 1024}, {2000, 1024}, {1000, 724}, {1000, 1448}};
    nt_hist h[16];
    for (int i = 0; i < 4; i++)
        for (int s = 0; s < 4; s++)
            h[4 * s + i] = (nt_hist){0, shape[s][0], shape[s][1], {f, (uint64_t)pt[i]},
                                     10.0 * at[i][s < 2 ? s : 2], 1, 1.0, 0};
    nt_run_stats st;
    if (warm_from("bracket.db", 3, h, 16, &st)) return;
    CHECK(st.spent[q0] == 3, "spent %llu", (unsigned long long)st.spent[q0]);
    CHECK(st.pick[q0].fam == f && st.pick[q0].pt == (uint64_t)p3,
          "pick %d/%llu, want P3 = %d/%lld (P2 = %lld)", st.pick[q0].fam,
          (unsigned long long)st.pick[q0].pt, f, (long long)p3, (long long)p2);
    nt_run_stats_free(&st);
}

/* Stored results of two persistent points (256 and 128 threads of one
 * chunk, 2 stages, k 0; the second 1.1x slower) at M = ma, N = 1024 (the
 * first taking ta us) and M = mb, N = 2048 (tb us), into h[4].  0, or -1
 * (h[0].p.fam -1) when the sweep has no such points. */
static int stored_persistent(nt_hist *h, int64_t ma, double ta, int64_t mb, double tb) {
    int f = -1;
    for (int i = 0; i < sw.nfam; i++)
        if (!strcmp(sw.fam[i].fam->name, "rmsnorm_bwd.persistent")) f = i;
    int64_t p1 = pers_pt(f, 256, 1, 2, 0), p2 = pers_pt(f, 128, 1, 2, 0);
    memset(h, 0, 4 * sizeof *h);
    h[0].p.fam = -1;
    if (f < 0 || p1 < 0 || p2 < 0) return -1;
    const nt_hist v[4] = {
        {0, ma, 1024, {f, (uint64_t)p1}, ta, 1, 1.0, 0}, {0, ma, 1024, {f, (uint64_t)p2}, ta * 1.1, 1, 1.0, 0},
        {0, mb, 2048, {f, (uint64_t)p1}, tb, 1, 1.0, 0}, {0, mb, 2048, {f, (uint64_t)p2}, tb * 1.1, 1, 1.0, 0},
    };
    memcpy(h, v, sizeof v);
    return 0;
}

/* A shape the stored results never saw, next to shapes they did: warm
 * tries every family there once.  The stored results hold only persistent
 * points (at M = 1000 and 5000), so by their standings naive would never
 * be proposed at the new shape M = 64, N = 2048; marked new
 * (shape_stored), it is, and with the flags absent it is not. */
TEST(warm_tries_every_family_at_a_new_shape) {
    char saved[sizeof path_db], err[512];
    search_cfg keep = sw.search;
    int np = nt_sweep_nproblems(&sw);
    nt_hist h[4];
    CHECK(stored_persistent(h, 1000, 10.0, 5000, 90.0) == 0 && np == 3, "test setup");
    if (np != 3 || h[0].p.fam < 0) return;
    unsigned char stored[3];
    for (int q = 0; q < np; q++) {
        nt_problem pr;
        nt_sweep_problem(&sw, q, &pr);
        stored[q] = pr.M != 64;
    }
    memcpy(saved, path_db, sizeof saved);
    snprintf(sw.search.strategy, sizeof sw.search.strategy, "warm");
    sw.search.budget = 4;
    sw.search.seed = 1;
    for (int with = 1; with >= 0; with--) {
        store *db = NULL;
        nt_run_opts o = {0};
        nt_run_stats st;
        o.quiet = 1;
        o.hist = h;
        o.nhist = 4;
        o.shape_stored = with ? stored : NULL;
        fx.naive64 = 0;
        snprintf(path_db, sizeof path_db, "%s/newshape%d.db", t_tmpdir(), with);
        CHECK(store_open(&db, path_db, STORE_CREATE, err, sizeof err) == 0, "%s", err);
        CHECK(db && nt_sweep_run(&sw, db, &ev, &o, &st, err, sizeof err) == 0, "run: %s", err);
        if (with)
            CHECK(fx.naive64 >= 1, "new shape: naive tried %d times", fx.naive64);
        else
            CHECK(fx.naive64 == 0, "no flags: naive tried %d times", fx.naive64);
        nt_run_stats_free(&st);
        store_close(db);
    }
    sw.search = keep;
    memcpy(path_db, saved, sizeof saved);
}

/* Run sw with o into a new database at path_db, stderr captured into
 * path_err: 0, 1 with a message in err when the run fails, -1 when stderr
 * cannot be captured (a failed check). */
static int run_capturing(const char *path_err, const nt_run_opts *o, nt_run_stats *st, char *err,
                         size_t errlen) {
    store *db = NULL;
    fflush(stderr);
    int fd = dup(2);
    FILE *ef = fopen(path_err, "w");
    CHECK(fd >= 0 && ef, "capture stderr");
    if (fd < 0 || !ef) {
        if (fd >= 0) close(fd);
        if (ef) fclose(ef);
        return -1;
    }
    dup2(fileno(ef), 2);
    int rc = store_open(&db, path_db, STORE_CREATE, err, errlen) ||
             nt_sweep_run(&sw, db, &ev, o, st, err, errlen);
    fflush(stderr);
    dup2(fd, 2);
    close(fd);
    fclose(ef);
    store_close(db);
    return rc ? 1 : 0;
}

/* warm's budget_stored: with stored results (hints at other shapes) each
 * problem has budget_stored, not the budget, and the run's first line says
 * so; with nothing stored (a cold campaign) the budget holds as before,
 * and so it does with stored results where budget_stored is 0. */
TEST(warm_budget_stored) {
    char saved[sizeof path_db], err[512], path_err[600];
    search_cfg keep = sw.search;
    int np = nt_sweep_nproblems(&sw);
    nt_hist h[4];          /* at shapes of the sweep's N, none of its own */
    CHECK(stored_persistent(h, 500, 5.0, 2500, 45.0) == 0 && np == 3, "test setup");
    if (np != 3 || h[0].p.fam < 0) return;
    memcpy(saved, path_db, sizeof saved);
    snprintf(sw.search.strategy, sizeof sw.search.strategy, "warm");
    sw.search.seed = 1;
    /* k = 0: stored, budget_stored 2; 1: stored, no budget_stored; 2: cold */
    for (int k = 0; k < 3; k++) {
        nt_run_opts o = {0};
        nt_run_stats st;
        uint64_t total = 0, most = 0;
        sw.search.budget = 6;
        sw.search.budget_stored = k == 1 ? 0 : 2;
        o.hist = k < 2 ? h : NULL;
        o.nhist = k < 2 ? 4 : 0;
        snprintf(path_db, sizeof path_db, "%s/bstored%d.db", t_tmpdir(), k);
        snprintf(path_err, sizeof path_err, "%s/bstored%d.err", t_tmpdir(), k);
        int rc = run_capturing(path_err, &o, &st, err, sizeof err);
        if (rc < 0) return;
        CHECK(rc == 0, "k=%d: run: %s", k, err);
        if (rc) continue;
        for (int q = 0; q < np; q++) {
            total += st.spent[q];
            if (st.spent[q] > most) most = st.spent[q];
        }
        FILE *in = fopen(path_err, "r");
        char line[1024], first[1024] = "";
        if (in && fgets(line, sizeof line, in)) snprintf(first, sizeof first, "%s", line);
        if (in) fclose(in);
        if (k == 0) {
            for (int q = 0; q < np; q++)
                CHECK(st.spent[q] == 2, "stored, budget_stored 2: problem %d spent %llu", q,
                      (unsigned long long)st.spent[q]);
            CHECK(strstr(first, "budget 2 per problem (stored results at other shapes; 6 cold)"),
                  "first line: %s", first);
        } else if (k == 1) {
            CHECK(most > 2 && most <= 6, "stored, no budget_stored: at most %llu a problem",
                  (unsigned long long)most);
            CHECK(strstr(first, "budget 6 per problem\n"), "first line: %s", first);
        } else {
            CHECK(most > 2 && total <= 6 * 3, "cold: %llu in all, at most %llu a problem",
                  (unsigned long long)total, (unsigned long long)most);
            CHECK(strstr(first, "budget 6 per problem on average (a cold campaign)"),
                  "first line: %s", first);
        }
        nt_run_stats_free(&st);
    }
    sw.search = keep;
    memcpy(path_db, saved, sizeof saved);
}

/* A shape with a budget of its own (shapes[i].budget; set here as the
 * script loader would): a cold campaign tunes it after every other shape,
 * with that budget, and gives it nothing of the pool (the run's first line
 * says so); from stored results its budget is at most budget_stored. */
TEST(warm_own_budget) {
    char saved[sizeof path_db], err[512], path_err[600];
    search_cfg keep = sw.search;
    int np = nt_sweep_nproblems(&sw), q0 = -1;
    nt_hist h[4];
    CHECK(stored_persistent(h, 500, 5.0, 2500, 45.0) == 0 && np == 3 && !sw.budgets, "test setup");
    if (np != 3 || h[0].p.fam < 0 || sw.budgets) return;
    for (int q = 0; q < np; q++) {
        nt_problem pr;
        nt_sweep_problem(&sw, q, &pr);
        if (pr.M == 1000 && pr.N == 1024) q0 = q;
    }
    uint64_t *own = calloc(3, sizeof *own);
    CHECK(own && q0 == 0, "test setup");
    if (!own || q0 != 0) {
        free(own);
        return;
    }
    own[0] = 3;               /* M = 1000, N = 1024: the script's first shape */
    sw.budgets = own;
    memcpy(saved, path_db, sizeof saved);
    set_search("warm", 6);
    /* k = 0: cold; 1: stored results, budget_stored 2 (below the own 3) */
    for (int k = 0; k < 2; k++) {
        nt_run_opts o = {0};
        nt_run_stats st;
        sw.search.budget_stored = k ? 2 : 0;
        o.progress = 0;
        o.hist = k ? h : NULL;
        o.nhist = k ? 4 : 0;
        snprintf(path_db, sizeof path_db, "%s/own%d.db", t_tmpdir(), k);
        snprintf(path_err, sizeof path_err, "%s/own%d.err", t_tmpdir(), k);
        int rc = run_capturing(path_err, &o, &st, err, sizeof err);
        if (rc < 0) break;
        CHECK(rc == 0, "k=%d: run: %s", k, err);
        if (rc) continue;
        FILE *in = fopen(path_err, "r");
        char line[1024], first[1024] = "", last_done[1024] = "";
        for (int i = 0; in && fgets(line, sizeof line, in); i++) {
            if (!i) snprintf(first, sizeof first, "%s", line);
            if (strstr(line, " done (")) snprintf(last_done, sizeof last_done, "%s", line);
        }
        if (in) fclose(in);
        if (!k) {
            uint64_t others = st.spent[1] + st.spent[2];
            /* the cross pass keeps one of the own budget's proposals, and
             * spends it only on a point not measured there yet */
            CHECK(st.spent[0] >= 2 && st.spent[0] <= 3, "cold: own budget 3, spent %llu",
                  (unsigned long long)st.spent[0]);
            CHECK(others <= 6 * 2, "cold: the others spent %llu, their pool is 12",
                  (unsigned long long)others);
            CHECK(strstr(last_done, "[3/3] M=1000 N=1024 "), "cold: tuned last? %s", last_done);
            CHECK(strstr(first, "budget 6 per problem on average (a cold campaign); 1 with a "
                                "budget of their own, tuned last"), "first line: %s", first);
        } else {
            CHECK(st.spent[0] == 2, "stored: own budget 3, budget_stored 2, spent %llu",
                  (unsigned long long)st.spent[0]);
            CHECK(strstr(last_done, "[3/3] M=5000 N=2048 "), "stored: script order? %s", last_done);
        }
        nt_run_stats_free(&st);
    }
    sw.budgets = NULL;
    free(own);
    sw.search = keep;
    memcpy(path_db, saved, sizeof saved);
}

/* A cold campaign tunes a shape with a budget of its own last, as from
 * stored results (search/drive.c, start_problem): from the points the
 * campaign measured at the other shapes (ranked by how they did there), each
 * proposal one of them, rather than from the main-effects model's guesses
 * and a climb.  At M = 1000, N = 1024 (own budget 6, the search's 6), every
 * point measured is one the campaign measured at N = 2048 first; searched
 * cold, 3 of its 5 were new there, 128 threads of 1 or 2 chunks (tried). */
TEST(warm_late_shape_from_the_campaign) {
    char saved[sizeof path_db], err[512], path_err[600];
    search_cfg keep = sw.search;
    int f, q0;
    persistent_at_1000(&f, &q0);
    uint64_t *own = calloc(3, sizeof *own);
    evlog log = {calloc(256, sizeof *log.line), 0, 256};
    CHECK(f >= 0 && q0 == 0 && own && log.line && !sw.budgets &&
              nt_sweep_nproblems(&sw) == 3, "test setup");
    if (f < 0 || q0 != 0 || !own || !log.line || sw.budgets || nt_sweep_nproblems(&sw) != 3) {
        free(own);
        free(log.line);
        return;
    }
    own[0] = 6;
    sw.budgets = own;
    memcpy(saved, path_db, sizeof saved);
    set_search("warm", 6);
    nt_run_opts o = {0};
    nt_run_stats st;
    snprintf(path_db, sizeof path_db, "%s/late.db", t_tmpdir());
    snprintf(path_err, sizeof path_err, "%s/late.err", t_tmpdir());
    fx.log = &log;
    int rc = run_capturing(path_err, &o, &st, err, sizeof err);
    fx.log = NULL;
    CHECK(rc == 0, "run: %s", err);
    if (rc == 0) {
        int late = 0, before = 0;
        for (int i = 0; i < log.n; i++) {
            long long M, N;
            char fam[64], par[96] = "";
            if (sscanf(log.line[i], "%lld %lld %63s %95s", &M, &N, fam, par) < 3) continue;
            if (M != 1000 || N != 1024) continue;
            late++;
            int seen = 0;          /* measured at N = 2048 before this call */
            for (int j = 0; j < i && !seen; j++) {
                char want[128];
                snprintf(want, sizeof want, " 2048 %s %s race", fam, par);
                seen = strstr(log.line[j], want) != NULL;
            }
            before += seen;
            CHECK(seen, "the late shape measured %s %s, which no other shape had", fam, par);
        }
        CHECK(late >= 2 && late == before, "late shape: %d evaluations, %d of points measured "
              "before", late, before);
        /* the cross pass keeps one of the six (warm_own_budget) */
        CHECK(st.spent[0] >= 5 && st.spent[0] <= 6, "own budget 6, spent %llu",
              (unsigned long long)st.spent[0]);
        nt_run_stats_free(&st);
    }
    sw.budgets = NULL;
    free(own);
    free(log.line);
    sw.search = keep;
    memcpy(path_db, saved, sizeof saved);
}

/* A family's own search (families.X.search): at each problem the naive
 * family searched alone, exhaustively (both its points), then the sweep's
 * random search with a budget of 3 over persistent alone; the pick the
 * best of both passes (persistent's, faster in the fixture), the spent
 * count both passes' proposals, and a second run the same points. */
TEST(family_own_search) {
    char saved[sizeof path_db], err[512], path_err[600];
    search_cfg keep = sw.search;
    int fn = -1, fp = -1, np = nt_sweep_nproblems(&sw);
    for (int i = 0; i < sw.nfam; i++) {
        if (!strcmp(sw.fam[i].fam->name, "rmsnorm_bwd.naive")) fn = i;
        if (!strcmp(sw.fam[i].fam->name, "rmsnorm_bwd.persistent")) fp = i;
    }
    evlog log[2] = {{calloc(256, sizeof *log[0].line), 0, 256},
                    {calloc(256, sizeof *log[1].line), 0, 256}};
    CHECK(fn >= 0 && fp >= 0 && log[0].line && log[1].line && np == 3, "test setup");
    if (fn < 0 || fp < 0 || !log[0].line || !log[1].line || np != 3) {
        free(log[0].line);
        free(log[1].line);
        return;
    }
    memcpy(saved, path_db, sizeof saved);
    sw.fam[fn].own = 1;
    snprintf(sw.fam[fn].strategy, sizeof sw.fam[fn].strategy, "exhaustive");
    sw.fam[fn].budget = 0;
    set_search("random", 3);
    sw.search.race = 1;
    for (int run = 0; run < 2; run++) {
        nt_run_opts o = {0};
        nt_run_stats st;
        snprintf(path_db, sizeof path_db, "%s/own_search%d.db", t_tmpdir(), run);
        snprintf(path_err, sizeof path_err, "%s/own_search%d.err", t_tmpdir(), run);
        fx.log = &log[run];
        picks = 1;
        int rc = run_capturing(path_err, &o, &st, err, sizeof err);
        picks = 0;
        fx.log = NULL;
        CHECK(rc == 0, "run %d: %s", run, err);
        if (rc) continue;
        FILE *in = fopen(path_err, "r");
        char line[512];
        int said = 0;
        while (in && fgets(line, sizeof line, in))
            said |= !strcmp(line, "normtune run: searched on their own: rmsnorm_bwd.naive "
                                  "exhaustive\n");
        if (in) fclose(in);
        CHECK(said, "run %d: no line naming naive's own search", run);
        for (int q = 0; q < np; q++) {
            nt_problem pr;
            char at[64];
            int naive = 0, pers = 0;
            nt_sweep_problem(&sw, q, &pr);
            snprintf(at, sizeof at, "%lld %lld ", (long long)pr.M, (long long)pr.N);
            for (int i = 0; i < log[run].n; i++) {
                if (strncmp(log[run].line[i], at, strlen(at))) continue;
                naive += strstr(log[run].line[i], " rmsnorm_bwd.naive ") != NULL;
                pers += strstr(log[run].line[i], " rmsnorm_bwd.persistent ") != NULL;
            }
            CHECK(naive == 2 && pers == 3, "%s: %d naive (want both), %d persistent (want 3)", at,
                  naive, pers);
            /* racing: persistent's first point against naive's best (the
             * fixture's naive times: nsplit 16 the faster) */
            double nbest = 0, first = -1;
            for (int i = 0; i < log[run].n; i++) {
                const char *l = log[run].line[i], *r = strstr(l, " race ");
                if (strncmp(l, at, strlen(at)) || !r) continue;
                if (strstr(l, " rmsnorm_bwd.naive nsplit=16,")) {
                    nt_params pn;
                    const nt_family *nf = nt_family_find("rmsnorm_bwd.naive");
                    nt_params_parse("nsplit=16,partial=f32", &pn);
                    nbest = fake_us(nf, &pn, &pr) * 1.001;   /* its median: 2nd of 3 samples */
                }
                if (first < 0 && strstr(l, " rmsnorm_bwd.persistent ")) first = atof(r + 6);
            }
            CHECK(nbest > 0 && fabs(first - nbest) <= 1e-5 * nbest,
                  "%s: persistent's first point raced against %g, want naive's best %g", at, first,
                  nbest);
            CHECK(st.spent[q] == 5, "%s: spent %llu, want 2 + 3", at,
                  (unsigned long long)st.spent[q]);
            CHECK(st.pick[q].fam == fp, "%s: pick of family %d, want persistent (%d)", at,
                  st.pick[q].fam, fp);
        }
        nt_run_stats_free(&st);
    }
    CHECK(log[0].n == log[1].n, "runs: %d and %d evaluations", log[0].n, log[1].n);
    for (int i = 0; i < log[0].n && i < log[1].n; i++)
        CHECK(!strcmp(log[0].line[i], log[1].line[i]), "evaluation %d: %s, then %s", i,
              log[0].line[i], log[1].line[i]);
    /* every family on its own (no pass of the sweep's search): persistent
     * by warm with a budget of 3, a cold campaign's search of its own */
    sw.fam[fp].own = 1;
    snprintf(sw.fam[fp].strategy, sizeof sw.fam[fp].strategy, "warm");
    sw.fam[fp].budget = 3;
    set_search("warm", 4);
    nt_run_opts o = {0};
    nt_run_stats st;
    snprintf(path_db, sizeof path_db, "%s/own_search_all.db", t_tmpdir());
    snprintf(path_err, sizeof path_err, "%s/own_search_all.err", t_tmpdir());
    picks = 1;
    int rc = run_capturing(path_err, &o, &st, err, sizeof err);
    picks = 0;
    CHECK(rc == 0, "all on their own: %s", err);
    for (int q = 0; rc == 0 && q < np; q++) {
        CHECK(st.spent[q] == 5, "all on their own, problem %d: spent %llu, want 2 + 3", q,
              (unsigned long long)st.spent[q]);
        CHECK(st.pick[q].fam == fp, "all on their own, problem %d: pick of family %d", q,
              st.pick[q].fam);
    }
    if (rc == 0) nt_run_stats_free(&st);
    sw.fam[fp].own = 0;
    sw.fam[fn].own = 0;
    free(log[0].line);
    free(log[1].line);
    sw.search = keep;
    memcpy(path_db, saved, sizeof saved);
}

/* Progress on a long run: a line per problem finished, "[k/n] <problem>
 * done (...); T s, about R s left", k counting 1..n in the order tuned;
 * with progress on (a terminal), the live line is redrawn in place (\r and
 * erase-line) and each done line starts by erasing it. */
TEST(progress_lines) {
    char saved[sizeof path_db], err[512], path_err[600];
    search_cfg keep = sw.search;
    int np = nt_sweep_nproblems(&sw);
    memcpy(saved, path_db, sizeof saved);
    snprintf(sw.search.strategy, sizeof sw.search.strategy, "warm");
    sw.search.budget = 3;
    for (int live = 0; live <= 1; live++) {
        nt_run_opts o = {0};
        nt_run_stats st;
        o.progress = live;
        snprintf(path_db, sizeof path_db, "%s/progress%d.db", t_tmpdir(), live);
        snprintf(path_err, sizeof path_err, "%s/progress%d.err", t_tmpdir(), live);
        int rc = run_capturing(path_err, &o, &st, err, sizeof err);
        if (rc < 0) return;
        CHECK(rc == 0, "run: %s", err);
        if (!rc) nt_run_stats_free(&st);
        FILE *in = fopen(path_err, "r");
        char line[1024];
        int next = 1, live_seen = 0, last_left = -1;
        while (in && fgets(line, sizeof line, in)) {
            char *at = strstr(line, "\r\033[K[");
            live_seen += at != NULL;
            char *done = strstr(line, " done (");
            if (!done) continue;
            char *b = strrchr(line, '[');
            int k = 0, n = 0;
            if (b && sscanf(b, "[%d/%d]", &k, &n) == 2 && n == np && k == next) next++;
            char *left = strstr(done, "about ");
            last_left = left ? atoi(left + 6) : -1;
        }
        if (in) fclose(in);
        CHECK(next == np + 1, "live=%d: done lines [1/%d] .. [%d/%d] in order: stopped at %d", live,
              np, np, np, next);
        CHECK(last_left == 0, "live=%d: the last line says about %d s left", live, last_left);
        CHECK(live ? live_seen > 0 : live_seen == 0, "live=%d: %d lines redrawn in place", live,
              live_seen);
    }
    sw.search = keep;
    memcpy(path_db, saved, sizeof saved);
}

/* GPUs of one model are one device.  A sweep interrupted on GPU A is
 * finished on GPU B of the same model (another uuid): B reuses A's results
 * (counted as from another GPU), measures only the rest, stores them under
 * its own device row, and the export ranks both GPUs' results together
 * (the winners are the same as one GPU's, measured half on each).  A GPU
 * of another model (other SM count; then other memory clock) reuses
 * nothing.  A warm search resumed on B makes the choices A's uninterrupted
 * run makes. */
TEST(model_pools_gpus) {
    char saved[sizeof path_db], err[512];
    nt_device keep = ev.dev;
    search_cfg skeep = sw.search;
    nt_run_stats st;
    memcpy(saved, path_db, sizeof saved);
    snprintf(path_db, sizeof path_db, "%s/model.db", t_tmpdir());
    snprintf(ev.dev.uuid, sizeof ev.dev.uuid, "GPU-model-a");
    ev.dev.sms = 132;
    ev.dev.mem_clock_khz = 3201000;
    CHECK(run_sweep(&st, 30) == 0 && st.interrupted && st.measured == 30, "A: %llu measured",
          (unsigned long long)st.measured);
    snprintf(ev.dev.uuid, sizeof ev.dev.uuid, "GPU-model-b");
    CHECK(run_sweep(&st, 0) == 0 && !st.interrupted, "B");
    CHECK(st.reused == 30 && st.reused_other == 30 && st.measured == 40,
          "B reused %llu (%llu from A), measured %llu", (unsigned long long)st.reused,
          (unsigned long long)st.reused_other, (unsigned long long)st.measured);
    /* A again: everything is stored, 40 of it by B */
    snprintf(ev.dev.uuid, sizeof ev.dev.uuid, "GPU-model-a");
    CHECK(run_sweep(&st, 0) == 0 && st.measured == 0 && st.reused == 70 && st.reused_other == 40,
          "A again: measured %llu, reused %llu (%llu from B)", (unsigned long long)st.measured,
          (unsigned long long)st.reused, (unsigned long long)st.reused_other);

    store *db = NULL;
    store_best_row *rows = NULL;
    store_prov prov;
    int n = 0;
    CHECK(store_open(&db, path_db, STORE_READ, err, sizeof err) == 0, "%s", err);
    if (db) {
        CHECK(store_best(db, NULL, 1, &rows, &n, &prov, err, sizeof err) == 0 && n == 3,
              "export rows: %s (%d)", err, n);
        for (int i = 0; i < n; i++)
            CHECK(!strcmp(rows[i].params, "block=256,chunks=1,stages=2,k=0"),
                  "M=%lld N=%lld best %s", (long long)rows[i].M, (long long)rows[i].N,
                  rows[i].params);
        /* A measured the first shape whole (26 variants) and 4 of the
         * second, B the rest: the best rows come from both */
        CHECK(n == 3 && rows[0].device_id != rows[n - 1].device_id, "best rows of one GPU");
        CHECK(prov.ngpus == 2 && prov.sms == 132 && prov.mem_clock_khz == 3201000 &&
                  !strcmp(prov.gpus[0].uuid, "GPU-model-b") && prov.gpus[0].rows == 2 &&
                  !strcmp(prov.gpus[1].uuid, "GPU-model-a") && prov.gpus[1].rows == 1,
              "prov: %d GPUs: %s %d, %s %d", prov.ngpus, prov.gpus[0].uuid, prov.gpus[0].rows,
              prov.gpus[1].uuid, prov.gpus[1].rows);
        free(rows);
        rows = NULL;
        /* each GPU holds its own results: 30 and 40 */
        int ga = 0;
        int64_t id;
        CHECK(store_find_device(db, "GPU-model-b", &id, err, sizeof err) == 0 &&
                  store_model_gpus(db, id, &ga, err, sizeof err) == 0 && ga == 2,
              "%d GPUs of the model: %s", ga, err);
        /* warm's stored hints in a run: the model's results of other
         * sources only (those of the current ones are reused) */
        char cur[NT_SWEEP_MAX_FAMILIES][24], other[NT_SWEEP_MAX_FAMILIES][24];
        nt_hist *h = NULL;
        size_t nh = 0;
        for (int f = 0; f < sw.nfam; f++) {
            CHECK(nt_family_hash(sw.fam[f].fam, cur[f]) == 0, "hash");
            snprintf(other[f], sizeof other[f], "0000000000000000");
        }
        CHECK(nt_stored_hints(db, &sw, &ev.dev, 0, 1, (const char (*)[24])cur, &h, &nh, NULL, err,
                              sizeof err) == 0 && nh == 0, "current sources: %zu hints", nh);
        free(h);
        h = NULL;
        CHECK(nt_stored_hints(db, &sw, &ev.dev, 0, 1, (const char (*)[24])other, &h, &nh, NULL, err,
                              sizeof err) == 0 && nh == 70, "other sources: %zu hints", nh);
        for (size_t i = 0; i < nh; i++)
            if (h[i].w >= 1.0) {
                CHECK(0, "hint %zu weighs %g", i, h[i].w);
                break;
            }
        free(h);
        store_close(db);
    }
    char hpath[700];
    snprintf(hpath, sizeof hpath, "%s/model.h", t_tmpdir());
    char *argv[] = {"export", "--db", path_db, "--device", "GPU-model-b", "-o", hpath};
    CHECK(cmd_export(7, argv) == 0, "export by B's uuid");
    FILE *f = fopen(hpath, "r");
    char buf[1 << 14];
    size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[len] = 0;
    if (f) fclose(f);
    CHECK(strstr(buf, "memory clock 3201000 kHz") && strstr(buf, "      2  GPU-model-b\n") &&
              strstr(buf, "      1  GPU-model-a\n") &&
              strstr(buf, "#define NORMTUNE_DEVICE_UUID \"GPU-model-b\"\n"
                          "#define NORMTUNE_DEVICE_NGPUS 2\n"),
          "banner:\n%.1200s", buf);

    /* other models: nothing reused, everything measured */
    snprintf(ev.dev.uuid, sizeof ev.dev.uuid, "GPU-model-c");
    ev.dev.sms = 114;
    CHECK(run_sweep(&st, 0) == 0 && st.reused == 0 && st.measured == 70,
          "other SM count: reused %llu, measured %llu", (unsigned long long)st.reused,
          (unsigned long long)st.measured);
    snprintf(ev.dev.uuid, sizeof ev.dev.uuid, "GPU-model-d");
    ev.dev.sms = 132;
    ev.dev.mem_clock_khz = 2619000;
    CHECK(run_sweep(&st, 0) == 0 && st.reused == 0 && st.measured == 70,
          "other memory clock: reused %llu, measured %llu", (unsigned long long)st.reused,
          (unsigned long long)st.measured);

    /* warm: interrupted on A, resumed on B = uninterrupted */
    nt_run_stats a, b;
    snprintf(sw.search.strategy, sizeof sw.search.strategy, "warm");
    sw.search.budget = 7;
    sw.search.seed = 3;
    ev.dev.mem_clock_khz = 3201000;
    snprintf(path_db, sizeof path_db, "%s/model_warm_a.db", t_tmpdir());
    snprintf(ev.dev.uuid, sizeof ev.dev.uuid, "GPU-model-a");
    picks = 1;
    CHECK(run_sweep(&a, 0) == 0, "warm on A");
    snprintf(path_db, sizeof path_db, "%s/model_warm_b.db", t_tmpdir());
    picks = 0;
    CHECK(run_sweep(&b, 5) == 0 && b.interrupted && b.measured == 5, "warm interrupted on A");
    snprintf(ev.dev.uuid, sizeof ev.dev.uuid, "GPU-model-b");
    picks = 1;
    CHECK(run_sweep(&b, 0) == 0 && !b.interrupted, "warm resumed on B");
    CHECK(b.reused == 5 && b.reused_other == 5 && b.reused + b.measured == a.measured,
          "B: reused %llu (%llu from A) + measured %llu, want %llu", (unsigned long long)b.reused,
          (unsigned long long)b.reused_other, (unsigned long long)b.measured,
          (unsigned long long)a.measured);
    for (int q = 0; q < nt_sweep_nproblems(&sw); q++)
        CHECK(a.pick[q].fam == b.pick[q].fam && a.pick[q].pt == b.pick[q].pt &&
                  a.spent[q] == b.spent[q],
              "problem %d: pick %d/%llu resumed on B, %d/%llu on A alone", q, b.pick[q].fam,
              (unsigned long long)b.pick[q].pt, a.pick[q].fam, (unsigned long long)a.pick[q].pt);
    nt_run_stats_free(&a);
    nt_run_stats_free(&b);
    picks = 0;
    sw.search = skeep;
    ev.dev = keep;
    memcpy(path_db, saved, sizeof saved);
}


/* Two runs of one sweep into one database at once (two GPUs of one model,
 * as two make tune or run --devices of a whole script would be): the
 * claims let each variant be measured once, by one of them, and the other
 * reuses it.  (Without claims both measure what they reach at the same
 * time; how much they overlap depends on the machine, so the test asks
 * only what claims guarantee: every variant measured once in all.) */
TEST(two_writers_measure_once) {
    char err[512];
    int go[2], back[2];
    pid_t pid[2];
    snprintf(path_db, sizeof path_db, "%s/two.db", t_tmpdir());
    store *db = NULL;
    CHECK(store_open(&db, path_db, STORE_CREATE, err, sizeof err) == 0, "create: %s", err);
    store_close(db);
    CHECK(pipe(go) == 0 && pipe(back) == 0, "pipes");
    for (int w = 0; w < 2; w++) {
        pid[w] = fork();
        if (pid[w] == 0) {
            nt_run_stats st;
            char c;
            uint64_t out[3];
            close(go[1]);
            if (read(go[0], &c, 1) != 1) _exit(2);
            fx.sleep_us = 3000;       /* 70 variants x 3 ms: the two runs overlap */
            memset(&st, 0, sizeof st);
            int rc = run_sweep(&st, 0);
            fflush(stdout);
            out[0] = st.measured, out[1] = st.reused, out[2] = st.waited;
            if (write(back[1], out, sizeof out) != (ssize_t)sizeof out) _exit(2);
            _exit(rc ? 1 : 0);
        }
    }
    close(go[0]);
    CHECK(write(go[1], "gg", 2) == 2, "start");
    close(go[1]);
    uint64_t measured = 0, reused = 0, waited = 0, out[3];
    for (int w = 0; w < 2; w++) {
        int status = 0;
        waitpid(pid[w], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "run %d: status %d", w, status);
    }
    close(back[1]);
    for (int w = 0; w < 2; w++) {
        int ok = read(back[0], out, sizeof out) == (ssize_t)sizeof out;
        CHECK(ok, "run %d's counts", w);
        if (ok) measured += out[0], reused += out[1], waited += out[2];
    }
    close(back[0]);
    CHECK(measured == 70 && reused == 70, "measured %llu, reused %llu (%llu after a wait)",
          (unsigned long long)measured, (unsigned long long)reused, (unsigned long long)waited);
    nt_run_stats st;
    fx.sleep_us = 0;
    CHECK(run_sweep(&st, 0) == 0 && st.reused == 70 && st.measured == 0, "a third run");
}

/* kill -9 in the middle of a sweep: the database keeps whole results only,
 * and the next run measures exactly what is missing. */
TEST(kill_9_then_resume) {
    char err[512];
    snprintf(path_db, sizeof path_db, "%s/killed.db", t_tmpdir());
    pid_t pid = fork();
    if (pid == 0) {
        nt_run_stats st;
        fx.sleep_us = 20000;          /* 70 variants x 20 ms: killed long before the end */
        run_sweep(&st, 0);
        _exit(0);
    }
    struct timespec ts = {0, 400 * 1000000L};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status), "the sweep was not killed (finished too early?)");
    store *db = NULL;
    CHECK(store_open(&db, path_db, STORE_WRITE, err, sizeof err) == 0, "reopen: %s", err);
    store_close(db);
    nt_run_stats st;
    fx.sleep_us = 0;
    CHECK(run_sweep(&st, 0) == 0, "resume");
    CHECK(st.reused > 0 && st.reused < 70, "reused %llu", (unsigned long long)st.reused);
    CHECK(st.reused + st.measured == 70, "reused %llu + measured %llu",
          (unsigned long long)st.reused, (unsigned long long)st.measured);
    CHECK(run_sweep(&st, 0) == 0 && st.reused == 70 && st.measured == 0, "third run");
}

/* Before measuring, the driver names every problem of the sweep to the
 * evaluator once (the runner sizes its host buffers for the largest). */
TEST(expect_names_every_problem_first) {
    nt_run_stats st;
    int64_t largest = 0;
    for (int q = 0; q < nt_sweep_nproblems(&sw); q++) {
        nt_problem p;
        nt_sweep_problem(&sw, q, &p);
        if (p.M * p.N > largest) largest = p.M * p.N;
    }
    char saved[sizeof path_db];
    memcpy(saved, path_db, sizeof saved);
    snprintf(path_db, sizeof path_db, "%s/expect.db", t_tmpdir());   /* all to measure */
    expects = expects_late = 0;
    expect_max_mn = 0;
    ev.expect = fix_expect;
    int rc = run_sweep(&st, 0);
    ev.expect = NULL;
    memcpy(path_db, saved, sizeof saved);
    CHECK(rc == 0 && fx.calls > 0, "run: %d evals", fx.calls);
    CHECK(expects == nt_sweep_nproblems(&sw), "%d expect() calls for %d problems", expects,
          nt_sweep_nproblems(&sw));
    CHECK(!expects_late, "%d expect() calls after an eval", expects_late);
    CHECK(expect_max_mn == largest, "the largest problem named: %lld elements, want %lld",
          (long long)expect_max_mn, (long long)largest);
}

/* The fixture's prefetch: the points named since the last re-measure
 * (family, params text and problem), so that a re-measure can tell which
 * of its points were compiled ahead. */
#define PF_MAX 256
static struct pf_rec {
    const nt_family *fam;
    char params[160];
    nt_problem pr;
} pf[PF_MAX];
static int npf, rematch_unprefetched;
static void fix_prefetch(void *ctx, const nt_family *f, const nt_params *p, const nt_problem *s) {
    (void)ctx;
    if (npf == PF_MAX) return;
    pf[npf].fam = f;
    if (nt_params_canon(f, p, pf[npf].params, sizeof pf[npf].params)) pf[npf].params[0] = 0;
    pf[npf++].pr = *s;
}

/* The fixture's re-measure: the stored order but for k = 1, 3% faster
 * when measured in turn with its neighbours.  It counts the points it is
 * asked for that no prefetch named at this problem before it. */
static int rematch_calls, rematch_alone, rematch_most;
static int fix_rematch(void *ctx, int n, const nt_family *const *fam, const nt_params *p,
                       const nt_problem *s, int alone, double *us, int *ns, char *msg,
                       size_t msglen) {
    (void)ctx;
    (void)msg;
    (void)msglen;
    rematch_calls++;
    rematch_alone += alone;
    if (n > rematch_most) rematch_most = n;
    for (int i = 0; i < n; i++) {
        char c[160];
        int seen = 0;
        if (nt_params_canon(fam[i], &p[i], c, sizeof c)) c[0] = 0;
        for (int j = 0; j < npf && !seen; j++)
            seen = pf[j].fam == fam[i] && !strcmp(pf[j].params, c) && pf[j].pr.M == s->M &&
                   pf[j].pr.N == s->N && !memcmp(pf[j].pr.dtype, s->dtype, sizeof s->dtype);
        rematch_unprefetched += !seen;
    }
    npf = 0;
    for (int i = 0; i < n; i++) {
        us[i] = fake_us(fam[i], &p[i], s) * (nt_params_int(&p[i], "k", NULL) == 1 ? 0.97 : 1.0);
        ns[i] = 48;
    }
    return 0;
}

/* A re-measure that fails: the run goes on with the search's picks. */
static int fail_rematch(void *ctx, int n, const nt_family *const *fam, const nt_params *p,
                        const nt_problem *s, int alone, double *us, int *ns, char *msg,
                        size_t msglen) {
    (void)ctx, (void)n, (void)fam, (void)p, (void)s, (void)alone, (void)us, (void)ns;
    rematch_calls++;
    snprintf(msg, msglen, "fixture: no re-measure");
    return -1;
}

/* The re-measure tests: warm without a budget, picks reported; saved and
 * keep hold what warm_end() puts back. */
static void warm_begin(char *saved, search_cfg *keep) {
    memcpy(saved, path_db, sizeof path_db);
    *keep = sw.search;
    snprintf(sw.search.strategy, sizeof sw.search.strategy, "warm");
    sw.search.budget = 0;
    picks = 1;
}

static void warm_end(const char *saved, const search_cfg *keep) {
    ev.rematch = NULL;
    picks = 0;
    sw.search = *keep;
    memcpy(path_db, saved, sizeof path_db);
}

/* Every problem picked the same point in runs x and y. */
static void same_picks(const nt_run_stats *x, const nt_run_stats *y, const char *what) {
    for (int q = 0; q < nt_sweep_nproblems(&sw); q++)
        CHECK(x->pick[q].fam == y->pick[q].fam && x->pick[q].pt == y->pick[q].pt,
              "problem %d: %s", q, what);
}

/* warm's last step: the points within 2% of a problem's pick measured
 * again in turn; the fastest there is the pick (k = 1, which the medians
 * put 1% behind k = 0), the store's best and the export follow it, and a
 * second run over the same database finds the re-measures stored and
 * makes the same picks without measuring.  Without an evaluator that can
 * re-measure, the medians pick k = 0. */
TEST(warm_rematch) {
    char saved[sizeof path_db], err[512];
    search_cfg keep;
    nt_run_stats a, b, c;
    int np = nt_sweep_nproblems(&sw);
    warm_begin(saved, &keep);
    snprintf(path_db, sizeof path_db, "%s/rematch_none.db", t_tmpdir());
    CHECK(run_sweep(&c, 0) == 0 && c.rematched == 0, "without a re-measure");
    ev.rematch = fix_rematch;
    rematch_calls = rematch_alone = rematch_most = 0;
    snprintf(path_db, sizeof path_db, "%s/rematch.db", t_tmpdir());
    CHECK(run_sweep(&a, 0) == 0, "first run");
    CHECK(rematch_calls >= 2 && a.rematched == (uint64_t)rematch_calls, "re-measured %d "
          "problems (%llu)", rematch_calls, (unsigned long long)a.rematched);
    CHECK(rematch_alone == 0 && rematch_most <= NT_REMATCH_N, "chain: %d alone, up to %d "
          "points", rematch_alone, rematch_most);
    int k1 = 0, best_k1 = 0;
    for (int q = 0; q < np; q++) {
        nt_params pa, pc;
        int idx[SEARCH_MAX_DIMS];
        CHECK(a.pick[q].fam >= 0 && c.pick[q].fam >= 0, "problem %d picked", q);
        if (a.pick[q].fam < 0 || c.pick[q].fam < 0) continue;
        search_space_point(&sw.fam[a.pick[q].fam].space, a.pick[q].pt, idx);
        nt_sweep_point_params(&sw, a.pick[q].fam, idx, &pa);
        search_space_point(&sw.fam[c.pick[q].fam].space, c.pick[q].pt, idx);
        nt_sweep_point_params(&sw, c.pick[q].fam, idx, &pc);
        k1 += nt_params_int(&pa, "k", NULL) == 1;
        CHECK(nt_params_int(&pc, "k", NULL) == 0, "problem %d: k %lld by the medians", q,
              (long long)nt_params_int(&pc, "k", NULL));
    }
    /* every re-measure here has k = 1 beside the pick's k = 0 (and the
     * cross pass may hand a k = 1 on to a problem) */
    CHECK(k1 >= rematch_calls, "%d picks of k = 1, %d re-measures", k1, rematch_calls);
    store *db = NULL;
    store_best_row *rows = NULL;
    int n = 0;
    CHECK(store_open(&db, path_db, STORE_READ, err, sizeof err) == 0 &&
              store_best(db, NULL, 0, &rows, &n, NULL, err, sizeof err) == 0 && n == np,
          "best: %s", err);
    for (int i = 0; i < n; i++) best_k1 += strstr(rows[i].params, ",k=1") != NULL;
    CHECK(best_k1 == k1, "the store's best: %d of k = 1, the picks %d", best_k1, k1);
    free(rows);
    store_close(db);
    /* over a copy of that database without its re-measures every point is
     * reused, none compiled in the run: each re-measure has its points
     * prefetched first, at its problem */
    {
        char copy[sizeof path_db];
        snprintf(copy, sizeof copy, "%.500s/rematch_pf.db", t_tmpdir());
        nt_run_stats f;
        char *sql = sqlite3_mprintf("VACUUM INTO %Q", copy);
        sqlite3 *raw = NULL;
        unlink(copy);
        CHECK(sql && sqlite3_open(path_db, &raw) == SQLITE_OK &&
                  sqlite3_exec(raw, sql, NULL, NULL, NULL) == SQLITE_OK,
              "copy %s", path_db);
        sqlite3_close(raw);
        sqlite3_free(sql);
        raw = NULL;
        CHECK(sqlite3_open(copy, &raw) == SQLITE_OK &&
                  sqlite3_exec(raw, "DELETE FROM rematch", NULL, NULL, NULL) == SQLITE_OK,
              "clear the copy's re-measures");
        sqlite3_close(raw);
        char keep_db[sizeof path_db];
        memcpy(keep_db, path_db, sizeof keep_db);
        memcpy(path_db, copy, sizeof path_db);
        ev.prefetch = fix_prefetch;
        npf = rematch_unprefetched = rematch_calls = 0;
        CHECK(run_sweep(&f, 0) == 0 && f.measured == 0 && rematch_calls >= 2,
              "seeded: %llu measured, %d re-measures", (unsigned long long)f.measured,
              rematch_calls);
        CHECK(rematch_unprefetched == 0, "%d re-measured points not prefetched at their problem",
              rematch_unprefetched);
        ev.prefetch = NULL;
        memcpy(path_db, keep_db, sizeof keep_db);
        same_picks(&a, &f, "the seeded run picks another point");
        nt_run_stats_free(&f);
    }
    rematch_calls = 0;
    CHECK(run_sweep(&b, 0) == 0 && b.measured == 0 && rematch_calls == 0 && b.rematched == 0,
          "second run: %llu measured, %d re-measures", (unsigned long long)b.measured,
          rematch_calls);
    same_picks(&a, &b, "the second run picks another point");
    /* a re-measure that fails leaves the medians' picks, and the run goes on */
    nt_run_stats e;
    ev.rematch = fail_rematch;
    rematch_calls = 0;
    snprintf(path_db, sizeof path_db, "%s/rematch_fails.db", t_tmpdir());
    CHECK(run_sweep(&e, 0) == 0 && rematch_calls > 0 && e.rematched == 0, "failing re-measures: "
          "%d calls", rematch_calls);
    same_picks(&e, &c, "a failed re-measure changed the pick");
    nt_run_stats_free(&e);
    nt_run_stats_free(&a);
    nt_run_stats_free(&b);
    nt_run_stats_free(&c);
    warm_end(saved, &keep);
}

/* search.remeasure = "alone": the re-measure is asked alone, of the points
 * within NT_REMATCH_ALONE_SPAN (more of them than a chain re-measure
 * takes), and stored as such: over the same database a chain re-measure
 * is not answered by it (it measures again), a second alone one is (it
 * measures nothing), and the picks are the same. */
TEST(warm_rematch_alone) {
    char saved[sizeof path_db];
    search_cfg keep;
    nt_run_stats a, b, c;
    warm_begin(saved, &keep);
    ev.rematch = fix_rematch;
    snprintf(path_db, sizeof path_db, "%s/rematch_alone.db", t_tmpdir());
    sw.search.remeasure_alone = 1;
    rematch_calls = rematch_alone = rematch_most = 0;
    CHECK(run_sweep(&a, 0) == 0 && rematch_calls >= 2 && rematch_alone == rematch_calls,
          "alone: %d re-measures, %d alone", rematch_calls, rematch_alone);
    CHECK(rematch_most > NT_REMATCH_N && rematch_most <= NT_REMATCH_ALONE_N,
          "alone: up to %d points re-measured together", rematch_most);
    sw.search.remeasure_alone = 0;
    rematch_calls = rematch_alone = 0;
    CHECK(run_sweep(&b, 0) == 0 && b.measured == 0 && rematch_calls >= 2 && rematch_alone == 0,
          "chain after alone: %d re-measures (%d alone), %llu measured", rematch_calls,
          rematch_alone, (unsigned long long)b.measured);
    sw.search.remeasure_alone = 1;
    rematch_calls = 0;
    CHECK(run_sweep(&c, 0) == 0 && c.measured == 0 && rematch_calls == 0,
          "alone again: %d re-measures", rematch_calls);
    same_picks(&a, &c, "the resumed alone run picks another point");
    nt_run_stats_free(&a);
    nt_run_stats_free(&b);
    nt_run_stats_free(&c);
    warm_end(saved, &keep);
}

/* An exhaustive sweep re-measures only when the script (or `run
 * --remeasure`) names a method: without, no re-measure; with "alone", one
 * per problem that has two points within the span, asked alone. */
TEST(exhaustive_rematch) {
    char saved[sizeof path_db];
    search_cfg keep = sw.search;
    nt_run_stats a, b;
    memcpy(saved, path_db, sizeof saved);
    snprintf(sw.search.strategy, sizeof sw.search.strategy, "exhaustive");
    sw.search.budget = 0;
    ev.rematch = fix_rematch;
    snprintf(path_db, sizeof path_db, "%s/rematch_exh.db", t_tmpdir());
    rematch_calls = rematch_alone = 0;
    CHECK(run_sweep(&a, 0) == 0 && rematch_calls == 0 && a.rematched == 0,
          "exhaustive without a method: %d re-measures", rematch_calls);
    sw.search.remeasure_set = sw.search.remeasure_alone = 1;
    CHECK(run_sweep(&b, 0) == 0 && b.measured == 0 && rematch_calls >= 2 &&
              rematch_alone == rematch_calls && b.rematched == (uint64_t)rematch_calls,
          "exhaustive, alone: %d re-measures, %d alone", rematch_calls, rematch_alone);
    nt_run_stats_free(&a);
    nt_run_stats_free(&b);
    ev.rematch = NULL;
    sw.search = keep;
    memcpy(path_db, saved, sizeof saved);
}

int main(void) {
    char err[512];
    snprintf(path_script, sizeof path_script, "%s/sweep.lua", t_tmpdir());
    snprintf(path_db, sizeof path_db, "%s/results.db", t_tmpdir());
    FILE *f = fopen(path_script, "w");
    if (!f) return 2;
    fputs(script, f);
    fclose(f);
    if (ntl_load(path_script, &sw, err, sizeof err)) {
        printf("FAIL load: %s\nRESULT 0 1\n", err);
        return 1;
    }
    memset(&ev, 0, sizeof ev);
    ev.ctx = &fx;
    ev.eval = fix_eval;
    snprintf(ev.dev.name, sizeof ev.dev.name, "Fixture GPU");
    snprintf(ev.dev.uuid, sizeof ev.dev.uuid, "GPU-fixture");
    ev.copy_gbps = 4000;
    RUN(counts_by_hand);
    RUN(interrupt_then_resume);
    RUN(adaptive_resume_same_choices);
    RUN(store_has_everything_once);
    RUN(summary_names_failures);
    RUN(export_picks_the_fastest);
    RUN(warm_hints_cover_the_neighbours);
    RUN(warm_bracket_hint_between_m);
    RUN(warm_own_budget);
    RUN(warm_late_shape_from_the_campaign);
    RUN(family_own_search);
    RUN(warm_tries_every_family_at_a_new_shape);
    RUN(warm_budget_stored);
    RUN(progress_lines);
    RUN(expect_names_every_problem_first);
    RUN(model_pools_gpus);
    RUN(kill_9_then_resume);
    RUN(two_writers_measure_once);
    RUN(warm_rematch);
    RUN(warm_rematch_alone);
    RUN(exhaustive_rematch);
    ntl_free(&sw);
    T_END();
}
