/* gate.c -- see gate.h.  The wait is a cudaLaunchHostFunc callback blocking
 * on a condition variable, with a deadline of GATE_TIMEOUT_S. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "tuner/gate.h"

#define GATE_TIMEOUT_S 2

struct nt_gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open;
    int timed_out;
};

nt_gate *nt_gate_new(void) {
    nt_gate *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->open = 1;
    return g;
}

void nt_gate_free(nt_gate *g) {
    if (!g) return;
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

static void CUDART_CB gate_wait(void *arg) {
    nt_gate *g = arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += GATE_TIMEOUT_S;
    pthread_mutex_lock(&g->mu);
    while (!g->open)
        if (pthread_cond_timedwait(&g->cv, &g->mu, &until) == ETIMEDOUT) {
            g->timed_out = !g->open;
            break;
        }
    pthread_mutex_unlock(&g->mu);
}

cudaError_t nt_gate_close(nt_gate *g, cudaStream_t st) {
    pthread_mutex_lock(&g->mu);
    g->open = 0;
    pthread_mutex_unlock(&g->mu);
    cudaError_t e = cudaLaunchHostFunc(st, gate_wait, g);
    if (e != cudaSuccess) nt_gate_open(g);
    return e;
}

void nt_gate_open(nt_gate *g) {
    pthread_mutex_lock(&g->mu);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

int nt_gate_timed_out(nt_gate *g) {
    pthread_mutex_lock(&g->mu);
    int t = g->timed_out;
    g->timed_out = 0;
    pthread_mutex_unlock(&g->mu);
    return t;
}
