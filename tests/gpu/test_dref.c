/* test_dref.c -- GPU tests of what the runner draws and computes on the
 * device instead of the host (tuner/runner.c):
 *
 *   - nt_fill_dev (kernels/check.cuh) writes, in every dtype, the bits the
 *     host's nt_fill writes (kernels/fill.h is the one formula), at lengths
 *     that end inside a block and across the grid's stride;
 *   - every op's float64 reference on the device (kernels/<op>/dref.cuh)
 *     agrees with its host reference (kernels/<op>/ref.c) over every
 *     element of every output, for every dtype combination the op accepts,
 *     at shapes with one row, rows past the reference grid's 1024 blocks,
 *     short rows over many rows and long rows; and gives the same bits on
 *     a second run.
 *
 * The kernels are compiled from the sources the runner compiles
 * (nt_check_source, nt_dref_source) and launched as it launches them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "kernels/dref.h"
#include "kernels/ref.h"
#include "tests/t.h"
#include "tuner/compile.h"
#include "tuner/runner.h"

#define TOL 1e-12             /* relative L2 between the two float64 references */

static cudaLibrary_t load(const nt_csrc *src) {
    nt_cubin cb;
    char err[8192] = "";
    cudaLibrary_t lib = NULL;
    memset(&cb, 0, sizeof cb);
    if (nt_compile_src(src, &cb, err, sizeof err)) {
        printf("  compile %s: %s\n", src->name, err);
        nt_cubin_free(&cb);
        return NULL;
    }
    if (cudaLibraryLoadData(&lib, cb.data, NULL, NULL, 0, NULL, NULL, 0) != cudaSuccess) lib = NULL;
    nt_cubin_free(&cb);
    return lib;
}

static cudaLibrary_t chk;
static cudaKernel_t kfill;

/* a[n] of dtype dt drawn on the device from (seed, lo, hi). */
static int dev_fill(void *a, int dt, long long n, double lo, double hi, unsigned long long seed) {
    void *args[] = {&a, &dt, &n, &lo, &hi, &seed};
    return cudaLaunchKernel((const void *)kfill, (dim3){2048, 1, 1}, (dim3){256, 1, 1}, args, 0,
                            0) != cudaSuccess ||
           cudaDeviceSynchronize() != cudaSuccess;
}

TEST(device_fill_is_the_host_fill) {
    static const long long ns[] = {1, 255, 257, 524288, 524289 + 4097, 3000017};
    for (int dt = 0; dt < NT_NDTYPES; dt++)
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
            size_t es = (size_t)nt_dtypes[dt].size, b = (size_t)ns[k] * es;
            unsigned char *h = malloc(b + 16), *d = malloc(b + 16);
            void *g = NULL;
            CHECK(h && d && cudaMalloc(&g, b + 16) == cudaSuccess, "memory");
            if (!h || !d || !g) return;
            cudaMemset(g, 0xa5, b + 16);
            nt_fill(dt, h, (size_t)ns[k], -3, 5, 4242 + (uint64_t)k);
            CHECK(dev_fill(g, dt, ns[k], -3, 5, 4242 + k) == 0, "launch");
            cudaMemcpy(d, g, b + 16, cudaMemcpyDeviceToHost);
            size_t diff = 0;
            for (size_t i = 0; i < b; i++) diff += h[i] != d[i];
            CHECK(diff == 0, "%s n=%lld: %zu bytes differ from the host's fill", nt_dtypes[dt].name,
                  ns[k], diff);
            CHECK(d[b] == 0xa5, "%s n=%lld: written past the end", nt_dtypes[dt].name, ns[k]);
            free(h);
            free(d);
            cudaFree(g);
        }
}

/* The device reference of p against the host's, every element; twice on
 * the device, bitwise.  Returns the number of outputs compared. */
static int one_problem(cudaLibrary_t lib, const nt_csrc *src, const nt_problem *p) {
    const nt_op *op = p->op;
    void *hin[NT_MAX_TENSORS] = {0};
    double *href[NT_MAX_TENSORS] = {0}, *dref[NT_MAX_TENSORS] = {0};
    nt_dref_args a;
    int outs = 0;
    memset(&a, 0, sizeof a);
    for (int i = 0; i < op->ntensors; i++) {
        const nt_tensor_def *t = &op->tensors[i];
        size_t n = (size_t)nt_tensor_elems(p, i);
        int dt = a.dt[i] = nt_tensor_dtype(p, i);
        if (t->role == NT_OUT) {
            href[i] = malloc(n * sizeof(double));
            dref[i] = malloc(n * sizeof(double));
            cudaMalloc((void **)&a.ref[i], n * sizeof(double));
            cudaMemset(a.ref[i], 0xff, n * sizeof(double));   /* NaN */
            continue;
        }
        size_t b = n * (size_t)nt_dtypes[dt].size;
        hin[i] = malloc(b);
        cudaMalloc((void **)&a.t[i], b);
        nt_fill(dt, hin[i], n, t->lo, t->hi, 99 + (uint64_t)i);
        cudaMemcpy((void *)a.t[i], hin[i], b, cudaMemcpyHostToDevice);
    }
    cudaMalloc((void **)&a.scratch, (size_t)NT_DREF_SCRATCH(p->M, p->N) * sizeof(double));
    a.M = p->M;
    a.N = p->N;
    a.eps = 1e-6;
    CHECK(op->ref(p, (const void *const *)hin, href, 1e-6, 0) == 0, "host reference");
    for (int run = 0; run < 2; run++) {
        for (int k = 0; k < src->nexpr; k++) {
            cudaKernel_t kk;
            void *args[] = {&a};
            CHECK(cudaLibraryGetKernel(&kk, lib, src->expr[k]) == cudaSuccess &&
                      cudaLaunchKernel((const void *)kk, (dim3){NT_DREF_GRID, 1, 1},
                                       (dim3){NT_DREF_BLOCK, 1, 1}, args, 0, 0) == cudaSuccess,
                  "launch %s", src->expr[k]);
        }
        CHECK(cudaDeviceSynchronize() == cudaSuccess, "%s M=%lld N=%lld: %s", op->name,
              (long long)p->M, (long long)p->N, cudaGetErrorString(cudaGetLastError()));
        for (int i = 0; i < op->ntensors; i++) {
            if (op->tensors[i].role != NT_OUT) continue;
            size_t n = (size_t)nt_tensor_elems(p, i);
            double *got = malloc(n * sizeof(double));
            cudaMemcpy(got, a.ref[i], n * sizeof(double), cudaMemcpyDeviceToHost);
            if (run == 0) {
                double e = nt_rel_l2(href[i], got, n);
                CHECK(e <= TOL, "%s M=%lld N=%lld %s: device and host references differ by %.3g",
                      op->name, (long long)p->M, (long long)p->N, op->tensors[i].name, e);
                memcpy(dref[i], got, n * sizeof(double));
                outs++;
            } else {
                CHECK(!memcmp(dref[i], got, n * sizeof(double)),
                      "%s M=%lld N=%lld %s: a second run gives other bits", op->name,
                      (long long)p->M, (long long)p->N, op->tensors[i].name);
            }
            free(got);
        }
    }
    for (int i = 0; i < NT_MAX_TENSORS; i++) {
        free(hin[i]);
        free(href[i]);
        free(dref[i]);
        cudaFree((void *)a.t[i]);
        cudaFree(a.ref[i]);
    }
    cudaFree(a.scratch);
    return outs;
}

TEST(device_references_are_the_host_references) {
    static const int64_t shapes[][2] = {{1, 8},     {3, 72},     {1025, 1032}, {2049, 4096},
                                        {70001, 64}, {300, 20488}, {5, 65536}};
    for (int o = 0; nt_ops[o]; o++) {
        const nt_op *op = nt_ops[o];
        nt_csrc src;
        char err[512] = "";
        CHECK(nt_dref_source(&src, op, getenv("NT_ARCH") ? getenv("NT_ARCH") : "sm_90a", err,
                             sizeof err) == 0, "%s", err);
        cudaLibrary_t lib = load(&src);
        CHECK(lib != NULL, "%s: the device reference does not load", op->name);
        if (!lib) continue;
        int combos = 0;
        for (int x = 0; x < NT_NDTYPES; x++)
            for (int w = 0; w < NT_NDTYPES; w++) {
                nt_problem p;
                nt_problem_init(&p, op, 1, 8);
                p.dtype[0] = x;
                if (op->nslots > 1) p.dtype[1] = w;
                if (nt_problem_check(&p, err, sizeof err)) continue;
                combos++;
                for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
                    p.M = shapes[k][0];
                    p.N = shapes[k][1];
                    if (nt_problem_check(&p, err, sizeof err)) continue;
                    CHECK(one_problem(lib, &src, &p) > 0, "%s: no output", op->name);
                }
            }
        CHECK(combos >= 3, "%s: %d dtype combinations", op->name, combos);
        cudaLibraryUnload(lib);
    }
}

int main(void) {
    int n = 0;
    char err[512] = "";
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("no GPU\nRESULT 0 1\n");
        return 1;
    }
    struct cudaDeviceProp pr;
    static char arch[16];
    cudaGetDeviceProperties(&pr, 0);
    snprintf(arch, sizeof arch, "sm_%d%d%s", pr.major, pr.minor,
             (pr.major == 9 || pr.major == 10) && pr.minor == 0 ? "a" : "");
    setenv("NT_ARCH", arch, 1);
    nt_csrc src;
    nt_check_source(&src, arch, 1);
    chk = load(&src);
    if (!chk || cudaLibraryGetKernel(&kfill, chk, "nt_fill_dev") != cudaSuccess) {
        printf("the check kernels do not load: %s\nRESULT 0 1\n", err);
        return 1;
    }
    RUN(device_fill_is_the_host_fill);
    RUN(device_references_are_the_host_references);
    T_END();
}
