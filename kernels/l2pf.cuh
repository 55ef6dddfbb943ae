/* l2pf.cuh -- rows fetched from DRAM into L2 ahead of their use, with no
 * shared memory and no registers held: each thread of a block of T issues
 * `prefetch.global.L2` for every T-th 128-byte line of a byte range.  The
 * range's lines then travel from DRAM while the block works on what it
 * holds, and its own loads of the range later find them in L2.  Only the
 * families built for it include this (their source hash covers it). */
#ifndef NT_L2PF_CUH
#define NT_L2PF_CUH

/* Lines of [p, p + bytes) into L2, thread `tid` of `T` taking every T-th
 * line from the one that holds p. */
__device__ __forceinline__ void nt_l2_prefetch(const void *p, long long bytes, int tid, int T) {
    const unsigned long long a = (unsigned long long)p, end = a + (unsigned long long)bytes;
    for (unsigned long long l = (a & ~127ULL) + 128ULL * (unsigned)tid; l < end;
         l += 128ULL * (unsigned)T)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(l));
}

#endif
