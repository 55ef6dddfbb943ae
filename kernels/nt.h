/* nt.h -- the shared vocabulary at the bottom of the tree: timing settings,
 * result status, one result, the device, and the evaluator seam
 * (problem, family, params, timing) -> result.  Dtypes, ops, problems,
 * families and params are in kernels/family.h, which this header includes.
 *
 * search/, db/, lua/ and tuner/ include it; it includes nothing outside
 * kernels/.  The sweep driver (tuner/sweep.c) never talks to a GPU directly:
 * it hands each proposal to an nt_evaluator.  The GPU runner
 * (tuner/runner.c) is one evaluator; the CPU tests use a fixture evaluator
 * that lives in tests/.  Plain structs only. */
#ifndef NT_NT_H
#define NT_NT_H

#include <stdint.h>
#include "../kernels/family.h"

#define NT_MAX_SAMPLES 2000   /* hard cap on timing samples per result */
#define NT_MSG_LEN 512
#define NT_MAX_ERRS 8         /* named errors per result */
#define NT_TENSOR_LEN 16      /* an output tensor's name, with its NUL */

/* Timing settings of a sweep (script field `timing`).  Part of the key that
 * decides whether a result can be reused. */
typedef struct nt_timing {
    int warmup;               /* untimed runs before sampling */
    int min_samples;          /* at least this many samples */
    int max_samples;          /* at most this many (<= NT_MAX_SAMPLES) */
    double rel_ci;            /* stop when the 95% CI of the median is within
                                 this fraction of the median */
    double race_us;           /* racing: stop once the CI shows the variant more
                                 than NT_RACE slower than this (the best median
                                 of its problem so far); 0 = no racing.  Set per
                                 measurement by the driver, not part of the key */
} nt_timing;

#define NT_RACE 0.02          /* racing: a variant this much slower cannot win */
#define NT_REMATCH_MAX 6      /* variants re-measured together, at most */
#define NT_REMATCH_ROUNDS 8   /* rounds of an interleaved re-measure */
#define NT_REMATCH_SAMPLES 6  /* samples of each variant per round */

/* Status of one measurement.  Only NT_OK results are exported. */
typedef enum nt_status {
    NT_OK = 0,
    NT_COMPILE_ERROR,         /* NVRTC refused the source */
    NT_RESOURCES,             /* too many registers / shared memory / threads */
    NT_LAUNCH_ERROR,          /* a launch or a kernel failed */
    NT_WRONG,                 /* validation against the reference failed */
    NT_NONDETERMINISTIC,      /* repeated runs differ bitwise */
    NT_UNSUPPORTED,           /* the family refuses this shape */
    NT_RACED,                 /* sampling stopped early: the CI showed it more
                                 than NT_RACE slower than the best so far */
    NT_NSTATUS
} nt_status;

/* Name of a status ("ok", "compile_error", ...); "?" if out of range. */
const char *nt_status_name(int status);
/* Status from its name; -1 if unknown. */
int nt_status_parse(const char *name);

/* One named error of a result: an output tensor's relative L2 error
 * against the float64 reference and the tolerance it was checked against
 * (0: none recorded). */
typedef struct nt_error {
    char tensor[NT_TENSOR_LEN]; /* the output's name in the op's tensor table */
    double value;             /* relative L2 error */
    double tol;               /* the tolerance it was checked against (the
                                 plan's); 0 if unknown */
    double required;          /* the tolerance its dtype asks for; 0 if
                                 unknown.  value > required: the result is
                                 not eligible for this problem's dtypes */
} nt_error;

/* One result.  samples[] holds nsamples raw times in microseconds; each is
 * the mean of `reps` back-to-back runs of the chain between two events. */
typedef struct nt_result {
    int status;               /* nt_status */
    char msg[NT_MSG_LEN];     /* why it failed, or a note */
    double median_us, p10_us, p90_us; /* over samples */
    int nsamples;
    double samples[NT_MAX_SAMPLES];
    double bytes;             /* minimum bytes moved (nt_problem_bytes) */
    double gbps;              /* bytes / median, GB/s (1e9) */
    double pct_copy;          /* gbps / copy bandwidth of the sweep, in % */
    double traffic_gbps;      /* the problem's yardstick, measured in the same
                                 run: a kernel with the op's own traffic (it
                                 reads the op's M x N inputs and writes its
                                 M x N outputs), bytes it moves / its median;
                                 0 if none */
    nt_error errs[NT_MAX_ERRS]; /* errors per output tensor, errs[0..nerr) */
    int nerr;
    int regs;                 /* max registers per thread over the chain */
    int spill;                /* max spill bytes (stores) over the chain */
    int smem;                 /* max static + dynamic shared bytes per block */
    int grid;                 /* blocks of the main kernel as launched */
    int reps;                 /* chain runs averaged in each sample */
} nt_result;

/* What is recorded of a device. */
typedef struct nt_device {
    char name[128];
    char uuid[64];            /* "GPU-xxxxxxxx-..." or "none" */
    int cc_major, cc_minor;
    int sms;
    int64_t l2_bytes;
    int sm_clock_khz, mem_clock_khz;
    int mem_bus_bits;
    char driver[32], runtime[32], nvrtc[32];
} nt_device;

/* An evaluator.  eval() fills *out and returns 0; it returns -1 only when the
 * evaluator itself is broken (not for a failing variant, which is a result
 * with a status) or was interrupted, with a message in out->msg. */
typedef struct nt_evaluator {
    void *ctx;
    int (*eval)(void *ctx, const nt_family *fam, const nt_params *p,
                const nt_problem *pr, const nt_timing *t, nt_result *out);
    /* Optional (may be NULL): a hint that eval will later be called with
     * these arguments, in this order, so work such as compilation can start
     * ahead.  The driver calls it for upcoming proposals. */
    void (*prefetch)(void *ctx, const nt_family *fam, const nt_params *p,
                     const nt_problem *pr);
    /* Optional (may be NULL): before anything is measured, the driver names
     * each problem of the sweep once, so that the evaluator can size
     * buffers it keeps for the largest rather than grow them. */
    void (*expect)(void *ctx, const nt_problem *pr);
    /* Optional (may be NULL): measure the n (2..NT_REMATCH_MAX) variants
     * fam[i], p[i] of problem pr, each measured ok by eval before, again
     * and interleaved: NT_REMATCH_ROUNDS rounds of NT_REMATCH_SAMPLES
     * samples of each in turn (the first of a round moving on by one each
     * round), so that what drifts while they are timed touches all of
     * them alike.  us[i] gets the median of variant i's samples, ns[i]
     * their number.  alone: each sample one run of the chain alone between
     * two events after the L2 is flushed (as `make bench` times a call),
     * else a sample is as eval's (chains back to back).  0, or -1 with a
     * message (the evaluator broke; a variant that fails now is an error
     * too). */
    int (*rematch)(void *ctx, int n, const nt_family *const *fam, const nt_params *p,
                   const nt_problem *pr, int alone, double *us, int *ns, char *msg,
                   size_t msglen);
    nt_device dev;            /* the device results are recorded under */
    double copy_gbps;         /* measured copy bandwidth, 0 if none */
    char arch[16];            /* "sm_90a" */
} nt_evaluator;

#endif
