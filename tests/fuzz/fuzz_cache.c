/* fuzz_cache.c -- libFuzzer harness for the NVRTC kernel cache entry parser
 * (entry_unpack in tuner/compile.c, what `normtune compile` and `run` read
 * back from $NORMTUNE_CACHE; no NVRTC call is involved).
 *
 * The parser is static, so this file includes tuner/compile.c (its symbols
 * then come from here, not from libcore.a).  Each input is parsed three
 * ways: as it is, for the key it carries and nexpr 1; with the expected
 * number of kernels taken from the entry; and with a valid checksum
 * appended, so that the fuzzer gets past the checksum to the fields behind
 * it.  An entry that parses is packed again (entry_pack) and must parse back
 * to the same cubin -- a round trip that aborts when it does not hold.
 * Seeds: tests/fuzz/seeds/cache/ (entries as cache_put writes them). */
#include "tests/fuzz/fuzz.h"

#include "tuner/compile.c"

/* Parse p[0..n) and check the round trip of what parses. */
static void one(const unsigned char *p, size_t n, int nexpr) {
    char key[17] = "0000000000000000";
    nt_cubin c, d;
    bbuf b;
    if (n >= 28) memcpy(key, p + 12, 16);
    if (entry_unpack(p, n, key, nexpr, &c)) {
        if (c.data) {
            fprintf(stderr, "entry_unpack failed but left data allocated\n");
            abort();
        }
        return;
    }
    if (entry_pack(&c, &b) == 0) {
        if (entry_unpack(b.p, b.n, key, nexpr, &d) || d.size != c.size || d.nkern != c.nkern ||
            memcmp(d.data, c.data, c.size) || memcmp(d.lowered, c.lowered, sizeof c.lowered) ||
            memcmp(d.regs, c.regs, sizeof c.regs) || memcmp(d.spill, c.spill, sizeof c.spill) ||
            memcmp(d.smem, c.smem, sizeof c.smem)) {
            fprintf(stderr, "a parsed entry does not survive pack + unpack\n");
            abort();
        }
        nt_cubin_free(&d);
        free(b.p);
    }
    nt_cubin_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    one(data, size, 1);
    if (size >= 32) {
        uint32_t nk = (uint32_t)data[28] | (uint32_t)data[29] << 8 | (uint32_t)data[30] << 16 |
                      (uint32_t)data[31] << 24;
        if (nk != 1 && nk <= NT_MAX_LAUNCH) one(data, size, (int)nk);
    }
    unsigned char *buf = malloc(size + 8);
    if (!buf) return 0;
    memcpy(buf, data, size);
    uint64_t sum = nt_fnv1a(NT_FNV_INIT, data, size);
    for (int i = 0; i < 8; i++) buf[size + (size_t)i] = (unsigned char)(sum >> (8 * i));
    one(buf, size + 8, size >= 32 ? (int)(data[28] % (NT_MAX_LAUNCH + 1)) : 1);
    free(buf);
    return 0;
}
