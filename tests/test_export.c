/* test_export.c -- the dispatch header writer (nt_export_write, format 2)
 * and the `normtune export` command line.
 *
 * Rows are made by hand: three N, several M, both families of the op, one
 * config used by two shapes and one that is the op's fallback.  The header
 * must come out byte-identical on a second call (and for the rows in another
 * order).  It must hold every problem the ops allow (the tuned one with its
 * entries, every other dtype combination with its op's fallback), families
 * with their hashes, configs with kernel lists that hold every kernel their
 * plans launch, and kernels whose X-macro name and code are the same text as
 * the data.  A C program written here includes it, checks the lookup per
 * problem on exact, in-between and out-of-range shapes with a can_run that
 * refuses configs (and falls back), and is compiled with
 * `$CC -std=c99 -Wall -Wextra -Werror -pedantic` (and as C++) and run; two
 * translation units including the header must link together.  Refusals: an
 * unknown op, family or dtypes, params that do not validate, two rows for a
 * shape, a malformed hash, rows of one family with two source hashes (the
 * message names the family), a config too imprecise for its shape's
 * dtypes.  Through a database: results whose error exceeds what their
 * dtype asks are never exported, by name or uuid the same bytes, a failed
 * export leaves the old header. */
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/t.h"
#include "tuner/cli.h"
#include "db/store.h"
#include "tuner/export.h"

#define HASH "0123456789abcdef"
#define OP "rmsnorm_bwd"
#define DT "x=bf16,w=bf16,dw=f32"
#define PERS "rmsnorm_bwd.persistent"
#define NAIVE "rmsnorm_bwd.naive"

static void row(store_best_row *r, int64_t M, int64_t N, const char *family, const char *params,
                double us) {
    memset(r, 0, sizeof *r);
    r->M = M;
    r->N = N;
    snprintf(r->op, sizeof r->op, OP);
    snprintf(r->dtype, sizeof r->dtype, DT);
    snprintf(r->family, sizeof r->family, "%s", family);
    snprintf(r->params, sizeof r->params, "%s", params);
    snprintf(r->src_hash, sizeof r->src_hash, HASH);
    r->median_us = us;
    r->gbps = 3.0 * (double)M * (double)N * 2.0 / (us * 1e3);
    r->pct_copy = 50.0;
}

/* The fixture, deliberately not in (N, M) order.  The op's fallback
 * (naive nsplit=64,partial=f32) is config 0; sorted, the entries are
 *   (1024, 2048)  P block=128,chunks=1,stages=2,k=1  -> config 1
 *   (1024, 16384) N nsplit=64,partial=f32            -> config 0 (the fallback's)
 *   (1024, 65536) P block=128,...  (again)           -> config 1
 *   (4096, 2048)  P block=256,chunks=2,stages=2,k=0  -> config 2
 *   (4096, 65536) N nsplit=128,partial=f32           -> config 3
 *   (8192, 16384) P block=512,chunks=2,stages=3,k=2  -> config 4 */
static int fixture(store_best_row *r, store_prov *p) {
    row(&r[0], 65536, 4096, NAIVE, "nsplit=128,partial=f32", 400.0);
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

/* The number of problems the header must hold beyond the tuned one: every
 * dtype combination of every op with a fallback that the op accepts at
 * some N, counted here independently of the writer. */
static int expected_problems(void) {
    int n = 0;
    char why[256];
    for (int o = 0; nt_ops[o]; o++) {
        const nt_op *op = nt_ops[o];
        int d[NT_MAX_SLOTS] = {0};
        for (;;) {
            nt_problem p;
            int ok = 1, acc = 0;
            nt_problem_init(&p, op, 1, 8);
            for (int s = 0; s < op->nslots; s++) {
                ok &= (op->slots[s].allowed >> d[s]) & 1u;
                p.dtype[s] = d[s];
            }
            for (int N = 8; ok && !acc && N <= NT_MAX_N; N += 8) {
                p.N = N;
                acc = nt_problem_check(&p, why, sizeof why) == 0;
            }
            char dt[160];
            nt_dtypes_canon(&p, dt, sizeof dt);
            n += acc && (op->fallback || (!strcmp(op->name, OP) && !strcmp(dt, DT)));
            int s = op->nslots - 1;
            while (s >= 0 && ++d[s] == NT_NDTYPES) d[s--] = 0;
            if (s < 0) break;
        }
    }
    return n;
}

static char hdr[600];                  /* the fixture's header, made once */

TEST(write_deterministic) {
    store_best_row r[8];
    store_prov p;
    char err[512] = "", other[600], want[160];
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
        CHECK(strstr(a, "#define NORMTUNE_DISPATCH_VERSION 2\n") != NULL, "version macro");
        CHECK(strstr(a, "#define NORMTUNE_NCONFIGS 5\n") != NULL, "NCONFIGS is not 5");
        CHECK(strstr(a, "#define NORMTUNE_NENTRIES 6\n") != NULL, "NENTRIES is not 6");
        snprintf(want, sizeof want, "#define NORMTUNE_NPROBLEMS %d\n", expected_problems());
        CHECK(strstr(a, want) != NULL, "not every problem the ops allow: want %s", want);
        CHECK(strstr(a, "NVIDIA H200 (cc 9.0") != NULL, "device and cc not in banner");
        CHECK(strstr(a, "2024-05-06T07:08:09Z") != NULL, "newest result time not in banner");
        CHECK(strstr(a, "13.0") != NULL, "NVRTC version not in banner");
        CHECK(strstr(a, "X(0, \"" NAIVE "\", \"" HASH "\")") && strstr(a, "\"" PERS "\", \"" HASH "\")"),
              "families with their hash");
        CHECK(strstr(a, "X(0, \"" OP "\", \"" DT "\", 0, 0, 6)") != NULL,
              "the tuned problem: fallback 0, entries 0..6");
        CHECK(strstr(a, ", \"" DT "\", \"nsplit=64,partial=f32\", ") != NULL, "fallback config");
        CHECK(strstr(a, ", \"" DT "\", \"block=128,chunks=1,stages=2,k=1\", ") != NULL, "config 1");
        /* table order: (N, M) */
        const char *e1 = strstr(a, "{1024LL, 2048LL, 1,"), *e2 = strstr(a, "{1024LL, 16384LL, 0,"),
                   *e3 = strstr(a, "{4096LL, 2048LL, 2,"), *e4 = strstr(a, "{8192LL, 16384LL, 4,");
        CHECK(e1 && e2 && e3 && e4 && e1 < e2 && e2 < e3 && e3 < e4, "table rows missing or unsorted");
    }
    free(a);
}

/* The C program that includes the header and checks the lookup and the
 * tables (its kernel X-macro expanded with the name only). */
static const char lookup_prog[] =
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "#include \"normtune_dispatch.h\"\n"
    "int other_tu(void);\n"
    "static int refused[NORMTUNE_NCONFIGS];\n"
    "static long long wantM, wantN;\n"
    "static int bad_args, token;\n"
    "static int can(void *ctx, int c, long long M, long long N)\n"
    "{\n"
    "    if (ctx != &token || M != wantM || N != wantN || c < 0 || c >= NORMTUNE_NCONFIGS)\n"
    "        bad_args++;\n"
    "    return !refused[c];\n"
    "}\n"
    "static int look(long long M, long long N)\n"
    "{\n"
    "    wantM = M; wantN = N;\n"
    "    return normtune_lookup(0, M, N, can, &token);\n"
    "}\n"
    "#define FAMNAME(id, name, hash) name,\n"
    "static const char *const fams[] = { NORMTUNE_FAMILIES(FAMNAME) 0 };\n"
    "#define KCHECK(id, name, ...) if (strcmp(name, normtune_kernel_names[id]) || \\\n"
    "    strcmp(name, #__VA_ARGS__) || id != nk++) fails++;\n"
    "#define EXPECT(e, v) do { int g_ = (e); if (g_ != (v)) { \\\n"
    "    printf(\"line %d: %s = %d, expected %d\\n\", __LINE__, #e, g_, (v)); fails++; } } while (0)\n"
    "int main(void)\n"
    "{\n"
    "    int fails = 0, i, j, nk = 0, pers = -1;\n"
    "    for (i = 0; fams[i]; i++) if (!strcmp(fams[i], \"" PERS "\")) pers = i;\n"
    "    NORMTUNE_KERNELS(KCHECK)\n"
    "    EXPECT(nk, NORMTUNE_NKERNELS);\n"
    "    EXPECT(NORMTUNE_NCONFIGS, 5);\n"
    "    EXPECT(NORMTUNE_NENTRIES, 6);\n"
    "    EXPECT(NORMTUNE_DISPATCH_VERSION, 2);\n"
    "    EXPECT(pers >= 0, 1);\n"
    "    EXPECT(normtune_problem_index(\"" OP "\", \"" DT "\"), 0);\n"
    "    EXPECT(normtune_problem_index(\"" OP "\", \"x=bf16\"), -1);\n"
    "    EXPECT(normtune_problem_index(\"nope\", \"" DT "\"), -1);\n"
    "    EXPECT(normtune_problems[0].fallback, 0);\n"
    "    EXPECT(strcmp(normtune_configs[0].params, \"nsplit=64,partial=f32\"), 0);\n"
    "    EXPECT(normtune_configs[4].family, pers);\n"
    "    EXPECT(normtune_tuned_config(0, 2048, 1024), 1);\n"
    "    EXPECT(normtune_tuned_config(0, 4096, 1024), -1);\n"
    "    EXPECT(normtune_tuned_config(7, 2048, 1024), -1);\n"
    "    EXPECT(normtune_kernel_name(-1) == 0, 1);\n"
    "    EXPECT(normtune_kernel_name(NORMTUNE_NKERNELS) == 0, 1);\n"
    "    EXPECT(normtune_config_kernel(0, normtune_configs[0].nk), -1);\n"
    "    for (i = 0; i < NORMTUNE_NCONFIGS; i++) {\n"
    "        if (normtune_configs[i].nk < 1) fails++;\n"
    "        for (j = 1; j < normtune_configs[i].nk; j++)\n"
    "            if (normtune_config_kernel(i, j - 1) >= normtune_config_kernel(i, j)) fails++;\n"
    "    }\n"
    "    for (i = 0; i < NORMTUNE_NPROBLEMS; i++)\n"
    "        if (normtune_problems[i].fallback < 0 && normtune_problems[i].count == 0) fails++;\n"
    "    for (i = 1; i < NORMTUNE_NENTRIES; i++)\n"
    "        if (normtune_entries[i - 1].N > normtune_entries[i].N ||\n"
    "            (normtune_entries[i - 1].N == normtune_entries[i].N &&\n"
    "             normtune_entries[i - 1].M >= normtune_entries[i].M)) fails++;\n"
    "    /* exact shapes */\n"
    "    EXPECT(normtune_lookup(0, 2048, 1024, 0, 0), 1);\n"
    "    EXPECT(look(16384, 1024), 0);\n"
    "    EXPECT(look(65536, 1024), 1);\n"
    "    EXPECT(look(2048, 4096), 2);\n"
    "    EXPECT(look(65536, 4096), 3);\n"
    "    EXPECT(look(16384, 8192), 4);\n"
    "    /* same N, in-between M: nearest by ratio; a tie goes to the larger M */\n"
    "    EXPECT(look(4096, 1024), 1);     /* x2 from 2048, x4 from 16384 */\n"
    "    EXPECT(look(8192, 1024), 0);     /* x4 from 2048, x2 from 16384 */\n"
    "    EXPECT(look(32768, 1024), 1);    /* x2 either side: 65536 wins */\n"
    "    EXPECT(look(20000, 4096), 3);    /* 2048 is x9.8 away, 65536 x3.3 */\n"
    "    /* in-between N: nearest N; a tie goes to the larger N */\n"
    "    EXPECT(look(16384, 2048), 0);    /* N 1024 (1024 away), exact M */\n"
    "    EXPECT(look(16384, 6144), 4);    /* 4096 and 8192 both 2048 away */\n"
    "    EXPECT(look(2048, 5000), 2);     /* N 4096 nearest */\n"
    "    /* out of range */\n"
    "    EXPECT(look(1, 512), 1);         /* below everything: N 1024, M 2048 */\n"
    "    EXPECT(look(0, 512), 1);         /* M < 1 treated as 1 */\n"
    "    EXPECT(look(1000000000LL, 1000000LL), 4);\n"
    "    EXPECT(look(10000000000LL, 1024), 1); /* huge M: 65536 */\n"
    "    EXPECT(normtune_lookup(1, 64, 64, can, &token), -1); /* no such problem */\n"
    "    EXPECT(normtune_lookup(-1, 64, 64, can, &token), -1);\n"
    "    /* refusals fall through to the next candidate, then the fallback */\n"
    "    refused[1] = 1;\n"
    "    EXPECT(look(2048, 1024), 0);     /* same N: 16384 before 65536 */\n"
    "    refused[0] = 1;\n"
    "    EXPECT(look(2048, 1024), 2);     /* N 1024 used up: N 4096, M 2048 */\n"
    "    refused[2] = 1;\n"
    "    EXPECT(look(2048, 1024), 3);\n"
    "    refused[3] = 1;\n"
    "    EXPECT(look(2048, 1024), 4);\n"
    "    refused[4] = 1;\n"
    "    EXPECT(look(2048, 1024), 0);     /* the fallback, not asked */\n"
    "    EXPECT(look(16384, 8192), 0);\n"
    "    memset(refused, 0, sizeof refused);\n"
    "    for (i = 0; i < NORMTUNE_NCONFIGS; i++) refused[i] = normtune_configs[i].family == pers;\n"
    "    EXPECT(look(2048, 8192), 3);     /* N 8192 refused; N 4096: 65536 naive */\n"
    "    EXPECT(look(2048, 1024), 0);\n"
    "    EXPECT(bad_args, 0);\n"
    "    EXPECT(other_tu(), 5);\n"
    "    if (fails) printf(\"%d lookup checks failed\\n\", fails);\n"
    "    return fails ? 1 : 0;\n"
    "}\n";

/* A second translation unit including the same header. */
static const char other_prog[] =
    "#include \"normtune_dispatch.h\"\n"
    "int other_tu(void);\n"
    "int other_tu(void) { return normtune_lookup(0, 16384, 8192, 0, 0) + normtune_entries[0].config; }\n";

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

/* Every config's kernel list holds the kernels its plans launch: at every
 * tuned shape of the config, and for the fallback at N = 8 and NT_MAX_N
 * (M = 1), parsed back from the header's text. */
TEST(kernel_lists) {
    long len = 0;
    char *a = slurp(hdr, &len);
    CHECK(a != NULL, "no header");
    if (!a) return;
    store_best_row r[8];
    store_prov p;
    int n = fixture(r, &p), checked = 0;
    for (int i = 0; i <= n; i++) {
        const char *fam = i < n ? r[i].family : NAIVE;
        const char *par = i < n ? r[i].params : "nsplit=64,partial=f32";
        int64_t Ns[2] = {i < n ? r[i].N : 8, i < n ? r[i].N : NT_MAX_N};
        /* the config's line: X(id, family, "dtypes", "params", first, count) */
        char key[300];
        snprintf(key, sizeof key, ", \"" DT "\", \"%s\", ", par);
        const char *line = strstr(a, key);
        int kfirst = -1, nk = -1;
        CHECK(line != NULL, "no config line for %s", par);
        if (!line || sscanf(line + strlen(key), "%d, %d)", &kfirst, &nk) != 2) continue;
        /* the kernel ids, from the data array */
        const char *arr = strstr(a, "normtune_config_kernels[NORMTUNE_NCONFIG_KERNELS + 1] = {");
        int ids[64], nid = 0;
        if (arr) arr = strchr(arr, '{') + 1;
        for (int k = 0; arr && k < kfirst + nk && k < 64; k++) {
            while (*arr && !(*arr == '-' || (*arr >= '0' && *arr <= '9'))) {
                if (*arr == '/' && arr[1] == '*') arr = strstr(arr, "*/") + 2;
                else arr++;
            }
            int v = (int)strtol(arr, (char **)&arr, 10);
            if (k >= kfirst) ids[nid++] = v;
        }
        for (int m = 0; m < 2; m++) {
            nt_problem pr;
            nt_params pa;
            nt_plan pl;
            char err[256];
            const nt_family *f = nt_family_find(fam);
            nt_problem_init(&pr, nt_op_find(OP), i < n ? r[i].M : 1, Ns[m]);
            CHECK(nt_dtypes_parse(&pr, DT, err, sizeof err) == 0 && nt_params_parse(par, &pa) == 0 &&
                      f->plan(&pa, &pr, NULL, &pl, err, sizeof err) == 0,
                  "plan %s %s: %s", fam, par, err);
            for (int l = 0; l < pl.nlaunch; l++) {
                char q[200];
                int found = 0;
                snprintf(q, sizeof q, "    \"%s\",\n", pl.l[l].name);
                const char *names = strstr(a, "normtune_kernel_names[NORMTUNE_NKERNELS + 1] = {\n");
                const char *hit = names ? strstr(names, q) : NULL;
                int id = -1;
                for (const char *c = names ? strchr(names, '\n') + 1 : NULL; c && hit && c <= hit;
                     c = strchr(c, '\n') + 1)
                    id++;
                for (int k = 0; k < nid; k++) found |= ids[k] == id;
                CHECK(hit && found, "%s %s N=%lld: kernel %s (id %d) not in its list", fam, par,
                      (long long)Ns[m], pl.l[l].name, id);
                snprintf(q, sizeof q, "X(%d, \"%s\", %s)", id, pl.l[l].name, pl.l[l].name);
                CHECK(strstr(a, q) != NULL, "no X-macro line %s", q);
                checked++;
            }
        }
    }
    CHECK(checked >= 2 * (n + 1) * 2, "only %d launches checked", checked);
    free(a);
}

TEST(refusals) {
    store_best_row r[8];
    store_prov p;
    char err[512], path[700];
    int n = fixture(r, &p);
    snprintf(path, sizeof path, "%s/refused.h", t_tmpdir());

    /* one family, two source hashes: refused naming the family */
    snprintf(r[2].src_hash, sizeof r[2].src_hash, "fedcba9876543210");
    err[0] = 0;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "two hashes in one family accepted");
    CHECK(strstr(err, PERS) && strstr(err, "fedcba9876543210") && strstr(err, HASH),
          "message: %s", err);
    fixture(r, &p);
    /* ... but two families may have different hashes */
    for (int i = 0; i < n; i++)
        if (!strcmp(r[i].family, NAIVE)) snprintf(r[i].src_hash, sizeof r[i].src_hash, "fedcba9876543210");
    CHECK(write_to(path, r, n, &p, err, sizeof err) == 0, "per-family hashes refused: %s", err);
    char *h = slurp(path, NULL);
    CHECK(h && strstr(h, "\"" NAIVE "\", \"fedcba9876543210\")") && strstr(h, "\"" PERS "\", \"" HASH "\")"),
          "per-family hashes not in the header");
    free(h);
    fixture(r, &p);

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

    snprintf(r[1].op, sizeof r[1].op, "layernorm_bwd");
    err[0] = 0;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "unknown op accepted");
    CHECK(strstr(err, "layernorm_bwd") != NULL, "message: %s", err);
    fixture(r, &p);

    snprintf(r[1].params, sizeof r[1].params, "block=128,chunks=1");
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "incomplete params accepted");
    fixture(r, &p);

    snprintf(r[4].dtype, sizeof r[4].dtype, "x=bf16,w=bf16,dw=f64");
    err[0] = 0;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "unknown dtype accepted");
    CHECK(strstr(err, "f64") != NULL, "message: %s", err);
    fixture(r, &p);

    /* an fp32 dw through bf16 partials: too imprecise for its dtypes */
    snprintf(r[0].params, sizeof r[0].params, "nsplit=128,partial=bf16");
    err[0] = 0;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "an imprecise config was exported");
    CHECK(strstr(err, "precise") != NULL, "message: %s", err);
    fixture(r, &p);

    /* a shape its config cannot run (persistent N > block * chunks * 8) */
    snprintf(r[1].params, sizeof r[1].params, "block=32,chunks=1,stages=1,k=1");
    err[0] = 0;
    CHECK(write_to(path, r, n, &p, err, sizeof err) == -1, "a config that cannot run its shape");
    CHECK(strstr(err, "block=32") != NULL, "message: %s", err);
    fixture(r, &p);

    /* no rows: the fallbacks alone */
    CHECK(write_to(path, r, 0, &p, err, sizeof err) == 0, "fallbacks-only header: %s", err);
    h = slurp(path, NULL);
    CHECK(h && strstr(h, "#define NORMTUNE_NENTRIES 0\n"), "fallbacks-only header has entries");
    free(h);

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

/* nt_export_stale names the families measured with other sources. */
TEST(stale_note) {
    store_best_row r[8];
    store_prov p;
    char msg[512], cur[17];
    int n = fixture(r, &p);
    CHECK(nt_family_hash(nt_family_find(NAIVE), cur) == 0, "hash");
    for (int i = 0; i < n; i++)
        if (!strcmp(r[i].family, NAIVE)) snprintf(r[i].src_hash, sizeof r[i].src_hash, "%s", cur);
    int k = nt_export_stale(r, n, msg, sizeof msg);
    CHECK(k == 1 && strstr(msg, PERS) && !strstr(msg, NAIVE), "stale: %d '%s'", k, msg);
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
    CHECK(export_cmd("--db", db, "-o", out, "--op") == 2, "--op is gone (one header for all)");
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

/* Put one ok result for (M, N, family, params) under sweep sw, with the
 * family's current source hash. */
static int put(store *db, int64_t dev, int64_t sw, int64_t M, int64_t N, const char *fam,
               const char *params, double us, char *err, size_t errlen) {
    static nt_result res;
    char hash[17];
    store_key k;
    memset(&k, 0, sizeof k);
    memset(&res, 0, sizeof res);
    if (nt_family_hash(nt_family_find(fam), hash)) snprintf(hash, sizeof hash, HASH);
    k.device = dev;
    k.family = fam;
    k.params = params;
    k.src_hash = hash;
    k.op = OP;
    k.dtype = DT;
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
    if (put_err_dx > 0) res.errs[res.nerr++] = (nt_error){"dx", put_err_dx, 1e-2, NT_TOL_BF16};
    if (put_err_dw > 0) res.errs[res.nerr++] = (nt_error){"dw", put_err_dw, NT_TOL_F32, NT_TOL_F32};
    return store_put(db, sw, &k, &res, err, errlen);
}

/* A result whose error exceeds what its output's dtype asks (an fp32 dw
 * through bf16 partials, 1.6e-3) is never the config of its shape, even
 * when it is the fastest; the next fastest eligible one is. */
TEST(eligibility) {
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
    put_err_dx = 1e-3;
    ok = ok && put(s, dev, sw, 1024, 1024, PERS, "block=128,chunks=1,stages=3,k=2", 8.3, err, sizeof err) == 0 &&
         put(s, dev, sw, 1024, 1024, NAIVE, "nsplit=64,partial=f32", 9.0, err, sizeof err) == 0;
    put_err_dx = 0;
    put_err_dw = 1.6e-3;                /* a shape with no eligible result at all */
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
    CHECK(strstr(h, "partial=bf16") == NULL, "a config with bf16 partials was exported for an fp32 dw");
    CHECK(strstr(h, "\"block=128,chunks=1,stages=3,k=2\", ") != NULL,
          "the fastest eligible config is not the one exported");
    CHECK(strstr(h, "{1024LL, 1024LL, 1, 8.300,") != NULL, "1024 x 1024 does not use it");
    CHECK(strstr(h, "#define NORMTUNE_NENTRIES 1\n") != NULL,
          "a shape with no eligible result is in the table");
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
             put(s, dev, sw, 16384, 1024, NAIVE, "nsplit=32,partial=f32", 60.0, err, sizeof err) == 0 &&
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
        CHECK(strstr(a, "#define NORMTUNE_NENTRIES 3\n") != NULL, "3 shapes expected");
        CHECK(strstr(a, "#define NORMTUNE_NCONFIGS 4\n") != NULL, "4 configs expected");
        CHECK(strstr(a, "{1024LL, 2048LL, 1, 9.500,") != NULL, "best of (2048, 1024) is not the persistent one");
        CHECK(strstr(a, "\"nsplit=32,partial=f32\", ") != NULL, "naive config");
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
    RUN(kernel_lists);
    RUN(refusals);
    RUN(stale_note);
    RUN(command_line);
    RUN(end_to_end);
    RUN(eligibility);
    T_END();
}
