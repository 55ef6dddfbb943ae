/* bulk.cuh -- bulk copies of the Tensor Memory Accelerator's 1-D form
 * (cp.async.bulk, sm_90 and newer) from global into shared memory,
 * completing on an mbarrier, for the families that bring whole rows in
 * with one instruction of one thread (rmsnorm_fwd.tma, rmsnorm_bwd.tma,
 * rmsnorm_bwd.wtma).
 *
 * The protocol: the copying thread initialises each buffer's mbarrier for one arrival
 * (nt_mbar_init1, then fence.mbarrier_init and a block barrier before any
 * thread waits); for each fill it arrives once announcing the bytes the
 * fill brings (nt_mbar_expect), then issues the copies (nt_bulk_copy: any
 * number, summing to those bytes); the readers wait for the phase
 * (nt_mbar_wait with its parity: fill f of a buffer completes phase f, of
 * parity f & 1).  A buffer is filled again only once every thread has read
 * it: a block barrier between the last reads and the next fill, or a
 * second mbarrier that each reader arrives on when it is done
 * (nt_mbar_arrive) and that the copying thread waits for.  Copies
 * take 16-byte aligned addresses and a multiple of 16 bytes.  Before sm_90
 * the functions compile to nothing: the families that use them refuse such
 * devices, and their kernels trap there. */
#ifndef NT_BULK_CUH
#define NT_BULK_CUH

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define NT_HAS_BULK 1
#else
#define NT_HAS_BULK 0
#endif

/* The mbarrier at shared address bar expects n arrivals a phase. */
__device__ __forceinline__ void nt_mbar_init(unsigned bar, unsigned n) {
#if NT_HAS_BULK
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(n) : "memory");
#endif
}

/* The mbarrier at shared address bar expects one arrival. */
__device__ __forceinline__ void nt_mbar_init1(unsigned bar) { nt_mbar_init(bar, 1); }

/* One arrival of this thread on mbarrier bar (no bytes announced): a
 * reader saying that it is done with a buffer. */
__device__ __forceinline__ void nt_mbar_arrive(unsigned bar) {
#if NT_HAS_BULK
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
#endif
}

/* Make the mbarrier initialisations visible to the async proxy (thread 0,
 * after its nt_mbar_init1 calls). */
__device__ __forceinline__ void nt_mbar_init_fence() {
#if NT_HAS_BULK
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

/* This thread's one arrival on mbarrier bar, announcing the bytes the
 * copies of this phase bring. */
__device__ __forceinline__ void nt_mbar_expect(unsigned bar, unsigned bytes) {
#if NT_HAS_BULK
    asm volatile("fence.proxy.async.shared::cta;\n\t"
                 "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes)
                 : "memory");
#endif
}

/* Copy bytes (a multiple of 16) from global src to shared dst, counted on
 * mbarrier bar (announced there by nt_mbar_expect). */
__device__ __forceinline__ void nt_bulk_copy(unsigned dst, const void *src, unsigned bytes,
                                             unsigned bar) {
#if NT_HAS_BULK
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :: "r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
#endif
}

/* One copy that is the whole of its phase. */
__device__ __forceinline__ void nt_bulk_load(unsigned dst, const void *src, unsigned bytes,
                                             unsigned bar) {
    nt_mbar_expect(bar, bytes);
    nt_bulk_copy(dst, src, bytes, bar);
}

/* Wait until mbarrier bar has completed the phase of parity `parity`. */
__device__ __forceinline__ void nt_mbar_wait(unsigned bar, unsigned parity) {
#if NT_HAS_BULK
    unsigned done;
    do {
        asm volatile("{\n\t.reg .pred p;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
#endif
}

#endif
