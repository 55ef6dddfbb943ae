/* test_db.c -- the results database (db/store.c) on real SQLite files.
 *
 * Every test makes its own small database under t_tmpdir(): a round trip of
 * a result and its samples, the resume key, replacing instead of
 * duplicating, merging two overlapping databases, refusing files that are
 * not normtune's (left byte-identical), the best result per shape with its
 * provenance, the rows of the canned reports, merge counts, the WAL
 * checkpointed into the main file after a crash and at close, and sweeps
 * whose process died shown (and then stored) as interrupted.  The SQLite API
 * is used directly only to count rows and to make foreign or newer files. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db/store.h"
#include "kernels/family.h"
#include "t.h"
#include "tuner/cli.h"

static char err[512];

/* A path in the test's temp dir; the same name gives the same pointer,
 * valid for the whole program (up to 64 names). */
static const char *tpath(const char *name) {
    static char buf[64][600];
    static int n;
    char p[600];
    snprintf(p, sizeof p, "%s/%s", t_tmpdir(), name);
    for (int i = 0; i < n; i++)
        if (!strcmp(buf[i], p)) return buf[i];
    if (n == 64) abort();
    memcpy(buf[n], p, sizeof p);
    return buf[n++];
}

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* Whole file into a malloc'd buffer; *n its size.  NULL if unreadable. */
static char *slurp(const char *path, long *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)*n + 1);
    if (b && fread(b, 1, (size_t)*n, f) != (size_t)*n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    return b;
}

/* One integer from a query on a file, through the SQLite API; -1 on error. */
static long long count(const char *path, const char *sql) {
    sqlite3 *db;
    sqlite3_stmt *st;
    long long v = -1;
    char uri[700];
    snprintf(uri, sizeof uri, "file:%s?immutable=1", path);   /* no -wal/-shm left */
    if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return v;
}

/* Like count(), through a normal read-only open that sees the -wal file. */
static long long count_live(const char *path, const char *sql) {
    sqlite3 *db;
    sqlite3_stmt *st;
    long long v = -1;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return v;
}

/* Copy the file src alone (not its -wal) to dst, as a user might. */
static int copy_file(const char *src, const char *dst) {
    long n;
    char *b = slurp(src, &n);
    FILE *f = fopen(dst, "wb");
    int ok = b && f && fwrite(b, 1, (size_t)n, f) == (size_t)n;
    if (f) fclose(f);
    free(b);
    return ok ? 0 : -1;
}

static nt_device mkdev(const char *name, const char *uuid) {
    nt_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", name);
    snprintf(d.uuid, sizeof d.uuid, "%s", uuid);
    d.cc_major = 9;
    d.cc_minor = 0;
    d.sms = 132;
    d.l2_bytes = 60 << 20;
    d.sm_clock_khz = 1980000;
    d.mem_clock_khz = 2619000;
    d.mem_bus_bits = 6144;
    snprintf(d.driver, sizeof d.driver, "570.86");
    snprintf(d.runtime, sizeof d.runtime, "12.8");
    snprintf(d.nvrtc, sizeof d.nvrtc, "13.0");
    return d;
}

static const nt_timing timing = {.warmup = 10, .min_samples = 20, .max_samples = 200,
                                  .rel_ci = 0.01};

/* The current source hash of a family (results under it are the ones
 * store_best reports). */
static const char *cur_hash(const char *family) {
    static char h[8][17];
    static int next;
    char *b = h[next++ % 8];
    const nt_family *f = nt_family_find(family);
    if (!f || nt_family_hash(f, b)) snprintf(b, 17, "0000000000000000");
    return b;
}

static store_key mkkey(int64_t dev, const char *family, const char *params,
                       int64_t M, int64_t N) {
    store_key k = {dev, family, params, cur_hash(family), "rmsnorm_bwd",
                   "x=bf16,w=bf16,dw=f32", {M, N}, timing};
    return k;
}

/* A heap result: status, median us, n samples around the median. */
static nt_result *mkres(int status, double median, int n) {
    nt_result *r = calloc(1, sizeof *r);
    r->status = status;
    r->median_us = median;
    r->p10_us = median * 0.95;
    r->p90_us = median * 1.05;
    r->nsamples = n;
    for (int i = 0; i < n; i++) r->samples[i] = median + 0.01 * (i % 7) - 0.03;
    r->bytes = 4.0 * 1024 * 1024;
    r->gbps = median > 0 ? r->bytes / (median * 1e3) : 0;
    r->pct_copy = r->gbps / 40.0;
    r->errs[0] = (nt_error){"dx", 1.5e-7 * median, 1e-2, 1e-2};
    r->errs[1] = (nt_error){"dw", 1e-8 * median, 1e-5, 1e-5};
    r->nerr = 2;
    r->regs = 40;
    r->spill = 0;
    r->smem = 2048;
    r->grid = 264;
    if (status != NT_OK) snprintf(r->msg, sizeof r->msg, "failed\nsecond line");
    return r;
}

/* The error of r named tensor, or NULL. */
static const nt_error *find_err(const nt_result *r, const char *tensor) {
    for (int i = 0; i < r->nerr; i++)
        if (!strcmp(r->errs[i].tensor, tensor)) return &r->errs[i];
    return NULL;
}

/* Open a new store at name with one device and one sweep. */
static store *mkstore(const char *name, const nt_device *d, int64_t *dev, int64_t *sweep) {
    store *db = NULL;
    unlink(tpath(name));
    if (store_open(&db, tpath(name), STORE_CREATE, err, sizeof err)) {
        printf("  open %s: %s\n", name, err);
        return NULL;
    }
    if (store_device(db, d, dev, err, sizeof err) ||
        store_sweep_begin(db, *dev, "sweeps/x.lua", "1234", 4000.0, sweep, err, sizeof err)) {
        printf("  setup %s: %s\n", name, err);
        store_close(db);
        return NULL;
    }
    return db;
}

static int put(store *db, int64_t sweep, const store_key *k, int status, double med, int n) {
    nt_result *r = mkres(status, med, n);
    int rc = store_put(db, sweep, k, r, err, sizeof err);
    if (rc) printf("  put: %s\n", err);
    free(r);
    return rc;
}

TEST(round_trip) {
    nt_device d = mkdev("NVIDIA H200", "GPU-1111");
    int64_t dev, sweep;
    store *db = mkstore("rt.db", &d, &dev, &sweep);
    CHECK(db != NULL, "store");
    if (!db) return;
    store_key k = mkkey(dev, "rmsnorm_bwd.persistent", "block=256,chunks=2,stages=2,k=0",
                        2048, 4096);
    nt_result *in = mkres(NT_OK, 12.345, 37), *out = calloc(1, sizeof *out);
    CHECK(store_put(db, sweep, &k, in, err, sizeof err) == 0, "put: %s", err);
    int found = 0;
    CHECK(store_lookup(db, &k, &found, out, err, sizeof err) == 0, "lookup: %s", err);
    CHECK(found == 1, "found %d", found);
    CHECK(out->status == NT_OK, "status %d", out->status);
    CHECK(out->median_us == in->median_us && out->p10_us == in->p10_us &&
              out->p90_us == in->p90_us, "times %g %g %g", out->median_us, out->p10_us,
          out->p90_us);
    CHECK(out->gbps == in->gbps && out->pct_copy == in->pct_copy && out->bytes == in->bytes,
          "bandwidth %g %g", out->gbps, out->pct_copy);
    const nt_error *edx = find_err(out, "dx"), *edw = find_err(out, "dw");
    CHECK(out->nerr == 2 && edx && edw, "errors: %d", out->nerr);
    CHECK(edx && edx->value == in->errs[0].value && edx->tol == in->errs[0].tol, "dx error");
    CHECK(edw && edw->value == in->errs[1].value && edw->tol == in->errs[1].tol, "dw error");
    CHECK(out->regs == 40 && out->smem == 2048 && out->grid == 264 && out->spill == 0,
          "resources %d %d %d", out->regs, out->smem, out->grid);
    CHECK(out->nsamples == 37, "nsamples %d", out->nsamples);
    int same = 1;
    for (int i = 0; i < 37; i++) same &= out->samples[i] == in->samples[i];
    CHECK(same, "samples differ");

    /* a failed result keeps its status and message */
    store_key kf = mkkey(dev, "rmsnorm_bwd.naive", "nsplit=64,partial=bf16", 2048, 4096);
    CHECK(put(db, sweep, &kf, NT_COMPILE_ERROR, 0, 0) == 0, "put failed result");
    CHECK(store_lookup(db, &kf, &found, out, err, sizeof err) == 0 && found, "lookup f");
    CHECK(out->status == NT_COMPILE_ERROR, "status %d", out->status);
    CHECK(!strcmp(out->msg, "failed\nsecond line"), "msg '%s'", out->msg);
    CHECK(out->nsamples == 0 && out->median_us == 0, "no samples");

    CHECK(store_sweep_end(db, sweep, "done", err, sizeof err) == 0, "end: %s", err);
    CHECK(store_sweep_end(db, sweep, "finished", err, sizeof err) != 0, "bad status taken");
    CHECK(store_sweep_end(db, 999, "done", err, sizeof err) != 0, "missing sweep taken");
    store_close(db);
    CHECK(count(tpath("rt.db"), "SELECT count(*) FROM sweep WHERE status = 'done' AND "
                "finished LIKE '____-__-__T__:__:__%Z'") == 1, "sweep end time");
    CHECK(count(tpath("rt.db"), "PRAGMA user_version") == STORE_SCHEMA_VERSION, "version");
    CHECK(count(tpath("rt.db"), "PRAGMA application_id") == 0x4e544442, "app id");
    free(in);
    free(out);
}

TEST(resume_key) {
    nt_device d = mkdev("NVIDIA H200", "GPU-1111");
    int64_t dev, sweep;
    store *db = mkstore("resume.db", &d, &dev, &sweep);
    CHECK(db != NULL, "store");
    if (!db) return;
    store_key k = mkkey(dev, "rmsnorm_bwd.naive", "nsplit=64,partial=f32", 65536, 8192);
    CHECK(put(db, sweep, &k, NT_OK, 50.0, 5) == 0, "put");
    store_close(db);

    /* a new process resumes: reopen for writing, same device */
    CHECK(store_open(&db, tpath("resume.db"), STORE_WRITE, err, sizeof err) == 0, "%s", err);
    if (!db) return;
    int64_t dev2 = -1;
    CHECK(store_device(db, &d, &dev2, err, sizeof err) == 0 && dev2 == dev, "device %lld",
          (long long)dev2);
    int found = 0;
    CHECK(store_lookup(db, &k, &found, NULL, err, sizeof err) == 0 && found == 1, "found");

    store_key k2 = k;
    k2.timing.max_samples = 100;
    CHECK(store_lookup(db, &k2, &found, NULL, err, sizeof err) == 0 && !found, "timing");
    k2 = k;
    k2.timing.rel_ci = 0.02;
    CHECK(store_lookup(db, &k2, &found, NULL, err, sizeof err) == 0 && !found, "rel_ci");
    k2 = k;
    k2.src_hash = "ffffffffffffffff";
    CHECK(store_lookup(db, &k2, &found, NULL, err, sizeof err) == 0 && !found, "src_hash");
    k2 = k;
    k2.shape.M = 2048;
    CHECK(store_lookup(db, &k2, &found, NULL, err, sizeof err) == 0 && !found, "shape");
    k2 = k;
    k2.params = "nsplit=64,partial=bf16";
    CHECK(store_lookup(db, &k2, &found, NULL, err, sizeof err) == 0 && !found, "params");

    /* another GPU of the model (other uuid; same name, compute capability,
     * SMs and memory clock) finds the result, as another GPU's (2) */
    nt_device d2 = mkdev("NVIDIA H200", "GPU-2222");
    int64_t dev3;
    nt_result *out = calloc(1, sizeof *out);
    CHECK(store_device(db, &d2, &dev3, err, sizeof err) == 0 && dev3 != dev, "device 2");
    k2 = k;
    k2.device = dev3;
    CHECK(store_lookup(db, &k2, &found, out, err, sizeof err) == 0 && found == 2 &&
              out->median_us == 50.0 && out->nsamples == 5,
          "another GPU of the model: found %d, %g us", found, out->median_us);
    /* ... and its own result, once it has one, before the other's; the
     * first GPU keeps finding its own */
    CHECK(put(db, sweep, &k2, NT_OK, 51.0, 3) == 0, "put on GPU 2");
    CHECK(store_lookup(db, &k2, &found, out, err, sizeof err) == 0 && found == 1 &&
              out->median_us == 51.0, "own result first: found %d, %g us", found, out->median_us);
    CHECK(store_lookup(db, &k, &found, out, err, sizeof err) == 0 && found == 1 &&
              out->median_us == 50.0, "GPU 1's own: found %d, %g us", found, out->median_us);
    /* a GPU of another model is another key: other SMs, memory clock,
     * compute capability or name */
    for (int m = 0; m < 4; m++) {
        nt_device o = mkdev(m == 3 ? "NVIDIA H100" : "NVIDIA H200", "GPU-3333");
        snprintf(o.uuid, sizeof o.uuid, "GPU-333%d", m);
        if (m == 0) o.sms = 114;
        if (m == 1) o.mem_clock_khz = 3201000;
        if (m == 2) o.cc_minor = 1;
        int64_t od;
        CHECK(store_device(db, &o, &od, err, sizeof err) == 0, "device of model %d", m);
        k2 = k;
        k2.device = od;
        CHECK(store_lookup(db, &k2, &found, NULL, err, sizeof err) == 0 && !found,
              "another model (%d) found %d", m, found);
    }
    /* the model's GPUs: 2 of them */
    int ng = 0;
    CHECK(store_model_gpus(db, dev3, &ng, err, sizeof err) == 0 && ng == 2, "%d GPUs", ng);
    k2.device = 999;
    CHECK(store_lookup(db, &k2, &found, NULL, err, sizeof err) != 0 && strstr(err, "no device 999"),
          "unknown device: %s", err);
    free(out);
    store_close(db);
}

TEST(no_duplicates) {
    nt_device d = mkdev("NVIDIA H200", "GPU-1111");
    int64_t dev, sweep;
    store *db = mkstore("dup.db", &d, &dev, &sweep);
    CHECK(db != NULL, "store");
    if (!db) return;
    store_key k = mkkey(dev, "rmsnorm_bwd.naive", "nsplit=64,partial=f32", 2048, 1024);
    CHECK(put(db, sweep, &k, NT_OK, 10.0, 30) == 0, "put 1");
    CHECK(put(db, sweep, &k, NT_OK, 9.0, 12) == 0, "put 2");
    nt_result *out = calloc(1, sizeof *out);
    int found = 0;
    CHECK(store_lookup(db, &k, &found, out, err, sizeof err) == 0 && found, "lookup");
    CHECK(out->median_us == 9.0 && out->nsamples == 12, "latest wins: %g %d",
          out->median_us, out->nsamples);
    /* a put under a sweep that does not exist is rolled back whole */
    store_key k2 = mkkey(dev, "rmsnorm_bwd.naive", "nsplit=128,partial=f32", 4096, 1024);
    nt_result *bad = mkres(NT_OK, 10.0, 3);
    CHECK(store_put(db, 12345, &k2, bad, err, sizeof err) != 0, "bad sweep accepted");
    free(bad);
    store_close(db);
    const char *p = tpath("dup.db");
    CHECK(count(p, "SELECT count(*) FROM result") == 1, "results %lld",
          count(p, "SELECT count(*) FROM result"));
    CHECK(count(p, "SELECT count(*) FROM sample") == 12, "samples %lld",
          count(p, "SELECT count(*) FROM sample"));
    CHECK(count(p, "SELECT count(*) FROM variant") == 1, "variants (rolled back?)");
    CHECK(count(p, "SELECT count(*) FROM shape") == 1, "shapes (rolled back?)");
    free(out);
}

TEST(merge) {
    nt_device h = mkdev("NVIDIA H200", "GPU-1111"), a100 = mkdev("NVIDIA A100", "GPU-3333");
    int64_t dev, sweep;
    const char *pa = tpath("ma.db"), *pb = tpath("mb.db");
    store *a = mkstore("ma.db", &h, &dev, &sweep);
    CHECK(a != NULL, "store a");
    if (!a) return;
    store_key k1 = mkkey(dev, "rmsnorm_bwd.naive", "nsplit=64,partial=f32", 2048, 1024);
    store_key k2 = mkkey(dev, "rmsnorm_bwd.naive", "nsplit=32,partial=f32", 2048, 1024);
    CHECK(put(a, sweep, &k1, NT_OK, 10.0, 4) == 0 && put(a, sweep, &k2, NT_OK, 11.0, 5) == 0,
          "a");
    store_close(a);

    store *b = mkstore("mb.db", &a100, &dev, &sweep);   /* A100 gets id 1 here */
    CHECK(b != NULL, "store b");
    if (!b) return;
    store_key k4 = mkkey(dev, "rmsnorm_bwd.naive", "nsplit=64,partial=f32", 2048, 1024);
    CHECK(put(b, sweep, &k4, NT_OK, 20.0, 6) == 0, "b a100");
    int64_t hdev, hsweep;
    CHECK(store_device(b, &h, &hdev, err, sizeof err) == 0 &&
              store_sweep_begin(b, hdev, "other.lua", "99", 0, &hsweep, err, sizeof err) == 0,
          "b h200: %s", err);
    store_key k2b = k2, k3 = mkkey(hdev, "rmsnorm_bwd.naive", "nsplit=128,partial=f32",
                                   2048, 1024);
    k2b.device = hdev;
    CHECK(put(b, hsweep, &k2b, NT_OK, 11.5, 7) == 0 && put(b, hsweep, &k3, NT_OK, 12.0, 8) == 0,
          "b h200 results");
    store_close(b);

    long na, nb, na2, nb2;
    char *ca = slurp(pa, &na), *cb = slurp(pb, &nb);
    const char *pc = tpath("mc.db");
    unlink(pc);
    CHECK(store_merge(pa, pb, pc, NULL, err, sizeof err) == 0, "merge: %s", err);
    /* distinct: k1, k2 (a's copy kept), k3, k4 */
    CHECK(count(pc, "SELECT count(*) FROM result") == 4, "results %lld",
          count(pc, "SELECT count(*) FROM result"));
    CHECK(count(pc, "SELECT count(*) FROM sample") == 4 + 5 + 8 + 6, "samples %lld",
          count(pc, "SELECT count(*) FROM sample"));
    CHECK(count(pc, "SELECT count(*) FROM device") == 2, "devices");
    CHECK(count(pc, "SELECT count(*) FROM sweep") == 3, "sweeps");
    CHECK(count(pc, "SELECT count(*) FROM variant") == 3, "variants");
    CHECK(count(pc, "SELECT count(*) FROM shape") == 1, "shapes");
    CHECK(count(pc, "SELECT n_samples FROM result r JOIN device d ON d.id = r.device_id "
                "JOIN variant v ON v.id = r.variant_id WHERE d.uuid = 'GPU-1111' AND "
                "v.params = 'nsplit=32,partial=f32'") == 5, "first input wins");
    CHECK(count(pc, "SELECT count(*) FROM result r JOIN device d ON d.id = r.device_id "
                "JOIN sample s ON s.result_id = r.id WHERE d.uuid = 'GPU-3333'") == 6,
          "A100 samples follow their result");
    CHECK(count(pc, "SELECT count(*) FROM result r JOIN sweep s ON s.id = r.sweep_id "
                "WHERE s.device_id <> r.device_id") == 0, "sweep ids mapped");
    CHECK(count(pc, "SELECT count(*) FROM error") == 8, "errors %lld",
          count(pc, "SELECT count(*) FROM error"));
    /* each error follows its own result: value = 2.5e-6 * median (mkres) */
    CHECK(count(pc, "SELECT count(*) FROM error e JOIN result r ON r.id = e.result_id "
                "WHERE e.tensor = 'dw' AND abs(e.value - 1e-8 * r.median_us) < 1e-15 "
                "AND e.tolerance = 1e-5") == 4, "dw errors mapped to their results");
    CHECK(count(pc, "SELECT count(*) FROM pragma_foreign_key_check") == 0, "foreign keys");
    /* merging the merge with an input again adds nothing */
    const char *pd = tpath("md.db");
    unlink(pd);
    CHECK(store_merge(pc, pa, pd, NULL, err, sizeof err) == 0, "merge 2: %s", err);
    CHECK(count(pd, "SELECT count(*) FROM result") == 4, "re-merge results");
    CHECK(count(pd, "SELECT count(*) FROM sample") == 23, "re-merge samples");
    CHECK(count(pd, "SELECT count(*) FROM error") == 8, "re-merge errors");
    CHECK(count(pd, "SELECT count(*) FROM sweep") == 3, "re-merge sweeps");

    char *ca2 = slurp(pa, &na2), *cb2 = slurp(pb, &nb2);
    CHECK(ca && ca2 && na == na2 && !memcmp(ca, ca2, (size_t)na), "input a changed");
    CHECK(cb && cb2 && nb == nb2 && !memcmp(cb, cb2, (size_t)nb), "input b changed");
    free(ca);
    free(cb);
    free(ca2);
    free(cb2);
}

TEST(merge_refuses_existing_output) {
    nt_device h = mkdev("NVIDIA H200", "GPU-1111");
    int64_t dev, sweep;
    store *a = mkstore("mx.db", &h, &dev, &sweep);
    CHECK(a != NULL, "store");
    if (!a) return;
    store_close(a);
    const char *out = tpath("mx-out.db");
    FILE *f = fopen(out, "w");
    fputs("keep me", f);
    fclose(f);
    CHECK(store_merge(tpath("mx.db"), tpath("mx.db"), out, NULL, err, sizeof err) != 0, "merged");
    CHECK(strstr(err, "exists") != NULL, "message '%s'", err);
    long n;
    char *c = slurp(out, &n);
    CHECK(c && n == 7 && !memcmp(c, "keep me", 7), "output touched");
    free(c);
    /* a bad input leaves no output behind */
    const char *out2 = tpath("mx-out2.db");
    CHECK(store_merge(tpath("mx.db"), tpath("nonexistent.db"), out2, NULL, err, sizeof err) != 0,
          "merged a missing input");
    CHECK(!exists(out2), "output left behind");
}

/* Try every open mode on path; each must fail with a message containing
 * what, and leave the file byte-identical with no -wal/-shm beside it. */
static void refused(const char *path, const char *what) {
    static const int modes[] = {STORE_READ, STORE_WRITE, STORE_CREATE};
    long n0, n1;
    char *c0 = slurp(path, &n0), wal[700], shm[700];
    snprintf(wal, sizeof wal, "%s-wal", path);
    snprintf(shm, sizeof shm, "%s-shm", path);
    for (int i = 0; i < 3; i++) {
        store *db = NULL;
        err[0] = 0;
        CHECK(store_open(&db, path, modes[i], err, sizeof err) != 0, "mode %d opened", i);
        CHECK(db == NULL, "store returned");
        CHECK(strstr(err, what) != NULL, "mode %d: message '%s' lacks '%s'", i, err, what);
        store_close(db);
    }
    char *c1 = slurp(path, &n1);
    CHECK(c0 && c1 && n0 == n1 && !memcmp(c0, c1, (size_t)n0), "%s changed", path);
    CHECK(!exists(wal) && !exists(shm), "-wal/-shm created");
    free(c0);
    free(c1);
}

TEST(refuse_foreign_files) {
    /* not SQLite at all */
    const char *txt = tpath("notes.db");
    FILE *f = fopen(txt, "w");
    for (int i = 0; i < 50; i++) fprintf(f, "line %d: %x not a database\n", i, rand());
    fclose(f);
    refused(txt, "not an SQLite database");

    /* another program's SQLite database, in WAL mode */
    const char *other = tpath("other.db");
    sqlite3 *s;
    unlink(other);
    CHECK(sqlite3_open(other, &s) == SQLITE_OK, "sqlite3_open");
    CHECK(sqlite3_exec(s, "PRAGMA journal_mode = WAL; CREATE TABLE t(x); "
                       "INSERT INTO t VALUES (1)", NULL, NULL, NULL) == SQLITE_OK, "exec");
    sqlite3_close(s);
    refused(other, "another program");

    /* another program that also set an application id */
    const char *other2 = tpath("other2.db");
    unlink(other2);
    CHECK(sqlite3_open(other2, &s) == SQLITE_OK, "sqlite3_open");
    CHECK(sqlite3_exec(s, "PRAGMA application_id = 42; CREATE TABLE t(x)", NULL, NULL,
                       NULL) == SQLITE_OK, "exec");
    sqlite3_close(s);
    refused(other2, "another program");

    /* normtune's application id, tables, but no schema version: no migration */
    const char *v0 = tpath("v0.db");
    unlink(v0);
    CHECK(sqlite3_open(v0, &s) == SQLITE_OK, "sqlite3_open");
    CHECK(sqlite3_exec(s, "PRAGMA application_id = 1314145346; CREATE TABLE t(x)", NULL,
                       NULL, NULL) == SQLITE_OK, "exec");
    sqlite3_close(s);
    refused(v0, "no migration from it");

    /* a normtune database written by a newer version */
    nt_device h = mkdev("NVIDIA H200", "GPU-1111");
    int64_t dev, sweep;
    store *db = mkstore("newer.db", &h, &dev, &sweep);
    CHECK(db != NULL, "store");
    store_close(db);
    const char *newer = tpath("newer.db");
    CHECK(sqlite3_open(newer, &s) == SQLITE_OK, "sqlite3_open");
    char set[96], want[128];
    snprintf(set, sizeof set, "PRAGMA journal_mode = DELETE; PRAGMA user_version = %d",
             STORE_SCHEMA_VERSION + 1);
    CHECK(sqlite3_exec(s, set, NULL, NULL, NULL) == SQLITE_OK, "exec");
    sqlite3_close(s);
    snprintf(want, sizeof want, "written by a newer normtune (schema %d, this build knows %d)",
             STORE_SCHEMA_VERSION + 1, STORE_SCHEMA_VERSION);
    refused(newer, want);

    /* a missing file is an error unless creating */
    store *m = NULL;
    CHECK(store_open(&m, tpath("missing.db"), STORE_READ, err, sizeof err) != 0, "read");
    CHECK(store_open(&m, tpath("missing.db"), STORE_WRITE, err, sizeof err) != 0, "write");
    CHECK(!exists(tpath("missing.db")), "created by a non-create open");
}

/* A schema-1 file (no result.reps, errors in columns err_dx/err_dw) is
 * migrated by a writing open, keeping its result, samples and errors, and a
 * reading open leaves it alone. */
TEST(migrates_schema_1) {
    nt_device h = mkdev("NVIDIA H200", "GPU-1111");
    int64_t dev, sweep;
    sqlite3 *s;
    store *db = mkstore("v1.db", &h, &dev, &sweep);
    CHECK(db != NULL, "store");
    if (!db) return;
    store_key k = mkkey(dev, "rmsnorm_bwd.naive", "nsplit=64,partial=f32", 64, 1024);
    CHECK(put(db, sweep, &k, NT_OK, 3.0, 2) == 0, "put");
    store_close(db);
    const char *v1 = tpath("v1.db");
    CHECK(sqlite3_open(v1, &s) == SQLITE_OK, "sqlite3_open");
    CHECK(sqlite3_exec(s, "PRAGMA journal_mode = DELETE; DROP VIEW best;"
                          " ALTER TABLE result DROP COLUMN reps;"
                          " ALTER TABLE result DROP COLUMN traffic_gbps;"
                          " ALTER TABLE sweep DROP COLUMN pid; DROP TABLE error; DROP TABLE rematch;"
                          " ALTER TABLE result ADD COLUMN err_dx REAL;"
                          " ALTER TABLE result ADD COLUMN err_dw REAL;"
                          " UPDATE result SET err_dx = 0.25, err_dw = NULL;"
                          " UPDATE shape SET dtype = 'bf16';"
                          " CREATE VIEW best AS SELECT * FROM result;"
                          " PRAGMA user_version = 1",
                       NULL, NULL, NULL) == SQLITE_OK,
          "make a schema-1 file: %s", sqlite3_errmsg(s));
    sqlite3_close(s);
    db = NULL;
    CHECK(store_open(&db, v1, STORE_READ, err, sizeof err) != 0, "read of an old schema");
    CHECK(count(v1, "PRAGMA user_version") == 1, "a read migrated it");
    CHECK(store_open(&db, v1, STORE_WRITE, err, sizeof err) == 0, "write: %s", err);
    store_close(db);
    CHECK(count(v1, "PRAGMA user_version") == STORE_SCHEMA_VERSION, "not migrated");
    CHECK(count(v1, "SELECT count(*) FROM pragma_table_info('result') WHERE name = 'reps'") == 1,
          "no reps column");
    CHECK(count(v1, "SELECT count(*) FROM pragma_table_info('result') WHERE name LIKE 'err_d_'")
              == 0, "err_dx/err_dw columns kept");
    CHECK(count(v1, "SELECT count(*) FROM sqlite_master WHERE name = 'error'") == 1,
          "no error table");
    /* the one non-NULL error column became one row, with no tolerance, and
     * the tolerance a bf16 dx asks for */
    CHECK(count(v1, "SELECT count(*) FROM error") == 1 &&
              count(v1, "SELECT count(*) FROM error WHERE tensor = 'dx' AND value = 0.25 "
                    "AND tolerance IS NULL AND required = 1e-2") == 1, "errors not migrated");
    CHECK(count(v1, "SELECT count(*) FROM result") == 1 &&
              count(v1, "SELECT count(*) FROM sample") == 2, "a result or sample lost");
    /* the one dtype of schema 4 and older became the op's dtype slots */
    CHECK(count(v1, "SELECT count(*) FROM shape WHERE dtype = 'x=bf16,w=bf16,dw=f32'") == 1,
          "dtype not migrated");
    /* 0.25 > 1e-2: the result is not eligible, so best is empty */
    CHECK(count(v1, "SELECT count(*) FROM best") == 0, "best keeps an ineligible result");
}

/* The schema-4 fixture (as data/results.db was before schema 5) migrates
 * with every result, sample and error kept, dtypes and required
 * tolerances filled in, and the same best results as before. */
TEST(migrates_schema_4_fixture) {
    const char *src = "tests/fuzz/seeds/store/fixture.db", *dst = tpath("v4.db");
    long n;
    char *bytes = slurp(src, &n);
    CHECK(bytes != NULL, "read %s", src);
    if (!bytes) return;
    FILE *f = fopen(dst, "wb");
    CHECK(f && fwrite(bytes, 1, (size_t)n, f) == (size_t)n, "copy");
    if (f) fclose(f);
    free(bytes);
    CHECK(count(dst, "PRAGMA user_version") == 4, "fixture is schema 4");
    long long res = count(dst, "SELECT count(*) FROM result"),
              smp = count(dst, "SELECT count(*) FROM sample"),
              errs = count(dst, "SELECT count(*) FROM error"),
              best = count(dst, "SELECT count(*) FROM best");
    store *db = NULL;
    CHECK(store_open(&db, dst, STORE_WRITE, err, sizeof err) == 0, "open: %s", err);
    if (db) store_close(db);
    CHECK(count(dst, "PRAGMA user_version") == STORE_SCHEMA_VERSION, "version");
    CHECK(count(dst, "SELECT count(*) FROM result") == res && res > 0, "results");
    CHECK(count(dst, "SELECT count(*) FROM sample") == smp && smp > 0, "samples");
    CHECK(count(dst, "SELECT count(*) FROM error") == errs && errs > 0, "errors");
    CHECK(count(dst, "SELECT count(*) FROM shape WHERE dtype <> 'x=bf16,w=bf16,dw=f32'") == 0,
          "dtypes");
    CHECK(count(dst, "SELECT count(*) FROM error WHERE required IS NULL OR required <> "
                "CASE tensor WHEN 'dx' THEN 1e-2 WHEN 'dw' THEN 1e-5 END") == 0,
          "required tolerances");
    CHECK(count(dst, "SELECT count(*) FROM best") <= best, "best grew");
    CHECK(count(dst, "SELECT count(*) FROM pragma_foreign_key_check") == 0, "foreign keys");
}

TEST(blank_files_get_the_schema) {
    /* a zero-byte file and an SQLite file without tables become stores */
    const char *zero = tpath("zero.db"), *blank = tpath("blank.db");
    FILE *f = fopen(zero, "w");
    fclose(f);
    store *db = NULL;
    CHECK(store_open(&db, zero, STORE_READ, err, sizeof err) != 0, "read of empty file");
    CHECK(store_open(&db, zero, STORE_WRITE, err, sizeof err) == 0, "write: %s", err);
    store_close(db);
    CHECK(count(zero, "SELECT count(*) FROM sqlite_master WHERE name = 'result'") == 1,
          "schema");
    sqlite3 *s;
    unlink(blank);
    CHECK(sqlite3_open(blank, &s) == SQLITE_OK, "open");
    CHECK(sqlite3_exec(s, "VACUUM", NULL, NULL, NULL) == SQLITE_OK, "vacuum");
    sqlite3_close(s);
    db = NULL;
    CHECK(store_open(&db, blank, STORE_CREATE, err, sizeof err) == 0, "create: %s", err);
    store_close(db);
    CHECK(count(blank, "PRAGMA user_version") == STORE_SCHEMA_VERSION, "version");
    CHECK(count(blank, "PRAGMA application_id") == 0x4e544442, "application id");
    CHECK(count(blank, "SELECT count(*) FROM best") == 0, "best view");
}

/* A database with two shapes on one device and failures in between. */
static store *mkbest(const char *name, int64_t *dev) {
    nt_device h = mkdev("NVIDIA H200", "GPU-1111");
    int64_t sweep;
    store *db = mkstore(name, &h, dev, &sweep);
    if (!db) return NULL;
    const char *P = "rmsnorm_bwd.persistent", *Nv = "rmsnorm_bwd.naive";
    store_key ks[] = {
        mkkey(*dev, Nv, "nsplit=64,partial=f32", 16384, 4096),
        mkkey(*dev, P, "block=256,chunks=2,stages=2,k=0", 16384, 4096),
        mkkey(*dev, P, "block=512,chunks=1,stages=2,k=0", 16384, 4096),
        mkkey(*dev, P, "block=128,chunks=4,stages=2,k=0", 16384, 4096),
        mkkey(*dev, Nv, "nsplit=32,partial=f32", 2048, 4096),
        mkkey(*dev, Nv, "nsplit=64,partial=f32", 2048, 1024),
        mkkey(*dev, P, "block=64,chunks=2,stages=1,k=0", 2048, 1024),
    };
    int st[] = {NT_OK, NT_OK, NT_OK, NT_WRONG, NT_OK, NT_OK, NT_NONDETERMINISTIC};
    double us[] = {100.0, 40.0, 50.0, 1.0, 30.0, 8.0, 2.0};
    for (int i = 0; i < 7; i++)
        if (put(db, sweep, &ks[i], st[i], us[i], st[i] == NT_OK ? 3 : 0)) {
            store_close(db);
            return NULL;
        }
    return db;
}

/* With no --device and several device models holding results of the
 * current sources, the one whose ok results cover every (family, problem)
 * that the others' cover is chosen (after one family changed and both ops
 * were swept again on another model, the first still holds current
 * results of the unchanged family); when none covers all, the call is
 * ambiguous and names them.  A stale result covers nothing.  Here the two
 * GPUs share a name but not their SM count: two models. */
TEST(best_complete_device) {
    nt_device a = mkdev("NVIDIA H200", "GPU-1111"), b = mkdev("NVIDIA H200", "GPU-2222");
    int64_t adev, bdev, sweep;
    b.sms = 114;
    store *db = mkstore("complete.db", &a, &adev, &sweep);
    CHECK(db != NULL, "store");
    if (!db) return;
    CHECK(store_device(db, &b, &bdev, err, sizeof err) == 0, "device b: %s", err);
    const char *nf = "rmsnorm_bwd.naive", *np = "nsplit=64,partial=f32";
    const char *pf = "rmsnorm_bwd.persistent", *pp = "block=256,chunks=2,stages=2,k=0";
    store_best_row *rows = NULL;
    store_prov prov;
    int n = 0;
    store_key k;
    /* A: both families at 4096 x 4096; B: naive only there */
    k = mkkey(adev, nf, np, 4096, 4096);
    CHECK(put(db, sweep, &k, NT_OK, 5.0, 2) == 0, "put");
    k = mkkey(adev, pf, pp, 4096, 4096);
    CHECK(put(db, sweep, &k, NT_OK, 4.0, 2) == 0, "put");
    k = mkkey(bdev, nf, np, 4096, 4096);
    CHECK(put(db, sweep, &k, NT_OK, 5.1, 2) == 0, "put");
    /* B's persistent result of other sources covers nothing */
    k = mkkey(bdev, pf, pp, 4096, 4096);
    k.src_hash = "0000000000000000";
    CHECK(put(db, sweep, &k, NT_OK, 3.0, 2) == 0, "put");
    CHECK(store_best(db, NULL, 1, &rows, &n, &prov, err, sizeof err) == 0 &&
              !strcmp(prov.uuid, "GPU-1111"), "A covers B: %s (%s)", err, prov.uuid);
    free(rows);
    rows = NULL;
    /* B sweeps again: both families there and a second shape */
    k = mkkey(bdev, pf, pp, 4096, 4096);
    CHECK(put(db, sweep, &k, NT_OK, 4.1, 2) == 0, "put");
    k = mkkey(bdev, nf, np, 8192, 4096);
    CHECK(put(db, sweep, &k, NT_OK, 9.0, 2) == 0, "put");
    CHECK(store_best(db, NULL, 1, &rows, &n, &prov, err, sizeof err) == 0 &&
              !strcmp(prov.uuid, "GPU-2222") && n == 2,
          "B covers A: %s (%s, %d rows)", err, prov.uuid, n);
    free(rows);
    rows = NULL;
    /* A gets a shape B lacks: neither covers the other */
    k = mkkey(adev, nf, np, 16384, 4096);
    CHECK(put(db, sweep, &k, NT_OK, 17.0, 2) == 0, "put");
    CHECK(store_best(db, NULL, 1, &rows, &n, NULL, err, sizeof err) != 0 && rows == NULL,
          "neither covers the other");
    CHECK(strstr(err, "GPU-1111") && strstr(err, "GPU-2222") && strstr(err, "114 SMs"),
          "message '%s'", err);
    /* named by uuid, either is fine; the name they share is ambiguous */
    CHECK(store_best(db, "GPU-1111", 1, &rows, &n, NULL, err, sizeof err) == 0 && n == 2,
          "A named: %s (%d rows)", err, n);
    free(rows);
    rows = NULL;
    CHECK(store_best(db, "nvidia h200", 1, &rows, &n, NULL, err, sizeof err) != 0 &&
              strstr(err, "is ambiguous") && strstr(err, "by uuid"), "by name: '%s'", err);
    store_close(db);
}

/* The families' source hashes are computed once per process:
 * store_family_hash gives nt_family_hash's answer for every family (NULL
 * for one this build does not have), and however many rows nt_current
 * reads (store_best of the current sources, the device resolution) the
 * count of computed hashes stays one per family.  nt_current answers from
 * them: a faster result of other sources is left out of the current best
 * and kept in the best of all results. */
TEST(family_hashes_once) {
    const nt_family *const *all = nt_all_families();
    int nfam = 0, n = 0;
    char h[17];
    for (; all[nfam]; nfam++) {
        const char *c = store_family_hash(all[nfam]->name);
        CHECK(!nt_family_hash(all[nfam], h) && c && !strcmp(c, h), "%s: %s, want %s",
              all[nfam]->name, c ? c : "NULL", h);
    }
    CHECK(nfam > 1, "%d families", nfam);
    CHECK(!store_family_hash("rmsnorm_bwd.nosuch") && !store_family_hash(NULL), "unknown");
    CHECK(store_family_hashes() == nfam, "%d hashes of %d families", store_family_hashes(), nfam);

    int64_t dev;
    store *db = mkbest("hashes.db", &dev);
    CHECK(db != NULL, "store");
    if (!db) return;
    int64_t sweep;
    CHECK(store_sweep_begin(db, dev, "s.lua", "h", 4000.0, &sweep, err, sizeof err) == 0,
          "sweep: %s", err);
    for (int i = 0; i < 40; i++) {                  /* more rows for nt_current */
        store_key k = mkkey(dev, "rmsnorm_bwd.persistent", "block=256,chunks=2,stages=2,k=0",
                            1024 * (i + 1), 8192);
        if (i % 2) k.src_hash = "0000000000000000";
        CHECK(put(db, sweep, &k, NT_OK, 10.0 + i, 2) == 0, "put %d", i);
    }
    store_key stale = mkkey(dev, "rmsnorm_bwd.persistent", "block=256,chunks=2,stages=2,k=0",
                            16384, 4096);
    stale.src_hash = "0000000000000000";
    CHECK(put(db, sweep, &stale, NT_OK, 10.0, 2) == 0, "put stale");
    for (int cur = 1; cur >= 0; cur--) {
        store_best_row *rows = NULL;
        int64_t found = -1;
        CHECK(store_find_device(db, NULL, &found, err, sizeof err) == 0 && found == dev, "%s",
              err);
        CHECK(store_best(db, NULL, cur, &rows, &n, NULL, err, sizeof err) == 0, "%s", err);
        for (int i = 0; i < n; i++)
            if (rows[i].M == 16384 && rows[i].N == 4096)
                CHECK(rows[i].median_us == (cur ? 40.0 : 10.0) &&
                          !strcmp(rows[i].src_hash, cur ? cur_hash(rows[i].family)
                                                        : "0000000000000000"),
                      "current %d: %.1f us %s", cur, rows[i].median_us, rows[i].src_hash);
        CHECK(n == (cur ? 23 : 43), "current %d: %d rows", cur, n);
        free(rows);
    }
    CHECK(store_family_hashes() == nfam, "%d hashes of %d families after reading rows",
          store_family_hashes(), nfam);
    store_close(db);
}

TEST(best) {
    int64_t dev;
    store *db = mkbest("best.db", &dev);
    CHECK(db != NULL, "store");
    if (!db) return;
    store_best_row *rows = NULL;
    store_prov prov;
    int n = 0;
    CHECK(store_best(db, NULL, 0, &rows, &n, &prov, err, sizeof err) == 0, "best: %s", err);
    CHECK(n == 3, "rows %d", n);
    if (n == 3) {
        /* sorted by (N, M); failures (wrong at 1 us, nondeterministic at 2 us) ignored */
        CHECK(rows[0].N == 1024 && rows[0].M == 2048, "row 0 %lld %lld",
              (long long)rows[0].N, (long long)rows[0].M);
        CHECK(!strcmp(rows[0].family, "rmsnorm_bwd.naive") && rows[0].median_us == 8.0,
              "row 0 %s %g", rows[0].family, rows[0].median_us);
        CHECK(rows[1].N == 4096 && rows[1].M == 2048 && rows[1].median_us == 30.0, "row 1");
        CHECK(rows[2].N == 4096 && rows[2].M == 16384, "row 2");
        CHECK(!strcmp(rows[2].family, "rmsnorm_bwd.persistent") &&
                  !strcmp(rows[2].params, "block=256,chunks=2,stages=2,k=0") &&
                  rows[2].median_us == 40.0, "row 2 %s %s %g", rows[2].family,
              rows[2].params, rows[2].median_us);
        CHECK(!strcmp(rows[2].op, "rmsnorm_bwd") && !strcmp(rows[2].dtype, "x=bf16,w=bf16,dw=f32"),
              "op %s dtype %s", rows[2].op, rows[2].dtype);
        CHECK(rows[2].result_id > 0 && rows[2].gbps > 0, "id/gbps");
    }
    CHECK(!strcmp(prov.device, "NVIDIA H200") && !strcmp(prov.uuid, "GPU-1111"), "prov dev");
    CHECK(prov.cc_major == 9 && prov.cc_minor == 0, "cc");
    CHECK(!strcmp(prov.driver, "570.86") && !strcmp(prov.runtime, "12.8") &&
              !strcmp(prov.nvrtc, "13.0"), "versions");
    /* best rows of both families: "mixed" when their source hashes differ */
    char hn[17], hp[17];
    snprintf(hn, sizeof hn, "%s", cur_hash("rmsnorm_bwd.naive"));
    snprintf(hp, sizeof hp, "%s", cur_hash("rmsnorm_bwd.persistent"));
    CHECK(!strcmp(prov.src_hash, strcmp(hn, hp) ? "mixed" : hn), "src_hash %s", prov.src_hash);
    CHECK(prov.nsweeps == 1, "nsweeps %d", prov.nsweeps);
    CHECK(strlen(prov.last_finished) >= 20 && prov.last_finished[10] == 'T' &&
              prov.last_finished[strlen(prov.last_finished) - 1] == 'Z', "time %s",
          prov.last_finished);
    free(rows);

    /* matched by name and by uuid; an unknown device names the known ones */
    CHECK(store_best(db, "NVIDIA H200", 0, &rows, &n, NULL, err, sizeof err) == 0 && n == 3,
          "by name: %s", err);
    free(rows);
    CHECK(store_best(db, "GPU-1111", 0, &rows, &n, NULL, err, sizeof err) == 0 && n == 3,
          "by uuid: %s", err);
    free(rows);
    CHECK(store_best(db, "A100", 0, &rows, &n, NULL, err, sizeof err) != 0 && rows == NULL,
          "unknown device");
    CHECK(strstr(err, "GPU-1111") != NULL, "message '%s'", err);

    /* a result of other kernel sources (a family since changed) is never
     * best, however fast; a shape with only such results has no best row */
    store_key k = mkkey(dev, "rmsnorm_bwd.persistent", "block=128,chunks=4,stages=2,k=0", 16384,
                        4096);
    k.src_hash = "0000000000000000";
    CHECK(put(db, 1, &k, NT_OK, 0.5, 2) == 0, "put");
    k = mkkey(dev, "rmsnorm_bwd.naive", "nsplit=64,partial=f32", 65536, 8192);
    k.src_hash = "0000000000000000";
    CHECK(put(db, 1, &k, NT_OK, 5.0, 2) == 0, "put");
    CHECK(store_best(db, NULL, 1, &rows, &n, &prov, err, sizeof err) == 0 && n == 3, "%d rows", n);
    for (int i = 0; i < n; i++)
        CHECK(rows[i].median_us > 1.0 && rows[i].N != 8192, "stale result %lld x %lld %g us",
              (long long)rows[i].N, (long long)rows[i].M, rows[i].median_us);
    free(rows);

    /* a second device with only failures: NULL means the one device with ok
     * results of the current sources; named, it has no best row */
    nt_device b = mkdev("NVIDIA B200", "GPU-9999");
    int64_t bdev;
    CHECK(store_device(db, &b, &bdev, err, sizeof err) == 0, "device");
    store_key kb = mkkey(bdev, "rmsnorm_bwd.naive", "nsplit=64,partial=f32", 2048, 1024);
    CHECK(put(db, 1, &kb, NT_LAUNCH_ERROR, 0, 0) == 0, "put b");
    CHECK(store_best(db, NULL, 0, &rows, &n, &prov, err, sizeof err) == 0 && n == 4 &&
              !strcmp(prov.uuid, "GPU-1111"), "the device with current results: %s", err);
    free(rows);
    CHECK(store_best(db, "NVIDIA B200", 0, &rows, &n, NULL, err, sizeof err) != 0 && n == 0,
          "no ok result");
    CHECK(strstr(err, "no successful result") != NULL, "message '%s'", err);
    /* once both have ok results of the current sources, NULL is ambiguous */
    kb = mkkey(bdev, "rmsnorm_bwd.naive", "nsplit=64,partial=f32", 4096, 1024);
    CHECK(put(db, 1, &kb, NT_OK, 9.0, 2) == 0, "put b ok");
    CHECK(store_best(db, NULL, 0, &rows, &n, NULL, err, sizeof err) != 0, "ambiguous");
    CHECK(strstr(err, "NVIDIA H200") && strstr(err, "NVIDIA B200"), "message '%s'", err);
    store_close(db);

    /* the view gives the same answer: 4 rows of the H200 (the stale one
     * included: the view does not know the sources), 1 of the B200 */
    CHECK(count(tpath("best.db"), "SELECT count(*) FROM best") == 5, "view rows");
}

/* Collected report rows: the header and the cells joined with '|'. */
typedef struct rep {
    int nhdr, nrow, ncol;
    char hdr[512];
    char row[64][512];
} rep;

static void collect(void *ctx, int header, int ncol, const char *const *cell) {
    rep *r = ctx;
    char *dst = header ? r->hdr : r->nrow < 64 ? r->row[r->nrow] : NULL;
    if (header) r->nhdr++, r->ncol = ncol;
    else r->nrow++;
    if (!dst) return;
    dst[0] = 0;
    for (int i = 0; i < ncol; i++) {
        strncat(dst, cell[i], 511 - strlen(dst));
        if (i + 1 < ncol) strncat(dst, "|", 511 - strlen(dst));
    }
}

/* GPUs of one model pool their results: store_best ranks them together,
 * the provenance names the GPUs of the best rows (most first), a shape's
 * report lists both GPUs' results, and any GPU of the model (by uuid or
 * name) selects the same rows.  A GPU of another model (another memory
 * clock), however fast, is never pooled with them. */
TEST(models_pool) {
    nt_device a = mkdev("NVIDIA H200", "GPU-aaaa"), b = mkdev("NVIDIA H200", "GPU-bbbb"),
              c = mkdev("NVIDIA H200", "GPU-cccc");
    int64_t adev, bdev, cdev, sweep, bsweep, csweep;
    c.mem_clock_khz = 3201000;
    store *db = mkstore("pool.db", &a, &adev, &sweep);
    CHECK(db != NULL, "store");
    if (!db) return;
    CHECK(store_device(db, &b, &bdev, err, sizeof err) == 0 &&
              store_sweep_begin(db, bdev, "s.lua", "h", 4000.0, &bsweep, err, sizeof err) == 0 &&
              store_device(db, &c, &cdev, err, sizeof err) == 0 &&
              store_sweep_begin(db, cdev, "s.lua", "h", 4000.0, &csweep, err, sizeof err) == 0,
          "devices: %s", err);
    const char *nf = "rmsnorm_bwd.naive", *pf = "rmsnorm_bwd.persistent";
    const char *np = "nsplit=64,partial=f32", *pp = "block=256,chunks=2,stages=2,k=0";
    store_key k;
    /* 4096 x 4096: A's naive 5.0, B's persistent 4.0 (best), B's naive 5.2;
     * 8192 x 4096: A's only (9.0); 16384 x 4096: B's only (17.0);
     * C (another model) is faster everywhere */
    k = mkkey(adev, nf, np, 4096, 4096);
    CHECK(put(db, sweep, &k, NT_OK, 5.0, 2) == 0, "put");
    k = mkkey(bdev, pf, pp, 4096, 4096);
    CHECK(put(db, bsweep, &k, NT_OK, 4.0, 2) == 0, "put");
    k = mkkey(bdev, nf, np, 4096, 4096);
    CHECK(put(db, bsweep, &k, NT_OK, 5.2, 2) == 0, "put");
    k = mkkey(adev, nf, np, 8192, 4096);
    CHECK(put(db, sweep, &k, NT_OK, 9.0, 2) == 0, "put");
    k = mkkey(bdev, nf, np, 16384, 4096);
    CHECK(put(db, bsweep, &k, NT_OK, 17.0, 2) == 0, "put");
    k = mkkey(cdev, nf, np, 4096, 4096);
    CHECK(put(db, csweep, &k, NT_OK, 1.0, 2) == 0, "put");
    k = mkkey(cdev, nf, np, 32768, 4096);
    CHECK(put(db, csweep, &k, NT_OK, 2.0, 2) == 0, "put");

    const char *sel[] = {"GPU-aaaa", "GPU-bbbb"};
    for (int i = 0; i < 2; i++) {
        store_best_row *rows = NULL;
        store_prov prov;
        int n = 0;
        CHECK(store_best(db, sel[i], 1, &rows, &n, &prov, err, sizeof err) == 0 && n == 3,
              "%s: %s (%d rows)", sel[i], err, n);
        for (int j = 0; j < n; j++) {
            double want = rows[j].M == 4096 ? 4.0 : rows[j].M == 8192 ? 9.0 : 17.0;
            int64_t wdev = rows[j].M == 8192 ? adev : bdev;
            CHECK(rows[j].median_us == want && rows[j].device_id == wdev,
                  "%s: M=%lld: %.1f us on %lld, want %.1f on %lld", sel[i], (long long)rows[j].M,
                  rows[j].median_us, (long long)rows[j].device_id, want, (long long)wdev);
        }
        CHECK(prov.ngpus == 2 && !strcmp(prov.gpus[0].uuid, "GPU-bbbb") && prov.gpus[0].rows == 2 &&
                  !strcmp(prov.gpus[1].uuid, "GPU-aaaa") && prov.gpus[1].rows == 1,
              "gpus: %d: %s %d, %s %d", prov.ngpus, prov.gpus[0].uuid, prov.gpus[0].rows,
              prov.gpus[1].uuid, prov.gpus[1].rows);
        CHECK(!strcmp(prov.uuid, "GPU-bbbb") && prov.device_id == bdev && prov.sms == 132 &&
                  prov.mem_clock_khz == 2619000 && prov.nsweeps == 2,
              "prov: %s %lld, %d SMs, %d kHz, %d sweeps", prov.uuid, (long long)prov.device_id,
              prov.sms, prov.mem_clock_khz, prov.nsweeps);
        free(rows);
    }
    /* the other model alone, by its uuid; its name is shared: ambiguous */
    store_best_row *rows = NULL;
    int n = 0;
    CHECK(store_best(db, "GPU-cccc", 0, &rows, &n, NULL, err, sizeof err) == 0 && n == 2 &&
              rows[0].median_us == 1.0 && rows[1].median_us == 2.0, "C: %s (%d rows)", err, n);
    free(rows);
    rows = NULL;
    CHECK(store_best(db, "NVIDIA H200", 0, &rows, &n, NULL, err, sizeof err) != 0 &&
              strstr(err, "GPU-aaaa, GPU-bbbb") && strstr(err, "GPU-cccc"), "'%s'", err);

    /* one shape's report: every result of both GPUs, never C's */
    rep *r = calloc(1, sizeof *r);
    int64_t id = -1;
    CHECK(store_find_device(db, "gpu-aaaa", &id, err, sizeof err) == 0, "%s", err);
    CHECK(store_report_shape(db, id, 4096, 4096, collect, r, err, sizeof err) == 0 && r->nrow == 3,
          "%s: %d rows", err, r->nrow);
    CHECK(strstr(r->row[0], "|4.00|") && strstr(r->row[0], "|GPU-bbbb|") &&
              strstr(r->row[1], "|5.00|") && strstr(r->row[1], "|GPU-aaaa|") &&
              strstr(r->row[2], "|5.20|") && strstr(r->row[2], "|GPU-bbbb|"),
          "'%s' '%s' '%s'", r->row[0], r->row[1], r->row[2]);
    /* the best report of every model: the pooled model's 3 rows, C's 2 */
    memset(r, 0, sizeof *r);
    CHECK(store_report_best(db, NULL, collect, r, err, sizeof err) == 0 && r->nrow == 5,
          "%s: %d rows", err, r->nrow);
    memset(r, 0, sizeof *r);
    CHECK(store_report_best(db, "GPU-aaaa", collect, r, err, sizeof err) == 0 && r->nrow == 3 &&
              strstr(r->row[0], "|4.00|"), "%s: %d rows '%s'", err, r->nrow, r->row[0]);
    free(r);
    /* with no name: two models have current results and neither covers
     * the other's shapes */
    CHECK(store_best(db, NULL, 1, &rows, &n, NULL, err, sizeof err) != 0 &&
              strstr(err, "several device models"), "'%s'", err);
    /* the newest sweep's GPU (C's, begun last) names its model: what
     * `export --newest` (make tune) exports */
    char newest[64] = "";
    CHECK(store_newest_gpu(db, newest, sizeof newest, err, sizeof err) == 0 &&
              !strcmp(newest, "GPU-cccc"), "newest: '%s' %s", newest, err);
    int64_t asweep2;
    CHECK(store_sweep_begin(db, adev, "s.lua", "h", 4000.0, &asweep2, err, sizeof err) == 0 &&
              store_newest_gpu(db, newest, sizeof newest, err, sizeof err) == 0 &&
              !strcmp(newest, "GPU-aaaa"), "newest after A's sweep: '%s' %s", newest, err);
    store_close(db);
}

TEST(reports) {
    int64_t dev;
    store *db = mkbest("rep.db", &dev);
    CHECK(db != NULL, "store");
    if (!db) return;
    rep *r = calloc(1, sizeof *r);

    CHECK(store_report_best(db, NULL, collect, r, err, sizeof err) == 0, "%s", err);
    CHECK(r->nhdr == 1 && r->nrow == 3 && r->ncol == 11, "shape %d %d %d", r->nhdr, r->nrow,
          r->ncol);
    CHECK(!strcmp(r->hdr, "device|op|dtype|N|M|family|params|us|GB/s|% copy|result"),
          "header '%s'", r->hdr);
    /* 4 MiB in 40 us = 104.9 GB/s = 2.6% of 4000 GB/s... as mkres computes it */
    char want[512];
    double gb = 4.0 * 1024 * 1024 / 40e3;
    snprintf(want, sizeof want, "NVIDIA H200|rmsnorm_bwd|x=bf16,w=bf16,dw=f32|4096|16384|rmsnorm_bwd."
             "persistent|block=256,chunks=2,stages=2,k=0|40.00|%.1f|%.1f|", gb, gb / 40.0);
    CHECK(!strncmp(r->row[2], want, strlen(want)), "row '%s' want '%s'", r->row[2], want);

    memset(r, 0, sizeof *r);
    int64_t found = -1;
    CHECK(store_find_device(db, NULL, &found, err, sizeof err) == 0 && found == dev, "%s",
          err);
    CHECK(store_report_shape(db, dev, 16384, 4096, collect, r, err, sizeof err) == 0, "%s",
          err);
    CHECK(r->nrow == 4 && r->ncol == 19, "rows %d cols %d", r->nrow, r->ncol);
    CHECK(!strncmp(r->row[0], "1|rmsnorm_bwd|x=bf16,w=bf16,dw=f32|rmsnorm_bwd.persistent|block=256",
                   67),
          "rank 1 '%s'", r->row[0]);
    CHECK(strstr(r->row[0], "|40.00|-|-|38.00|42.00|3|") != NULL, "times '%s'", r->row[0]);
    CHECK(strstr(r->row[1], "|50.00|") && strstr(r->row[1], "|80.0|"), "80%% '%s'", r->row[1]);
    CHECK(!strncmp(r->row[2], "3|", 2) && strstr(r->row[2], "|40.0|"), "40%% '%s'",
          r->row[2]);
    CHECK(!strncmp(r->row[3], "-|", 2) && strstr(r->row[3], "|wrong|") &&
              strstr(r->row[3], "|failed") && !strstr(r->row[3], "second"),
          "failed row '%s'", r->row[3]);
    CHECK(store_report_shape(db, dev, 3, 5, collect, r, err, sizeof err) != 0, "no shape");

    int64_t id = 0;
    store_best_row *rows;
    int n;
    if (store_best(db, NULL, 0, &rows, &n, NULL, err, sizeof err) == 0) {
        id = rows[0].result_id;
        free(rows);
    }
    memset(r, 0, sizeof *r);
    CHECK(store_report_samples(db, id, collect, r, err, sizeof err) == 0, "%s", err);
    CHECK(r->nrow == 3 && !strcmp(r->hdr, "idx|us"), "samples %d '%s'", r->nrow, r->hdr);
    CHECK(!strcmp(r->row[0], "0|7.97") && !strcmp(r->row[2], "2|7.99"), "'%s' '%s'",
          r->row[0], r->row[2]);
    CHECK(store_report_samples(db, 9999, collect, r, err, sizeof err) != 0, "missing result");

    memset(r, 0, sizeof *r);
    CHECK(store_report_sweeps(db, collect, r, err, sizeof err) == 0, "%s", err);
    CHECK(r->nrow == 1, "sweeps %d", r->nrow);
    CHECK(strstr(r->row[0], "|NVIDIA H200|sweeps/x.lua|") &&
              strstr(r->row[0], "|-|running|4000.0|7|5"), "sweep '%s'", r->row[0]);
    free(r);
    store_close(db);
}

TEST(read_only_open) {
    int64_t dev;
    store *db = mkbest("ro.db", &dev);
    CHECK(db != NULL, "store");
    if (!db) return;
    store_close(db);
    const char *p = tpath("ro.db");
    long n0, n1;
    char *c0 = slurp(p, &n0);
    CHECK(store_open(&db, p, STORE_READ, err, sizeof err) == 0, "read: %s", err);
    int64_t sweep;
    CHECK(store_sweep_begin(db, dev, "x", "y", 0, &sweep, err, sizeof err) != 0,
          "read-only store wrote");
    rep *r = calloc(1, sizeof *r);
    CHECK(store_report_sweeps(db, collect, r, err, sizeof err) == 0 && r->nrow == 1, "rows");
    free(r);
    store_close(db);
    char *c1 = slurp(p, &n1);
    CHECK(c0 && c1 && n0 == n1 && !memcmp(c0, c1, (size_t)n0), "file changed");
    free(c0);
    free(c1);
}

TEST(read_while_writing) {
    /* a query during a sweep sees committed results, including later ones */
    nt_device h = mkdev("NVIDIA H200", "GPU-1111");
    int64_t dev, sweep;
    store *w = mkstore("live.db", &h, &dev, &sweep), *r = NULL;
    CHECK(w != NULL, "store");
    if (!w) return;
    store_key k1 = mkkey(dev, "rmsnorm_bwd.naive", "nsplit=64,partial=f32", 2048, 1024);
    store_key k2 = mkkey(dev, "rmsnorm_bwd.naive", "nsplit=32,partial=f32", 2048, 1024);
    CHECK(put(w, sweep, &k1, NT_OK, 10.0, 2) == 0, "put 1");
    CHECK(store_open(&r, tpath("live.db"), STORE_READ, err, sizeof err) == 0, "read: %s", err);
    if (r) {
        int found = 0;
        CHECK(store_lookup(r, &k1, &found, NULL, err, sizeof err) == 0 && found, "sees 1");
        CHECK(put(w, sweep, &k2, NT_OK, 5.0, 2) == 0, "put 2");
        CHECK(store_lookup(r, &k2, &found, NULL, err, sizeof err) == 0 && found, "sees 2");
        store_best_row *rows = NULL;
        int n = 0;
        CHECK(store_best(r, NULL, 0, &rows, &n, NULL, err, sizeof err) == 0 && n == 1 &&
                  rows[0].median_us == 5.0, "best %d", n);
        free(rows);
        store_close(r);
    }
    store_close(w);
}

/* Run a command with stdout and stderr into the file out; returns its exit
 * code. */
static int run_to(const char *out, int (*cmd)(int, char **), int argc, char **argv) {
    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2), rc;
    FILE *f = fopen(out, "w");
    if (so < 0 || se < 0 || !f) return -1;
    dup2(fileno(f), 1);
    dup2(fileno(f), 2);
    rc = cmd(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    fclose(f);
    return rc;
}

/* Run a command as run_to does and return its output, NUL-terminated (NULL
 * when it could not be read; the caller frees it); its exit code in *rc. */
static char *run_text(const char *out, int (*cmd)(int, char **), int argc, char **argv, int *rc) {
    long n;
    *rc = run_to(out, cmd, argc, argv);
    char *txt = slurp(out, &n);
    if (txt) txt[n] = 0;
    return txt;
}

/* report's runner-up after warm's re-measure reversed two families' medians:
 * naive 10.0 us and persistent 10.1 stored, re-measured together 10.4 and
 * 10.2: persistent wins, and naive is the runner-up at 10.4 / 10.2 = 1.02
 * (its stored median over the winner's would be 0.99: a runner-up faster
 * than the best). */
TEST(cli_report_runner_up_after_rematch) {
    nt_device h = mkdev("NVIDIA H200", "GPU-1111");
    int64_t dev, sweep;
    store *db = mkstore("rr.db", &h, &dev, &sweep);
    CHECK(db != NULL, "store");
    if (!db) return;
    store_key k[2] = {mkkey(dev, "rmsnorm_bwd.naive", "nsplit=64,partial=f32", 16384, 4096),
                      mkkey(dev, "rmsnorm_bwd.persistent", "block=256,chunks=2,stages=2,k=0", 16384,
                            4096)};
    double us[2] = {10.4, 10.2};
    int ns[2] = {48, 48};
    CHECK(put(db, sweep, &k[0], NT_OK, 10.0, 4) == 0 && put(db, sweep, &k[1], NT_OK, 10.1, 4) == 0 &&
              store_rematch_put(db, sweep, STORE_CHAIN, 2, k, us, ns, err, sizeof err) == 0, "results: %s", err);
    store_close(db);
    char *dbp = (char *)tpath("rr.db"), *out = (char *)tpath("rr.out");
    char *rargv[] = {"report", "--db", dbp, "--format", "csv", NULL};
    int rc;
    char *txt = run_text(out, cmd_report, 5, rargv, &rc);
    CHECK(rc == 0, "report failed");
    CHECK(txt != NULL, "no output");
    if (txt) {
        CHECK(strstr(txt, ",persistent,\"block=256,chunks=2,stages=2,k=0\",10.10,") &&
                  strstr(txt, ",naive,1.02\n"), "persistent best, naive at 1.02:\n%s", txt);
    }
    free(txt);
    /* then persistent re-measured alone beside another persistent config
     * (13.0 and 13.5 us: each run alone carries its launch): the winner's
     * newest re-measure is alone, naive's chain, so the ratio is of their
     * medians (10.0 / 10.1), never naive's chain time over the winner's
     * alone one (10.4 / 13.0 = 0.80) */
    CHECK(store_open(&db, dbp, STORE_WRITE, err, sizeof err) == 0, "reopen: %s", err);
    if (!db) return;
    store_key k2[2] = {k[1], mkkey(dev, "rmsnorm_bwd.persistent", "block=512,chunks=1,stages=2,k=0",
                                   16384, 4096)};
    double alone[2] = {13.0, 13.5};
    CHECK(put(db, sweep, &k2[1], NT_OK, 10.3, 4) == 0 &&
              store_rematch_put(db, sweep, STORE_ALONE, 2, k2, alone, ns, err, sizeof err) == 0,
          "alone: %s", err);
    store_close(db);
    txt = run_text(out, cmd_report, 5, rargv, &rc);
    CHECK(rc == 0 && txt != NULL, "report failed");
    if (txt)
        CHECK(strstr(txt, ",persistent,\"block=256,chunks=2,stages=2,k=0\",10.10,") &&
                  strstr(txt, ",naive,0.99\n"), "persistent best, naive at 0.99:\n%s", txt);
    free(txt);
}

TEST(cli_report_and_query) {
    /* the commands of tuner/cmd_query.c and cmd_report.c on a store made here (no sqlite3 shell) */
    int64_t dev;
    store *db = mkbest("cli.db", &dev);
    CHECK(db != NULL, "store");
    if (!db) return;
    store_close(db);
    char *dbp = (char *)tpath("cli.db"), *out = (char *)tpath("cli.out");
    char *rargv[] = {"report", "--db", dbp, NULL};
    int rc;
    char *txt = run_text(out, cmd_report, 3, rargv, &rc);
    CHECK(rc == 0, "report failed");
    CHECK(txt != NULL, "no output");
    if (txt) {
        CHECK(strstr(txt, "## normtune report: NVIDIA H200") != NULL, "title:\n%s", txt);
        /* N=4096 M=16384: persistent 40 us, the runner-up naive 100 us -> 2.50 */
        const char *row = strstr(txt, "| 4096 | 16384 | persistent | block=256,chunks=2,stages=2,k=0 "
                                      "| 40.00 |");
        const char *eol = row ? strchr(row, '\n') : NULL;
        CHECK(row && eol, "row:\n%s", txt);
        if (row && eol) {
            const char *nx = strstr(row, "| naive     |"), *ra = strstr(row, "|           2.50 |");
            CHECK(nx && nx < eol && ra && ra < eol, "runner-up naive at 2.50:\n%s", txt);
        }
        /* N=1024: the persistent variant failed, no runner-up */
        row = strstr(txt, "| 1024 |  2048 | naive      | nsplit=64,partial=f32");
        eol = row ? strchr(row, '\n') : NULL;
        CHECK(row && eol && strstr(row, "| -         |              - |") &&
                  strstr(row, "| -         |              - |") < eol, "no runner-up:\n%s", txt);
        CHECK(strstr(txt, "| ---: | ----: | ---------- |") != NULL, "rule:\n%s", txt);
    }
    free(txt);
    char *qargv[] = {"query", "--db", dbp, "shape", "4096", "16384", NULL};
    txt = run_text(out, cmd_query, 6, qargv, &rc);
    CHECK(rc == 0, "query failed");
    if (txt) {
        CHECK(strstr(txt, "\n   1  rmsnorm_bwd  x=bf16,w=bf16,dw=f32  rmsnorm_bwd.persistent  "
                          "block=256") &&
                  strstr(txt, "   -  rmsnorm_bwd  x=bf16,w=bf16,dw=f32  rmsnorm_bwd.persistent  "
                              "block=128"),
              "table:\n%s", txt);
    }
    free(txt);
    char *bad[] = {"query", "--db", dbp, "shape", "16384", NULL};
    CHECK(run_to(out, cmd_query, 5, bad) == 2, "usage error");
    char *missing[] = {"report", "--db", (char *)tpath("nope.db"), NULL};
    CHECK(run_to(out, cmd_report, 3, missing) == 1, "missing file");
}

TEST(merge_counts) {
    /* A: k1 k2 k3; B: k2 (same measurement), k3 (another), k4, k5 */
    nt_device h = mkdev("NVIDIA H200", "GPU-1111");
    int64_t dev, sweep;
    const char *pa = tpath("ca.db"), *pb = tpath("cb.db"), *pc = tpath("cc.db");
    const char *params[] = {"nsplit=1,partial=f32", "nsplit=2,partial=f32",
                            "nsplit=3,partial=f32", "nsplit=4,partial=f32",
                            "nsplit=5,partial=f32"};
    store_key k[5];
    store *a = mkstore("ca.db", &h, &dev, &sweep);
    CHECK(a != NULL, "store a");
    if (!a) return;
    for (int i = 0; i < 5; i++) k[i] = mkkey(dev, "rmsnorm_bwd.naive", params[i], 2048, 1024);
    for (int i = 0; i < 3; i++) CHECK(put(a, sweep, &k[i], NT_OK, 10.0 + i, 3) == 0, "a %d", i);
    store_close(a);
    store *b = mkstore("cb.db", &h, &dev, &sweep);
    CHECK(b != NULL, "store b");
    if (!b) return;
    CHECK(put(b, sweep, &k[1], NT_OK, 11.0, 3) == 0 && put(b, sweep, &k[2], NT_OK, 20.0, 3) == 0 &&
              put(b, sweep, &k[3], NT_OK, 13.0, 3) == 0 &&
              put(b, sweep, &k[4], NT_COMPILE_ERROR, 0, 0) == 0, "b");
    store_close(b);
    store_merge_counts n;
    memset(&n, 0xff, sizeof n);
    unlink(pc);
    CHECK(store_merge(pa, pb, pc, &n, err, sizeof err) == 0, "merge: %s", err);
    CHECK(n.total == 5 && n.from_a == 3 && n.from_b == 2 && n.same == 1 && n.differ == 1,
          "total %lld, a %lld, b %lld, same %lld, differ %lld", (long long)n.total,
          (long long)n.from_a, (long long)n.from_b, (long long)n.same, (long long)n.differ);
    CHECK(count(pc, "SELECT count(*) FROM result WHERE median_us = 12.0") == 1 &&
              count(pc, "SELECT count(*) FROM result WHERE median_us = 20.0") == 0,
          "A's measurement kept");
    /* the other way round: B first */
    unlink(pc);
    CHECK(store_merge(pb, pa, pc, &n, err, sizeof err) == 0, "merge: %s", err);
    CHECK(n.total == 5 && n.from_a == 4 && n.from_b == 1 && n.same == 1 && n.differ == 1,
          "b, a: total %lld, a %lld, b %lld, same %lld, differ %lld", (long long)n.total,
          (long long)n.from_a, (long long)n.from_b, (long long)n.same, (long long)n.differ);
}

/* A sweep whose process died: "running" in the file, "interrupted" when
 * read, stored as interrupted (with the time of its last result) by the
 * next write open, which also moves the crashed process's -wal content
 * into the main file at once. */
TEST(dead_sweep_and_crash_wal) {
    const char *p = tpath("dead.db"), *c1 = tpath("dead-copy1.db"), *c2 = tpath("dead-copy2.db");
    char wal[700];
    snprintf(wal, sizeof wal, "%s-wal", p);
    unlink(p);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {                       /* the sweep: one result, then it dies */
        nt_device h = mkdev("NVIDIA H200", "GPU-1111");
        int64_t dev, sweep;
        store *db = NULL;
        if (store_open(&db, p, STORE_CREATE, err, sizeof err) ||
            store_device(db, &h, &dev, err, sizeof err) ||
            store_sweep_begin(db, dev, "sweeps/x.lua", "1234", 4000.0, &sweep, err,
                              sizeof err))
            _exit(1);
        store_key k = mkkey(dev, "rmsnorm_bwd.naive", "nsplit=64,partial=f32", 2048, 1024);
        if (put(db, sweep, &k, NT_OK, 10.0, 4)) _exit(1);
        _exit(0);                         /* no store_close: as if killed */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the sweep process failed");
    CHECK(exists(wal), "no -wal file after the crash");
    CHECK(count_live(p, "SELECT count(*) FROM sweep WHERE status = 'running'") == 1,
          "stored status");

    /* reading: shown interrupted, nothing written */
    store *r = NULL;
    rep *rp = calloc(1, sizeof *rp);
    CHECK(store_open(&r, p, STORE_READ, err, sizeof err) == 0, "read: %s", err);
    if (r) {
        CHECK(store_report_sweeps(r, collect, rp, err, sizeof err) == 0 && rp->nrow == 1,
              "sweeps: %s", err);
        CHECK(strstr(rp->row[0], "|interrupted|") != NULL, "row '%s'", rp->row[0]);
        store_close(r);
    }
    CHECK(count_live(p, "SELECT count(*) FROM sweep WHERE status = 'running'") == 1,
          "a read changed the status");

    /* writing: the crashed WAL goes into the file at open, the sweep is marked */
    store *w = NULL;
    CHECK(store_open(&w, p, STORE_WRITE, err, sizeof err) == 0, "write: %s", err);
    CHECK(copy_file(p, c1) == 0, "copy");
    CHECK(count(c1, "SELECT count(*) FROM result") == 1, "the file alone lacks the crashed "
          "sweep's result while a writer has it open (%lld)",
          count(c1, "SELECT count(*) FROM result"));
    CHECK(count(c1, "SELECT count(*) FROM sweep WHERE status = 'interrupted' AND finished = "
                "(SELECT created FROM result)") == 1, "not marked interrupted");
    /* a running sweep of a live process stays running */
    int64_t sweep2;
    CHECK(store_sweep_begin(w, 1, "sweeps/y.lua", "5678", 0, &sweep2, err, sizeof err) == 0,
          "begin: %s", err);
    memset(rp, 0, sizeof *rp);
    CHECK(store_report_sweeps(w, collect, rp, err, sizeof err) == 0 && rp->nrow == 2, "rows");
    CHECK(strstr(rp->row[1], "|running|") != NULL, "live sweep '%s'", rp->row[1]);
    store_close(w);
    free(rp);
    CHECK(!exists(wal), "-wal left after close");
    CHECK(copy_file(p, c2) == 0 && count(c2, "SELECT count(*) FROM sweep") == 2, "close");
}

/* Closing a writer checkpoints even while a reader has the file open. */
TEST(close_checkpoints) {
    nt_device h = mkdev("NVIDIA H200", "GPU-1111");
    int64_t dev, sweep;
    store *w = mkstore("ckpt.db", &h, &dev, &sweep), *r = NULL;
    const char *p = tpath("ckpt.db"), *c = tpath("ckpt-copy.db");
    CHECK(w != NULL, "store");
    if (!w) return;
    CHECK(store_open(&r, p, STORE_READ, err, sizeof err) == 0, "read: %s", err);
    store_key k = mkkey(dev, "rmsnorm_bwd.naive", "nsplit=64,partial=f32", 2048, 1024);
    CHECK(put(w, sweep, &k, NT_OK, 10.0, 4) == 0, "put");
    store_close(w);
    CHECK(copy_file(p, c) == 0, "copy");
    CHECK(count(c, "SELECT count(*) FROM result") == 1 &&
              count(c, "SELECT count(*) FROM sample") == 4,
          "the file alone lacks what the writer stored (%lld results)",
          count(c, "SELECT count(*) FROM result"));
    store_close(r);
}

/* Writers refuse at open what they could not write: a read-only file (and
 * leave no -wal/-shm beside it) and a directory they cannot write.  As
 * root, permissions stop nothing: the checks then run as user nobody. */
TEST(writers_check_first) {
    const char *base = getenv("TMPDIR");
    char dir[600], sub[700], ro[700], fresh[800], side[720];
    snprintf(dir, sizeof dir, "%s/nt-db-XXXXXX", base && *base ? base : "/tmp");
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(sub, sizeof sub, "%s/ro", dir);
    snprintf(ro, sizeof ro, "%s/ro.db", dir);
    snprintf(fresh, sizeof fresh, "%s/new.db", sub);
    mkdir(sub, 0755);
    nt_device h = mkdev("NVIDIA H200", "GPU-1111");
    int64_t dev, sweep;
    store *db = NULL;
    sqlite3 *s;
    CHECK(store_open(&db, ro, STORE_CREATE, err, sizeof err) == 0, "create: %s", err);
    if (!db) return;
    CHECK(store_device(db, &h, &dev, err, sizeof err) == 0 &&
              store_sweep_begin(db, dev, "x.lua", "1", 0, &sweep, err, sizeof err) == 0, "sweep");
    store_close(db);
    /* WAL mode as another SQLite program may leave it (no -wal file) */
    CHECK(sqlite3_open(ro, &s) == SQLITE_OK &&
              sqlite3_exec(s, "PRAGMA journal_mode = WAL", NULL, NULL, NULL) == SQLITE_OK, "wal");
    sqlite3_close(s);
    chmod(ro, 0444);
    chmod(sub, 0555);
    chmod(dir, 0777);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        char e[512], p2[740];
        int bad = 0;
        store *w = NULL;
        if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(64);
        if (store_open(&w, ro, STORE_WRITE, e, sizeof e) == 0) bad |= 1;
        else if (!strstr(e, "cannot write it")) bad |= 2;
        snprintf(p2, sizeof p2, "%s-wal", ro);
        if (access(p2, F_OK) == 0) bad |= 4;
        snprintf(p2, sizeof p2, "%s-shm", ro);
        if (access(p2, F_OK) == 0) bad |= 4;
        if (store_open(&w, fresh, STORE_CREATE, e, sizeof e) == 0) bad |= 8;
        else if (!strstr(e, "cannot write its directory")) bad |= 16;
        /* reading still works, in the writable directory and beside it */
        if (store_open(&w, ro, STORE_READ, e, sizeof e) != 0) bad |= 32;
        store_close(w);
        _exit(bad);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    int bad = WIFEXITED(status) ? WEXITSTATUS(status) : 255;
    CHECK(bad != 64, "cannot become user nobody");
    CHECK(!(bad & 1), "a write open of a read-only file succeeded");
    CHECK(!(bad & 2), "read-only file: message does not say it cannot write it");
    CHECK(!(bad & 4), "a refused write open left -wal/-shm files");
    CHECK(!(bad & 8), "a create in a read-only directory succeeded");
    CHECK(!(bad & 16), "read-only directory: message does not name it");
    CHECK(!(bad & 32), "a read of a read-only file failed");
    chmod(sub, 0755);
    snprintf(side, sizeof side, "%s-wal", ro);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", ro);
    unlink(side);
    unlink(ro);
    unlink(fresh);
    rmdir(sub);
    rmdir(dir);
}

/* Re-measures: stored and found again only for exactly their results;
 * `best` takes their order while the results keep their medians (the
 * stored medians say A, the re-measure says B); a result stored again
 * drops its rows (B is then ranked by its median again); a merge carries
 * them; bad input is refused with nothing stored. */
TEST(rematch) {
    nt_device h = mkdev("NVIDIA H200", "GPU-1111");
    int64_t dev, sweep;
    store *db = mkstore("rm.db", &h, &dev, &sweep);
    CHECK(db != NULL, "store");
    if (!db) return;
    store_key k[3] = {mkkey(dev, "rmsnorm_bwd.naive", "nsplit=64,partial=f32", 2048, 1024),
                      mkkey(dev, "rmsnorm_bwd.naive", "nsplit=128,partial=f32", 2048, 1024),
                      mkkey(dev, "rmsnorm_bwd.naive", "nsplit=32,partial=f32", 2048, 1024)};
    CHECK(put(db, sweep, &k[0], NT_OK, 10.0, 4) == 0 && put(db, sweep, &k[1], NT_OK, 10.1, 4) == 0 &&
              put(db, sweep, &k[2], NT_OK, 12.0, 4) == 0, "results");
    store_best_row *rows = NULL;
    int n = 0, found = -1;
    double us[3] = {0}, got[3] = {0};
    int ns[3] = {48, 48, 48};
    CHECK(store_best(db, NULL, 0, &rows, &n, NULL, err, sizeof err) == 0 && n == 1 &&
              !strcmp(rows[0].params, "nsplit=64,partial=f32"), "best before: %s", err);
    free(rows);
    CHECK(store_rematch_get(db, STORE_CHAIN, 2, k, &found, got, err, sizeof err) == 0 && found == 0,
          "none yet: %s", err);
    us[0] = 10.4;
    us[1] = 10.2;
    CHECK(store_rematch_put(db, sweep, STORE_CHAIN, 2, k, us, ns, err, sizeof err) == 0, "put: %s", err);
    CHECK(store_best(db, NULL, 0, &rows, &n, NULL, err, sizeof err) == 0 && n == 1 &&
              !strcmp(rows[0].params, "nsplit=128,partial=f32") && rows[0].median_us == 10.1,
          "best after: %s %s", err, n ? rows[0].params : "");
    free(rows);
    CHECK(count_live(tpath("rm.db"), "SELECT count(*) FROM rematch WHERE grp = (SELECT min(id) FROM "
                "rematch) AND abs(rank_us - 10.0 * median_us / 10.2) < 1e-9") == 2, "rank_us");
    /* query shape ranks as best does, with the re-measure's median shown */
    rep *r = calloc(1, sizeof *r);
    CHECK(r && store_report_shape(db, dev, 2048, 1024, collect, r, err, sizeof err) == 0 &&
              r->nrow == 3, "shape report: %s", err);
    if (r && r->nrow == 3)
        CHECK(strstr(r->hdr, "|us|rematch us|rematch by|") && strstr(r->row[0], "nsplit=128") &&
                  strstr(r->row[0], "|10.10|10.20|chain|") &&
                  strstr(r->row[1], "|10.00|10.40|chain|") && strstr(r->row[2], "|12.00|-|-|"),
              "'%s' '%s' '%s' '%s'", r->hdr, r->row[0], r->row[1], r->row[2]);
    free(r);
    CHECK(store_rematch_get(db, STORE_CHAIN, 2, k, &found, got, err, sizeof err) == 0 && found == 1 &&
              got[0] == 10.4 && got[1] == 10.2, "found: %s %g %g", err, got[0], got[1]);
    store_key kr[2] = {k[1], k[0]};    /* the keys' order is the caller's */
    CHECK(store_rematch_get(db, STORE_CHAIN, 2, kr, &found, got, err, sizeof err) == 0 && found == 1 &&
              got[0] == 10.2 && got[1] == 10.4, "reordered");
    CHECK(store_rematch_get(db, STORE_CHAIN, 3, k, &found, got, err, sizeof err) == 0 && found == 0,
          "another set of results is another re-measure");
    /* refused: one result twice, a bad median, a result not stored */
    store_key twice[2] = {k[0], k[0]}, none[2] = {k[0], k[2]};
    none[1].params = "nsplit=256,partial=f32";
    CHECK(store_rematch_put(db, sweep, STORE_CHAIN, 2, twice, us, ns, err, sizeof err) != 0 && strstr(err, "twice"),
          "twice: %s", err);
    us[1] = 0;
    CHECK(store_rematch_put(db, sweep, STORE_CHAIN, 2, k, us, ns, err, sizeof err) != 0 && strstr(err, "median"),
          "median: %s", err);
    us[1] = 10.2;
    CHECK(store_rematch_put(db, sweep, STORE_CHAIN, 2, none, us, ns, err, sizeof err) != 0 &&
              strstr(err, "no ok result"), "not stored: %s", err);
    CHECK(count_live(tpath("rm.db"), "SELECT count(*) FROM rematch") == 2, "nothing more stored");
    store_close(db);

    /* a merge carries the re-measure with its results */
    const char *pm = tpath("rm2.db");
    unlink(pm);
    int64_t dev0, sweep0;
    store *e = mkstore("rm0.db", &h, &dev0, &sweep0);
    CHECK(e != NULL, "another store");
    if (e) store_close(e);
    CHECK(store_merge(tpath("rm0.db"), tpath("rm.db"), pm, NULL, err, sizeof err) == 0,
          "merge: %s", err);
    CHECK(count(pm, "SELECT count(*) FROM rematch m JOIN result r ON r.id = m.result_id "
                "WHERE m.grp = (SELECT min(id) FROM rematch)") == 2, "merged re-measure");
    CHECK(count(pm, "SELECT count(*) FROM best b WHERE b.params = 'nsplit=128,partial=f32'") == 1,
          "merged best");

    /* a result stored again drops its rows: the medians rank again */
    CHECK(store_open(&db, tpath("rm.db"), STORE_WRITE, err, sizeof err) == 0, "reopen: %s", err);
    if (!db) return;
    CHECK(put(db, sweep, &k[1], NT_OK, 10.3, 4) == 0, "again");
    CHECK(count_live(tpath("rm.db"), "SELECT count(*) FROM rematch") == 1, "rows of the old result");
    CHECK(store_best(db, NULL, 0, &rows, &n, NULL, err, sizeof err) == 0 && n == 1 &&
              !strcmp(rows[0].params, "nsplit=64,partial=f32"), "best by median again");
    free(rows);
    CHECK(store_rematch_get(db, STORE_CHAIN, 2, k, &found, got, err, sizeof err) == 0 && found == 0,
          "a re-measure of a replaced result is not found");
    store_close(db);
}

/* A re-measure records how it was timed: one of chains back to back does
 * not answer for one of runs alone, nor the other way round; each is found
 * for its own method, and `best` takes the newest one's order. */
TEST(rematch_method) {
    nt_device h = mkdev("NVIDIA H200", "GPU-2222");
    int64_t dev, sweep;
    store *db = mkstore("rmm.db", &h, &dev, &sweep);
    CHECK(db != NULL, "store");
    if (!db) return;
    store_key k[2] = {mkkey(dev, "rmsnorm_bwd.naive", "nsplit=64,partial=f32", 2048, 1024),
                      mkkey(dev, "rmsnorm_bwd.naive", "nsplit=128,partial=f32", 2048, 1024)};
    CHECK(put(db, sweep, &k[0], NT_OK, 10.0, 4) == 0 && put(db, sweep, &k[1], NT_OK, 10.1, 4) == 0,
          "results");
    int found = -1, ns[2] = {48, 48};
    double chain_us[2] = {10.4, 10.2}, alone_us[2] = {13.0, 13.5}, got[2] = {0};
    CHECK(store_rematch_put(db, sweep, STORE_CHAIN, 2, k, chain_us, ns, err, sizeof err) == 0,
          "chain put: %s", err);
    CHECK(store_rematch_get(db, STORE_ALONE, 2, k, &found, got, err, sizeof err) == 0 && found == 0,
          "a chain re-measure answered an alone one: %s", err);
    CHECK(store_rematch_put(db, sweep, STORE_ALONE, 2, k, alone_us, ns, err, sizeof err) == 0,
          "alone put: %s", err);
    CHECK(store_rematch_get(db, STORE_ALONE, 2, k, &found, got, err, sizeof err) == 0 && found == 1 &&
              got[0] == 13.0 && got[1] == 13.5, "alone: %s %g %g", err, got[0], got[1]);
    CHECK(store_rematch_get(db, STORE_CHAIN, 2, k, &found, got, err, sizeof err) == 0 && found == 1 &&
              got[0] == 10.4 && got[1] == 10.2, "chain: %s %g %g", err, got[0], got[1]);
    CHECK(count_live(tpath("rmm.db"), "SELECT count(*) FROM rematch WHERE method = 'alone'") == 2 &&
              count_live(tpath("rmm.db"), "SELECT count(*) FROM rematch WHERE method = 'chain'") == 2,
          "the method column");
    store_best_row *rows = NULL;
    int n = 0;
    CHECK(store_best(db, NULL, 0, &rows, &n, NULL, err, sizeof err) == 0 && n == 1 &&
              !strcmp(rows[0].params, "nsplit=64,partial=f32"), "best by the newest (alone): %s %s",
          err, n ? rows[0].params : "");
    free(rows);
    store_close(db);
}

/* Claims: a key's claim is one writer's at a time, across the GPUs of one
 * model (the key without its device), and not across models or keys;
 * store_release frees it; a writer that dies frees its claims. */
TEST(claims) {
    nt_device a = mkdev("NVIDIA H200", "GPU-c1a1"), b = mkdev("NVIDIA H200", "GPU-c1b1"),
              o = mkdev("NVIDIA H100 80GB HBM3", "GPU-c1c1");
    int64_t adev, bdev, odev, sweep;
    int got = -1;
    store *x = mkstore("claims.db", &a, &adev, &sweep), *y = NULL;
    CHECK(x != NULL, "store");
    if (!x) return;
    CHECK(store_device(x, &b, &bdev, err, sizeof err) == 0 &&
              store_device(x, &o, &odev, err, sizeof err) == 0,
          "devices: %s", err);
    CHECK(store_open(&y, tpath("claims.db"), STORE_WRITE, err, sizeof err) == 0, "second: %s",
          err);
    if (!y) {
        store_close(x);
        return;
    }
    const char *pf = "rmsnorm_bwd.persistent", *pp = "block=256,chunks=2,stages=2,k=0";
    store_key ka = mkkey(adev, pf, pp, 4096, 4096), kb = mkkey(bdev, pf, pp, 4096, 4096);
    store_key ko = mkkey(odev, pf, pp, 4096, 4096), kn = mkkey(bdev, pf, pp, 8192, 4096);
    store_key kt = kb;
    kt.timing.min_samples = 21;
    CHECK(store_claim(x, &ka, &got, err, sizeof err) == 0 && got == 1, "x takes it: %d %s", got,
          err);
    CHECK(store_claim(y, &kb, &got, err, sizeof err) == 0 && got == 0,
          "another GPU of the model finds it held: %d %s", got, err);
    CHECK(store_claim(y, &ko, &got, err, sizeof err) == 0 && got == 1,
          "another model's is free: %d %s", got, err);
    CHECK(store_claim(y, &kn, &got, err, sizeof err) == 0 && got == 1,
          "another shape's is free: %d %s", got, err);
    CHECK(store_claim(y, &kt, &got, err, sizeof err) == 0 && got == 1,
          "other timing settings' is free: %d %s", got, err);
    CHECK(store_claim(x, &ka, &got, err, sizeof err) == 0 && got == 1,
          "the holder takes it again: %d %s", got, err);
    store_release(x);
    CHECK(store_claim(y, &kb, &got, err, sizeof err) == 0 && got == 1, "released: %d %s", got,
          err);
    CHECK(store_claim(x, &ka, &got, err, sizeof err) == 0 && got == 0, "now y's: %d %s", got,
          err);
    store_release(y);
    /* a writer killed while it holds a claim */
    int ready[2];
    CHECK(pipe(ready) == 0, "pipe");
    pid_t pid = fork();
    if (pid == 0) {
        store *z = NULL;
        char c = 0;
        if (store_open(&z, tpath("claims.db"), STORE_WRITE, err, sizeof err) ||
            store_claim(z, &kb, &got, err, sizeof err) || !got)
            c = 1;
        if (write(ready[1], &c, 1) != 1) _exit(1);
        pause();
        _exit(0);
    }
    char c = 1;
    CHECK(read(ready[0], &c, 1) == 1 && c == 0, "the child took the claim");
    CHECK(store_claim(x, &ka, &got, err, sizeof err) == 0 && got == 0, "the child holds it: %d",
          got);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    close(ready[0]);
    close(ready[1]);
    CHECK(store_claim(x, &ka, &got, err, sizeof err) == 0 && got == 1,
          "free once its writer died: %d %s", got, err);
    store_close(y);
    store_close(x);
}

int main(void) {
    RUN(round_trip);
    RUN(resume_key);
    RUN(no_duplicates);
    RUN(merge);
    RUN(merge_refuses_existing_output);
    RUN(refuse_foreign_files);
    RUN(blank_files_get_the_schema);
    RUN(migrates_schema_1);
    RUN(migrates_schema_4_fixture);
    RUN(best);
    RUN(family_hashes_once);
    RUN(best_complete_device);
    RUN(models_pool);
    RUN(reports);
    RUN(read_only_open);
    RUN(read_while_writing);
    RUN(cli_report_runner_up_after_rematch);
    RUN(cli_report_and_query);
    RUN(merge_counts);
    RUN(dead_sweep_and_crash_wal);
    RUN(close_checkpoints);
    RUN(writers_check_first);
    RUN(rematch);
    RUN(rematch_method);
    RUN(claims);
    T_END();
}
