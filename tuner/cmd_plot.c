/* cmd_plot.c -- `normtune plot`: figures of a results database, or of any
 * CSV that `query`/`report --format csv` write, drawn by gnuplot.
 *
 *   normtune plot --db FILE [-o OUT.svg|OUT.png] [--device NAME] [--kind K]
 *                 [--yrange LO:HI] [--title TEXT] [--ylabel TEXT]
 *   normtune plot --csv FILE [-o OUT] [--x COL] [--y COL,...] [--by COL] [--logx]
 *                 [--yrange LO:HI] [--title TEXT] [--ylabel TEXT]
 *
 * Checks the options and the output name (a database or the input is
 * refused before anything is drawn), then has nt_plot_draw (tuner/plot.c)
 * build the figure and run gnuplot.  Exit codes: 0 ok, 1 failure, 2 usage. */
#include <getopt.h>          /* optind */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tuner/cli.h"
#include "tuner/output.h"
#include "tuner/plot.h"

#define CMD "plot"

static void plot_usage(FILE *f) {
    fprintf(f,
        "usage: normtune plot --db FILE [-o OUT.svg|OUT.png] [--device NAME]\n"
        "                     [--kind bw|pct|spread] [--yrange LO:HI] [--title TEXT]\n"
        "                     [--ylabel TEXT]\n"
        "       normtune plot --csv FILE [-o OUT] [--x COL] [--y COL[,COL...]] [--by COL]\n"
        "                     [--logx] [--yrange LO:HI] [--title TEXT] [--ylabel TEXT]\n\n"
        "Draw results with gnuplot (Debian package gnuplot-nox).\n\n"
        "figures of a results database (--db):\n"
        "  --kind bw       GB/s of the best config of each family against N (log2\n"
        "                  axis), one line per M and family, and the measured copy\n"
        "                  bandwidth as a dotted line (default)\n"
        "  --kind pct      the same as %% of the copy bandwidth\n"
        "  --kind spread   GB/s of every successful variant per shape (points, one\n"
        "                  colour per family), the best of each shape circled\n\n"
        "a figure of a CSV file (--csv), such as query/report --format csv write:\n"
        "  --x COL         the x column, by name or 1-based number (default: the\n"
        "                  first); a column that is not numeric gives labels\n"
        "  --y COL,...     the columns plotted, one line each (default: every other\n"
        "                  numeric column); empty and '-' cells are skipped\n"
        "  --by COL        one line per value of COL (say M), titled COL=value\n"
        "  --logx          log2 x axis\n\n"
        "options:\n"
        "  -o, --output FILE  the picture: .svg (default plot.svg) or .png; written\n"
        "                  atomically; an SQLite database and the input are refused\n"
        "  --yrange LO:HI  the y axis from LO to HI, either may be left out (LO\n"
        "                  then 0, or the data's lowest value below 0; HI what\n"
        "                  the data reach): 90: shows lines near 100%% apart\n"
        "                  that an axis from 0 draws as one\n"
        "  --title TEXT    the figure's title (default: the device and what is\n"
        "                  drawn, or the CSV's file name)\n"
        "  --ylabel TEXT   the y axis label (default: the quantity, or the one\n"
        "                  column drawn)\n"
        "  --device NAME   a GPU's name or uuid: its model, whose GPUs' results\n"
        "                  are drawn together (default: the one model with\n"
        "                  results, else with current results, else covering\n"
        "                  them all: docs/guide.md)\n"
        "  -h, --help      this text\n");
}

/* A bound of --yrange: "" (left out: *has = 0) or a finite number.  0, or
 * -1 when s is not one. */
static int parse_bound(const char *s, size_t n, int *has, double *v) {
    char buf[64], *end;
    *has = 0;
    if (!n) return 0;
    if (n >= sizeof buf) return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    *v = strtod(buf, &end);
    if (end == buf || *end || !isfinite(*v)) return -1;
    *has = 1;
    return 0;
}

/* --yrange LO:HI into r: 0, or -1 with a message. */
static int parse_yrange(const char *s, nt_plot_req *r) {
    const char *colon = strchr(s, ':');
    if (!colon || strchr(colon + 1, ':') ||
        parse_bound(s, (size_t)(colon - s), &r->has_ylo, &r->ylo) ||
        parse_bound(colon + 1, strlen(colon + 1), &r->has_yhi, &r->yhi)) {
        nt_errorf(CMD, "--yrange '%s': want LO:HI, numbers, either left out (90:, :100, 90:102)",
                  s);
        return -1;
    }
    if (!r->has_ylo && !r->has_yhi) {
        nt_errorf(CMD, "--yrange '%s': give LO, HI or both", s);
        return -1;
    }
    if ((r->has_yhi ? r->yhi : INFINITY) <= (r->has_ylo ? r->ylo : 0.0)) {
        nt_errorf(CMD, "--yrange '%s': HI must be above LO (LO left out is 0)", s);
        return -1;
    }
    return 0;
}

int cmd_plot(int argc, char **argv) {
    static const char *const kinds[] = {
        [NT_PLOT_BW] = "bw", [NT_PLOT_PCT] = "pct", [NT_PLOT_SPREAD] = "spread"};
    const char *dbp = NULL, *csv = NULL, *out = "plot.svg", *device = NULL, *kindname = NULL;
    const char *xs = NULL, *ys = NULL, *by = NULL, *yrange = NULL, *ext;
    const char *title = NULL, *ylabel = NULL;
    char err[2048];
    int kind = NT_PLOT_BW, logx = 0, png;
    const nt_opt opts[] = {
        {"db", 0, NT_OPT_STR, &dbp, NULL},       {"csv", 0, NT_OPT_STR, &csv, NULL},
        {"output", 'o', NT_OPT_STR, &out, NULL}, {"device", 0, NT_OPT_STR, &device, NULL},
        {"kind", 0, NT_OPT_STR, &kindname, NULL}, {"x", 0, NT_OPT_STR, &xs, NULL},
        {"y", 0, NT_OPT_STR, &ys, NULL},         {"logx", 0, NT_OPT_FLAG, &logx, NULL},
        {"by", 0, NT_OPT_STR, &by, NULL},        {"yrange", 0, NT_OPT_STR, &yrange, NULL},
        {"title", 0, NT_OPT_STR, &title, NULL},  {"ylabel", 0, NT_OPT_STR, &ylabel, NULL},
    };
    int rc = nt_parse_opts(CMD, argc, argv, opts, NT_NOPTS(opts), plot_usage);
    if (rc >= 0) return rc;
    if (optind < argc) {
        nt_errorf(CMD, "unexpected argument '%s' (see normtune plot --help)", argv[optind]);
        return NT_EXIT_USAGE;
    }
    if (!dbp == !csv) {
        nt_errorf(CMD, "needs --db FILE or --csv FILE, not %s (see normtune plot --help)",
                  dbp ? "both" : "neither");
        return NT_EXIT_USAGE;
    }
    if (dbp && (xs || ys || by || logx)) {
        nt_errorf(CMD, "--x, --y, --by and --logx go with --csv, not --db");
        return NT_EXIT_USAGE;
    }
    if (csv && (kindname || device)) {
        nt_errorf(CMD, "--kind and --device go with --db, not --csv");
        return NT_EXIT_USAGE;
    }
    const char *texts[2][2] = {{"--title", title}, {"--ylabel", ylabel}};
    for (int i = 0; i < 2; i++)
        if (texts[i][1] && strlen(texts[i][1]) > NT_PLOT_TEXT_MAX) {
            nt_errorf(CMD, "%s: %zu bytes, at most %d", texts[i][0], strlen(texts[i][1]),
                      NT_PLOT_TEXT_MAX);
            return NT_EXIT_USAGE;
        }
    nt_plot_req req = {.db = dbp, .csv = csv, .device = device, .x = xs, .y = ys, .by = by,
                       .logx = logx, .title = title, .ylabel = ylabel, .out = out};
    if (yrange && parse_yrange(yrange, &req)) return NT_EXIT_USAGE;
    if (kindname) {
        for (kind = 0; kind < (int)(sizeof kinds / sizeof kinds[0]); kind++)
            if (!strcmp(kindname, kinds[kind])) break;
        if (kind == (int)(sizeof kinds / sizeof kinds[0])) {
            nt_errorf(CMD, "unknown --kind '%s' (bw, pct or spread)", kindname);
            return NT_EXIT_USAGE;
        }
    }
    /* a database or the input is refused before the name is looked at */
    const char *protect[2] = {dbp, csv};
    if (nt_out_check(out, protect, 2, err, sizeof err)) {
        nt_errorf(CMD, "%s", err);
        return NT_EXIT_FAIL;
    }
    ext = strrchr(out, '.');
    if (ext && strchr(ext, '/')) ext = NULL;
    if (!ext || (strcasecmp(ext, ".svg") && strcasecmp(ext, ".png"))) {
        nt_errorf(CMD, "-o %s: the name must end in .svg or .png", out);
        return NT_EXIT_USAGE;
    }
    png = !strcasecmp(ext, ".png");

    req.kind = kind;
    req.png = png;
    req.protect = protect;
    if (nt_plot_draw(&req, err, sizeof err)) {
        nt_errorf(CMD, "%s", err);
        return NT_EXIT_FAIL;
    }
    fprintf(stderr, "normtune plot: wrote %s\n", out);
    return NT_EXIT_OK;
}
