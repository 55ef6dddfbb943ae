/* rmsnorm_fwd/warp.cuh -- the warp family of RMSNorm forward: T threads
 * per row, B/T rows per block, a reduction in the row's lanes.  See common.cuh. */
#ifndef NT_RMSNORM_FWD_WARP_CUH
#define NT_RMSNORM_FWD_WARP_CUH

#include "rmsnorm_fwd/io.cuh"

/* ---- L2 policies when rstd is written ------------------------------------
 *
 * A block of `warp` writes B/T rows' rstd, 4 bytes each: at 16 threads a
 * row and 128 a block, 32 bytes, one sector of a line the next blocks
 * share.  On an H200 writing rstd that way cost 4.5% at 1048576 x 128 bf16
 * (136.3 against 130.1 us alone; data/shortfwd-h200/), six times its share
 * of the bytes, and the configs that hide it (64 rows a block) are 2-3%
 * slower at y alone.  With rstd's stores marked evict-last in L2 and y's
 * evict-first, rstd's lines stay in L2 until they are whole and y streams
 * out first: 131.3 us, within 1% of y alone, and 0-4% faster than the
 * plain stores at every short-row shape measured.  The hints change no
 * value.  Without rstd the stores are nt_fwd_store's.  createpolicy and
 * .L2::cache_hint need sm_80. */
__device__ __forceinline__ unsigned long long nt_fwd_warp_policy(bool last) {
    unsigned long long p = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (last) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    else asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
#endif
    return p;
}

/* 16 bytes to global memory under L2 policy pol (a plain store below sm_80). */
__device__ __forceinline__ void nt_fwd_warp_st16(char *p, const unsigned *w, unsigned long long pol) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;"
                 :: "l"(p), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]), "l"(pol) : "memory");
#else
    (void)pol;
    nt_stg<4, false>(p, w);
#endif
}

/* rstd of a row under L2 policy pol. */
__device__ __forceinline__ void nt_fwd_warp_st4(float *p, float v, unsigned long long pol) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" :: "l"(p), "f"(v), "l"(pol) : "memory");
#else
    (void)pol;
    *p = v;
#endif
}

/* nt_fwd_store's y = x * r * w (the same operations in the same order, so
 * the same bits), each chunk stored under L2 policy pol. */
template <class X, class Wt, int C, int E>
__device__ __forceinline__ void nt_fwd_warp_store(const nt_vec<X, E> *xv, const nt_vec<Wt, E> *wv,
                                                  const bool *act, float r, char *yrow, int T,
                                                  int l, unsigned long long pol) {
#pragma unroll
    for (int j = 0; j < C; j++) {
        if (!act[j]) continue;
        float xf[E], wf[E], o[E];
        xv[j].get(xf);
        wv[j].get(wf);
#pragma unroll
        for (int k = 0; k < E; k++) o[k] = xf[k] * r * wf[k];
        nt_vec<X, E> ov;
        ov.put(o);
        nt_fwd_warp_st16(yrow + 16 * (long long)(j * T + l), ov.w, pol);
    }
}

/* ---- T threads per row, B/T rows per block ------------------------------ */

template <class X, class Wt, int T, int B, int C, int K>
__global__ void __launch_bounds__(B, (K > 0 ? K : 1)) nt_fwd_warp(nt_args a) {
    nt_wait_prev(); /* before any global access: see common.cuh */
    typedef nt_fwd_t<X, Wt> F;
    constexpr int E = F::E, R = B / T;
    static_assert(T >= 1 && T <= 32 && (T & (T - 1)) == 0 && B % 32 == 0, "T | 32, B % 32 == 0");
    const int tid = threadIdx.x, l = tid % T, g = tid / T;
    const nt_fwd_io<X> io(a);
    bool cov[C];
    io.template cover<C>(cov, T, l);
    typename F::xv xv[C];
    typename F::wv wv[C];
    /* the loop bound is the same for the whole block, so every lane of a
     * warp reaches the butterfly; lanes of rows past M only add zeros */
#pragma unroll 1
    for (long long base = (long long)blockIdx.x * R; base < io.M; base += (long long)gridDim.x * R) {
        const long long row = base + g;
        const bool ok = row < io.M;
        bool act[C];
#pragma unroll
        for (int j = 0; j < C; j++) act[j] = ok && cov[j];
        nt_fwd_load_x<X, C, E>(xv, act, io.x + row * io.rowb, T, l);
        nt_fwd_load_w<Wt, C, E>(wv, act, io.w, T, l);
        float s = nt_fwd_sumsq<X, C, E>(xv, act);
        s = nt_fwd_lanes<T>(s);
        const float r = io.r_of(s);
        if (io.rstd) {
            if (ok && l == 0) nt_fwd_warp_st4(io.rstd + row, r, nt_fwd_warp_policy(true));
            nt_fwd_warp_store<X, Wt, C, E>(xv, wv, act, r, io.y + row * io.rowb, T, l,
                                           nt_fwd_warp_policy(false));
        } else {
            nt_fwd_store<X, Wt, C, E>(xv, wv, act, r, io.y + row * io.rowb, T, l);
        }
    }
}

#endif
