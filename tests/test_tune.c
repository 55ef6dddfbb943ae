/* test_tune.c -- the ask/tell strategies of search/tune.h on small
 * synthetic spaces with known optima: every strategy finds the optimum
 * within its budget, refused points are never proposed and cost nothing,
 * a random draw over a space of 10^18 points asks feasible() only about
 * the points it draws, and a search told the same costs (as a resumed run
 * tells stored results first) makes the same choices. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/tune.h"
#include "tests/t.h"

/* A space of ndim dimensions of nval values each. */
static void make(search_space *s, int ndim, int nval) {
    char err[128], names[8][8];
    static char vals[1024][8];
    const char *pv[1024];
    memset(s, 0, sizeof *s);
    for (int i = 0; i < nval; i++) {
        snprintf(vals[i], sizeof vals[i], "%d", i);
        pv[i] = vals[i];
    }
    for (int d = 0; d < ndim; d++) {
        snprintf(names[d], sizeof names[d], "p%d", d);
        search_space_add(s, names[d], pv, nval, err, sizeof err);
    }
}

/* A bowl with its minimum at (3, 5, 2) of family 1; family 0 is 20% worse
 * everywhere.  Points with p0 == 7 are infeasible (counted when asked). */
typedef struct world {
    const search_space *sp;
    int refused_asked;        /* an infeasible point proposed */
    uint64_t checks;
    int coupled;              /* instead: only points with p0 + p1 == 15 run
                                 (16 values a dimension), best at p0 = 9 */
} world;

static double cost_of(const world *w, tune_pt p) {
    int idx[SEARCH_MAX_DIMS];
    search_space_point(w->sp, p.pt, idx);
    if (w->coupled)
        return (p.fam == 0 ? 1.2 : 1.0) * (10.0 + (idx[0] - 9) * (idx[0] - 9) +
                                           0.5 * (idx[2] - 2) * (idx[2] - 2));
    double c = 10.0 + (idx[0] - 3) * (idx[0] - 3) + (idx[1] - 5) * (idx[1] - 5) +
               0.5 * (idx[2] - 2) * (idx[2] - 2);
    return p.fam == 0 ? 1.2 * c : c;
}

/* Can p run in w? */
static int runs(const world *w, tune_pt p) {
    int idx[SEARCH_MAX_DIMS];
    search_space_point(w->sp, p.pt, idx);
    return w->coupled ? idx[0] + idx[1] == 15 : idx[0] != 7;
}

static int feas(void *ctx, tune_pt p) {
    world *w = ctx;
    w->checks++;
    return runs(w, p);
}

/* Run strategy name to the end: the pick into *best, proposals made. */
static uint64_t run(const char *name, world *w, uint64_t budget, uint64_t seed,
                    const tune_hint *hint, int nhint, tune_pt *best, uint64_t *trace) {
    tune_env env;
    tune *t;
    char err[128];
    tune_pt pts[8];
    int n;
    uint64_t k = 0;
    memset(&env, 0, sizeof env);
    env.nfam = 2;
    env.space[0] = env.space[1] = w->sp;
    env.feasible = feas;
    env.ctx = w;
    env.budget = budget;
    env.seed = seed;
    env.hint = hint;
    env.nhint = nhint;
    if (tune_start(&t, name, &env, err, sizeof err)) return 0;
    while ((n = tune_ask(t, pts, 8)) > 0)
        for (int i = 0; i < n; i++) {
            if (!runs(w, pts[i])) w->refused_asked = 1;
            if (trace && k < 256) trace[k] = ((uint64_t)pts[i].fam << 56) | pts[i].pt;
            k++;
            tune_tell(t, pts[i], cost_of(w, pts[i]));
        }
    double c;
    if (tune_best(t, best, &c)) best->fam = -1;
    uint64_t spent = tune_spent(t);
    tune_free(t);
    return spent;
}

static int is_opt(const search_space *sp, tune_pt p) {
    int idx[SEARCH_MAX_DIMS];
    search_space_point(sp, p.pt, idx);
    return p.fam == 1 && idx[0] == 3 && idx[1] == 5 && idx[2] == 2;
}

TEST(exhaustive_finds_the_optimum_and_skips_refused) {
    search_space s;
    make(&s, 3, 8);
    world w = {&s, 0, 0, 0};
    tune_pt b;
    uint64_t spent = run("exhaustive", &w, 0, 1, NULL, 0, &b, NULL);
    CHECK(spent == 2 * 7 * 64, "spent %llu, want the %d feasible points", (unsigned long long)spent,
          2 * 7 * 64);
    CHECK(is_opt(&s, b), "pick fam %d pt %llu", b.fam, (unsigned long long)b.pt);
    CHECK(!w.refused_asked, "an infeasible point was proposed");
    search_space_clear(&s);
}

TEST(hillclimb_and_warm_find_the_optimum_within_budget) {
    search_space s;
    make(&s, 3, 8);
    for (uint64_t seed = 1; seed <= 5; seed++) {
        world w = {&s, 0, 0, 0};
        tune_pt b;
        uint64_t spent = run("hillclimb", &w, 120, seed, NULL, 0, &b, NULL);
        CHECK(spent <= 120, "hillclimb spent %llu", (unsigned long long)spent);
        CHECK(is_opt(&s, b), "hillclimb seed %llu missed the optimum", (unsigned long long)seed);
        CHECK(!w.refused_asked, "an infeasible point was proposed");
    }
    /* warm from a hint near the optimum: a few proposals suffice */
    world w = {&s, 0, 0, 0};
    tune_pt b;
    tune_hint h[2] = {{{1, (uint64_t)(3 * 64 + 4 * 8 + 2)}, 0.1}, {{0, 5}, 0.5}};
    uint64_t spent = run("warm", &w, 12, 1, h, 2, &b, NULL);
    CHECK(spent <= 12, "warm spent %llu", (unsigned long long)spent);
    CHECK(is_opt(&s, b), "warm missed the optimum from a neighbouring hint");
    search_space_clear(&s);
}

/* Two parameters that only run together (p0 + p1 == 15, as a block size
 * and its chunks): no point has a runnable neighbour that moves one of
 * them alone, so the climb must move the other along; from a hint at one
 * end of the line it walks to the best point, six steps away, within a
 * budget that leaves random draws (2 x 256 runnable points) little
 * chance. */
/* warm over the coupled world (only p0 + p1 == 15 runs; 16 values a
 * dimension) from one hint, fam 1 (h0, h1, h2): the pick's values into
 * idx, its family into *fam; the proposals made.  A point that cannot run
 * proposed fails the calling test. */
static uint64_t warm_coupled(int h0, int h1, int h2, uint64_t budget, uint64_t seed, int *fam,
                             int *idx) {
    search_space s;
    make(&s, 3, 16);
    world w = {&s, 0, 0, 1};
    tune_pt b;
    tune_hint h[1] = {{{1, (uint64_t)(h0 * 256 + h1 * 16 + h2)}, 0.1}};
    uint64_t spent = run("warm", &w, budget, seed, h, 1, &b, NULL);
    search_space_point(&s, b.pt, idx);
    *fam = b.fam;
    CHECK(!w.refused_asked, "a point that cannot run was proposed");
    search_space_clear(&s);
    return spent;
}

TEST(climb_moves_coupled_parameters_together) {
    int fam, idx[SEARCH_MAX_DIMS];
    uint64_t spent = warm_coupled(15, 0, 2, 40, 1, &fam, idx);
    CHECK(spent <= 40, "warm spent %llu", (unsigned long long)spent);
    CHECK(fam == 1 && idx[0] == 9 && idx[1] == 6 && idx[2] == 2,
          "pick fam %d (%d, %d, %d), the best is fam 1 (9, 6, 2)", fam, idx[0], idx[1], idx[2]);
}

/* A hint measured at another shape may not run at this one (its chunks
 * cover another N): warm proposes the nearest point that runs, one
 * parameter moved by one value, rather than dropping it.  Here the hint
 * (9, 5, 2) cannot run (p0 + p1 != 15); with a budget of one, the one
 * proposal must be (10, 5, 2) or (9, 6, 2), not a random point. */
TEST(warm_translates_a_hint_that_cannot_run) {
    int fam, idx[SEARCH_MAX_DIMS];
    uint64_t spent = warm_coupled(9, 5, 2, 1, 3, &fam, idx);
    int moved = abs(idx[0] - 9) + abs(idx[1] - 5) + abs(idx[2] - 2);
    CHECK(spent == 1, "warm spent %llu", (unsigned long long)spent);
    CHECK(fam == 1 && moved == 1 && idx[2] == 2,
          "pick fam %d (%d, %d, %d), want the hint (9, 5, 2) of fam 1 with p0 or p1 moved by one",
          fam, idx[0], idx[1], idx[2]);
}

/* The climb takes its centre's neighbours in the order of their hints.
 * From the hint (3, 5, 0) of family 1, with one hint allowed before the
 * climb and a budget of two, the one step of the climb must be the
 * neighbour another hint names, (3, 5, 2) (the optimum, p2 moved by two
 * values): in the space's order it would come tenth, after (2, 5, 0). */
TEST(warm_climb_follows_the_hints) {
    search_space s;
    make(&s, 3, 8);
    world w = {&s, 0, 0, 0};
    tune_hint h[3] = {{{1, 3 * 64 + 5 * 8 + 0}, 0.1}, {{0, 0}, 0.2}, {{1, 3 * 64 + 5 * 8 + 2}, 0.3}};
    tune_env env;
    tune *t = NULL;
    char err[128];
    tune_pt pts[8], b;
    int n;
    memset(&env, 0, sizeof env);
    env.nfam = 2;
    env.space[0] = env.space[1] = &s;
    env.feasible = feas;
    env.ctx = &w;
    env.budget = 2;
    env.seed = 1;
    env.hint = h;
    env.nhint = 3;
    env.hint_quota = 1;
    CHECK(tune_start(&t, "warm", &env, err, sizeof err) == 0, "%s", err);
    if (!t) return;
    while ((n = tune_ask(t, pts, 8)) > 0)
        for (int i = 0; i < n; i++) tune_tell(t, pts[i], cost_of(&w, pts[i]));
    CHECK(tune_spent(t) == 2, "spent %llu", (unsigned long long)tune_spent(t));
    CHECK(tune_best(t, &b, NULL) == 0 && is_opt(&s, b), "pick fam %d pt %llu, want the optimum",
          b.fam, (unsigned long long)b.pt);
    tune_free(t);
    search_space_clear(&s);
}

TEST(random_respects_its_budget_and_draws_distinct_points) {
    search_space s;
    make(&s, 3, 8);
    world w = {&s, 0, 0, 0};
    tune_pt b;
    uint64_t trace[256];
    uint64_t spent = run("random", &w, 40, 9, NULL, 0, &b, trace);
    CHECK(spent == 40, "spent %llu", (unsigned long long)spent);
    int dup = 0;
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < i; j++) dup |= trace[i] == trace[j];
    CHECK(!dup, "a point drawn twice");
    CHECK(!w.refused_asked, "an infeasible point was proposed");
    search_space_clear(&s);
}

TEST(random_draw_over_a_huge_space_walks_nothing) {
    search_space s;
    make(&s, 6, 1000);        /* 10^18 points per family */
    world w = {&s, 0, 0, 0};
    tune_pt b;
    uint64_t spent = run("random", &w, 10, 3, NULL, 0, &b, NULL);
    CHECK(spent == 10, "spent %llu", (unsigned long long)spent);
    /* one point in 1000 is refused: about ten checks, never millions */
    CHECK(w.checks >= 10 && w.checks <= 20, "%llu feasible() calls for 10 points",
          (unsigned long long)w.checks);
    w.checks = 0;
    spent = run("hillclimb", &w, 10, 3, NULL, 0, &b, NULL);
    CHECK(spent == 10 && w.checks <= 200, "hillclimb: %llu proposals, %llu checks",
          (unsigned long long)spent, (unsigned long long)w.checks);
    search_space_clear(&s);
}

TEST(same_costs_same_choices) {
    /* a resumed run tells the stored costs first, in the order asked: the
     * search sees what an uninterrupted one saw and proposes the same */
    search_space s;
    make(&s, 3, 8);
    uint64_t a[256], c[256];
    tune_pt b1, b2;
    world w1 = {&s, 0, 0, 0}, w2 = {&s, 0, 0, 0};
    memset(a, 0, sizeof a);
    memset(c, 0, sizeof c);
    uint64_t n1 = run("warm", &w1, 30, 77, NULL, 0, &b1, a);
    uint64_t n2 = run("warm", &w2, 30, 77, NULL, 0, &b2, c);
    CHECK(n1 == n2 && !memcmp(a, c, sizeof a), "two runs differ");
    uint64_t n3 = run("warm", &w2, 30, 78, NULL, 0, &b2, c);
    CHECK(n3 == n1 && memcmp(a, c, sizeof a), "another seed made the same choices");
    search_space_clear(&s);
}

TEST(unknown_strategy) {
    search_space s;
    tune_env env;
    tune *t;
    char err[256] = "";
    make(&s, 1, 4);
    memset(&env, 0, sizeof env);
    env.nfam = 1;
    env.space[0] = &s;
    CHECK(tune_start(&t, "anneal", &env, err, sizeof err) == -1 && t == NULL, "accepted");
    CHECK(strstr(err, "anneal") && strstr(err, "warm"), "message: %s", err);
    CHECK(tune_adaptive("warm") && tune_adaptive("hillclimb") && !tune_adaptive("random"),
          "tune_adaptive");
    search_space_clear(&s);
}

int main(void) {
    RUN(exhaustive_finds_the_optimum_and_skips_refused);
    RUN(hillclimb_and_warm_find_the_optimum_within_budget);
    RUN(climb_moves_coupled_parameters_together);
    RUN(warm_translates_a_hint_that_cannot_run);
    RUN(warm_climb_follows_the_hints);
    RUN(random_respects_its_budget_and_draws_distinct_points);
    RUN(random_draw_over_a_huge_space_walks_nothing);
    RUN(same_costs_same_choices);
    RUN(unknown_strategy);
    T_END();
}
