/* test_shape_mem.c -- the runner's memory plan for a shape (no GPU needed):
 * sizes are the products they should be, and shapes whose sizes overflow
 * size_t are refused with a message instead of wrapping (M = 2^61, N = 8
 * used to give a zero-byte tensor). */
#include "tests/t.h"
#include "tuner/runner.h"

TEST(sizes_of_a_normal_shape) {
    nt_shape s = {.M = 4096, .N = 1024};
    nt_shape_mem m;
    char err[256] = "";
    CHECK(nt_shape_mem_plan(&s, 60 << 20, &m, err, sizeof err) == 0, "%s", err);
    CHECK(m.n == 4096u * 1024u, "n %zu", m.n);
    CHECK(m.bytes == 2u * 4096u * 1024u, "bytes %zu", m.bytes);
    /* 3 tensors of 8 MiB a set, >= 3x a 60 MiB L2: 8 sets */
    CHECK(m.sets == 8, "sets %d", m.sets);
    CHECK(m.host == 2 * m.bytes + 8 * m.n + 16 * 1024, "host %zu", m.host);
    CHECK(m.device == 8 * 3 * m.bytes + m.bytes + 8 * m.n + 16 * 1024, "device %zu", m.device);
}

TEST(overflowing_shapes_are_refused) {
    static const nt_shape bad[] = {
        {.M = 1ll << 61, .N = 8},          /* n*2 wraps to 0 */
        {.M = 1ll << 40, .N = 1ll << 30},  /* n wraps */
        {.M = 1ll << 58, .N = 8},          /* a set of 3 tensors wraps */
        {.M = 0, .N = 8},
        {.M = 8, .N = -1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        nt_shape_mem m;
        char err[256] = "";
        CHECK(nt_shape_mem_plan(&bad[i], 60 << 20, &m, err, sizeof err) == -1,
              "M=%lld N=%lld accepted: bytes %zu", (long long)bad[i].M, (long long)bad[i].N,
              m.bytes);
        CHECK(i >= 3 || strstr(err, "too large"), "message: %s", err);
    }
}

TEST(one_set_when_a_set_exceeds_the_l2) {
    nt_shape s = {.M = 65536, .N = 16384};
    nt_shape_mem m;
    char err[256] = "";
    CHECK(nt_shape_mem_plan(&s, 60 << 20, &m, err, sizeof err) == 0, "%s", err);
    CHECK(m.sets == 1, "sets %d", m.sets);
}

int main(void) {
    RUN(sizes_of_a_normal_shape);
    RUN(overflowing_shapes_are_refused);
    RUN(one_set_when_a_set_exceeds_the_l2);
    T_END();
}
