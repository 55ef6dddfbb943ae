/* family.c -- dtypes, problems, the family lookup and the parameter helpers
 * every module uses (see family.h).
 *
 * Ops are listed in kernels/ops.c; each op's families are defined next to
 * its device code in kernels/<op>/.  Parameters are key/value texts; this
 * file checks them against a family's declarations and writes their
 * canonical text (declared order), the variant's identity in the database.
 * Linked into the tuner and into the production library. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/family.h"

/* ---- dtypes -------------------------------------------------------------- */

const nt_dtype_info nt_dtypes[NT_NDTYPES] = {
    [NT_BF16] = {"bf16", "nt_bf16", 2, NT_TOL_BF16},
    [NT_F16] = {"f16", "nt_f16", 2, NT_TOL_F16},
    [NT_F32] = {"f32", "float", 4, NT_TOL_F32},
};

int nt_dtype_parse(const char *name) {
    for (int d = 0; d < NT_NDTYPES; d++)
        if (!strcmp(nt_dtypes[d].name, name)) return d;
    return -1;
}

/* ---- ops and problems ------------------------------------------------------ */

const nt_op *nt_op_find(const char *name) {
    for (int i = 0; nt_ops[i]; i++)
        if (!strcmp(nt_ops[i]->name, name)) return nt_ops[i];
    return NULL;
}

int nt_tensor_dtype(const nt_problem *p, int i) {
    const nt_tensor_def *t = &p->op->tensors[i];
    return t->slot < 0 ? t->fixed : p->dtype[t->slot];
}

int64_t nt_tensor_elems(const nt_problem *p, int i) {
    const nt_tensor_def *t = &p->op->tensors[i];
    return (t->rows == NT_DIM_M ? p->M : 1) * (t->cols == NT_DIM_N ? p->N : 1);
}

double nt_problem_bytes(const nt_problem *p) {
    double b = 0;             /* in doubles: defined for any M and N */
    for (int i = 0; i < p->op->ntensors; i++) {
        const nt_tensor_def *t = &p->op->tensors[i];
        b += (t->rows == NT_DIM_M ? (double)p->M : 1.0) * (t->cols == NT_DIM_N ? (double)p->N : 1.0) *
             nt_dtypes[nt_tensor_dtype(p, i)].size;
    }
    return b;
}

void nt_problem_init(nt_problem *p, const nt_op *op, int64_t M, int64_t N) {
    memset(p, 0, sizeof *p);
    p->op = op;
    for (int s = 0; s < op->nslots; s++)
        p->dtype[s] = op->slots[s].def >= 0 ? op->slots[s].def : op->slots[0].def;
    p->M = M;
    p->N = N;
}

int nt_dtypes_canon(const nt_problem *p, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = 0;
    for (int s = 0; s < p->op->nslots; s++) {
        int d = p->dtype[s];
        int n = snprintf(buf + used, len - used, "%s%s=%s", s ? "," : "", p->op->slots[s].name,
                         d >= 0 && d < NT_NDTYPES ? nt_dtypes[d].name : "?");
        if (n < 0 || (size_t)n >= len - used) return -1;
        used += (size_t)n;
    }
    return 0;
}

/* The allowed dtypes of slot sd as text: "bf16, f16, f32". */
static void allowed_text(const nt_slot_def *sd, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = 0;
    for (int d = 0; d < NT_NDTYPES && used < len; d++)
        if (sd->allowed & (1u << d))
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                                     nt_dtypes[d].name);
}

int nt_dtypes_parse(nt_problem *p, const char *text, char *err, size_t errlen) {
    char buf[256], allowed[64];
    int named[NT_MAX_SLOTS] = {0};
    if (strlen(text) >= sizeof buf) {
        nt_why(err, errlen, "dtypes '%.40s...' too long", text);
        return -1;
    }
    strcpy(buf, text);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        int s = -1;
        if (!eq) {
            nt_why(err, errlen, "dtypes: '%s' is not slot=dtype (e.g. x=bf16)", tok);
            return -1;
        }
        *eq = 0;
        for (int i = 0; i < p->op->nslots; i++)
            if (!strcmp(p->op->slots[i].name, tok)) s = i;
        if (s < 0) {
            size_t u = 0;
            for (int i = 0; i < p->op->nslots && u < sizeof allowed; i++)
                u += (size_t)snprintf(allowed + u, sizeof allowed - u, "%s%s", i ? ", " : "",
                                      p->op->slots[i].name);
            nt_why(err, errlen, "%s has no dtype '%s' (it has: %s)", p->op->name, tok, allowed);
            return -1;
        }
        int d = nt_dtype_parse(eq + 1);
        allowed_text(&p->op->slots[s], allowed, sizeof allowed);
        if (d < 0 || !(p->op->slots[s].allowed & (1u << d))) {
            nt_why(err, errlen, "%s: %s=%s is not a dtype it takes (allowed: %s)", p->op->name,
                     tok, eq + 1, allowed);
            return -1;
        }
        p->dtype[s] = d;
        named[s] = 1;
    }
    for (int s = 0; s < p->op->nslots; s++)   /* defaults, after the named */
        if (!named[s])
            p->dtype[s] = p->op->slots[s].def >= 0 ? p->op->slots[s].def : p->dtype[0];
    return 0;
}

int nt_problem_check(const nt_problem *p, char *err, size_t errlen) {
    char allowed[64];
    for (int s = 0; s < p->op->nslots; s++) {
        int d = p->dtype[s];
        if (d < 0 || d >= NT_NDTYPES || !(p->op->slots[s].allowed & (1u << d))) {
            allowed_text(&p->op->slots[s], allowed, sizeof allowed);
            nt_why(err, errlen, "%s: dtype of %s must be one of %s", p->op->name,
                     p->op->slots[s].name, allowed);
            return -1;
        }
    }
    if (p->M < 1 || p->M > NT_MAX_M || p->N < 8 || p->N > NT_MAX_N || p->N % 8) {
        nt_why(err, errlen, "shape M=%lld N=%lld unsupported (M from 1 to 2^31 - 1, N a "
                 "multiple of 8 up to %d)", (long long)p->M, (long long)p->N, NT_MAX_N);
        return -1;
    }
    return p->op->check ? p->op->check(p, err, errlen) : 0;
}

double nt_plan_tol(const nt_plan *pl, const nt_problem *p, int i) {
    double dt = nt_dtypes[nt_tensor_dtype(p, i)].tol;
    return pl->tol[i] > 0 ? pl->tol[i] : dt;
}

int nt_plan_precise(const nt_plan *pl, const nt_problem *p) {
    for (int i = 0; i < p->op->ntensors; i++)
        if (p->op->tensors[i].role == NT_OUT &&
            !(nt_plan_tol(pl, p, i) <= nt_dtypes[nt_tensor_dtype(p, i)].tol))
            return 0;
    return 1;
}

/* ---- families -------------------------------------------------------------- */

#define MAX_FAMILIES 64

const nt_family *const *nt_all_families(void) {
    /* built from constant tables: every caller computes the same list, so
     * concurrent first calls write the same values */
    static const nt_family *all[MAX_FAMILIES + 1];
    static int done;
    if (!done) {
        int n = 0;
        for (int i = 0; nt_ops[i]; i++)
            for (int j = 0; nt_ops[i]->families[j] && n < MAX_FAMILIES; j++)
                all[n++] = nt_ops[i]->families[j];
        all[n] = NULL;
        done = 1;
    }
    return all;
}

const nt_family *nt_family_find(const char *name) {
    for (int i = 0; nt_ops[i]; i++)
        for (int j = 0; nt_ops[i]->families[j]; j++)
            if (!strcmp(nt_ops[i]->families[j]->name, name)) return nt_ops[i]->families[j];
    return NULL;
}

const nt_family *nt_family_find2(const char *op, const char *shortname) {
    char full[96];
    snprintf(full, sizeof full, "%s.%s", op, shortname);
    return nt_family_find(full);
}

uint64_t nt_fnv1a(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

const char *nt_params_get(const nt_params *p, const char *key) {
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->kv[i].key, key)) return p->kv[i].val;
    return NULL;
}

int64_t nt_params_int(const nt_params *p, const char *key, int *ok) {
    for (int i = 0; i < p->n; i++)
        if (p->kv[i].key[0] == key[0] && !strcmp(p->kv[i].key, key)) {
            if (p->kv[i].isint) return p->kv[i].ival;
            break;
        }
    if (ok) *ok = 0;
    return 0;
}

/* kv's integer value from its text: a whole integer (strtoll's reading), or
 * none. */
static void kv_parse(nt_kv *kv) {
    char *end;
    long long x = strtoll(kv->val, &end, 10);
    kv->isint = kv->val[0] && !*end;
    kv->ival = kv->isint ? x : 0;
}

int nt_params_set(nt_params *p, const char *key, const char *val) {
    if (strlen(key) >= NT_NAME_LEN || strlen(val) >= NT_NAME_LEN) return -1;
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->kv[i].key, key)) {
            strcpy(p->kv[i].val, val);
            kv_parse(&p->kv[i]);
            return 0;
        }
    if (p->n >= NT_MAX_PARAMS) return -1;
    strcpy(p->kv[p->n].key, key);
    strcpy(p->kv[p->n].val, val);
    kv_parse(&p->kv[p->n]);
    p->n++;
    return 0;
}

int nt_params_canon(const nt_family *f, const nt_params *p, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < f->nparams; i++) {
        const char *v = nt_params_get(p, f->params[i].name);
        int n = snprintf(buf + used, len - used, "%s%s=%s", i ? "," : "",
                         f->params[i].name, v ? v : "");
        if (n < 0 || (size_t)n >= len - used) return -1;
        used += (size_t)n;
    }
    return 0;
}

int nt_params_parse(const char *text, nt_params *p) {
    char buf[512];
    if (strlen(text) >= sizeof buf) return -1;
    strcpy(buf, text);
    p->n = 0;
    if (!*buf) return 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) return -1;
        *eq = 0;
        if (nt_params_set(p, tok, eq + 1)) return -1;
    }
    return 0;
}

/* Append the allowed names of f's parameters to buf ("block, chunks, ..."). */
static void names(const nt_family *f, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < f->nparams && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", f->params[i].name);
}

int nt_params_validate(const nt_family *f, const nt_params *p, char *err, size_t errlen) {
    char allowed[256];
    for (int i = 0; i < p->n; i++) {
        int known = 0;
        for (int j = 0; j < f->nparams; j++) known |= !strcmp(p->kv[i].key, f->params[j].name);
        if (!known) {
            names(f, allowed, sizeof allowed);
            nt_why(err, errlen, "family %s has no parameter '%s' (allowed: %s)", f->name,
                     p->kv[i].key, allowed);
            return -1;
        }
    }
    for (int j = 0; j < f->nparams; j++) {
        const nt_param_def *d = &f->params[j];
        const char *v = nt_params_get(p, d->name);
        if (!v) {
            nt_why(err, errlen, "family %s needs parameter '%s'", f->name, d->name);
            return -1;
        }
        if (d->kind == NT_PARAM_INT) {
            int ok = 1;
            int64_t x = nt_params_int(p, d->name, &ok);
            if (!ok || x < d->lo || x > d->hi) {
                nt_why(err, errlen, "%s.%s must be an integer in [%lld, %lld], got '%s'",
                         f->name, d->name, (long long)d->lo, (long long)d->hi, v);
                return -1;
            }
        } else {
            int ok = 0;
            size_t used = 0;
            char list[256] = "";
            for (int c = 0; d->choices[c]; c++) {
                ok |= !strcmp(v, d->choices[c]);
                used += (size_t)snprintf(list + used, sizeof list - used, "%s\"%s\"",
                                         c ? ", " : "", d->choices[c]);
            }
            if (!ok) {
                nt_why(err, errlen, "%s.%s must be one of %s, got '%s'", f->name, d->name,
                         list, v);
                return -1;
            }
        }
    }
    return 0;
}

int nt_why(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    int n;
    if (!err || !errlen) return 0;
    va_start(ap, fmt);
    n = vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return n;
}
