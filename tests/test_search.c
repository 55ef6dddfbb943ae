/* test_search.c -- spaces and seeded draws (search/search.h).
 *
 * A 3-dimensional space must number its points with the last dimension
 * fastest; building errors and the size of an empty space are checked.  A
 * draw must be repeatable for a seed, differ for another seed, give each
 * number once and then stop, and draw from a space of 2^60 without
 * walking it.  The strategies themselves are tests/test_tune.c's. */
#include <stdint.h>

#include "search/search.h"
#include "tests/t.h"

/* A 3 x 4 x 5 space: a = {a0..a2}, b = {b0..b3}, c = {c0..c4}. */
static int make_space(search_space *s) {
    static const char *const a[] = {"a0", "a1", "a2"};
    static const char *const b[] = {"b0", "b1", "b2", "b3"};
    static const char *const c[] = {"c0", "c1", "c2", "c3", "c4"};
    char err[256];
    memset(s, 0, sizeof *s);
    if (search_space_add(s, "a", a, 3, err, sizeof err)) return -1;
    if (search_space_add(s, "b", b, 4, err, sizeof err)) return -1;
    if (search_space_add(s, "c", c, 5, err, sizeof err)) return -1;
    return 0;
}

/* Draw up to cap numbers of [0, size) with seed into seq: how many came
 * before the draw said it was over (cap + 1 if it never did). */
static long draw_all(uint64_t size, uint64_t seed, uint64_t *seq, long cap) {
    search_draw *d = search_draw_new(size, seed);
    uint64_t u;
    long n = 0;
    if (!d) return -1;
    while (search_draw_next(d, &u)) {
        if (n == cap) {
            n++;
            break;
        }
        seq[n++] = u;
    }
    search_draw_free(d);
    return n;
}

TEST(space_size_and_points) {
    search_space s;
    memset(&s, 0, sizeof s);
    CHECK(search_space_size(&s) == 0, "empty space size %llu", (unsigned long long)search_space_size(&s));
    CHECK(make_space(&s) == 0, "make_space");
    CHECK(search_space_size(&s) == 60, "size %llu", (unsigned long long)search_space_size(&s));
    int idx[3];
    search_space_point(&s, 0, idx);
    CHECK(idx[0] == 0 && idx[1] == 0 && idx[2] == 0, "point 0 = %d %d %d", idx[0], idx[1], idx[2]);
    search_space_point(&s, 1, idx);
    CHECK(idx[0] == 0 && idx[1] == 0 && idx[2] == 1, "point 1 (last dim fastest) = %d %d %d",
          idx[0], idx[1], idx[2]);
    search_space_point(&s, 59, idx);
    CHECK(idx[0] == 2 && idx[1] == 3 && idx[2] == 4, "point 59 = %d %d %d", idx[0], idx[1], idx[2]);
    CHECK(!strcmp(s.dim[1].val[2], "b2"), "value copied: %s", s.dim[1].val[2]);
    search_space_clear(&s);
    CHECK(s.ndim == 0 && search_space_size(&s) == 0, "cleared space not empty");
}

TEST(space_add_errors) {
    search_space s;
    char err[256] = "";
    static const char *const v[] = {"1", "2"};
    memset(&s, 0, sizeof s);
    CHECK(search_space_add(&s, "x", v, 0, err, sizeof err) == -1, "empty list accepted");
    CHECK(strstr(err, "empty") != NULL, "message: %s", err);
    CHECK(s.ndim == 0, "failed add changed ndim to %d", s.ndim);
    for (int i = 0; i < SEARCH_MAX_DIMS; i++) {
        char name[8];
        snprintf(name, sizeof name, "d%d", i);
        CHECK(search_space_add(&s, name, v, 2, err, sizeof err) == 0, "add %s: %s", name, err);
    }
    err[0] = 0;
    CHECK(search_space_add(&s, "extra", v, 2, err, sizeof err) == -1, "ninth dimension accepted");
    CHECK(strstr(err, "too many") != NULL, "message: %s", err);
    CHECK(s.ndim == SEARCH_MAX_DIMS, "ndim %d", s.ndim);
    CHECK(search_space_size(&s) == 256, "size of 2^8 space %llu", (unsigned long long)search_space_size(&s));
    search_space_clear(&s);
    CHECK(search_space_add(&s, "x", v, 2, err, sizeof err) == 0, "add after clear: %s", err);
    CHECK(search_space_add(&s, "x", v, 2, err, sizeof err) == -1, "duplicate name accepted");
    search_space_clear(&s);
}

TEST(draw_repeatable_and_seeded) {
    uint64_t a[60], b[60], c[60];
    long na = draw_all(60, 42, a, 60), nb = draw_all(60, 42, b, 60), nc = draw_all(60, 43, c, 60);
    CHECK(na == 60 && nb == 60 && nc == 60, "draws of 60: %ld %ld %ld", na, nb, nc);
    CHECK(!memcmp(a, b, sizeof a), "same seed, different sequences");
    CHECK(memcmp(a, c, sizeof a) != 0, "seeds 42 and 43 gave the same sequence");
    int ordered = 1;            /* not simply index order */
    for (int i = 0; i < 20; i++) ordered &= a[i] == (uint64_t)i;
    CHECK(!ordered, "the draw gave numbers in index order");
}

TEST(draw_gives_each_number_once) {
    uint64_t seq[61];
    for (uint64_t seed = 0; seed < 20; seed++) {
        int hits[60] = {0};
        long n = draw_all(60, seed, seq, 61);
        CHECK(n == 60, "seed %llu: %ld numbers of 60", (unsigned long long)seed, n);
        for (long i = 0; i < n && i < 60; i++) {
            CHECK(seq[i] < 60, "out of range %llu", (unsigned long long)seq[i]);
            if (seq[i] < 60) hits[seq[i]]++;
        }
        for (int i = 0; i < 60; i++)
            CHECK(hits[i] == 1, "seed %llu: %d drawn %d times", (unsigned long long)seed, i, hits[i]);
    }
}

TEST(draw_huge_and_empty) {
    uint64_t seq[10], u;
    /* ten numbers of 2^60: distinct, in range, memory for ten */
    long n = draw_all(1ULL << 60, 5, seq, 10);
    CHECK(n == 11, "a huge draw stopped after %ld", n);
    for (int i = 0; i < 10; i++)
        for (int j = 0; j < i; j++) CHECK(seq[i] != seq[j], "repeat at %d and %d", i, j);
    search_draw *d = search_draw_new(0, 1);
    CHECK(d && !search_draw_next(d, &u), "a number drawn from nothing");
    search_draw_free(d);
    CHECK(!search_draw_next(NULL, &u), "a number from no draw");
}

TEST(strategy_names) {
    CHECK(!strcmp(search_strategies[0], "exhaustive") && !strcmp(search_strategies[1], "random") &&
          !strcmp(search_strategies[2], "hillclimb") && !strcmp(search_strategies[3], "warm") &&
          search_strategies[4] == NULL, "search_strategies list");
}

TEST(mix_and_rand) {
    uint64_t s1 = 7, s2 = 7, s3 = 8;
    uint64_t a = search_rand(&s1), b = search_rand(&s2), c = search_rand(&s3);
    CHECK(a == b && a != c, "splitmix64 not a function of its seed");
    CHECK(s1 == s2 && s1 != 7, "state not advanced");
    CHECK(search_mix(1) != search_mix(2) && search_mix(1) == search_mix(1), "search_mix");
}

int main(void) {
    RUN(space_size_and_points);
    RUN(space_add_errors);
    RUN(draw_repeatable_and_seeded);
    RUN(draw_gives_each_number_once);
    RUN(draw_huge_and_empty);
    RUN(strategy_names);
    RUN(mix_and_rand);
    T_END();
}
