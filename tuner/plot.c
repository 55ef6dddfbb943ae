/* plot.c -- the figures behind `normtune plot` (tuner/cmd_plot.c): of a
 * results database, or of any CSV that `query`/`report --format csv` write,
 * drawn by gnuplot.
 *
 * Three figures:
 *   NT_PLOT_BW / NT_PLOT_PCT  the best config of each family per shape
 *                (as `best` ranks: the store hands over that row alone):
 *                GB/s (or % of the measured copy bandwidth) against N on a
 *                log2 axis, one line per M and family, the copy bandwidth
 *                as a reference line;
 *   NT_PLOT_SPREAD  every successful variant's GB/s per shape as points, one
 *                colour per family, the best of each shape marked;
 *   a CSV file   columns of a CSV file: x (first column or --x) against
 *                the numeric columns (or --y A,B).
 *
 * The figure is first built in memory (fig: series of points and labels),
 * then written as a gnuplot script and a data file into a fresh temporary
 * directory, where gnuplot runs (its stdin /dev/null, its output captured
 * and shown when it fails).  The picture it renders there is copied into
 * the target through nt_out (atomic; a database is never overwritten) and
 * the directory is removed.  Every text from the data (device, family,
 * column names) reaches gnuplot in single quotes, where it neither expands
 * backquotes nor macros. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db/store.h"
#include "tuner/plot.h"
#include "tuner/output.h"
#include "tuner/table.h"

/* ---- the figure in memory ---------------------------------------------------- */

/* One plotted series: points with one style and a legend entry. */
typedef struct series {
    char title[400];
    char color[16];                /* "#rrggbb" or "#aarrggbb" (aa: transparency) */
    int dash, pt, lines;           /* gnuplot dashtype, pointtype; 1: lines too */
    double ps, lw;                 /* point size, line width */
    double key1, key2, key3;       /* legend order */
    int n, cap;
    double *x, *y;
} series;

/* A whole figure: labels, axes, series. */
typedef struct fig {
    char title[640], xlabel[200], ylabel[200];
    int logx;                      /* log2 x axis */
    int xrot;                      /* x tic labels rotated */
    double xmin, xmax;             /* x range, when xmin < xmax */
    int has_ylo, has_yhi;          /* y range: [ylo or min(0, the data's bottom) : yhi or the data's top] */
    double ylo, yhi;
    double ref;                    /* a horizontal reference line, when > 0 */
    char reflabel[160];
    int nsep;                      /* vertical separators at these x */
    double sep[64];
    int nxt;                       /* explicit x tics */
    double *xtpos;
    char **xtlab;
    int ns, cap;
    series *s;
} fig;

static void fig_free(fig *f) {
    for (int i = 0; i < f->ns; i++) {
        free(f->s[i].x);
        free(f->s[i].y);
    }
    for (int i = 0; i < f->nxt; i++) free(f->xtlab[i]);
    free(f->s);
    free(f->xtpos);
    free(f->xtlab);
    memset(f, 0, sizeof *f);
}

/* The series titled title, added (empty, unstyled) if new; NULL if out of
 * memory.  Pointers into f->s stay valid only until the next call. */
static series *fig_series(fig *f, const char *title) {
    for (int i = 0; i < f->ns; i++)
        if (!strcmp(f->s[i].title, title)) return &f->s[i];
    if (f->ns == f->cap) {
        int cap = f->cap ? 2 * f->cap : 16;
        series *s = realloc(f->s, (size_t)cap * sizeof *s);
        if (!s) return NULL;
        f->s = s;
        f->cap = cap;
    }
    series *s = &f->s[f->ns++];
    memset(s, 0, sizeof *s);
    snprintf(s->title, sizeof s->title, "%s", title);
    snprintf(s->color, sizeof s->color, "#000000");
    s->dash = s->lines = 1;
    s->pt = 7;
    s->ps = 0.8;
    s->lw = 2;
    return s;
}

/* Append a point; 0, or -1 when out of memory. */
static int series_add(series *s, double x, double y) {
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        double *nx = realloc(s->x, (size_t)cap * sizeof *nx);
        if (!nx) return -1;
        s->x = nx;
        double *ny = realloc(s->y, (size_t)cap * sizeof *ny);
        if (!ny) return -1;
        s->y = ny;
        s->cap = cap;
    }
    s->x[s->n] = x;
    s->y[s->n++] = y;
    return 0;
}

/* Add an x tic at pos labelled label; 0, or -1 when out of memory. */
static int fig_xtic(fig *f, double pos, const char *label) {
    double *p = realloc(f->xtpos, (size_t)(f->nxt + 1) * sizeof *p);
    if (!p) return -1;
    f->xtpos = p;
    char **l = realloc(f->xtlab, (size_t)(f->nxt + 1) * sizeof *l);
    if (!l) return -1;
    f->xtlab = l;
    if (!(l[f->nxt] = strdup(label))) return -1;
    p[f->nxt++] = pos;
    return 0;
}

static int series_cmp(const void *a, const void *b) {
    const series *x = a, *y = b;
    if (x->key1 != y->key1) return x->key1 < y->key1 ? -1 : 1;
    if (x->key2 != y->key2) return x->key2 < y->key2 ? -1 : 1;
    if (x->key3 != y->key3) return x->key3 < y->key3 ? -1 : 1;
    return strcmp(x->title, y->title);
}

/* Colours for lines (one per M or per column), and the styles of families. */
static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                      "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
                                      "#7f7f7f", "#bcbd22"};
#define NPAL (int)(sizeof palette / sizeof palette[0])
static const struct {
    int dash, pt;
} famstyle[] = {{1, 7}, {2, 6}, {4, 5}, {5, 4}, {3, 9}};
#define NFAMSTYLE (int)(sizeof famstyle / sizeof famstyle[0])

/* ---- writing the gnuplot script ---------------------------------------------- */

/* s as a gnuplot string: single-quoted (no backquote or macro expansion),
 * quotes doubled, a newline as "\n" joined on, other control characters
 * as blanks. */
static void gp_str(FILE *f, const char *s) {
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputs("''", f);
        else if (*s == '\n') fputs("'.\"\\n\".'", f);
        else if ((unsigned char)*s < 0x20 || *s == 0x7f) fputc(' ', f);
        else fputc(*s, f);
    }
    fputc('\'', f);
}

/* Write dir/data (one block per series, blocks apart by two blank lines)
 * and dir/plot.gp, which renders f to dir/out as SVG or PNG (png).  0, or
 * -1 with a message. */
static int fig_write(const fig *f, const char *dir, int png, char *err, size_t errlen) {
    char path[4200];
    FILE *d, *g;
    int block = 0, first = 1;

    snprintf(path, sizeof path, "%s/data", dir);
    if (!(d = fopen(path, "w"))) goto ioerr;
    for (int i = 0; i < f->ns; i++) {
        if (!f->s[i].n) continue;
        for (int j = 0; j < f->s[i].n; j++) fprintf(d, "%.17g %.17g\n", f->s[i].x[j], f->s[i].y[j]);
        fputs("\n\n", d);
    }
    if (fclose(d)) goto ioerr;

    snprintf(path, sizeof path, "%s/plot.gp", dir);
    if (!(g = fopen(path, "w"))) goto ioerr;
    if (png)
        fputs("set terminal pngcairo size 1200,700 noenhanced font 'sans,11' "
              "background '#ffffff'\n", g);
    else
        fputs("set terminal svg size 1200,700 noenhanced font 'sans,13' "
              "background '#ffffff'\n", g);
    fputs("set encoding utf8\nset output 'out'\nset datafile missing '-'\n"
          "set grid lc rgb '#d8d8d8'\nset border lc rgb '#404040'\n"
          "set key outside right top vertical Left reverse noautotitle samplen 3 "
          "spacing 1.15\nset offsets 0, 0, graph 0.05, 0\nset lmargin 11\n", g);
    /* left out, the bottom is 0, or the data's lowest value below 0 */
    if (f->has_ylo) fprintf(g, "set yrange [%.17g:", f->ylo);
    else fputs("set yrange [*<0:", g);
    if (f->has_yhi) fprintf(g, "%.17g]\n", f->yhi);
    else fputs("*]\n", g);
    fputs("set title ", g);
    gp_str(g, f->title);
    fprintf(g, " font ',%d'\nset xlabel ", png ? 14 : 16);
    gp_str(g, f->xlabel);
    fputs("\nset ylabel ", g);
    gp_str(g, f->ylabel);
    fputc('\n', g);
    if (f->logx) fputs("set logscale x 2\n", g);
    if (f->xmin < f->xmax) fprintf(g, "set xrange [%.17g:%.17g]\n", f->xmin, f->xmax);
    if (f->nxt) {
        fputs(f->xrot ? "set xtics rotate by 60 right (" : "set xtics (", g);
        for (int i = 0; i < f->nxt; i++) {
            if (i) fputs(", ", g);
            gp_str(g, f->xtlab[i]);
            fprintf(g, " %.17g", f->xtpos[i]);
        }
        fputs(")\n", g);
    }
    if (f->nsep) fputs("set grid noxtics\n", g);
    for (int i = 0; i < f->nsep; i++)
        fprintf(g, "set arrow from %.17g, graph 0 to %.17g, graph 1 nohead lc rgb '#909090' "
                   "dt 2 lw 1 back\n", f->sep[i], f->sep[i]);
    fputs("plot ", g);
    for (int i = 0; i < f->ns; i++) {
        const series *s = &f->s[i];
        if (!s->n) {
            continue;
        }
        if (!first) fputs(", \\\n     ", g);
        first = 0;
        fprintf(g, "'data' index %d using 1:2 with %s lc rgb '%s' dt %d lw %g pt %d ps %g "
                   "title ", block++, s->lines ? "linespoints" : "points", s->color,
                s->dash, s->lw, s->pt, s->ps);
        gp_str(g, s->title);
    }
    if (f->ref > 0) {
        fprintf(g, "%s%.17g with lines lc rgb '#000000' dt 3 lw 1.5 title ", first ? "" : ", \\\n     ",
                f->ref);
        gp_str(g, f->reflabel);
    }
    fputc('\n', g);
    if (fclose(g)) goto ioerr;
    return 0;
ioerr:
    snprintf(err, errlen, "cannot write %.1000s: %s", path, strerror(errno));
    return -1;
}

/* ---- running gnuplot ------------------------------------------------------------ */

/* The gnuplot program on PATH, malloc'd, or NULL. */
static char *find_gnuplot(void) {
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    while (1) {
        const char *end = strchr(path, ':');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        char *p = malloc(n + 10);
        struct stat st;
        if (!p) return NULL;
        if (n) {
            memcpy(p, path, n);
            p[n] = 0;
        } else {
            strcpy(p, ".");
        }
        strcat(p, "/gnuplot");
        if (!stat(p, &st) && S_ISREG(st.st_mode) && !access(p, X_OK)) return p;
        free(p);
        if (!end) return NULL;
        path = end + 1;
    }
}

/* Read up to the last cap-1 bytes of file path into buf (NUL-terminated,
 * trailing blank lines dropped). */
static void read_tail(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "r");
    size_t n = 0;
    buf[0] = 0;
    if (!f) return;
    if (fseek(f, 0, SEEK_END) == 0) {
        long sz = ftell(f);
        if (sz > (long)cap - 1) fseek(f, sz - (long)cap + 1, SEEK_SET);
        else fseek(f, 0, SEEK_SET);
    }
    n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = 0;
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = 0;
}

/* Run gnuplot plot.gp in dir (stdout and stderr to dir/gnuplot.log).  0, or
 * -1 with a message that carries gnuplot's own. */
static int run_gnuplot(const char *prog, const char *dir, char *err, size_t errlen) {
    char log[4200], msg[1500];
    int status;
    pid_t pid;
    snprintf(log, sizeof log, "%s/gnuplot.log", dir);
    fflush(NULL);
    if ((pid = fork()) < 0) {
        snprintf(err, errlen, "cannot start gnuplot: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int in = open("/dev/null", O_RDONLY), out = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (in < 0 || out < 0 || chdir(dir) || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
            dup2(out, 2) < 0)
            _exit(126);
        execl(prog, "gnuplot", "plot.gp", (char *)NULL);
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(err, errlen, "waiting for gnuplot: %s", strerror(errno));
            return -1;
        }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    read_tail(log, msg, sizeof msg);
    if (WIFEXITED(status))
        snprintf(err, errlen, "gnuplot (%s) failed with exit %d:\n%s", prog,
                 WEXITSTATUS(status), msg[0] ? msg : "(no message)");
    else
        snprintf(err, errlen, "gnuplot (%s) died of signal %d:\n%s", prog, WTERMSIG(status),
                 msg);
    return -1;
}

/* A fresh temporary directory (malloc'd), or NULL with a message. */
static char *make_tmpdir(char *err, size_t errlen) {
    const char *base = getenv("TMPDIR");
    char *d;
    if (!base || !*base) base = "/tmp";
    if (!(d = malloc(strlen(base) + 32))) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    sprintf(d, "%s/normtune-plot.XXXXXX", base);
    if (!mkdtemp(d)) {
        snprintf(err, errlen, "cannot create a temporary directory in %s: %s", base,
                 strerror(errno));
        free(d);
        return NULL;
    }
    return d;
}

/* Remove the files this command makes in dir, then dir. */
static void remove_tmpdir(char *dir) {
    static const char *const names[] = {"data", "plot.gp", "gnuplot.log", "out"};
    char p[4200];
    if (!dir) return;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
    free(dir);
}

/* Copy the rendered dir/out into the target through nt_out.  0, or -1 with
 * a message. */
static int commit_output(const char *dir, const char *target, const char *const *protect,
                         char *err, size_t errlen) {
    char p[4200], b[65536];
    nt_out o;
    size_t n, total = 0;
    FILE *in;
    snprintf(p, sizeof p, "%s/out", dir);
    if (!(in = fopen(p, "rb"))) {
        snprintf(err, errlen, "gnuplot wrote no picture");
        return -1;
    }
    if (nt_out_open(&o, target, protect, 2, err, errlen)) {
        fclose(in);
        return -1;
    }
    while ((n = fread(b, 1, sizeof b, in)) > 0) {
        total += n;
        if (fwrite(b, 1, n, o.f) != n) break;
    }
    if (ferror(in) || ferror(o.f) || total == 0) {
        snprintf(err, errlen, total ? "cannot copy the picture to %s" : "gnuplot wrote an empty "
                 "picture", target);
        fclose(in);
        nt_out_abort(&o);
        return -1;
    }
    fclose(in);
    return nt_out_commit(&o, err, errlen);
}

/* ---- figures of a database --------------------------------------------------------- */

/* Short family name: the part after the last '.' ("<op>.naive" -> "naive"). */
static const char *fam_short(const char *fam) {
    const char *d = strrchr(fam, '.');
    return d ? d + 1 : fam;
}

/* A list of distinct texts, in first-seen order. */
typedef struct names {
    int n;
    char v[32][192];
} names;

/* Index of s in l, added if new; -1 if the list is full. */
static int names_idx(names *l, const char *s) {
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], s)) return i;
    if (l->n == 32) return -1;
    snprintf(l->v[l->n], sizeof l->v[0], "%s", s);
    return l->n++;
}

static int cmp_text_desc(const void *a, const void *b) {
    return strcmp((const char *)b, (const char *)a);
}


/* Columns of store_report_shape used here. */
typedef struct shcols {
    int op, dtype, fam, status, gbps, pct;
} shcols;

static int shcols_find(const tbl *t, shcols *c, char *err, size_t errlen) {
    c->op = tbl_col(t, "op");
    c->dtype = tbl_col(t, "dtype");
    c->fam = tbl_col(t, "family");
    c->status = tbl_col(t, "status");
    c->gbps = tbl_col(t, "GB/s");
    c->pct = tbl_col(t, "% copy");
    if (c->op < 0 || c->dtype < 0 || c->fam < 0 || c->status < 0 || c->gbps < 0 || c->pct < 0) {
        snprintf(err, errlen, "unexpected columns in the shape report");
        return -1;
    }
    return 0;
}

/* x tics at every N of rows (sorted by N) on a log2 axis; labels on the
 * powers of two, and on the others that keep 0.3 (in log2) from every
 * label, so that close values (7168, 8192) do not overprint.  The range
 * gets a margin, so that the ends are not on the border.  0, or -1 when
 * out of memory. */
static int log_tics(fig *f, const store_best_row *rows, int n) {
    double v[256], lab[256];
    int nv = 0, nl = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].N > 0 && (!nv || v[nv - 1] != (double)rows[i].N) && nv < 256)
            v[nv++] = (double)rows[i].N;
    if (!nv) return 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < nv; i++) {
            int pow2 = ((int64_t)v[i] & ((int64_t)v[i] - 1)) == 0, near = 0;
            if (pass == 0 ? !pow2 : pow2) continue;
            for (int j = 0; j < nl; j++) near |= fabs(log2(v[i] / lab[j])) < 0.3;
            if (!near) lab[nl++] = v[i];
        }
    for (int i = 0; i < nv; i++) {
        char t[32] = "";
        for (int j = 0; j < nl; j++)
            if (lab[j] == v[i]) snprintf(t, sizeof t, "%.0f", v[i]);
        if (fig_xtic(f, v[i], t)) return -1;
    }
    f->xmin = v[0] / 1.1;
    f->xmax = v[nv - 1] * 1.1;
    return 0;
}

/* Build the figure of kind (K_*) from db for device (NULL: the only one).
 * 0, or -1 with a message. */
static int fig_db(fig *f, store *db, const char *device, int kind, char *err, size_t errlen) {
    store_best_row *rows = NULL;
    store_prov prov;
    tbl_shapes shapes = {0};
    names ops = {0}, fams = {0}, Ms = {0};
    int n = 0, rc = -1, mixed = 0;
    double copy_sum = 0, copy_min = 0, copy_max = 0;
    int ncopy = 0;

    if (store_best(db, device, 0, &rows, &n, &prov, err, errlen)) return -1;
    shapes.db = db;
    shapes.dev = prov.device_id;               /* a GPU of the model store_best chose */
    /* bw, pct: each family's best alone; spread: every point's GB/s */
    shapes.rows = kind == NT_PLOT_SPREAD ? STORE_SHAPES_POINTS : STORE_SHAPES_FAMBEST;
    for (int i = 0; i < n; i++) {
        char od[192], m[32];
        snprintf(od, sizeof od, "%s %s", rows[i].op, rows[i].dtype);
        snprintf(m, sizeof m, "%lld", (long long)rows[i].M);
        if (names_idx(&ops, od) < 0 || names_idx(&Ms, m) < 0) {
            snprintf(err, errlen, "too many ops or values of M to plot (at most 32)");
            goto done;
        }
        if (rows[i].pct_copy > 0) {
            double c = rows[i].gbps * 100.0 / rows[i].pct_copy;
            copy_sum += c;
            if (!ncopy || c < copy_min) copy_min = c;
            if (!ncopy || c > copy_max) copy_max = c;
            ncopy++;
        }
    }
    mixed = ops.n > 1;

    /* every result of every shape: the best per family, or all of them */
    for (int i = 0; i < n; i++) {
        const store_best_row *r = &rows[i];
        const tbl *sh = tbl_shape(&shapes, r->M, r->N, err, errlen);
        shcols c;
        double best[32] = {0}, bestp[32] = {0}, top = 0;
        int topfam = -1;
        if (!sh || shcols_find(sh, &c, err, errlen)) goto done;
        for (int j = 1; j < sh->nrow; j++) {
            if (strcmp(tbl_at(sh, j, c.op), r->op) || strcmp(tbl_at(sh, j, c.dtype), r->dtype) ||
                strcmp(tbl_at(sh, j, c.status), "ok") || !tbl_is_num(tbl_at(sh, j, c.gbps)))
                continue;
            int fi = names_idx(&fams, fam_short(tbl_at(sh, j, c.fam)));
            double g = strtod(tbl_at(sh, j, c.gbps), NULL);
            double p = strtod(tbl_at(sh, j, c.pct), NULL);
            if (fi < 0) {
                snprintf(err, errlen, "too many families to plot (at most 32)");
                goto done;
            }
            if (g > best[fi]) best[fi] = g, bestp[fi] = p;
            if (g > top) top = g, topfam = fi;
            if (kind == NT_PLOT_SPREAD) {
                series *s = fig_series(f, fams.v[fi]);
                if (!s || series_add(s, i, g)) goto oom;
                s->key2 = fi;
            }
        }
        if (kind == NT_PLOT_SPREAD) {
            char lab[224];
            if (topfam >= 0) {
                series *s = fig_series(f, "best of the shape");
                if (!s || series_add(s, i, top)) goto oom;
                s->key1 = 1;
                s->key2 = topfam;
            }
            if (mixed)
                snprintf(lab, sizeof lab, "%s %s %lld x %lld", r->op, r->dtype,
                         (long long)r->N, (long long)r->M);
            else
                snprintf(lab, sizeof lab, "%lld x %lld", (long long)r->N, (long long)r->M);
            if (fig_xtic(f, i, lab)) goto oom;
            if (i > 0 && rows[i - 1].N != r->N && f->nsep < 64) f->sep[f->nsep++] = i - 0.5;
            continue;
        }
        for (int fi = 0; fi < fams.n; fi++) {
            char title[320], od[192];
            if (best[fi] <= 0) continue;
            snprintf(od, sizeof od, "%s %s", r->op, r->dtype);
            snprintf(title, sizeof title, "%s%sM=%lld %s", mixed ? od : "", mixed ? ", " : "",
                     (long long)r->M, fams.v[fi]);
            series *s = fig_series(f, title);
            if (!s || series_add(s, (double)r->N, kind == NT_PLOT_PCT ? bestp[fi] : best[fi])) goto oom;
            s->key1 = names_idx(&ops, od);
            s->key2 = (double)r->M;
            s->key3 = fi;
        }
    }

    /* styles: families in reverse name order ("persistent" solid, "naive"
     * dashed); colours by M, or by family in the spread */
    char order[32][64];
    for (int i = 0; i < fams.n; i++) memcpy(order[i], fams.v[i], sizeof order[i]);
    qsort(order, (size_t)fams.n, sizeof order[0], cmp_text_desc);
    for (int i = 0; i < f->ns; i++) {
        series *s = &f->s[i];
        int rank = 0, mi;
        char m[32];
        if (kind == NT_PLOT_SPREAD) {
            if (s->key1 == 1) {
                snprintf(s->color, sizeof s->color, "#000000");
                s->pt = 6;
                s->ps = 1.4;
                s->lw = 1.2;
                s->lines = 0;
                continue;
            }
            for (rank = 0; rank < fams.n && strcmp(order[rank], s->title); rank++) {}
            snprintf(s->color, sizeof s->color, "#70%s", palette[rank % NPAL] + 1);
            s->pt = 7;
            s->ps = 0.45;
            s->lines = 0;
            s->key2 = rank;
            /* families side by side around the shape's position */
            for (int j = 0; j < s->n; j++)
                s->x[j] += fams.n > 1 ? (rank - (fams.n - 1) / 2.0) * (0.5 / (fams.n - 1)) : 0;
            continue;
        }
        for (rank = 0; rank < fams.n && strcmp(order[rank], fams.v[(int)s->key3]); rank++) {}
        snprintf(m, sizeof m, "%lld", (long long)s->key2);
        mi = names_idx(&Ms, m);
        snprintf(s->color, sizeof s->color, "%s", palette[mi % NPAL]);
        s->dash = famstyle[rank % NFAMSTYLE].dash;
        s->pt = famstyle[rank % NFAMSTYLE].pt;
        s->key3 = rank;
    }
    qsort(f->s, (size_t)f->ns, sizeof *f->s, series_cmp);

    /* labels */
    const char *what = kind == NT_PLOT_SPREAD ? "every successful variant per shape, best circled"
                                        : "best config per family and shape";
    snprintf(f->title, sizeof f->title, "%s%s%s: %s\nnormtune, results of %.10s", prov.device,
             mixed ? "" : ", ", mixed ? "" : ops.v[0], what, prov.last_finished);
    if (kind == NT_PLOT_SPREAD) {
        snprintf(f->xlabel, sizeof f->xlabel, "shape N x M (N: row length, M: rows), by N, then M");
        f->xrot = 1;
        f->xmin = -0.7;
        f->xmax = n - 0.3;
    } else {
        snprintf(f->xlabel, sizeof f->xlabel, "N (row length, elements; log2 scale)");
        f->logx = 1;
        if (log_tics(f, rows, n)) goto oom;
    }
    snprintf(f->ylabel, sizeof f->ylabel, "%s",
             kind == NT_PLOT_PCT ? "% of the measured copy bandwidth"
                           : "GB/s (minimum bytes / median time)");
    if (kind == NT_PLOT_PCT) {
        f->ref = 100;
        snprintf(f->reflabel, sizeof f->reflabel, "device-to-device copy (100%%)");
    } else if (ncopy) {
        f->ref = copy_sum / ncopy;
        snprintf(f->reflabel, sizeof f->reflabel, "device-to-device copy, %.0f GB/s%s", f->ref,
                 copy_max > copy_min * 1.005 ? " (mean of the sweeps)" : "");
    }
    rc = 0;
    goto done;
oom:
    snprintf(err, errlen, "out of memory");
done:
    tbl_shapes_free(&shapes);
    free(rows);
    return rc;
}

/* ---- figures of a CSV file ----------------------------------------------------------- */

/* Index of column spec (a header name, or a 1-based number) in t, or -1
 * with a message. */
static int csv_col(const tbl *t, const char *spec, char *err, size_t errlen) {
    int c = tbl_col(t, spec);
    char *end;
    long k;
    if (c >= 0) return c;
    k = strtol(spec, &end, 10);
    if (*spec && !*end && k >= 1 && k <= t->ncol) return (int)k - 1;
    int n = snprintf(err, errlen, "no column '%s' (columns:", spec);
    for (c = 0; c < t->ncol && n > 0 && (size_t)n < errlen; c++)
        n += snprintf(err + n, errlen - (size_t)n, "%s '%s'", c ? "," : "", tbl_at(t, 0, c));
    if (n > 0 && (size_t)n < errlen) snprintf(err + n, errlen - (size_t)n, ")");
    return -1;
}

/* A cell that stands for no value: empty or "-". */
static int csv_missing(const char *s) {
    return !*s || !strcmp(s, "-");
}

/* Is column c numeric: every cell a number or missing, at least one number? */
static int csv_numeric(const tbl *t, int c) {
    int any = 0;
    for (int r = 1; r < t->nrow; r++) {
        const char *s = tbl_at(t, r, c);
        if (csv_missing(s)) continue;
        if (!tbl_is_num(s)) return 0;
        any = 1;
    }
    return any;
}

/* Sort the points of s by x (stable for equal x: insertion sort; series
 * are small). */
static void sort_points(series *s) {
    for (int i = 1; i < s->n; i++) {
        double x = s->x[i], y = s->y[i];
        int j = i - 1;
        for (; j >= 0 && s->x[j] > x; j--) {
            s->x[j + 1] = s->x[j];
            s->y[j + 1] = s->y[j];
        }
        s->x[j + 1] = x;
        s->y[j + 1] = y;
    }
}

/* Build the figure of CSV file path: x column xs (NULL: the first) against
 * columns ys ("A,B"; NULL: every other numeric column), one series per
 * value of column by (NULL: one per y column); points sorted by a numeric
 * x.  0, or -1 with a message. */
static int fig_csv(fig *f, const char *path, const char *xs, const char *ys, const char *by,
                   int logx, char *err, size_t errlen) {
    tbl t = {0};
    FILE *in = fopen(path, "r");
    char msg[400], *list = NULL;
    int xc, ycols[64], ny = 0, xnum, rc = -1, byc = -1, bynum;

    if (!in) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    if (tbl_read_csv(&t, in, msg, sizeof msg)) {
        snprintf(err, errlen, "%s: %s", path, msg);
        fclose(in);
        goto done;
    }
    fclose(in);
    if (t.nrow < 2) {
        snprintf(err, errlen, "%s: no rows (only a header line)", path);
        goto done;
    }
    if ((xc = xs ? csv_col(&t, xs, err, errlen) : 0) < 0) goto done;
    if (ys) {
        char *save = NULL, *tok;
        if (!(list = strdup(ys))) goto oom;
        for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            int c = csv_col(&t, tok, err, errlen);
            if (c < 0) goto done;
            if (!csv_numeric(&t, c)) {
                snprintf(err, errlen, "%s: column '%s' is not numeric", path, tbl_at(&t, 0, c));
                goto done;
            }
            if (ny == 64) {
                snprintf(err, errlen, "too many --y columns (at most 64)");
                goto done;
            }
            ycols[ny++] = c;
        }
    } else {
        for (int c = 0; c < t.ncol && ny < 64; c++)
            if (c != xc && csv_numeric(&t, c)) ycols[ny++] = c;
    }
    if (!ny) {
        snprintf(err, errlen, "%s: no numeric column to plot against '%s'", path,
                 tbl_at(&t, 0, xc));
        goto done;
    }
    xnum = csv_numeric(&t, xc);
    if (logx && !xnum) {
        snprintf(err, errlen, "--logx: column '%s' is not numeric", tbl_at(&t, 0, xc));
        goto done;
    }
    if (by && (byc = csv_col(&t, by, err, errlen)) < 0) goto done;
    bynum = byc >= 0 && csv_numeric(&t, byc);
    for (int k = 0; k < ny; k++) {
        for (int r = 1; r < t.nrow; r++) {
            const char *xv = tbl_at(&t, r, xc), *yv = tbl_at(&t, r, ycols[k]);
            char title[200];
            double x = r - 1;
            if (csv_missing(yv) || (xnum && csv_missing(xv))) continue;
            if (xnum) x = strtod(xv, NULL);
            if (logx && x <= 0) {
                snprintf(err, errlen, "--logx: '%s' has a value <= 0 (%s)", tbl_at(&t, 0, xc), xv);
                goto done;
            }
            if (byc < 0)
                snprintf(title, sizeof title, "%s", tbl_at(&t, 0, ycols[k]));
            else
                snprintf(title, sizeof title, "%s=%s%s%s", tbl_at(&t, 0, byc), tbl_at(&t, r, byc),
                         ny > 1 ? " " : "", ny > 1 ? tbl_at(&t, 0, ycols[k]) : "");
            int fresh = f->ns;
            series *s = fig_series(f, title);
            if (!s) goto oom;
            if (f->ns > fresh) {                /* new: ordered by y column, then by value */
                s->key1 = k;
                s->key2 = bynum ? strtod(tbl_at(&t, r, byc), NULL) : f->ns;
            }
            if (series_add(s, x, strtod(yv, NULL))) goto oom;
        }
    }
    qsort(f->s, (size_t)f->ns, sizeof *f->s, series_cmp);
    for (int i = 0; i < f->ns; i++) {
        snprintf(f->s[i].color, sizeof f->s[i].color, "%s", palette[i % NPAL]);
        if (xnum) sort_points(&f->s[i]);
    }
    if (!xnum) {                                /* x as labels, at most ~40 shown */
        int step = (t.nrow - 1 + 39) / 40;
        for (int r = 1; r < t.nrow; r += step)
            if (fig_xtic(f, r - 1, tbl_at(&t, r, xc))) goto oom;
        f->xrot = 1;
        f->xmin = -0.5;
        f->xmax = t.nrow - 1.5;
        if (f->xmin >= f->xmax) f->xmin -= 1, f->xmax += 1;
    }
    f->logx = logx;
    const char *base = strrchr(path, '/');
    snprintf(f->title, sizeof f->title, "%s", base ? base + 1 : path);
    snprintf(f->xlabel, sizeof f->xlabel, "%s", tbl_at(&t, 0, xc));
    if (ny == 1) snprintf(f->ylabel, sizeof f->ylabel, "%s", tbl_at(&t, 0, ycols[0]));
    rc = 0;
    goto done;
oom:
    snprintf(err, errlen, "out of memory");
done:
    free(list);
    tbl_free(&t);
    return rc;
}

/* ---- drawing ----------------------------------------------------------------------- */

/* Draw the figure of r (see plot.h). */
int nt_plot_draw(const nt_plot_req *r, char *err, size_t errlen) {
    char *prog = NULL, *dir = NULL;
    int rc = -1;
    fig f = {0};
    store *db = NULL;

    if (!(prog = find_gnuplot())) {
        snprintf(err, errlen, "gnuplot not found: install the Debian package gnuplot-nox");
        return -1;
    }
    if (r->db) {
        if (store_open(&db, r->db, STORE_READ, err, errlen) ||
            fig_db(&f, db, r->device, r->kind, err, errlen))
            goto fail;
    } else if (fig_csv(&f, r->csv, r->x, r->y, r->by, r->logx, err, errlen)) {
        goto fail;
    }
    f.has_ylo = r->has_ylo, f.ylo = r->ylo;
    f.has_yhi = r->has_yhi, f.yhi = r->yhi;
    if (r->title) snprintf(f.title, sizeof f.title, "%s", r->title);
    if (r->ylabel) snprintf(f.ylabel, sizeof f.ylabel, "%s", r->ylabel);
    if (!(dir = make_tmpdir(err, errlen)) || fig_write(&f, dir, r->png, err, errlen) ||
        run_gnuplot(prog, dir, err, errlen) ||
        commit_output(dir, r->out, r->protect, err, errlen))
        goto fail;
    rc = 0;
fail:
    remove_tmpdir(dir);
    if (db) store_close(db);
    fig_free(&f);
    free(prog);
    return rc;
}
