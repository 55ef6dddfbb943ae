#!/bin/sh
# test_layers.sh -- the source tree's layering (README.md, "Layout"):
#
#   - dependencies point down: kernels/ (the vocabulary: problem, params,
#     result, families) includes nothing above it; search/ and db/ only
#     kernels/; lua/ kernels/, search/ and db/; tuner/ anything.  An op's
#     own tests (kernels/OP/test_*.c) may include tests/.
#   - the driver never names an op: no source under tuner/, db/, search/
#     or lua/ (Lua sweep scripts and Markdown aside) says rmsnorm, err_dx
#     or err_dw; ops are data, reached through their descriptors.
#
# Each check runs first on a scratch tree with one violation planted, and
# must find it there, so that a check that cannot fail does not pass.
NAME=test_layers
. "$(dirname "$0")/lib.sh"

# layer_violations ROOT: one line "FILE: includes DIR/..." per #include of a
# project header above the including file's layer; nothing when clean.
layer_violations() {
    for dir in kernels search db lua; do
        case $dir in
            kernels) allowed="kernels" ;;
            search) allowed="search kernels" ;;
            db) allowed="db kernels" ;;
            lua) allowed="lua kernels search db" ;;
        esac
        find "$1/$dir" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) |
        sort | while read -r f; do
            base=${f##*/}
            sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
            sed 's#^\(\.\./\)*##' | while read -r inc; do
                top=${inc%%/*}
                [ "$top" = "$inc" ] && continue          # same folder: "x.h"
                case " $allowed " in *" $top "*) continue ;; esac
                case "$dir/$top/$base" in kernels/tests/test_*.c) continue ;; esac
                [ -d "$1/$top" ] || continue            # not a project folder
                echo "${f#"$1"/}: includes $inc"
            done
        done
    done
}

# op_names ROOT: the files of the driver's layers that name an op.
op_names() {
    for dir in tuner db search lua; do
        grep -r -i -l -E 'rmsnorm|err_dx|err_dw' "$1/$dir" 2>/dev/null |
            grep -v -E '\.(lua|md)$' | sed "s#^$1/##"
    done
}

# the checks must be able to fail: a scratch tree with one of each
s="$T/tree"
mkdir -p "$s/kernels/op" "$s/search" "$s/db" "$s/lua" "$s/tuner" "$s/tests"
printf '#include "kernels/family.h"\n' >"$s/db/store.h"
printf '#include "../tuner/cli.h"\n' >"$s/db/store.c"
printf '#include "tests/test.h"\n' >"$s/kernels/op/test_op.c"
printf '#include "tests/test.h"\n' >"$s/kernels/op/families.c"
printf 'int n; /* err_dw */\n' >"$s/tuner/run.c"
printf -- '-- rmsnorm\n' >"$s/lua/sweep.lua"
got=$(layer_violations "$s")
if [ "$got" = "kernels/op/families.c: includes tests/test.h
db/store.c: includes tuner/cli.h" ]; then
    ok finds_a_planted_upward_include
else
    bad finds_a_planted_upward_include "found: $got"
fi
got=$(op_names "$s")
if [ "$got" = "tuner/run.c" ]; then ok finds_a_planted_op_name; else bad finds_a_planted_op_name "found: $got"; fi

# the tree itself
got=$(layer_violations "$root")
if [ -z "$got" ]; then ok dependencies_point_down; else bad dependencies_point_down "$got"; fi
got=$(op_names "$root")
if [ -z "$got" ]; then ok driver_names_no_op; else bad driver_names_no_op "$got"; fi

finish
