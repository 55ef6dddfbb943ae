/* cmd_run.c -- `normtune run`: a sweep on the GPU.
 *
 *   normtune run SCRIPT [--db FILE] [--device N] [--seed S] [--jobs N]
 *                [--no-cache] [--verbose]
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
 * itself to resume. */
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
#include "search/enumerate.h"
#include "tuner/runner.h"
#include "tuner/sweep.h"

#define MAX_RESTARTS 8        /* self-restarts after a lost CUDA context */
#define DEFAULT_SETTLE_S 15.0 /* run --settle: seconds of copies before measuring */


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
               "                    [--jobs N] [--settle SECONDS] [--no-cache] [--verbose]\n\n"
               "Measure every variant of the sweep script on the GPU into FILE\n"
               "(default results.db); variants already measured there on a GPU of the\n"
               "same model (name, compute capability, SMs, memory clock), this one or\n"
               "another, with the same kernel source and timing settings are reused,\n"
               "not measured again (resume).\n\n"
               "  --db FILE     results database, created if missing (results.db)\n"
               "  --device SEL  the GPU whose name or UUID (or UUID prefix) is SEL, as\n"
               "                nvidia-smi -L prints them; the same meaning as in the\n"
               "                reading commands\n"
               "  --gpu N       or the GPU with CUDA ordinal N (0)\n"
               "  --seed S      input seed (1)\n"
               "  --jobs N      NVRTC compiler threads (online CPUs)\n"
               "  --settle S    keep the GPU copying S seconds before measuring, so\n"
               "                clocks and temperature start near steady state (15)\n"
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

int cmd_run(int argc, char **argv) {
    const char *dbpath = "results.db";
    nt_runner_opts ro = {.device = 0, .seed = 1, .use_cache = 1, .eps = 1e-6};
    nt_run_opts o = {0};
    double settle = DEFAULT_SETTLE_S;
    long long seed = 0, jobs = 0;
    int no_cache = 0, rc;
    const nt_opt opts[] = {
        {"db", 0, NT_OPT_STR, &dbpath, NULL},
        {"device", 0, NT_OPT_FN, &ro.select, opt_device},
        {"seed", 0, NT_OPT_POS, &seed, NULL},
        {"jobs", 0, NT_OPT_POS, &jobs, NULL},
        {"no-cache", 0, NT_OPT_FLAG, &no_cache, NULL},
        {"verbose", 0, NT_OPT_FLAG, &o.verbose, NULL},
        {"settle", 0, NT_OPT_FN, &settle, opt_settle},
        {"gpu", 0, NT_OPT_FN, &ro.device, opt_gpu},
    };
    if ((rc = nt_parse_opts("run", argc, argv, opts, NT_NOPTS(opts), run_usage)) >= 0) return rc;
    if (seed) ro.seed = (uint64_t)seed;
    if (jobs) ro.jobs = (int)jobs;
    if (no_cache) ro.use_cache = 0;
    if (optind != argc - 1) {
        nt_errorf("run", "expected one SCRIPT argument");
        run_usage(stderr);
        return NT_EXIT_USAGE;
    }
    char err[2048];
    nt_sweep sw;
    store *db = NULL;
    nt_runner *r = NULL;
    nt_evaluator ev;
    nt_run_stats st;
    rc = NT_EXIT_FAIL;
    if (ntl_load(argv[optind], &sw, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return NT_EXIT_FAIL;
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
    if (nt_runner_open(&r, &ro, err, sizeof err)) {
        nt_errorf("run", "%s", err);
        goto out;
    }
    if (store_open(&db, dbpath, STORE_CREATE, err, sizeof err)) {
        nt_errorf("run", "%s", err);
        goto out;
    }
    nt_runner_evaluator(r, &ev);
    fprintf(stderr, "normtune run: %s (%s, %d SMs), %s%.0f s, then measuring copy bandwidth\n",
            ev.dev.name, ev.arch, ev.dev.sms, "settling the GPU with copies for ", settle);
    if (nt_runner_copy_bw(r, settle, &ev.copy_gbps, err, sizeof err)) {
        nt_errorf("run", "%s", err);
        goto out;
    }
    fprintf(stderr, "normtune run: copy bandwidth %.0f GB/s (read + write)\n", ev.copy_gbps);
    o.progress = isatty(2);
    o.stop = &stop_flag;
    signal(SIGINT, on_sigint);
    signal(SIGTERM, on_sigint);
    double t0 = nt_now_s();
    int failed = nt_sweep_run(&sw, db, &ev, &o, &st, err, sizeof err);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    nt_sweep_summary(stderr, &sw, &st);
    nt_run_stats_free(&st);
    if (failed) {
        nt_errorf("run", "%s", err);
        if (nt_runner_broken(r)) {
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
    if (st.interrupted) {
        fprintf(stderr, "normtune run: interrupted; every finished result is stored, run the "
                        "same command again to resume\n");
        rc = 130;
        goto out;
    }
    rc = NT_EXIT_OK;
out:
    store_close(db);
    nt_runner_close(r);
    ntl_free(&sw);
    return rc;
}
