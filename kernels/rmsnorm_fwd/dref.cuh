/* rmsnorm_fwd/dref.cuh -- the float64 reference of RMSNorm forward on the
 * device (kernels/dref.h says how the runner uses it and how it is
 * checked): the formulas of the host's reference (ref.c), in double, from
 * the inputs in their dtypes.  One kernel (op.c's dref_kernels), a block
 * per row: r = 1/sqrt(mean(x^2) + eps), y = x * r * w, and rstd = r when
 * the problem has it.  A fixed order: the same bits on every run. */
#include "dref.h"
#include "rmsnorm_fwd/tensors.h"

extern "C" __global__ void __launch_bounds__(NT_DREF_BLOCK)
nt_rmsnorm_fwd_dref(nt_dref_args a) {
    __shared__ double s[NT_DREF_BLOCK];
    const long long N = a.N;
    const int dx = a.dt[NT_FWD_X], dw = a.dt[NT_FWD_W];
    for (long long row = blockIdx.x; row < a.M; row += gridDim.x) {
        const long long o = row * N;
        double ss = 0;
        for (long long k = threadIdx.x; k < N; k += NT_DREF_BLOCK) {
            const double x = nt_dref_get(a.t[NT_FWD_X], dx, o + k);
            ss += x * x;
        }
        ss = nt_dref_block_sum(ss, s);
        const double r = 1.0 / sqrt(ss / (double)N + a.eps);
        for (long long k = threadIdx.x; k < N; k += NT_DREF_BLOCK)
            a.ref[NT_FWD_Y][o + k] =
                nt_dref_get(a.t[NT_FWD_X], dx, o + k) * r * nt_dref_get(a.t[NT_FWD_W], dw, k);
        if (threadIdx.x == 0 && a.ref[NT_FWD_RSTD]) a.ref[NT_FWD_RSTD][row] = r;
    }
}
