/* test_export.c -- the dispatch header writer (nt_export_write) and the
 * `normtune export` command line.
 *
 * Rows are made by hand: three N, several M, both families, one config used
 * by two shapes.  The header must come out byte-identical on a second call
 * (and for the rows in another order); a C program written here includes it,
 * checks normtune_lookup on exact, in-between and out-of-range shapes with a
 * can_run that refuses configs, counts the X-macro expansions, and is
 * compiled with `$CC -std=c99 -Wall -Wextra -Werror -pedantic` and run.  Two
 * translation units including the header must link together.  Refusals: a
 * "mixed" source hash, no rows, two rows for a shape, an unknown family. */
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/t.h"
#include "tuner/cli.h"
#include "db/store.h"
#include "tuner/export.h"

#define HASH "0123456789abcdef"

static void row(store_best_row *r, int64_t M, int64_t N, const char *family, const char *params,
                double us) {
    memset(r, 0, sizeof *r);
    r->M = M;
    r->N = N;
    snprintf(r->op, sizeof r->op, "rmsnorm_bwd");
    snprintf(r->dtype, sizeof r->dtype, "bf16");
    snprintf(r->family, sizeof r->family, "%s", family);
    snprintf(r->params, sizeof r->params, "%s", params);
    snprintf(r->src_hash, sizeof r->src_hash, HASH);
    r->median_us = us;
    r->gbps = 3.0 * (double)M * (double)N * 2.0 / (us * 1e3);
    r->pct_copy = 50.0;
}

#define PERS "rmsnorm_bwd.persistent"
#define NAIVE "rmsnorm_bwd.naive"

/* The fixture, deliberately not in (N, M) order.  Sorted, the configs are
 *   (1024, 2048)  P block=128,chunks=1,stages=2,k=1  -> config 0
 *   (1024, 16384) N nsplit=64,partial=f32            -> config 1
 *   (1024, 65536) P block=128,...  (again)           -> config 0
 *   (4096, 2048)  P block=256,chunks=2,stages=2,k=0  -> config 2
 *   (4096, 65536) N nsplit=128,partial=bf16          -> config 3
 *   (8192, 16384) P block=512,chunks=2,stages=3,k=2  -> config 4 */
static int fixture(store_best_row *r, store_prov *p) {
    row(&r[0], 65536, 4096, NAIVE, "nsplit=128,partial=bf16", 400.0);
    row(&r[1], 2048, 1024, PERS, "block=128,chunks=1,stages=2,k=1", 9.5);
    row(&r[2], 16384, 8192, PERS, "block=512,chunks=2,stages=3,k=2", 210.25);
    row(&r[3], 16384, 1024, NAIVE, "nsplit=64,partial=f32", 60.0);
    row(&r[4], 2048, 4096, PERS, "block=256,chunks=2,stages=2,k=0", 25.0);
    row(&r[5], 65536, 1024, PERS, "block=128,chunks=1,stages=2,k=1", 200.0);
    memset(p, 0, sizeof *p);
    snprintf(p->device, sizeof p->device, "NVIDIA H200");
    snprintf(p->uuid, sizeof p->uuid, "GPU-00000000-test");
    p->cc_major = 9;
    p->cc_minor = 0;
    snprintf(p->driver, sizeof p->driver, "13000");
    snprintf(p->runtime, sizeof p->runtime, "13000");
    snprintf(p->nvrtc, sizeof p->nvrtc, "13.0");
    snprintf(p->src_hash, sizeof p->src_hash, HASH);
    snprintf(p->last_finished, sizeof p->last_finished, "2024-05-06T07:08:09Z");
    p->nsweeps = 2;
    return 6;
}

/* Write the header for rows into path.  Returns nt_export_write's code. */
static int write_to(const char *path, const store_best_row *r, int n, const store_prov *p,
                    char *err, size_t errlen) {
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "cannot open %.200s", path);
        return -2;
    }
    int rc = nt_export_write(f, r, n, p, err, errlen);
    fclose(f);
    return rc;
}

/* Whole file into a malloc'd string (caller frees); NULL if unreadable. */
static char *slurp(const char *path, long *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s) s[n] = 0;
    fclose(f);
    if (len) *len = n;
    return s;
}

static void spit(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Run a shell command; its exit status, or -1. */
static int sh(const char *cmd) {
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static const char *cc(void) {
    const char *c = getenv("CC");
    return c && *c ? c : "cc";
}

static char hdr[600];                  /* the fixture's header, made once */

TEST(write_deterministic) {
    store_best_row r[8];
    store_prov p;
    char err[512] = "", other[600];
    int n = fixture(r, &p);
    snprintf(hdr, sizeof hdr, "%s/normtune_dispatch.h", t_tmpdir());
    snprintf(other, sizeof other, "%s/again.h", t_tmpdir());
    CHECK(write_to(hdr, r, n, &p, err, sizeof err) == 0, "export: %s", err);
    CHECK(write_to(other, r, n, &p, err, sizeof err) == 0, "export again: %s", err);
    long la, lb;
    char *a = slurp(hdr, &la), *b = slurp(other, &lb);
    CHECK(a && b && la == lb && !memcmp(a, b, (size_t)la), "second export differs");
    free(b);
    /* the input order does not matter */
    store_best_row t = r[0];
    r[0] = r[5];
    r[5] = t;
    t = r[1];
    r[1] = r[3];
    r[3] = t;
    CHECK(write_to(other, r, n, &p, err, sizeof err) == 0, "export shuffled: %s", err);
    b = slurp(other, &lb);
    CHECK(a && b && la == lb && !memcmp(a, b, (size_t)la), "shuffled rows give another header");
    free(b);
    if (a) {
        CHECK(strstr(a, "DO NOT EDIT") != NULL, "no do-not-edit banner");
        CHECK(strstr(a, "#ifndef NORMTUNE_DISPATCH_H") != NULL, "no include guard");
        CHECK(strstr(a, "#define NORMTUNE_SOURCE_HASH \"" HASH "\"") != NULL, "source hash macro");
        CHECK(strstr(a, "#define NORMTUNE_DISPATCH_VERSION 1\n") != NULL, "version macro");
        CHECK(strstr(a, "#define NORMTUNE_DEFAULT_CONFIG (-1)") != NULL, "default macro");
        CHECK(strstr(a, "#define NORMTUNE_NCONFIGS 5\n") != NULL, "NCONFIGS is not 5");
        CHECK(strstr(a, "#define NORMTUNE_TABLE_SIZE 6\n") != NULL, "TABLE_SIZE is not 6");
        CHECK(strstr(a, "NVIDIA H200 (cc 9.0") != NULL, "device and cc not in banner");
        CHECK(strstr(a, "2024-05-06T07:08:09Z") != NULL, "newest result time not in banner");
        CHECK(strstr(a, "13.0") != NULL, "NVRTC version not in banner");
        CHECK(strstr(a, "X(0, 128, 1, 2, 1)") != NULL, "config 0 X entry");
        CHECK(strstr(a, "X(1, 64, f32)") != NULL, "config 1 X entry (bare string value)");
        CHECK(strstr(a, "X(3, 128, bf16)") != NULL, "config 3 X entry");
        CHECK(strstr(a, "X(config, block, chunks, stages, k)") != NULL, "param order comment");
        /* table order: (N, M) */
        const char *e1 = strstr(a, "{1024LL, 2048LL, 0,"), *e2 = strstr(a, "{1024LL, 16384LL, 1,"),
                   *e3 = strstr(a, "{4096LL, 2048LL, 2,"), *e4 = strstr(a, "{8192LL, 16384LL, 4,");
        CHECK(e1 && e2 && e3 && e4 && e1 < e2 && e2 < e3 && e3 < e4, "table rows missing or unsorted");
    }
    free(a);
}

/* The C program that includes the header and checks the lookup. */
static const char lookup_prog[] =
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "#include \"normtune_dispatch.h\"\n"
    "int other_tu(void);\n"
    "static int refused[NORMTUNE_NCONFIGS];\n"
    "static long long wantM, wantN;\n"
    "static int bad_args;\n"
    "static int can(int c, long long M, long long N)\n"
    "{\n"
    "    if (M != wantM || N != wantN || c < 0 || c >= NORMTUNE_NCONFIGS) bad_args++;\n"
    "    return !refused[c];\n"
    "}\n"
    "static int look(long long M, long long N)\n"
    "{\n"
    "    wantM = M; wantN = N;\n"
    "    return normtune_lookup(M, N, can);\n"
    "}\n"
    "#define CNT4(id, a, b, c, d) + 1\n"
    "#define CNT2(id, a, b) + 1\n"
    "#define STR2(id, a, b) if (id == 1 && strcmp(#b, \"f32\")) fails++;\n"
    "#define EXPECT(e, v) do { int g_ = (e); if (g_ != (v)) { \\\n"
    "    printf(\"line %d: %s = %d, expected %d\\n\", __LINE__, #e, g_, (v)); fails++; } } while (0)\n"
    "int main(void)\n"
    "{\n"
    "    int fails = 0, i;\n"
    "    int np = 0 NORMTUNE_RMSNORM_BWD_PERSISTENT_CONFIGS(CNT4);\n"
    "    int nn = 0 NORMTUNE_RMSNORM_BWD_NAIVE_CONFIGS(CNT2);\n"
    "    NORMTUNE_RMSNORM_BWD_NAIVE_CONFIGS(STR2)\n"
    "    EXPECT(NORMTUNE_NCONFIGS, 5);\n"
    "    EXPECT(np, 3);\n"
    "    EXPECT(nn, 2);\n"
    "    EXPECT(np + nn, NORMTUNE_NCONFIGS);\n"
    "    EXPECT(NORMTUNE_TABLE_SIZE, 6);\n"
    "    EXPECT(NORMTUNE_DISPATCH_VERSION, 1);\n"
    "    EXPECT(strcmp(NORMTUNE_SOURCE_HASH, \"" HASH "\"), 0);\n"
    "    EXPECT(normtune_config_family(1), NORMTUNE_FAMILY_RMSNORM_BWD_NAIVE);\n"
    "    EXPECT(normtune_config_family(4), NORMTUNE_FAMILY_RMSNORM_BWD_PERSISTENT);\n"
    "    EXPECT(normtune_config_family(5), -1);\n"
    "    EXPECT(normtune_config_param(1, 1), 1);   /* partial f32 = choice 1 */\n"
    "    EXPECT(normtune_config_param(3, 1), 0);   /* partial bf16 = choice 0 */\n"
    "    EXPECT(normtune_config_param(4, 0), 512);\n"
    "    EXPECT(normtune_config_param(1, 2), -1);\n"
    "    for (i = 1; i < NORMTUNE_TABLE_SIZE; i++)\n"
    "        if (normtune_table[i - 1].N > normtune_table[i].N ||\n"
    "            (normtune_table[i - 1].N == normtune_table[i].N &&\n"
    "             normtune_table[i - 1].M >= normtune_table[i].M)) fails++;\n"
    "    /* exact shapes */\n"
    "    EXPECT(normtune_lookup(2048, 1024, 0), 0);\n"
    "    EXPECT(look(16384, 1024), 1);\n"
    "    EXPECT(look(65536, 1024), 0);\n"
    "    EXPECT(look(2048, 4096), 2);\n"
    "    EXPECT(look(65536, 4096), 3);\n"
    "    EXPECT(look(16384, 8192), 4);\n"
    "    /* same N, in-between M: nearest by ratio; a tie goes to the larger M */\n"
    "    EXPECT(look(4096, 1024), 0);     /* x2 from 2048, x4 from 16384 */\n"
    "    EXPECT(look(8192, 1024), 1);     /* x4 from 2048, x2 from 16384 */\n"
    "    EXPECT(look(32768, 1024), 0);    /* x2 either side: 65536 wins */\n"
    "    EXPECT(look(20000, 4096), 3);    /* 2048 is x9.8 away, 65536 x3.3 */\n"
    "    /* in-between N: nearest N; a tie goes to the larger N */\n"
    "    EXPECT(look(16384, 2048), 1);    /* N 1024 (1024 away), exact M */\n"
    "    EXPECT(look(16384, 6144), 4);    /* 4096 and 8192 both 2048 away */\n"
    "    EXPECT(look(2048, 5000), 2);     /* N 4096 nearest */\n"
    "    /* out of range */\n"
    "    EXPECT(look(1, 512), 0);         /* below everything: N 1024, M 2048 */\n"
    "    EXPECT(look(0, 512), 0);         /* M < 1 treated as 1 */\n"
    "    EXPECT(look(1000000000LL, 1000000LL), 4);\n"
    "    EXPECT(look(10000000000LL, 1024), 0); /* huge M: 65536 */\n"
    "    /* refusals fall through to the next candidate */\n"
    "    refused[0] = 1;\n"
    "    EXPECT(look(2048, 1024), 1);     /* same N: 16384 before 65536 */\n"
    "    refused[1] = 1;\n"
    "    EXPECT(look(2048, 1024), 2);     /* N 1024 used up: N 4096, M 2048 */\n"
    "    refused[2] = 1;\n"
    "    EXPECT(look(2048, 1024), 3);\n"
    "    refused[3] = 1;\n"
    "    EXPECT(look(2048, 1024), 4);\n"
    "    refused[4] = 1;\n"
    "    EXPECT(look(2048, 1024), NORMTUNE_DEFAULT_CONFIG);\n"
    "    EXPECT(look(16384, 8192), -1);\n"
    "    memset(refused, 0, sizeof refused);\n"
    "    for (i = 0; i < NORMTUNE_NCONFIGS; i++)\n"
    "        refused[i] = normtune_config_family(i) == NORMTUNE_FAMILY_RMSNORM_BWD_PERSISTENT;\n"
    "    EXPECT(look(2048, 8192), 3);     /* N 8192 refused; N 4096: 65536 naive */\n"
    "    EXPECT(look(2048, 1024), 1);\n"
    "    EXPECT(bad_args, 0);\n"
    "    EXPECT(other_tu(), 4);\n"
    "    if (fails) printf(\"%d lookup checks failed\\n\", fails);\n"
    "    return fails ? 1 : 0;\n"
    "}\n";

/* A second translation unit including the same header. */
static const char other_prog[] =
    "#include \"normtune_dispatch.h\"\n"
    "int other_tu(void);\n"
    "int other_tu(void) { return normtune_lookup(16384, 8192, 0) + normtune_table[0].config; }\n";

TEST(header_compiles_and_looks_up) {
    char path[700], cmd[3000];
    snprintf(path, sizeof path, "%s/lookup.c", t_tmpdir());
    spit(path, lookup_prog);
    snprintf(path, sizeof path, "%s/other.c", t_tmpdir());
    spit(path, other_prog);
    const char *d = t_tmpdir();
    /* the header alone, strictest C */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && printf '#include \"normtune_dispatch.h\"\\n#include \"normtune_dispatch.h\"\\n"
             "int x;\\n' > alone.c && %s -std=c99 -Wall -Wextra -Werror -pedantic -Wshadow "
             "-Wstrict-prototypes -c alone.c -o alone.o",
             d, cc());
    CHECK(sh(cmd) == 0, "header alone does not compile: %s", cmd);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && %s -std=c99 -Wall -Wextra -Werror -pedantic -o lookup lookup.c other.c "
             "&& ./lookup",
             d, cc());
    int rc = sh(cmd);
    CHECK(rc == 0, "lookup program failed (status %d): %s", rc, cmd);
    /* as C++ too (nvcc compiles it as C++), when a C++ compiler is here */
    if (sh("command -v c++ >/dev/null 2>&1") == 0) {
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && cp lookup.c lookup.cc && cp other.c other.cc && c++ -std=c++11 -Wall "
                 "-Wextra -Werror -pedantic -o lookupxx lookup.cc other.cc && ./lookupxx",
                 d);
        rc = sh(cmd);
        CHECK(rc == 0, "lookup program as C++ failed (status %d): %s", rc, cmd);
    }
}

TEST(refusals) {
    store_best_row r[8];
    store_prov p;
    char err[512], path[700];
    int n = fixture(r, &p);
    long len = -1;
    snprintf(path, sizeof path, "%s/refused.h", t_tmpdir());

    snprintf(p.src_hash, sizeof p.src_hash, "mixed");
    err[0] = 0;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "mixed source hash accepted");
    CHECK(strstr(err, "mixed") != NULL, "message: %s", err);
    free(slurp(path, &len));
    CHECK(len == 0, "a refused export wrote %ld bytes", len);
    fixture(r, &p);

    err[0] = 0;
    CHECK(write_to(path, r, 0, &p, err, sizeof err) == -1, "zero rows accepted");
    CHECK(strstr(err, "no ") != NULL, "message: %s", err);

    snprintf(r[2].src_hash, sizeof r[2].src_hash, "fedcba9876543210");
    err[0] = 0;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "row with another source hash accepted");
    fixture(r, &p);

    snprintf(p.src_hash, sizeof p.src_hash, "xyz");
    for (int i = 0; i < n; i++) snprintf(r[i].src_hash, sizeof r[i].src_hash, "xyz");
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "malformed source hash accepted");
    fixture(r, &p);

    r[3].M = r[5].M;                   /* (1024, 65536) twice */
    err[0] = 0;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "two rows for one shape accepted");
    CHECK(strstr(err, "65536") != NULL, "message: %s", err);
    fixture(r, &p);

    snprintf(r[1].family, sizeof r[1].family, "rmsnorm_bwd.bogus");
    err[0] = 0;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "unknown family accepted");
    CHECK(strstr(err, "bogus") != NULL, "message: %s", err);
    fixture(r, &p);

    snprintf(r[1].params, sizeof r[1].params, "block=128,chunks=1");
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "incomplete params accepted");
    fixture(r, &p);

    snprintf(r[4].dtype, sizeof r[4].dtype, "f16");
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "two dtypes accepted");
    fixture(r, &p);

    /* hostile provenance text cannot break the header */
    snprintf(p.device, sizeof p.device, "evil */ \"dev\\?\?/ \001");
    CHECK(write_to(path, r, n, &p, err, sizeof err) == 0, "export: %s", err);
    char cmd[1500];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && printf '#include \"refused.h\"\\nint y;\\n' > evil.c && %s -std=c99 "
             "-Wall -Wextra -Werror -pedantic -c evil.c -o evil.o",
             t_tmpdir(), cc());
    CHECK(sh(cmd) == 0, "header with a hostile device name does not compile");
}

/* Run cmd_export in this process with the words given; its exit code. */
static int export_cmd6(const char *a1, const char *a2, const char *a3, const char *a4,
                       const char *a5, const char *a6) {
    char *argv[8] = {(char *)"export"};
    int argc = 1;
    const char *in[] = {a1, a2, a3, a4, a5, a6};
    for (int i = 0; i < 6 && in[i]; i++) argv[argc++] = (char *)in[i];
    fflush(stdout);
    return cmd_export(argc, argv);
}
#define export_cmd(a, b, c, d, e) export_cmd6(a, b, c, d, e, NULL)

TEST(command_line) {
    char db[700], out[700];
    struct stat st;
    snprintf(db, sizeof db, "%s/missing.db", t_tmpdir());
    snprintf(out, sizeof out, "%s/never.h", t_tmpdir());
    CHECK(export_cmd("--help", NULL, NULL, NULL, NULL) == 0, "--help");
    CHECK(export_cmd(NULL, NULL, NULL, NULL, NULL) == 2, "no arguments is not a usage error");
    CHECK(export_cmd("--db", db, NULL, NULL, NULL) == 2, "no -o is not a usage error");
    CHECK(export_cmd("--db", db, "-o", out, "--bogus") == 2, "unknown option");
    CHECK(export_cmd("--db", db, "-o", out, "extra") == 2, "extra argument");
    CHECK(export_cmd("--db", db, "-o", out, NULL) == 1, "missing database is not a failure");
    CHECK(stat(out, &st) != 0, "a failed export left %s", out);
    CHECK(stat(db, &st) != 0, "a read-only export created the database");
}

/* An H200 of the given uuid, as the tests' results are recorded under. */
static void test_device(nt_device *d, const char *uuid) {
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "NVIDIA H200");
    snprintf(d->uuid, sizeof d->uuid, "%s", uuid);
    d->cc_major = 9;
}

/* The dw error put() records (0: none recorded) and a dx error put()
 * records beside it (0: none). */
static double put_err_dw, put_err_dx;

/* Put one ok result for (M, N, family, params) under sweep sw. */
static int put(store *db, int64_t dev, int64_t sw, int64_t M, int64_t N, const char *fam,
               const char *params, double us, char *err, size_t errlen) {
    static nt_result res;
    store_key k;
    memset(&k, 0, sizeof k);
    memset(&res, 0, sizeof res);
    k.device = dev;
    k.family = fam;
    k.params = params;
    k.src_hash = HASH;
    k.op = "rmsnorm_bwd";
    k.dtype = "bf16";
    k.shape.M = M;
    k.shape.N = N;
    k.timing.warmup = 1;
    k.timing.min_samples = 2;
    k.timing.max_samples = 4;
    k.timing.rel_ci = 0.01;
    res.status = NT_OK;
    res.median_us = res.p10_us = res.p90_us = us;
    res.nsamples = 2;
    res.samples[0] = res.samples[1] = us;
    res.gbps = 6.0 * (double)M * (double)N / (us * 1e3);
    if (put_err_dx > 0) res.errs[res.nerr++] = (nt_error){"dx", put_err_dx, 1e-2, 0};
    if (put_err_dw > 0) res.errs[res.nerr++] = (nt_error){"dw", put_err_dw, NT_TOL_F32, 0};
    return store_put(db, sw, &k, &res, err, errlen);
}

/* The export serves an fp32 dw: a result whose dw error exceeds NT_TOL_F32
 * (bf16 partials, 1.6e-3 measured) is never the config of its shape, even
 * when it is the fastest; the next fastest precise one is. */
TEST(dw_precision) {
    char db[700], out[700], err[512] = "";
    store *s = NULL;
    nt_device d;
    int64_t dev = 0, sw = 0;
    test_device(&d, "GPU-prec");
    snprintf(db, sizeof db, "%s/prec.db", t_tmpdir());
    snprintf(out, sizeof out, "%s/prec.h", t_tmpdir());
    int ok = store_open(&s, db, STORE_CREATE, err, sizeof err) == 0 &&
             store_device(s, &d, &dev, err, sizeof err) == 0 &&
             store_sweep_begin(s, dev, "t.lua", "00", 100.0, &sw, err, sizeof err) == 0;
    put_err_dw = 1.6e-3;
    ok = ok && put(s, dev, sw, 1024, 1024, NAIVE, "nsplit=32,partial=bf16", 7.8, err, sizeof err) == 0;
    put_err_dw = 2e-7;
    put_err_dx = 0.5;                   /* only dw's error decides */
    ok = ok && put(s, dev, sw, 1024, 1024, PERS, "block=128,chunks=1,stages=3,k=2", 8.3, err, sizeof err) == 0 &&
         put(s, dev, sw, 1024, 1024, NAIVE, "nsplit=64,partial=f32", 9.0, err, sizeof err) == 0;
    put_err_dx = 0;
    put_err_dw = 1.6e-3;                /* a shape with no precise result at all */
    ok = ok && put(s, dev, sw, 4096, 1024, NAIVE, "nsplit=32,partial=bf16", 9.9, err, sizeof err) == 0 &&
         store_sweep_end(s, sw, "done", err, sizeof err) == 0;
    put_err_dw = 0;
    CHECK(ok, "making the database: %s", err);
    if (s) store_close(s);
    if (!ok) return;
    CHECK(export_cmd("--db", db, "-o", out, NULL) == 0, "export failed");
    long n = 0;
    char *h = slurp(out, &n);
    CHECK(h != NULL, "no header");
    if (!h) return;
    CHECK(strstr(h, "partial=bf16") == NULL && strstr(h, ", bf16)") == NULL,
          "a config with bf16 partials was exported for an fp32 dw");
    CHECK(strstr(h, "/* 0: block=128,chunks=1,stages=3,k=2 */") != NULL,
          "the fastest precise config is not the one exported");
    CHECK(strstr(h, "{1024LL, 1024LL, 0, 8.300,") != NULL, "1024 x 1024 does not use it");
    CHECK(strstr(h, "#define NORMTUNE_TABLE_SIZE 1\n") != NULL,
          "a shape with no precise result is in the table");
    free(h);
}

TEST(end_to_end) {
    char db[700], out[700], out2[700], err[512] = "";
    store *s = NULL;
    nt_device d;
    int64_t dev = 0, sw = 0;
    test_device(&d, "GPU-test");
    snprintf(d.driver, sizeof d.driver, "13000");
    snprintf(d.runtime, sizeof d.runtime, "13000");
    snprintf(d.nvrtc, sizeof d.nvrtc, "13.0");
    snprintf(db, sizeof db, "%s/e2e.db", t_tmpdir());
    snprintf(out, sizeof out, "%s/e2e/dispatch.h", t_tmpdir());
    snprintf(out2, sizeof out2, "%s/e2e/dispatch2.h", t_tmpdir());
    char dir[720];
    snprintf(dir, sizeof dir, "%s/e2e", t_tmpdir());
    mkdir(dir, 0755);
    int ok = store_open(&s, db, STORE_CREATE, err, sizeof err) == 0 &&
             store_device(s, &d, &dev, err, sizeof err) == 0 &&
             store_sweep_begin(s, dev, "t.lua", "00", 100.0, &sw, err, sizeof err) == 0 &&
             put(s, dev, sw, 2048, 1024, PERS, "block=128,chunks=1,stages=2,k=1", 9.5, err, sizeof err) == 0 &&
             put(s, dev, sw, 2048, 1024, NAIVE, "nsplit=64,partial=f32", 19.5, err, sizeof err) == 0 &&
             put(s, dev, sw, 16384, 1024, NAIVE, "nsplit=64,partial=f32", 60.0, err, sizeof err) == 0 &&
             put(s, dev, sw, 2048, 4096, PERS, "block=256,chunks=2,stages=2,k=0", 25.0, err, sizeof err) == 0 &&
             store_sweep_end(s, sw, "done", err, sizeof err) == 0;
    CHECK(ok, "making the database: %s", err);
    if (s) store_close(s);
    if (!ok) return;
    CHECK(export_cmd("--db", db, "-o", out, NULL) == 0, "export failed");
    CHECK(export_cmd("--db", db, "--device", "NVIDIA H200", "-o") == 2, "-o without a value");
    char *argv[] = {"export", "--db", db, "--device", "GPU-test", "--output", out2};
    fflush(stdout);
    CHECK(cmd_export(7, argv) == 0, "export by uuid failed");
    long la = -1, lb = -2;
    char *a = slurp(out, &la), *b = slurp(out2, &lb);
    CHECK(a && b && la == lb && !memcmp(a, b, (size_t)la), "two exports of one database differ");
    if (a) {
        CHECK(strstr(a, "#define NORMTUNE_TABLE_SIZE 3\n") != NULL, "3 shapes expected");
        CHECK(strstr(a, "#define NORMTUNE_NCONFIGS 3\n") != NULL, "3 configs expected");
        CHECK(strstr(a, "{1024LL, 2048LL, 0, 9.500,") != NULL, "best of (2048, 1024) is not the persistent one");
        CHECK(strstr(a, "X(1, 64, f32)") != NULL, "naive config");
        CHECK(strstr(a, "NVIDIA H200 (cc 9.0") != NULL, "device in banner");
    }
    free(a);
    free(b);
    struct stat st;
    mode_t um = umask(0);
    umask(um);
    CHECK(stat(out, &st) == 0 && (st.st_mode & 0777) == (0666 & ~um),
          "header mode %o, not %o as fopen would make it", (unsigned)(st.st_mode & 0777),
          (unsigned)(0666 & ~um));
    /* nothing but the two headers in the output directory: no temp files */
    char cmd[900];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 2", dir);
    CHECK(sh(cmd) == 0, "temporary files left in %s", dir);
    CHECK(export_cmd6("--db", db, "--device", "NVIDIA B200", "-o", out) == 1, "unknown device");
    a = slurp(out, &la);
    CHECK(a && la == lb, "a failed export changed the existing header");
    free(a);
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 2", dir);
    CHECK(sh(cmd) == 0, "a failed export left files in %s", dir);
}

int main(void) {
    RUN(write_deterministic);
    RUN(header_compiles_and_looks_up);
    RUN(refusals);
    RUN(command_line);
    RUN(end_to_end);
    RUN(dw_precision);
    T_END();
}
