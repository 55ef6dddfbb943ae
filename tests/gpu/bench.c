/* bench.c -- `make bench`: the production library (build/libnormtune.a)
 * timed at a fixed list of shapes, every op of the registry, beside
 * yardsticks that move the same bytes, in one run.
 *
 *   bench [--shapes FILE] [--csv FILE] [--plot-csv FILE] [--iters K]
 *         [--warmup K] [--flush-mb MB]
 *   bench --list-shapes [--shapes FILE]     the shapes, "M N" a line
 *
 * The shapes are read from tests/gpu/bench_shapes.txt (the one list; the
 * peers scripts read it too).  For each shape, every op of the registry
 * (kernels/ops.c) is called through the generated call table
 * build/lib/nt_api_calls.h, in the op's default dtypes (bf16 activations
 * and weight; the backward's dw fp32): once writing every output, and once
 * more without each output the op calls optional (the forward: "y+rstd"
 * and "y").  A shape the library refuses is printed as "refused (<status>)".
 *
 * Yardsticks, in the same run: "copy", cudaMemcpyAsync of an M x N bf16
 * tensor (reads one, writes one: the forward's traffic), and "add", a
 * kernel (bench_add.cu) reading two M x N bf16 tensors and writing one (the
 * backward's traffic).  An op's yardstick follows from its table: one M x N
 * input and one M x N output is copy, two inputs and one output is add.
 *
 * Timing: every call alone between two CUDA events, after the L2 is
 * flushed by writing a buffer (256 MB, at least 4x the L2) outside the
 * events; --warmup rounds, then --iters rounds (40), each round one call
 * of every contender of the shape (yardsticks included) in an order
 * rotated by one from round to round, so that a drift of the GPU favours
 * none; the median of each.  Reported: the time, the yardstick's time and
 * % of the yardstick (its time / the op's time).
 *
 * Sanity (not the float64 check, which tests/gpu/test_lib.c does): before
 * timing, every contender runs once into outputs filled with NaN; every
 * output element must be finite; the yardsticks' outputs must hold the
 * copy and the sum.  Inputs are random (the ops' fill ranges, seeded).
 *
 * Output: a table per op on stdout; --csv FILE one row per op, shape and
 * contender (op,M,N,contender,us,yardstick,us_yardstick,pct; "-" where
 * there is no time); --plot-csv FILE the same percentages one column per
 * op and contender, one row per shape, for `normtune plot --csv`.
 *
 * Exit status: 0; 1 when there is no CUDA device, a call fails, an output
 * is not finite or a shape's buffers do not fit in device memory (the
 * other shapes still run); 2 for bad arguments or a bad shape file. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "kernels/family.h"
#include "kernels/normtune.h"
#include "kernels/ref.h"
#include "tests/gpu/bench_add.h"
#include "nt_api_calls.h"

#define EPS 1e-5f
#define MAX_SHAPES 256
#define MAX_CONT 16                /* contenders of one shape, yardsticks included */
#define TILE ((size_t)1 << 20)     /* inputs: this many seeded values, tiled */
#define CHECK_ELEMS ((size_t)1 << 22) /* yardstick outputs checked at the ends */

enum { K_COPY, K_ADD, K_OP };
static const char *const yard_name[] = {"copy", "add"};

typedef struct shape {
    long long M, N;
} shape;

/* One op's buffers at one shape. */
typedef struct opbufs {
    nt_problem p;
    void *d[NT_MAX_TENSORS];
    size_t bytes[NT_MAX_TENSORS];
    void *ws;
    size_t wsb;
} opbufs;

/* One timed thing at one shape: a yardstick or an op with some outputs. */
typedef struct cont {
    int kind;                      /* K_COPY, K_ADD or K_OP */
    const nt_op *op;               /* K_OP */
    const nt_api_call *api;
    const opbufs *ob;              /* K_OP: the op's buffers */
    char name[64];                 /* "y+rstd"; the yardstick's name */
    int yard;                      /* K_COPY or K_ADD: its yardstick; -1 none */
    void *t[NT_MAX_TENSORS];       /* the call's tensors (NULL: output not written) */
    normtune_status st;            /* SUCCESS, or why the library refused */
    char config[220];              /* family and params it runs */
    double us;                     /* median; NAN when not timed */
} cont;

/* One result row, kept for the tables and the CSV files. */
typedef struct row {
    int shape;
    const nt_op *op;
    char name[64];
    int yard;                      /* -1: none */
    double us, yus;                /* NAN: none */
    char note[96];                 /* "refused (...)" or "" */
} row;

static struct cudaDeviceProp prop;
static int iters = 40, warmup = 5;
static size_t flush_bytes = (size_t)256 << 20;
static int failures;

#define CU(call)                                                                        \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "bench: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,        \
                    cudaGetErrorString(e_));                                            \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static void usage(FILE *f) {
    fprintf(f,
            "usage: bench [--shapes FILE] [--csv FILE] [--plot-csv FILE] [--iters K]\n"
            "             [--warmup K] [--flush-mb MB]\n"
            "       bench --list-shapes [--shapes FILE]\n\n"
            "Times every op of the production library at the shapes of FILE\n"
            "(default tests/gpu/bench_shapes.txt) beside a device copy and an add\n"
            "kernel, each call alone after an L2 flush, the median of K (40) calls.\n"
            "  --list-shapes    print the shapes, \"M N\" a line, and exit (no GPU needed)\n"
            "  --csv FILE       one row per op, shape and contender\n"
            "  --plot-csv FILE  %% of the yardstick, a column per op and contender\n"
            "  --iters K        timed calls per contender (1-10000, default 40)\n"
            "  --warmup K       untimed rounds first (0-1000, default 5)\n"
            "  --flush-mb MB    bytes written between calls (default 256, at least 4x L2)\n");
}

/* A whole decimal number in [lo, hi] from s, or -1 into *bad. */
static long long number(const char *s, long long lo, long long hi, int *bad) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi) {
        *bad = 1;
        return -1;
    }
    return v;
}

/* Read the shape file path into s[] (at most max): "M N" a line, '#'
 * comments, blank lines skipped.  The count, or -1 with a message on
 * stderr. */
static int read_shapes(const char *path, shape *s, int max) {
    FILE *f = fopen(path, "r");
    char line[512];
    int n = 0, ln = 0;
    if (!f) {
        fprintf(stderr, "bench: cannot read the shape file %s: %s\n", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        ln++;
        char *hash = strchr(line, '#'), *save = NULL, *tok[3];
        if (hash) *hash = 0;
        int nt = 0;
        for (char *t = strtok_r(line, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save))
            if (nt < 3) tok[nt++] = t; else nt = 3;
        if (nt == 0) continue;
        int bad = nt != 2;
        for (int k = 0; k < nt && k < 2 && !bad; k++)   /* digits only, as peers_common.py */
            bad = (int)strspn(tok[k], "0123456789") != (int)strlen(tok[k]);
        long long M = bad ? 0 : number(tok[0], 1, 1ll << 40, &bad);
        long long N = bad ? 0 : number(tok[1], 1, 1ll << 40, &bad);
        if (bad) {
            fprintf(stderr, "bench: %s:%d: want \"M N\" (two positive whole numbers)\n", path, ln);
            fclose(f);
            return -1;
        }
        if (n == max) {
            fprintf(stderr, "bench: %s: more than %d shapes\n", path, max);
            fclose(f);
            return -1;
        }
        s[n].M = M;
        s[n].N = N;
        n++;
    }
    fclose(f);
    if (n == 0) fprintf(stderr, "bench: %s: no shapes\n", path);
    return n ? n : -1;
}

/* The op's calls in the generated table; exits when the library has none. */
static const nt_api_call *api_of(const nt_op *op) {
    for (int i = 0; nt_api_calls[i].op; i++)
        if (!strcmp(nt_api_calls[i].op, op->name)) return &nt_api_calls[i];
    fprintf(stderr, "bench: op %s has no calls in nt_api_calls.h (rebuild: make lib)\n", op->name);
    exit(1);
}

/* The op's yardstick from its table: M x N inputs and outputs counted. */
static int yard_of(const nt_op *op) {
    int in = 0, out = 0;
    for (int i = 0; i < op->ntensors; i++)
        if (op->tensors[i].rows == NT_DIM_M && op->tensors[i].cols == NT_DIM_N)
            op->tensors[i].role == NT_IN ? in++ : out++;
    return in == 1 && out == 1 ? K_COPY : in == 2 && out == 1 ? K_ADD : -1;
}

/* cudaMalloc that reports a failure (out of memory) instead of exiting. */
static int dalloc(void **p, size_t bytes) {
    *p = NULL;
    if (cudaMalloc(p, bytes ? bytes : 256) == cudaSuccess) return 0;
    cudaGetLastError();
    *p = NULL;
    return -1;
}

/* Fill n elements of dtype at device d with values uniform in [lo, hi):
 * TILE seeded values copied in, then doubled on the device (a host fill
 * of 2^29 values takes seconds). */
static void fill(void *d, int dtype, size_t n, double lo, double hi, uint64_t seed) {
    size_t es = (size_t)nt_dtypes[dtype].size, tn = n < TILE ? n : TILE, total = n * es;
    void *h = malloc(tn * es);
    if (!h) exit(1);
    nt_fill(dtype, h, tn, lo, hi, seed);
    CU(cudaMemcpy(d, h, tn * es, cudaMemcpyHostToDevice));
    for (size_t have = tn * es; have < total; have *= 2)
        CU(cudaMemcpy((char *)d + have, d, total - have < have ? total - have : have,
                      cudaMemcpyDeviceToDevice));
    CU(cudaDeviceSynchronize());
    free(h);
}

/* Is every one of n elements of dtype at host a finite?  The count of
 * those that are not. */
static size_t nonfinite(int dtype, const void *a, size_t n) {
    size_t bad = 0;
    if (dtype == NT_F32) {
        const uint32_t *u = a;
        for (size_t i = 0; i < n; i++) bad += (u[i] & 0x7f800000u) == 0x7f800000u;
    } else {
        const uint16_t *u = a;
        uint16_t e = dtype == NT_BF16 ? 0x7f80 : 0x7c00;
        for (size_t i = 0; i < n; i++) bad += (u[i] & e) == e;
    }
    return bad;
}

/* Enqueue contender c on st. */
static int launch(const cont *c, const void *ya, const void *yb, void *yc,
                  size_t n, cudaStream_t st) {
    if (c->kind == K_COPY) return (int)cudaMemcpyAsync(yc, ya, n * 2, cudaMemcpyDeviceToDevice, st);
    if (c->kind == K_ADD) return bench_add_bf16(ya, yb, yc, n, st);
    const opbufs *ob = c->ob;
    return (int)c->api->run(c->t, ob->p.dtype, ob->p.M, ob->p.N, EPS, ob->ws, ob->wsb, st);
}

/* Does yc hold ya (copy) or ya + yb (add) at both ends of the n elements?
 * 0, or -1 with a message. */
static int check_yard(int kind, const void *ya, const void *yb, const void *yc, size_t n) {
    size_t m = n < 2 * CHECK_ELEMS ? n : CHECK_ELEMS;
    uint16_t *h = malloc(3 * m * 2);
    if (!h) exit(1);
    int bad = 0;
    for (int end = 0; end < 2 && !bad; end++) {
        size_t off = end ? n - m : 0;
        CU(cudaMemcpy(h, (const uint16_t *)ya + off, m * 2, cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(h + m, (const uint16_t *)yb + off, m * 2, cudaMemcpyDeviceToHost));
        CU(cudaMemcpy(h + 2 * m, (const uint16_t *)yc + off, m * 2, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < m && !bad; i++) {
            uint16_t want = kind == K_COPY ? h[i]
                : nt_f32_to_bf16(nt_bf16_to_f32(h[i]) + nt_bf16_to_f32(h[m + i]));
            if (h[2 * m + i] != want) {
                fprintf(stderr, "bench: %s: element %zu is 0x%04x, want 0x%04x\n",
                        yard_name[kind], off + i, h[2 * m + i], want);
                bad = 1;
            }
        }
    }
    free(h);
    return bad ? -1 : 0;
}

/* Run op contender c once into NaN-filled outputs: 0 when it succeeds and
 * every output it writes is finite, else -1 with a message. */
static int check_op(const cont *c) {
    const opbufs *ob = c->ob;
    for (int i = 0; i < c->op->ntensors; i++)
        if (c->op->tensors[i].role == NT_OUT) CU(cudaMemset(ob->d[i], 0xff, ob->bytes[i]));
    normtune_status s = c->api->run(c->t, ob->p.dtype, ob->p.M, ob->p.N, EPS, ob->ws, ob->wsb, 0);
    cudaError_t e = cudaDeviceSynchronize();
    if (s != NORMTUNE_SUCCESS || e != cudaSuccess) {
        printf("  FAIL %s %s: %s (cuda: %s)\n", c->op->name, c->name, normtune_strerror(s),
               cudaGetErrorString(e != cudaSuccess ? e : (cudaError_t)normtune_last_cuda_error()));
        return -1;
    }
    for (int i = 0; i < c->op->ntensors; i++) {
        if (c->op->tensors[i].role != NT_OUT || !c->t[i]) continue;
        void *h = malloc(ob->bytes[i]);
        if (!h) exit(1);
        CU(cudaMemcpy(h, ob->d[i], ob->bytes[i], cudaMemcpyDeviceToHost));
        int dt = nt_tensor_dtype(&ob->p, i);
        size_t bad = nonfinite(dt, h, ob->bytes[i] / (size_t)nt_dtypes[dt].size);
        free(h);
        if (bad) {
            printf("  FAIL %s %s: %zu elements of %s are not finite\n", c->op->name, c->name, bad,
                   c->op->tensors[i].name);
            return -1;
        }
    }
    return 0;
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Time contenders c[0..nc) at one shape (see the file comment): c[i].us. */
static void time_all(cont *c, int nc, const void *ya, const void *yb, void *yc,
                     size_t n, void *flush, cudaStream_t st) {
    cudaEvent_t *ev = malloc(sizeof *ev * (size_t)nc * (size_t)iters * 2);
    float *ms = malloc(sizeof *ms * (size_t)iters);
    if (!ev || !ms) exit(1);
    for (int i = 0; i < nc * iters * 2; i++) CU(cudaEventCreate(&ev[i]));
    int flushv = 0;
    for (int r = 0; r < warmup + iters; r++)
        for (int k = 0; k < nc; k++) {
            int j = (r + k) % nc;
            CU(cudaMemsetAsync(flush, ++flushv & 0xff, flush_bytes, st));
            if (r >= warmup) CU(cudaEventRecord(ev[(j * iters + r - warmup) * 2], st));
            int e = launch(&c[j], ya, yb, yc, n, st);
            if (e) {
                fprintf(stderr, "bench: %s %s failed during timing: %d\n",
                        c[j].kind == K_OP ? c[j].op->name : "yardstick", c[j].name, e);
                exit(1);
            }
            if (r >= warmup) CU(cudaEventRecord(ev[(j * iters + r - warmup) * 2 + 1], st));
        }
    CU(cudaStreamSynchronize(st));
    for (int j = 0; j < nc; j++) {
        for (int r = 0; r < iters; r++)
            CU(cudaEventElapsedTime(&ms[r], ev[(j * iters + r) * 2], ev[(j * iters + r) * 2 + 1]));
        qsort(ms, (size_t)iters, sizeof *ms, cmp_float);
        c[j].us = 1e3 * (iters % 2 ? ms[iters / 2] : 0.5 * (ms[iters / 2 - 1] + ms[iters / 2]));
    }
    for (int i = 0; i < nc * iters * 2; i++) cudaEventDestroy(ev[i]);
    free(ev);
    free(ms);
}

/* ---- the variants of an op -------------------------------------------------- */

#define MAX_VAR 8

/* The output sets op is timed with: every output, and every output but
 * one the op calls optional (first).  masks[v] has bit i set when output
 * i is written; names[v] joins their names with '+'.  The count. */
static int variants(const nt_op *op, unsigned *masks, char names[][64]) {
    unsigned all = 0;
    int nv = 0;
    for (int i = 0; i < op->ntensors; i++)
        if (op->tensors[i].role == NT_OUT) all |= 1u << i;
    for (int i = 0; i < op->ntensors && nv < MAX_VAR - 1; i++)
        if (op->tensors[i].role == NT_OUT && op->tensors[i].optional) masks[nv++] = all & ~(1u << i);
    masks[nv++] = all;
    for (int v = 0; v < nv; v++) {
        size_t u = 0;
        names[v][0] = 0;
        for (int i = 0; i < op->ntensors; i++)
            if (masks[v] >> i & 1)
                u += (size_t)snprintf(names[v] + u, 64 - u, "%s%s", u ? "+" : "", op->tensors[i].name);
    }
    return nv;
}

/* ---- one shape ---------------------------------------------------------------- */

static row rows[MAX_SHAPES * NT_MAX_TENSORS * MAX_VAR];
static int nrows;

/* Add a result row. */
static void add_row(int si, const nt_op *op, const char *name, int yard, double us, double yus,
                    const char *note) {
    if (nrows == (int)(sizeof rows / sizeof rows[0])) {
        fprintf(stderr, "bench: too many result rows\n");
        exit(1);
    }
    row *r = &rows[nrows++];
    r->shape = si;
    r->op = op;
    snprintf(r->name, sizeof r->name, "%s", name);
    r->yard = yard;
    r->us = us;
    r->yus = yus;
    snprintf(r->note, sizeof r->note, "%s", note);
}

/* Benchmark shape si: buffers, sanity checks, timing, rows. */
static void bench_shape(int si, const shape *sh, void *flush, cudaStream_t st) {
    static opbufs ob[16];
    static cont c[MAX_CONT];
    int nops = 0, nc = 0;
    size_t n = (size_t)sh->M * (size_t)sh->N;
    void *y[3] = {0};
    int oom = 0;
    for (int i = 0; i < 3; i++) oom |= dalloc(&y[i], n * 2);
    if (!oom) {
        fill(y[0], NT_BF16, n, -2, 2, 1);
        fill(y[1], NT_BF16, n, -1, 1, 2);
    }
    memset(ob, 0, sizeof ob);
    for (int k = 0; k < 2; k++) {
        memset(&c[nc], 0, sizeof c[nc]);
        c[nc].kind = k;
        c[nc].yard = -1;
        snprintf(c[nc].name, sizeof c[nc].name, "%s", yard_name[k]);
        nc++;
    }
    for (int o = 0; nt_ops[o] && !oom; o++, nops++) {
        const nt_op *op = nt_ops[o];
        if (nops == (int)(sizeof ob / sizeof ob[0])) {
            fprintf(stderr, "bench: more ops than the bench has room for\n");
            exit(1);
        }
        opbufs *b = &ob[nops];
        unsigned masks[MAX_VAR];
        char names[MAX_VAR][64];
        int nv = variants(op, masks, names);
        const nt_api_call *api = api_of(op);
        nt_problem_init(&b->p, op, sh->M, sh->N);
        normtune_status s = api->workspace_size(b->p.dtype, sh->M, sh->N, &b->wsb);
        normtune_choice ch;
        if (s == NORMTUNE_SUCCESS) s = api->choice(b->p.dtype, sh->M, sh->N, &ch);
        for (int i = 0; i < op->ntensors && s == NORMTUNE_SUCCESS && !oom; i++) {
            int dt = nt_tensor_dtype(&b->p, i);
            b->bytes[i] = (size_t)nt_tensor_elems(&b->p, i) * (size_t)nt_dtypes[dt].size;
            oom |= dalloc(&b->d[i], b->bytes[i]);
            if (!oom && op->tensors[i].role == NT_IN)
                fill(b->d[i], dt, (size_t)nt_tensor_elems(&b->p, i), op->tensors[i].lo,
                     op->tensors[i].hi, 0x9e3779b97f4a7c15ull * (uint64_t)(o + 1) + (uint64_t)i);
        }
        if (s == NORMTUNE_SUCCESS && !oom) oom |= dalloc(&b->ws, b->wsb);
        for (int v = 0; v < nv; v++) {
            if (s != NORMTUNE_SUCCESS || oom) continue;
            if (nc == MAX_CONT) {
                fprintf(stderr, "bench: more than %d contenders at one shape\n", MAX_CONT);
                exit(1);
            }
            cont *x = &c[nc++];
            memset(x, 0, sizeof *x);
            x->kind = K_OP;
            x->op = op;
            x->api = api;
            x->ob = b;
            x->yard = yard_of(op);
            snprintf(x->name, sizeof x->name, "%s", names[v]);
            snprintf(x->config, sizeof x->config, "%s %s%s", ch.family, ch.params,
                     ch.tuned ? " (tuned)" : ch.fallback ? " (fallback)" : "");
            for (int i = 0; i < op->ntensors; i++)
                x->t[i] = op->tensors[i].role == NT_OUT && !(masks[v] >> i & 1) ? NULL : b->d[i];
        }
        if (s != NORMTUNE_SUCCESS) {
            char note[96];
            snprintf(note, sizeof note, "refused (%s)", normtune_strerror(s));
            printf("  %-11s %s\n", op->name, note);
            for (int v = 0; v < nv; v++) add_row(si, op, names[v], yard_of(op), NAN, NAN, note);
        }
    }
    if (oom) {
        printf("  skipped: cudaMalloc failed (out of device memory?)\n");
        while (nrows > 0 && rows[nrows - 1].shape == si) nrows--;
        for (int o = 0; nt_ops[o]; o++) {
            unsigned masks[MAX_VAR];
            char names[MAX_VAR][64];
            int nv = variants(nt_ops[o], masks, names);
            for (int v = 0; v < nv; v++)
                add_row(si, nt_ops[o], names[v], yard_of(nt_ops[o]), NAN, NAN,
                        "skipped (out of device memory)");
        }
        failures++;
        nc = 0;
    }
    /* sanity: the yardsticks do their work, every op output is finite */
    for (int j = 0; j < nc; j++) {
        if (c[j].kind == K_OP) {
            if (check_op(&c[j]) == 0) continue;
        } else {
            CU(cudaMemset(y[2], 0xff, n * 2));
            int e = launch(&c[j], y[0], y[1], y[2], n, 0);
            CU(cudaDeviceSynchronize());
            if (e == 0 && check_yard(c[j].kind, y[0], y[1], y[2], n) == 0) continue;
            printf("  FAIL %s yardstick (launch status %d)\n", c[j].name, e);
        }
        failures++;
        if (c[j].kind == K_OP)
            add_row(si, c[j].op, c[j].name, c[j].yard, NAN, NAN, "FAIL (sanity check)");
        else
            for (int k = j + 1; k < nc; k++)
                if (c[k].yard == c[j].kind) c[k].yard = -1;  /* no yardstick to compare with */
        memmove(&c[j], &c[j + 1], sizeof c[0] * (size_t)(nc - j - 1));
        nc--, j--;
    }
    if (nc > 0) time_all(c, nc, y[0], y[1], y[2], n, flush, st);
    double yus[2] = {NAN, NAN};
    for (int j = 0; j < nc; j++) {
        if (c[j].kind == K_OP) continue;
        yus[c[j].kind] = c[j].us;
        printf("  %-22s %10.2f us  %6.2f TB/s\n", c[j].name, c[j].us,
               (c[j].kind == K_COPY ? 2.0 : 3.0) * 2.0 * (double)n / c[j].us / 1e6);
    }
    for (int i = 0; i < nrows; i++)           /* refused or failed: the yardstick's time */
        if (rows[i].shape == si && rows[i].yard >= 0 && isnan(rows[i].yus))
            rows[i].yus = yus[rows[i].yard];
    for (int j = 0; j < nc; j++) {
        if (c[j].kind != K_OP) continue;
        double ys = c[j].yard >= 0 ? yus[c[j].yard] : NAN;
        char label[96];
        snprintf(label, sizeof label, "%s %s", c[j].op->name, c[j].name);
        printf("  %-22s %10.2f us  %5.1f%% of %-4s  %s\n", label, c[j].us, 100.0 * ys / c[j].us,
               c[j].yard >= 0 ? yard_name[c[j].yard] : "-", c[j].config);
        add_row(si, c[j].op, c[j].name, c[j].yard, c[j].us, ys, "");
    }
    for (int o = 0; o < nops; o++) {
        for (int i = 0; i < NT_MAX_TENSORS; i++) cudaFree(ob[o].d[i]);
        cudaFree(ob[o].ws);
    }
    for (int i = 0; i < 3; i++) cudaFree(y[i]);
}

/* ---- output ----------------------------------------------------------------- */

/* The row of shape si, op and variant name, or NULL. */
static const row *find_row(int si, const nt_op *op, const char *name) {
    for (int i = 0; i < nrows; i++)
        if (rows[i].shape == si && rows[i].op == op && !strcmp(rows[i].name, name)) return &rows[i];
    return NULL;
}

/* A table per op: shape, yardstick us, then us and % per variant. */
static void print_tables(const shape *sh, int ns) {
    for (int o = 0; nt_ops[o]; o++) {
        const nt_op *op = nt_ops[o];
        unsigned masks[MAX_VAR];
        char names[MAX_VAR][64], dts[160];
        int nv = variants(op, masks, names), yard = yard_of(op);
        nt_problem p;
        nt_problem_init(&p, op, 1, 8);
        nt_dtypes_canon(&p, dts, sizeof dts);
        printf("\n%s (%s): median us of %d calls, each alone after an L2 flush; "
               "%% = %s us / op us\n\n", op->name, dts, iters, yard >= 0 ? yard_name[yard] : "-");
        printf("  %-16s %10s", "M x N", yard >= 0 ? yard_name[yard] : "-");
        for (int v = 0; v < nv; v++) printf(" %12s %7s", names[v], "%");
        printf("\n");
        for (int s = 0; s < ns; s++) {
            char shp[48];
            snprintf(shp, sizeof shp, "%lld x %lld", sh[s].M, sh[s].N);
            const row *r0 = find_row(s, op, names[0]);
            printf("  %-16s ", shp);
            if (r0 && r0->note[0] && strncmp(r0->note, "FAIL", 4)) {
                printf("%s\n", r0->note);     /* refused or skipped: every variant */
                continue;
            }
            double yus = NAN;
            for (int v = 0; v < nv && isnan(yus); v++) {
                const row *r = find_row(s, op, names[v]);
                if (r) yus = r->yus;
            }
            printf("%10.2f", yus);
            for (int v = 0; v < nv; v++) {
                const row *r = find_row(s, op, names[v]);
                if (!r || r->note[0]) printf(" %12s %7s", "-", r ? "FAIL" : "-");
                else printf(" %12.2f %6.1f%%", r->us, 100.0 * r->yus / r->us);
            }
            printf("\n");
        }
    }
}

/* A number, or "-" when NAN. */
static void num(FILE *f, double v, const char *fmt) {
    if (isnan(v)) fputs("-", f);
    else fprintf(f, fmt, v);
}

/* --csv: op,M,N,contender,us,yardstick,us_yardstick,pct. */
static void write_csv(FILE *f, const shape *sh) {
    fprintf(f, "op,M,N,contender,us,yardstick,us_yardstick,pct\n");
    for (int i = 0; i < nrows; i++) {
        const row *r = &rows[i];
        fprintf(f, "%s,%lld,%lld,%s,", r->op->name, sh[r->shape].M, sh[r->shape].N, r->name);
        num(f, r->us, "%.3f");
        fprintf(f, ",%s,", r->yard >= 0 ? yard_name[r->yard] : "-");
        num(f, r->yus, "%.3f");
        fputc(',', f);
        num(f, 100.0 * r->yus / r->us, "%.2f");
        fputc('\n', f);
    }
}

/* --plot-csv: shape, then one column of % per op and variant. */
static void write_plot_csv(FILE *f, const shape *sh, int ns) {
    fprintf(f, "shape");
    for (int o = 0; nt_ops[o]; o++) {
        unsigned masks[MAX_VAR];
        char names[MAX_VAR][64];
        int nv = variants(nt_ops[o], masks, names);
        for (int v = 0; v < nv; v++) fprintf(f, ",%s %s", nt_ops[o]->name, names[v]);
    }
    fputc('\n', f);
    for (int s = 0; s < ns; s++) {
        fprintf(f, "%lldx%lld", sh[s].M, sh[s].N);
        for (int o = 0; nt_ops[o]; o++) {
            unsigned masks[MAX_VAR];
            char names[MAX_VAR][64];
            int nv = variants(nt_ops[o], masks, names);
            for (int v = 0; v < nv; v++) {
                const row *r = find_row(s, nt_ops[o], names[v]);
                fputc(',', f);
                num(f, r ? 100.0 * r->yus / r->us : NAN, "%.2f");
            }
        }
        fputc('\n', f);
    }
}

/* Open path for writing, or exit 2 with a message. */
static FILE *open_out(const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench: cannot write %s: %s\n", path, strerror(errno));
        exit(2);
    }
    return f;
}

/* Close f (path), exit 1 when the write failed. */
static void close_out(FILE *f, const char *path) {
    if (ferror(f) | fclose(f)) {
        fprintf(stderr, "bench: error writing %s\n", path);
        exit(1);
    }
    printf("written %s\n", path);
}

int main(int argc, char **argv) {
    static shape sh[MAX_SHAPES];
    const char *shapes = "tests/gpu/bench_shapes.txt", *csv = NULL, *pcsv = NULL;
    int list = 0, bad = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int valued = 1;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--list-shapes")) {
            list = 1, valued = 0;
        } else if (!v && (!strcmp(a, "--shapes") || !strcmp(a, "--csv") ||
                          !strcmp(a, "--plot-csv") || !strcmp(a, "--iters") ||
                          !strcmp(a, "--warmup") || !strcmp(a, "--flush-mb"))) {
            fprintf(stderr, "bench: %s needs a value\n", a);
            bad = 1;
        } else if (!strcmp(a, "--shapes")) {
            shapes = v;
        } else if (!strcmp(a, "--csv")) {
            csv = v;
        } else if (!strcmp(a, "--plot-csv")) {
            pcsv = v;
        } else if (!strcmp(a, "--iters")) {
            iters = (int)number(v, 1, 10000, &bad);
        } else if (!strcmp(a, "--warmup")) {
            warmup = (int)number(v, 0, 1000, &bad);
        } else if (!strcmp(a, "--flush-mb")) {
            flush_bytes = (size_t)number(v, 1, 1 << 20, &bad) << 20;
        } else {
            fprintf(stderr, "bench: unknown argument '%s'\n", a);
            bad = 2;
        }
        if (bad == 1 && v) fprintf(stderr, "bench: bad value '%s' for %s\n", v, a);
        if (bad) {
            usage(stderr);
            return 2;
        }
        i += valued;
    }
    int ns = read_shapes(shapes, sh, MAX_SHAPES);
    if (ns < 0) return 2;
    if (list) {
        for (int s = 0; s < ns; s++) printf("%lld %lld\n", sh[s].M, sh[s].N);
        return 0;
    }
    FILE *fc = csv ? open_out(csv) : NULL, *fp = pcsv ? open_out(pcsv) : NULL;

    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        fprintf(stderr, "bench: no CUDA device here (cudaGetDeviceCount: %s%s): the "
                "benchmark needs an NVIDIA GPU; nothing was measured\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices",
                e == cudaErrorInsufficientDriver ? "; no NVIDIA driver, or one older than "
                "this CUDA runtime" : "");
        if (fc) fclose(fc), remove(csv);
        if (fp) fclose(fp), remove(pcsv);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    CU(cudaSetDevice(0));
    CU(cudaGetDeviceProperties(&prop, 0));
    if (flush_bytes < 4 * (size_t)prop.l2CacheSize) flush_bytes = 4 * (size_t)prop.l2CacheSize;
    printf("device %s, %d SMs, L2 %.0f MB\n%s\n", prop.name, prop.multiProcessorCount,
           prop.l2CacheSize / 1048576.0, normtune_version());
    printf("%d shapes from %s; each call alone after a %zu MB L2 flush, median of %d after "
           "%d warm-up rounds, contenders interleaved\n", ns, shapes, flush_bytes >> 20, iters,
           warmup);
    void *flush;
    cudaStream_t st;
    CU(cudaMalloc(&flush, flush_bytes));
    CU(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    for (int s = 0; s < ns; s++) {
        printf("--- %lld x %lld (%d/%d)\n", sh[s].M, sh[s].N, s + 1, ns);
        bench_shape(s, &sh[s], flush, st);
    }
    print_tables(sh, ns);
    printf("\n");
    if (fc) write_csv(fc, sh), close_out(fc, csv);
    if (fp) write_plot_csv(fp, sh, ns), close_out(fp, pcsv);
    cudaFree(flush);
    cudaStreamDestroy(st);
    if (failures) printf("bench: %d FAILURES (see FAIL lines above)\n", failures);
    return failures ? 1 : 0;
}
