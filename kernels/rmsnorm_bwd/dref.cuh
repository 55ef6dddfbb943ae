/* rmsnorm_bwd/dref.cuh -- the float64 reference of RMSNorm backward on the
 * device (kernels/dref.h says how the runner uses it and how it is
 * checked): the formulas of the host's reference (ref.c), in double, from
 * the inputs in their dtypes.  Launched in this order (op.c's
 * dref_kernels), each on NT_DREF_GRID blocks of NT_DREF_BLOCK threads:
 *
 *   nt_rmsnorm_bwd_dref_rows   a block per row: r = 1/sqrt(mean(x^2) + eps)
 *                              into scratch[row], dx = r*w*dy - x*r^3*mean(dy*w*x)
 *   nt_rmsnorm_bwd_dref_dw     NT_DREF_SLICES fixed row slices: per slice and
 *                              column, the sum of dy*x*r over the slice's
 *                              rows in order, into scratch[M + slice*N + k]
 *   nt_rmsnorm_bwd_dref_dwsum  dw[k]: the slices' partials added in order
 *
 * No atomics and a fixed order everywhere: the same bits on every run. */
#include "dref.h"
#include "rmsnorm_bwd/tensors.h"

extern "C" __global__ void __launch_bounds__(NT_DREF_BLOCK)
nt_rmsnorm_bwd_dref_rows(nt_dref_args a) {
    __shared__ double s[NT_DREF_BLOCK];
    const long long N = a.N;
    const int dx = a.dt[NT_BWD_X], dw = a.dt[NT_BWD_W];
    for (long long row = blockIdx.x; row < a.M; row += gridDim.x) {
        const long long o = row * N;
        double ss = 0, dot = 0;
        for (long long k = threadIdx.x; k < N; k += NT_DREF_BLOCK) {
            const double x = nt_dref_get(a.t[NT_BWD_X], dx, o + k);
            const double g = nt_dref_get(a.t[NT_BWD_DY], dx, o + k);
            const double w = nt_dref_get(a.t[NT_BWD_W], dw, k);
            ss += x * x;
            dot += g * w * x;
        }
        ss = nt_dref_block_sum(ss, s);
        dot = nt_dref_block_sum(dot, s);
        const double r = 1.0 / sqrt(ss / (double)N + a.eps);
        const double c = r * r * r * (dot / (double)N);
        for (long long k = threadIdx.x; k < N; k += NT_DREF_BLOCK) {
            const double x = nt_dref_get(a.t[NT_BWD_X], dx, o + k);
            const double g = nt_dref_get(a.t[NT_BWD_DY], dx, o + k);
            const double w = nt_dref_get(a.t[NT_BWD_W], dw, k);
            a.ref[NT_BWD_DX][o + k] = r * w * g - x * c;
        }
        if (threadIdx.x == 0) a.scratch[row] = r;
    }
}

extern "C" __global__ void __launch_bounds__(NT_DREF_BLOCK)
nt_rmsnorm_bwd_dref_dw(nt_dref_args a) {
    const long long N = a.N, n = (long long)NT_DREF_SLICES * N;
    const int dx = a.dt[NT_BWD_X];
    for (long long i = blockIdx.x * (long long)NT_DREF_BLOCK + threadIdx.x; i < n;
         i += (long long)NT_DREF_BLOCK * gridDim.x) {
        const long long slice = i / N, k = i % N;
        const long long lo = a.M * slice / NT_DREF_SLICES, hi = a.M * (slice + 1) / NT_DREF_SLICES;
        double p = 0;
        for (long long row = lo; row < hi; row++)
            p += nt_dref_get(a.t[NT_BWD_DY], dx, row * N + k) *
                 nt_dref_get(a.t[NT_BWD_X], dx, row * N + k) * a.scratch[row];
        a.scratch[a.M + i] = p;
    }
}

extern "C" __global__ void __launch_bounds__(NT_DREF_BLOCK)
nt_rmsnorm_bwd_dref_dwsum(nt_dref_args a) {
    for (long long k = blockIdx.x * (long long)NT_DREF_BLOCK + threadIdx.x; k < a.N;
         k += (long long)NT_DREF_BLOCK * gridDim.x) {
        double d = 0;
        for (int slice = 0; slice < NT_DREF_SLICES; slice++) d += a.scratch[a.M + slice * a.N + k];
        a.ref[NT_BWD_DW][k] = d;
    }
}
