/* compile.h -- NVRTC compilation of kernel variants, a disk cache of cubins,
 * and a pool of compiler threads that runs ahead of the timing thread.
 *
 * A variant is compiled from a main source ("#include \"<family source>\"")
 * plus the embedded kernel headers (nt_kernel_names/texts), with one NVRTC
 * name expression per launch of its plan.  The result, an nt_cubin, holds the
 * cubin bytes, the lowered (mangled) name of each launch and the resources
 * ptxas reported (registers, spill stores, static shared memory) per kernel.
 *
 * Cache: one file per key in $NORMTUNE_CACHE, else $XDG_CACHE_HOME/normtune,
 * else $HOME/.cache/normtune.  The key is FNV-1a 64 over the source texts,
 * the options, the name expressions and the NVRTC version; entries are
 * written to a temporary file and renamed, and carry a checksum, so a torn or
 * corrupt entry is never used (it is recompiled and rewritten).
 *
 * Pool: nt_pool_submit never blocks (jobs are queued unbounded, they are a
 * few hundred bytes each); the workers compile at most `ahead` jobs beyond the
 * oldest result not yet taken, so memory for finished cubins stays bounded.
 * nt_pool_wait takes results back in any order, normally submission order.
 *
 * Every external symbol starts nt_ (cmd_compile is the CLI entry point,
 * declared in tuner/cli.h). */
#ifndef NT_COMPILE_H
#define NT_COMPILE_H

#include <stddef.h>
#include "../kernels/family.h"

#define NT_LOWERED_LEN 256    /* a mangled kernel name, with NUL */
#define NT_MAX_COPTS 8        /* extra NVRTC options of one source */

/* The result of compiling one variant.  data is malloc'd and owned by the
 * struct: release it with nt_cubin_free (which leaves a zeroed struct). */
typedef struct nt_cubin {
    void *data;               /* the cubin image */
    size_t size;              /* bytes of data */
    int nkern;                /* name expressions = launches of the plan */
    char lowered[NT_MAX_LAUNCH][NT_LOWERED_LEN]; /* mangled name per launch */
    int regs[NT_MAX_LAUNCH];  /* registers per thread, per launch */
    int spill[NT_MAX_LAUNCH]; /* spill store bytes, per launch */
    int smem[NT_MAX_LAUNCH];  /* static shared memory bytes, per launch */
    int max_regs, max_spill, max_smem; /* over the launches */
    int status;               /* NT_OK or NT_COMPILE_ERROR (kernels/nt.h) */
    int hit;                  /* 1: came from the disk cache */
    double ms;                /* wall time of the lookup + compile */
    char key[17];             /* cache key, 16 hex digits */
} nt_cubin;

/* One program for NVRTC: what nt_compile_src compiles.  Pointers are
 * borrowed; they must stay valid until the compile returns (for a pool job:
 * until nt_pool_wait returns the result). */
#define NT_MAX_SOURCES 8      /* embedded sources of one family */

typedef struct nt_csrc {
    const char *name;         /* program name for messages ("persistent.cu") */
    const char *text;         /* main source text, or NULL: use textbuf */
    char textbuf[160];        /* main text owned by the struct (for_plan) */
    int nhdr;                 /* headers NVRTC may #include by name */
    const char *const *hdr_names;
    const char *const *hdr_texts;
    const char *hdrbuf[2][NT_MAX_SOURCES]; /* names, texts owned by the struct
                                 (for_plan: the family's sources) */
    int nexpr;                /* name expressions, at most NT_MAX_LAUNCH */
    const char *expr[NT_MAX_LAUNCH];
    const char *arch;         /* "sm_90a" */
    int nopt;                 /* extra options (after the standard ones) */
    const char *opt[NT_MAX_COPTS];
} nt_csrc;

/* Free the cubin bytes and zero *c.  Safe on a zeroed struct. */
void nt_cubin_free(nt_cubin *c);

/* Milliseconds on the monotonic clock (compile times are measured with it). */
double nt_now_ms(void);

/* Compile src with NVRTC, no cache.  Returns 0 with *out filled (status
 * NT_OK), or -1 with status NT_COMPILE_ERROR and the reason -- for a source
 * error, the NVRTC log -- in err.  *out owns its data either way. */
int nt_compile_src(const nt_csrc *src, nt_cubin *out, char *err, size_t errlen);

/* Like nt_compile_src, through the disk cache when use_cache: a valid entry
 * is returned with out->hit = 1, else the source is compiled and, on
 * success, stored (a cache that cannot be written is not an error). */
int nt_compile_src_cached(const nt_csrc *src, int use_cache, nt_cubin *out,
                          char *err, size_t errlen);

/* The cache key of src: 16 hex digits into key[17]. */
void nt_compile_key(const nt_csrc *src, char key[17]);

/* Fill src for family f and plan: main source "#include \"<f->source>\""
 * (in src->textbuf), the embedded headers, the plan's name expressions.  The
 * expressions point into plan: keep plan alive while src is used. */
void nt_csrc_for_plan(const nt_family *f, const nt_plan *plan, const char *arch,
                      nt_csrc *src);

/* Compile one variant (family + plan) for arch (e.g. "sm_90a"), no cache.
 * Returns 0, or -1 with the NVRTC log in err. */
int nt_compile_one(const nt_family *f, const nt_plan *plan, const char *arch,
                   nt_cubin *out, char *err, size_t errlen);

/* Compile one variant through the disk cache (when use_cache).  out->hit
 * says whether it was a hit. */
int nt_compile_cached(const nt_family *f, const nt_plan *plan, const char *arch,
                      int use_cache, nt_cubin *out, char *err, size_t errlen);

/* The cache directory into buf (created when missing).  0, or -1 with a
 * message (no HOME, cannot create). */
int nt_cache_dir(char *buf, size_t len, char *err, size_t errlen);

/* NVRTC version as "13.0" into buf. */
void nt_nvrtc_version(char *buf, size_t len);

/* ---- compiler pool ----------------------------------------------------- */

/* A job: a family variant (fam != NULL: fam + plan, copied at submit) or a
 * raw source (fam == NULL: src, whose pointers the caller keeps alive). */
typedef struct nt_job {
    const nt_family *fam;
    nt_plan plan;
    nt_csrc src;
    char arch[16];            /* for fam jobs */
    int use_cache;
    int discard;              /* drop the cubin once compiled: the job only
                                 fills the disk cache (nobody waits for it) */
} nt_job;

typedef struct nt_pool nt_pool;

/* Start nthreads compiler threads (<= 0: the number of online CPUs) that
 * compile at most `ahead` jobs beyond the oldest result not yet taken
 * (<= 0: 2 x nthreads).  Returns the pool, or NULL with a message. */
nt_pool *nt_pool_start(int nthreads, int ahead, char *err, size_t errlen);

/* Run the pool's compiles at nice value `nice` (0 .. 19, the higher the
 * lower the priority), each thread setting its own as it starts its next
 * job: a background compile then yields the CPUs to the compiles a search
 * waits for, and to the thread that times.  0, or -1 (out of range). */
int nt_pool_set_nice(nt_pool *p, int nice);

/* Queue a job (copied).  Never blocks.  Returns its ticket (0, 1, 2, ... in
 * submission order), or -1 when the pool is stopping. */
long nt_pool_submit(nt_pool *p, const nt_job *job);

/* Block until job `ticket` is compiled and move its result into *out (the
 * caller then owns it).  Returns 0 (status NT_OK), or -1 with the message in
 * err (a compile error, or a ticket that is unknown or already taken). */
int nt_pool_wait(nt_pool *p, long ticket, nt_cubin *out, char *err, size_t errlen);

/* Number of compiler threads. */
int nt_pool_threads(const nt_pool *p);

/* Stop the pool and free it.  drain = 1: compile every queued job first (so
 * they land in the cache); drain = 0: drop jobs not started yet.  Running
 * compilations always finish (NVRTC cannot be interrupted).  Results never
 * taken are freed.  NULL is a no-op. */
void nt_pool_stop(nt_pool *p, int drain);

#endif
