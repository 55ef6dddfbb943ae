/* gpulock.h -- one normtune run per GPU at a time, on this host.
 *
 * Two runs timing on one GPU disturb each other's measurements, and both
 * would store what they measured as the truth.  `run` takes an exclusive
 * lock named after the GPU's UUID (flock on a file in $TMPDIR, else /tmp)
 * before it touches the GPU, and keeps it to the end: a second run on the
 * same GPU, into any database, is refused at once with who holds it.  The
 * lock goes with the process (a crash or kill -9 releases it) and is not
 * inherited across the exec of run's restart after a lost CUDA context. */
#ifndef NT_GPULOCK_H
#define NT_GPULOCK_H

#include <stddef.h>

/* Lock the GPU with UUID uuid: a descriptor to keep open (closing it, or
 * exiting, releases the lock), or -1 with a message: held by another
 * process (its pid and command, where the lock file says), or the lock
 * file cannot be made. */
int nt_gpu_lock(const char *uuid, char *err, size_t errlen);

#endif
