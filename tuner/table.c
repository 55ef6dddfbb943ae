/* table.c -- tables of texts and their formats (see table.h).
 *
 * The three machine formats are written here by hand rather than through
 * SQLite's own CSV/JSON (the sqlite3 shell's modes are not in the library,
 * and json_quote() would need a second connection per cell) because the
 * cells reach us as texts through the store's callbacks; each format is a
 * few lines of escaping, kept in this one file.  tbl_shape keeps the shape
 * reports of one device model, so that `report` and `plot` read each shape
 * once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/table.h"

void tbl_free(tbl *t) {
    for (int i = 0; i < t->nrow * t->ncol; i++) free(t->cell[i]);
    free(t->cell);
    memset(t, 0, sizeof *t);
}

void tbl_add(tbl *t, int ncol, const char *const *cells) {
    if (t->oom) return;
    if (t->nrow == 0) t->ncol = ncol;
    if (ncol != t->ncol || ncol <= 0) {
        t->oom = 1;
        return;
    }
    if (t->nrow == t->cap) {
        int cap = t->cap ? 2 * t->cap : 32;
        char **c = realloc(t->cell, (size_t)cap * (size_t)ncol * sizeof *c);
        if (!c) {
            t->oom = 1;
            return;
        }
        t->cell = c;
        t->cap = cap;
    }
    for (int i = 0; i < ncol; i++) {
        char *s = strdup(cells[i] ? cells[i] : "");
        if (!s) {
            for (int j = 0; j < i; j++) free(t->cell[t->nrow * ncol + j]);
            t->oom = 1;
            return;
        }
        t->cell[t->nrow * ncol + i] = s;
    }
    t->nrow++;
}

void tbl_row(void *ctx, int header, int ncol, const char *const *cell) {
    tbl *t = ctx;
    if (header && t->nrow) {
        int keep = t->oom;
        tbl_free(t);
        t->oom = keep;
    }
    tbl_add(t, ncol, cell);
}

/* store_report_shapes' rows: a new table at each shape's header. */
static void shapes_add(void *ctx, int64_t M, int64_t N, int header, int ncol,
                       const char *const *cell) {
    tbl_shapes *c = ctx;
    if (c->oom) return;
    if (header) {
        if (c->n == c->cap) {
            int cap = c->cap ? 2 * c->cap : 64;
            struct tbl_shape *e = realloc(c->e, (size_t)cap * sizeof *e);
            if (!e) {
                c->oom = 1;
                return;
            }
            c->e = e;
            c->cap = cap;
        }
        tbl *t = calloc(1, sizeof *t);
        if (!t) {
            c->oom = 1;
            return;
        }
        c->e[c->n++] = (struct tbl_shape){M, N, t};
    }
    tbl *t = c->e[c->n - 1].t;
    tbl_row(t, header, ncol, cell);
    c->oom |= t->oom;
}

const tbl *tbl_shape(tbl_shapes *c, int64_t M, int64_t N, char *err, size_t errlen) {
    if (!c->loaded) {
        c->loaded = 1;
        if (store_report_shapes(c->db, c->dev, c->rows, shapes_add, c, err, errlen))
            return NULL;
        if (c->oom) goto oom;
    }
    for (int i = 0; i < c->n; i++)
        if (c->e[i].M == M && c->e[i].N == N) return c->e[i].t;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        struct tbl_shape *e = realloc(c->e, (size_t)cap * sizeof *e);
        if (!e) goto oom;
        c->e = e;
        c->cap = cap;
    }
    tbl *t = calloc(1, sizeof *t);
    if (!t) goto oom;
    if (store_report_shape(c->db, c->dev, M, N, tbl_row, t, err, errlen)) {
        tbl_free(t);
        free(t);
        return NULL;
    }
    if (t->oom) {
        tbl_free(t);
        free(t);
        goto oom;
    }
    c->e[c->n++] = (struct tbl_shape){M, N, t};
    return t;
oom:
    snprintf(err, errlen, "out of memory");
    return NULL;
}

void tbl_shapes_free(tbl_shapes *c) {
    for (int i = 0; i < c->n; i++) {
        tbl_free(c->e[i].t);
        free(c->e[i].t);
    }
    free(c->e);
    memset(c, 0, sizeof *c);
}

const char *tbl_at(const tbl *t, int r, int c) {
    return t->cell[r * t->ncol + c];
}

int tbl_col(const tbl *t, const char *name) {
    for (int c = 0; t->nrow > 0 && c < t->ncol; c++)
        if (!strcmp(tbl_at(t, 0, c), name)) return c;
    return -1;
}

/* A JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? -- strtod
 * alone would also take "inf", "0x10" or " 5". */
int tbl_is_num(const char *s) {
    const char *p = s;
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') p++;
    else return 0;
    if (*p == '.') {
        if (!(*++p >= '0' && *p <= '9')) return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return 0;
        while (*p >= '0' && *p <= '9') p++;
    }
    return *p == 0;
}

static const char *const fmt_names[] = {[TBL_TABLE] = "table", [TBL_CSV] = "csv",
                                        [TBL_JSON] = "json"};

int tbl_format(const char *name) {
    for (int i = 0; i < (int)(sizeof fmt_names / sizeof fmt_names[0]); i++)
        if (fmt_names[i] && !strcmp(name, fmt_names[i])) return i;
    return -1;
}

/* "-" is how the store writes SQL NULL. */
static int is_null(const char *s) {
    return !strcmp(s, "-");
}

/* Is column c numeric: every data cell a number or NULL, at least one
 * number? */
static int col_numeric(const tbl *t, int c) {
    int any = 0;
    for (int r = 1; r < t->nrow; r++) {
        const char *s = tbl_at(t, r, c);
        if (is_null(s)) continue;
        if (!tbl_is_num(s)) return 0;
        any = 1;
    }
    return any;
}

/* Column widths and alignment (1 = right: every data cell is a number). */
static void layout(const tbl *t, int *w, int *right) {
    for (int c = 0; c < t->ncol; c++) {
        w[c] = 0;
        right[c] = t->nrow > 1;
        for (int r = 0; r < t->nrow; r++) {
            const char *s = tbl_at(t, r, c);
            int n = (int)strlen(s);
            if (n > w[c]) w[c] = n;
            if (r > 0 && !is_null(s) && !tbl_is_num(s)) right[c] = 0;
        }
    }
}

/* The plain aligned table: header, a rule of dashes, the rows. */
static void write_table(const tbl *t, const int *w, const int *right, FILE *f) {
    for (int r = 0; r < t->nrow; r++) {
        int end = t->ncol;                      /* no trailing blanks */
        while (end > 1 && !right[end - 1] && !*tbl_at(t, r, end - 1)) end--;
        for (int c = 0; c < end; c++) {
            int last = c == end - 1;
            const char *s = tbl_at(t, r, c);
            if (right[c]) fprintf(f, "%*s", w[c], s);
            else fprintf(f, "%-*s", last ? 0 : w[c], s);
            fputs(last ? "\n" : "  ", f);
        }
        if (r == 0) {
            for (int c = 0; c < t->ncol; c++) {
                for (int i = 0; i < w[c]; i++) fputc('-', f);
                fputs(c == t->ncol - 1 ? "\n" : "  ", f);
            }
        }
    }
    if (t->nrow == 1) fputs("(no rows)\n", f);
}

/* A markdown table, padded so that it also reads as plain text. */
static void write_md(const tbl *t, int *w, const int *right, FILE *f) {
    for (int c = 0; c < t->ncol; c++)
        if (w[c] < 4) w[c] = 4;                 /* room for "---:" */
    for (int r = 0; r < t->nrow; r++) {
        for (int c = 0; c < t->ncol; c++)
            fprintf(f, right[c] ? "| %*s " : "| %-*s ", w[c], tbl_at(t, r, c));
        fputs("|\n", f);
        if (r == 0) {
            for (int c = 0; c < t->ncol; c++) {
                fputs("| ", f);
                for (int i = 0; i < w[c] - right[c]; i++) fputc('-', f);
                fputs(right[c] ? ": " : " ", f);
            }
            fputs("|\n", f);
        }
    }
}

static void csv_field(const char *s, FILE *f) {
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void write_csv(const tbl *t, FILE *f) {
    for (int r = 0; r < t->nrow; r++)
        for (int c = 0; c < t->ncol; c++) {
            const char *s = tbl_at(t, r, c);
            if (r == 0 || !is_null(s)) csv_field(s, f);
            fputc(c == t->ncol - 1 ? '\n' : ',', f);
        }
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if it is not one
 * (overlong forms, surrogates and code points above U+10FFFF included). */
static int utf8_len(const unsigned char *s) {
    int n;
    unsigned cp;
    if (s[0] < 0x80) return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) n = 2, cp = s[0] & 0x1F;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF) n = 3, cp = s[0] & 0x0F;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4) n = 4, cp = s[0] & 0x07;
    else return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return n;
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void json_str(const char *s, FILE *f) {
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        int n = utf8_len(p);
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p == '\r') fputs("\\r", f);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else if (n == 0) fputs("\\ufffd", f);
        else fwrite(p, 1, (size_t)n, f);
        p += n ? n : 1;
    }
    fputc('"', f);
}

static void write_json(const tbl *t, FILE *f) {
    int *num = calloc((size_t)t->ncol, sizeof *num);
    if (!num) return;
    for (int c = 0; c < t->ncol; c++) num[c] = col_numeric(t, c);
    fputc('[', f);
    for (int r = 1; r < t->nrow; r++) {
        fputs(r == 1 ? "\n  {" : ",\n  {", f);
        for (int c = 0; c < t->ncol; c++) {
            const char *s = tbl_at(t, r, c);
            if (c) fputs(", ", f);
            json_str(tbl_at(t, 0, c), f);
            fputs(": ", f);
            if (is_null(s)) fputs("null", f);
            else if (num[c]) fputs(s, f);
            else json_str(s, f);
        }
        fputc('}', f);
    }
    fputs(t->nrow > 1 ? "\n]\n" : "]\n", f);
    free(num);
}

void tbl_write(const tbl *t, int fmt, FILE *f) {
    int *w, *right;
    if (t->nrow == 0) return;
    if (fmt == TBL_CSV) {
        write_csv(t, f);
        return;
    }
    if (fmt == TBL_JSON) {
        write_json(t, f);
        return;
    }
    w = calloc((size_t)t->ncol, sizeof *w);
    right = calloc((size_t)t->ncol, sizeof *right);
    if (w && right) {
        layout(t, w, right);
        if (fmt == TBL_MD) write_md(t, w, right, f);
        else write_table(t, w, right, f);
    }
    free(w);
    free(right);
}

/* ---- reading CSV ------------------------------------------------------------ */

/* A growing text buffer. */
typedef struct buf {
    char *s;
    size_t n, cap;
} buf;

static int buf_put(buf *b, char c) {
    if (b->n + 1 >= b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 64;
        char *s = realloc(b->s, cap);
        if (!s) return -1;
        b->s = s;
        b->cap = cap;
    }
    b->s[b->n++] = c;
    b->s[b->n] = 0;
    return 0;
}

/* Read one record into fields (texts in fb, separated by NULs, offsets in
 * off).  Returns the number of fields, 0 at end of input, -1 on a
 * malformed record or no memory (err set). *line counts input lines. */
static int csv_record(FILE *f, buf *fb, size_t **off, size_t *offcap, int *line,
                      char *err, size_t errlen) {
    int c, nf = 0, quoted = 0, start = *line;
    fb->n = 0;
    for (;;) {
        /* a field */
        if ((size_t)nf == *offcap) {
            size_t cap = *offcap ? 2 * *offcap : 16;
            size_t *o = realloc(*off, cap * sizeof *o);
            if (!o) goto oom;
            *off = o;
            *offcap = cap;
        }
        (*off)[nf++] = fb->n;
        c = getc(f);
        if (c == EOF && nf == 1) return 0;
        if ((c == '\n' || c == '\r') && nf == 1 && fb->n == 0) {   /* blank line */
            if (c == '\r' && (c = getc(f)) != '\n' && c != EOF) ungetc(c, f);
            (*line)++;
            nf = 0;
            continue;
        }
        quoted = c == '"';
        if (quoted) {
            for (;;) {
                c = getc(f);
                if (c == EOF) {
                    snprintf(err, errlen, "line %d: a quoted field is not closed", start);
                    return -1;
                }
                if (c == '\n') (*line)++;
                if (c == '"') {
                    if ((c = getc(f)) != '"') break;
                }
                if (buf_put(fb, (char)c)) goto oom;
            }
            if (c != ',' && c != '\n' && c != '\r' && c != EOF) {
                snprintf(err, errlen, "line %d: text after a closing quote", *line);
                return -1;
            }
        } else {
            while (c != ',' && c != '\n' && c != '\r' && c != EOF) {
                if (c == '"') {
                    snprintf(err, errlen, "line %d: a quote inside an unquoted field", *line);
                    return -1;
                }
                if (buf_put(fb, (char)c)) goto oom;
                c = getc(f);
            }
        }
        if (buf_put(fb, 0)) goto oom;           /* the NUL ends the field */
        if (c == ',') continue;
        if (c == '\r' && (c = getc(f)) != '\n' && c != EOF) ungetc(c, f);
        (*line)++;
        return nf;
    }
oom:
    snprintf(err, errlen, "out of memory");
    return -1;
}

int tbl_read_csv(tbl *t, FILE *f, char *err, size_t errlen) {
    buf fb = {0};
    size_t *off = NULL, offcap = 0;
    const char **cells = NULL;
    int line = 1, nf, rc = -1;
    while ((nf = csv_record(f, &fb, &off, &offcap, &line, err, errlen)) > 0) {
        const char **c2 = realloc(cells, (size_t)nf * sizeof *c2);
        if (!c2) {
            snprintf(err, errlen, "out of memory");
            goto done;
        }
        cells = c2;
        for (int i = 0; i < nf; i++) cells[i] = fb.s ? fb.s + off[i] : "";
        if (t->nrow > 0 && nf != t->ncol) {
            snprintf(err, errlen, "line %d: %d fields, the header has %d", line - 1, nf,
                     t->ncol);
            goto done;
        }
        tbl_add(t, nf, cells);
        if (t->oom) {
            snprintf(err, errlen, "out of memory");
            goto done;
        }
    }
    if (nf < 0) goto done;
    if (ferror(f)) {
        snprintf(err, errlen, "read error");
        goto done;
    }
    if (t->nrow == 0) {
        snprintf(err, errlen, "empty file (no header line)");
        goto done;
    }
    rc = 0;
done:
    free(fb.s);
    free(off);
    free(cells);
    return rc;
}
