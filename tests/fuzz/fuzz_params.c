/* fuzz_params.c -- libFuzzer harness for the canonical params text, the
 * "key=val,key=val" string stored in the database (variant.params) and
 * written into the dispatch header.
 *
 * The input is parsed with nt_params_parse; every family then validates it
 * (nt_params_validate), and for a family that accepts it the canonical text
 * (nt_params_canon) must parse back to the same values -- a round trip that
 * aborts when it does not hold -- and nt_params_int / the family's check()
 * and plan() (device-free, as `normtune compile` calls them) run on it with a
 * few shapes in every dtype combination of the family's op that passes
 * nt_problem_check (and some it refuses, for check()'s sake).  Seeds: tests/fuzz/seeds/params/. */
#include "tests/fuzz/fuzz.h"

#include "kernels/family.h"

static const nt_shape shapes[] = {{1, 1}, {4096, 4096}, {65536, NT_MAX_N}, {77, 3072},
                                  {1000, 16392}, {INT64_MAX / 2, 8}};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char text[1024], canon[1024], err[512];
    nt_params p, q;
    if (size >= sizeof text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    if (nt_params_parse(text, &p)) return 0;
    for (int i = 0; i < p.n; i++) {
        int ok;
        (void)nt_params_int(&p, p.kv[i].key, &ok);
    }
    const nt_family *const *all = nt_all_families();
    for (int f = 0; all[f]; f++) {
        const nt_family *fam = all[f];
        if (nt_params_validate(fam, &p, err, sizeof err)) continue;
        if (nt_params_canon(fam, &p, canon, sizeof canon)) continue;
        if (nt_params_parse(canon, &q) || q.n != fam->nparams) {
            fprintf(stderr, "canonical text '%s' of '%s' does not parse back\n", canon, text);
            abort();
        }
        for (int i = 0; i < q.n; i++) {
            const char *v = nt_params_get(&p, q.kv[i].key);
            if (!v || strcmp(v, q.kv[i].val)) {
                fprintf(stderr, "round trip of '%s' changed %s\n", text, q.kv[i].key);
                abort();
            }
        }
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int d = 0; d < NT_NDTYPES * NT_NDTYPES * NT_NDTYPES; d++) {
                nt_problem pr;
                nt_plan plan;
                nt_problem_init(&pr, fam->op, shapes[s].M, shapes[s].N);
                for (int k = 0, dd = d; k < fam->op->nslots && k < 3; k++, dd /= NT_NDTYPES)
                    pr.dtype[k] = dd % NT_NDTYPES;
                if (nt_problem_check(&pr, err, sizeof err)) continue;
                if (fam->check(&q, &pr, NULL, err, sizeof err) == 0)
                    (void)fam->plan(&q, &pr, NULL, &plan, err, sizeof err);
                (void)nt_problem_bytes(&pr);
            }
    }
    return 0;
}
