/* cmd_run.c -- `normtune run`: a sweep on the GPU.
 *
 *   normtune run SCRIPT [--db FILE] [--device SEL | --gpu N] [--seed S]
 *                [--jobs N] [--settle S] [--strategy S] [--budget B]
 *                [--shard I/N | --devices LIST] [--simulate DB] [--no-cache]
 *                [--verbose]
 *
 * Loads the script, opens (or creates) the database, opens the GPU, measures
 * the copy bandwidth, then hands everything to the sweep driver
 * (tuner/sweep.h), which measures every variant the script asks for that
 * the database does not already hold for a GPU of this one's model
 * (resume), one transaction per result, and says how many it reused from
 * the model's other GPUs.
 * Ctrl-C finishes the result in progress, stores it, marks the sweep
 * interrupted and says so; a second Ctrl-C exits at once (the database
 * keeps every result stored so far: each is one transaction).  A kernel that
 * faults loses the CUDA context: its result is stored and normtune restarts
 * itself to resume.
 *
 * --shard I/N keeps shard I of the script's shapes (search/sweep.h,
 * nt_sweep_shard): the tasks of a Slurm job array each run one shard into
 * a database of their own, and `normtune merge` folds them (docs/guide.md,
 * examples/slurm/).  --simulate DB puts the replay of DB's GPU
 * (tuner/replaydb.h) where the GPU would be: the whole run, store and
 * resume included, on a machine without one; its results are stored under
 * a device named "simulated <model>", never pooled with a real GPU's.
 * --devices LIST runs one `run --shard k/n --gpu D` per GPU of the list (all
 * of one model), at once, into the same database (tuner/fanout.h): the GPUs
 * of one host as one device. */
#include <errno.h>
#include <getopt.h>          /* optind */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lua/ntlua.h"
#include "tuner/cli.h"
#include "tuner/compile.h"
#include "tuner/fanout.h"
#include "tuner/gpulock.h"
#include "tuner/replaydb.h"
#include "search/enumerate.h"
#include "tuner/runner.h"
#include "tuner/sweep.h"

#define MAX_RESTARTS 8        /* self-restarts after a lost CUDA context */
#define DEFAULT_SETTLE_S 15.0 /* run --settle: seconds of copies before measuring */
#define PRECOMPILE_MAX (1u << 20) /* points of a sweep whose kernels are all queued */
#define PRECOMPILE_NICE 10         /* nice value of the background compile threads */


static volatile sig_atomic_t stop_flag;

static void on_sigint(int sig) {
    if (stop_flag) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    stop_flag = 1;
    static const char msg[] = "\nnormtune run: interrupted: finishing the current result "
                              "(Ctrl-C again to quit now)\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
}

static void run_usage(FILE *f) {
    fprintf(f, "usage: normtune run SCRIPT [--db FILE] [--device SEL | --gpu N] [--seed S]\n"
               "                    [--jobs N] [--settle SECONDS] [--strategy S] [--budget B]\n"
               "                    [--remeasure chain|alone] [--shard I/N | --devices LIST]\n"
               "                    [--simulate DB] [--no-cache] [--verbose]\n\n"
               "Search the sweep script's space on the GPU with its strategy (every\n"
               "variant when it is exhaustive) into FILE (default results.db);\n"
               "variants already measured there on a GPU of the\n"
               "same model (name, compute capability, SMs, memory clock), this one or\n"
               "another, with the same kernel source and timing settings are reused,\n"
               "not measured again (resume).  One run at a time on a GPU: a GPU\n"
               "another run is measuring on is refused.\n\n"
               "  --db FILE     results database, created if missing (results.db)\n"
               "  --device SEL  the GPU whose name or UUID (or UUID prefix) is SEL, as\n"
               "                nvidia-smi -L prints them; the same meaning as in the\n"
               "                reading commands\n"
               "  --gpu N       or the GPU with CUDA ordinal N (0)\n"
               "  --seed S      input seed (1)\n"
               "  --jobs N      NVRTC compiler threads (online CPUs)\n"
               "  --settle S    keep the GPU copying S seconds before measuring, so\n"
               "                clocks and temperature start near steady state (15)\n"
               "  --strategy S  search with S (exhaustive, random, hillclimb, warm)\n"
               "                instead of the script's: exhaustive measures every\n"
               "                variant, to check what warm picks\n"
               "  --budget B    variants per shape instead of the script's budget\n"
               "                (and its budget_stored)\n"
               "  --remeasure M end each problem by measuring its closest results\n"
               "                again, in turn: chain (back to back, as measured) or\n"
               "                alone (each run alone after an L2 flush, as make\n"
               "                bench times a call); warm and exhaustive only\n"
               "  --shard I/N   only shard I of N (from 0) of the script's shapes: its\n"
               "                hidden sizes N dealt whole, evening out the shards'\n"
               "                problems (the shapes themselves when there are fewer\n"
               "                N than shards); `normtune list --shard I/N` shows one.  For\n"
               "                the tasks of a Slurm job array, each into a database\n"
               "                of its own, then `normtune merge`\n"
               "  --devices L   the GPUs of this host with CUDA ordinals L (0,1,3) or\n"
               "                all, every one of one model: one process a GPU, each\n"
               "                a shard (--shard k/n) into FILE at once, its lines\n"
               "                on stderr after [gpu D]; the CPUs' compile threads\n"
               "                shared out (--jobs: each process's)\n"
               "  --simulate DB no GPU: answer each measurement from the samples\n"
               "                stored in DB for its GPU (as `normtune replay`\n"
               "                does); results go to FILE under the device\n"
               "                \"simulated <model>\", apart from any real GPU's\n"
               "  --no-cache    do not use the compiled-kernel cache\n"
               "  --verbose     one line per result\n");
}

/* --device: a GPU's name or UUID into *(const char **)dst; a bare number is
 * refused (it was the CUDA ordinal once: --gpu).  0, or -1 (usage error). */
static int opt_device(const char *cmd, const char *v, void *dst) {
    if (v[strspn(v, "0123456789")] == 0) {
        nt_errorf(cmd, "--device takes a GPU's name or UUID, as in every command; "
                  "for the CUDA ordinal use --gpu %s", v);
        return -1;
    }
    *(const char **)dst = v;
    return 0;
}

/* --gpu: the CUDA ordinal, 0 or a positive integer, into *(int *)dst. */
static int opt_gpu(const char *cmd, const char *v, void *dst) {
    long long n;
    if (!strcmp(v, "0")) {
        *(int *)dst = 0;
        return 0;
    }
    if (nt_parse_pos(cmd, "--gpu", v, &n)) return -1;
    *(int *)dst = (int)n;
    return 0;
}

/* --settle: whole seconds from 0 to 3600 into *(double *)dst. */
static int opt_settle(const char *cmd, const char *v, void *dst) {
    char *end;
    errno = 0;
    long s = strtol(v, &end, 10);
    if (end == v || *end || errno || s < 0 || s > 3600) {
        nt_errorf(cmd, "--settle needs whole seconds from 0 to 3600, got '%s'", v);
        return -1;
    }
    *(double *)dst = (double)s;
    return 0;
}

/* The background compile of a sweep's kernels: every kernel set that a
 * feasible point plans on this device, once, into the disk cache. */
typedef struct precomp {
    nt_pool *pool;
    const nt_devinfo *di;
    char arch[16];
    uint64_t *seen;           /* keys of the kernel sets queued (open addressing) */
    size_t cap, n;
} precomp;

/* nt_enumerate callback: plan the point on this device and queue its
 * kernel set unless queued already. */
static int precompile_point(void *ctx, const nt_sweep *sw, int prob, int f, const int *idx,
                            const nt_params *p, char *err, size_t errlen) {
    precomp *c = ctx;
    const nt_family *fam = sw->fam[f].fam;
    nt_problem s;
    nt_job job;
    char why[256];
    (void)idx;
    memset(&job, 0, sizeof job);
    nt_sweep_problem(sw, prob, &s);
    if (fam->check(p, &s, c->di, why, sizeof why) || fam->plan(p, &s, c->di, &job.plan, why, sizeof why))
        return 0;             /* refused here: never compiled, never run */
    uint64_t key = nt_fnv1a(NT_FNV_INIT, fam->name, strlen(fam->name) + 1);
    for (int i = 0; i < job.plan.nlaunch; i++)
        key = nt_fnv1a(key, job.plan.l[i].name, strlen(job.plan.l[i].name) + 1);
    key |= 1;                 /* 0 marks an empty slot */
    size_t i = (size_t)key & (c->cap - 1);
    while (c->seen[i] && c->seen[i] != key) i = (i + 1) & (c->cap - 1);
    if (c->seen[i]) return 0;
    if ((c->n + 1) * 2 > c->cap) {
        snprintf(err, errlen, "too many kernel sets to precompile");
        return -1;
    }
    c->seen[i] = key;
    c->n++;
    job.fam = fam;
    snprintf(job.arch, sizeof job.arch, "%s", c->arch);
    job.use_cache = 1;
    job.discard = 1;
    return nt_pool_submit(c->pool, &job) < 0 ? (snprintf(err, errlen, "cannot queue a compile"), -1)
                                             : 0;
}

/* Start compiling, on a pool of its own, every kernel set the sweep can
 * run on this device, so that an adaptive search, which asks for a few
 * points at a time, finds them in the cache instead of waiting for NVRTC
 * at every step.  Skipped (0) for an exhaustive sweep (the driver compiles
 * its batches ahead itself), without the cache, and for a sweep of more
 * than PRECOMPILE_MAX points (its where() walk would cost more than it
 * saves).  Returns the kernel sets queued, or -1 with a message (the run
 * goes on without it). */
static long precompile(precomp *c, nt_sweep *sw, const nt_evaluator *ev, const nt_devinfo *di,
                       int jobs, int use_cache, char *err, size_t errlen) {
    uint64_t pts = 0, per = 0;
    memset(c, 0, sizeof *c);
    if (!use_cache || !strcmp(sw->search.strategy, "exhaustive")) return 0;
    for (int f = 0; f < sw->nfam; f++) {
        uint64_t z = search_space_size(&sw->fam[f].space);
        per = per + z < per ? UINT64_MAX : per + z;
    }
    pts = per > PRECOMPILE_MAX ? UINT64_MAX : per * (uint64_t)nt_sweep_nproblems(sw);
    if (pts > PRECOMPILE_MAX) return 0;
    c->cap = 1;
    while (c->cap < 2 * pts + 2) c->cap <<= 1;
    c->di = di;
    snprintf(c->arch, sizeof c->arch, "%s", ev->arch);
    if (!(c->seen = calloc(c->cap, sizeof *c->seen)) ||
        !(c->pool = nt_pool_start(jobs, 1 << 30, err, errlen))) {
        if (!c->pool && !c->seen) snprintf(err, errlen, "out of memory");
        free(c->seen);
        c->seen = NULL;
        return -1;
    }
    /* below the compiles the search waits for (the runner's own pool)
     * and the thread that times */
    nt_pool_set_nice(c->pool, PRECOMPILE_NICE);
    if (nt_enumerate(sw, NT_ENUM_EXHAUSTIVE, precompile_point, c, NULL, err, errlen)) return -1;
    return (long)c->n;
}

static void precompile_stop(precomp *c) {
    nt_pool_stop(c->pool, 0);
    free(c->seen);
    memset(c, 0, sizeof *c);
}

/* --simulate: the replay of the GPU of database path (every GPU of its
 * model, as `normtune replay` builds it) as the evaluator, recorded as the
 * device "simulated <its model's name>" with that model's compute
 * capability, SMs and memory clock.  0, or -1 with a message. */
static int simulate_open(const char *path, nt_sweep *sw, uint64_t seed, store **sdb,
                         nt_replay_db *rx, nt_evaluator *ev, char *err, size_t errlen) {
    if (store_open(sdb, path, STORE_READ, err, errlen) ||
        nt_replay_db_load(*sdb, sw, 1, rx, err, errlen))
        return -1;
    nt_replay_evaluator(rx->rp, seed, ev);
    memset(&ev->dev, 0, sizeof ev->dev);
    snprintf(ev->dev.name, sizeof ev->dev.name, "simulated %.100s", rx->model.device);
    snprintf(ev->dev.uuid, sizeof ev->dev.uuid, "none");
    ev->dev.cc_major = rx->model.cc_major;
    ev->dev.cc_minor = rx->model.cc_minor;
    ev->dev.sms = rx->model.sms;
    ev->dev.mem_clock_khz = rx->model.mem_clock_khz;
    snprintf(ev->dev.driver, sizeof ev->dev.driver, "none");
    snprintf(ev->dev.runtime, sizeof ev->dev.runtime, "none");
    snprintf(ev->dev.nvrtc, sizeof ev->dev.nvrtc, "none");
    snprintf(ev->arch, sizeof ev->arch, "sm_%d%d", rx->model.cc_major, rx->model.cc_minor);
    return 0;
}

#define DEVICES_MAX 64     /* GPUs of one --devices */

/* --devices: the ordinals of list ("all", or "0,1,3") into ord; their
 * number, or -1 (a usage error, said).  Without simulate the GPUs must be
 * present and of one model (else -2, said). */
static int devices_of(const char *list, int simulate, int *ord) {
    nt_device dev[DEVICES_MAX];
    char err[1024];
    int n = 0, present = 0;
    if (!strcmp(list, "all")) {
        if (simulate) {
            nt_errorf("run", "--devices all with --simulate: there are no GPUs to count; "
                      "give a list (0,1,...): one simulated process each");
            return -1;
        }
        if ((present = nt_runner_list(dev, DEVICES_MAX, err, sizeof err)) < 0) {
            nt_errorf("run", "%s", err);
            return -2;
        }
        for (n = 0; n < present && n < DEVICES_MAX; n++) ord[n] = n;
    } else {
        const char *p = list;
        for (;;) {
            char *end;
            errno = 0;
            long v = strtol(p, &end, 10);
            if (end == p || errno || v < 0 || v >= 1024 || (*end && *end != ',') ||
                *p == '+' || *p == '-' || n == DEVICES_MAX) {
                nt_errorf("run", "--devices needs all or CUDA ordinals such as 0,1,3 (at most "
                          "%d), got '%s'", DEVICES_MAX, list);
                return -1;
            }
            for (int i = 0; i < n; i++)
                if (ord[i] == (int)v) {
                    nt_errorf("run", "--devices %s: GPU %ld twice", list, v);
                    return -1;
                }
            ord[n++] = (int)v;
            if (!*end) break;
            p = end + 1;
        }
        if (!simulate && (present = nt_runner_list(dev, DEVICES_MAX, err, sizeof err)) < 0) {
            nt_errorf("run", "%s", err);
            return -2;
        }
    }
    for (int i = 0; !simulate && i < n; i++) {
        if (ord[i] >= present) {
            nt_errorf("run", "--devices %s: no GPU %d (%d present, ordinals 0 to %d)", list,
                      ord[i], present, present - 1);
            return -2;
        }
        const nt_device *a = &dev[ord[0]], *b = &dev[ord[i]];
        if (strcmp(a->name, b->name) || a->cc_major != b->cc_major ||
            a->cc_minor != b->cc_minor || a->sms != b->sms ||
            a->mem_clock_khz != b->mem_clock_khz) {
            nt_errorf("run", "--devices %s: GPU %d (%s, %d SMs) and GPU %d (%s, %d SMs) are of "
                      "two models; tune each model's GPUs apart", list, ord[0], a->name, a->sms,
                      ord[i], b->name, b->sms);
            return -2;
        }
    }
    return n;
}

/* run --devices: one `normtune run` per GPU (or simulated process), shard
 * k of n each, into dbpath at once (tuner/fanout.h).  The exit status. */
static int run_devices(const char *script, const char *list, const char *dbpath,
                       const char *simulate, const nt_runner_opts *ro, int jobs, double settle,
                       const char *strategy, long long budget, const char *remeasure,
                       int verbose) {
    int ord[DEVICES_MAX], n = devices_of(list, simulate != NULL, ord);
    if (n < 0) return n == -1 ? NT_EXIT_USAGE : NT_EXIT_FAIL;
    if (jobs <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        jobs = cpus > n ? (int)(cpus / n) : 1;
    }
    enum { NARG = 32 };
    char *args[DEVICES_MAX][NARG];
    char shard[DEVICES_MAX][32], gpu[DEVICES_MAX][16], label[DEVICES_MAX][32];
    char seed[32], jb[16], st[16], bud[32];
    char **argvs[DEVICES_MAX];
    const char *labels[DEVICES_MAX];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)ro->seed);
    snprintf(jb, sizeof jb, "%d", jobs);
    snprintf(st, sizeof st, "%.0f", settle);
    snprintf(bud, sizeof bud, "%lld", budget);
    for (int k = 0; k < n; k++) {
        int a = 0;
        char **v = args[k];
        snprintf(shard[k], sizeof shard[k], "%d/%d", k, n);
        snprintf(gpu[k], sizeof gpu[k], "%d", ord[k]);
        snprintf(label[k], sizeof label[k], simulate ? "[worker %d]" : "[gpu %d]", ord[k]);
        v[a++] = "normtune";
        v[a++] = "run";
        v[a++] = (char *)script;
        v[a++] = "--db";
        v[a++] = (char *)dbpath;
        v[a++] = "--shard";
        v[a++] = shard[k];
        if (simulate) {
            v[a++] = "--simulate";
            v[a++] = (char *)simulate;
        } else {
            v[a++] = "--gpu";
            v[a++] = gpu[k];
        }
        v[a++] = "--seed";
        v[a++] = seed;
        v[a++] = "--jobs";
        v[a++] = jb;
        v[a++] = "--settle";
        v[a++] = st;
        if (strategy) v[a++] = "--strategy", v[a++] = (char *)strategy;
        if (budget) v[a++] = "--budget", v[a++] = bud;
        if (remeasure) v[a++] = "--remeasure", v[a++] = (char *)remeasure;
        if (!ro->use_cache) v[a++] = "--no-cache";
        if (verbose) v[a++] = "--verbose";
        v[a] = NULL;
        argvs[k] = v;
        labels[k] = label[k];
    }
    /* the database exists (and is sound) before the processes open it at once */
    store *db = NULL;
    char err[512];
    if (store_open(&db, dbpath, STORE_CREATE, err, sizeof err)) {
        nt_errorf("run", "%s", err);
        return NT_EXIT_FAIL;
    }
    store_close(db);
    fprintf(stderr, "normtune run: %d %s (%s), a shard each into %s at once, %d compile "
                    "threads each\n", n, simulate ? "simulated processes" :
                    n == 1 ? "GPU" : "GPUs of one model", list, dbpath, jobs);
    int rc = nt_fanout(n, argvs, labels, err, sizeof err);
    if (rc < 0) {
        nt_errorf("run", "%s", err);
        return NT_EXIT_FAIL;
    }
    if (rc == 130)
        fprintf(stderr, "normtune run: interrupted; every finished result is stored, run the "
                        "same command again to resume\n");
    else if (rc)
        nt_errorf("run", "--devices %s: a process failed (exit %d; its lines above)", list, rc);
    else
        fprintf(stderr, "normtune run: %s: %s %d shard%s done\n", dbpath, n == 1 ? "its" : "the",
                n, n == 1 ? " is" : "s are");
    return rc;
}

int cmd_run(int argc, char **argv) {
    const char *dbpath = "results.db";
    nt_runner_opts ro = {.device = 0, .seed = 1, .use_cache = 1, .eps = 1e-6};
    nt_run_opts o = {0};
    double settle = DEFAULT_SETTLE_S;
    long long seed = 0, jobs = 0, budget = 0;
    const char *strategy = NULL, *remeasure = NULL, *simulate = NULL, *devices = NULL;
    int no_cache = 0, rc, gpu = -1, shard[2] = {0, 1};
    const nt_opt opts[] = {
        {"db", 0, NT_OPT_STR, &dbpath, NULL},
        {"device", 0, NT_OPT_FN, &ro.select, opt_device},
        {"seed", 0, NT_OPT_POS, &seed, NULL},
        {"jobs", 0, NT_OPT_POS, &jobs, NULL},
        {"no-cache", 0, NT_OPT_FLAG, &no_cache, NULL},
        {"verbose", 0, NT_OPT_FLAG, &o.verbose, NULL},
        {"settle", 0, NT_OPT_FN, &settle, opt_settle},
        {"gpu", 0, NT_OPT_FN, &gpu, opt_gpu},
        {"strategy", 0, NT_OPT_FN, &strategy, nt_opt_strategy},
        {"budget", 0, NT_OPT_POS, &budget, NULL},
        {"remeasure", 0, NT_OPT_STR, &remeasure, NULL},
        {"shard", 0, NT_OPT_FN, shard, nt_opt_shard},
        {"simulate", 0, NT_OPT_STR, &simulate, NULL},
        {"devices", 0, NT_OPT_STR, &devices, NULL},
    };
    if ((rc = nt_parse_opts("run", argc, argv, opts, NT_NOPTS(opts), run_usage)) >= 0) return rc;
    if (seed) ro.seed = (uint64_t)seed;
    if (jobs) ro.jobs = (int)jobs;
    if (no_cache) ro.use_cache = 0;
    if (gpu >= 0) ro.device = gpu;
    if (optind != argc - 1) {
        nt_errorf("run", "expected one SCRIPT argument");
        run_usage(stderr);
        return NT_EXIT_USAGE;
    }
    if (remeasure && strcmp(remeasure, "chain") && strcmp(remeasure, "alone")) {
        nt_errorf("run", "unknown --remeasure '%s' (allowed: chain, alone)", remeasure);
        return NT_EXIT_USAGE;
    }
    if (devices && (ro.select || gpu >= 0 || shard[1] > 1)) {
        nt_errorf("run", "--devices names the GPUs and splits the sweep itself: leave out --%s",
                  ro.select ? "device" : gpu >= 0 ? "gpu" : "shard");
        return NT_EXIT_USAGE;
    }
    if (simulate && (ro.select || gpu >= 0)) {
        nt_errorf("run", "--simulate runs on no GPU: leave out --%s", ro.select ? "device" : "gpu");
        return NT_EXIT_USAGE;
    }
    if (simulate && nt_same_file(simulate, dbpath)) {
        nt_errorf("run", "--simulate %s: the database the run writes (--db) must be another "
                  "file", simulate);
        return NT_EXIT_USAGE;
    }
    char err[2048];
    nt_sweep sw;
    store *db = NULL;
    nt_runner *r = NULL;
    store *sdb = NULL;        /* --simulate: the database replayed */
    int lockfd = -1;          /* the GPU's lock (tuner/gpulock.h) */
    nt_replay_db rx;
    nt_evaluator ev;
    nt_run_stats st;
    precomp pre = {0};
    memset(&rx, 0, sizeof rx);
    rc = NT_EXIT_FAIL;
    if (ntl_load(argv[optind], &sw, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return NT_EXIT_FAIL;
    }
    /* --strategy S: the whole sweep, the families' own searches too */
    if (strategy) {
        snprintf(sw.search.strategy, sizeof sw.search.strategy, "%s", strategy);
        nt_sweep_drop_own(&sw);
    }
    /* --budget B: B per shape, cold or from stored results */
    if (budget) sw.search.budget = (uint64_t)budget, sw.search.budget_stored = 0;
    if (remeasure) {
        if (!search_remeasures(sw.search.strategy)) {
            nt_errorf("run", "--remeasure is a step of strategies warm and exhaustive, not of %s",
                      sw.search.strategy);
            ntl_free(&sw);
            return NT_EXIT_USAGE;
        }
        sw.search.remeasure_alone = !strcmp(remeasure, "alone");
        sw.search.remeasure_set = 1;
    }
    int kept = nt_apply_shard("run", &sw, shard);
    if (kept <= 0) {          /* an empty shard of a job array: nothing to do */
        ntl_free(&sw);
        return kept ? NT_EXIT_USAGE : NT_EXIT_OK;
    }
    /* where() deterministic and within budget, every shape with a variant:
     * known before the GPU is touched (for an exhaustive sweep: a search
     * with a budget never walks the whole space) */
    if (!strcmp(sw.search.strategy, "exhaustive") && nt_enum_check(&sw, err, sizeof err)) {
        nt_errorf("run", "%s", err);
        ntl_free(&sw);
        return NT_EXIT_FAIL;
    }
    ro.eps = sw.eps;
    if (devices) {
        rc = run_devices(argv[optind], devices, dbpath, simulate, &ro, (int)jobs, settle, strategy,
                         budget, remeasure, o.verbose);
        ntl_free(&sw);
        return rc;
    }
    if (simulate) {
        if (simulate_open(simulate, &sw, ro.seed, &sdb, &rx, &ev, err, sizeof err)) {
            nt_errorf("run", "%s", err);
            goto out;
        }
        if (store_open(&db, dbpath, STORE_CREATE, err, sizeof err)) {
            nt_errorf("run", "%s", err);
            goto out;
        }
        fprintf(stderr, "normtune run: %s: the samples %s stored for %s answer every "
                        "measurement (no GPU)\n", ev.dev.name, simulate, rx.model.device);
        goto measure;
    }
    if (nt_runner_open(&r, &ro, err, sizeof err)) {
        nt_errorf("run", "%s", err);
        goto out;
    }
    if (store_open(&db, dbpath, STORE_CREATE, err, sizeof err)) {
        nt_errorf("run", "%s", err);
        goto out;
    }
    nt_runner_evaluator(r, &ev);
    /* one run per GPU: before anything runs on it (tuner/gpulock.h) */
    if ((lockfd = nt_gpu_lock(ev.dev.uuid, err, sizeof err)) < 0) {
        nt_errorf("run", "%s", err);
        goto out;
    }
    long npre = precompile(&pre, &sw, &ev, nt_runner_devinfo(r), ro.jobs, ro.use_cache, err,
                           sizeof err);
    if (npre < 0) {           /* a speed-up only: the search compiles what it asks for */
        fprintf(stderr, "normtune run: note: no background compile: %s\n", err);
        precompile_stop(&pre);
    } else if (npre > 0)
        fprintf(stderr, "normtune run: compiling the sweep's %ld kernel sets in the background "
                        "(%d threads)\n", npre, nt_pool_threads(pre.pool));
    fprintf(stderr, "normtune run: %s (%s, %d SMs), %s%.0f s, then measuring copy bandwidth\n",
            ev.dev.name, ev.arch, ev.dev.sms, "settling the GPU with copies for ", settle);
    if (nt_runner_copy_bw(r, settle, &ev.copy_gbps, err, sizeof err)) {
        nt_errorf("run", "%s", err);
        goto out;
    }
    fprintf(stderr, "normtune run: copy bandwidth %.0f GB/s (read + write)\n", ev.copy_gbps);
measure:
    o.progress = isatty(2);
    o.sharded = shard[1] > 1;
    o.stop = &stop_flag;
    signal(SIGINT, on_sigint);
    signal(SIGTERM, on_sigint);
    double t0 = nt_now_s();
    int failed = nt_sweep_run(&sw, db, &ev, &o, &st, err, sizeof err);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    nt_sweep_summary(stderr, &sw, &st);
    if (r) {
        static const char *const what[NT_RUNNER_NPHASES] = {
            "waiting for compiles", "inputs", "float64 references", "yardsticks", "loading",
            "checking", "timing"};
        const double *ph = nt_runner_phases(r);
        double sum = 0;
        fprintf(stderr, "normtune run: where the time went:");
        for (int i = 0; i < NT_RUNNER_NPHASES; i++) {
            fprintf(stderr, "%s %s %.1f s", i ? "," : "", what[i], ph[i]);
            sum += ph[i];
        }
        fprintf(stderr, ", the rest (search, store) %.1f s\n", nt_now_s() - t0 - sum);
    }
    nt_run_stats_free(&st);
    if (failed) {
        nt_errorf("run", "%s", err);
        if (r && nt_runner_broken(r)) {
            /* the context is gone; everything measured is stored: go again */
            const char *e = getenv("NORMTUNE_RESTARTS");
            int n = e ? atoi(e) : 0;
            if (n < MAX_RESTARTS) {
                char buf[16];
                snprintf(buf, sizeof buf, "%d", n + 1);
                setenv("NORMTUNE_RESTARTS", buf, 1);
                fprintf(stderr, "normtune run: CUDA context lost; restarting to resume\n");
                store_close(db);
                execv("/proc/self/exe", argv - 1);
                nt_errorf("run", "cannot restart; run the same command again to resume");
            }
        }
        goto out;
    }
    fprintf(stderr, "normtune run: %s: %" PRIu64 " measured (%" PRIu64 " ok), %" PRIu64
            " reused (%" PRIu64 " from other GPUs of the model), %.1f s\n", dbpath, st.measured,
            st.ok, st.reused, st.reused_other, nt_now_s() - t0);
    if (st.waited)
        fprintf(stderr, "normtune run: %" PRIu64 " of the reused were measured meanwhile by "
                        "another run writing this database (each variant is measured once: "
                        "claims, docs/schema.md)\n", st.waited);
    if (st.rematched)
        fprintf(stderr, "normtune run: at %" PRIu64 " problem%s the variants within %.0f%% of "
                        "the pick measured again, in turn%s, and the fastest picked\n",
                st.rematched, st.rematched == 1 ? "" : "s",
                100 * (sw.search.remeasure_alone ? NT_REMATCH_ALONE_SPAN : NT_REMATCH_SPAN),
                sw.search.remeasure_alone ? ", each run alone after an L2 flush" : "");
    if (st.interrupted) {
        fprintf(stderr, "normtune run: interrupted; every finished result is stored, run the "
                        "same command again to resume\n");
        rc = 130;
        goto out;
    }
    rc = NT_EXIT_OK;
out:
    precompile_stop(&pre);
    store_close(db);
    nt_runner_close(r);
    nt_replay_db_free(&rx);
    store_close(sdb);
    if (lockfd >= 0) close(lockfd);
    ntl_free(&sw);
    return rc;
}
