/* normtune.cu -- the production library: the tuned kernels behind one C call.
 *
 * Built by `make lib` (nvcc, sm_90a plus sm_80 / sm_100a where the toolkit
 * has them) against a dispatch header, kernels/normtune_dispatch.h by
 * default or DISPATCH=path.  The build copies it to build/lib/ after checking
 * that it was tuned with these kernel sources (NORMTUNE_SOURCE_HASH against
 * NT_KERNEL_HASH, which the Makefile computes with `embed --hash $(KSRC)`).
 *
 * What is here, in order:
 *   1. the kernel table: the header's X-macros expanded into explicit
 *      template instantiations, one row per config id listing its kernels by
 *      the NVRTC name expressions the family's plan() writes, plus the
 *      generic default (naive, nsplit=64, partial=f32);
 *   2. device facts (nt_devinfo), read once per device and cached behind an
 *      atomic flag;
 *   3. the choice of a config for (device, M, N): normtune_lookup() with a
 *      can_run that turns the config into the family's params, runs the
 *      family's check() and plan() with the device facts and resolves every
 *      launch of the plan to a kernel of that config, then sizes the grid with
 *      nt_chain_grid as the tuner does; kept in a small per-thread cache;
 *   4. the C API of normtune.h: argument checks, then nt_chain_launch, the
 *      launcher the tuner timed with.
 *
 * No allocation, no copies, no synchronization per call.  Host code is C++
 * only for std::atomic and thread_local; every exported symbol is extern "C"
 * and starts normtune_; everything else is static or localized by the build.
 *
 * Napkin math: a call costs one cudaGetDevice, a cache probe and 2-3 kernel
 * launches; a cache miss plans a few configs (microseconds, once per shape
 * per thread). */
#include <atomic>
#include <climits>
#include <cmath>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda_runtime.h>

#include "rmsnorm_bwd/kernels.cuh"

extern "C" {
#include "kernels/family.h"
#include "kernels/launch.h"
}

#include "kernels/normtune.h"
#include "nt_dispatch.h"        /* build/lib/: the checked copy of DISPATCH */

#if !defined(NORMTUNE_DISPATCH_VERSION) || NORMTUNE_DISPATCH_VERSION != 1
#error "normtune_dispatch.h: unsupported format version (want 1)"
#endif
#ifndef NT_KERNEL_HASH
#error "NT_KERNEL_HASH (the hash of the kernel sources) must be defined by the build"
#endif

/* Compile-time string equality, for the source-hash check. */
static constexpr bool lib_streq(const char *a, const char *b) {
    return *a == *b && (*a == 0 || lib_streq(a + 1, b + 1));
}
static_assert(lib_streq(NT_KERNEL_HASH, NORMTUNE_SOURCE_HASH),
              "normtune_dispatch.h was tuned with other kernel sources: its "
              "NORMTUNE_SOURCE_HASH differs from the hash of kernels/ (re-tune, or "
              "build with the matching DISPATCH header)");

#define LIB_VERSION "1.0"
#define LIB_MAX_DEV 64        /* devices whose facts are cached */
#define LIB_CACHE 8           /* choices cached per thread */
#define LIB_MAX_K 4           /* kernels listed per config */

/* ---- 1. the kernel table ---------------------------------------------- */

typedef struct lib_kernel {
    const char *name;         /* NVRTC name expression, as plan() writes it */
    const void *fn;           /* host stub of the __global__ function */
} lib_kernel;

typedef struct lib_cfg {
    int config;               /* dispatch config id, -1 = generic default */
    int family;               /* enum normtune_family */
    lib_kernel k[LIB_MAX_K];  /* the kernels any plan of this config uses */
} lib_cfg;

#define LIB_S(x) #x
#define LIB_XS(x) LIB_S(x)
#define LIB_K(name, ...) {name, (const void *)__VA_ARGS__}

/* partial = bf16 | f32 (bare identifiers in the header) -> template args */
#define LIB_F32_bf16 0
#define LIB_F32_f32 1
#define LIB_FINAL_bf16 1
#define LIB_FINAL_f32 2

#define LIB_PERSIST(id, b, c, s, k)                                                      \
    {id, NORMTUNE_FAMILY_RMSNORM_BWD_PERSISTENT,                                         \
     {LIB_K("nt_persist<" #b ", " #c ", " #s ", " #k ">", nt_persist<b, c, s, k>),       \
      LIB_K("nt_colsum_final<0>", nt_colsum_final<0>)}},
/* The naive row kernel's chunks depend on N (1 up to 8192, 2 above). */
#define LIB_NAIVE_(id, f, fin)                                                           \
    {id, NORMTUNE_FAMILY_RMSNORM_BWD_NAIVE,                                              \
     {LIB_K("nt_naive_row<1, " LIB_XS(f) ">", nt_naive_row<1, f>),                       \
      LIB_K("nt_naive_row<2, " LIB_XS(f) ">", nt_naive_row<2, f>),                       \
      LIB_K("nt_colsum_split<" LIB_XS(f) ">", nt_colsum_split<f>),                       \
      LIB_K("nt_colsum_final<" LIB_XS(fin) ">", nt_colsum_final<fin>)}},
#define LIB_NAIVE2(id, f, fin) LIB_NAIVE_(id, f, fin)
#define LIB_NAIVE(id, nsplit, partial) LIB_NAIVE2(id, LIB_F32_##partial, LIB_FINAL_##partial)

static const lib_cfg lib_cfgs[] = {
    LIB_NAIVE(-1, 64, f32)    /* the generic default */
    NORMTUNE_RMSNORM_BWD_PERSISTENT_CONFIGS(LIB_PERSIST)
    NORMTUNE_RMSNORM_BWD_NAIVE_CONFIGS(LIB_NAIVE)
};
#define LIB_NCFGS ((int)(sizeof lib_cfgs / sizeof lib_cfgs[0]))

/* Family names by enum normtune_family, resolved in the family table. */
static const struct {
    int id;
    const char *name;
} lib_fams[] = {
    {NORMTUNE_FAMILY_RMSNORM_BWD_NAIVE, "rmsnorm_bwd.naive"},
    {NORMTUNE_FAMILY_RMSNORM_BWD_PERSISTENT, "rmsnorm_bwd.persistent"},
};

/* The generic default's parameters, by declared order (nsplit, partial). */
static const int lib_generic_params[] = {64, 1};

/* The table row of config c, NULL if the library was not built with it. */
static const lib_cfg *lib_find_cfg(int c) {
    for (int i = 0; i < LIB_NCFGS; i++)
        if (lib_cfgs[i].config == c) return &lib_cfgs[i];
    return NULL;
}

/* The kernel of row cfg called name, NULL if none. */
static const void *lib_find_kernel(const lib_cfg *cfg, const char *name) {
    for (int i = 0; i < LIB_MAX_K; i++)
        if (cfg->k[i].name && !strcmp(cfg->k[i].name, name)) return cfg->k[i].fn;
    return NULL;
}

/* ---- 2. device facts --------------------------------------------------- */

static struct {
    std::atomic<int> ready;   /* 1 once di is filled */
    nt_devinfo di;
} lib_devs[LIB_MAX_DEV];
static pthread_mutex_t lib_dev_lock = PTHREAD_MUTEX_INITIALIZER;

/* Read device dev's facts into *di.  cudaSuccess or the error. */
static cudaError_t lib_query(int dev, nt_devinfo *di) {
    static const struct {
        cudaDeviceAttr a;
        size_t off;
    } attrs[] = {
        {cudaDevAttrMultiProcessorCount, offsetof(nt_devinfo, sms)},
        {cudaDevAttrComputeCapabilityMajor, offsetof(nt_devinfo, cc_major)},
        {cudaDevAttrComputeCapabilityMinor, offsetof(nt_devinfo, cc_minor)},
        {cudaDevAttrMaxSharedMemoryPerBlockOptin, offsetof(nt_devinfo, smem_per_block_optin)},
        {cudaDevAttrMaxSharedMemoryPerMultiprocessor, offsetof(nt_devinfo, smem_per_sm)},
        {cudaDevAttrMaxThreadsPerMultiProcessor, offsetof(nt_devinfo, max_threads_per_sm)},
        {cudaDevAttrMaxRegistersPerMultiprocessor, offsetof(nt_devinfo, regs_per_sm)},
    };
    memset(di, 0, sizeof *di);
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        int v = 0;
        cudaError_t e = cudaDeviceGetAttribute(&v, attrs[i].a, dev);
        if (e != cudaSuccess) return e;
        memcpy((char *)di + attrs[i].off, &v, sizeof v);
    }
    return cudaSuccess;
}

/* Device dev's facts: cached after the first successful query (the lock is
 * taken only then).  cudaSuccess or the error. */
static cudaError_t lib_devinfo(int dev, nt_devinfo *di) {
    if (dev < 0 || dev >= LIB_MAX_DEV) return lib_query(dev, di);
    if (lib_devs[dev].ready.load(std::memory_order_acquire)) {
        *di = lib_devs[dev].di;
        return cudaSuccess;
    }
    pthread_mutex_lock(&lib_dev_lock);
    cudaError_t e = cudaSuccess;
    if (!lib_devs[dev].ready.load(std::memory_order_relaxed)) {
        e = lib_query(dev, &lib_devs[dev].di);
        if (e == cudaSuccess) lib_devs[dev].ready.store(1, std::memory_order_release);
    }
    if (e == cudaSuccess) *di = lib_devs[dev].di;
    pthread_mutex_unlock(&lib_dev_lock);
    return e;
}

/* ---- 3. choosing a config ---------------------------------------------- */

/* A runnable config for one (device, shape). */
typedef struct lib_choice {
    int config;               /* -1 = generic default */
    const nt_family *fam;
    nt_params params;
    nt_plan plan;
    const void *k[NT_MAX_LAUNCH]; /* kernels in plan order */
    unsigned grid0;           /* grid of launch 0 */
    int nparts;               /* nt_args.nparts */
} lib_choice;

typedef struct lib_slot {
    int used;
    int dev;
    long long M, N;
    lib_choice ch;
} lib_slot;

static thread_local lib_slot lib_cache[LIB_CACHE];
static thread_local unsigned lib_cache_next;
static thread_local int lib_cuda_err;
/* the device facts can_run() sees (normtune_lookup's callback has no context) */
static thread_local const nt_devinfo *lib_cur_di;

/* Family and params of config c (-1: the generic default) into *fam, *p.
 * 0, or -1 when the config's family or values are unknown. */
static int lib_params(int c, const nt_family **fam, nt_params *p) {
    int famid = c < 0 ? NORMTUNE_FAMILY_RMSNORM_BWD_NAIVE : normtune_config_family(c);
    const nt_family *f = NULL;
    for (size_t i = 0; i < sizeof lib_fams / sizeof lib_fams[0]; i++)
        if (lib_fams[i].id == famid) f = nt_family_find(lib_fams[i].name);
    if (!f) return -1;
    memset(p, 0, sizeof *p);
    for (int i = 0; i < f->nparams; i++) {
        const nt_param_def *d = &f->params[i];
        int v = c < 0 ? lib_generic_params[i] : normtune_config_param(c, i);
        char txt[NT_NAME_LEN];
        if (d->kind == NT_PARAM_STR) {
            int n = 0;
            while (d->choices[n]) n++;
            if (v < 0 || v >= n) return -1;
            snprintf(txt, sizeof txt, "%s", d->choices[v]);
        } else {
            snprintf(txt, sizeof txt, "%d", v);
        }
        if (nt_params_set(p, d->name, txt)) return -1;
    }
    char err[256];
    if (nt_params_validate(f, p, err, sizeof err)) return -1;
    *fam = f;
    return 0;
}

/* Make config c ready for M x N on the device with facts di: params, the
 * family's check and plan (refused when its dw is less precise than fp32),
 * every launch resolved to a kernel of c, shared
 * memory opted in, grid sized.  Fills *ch; 0, or -1 when c cannot run here
 * (a CUDA error is kept in lib_cuda_err). */
static int lib_try(int c, long long M, long long N, const nt_devinfo *di, lib_choice *ch) {
    char err[256];
    const lib_cfg *cfg = lib_find_cfg(c);
    nt_shape s = {(int64_t)M, (int64_t)N};
    if (!cfg) return -1;
    memset(ch, 0, sizeof *ch);
    ch->config = c;
    if (lib_params(c, &ch->fam, &ch->params)) return -1;
    if (ch->fam->check(&ch->params, &s, di, err, sizeof err)) return -1;
    if (ch->fam->plan(&ch->params, &s, di, &ch->plan, err, sizeof err)) return -1;
    if (ch->plan.nlaunch < 1 || ch->plan.nlaunch > NT_MAX_LAUNCH) return -1;
    /* dw is fp32 unless NORMTUNE_DW_BF16 asks for bf16, and one choice serves
     * both: a config whose dw is only bf16-precise (bf16 partials) is never
     * chosen, from the table or as a fallback (NT_TOL_F32, kernels/family.h) */
    if (!(ch->plan.tol_dw <= NT_TOL_F32)) return -1;
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < ch->plan.nlaunch && e == cudaSuccess; i++) {
        if (!(ch->k[i] = lib_find_kernel(cfg, ch->plan.l[i].name))) return -1;
#if CUDART_VERSION >= 12050
        /* launch by kernel handle, as the tuner does: no per-launch lookup
         * of the host stub in the runtime's tables */
        cudaKernel_t kh;
        if ((e = cudaGetKernel(&kh, ch->k[i])) == cudaSuccess) ch->k[i] = (const void *)kh;
#endif
    }
    if (e == cudaSuccess) e = nt_chain_prepare(&ch->plan, ch->k);
    if (e == cudaSuccess)
        e = nt_chain_grid(&ch->plan, ch->k[0], di->sms, M, &ch->grid0, err, sizeof err);
    if (e != cudaSuccess) {
        lib_cuda_err = (int)e;
        return -1;
    }
    ch->nparts = ch->plan.nparts ? ch->plan.nparts : (int)ch->grid0;
    return 0;
}

/* normtune_lookup's veto: can config c run rows x cols on this device? */
static int lib_can_run(int c, long long rows, long long cols) {
    lib_choice ch;
    return lib_try(c, rows, cols, lib_cur_di, &ch) == 0;
}

/* The choice for (current device, M, N), from this thread's cache or made
 * now.  *out points into the cache (valid until this thread's next call).
 * NORMTUNE_SUCCESS, NORMTUNE_ERROR_CUDA or NORMTUNE_ERROR_INTERNAL. */
static normtune_status lib_choose(long long M, long long N, const lib_choice **out) {
    int dev = -1;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) {
        lib_cuda_err = (int)e;
        return NORMTUNE_ERROR_CUDA;
    }
    for (int i = 0; i < LIB_CACHE; i++) {
        const lib_slot *sl = &lib_cache[i];
        if (sl->used && sl->dev == dev && sl->M == M && sl->N == N) {
            *out = &sl->ch;
            return NORMTUNE_SUCCESS;
        }
    }
    nt_devinfo di;
    if ((e = lib_devinfo(dev, &di)) != cudaSuccess) {
        lib_cuda_err = (int)e;
        return NORMTUNE_ERROR_CUDA;
    }
    lib_slot *sl = &lib_cache[lib_cache_next++ % LIB_CACHE];
    sl->used = 0;
    lib_cur_di = &di;
    lib_cuda_err = 0;
    int c = normtune_lookup(M, N, lib_can_run);
    lib_cur_di = NULL;
    if (lib_try(c, M, N, &di, &sl->ch) && (c < 0 || lib_try(-1, M, N, &di, &sl->ch)))
        return lib_cuda_err ? NORMTUNE_ERROR_CUDA : NORMTUNE_ERROR_INTERNAL;
    lib_cuda_err = 0;
    sl->dev = dev;
    sl->M = M;
    sl->N = N;
    sl->used = 1;
    *out = &sl->ch;
    return NORMTUNE_SUCCESS;
}

/* ---- 4. the API -------------------------------------------------------- */

static const char *const lib_msgs[] = {
    "success",
    "a required pointer is NULL",
    "M and N must be at least 1 (and M at most 2^31 - 1)",
    "N must be a multiple of 8 no larger than 16384",
    "a pointer is not 16-byte aligned",
    "the workspace is NULL or smaller than normtune_rmsnorm_bwd_workspace_size says",
    "eps must be finite and not negative",
    "unknown flag bits",
    "CUDA error (no device, or a query or launch failed; see normtune_last_cuda_error)",
    "internal error: no kernel configuration could be planned for this shape",
};

extern "C" NORMTUNE_API const char *normtune_strerror(normtune_status s) {
    int i = (int)s;
    return i >= 0 && i < (int)(sizeof lib_msgs / sizeof lib_msgs[0]) ? lib_msgs[i]
                                                                      : "unknown status";
}

extern "C" NORMTUNE_API int normtune_last_cuda_error(void) { return lib_cuda_err; }

/* The shape rules every entry point applies first. */
static normtune_status lib_check_shape(long long M, long long N) {
    if (M < 1 || N < 1 || M > INT_MAX) return NORMTUNE_ERROR_INVALID_SHAPE;
    if (N % 8 || N > NORMTUNE_MAX_N) return NORMTUNE_ERROR_UNSUPPORTED_N;
    return NORMTUNE_SUCCESS;
}

extern "C" NORMTUNE_API normtune_status normtune_rmsnorm_bwd_workspace_size(long long M,
                                                                            long long N,
                                                                            size_t *bytes) {
    const lib_choice *ch;
    if (!bytes) return NORMTUNE_ERROR_NULL_POINTER;
    normtune_status st = lib_check_shape(M, N);
    if (st == NORMTUNE_SUCCESS) st = lib_choose(M, N, &ch);
    if (st == NORMTUNE_SUCCESS) *bytes = ch->plan.workspace;
    return st;
}

extern "C" NORMTUNE_API normtune_status normtune_rmsnorm_bwd_choice(long long M, long long N,
                                                                    normtune_choice *out) {
    const lib_choice *ch;
    if (!out) return NORMTUNE_ERROR_NULL_POINTER;
    normtune_status st = lib_check_shape(M, N);
    if (st == NORMTUNE_SUCCESS) st = lib_choose(M, N, &ch);
    if (st != NORMTUNE_SUCCESS) return st;
    memset(out, 0, sizeof *out);
    out->config = ch->config;
    for (int i = 0; i < NORMTUNE_TABLE_SIZE; i++)
        if (normtune_table[i].M == M && normtune_table[i].N == N)
            out->tuned = normtune_table[i].config == ch->config;
    snprintf(out->family, sizeof out->family, "%s", ch->fam->name);
    if (nt_params_canon(ch->fam, &ch->params, out->params, sizeof out->params))
        out->params[0] = 0;
    out->workspace = ch->plan.workspace;
    out->grid = ch->grid0;
    out->nlaunch = ch->plan.nlaunch;
    out->tol_dx = ch->plan.tol_dx;
    out->tol_dw = ch->plan.tol_dw;
    return NORMTUNE_SUCCESS;
}

static int lib_misaligned(const void *p) { return ((uintptr_t)p & 15) != 0; }

extern "C" NORMTUNE_API normtune_status
normtune_rmsnorm_bwd(const void *x, const void *w, const void *dy, void *dx, void *dw,
                     long long M, long long N, float eps, unsigned flags, void *workspace,
                     size_t workspace_bytes, struct CUstream_st *stream) {
    const lib_choice *ch;
    if (!x || !w || !dy || !dx || !dw) return NORMTUNE_ERROR_NULL_POINTER;
    normtune_status st = lib_check_shape(M, N);
    if (st != NORMTUNE_SUCCESS) return st;
    if (lib_misaligned(x) || lib_misaligned(w) || lib_misaligned(dy) || lib_misaligned(dx) ||
        lib_misaligned(dw) || lib_misaligned(workspace))
        return NORMTUNE_ERROR_MISALIGNED;
    if (!workspace) return NORMTUNE_ERROR_WORKSPACE;
    if (!(eps >= 0.0f) || std::isinf(eps)) return NORMTUNE_ERROR_INVALID_EPS;
    if (flags & ~NORMTUNE_DW_BF16) return NORMTUNE_ERROR_INVALID_FLAGS;
    if ((st = lib_choose(M, N, &ch)) != NORMTUNE_SUCCESS) return st;
    if (workspace_bytes < ch->plan.workspace) return NORMTUNE_ERROR_WORKSPACE;
    nt_args a;
    memset(&a, 0, sizeof a);
    a.x = x;
    a.w = w;
    a.dy = dy;
    a.dx = dx;
    a.dw = dw;
    a.ws = workspace;
    a.M = M;
    a.N = (int)N;
    a.nparts = ch->nparts;
    a.eps = eps;
    a.dw_bf16 = (flags & NORMTUNE_DW_BF16) ? 1 : 0;
    cudaError_t e = nt_chain_launch(&ch->plan, ch->k, ch->grid0, &a, (cudaStream_t)stream);
    if (e != cudaSuccess) {
        lib_cuda_err = (int)e;
        return NORMTUNE_ERROR_CUDA;
    }
    return NORMTUNE_SUCCESS;
}

extern "C" NORMTUNE_API const char *normtune_version(void) {
    return "normtune " LIB_VERSION " " NORMTUNE_OP " " NORMTUNE_DTYPE
           ", kernel source " NORMTUNE_SOURCE_HASH ", tuned on " NORMTUNE_DEVICE ", "
           LIB_XS(NORMTUNE_TABLE_SIZE) " shapes, " LIB_XS(NORMTUNE_NCONFIGS) " configs";
}
