/* runner.c -- the GPU runner: measure one variant on a CUDA device.
 *
 * Uses the CUDA runtime API only (linked statically), so normtune starts on
 * machines without a driver and says plainly that there is no device.
 * Kernels come from NVRTC cubins loaded with cudaLibraryLoadData.
 *
 * Per problem (kept while consecutive evaluations share it): every input
 * tensor of the op filled with seeded random values in the range its
 * tensor table gives, in its dtype, drawn on the GPU by the host's own
 * formula (kernels/fill.h); the M-row tensors in R rotating sets (which
 * together hold >= 3x the L2); the float64 reference of set 0, computed on
 * the GPU by the op's reference kernels (kernels/<op>/dref.cuh) and
 * checked against the op's host reference (kernels/<op>/ref.c) on sampled
 * rows, or whole where the problem is small (ref_crosscheck).  Nothing of
 * a problem's size crosses the bus or is computed on the host: an H200's
 * cold make tune spent 118 of its 255 s filling, uploading and computing
 * references on the host before.  Per variant: plan, compile
 * (prefetched by the pool), load, size the persistent grid, poison every
 * output and the workspace with NaN, run, validate every element of every
 * output against the reference (a named error per output, checked against
 * the plan's tolerance), run twice more and compare every output bitwise,
 * then time.  The runner never names an op or a tensor.  A failing variant
 * is a result with a status; only a broken CUDA context is fatal. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cuda_runtime.h>

#include "kernels/dref.h"
#include "kernels/launch.h"
#include "kernels/nt_args.h"
#include "kernels/ref.h"
#include "kernels/traffic.h"
#include "tuner/compile.h"
#include "tuner/gate.h"
#include "tuner/timing.h"
#include "tuner/runner.h"
#include "tuner/uuid.h"
#include "tuner/yardstick.h"

#define L2_FACTOR 3           /* rotating sets hold >= 3x the L2 */
#define MAX_SETS 64           /* at most this many rotating sets */
#define BATCH 16              /* samples timed between two synchronizations */
#define COPY_BYTES (1ull << 30) /* copy bandwidth test: 1 GiB */
#define MAX_PENDING 64        /* prefetched compilations kept */
#define CHK_BLOCKS 1024       /* blocks of the validation kernels */
#define SAMPLE_US 200.0       /* a timing sample lasts at least this long */
#define MAX_REPS 64           /* chain runs per sample, at most */
#define FILL_BLOCKS 2048       /* blocks of the device fill */
#define XCHECK_ROWS 8          /* rows of a large problem the host recomputes */
#define XCHECK_FULL (1 << 20)  /* M x N up to which it recomputes every output whole */
#define XCHECK_TOL 1e-10       /* relative L2 allowed between the two float64 references */
#define MAX_OPS 8              /* ops of nt_ops[] whose device references are loaded */

extern const char *const nt_check_names[];
extern const char *const nt_check_texts[];

typedef struct pending {
    char key[600];            /* family + name expressions */
    long ticket;
} pending;

struct nt_runner {
    nt_runner_opts o;
    nt_devinfo di;
    nt_device dev;
    char arch[16];
    int broken;               /* sticky CUDA error seen */
    cudaStream_t st;
    cudaEvent_t ev[BATCH + 1];
    nt_gate *gate;            /* holds each timed batch until it is queued */
    nt_pool *pool;
    pending pend[MAX_PENDING];
    int npend;
    /* current problem */
    nt_problem prob;          /* op NULL: none */
    int nsets;
    size_t bytes[NT_MAX_TENSORS];       /* per tensor */
    long long elems[NT_MAX_TENSORS];    /* per tensor */
    unsigned once;                      /* chains run_once has run */
    void *t[MAX_SETS][NT_MAX_TENSORS];  /* per set; tensors of one row (w,
                                           dw) live in set 0 and are shared */
    void *ws;                 /* workspace, wsize bytes */
    void *flush;              /* rematch alone: written between samples to
                                 flush the L2 (flush_bytes; made on first use) */
    size_t flush_bytes;
    cudaEvent_t fa[NT_REMATCH_SAMPLES], fb[NT_REMATCH_SAMPLES]; /* around each alone run */
    size_t wsize;
    double *d_ref[NT_MAX_TENSORS];      /* outputs: float64 reference of set 0 */
    void *first[NT_MAX_TENSORS];        /* outputs: of the validation run */
    /* validation kernels (kernels/check.cuh) */
    cudaLibrary_t chk_lib;
    cudaKernel_t k_err, k_diff, k_traffic[4];   /* traffic_names[] */
    void *d_desc;             /* the traffic kernel's descriptor (device) */
    double traffic_gbps;      /* the current problem's yardstick, 0: not yet */
    nt_yard_cache yard;       /* the yardsticks of this run, by the bytes they move */
    double *d_part, *h_part;  /* CHK_BLOCKS x 3 error terms */
    unsigned long long *d_count, *h_count;
    cudaKernel_t k_fill;      /* nt_fill_dev */
    /* the ops' float64 references on the device (kernels/<op>/dref.cuh), by
     * the op's place in nt_ops[] */
    cudaLibrary_t dref_lib[MAX_OPS];
    cudaKernel_t k_dref[MAX_OPS][NT_MAX_LAUNCH];
    int ndref[MAX_OPS];
    double *d_scratch;        /* the current problem's NT_DREF_SCRATCH */
    double phase_s[NT_RUNNER_NPHASES];  /* wall seconds per phase of eval() */
};

/* Record a CUDA error into err; mark the runner broken when the error is
 * sticky (the context is lost).  Returns -1 for convenience. */
static int cuda_fail(nt_runner *r, cudaError_t e, const char *what, char *err, size_t errlen) {
    snprintf(err, errlen, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    if (e == cudaErrorIllegalAddress || e == cudaErrorLaunchFailure ||
        e == cudaErrorMisalignedAddress || e == cudaErrorIllegalInstruction ||
        e == cudaErrorHardwareStackError || e == cudaErrorInvalidPc ||
        e == cudaErrorLaunchTimeout || e == cudaErrorAssert || e == cudaErrorUnknown)
        r->broken = 1;
    return -1;
}
#define CK(call, what)                                                     \
    do {                                                                   \
        cudaError_t e_ = (call);                                           \
        if (e_ != cudaSuccess) return cuda_fail(r, e_, what, err, errlen); \
    } while (0)

/* The NVIDIA kernel module's version, if the system exposes it. */
static void driver_version(char *buf, size_t len) {
    int v = 0;
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    buf[0] = 0;
    if (f) {
        char line[512];
        if (fgets(line, sizeof line, f)) {
            /* "NVRM version: NVIDIA UNIX ... Kernel Module [for x86_64]  580.159.04 ..." */
            char *p = strstr(line, "Kernel Module");
            for (p = p ? p : line; *p; p++) {
                size_t n = strspn(p, "0123456789.");
                if (n >= 3 && strchr(p, '.') && (p == line || p[-1] == ' ') && n < len &&
                    memchr(p, '.', n)) {
                    snprintf(buf, len, "%.*s", (int)n, p);
                    break;
                }
            }
        }
        fclose(f);
    }
    if (!buf[0] && cudaDriverGetVersion(&v) == cudaSuccess)
        snprintf(buf, len, "cuda %d.%d", v / 1000, (v % 1000) / 10);
}

/* The yardstick's kernels (kernels/check.cuh): row by row, then flat, each
 * in both cache policies. */
static const char *const traffic_names[4] = {"nt_traffic", "nt_traffic_nc", "nt_traffic_flat",
                                             "nt_traffic_flat_nc"};

/* The embedded text called name: of the runner's own sources (nt_check)
 * or the families' (nt_kernel); *key gets the name as stored.  NULL when
 * neither has it. */
static const char *embedded(const char *name, const char **key) {
    for (int i = 0; nt_check_names[i]; i++)
        if (!strcmp(nt_check_names[i], name)) return *key = nt_check_names[i], nt_check_texts[i];
    for (int i = 0; i < nt_kernel_count; i++)
        if (!strcmp(nt_kernel_names[i], name)) return *key = nt_kernel_names[i], nt_kernel_texts[i];
    return NULL;
}

void nt_check_source(nt_csrc *src, const char *arch, int part) {
    /* nt_check: check.cuh and the headers it includes (the Makefile's embed) */
    static const char *const want[] = {"nt_args.h", "traffic.h", "fill.h"};
    static const char *hn[3], *ht[3];
    for (int i = 0; i < 3; i++) ht[i] = embedded(want[i], &hn[i]);
    memset(src, 0, sizeof *src);
    src->text = embedded("check.cuh", &src->name);
    src->name = "check.cu";
    src->nhdr = 3;
    src->hdr_names = hn;
    src->hdr_texts = ht;
    if (part == 0) {
        src->nexpr = 4;
        src->expr[0] = "nt_check_err";
        src->expr[1] = "nt_check_diff";
        src->expr[2] = traffic_names[0];
        src->expr[3] = traffic_names[1];
    } else {
        src->nexpr = 3;
        src->expr[0] = traffic_names[2];
        src->expr[1] = traffic_names[3];
        src->expr[2] = "nt_fill_dev";
    }
    src->arch = arch;
}

int nt_dref_source(nt_csrc *src, const nt_op *op, const char *arch, char *err, size_t errlen) {
    char th[NT_NAME_LEN + 16];
    const char *hn[3] = {"nt_args.h", "dref.h", th}, *key;
    memset(src, 0, sizeof *src);
    snprintf(th, sizeof th, "%s/tensors.h", op->name);
    if (!op->dref || !(src->text = embedded(op->dref, &src->name))) {
        snprintf(err, errlen, "op %s: its device reference %s is not embedded", op->name,
                 op->dref ? op->dref : "(none)");
        return -1;
    }
    for (int i = 0; i < 3; i++) {
        if (!(src->hdrbuf[1][i] = embedded(hn[i], &key))) {
            snprintf(err, errlen, "op %s: %s is not embedded", op->name, hn[i]);
            return -1;
        }
        src->hdrbuf[0][i] = key;
    }
    src->nhdr = 3;
    src->hdr_names = src->hdrbuf[0];
    src->hdr_texts = src->hdrbuf[1];
    for (int i = 0; op->dref_kernels && op->dref_kernels[i]; i++) {
        if (i == NT_MAX_LAUNCH) {
            snprintf(err, errlen, "op %s: more than %d device reference kernels", op->name,
                     NT_MAX_LAUNCH);
            return -1;
        }
        src->expr[src->nexpr++] = op->dref_kernels[i];
    }
    if (!src->nexpr) {
        snprintf(err, errlen, "op %s: no device reference kernels", op->name);
        return -1;
    }
    src->arch = arch;
    return 0;
}

/* Compile and load every op's device reference. */
static int dref_setup(nt_runner *r, char *err, size_t errlen) {
    for (int o = 0; nt_ops[o]; o++) {
        nt_csrc src;
        nt_cubin cb;
        char why[NT_MSG_LEN];
        memset(&cb, 0, sizeof cb);
        if (o == MAX_OPS) {
            snprintf(err, errlen, "more than %d ops: raise MAX_OPS in tuner/runner.c", MAX_OPS);
            return -1;
        }
        if (nt_dref_source(&src, nt_ops[o], r->arch, err, errlen)) return -1;
        if (nt_compile_src_cached(&src, r->o.use_cache, &cb, why, sizeof why)) {
            nt_cubin_free(&cb);
            snprintf(err, errlen, "op %s: its device reference does not compile: %s",
                     nt_ops[o]->name, why);
            return -1;
        }
        cudaError_t e = cudaLibraryLoadData(&r->dref_lib[o], cb.data, NULL, NULL, 0, NULL, NULL, 0);
        nt_cubin_free(&cb);
        CK(e, "load a device reference");
        for (int k = 0; k < src.nexpr; k++)
            CK(cudaLibraryGetKernel(&r->k_dref[o][k], r->dref_lib[o], src.expr[k]), src.expr[k]);
        r->ndref[o] = src.nexpr;
    }
    return 0;
}

/* Compile and load the validation kernels and their buffers. */
static int check_setup(nt_runner *r, char *err, size_t errlen) {
    nt_csrc src;
    nt_cubin cb;
    memset(&cb, 0, sizeof cb);
    nt_check_source(&src, r->arch, 0);   /* its cubin holds every kernel of the text */
    if (nt_compile_src_cached(&src, r->o.use_cache, &cb, err, errlen)) {
        nt_cubin_free(&cb);
        return -1;
    }
    cudaError_t e = cudaLibraryLoadData(&r->chk_lib, cb.data, NULL, NULL, 0, NULL, NULL, 0);
    nt_cubin_free(&cb);
    CK(e, "load the check kernels");
    CK(cudaLibraryGetKernel(&r->k_err, r->chk_lib, "nt_check_err"), "nt_check_err");
    CK(cudaLibraryGetKernel(&r->k_diff, r->chk_lib, "nt_check_diff"), "nt_check_diff");
    for (int i = 0; i < 4; i++)
        CK(cudaLibraryGetKernel(&r->k_traffic[i], r->chk_lib, traffic_names[i]), traffic_names[i]);
    CK(cudaLibraryGetKernel(&r->k_fill, r->chk_lib, "nt_fill_dev"), "nt_fill_dev");
    CK(cudaMalloc((void **)&r->d_desc, sizeof(nt_traffic_desc)), "cudaMalloc");
    CK(cudaMalloc((void **)&r->d_part, CHK_BLOCKS * 3 * sizeof(double)), "cudaMalloc");
    CK(cudaMallocHost((void **)&r->h_part, CHK_BLOCKS * 3 * sizeof(double)), "cudaMallocHost");
    CK(cudaMalloc((void **)&r->d_count, sizeof *r->d_count), "cudaMalloc");
    CK(cudaMallocHost((void **)&r->h_count, sizeof *r->h_count), "cudaMallocHost");
    return dref_setup(r, err, errlen);
}

#define NO_GPU_WORKS "; 'normtune list', 'compile', 'query', 'report', 'export', " \
    "'merge', 'migrate' and 'plot' work without a GPU"

/* The ordinal of the first of n devices whose UUID starts with sel (at
 * least "GPU-" and 4 more characters) or whose name equals sel, ignoring
 * case; -1 with the devices listed in err when none does. */
static int select_device(const char *sel, int n, char *err, size_t errlen) {
    size_t u = 0, sl = strlen(sel);
    u += (size_t)snprintf(err, errlen, "no GPU matches --device '%s'; present:", sel);
    for (int i = 0; i < n; i++) {
        struct cudaDeviceProp p;
        char id[64];
        if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
        nt_uuid_text(&p, id, sizeof id);
        if ((sl >= 8 && !strncasecmp(id, sel, sl)) || !strcasecmp(p.name, sel)) return i;
        if (u < errlen) u += (size_t)snprintf(err + u, errlen - u, "%s %d %s (%s)",
                                              i ? "," : "", i, p.name, id);
    }
    return -1;
}

/* The number of CUDA devices into *n: 0, or -1 with why there is none
 * usable (no driver, a driver too old, no device). */
static int count_devices(int *n, char *err, size_t errlen) {
    int v = 0;
    cudaError_t e = cudaGetDeviceCount(n);
    if (e == cudaErrorInsufficientDriver) {
        cudaDriverGetVersion(&v);
        if (v == 0)
            snprintf(err, errlen, "no GPU: this machine has no NVIDIA driver (run needs an "
                     "NVIDIA GPU and its driver)" NO_GPU_WORKS);
        else
            snprintf(err, errlen, "no usable GPU: the NVIDIA driver (CUDA %d.%d) is older than "
                     "the CUDA runtime normtune was built with (%d.%d)" NO_GPU_WORKS,
                     v / 1000, (v % 1000) / 10, CUDART_VERSION / 1000,
                     (CUDART_VERSION % 1000) / 10);
        return -1;
    }
    if (e == cudaErrorNoDevice || (e == cudaSuccess && *n == 0)) {
        snprintf(err, errlen, "no GPU: the NVIDIA driver sees no device" NO_GPU_WORKS);
        return -1;
    }
    if (e != cudaSuccess) {
        snprintf(err, errlen, "no usable GPU: %s (%s)" NO_GPU_WORKS, cudaGetErrorString(e),
                 cudaGetErrorName(e));
        return -1;
    }
    return 0;
}

int nt_runner_list(nt_device *out, int max, char *err, size_t errlen) {
    int n = 0;
    if (count_devices(&n, err, errlen)) return -1;
    for (int i = 0; i < n && i < max; i++) {
        struct cudaDeviceProp p;
        cudaError_t e = cudaGetDeviceProperties(&p, i);
        if (e != cudaSuccess) {
            snprintf(err, errlen, "GPU %d is not usable: %s", i, cudaGetErrorString(e));
            return -1;
        }
        memset(&out[i], 0, sizeof out[i]);
        snprintf(out[i].name, sizeof out[i].name, "%.127s", p.name);
        nt_uuid_text(&p, out[i].uuid, sizeof out[i].uuid);
        out[i].cc_major = p.major;
        out[i].cc_minor = p.minor;
        out[i].sms = p.multiProcessorCount;
        cudaDeviceGetAttribute(&out[i].mem_clock_khz, cudaDevAttrMemoryClockRate, i);
    }
    return n;
}

int nt_runner_open(nt_runner **out, const nt_runner_opts *o, char *err, size_t errlen) {
    int n = 0, v = 0, dev = o->device;
    cudaError_t e;
    *out = NULL;
    if (count_devices(&n, err, errlen)) return -1;
    if (o->select && (dev = select_device(o->select, n, err, errlen)) < 0) return -1;
    if (dev < 0 || dev >= n) {
        snprintf(err, errlen, "no GPU %d: %d present (ordinals 0 to %d)", dev, n, n - 1);
        return -1;
    }
    nt_runner *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    r->o = *o;
    r->o.device = dev;
    struct cudaDeviceProp p;
    if ((e = cudaSetDevice(dev)) != cudaSuccess ||
        (e = cudaGetDeviceProperties(&p, dev)) != cudaSuccess) {
        snprintf(err, errlen, "GPU %d is not usable: %s", dev, cudaGetErrorString(e));
        free(r);
        return -1;
    }
    nt_device *d = &r->dev;
    snprintf(d->name, sizeof d->name, "%.127s", p.name);
    nt_uuid_text(&p, d->uuid, sizeof d->uuid);
    d->cc_major = p.major;
    d->cc_minor = p.minor;
    d->sms = p.multiProcessorCount;
    d->l2_bytes = p.l2CacheSize;
    cudaDeviceGetAttribute(&d->sm_clock_khz, cudaDevAttrClockRate, dev);
    cudaDeviceGetAttribute(&d->mem_clock_khz, cudaDevAttrMemoryClockRate, dev);
    cudaDeviceGetAttribute(&d->mem_bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
    driver_version(d->driver, sizeof d->driver);
    cudaRuntimeGetVersion(&v);
    snprintf(d->runtime, sizeof d->runtime, "%d.%d", v / 1000, (v % 1000) / 10);
    nt_nvrtc_version(d->nvrtc, sizeof d->nvrtc);
    /* Hopper and Blackwell datacenter parts get their arch-specific target */
    snprintf(r->arch, sizeof r->arch, "sm_%d%d%s", p.major, p.minor,
             (p.major == 9 || p.major == 10) && p.minor == 0 ? "a" : "");
    r->di.sms = p.multiProcessorCount;
    r->di.cc_major = p.major;
    r->di.cc_minor = p.minor;
    r->di.smem_per_block_optin = (int)p.sharedMemPerBlockOptin;
    r->di.smem_per_sm = (int)p.sharedMemPerMultiprocessor;
    r->di.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
    r->di.regs_per_sm = p.regsPerMultiprocessor;
    if ((e = cudaStreamCreateWithFlags(&r->st, cudaStreamNonBlocking)) != cudaSuccess) {
        snprintf(err, errlen, "cannot create a stream: %s", cudaGetErrorString(e));
        free(r);
        return -1;
    }
    for (int i = 0; i <= BATCH; i++) cudaEventCreate(&r->ev[i]);
    r->gate = nt_gate_new();
    r->pool = r->gate ? nt_pool_start(o->jobs, 0, err, errlen) : NULL;
    if (!r->gate) snprintf(err, errlen, "out of memory");
    if (!r->pool || check_setup(r, err, errlen)) {
        nt_runner_close(r);
        return -1;
    }
    *out = r;
    return 0;
}

/* 1 when tensor i of the current problem rotates (has M rows). */
static int rotates(const nt_runner *r, int i) {
    return r->prob.op->tensors[i].rows == NT_DIM_M;
}

/* Free the per-problem buffers. */
static void shape_free(nt_runner *r) {
    for (int s = 0; s < MAX_SETS; s++)
        for (int i = 0; i < NT_MAX_TENSORS; i++) {
            if (s == 0 || (r->prob.op && i < r->prob.op->ntensors && rotates(r, i)))
                cudaFree(r->t[s][i]);
            r->t[s][i] = NULL;
        }
    for (int i = 0; i < NT_MAX_TENSORS; i++) {
        cudaFree(r->d_ref[i]);
        cudaFree(r->first[i]);
        r->d_ref[i] = NULL;
        r->first[i] = NULL;
        r->bytes[i] = 0;
    }
    cudaFree(r->d_scratch);
    r->d_scratch = NULL;
    r->nsets = 0;
    r->traffic_gbps = 0;
    memset(&r->prob, 0, sizeof r->prob);
}

void nt_runner_close(nt_runner *r) {
    if (!r) return;
    nt_pool_stop(r->pool, 0);
    if (!r->broken) {
        shape_free(r);
        cudaFree(r->ws);
        if (r->flush) {
            cudaFree(r->flush);
            for (int i = 0; i < NT_REMATCH_SAMPLES; i++) {
                cudaEventDestroy(r->fa[i]);
                cudaEventDestroy(r->fb[i]);
            }
        }
        cudaFree(r->d_part);
        cudaFree(r->d_desc);
        cudaFree(r->d_count);
        cudaFreeHost(r->h_part);
        cudaFreeHost(r->h_count);
        if (r->chk_lib) cudaLibraryUnload(r->chk_lib);
        for (int o = 0; o < MAX_OPS; o++)
            if (r->dref_lib[o]) cudaLibraryUnload(r->dref_lib[o]);
        for (int i = 0; i <= BATCH; i++) cudaEventDestroy(r->ev[i]);
        cudaStreamDestroy(r->st);
        nt_gate_free(r->gate);  /* (a broken stream may still hold it) */
    }
    free(r);
}

const nt_devinfo *nt_runner_devinfo(const nt_runner *r) { return &r->di; }
int nt_runner_broken(const nt_runner *r) { return r->broken; }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int nt_runner_copy_bw(nt_runner *r, double settle_s, double *gbps, char *err, size_t errlen) {
    void *a = NULL, *b = NULL;
    float ms;
    double t[20];
    CK(cudaMalloc(&a, COPY_BYTES), "cudaMalloc for the copy test");
    if (cudaMalloc(&b, COPY_BYTES) != cudaSuccess) {
        cudaFree(a);
        snprintf(err, errlen, "cudaMalloc for the copy test failed");
        return -1;
    }
    cudaMemsetAsync(a, 1, COPY_BYTES, r->st);
    /* settle: copies until the GPU has been busy settle_s (clocks and
     * temperature near where a long sweep keeps them) */
    for (double t0 = wall_s(); wall_s() - t0 < settle_s;) {
        for (int i = 0; i < 64; i++) cudaMemcpyAsync(b, a, COPY_BYTES, cudaMemcpyDeviceToDevice, r->st);
        cudaError_t e = cudaStreamSynchronize(r->st);
        if (e != cudaSuccess) {
            cudaFree(a);
            cudaFree(b);
            return cuda_fail(r, e, "copy test", err, errlen);
        }
    }
    for (int i = 0; i < 23; i++) {
        cudaEventRecord(r->ev[0], r->st);
        cudaMemcpyAsync(b, a, COPY_BYTES, cudaMemcpyDeviceToDevice, r->st);
        cudaEventRecord(r->ev[1], r->st);
        cudaError_t e = cudaEventSynchronize(r->ev[1]);
        if (e != cudaSuccess) {
            cudaFree(a);
            cudaFree(b);
            return cuda_fail(r, e, "copy test", err, errlen);
        }
        cudaEventElapsedTime(&ms, r->ev[0], r->ev[1]);
        if (i >= 3) t[i - 3] = ms;
    }
    cudaFree(a);
    cudaFree(b);
    qsort(t, 20, sizeof t[0], cmp_double);
    double med = (t[9] + t[10]) / 2;
    *gbps = 2.0 * (double)COPY_BYTES / (med * 1e-3) / 1e9;
    return 0;
}

/* ---- per-shape inputs and reference ------------------------------------ */

/* The seed of tensor `what` of set `set`: from the run's seed, the shape
 * and the tensor's index, so that every dtype of a shape draws the same
 * values (each rounded to its dtype). */
static uint64_t shape_seed(const nt_runner *r, const nt_problem *s, int set, int what) {
    uint64_t h = nt_fnv1a(NT_FNV_INIT, &r->o.seed, sizeof r->o.seed);
    int64_t k[4] = {s->M, s->N, set, what};
    return nt_fnv1a(h, k, sizeof k);
}

/* a*b+c into *out; 1 on overflow */
static int mul_add(size_t a, size_t b, size_t c, size_t *out) {
    return __builtin_mul_overflow(a, b, out) || __builtin_add_overflow(*out, c, out);
}

/* The rows of problem s the host recomputes (ref_crosscheck): every row
 * when M x N <= XCHECK_FULL, else XCHECK_ROWS of them. */
static int64_t xcheck_rows(const nt_problem *s) {
    return s->M <= XCHECK_FULL / s->N ? s->M : s->M < XCHECK_ROWS ? s->M : XCHECK_ROWS;
}

int nt_shape_mem_plan(const nt_problem *s, int64_t l2_bytes, nt_shape_mem *m, char *err,
                      size_t errlen) {
    size_t per_set = 0, fixed = 0, outs = 0, refs = 0, host = 0, l2 = l2_bytes > 0 ? (size_t)l2_bytes : 0;
    int bad = 0;
    memset(m, 0, sizeof *m);
    if (s->M < 1 || s->N < 1 || (uint64_t)s->M > SIZE_MAX || (uint64_t)s->N > SIZE_MAX)
        bad = 1;
    for (int i = 0; !bad && i < s->op->ntensors; i++) {
        const nt_tensor_def *t = &s->op->tensors[i];
        size_t rows = t->rows == NT_DIM_M ? (size_t)s->M : 1, cols = t->cols == NT_DIM_N ? (size_t)s->N : 1;
        size_t n, b;
        bad |= mul_add(rows, cols, 0, &n) ||
               mul_add(n, (size_t)nt_dtypes[nt_tensor_dtype(s, i)].size, 0, &b);
        if (bad) break;
        m->elems[i] = n;
        m->tbytes[i] = b;
        bad |= t->rows == NT_DIM_M ? __builtin_add_overflow(per_set, b, &per_set)
                                   : __builtin_add_overflow(fixed, b, &fixed);
        if (t->role == NT_OUT)      /* its reference (double) and first-run copy */
            bad |= mul_add(n, 8, refs, &refs) || __builtin_add_overflow(outs, b, &outs);
        /* host: the rows it recomputes, each tensor in its dtype, each
         * output in double twice (the host's and the device's) */
        size_t hr = t->rows == NT_DIM_M ? (size_t)xcheck_rows(s) : 1, hb;
        bad |= mul_add(hr, cols, 0, &hb) ||
               mul_add(hb, t->role == NT_OUT ? 16 : (size_t)nt_dtypes[nt_tensor_dtype(s, i)].size,
                       host, &host);
    }
    /* the device reference's scratch: NT_DREF_SCRATCH doubles */
    size_t sc = 0;
    if (bad || mul_add((size_t)s->N, NT_DREF_SLICES, (size_t)s->M, &sc) ||
        mul_add(sc, 8, refs, &refs)) {
        snprintf(err, errlen, "shape M=%lld N=%lld is too large: its sizes overflow %zu-bit "
                 "arithmetic", (long long)s->M, (long long)s->N, sizeof(size_t) * 8);
        return -1;
    }
    m->host = host;
    m->set_bytes = per_set;
    m->sets = per_set ? (int)((L2_FACTOR * l2 + per_set - 1) / per_set) : 1;
    if (m->sets < 1) m->sets = 1;
    if (m->sets > MAX_SETS) m->sets = MAX_SETS;
    /* device: the sets, the one-row tensors, the references, the copies */
    if (mul_add(per_set, (size_t)m->sets, fixed, &m->device) ||
        __builtin_add_overflow(m->device, refs, &m->device) ||
        __builtin_add_overflow(m->device, outs, &m->device)) {
        snprintf(err, errlen, "shape M=%lld N=%lld is too large: its device memory overflows "
                 "%zu-bit arithmetic", (long long)s->M, (long long)s->N, sizeof(size_t) * 8);
        return -1;
    }
    return 0;
}

/* 1 when a and b are the same problem. */
static int same_problem(const nt_problem *a, const nt_problem *b) {
    return a->op == b->op && a->M == b->M && a->N == b->N &&
           !memcmp(a->dtype, b->dtype, sizeof a->dtype);
}

/* The rows ref_crosscheck recomputes on the host: every row, or
 * XCHECK_ROWS of them (the first two, the last two, those where the
 * reference kernels' grid wraps and the middle), ascending, no repeats.
 * Returns how many. */
static int64_t xcheck_pick(const nt_problem *s, int64_t *rows) {
    int64_t n = xcheck_rows(s), k = 0;
    if (n == s->M) {
        for (int64_t i = 0; i < n; i++) rows[i] = i;
        return n;
    }
    const int64_t want[XCHECK_ROWS] = {0, 1, NT_DREF_GRID - 1, NT_DREF_GRID, s->M / 2,
                                       s->M - 2, s->M - 1, s->M / 3};
    for (int i = 0; i < XCHECK_ROWS; i++) {
        int64_t v = want[i] < s->M ? want[i] : s->M - 1, j = k;
        while (j > 0 && rows[j - 1] > v) j--;
        if (j > 0 && rows[j - 1] == v) continue;
        memmove(rows + j + 1, rows + j, (size_t)(k - j) * sizeof *rows);
        rows[j] = v;
        k++;
    }
    return k;
}

/* The host's float64 reference (op->ref) of the rows xcheck_pick names,
 * against the device's: the host draws those rows of set 0's inputs
 * (nt_fill_at: the bits the GPU drew), runs the reference on them as a
 * problem of those rows alone (an output of M rows depends on its row's
 * inputs and the one-row inputs only), and compares each output's rows;
 * an output of one row (a sum over all rows, such as dw) is compared when
 * every row was recomputed.  0; 1 with a message when they disagree or
 * host memory is short; -1 on a CUDA error. */
static int ref_crosscheck(nt_runner *r, const nt_problem *s, char *err, size_t errlen) {
    const nt_op *op = s->op;
    nt_problem sub = *s;
    void *in[NT_MAX_TENSORS] = {0};
    double *out[NT_MAX_TENSORS] = {0}, *dev = NULL;
    int64_t *rows = malloc((size_t)xcheck_rows(s) * sizeof *rows);
    int rc = 1;
    size_t most = 0;
    if (!rows) goto nomem;
    sub.M = xcheck_pick(s, rows);
    for (int i = 0; i < op->ntensors; i++) {
        const nt_tensor_def *t = &op->tensors[i];
        size_t cols = (size_t)nt_tensor_elems(s, i) / (t->rows == NT_DIM_M ? (size_t)s->M : 1);
        size_t n = (t->rows == NT_DIM_M ? (size_t)sub.M : 1) * cols;
        int dt = nt_tensor_dtype(s, i);
        if (n > most) most = n;
        if (t->role == NT_OUT) {
            if (!(out[i] = malloc(n * sizeof(double)))) goto nomem;
            continue;
        }
        if (!(in[i] = malloc(n * (size_t)nt_dtypes[dt].size))) goto nomem;
        for (int64_t j = 0; j < (t->rows == NT_DIM_M ? sub.M : 1); j++)
            nt_fill_at(dt, (char *)in[i] + (size_t)j * cols * (size_t)nt_dtypes[dt].size, cols,
                       (uint64_t)(t->rows == NT_DIM_M ? rows[j] : 0) * cols, t->lo, t->hi,
                       shape_seed(r, s, 0, i));
    }
    if (!(dev = malloc(most * sizeof *dev))) goto nomem;
    if (op->ref(&sub, (const void *const *)in, out, r->o.eps, 0)) goto nomem;
    rc = 0;
    for (int i = 0; rc == 0 && i < op->ntensors; i++) {
        const nt_tensor_def *t = &op->tensors[i];
        if (t->role != NT_OUT || (t->rows != NT_DIM_M && sub.M != s->M)) continue;
        size_t cols = (size_t)nt_tensor_elems(s, i) / (t->rows == NT_DIM_M ? (size_t)s->M : 1);
        int64_t nr = t->rows == NT_DIM_M ? sub.M : 1;
        cudaError_t e = cudaSuccess;
        for (int64_t j = 0; e == cudaSuccess && j < nr; j++)
            e = cudaMemcpyAsync(dev + (size_t)j * cols,
                                r->d_ref[i] + (size_t)(t->rows == NT_DIM_M ? rows[j] : 0) * cols,
                                cols * sizeof *dev, cudaMemcpyDeviceToHost, r->st);
        if (e == cudaSuccess) e = cudaStreamSynchronize(r->st);
        if (e != cudaSuccess) {
            rc = cuda_fail(r, e, "download the device reference", err, errlen);
            break;
        }
        double d = nt_rel_l2(out[i], dev, (size_t)nr * cols);
        if (!(d <= XCHECK_TOL)) {
            snprintf(err, errlen, "the float64 references of %s disagree at M=%lld N=%lld: the "
                     "device's (%s) and the host's differ by %.3g (relative L2, %lld rows); a "
                     "bug in one of them", t->name, (long long)s->M, (long long)s->N, op->dref,
                     d, (long long)nr);
            rc = 1;
        }
    }
    goto done;
nomem:
    snprintf(err, errlen, "out of host memory for the reference check of M=%lld N=%lld",
             (long long)s->M, (long long)s->N);
done:
    for (int i = 0; i < NT_MAX_TENSORS; i++) {
        free(in[i]);
        free(out[i]);
    }
    free(dev);
    free(rows);
    return rc;
}

/* Draw input i of set `set` of problem s on the device (kernels/fill.h):
 * the kernel lets the next one start at once (check.cuh). */
static cudaError_t fill_input(nt_runner *r, const nt_problem *s, int set, int i) {
    const nt_tensor_def *t = &s->op->tensors[i];
    int dt = nt_tensor_dtype(s, i);
    long long n = r->elems[i];
    unsigned long long seed = shape_seed(r, s, set, i);
    void *args[] = {&r->t[set][i], &dt, &n, (void *)&t->lo, (void *)&t->hi, &seed};
    return cudaLaunchKernel((const void *)r->k_fill, (dim3){FILL_BLOCKS, 1, 1}, (dim3){256, 1, 1},
                            args, 0, r->st);
}

/* Make problem s current: inputs, rotating sets, reference.  0; 1 when
 * this problem cannot be set up here (too large, out of device memory, or
 * the two references disagree: a result with a status, message in err,
 * the sweep goes on); -1 when the runner is broken.  The wall time goes to
 * NT_PHASE_INPUTS (the buffers and the device fills) and
 * NT_PHASE_REFERENCE (the device reference and the host's check of it). */
static int shape_setup(nt_runner *r, const nt_problem *s, char *err, size_t errlen) {
    nt_shape_mem m;
    size_t avail_dev = 0, total_dev = 0;
    const nt_op *op = s->op;
    int rc = 1, o = 0;
    double t0 = (nt_now_ms() / 1e3), t1;
    if (r->prob.op && same_problem(&r->prob, s)) return 0;
    shape_free(r);
    if (nt_shape_mem_plan(s, r->dev.l2_bytes, &m, err, errlen)) return 1;
    while (nt_ops[o] && nt_ops[o] != op) o++;
    if (!nt_ops[o] || o >= MAX_OPS || !r->ndref[o]) {
        snprintf(err, errlen, "op %s has no device reference loaded", op->name);
        return 1;
    }
    if (cudaMemGetInfo(&avail_dev, &total_dev) == cudaSuccess &&
        m.device + r->wsize > avail_dev / 10 * 9) {
        snprintf(err, errlen, "shape M=%lld N=%lld needs %.1f GB of GPU memory, %.1f GB are "
                 "free", (long long)s->M, (long long)s->N, m.device / 1e9, avail_dev / 1e9);
        return 1;
    }
    r->prob = *s;
    for (int i = 0; i < op->ntensors; i++) r->bytes[i] = m.tbytes[i];
    rc = -1;
#undef CK
#define CK(call, what)                                                   \
    do {                                                                 \
        cudaError_t e_ = (call);                                         \
        if (e_ != cudaSuccess) {                                         \
            cuda_fail(r, e_, what, err, errlen);                         \
            goto out;                                                    \
        }                                                                \
    } while (0)
    if (r->o.check_only) m.sets = 1;  /* nothing is timed: no rotation */
    for (int set = 0; set < m.sets; set++) {
        for (int i = 0; i < op->ntensors; i++) {
            const nt_tensor_def *t = &op->tensors[i];
            if (set > 0 && !rotates(r, i)) {
                r->t[set][i] = r->t[0][i];
                continue;
            }
            CK(cudaMalloc(&r->t[set][i], m.tbytes[i]), "cudaMalloc a tensor");
            if (t->role != NT_IN) continue;
            r->elems[i] = (long long)m.elems[i];
            CK(fill_input(r, s, set, i), "fill an input");
        }
        r->nsets = set + 1;
    }
    CK(cudaStreamSynchronize(r->st), "fill the inputs");
    r->phase_s[NT_PHASE_INPUTS] += (t1 = (nt_now_ms() / 1e3)) - t0;
    /* the float64 reference of every output, from set 0 */
    nt_dref_args da;
    memset(&da, 0, sizeof da);
    for (int i = 0; i < op->ntensors; i++) {
        da.dt[i] = nt_tensor_dtype(s, i);
        if (op->tensors[i].role == NT_IN) {
            da.t[i] = r->t[0][i];
            continue;
        }
        CK(cudaMalloc((void **)&r->d_ref[i], m.elems[i] * sizeof(double)), "cudaMalloc reference");
        CK(cudaMalloc(&r->first[i], m.tbytes[i]), "cudaMalloc output copy");
        da.ref[i] = r->d_ref[i];
    }
    CK(cudaMalloc((void **)&r->d_scratch,
                  (size_t)NT_DREF_SCRATCH((size_t)s->M, (size_t)s->N) * sizeof(double)),
       "cudaMalloc reference scratch");
    da.scratch = r->d_scratch;
    da.M = s->M;
    da.N = s->N;
    da.eps = r->o.eps;
    for (int k = 0; k < r->ndref[o]; k++) {
        void *args[] = {&da};
        CK(cudaLaunchKernel((const void *)r->k_dref[o][k], (dim3){NT_DREF_GRID, 1, 1},
                            (dim3){NT_DREF_BLOCK, 1, 1}, args, 0, r->st), "reference kernel");
    }
    CK(cudaStreamSynchronize(r->st), "reference kernels");
#undef CK
#define CK(call, what)                                                     \
    do {                                                                   \
        cudaError_t e_ = (call);                                           \
        if (e_ != cudaSuccess) return cuda_fail(r, e_, what, err, errlen); \
    } while (0)
    rc = ref_crosscheck(r, s, err, errlen);
    r->phase_s[NT_PHASE_REFERENCE] += (nt_now_ms() / 1e3) - t1;
out:
    if (rc) {
        cudaStreamSynchronize(r->st);
        shape_free(r);
    }
    return rc;
}

/* ---- validation -------------------------------------------------------- */

/* Relative L2 error of output i (set 0, on the device) against the
 * reference, by the check kernel; +inf when any element is not finite
 * (left unwritten). */
static int out_error(nt_runner *r, int i, double *out, char *err, size_t errlen) {
    long long nn = (long long)(r->bytes[i] / (size_t)nt_dtypes[nt_tensor_dtype(&r->prob, i)].size);
    int dt = nt_tensor_dtype(&r->prob, i);
    void *args[] = {(void *)&r->t[0][i], &dt, (void *)&r->d_ref[i], &nn, (void *)&r->d_part};
    CK(cudaLaunchKernel((const void *)r->k_err, (dim3){CHK_BLOCKS, 1, 1}, (dim3){256, 1, 1}, args,
                        0, r->st), "check kernel");
    CK(cudaMemcpyAsync(r->h_part, r->d_part, CHK_BLOCKS * 3 * sizeof(double),
                       cudaMemcpyDeviceToHost, r->st), "copy error terms");
    CK(cudaStreamSynchronize(r->st), "check kernel");
    double num = 0, den = 0, bad = 0;
    for (int b = 0; b < CHK_BLOCKS; b++) {
        num += r->h_part[3 * b];
        den += r->h_part[3 * b + 1];
        bad += r->h_part[3 * b + 2];
    }
    *out = bad > 0 ? INFINITY : den > 0 ? sqrt(num / den) : sqrt(num);
    return 0;
}

/* Number of 32-bit words in which a and b (bytes long) differ. */
static int words_differ(nt_runner *r, const void *a, const void *b, size_t bytes,
                        unsigned long long *count, char *err, size_t errlen) {
    long long n = (long long)(bytes / 4);
    void *args[] = {(void *)&a, (void *)&b, &n, (void *)&r->d_count};
    CK(cudaMemsetAsync(r->d_count, 0, sizeof *r->d_count, r->st), "clear count");
    CK(cudaLaunchKernel((const void *)r->k_diff, (dim3){CHK_BLOCKS, 1, 1}, (dim3){256, 1, 1},
                        args, 0, r->st), "compare kernel");
    CK(cudaMemcpyAsync(r->h_count, r->d_count, sizeof *r->d_count, cudaMemcpyDeviceToHost, r->st),
       "copy count");
    CK(cudaStreamSynchronize(r->st), "compare kernel");
    *count = *r->h_count;
    return 0;
}

/* ---- one variant ------------------------------------------------------- */

typedef struct variant {
    cudaLibrary_t lib;
    cudaKernel_t k[NT_MAX_LAUNCH];
    nt_plan plan;
    unsigned grid0;           /* resolved grid of launch 0 */
    nt_args a;
} variant;

/* Launch the whole chain on input set `set`. */
static cudaError_t chain(nt_runner *r, variant *v, int set) {
    nt_args a = v->a;
    for (int i = 0; i < r->prob.op->ntensors; i++) a.t[i] = r->t[set][i];
    return nt_chain_launch(&v->plan, (const void *const *)v->k, v->grid0, &a, r->st);
}

/* Key of a compile job: family and name expressions. */
static void job_key(const nt_family *f, const nt_plan *pl, char *buf, size_t len) {
    size_t u = (size_t)snprintf(buf, len, "%s", f->name);
    for (int i = 0; i < pl->nlaunch && u < len; i++)
        u += (size_t)snprintf(buf + u, len - u, "|%s", pl->l[i].name);
}

static void prefetch(void *ctx, const nt_family *f, const nt_params *p, const nt_problem *s) {
    nt_runner *r = ctx;
    nt_job job;
    char err[256];
    if (r->npend >= MAX_PENDING) return;
    memset(&job, 0, sizeof job);
    if (f->plan(p, s, &r->di, &job.plan, err, sizeof err)) return;
    job.fam = f;
    snprintf(job.arch, sizeof job.arch, "%s", r->arch);
    job.use_cache = r->o.use_cache;
    long t = nt_pool_submit(r->pool, &job);
    if (t < 0) return;
    job_key(f, &job.plan, r->pend[r->npend].key, sizeof r->pend[0].key);
    r->pend[r->npend++].ticket = t;
}

/* The cubin for plan: a prefetched one (older prefetches that were not used
 * are taken and dropped), else compiled now. */
static int get_cubin(nt_runner *r, const nt_family *f, const nt_plan *pl, nt_cubin *cb,
                     char *err, size_t errlen) {
    char key[600];
    job_key(f, pl, key, sizeof key);
    for (int i = 0; i < r->npend; i++) {
        if (strcmp(r->pend[i].key, key)) continue;
        for (int j = 0; j < i; j++) {   /* skipped: drop them */
            nt_cubin junk;
            char e2[64];
            memset(&junk, 0, sizeof junk);
            nt_pool_wait(r->pool, r->pend[j].ticket, &junk, e2, sizeof e2);
            nt_cubin_free(&junk);
        }
        long t = r->pend[i].ticket;
        memmove(r->pend, r->pend + i + 1, (size_t)(r->npend - i - 1) * sizeof r->pend[0]);
        r->npend -= i + 1;
        return nt_pool_wait(r->pool, t, cb, err, errlen);
    }
    return nt_compile_cached(f, pl, r->arch, r->o.use_cache, cb, err, errlen);
}

/* Set result status and message; returns 0 (the evaluation itself worked). */
static int fail(nt_result *out, int status, const char *msg) {
    out->status = status;
    snprintf(out->msg, sizeof out->msg, "%s", msg);
    return 0;
}

/* Run the chain once on set 0 from poisoned outputs and workspace (every
 * byte 0xff: NaN in every dtype); the outputs stay in set 0.  Set 0's
 * inputs are poisoned too and drawn again by the device fill right before
 * the chain (a different one last each time), which lets the chain start
 * at once: a launch that reads
 * before its griddepcontrol.wait what the work ahead of the chain still
 * writes (test_compile's pdl_launches_wait_first says when that may be)
 * would then read NaN and fail the check. */
static int run_once(nt_runner *r, variant *v, char *err, size_t errlen) {
    const nt_op *op = r->prob.op;
    int in[NT_MAX_TENSORS], nin = 0;
    for (int i = 0; i < op->ntensors; i++)
        if (op->tensors[i].role == NT_OUT)
            CK(cudaMemsetAsync(r->t[0][i], 0xff, r->bytes[i], r->st), "poison an output");
    if (v->plan.workspace)
        CK(cudaMemsetAsync(r->ws, 0xff, v->plan.workspace, r->st), "poison workspace");
    for (int i = 0; i < op->ntensors; i++)
        if (op->tensors[i].role == NT_IN) {
            CK(cudaMemsetAsync(r->t[0][i], 0xff, r->bytes[i], r->st), "poison an input");
            in[nin++] = i;
        }
    /* each input in turn is the one drawn last, the kernel right before
     * the chain's first launch (a memset between them would end the
     * overlap) */
    int last = nin ? in[r->once++ % (unsigned)nin] : -1;
    for (int k = 0; k < nin; k++)
        if (in[k] != last) CK(fill_input(r, &r->prob, 0, in[k]), "fill an input");
    if (last >= 0) CK(fill_input(r, &r->prob, 0, last), "fill an input");
    CK(chain(r, v, 0), "launch");
    CK(cudaStreamSynchronize(r->st), "run");
    return 0;
}

/* Queue `n` chains behind the closed gate with an event after every
 * `per_event` of them (events ev[1..]), after ev[0]; open the gate and wait
 * for the last event.  The GPU runs the whole batch back to back, whatever
 * the host's launch rate.  0, or -1 with err. */
static int timed_batch(nt_runner *r, variant *v, int n, int per_event, int *set, char *err,
                       size_t errlen) {
    cudaError_t e = nt_gate_close(r->gate, r->st);
    if (e == cudaSuccess) e = cudaEventRecord(r->ev[0], r->st);
    for (int i = 0; i < n && e == cudaSuccess; i++) {
        e = chain(r, v, (*set)++ % r->nsets);
        if (e == cudaSuccess && (i + 1) % per_event == 0)
            e = cudaEventRecord(r->ev[(i + 1) / per_event], r->st);
    }
    nt_gate_open(r->gate);
    if (e == cudaSuccess) e = cudaEventSynchronize(r->ev[n / per_event]);
    if (e != cudaSuccess) return cuda_fail(r, e, "timed runs", err, errlen);
    if (nt_gate_timed_out(r->gate))
        return snprintf(err, errlen, "timing: the host took too long to queue %d launches",
                        n * v->plan.nlaunch), -1;
    return 0;
}

/* Samples until the stopping rule of tuner/timing.h holds (the median's 95%
 * CI within rel_ci, the two halves agreeing) or max_samples.  Fills
 * median/p10/p90 and the samples.
 *
 * A sample is the mean of `reps` back-to-back runs of the chain lasting at
 * least SAMPLE_US, so that neither the events' resolution nor a passing
 * clock dip dominates short chains; every batch of samples is queued behind the gate first, so that
 * the samples time the GPU, not the host's launch rate. */
static int time_variant(nt_runner *r, variant *v, const nt_timing *t, nt_result *out,
                        char *err, size_t errlen) {
    int set = 0, maxs = t->max_samples < NT_MAX_SAMPLES ? t->max_samples : NT_MAX_SAMPLES;
    int warm = t->warmup > 0 ? t->warmup : 1, reps, fit = NT_GATE_MAX_LAUNCHES / v->plan.nlaunch;
    float ms = 0;
    static double scratch[NT_MAX_SAMPLES];
    /* warm-up in gated batches; the last one, timed, sizes the samples */
    for (int done = 0, n; done < warm; done += n) {
        n = warm - done < fit ? warm - done : fit;
        if (timed_batch(r, v, n, n, &set, err, errlen)) return -1;
        CK(cudaEventElapsedTime(&ms, r->ev[0], r->ev[1]), "event time");
        ms /= (float)n;
    }
    double per = ms * 1e3, want = per > 0 ? ceil(SAMPLE_US / per) : MAX_REPS;
    reps = want < 1 ? 1 : want > MAX_REPS ? MAX_REPS : (int)want;
    if (reps > fit) reps = fit;
    out->reps = reps;
    out->nsamples = 0;
    while (out->nsamples < maxs) {
        int b = maxs - out->nsamples < BATCH ? maxs - out->nsamples : BATCH;
        if (b > fit / reps) b = fit / reps;
        if (timed_batch(r, v, b * reps, reps, &set, err, errlen)) return -1;
        for (int i = 0; i < b; i++) {
            CK(cudaEventElapsedTime(&ms, r->ev[i], r->ev[i + 1]), "event time");
            out->samples[out->nsamples++] = ms * 1e3 / reps;
        }
        int n = out->nsamples;
        if (n < t->min_samples) continue;
        nt_sample_stats ss;
        int done = nt_timing_done(out->samples, n, t->rel_ci, scratch, &ss);
        out->median_us = ss.median;
        out->p10_us = ss.p10;
        out->p90_us = ss.p90;
        if (done) break;
        if (nt_timing_raced(&ss, t->race_us)) {   /* cannot win: stop sampling */
            out->status = NT_RACED;
            snprintf(out->msg, sizeof out->msg, "raced: median %.2f us, CI from %.2f us, more "
                     "than %.0f%% above the best so far %.2f us, after %d samples", ss.median,
                     ss.median - ss.ci_half, 100 * NT_RACE, t->race_us, n);
            break;
        }
    }
    return 0;
}

/* Load the cubin, resolve the kernels and the persistent grid. */
static int load(nt_runner *r, variant *v, const nt_cubin *cb, nt_result *out, char *err,
                size_t errlen) {
    cudaError_t e = cudaLibraryLoadData(&v->lib, cb->data, NULL, NULL, 0, NULL, NULL, 0);
    if (e != cudaSuccess) {
        cuda_fail(r, e, "cudaLibraryLoadData", err, errlen);
        return fail(out, NT_LAUNCH_ERROR, err) - 1;
    }
    for (int i = 0; i < v->plan.nlaunch; i++) {
        e = cudaLibraryGetKernel(&v->k[i], v->lib, cb->lowered[i]);
        if (e != cudaSuccess) {
            cuda_fail(r, e, v->plan.l[i].name, err, errlen);
            return fail(out, NT_LAUNCH_ERROR, err) - 1;
        }
    }
    /* registers and static shared memory as the loaded kernels report them:
     * the ptxas log NVRTC returns has been seen without them (0 registers)
     * when many programs compile at once */
    for (int i = 0; i < v->plan.nlaunch; i++) {
        struct cudaFuncAttributes fa;
        if (cudaFuncGetAttributes(&fa, (const void *)v->k[i]) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        if (fa.numRegs > out->regs) out->regs = fa.numRegs;
        if ((int)fa.sharedSizeBytes + (int)v->plan.l[i].smem > out->smem)
            out->smem = (int)fa.sharedSizeBytes + (int)v->plan.l[i].smem;
    }
    e = nt_chain_prepare(&v->plan, (const void *const *)v->k);
    if (e != cudaSuccess) {
        cuda_fail(r, e, "dynamic shared memory", err, errlen);
        return fail(out, NT_RESOURCES, err) - 1;
    }
    e = nt_chain_grid(&v->plan, (const void *)v->k[0], r->di.sms, (long long)r->prob.M,
                      &v->grid0, err, errlen);
    if (e != cudaSuccess) return fail(out, NT_RESOURCES, err) - 1;
    out->grid = (int)v->grid0;
    return 0;
}

/* The current problem's yardstick, once per problem: nt_traffic over the
 * M x N tensors (the inputs read, the outputs written), row by row (one
 * block per row, NT_TRAFFIC_U vectors a thread, at most NT_TRAFFIC_B
 * threads) and flat (each tensor one array, blocks of NT_TRAFFIC_B), each
 * in both cache policies (kernels/check.cuh), each timed as the variants
 * are (rotating sets, gated batches, the sweep's timing, programmatic
 * dependent launch); the fastest into r->traffic_gbps.  A problem that
 * moves the same bytes as one measured before in this run (the same M,
 * vectors a row per tensor, outputs and timing: tuner/yardstick.h) takes
 * that one's.  0, or -1 with a message. */
static int measure_traffic(nt_runner *r, const nt_timing *t, char *err, size_t errlen) {
    static nt_result tmp;
    nt_traffic_desc d;
    variant tv;
    double bytes = 0, t0 = (nt_now_ms() / 1e3);
    if (r->traffic_gbps > 0) return 0;
    memset(&d, 0, sizeof d);
    memset(&tv, 0, sizeof tv);
    for (int i = 0; i < r->prob.op->ntensors && i < 8; i++)
        if (rotates(r, i) && r->prob.op->tensors[i].cols == NT_DIM_N) {
            d.row16[i] = (long long)(r->bytes[i] / 16 / (size_t)r->prob.M);
            d.out[i] = r->prob.op->tensors[i].role == NT_OUT;
            bytes += 16.0 * (double)d.row16[i] * (double)r->prob.M;
        }
    nt_yard_key key = nt_yard_key_of((long long)r->prob.M, &d, t);
    if ((r->traffic_gbps = nt_yard_find(&r->yard, &key)) > 0) return 0;
    CK(cudaMemcpy(r->d_desc, &d, sizeof d, cudaMemcpyHostToDevice), "upload the yardstick");
    long long widest = 0;
    for (int i = 0; i < 8; i++) widest = d.row16[i] > widest ? d.row16[i] : widest;
    /* by rows: NT_TRAFFIC_U vectors a thread of the widest tensor's row, in
     * whole warps, at most NT_TRAFFIC_B (then each thread takes several
     * steps); flat: a block per NT_TRAFFIC_U * NT_TRAFFIC_B vectors of the
     * largest tensor (past 2^31 - 1 blocks, the grid's stride) */
    long long thr = ((widest + NT_TRAFFIC_U - 1) / NT_TRAFFIC_U + 31) / 32 * 32;
    long long per = (long long)NT_TRAFFIC_U * NT_TRAFFIC_B;
    long long flat = (widest * r->prob.M + per - 1) / per;
    unsigned grid[2] = {r->prob.M < 2147483647 ? (unsigned)r->prob.M : 2147483647u,
                        flat < 1 ? 1u : flat > 2147483647LL ? 2147483647u : (unsigned)flat};
    unsigned block[2] = {(unsigned)(thr < 32 ? 32 : thr > NT_TRAFFIC_B ? NT_TRAFFIC_B : thr),
                         NT_TRAFFIC_B};
    tv.plan.nlaunch = 1;
    tv.plan.l[0].grid_y = 1;
    tv.plan.l[0].pdl = 1;     /* launched early, as the forward's kernels are (check.cuh) */
    tv.a.ws = r->d_desc;
    tv.a.M = r->prob.M;
    tv.a.N = (int)r->prob.N;
    double best_us = 0;
    nt_timing tt = *t;
    tt.race_us = 0;           /* the yardstick is never raced */
    t = &tt;
    for (int k = 0; k < 4; k++) {
        tv.k[0] = r->k_traffic[k];    /* by rows, then flat, each in both policies */
        tv.plan.l[0].grid = grid[k / 2];
        tv.plan.l[0].block = block[k / 2];
        tv.grid0 = tv.plan.l[0].grid;
        /* one launch outside the timing: the first launch of a kernel loads
         * its module (lazy loading), which must not happen behind the gate */
        CK(chain(r, &tv, 0), "the yardstick");
        CK(cudaStreamSynchronize(r->st), "the yardstick");
        if (time_variant(r, &tv, t, &tmp, err, errlen)) return -1;
        if (!(tmp.median_us > 0)) return snprintf(err, errlen, "the yardstick took no time"), -1;
        if (best_us == 0 || tmp.median_us < best_us) best_us = tmp.median_us;
    }
    r->traffic_gbps = bytes / (best_us * 1e-6) / 1e9;
    nt_yard_put(&r->yard, &key, r->traffic_gbps);
    r->phase_s[NT_PHASE_YARDSTICK] += (nt_now_ms() / 1e3) - t0;
    return 0;
}

/* Workspace of at least bytes.  0, or -1 with a message. */
static int ws_reserve(nt_runner *r, size_t bytes, char *err, size_t errlen) {
    if (bytes <= r->wsize) return 0;
    cudaFree(r->ws);
    r->ws = NULL;
    r->wsize = 0;
    cudaError_t e = cudaMalloc(&r->ws, bytes);
    if (e != cudaSuccess) return cuda_fail(r, e, "cudaMalloc workspace", err, errlen);
    r->wsize = bytes;
    return 0;
}

/* The arguments of loaded variant v at problem s (but the tensors: chain()
 * sets them per input set). */
static void args_of(nt_runner *r, variant *v, const nt_problem *s) {
    v->a = (nt_args){0};
    v->a.ws = r->ws;
    v->a.M = s->M;
    v->a.N = (int)s->N;
    v->a.nparts = nt_chain_nparts(&v->plan, v->grid0);
    v->a.eps = (float)r->o.eps;
}

static int eval(void *ctx, const nt_family *f, const nt_params *p, const nt_problem *s,
                const nt_timing *t, nt_result *out) {
    nt_runner *r = ctx;
    char err[NT_MSG_LEN] = "";
    size_t errlen = sizeof err;
    nt_cubin cb;
    variant v;
    int rc = 0;
    const nt_op *op = s->op;
    memset(&cb, 0, sizeof cb);
    memset(&v, 0, sizeof v);
    memset(out, 0, sizeof *out);      /* the fields after samples[] too */
    out->bytes = nt_problem_bytes(s);
    if (r->broken) return snprintf(out->msg, sizeof out->msg, "CUDA context is broken"), -1;
    if (nt_problem_check(s, err, errlen) || f->check(p, s, &r->di, err, errlen) ||
        f->plan(p, s, &r->di, &v.plan, err, errlen))
        return fail(out, NT_UNSUPPORTED, err);
    double t0 = (nt_now_ms() / 1e3), t1;
    int cbrc = get_cubin(r, f, &v.plan, &cb, err, errlen);
    r->phase_s[NT_PHASE_COMPILE] += (t1 = (nt_now_ms() / 1e3)) - t0;
    if (cbrc) {
        nt_cubin_free(&cb);
        return fail(out, NT_COMPILE_ERROR, err);
    }
    out->regs = cb.max_regs;
    out->spill = cb.max_spill;
    for (int i = 0; i < v.plan.nlaunch; i++) {
        int sm = cb.smem[i] + (int)v.plan.l[i].smem;
        if (sm > out->smem) out->smem = sm;
    }
    switch (shape_setup(r, s, err, errlen)) {
    case 0: break;
    case 1:                           /* this problem cannot run here: a result */
        fail(out, NT_RESOURCES, err);
        goto done;
    default:                          /* a CUDA error */
        shape_free(r);
        if (r->broken) {
            rc = -1;
            snprintf(out->msg, sizeof out->msg, "%s", err);
        } else {                      /* e.g. cudaMalloc out of memory */
            cudaGetLastError();
            fail(out, NT_RESOURCES, err);
        }
        goto done;
    }
    if (!r->o.check_only && measure_traffic(r, t, err, errlen)) {
        fail(out, NT_LAUNCH_ERROR, err);
        goto done;
    }
    out->traffic_gbps = r->traffic_gbps;
    t0 = nt_now_ms() / 1e3;
    if (load(r, &v, &cb, out, err, errlen)) goto done;
    r->phase_s[NT_PHASE_LOAD] += (t1 = (nt_now_ms() / 1e3)) - t0;
    if (ws_reserve(r, v.plan.workspace, err, errlen)) {
        fail(out, NT_RESOURCES, err);
        goto done;
    }
    args_of(r, &v, s);
    /* validate every output: a named error each */
    if (run_once(r, &v, err, errlen)) {
        fail(out, NT_LAUNCH_ERROR, err);
        goto done;
    }
    int wrong = 0;
    size_t used = (size_t)snprintf(err, errlen, "wrong result: rel. L2 error");
    for (int i = 0; i < op->ntensors && out->nerr < NT_MAX_ERRS; i++) {
        if (op->tensors[i].role != NT_OUT) continue;
        nt_error *e = &out->errs[out->nerr++];
        snprintf(e->tensor, sizeof e->tensor, "%s", op->tensors[i].name);
        e->tol = nt_plan_tol(&v.plan, s, i);
        e->required = nt_dtypes[nt_tensor_dtype(s, i)].tol;
        char e2[NT_MSG_LEN];
        if (out_error(r, i, &e->value, e2, sizeof e2)) {
            fail(out, NT_LAUNCH_ERROR, e2);
            goto done;
        }
        wrong |= !(e->value <= e->tol);
        if (used < errlen)
            used += (size_t)snprintf(err + used, errlen - used, "%s %s %.3g (tolerance %.0e)",
                                     out->nerr > 1 ? "," : "", e->tensor, e->value, e->tol);
    }
    if (wrong) {
        fail(out, NT_WRONG, err);
        goto done;
    }
    if (r->o.check_only) {            /* validated: nothing more */
        r->phase_s[NT_PHASE_CHECK] += (nt_now_ms() / 1e3) - t1;
        out->status = NT_OK;
        goto done;
    }
    /* determinism: two more runs, every output bitwise */
    for (int i = 0; i < op->ntensors; i++)
        if (op->tensors[i].role == NT_OUT &&
            cudaMemcpyAsync(r->first[i], r->t[0][i], r->bytes[i], cudaMemcpyDeviceToDevice, r->st)) {
            fail(out, NT_LAUNCH_ERROR, "copy of an output failed");
            goto done;
        }
    for (int k = 0; k < 2; k++) {
        if (run_once(r, &v, err, errlen)) {
            fail(out, NT_LAUNCH_ERROR, err);
            goto done;
        }
        for (int i = 0; i < op->ntensors; i++) {
            unsigned long long nd = 0;
            if (op->tensors[i].role != NT_OUT) continue;
            if (words_differ(r, r->t[0][i], r->first[i], r->bytes[i], &nd, err, errlen)) {
                fail(out, NT_LAUNCH_ERROR, err);
                goto done;
            }
            if (nd) {
                snprintf(err, errlen, "run %d differs bitwise from the first (%s: %llu words)",
                         k + 2, op->tensors[i].name, nd);
                fail(out, NT_NONDETERMINISTIC, err);
                goto done;
            }
        }
    }
    r->phase_s[NT_PHASE_CHECK] += (t0 = (nt_now_ms() / 1e3)) - t1;
    if (time_variant(r, &v, t, out, err, errlen)) {
        fail(out, NT_LAUNCH_ERROR, err);
        goto done;
    }
    r->phase_s[NT_PHASE_TIME] += (nt_now_ms() / 1e3) - t0;
    if (out->status != NT_RACED) out->status = NT_OK;
    out->gbps = out->bytes / (out->median_us * 1e-6) / 1e9;
done:
    if (v.lib) cudaLibraryUnload(v.lib);
    nt_cubin_free(&cb);
    if (r->broken) {
        if (!out->msg[0]) snprintf(out->msg, sizeof out->msg, "%s", err);
        out->status = NT_LAUNCH_ERROR;
    }
    return rc;
}

/* The flush buffer and events of an alone re-measure, made on first use:
 * FLUSH_L2 times the L2 (FLUSH_MIN at least).  0, or -1 with a message. */
#define FLUSH_L2 4
#define FLUSH_MIN ((size_t)256 << 20)
static int alone_setup(nt_runner *r, char *msg, size_t msglen) {
    if (r->flush) return 0;
    size_t b = (size_t)(r->dev.l2_bytes > 0 ? r->dev.l2_bytes : 0) * FLUSH_L2;
    if (b < FLUSH_MIN) b = FLUSH_MIN;
    cudaError_t e = cudaMalloc(&r->flush, b);
    if (e != cudaSuccess) {
        r->flush = NULL;
        return snprintf(msg, msglen, "the L2 flush buffer (%zu MB): %s", b >> 20,
                        cudaGetErrorString(e)), -1;
    }
    r->flush_bytes = b;
    for (int i = 0; i < NT_REMATCH_SAMPLES; i++) {
        cudaEventCreate(&r->fa[i]);
        cudaEventCreate(&r->fb[i]);
    }
    return 0;
}

/* k samples of variant v, each one chain alone between two events after
 * the L2 is flushed (written over), into smp.  0, or -1 with a message. */
static int alone_samples(nt_runner *r, variant *v, int k, int *set, double *smp, char *msg,
                         size_t msglen) {
    static int fill;
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < k && e == cudaSuccess; i++) {
        e = cudaMemsetAsync(r->flush, ++fill & 0xff, r->flush_bytes, r->st);
        if (e == cudaSuccess) e = cudaEventRecord(r->fa[i], r->st);
        if (e == cudaSuccess) e = chain(r, v, (*set)++ % r->nsets);
        if (e == cudaSuccess) e = cudaEventRecord(r->fb[i], r->st);
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(r->st);
    for (int i = 0; i < k && e == cudaSuccess; i++) {
        float ms;
        e = cudaEventElapsedTime(&ms, r->fa[i], r->fb[i]);
        smp[i] = ms * 1e3;
    }
    if (e != cudaSuccess) return cuda_fail(r, e, "re-measure alone", msg, msglen);
    return 0;
}

/* rematch() of the runner (nt_evaluator): load the n variants at problem
 * s (compiled and checked when they were measured; from the cache now),
 * size each one's samples as time_variant does, then NT_REMATCH_ROUNDS
 * rounds in which each variant in turn, the first moving on by one each
 * round, runs two untimed chains and NT_REMATCH_SAMPLES timed samples;
 * alone, each sample one chain after an L2 flush (alone_samples).
 * The wall time goes to NT_PHASE_TIME.  0, or -1 with a message. */
static int rematch(void *ctx, int n, const nt_family *const *fam, const nt_params *p,
                   const nt_problem *s, int alone, double *us, int *ns, char *msg,
                   size_t msglen) {
    nt_runner *r = ctx;
    variant v[NT_REMATCH_MAX];
    nt_cubin cb[NT_REMATCH_MAX];
    int reps[NT_REMATCH_MAX], set = 0, rc = -1, fit;
    size_t ws = 0;
    float ms = 0;
    static nt_result scratch;
    static double smp[NT_REMATCH_MAX][NT_REMATCH_ROUNDS * NT_REMATCH_SAMPLES];
    double t0;
    memset(v, 0, sizeof v);
    memset(cb, 0, sizeof cb);
    if (n < 2 || n > NT_REMATCH_MAX) return snprintf(msg, msglen, "%d variants", n), -1;
    if (r->broken) return snprintf(msg, msglen, "CUDA context is broken"), -1;
    if (shape_setup(r, s, msg, msglen)) return -1;    /* its phases count it */
    if (alone && alone_setup(r, msg, msglen)) return -1;
    t0 = nt_now_ms() / 1e3;
    for (int i = 0; i < n; i++) {
        if (fam[i]->check(&p[i], s, &r->di, msg, msglen) ||
            fam[i]->plan(&p[i], s, &r->di, &v[i].plan, msg, msglen) ||
            get_cubin(r, fam[i], &v[i].plan, &cb[i], msg, msglen))
            goto done;
        memset(&scratch, 0, sizeof scratch);
        if (load(r, &v[i], &cb[i], &scratch, msg, msglen)) goto done;
        if (v[i].plan.workspace > ws) ws = v[i].plan.workspace;
    }
    if (ws_reserve(r, ws, msg, msglen)) goto done;
    for (int i = 0; i < n; i++) {
        args_of(r, &v[i], s);
        if (run_once(r, &v[i], msg, msglen)) goto done;
        /* a timed warm-up sizes its samples (SAMPLE_US at least) */
        fit = NT_GATE_MAX_LAUNCHES / v[i].plan.nlaunch;
        int w = fit < 8 ? fit : 8;
        if (timed_batch(r, &v[i], w, w, &set, msg, msglen)) goto done;
        if (cudaEventElapsedTime(&ms, r->ev[0], r->ev[1]) != cudaSuccess) {
            snprintf(msg, msglen, "event time");
            goto done;
        }
        double per = ms * 1e3 / w, want = per > 0 ? ceil(SAMPLE_US / per) : MAX_REPS;
        reps[i] = want < 1 ? 1 : want > MAX_REPS ? MAX_REPS : (int)want;
        if (reps[i] > fit) reps[i] = fit;
        ns[i] = 0;
    }
    for (int k = 0; k < NT_REMATCH_ROUNDS; k++)
        for (int j = 0; j < n; j++) {
            int i = (k + j) % n, got = 0;
            variant *x = &v[i];
            fit = NT_GATE_MAX_LAUNCHES / x->plan.nlaunch;
            if (timed_batch(r, x, 2 < fit ? 2 : fit, 2 < fit ? 2 : fit, &set, msg, msglen))
                goto done;
            if (alone) {
                if (alone_samples(r, x, NT_REMATCH_SAMPLES, &set, smp[i] + ns[i], msg, msglen))
                    goto done;
                ns[i] += NT_REMATCH_SAMPLES;
                continue;
            }
            while (got < NT_REMATCH_SAMPLES) {
                int b = NT_REMATCH_SAMPLES - got;
                if (b > fit / reps[i]) b = fit / reps[i];
                if (b > BATCH) b = BATCH;
                if (timed_batch(r, x, b * reps[i], reps[i], &set, msg, msglen)) goto done;
                for (int e = 0; e < b; e++) {
                    if (cudaEventElapsedTime(&ms, r->ev[e], r->ev[e + 1]) != cudaSuccess) {
                        snprintf(msg, msglen, "event time");
                        goto done;
                    }
                    smp[i][ns[i]++] = ms * 1e3 / reps[i];
                }
                got += b;
            }
        }
    for (int i = 0; i < n; i++) {
        qsort(smp[i], (size_t)ns[i], sizeof smp[i][0], cmp_double);
        us[i] = ns[i] % 2 ? smp[i][ns[i] / 2] : 0.5 * (smp[i][ns[i] / 2 - 1] + smp[i][ns[i] / 2]);
    }
    rc = 0;
done:
    for (int i = 0; i < n; i++) {
        if (v[i].lib) cudaLibraryUnload(v[i].lib);
        nt_cubin_free(&cb[i]);
    }
    r->phase_s[NT_PHASE_TIME] += nt_now_ms() / 1e3 - t0;
    return rc;
}

const double *nt_runner_phases(const nt_runner *r) { return r->phase_s; }

void nt_runner_evaluator(nt_runner *r, nt_evaluator *ev) {
    memset(ev, 0, sizeof *ev);
    ev->ctx = r;
    ev->eval = eval;
    ev->prefetch = prefetch;
    ev->rematch = rematch;
    ev->dev = r->dev;
    snprintf(ev->arch, sizeof ev->arch, "%s", r->arch);
}
