/* family.c -- the family table and the parameter helpers every module uses.
 *
 * Families are entries of nt_families[]; each is defined next to its device
 * code (rmsnorm_bwd/families.c for the two RMSNorm backward chains).  Parameters are
 * key/value texts; this file checks them against a family's declarations and
 * writes their canonical text (declared order), the variant's identity in
 * the database. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/family.h"

extern const nt_family nt_rmsnorm_bwd_naive;
extern const nt_family nt_rmsnorm_bwd_persistent;

const nt_family *const nt_families[] = {
    &nt_rmsnorm_bwd_naive,
    &nt_rmsnorm_bwd_persistent,
    NULL,
};

const nt_family *nt_family_find(const char *name) {
    for (int i = 0; nt_families[i]; i++)
        if (!strcmp(nt_families[i]->name, name)) return nt_families[i];
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
    const char *v = nt_params_get(p, key);
    char *end;
    if (!v || !*v) {
        if (ok) *ok = 0;
        return 0;
    }
    long long x = strtoll(v, &end, 10);
    if (*end) {
        if (ok) *ok = 0;
        return 0;
    }
    return x;
}

int nt_params_set(nt_params *p, const char *key, const char *val) {
    if (strlen(key) >= NT_NAME_LEN || strlen(val) >= NT_NAME_LEN) return -1;
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->kv[i].key, key)) {
            strcpy(p->kv[i].val, val);
            return 0;
        }
    if (p->n >= NT_MAX_PARAMS) return -1;
    strcpy(p->kv[p->n].key, key);
    strcpy(p->kv[p->n].val, val);
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
            snprintf(err, errlen, "family %s has no parameter '%s' (allowed: %s)", f->name,
                     p->kv[i].key, allowed);
            return -1;
        }
    }
    for (int j = 0; j < f->nparams; j++) {
        const nt_param_def *d = &f->params[j];
        const char *v = nt_params_get(p, d->name);
        if (!v) {
            snprintf(err, errlen, "family %s needs parameter '%s'", f->name, d->name);
            return -1;
        }
        if (d->kind == NT_PARAM_INT) {
            int ok = 1;
            int64_t x = nt_params_int(p, d->name, &ok);
            if (!ok || x < d->lo || x > d->hi) {
                snprintf(err, errlen, "%s.%s must be an integer in [%lld, %lld], got '%s'",
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
                snprintf(err, errlen, "%s.%s must be one of %s, got '%s'", f->name, d->name,
                         list, v);
                return -1;
            }
        }
    }
    return 0;
}
