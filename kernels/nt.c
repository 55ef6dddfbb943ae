/* nt.c -- status names of the shared vocabulary (see nt.h) and the
 * families' source hashes over the embedded kernel sources (tuner only: the
 * production library gets its hashes from the build). */
#include <stdio.h>
#include <string.h>

#include "kernels/nt.h"

static const char *const status_names[NT_NSTATUS] = {
    "ok", "compile_error", "resources", "launch_error", "wrong", "nondeterministic",
    "unsupported", "raced",
};

const char *nt_status_name(int status) {
    return status >= 0 && status < NT_NSTATUS ? status_names[status] : "?";
}

int nt_status_parse(const char *name) {
    for (int i = 0; i < NT_NSTATUS; i++)
        if (!strcmp(status_names[i], name)) return i;
    return -1;
}

int nt_family_hash(const nt_family *f, char buf[17]) {
    uint64_t h = NT_FNV_INIT;
    buf[0] = 0;
    for (int i = 0; f->sources[i]; i++) {
        int k = 0;
        while (k < nt_kernel_count && strcmp(nt_kernel_names[k], f->sources[i])) k++;
        if (k == nt_kernel_count) return -1;
        h = nt_fnv1a(h, nt_kernel_names[k], strlen(nt_kernel_names[k]) + 1);
        h = nt_fnv1a(h, nt_kernel_texts[k], strlen(nt_kernel_texts[k]));
    }
    snprintf(buf, 17, "%016llx", (unsigned long long)h);
    return 0;
}
