/* rmsnorm_bwd/colsum.cuh -- the column sums of the RMSNorm backward chains:
 * dw from fp32 (or bf16) partial rows in the workspace, in a fixed order
 * (see row.cuh for the chains).  nt_colsum_split<F32>: nsplit x N fp32
 * slices of an M x N partial; nt_colsum_final<TDW, P>: dw in TDW from
 * nparts fp32 rows. */
#ifndef NT_RMSNORM_BWD_COLSUM_CUH
#define NT_RMSNORM_BWD_COLSUM_CUH

#include "rmsnorm_bwd/row.cuh"

/* ---- column sums ------------------------------------------------------ */

/* Bytes of an M x N partial of element size es, rounded up to 256. */
__device__ __forceinline__ long long nt_part_bytes(long long M, int N, int es) {
    return ((M * N * es) + 255) & ~255LL;
}

/* Four columns c4*4.. of rows [r0, r1) summed into a float4 by a block of
 * 256 threads: CG column groups x (256/CG) row lanes.  Lane ty sums rows
 * r0+ty, r0+ty+RL, ... in order; the lanes are then added by a fixed tree.
 * Returns the sum in the threads of lane 0 (threadIdx.x < CG). */
template <int F32, int CG>
__device__ __forceinline__ nt_f4 nt_colsum4(const void *in, int N, long long r0, long long r1,
                                            bool ok, long long c4) {
    constexpr int RL = 256 / CG;
    __shared__ nt_f4 tile[RL][CG];
    const int tx = threadIdx.x % CG, ty = threadIdx.x / CG;
    nt_f4 s = {0.f, 0.f, 0.f, 0.f};
    if (ok) {
#pragma unroll 4
        for (long long r = r0 + ty; r < r1; r += RL) {
            if (F32) {
                nt_f4 v = ((const nt_f4 *)in)[(r * N >> 2) + c4];
                s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
            } else {
                nt_u2 v = ((const nt_u2 *)in)[(r * N >> 2) + c4];
                s.x += nt_lo(v.x); s.y += nt_hi(v.x); s.z += nt_lo(v.y); s.w += nt_hi(v.y);
            }
        }
    }
    tile[ty][tx] = s;
    __syncthreads();
#pragma unroll
    for (int h = RL / 2; h > 0; h >>= 1) {
        if (ty < h) {
            nt_f4 u = tile[ty + h][tx];
            s.x += u.x; s.y += u.y; s.z += u.z; s.w += u.w;
            tile[ty][tx] = s;
        }
        __syncthreads();
    }
    return s;
}

#define NT_SPLIT_CG 16        /* column sum over M rows: 64 columns a block */
#define NT_FINAL_CG 4         /* final column sum: 16 columns a block */

template <int F32>
__global__ void __launch_bounds__(256) nt_colsum_split(nt_args a) {
    const long long c4 = (long long)blockIdx.x * NT_SPLIT_CG + (threadIdx.x % NT_SPLIT_CG);
    const bool ok = c4 < (a.N >> 2);
    const long long per = (a.M + gridDim.y - 1) / gridDim.y;
    long long r0 = (long long)blockIdx.y * per, r1 = r0 + per;
    if (r1 > a.M) r1 = a.M;
    if (r0 > r1) r0 = r1;                                /* empty slice: zeros */
    nt_wait_prev();
    nt_launch_next();
    nt_f4 t = nt_colsum4<F32, NT_SPLIT_CG>(a.ws, a.N, r0, r1, ok, c4);
    float *out = (float *)((char *)a.ws + nt_part_bytes(a.M, a.N, F32 ? 4 : 2));
    if (ok && threadIdx.x < NT_SPLIT_CG) ((nt_f4 *)(out + (long long)blockIdx.y * a.N))[c4] = t;
}

template <class TDW, int P>
__global__ void __launch_bounds__(256) nt_colsum_final(nt_args a) {
    const long long c4 = (long long)blockIdx.x * NT_FINAL_CG + (threadIdx.x % NT_FINAL_CG);
    const bool ok = c4 < (a.N >> 2);
    const char *in = (const char *)a.ws + (P ? nt_part_bytes(a.M, a.N, P == 2 ? 4 : 2) : 0);
    nt_wait_prev();
    nt_f4 t = nt_colsum4<1, NT_FINAL_CG>(in, a.N, 0, a.nparts, ok, c4);
    if (!ok || threadIdx.x >= NT_FINAL_CG) return;
    const float f[4] = {t.x, t.y, t.z, t.w};
    nt_vec<TDW, 4> v;                   /* 4 columns: 8 or 16 bytes */
    v.put(f);
    nt_bwd_put<nt_vec<TDW, 4>::W>((char *)a.t[NT_BWD_DW] + sizeof(TDW) * 4 * c4, v.w);
}

#endif
