/* test_lib.c -- GPU tests of the production library (build/libnormtune.a).
 *
 * Build and run: make test-gpu (or make build/gpu/test_lib; it links the
 * library, kernels/ref.c and the static CUDA runtime, and includes the
 * dispatch header the library was built with, build/lib/nt_dispatch.h).
 *
 *   version       the library reports the kernel source hash of its header
 *   arguments     every bad argument returns its own code, launches nothing
 *   correctness   tuned and untuned shapes, M from 1 up, N from 8 to 16384
 *                 (1536, 2880, 4104, 11008 included) against the float64
 *                 reference; outputs poisoned with NaN before each call;
 *                 dx rel. L2 <= 1e-2, dw <= NT_TOL_F32 = 1e-5 (fp32 dw,
 *                 whatever config serves the shape) or 1e-2 (bf16 dw); the
 *                 shapes where bf16 partials once served an fp32 dw, and
 *                 random shapes; three calls bitwise identical; tuned shapes use their
 *                 config (on the device the header was tuned on)
 *   threads       four host threads calling at once give the same bits
 *   speed         every tuned shape of the header, timed like the tuner
 *                 (tuner/runner.c time_variant: warm-up, then samples that
 *                 each average back-to-back calls lasting >= 200 us, queued
 *                 behind a gate (tuner/gate.h), on rotating input sets of
 *                 >= 3x the L2, median):
 *                 library median <= 1.05 x the stored median.  Only on the
 *                 device the header was tuned on (NORMTUNE_DEVICE).
 *
 * Needs a CUDA device; run by make test-gpu only. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime.h>

#include "kernels/family.h"      /* NT_TOL_F32: the tolerance of an fp32 output */
#include "kernels/normtune.h"
#include "kernels/ref.h"
#include "tests/t.h"
#include "tuner/gate.h"
#include "nt_dispatch.h"

#define EPS 1e-5f
#define L2_FACTOR 3           /* rotating sets hold >= 3x the L2 */
#define MAX_SETS 64
#define WARMUP 10
#define WARMUP_MS 200.0      /* and at least this much GPU time of warm-up */
#define SAMPLE_US 200.0       /* a sample lasts at least this long (tuner/runner.c) */
#define MAX_REPS 64           /* calls per sample, at most */
#define TILE (1u << 25)       /* elements of random input made on the host */
#define SAMPLES 200
#define BATCH 16
#define MAX_LAUNCHES 4        /* kernels one call launches, at most (NT_MAX_LAUNCH) */
#define SLACK 1.05            /* library time allowed over the stored time */
#define REF_ELEMS (1ll << 26) /* tuned shapes checked against the reference up to this */

#define CU(call)                                                                   \
    do {                                                                           \
        cudaError_t e_ = (call);                                                   \
        if (e_ != cudaSuccess) {                                                   \
            printf("  %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

static struct cudaDeviceProp prop;
static int same_device;       /* this GPU is the one the header was tuned on */

/* One shape's buffers: device inputs, outputs, workspace; host inputs and
 * the float64 reference. */
typedef struct shape {
    long long M, N;
    size_t n;
    void *x, *w, *dy, *dx, *dw, *ws;
    size_t wsize;
    uint16_t *hx, *hw, *hdy;
    double *rdx, *rdw;
} shape;

static uint64_t seed_of(long long M, long long N, int what) {
    return (uint64_t)M * 0x9e3779b97f4a7c15ull ^ (uint64_t)N * 0xbf58476d1ce4e5b9ull ^
           (uint64_t)what;
}

/* Allocate and fill shape (M, N); ref: also compute the reference. */
static void shape_make(shape *s, long long M, long long N, int ref) {
    memset(s, 0, sizeof *s);
    s->M = M;
    s->N = N;
    s->n = (size_t)M * (size_t)N;
    CHECK(normtune_rmsnorm_bwd_workspace_size(M, N, &s->wsize) == NORMTUNE_SUCCESS,
          "workspace size of %lld x %lld", M, N);
    CU(cudaMalloc(&s->x, s->n * 2));
    CU(cudaMalloc(&s->dy, s->n * 2));
    CU(cudaMalloc(&s->dx, s->n * 2));
    CU(cudaMalloc(&s->w, (size_t)N * 2));
    CU(cudaMalloc(&s->dw, (size_t)N * 4));
    CU(cudaMalloc(&s->ws, s->wsize ? s->wsize : 256));
    s->hx = malloc(s->n * 2);
    s->hdy = malloc(s->n * 2);
    s->hw = malloc((size_t)N * 2);
    if (!s->hx || !s->hdy || !s->hw) exit(1);
    nt_fill_uniform(s->hx, s->n, -2.0, 2.0, seed_of(M, N, 0));
    nt_fill_uniform(s->hdy, s->n, -1.0, 1.0, seed_of(M, N, 1));
    nt_fill_uniform(s->hw, (size_t)N, 0.5, 1.5, seed_of(M, N, 2));
    CU(cudaMemcpy(s->x, s->hx, s->n * 2, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(s->dy, s->hdy, s->n * 2, cudaMemcpyHostToDevice));
    CU(cudaMemcpy(s->w, s->hw, (size_t)N * 2, cudaMemcpyHostToDevice));
    if (!ref) return;
    s->rdx = malloc(s->n * sizeof(double));
    s->rdw = malloc((size_t)N * sizeof(double));
    if (!s->rdx || !s->rdw || nt_ref_rmsnorm_bwd(s->hx, s->hw, s->hdy, M, N, EPS, s->rdx, s->rdw, 0))
        exit(1);
}

static void shape_free(shape *s) {
    cudaFree(s->x);
    cudaFree(s->dy);
    cudaFree(s->dx);
    cudaFree(s->w);
    cudaFree(s->dw);
    cudaFree(s->ws);
    free(s->hx);
    free(s->hdy);
    free(s->hw);
    free(s->rdx);
    free(s->rdw);
}

/* Poison dx, dw and the workspace, run the library on stream st, copy dx and
 * dw to hdx, hdw.  Returns the library's status. */
static normtune_status run(const shape *s, unsigned flags, cudaStream_t st, uint16_t *hdx,
                           void *hdw) {
    CU(cudaMemsetAsync(s->dx, 0xff, s->n * 2, st));
    CU(cudaMemsetAsync(s->dw, 0xff, (size_t)s->N * 4, st));
    CU(cudaMemsetAsync(s->ws, 0xff, s->wsize, st));
    normtune_status rc = normtune_rmsnorm_bwd(s->x, s->w, s->dy, s->dx, s->dw, s->M, s->N, EPS,
                                              flags, s->ws, s->wsize, st);
    CU(cudaMemcpyAsync(hdx, s->dx, s->n * 2, cudaMemcpyDeviceToHost, st));
    CU(cudaMemcpyAsync(hdw, s->dw, (size_t)s->N * 4, cudaMemcpyDeviceToHost, st));
    CU(cudaStreamSynchronize(st));
    return rc;
}

/* The table entry for (M, N), or -1. */
static int tuned_index(long long M, long long N) {
    for (int i = 0; i < NORMTUNE_TABLE_SIZE; i++)
        if (normtune_table[i].M == M && normtune_table[i].N == N) return i;
    return -1;
}

/* Check one shape: both dw types, three calls each, bitwise equal. */
static void check_shape(long long M, long long N) {
    shape s;
    normtune_choice ch;
    shape_make(&s, M, N, 1);
    CHECK(normtune_rmsnorm_bwd_choice(M, N, &ch) == NORMTUNE_SUCCESS, "choice %lld x %lld", M, N);
    CHECK(ch.workspace == s.wsize, "choice workspace %zu, size query %zu", ch.workspace, s.wsize);
    int ti = tuned_index(M, N);
    if (ti >= 0 && same_device)
        CHECK(ch.config == normtune_table[ti].config && ch.tuned,
              "tuned shape %lld x %lld runs config %d, the table says %d", M, N, ch.config,
              normtune_table[ti].config);
    uint16_t *dx0 = malloc(s.n * 2), *dx1 = malloc(s.n * 2);
    float *dw0 = malloc((size_t)N * 4), *dw1 = malloc((size_t)N * 4);
    uint16_t *dwb = malloc((size_t)N * 4);
    if (!dx0 || !dx1 || !dw0 || !dw1 || !dwb) exit(1);
    for (int bf = 0; bf < 2; bf++) {
        unsigned flags = bf ? NORMTUNE_DW_BF16 : 0;
        normtune_status rc = run(&s, flags, 0, dx0, dw0);
        CHECK(rc == NORMTUNE_SUCCESS, "%lld x %lld: %s (cuda %d)", M, N, normtune_strerror(rc),
              normtune_last_cuda_error());
        double edx = nt_rel_l2_bf16(s.rdx, dx0, s.n), edw, tol;
        if (bf) {
            memcpy(dwb, dw0, (size_t)N * 2);
            edw = nt_rel_l2_bf16(s.rdw, dwb, (size_t)N);
            tol = 1e-2;
        } else {
            edw = nt_rel_l2_f32(s.rdw, dw0, (size_t)N);
            tol = NT_TOL_F32;       /* an fp32 output, whatever the config */
        }
        printf("  M=%-6lld N=%-6lld dw=%s config %3d %-24s %-34s grid %5u  err dx %.2e dw %.2e\n",
               M, N, bf ? "bf16" : "f32 ", ch.config, ch.family, ch.params, ch.grid, edx, edw);
        CHECK(edx <= 1e-2, "%lld x %lld: dx rel. L2 error %.3g", M, N, edx);
        CHECK(edw <= tol, "%lld x %lld: dw (%s) rel. L2 error %.3g > %.0e", M, N,
              bf ? "bf16" : "f32", edw, tol);
        for (int k = 0; k < 2; k++) {
            run(&s, flags, 0, dx1, dw1);
            CHECK(!memcmp(dx0, dx1, s.n * 2), "%lld x %lld: dx of call %d differs", M, N, k + 2);
            CHECK(!memcmp(dw0, dw1, (size_t)N * (bf ? 2 : 4)), "%lld x %lld: dw of call %d differs",
                  M, N, k + 2);
        }
    }
    free(dx0);
    free(dx1);
    free(dw0);
    free(dw1);
    free(dwb);
    shape_free(&s);
}

TEST(version) {
    const char *v = normtune_version();
    const unsigned char *u = (const unsigned char *)prop.uuid.bytes;
    printf("  %s\n  device %s (GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x), "
           "header tuned on %s\n", v, prop.name, u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8],
           u[9], u[10], u[11], u[12], u[13], u[14], u[15], NORMTUNE_DEVICE);
    CHECK(v && strstr(v, NORMTUNE_SOURCE_HASH), "version '%s' lacks the source hash", v ? v : "");
    CHECK(!strcmp(normtune_strerror(NORMTUNE_SUCCESS), "success"), "strerror(0)");
    CHECK(!strcmp(normtune_strerror((normtune_status)99), "unknown status"), "strerror(99)");
    for (int a = 0; a <= NORMTUNE_ERROR_INTERNAL; a++)
        for (int b = a + 1; b <= NORMTUNE_ERROR_INTERNAL; b++)
            CHECK(strcmp(normtune_strerror((normtune_status)a), normtune_strerror((normtune_status)b)),
                  "statuses %d and %d share a message", a, b);
}

TEST(arguments) {
    shape s;
    size_t sz = 0;
    long long M = 64, N = 1024;
    shape_make(&s, M, N, 0);
    CU(cudaMemset(s.dx, 0x5a, s.n * 2));
    const char *x = s.x, *w = s.w, *dy = s.dy;
    char *dx = s.dx, *dw = s.dw, *ws = s.ws;
    size_t wb = s.wsize;
    struct {
        const char *what;
        const void *x, *w, *dy;
        void *dx, *dw;
        long long M, N;
        float eps;
        unsigned flags;
        void *ws;
        size_t wb;
        normtune_status want;
    } c[] = {
        {"x NULL", NULL, w, dy, dx, dw, M, N, EPS, 0, ws, wb, NORMTUNE_ERROR_NULL_POINTER},
        {"w NULL", x, NULL, dy, dx, dw, M, N, EPS, 0, ws, wb, NORMTUNE_ERROR_NULL_POINTER},
        {"dy NULL", x, w, NULL, dx, dw, M, N, EPS, 0, ws, wb, NORMTUNE_ERROR_NULL_POINTER},
        {"dx NULL", x, w, dy, NULL, dw, M, N, EPS, 0, ws, wb, NORMTUNE_ERROR_NULL_POINTER},
        {"dw NULL", x, w, dy, dx, NULL, M, N, EPS, 0, ws, wb, NORMTUNE_ERROR_NULL_POINTER},
        {"M 0", x, w, dy, dx, dw, 0, N, EPS, 0, ws, wb, NORMTUNE_ERROR_INVALID_SHAPE},
        {"M -1", x, w, dy, dx, dw, -1, N, EPS, 0, ws, wb, NORMTUNE_ERROR_INVALID_SHAPE},
        {"M 2^31", x, w, dy, dx, dw, 1ll << 31, N, EPS, 0, ws, wb, NORMTUNE_ERROR_INVALID_SHAPE},
        {"N 0", x, w, dy, dx, dw, M, 0, EPS, 0, ws, wb, NORMTUNE_ERROR_INVALID_SHAPE},
        {"N -8", x, w, dy, dx, dw, M, -8, EPS, 0, ws, wb, NORMTUNE_ERROR_INVALID_SHAPE},
        {"N 1020", x, w, dy, dx, dw, M, 1020, EPS, 0, ws, wb, NORMTUNE_ERROR_UNSUPPORTED_N},
        {"N 16392", x, w, dy, dx, dw, M, 16392, EPS, 0, ws, wb, NORMTUNE_ERROR_UNSUPPORTED_N},
        {"x +2", x + 2, w, dy, dx, dw, M, N, EPS, 0, ws, wb, NORMTUNE_ERROR_MISALIGNED},
        {"w +8", x, w + 8, dy, dx, dw, M, N, EPS, 0, ws, wb, NORMTUNE_ERROR_MISALIGNED},
        {"dy +4", x, w, dy + 4, dx, dw, M, N, EPS, 0, ws, wb, NORMTUNE_ERROR_MISALIGNED},
        {"dx +2", x, w, dy, dx + 2, dw, M, N, EPS, 0, ws, wb, NORMTUNE_ERROR_MISALIGNED},
        {"dw +4", x, w, dy, dx, dw + 4, M, N, EPS, 0, ws, wb, NORMTUNE_ERROR_MISALIGNED},
        {"ws +8", x, w, dy, dx, dw, M, N, EPS, 0, ws + 8, wb, NORMTUNE_ERROR_MISALIGNED},
        {"ws NULL", x, w, dy, dx, dw, M, N, EPS, 0, NULL, wb, NORMTUNE_ERROR_WORKSPACE},
        {"ws small", x, w, dy, dx, dw, M, N, EPS, 0, ws, wb - 1, NORMTUNE_ERROR_WORKSPACE},
        {"ws 0 bytes", x, w, dy, dx, dw, M, N, EPS, 0, ws, 0, NORMTUNE_ERROR_WORKSPACE},
        {"eps -1", x, w, dy, dx, dw, M, N, -1.0f, 0, ws, wb, NORMTUNE_ERROR_INVALID_EPS},
        {"eps NaN", x, w, dy, dx, dw, M, N, NAN, 0, ws, wb, NORMTUNE_ERROR_INVALID_EPS},
        {"eps inf", x, w, dy, dx, dw, M, N, INFINITY, 0, ws, wb, NORMTUNE_ERROR_INVALID_EPS},
        {"flags 2", x, w, dy, dx, dw, M, N, EPS, 2, ws, wb, NORMTUNE_ERROR_INVALID_FLAGS},
        {"flags ~0", x, w, dy, dx, dw, M, N, EPS, ~0u, ws, wb, NORMTUNE_ERROR_INVALID_FLAGS},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        normtune_status rc = normtune_rmsnorm_bwd(c[i].x, c[i].w, c[i].dy, c[i].dx, c[i].dw,
                                                  c[i].M, c[i].N, c[i].eps, c[i].flags, c[i].ws,
                                                  c[i].wb, 0);
        CHECK(rc == c[i].want, "%s: got %d (%s), want %d", c[i].what, rc, normtune_strerror(rc),
              c[i].want);
    }
    /* nothing ran: dx still holds its pattern */
    uint16_t *h = malloc(s.n * 2);
    CU(cudaMemcpy(h, s.dx, s.n * 2, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < s.n; i++) bad += h[i] != 0x5a5a;
    CHECK(bad == 0, "a refused call wrote %zu elements of dx", bad);
    free(h);
    CHECK(normtune_rmsnorm_bwd_workspace_size(M, N, NULL) == NORMTUNE_ERROR_NULL_POINTER, "size NULL");
    CHECK(normtune_rmsnorm_bwd_workspace_size(0, N, &sz) == NORMTUNE_ERROR_INVALID_SHAPE, "size M 0");
    CHECK(normtune_rmsnorm_bwd_workspace_size(M, 12, &sz) == NORMTUNE_ERROR_UNSUPPORTED_N, "size N 12");
    CHECK(normtune_rmsnorm_bwd_choice(M, N, NULL) == NORMTUNE_ERROR_NULL_POINTER, "choice NULL");
    /* the exact size works */
    CHECK(normtune_rmsnorm_bwd(x, w, dy, dx, dw, M, N, EPS, 0, ws, wb, 0) == NORMTUNE_SUCCESS,
          "exact workspace refused");
    CU(cudaDeviceSynchronize());
    shape_free(&s);
}

/* Untuned shapes: every M of the list with every N of the list. */
TEST(correctness_untuned) {
    static const long long Ms[] = {1, 7, 131, 1000, 20000};
    static const long long Ns[] = {8, 1536, 2880, 4096, 4104, 11008, 16384};
    for (size_t i = 0; i < sizeof Ms / sizeof Ms[0]; i++)
        for (size_t j = 0; j < sizeof Ns / sizeof Ns[0]; j++) check_shape(Ms[i], Ns[j]);
}

/* Shapes where the library once served an fp32 dw from bf16 partials
 * (rel. L2 1.5-1.7e-3), then random shapes as a user would try them: M from
 * 1, N any multiple of 8 up to 16384 (fixed seed, so a failure repeats). */
TEST(correctness_dw_precision) {
    static const long long shapes[][2] = {{1, 8},       {7, 24},     {2, 96},    {215, 112},
                                          {10587, 1472}, {4096, 1032}, {16384, 1032}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        check_shape(shapes[i][0], shapes[i][1]);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int n = 0; n < 16;) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;            /* xorshift64 */
        long long N = 8 * (long long)(1 + (x >> 20) % 2048);
        long long M = 1 + (long long)((x >> 40) % 20000);
        if (M * N > REF_ELEMS) continue;
        check_shape(M, N);
        n++;
    }
}

/* Tuned shapes small enough for a quick reference. */
TEST(correctness_tuned) {
    int n = 0;
    for (int i = 0; i < NORMTUNE_TABLE_SIZE; i++) {
        if (normtune_table[i].M * normtune_table[i].N > REF_ELEMS) continue;
        check_shape(normtune_table[i].M, normtune_table[i].N);
        n++;
    }
    CHECK(n > 0 || NORMTUNE_TABLE_SIZE == 0, "no tuned shape checked");
}

/* ---- threads ---------------------------------------------------------- */

typedef struct tjob {
    const shape *s;
    uint16_t *dx;
    float *dw;
    int rc;
} tjob;

static void *thread_main(void *p) {
    tjob *j = p;
    cudaStream_t st;
    shape mine = *j->s;       /* inputs shared, outputs and workspace own */
    if (cudaSetDevice(0) || cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) ||
        cudaMalloc(&mine.dx, mine.n * 2) || cudaMalloc(&mine.dw, (size_t)mine.N * 4) ||
        cudaMalloc(&mine.ws, mine.wsize)) {
        j->rc = -1;
        return NULL;
    }
    j->rc = 0;
    for (int k = 0; k < 5 && !j->rc; k++) j->rc = run(&mine, 0, st, j->dx, j->dw);
    cudaFree(mine.dx);
    cudaFree(mine.dw);
    cudaFree(mine.ws);
    cudaStreamDestroy(st);
    return NULL;
}

TEST(threads) {
    enum { T = 4 };
    shape s;
    pthread_t th[T];
    tjob j[T];
    shape_make(&s, 3000, 6144, 0);
    uint16_t *dx = malloc(s.n * 2);
    float *dw = malloc((size_t)s.N * 4);
    CHECK(run(&s, 0, 0, dx, dw) == NORMTUNE_SUCCESS, "single-threaded run");
    for (int i = 0; i < T; i++) {
        j[i].s = &s;
        j[i].dx = malloc(s.n * 2);
        j[i].dw = malloc((size_t)s.N * 4);
        pthread_create(&th[i], NULL, thread_main, &j[i]);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        CHECK(j[i].rc == 0, "thread %d: status %d", i, j[i].rc);
        CHECK(!memcmp(j[i].dx, dx, s.n * 2) && !memcmp(j[i].dw, dw, (size_t)s.N * 4),
              "thread %d's result differs", i);
        free(j[i].dx);
        free(j[i].dw);
    }
    free(dx);
    free(dw);
    shape_free(&s);
}

/* ---- speed ------------------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median time in us of the library on M x N, as the tuner times a variant. */
static double time_lib(long long M, long long N, cudaStream_t st, cudaEvent_t *ev, nt_gate *gate,
                       double *host_us) {
    size_t n = (size_t)M * (size_t)N, per_set = 3 * n * 2, wsize = 0;
    int sets = (int)((L2_FACTOR * (size_t)prop.l2CacheSize + per_set - 1) / per_set);
    void *x[MAX_SETS], *dy[MAX_SETS], *dx[MAX_SETS], *w, *dw, *ws;
    static double t[SAMPLES];
    if (sets < 1) sets = 1;
    if (sets > MAX_SETS) sets = MAX_SETS;
    if (normtune_rmsnorm_bwd_workspace_size(M, N, &wsize)) return INFINITY;
    /* random inputs like the tuner's: one host tile, repeated */
    size_t tile = n < TILE ? n : TILE;
    uint16_t *h = malloc(tile * 2);
    if (!h) exit(1);
    for (int i = 0; i < sets; i++) {
        CU(cudaMalloc(&x[i], n * 2));
        CU(cudaMalloc(&dy[i], n * 2));
        CU(cudaMalloc(&dx[i], n * 2));
    }
    for (int what = 0; what < 2; what++) {
        nt_fill_uniform(h, tile, what ? -1.0 : -2.0, what ? 1.0 : 2.0, seed_of(M, N, what));
        for (int i = 0; i < sets; i++)
            for (size_t o = 0; o < n; o += tile)
                CU(cudaMemcpy((char *)(what ? dy[i] : x[i]) + o * 2, h,
                              (n - o < tile ? n - o : tile) * 2, cudaMemcpyHostToDevice));
    }
    CU(cudaMalloc(&w, (size_t)N * 2));
    CU(cudaMalloc(&dw, (size_t)N * 4));
    CU(cudaMalloc(&ws, wsize));
    nt_fill_uniform(h, (size_t)N < tile ? (size_t)N : tile, 0.5, 1.5, seed_of(M, N, 2));
    CU(cudaMemcpy(w, h, (size_t)N * 2, cudaMemcpyHostToDevice));
    free(h);
    int set = 0, ok = 1;
    double warm_ms = 0;
#define CALL()                                                                                   \
    (ok &= normtune_rmsnorm_bwd(x[set % sets], w, dy[set % sets], dx[set % sets], dw, M, N, EPS, \
                                0, ws, wsize, st) == NORMTUNE_SUCCESS,                           \
     set++)
    /* warm-up: at least WARMUP_MS of work, so clocks have ramped up (the
     * tuner's validation runs did that), then the tuner's timed warm-up.
     * Every batch is queued behind the gate (tuner/gate.h), as the tuner's
     * are: the times are the GPU's, whatever the host's call rate. */
    float ms = 0;
    int fit = NT_GATE_MAX_LAUNCHES / MAX_LAUNCHES, reps = 1;
    double host_s = 0;
    long host_calls = 0;
#define BATCH_OF(ncalls, per_event)                                          \
    do {                                                                     \
        CU(nt_gate_close(gate, st));                                         \
        CU(cudaEventRecord(ev[0], st));                                      \
        double h0 = now_s();                                                 \
        for (int i_ = 0; i_ < (ncalls); i_++) {                              \
            CALL();                                                          \
            if ((i_ + 1) % (per_event) == 0)                                 \
                CU(cudaEventRecord(ev[(i_ + 1) / (per_event)], st));         \
        }                                                                    \
        host_s += now_s() - h0;                                              \
        host_calls += (ncalls);                                              \
        nt_gate_open(gate);                                                  \
        CU(cudaEventSynchronize(ev[(ncalls) / (per_event)]));                \
        if (nt_gate_timed_out(gate)) ok = 0;                                 \
    } while (0)
    CALL();                   /* first call ungated: loads the kernels */
    CU(cudaStreamSynchronize(st));
    for (int r = 0; r < 1000 && warm_ms < WARMUP_MS; r++) {
        BATCH_OF(fit, fit);
        CU(cudaEventElapsedTime(&ms, ev[0], ev[1]));
        warm_ms += ms;
    }
    BATCH_OF(WARMUP, WARMUP);
    CU(cudaEventElapsedTime(&ms, ev[0], ev[1]));
    reps = (int)ceil(SAMPLE_US / (ms * 1e3 / WARMUP));
    reps = reps < 1 ? 1 : reps > MAX_REPS ? MAX_REPS : reps > fit ? fit : reps;
    host_s = 0;
    host_calls = 0;
    for (int s0 = 0; s0 < SAMPLES;) {
        int b = SAMPLES - s0 < BATCH ? SAMPLES - s0 : BATCH;
        if (b > fit / reps) b = fit / reps;
        BATCH_OF(b * reps, reps);
        for (int i = 0; i < b; i++) {
            CU(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
            t[s0 + i] = ms * 1e3 / reps;
        }
        s0 += b;
    }
    *host_us = host_s * 1e6 / (double)host_calls;
#undef BATCH_OF
#undef CALL
    for (int i = 0; i < sets; i++) {
        cudaFree(x[i]);
        cudaFree(dy[i]);
        cudaFree(dx[i]);
    }
    cudaFree(w);
    cudaFree(dw);
    cudaFree(ws);
    if (!ok) return INFINITY;
    qsort(t, SAMPLES, sizeof t[0], cmp_double);
    return (t[SAMPLES / 2 - 1] + t[SAMPLES / 2]) / 2;
}

TEST(speed) {
    if (!same_device) {
        printf("  skipped: the header was tuned on '%s', this is '%s'\n", NORMTUNE_DEVICE,
               prop.name);
        return;
    }
    cudaStream_t st;
    cudaEvent_t ev[BATCH + 1];
    nt_gate *gate = nt_gate_new();
    if (!gate) exit(1);
    CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (int i = 0; i <= BATCH; i++) CU(cudaEventCreate(&ev[i]));
    /* "host us": what one call costs the calling thread (not asserted) */
    printf("  %6s %6s %6s %12s %12s %7s %8s\n", "N", "M", "config", "tuner us", "library us",
           "ratio", "host us");
    for (int i = 0; i < NORMTUNE_TABLE_SIZE; i++) {
        const normtune_entry *e = &normtune_table[i];
        double host = 0, us = time_lib(e->M, e->N, st, ev, gate, &host);
        double ratio = us / e->median_us;
        printf("  %6lld %6lld %6d %12.3f %12.3f %7.3f %8.2f%s\n", e->N, e->M, e->config,
               e->median_us, us, ratio, host, ratio <= SLACK ? "" : "  SLOW");
        CHECK(us <= SLACK * e->median_us, "N=%lld M=%lld: library %.3f us, tuner %.3f us", e->N,
              e->M, us, e->median_us);
    }
    for (int i = 0; i <= BATCH; i++) cudaEventDestroy(ev[i]);
    cudaStreamDestroy(st);
    nt_gate_free(gate);
}

int main(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("FAIL no CUDA device\nRESULT 0 1\n");
        return 1;
    }
    CU(cudaSetDevice(0));
    CU(cudaGetDeviceProperties(&prop, 0));
    same_device = !strcmp(prop.name, NORMTUNE_DEVICE);
    RUN(version);
    RUN(speed);               /* first: on a fresh process, like the tuner's */
    RUN(arguments);
    RUN(correctness_untuned);
    RUN(correctness_dw_precision);
    RUN(correctness_tuned);
    RUN(threads);
    T_END();
}
