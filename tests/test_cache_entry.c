/* test_cache_entry.c -- the NVRTC cache entry parser (entry_unpack in
 * tuner/compile.c) on entries made here, without NVRTC.
 *
 * The parser is static, so this file includes tuner/compile.c.  An entry
 * packed by entry_pack parses back to the same cubin; one whose kernel name
 * has a NUL inside is refused even with a valid checksum (fuzz_cache found
 * such an entry accepted with the name cut short; the seed is
 * tests/fuzz/seeds/cache/nul-in-kernel-name.bin); a torn entry, a wrong key
 * and a wrong kernel count are refused. */
#include "tests/t.h"

#include "tuner/compile.c"

static const char key[] = "0123456789abcdef";

/* A cubin of 2 kernels with 64 bytes of data (data malloc'd). */
static void make(nt_cubin *c) {
    memset(c, 0, sizeof *c);
    c->nkern = 2;
    snprintf(c->lowered[0], NT_LOWERED_LEN, "_Z9nt_kernelILi256EEvv");
    snprintf(c->lowered[1], NT_LOWERED_LEN, "_Z9nt_reduceILi64EEvv");
    c->regs[0] = 40, c->regs[1] = 24, c->smem[0] = 1024, c->spill[1] = 8;
    c->size = 64;
    c->data = calloc(1, 64);
    memcpy(c->key, key, 17);
}

/* Recompute the checksum at the end of an entry after an edit. */
static void reseal(unsigned char *p, size_t n) {
    uint64_t sum = nt_fnv1a(NT_FNV_INIT, p, n - 8);
    for (int i = 0; i < 8; i++) p[n - 8 + (size_t)i] = (unsigned char)(sum >> (8 * i));
}

TEST(round_trip) {
    nt_cubin c, d;
    bbuf b;
    make(&c);
    CHECK(entry_pack(&c, &b) == 0, "pack failed");
    CHECK(entry_unpack(b.p, b.n, key, 2, &d) == 0, "a packed entry does not parse");
    CHECK(d.size == 64 && d.nkern == 2 && !strcmp(d.lowered[1], c.lowered[1]) && d.regs[0] == 40 &&
              d.smem[0] == 1024 && d.spill[1] == 8,
          "fields changed");
    nt_cubin_free(&d);
    free(b.p);
    nt_cubin_free(&c);
}

TEST(nul_inside_kernel_name_refused) {
    nt_cubin c, d;
    bbuf b;
    make(&c);
    CHECK(entry_pack(&c, &b) == 0, "pack failed");
    /* the first name starts after magic 8, version 4, key 16, nkern 4 and
     * its 4 numbers (16): put a NUL in its middle, checksum made valid */
    size_t at = 8 + 4 + 16 + 4 + 16 + 5;
    b.p[at] = 0;
    reseal(b.p, b.n);
    d.data = NULL;
    CHECK(entry_unpack(b.p, b.n, key, 2, &d) == -1, "an entry with a NUL in a kernel name parsed (name '%s')",
          d.lowered[0]);
    CHECK(d.data == NULL, "a refused entry kept data");
    nt_cubin_free(&d);
    free(b.p);
    nt_cubin_free(&c);
}

TEST(bad_entries_refused) {
    nt_cubin c, d;
    bbuf b;
    make(&c);
    CHECK(entry_pack(&c, &b) == 0, "pack failed");
    CHECK(entry_unpack(b.p, b.n - 1, key, 2, &d) == -1, "a torn entry parsed");
    CHECK(entry_unpack(b.p, b.n, "fedcba9876543210", 2, &d) == -1, "another key's entry parsed");
    CHECK(entry_unpack(b.p, b.n, key, 1, &d) == -1, "a wrong kernel count parsed");
    b.p[b.n - 20] ^= 1;
    CHECK(entry_unpack(b.p, b.n, key, 2, &d) == -1, "a flipped bit parsed");
    free(b.p);
    nt_cubin_free(&c);
}

int main(void) {
    RUN(round_trip);
    RUN(nul_inside_kernel_name_refused);
    RUN(bad_entries_refused);
    T_END();
}
