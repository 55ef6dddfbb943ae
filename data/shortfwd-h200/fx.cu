// fx.cu -- an experiment, not part of the tool: the forward at short rows
// (bf16), the library's warp kernel (nt_fwd_warp, included from kernels/)
// beside a copy of it, `xw`, whose x loads, y stores and rstd stores can be
// done otherwise; each call alone between CUDA events after a 256 MB L2
// flush, median of 40 after 5 warm-ups, every contender of a shape
// interleaved in rounds.  Before timing, each contender's y (and rstd) is
// compared bit for bit with the library kernel's first config (contenders
// of another T reduce in another order: their MISMATCH lines are that).
//
//   nvcc -std=c++17 -O3 -arch=sm_90a -I kernels -o fx data/shortfwd-h200/fx.cu
//
// xw<T, B, C, LD, ST, RS>: T threads a row, B a block, C 16-byte chunks a
// thread, one step of B/T rows a block.  LD: x by 0 ld.global, 1 cp.async
// through shared memory, 2 ld.global.nc, 3 L1::no_allocate with an L2
// evict-first policy.  ST: y by 0 st.global, 1 st.global.cs.  RS: rstd by
// 0 lane 0 of each row (the library's way), 1 the block's rows staged in
// shared memory and written together after a barrier, 2 the same with
// st.global.cs, 3 lane 0 after the y stores, 4 not written (a diagnostic:
// computed and kept in shared memory), 6 lane 0 under an L2 evict-last
// policy, 7 that and y's stores under an evict-first policy.  "+r" in a
// name: rstd asked for.
//
// The runs (gpu.txt), each with the config list of its time:
//   run1.txt  LD 0-3, ST 0-1, RS 0-1 at 17 (T, B, C) over the six shapes
//   run2.txt  RS 0-4 with B up to 1024 (24 configs)
//   run3.txt  RS 0, 1, 4, 6, 7 at the 10 configs of the file as it is
// What they say: data/README.md (shortfwd-h200) and
// docs/guide.md (rmsnorm_fwd.warp).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <string>
#include <algorithm>
#include <functional>
#include <cuda_runtime.h>
#include "nt_args.h"
#include "common.cuh"
#include "rmsnorm_fwd/tensors.h"
#include "rmsnorm_fwd/warp.cuh"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

__device__ __forceinline__ void cpa16(unsigned a, const void *g) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(a), "l"(g) : "memory");
}
__device__ __forceinline__ nt_u4 ldplain(const nt_u4 *p) {
    nt_u4 v;
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
__device__ __forceinline__ nt_u4 ldnc(const nt_u4 *p) {
    nt_u4 v;
    asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
__device__ __forceinline__ nt_u4 ldef(const nt_u4 *p) {
    nt_u4 v;
    unsigned long long pol;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
    asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(pol));
    return v;
}
__device__ __forceinline__ void stplain(nt_u4 *p, const nt_u4 &v) {
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};"
                 :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
__device__ __forceinline__ void stcs(nt_u4 *p, const nt_u4 &v) {
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};"
                 :: "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

// LD: 0 plain, 1 cp.async.cg via smem, 2 nc, 3 evict_first; ST: 0 plain, 1 .cs;
// RS: 0 lane 0 writes rstd, 1 the block's rstd staged and written by its first lanes
template <int T, int B, int C, int LD, int ST, int RS>
__global__ void __launch_bounds__(B) xw(nt_args a) {
    nt_wait_prev();
    constexpr int R = B / T;
    __shared__ nt_u4 sx[LD == 1 ? B * C : 1];
    __shared__ float sr[RS ? R : 1];
    const nt_u4 *x = (const nt_u4 *)a.t[NT_FWD_X], *w = (const nt_u4 *)a.t[NT_FWD_W];
    nt_u4 *y = (nt_u4 *)a.t[NT_FWD_Y];
    float *rstd = (float *)a.t[NT_FWD_RSTD];
    const int nvec = a.N / 8, tid = threadIdx.x, l = tid % T, g = tid / T;
    const long long row = (long long)blockIdx.x * R + g;
    const bool ok = row < a.M;
    const nt_u4 *xr = x + row * nvec;
    nt_u4 xv[C], wv[C];
    const nt_u4 z = {0, 0, 0, 0};
    if (LD == 1) {
        const unsigned base = nt_saddr(sx);
#pragma unroll
        for (int j = 0; j < C; j++)
            if (ok && j * T + l < nvec) cpa16(base + 16u * (j * B + tid), xr + j * T + l);
        asm volatile("cp.async.commit_group;" ::: "memory");
    } else {
#pragma unroll
        for (int j = 0; j < C; j++) {
            const bool on = ok && j * T + l < nvec;
            xv[j] = !on ? z : LD == 0 ? ldplain(xr + j * T + l) : LD == 2 ? ldnc(xr + j * T + l)
                                                               : ldef(xr + j * T + l);
        }
    }
#pragma unroll
    for (int j = 0; j < C; j++) wv[j] = j * T + l < nvec ? ldplain(w + j * T + l) : z;
    if (LD == 1) {
        asm volatile("cp.async.wait_all;" ::: "memory");
        const unsigned base = nt_saddr(sx);
#pragma unroll
        for (int j = 0; j < C; j++)
            xv[j] = (ok && j * T + l < nvec) ? nt_lds16(base + 16u * (j * B + tid)) : z;
    }
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < C; j++) {
        float f[8];
        nt_unpack8(xv[j], f);
#pragma unroll
        for (int k = 0; k < 8; k++) s = fmaf(f[k], f[k], s);
    }
#pragma unroll
    for (int o = T / 2; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    const float r = rsqrtf(s * (1.0f / (float)a.N) + a.eps);
    if (rstd && ok) {
        if (RS == 0) { if (l == 0) rstd[row] = r; }
        else if (RS == 6 || RS == 7) {
            if (l == 0) {
                unsigned long long pol;
                asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
                asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" :: "l"(rstd + row), "f"(r), "l"(pol) : "memory");
            }
        }
        else if (RS != 3 && RS != 6 && RS != 7 && l == 0) sr[g] = r;
    }
#pragma unroll
    for (int j = 0; j < C; j++) {
        if (!(ok && j * T + l < nvec)) continue;
        float xf[8], wf[8], o[8];
        nt_unpack8(xv[j], xf);
        nt_unpack8(wv[j], wf);
#pragma unroll
        for (int k = 0; k < 8; k++) o[k] = xf[k] * r * wf[k];
        const nt_u4 ov = nt_pack8(o);
        if (RS == 7) {
            unsigned long long pf;
            asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pf));
            asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;"
                         :: "l"(y + row * nvec + j * T + l), "r"(ov.x), "r"(ov.y), "r"(ov.z), "r"(ov.w), "l"(pf) : "memory");
        } else if (ST) stcs(y + row * nvec + j * T + l, ov);
        else stplain(y + row * nvec + j * T + l, ov);
    }
    if (RS == 3 && rstd && ok && l == 0) rstd[row] = r;
    if ((RS == 1 || RS == 2) && rstd) {
        __syncthreads();
        const long long r0 = (long long)blockIdx.x * R;
        for (int i = tid; i < R; i += B)
            if (r0 + i < a.M) {
                if (RS == 1) rstd[r0 + i] = sr[i];
                else asm volatile("st.global.cs.f32 [%0], %1;" :: "l"(rstd + r0 + i), "f"(sr[i]) : "memory");
            }
    }
    if (RS == 4 && rstd && sr[0] == 12345.f) rstd[0] = 0.f;   /* keeps sr live; never true */
}

// a copy with the same decomposition (C chunks a thread, grid of B-thread blocks)
template <int B, int C>
__global__ void __launch_bounds__(B) cpk(const nt_u4 *x, nt_u4 *y, long long n) {
    const long long i0 = (long long)blockIdx.x * B * C + threadIdx.x;
    nt_u4 v[C];
#pragma unroll
    for (int j = 0; j < C; j++) if (i0 + j * B < n) v[j] = ldplain(x + i0 + j * B);
#pragma unroll
    for (int j = 0; j < C; j++) if (i0 + j * B < n) stplain(y + i0 + j * B, v[j]);
}

__global__ void cmpk(const unsigned *a, const unsigned *b, long long n, unsigned long long *bad) {
    unsigned long long c = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) c += a[i] != b[i];
    if (c) atomicAdd(bad, c);
}

__global__ void flushk(unsigned *p, long long n, unsigned v) {
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) p[i] = v;
}

struct Cand { std::string name; std::function<void(cudaStream_t)> fn; bool rstd; };

static unsigned short f2bf(float f) { unsigned u; memcpy(&u, &f, 4); u += 0x7fff + ((u >> 16) & 1); return u >> 16; }

int main(int argc, char **argv) {
    const int iters = 40, warm = 5;
    struct Shape { long long M; int N; };
    std::vector<Shape> shapes = {{1048576, 128}, {262144, 128}, {131072, 64}, {65536, 256},
                                 {32768, 512}, {8192, 768}};
    cudaStream_t st; CK(cudaStreamCreate(&st));
    long long fn = (256ll << 20) / 4; unsigned *fl; CK(cudaMalloc(&fl, fn * 4));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    for (auto sh : shapes) {
        const long long M = sh.M; const int N = sh.N; const long long n = M * N;
        std::vector<unsigned short> hx(n), hw(N);
        unsigned s = 12345;
        for (long long i = 0; i < n; i++) { s = s * 1664525u + 1013904223u; hx[i] = f2bf(((s >> 8) & 0xffff) / 32768.f - 1.f); }
        for (int i = 0; i < N; i++) hw[i] = f2bf(0.5f + i % 7 / 7.f);
        void *x, *w, *y, *r, *yr;
        CK(cudaMalloc(&x, n * 2)); CK(cudaMalloc(&w, N * 2)); CK(cudaMalloc(&y, n * 2));
        CK(cudaMalloc(&yr, n * 2)); CK(cudaMalloc(&r, M * 4));
        CK(cudaMemcpy(x, hx.data(), n * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(w, hw.data(), N * 2, cudaMemcpyHostToDevice));
        nt_args a; memset(&a, 0, sizeof a);
        a.t[NT_FWD_X] = x; a.t[NT_FWD_W] = w; a.t[NT_FWD_Y] = y; a.M = M; a.N = N; a.eps = 1e-6f;
        nt_args ar = a; ar.t[NT_FWD_RSTD] = r;
        std::vector<Cand> cs;
        cs.push_back({"memcpy", [=](cudaStream_t q) { CK(cudaMemcpyAsync(y, x, n * 2, cudaMemcpyDeviceToDevice, q)); }, false});
        cs.push_back({"copyk256x4", [=](cudaStream_t q) { long long v = n / 8; cpk<256, 4><<<(v + 1023) / 1024, 256, 0, q>>>((const nt_u4 *)x, (nt_u4 *)y, v); }, false});
        cs.push_back({"copyk128x1", [=](cudaStream_t q) { long long v = n / 8; cpk<128, 1><<<(v + 127) / 128, 128, 0, q>>>((const nt_u4 *)x, (nt_u4 *)y, v); }, false});
#define LIB(T, B, C) \
        if (N <= T * C * 8 && N > (C - 1) * T * 8) { \
            for (int rs = 0; rs < 2; rs++) cs.push_back({std::string("lib T") + #T " B" #B " C" #C + (rs ? " +r" : ""), \
                [=](cudaStream_t q) { nt_fwd_warp<nt_bf16, nt_bf16, T, B, C, 0><<<(M + B / T - 1) / (B / T), B, 0, q>>>(rs ? ar : a); }, rs == 1}); }
#define XW(T, B, C, LD, ST, RS) \
        if (N <= T * C * 8 && N > (C - 1) * T * 8) { \
            for (int rs = 0; rs < 2; rs++) { if (RS && !rs) continue; \
            cs.push_back({std::string("xw T") + #T " B" #B " C" #C " ld" #LD " st" #ST " rs" #RS + (rs ? " +r" : ""), \
                [=](cudaStream_t q) { xw<T, B, C, LD, ST, RS><<<(M + B / T - 1) / (B / T), B, 0, q>>>(rs ? ar : a); }, rs == 1}); } }
#define ALLX(T, B, C) LIB(T, B, C) XW(T, B, C, 0, 0, 0) XW(T, B, C, 1, 0, 0) XW(T, B, C, 2, 0, 0) \
        XW(T, B, C, 3, 0, 0) XW(T, B, C, 0, 1, 0) XW(T, B, C, 1, 1, 0) XW(T, B, C, 0, 0, 1) XW(T, B, C, 1, 0, 1)
#define RSX(T, B, C) LIB(T, B, C) XW(T, B, C, 0, 0, 0) XW(T, B, C, 0, 0, 1) XW(T, B, C, 0, 0, 6) \
        XW(T, B, C, 0, 0, 7) XW(T, B, C, 0, 0, 4)
        // N = 64
        RSX(8, 128, 1) RSX(4, 128, 2)
        // N = 128
        RSX(16, 128, 1) RSX(8, 512, 2)
        // N = 256
        RSX(32, 128, 1) RSX(16, 512, 2)
        // N = 512
        RSX(32, 128, 2) RSX(32, 512, 2)
        // N = 768
        RSX(32, 128, 3) RSX(32, 256, 3)
        const int nc = cs.size();
        // check: every variant's y (and rstd) bitwise equal to the library's first config
        int refi = -1;
        for (int i = 0; i < nc; i++) if (cs[i].name.rfind("lib", 0) == 0 && cs[i].rstd) { refi = i; break; }
        void *rr; CK(cudaMalloc(&rr, M * 4));
        unsigned long long *bad; CK(cudaMalloc(&bad, 8));
        CK(cudaMemset(y, 0xff, n * 2)); CK(cudaMemset(r, 0xff, M * 4));
        cs[refi].fn(st); CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
        CK(cudaMemcpy(yr, y, n * 2, cudaMemcpyDeviceToDevice));
        CK(cudaMemcpy(rr, r, M * 4, cudaMemcpyDeviceToDevice));
        int nbad = 0;
        for (int i = 3; i < nc; i++) {
            CK(cudaMemset(y, 0xff, n * 2)); CK(cudaMemset(r, 0xff, M * 4)); CK(cudaMemset(bad, 0, 8));
            cs[i].fn(st); CK(cudaStreamSynchronize(st)); CK(cudaGetLastError());
            cmpk<<<528, 256, 0, st>>>((const unsigned *)y, (const unsigned *)yr, n / 2, bad);
            if (cs[i].rstd && cs[i].name.find("rs4") == std::string::npos) cmpk<<<528, 256, 0, st>>>((const unsigned *)r, (const unsigned *)rr, M, bad);
            unsigned long long hb; CK(cudaMemcpy(&hb, bad, 8, cudaMemcpyDeviceToHost));
            if (hb) { printf("MISMATCH %s: %llu words\n", cs[i].name.c_str(), hb); nbad++; }
        }
        printf("checked %d variants against %s: %d differ\n", nc - 3, cs[refi].name.c_str(), nbad);
        CK(cudaFree(rr)); CK(cudaFree(bad));
        std::vector<std::vector<float>> t(nc);
        for (int it = 0; it < warm + iters; it++)
            for (int k = 0; k < nc; k++) {
                int i = (k + it) % nc;
                flushk<<<1056, 512, 0, st>>>(fl, fn, it * 131 + k);
                CK(cudaEventRecord(e0, st)); cs[i].fn(st); CK(cudaEventRecord(e1, st));
                CK(cudaEventSynchronize(e1));
                float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
                if (it >= warm) t[i].push_back(ms * 1000.f);
            }
        std::vector<float> med(nc);
        for (int i = 0; i < nc; i++) { std::sort(t[i].begin(), t[i].end()); med[i] = t[i][iters / 2]; }
        printf("=== M=%lld N=%d  memcpy %.2f us (%.2f TB/s)\n", M, N, med[0], 4.0 * n / med[0] / 1e6);
        std::vector<int> ord(nc); for (int i = 0; i < nc; i++) ord[i] = i;
        std::sort(ord.begin(), ord.end(), [&](int p, int q) { return med[p] < med[q]; });
        for (int i : ord) printf("  %-36s %8.2f us  %6.1f%% of memcpy\n", cs[i].name.c_str(), med[i], 100.0 * med[0] / med[i]);
        fflush(stdout);
        CK(cudaFree(x)); CK(cudaFree(w)); CK(cudaFree(y)); CK(cudaFree(yr)); CK(cudaFree(r));
    }
    return 0;
}
