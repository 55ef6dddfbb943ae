/* plot.h -- figures of a results database or of a CSV file, drawn by
 * gnuplot: what `normtune plot` (tuner/cmd_plot.c) draws; tuner/plot.c
 * says how. */
#ifndef NT_PLOT_H
#define NT_PLOT_H

#include <stddef.h>

/* Figures of a database. */
enum {
    NT_PLOT_BW,               /* GB/s of the best config of each family against N */
    NT_PLOT_PCT,              /* the same as % of the copy bandwidth */
    NT_PLOT_SPREAD,           /* GB/s of every successful variant per shape */
};

/* One figure to draw: of db (kind, device), or of csv (x, y, by, logx). */
#define NT_PLOT_TEXT_MAX 190   /* bytes of a --title or --ylabel */

typedef struct nt_plot_req {
    const char *db, *csv;     /* exactly one is set */
    const char *device;       /* db: device name or uuid, NULL: the only one */
    const char *x, *y, *by;   /* csv: columns, NULL: defaults */
    int kind;                 /* db: NT_PLOT_* */
    int logx;                 /* csv: log2 x axis */
    int has_ylo, has_yhi;     /* the y axis from ylo (else 0, or the data's
                                 lowest value below 0) to yhi (else */
    double ylo, yhi;          /* what the data reach): a zoom on close lines */
    int png;                  /* 1: PNG, 0: SVG */
    const char *title, *ylabel; /* the figure's title and y axis label, NULL:
                                 its own (at most NT_PLOT_TEXT_MAX bytes) */
    const char *out;          /* the picture to write (atomically) */
    const char *const *protect; /* 2 paths never written over: db and csv */
} nt_plot_req;

/* Draw the figure of r with gnuplot into r->out.  0, or -1 with a message in
 * err ("gnuplot not found: ...", a database or CSV error, gnuplot's output
 * when it fails). */
int nt_plot_draw(const nt_plot_req *r, char *err, size_t errlen);

#endif
