/* runner.h -- the GPU runner: an nt_evaluator that measures on a CUDA device.
 *
 * nt_runner_open finds the device (a clear error when there is none), reads
 * its metadata, and measures its copy bandwidth on request.  The evaluator it
 * hands out follows the method of the design brief for every variant:
 * seeded random inputs, NaN-poisoned outputs and workspace, validation
 * against the float64 reference (every element), two more runs compared
 * bitwise, then CUDA events around the whole chain, a warm-up, and samples
 * until the 95% confidence interval of the median is within rel_ci or
 * max_samples is reached, rotating among input sets that together hold at
 * least 3x the L2 so the cache cannot serve them.
 *
 * Compilation goes through a pool of NVRTC threads (tuner/compile.h) fed by
 * the evaluator's prefetch hook, so compiling runs ahead of timing. */
#ifndef NT_RUNNER_H
#define NT_RUNNER_H

#include <stddef.h>
#include <stdint.h>
#include "kernels/nt.h"
#include "tuner/compile.h"

typedef struct nt_runner nt_runner;

typedef struct nt_runner_opts {
    int device;               /* CUDA device ordinal (--gpu) */
    const char *select;       /* or NULL; else the device whose UUID (or UUID
                                 prefix) or name matches (--device) */
    uint64_t seed;            /* input seed */
    int jobs;                 /* compiler threads, <= 0: online CPUs */
    int use_cache;            /* NVRTC disk cache */
    double eps;               /* the ops' epsilon */
    int check_only;           /* validate only: one set of inputs, no
                                 yardstick, one run checked against the
                                 float64 reference, neither the determinism
                                 runs nor timing (a result's time is 0); for
                                 the sanitizers, which slow every launch
                                 (tests/gpu/sanitize.sh) */
} nt_runner_opts;

/* Open the device.  Returns 0, or -1 with a message when there is no usable
 * device: it says why (no driver, a driver too old, no device, no match
 * for --device) and which commands work without a GPU. */
int nt_runner_open(nt_runner **out, const nt_runner_opts *o, char *err, size_t errlen);

/* The GPUs present, by CUDA ordinal: up to max of them into out (name,
 * UUID, compute capability, SMs, memory clock: the device model), without
 * opening any.  Their number, or -1 with why there is none, as
 * nt_runner_open says it. */
int nt_runner_list(nt_device *out, int max, char *err, size_t errlen);
void nt_runner_close(nt_runner *r);

/* The source of the validation kernels and the yardsticks (kernels/
 * check.cuh with nt_args.h and traffic.h) for arch, as the runner compiles
 * it, with the name expressions of part 0 (nt_check_err, nt_check_diff,
 * nt_traffic, nt_traffic_nc) or 1 (nt_traffic_flat, nt_traffic_flat_nc,
 * nt_fill_dev): a source names at most NT_MAX_LAUNCH, and the cubin of
 * either holds all seven (extern "C"). */
void nt_check_source(nt_csrc *src, const char *arch, int part);

/* The source of op's float64 reference on the device (its dref.cuh with
 * nt_args.h, dref.h and its tensors.h) for arch, with its kernels' names
 * in launch order.  0, or -1 with a message when the op names none or a
 * source is not embedded. */
int nt_dref_source(nt_csrc *src, const nt_op *op, const char *arch, char *err, size_t errlen);

/* Measure device-to-device copy bandwidth (bytes read + written per second,
 * in GB/s) with a 1 GiB copy, median of 20 after warm-up.  First keep the
 * GPU copying for settle_s seconds: a GPU that starts a sweep idle and cool
 * runs its first, clock-bound shapes up to ~1.5% faster than it does later. */
int nt_runner_copy_bw(nt_runner *r, double settle_s, double *gbps, char *err, size_t errlen);

/* The evaluator (ctx = r).  ev->copy_gbps is 0 until set by the caller. */
void nt_runner_evaluator(nt_runner *r, nt_evaluator *ev);

/* The memory one problem needs: elements and bytes per tensor, the bytes of
 * one rotating set (the tensors with M rows), how many sets (together >= 3x
 * the L2, at most 64), and host and device bytes in all (inputs, outputs,
 * the float64 reference of every output and its scratch, a copy of every
 * output for the bitwise check; on the host, the rows it recomputes).
 * Every product is overflow-checked.  0, or -1 with a message naming the
 * shape when a size does not fit in size_t.  No GPU needed (tested in
 * make test). */
typedef struct nt_shape_mem {
    size_t elems[NT_MAX_TENSORS], tbytes[NT_MAX_TENSORS]; /* per tensor */
    size_t set_bytes;         /* one rotating set */
    int sets;                 /* rotating sets */
    size_t host, device;      /* bytes in all */
} nt_shape_mem;
int nt_shape_mem_plan(const nt_problem *s, int64_t l2_bytes, nt_shape_mem *m, char *err,
                      size_t errlen);

/* Where the evaluator's wall time went, in seconds per phase since the
 * runner was opened: waiting for a compile (or a cache read); once per
 * problem, its inputs (drawn on the device), its float64 reference
 * (computed on the device, checked on the host) and its yardstick;
 * loading the cubin; the
 * validation and determinism runs; the timed runs.  Indexed by
 * NT_PHASE_*. */
enum { NT_PHASE_COMPILE, NT_PHASE_INPUTS, NT_PHASE_REFERENCE, NT_PHASE_YARDSTICK,
       NT_PHASE_LOAD, NT_PHASE_CHECK, NT_PHASE_TIME, NT_RUNNER_NPHASES };
const double *nt_runner_phases(const nt_runner *r);

/* What the planner needs of the device. */
const nt_devinfo *nt_runner_devinfo(const nt_runner *r);

/* 1 once the CUDA context is unusable (a kernel faulted): the process must
 * restart to go on. */
int nt_runner_broken(const nt_runner *r);

#endif
