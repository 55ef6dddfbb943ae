/* common.cuh -- device helpers every family's kernels share: 16-byte
 * vectors, bf16 pairs, loads and stores with cache hints, shared memory by
 * 32-bit address, cp.async, a deterministic block sum and programmatic
 * dependent launch.  No CUDA header: NVRTC compiles it in a fraction of a
 * second, and nvcc compiles the same text for the production library.
 *
 * Part of the source hash of every family whose kernels include it.
 *
 * Determinism of nt_block_sum2: no float atomics; a xor butterfly in each
 * warp (all lanes end with the same bits), warp partials through shared
 * memory, and a second butterfly that every warp does on the same values.
 * The caller alternates the partial buffer between two halves from row to
 * row, so one barrier per row suffices: a warp can only write a half again
 * after the next row's barrier, which every thread passes only once it has
 * read that half. */
#ifndef NT_COMMON_CUH
#define NT_COMMON_CUH

#include "nt_args.h"

struct __align__(16) nt_u4 { unsigned int x, y, z, w; };   /* 8 bf16 */
struct __align__(16) nt_f4 { float x, y, z, w; };
struct __align__(8) nt_u2 { unsigned int x, y; };           /* 4 bf16 */

/* bf16 pair in a 32-bit word: element 0 in the low half. */
__device__ __forceinline__ float nt_lo(unsigned u) {
    unsigned r;
    asm("shl.b32 %0, %1, 16;" : "=r"(r) : "r"(u));
    return __uint_as_float(r);
}
__device__ __forceinline__ float nt_hi(unsigned u) {
    unsigned r;
    asm("and.b32 %0, %1, 0xffff0000;" : "=r"(r) : "r"(u));
    return __uint_as_float(r);
}

/* Round two floats to bf16 (nearest even) and pack: lo in the low half. */
__device__ __forceinline__ unsigned nt_pack(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

__device__ __forceinline__ void nt_unpack8(const nt_u4 &v, float *f) {
    f[0] = nt_lo(v.x); f[1] = nt_hi(v.x); f[2] = nt_lo(v.y); f[3] = nt_hi(v.y);
    f[4] = nt_lo(v.z); f[5] = nt_hi(v.z); f[6] = nt_lo(v.w); f[7] = nt_hi(v.w);
}

__device__ __forceinline__ nt_u4 nt_pack8(const float *f) {
    nt_u4 v;
    v.x = nt_pack(f[0], f[1]); v.y = nt_pack(f[2], f[3]);
    v.z = nt_pack(f[4], f[5]); v.w = nt_pack(f[6], f[7]);
    return v;
}

/* 16-byte global load that bypasses L1 (read once). */
__device__ __forceinline__ nt_u4 nt_ld16(const nt_u4 *p) {
    nt_u4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

/* 16-byte streaming store (evict first: dx is not read again). */
__device__ __forceinline__ void nt_st16(nt_u4 *p, const nt_u4 &v) {
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};"
                 :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

/* Shared memory is addressed with explicit 32-bit shared-window addresses
 * (saddr), not generic pointers: NVRTC (the tuner) and nvcc (the library)
 * lower generic pointer arithmetic into shared memory differently (64-bit
 * vs 32-bit), which gave up to 11 registers' difference between the kernels
 * the tuner measured and the ones the library ran. */

/* The 32-bit shared address of a generic pointer into shared memory.  In
 * asm, so that both compilers emit the same conversion (__cvta_generic_to_
 * shared is lowered differently by each, and ptxas then allocates a
 * different number of registers). */
__device__ __forceinline__ unsigned nt_saddr(const void *p) {
    unsigned r;
    asm("{\n\t.reg .u64 t;\n\tcvta.to.shared.u64 t, %1;\n\tcvt.u32.u64 %0, t;\n\t}"
        : "=r"(r) : "l"(p));
    return r;
}

/* Asynchronous 16-byte copy global -> shared (L2 only). */
__device__ __forceinline__ void nt_cp16(unsigned saddr, const void *gmem) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(saddr), "l"(gmem) : "memory");
}
__device__ __forceinline__ nt_u4 nt_lds16(unsigned saddr) {
    nt_u4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(saddr) : "memory");
    return v;
}
__device__ __forceinline__ void nt_sts16(unsigned saddr, const nt_u4 &v) {
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};"
                 :: "r"(saddr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

/* Where nt_row reads chunk j of x, dy or w: registers, or shared memory
 * slots STRIDE chunks apart. */
struct nt_reg_src {
    const nt_u4 *p;
    __device__ __forceinline__ nt_u4 operator()(int j) const { return p[j]; }
};
template <int STRIDE>
struct nt_smem_src {
    unsigned a;
    __device__ __forceinline__ nt_u4 operator()(int j) const {
        return nt_lds16(a + 16u * (unsigned)(STRIDE * j));
    }
};
__device__ __forceinline__ void nt_cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int PENDING>
__device__ __forceinline__ void nt_cp_wait() {
    asm volatile("cp.async.wait_group %0;" :: "n"(PENDING) : "memory");
}

/* 4-byte shared memory access by 32-bit address (see nt_cp16). */
__device__ __forceinline__ float nt_lds4(unsigned saddr) {
    float v;
    asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(saddr) : "memory");
    return v;
}
__device__ __forceinline__ void nt_sts4(unsigned saddr, float v) {
    asm volatile("st.shared.f32 [%0], %1;" :: "r"(saddr), "f"(v) : "memory");
}

/* Sum a and b over the block (see the file comment for why this is exact-
 * order and race free).  buf: shared address of 64 floats, alternated by
 * the caller between rows.  Every thread returns the same bits. */
__device__ __forceinline__ void nt_block_sum2(float &a, float &b, unsigned buf) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nw = (blockDim.x + 31) >> 5;
#pragma unroll
    for (int o = 16; o; o >>= 1) {
        a += __shfl_xor_sync(0xffffffffu, a, o);
        b += __shfl_xor_sync(0xffffffffu, b, o);
    }
    if (lane == 0) {
        nt_sts4(buf + 4u * (unsigned)warp, a);
        nt_sts4(buf + 4u * (unsigned)(32 + warp), b);
    }
    __syncthreads();
    a = lane < nw ? nt_lds4(buf + 4u * (unsigned)lane) : 0.f;
    b = lane < nw ? nt_lds4(buf + 4u * (unsigned)(32 + lane)) : 0.f;
#pragma unroll
    for (int o = 16; o; o >>= 1) {
        a += __shfl_xor_sync(0xffffffffu, a, o);
        b += __shfl_xor_sync(0xffffffffu, b, o);
    }
}

/* Griddepcontrol (sm_90+): let the next kernel of the chain launch early, and
 * wait for the previous one's results.  No-ops when a kernel was launched
 * without programmatic dependent launch, and on older architectures. */
__device__ __forceinline__ void nt_launch_next() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void nt_wait_prev() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* ---- dtypes ------------------------------------------------------------
 * Kernels are templated on the storage type of each tensor: nt_bf16,
 * nt_f16 or float (the ctype of kernels/family.h's nt_dtypes[]).  A row is
 * moved in vectors of E elements (E = 16 / sizeof(activation): one 16-byte
 * chunk of x; a weight of another dtype then takes 8 or 32 bytes per
 * chunk).  nt_vec<T, E> holds E elements as W 32-bit words; loads, stores
 * and cp.async move W words in pieces of at most 16 bytes. */
struct nt_bf16 { unsigned short bits; };
struct nt_f16 { unsigned short bits; };

/* fp16 pair in a 32-bit word: element 0 in the low half. */
__device__ __forceinline__ float nt_h_lo(unsigned u) {
    float f;
    asm("{\n\t.reg .b16 l, h;\n\tmov.b32 {l, h}, %1;\n\tcvt.f32.f16 %0, l;\n\t}" : "=f"(f) : "r"(u));
    return f;
}
__device__ __forceinline__ float nt_h_hi(unsigned u) {
    float f;
    asm("{\n\t.reg .b16 l, h;\n\tmov.b32 {l, h}, %1;\n\tcvt.f32.f16 %0, h;\n\t}" : "=f"(f) : "r"(u));
    return f;
}
/* Round two floats to fp16 (nearest even) and pack: lo in the low half. */
__device__ __forceinline__ unsigned nt_h_pack(float lo, float hi) {
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

/* Per-dtype conversions of a 32-bit word holding 32 / (8 sizeof(T)) elements. */
template <class T> struct nt_dt;
template <> struct nt_dt<nt_bf16> {
    static __device__ __forceinline__ void get(unsigned u, float *f) { f[0] = nt_lo(u); f[1] = nt_hi(u); }
    static __device__ __forceinline__ unsigned put(const float *f) { return nt_pack(f[0], f[1]); }
};
template <> struct nt_dt<nt_f16> {
    static __device__ __forceinline__ void get(unsigned u, float *f) { f[0] = nt_h_lo(u); f[1] = nt_h_hi(u); }
    static __device__ __forceinline__ unsigned put(const float *f) { return nt_h_pack(f[0], f[1]); }
};
template <> struct nt_dt<float> {
    static __device__ __forceinline__ void get(unsigned u, float *f) { f[0] = __uint_as_float(u); }
    static __device__ __forceinline__ unsigned put(const float *f) { return __float_as_uint(f[0]); }
};

/* E elements of T as W words. */
template <class T, int E>
struct nt_vec {
    static constexpr int W = E * (int)sizeof(T) / 4;  /* 32-bit words */
    static constexpr int PER = 4 / (int)sizeof(T);    /* elements per word */
    unsigned w[W];
    __device__ __forceinline__ void get(float *f) const {
#pragma unroll
        for (int i = 0; i < W; i++) nt_dt<T>::get(w[i], f + PER * i);
    }
    __device__ __forceinline__ void put(const float *f) {
#pragma unroll
        for (int i = 0; i < W; i++) w[i] = nt_dt<T>::put(f + PER * i);
    }
    __device__ __forceinline__ void zero() {
#pragma unroll
        for (int i = 0; i < W; i++) w[i] = 0u;
    }
};

/* W words from global memory at p (aligned to min(4W, 16) bytes).  NC: a
 * read-once load that bypasses L1 (ld.global.nc.L1::no_allocate); else an
 * ordinary load (data read again, such as w). */
template <int W, bool NC>
__device__ __forceinline__ void nt_ldg(const void *p, unsigned *w) {
    if constexpr (W == 1) {
        if (NC) asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(w[0]) : "l"(p));
        else asm volatile("ld.global.u32 %0, [%1];" : "=r"(w[0]) : "l"(p));
    } else if constexpr (W == 2) {
        if (NC) asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];"
                             : "=r"(w[0]), "=r"(w[1]) : "l"(p));
        else asm volatile("ld.global.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(p));
    } else {
        static_assert(W % 4 == 0, "W: 1, 2 or a multiple of 4 words");
#pragma unroll
        for (int i = 0; i < W; i += 4) {
            const char *q = (const char *)p + 4 * i;
            if (NC) asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                                 : "=r"(w[i]), "=r"(w[i + 1]), "=r"(w[i + 2]), "=r"(w[i + 3])
                                 : "l"(q));
            else asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                              : "=r"(w[i]), "=r"(w[i + 1]), "=r"(w[i + 2]), "=r"(w[i + 3])
                              : "l"(q));
        }
    }
}

/* W words to global memory at p.  CS: a streaming store (evict first: the
 * output is not read again by this chain). */
template <int W, bool CS>
__device__ __forceinline__ void nt_stg(void *p, const unsigned *w) {
    if constexpr (W == 1) {
        if (CS) asm volatile("st.global.cs.u32 [%0], %1;" :: "l"(p), "r"(w[0]) : "memory");
        else asm volatile("st.global.u32 [%0], %1;" :: "l"(p), "r"(w[0]) : "memory");
    } else if constexpr (W == 2) {
        if (CS) asm volatile("st.global.cs.v2.u32 [%0], {%1, %2};" :: "l"(p), "r"(w[0]), "r"(w[1]) : "memory");
        else asm volatile("st.global.v2.u32 [%0], {%1, %2};" :: "l"(p), "r"(w[0]), "r"(w[1]) : "memory");
    } else {
        static_assert(W % 4 == 0, "W: 1, 2 or a multiple of 4 words");
#pragma unroll
        for (int i = 0; i < W; i += 4) {
            char *q = (char *)p + 4 * i;
            if (CS) asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};"
                                 :: "l"(q), "r"(w[i]), "r"(w[i + 1]), "r"(w[i + 2]), "r"(w[i + 3]) : "memory");
            else asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};"
                              :: "l"(q), "r"(w[i]), "r"(w[i + 1]), "r"(w[i + 2]), "r"(w[i + 3]) : "memory");
        }
    }
}

/* W words between shared memory (32-bit address) and registers, and an
 * asynchronous copy of W words global -> shared (cp.async, L2 only; W a
 * multiple of 4: 16-byte pieces; W 1 or 2: one 4- or 8-byte copy). */
template <int W>
__device__ __forceinline__ void nt_lds(unsigned a, unsigned *w) {
#pragma unroll
    for (int i = 0; i < W; i++)
        asm volatile("ld.shared.u32 %0, [%1];" : "=r"(w[i]) : "r"(a + 4u * i) : "memory");
}
template <int W>
__device__ __forceinline__ void nt_sts(unsigned a, const unsigned *w) {
#pragma unroll
    for (int i = 0; i < W; i++)
        asm volatile("st.shared.u32 [%0], %1;" :: "r"(a + 4u * i), "r"(w[i]) : "memory");
}
template <int W>
__device__ __forceinline__ void nt_cp_async(unsigned a, const void *g) {
    if constexpr (W == 1) {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(a), "l"(g) : "memory");
    } else if constexpr (W == 2) {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" :: "r"(a), "l"(g) : "memory");
    } else {
#pragma unroll
        for (int i = 0; i < W; i += 4) nt_cp16(a + 4u * i, (const char *)g + 4 * i);
    }
}

#endif
