/* rmsnorm_fwd/io.cuh -- what every forward kernel reads from its nt_args
 * before its first row: the tensors, the shape, and which of a thread's C
 * chunks of a row exist; and the rstd of a row from its sum of squares.
 * One place for it: every forward family starts from an nt_fwd_io. */
#ifndef NT_RMSNORM_FWD_IO_CUH
#define NT_RMSNORM_FWD_IO_CUH

#include "rmsnorm_fwd/common.cuh"

template <class X>
struct nt_fwd_io {
    const char *x, *w;        /* x rows; w (N elements of the weight dtype) */
    char *y;                  /* y rows */
    float *rstd;              /* M floats, or NULL */
    long long M, rowb;        /* rows; bytes of a row of x and y */
    int nvec;                 /* 16-byte chunks of x in a row */
    float invN, eps;
    __device__ __forceinline__ explicit nt_fwd_io(const nt_args &a)
        : x((const char *)a.t[NT_FWD_X]), w((const char *)a.t[NT_FWD_W]),
          y((char *)a.t[NT_FWD_Y]), rstd((float *)a.t[NT_FWD_RSTD]), M(a.M),
          rowb((long long)a.N * (long long)sizeof(X)), nvec(a.N / (16 / (int)sizeof(X))),
          invN(1.0f / (float)a.N), eps(a.eps) {}
    /* act[j]: chunk j of thread l of T threads per row, vector j*T + l, exists */
    template <int C>
    __device__ __forceinline__ void cover(bool *act, int T, int l) const {
#pragma unroll
        for (int j = 0; j < C; j++) act[j] = j * T + l < nvec;
    }
    /* rstd of a row from its sum of squares */
    __device__ __forceinline__ float r_of(float sumsq) const { return rsqrtf(sumsq * invN + eps); }
};

/* One 16-byte chunk of x from shared memory (32-bit address) into xv. */
template <class V>
__device__ __forceinline__ void nt_fwd_lds_x(V &xv, unsigned saddr) {
    const nt_u4 v = nt_lds16(saddr);
    xv.w[0] = v.x;
    xv.w[1] = v.y;
    xv.w[2] = v.z;
    xv.w[3] = v.w;
}

#endif
