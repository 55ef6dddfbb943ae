/* yardstick.h -- the runner's yardsticks remembered within a run.
 *
 * A problem's yardstick (tuner/runner.c, measure_traffic) is the fastest of
 * four traffic kernels over its M x N tensors, and depends only on the
 * bytes they move: M, the 16-byte vectors a row of each tensor, which
 * tensors are written, and the timing they are measured with.  Problems
 * that differ only in dtypes of the same size (bf16 and fp16) or in a
 * one-row tensor (an fp32 weight) move the same bytes, so the runner times
 * the four kernels once per key and hands the bandwidth to every later
 * problem with that key (the default forward sweep's 266 problems have
 * 161 keys, the backward's 118 have 73).  No CUDA here, so that CI can
 * test it. */
#ifndef NT_YARDSTICK_H
#define NT_YARDSTICK_H

#include "kernels/nt.h"
#include "kernels/traffic.h"

#define NT_YARD_MAX 512       /* keys remembered; the oldest goes first */

typedef struct nt_yard_key {
    long long M;
    nt_traffic_desc d;
    int warmup, min_samples, max_samples;
    double rel_ci;
} nt_yard_key;

typedef struct nt_yard_cache {
    nt_yard_key key[NT_YARD_MAX];
    double gbps[NT_YARD_MAX];
    int n;                    /* keys held */
    int next;                 /* where the next one goes once full */
} nt_yard_cache;

/* The key of M rows of traffic d measured with timing t (race_us, which
 * the yardstick never uses, left out). */
nt_yard_key nt_yard_key_of(long long M, const nt_traffic_desc *d, const nt_timing *t);
/* The bandwidth remembered for k, or 0 when none is. */
double nt_yard_find(const nt_yard_cache *c, const nt_yard_key *k);
/* Remember gbps (> 0) for k: a key already held is updated. */
void nt_yard_put(nt_yard_cache *c, const nt_yard_key *k, double gbps);

#endif
