/* nt.c -- status names of the shared vocabulary (see nt.h). */
#include <string.h>

#include "kernels/nt.h"

static const char *const status_names[NT_NSTATUS] = {
    "ok", "compile_error", "resources", "launch_error", "wrong", "nondeterministic",
    "unsupported",
};

const char *nt_status_name(int status) {
    return status >= 0 && status < NT_NSTATUS ? status_names[status] : "?";
}

int nt_status_parse(const char *name) {
    for (int i = 0; i < NT_NSTATUS; i++)
        if (!strcmp(status_names[i], name)) return i;
    return -1;
}
