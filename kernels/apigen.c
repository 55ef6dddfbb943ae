/* apigen.c -- the production library's entry points of every op, from the
 * op tables (apigen.h says what follows from a table and why).
 *
 * The library's calls are not written per op: an op's table (its tensors
 * and dtype slots) gives the argument list of its three calls, and from it
 * this file writes their definitions for normtune.cu and the one-signature
 * call table tests and benchmarks iterate.  The op's api.h, written by
 * hand for a reader, must declare exactly those prototypes: nt_api_check
 * compares them when the public header is put together (make lib) and in
 * the CPU test tests/test_api.c.
 *
 * Compiled with -DNT_APIGEN_MAIN (make lib does, into build/apigen) it is
 * the build tool:
 *
 *   apigen header KDIR   normtune_ops.h on stdout (KDIR: the kernels/ folder)
 *   apigen lib           the calls' definitions for normtune.cu
 *   apigen calls         nt_api_calls.h, the call table for tests/benchmarks
 *
 * Exit 0, 1 with a message on stderr (an api.h missing or not matching its
 * table), 2 on bad usage. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/apigen.h"

#define PROTO_LEN 1024        /* one prototype, normalized */
#define MAX_DECLS 64          /* NORMTUNE_API declarations in one header */

static const char *const call_suffix[NT_API_NCALLS] = {"", "_workspace_size", "_choice"};

/* snprintf into err; -1. */
static int fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Is s a C identifier? */
static int is_ident(const char *s) {
    if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
    for (s++; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
    return 1;
}

/* Append text to buf (len bytes, *used of them filled); -1 when it does
 * not fit. */
static int put(char *buf, size_t len, size_t *used, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, len - *used, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= len - *used) return -1;
    *used += (size_t)n;
    return 0;
}

/* The C type of op's tensor t as an argument, without the '*'. */
static const char *tensor_type(const nt_tensor_def *t) {
    int f32 = t->slot < 0 && t->fixed == NT_F32;
    if (t->role == NT_IN) return f32 ? "const float" : "const void";
    return f32 ? "float" : "void";
}

/* The argument names every call has besides the op's own. */
static const char *const fixed_args[] = {"M", "N", "eps", "workspace", "workspace_bytes",
                                         "stream", "bytes", "out", "dt", "t", NULL};

/* Are op's tensor and slot names usable as argument names: identifiers,
 * distinct, none one of the fixed arguments' names? */
static int check_names(const nt_op *op, char *err, size_t errlen) {
    char a[NT_MAX_TENSORS + NT_MAX_SLOTS][NT_NAME_LEN + 8];
    int n = 0;
    if (!is_ident(op->name)) return fail(err, errlen, "op name '%s' is not a C identifier", op->name);
    for (int t = 0; t < op->ntensors; t++)
        snprintf(a[n++], sizeof a[0], "%s", op->tensors[t].name);
    for (int s = 0; s < op->nslots; s++) snprintf(a[n++], sizeof a[0], "%s_dtype", op->slots[s].name);
    for (int i = 0; i < n; i++) {
        if (!is_ident(a[i]))
            return fail(err, errlen, "%s: argument name '%s' is not a C identifier", op->name, a[i]);
        for (int j = 0; j < i; j++)
            if (!strcmp(a[i], a[j]))
                return fail(err, errlen, "%s: two arguments named '%s'", op->name, a[i]);
        for (int k = 0; fixed_args[k]; k++)
            if (!strcmp(a[i], fixed_args[k]))
                return fail(err, errlen, "%s: argument '%s' has the name of a fixed argument",
                            op->name, a[i]);
    }
    return 0;
}

int nt_api_proto(const nt_op *op, int which, char *buf, size_t len, char *err, size_t errlen) {
    size_t u = 0;
    int bad = 0;
    if (which < 0 || which >= NT_API_NCALLS) return fail(err, errlen, "no call %d", which);
    if (check_names(op, err, errlen)) return -1;
    bad |= put(buf, len, &u, "normtune_status normtune_%s%s(", op->name, call_suffix[which]);
    if (which == NT_API_RUN)
        for (int t = 0; t < op->ntensors; t++)
            bad |= put(buf, len, &u, "%s *%s, ", tensor_type(&op->tensors[t]),
                       op->tensors[t].name);
    bad |= put(buf, len, &u, "long long M, long long N, ");
    if (which == NT_API_RUN) bad |= put(buf, len, &u, "float eps, ");
    for (int s = 0; s < op->nslots; s++)
        bad |= put(buf, len, &u, "normtune_dtype %s_dtype, ", op->slots[s].name);
    if (which == NT_API_RUN)
        bad |= put(buf, len, &u,
                   "void *workspace, size_t workspace_bytes, struct CUstream_st *stream)");
    else if (which == NT_API_WORKSPACE)
        bad |= put(buf, len, &u, "size_t *bytes)");
    else
        bad |= put(buf, len, &u, "normtune_choice *out)");
    return bad ? fail(err, errlen, "%s: prototype too long", op->name) : 0;
}

/* A copy of text (malloc'd) with comments and preprocessor lines blanked. */
static char *strip(const char *text) {
    size_t n = strlen(text);
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, text, n + 1);
    int bol = 1;                          /* at the start of a line, blanks aside */
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '/' && s[i + 1] == '*') {
            size_t j = i + 2;
            while (j < n && !(s[j] == '*' && s[j + 1] == '/')) j++;
            j = j < n ? j + 2 : n;
            for (size_t k = i; k < j; k++) s[k] = s[k] == '\n' ? '\n' : ' ';
            i = j - 1;
            continue;
        }
        if ((s[i] == '/' && s[i + 1] == '/') || (bol && s[i] == '#')) {
            /* to the end of the line, continuation lines included */
            while (i < n && !(text[i] == '\n' && (i == 0 || text[i - 1] != '\\'))) s[i++] = ' ';
            bol = 1;
            continue;
        }
        if (s[i] == '\n') bol = 1;
        else if (!isspace((unsigned char)s[i])) bol = 0;
    }
    return s;
}

/* Normalize a declaration in place: blanks collapsed to one space, none
 * next to * ( ) , or at either end. */
static void normalize(char *s) {
    char *w = s;
    for (const char *r = s; *r; r++) {
        if (isspace((unsigned char)*r)) {
            if (w > s && w[-1] != ' ') *w++ = ' ';
            continue;
        }
        if (strchr("*(),", *r) && w > s && w[-1] == ' ') w--;
        if (w > s && w[-1] == ' ' && w - 1 > s && strchr("*(),", w[-2])) w--;
        *w++ = *r;
    }
    if (w > s && w[-1] == ' ') w--;
    *w = 0;
}

/* Normalized declaration d as a person writes it ("const void *x, int n")
 * into buf. */
static void pretty(const char *d, char *buf, size_t len) {
    size_t u = 0;
    for (const char *r = d; *r && u + 3 < len; r++) {
        if (*r == '*' && r > d && (isalnum((unsigned char)r[-1]) || r[-1] == '_')) buf[u++] = ' ';
        buf[u++] = *r;
        if (*r == ',') buf[u++] = ' ';
    }
    buf[u] = 0;
}

/* The NORMTUNE_API declarations of text, normalized, without the macro and
 * the semicolon, into decl[] (at most max); how many, or -1.  (Its callers
 * keep decl[] in static storage: not reentrant, which a build tool and a
 * test need not be.) */
static int decls(const char *text, char (*decl)[PROTO_LEN], int max, char *err, size_t errlen) {
    char *s = strip(text);
    int n = 0;
    if (!s) return fail(err, errlen, "out of memory");
    for (char *p = s; (p = strstr(p, "NORMTUNE_API"));) {
        int word = (p == s || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
                   !(isalnum((unsigned char)p[12]) || p[12] == '_');
        p += 12;
        if (!word) continue;
        char *end = strchr(p, ';');
        if (!end || end - p >= PROTO_LEN || n == max) {
            free(s);
            return fail(err, errlen, "%s", !end ? "a NORMTUNE_API declaration without ';'"
                                                : "a declaration too long, or too many");
        }
        memcpy(decl[n], p, (size_t)(end - p));
        decl[n][end - p] = 0;
        normalize(decl[n++]);
        p = end;
    }
    free(s);
    return n;
}

/* The function name of normalized declaration d into name; 0 or -1. */
static int decl_name(const char *d, char *name, size_t len) {
    const char *par = strchr(d, '(');
    if (!par) return -1;
    const char *b = par;
    while (b > d && (isalnum((unsigned char)b[-1]) || b[-1] == '_')) b--;
    if (b == par || (size_t)(par - b) >= len) return -1;
    memcpy(name, b, (size_t)(par - b));
    name[par - b] = 0;
    return 0;
}

int nt_api_names(const char *text, char (*names)[NT_API_NAME], int max, int *n, char *err,
                 size_t errlen) {
    static char d[MAX_DECLS][PROTO_LEN];
    int nd = decls(text, d, MAX_DECLS, err, errlen);
    if (nd < 0) return -1;
    *n = 0;
    for (int i = 0; i < nd && *n < max; i++)
        if (decl_name(d[i], names[(*n)++], NT_API_NAME))
            return fail(err, errlen, "cannot read the name of '%s'", d[i]);
    return 0;
}

int nt_api_check(const nt_op *op, const char *text, const char *name, char *err,
                 size_t errlen) {
    static char d[MAX_DECLS][PROTO_LEN];
    char want[PROTO_LEN], fn[NT_API_NAME], wfn[NT_API_NAME];
    int found[NT_API_NCALLS] = {0};
    int nd = decls(text, d, MAX_DECLS, err, errlen);
    if (nd < 0) return -1;
    for (int i = 0; i < nd; i++) {
        int which = -1;
        if (decl_name(d[i], fn, sizeof fn))
            return fail(err, errlen, "%s: cannot read the name of '%s'", name, d[i]);
        for (int c = 0; c < NT_API_NCALLS; c++) {
            snprintf(wfn, sizeof wfn, "normtune_%s%s", op->name, call_suffix[c]);
            if (!strcmp(fn, wfn)) which = c;
        }
        if (which < 0)
            return fail(err, errlen, "%s declares %s, which is not a call of op %s (normtune_%s, "
                        "normtune_%s_workspace_size, normtune_%s_choice)", name, fn, op->name,
                        op->name, op->name, op->name);
        if (found[which]++) return fail(err, errlen, "%s declares %s twice", name, fn);
        if (nt_api_proto(op, which, want, sizeof want, err, errlen)) return -1;
        normalize(want);
        if (strcmp(d[i], want)) {
            char have[PROTO_LEN + 64];
            pretty(d[i], have, sizeof have);
            nt_api_proto(op, which, want, sizeof want, err, errlen);
            return fail(err, errlen, "%s: %s is declared\n  %s\nbut op %s's table (its tensors "
                        "and dtype slots, in order) gives\n  %s", name, fn, have, op->name, want);
        }
    }
    for (int c = 0; c < NT_API_NCALLS; c++)
        if (!found[c])
            return fail(err, errlen, "%s does not declare normtune_%s%s", name, op->name,
                        call_suffix[c]);
    return 0;
}

/* The whole of file path, malloc'd (NULL when unreadable). */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    long n;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (s = malloc((size_t)n + 1))) {
        if (fread(s, 1, (size_t)n, f) != (size_t)n) {
            free(s);
            s = NULL;
        } else {
            s[n] = 0;
        }
    }
    fclose(f);
    return s;
}

int nt_api_write_header(FILE *out, const char *kdir, char *err, size_t errlen) {
    fprintf(out, "/* normtune_ops.h -- GENERATED by apigen (kernels/apigen.c) from the op\n"
                 " * registry (kernels/ops.c): the calls of every op, each op's own\n"
                 " * kernels/<op>/api.h in the registry's order.  Included by normtune.h,\n"
                 " * which says what the calls of every op share.  DO NOT EDIT: edit the\n"
                 " * op's api.h. */\n");
    for (int i = 0; nt_ops[i]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s/api.h", kdir, nt_ops[i]->name);
        char *text = slurp(path);
        if (!text)
            return fail(err, errlen, "op %s has no %s: an op declares its library calls there",
                        nt_ops[i]->name, path);
        int rc = nt_api_check(nt_ops[i], text, path, err, errlen);
        if (!rc) fprintf(out, "\n%s", text);
        free(text);
        if (rc) return -1;
    }
    return ferror(out) ? fail(err, errlen, "write error") : 0;
}

/* The argument list "a, b, c" of op's tensors (tensors) or of its dtype
 * arguments as ints (dtypes) into buf. */
static int arg_list(const nt_op *op, int dtypes, char *buf, size_t len) {
    size_t u = 0;
    int bad = 0;
    buf[0] = 0;
    if (dtypes)
        for (int s = 0; s < op->nslots; s++)
            bad |= put(buf, len, &u, "%s(int)%s_dtype", s ? ", " : "", op->slots[s].name);
    else
        for (int t = 0; t < op->ntensors; t++)
            bad |= put(buf, len, &u, "%s%s", t ? ", " : "", op->tensors[t].name);
    return bad;
}

int nt_api_write_lib(FILE *out, char *err, size_t errlen) {
    fprintf(out, "/* nt_api.h -- GENERATED by apigen (kernels/apigen.c) from the op registry\n"
                 " * (kernels/ops.c) for normtune.cu: the definitions of every op's calls,\n"
                 " * each the op's tensors and dtypes in its table's order handed to lib_run,\n"
                 " * lib_wsize or lib_describe with the op's table.  DO NOT EDIT. */\n");
    for (int i = 0; nt_ops[i]; i++) {
        const nt_op *op = nt_ops[i];
        char proto[NT_API_NCALLS][PROTO_LEN], dts[512], ts[512], dt[600];
        for (int c = 0; c < NT_API_NCALLS; c++)
            if (nt_api_proto(op, c, proto[c], sizeof proto[c], err, errlen)) return -1;
        if (arg_list(op, 1, dts, sizeof dts) || arg_list(op, 0, ts, sizeof ts))
            return fail(err, errlen, "%s: too many arguments", op->name);
        if (op->nslots) snprintf(dt, sizeof dt, "const int dt[] = {%s};", dts);
        else snprintf(dt, sizeof dt, "const int *dt = nullptr;");
        fprintf(out, "\n/* ---- %s (kernels/%s/api.h) */\n\n"
                     "extern \"C\" const nt_op nt_op_%s;\n\n",
                op->name, op->name, op->name);
        fprintf(out, "extern \"C\" NORMTUNE_API %s {\n    %s\n    const void *const t[] = {%s};\n"
                     "    return lib_run(&nt_op_%s, M, N, dt, t, eps, workspace, "
                     "workspace_bytes, stream);\n}\n\n",
                proto[NT_API_RUN], dt, ts, op->name);
        fprintf(out, "extern \"C\" NORMTUNE_API %s {\n    %s\n"
                     "    return lib_wsize(&nt_op_%s, M, N, dt, bytes);\n}\n\n",
                proto[NT_API_WORKSPACE], dt, op->name);
        fprintf(out, "extern \"C\" NORMTUNE_API %s {\n    %s\n"
                     "    return lib_describe(&nt_op_%s, M, N, dt, out);\n}\n",
                proto[NT_API_CHOICE], dt, op->name);
    }
    return ferror(out) ? fail(err, errlen, "write error") : 0;
}

/* The dtype arguments of a call table thunk: "(normtune_dtype)dt[0], ..."
 * with a trailing ", " when there are any. */
static int thunk_dtypes(const nt_op *op, char *buf, size_t len) {
    size_t u = 0;
    int bad = 0;
    buf[0] = 0;
    for (int s = 0; s < op->nslots; s++) bad |= put(buf, len, &u, "(normtune_dtype)dt[%d], ", s);
    return bad;
}

int nt_api_write_calls(FILE *out, char *err, size_t errlen) {
    fprintf(out,
            "/* nt_api_calls.h -- GENERATED by apigen (kernels/apigen.c) from the op\n"
            " * registry (kernels/ops.c): every op's library calls behind one signature,\n"
            " * for tests and benchmarks that iterate the ops (tests/gpu/test_lib.c).\n"
            " * Each thunk calls the public function through its prototype in\n"
            " * normtune.h, so a prototype that disagrees with the op's table does\n"
            " * not compile here.  DO NOT EDIT. */\n"
            "#ifndef NT_API_CALLS_H\n#define NT_API_CALLS_H\n\n"
            "#include <stddef.h>\n\n#include \"normtune.h\"\n\n"
            "/* One op's calls: t[] its tensors in its table's order (nt_op.tensors),\n"
            " * dt[] its dtypes in slot order (nt_problem.dtype). */\n"
            "typedef struct nt_api_call {\n"
            "    const char *op;           /* the op's name, as its table's */\n"
            "    normtune_status (*run)(void *const *t, const int *dt, long long M, long long N,\n"
            "                           float eps, void *ws, size_t ws_bytes,\n"
            "                           struct CUstream_st *stream);\n"
            "    normtune_status (*workspace_size)(const int *dt, long long M, long long N,\n"
            "                                      size_t *bytes);\n"
            "    normtune_status (*choice)(const int *dt, long long M, long long N,\n"
            "                              normtune_choice *out);\n"
            "} nt_api_call;\n");
    for (int i = 0; nt_ops[i]; i++) {
        const nt_op *op = nt_ops[i];
        char dts[512], ts[512];
        size_t u = 0;
        int bad = thunk_dtypes(op, dts, sizeof dts);
        ts[0] = 0;
        for (int t = 0; t < op->ntensors; t++) bad |= put(ts, sizeof ts, &u, "t[%d], ", t);
        if (bad) return fail(err, errlen, "%s: too many arguments", op->name);
        const char *n = op->name;
        fprintf(out, "\nstatic normtune_status nt_api_run_%s(void *const *t, const int *dt, "
                     "long long M, long long N,\n        float eps, void *ws, size_t ws_bytes, "
                     "struct CUstream_st *stream) {\n    (void)dt;\n"
                     "    return normtune_%s(%sM, N, eps, %sws, ws_bytes, stream);\n}\n",
                n, n, ts, dts);
        fprintf(out, "static normtune_status nt_api_workspace_size_%s(const int *dt, long long M, "
                     "long long N,\n        size_t *bytes) {\n    (void)dt;\n"
                     "    return normtune_%s_workspace_size(M, N, %sbytes);\n}\n",
                n, n, dts);
        fprintf(out, "static normtune_status nt_api_choice_%s(const int *dt, long long M, "
                     "long long N,\n        normtune_choice *out) {\n    (void)dt;\n"
                     "    return normtune_%s_choice(M, N, %sout);\n}\n",
                n, n, dts);
    }
    fprintf(out, "\nstatic const nt_api_call nt_api_calls[] = {\n");
    for (int i = 0; nt_ops[i]; i++)
        fprintf(out, "    {\"%s\", nt_api_run_%s, nt_api_workspace_size_%s, nt_api_choice_%s},\n",
                nt_ops[i]->name, nt_ops[i]->name, nt_ops[i]->name, nt_ops[i]->name);
    fprintf(out, "    {NULL, NULL, NULL, NULL},\n};\n\n#endif\n");
    return ferror(out) ? fail(err, errlen, "write error") : 0;
}

#ifdef NT_APIGEN_MAIN
/* The build tool: apigen header KDIR | lib | calls, on stdout. */
int main(int argc, char **argv) {
    char err[2048] = "";
    int rc;
    if (argc == 3 && !strcmp(argv[1], "header")) rc = nt_api_write_header(stdout, argv[2], err, sizeof err);
    else if (argc == 2 && !strcmp(argv[1], "lib")) rc = nt_api_write_lib(stdout, err, sizeof err);
    else if (argc == 2 && !strcmp(argv[1], "calls")) rc = nt_api_write_calls(stdout, err, sizeof err);
    else {
        fprintf(stderr, "usage: apigen header KDIR | apigen lib | apigen calls\n");
        return 2;
    }
    if (!rc && fflush(stdout)) rc = -1, snprintf(err, sizeof err, "write error");
    if (rc) fprintf(stderr, "apigen: error: %s\n", err);
    return rc ? 1 : 0;
}
#endif
