/* fill.h -- the seeded random inputs, in one place for the host and the
 * device: element i of a fill is a function of (seed, i) alone.
 *
 * splitmix64's state after i + 1 draws is seed + (i + 1) * its increment,
 * so element i is mixed from that state without walking the i before it;
 * its top 53 bits give u in [0, 1), and the value is lo + (hi - lo) * u in
 * double, then rounded to float (and from there to bf16 or fp16, to
 * nearest even, by the caller).  The host's fills (nt_fill, kernels/ref.c)
 * and the runner's device fill (nt_fill_dev, kernels/check.cuh) both call
 * nt_fill_value, so the GPU draws the very bits the host would; make
 * test-gpu checks them bit for bit (tests/gpu/test_dref.c).
 *
 * Plain C shared with NVRTC: no includes, and the double arithmetic is
 * spelled so that no multiply-add is contracted on either side: with
 * round-to-nearest intrinsics on the device, through a volatile product
 * on the host. */
#ifndef NT_FILL_H
#define NT_FILL_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define NT_FILL_FN __host__ __device__ static inline
#define NT_FILL_DMUL(a, b) __dmul_rn((a), (b))
#define NT_FILL_DADD(a, b) __dadd_rn((a), (b))
#else
#define NT_FILL_FN static inline
/* the product rounded on its own: a compiler allowed to contract (GCC's
 * default for GNU C where the target has FMA, -march=native) would fuse
 * it with the add below, and the host's bits would part from the
 * device's */
static inline double nt_fill_dmul(double a, double b) {
    volatile double p = a * b;
    return p;
}
#define NT_FILL_DMUL(a, b) nt_fill_dmul((a), (b))
#define NT_FILL_DADD(a, b) ((a) + (b))
#endif

#define NT_FILL_INC 0x9e3779b97f4a7c15ULL   /* splitmix64's increment */

/* The 64 random bits of element i of the fill seeded with seed. */
NT_FILL_FN unsigned long long nt_fill_bits(unsigned long long seed, unsigned long long i) {
    unsigned long long z = seed + (i + 1ULL) * NT_FILL_INC;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Element i's value, uniform in [lo, hi), as float (before any narrower
 * dtype's rounding). */
NT_FILL_FN float nt_fill_value(unsigned long long seed, unsigned long long i, double lo,
                               double hi) {
    double u = (double)(nt_fill_bits(seed, i) >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
    return (float)NT_FILL_DADD(lo, NT_FILL_DMUL(NT_FILL_DADD(hi, -lo), u));
}

#endif
