/* test_shape_mem.c -- the runner's memory plan for a problem (no GPU
 * needed): sizes are the products of the op's tensor table and dtypes, and
 * shapes whose sizes overflow size_t are refused with a message instead of
 * wrapping (M = 2^61, N = 8 used to give a zero-byte tensor); the host
 * holds only the rows it recomputes to check the device's reference. */
#include "tests/t.h"
#include "tuner/runner.h"

/* A problem of op `op` with dtypes text dt (NULL: defaults). */
static nt_problem prob(const char *op, const char *dt, int64_t M, int64_t N) {
    nt_problem p;
    char err[256];
    nt_problem_init(&p, nt_op_find(op), M, N);
    if (dt && nt_dtypes_parse(&p, dt, err, sizeof err)) printf("  dtypes %s: %s\n", dt, err);
    return p;
}

TEST(sizes_of_a_normal_shape) {
    nt_problem s = prob("rmsnorm_bwd", NULL, 4096, 1024);
    nt_shape_mem m;
    char err[256] = "";
    size_t t = 2u * 4096u * 1024u;        /* one bf16 M x N tensor */
    CHECK(nt_shape_mem_plan(&s, 60 << 20, &m, err, sizeof err) == 0, "%s", err);
    /* x, w, dy, dx, dw: w bf16, dw fp32 */
    CHECK(m.elems[0] == 4096u * 1024u && m.tbytes[0] == t, "x %zu", m.tbytes[0]);
    CHECK(m.tbytes[1] == 2 * 1024 && m.tbytes[4] == 4 * 1024, "w %zu dw %zu", m.tbytes[1],
          m.tbytes[4]);
    /* 3 tensors of 8 MiB a set, >= 3x a 60 MiB L2: 8 sets */
    CHECK(m.set_bytes == 3 * t && m.sets == 8, "set %zu sets %d", m.set_bytes, m.sets);
    /* host: the 8 rows it recomputes of x and dy, w, and both references
     * (the host's and the device's) of those rows of dx and of dw */
    CHECK(m.host == 2 * 8 * 2048 + 2048 + 16 * 8 * 1024 + 16 * 1024, "host %zu", m.host);
    /* device: 8 sets, w, dw, references, the reference's scratch (a
     * double a row, 256 a column), copies of dx and dw */
    CHECK(m.device == 8 * 3 * t + 2048 + 4096 + 8 * 4096u * 1024u + 8 * 1024 +
                          8 * (4096u + 256u * 1024u) + t + 4096,
          "device %zu", m.device);
}

TEST(small_problems_are_recomputed_whole) {
    /* M x N <= 2^20: the host recomputes every row (and so dw) */
    nt_problem s = prob("rmsnorm_bwd", NULL, 1024, 1024);
    nt_shape_mem m;
    char err[256] = "";
    size_t t = 2u * 1024u * 1024u;
    CHECK(nt_shape_mem_plan(&s, 60 << 20, &m, err, sizeof err) == 0, "%s", err);
    CHECK(m.host == 2 * t + 2048 + 16 * 1024u * 1024u + 16 * 1024, "host %zu", m.host);
    s.M = 1025;               /* one row more: 8 rows */
    CHECK(nt_shape_mem_plan(&s, 60 << 20, &m, err, sizeof err) == 0, "%s", err);
    CHECK(m.host == 2 * 8 * 2048 + 2048 + 16 * 8 * 1024 + 16 * 1024, "host %zu", m.host);
}

TEST(sizes_follow_the_dtypes) {
    nt_problem a = prob("rmsnorm_bwd", "x=f32", 1000, 512);
    nt_problem b = prob("rmsnorm_bwd", "x=bf16,w=f32", 1000, 512);
    nt_shape_mem m;
    char err[256] = "";
    CHECK(nt_shape_mem_plan(&a, 60 << 20, &m, err, sizeof err) == 0, "%s", err);
    CHECK(m.tbytes[0] == 4 * 1000 * 512 && m.tbytes[1] == 4 * 512 && m.tbytes[4] == 4 * 512,
          "f32: x %zu w %zu dw %zu", m.tbytes[0], m.tbytes[1], m.tbytes[4]);
    CHECK(nt_shape_mem_plan(&b, 60 << 20, &m, err, sizeof err) == 0, "%s", err);
    CHECK(m.tbytes[0] == 2 * 1000 * 512 && m.tbytes[1] == 4 * 512, "bf16/f32: x %zu w %zu",
          m.tbytes[0], m.tbytes[1]);
    CHECK(nt_problem_bytes(&b) == 3.0 * 2 * 1000 * 512 + 4.0 * 512 + 4.0 * 512, "bytes %g",
          nt_problem_bytes(&b));
}

TEST(overflowing_shapes_are_refused) {
    static const int64_t bad[][2] = {
        {1ll << 61, 8},          /* n*2 wraps to 0 */
        {1ll << 40, 1ll << 30},  /* n wraps */
        {1ll << 58, 8},          /* a set of 3 tensors wraps */
        {0, 8},
        {8, -1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nt_problem s = prob("rmsnorm_bwd", NULL, bad[i][0], bad[i][1]);
        nt_shape_mem m;
        char err[256] = "";
        CHECK(nt_shape_mem_plan(&s, 60 << 20, &m, err, sizeof err) == -1,
              "M=%lld N=%lld accepted: x %zu bytes", (long long)s.M, (long long)s.N, m.tbytes[0]);
        CHECK(i >= 3 || strstr(err, "too large"), "message: %s", err);
    }
}

TEST(one_set_when_a_set_exceeds_the_l2) {
    nt_problem s = prob("rmsnorm_bwd", NULL, 65536, 16384);
    nt_shape_mem m;
    char err[256] = "";
    CHECK(nt_shape_mem_plan(&s, 60 << 20, &m, err, sizeof err) == 0, "%s", err);
    CHECK(m.sets == 1, "sets %d", m.sets);
}

int main(void) {
    RUN(sizes_of_a_normal_shape);
    RUN(small_problems_are_recomputed_whole);
    RUN(sizes_follow_the_dtypes);
    RUN(overflowing_shapes_are_refused);
    RUN(one_set_when_a_set_exceeds_the_l2);
    T_END();
}
