/* test_dispatch.c -- the drift test: the library's dispatch,
 * built from a dispatch header, runs every exported config with its own
 * kernels and never silently another.
 *
 * A results database is made here with store_put, generically: for every
 * op, every dtype combination it accepts and every family, a spread of
 * params (integer params at their bounds and powers of two between, every
 * string choice) that plan precisely enough at some of a list of shapes,
 * each measured (made-up times) at every listed shape it can run, under the
 * family's current source hash.  `normtune export` writes the header; the
 * drift check (tests/drift_check.c) is compiled against it in C with the
 * dispatch core, the op registry and the op folders' C files, and run: every
 * tuned shape resolves to its config's own kernels and the lookup picks it,
 * every problem's fallback resolves at N = 8 .. NT_MAX_N, configs with a
 * kernel dropped are refused.  The check must fail on a header whose
 * kernel list was tampered with (a kernel renamed in its data), and pass on
 * the shipped header once that is format 3.
 *
 *   test_dispatch                 the tests (from the repository root, or
 *                                 NT_ROOT=the root)
 *   test_dispatch --make-db FILE  only write the fixture database (used by
 *                                 tests/test_lib_build.sh) */
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/t.h"
#include "tuner/cli.h"
#include "db/store.h"

#define MAX_PER_FAMILY 5      /* configs per family and problem */
#define MAX_VALS 12           /* candidate values per parameter */

static const int64_t fix_N[] = {8, 24, 1024, 1032, 4096, 16384, 40968, NT_MAX_N};
static const int64_t fix_M[] = {1, 7, 4096};

/* Candidate values of parameter d, as texts, into v[]; their count. */
static int candidates(const nt_param_def *d, char v[MAX_VALS][NT_NAME_LEN]) {
    int n = 0;
    if (d->kind == NT_PARAM_STR) {
        for (int i = 0; d->choices[i] && n < MAX_VALS; i++)
            snprintf(v[n++], NT_NAME_LEN, "%s", d->choices[i]);
        return n;
    }
    snprintf(v[n++], NT_NAME_LEN, "%lld", (long long)d->lo);
    for (int64_t x = 1; x < d->hi && n < MAX_VALS - 1; x *= 2)
        if (x > d->lo) snprintf(v[n++], NT_NAME_LEN, "%lld", (long long)x);
    if (d->hi != d->lo) snprintf(v[n++], NT_NAME_LEN, "%lld", (long long)d->hi);
    return n;
}

/* Params combination c of f's candidate values v[i][0 .. nv[i]) into *pa
 * (the last parameter varies fastest). */
static void combination(const nt_family *f, char v[NT_MAX_PARAMS][MAX_VALS][NT_NAME_LEN],
                        const int *nv, int c, nt_params *pa) {
    memset(pa, 0, sizeof *pa);
    for (int i = f->nparams - 1; i >= 0; i--) {
        nt_params_set(pa, f->params[i].name, v[i][c % nv[i]]);
        c /= nv[i];
    }
}

/* 1 when params pa of f plan p precisely with dev = NULL. */
static int runs(const nt_family *f, const nt_params *pa, const nt_problem *p) {
    char err[256];
    nt_plan pl;
    return nt_problem_check(p, err, sizeof err) == 0 &&
           f->check(pa, p, NULL, err, sizeof err) == 0 &&
           f->plan(pa, p, NULL, &pl, err, sizeof err) == 0 && nt_plan_precise(&pl, p);
}

/* Put one ok result, with every output's error well within its dtype. */
static int put(store *db, int64_t sw, int64_t dev, const nt_family *f, const char *params,
               const nt_problem *p, double us, char *err, size_t errlen) {
    static nt_result r;
    char hash[17], dt[160];
    store_key k;
    memset(&k, 0, sizeof k);
    memset(&r, 0, sizeof r);
    if (nt_family_hash(f, hash) || nt_dtypes_canon(p, dt, sizeof dt)) {
        snprintf(err, errlen, "hash or dtypes of %s", f->name);
        return -1;
    }
    k.device = dev;
    k.family = f->name;
    k.params = params;
    k.src_hash = hash;
    k.op = p->op->name;
    k.dtype = dt;
    k.shape.M = p->M;
    k.shape.N = p->N;
    k.timing = (nt_timing){.warmup = 1, .min_samples = 2, .max_samples = 4, .rel_ci = 0.01};
    r.status = NT_OK;
    r.median_us = r.p10_us = r.p90_us = us;
    r.nsamples = 2;
    r.samples[0] = r.samples[1] = us;
    r.bytes = nt_problem_bytes(p);
    r.gbps = r.bytes / (us * 1e3);
    for (int i = 0; i < p->op->ntensors && r.nerr < NT_MAX_ERRS; i++) {
        if (p->op->tensors[i].role != NT_OUT) continue;
        double tol = nt_dtypes[nt_tensor_dtype(p, i)].tol;
        nt_error *e = &r.errs[r.nerr++];
        snprintf(e->tensor, sizeof e->tensor, "%s", p->op->tensors[i].name);
        e->value = tol / 10;
        e->tol = tol;
        e->required = tol;
    }
    return store_put(db, sw, &k, &r, err, errlen);
}

/* Put the results of one family for problem p (its dtypes).  Returns the
 * number put, -1 on a store error. */
static int put_family(store *db, int64_t sw, int64_t dev, const nt_family *f, const nt_problem *p0,
                      uint64_t *seed, char *err, size_t errlen) {
    char v[NT_MAX_PARAMS][MAX_VALS][NT_NAME_LEN];
    int nv[NT_MAX_PARAMS], total = 1, put_n = 0, picked = 0;
    for (int i = 0; i < f->nparams; i++) {
        nv[i] = candidates(&f->params[i], v[i]);
        total *= nv[i];
    }
    /* a spread over the combinations: a stride prime to most counts */
    for (int step = 0, c = 0; step < total && picked < MAX_PER_FAMILY; step++, c = (c + 37) % total) {
        nt_params pa;
        char canon[160], why[256];
        int ok = 0;
        combination(f, v, nv, c, &pa);
        if (nt_params_validate(f, &pa, why, sizeof why) || nt_params_canon(f, &pa, canon, sizeof canon))
            continue;
        for (size_t a = 0; a < sizeof fix_N / sizeof fix_N[0]; a++)
            for (size_t b = 0; b < sizeof fix_M / sizeof fix_M[0]; b++) {
                nt_problem p = *p0;
                p.N = fix_N[a];
                p.M = fix_M[b];
                if (!runs(f, &pa, &p)) continue;
                *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
                double us = 1.0 + (double)(*seed >> 40) / (double)(1 << 20);
                if (put(db, sw, dev, f, canon, &p, us, err, errlen)) return -1;
                put_n++;
                ok = 1;
            }
        picked += ok;
    }
    return put_n;
}

/* Write the fixture database at path: every op, accepted dtype combination
 * and family.  The number of results put, or -1 with a message. */
static int make_db(const char *path, char *err, size_t errlen) {
    store *db = NULL;
    nt_device d;
    int64_t dev = 0, sw = 0;
    int n = 0;
    uint64_t seed = 12345;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "NVIDIA H200");
    snprintf(d.uuid, sizeof d.uuid, "GPU-drift-test");
    d.cc_major = 9;
    if (store_open(&db, path, STORE_CREATE, err, errlen) ||
        store_device(db, &d, &dev, err, errlen) ||
        store_sweep_begin(db, dev, "fixture.lua", "00", 100.0, &sw, err, errlen))
        goto fail;
    for (int o = 0; nt_ops[o]; o++) {
        const nt_op *op = nt_ops[o];
        int dsel[NT_MAX_SLOTS] = {0};
        for (;;) {
            nt_problem p;
            char why[256];
            int allowed = 1;
            nt_problem_init(&p, op, 1, 1024);
            for (int s = 0; s < op->nslots; s++) {
                allowed &= (op->slots[s].allowed >> dsel[s]) & 1u;
                p.dtype[s] = dsel[s];
            }
            if (allowed && nt_problem_check(&p, why, sizeof why) == 0)
                for (int f = 0; op->families[f]; f++) {
                    int k = put_family(db, sw, dev, op->families[f], &p, &seed, err, errlen);
                    if (k < 0) goto fail;
                    n += k;
                }
            int s = op->nslots - 1;
            while (s >= 0 && ++dsel[s] == NT_NDTYPES) dsel[s--] = 0;
            if (s < 0) break;
        }
    }
    if (store_sweep_end(db, sw, "done", err, errlen)) goto fail;
    store_close(db);
    return n;
fail:
    if (db) store_close(db);
    return -1;
}

/* Run a shell command; its exit status, or -1. */
static int sh(const char *cmd) {
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static const char *root(void) {
    const char *r = getenv("NT_ROOT");
    return r && *r ? r : ".";
}

/* Compile the drift check against header hdr into exe.  The compiler's
 * exit status. */
static int build_check(const char *hdr, const char *exe) {
    char cmd[4096];
    const char *cc = getenv("CC");
    snprintf(cmd, sizeof cmd,
             "cd '%s' && %s -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Werror "
             "-D_GNU_SOURCE -I. '-DNT_DISPATCH_HEADER=\"%s\"' -o '%s' tests/drift_check.c "
             "kernels/dispatch.c kernels/family.c kernels/ops.c kernels/ref.c "
             "$(ls kernels/*/*.c | grep -v '/test_') -lm -lpthread > '%s.cc' 2>&1",
             root(), cc && *cc ? cc : "cc", hdr, exe, exe);
    return sh(cmd);
}

/* Run the drift check exe; its exit status, output in exe.out. */
static int run_check(const char *exe) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' > '%s.out' 2>&1", exe, exe);
    return sh(cmd);
}

/* Print file path, indented. */
static void show(const char *path) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "sed 's/^/    /' '%s' | head -40", path);
    sh(cmd);
}

static char db[600], hdr[600];
static int nputs;

TEST(fixture_and_export) {
    char err[512], out[700];
    struct stat st;
    snprintf(db, sizeof db, "%s/fixture.db", t_tmpdir());
    snprintf(hdr, sizeof hdr, "%s/dispatch.h", t_tmpdir());
    nputs = make_db(db, err, sizeof err);
    CHECK(nputs > 0, "fixture database: %s", nputs < 0 ? err : "no result put");
    char *argv[] = {"export", "--db", db, "-o", hdr};
    fflush(stdout);
    CHECK(cmd_export(5, argv) == 0, "export failed");
    CHECK(stat(hdr, &st) == 0 && st.st_size > 0, "no header");
    snprintf(out, sizeof out, "%s/kernels/dispatch.c", root());
    CHECK(stat(out, &st) == 0, "run from the repository root (or set NT_ROOT): no %s", out);
}

TEST(drift_none) {
    char exe[700], out[720];
    snprintf(exe, sizeof exe, "%s/drift", t_tmpdir());
    snprintf(out, sizeof out, "%s.cc", exe);
    int rc = build_check(hdr, exe);
    CHECK(rc == 0, "the drift check does not compile against the header");
    if (rc) {
        show(out);
        return;
    }
    rc = run_check(exe);
    snprintf(out, sizeof out, "%s.out", exe);
    CHECK(rc == 0, "drift found (exit %d)", rc);
    FILE *f = fopen(out, "r");
    char line[1024] = "";
    int tuned = -1, stretched = -1, fb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "drift:", 6)) {
            const char *t = strstr(line, "kernels: ");
            sscanf(t ? t + 9 : "", "%d tuned shapes resolved to their own kernels, %d stretches "
                   "8 columns past theirs, %d fallback", &tuned, &stretched, &fb);
            printf("note: %s", line);
        }
    if (f) fclose(f);
    CHECK(tuned > 0 && tuned <= nputs, "tuned shapes resolved: %d (results put %d)", tuned, nputs);
    CHECK(stretched > 0 && stretched <= tuned, "stretches resolved: %d", stretched);
    CHECK(fb > 1000, "fallback shapes resolved: %d", fb);
    if (rc) show(out);
}

/* The drift check must catch a header whose kernel list disagrees with the
 * plans: a kernel renamed in normtune_kernel_names. */
TEST(drift_caught) {
    char bad[700], exe[700], cmd[4096], out[720];
    snprintf(bad, sizeof bad, "%s/tampered.h", t_tmpdir());
    snprintf(exe, sizeof exe, "%s/drift_bad", t_tmpdir());
    /* the first kernel name in the data gets a '1' appended to its
     * template's first argument, e.g. <128, ...> -> <1281, ...> */
    snprintf(cmd, sizeof cmd,
             "awk '/^NORMTUNE_PRIV_STATIC const char \\*const normtune_kernel_names/ {k = 1; print; next}"
             " k == 1 && /^    \"/ { sub(/</, \"<1\"); k = 2 } {print}' '%s' > '%s' && ! cmp -s '%s' '%s'",
             hdr, bad, hdr, bad);
    CHECK(sh(cmd) == 0, "could not tamper with the header");
    CHECK(build_check(bad, exe) == 0, "the drift check does not compile against the tampered header");
    CHECK(run_check(exe) == 1, "a tampered kernel list passed the drift check");
    snprintf(out, sizeof out, "%s.out", exe);
    snprintf(cmd, sizeof cmd, "grep -q 'is not one of its kernels' '%s'", out);
    CHECK(sh(cmd) == 0, "the refusal does not say a kernel is missing");
}

/* A family marked own_n (kernels/family.h: the lookup offers its entries
 * at their own N only) has configs not sized to a row length: each of the
 * params spread that runs 4096 x 1024 in the op's default dtypes also runs
 * rows of 64 and of 16384, and every such family has one.  (A family not
 * marked may run shorter rows than it was tuned at, with idle lanes, but
 * not longer ones than its config covers.) */
TEST(own_n_runs_far_rows) {
    int marked = 0;
    for (int o = 0; nt_ops[o]; o++)
        for (int fi = 0; nt_ops[o]->families[fi]; fi++) {
            const nt_family *f = nt_ops[o]->families[fi];
            char v[NT_MAX_PARAMS][MAX_VALS][NT_NAME_LEN], why[256];
            int nv[NT_MAX_PARAMS], total = 1, at = 0, both = 0;
            for (int i = 0; i < f->nparams; i++) {
                nv[i] = candidates(&f->params[i], v[i]);
                total *= nv[i];
            }
            for (int c = 0; c < total; c++) {
                nt_params pa;
                nt_problem p, lo, hi;
                combination(f, v, nv, c, &pa);
                if (nt_params_validate(f, &pa, why, sizeof why)) continue;
                nt_problem_init(&p, f->op, 4096, 1024);
                lo = hi = p;
                lo.N = 64;
                hi.N = 16384;
                int r = runs(f, &pa, &p), rl = runs(f, &pa, &lo), rh = runs(f, &pa, &hi);
                at += r;
                both += r && rl && rh;
                if (f->own_n && r)
                    CHECK(rl && rh, "%s (own_n) runs 4096 x 1024 but not rows of %s", f->name,
                          rl ? "16384" : "64");
            }
            if (f->own_n) {
                marked++;
                CHECK(at > 0 && both == at, "%s (own_n): %d of its spread run 4096 x 1024, %d "
                      "of them rows of 64 and 16384 too", f->name, at, both);
            }
        }
    CHECK(marked > 0, "no family is marked own_n");
}

/* The shipped header: the format this build writes, and no drift. */
TEST(drift_shipped) {
    char path[1200], exe[700], cmd[1400], cwd[400] = "";
    if (root()[0] != '/' && !getcwd(cwd, sizeof cwd)) cwd[0] = 0;
    snprintf(path, sizeof path, "%s%s%s/kernels/normtune_dispatch.h", cwd, cwd[0] ? "/" : "",
             root());
    snprintf(cmd, sizeof cmd, "grep -q '^#define NORMTUNE_DISPATCH_VERSION 5$' '%s'", path);
    if (sh(cmd) != 0) {
        CHECK(0, "the shipped header is not format 5: normtune export --db data/results.db -o kernels/normtune_dispatch.h");
        return;
    }
    snprintf(exe, sizeof exe, "%s/drift_shipped", t_tmpdir());
    CHECK(build_check(path, exe) == 0, "the drift check does not compile against the shipped header");
    int rc = run_check(exe);
    CHECK(rc == 0, "the shipped header drifts (exit %d)", rc);
    snprintf(cmd, sizeof cmd, "%s.out", exe);
    show(cmd);
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "--make-db")) {
        char err[512];
        int n = make_db(argv[2], err, sizeof err);
        if (n <= 0) fprintf(stderr, "test_dispatch: %s\n", n < 0 ? err : "no result");
        return n > 0 ? 0 : 1;
    }
    RUN(fixture_and_export);
    RUN(drift_none);
    RUN(drift_caught);
    RUN(own_n_runs_far_rows);
    RUN(drift_shipped);
    T_END();
}
