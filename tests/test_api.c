/* test_api.c -- the public header's op calls and the op registry agree
 * (kernels/apigen.c).
 *
 * Every registered op's kernels/<op>/api.h declares its three calls with
 * exactly the argument lists its table implies (tensors, then M, N, eps,
 * dtype slots, workspace, stream), and nothing else; kernels/normtune.h
 * declares no op's call itself and takes them from normtune_ops.h, which
 * apigen gathers in the registry's order.  The rule itself is checked on a
 * made-up op, and each check is shown to fail on a planted mismatch.
 * Reads the tree from the working directory (or $NT_ROOT); no GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/apigen.h"
#include "tests/t.h"

static const char *root(void) {
    const char *r = getenv("NT_ROOT");
    return r && *r ? r : ".";
}

/* The whole of root/rel, malloc'd (NULL: unreadable). */
static char *slurp(const char *rel) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root(), rel);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0, k;
    char *s = malloc(cap);
    while (s && (k = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (n + 1 == cap) s = realloc(s, cap *= 2);
    }
    fclose(f);
    if (s) s[n] = 0;
    return s;
}

/* text with the first occurrence of from replaced by to (malloc'd). */
static char *replace(const char *text, const char *from, const char *to) {
    const char *p = strstr(text, from);
    if (!p) return NULL;
    size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
    char *s = malloc(n);
    if (!s) exit(2);
    snprintf(s, n, "%.*s%s%s", (int)(p - text), text, to, p + strlen(from));
    return s;
}

/* A made-up op: an input in slot 0, an optional fp32 output, one slot. */
static const nt_slot_def fake_slots[] = {{"s", 1u << NT_BF16, NT_BF16, "dtype of a"}};
static const nt_tensor_def fake_tensors[] = {
    {"a", NT_IN, NT_DIM_M, NT_DIM_N, 0, 0, -1, 1, 0, "in"},
    {"b", NT_OUT, NT_DIM_M, NT_DIM_1, -1, NT_F32, 0, 0, 1, "out"},
    {"c", NT_IN, NT_DIM_1, NT_DIM_1, -1, NT_F32, 0, 1, 0, "in, fp32"},
};

TEST(prototypes_follow_the_table) {
    nt_op op = {"fake", "made up", 1, fake_slots, 3, fake_tensors, NULL, NULL, NULL, NULL, NULL, NULL, 0};
    char buf[1024], err[512];
    static const char *const want[NT_API_NCALLS] = {
        "normtune_status normtune_fake(const void *a, float *b, const float *c, long long M, "
        "long long N, float eps, normtune_dtype s_dtype, void *workspace, size_t "
        "workspace_bytes, struct CUstream_st *stream)",
        "normtune_status normtune_fake_workspace_size(long long M, long long N, normtune_dtype "
        "s_dtype, size_t *bytes)",
        "normtune_status normtune_fake_choice(long long M, long long N, normtune_dtype s_dtype, "
        "normtune_choice *out)",
    };
    for (int c = 0; c < NT_API_NCALLS; c++) {
        CHECK(nt_api_proto(&op, c, buf, sizeof buf, err, sizeof err) == 0, "%s", err);
        CHECK(!strcmp(buf, want[c]), "call %d:\n  got  %s\n  want %s", c, buf, want[c]);
    }
    /* a tensor named as a fixed argument cannot be an argument */
    nt_tensor_def clash[3];
    memcpy(clash, fake_tensors, sizeof clash);
    clash[1].name = "eps";
    op.tensors = clash;
    CHECK(nt_api_proto(&op, NT_API_RUN, buf, sizeof buf, err, sizeof err) == -1 &&
              strstr(err, "eps"), "a tensor named eps accepted (%s)", err);
}

TEST(every_op_declares_its_calls) {
    char rel[256], err[2048];
    int n = 0;
    for (int i = 0; nt_ops[i]; i++, n++) {
        snprintf(rel, sizeof rel, "kernels/%s/api.h", nt_ops[i]->name);
        char *text = slurp(rel);
        CHECK(text != NULL, "op %s has no %s (run from the repository root or set NT_ROOT)",
              nt_ops[i]->name, rel);
        if (!text) continue;
        CHECK(nt_api_check(nt_ops[i], text, rel, err, sizeof err) == 0, "%s", err);
        free(text);
    }
    CHECK(n > 0, "the registry is empty");
}

/* kernels/normtune.h declares the shared calls only and includes the ops'. */
TEST(normtune_h_declares_no_op_call) {
    char names[64][NT_API_NAME], err[512], fn[NT_API_NAME + 64];
    int n = 0;
    char *text = slurp("kernels/normtune.h");
    CHECK(text != NULL, "no kernels/normtune.h");
    if (!text) return;
    CHECK(nt_api_names(text, names, 64, &n, err, sizeof err) == 0, "%s", err);
    CHECK(n >= 3, "normtune.h declares %d functions", n);
    for (int k = 0; k < n; k++) {
        CHECK(!strncmp(names[k], "normtune_", 9), "normtune.h declares %s", names[k]);
        for (int i = 0; nt_ops[i]; i++) {
            snprintf(fn, sizeof fn, "normtune_%s", nt_ops[i]->name);
            CHECK(strncmp(names[k], fn, strlen(fn)),
                  "normtune.h declares %s itself; an op's calls belong in its api.h", names[k]);
        }
    }
    CHECK(strstr(text, "#include \"normtune_ops.h\""), "normtune.h does not include normtune_ops.h");
    free(text);
}

/* The generated op part of the header: every op's api.h in registry order,
 * three calls per op; an op without api.h stops it. */
TEST(normtune_ops_h_from_the_registry) {
    char kdir[600], err[2048], names[256][NT_API_NAME];
    int n = 0;
    snprintf(kdir, sizeof kdir, "%s/kernels", root());
    FILE *f = tmpfile();
    if (!f) exit(2);
    CHECK(nt_api_write_header(f, kdir, err, sizeof err) == 0, "%s", err);
    long len = ftell(f);
    char *text = calloc(1, (size_t)len + 1);
    if (!text) exit(2);
    rewind(f);
    if (fread(text, 1, (size_t)len, f) != (size_t)len) exit(2);
    fclose(f);
    CHECK(nt_api_names(text, names, 256, &n, err, sizeof err) == 0, "%s", err);
    int nops = 0, pos = 0;
    for (int i = 0; nt_ops[i]; i++, nops++) {
        char want[NT_API_NAME];
        snprintf(want, sizeof want, "normtune_%s", nt_ops[i]->name);
        int k = 0;
        while (k < n && strcmp(names[k], want)) k++;
        CHECK(k < n && k >= pos, "%s missing or out of the registry's order", want);
        pos = k;
    }
    CHECK(n == 3 * nops, "%d declarations for %d ops", n, nops);
    free(text);
    if (!(f = tmpfile())) exit(2);
    snprintf(kdir, sizeof kdir, "%s/no-such-dir", t_tmpdir());
    CHECK(nt_api_write_header(f, kdir, err, sizeof err) == -1 && strstr(err, nt_ops[0]->name),
          "an op without api.h was accepted (%s)", err);
    fclose(f);
}

/* Each check fails on a planted mismatch, and spacing does not matter. */
TEST(check_can_fail) {
    const nt_op *op = nt_ops[0];
    char rel[256], err[2048], proto[1024];
    snprintf(rel, sizeof rel, "kernels/%s/api.h", op->name);
    char *text = slurp(rel);
    CHECK(text != NULL, "no %s", rel);
    if (!text) return;
    CHECK(op->ntensors > 0 && op->tensors[0].role == NT_IN && op->tensors[0].slot >= 0,
          "%s's first tensor is not an input of a dtype slot: the plants below need one",
          op->name);
    /* the run call's prototype, written anew on one line with odd spacing */
    nt_api_proto(op, NT_API_RUN, proto, sizeof proto, err, sizeof err);
    char spaced[2200], *w = spaced;
    for (const char *r = proto; *r; r++) {
        if (*r == ',' || *r == '(') *w++ = ' ';
        *w++ = *r;
        if (*r == ' ') *w++ = '\n';
    }
    *w = 0;
    struct {
        const char *what, *from, *to;
        int ok;
    } plant[] = {
        {"a tensor renamed", "const void *", "const void *z", 0},
        {"an input made an output", "(const void *", "(void *", 0},
        {"a call dropped", "_choice(", "_choise(", 0},
        {"another function declared", "#endif", "NORMTUNE_API int normtune_other(void);\n#endif", 0},
        {"a declaration in a comment", "#endif",
         "/* NORMTUNE_API int normtune_other(void); */\n#endif", 1},
    };
    for (size_t i = 0; i < sizeof plant / sizeof plant[0]; i++) {
        char *bad = replace(text, plant[i].from, plant[i].to);
        CHECK(bad != NULL, "%s: cannot plant it", plant[i].what);
        if (!bad) continue;
        int rc = nt_api_check(op, bad, "planted", err, sizeof err);
        CHECK(rc == (plant[i].ok ? 0 : -1), "%s: check returned %d (%s)", plant[i].what, rc, err);
        free(bad);
    }
    /* the run call's declaration written anew with other spacing passes */
    char name[NT_API_NAME + 32];
    snprintf(name, sizeof name, "normtune_status normtune_%s(", op->name);
    const char *start = strstr(text, name);
    while (start && start > text && strncmp(start, "NORMTUNE_API", 12)) start--;
    CHECK(start && !strncmp(start, "NORMTUNE_API", 12), "no declaration %s...) in %s", name, rel);
    if (start && !strncmp(start, "NORMTUNE_API", 12)) {
        const char *end = strchr(start, ';');
        size_t n = strlen(text) + strlen(spaced) + 64;
        char *re = malloc(n);
        if (!re) exit(2);
        snprintf(re, n, "%.*sNORMTUNE_API\n%s%s", (int)(start - text), text, spaced, end);
        CHECK(strcmp(re, text), "respacing changed nothing");
        CHECK(nt_api_check(op, re, "respaced", err, sizeof err) == 0, "respaced: %s", err);
        free(re);
    }
    free(text);
}

int main(void) {
    RUN(prototypes_follow_the_table);
    RUN(every_op_declares_its_calls);
    RUN(normtune_h_declares_no_op_call);
    RUN(normtune_ops_h_from_the_registry);
    RUN(check_can_fail);
    T_END();
}
