/* fuzz_script.c -- libFuzzer harness for the sweep script loader.
 *
 * The input is a Lua script: it is written to a file (ntl_load takes a
 * path), loaded with ntl_load, and when it loads, where() is called and the
 * params built for the first points of each family on each of the first
 * shapes (at most FZ_POINTS calls in all, so a huge space costs nothing), as
 * `normtune list` would.  Anything but a clean load or a clean error message
 * -- a sanitizer report, a crash, an error with an empty message -- is a
 * finding.  Seeds: lua/sweeps/ and tests/fuzz/seeds/script/; dictionary
 * tests/fuzz/script.dict. */
#include "tests/fuzz/fuzz.h"

#include "lua/ntlua.h"

#define FZ_POINTS 64          /* where() calls per input */
#define FZ_SHAPES 4           /* shapes tried */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    nt_sweep sw;
    char err[2048];
    const char *path = fz_file("in", data, size);
    err[0] = 0;
    if (ntl_load(path, &sw, err, sizeof err)) {
        if (!err[0]) {
            fprintf(stderr, "ntl_load failed with an empty message\n");
            abort();
        }
        return 0;
    }
    int calls = 0;
    for (int s = 0; s < nt_sweep_nproblems(&sw) && s < FZ_SHAPES; s++)
        for (int f = 0; f < sw.nfam; f++) {
            nt_problem pr;
            nt_sweep_problem(&sw, s, &pr);
            const search_space *sp = &sw.fam[f].space;
            uint64_t n = search_space_size(sp);
            for (uint64_t i = 0; i < n && calls < FZ_POINTS; i++, calls++) {
                int idx[SEARCH_MAX_DIMS];
                nt_params p;
                int accept;
                search_space_point(sp, i, idx);
                nt_sweep_point_params(&sw, f, idx, &p);
                err[0] = 0;
                if (ntl_where(&sw, f, &p, &pr, &accept, err, sizeof err) && !err[0]) {
                    fprintf(stderr, "ntl_where failed with an empty message\n");
                    abort();
                }
            }
        }
    ntl_free(&sw);
    return 0;
}
