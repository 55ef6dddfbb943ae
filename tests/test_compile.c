/* test_compile.c -- NVRTC compilation, the cubin disk cache and the compiler
 * pool (tuner/compile.c), without a GPU.
 *
 * A tiny inline CUDA source exercises the machinery: a miss then a hit with
 * the same bytes, keys that change with options and arch, a syntax error
 * whose NVRTC log reaches the message, corrupt and torn cache entries that
 * are recompiled, resources parsed from the ptxas log, and a pool that hands
 * results back in submission order.  Then one plan of every real family is
 * compiled for sm_90a, and every file a family's sources include is checked
 * to be among them.  The cache lives in t_tmpdir() via NORMTUNE_CACHE. */
#include <ctype.h>
#include <dirent.h>
#include <stddef.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nvrtc.h>

#include "tests/t.h"
#include "tuner/compile.h"
#include "tuner/runner.h"
#include "kernels/nt.h"

static const char *hdr_names[] = {"tiny.cuh"};
static const char *hdr_texts[] = {
    "template <int B> __global__ void tiny(float *a) {\n"
    "    __shared__ float s[B];\n"
    "    s[threadIdx.x] = a[threadIdx.x];\n"
    "    __syncthreads();\n"
    "    a[threadIdx.x] = s[B - 1 - threadIdx.x] * 2.0f;\n"
    "}\n"
    "__global__ void plain(float *a) { a[0] = 1.0f; }\n"};

/* A source `name` including header names[0] (text texts[0]) with name
 * expressions e0 (and e1 if set). */
static nt_csrc one_header_src(const char *name, const char *include, const char **names,
                              const char **texts, const char *e0, const char *e1) {
    nt_csrc s;
    memset(&s, 0, sizeof s);
    s.name = name;
    s.text = include;
    s.nhdr = 1;
    s.hdr_names = names;
    s.hdr_texts = texts;
    s.expr[s.nexpr++] = e0;
    if (e1) s.expr[s.nexpr++] = e1;
    s.arch = "sm_90a";
    return s;
}

/* A source including tiny.cuh with name expressions e0 (and e1 if set). */
static nt_csrc tiny_src(const char *e0, const char *e1) {
    return one_header_src("tiny.cu", "#include \"tiny.cuh\"\n", hdr_names, hdr_texts, e0, e1);
}

static char cache[600];

/* Point NORMTUNE_CACHE at a fresh directory under the test's tmpdir. */
static void fresh_cache(const char *name) {
    snprintf(cache, sizeof cache, "%s/%s", t_tmpdir(), name);
    setenv("NORMTUNE_CACHE", cache, 1);
}

/* Number of entries (*.cubin) and temporaries (.*) in the cache dir. */
static int count_files(int *tmp) {
    DIR *d = opendir(cache);
    int n = 0;
    *tmp = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) (*tmp)++;
        if (strstr(e->d_name, ".cubin")) n++;
    }
    closedir(d);
    return n;
}

TEST(compile_tiny_and_resources) {
    nt_csrc s = tiny_src("tiny<256>", "plain");
    nt_cubin c;
    char err[2048] = "";
    int rc = nt_compile_src(&s, &c, err, sizeof err);
    CHECK(rc == 0, "compile failed: %s", err);
    CHECK(c.status == NT_OK && c.data && c.size > 100, "status %d size %zu", c.status, c.size);
    /* an ELF image */
    CHECK(c.data && !memcmp(c.data, "\177ELF", 4), "cubin is not ELF");
    CHECK(c.nkern == 2, "nkern %d", c.nkern);
    CHECK(!strcmp(c.lowered[0], "_Z4tinyILi256EEvPf"), "lowered[0] = %s", c.lowered[0]);
    CHECK(!strcmp(c.lowered[1], "_Z5plainPf"), "lowered[1] = %s", c.lowered[1]);
    CHECK(c.smem[0] == 1024, "smem of tiny<256> = %d, want 1024", c.smem[0]);
    CHECK(c.smem[1] == 0, "smem of plain = %d", c.smem[1]);
    CHECK(c.regs[0] > 0 && c.regs[0] < 64 && c.regs[1] > 0, "regs %d %d", c.regs[0], c.regs[1]);
    CHECK(c.spill[0] == 0, "spill %d", c.spill[0]);
    CHECK(c.max_smem == 1024 && c.max_regs >= c.regs[1], "max smem %d regs %d", c.max_smem,
          c.max_regs);
    CHECK(c.hit == 0 && strlen(c.key) == 16, "hit %d key %s", c.hit, c.key);
    nt_cubin_free(&c);
    CHECK(c.data == NULL && c.size == 0, "free leaves a zeroed struct");

    /* a different template argument: a different smem */
    s = tiny_src("tiny<64>", NULL);
    rc = nt_compile_src(&s, &c, err, sizeof err);
    CHECK(rc == 0 && c.smem[0] == 256, "tiny<64> smem %d (%s)", c.smem[0], err);
    nt_cubin_free(&c);
}

TEST(spills_are_parsed) {
    /* 48 live values at 16 registers per thread (ptxas raises the cap to its
     * floor, 24 on sm_90) must spill */
    static const char *src =
        "__global__ void hog(float *a, int n) {\n"
        "    float v[48];\n"
        "#pragma unroll\n"
        "    for (int i = 0; i < 48; i++) v[i] = a[i * n + threadIdx.x];\n"
        "    float s = 0;\n"
        "#pragma unroll\n"
        "    for (int i = 0; i < 48; i++) s += v[i] * v[47 - i] + v[(i * 7) % 48];\n"
        "#pragma unroll\n"
        "    for (int i = 0; i < 48; i++) a[i * n + threadIdx.x] = v[i] * s;\n"
        "}\n";
    nt_csrc s;
    memset(&s, 0, sizeof s);
    s.name = "hog.cu";
    s.text = src;
    s.expr[s.nexpr++] = "hog";
    s.arch = "sm_90a";
    s.opt[s.nopt++] = "--maxrregcount=16";
    nt_cubin c;
    char err[2048] = "";
    CHECK(nt_compile_src(&s, &c, err, sizeof err) == 0, "%s", err);
    CHECK(c.regs[0] > 0 && c.regs[0] <= 32, "regs %d", c.regs[0]);
    CHECK(c.spill[0] > 0 && c.max_spill == c.spill[0], "spill %d", c.spill[0]);
    nt_cubin_free(&c);
}

TEST(cache_miss_then_hit) {
    fresh_cache("c1");
    nt_csrc s = tiny_src("tiny<128>", "plain");
    nt_cubin a, b;
    char err[2048] = "";
    CHECK(nt_compile_src_cached(&s, 1, &a, err, sizeof err) == 0, "%s", err);
    CHECK(a.hit == 0, "first lookup should miss");
    int tmp, n = count_files(&tmp);
    CHECK(n == 1 && tmp == 0, "cache holds %d entries, %d temporaries", n, tmp);
    CHECK(nt_compile_src_cached(&s, 1, &b, err, sizeof err) == 0, "%s", err);
    CHECK(b.hit == 1, "second lookup should hit");
    CHECK(a.size == b.size && b.data && !memcmp(a.data, b.data, a.size), "cubin bytes differ");
    CHECK(!strcmp(a.lowered[0], b.lowered[0]) && !strcmp(a.lowered[1], b.lowered[1]),
          "lowered names differ");
    CHECK(a.regs[0] == b.regs[0] && a.smem[0] == b.smem[0] && a.spill[1] == b.spill[1] &&
              a.max_regs == b.max_regs && b.max_smem == 512,
          "resources differ: regs %d/%d smem %d/%d", a.regs[0], b.regs[0], a.smem[0], b.smem[0]);
    CHECK(!strcmp(a.key, b.key), "keys %s %s", a.key, b.key);
    nt_cubin_free(&b);
    /* use_cache = 0 neither reads nor writes */
    CHECK(nt_compile_src_cached(&s, 0, &b, err, sizeof err) == 0 && b.hit == 0, "no-cache hit");
    nt_cubin_free(&b);
    nt_cubin_free(&a);
}

/* Processes that miss the same key at once compile it once: the others
 * wait on its lock and read the entry (the processes of run --devices).
 * Without the lock all three compile (each takes far longer than the
 * others take to start); with it, however they are scheduled, one does. */
TEST(cache_one_compile_at_a_time) {
    fresh_cache("c_lock");
    nt_csrc s = tiny_src("tiny<256>", "plain");
    pid_t pid[3];
    int miss = 0, hit = 0, other = 0;
    for (int i = 0; i < 3; i++)
        if ((pid[i] = fork()) == 0) {
            nt_cubin c;
            char err[2048] = "";
            if (nt_compile_src_cached(&s, 1, &c, err, sizeof err)) _exit(2);
            _exit(c.hit ? 11 : 10);
        }
    for (int i = 0; i < 3; i++) {
        int st = 0;
        waitpid(pid[i], &st, 0);
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        miss += code == 10;
        hit += code == 11;
        other += code != 10 && code != 11;
    }
    CHECK(miss == 1 && hit == 2 && other == 0, "%d compiled, %d read the entry, %d failed",
          miss, hit, other);
    int tmp, n = count_files(&tmp);
    CHECK(n == 1 && tmp == 0, "cache holds %d entries, %d temporaries or locks", n, tmp);
}

TEST(keys_change_with_inputs) {
    nt_csrc s = tiny_src("tiny<128>", NULL);
    char k0[17], k1[17], k2[17], k3[17], k4[17], k5[17];
    nt_compile_key(&s, k0);
    nt_compile_key(&s, k1);
    CHECK(!strcmp(k0, k1), "key not stable");
    s.opt[s.nopt++] = "-DEXTRA=1";
    nt_compile_key(&s, k2);
    CHECK(strcmp(k0, k2), "an extra option must change the key");
    s = tiny_src("tiny<128>", NULL);
    s.arch = "sm_80";
    nt_compile_key(&s, k3);
    CHECK(strcmp(k0, k3), "the arch must change the key");
    s = tiny_src("tiny<256>", NULL);
    nt_compile_key(&s, k4);
    CHECK(strcmp(k0, k4), "the name expressions must change the key");
    static const char *other[] = {"template <int B> __global__ void tiny(float *a) {}\n"};
    s = tiny_src("tiny<128>", NULL);
    s.hdr_texts = other;
    nt_compile_key(&s, k5);
    CHECK(strcmp(k0, k5), "a header text must change the key");

    /* and an extra option really compiles to a different entry */
    fresh_cache("c2");
    nt_cubin a;
    char err[2048] = "";
    s = tiny_src("tiny<128>", NULL);
    CHECK(nt_compile_src_cached(&s, 1, &a, err, sizeof err) == 0 && !a.hit, "%s", err);
    nt_cubin_free(&a);
    s.opt[s.nopt++] = "-DEXTRA=1";
    CHECK(nt_compile_src_cached(&s, 1, &a, err, sizeof err) == 0 && !a.hit,
          "an option change must miss (%s)", err);
    nt_cubin_free(&a);
    int tmp;
    CHECK(count_files(&tmp) == 2, "want 2 entries");
}

TEST(syntax_error_reports_log) {
    static const char *bad = "__global__ void broken(float *a) { a[0] = undeclared_thing; }\n";
    nt_csrc s;
    memset(&s, 0, sizeof s);
    s.name = "broken.cu";
    s.text = bad;
    s.expr[s.nexpr++] = "broken";
    s.arch = "sm_90a";
    fresh_cache("c3");
    nt_cubin c;
    char err[2048] = "";
    int rc = nt_compile_src_cached(&s, 1, &c, err, sizeof err);
    CHECK(rc == -1, "a syntax error compiled");
    CHECK(c.status == NT_COMPILE_ERROR && c.data == NULL, "status %d", c.status);
    CHECK(strstr(err, "undeclared_thing") && strstr(err, "broken.cu"), "log missing: %s", err);
    CHECK(strstr(err, "NVRTC_ERROR_COMPILATION"), "no NVRTC status: %s", err);
    int tmp;
    CHECK(count_files(&tmp) == 0 && tmp == 0, "a failure must not be cached");
    /* an unknown name expression is an error too, not a crash */
    s = tiny_src("no_such_kernel<1>", NULL);
    rc = nt_compile_src(&s, &c, err, sizeof err);
    CHECK(rc == -1 && c.status == NT_COMPILE_ERROR, "unknown name expression compiled");
    nt_cubin_free(&c);
}

/* Rewrite the single entry of the cache dir with fn applied; returns its path. */
static int mangle_entry(void (*fn)(unsigned char *, size_t *), char *path, size_t len) {
    DIR *d = opendir(cache);
    if (!d) return -1;
    path[0] = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".cubin")) snprintf(path, len, "%s/%s", cache, e->d_name);
    closedir(d);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    unsigned char *buf = malloc(1 << 20);
    size_t n = fread(buf, 1, 1 << 20, f);
    fclose(f);
    fn(buf, &n);
    f = fopen(path, "wb");
    fwrite(buf, 1, n, f);
    fclose(f);
    free(buf);
    return 0;
}

static void flip_middle(unsigned char *b, size_t *n) { b[*n / 2] ^= 0x55; }
static void truncate_half(unsigned char *b, size_t *n) { (void)b; *n /= 2; }
static void empty(unsigned char *b, size_t *n) { (void)b; *n = 0; }
static void bad_magic(unsigned char *b, size_t *n) { (void)n; b[0] = 'X'; }

TEST(corrupt_entries_are_recompiled) {
    void (*fns[])(unsigned char *, size_t *) = {flip_middle, truncate_half, empty, bad_magic};
    const char *names[] = {"flipped byte", "truncated", "empty", "bad magic"};
    fresh_cache("c4");
    nt_csrc s = tiny_src("tiny<32>", "plain");
    nt_cubin ref, c;
    char err[2048] = "", path[1200];
    CHECK(nt_compile_src_cached(&s, 1, &ref, err, sizeof err) == 0 && !ref.hit, "%s", err);
    for (int i = 0; i < 4; i++) {
        CHECK(mangle_entry(fns[i], path, sizeof path) == 0, "no entry to mangle");
        CHECK(nt_compile_src_cached(&s, 1, &c, err, sizeof err) == 0, "%s: %s", names[i], err);
        CHECK(c.hit == 0, "%s entry was used", names[i]);
        CHECK(c.size == ref.size && !memcmp(c.data, ref.data, c.size), "%s: wrong bytes", names[i]);
        nt_cubin_free(&c);
        /* the entry was rewritten: now it hits again */
        CHECK(nt_compile_src_cached(&s, 1, &c, err, sizeof err) == 0 && c.hit == 1,
              "%s: not rewritten", names[i]);
        CHECK(c.smem[0] == 128 && !strcmp(c.lowered[1], "_Z5plainPf"), "%s: resources lost",
              names[i]);
        nt_cubin_free(&c);
    }
    nt_cubin_free(&ref);
}

TEST(cache_dir_resolution) {
    char dir[1024], err[256];
    char keep[600];
    snprintf(keep, sizeof keep, "%s", getenv("NORMTUNE_CACHE") ? getenv("NORMTUNE_CACHE") : "");
    unsetenv("NORMTUNE_CACHE");
    char xdg[700];
    snprintf(xdg, sizeof xdg, "%s/xdg/deeper", t_tmpdir());
    setenv("XDG_CACHE_HOME", xdg, 1);
    CHECK(nt_cache_dir(dir, sizeof dir, err, sizeof err) == 0, "%s", err);
    char want[800];
    snprintf(want, sizeof want, "%s/normtune", xdg);
    struct stat st;
    CHECK(!strcmp(dir, want) && stat(dir, &st) == 0 && S_ISDIR(st.st_mode), "dir %s", dir);
    unsetenv("XDG_CACHE_HOME");
    char home[700];
    snprintf(home, sizeof home, "%s/home", t_tmpdir());
    char *oldhome = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", home, 1);
    CHECK(nt_cache_dir(dir, sizeof dir, err, sizeof err) == 0, "%s", err);
    snprintf(want, sizeof want, "%s/.cache/normtune", home);
    CHECK(!strcmp(dir, want), "dir %s", dir);
    /* a file where the directory should be: an error, not a crash */
    snprintf(want, sizeof want, "%s/afile", t_tmpdir());
    FILE *f = fopen(want, "w");
    if (f) fclose(f);
    setenv("NORMTUNE_CACHE", want, 1);
    CHECK(nt_cache_dir(dir, sizeof dir, err, sizeof err) == -1 && strstr(err, "afile"),
          "a file as cache dir: %s", err);
    if (oldhome) setenv("HOME", oldhome, 1);
    free(oldhome);
    if (keep[0]) setenv("NORMTUNE_CACHE", keep, 1);
}

TEST(pool_in_order) {
    static const char *exprs[] = {"tiny<32>", "tiny<64>", "tiny<96>", "tiny<128>",
                                  "tiny<160>", "tiny<192>", "tiny<224>", "tiny<256>"};
    fresh_cache("c5");
    char err[2048] = "";
    nt_pool *p = nt_pool_start(3, 2, err, sizeof err);
    CHECK(p != NULL && nt_pool_threads(p) == 3, "%s", err);
    if (!p) return;
    long tk[9];
    for (int i = 0; i < 8; i++) {
        nt_job j;
        memset(&j, 0, sizeof j);
        j.src = tiny_src(exprs[i], NULL);
        j.use_cache = i % 2;
        tk[i] = nt_pool_submit(p, &j);
        CHECK(tk[i] == i, "ticket %ld for job %d", tk[i], i);
    }
    /* a broken job in the middle of the queue does not stop the others */
    nt_job bad;
    memset(&bad, 0, sizeof bad);
    bad.src = tiny_src("tiny<", NULL);
    tk[8] = nt_pool_submit(p, &bad);
    for (int i = 0; i < 8; i++) {
        nt_cubin c;
        CHECK(nt_pool_wait(p, tk[i], &c, err, sizeof err) == 0, "job %d: %s", i, err);
        CHECK(c.smem[0] == 4 * 32 * (i + 1), "job %d: smem %d, want %d", i, c.smem[0],
              4 * 32 * (i + 1));
        char want[64];
        snprintf(want, sizeof want, "_Z4tinyILi%dEEvPf", 32 * (i + 1));
        CHECK(!strcmp(c.lowered[0], want), "job %d: %s, want %s", i, c.lowered[0], want);
        nt_cubin_free(&c);
    }
    nt_cubin c;
    CHECK(nt_pool_wait(p, tk[8], &c, err, sizeof err) == -1 && c.status == NT_COMPILE_ERROR,
          "the broken job compiled");
    CHECK(nt_pool_wait(p, tk[3], &c, err, sizeof err) == -1 && strstr(err, "already taken"),
          "a taken ticket: %s", err);
    CHECK(nt_pool_wait(p, 99, &c, err, sizeof err) == -1, "an unknown ticket");
    nt_pool_stop(p, 0);
}

TEST(pool_out_of_order_and_stop) {
    char err[256];
    nt_pool *p = nt_pool_start(2, 1, err, sizeof err);
    CHECK(p != NULL, "%s", err);
    if (!p) return;
    long t[6];
    static const char *exprs[] = {"tiny<8>", "tiny<16>", "tiny<24>", "tiny<40>", "tiny<48>",
                                  "tiny<56>"};
    for (int i = 0; i < 6; i++) {
        nt_job j;
        memset(&j, 0, sizeof j);
        j.src = tiny_src(exprs[i], NULL);
        t[i] = nt_pool_submit(p, &j);
    }
    /* the last one first: it is beyond the ahead window, waiting pulls it in */
    nt_cubin c;
    CHECK(nt_pool_wait(p, t[5], &c, err, sizeof err) == 0 && c.smem[0] == 224, "job 5: %s", err);
    nt_cubin_free(&c);
    CHECK(nt_pool_wait(p, t[0], &c, err, sizeof err) == 0 && c.smem[0] == 32, "job 0: %s", err);
    nt_cubin_free(&c);
    /* stop with jobs never taken (some compiled, some not): no leak, no hang */
    nt_pool_stop(p, 0);
    /* drain: every queued job is compiled into the cache before stop returns */
    fresh_cache("c6");
    p = nt_pool_start(2, 1, err, sizeof err);
    for (int i = 0; i < 3; i++) {
        nt_job j;
        memset(&j, 0, sizeof j);
        j.src = tiny_src(exprs[i], NULL);
        j.use_cache = 1;
        nt_pool_submit(p, &j);
    }
    nt_pool_stop(p, 1);
    int tmp;
    CHECK(count_files(&tmp) == 3 && tmp == 0, "drain left %d entries", count_files(&tmp));
    nt_pool_stop(NULL, 0);
}

/* The nice value of thread tid of this process (/proc/self/task/TID/stat,
 * field 19), or -100 where it cannot be read. */
static int task_nice(const char *tid) {
    char path[128], buf[1024];
    snprintf(path, sizeof path, "/proc/self/task/%s/stat", tid);
    FILE *f = fopen(path, "r");
    if (!f) return -100;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *q = strrchr(buf, ')');          /* the name may hold spaces */
    int field = 2, nice = -100;
    for (char *t = q ? strtok(q + 1, " ") : NULL; t; t = strtok(NULL, " "))
        if (++field == 19) nice = atoi(t);
    return nice;
}

/* nt_pool_set_nice: the pool's threads take the value as they start a job
 * (here the only thread of a one-thread pool, and no other), the caller's
 * thread keeps its own; values out of 0 .. 19 are refused. */
TEST(pool_nice) {
    char err[256], self[32];
    snprintf(self, sizeof self, "%ld", (long)syscall(SYS_gettid));
    int n0 = task_nice(self);
    if (n0 == -100 || n0 >= 19) {
        printf("SKIP pool_nice: this thread's nice value is %d\n", n0);
        return;
    }
    fresh_cache("c7");
    nt_pool *p = nt_pool_start(1, 1, err, sizeof err);
    CHECK(p != NULL, "%s", err);
    if (!p) return;
    CHECK(nt_pool_set_nice(p, -1) == -1 && nt_pool_set_nice(p, 20) == -1, "out of range accepted");
    CHECK(nt_pool_set_nice(p, 19) == 0, "19 refused");
    nt_job j;
    memset(&j, 0, sizeof j);
    j.src = tiny_src("tiny<8>", NULL);
    long t = nt_pool_submit(p, &j);
    nt_cubin c;
    CHECK(nt_pool_wait(p, t, &c, err, sizeof err) == 0, "%s", err);
    nt_cubin_free(&c);
    int at19 = 0, others = 0;
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        int n = task_nice(e->d_name);
        at19 += n == 19;
        others += n != 19 && n != n0;
    }
    if (d) closedir(d);
    CHECK(at19 == 1, "%d threads at nice 19, want the pool's one", at19);
    CHECK(task_nice(self) == n0, "the caller's nice moved: %d, was %d", task_nice(self), n0);
    CHECK(others == 0, "%d threads at another nice value", others);
    nt_pool_stop(p, 0);
}

/* The cubin c of s has exactly the nwant kernels want[], in order, each
 * unmangled, with registers and no spill (what: for messages). */
static void compiled_clean(const nt_csrc *s, const nt_cubin *c, const char *const *want, int nwant,
                           const char *what) {
    CHECK(c->nkern == nwant, "%s: %d kernels", what, c->nkern);
    for (int k = 0; k < c->nkern && k < nwant; k++) {
        CHECK(!strcmp(s->expr[k], want[k]), "%s names %s, not %s", what, s->expr[k], want[k]);
        CHECK(!strcmp(c->lowered[k], s->expr[k]), "%s lowered to %s", s->expr[k], c->lowered[k]);
        CHECK(c->regs[k] > 0, "%s has %d registers", s->expr[k], c->regs[k]);
        CHECK(c->spill[k] == 0, "%s spills %d bytes", s->expr[k], c->spill[k]);
    }
    CHECK(c->max_spill == 0, "%s spill %d bytes", what, c->max_spill);
}

/* The runner's validation kernels, both yardsticks and the device fill
 * (kernels/check.cuh) compile for sm_90a, each an unmangled kernel with
 * registers and no spill. */
TEST(check_kernels_compile) {
    static const char *const want[2][4] = {
        {"nt_check_err", "nt_check_diff", "nt_traffic", "nt_traffic_nc"},
        {"nt_traffic_flat", "nt_traffic_flat_nc", "nt_fill_dev"}};
    for (int part = 0; part < 2; part++) {
        nt_csrc s;
        nt_cubin c;
        char err[4096] = "";
        int nwant = part ? 3 : 4;
        nt_check_source(&s, "sm_90a", part);
        CHECK(s.nexpr == nwant && s.nhdr == 3, "part %d: %d names, %d headers", part, s.nexpr,
              s.nhdr);
        for (int h = 0; h < s.nhdr; h++)
            CHECK(s.hdr_names[h] && s.hdr_texts[h], "part %d: header %d missing", part, h);
        int rc = nt_compile_src(&s, &c, err, sizeof err);
        CHECK(rc == 0, "%s", err);
        if (rc) continue;
        compiled_clean(&s, &c, want[part], nwant, "the check kernels");
        nt_cubin_free(&c);
    }
}

/* Every op's float64 reference on the device (kernels/<op>/dref.cuh)
 * compiles for sm_90a: the kernels its table lists, in that order, each
 * with registers and no spill; an op that names none, or a source that is
 * not embedded, is refused with a message. */
TEST(device_references_compile) {
    int ops = 0;
    for (int o = 0; nt_ops[o]; o++, ops++) {
        nt_csrc s;
        nt_cubin c;
        char err[4096] = "";
        const char *want[NT_MAX_LAUNCH] = {0};
        int nwant = 0;
        while (nt_ops[o]->dref_kernels && nt_ops[o]->dref_kernels[nwant] && nwant < NT_MAX_LAUNCH)
            want[nwant] = nt_ops[o]->dref_kernels[nwant], nwant++;
        CHECK(nwant > 0, "op %s lists no device reference kernels", nt_ops[o]->name);
        int rc = nt_dref_source(&s, nt_ops[o], "sm_90a", err, sizeof err);
        CHECK(rc == 0, "op %s: %s", nt_ops[o]->name, err);
        if (rc) continue;
        CHECK(s.nexpr == nwant && s.nhdr == 3, "op %s: %d names, %d headers", nt_ops[o]->name,
              s.nexpr, s.nhdr);
        rc = nt_compile_src(&s, &c, err, sizeof err);
        CHECK(rc == 0, "op %s: %s", nt_ops[o]->name, err);
        if (rc) continue;
        compiled_clean(&s, &c, want, nwant, nt_ops[o]->name);
        nt_cubin_free(&c);
    }
    CHECK(ops >= 2, "%d ops", ops);
    /* an op without one */
    nt_op bare = *nt_ops[0];
    nt_csrc s;
    char err[256] = "";
    bare.dref = "nope/dref.cuh";
    CHECK(nt_dref_source(&s, &bare, "sm_90a", err, sizeof err) == -1 && strstr(err, "nope/dref.cuh"),
          "an op with a missing source: %s", err);
    bare.dref = nt_ops[0]->dref;
    bare.dref_kernels = NULL;
    err[0] = 0;
    CHECK(nt_dref_source(&s, &bare, "sm_90a", err, sizeof err) == -1 && strstr(err, "no device"),
          "an op with no kernels: %s", err);
}

/* One plan of every registered family (every_family_compiles checks that
 * none is missing). */
static const struct {
    const char *op, *fam, *params;
    int N;                    /* row length of the plan; 0: 4096 */
} one_plan[] = {
    {"rmsnorm_bwd", "rmsnorm_bwd.persistent", "block=256,chunks=2,stages=2,k=0", 0},
    {"rmsnorm_bwd", "rmsnorm_bwd.naive", "nsplit=64,partial=f32", 0},
    {"rmsnorm_bwd", "rmsnorm_bwd.warp", "tpr=16,block=256,chunks=1,rows=4,k=0", 128},
    {"rmsnorm_bwd", "rmsnorm_bwd.cluster", "cluster=2,block=256,chunks=2,k=0", 0},
    {"rmsnorm_fwd", "rmsnorm_fwd.row", "block=256,chunks=2,k=0", 0},
    {"rmsnorm_fwd", "rmsnorm_fwd.rows", "block=256,chunks=2,rows=2,k=0", 0},
    {"rmsnorm_fwd", "rmsnorm_fwd.warp", "tpr=32,block=256,chunks=16,k=0", 0},
    {"rmsnorm_fwd", "rmsnorm_fwd.persist", "block=512,chunks=1,stages=2,k=1", 0},
    {"rmsnorm_fwd", "rmsnorm_fwd.wlate", "block=256,chunks=2,rows=1,k=0", 0},
    {"rmsnorm_fwd", "rmsnorm_fwd.stage", "block=256,chunks=2,k=0,wg=0", 0},
    {"rmsnorm_fwd", "rmsnorm_fwd.cluster", "cluster=2,block=128,chunks=2,k=0", 0},
    {"rmsnorm_bwd", "rmsnorm_bwd.loop", "block=1024,chunks=1,k=0", 0},
    {"rmsnorm_bwd", "rmsnorm_bwd.fused", "block=256,chunks=2,stages=3,k=2", 0},
    {"rmsnorm_bwd", "rmsnorm_bwd.cstage", "cluster=2,block=256,chunks=2,stages=2,k=0", 8192},
    {"rmsnorm_bwd", "rmsnorm_bwd.aligned", "block=128,chunks=5,stages=2,k=2", 4104},
    {"rmsnorm_bwd", "rmsnorm_bwd.pcluster", "cluster=4,block=256,chunks=4,stages=2,k=0", 8192},
    {"rmsnorm_fwd", "rmsnorm_fwd.loop", "block=1024,chunks=2,k=0", 0},
    {"rmsnorm_fwd", "rmsnorm_fwd.awarp", "tpr=32,block=512,chunks=5,k=0", 1032},
    {"rmsnorm_fwd", "rmsnorm_fwd.arow", "block=128,chunks=5,k=4", 4104},
    {"rmsnorm_fwd", "rmsnorm_fwd.tma", "block=256,chunks=4,stages=3,k=0", 8192},
    {"rmsnorm_bwd", "rmsnorm_bwd.cols", "block=256,cc=8,rows=4,k=2", 8192},
    {"rmsnorm_bwd", "rmsnorm_bwd.wstage", "tpr=32,block=256,chunks=3,stages=3,k=0", 768},
    {"rmsnorm_fwd", "rmsnorm_fwd.wstage", "tpr=8,block=256,chunks=2,stages=3,k=0", 128},
    {"rmsnorm_fwd", "rmsnorm_fwd.cstage", "cluster=4,block=256,chunks=4,stages=3,k=0", 32768},
    {"rmsnorm_fwd", "rmsnorm_fwd.ring", "block=512,chunks=16,spare=8,k=0,wg=1", 65536},
    {"rmsnorm_bwd", "rmsnorm_bwd.held", "block=256,chunks=2,stages=2,k=2", 0},
    {"rmsnorm_bwd", "rmsnorm_bwd.rows", "block=256,chunks=2,rows=3,stages=2,k=2", 0},
    {"rmsnorm_bwd", "rmsnorm_bwd.tma", "block=256,chunks=2,stages=3,k=2", 0},
    {"rmsnorm_bwd", "rmsnorm_bwd.wtma", "tpr=32,block=256,chunks=3,stages=3,k=0", 768},
    {"rmsnorm_bwd", "rmsnorm_bwd.ring", "block=512,chunks=4,spare=2,k=1", 16384},
};

/* The plan of one_plan[i] at M = 4096 and its N into *pl; returns its family, or
 * NULL after a failed CHECK. */
static const nt_family *plan_of(size_t i, nt_plan *pl) {
    nt_problem shape;
    nt_params p;
    char err[4096] = "";
    nt_problem_init(&shape, nt_op_find(one_plan[i].op), 4096, one_plan[i].N ? one_plan[i].N : 4096);
    const nt_family *f = nt_family_find(one_plan[i].fam);
    CHECK(f != NULL, "no family %s", one_plan[i].fam);
    if (!f) return NULL;
    CHECK(nt_params_parse(one_plan[i].params, &p) == 0, "%s: params", f->name);
    int rc = f->plan(&p, &shape, NULL, pl, err, sizeof err);
    CHECK(rc == 0, "%s: plan: %s", f->name, err);
    return rc ? NULL : f;
}

TEST(every_family_compiles) {
    int covered = 0;
    for (size_t i = 0; i < sizeof one_plan / sizeof one_plan[0]; i++) {
        nt_plan pl;
        char err[4096] = "";
        const nt_family *f = plan_of(i, &pl);
        if (!f) continue;
        nt_cubin c;
        int rc = nt_compile_one(f, &pl, "sm_90a", &c, err, sizeof err);
        CHECK(rc == 0, "%s: %s", f->name, err);
        CHECK(c.nkern == pl.nlaunch, "%s: %d kernels for %d launches", f->name, c.nkern, pl.nlaunch);
        for (int k = 0; k < c.nkern; k++) {
            CHECK(!strncmp(c.lowered[k], "_Z", 2), "%s: %s lowered to %s", f->name, pl.l[k].name,
                  c.lowered[k]);
            CHECK(c.regs[k] > 0, "%s: %s has %d registers", f->name, pl.l[k].name, c.regs[k]);
        }
        CHECK(c.max_spill == 0, "%s spills %d bytes", f->name, c.max_spill);
        covered += rc == 0;
        nt_cubin_free(&c);
    }
    /* every registered family has its line above */
    int nfam = 0;
    for (const nt_family *const *fp = nt_all_families(); *fp; fp++) nfam++;
    CHECK(covered == nfam, "%d of %d families compiled: add the new ones to this test", covered, nfam);
}

/* The PTX of name expression k of src (compute_90a, the kernel's own body
 * only, from its .entry to the next one) into a malloc'd string, or NULL
 * with err. */
static char *src_entry_ptx(const nt_csrc *s, int k, char *err, size_t errlen) {
    nt_csrc src = *s;
    nvrtcProgram prog;
    const char *opts[] = {"-std=c++17", "--gpu-architecture=compute_90a", "-default-device"};
    char *ptx = NULL, *body = NULL;
    const char *lowered = NULL;
    if (nvrtcCreateProgram(&prog, src.text ? src.text : src.textbuf, "pdl.cu", src.nhdr,
                           src.hdr_texts, src.hdr_names) != NVRTC_SUCCESS) {
        snprintf(err, errlen, "nvrtcCreateProgram failed");
        return NULL;
    }
    nvrtcAddNameExpression(prog, src.expr[k]);
    size_t n = 0;
    if (nvrtcCompileProgram(prog, 3, opts) != NVRTC_SUCCESS ||
        nvrtcGetLoweredName(prog, src.expr[k], &lowered) != NVRTC_SUCCESS ||
        nvrtcGetPTXSize(prog, &n) != NVRTC_SUCCESS || !(ptx = malloc(n)) ||
        nvrtcGetPTX(prog, ptx) != NVRTC_SUCCESS) {
        snprintf(err, errlen, "%s: no PTX", src.expr[k]);
        goto out;
    }
    char want[NT_LOWERED_LEN + 16];
    snprintf(want, sizeof want, ".entry %s(", lowered);
    const char *a = strstr(ptx, want);
    if (!a) {
        snprintf(err, errlen, "%s: no %s in the PTX", src.expr[k], want);
        goto out;
    }
    const char *b = strstr(a + 1, ".entry ");
    size_t len = b ? (size_t)(b - a) : strlen(a);
    if ((body = malloc(len + 1))) {
        memcpy(body, a, len);
        body[len] = 0;
    }
out:
    free(ptx);
    nvrtcDestroyProgram(&prog);
    return body;
}

/* The PTX of launch k of family f's plan pl (see src_entry_ptx). */
static char *entry_ptx(const nt_family *f, const nt_plan *pl, int k, char *err, size_t errlen) {
    nt_csrc src;
    nt_csrc_for_plan(f, pl, "sm_90a", &src);
    return src_entry_ptx(&src, k, err, errlen);
}

/* ---- what a kernel's PTX reads and writes, by argument ------------------
 * A small data-flow pass over one kernel's PTX (pf_*): which 8-byte words
 * of its parameter (nt_args: t[i], ws, M, ...) each register's value
 * derives from.  A register loaded from the parameter at byte o gets bit
 * o / 8; an instruction's result gets the union of its operands' bits; a
 * value loaded from memory, or the parameter's own address (an indexed
 * access), gets PF_ANY.  Iterated to a fixed point (loops).  An access
 * whose address has no bit, or PF_ANY, may touch anything. */
#define PF_ANY (1ull << 63)
#define PF_MAXST 40000
#define PF_MAXREG 8192

typedef struct {
    char op[48];              /* opcode with its suffixes, "" for a label */
    char *args;               /* operands (or the label's name) */
    int pred;                 /* executed under a predicate (@%p) */
} pf_stmt;

typedef struct {
    pf_stmt st[PF_MAXST];
    int n;
    char reg[PF_MAXREG][20];
    unsigned long long bits[PF_MAXREG];
    int nreg;
    char *buf;
} pf_kernel;

static int pf_reg(pf_kernel *k, const char *name, size_t len) {
    if (len >= sizeof k->reg[0]) len = sizeof k->reg[0] - 1;
    for (int i = 0; i < k->nreg; i++)
        if (!strncmp(k->reg[i], name, len) && !k->reg[i][len]) return i;
    if (k->nreg == PF_MAXREG) return -1;
    memcpy(k->reg[k->nreg], name, len);
    k->reg[k->nreg][len] = 0;
    k->bits[k->nreg] = 0;
    return k->nreg++;
}

/* The union of the bits of the registers named in s[0..len); each
 * register's index into ids (at most *nid of them) when ids is set. */
static unsigned long long pf_bits_of(pf_kernel *k, const char *s, size_t len, int *ids, int *nid) {
    unsigned long long b = 0;
    int max = nid ? *nid : 0;
    if (nid) *nid = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] != '%') continue;
        size_t j = i + 1;
        while (j < len && (isalnum((unsigned char)s[j]) || s[j] == '_')) j++;
        if (j < len && s[j] == '.') { /* %tid.x, %ctaid.x: no argument's */
            i = j;
            continue;
        }
        int r = pf_reg(k, s + i, j - i);
        if (r >= 0) {
            b |= k->bits[r];
            if (ids && *nid < max) ids[(*nid)++] = r;
        }
        i = j - 1;
    }
    return b;
}

/* Split PTX body into statements (lines split at ';'; comments,
 * directives and scope braces dropped; "NAME:" a label). */
static void pf_parse(pf_kernel *k, const char *body) {
    memset(k, 0, sizeof *k);
    k->buf = strdup(body);
    for (char *line = k->buf, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        char *c = strstr(line, "//");
        if (c) *c = 0;
        for (char *s = line, *e; s; s = e) {
            e = strchr(s, ';');
            if (e) *e++ = 0;
            while (isspace((unsigned char)*s) || *s == '{' || *s == '}') s++;
            size_t len = strlen(s);
            while (len && (isspace((unsigned char)s[len - 1]) || s[len - 1] == '}')) s[--len] = 0;
            if (!len || *s == '.' || *s == ')' || *s == '(' || k->n == PF_MAXST) continue;
            pf_stmt *t = &k->st[k->n++];
            if (s[len - 1] == ':' && !strpbrk(s, " \t,")) {
                s[len - 1] = 0;
                t->args = s;
                continue;
            }
            if (*s == '@') {
                t->pred = 1;
                s += strcspn(s, " \t");
                while (isspace((unsigned char)*s)) s++;
            }
            size_t ol = strcspn(s, " \t");
            snprintf(t->op, sizeof t->op, "%.*s", (int)ol, s);
            s += ol;
            while (isspace((unsigned char)*s)) s++;
            t->args = s;
        }
    }
}

static int pf_is(const pf_stmt *t, const char *prefix) {
    return !strncmp(t->op, prefix, strlen(prefix));
}

/* 1 if t may touch global memory (ld/st/atom/red/cp.async/cp.reduce/
 * prefetch outside param, shared, local and const space). */
static int pf_global(const pf_stmt *t) {
    static const char *const ops[] = {"ld.", "st.", "atom.", "red.", "cp.async", "cp.reduce",
                                      "prefetch.", NULL};
    static const char *const safe[] = {"ld.param", "ld.shared", "st.shared", "ld.local",
                                       "st.local", "ld.const", NULL};
    int hit = 0;
    for (int i = 0; ops[i]; i++) hit |= pf_is(t, ops[i]);
    for (int i = 0; safe[i]; i++) hit &= !pf_is(t, safe[i]);
    return hit;
}

/* 1 if global access t writes memory (cp.async.bulk: when its destination,
 * the first state space, is global). */
static int pf_writes(const pf_stmt *t) {
    if (pf_is(t, "st.") || pf_is(t, "atom.") || pf_is(t, "red.") || pf_is(t, "cp.reduce")) return 1;
    return pf_is(t, "cp.async") && strstr(t->op, ".global.shared") != NULL;
}

/* The bits of the address of access t (its [...] operand). */
static unsigned long long pf_addr(pf_kernel *k, const pf_stmt *t) {
    const char *a = strchr(t->args, '['), *b = a ? strchr(a, ']') : NULL;
    if (!a || !b) return PF_ANY;
    unsigned long long bits = pf_bits_of(k, a + 1, (size_t)(b - a - 1), NULL, NULL);
    return bits ? bits : PF_ANY;
}

/* Run the data flow to its fixed point. */
static void pf_flow(pf_kernel *k) {
    for (int changed = 1, round = 0; changed && round < 100; round++) {
        changed = 0;
        for (int i = 0; i < k->n; i++) {
            pf_stmt *t = &k->st[i];
            if (!t->op[0] || pf_is(t, "st.") || pf_is(t, "red.") || pf_is(t, "bra") ||
                pf_is(t, "griddepcontrol") || pf_is(t, "bar") || pf_is(t, "membar") ||
                pf_is(t, "fence") || pf_is(t, "ret") || pf_is(t, "exit") ||
                pf_is(t, "prefetch") || pf_is(t, "cp.") || pf_is(t, "call"))
                continue;
            /* the destination: the first operand, "{%r1, %r2}" or "%r1" */
            const char *s = t->args, *d_end;
            if (*s == '{') d_end = strchr(s, '}');
            else d_end = s + strcspn(s, ",");
            if (!d_end || !*d_end) continue;
            int dst[8], nd = 8;
            pf_bits_of(k, s, (size_t)(d_end - s), dst, &nd);
            const char *rest = d_end + 1;
            unsigned long long in[8] = {0};
            if (pf_is(t, "ld.param")) {
                const char *a = strchr(rest, '['), *plus = a ? strchr(a, '+') : NULL;
                const char *b = a ? strchr(a, ']') : NULL;
                int size = strstr(t->op, "64") ? 8 : strstr(t->op, "32") ? 4 : strstr(t->op, "16") ? 2 : 1;
                const char *p0 = a ? strstr(a, "_param_0") : NULL;
                if (!a || !b || memchr(a, '%', (size_t)(b - a)) || !p0 || p0 > b ||
                    isalnum((unsigned char)p0[8])) { /* not the first parameter's own bytes */
                    for (int j = 0; j < nd; j++) in[j] = PF_ANY;
                } else {
                    long off = plus && plus < b ? strtol(plus + 1, NULL, 10) : 0;
                    for (int j = 0; j < nd; j++) {
                        long o = (off + (long)j * size) / 8;
                        in[j] = o < 63 ? 1ull << o : PF_ANY;
                    }
                }
            } else if (pf_is(t, "ld.") || pf_is(t, "atom.")) {
                for (int j = 0; j < nd; j++) in[j] = PF_ANY; /* from memory: anything */
            } else {
                unsigned long long b = pf_bits_of(k, rest, strlen(rest), NULL, NULL);
                if (strstr(rest, "_param_")) b |= PF_ANY; /* the parameter's address */
                for (int j = 0; j < nd; j++) in[j] = b;
            }
            for (int j = 0; j < nd; j++)
                if ((k->bits[dst[j]] | in[j]) != k->bits[dst[j]]) {
                    k->bits[dst[j]] |= in[j];
                    changed = 1;
                }
        }
    }
}

/* Index of the first statement with opcode op (a prefix), or -1. */
static int pf_first(const pf_kernel *k, const char *op) {
    for (int i = 0; i < k->n; i++)
        if (pf_is(&k->st[i], op)) return i;
    return -1;
}

/* Index of label name, or -1. */
static int pf_label(const pf_kernel *k, const char *name) {
    for (int i = 0; i < k->n; i++)
        if (!k->st[i].op[0] && !strcmp(k->st[i].args, name)) return i;
    return -1;
}

/* The first branch before statement w that jumps past it (an indirect
 * one, brx, may), or -1. */
static int pf_skips(const pf_kernel *k, int w) {
    for (int i = 0; i < w; i++) {
        if (pf_is(&k->st[i], "brx")) return i;
        if (pf_is(&k->st[i], "bra")) {
            int j = pf_label(k, k->st[i].args);
            if (j < 0 || j > w) return i;
        }
    }
    return -1;
}

/* The arguments of bits, e.g. "t[0] t[2]", into buf. */
static const char *pf_names(unsigned long long bits, char *buf, size_t len) {
    size_t at = 0;
    buf[0] = 0;
    for (int b = 0; b < 64 && at < len; b++) {
        if (!(bits >> b & 1)) continue;
        long o = 8L * b;
        if (b == 63) at += (size_t)snprintf(buf + at, len - at, "%sunknown", at ? " " : "");
        else if (o < (long)sizeof(((nt_args *)0)->t))
            at += (size_t)snprintf(buf + at, len - at, "%st[%ld]", at ? " " : "", o / 8);
        else if (o == (long)offsetof(nt_args, ws))
            at += (size_t)snprintf(buf + at, len - at, "%sws", at ? " " : "");
        else at += (size_t)snprintf(buf + at, len - at, "%sparam+%ld", at ? " " : "", o);
    }
    return buf;
}

/* The arguments whose memory kernel k may write. */
static unsigned long long pf_written(pf_kernel *k) {
    unsigned long long w = 0;
    for (int i = 0; i < k->n; i++)
        if (pf_global(&k->st[i]) && pf_writes(&k->st[i])) {
            unsigned long long a = pf_addr(k, &k->st[i]);
            w |= a & PF_ANY ? ~0ull : a;
        }
    return w;
}

/* CHECK the wait of kernel k (PTX body, named what) against its launch:
 * k executes griddepcontrol.wait before any global memory access, and no
 * branch jumps past the wait.  One exception, for a launch that follows
 * another of its chain (prev, NULL for the first launch and the runner's
 * yardsticks): k may issue loads before its wait, of arguments that prev
 * never writes, when prev itself waits before it lets k start
 * (griddepcontrol.launch_dependents after its wait, no exit or branch
 * past the wait).  Then k starts only when every block of prev has
 * passed its wait, so every kernel before prev has finished and its
 * writes are visible; prev writes nothing k reads early.  Returns the
 * loads k issues before its wait. */
#define WCHECK(c, ...)                                                          \
    do {                                                                        \
        if (!(c)) {                                                             \
            (*bad)++;                                                           \
            if (loud) CHECK(c, __VA_ARGS__);                                    \
        }                                                                       \
    } while (0)
static int check_wait(const char *what, const char *body, const char *prev_body, int loud, int *bad) {
    pf_kernel *k = malloc(sizeof *k), *p = prev_body ? malloc(sizeof *p) : NULL;
    int early = 0;
    CHECK(k && (p || !prev_body), "out of memory");
    if (!k || (prev_body && !p)) goto out;
    pf_parse(k, body);
    pf_flow(k);
    unsigned long long pw = ~0ull;
    if (p) {
        pf_parse(p, prev_body);
        pf_flow(p);
        pw = pf_written(p);
    }
    int w = pf_first(k, "griddepcontrol.wait");
    WCHECK(w >= 0, "%s is launched early (pdl) but never waits", what);
    if (w < 0) goto out;
    int s = pf_skips(k, w);
    WCHECK(s < 0, "%s: a branch (bra %s) jumps past its griddepcontrol.wait", what,
          s >= 0 ? k->st[s].args : "");
    for (int i = 0; i < w; i++) {
        pf_stmt *t = &k->st[i];
        if (!pf_global(t)) continue;
        char names[200];
        unsigned long long a = pf_addr(k, t);
        WCHECK(p != NULL, "%s touches global memory (%s %.24s) before its griddepcontrol.wait", what,
              t->op, t->args);
        if (!p) break;
        WCHECK(pf_is(t, "ld.") && !(a & PF_ANY) && !(a & pw),
              "%s: %s %.40s before its griddepcontrol.wait (of %s), which the launch before it "
              "may write or which is not a load", what, t->op, t->args, pf_names(a, names, sizeof names));
        early++;
    }
    if (!early) goto out;
    int pwait = pf_first(p, "griddepcontrol.wait"), trig = pf_first(p, "griddepcontrol.launch_dependents");
    WCHECK(pwait >= 0 && (trig < 0 || trig > pwait),
          "%s loads before its wait, but the launch before it lets it start before that one's wait",
          what);
    if (pwait < 0) goto out;
    WCHECK(pf_skips(p, pwait) < 0, "%s loads before its wait, but a branch of the launch before it "
          "jumps past that one's wait", what);
    int ex = -1;
    for (int i = 0; i < pwait && ex < 0; i++)
        if (pf_is(&p->st[i], "ret") || pf_is(&p->st[i], "exit")) ex = i;
    WCHECK(ex < 0, "%s loads before its wait, but a block of the launch before it may exit before "
          "that one's wait (which lets it start)", what);
out:
    if (k) free(k->buf);
    if (p) free(p->buf);
    free(k);
    free(p);
    return early;
}

/* A launch with programmatic dependent launch (nt_launch.pdl) may start
 * before the kernel ahead of it has finished, so its kernel must execute
 * griddepcontrol.wait before any global memory access (check_wait says
 * the one exception): checked in the PTX of every launch of every family's
 * plan that sets pdl, and of the runner's yardstick kernels (launched so:
 * tuner/runner.c).  And every launch of every family is launched so. */
TEST(pdl_launches_wait_first) {
    int checked = 0, early = 0;
    for (int part = 0; part < 2; part++) {
        nt_csrc cs;
        char err[4096] = "";
        nt_check_source(&cs, "sm_90a", part);
        for (int k = 0; k < cs.nexpr; k++) {
            if (strncmp(cs.expr[k], "nt_traffic", 10)) continue;
            char *body = src_entry_ptx(&cs, k, err, sizeof err);
            CHECK(body != NULL, "%s", err);
            if (!body) continue;
            int bad = 0;
            check_wait(cs.expr[k], body, NULL, 1, &bad);
            checked++;
            free(body);
        }
    }
    for (size_t i = 0; i < sizeof one_plan / sizeof one_plan[0]; i++) {
        nt_plan pl;
        char err[4096] = "";
        const nt_family *f = plan_of(i, &pl);
        if (!f) continue;
        char *body[NT_MAX_LAUNCH] = {0};
        for (int k = 0; k < pl.nlaunch; k++) {
            CHECK(pl.l[k].pdl, "%s: launch %s without programmatic dependent launch", f->name,
                  pl.l[k].name);
            body[k] = entry_ptx(f, &pl, k, err, sizeof err);
            CHECK(body[k] != NULL, "%s: %s", f->name, err);
        }
        for (int k = 0; k < pl.nlaunch; k++) {
            if (!pl.l[k].pdl || !body[k] || (k > 0 && !body[k - 1])) continue;
            char what[300];
            snprintf(what, sizeof what, "%s: %s", f->name, pl.l[k].name);
            int bad = 0;
            early += check_wait(what, body[k], k > 0 ? body[k - 1] : NULL, 1, &bad) > 0;
            checked++;
        }
        for (int k = 0; k < pl.nlaunch; k++) free(body[k]);
    }
    CHECK(checked >= 14, "only %d launches with pdl checked", checked);
    CHECK(early >= 1, "no launch loads before its wait: rmsnorm_bwd.cols's does (cols.cuh)");
    printf("  %d launches checked, %d of them load before their wait\n", checked, early);
}

/* check_wait refuses what it must: tiny chains whose second kernel loads
 * before its wait, each with one flaw, and one without. */
static const char *pdl_names[] = {"pdl.cuh"};
static const char *pdl_texts[] = {
    "struct two { float *a; const float *b; };\n"
    "#define WAIT asm volatile(\"griddepcontrol.wait;\" ::: \"memory\")\n"
    "#define NEXT asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\")\n"
    /* writes a only, and lets the next start after its wait */
    "__global__ void first(two p) { WAIT; NEXT; p.a[threadIdx.x] = 1.0f; }\n"
    /* lets the next start before its wait */
    "__global__ void first_early(two p) { NEXT; WAIT; p.a[threadIdx.x] = 1.0f; }\n"
    /* some blocks leave before the wait (an exit lets the next start) */
    "__global__ void first_exits(two p) { if (blockIdx.x == 3) return; WAIT; NEXT;\n"
    "    p.a[threadIdx.x] = 1.0f; }\n"
    /* writes b too */
    "__global__ void first_both(two p) { WAIT; NEXT; p.a[threadIdx.x] = 1.0f;\n"
    "    ((float *)p.b)[threadIdx.x] = 2.0f; }\n"
    /* loads b (not written by first) before its wait: allowed after first */
    "__global__ void second(two p) { float v = p.b[threadIdx.x]; WAIT;\n"
    "    p.a[threadIdx.x] += v; }\n"
    /* loads a, which first writes */
    "__global__ void second_a(two p) { float v = p.a[threadIdx.x + 32]; WAIT;\n"
    "    p.a[threadIdx.x] += v; }\n"
    /* stores before its wait */
    "__global__ void second_st(two p) { p.a[threadIdx.x] = 0.0f; WAIT;\n"
    "    p.a[threadIdx.x] += p.b[threadIdx.x]; }\n"};

TEST(pdl_wait_rule_refuses) {
    static const char *const expr[] = {"first", "first_early", "first_exits", "first_both",
                                       "second", "second_a", "second_st"};
    static const struct { int prev, k, ok; } cases[] = {
        {0, 4, 1}, {-1, 4, 0}, {1, 4, 0}, {2, 4, 0}, {3, 4, 0}, {0, 5, 0}, {0, 6, 0}, {-1, 0, 1},
    };
    char *body[7] = {0};
    for (int i = 0; i < 7; i++) {
        char err[4096] = "";
        nt_csrc s = one_header_src("pdl.cu", "#include \"pdl.cuh\"\n", pdl_names, pdl_texts,
                                   expr[i], NULL);
        body[i] = src_entry_ptx(&s, 0, err, sizeof err);
        CHECK(body[i] != NULL, "%s", err);
    }
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int k = cases[c].k, pv = cases[c].prev, bad = 0;
        if (!body[k] || (pv >= 0 && !body[pv])) continue;
        check_wait(expr[k], body[k], pv >= 0 ? body[pv] : NULL, 0, &bad);
        CHECK((bad == 0) == cases[c].ok, "%s after %s: %d faults found, %s expected", expr[k],
              pv >= 0 ? expr[pv] : "nothing", bad, cases[c].ok ? "none" : "some");
    }
    for (int i = 0; i < 7; i++) free(body[i]);
}

/* Every project file a family's sources #include is one of its own
 * sources: NVRTC sees only that list (a missing one fails every variant of
 * the family on the GPU), and the family's source hash covers only it (a
 * file left out could change without re-measuring the family). */
TEST(family_sources_closed) {
    int nfam = 0;
    for (const nt_family *const *fp = nt_all_families(); *fp; fp++, nfam++) {
        const nt_family *f = *fp;
        CHECK(f->sources && f->sources[0], "%s lists no sources", f->name);
        if (!f->sources) continue;
        for (int i = 0; f->sources[i]; i++) {
            const char *text = NULL;
            for (int k = 0; k < nt_kernel_count; k++)
                if (!strcmp(nt_kernel_names[k], f->sources[i])) text = nt_kernel_texts[k];
            CHECK(text != NULL, "%s: source %s is not embedded", f->name, f->sources[i]);
            if (!text) continue;
            for (const char *q = strstr(text, "#include \""); q; q = strstr(q + 1, "#include \"")) {
                const char *a = q + 10, *b = strchr(a, '"');
                if (!b) break;
                int listed = 0;
                for (int j = 0; f->sources[j]; j++)
                    if ((size_t)(b - a) == strlen(f->sources[j]) && !strncmp(a, f->sources[j], (size_t)(b - a)))
                        listed = 1;
                CHECK(listed, "%s: %s includes \"%.*s\", which is not among the family's sources",
                      f->name, f->sources[i], (int)(b - a), a);
            }
        }
    }
    CHECK(nfam >= 8, "only %d families registered", nfam);
}

int main(void) {
    fresh_cache("default");
    RUN(compile_tiny_and_resources);
    RUN(spills_are_parsed);
    RUN(cache_miss_then_hit);
    RUN(cache_one_compile_at_a_time);
    RUN(keys_change_with_inputs);
    RUN(syntax_error_reports_log);
    RUN(corrupt_entries_are_recompiled);
    RUN(cache_dir_resolution);
    RUN(pool_in_order);
    RUN(pool_out_of_order_and_stop);
    RUN(pool_nice);
    RUN(every_family_compiles);
    RUN(family_sources_closed);
    RUN(pdl_launches_wait_first);
    RUN(pdl_wait_rule_refuses);
    RUN(check_kernels_compile);
    RUN(device_references_compile);
    T_END();
}
