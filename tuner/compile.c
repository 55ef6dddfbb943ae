/* compile.c -- NVRTC compilation, the cubin disk cache and the compiler
 * pool.
 *
 * nt_compile_src turns one program (main text + named headers + name
 * expressions) into a cubin for one architecture and reads the resources
 * ptxas reports with --ptxas-options=-v.  nt_compile_src_cached puts a disk
 * cache in front of it (see compile.h for the key and the entry format).  The
 * pool runs compilations on worker threads ahead of the single thread that
 * times kernels.  `normtune compile` (tuner/cmd_compile.c) compiles every
 * variant a sweep script names with them, with no GPU.
 *
 * Cache entry layout (all integers little-endian):
 *   "NTCUBIN\0"  u32 version  char key[16]  u32 nkern
 *   nkern x { u32 regs  u32 spill  u32 smem  u32 len  char name[len] }
 *   u64 size  u8 cubin[size]  u64 fnv1a(every byte before it)
 * An entry that does not parse, has another key or a wrong checksum is
 * ignored: the program is compiled again and the entry rewritten. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <nvrtc.h>

#include "lua/ntlua.h"
#include "tuner/compile.h"
#include "search/enumerate.h"
#include "kernels/nt.h"

#define CACHE_MAGIC "NTCUBIN"     /* 7 chars + NUL = 8 bytes */
#define CACHE_VERSION 1u
#define CACHE_MAX_BYTES (256u << 20) /* refuse to read larger entries */
#define KEY_SALT "normtune-compile-v1" /* bump to invalidate every entry */

/* Milliseconds on the monotonic clock (see compile.h). */
double nt_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void nt_cubin_free(nt_cubin *c) {
    free(c->data);
    memset(c, 0, sizeof *c);
}

void nt_nvrtc_version(char *buf, size_t len) {
    int maj = 0, min = 0;
    if (nvrtcVersion(&maj, &min) != NVRTC_SUCCESS) maj = min = 0;
    snprintf(buf, len, "%d.%d", maj, min);
}

/* ---- options ------------------------------------------------------------ */

static char inc_opt[2][4200];     /* "-I<cuda>/include", "-I<cuda>/include/cccl" */
static int n_inc;
static pthread_once_t inc_once = PTHREAD_ONCE_INIT;

static int is_dir_with(const char *dir, const char *file) {
    char p[4200];
    struct stat st;
    if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, file) >= sizeof p) return 0;
    return stat(p, &st) == 0;
}

/* Find the toolkit's include directory once: $CUDA_HOME or $CUDA_PATH, else
 * next to the libnvrtc we were loaded with (lib64/../include), else
 * /usr/local/cuda/include.  NVRTC has cuda_bf16.h built in but not
 * cuda_pipeline.h or the CCCL headers cooperative_groups needs. */
static void find_includes(void) {
    char cand[3][1100];
    int nc = 0;
    const char *env[] = {"CUDA_HOME", "CUDA_PATH"};
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(env[i]);
        if (v && *v && strlen(v) < 1000) snprintf(cand[nc++], sizeof cand[0], "%s/include", v);
    }
    Dl_info di;
    if (dladdr((void *)nvrtcVersion, &di) && di.dli_fname && strlen(di.dli_fname) < 1000) {
        char lib[1024];
        snprintf(lib, sizeof lib, "%s", di.dli_fname);
        char *slash = strrchr(lib, '/');
        if (slash) {
            *slash = 0;
            snprintf(cand[nc++], sizeof cand[0], "%s/../include", lib);
        }
    }
    if (nc < 3) snprintf(cand[nc++], sizeof cand[0], "/usr/local/cuda/include");
    for (int i = 0; i < nc; i++) {
        if (!is_dir_with(cand[i], "cuda_pipeline.h")) continue;
        char real[4096];
        const char *dir = realpath(cand[i], real) ? real : cand[i];
        snprintf(inc_opt[n_inc++], sizeof inc_opt[0], "-I%s", dir);
        if (is_dir_with(dir, "cccl")) snprintf(inc_opt[n_inc++], sizeof inc_opt[0], "-I%s/cccl", dir);
        return;
    }
}

/* The full option list of src into opt[] (pointers into static or src
 * storage, and into archbuf).  Returns the count. */
static int build_opts(const nt_csrc *src, const char **opt, char *archbuf, size_t len) {
    static const char *const fixed[] = {"-std=c++17", "--ptxas-options=-v", "-default-device"};
    int n = 0;
    pthread_once(&inc_once, find_includes);
    snprintf(archbuf, len, "--gpu-architecture=%s", src->arch ? src->arch : "sm_90a");
    opt[n++] = archbuf;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) opt[n++] = fixed[i];
    for (int i = 0; i < n_inc; i++) opt[n++] = inc_opt[i];
    for (int i = 0; i < src->nopt && i < NT_MAX_COPTS; i++) opt[n++] = src->opt[i];
    return n;
}

#define MAX_OPTS (4 + 2 + NT_MAX_COPTS)

static const char *main_text(const nt_csrc *src) { return src->text ? src->text : src->textbuf; }

/* Hash a string with its terminating NUL, so "ab","c" != "a","bc". */
static uint64_t hstr(uint64_t h, const char *s) { return nt_fnv1a(h, s ? s : "", strlen(s ? s : "") + 1); }

void nt_compile_key(const nt_csrc *src, char key[17]) {
    const char *opt[MAX_OPTS];
    char arch[64], ver[32];
    int nopt = build_opts(src, opt, arch, sizeof arch);
    uint64_t h = hstr(NT_FNV_INIT, KEY_SALT);
    nt_nvrtc_version(ver, sizeof ver);
    h = hstr(h, ver);
    h = hstr(h, src->name);
    h = hstr(h, main_text(src));
    for (int i = 0; i < src->nhdr; i++) {
        h = hstr(h, src->hdr_names[i]);
        h = hstr(h, src->hdr_texts[i]);
    }
    for (int i = 0; i < nopt; i++) h = hstr(h, opt[i]);
    for (int i = 0; i < src->nexpr; i++) h = hstr(h, src->expr[i]);
    snprintf(key, 17, "%016llx", (unsigned long long)h);
}

/* ---- ptxas log ---------------------------------------------------------- */

/* The number just before `what` in line (e.g. "1024 bytes smem"), or -1. */
static int num_before(const char *line, const char *what) {
    const char *p = strstr(line, what);
    if (!p) return -1;
    while (p > line && p[-1] == ' ') p--;
    const char *e = p;
    while (p > line && p[-1] >= '0' && p[-1] <= '9') p--;
    return p == e ? -1 : atoi(p);
}

/* Set which launches (mask) the mangled name in quotes or after "for " names. */
static unsigned match_kernel(const nt_cubin *c, const char *name, size_t n) {
    unsigned mask = 0;
    for (int i = 0; i < c->nkern; i++)
        if (strlen(c->lowered[i]) == n && !strncmp(c->lowered[i], name, n)) mask |= 1u << i;
    return mask;
}

/* Read registers, spill stores and static shared memory per launch from the
 * ptxas -v log.  Lines belong to the entry named by the last "Compiling entry
 * function 'X'" or "Function properties for X" line. */
static void parse_ptxas(const char *log, nt_cubin *c) {
    unsigned cur = 0;
    for (const char *line = log; line && *line;) {
        const char *eol = strchr(line, '\n');
        size_t n = eol ? (size_t)(eol - line) : strlen(line);
        char buf[1024];
        if (n >= sizeof buf) n = sizeof buf - 1;
        memcpy(buf, line, n);
        buf[n] = 0;
        char *p;
        if ((p = strstr(buf, "Compiling entry function '"))) {
            p += strlen("Compiling entry function '");
            char *q = strchr(p, '\'');
            cur = match_kernel(c, p, q ? (size_t)(q - p) : strlen(p));
        } else if ((p = strstr(buf, "Function properties for "))) {
            p += strlen("Function properties for ");
            size_t k = strcspn(p, " \t\r");
            cur = match_kernel(c, p, k);
        } else if (cur) {
            int regs = num_before(buf, " registers");
            int smem = num_before(buf, " bytes smem");
            int spill = num_before(buf, " bytes spill stores");
            for (int i = 0; i < c->nkern; i++) {
                if (!(cur & (1u << i))) continue;
                if (regs >= 0 && strstr(buf, "Used ")) c->regs[i] = regs;
                if (smem >= 0) c->smem[i] = smem;
                if (spill >= 0) c->spill[i] = spill;
            }
        }
        line = eol ? eol + 1 : NULL;
    }
}

static void set_max(nt_cubin *c) {
    c->max_regs = c->max_spill = c->max_smem = 0;
    for (int i = 0; i < c->nkern; i++) {
        if (c->regs[i] > c->max_regs) c->max_regs = c->regs[i];
        if (c->spill[i] > c->max_spill) c->max_spill = c->spill[i];
        if (c->smem[i] > c->max_smem) c->max_smem = c->smem[i];
    }
}

/* ---- NVRTC -------------------------------------------------------------- */

/* The program log (malloc'd, trailing blanks trimmed), or NULL. */
static char *get_log(nvrtcProgram prog) {
    size_t n = 0;
    if (nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS || n == 0) return NULL;
    char *log = malloc(n + 1);
    if (!log) return NULL;
    if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) {
        free(log);
        return NULL;
    }
    log[n] = 0;
    size_t k = strlen(log);
    while (k && (log[k - 1] == '\n' || log[k - 1] == ' ' || log[k - 1] == '\r')) log[--k] = 0;
    return log;
}

int nt_compile_src(const nt_csrc *src, nt_cubin *out, char *err, size_t errlen) {
    const char *opt[MAX_OPTS];
    char arch[64];
    nvrtcProgram prog = NULL;
    char *log = NULL;
    const char *pname = src->name ? src->name : "normtune.cu";
    double t0 = nt_now_ms();
    int rc = -1;

    memset(out, 0, sizeof *out);
    out->status = NT_COMPILE_ERROR;
    nt_compile_key(src, out->key);
    if (src->nexpr < 0 || src->nexpr > NT_MAX_LAUNCH) {
        snprintf(err, errlen, "%s: %d name expressions (at most %d)", pname, src->nexpr, NT_MAX_LAUNCH);
        return -1;
    }
    int nopt = build_opts(src, opt, arch, sizeof arch);
    nvrtcResult r = nvrtcCreateProgram(&prog, main_text(src), pname, src->nhdr,
                                       (const char *const *)src->hdr_texts,
                                       (const char *const *)src->hdr_names);
    if (r != NVRTC_SUCCESS) {
        snprintf(err, errlen, "%s: nvrtcCreateProgram: %s", pname, nvrtcGetErrorString(r));
        return -1;
    }
    for (int i = 0; i < src->nexpr; i++) {
        int dup = 0;
        for (int j = 0; j < i; j++) dup |= !strcmp(src->expr[i], src->expr[j]);
        if (!dup && (r = nvrtcAddNameExpression(prog, src->expr[i])) != NVRTC_SUCCESS) {
            snprintf(err, errlen, "%s: name expression '%s': %s", pname, src->expr[i],
                     nvrtcGetErrorString(r));
            goto done;
        }
    }
    r = nvrtcCompileProgram(prog, nopt, opt);
    log = get_log(prog);
    if (r != NVRTC_SUCCESS) {
        snprintf(err, errlen, "%s (%s): %s:\n%s", pname, src->arch ? src->arch : "?",
                 nvrtcGetErrorString(r), log && *log ? log : "(no log)");
        goto done;
    }
    out->nkern = src->nexpr;
    for (int i = 0; i < src->nexpr; i++) {
        const char *low = NULL;
        r = nvrtcGetLoweredName(prog, src->expr[i], &low);
        if (r != NVRTC_SUCCESS || !low || strlen(low) >= NT_LOWERED_LEN) {
            snprintf(err, errlen, "%s: no lowered name for '%s': %s", pname, src->expr[i],
                     r != NVRTC_SUCCESS ? nvrtcGetErrorString(r) : "too long");
            goto done;
        }
        strcpy(out->lowered[i], low);
    }
    size_t size = 0;
    if ((r = nvrtcGetCUBINSize(prog, &size)) != NVRTC_SUCCESS || size == 0) {
        snprintf(err, errlen, "%s: no cubin for %s (%s; is it a real sm_ architecture?)", pname,
                 src->arch ? src->arch : "?", r != NVRTC_SUCCESS ? nvrtcGetErrorString(r) : "empty");
        goto done;
    }
    if (!(out->data = malloc(size))) {
        snprintf(err, errlen, "%s: out of memory for a %zu-byte cubin", pname, size);
        goto done;
    }
    if ((r = nvrtcGetCUBIN(prog, out->data)) != NVRTC_SUCCESS) {
        snprintf(err, errlen, "%s: nvrtcGetCUBIN: %s", pname, nvrtcGetErrorString(r));
        goto done;
    }
    out->size = size;
    if (log) parse_ptxas(log, out);
    set_max(out);
    out->status = NT_OK;
    rc = 0;
done:
    if (rc) {
        free(out->data);
        out->data = NULL;
        out->size = 0;
    }
    free(log);
    nvrtcDestroyProgram(&prog);
    out->ms = nt_now_ms() - t0;
    return rc;
}

/* ---- the disk cache ----------------------------------------------------- */

/* mkdir for one component: 0 when it exists as a directory afterwards. */
static int mkdir1(const char *p) {
    struct stat st;
    if (mkdir(p, 0755) == 0) return 0;
    if (errno != EEXIST) return -1;
    if (stat(p, &st) || !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* mkdir -p for path (modifies a copy).  0 or -1 with errno. */
static int mkdirs(const char *path) {
    char p[1024];
    if (strlen(path) >= sizeof p) return -1;
    strcpy(p, path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir1(p)) return -1;
        *s = '/';
    }
    return mkdir1(p);
}

int nt_cache_dir(char *buf, size_t len, char *err, size_t errlen) {
    const char *v;
    int n;
    if ((v = getenv("NORMTUNE_CACHE")) && *v)
        n = snprintf(buf, len, "%s", v);
    else if ((v = getenv("XDG_CACHE_HOME")) && *v)
        n = snprintf(buf, len, "%s/normtune", v);
    else if ((v = getenv("HOME")) && *v)
        n = snprintf(buf, len, "%s/.cache/normtune", v);
    else {
        snprintf(err, errlen, "no cache directory: set NORMTUNE_CACHE or HOME");
        return -1;
    }
    if (n < 0 || (size_t)n >= len) {
        snprintf(err, errlen, "cache directory path too long");
        return -1;
    }
    if (mkdirs(buf)) {
        snprintf(err, errlen, "cannot create cache directory %s: %s", buf, strerror(errno));
        return -1;
    }
    return 0;
}

/* A growable byte buffer for building an entry. */
typedef struct bbuf {
    unsigned char *p;
    size_t n, cap;
    int oom;
} bbuf;

static void bput(bbuf *b, const void *d, size_t n) {
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        unsigned char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void bput_u32(bbuf *b, uint32_t v) {
    unsigned char x[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    bput(b, x, 4);
}

static void bput_u64(bbuf *b, uint64_t v) {
    bput_u32(b, (uint32_t)v);
    bput_u32(b, (uint32_t)(v >> 32));
}

/* A reader over an entry: get_* return 0, or -1 past the end. */
typedef struct rbuf {
    const unsigned char *p;
    size_t n, at;
} rbuf;

static int get(rbuf *r, void *d, size_t n) {
    if (r->n - r->at < n) return -1;
    memcpy(d, r->p + r->at, n);
    r->at += n;
    return 0;
}

static int get_u32(rbuf *r, uint32_t *v) {
    unsigned char x[4];
    if (get(r, x, 4)) return -1;
    *v = (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 | (uint32_t)x[3] << 24;
    return 0;
}

static int get_u64(rbuf *r, uint64_t *v) {
    uint32_t lo, hi;
    if (get_u32(r, &lo) || get_u32(r, &hi)) return -1;
    *v = (uint64_t)hi << 32 | lo;
    return 0;
}

/* Serialize c into a fresh buffer (b->p malloc'd).  0 or -1 (no memory). */
static int entry_pack(const nt_cubin *c, bbuf *b) {
    memset(b, 0, sizeof *b);
    bput(b, CACHE_MAGIC, 8);
    bput_u32(b, CACHE_VERSION);
    bput(b, c->key, 16);
    bput_u32(b, (uint32_t)c->nkern);
    for (int i = 0; i < c->nkern; i++) {
        bput_u32(b, (uint32_t)c->regs[i]);
        bput_u32(b, (uint32_t)c->spill[i]);
        bput_u32(b, (uint32_t)c->smem[i]);
        bput_u32(b, (uint32_t)strlen(c->lowered[i]));
        bput(b, c->lowered[i], strlen(c->lowered[i]));
    }
    bput_u64(b, (uint64_t)c->size);
    bput(b, c->data, c->size);
    if (!b->oom) bput_u64(b, nt_fnv1a(NT_FNV_INIT, b->p, b->n));
    if (b->oom) {
        free(b->p);
        b->p = NULL;
        return -1;
    }
    return 0;
}

/* Parse an entry for key into *c (data malloc'd).  0, or -1 when the entry
 * is not a valid one for this key. */
static int entry_unpack(const unsigned char *p, size_t n, const char *key, int nexpr,
                        nt_cubin *c) {
    rbuf r = {p, n, 0};
    char magic[8], k[16];
    uint32_t ver, nk;
    uint64_t size, sum;
    memset(c, 0, sizeof *c);
    if (n < 8 + 8 || get(&r, magic, 8) || memcmp(magic, CACHE_MAGIC, 8)) return -1;
    if (get_u32(&r, &ver) || ver != CACHE_VERSION) return -1;
    if (get(&r, k, 16) || memcmp(k, key, 16)) return -1;
    if (get_u32(&r, &nk) || nk != (uint32_t)nexpr || nk > NT_MAX_LAUNCH) return -1;
    c->nkern = (int)nk;
    for (int i = 0; i < c->nkern; i++) {
        uint32_t v[4];
        for (int j = 0; j < 4; j++)
            if (get_u32(&r, &v[j])) return -1;
        if (v[3] == 0 || v[3] >= NT_LOWERED_LEN || get(&r, c->lowered[i], v[3]) ||
            memchr(c->lowered[i], 0, v[3]))  /* a name is text: no NUL inside */
            return -1;
        c->lowered[i][v[3]] = 0;
        c->regs[i] = (int)v[0];
        c->spill[i] = (int)v[1];
        c->smem[i] = (int)v[2];
    }
    if (get_u64(&r, &size) || size == 0 || size > r.n - r.at) return -1;
    size_t body = r.at + (size_t)size;
    if (n - body != 8) return -1;
    rbuf tail = {p, n, body};
    if (get_u64(&tail, &sum) || sum != nt_fnv1a(NT_FNV_INIT, p, body)) return -1;
    if (!(c->data = malloc((size_t)size))) return -1;
    memcpy(c->data, p + r.at, (size_t)size);
    c->size = (size_t)size;
    memcpy(c->key, key, 16);
    c->key[16] = 0;
    set_max(c);
    c->status = NT_OK;
    return 0;
}

/* Read the entry file for key into *c.  0 on a valid hit, else -1. */
static int cache_get(const char *dir, const char *key, int nexpr, nt_cubin *c) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.cubin", dir, key);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    unsigned char *buf = NULL;
    int rc = -1;
    struct stat st;
    if (fstat(fileno(f), &st) || st.st_size <= 0 || (uint64_t)st.st_size > CACHE_MAX_BYTES) goto done;
    if (!(buf = malloc((size_t)st.st_size))) goto done;
    if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) goto done;
    rc = entry_unpack(buf, (size_t)st.st_size, key, nexpr, c);
done:
    free(buf);
    fclose(f);
    return rc;
}

/* Write c as the entry for its key: to a temporary file in dir, then rename
 * over the final name, so readers see either no entry or a whole one.
 * 0 or -1 (the cache is best effort; callers ignore failures). */
static int cache_put(const char *dir, const nt_cubin *c) {
    char tmp[1200], path[1200];
    bbuf b;
    if (entry_pack(c, &b)) return -1;
    snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", dir, c->key);
    snprintf(path, sizeof path, "%s/%s.cubin", dir, c->key);
    int fd = mkstemp(tmp), rc = -1;
    if (fd < 0) goto done;
    size_t off = 0;
    while (off < b.n) {
        ssize_t w = write(fd, b.p + off, b.n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        off += (size_t)w;
    }
    if (close(fd) == 0 && off == b.n && rename(tmp, path) == 0) rc = 0;
    if (rc) unlink(tmp);
done:
    free(b.p);
    return rc;
}

/* One compile of a key at a time, across threads and processes (the
 * processes of `run --devices` share the cache and would compile the same
 * kernels): an exclusive flock on dir/.KEY.lock, -1 when none can be made
 * (the compile goes on without it).  unlock_key removes the file once the
 * entry is in the cache, so that a process that opened it before sees the
 * entry when its lock is granted, and one that comes later finds the entry
 * first. */
static int lock_key(const char *dir, const char *key) {
    char path[1200];
    snprintf(path, sizeof path, "%s/.%s.lock", dir, key);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    while (flock(fd, LOCK_EX)) {
        if (errno != EINTR) {
            close(fd);
            return -1;
        }
    }
    return fd;
}

static void unlock_key(const char *dir, const char *key, int fd) {
    char path[1200];
    if (fd < 0) return;
    snprintf(path, sizeof path, "%s/.%s.lock", dir, key);
    unlink(path);
    close(fd);
}

int nt_compile_src_cached(const nt_csrc *src, int use_cache, nt_cubin *out, char *err,
                          size_t errlen) {
    char dir[1024], key[17], derr[256];
    double t0 = nt_now_ms();
    if (!use_cache || nt_cache_dir(dir, sizeof dir, derr, sizeof derr))
        return nt_compile_src(src, out, err, errlen);
    nt_compile_key(src, key);
    if (cache_get(dir, key, src->nexpr, out) == 0) {
        out->hit = 1;
        out->ms = nt_now_ms() - t0;
        return 0;
    }
    /* a miss: compile it unless another thread or process is compiling it
     * now, in which case wait for that one's entry */
    int lk = lock_key(dir, key);
    if (lk >= 0 && cache_get(dir, key, src->nexpr, out) == 0) {
        unlock_key(dir, key, lk);
        out->hit = 1;
        out->ms = nt_now_ms() - t0;
        return 0;
    }
    int rc = nt_compile_src(src, out, err, errlen);
    if (rc == 0) cache_put(dir, out);
    unlock_key(dir, key, lk);
    out->ms = nt_now_ms() - t0;
    return rc;
}

/* ---- family variants ---------------------------------------------------- */

void nt_csrc_for_plan(const nt_family *f, const nt_plan *plan, const char *arch, nt_csrc *src) {
    memset(src, 0, sizeof *src);
    src->name = f->name;
    src->text = NULL;
    /* the family's sources only: they are what its hash covers, so the
     * cache key (over every header) changes with them and nothing else */
    for (int i = 0; f->sources[i] && src->nhdr < NT_MAX_SOURCES; i++)
        for (int k = 0; k < nt_kernel_count; k++)
            if (!strcmp(nt_kernel_names[k], f->sources[i])) {
                src->hdrbuf[0][src->nhdr] = nt_kernel_names[k];
                src->hdrbuf[1][src->nhdr++] = nt_kernel_texts[k];
                snprintf(src->textbuf, sizeof src->textbuf, "#include \"%s\"\n", f->sources[i]);
            }
    src->hdr_names = src->hdrbuf[0];
    src->hdr_texts = src->hdrbuf[1];
    src->nexpr = plan->nlaunch < NT_MAX_LAUNCH ? plan->nlaunch : NT_MAX_LAUNCH;
    for (int i = 0; i < src->nexpr; i++) src->expr[i] = plan->l[i].name;
    src->arch = arch;
}

int nt_compile_one(const nt_family *f, const nt_plan *plan, const char *arch, nt_cubin *out,
                   char *err, size_t errlen) {
    nt_csrc src;
    nt_csrc_for_plan(f, plan, arch, &src);
    return nt_compile_src(&src, out, err, errlen);
}

int nt_compile_cached(const nt_family *f, const nt_plan *plan, const char *arch, int use_cache,
                      nt_cubin *out, char *err, size_t errlen) {
    nt_csrc src;
    nt_csrc_for_plan(f, plan, arch, &src);
    return nt_compile_src_cached(&src, use_cache, out, err, errlen);
}

/* ---- the compiler pool -------------------------------------------------- */

enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

typedef struct slot {
    nt_job job;               /* copy of the submitted job */
    int state;                /* JOB_* */
    int rc;                   /* compile return code */
    nt_cubin res;             /* the result, moved out by nt_pool_wait */
    char err[NT_MSG_LEN];
} slot;

struct nt_pool {
    pthread_mutex_t mu;
    pthread_cond_t work;      /* a job may start, or stop */
    pthread_cond_t done;      /* a job finished */
    pthread_t *th;
    int nth;
    int ahead;                /* jobs compiled beyond the oldest untaken */
    slot **s;                 /* s[ticket]; NULL once taken (or dropped) */
    long n, cap;              /* tickets issued, capacity of s */
    long next;                /* lowest ticket not started */
    long base;                /* lowest ticket not taken */
    long want;                /* highest ticket a waiter asked for */
    int stop, drain;
    int nice;                 /* nice value of the threads (nt_pool_set_nice) */
};

/* May a worker start job p->next now?  Called with the lock held. */
static int can_start(const nt_pool *p) {
    if (p->next >= p->n) return 0;
    if (p->stop) return p->drain;
    return p->next < p->base + p->ahead || p->next <= p->want;
}

static void *worker(void *arg) {
    nt_pool *p = arg;
    int nice = 0;             /* this thread's (a new thread's is the process's: 0 here) */
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (can_start(p)) {
            slot *s = p->s[p->next++];
            int want = p->nice;
            s->state = JOB_RUNNING;
            pthread_mutex_unlock(&p->mu);
            /* Linux: a nice value is a thread's own, set by its thread id */
            if (want != nice && !setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), want))
                nice = want;
            if (s->job.fam)
                s->rc = nt_compile_cached(s->job.fam, &s->job.plan, s->job.arch,
                                          s->job.use_cache, &s->res, s->err, sizeof s->err);
            else
                s->rc = nt_compile_src_cached(&s->job.src, s->job.use_cache, &s->res, s->err,
                                              sizeof s->err);
            if (s->job.discard) nt_cubin_free(&s->res);
            pthread_mutex_lock(&p->mu);
            s->state = JOB_DONE;
            pthread_cond_broadcast(&p->done);
            continue;
        }
        if (p->stop) break;
        pthread_cond_wait(&p->work, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

nt_pool *nt_pool_start(int nthreads, int ahead, char *err, size_t errlen) {
    if (nthreads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n > 0 ? (int)n : 1;
    }
    nt_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->th = calloc((size_t)nthreads, sizeof *p->th))) {
        free(p);
        snprintf(err, errlen, "out of memory starting the compiler pool");
        return NULL;
    }
    p->ahead = ahead > 0 ? ahead : 2 * nthreads;
    p->want = -1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    for (int i = 0; i < nthreads; i++) {
        int e = pthread_create(&p->th[i], NULL, worker, p);
        if (e) {
            snprintf(err, errlen, "cannot start compiler thread %d: %s", i, strerror(e));
            nt_pool_stop(p, 0);
            return NULL;
        }
        p->nth++;
    }
    return p;
}

int nt_pool_threads(const nt_pool *p) { return p->nth; }

int nt_pool_set_nice(nt_pool *p, int nice) {
    if (nice < 0 || nice > 19) return -1;
    pthread_mutex_lock(&p->mu);
    p->nice = nice;
    pthread_mutex_unlock(&p->mu);
    return 0;
}

long nt_pool_submit(nt_pool *p, const nt_job *job) {
    long t = -1;
    slot *s = calloc(1, sizeof *s);
    if (!s) return -1;
    s->job = *job;
    if (job->fam) s->job.arch[sizeof s->job.arch - 1] = 0;
    pthread_mutex_lock(&p->mu);
    if (p->stop) goto out;
    if (p->n == p->cap) {
        long cap = p->cap ? 2 * p->cap : 64;
        slot **q = realloc(p->s, (size_t)cap * sizeof *q);
        if (!q) goto out;
        p->s = q;
        p->cap = cap;
    }
    t = p->n;
    p->s[p->n++] = s;
    s = NULL;
    pthread_cond_signal(&p->work);
out:
    pthread_mutex_unlock(&p->mu);
    free(s);
    return t;
}

int nt_pool_wait(nt_pool *p, long ticket, nt_cubin *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&p->mu);
    if (ticket < 0 || ticket >= p->n || !p->s[ticket]) {
        pthread_mutex_unlock(&p->mu);
        snprintf(err, errlen, "compiler pool: ticket %ld unknown or already taken", ticket);
        out->status = NT_COMPILE_ERROR;
        return -1;
    }
    if (ticket > p->want) {
        p->want = ticket;
        pthread_cond_broadcast(&p->work);
    }
    slot *s = p->s[ticket];
    while (s->state != JOB_DONE) pthread_cond_wait(&p->done, &p->mu);
    p->s[ticket] = NULL;
    while (p->base < p->n && !p->s[p->base]) p->base++;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    *out = s->res;
    int rc = s->rc;
    if (rc) snprintf(err, errlen, "%s", s->err);
    free(s);
    return rc;
}

void nt_pool_stop(nt_pool *p, int drain) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    p->drain = drain;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nth; i++) pthread_join(p->th[i], NULL);
    for (long i = 0; i < p->n; i++)
        if (p->s[i]) {
            nt_cubin_free(&p->s[i]->res);
            free(p->s[i]);
        }
    free(p->s);
    free(p->th);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
