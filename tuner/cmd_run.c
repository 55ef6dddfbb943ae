/* cmd_run.c -- `normtune run`: a sweep on the GPU.
 *
 *   normtune run SCRIPT [--db FILE] [--device N] [--seed S] [--jobs N]
 *                [--no-cache] [--verbose]
 *
 * Loads the script, opens (or creates) the database, opens the GPU, measures
 * the copy bandwidth, then hands everything to the sweep driver
 * (tuner/sweep.h), which measures every variant the script asks for that
 * the database does not already hold (resume), one transaction per result.
 * Ctrl-C finishes the result in progress, stores it, marks the sweep
 * interrupted and says so; a second Ctrl-C exits at once (the database
 * keeps every result stored so far: each is one transaction).  A kernel that
 * faults loses the CUDA context: its result is stored and normtune restarts
 * itself to resume. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tuner/cli.h"
#include "tuner/enumerate.h"
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
               "(default results.db); variants already measured there with the same\n"
               "device, kernel source and timing settings are skipped (resume).\n\n"
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

int cmd_run(int argc, char **argv) {
    static const struct option opts[] = {
        {"db", required_argument, 0, 'd'},    {"device", required_argument, 0, 'D'},
        {"seed", required_argument, 0, 's'},  {"jobs", required_argument, 0, 'j'},
        {"no-cache", no_argument, 0, 'n'},    {"verbose", no_argument, 0, 'v'},
        {"settle", required_argument, 0, 'S'}, {"help", no_argument, 0, 'h'},
        {"gpu", required_argument, 0, 'g'},
        {0, 0, 0, 0},
    };
    const char *dbpath = "results.db";
    nt_runner_opts ro = {.device = 0, .seed = 1, .use_cache = 1, .eps = 1e-6};
    nt_run_opts o = {0};
    double settle = DEFAULT_SETTLE_S;
    long long v;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd': dbpath = optarg; break;
        case 'D':                 /* one meaning in every command: name or UUID */
            if (optarg[strspn(optarg, "0123456789")] == 0) {
                nt_errorf("run", "--device takes a GPU's name or UUID, as in every command; "
                          "for the CUDA ordinal use --gpu %s", optarg);
                return NT_EXIT_USAGE;
            }
            ro.select = optarg;
            break;
        case 'g':
            if (!strcmp(optarg, "0")) { ro.device = 0; break; }
            if (nt_parse_pos("run", "--gpu", optarg, &v)) return NT_EXIT_USAGE;
            ro.device = (int)v;
            break;
        case 's':
            if (nt_parse_pos("run", "--seed", optarg, &v)) return NT_EXIT_USAGE;
            ro.seed = (uint64_t)v;
            break;
        case 'j':
            if (nt_parse_pos("run", "--jobs", optarg, &v)) return NT_EXIT_USAGE;
            ro.jobs = (int)v;
            break;
        case 'n': ro.use_cache = 0; break;
        case 'v': o.verbose = 1; break;
        case 'S': {
            char *end;
            errno = 0;
            long s = strtol(optarg, &end, 10);
            if (end == optarg || *end || errno || s < 0 || s > 3600) {
                nt_errorf("run", "--settle needs whole seconds from 0 to 3600, got '%s'", optarg);
                return NT_EXIT_USAGE;
            }
            settle = (double)s;
            break;
        }
        case 'h': run_usage(stdout); return NT_EXIT_OK;
        default: run_usage(stderr); return NT_EXIT_USAGE;
        }
    }
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
    int rc = NT_EXIT_FAIL;
    if (ntl_load(argv[optind], &sw, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return NT_EXIT_FAIL;
    }
    /* where() deterministic and within budget, every shape with a variant:
     * known before the GPU is touched */
    if (nt_enum_check(&sw, err, sizeof err)) {
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
            " reused, %.1f s\n", dbpath, st.measured, st.ok, st.reused, nt_now_s() - t0);
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
