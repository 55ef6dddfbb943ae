/* test_kernels.c -- GPU tests: every family over a grid of shapes.
 *
 * Runs each variant through the GPU runner's evaluator, which poisons the
 * outputs with NaN, validates every element of dx and dw against the float64
 * reference, runs twice more and compares bitwise, then times a few samples.
 * A variant passes when its status is ok.  Shapes: M = 1, 7, 131, 1000 and a
 * large M, for N from 8 to 16384 including sizes that are not powers of two
 * (1536, 2880, 4104, 11008).
 *
 *   build/gpu/test_kernels           full grid
 *   build/gpu/test_kernels --small   small shapes only (for compute-sanitizer)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/t.h"
#include "tuner/runner.h"

static nt_runner *run;
static nt_evaluator ev;
static int small;

static const long long Ms[] = {1, 7, 131, 1000, 20000};
static const long long Ns[] = {8, 24, 1024, 1536, 2048, 2880, 4096, 4104, 8192, 11008, 16384};

/* Persistent configurations: (block, chunks, stages, k); the first one whose
 * capacity block*chunks*8 covers N and is used. */
static const int persist_cfg[][4] = {
    {32, 1, 2, 0},  {64, 2, 1, 2},  {128, 1, 3, 0},  {128, 2, 2, 2},   {256, 1, 2, 0},
    {256, 2, 4, 0}, {512, 1, 1, 0}, {256, 4, 2, 1},  {512, 2, 3, 1},   {1024, 2, 2, 1},
    {512, 4, 2, 1}, {256, 8, 1, 1},
};

/* Evaluate one variant; returns its status and prints a line when not ok. */
static int one(const char *fam, const char *params, long long M, long long N) {
    const nt_family *f = nt_family_find(fam);
    nt_params p;
    nt_shape s = {M, N};
    nt_timing t = {1, 3, 5, 0.5};
    static nt_result res;
    nt_params_parse(params, &p);
    if (ev.eval(ev.ctx, f, &p, &s, &t, &res)) {
        printf("  evaluator failed: %s\n", res.msg);
        return -1;
    }
    if (res.status != NT_OK)
        printf("  M=%lld N=%lld %s %s: %s: %s\n", M, N, fam, params,
               nt_status_name(res.status), res.msg);
    return res.status;
}

TEST(naive_all_shapes) {
    for (size_t i = 0; i < sizeof Ms / sizeof Ms[0]; i++)
        for (size_t j = 0; j < sizeof Ns / sizeof Ns[0]; j++) {
            long long M = Ms[i], N = Ns[j];
            if (small && (M > 131 || N > 4104)) continue;
            if (M * N > 20000LL * 4096) continue;
            CHECK(one("rmsnorm_bwd.naive", "nsplit=32,partial=f32", M, N) == NT_OK, "f32 M=%lld N=%lld", M, N);
            CHECK(one("rmsnorm_bwd.naive", "nsplit=7,partial=bf16", M, N) == NT_OK, "bf16 M=%lld N=%lld", M, N);
        }
}

TEST(persistent_all_shapes) {
    for (size_t i = 0; i < sizeof Ms / sizeof Ms[0]; i++)
        for (size_t j = 0; j < sizeof Ns / sizeof Ns[0]; j++) {
            long long M = Ms[i], N = Ns[j];
            int tried = 0;
            if (small && (M > 131 || N > 4104)) continue;
            if (M * N > 20000LL * 4096) continue;
            for (size_t c = 0; c < sizeof persist_cfg / sizeof persist_cfg[0] && tried < 2; c++) {
                const int *k = persist_cfg[c];
                if ((long long)k[0] * k[1] * 8 < N) continue;
                if ((long long)k[0] * k[1] * 8 > 4 * N && N > 64) continue;
                char p[96];
                snprintf(p, sizeof p, "block=%d,chunks=%d,stages=%d,k=%d", k[0], k[1], k[2], k[3]);
                CHECK(one("rmsnorm_bwd.persistent", p, M, N) == NT_OK, "M=%lld N=%lld %s", M, N, p);
                tried++;
            }
            CHECK(tried > 0, "no persistent config for N=%lld", N);
        }
}

/* Every stage count and k on one shape whose M is not a multiple of the grid. */
TEST(persistent_pipeline_depths) {
    for (int st = 1; st <= 4; st++)
        for (int k = 0; k <= 2; k++) {
            char p[96];
            snprintf(p, sizeof p, "block=128,chunks=2,stages=%d,k=%d", st, k);
            CHECK(one("rmsnorm_bwd.persistent", p, small ? 300 : 4099, 2048) == NT_OK, "%s", p);
        }
}

/* The runner must catch a variant that cannot run: k larger than fits. */
TEST(refuses_what_does_not_fit) {
    int s = one("rmsnorm_bwd.persistent", "block=1024,chunks=2,stages=4,k=1", 64, 16384);
    CHECK(s == NT_UNSUPPORTED || s == NT_RESOURCES, "status %d", s);
    s = one("rmsnorm_bwd.persistent", "block=128,chunks=1,stages=2,k=0", 64, 2048);
    CHECK(s == NT_UNSUPPORTED, "N above capacity: status %d", s);
}

int main(int argc, char **argv) {
    char err[512];
    nt_runner_opts o = {.device = 0, .seed = 7, .use_cache = 1, .eps = 1e-6};
    small = argc > 1 && !strcmp(argv[1], "--small");
    if (nt_runner_open(&run, &o, err, sizeof err)) {
        printf("FAIL open: %s\n", err);
        t_failed++;
        T_END();
    }
    nt_runner_evaluator(run, &ev);
    RUN(naive_all_shapes);
    RUN(persistent_all_shapes);
    RUN(persistent_pipeline_depths);
    RUN(refuses_what_does_not_fit);
    nt_runner_close(run);
    T_END();
}
