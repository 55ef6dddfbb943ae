/* l2pf.cuh -- rows fetched from DRAM into L2 ahead of their use, with no
 * shared memory and no registers held: one bulk prefetch (sm_90 and newer)
 * or a prefetch.global.L2 per 128-byte line.  The range's lines then
 * travel from DRAM while the block works on what it holds, and its own
 * loads of the range later find them in L2.  Only the families built for
 * it include this (their source hash covers it). */
#ifndef NT_L2PF_CUH
#define NT_L2PF_CUH

/* [p, p + bytes) into L2.  On sm_90 and newer, where the range is whole
 * 16-byte pieces, thread 0 asks for it with one bulk prefetch (the Tensor
 * Memory Accelerator's cp.async.bulk.prefetch.L2, no thread waits on it);
 * else thread `tid` of `T` issues prefetch.global.L2 for every T-th line
 * from the one that holds p (the first run, data/pstage-h100/run1/, had
 * only this form). */
__device__ __forceinline__ void nt_l2_prefetch(const void *p, long long bytes, int tid, int T) {
    const unsigned long long a = (unsigned long long)p, end = a + (unsigned long long)bytes;
#if __CUDA_ARCH__ >= 900
    if (!((a | (unsigned long long)bytes) & 15ULL) && bytes < (1LL << 31)) {
        if (tid == 0)
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"((unsigned)bytes)
                         : "memory");
        return;
    }
#endif
    for (unsigned long long l = (a & ~127ULL) + 128ULL * (unsigned)tid; l < end;
         l += 128ULL * (unsigned)T)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(l));
}

#endif
