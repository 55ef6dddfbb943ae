/* gate.h -- hold a stream until a batch of launches is queued in full.
 *
 * Timing back-to-back chains of ~10 us measures the host, not the GPU, when
 * the host enqueues launches more slowly than the GPU runs them (compiler
 * threads on every core make that likely).  A closed gate is a host function
 * on the stream that waits for nt_gate_open(): the batch is queued behind
 * it, then runs at the GPU's pace.  Keep a batch to NT_GATE_MAX_LAUNCHES: a
 * full launch queue would block the host while the gate holds the stream;
 * the gate gives up after a timeout so that this cannot hang, and says so.
 *
 * Used by the runner (tuner/runner.c) and the library's speed test
 * (tests/gpu/test_lib.c), so both time the same way. */
#ifndef NT_GATE_H
#define NT_GATE_H

#include <cuda_runtime.h>

#define NT_GATE_MAX_LAUNCHES 256 /* launches queued behind a closed gate, at most */

typedef struct nt_gate nt_gate;

nt_gate *nt_gate_new(void);           /* NULL when out of memory */
void nt_gate_free(nt_gate *g);        /* after the stream is idle */
/* Enqueue the wait on st; work enqueued after it starts once opened. */
cudaError_t nt_gate_close(nt_gate *g, cudaStream_t st);
void nt_gate_open(nt_gate *g);
/* After the stream passed the gate: 1 when it stopped waiting on its own
 * (the host was not done queueing in time), else 0.  Clears the flag. */
int nt_gate_timed_out(nt_gate *g);

#endif
