/* test_search.c -- the search strategies over small spaces made here.
 *
 * Exhaustive must visit every point of a 3-dimensional space exactly once
 * in index order; random must be repeatable for a seed, differ for another
 * seed, keep its budget, never repeat a point, and give each point once
 * when the budget exceeds the space.  Space building errors and the size
 * of an empty space are checked too. */
#include <math.h>
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

static uint64_t index_of(const int *idx) { return (uint64_t)(idx[0] * 20 + idx[1] * 5 + idx[2]); }

/* Run a search to the end; the point numbers go to seq (up to cap), the
 * number of proposals is returned (-1 if start failed). */
static long run_search(const search_space *s, const char *strategy, uint64_t budget,
                       uint64_t seed, uint64_t *seq, long cap) {
    search_cfg c;
    search_state *st;
    char err[256];
    int idx[SEARCH_MAX_DIMS];
    long n = 0;
    memset(&c, 0, sizeof c);
    snprintf(c.strategy, sizeof c.strategy, "%s", strategy);
    c.budget = budget;
    c.seed = seed;
    if (search_start(&st, s, &c, err, sizeof err)) return -1;
    while (search_next(st, idx)) {
        if (n < cap) seq[n] = index_of(idx);
        search_report(st, idx, (double)index_of(idx));
        n++;
        if (n > 10000) break;                 /* runaway guard */
    }
    if (!search_done(st) || search_count(st) != (uint64_t)n) n = -2;
    search_free(st);
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

TEST(exhaustive_visits_each_once) {
    search_space s;
    uint64_t seq[64];
    int hits[60] = {0};
    CHECK(make_space(&s) == 0, "make_space");
    long n = run_search(&s, "exhaustive", 0, 0, seq, 64);
    CHECK(n == 60, "exhaustive made %ld proposals", n);
    for (long i = 0; i < n && i < 64; i++) {
        CHECK(seq[i] < 60, "proposal %ld out of range: %llu", i, (unsigned long long)seq[i]);
        if (seq[i] < 60) hits[seq[i]]++;
        CHECK(seq[i] == (uint64_t)i, "proposal %ld is point %llu, not in index order", i,
              (unsigned long long)seq[i]);
    }
    for (int i = 0; i < 60; i++) CHECK(hits[i] == 1, "point %d hit %d times", i, hits[i]);
    search_space_clear(&s);
}

TEST(random_repeatable_and_seeded) {
    search_space s;
    uint64_t a[64], b[64], c[64];
    CHECK(make_space(&s) == 0, "make_space");
    long na = run_search(&s, "random", 20, 42, a, 64);
    long nb = run_search(&s, "random", 20, 42, b, 64);
    long nc = run_search(&s, "random", 20, 43, c, 64);
    CHECK(na == 20 && nb == 20 && nc == 20, "budget not kept: %ld %ld %ld", na, nb, nc);
    CHECK(na == 20 && !memcmp(a, b, sizeof a[0] * 20), "same seed, different sequences");
    CHECK(nc == 20 && memcmp(a, c, sizeof a[0] * 20) != 0, "seeds 42 and 43 gave the same sequence");
    /* not simply index order */
    int ordered = 1;
    for (int i = 0; i < 20; i++) ordered &= a[i] == (uint64_t)i;
    CHECK(!ordered, "random proposed points in index order");
    search_space_clear(&s);
}

TEST(random_never_repeats) {
    search_space s;
    uint64_t seq[64];
    CHECK(make_space(&s) == 0, "make_space");
    for (uint64_t seed = 0; seed < 20; seed++) {
        int hits[60] = {0};
        long n = run_search(&s, "random", 45, seed, seq, 64);
        CHECK(n == 45, "seed %llu: %ld proposals", (unsigned long long)seed, n);
        for (long i = 0; i < n && i < 64; i++) {
            CHECK(seq[i] < 60, "out of range %llu", (unsigned long long)seq[i]);
            if (seq[i] < 60 && hits[seq[i]]++)
                CHECK(0, "seed %llu: point %llu proposed twice", (unsigned long long)seed,
                      (unsigned long long)seq[i]);
        }
    }
    search_space_clear(&s);
}

TEST(random_budget_covers_space) {
    search_space s;
    uint64_t seq[64];
    CHECK(make_space(&s) == 0, "make_space");
    uint64_t budgets[] = {0, 60, 1000};
    for (int b = 0; b < 3; b++) {
        int hits[60] = {0};
        long n = run_search(&s, "random", budgets[b], 7, seq, 64);
        CHECK(n == 60, "budget %llu: %ld proposals", (unsigned long long)budgets[b], n);
        for (long i = 0; i < n && i < 64; i++)
            if (seq[i] < 60) hits[seq[i]]++;
        for (int i = 0; i < 60; i++)
            CHECK(hits[i] == 1, "budget %llu: point %d hit %d times",
                  (unsigned long long)budgets[b], i, hits[i]);
    }
    search_space_clear(&s);
}

TEST(unknown_strategy) {
    search_space s;
    search_cfg c;
    search_state *st = (search_state *)&c;
    char err[256] = "";
    CHECK(make_space(&s) == 0, "make_space");
    memset(&c, 0, sizeof c);
    snprintf(c.strategy, sizeof c.strategy, "anneel");
    CHECK(search_start(&st, &s, &c, err, sizeof err) == -1, "unknown strategy accepted");
    CHECK(st == NULL, "state set on failure");
    CHECK(strstr(err, "anneel") && strstr(err, "exhaustive") && strstr(err, "random"),
          "message does not name the strategy and the allowed ones: %s", err);
    CHECK(!strcmp(search_strategies[0], "exhaustive") && !strcmp(search_strategies[1], "random") &&
          !strcmp(search_strategies[2], "hillclimb") && !strcmp(search_strategies[3], "warm") &&
          search_strategies[4] == NULL, "search_strategies list");
    search_space_clear(&s);
}

TEST(empty_space_and_report) {
    search_space s;
    search_cfg c;
    search_state *st;
    char err[256];
    int idx[SEARCH_MAX_DIMS];
    memset(&s, 0, sizeof s);
    memset(&c, 0, sizeof c);
    snprintf(c.strategy, sizeof c.strategy, "random");
    CHECK(search_start(&st, &s, &c, err, sizeof err) == 0, "start on empty space: %s", err);
    CHECK(search_next(st, idx) == 0, "proposal from an empty space");
    CHECK(search_done(st), "empty search not done");
    search_free(st);
    /* report: failures (INFINITY) do not break the walk */
    CHECK(make_space(&s) == 0, "make_space");
    snprintf(c.strategy, sizeof c.strategy, "exhaustive");
    CHECK(search_start(&st, &s, &c, err, sizeof err) == 0, "start: %s", err);
    long n = 0;
    while (search_next(st, idx)) {
        search_report(st, idx, n % 2 ? INFINITY : 1.0);
        n++;
    }
    CHECK(n == 60 && search_count(st) == 60, "count %ld/%llu", n,
          (unsigned long long)search_count(st));
    CHECK(search_next(st, idx) == 0, "proposal after the end");
    search_free(st);
    search_space_clear(&s);
}

int main(void) {
    RUN(space_size_and_points);
    RUN(space_add_errors);
    RUN(exhaustive_visits_each_once);
    RUN(random_repeatable_and_seeded);
    RUN(random_never_repeats);
    RUN(random_budget_covers_space);
    RUN(unknown_strategy);
    RUN(empty_space_and_report);
    T_END();
}
