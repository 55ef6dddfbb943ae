/* test_yardstick.c -- the runner's memory of yardsticks (tuner/yardstick.h):
 * a problem that moves the same bytes with the same timing finds the
 * bandwidth measured before; one that differs in M, in a tensor's vectors
 * a row, in which tensors are written, or in the timing does not; a key
 * put again is updated, not duplicated; past NT_YARD_MAX keys the oldest
 * goes first; a bandwidth that is not positive is not remembered. */
#include "tests/t.h"
#include "tuner/yardstick.h"

static nt_yard_cache cache;   /* large: static */

/* bf16 backward-like traffic: x and dy read, dx written, N / 8 vectors a row */
static nt_traffic_desc bwd16(long long N) {
    nt_traffic_desc d;
    memset(&d, 0, sizeof d);
    d.row16[0] = N / 8;
    d.row16[2] = N / 8;
    d.row16[3] = N / 8;
    d.out[3] = 1;
    return d;
}

static nt_timing timing(void) {
    nt_timing t;
    memset(&t, 0, sizeof t);
    t.warmup = 10;
    t.min_samples = 20;
    t.max_samples = 200;
    t.rel_ci = 0.01;
    return t;
}

/* An empty cache and the key of M rows of bwd16(N) under timing(). */
static nt_yard_key fresh(long long M, long long N, nt_traffic_desc *d, nt_timing *t) {
    memset(&cache, 0, sizeof cache);
    *d = bwd16(N);
    *t = timing();
    return nt_yard_key_of(M, d, t);
}

TEST(same_bytes_found) {
    nt_traffic_desc d;
    nt_timing t;
    nt_yard_key k = fresh(4096, 4096, &d, &t);
    CHECK(nt_yard_find(&cache, &k) == 0, "found in an empty cache");
    nt_yard_put(&cache, &k, 3500.0);
    nt_traffic_desc d2 = bwd16(4096);     /* another problem, the same bytes */
    t.race_us = 12.5;                     /* racing is not the yardstick's */
    nt_yard_key k2 = nt_yard_key_of(4096, &d2, &t);
    CHECK(nt_yard_find(&cache, &k2) == 3500.0, "the same bytes: %g", nt_yard_find(&cache, &k2));
    CHECK(cache.n == 1, "%d keys", cache.n);
}

TEST(other_bytes_not_found) {
    nt_traffic_desc d;
    nt_timing t;
    nt_yard_key k = fresh(4096, 4096, &d, &t);
    nt_yard_put(&cache, &k, 3500.0);
    nt_yard_key m = nt_yard_key_of(8192, &d, &t);
    CHECK(nt_yard_find(&cache, &m) == 0, "another M found");
    nt_traffic_desc w = d;
    w.row16[0] *= 2;                      /* fp32 x: twice the vectors */
    nt_yard_key kw = nt_yard_key_of(4096, &w, &t);
    CHECK(nt_yard_find(&cache, &kw) == 0, "another row width found");
    nt_traffic_desc o = d;
    o.out[2] = 1;                         /* dy written instead of read */
    nt_yard_key ko = nt_yard_key_of(4096, &o, &t);
    CHECK(nt_yard_find(&cache, &ko) == 0, "other outputs found");
    nt_timing t2 = t;
    t2.rel_ci = 0.02;
    nt_yard_key kt = nt_yard_key_of(4096, &d, &t2);
    CHECK(nt_yard_find(&cache, &kt) == 0, "another rel_ci found");
    t2 = t;
    t2.min_samples = 5;
    kt = nt_yard_key_of(4096, &d, &t2);
    CHECK(nt_yard_find(&cache, &kt) == 0, "other min_samples found");
}

TEST(update_and_refusal) {
    nt_traffic_desc d;
    nt_timing t;
    nt_yard_key k = fresh(1024, 1024, &d, &t);
    nt_yard_put(&cache, &k, 0.0);
    nt_yard_put(&cache, &k, -1.0);
    CHECK(cache.n == 0 && nt_yard_find(&cache, &k) == 0, "a bandwidth <= 0 remembered");
    nt_yard_put(&cache, &k, 2000.0);
    nt_yard_put(&cache, &k, 2100.0);
    CHECK(cache.n == 1, "%d keys after putting one twice", cache.n);
    CHECK(nt_yard_find(&cache, &k) == 2100.0, "not updated: %g", nt_yard_find(&cache, &k));
}

TEST(oldest_goes_first) {
    nt_traffic_desc d;
    nt_timing t;
    fresh(1, 1024, &d, &t);
    for (long long M = 1; M <= NT_YARD_MAX + 2; M++) {
        nt_yard_key k = nt_yard_key_of(M, &d, &t);
        nt_yard_put(&cache, &k, (double)M);
    }
    CHECK(cache.n == NT_YARD_MAX, "%d keys", cache.n);
    for (long long M = 1; M <= NT_YARD_MAX + 2; M++) {
        nt_yard_key k = nt_yard_key_of(M, &d, &t);
        double want = M <= 2 ? 0 : (double)M;
        CHECK(nt_yard_find(&cache, &k) == want, "M %lld: %g, want %g", M,
              nt_yard_find(&cache, &k), want);
    }
}

int main(void) {
    RUN(same_bytes_found);
    RUN(other_bytes_not_found);
    RUN(update_and_refusal);
    RUN(oldest_goes_first);
    T_END();
}
