#!/bin/sh
# test_docs.sh -- the documents say what the code does, where a number or a
# list can drift: the default sweep's variant count (README, docs/lua-api.md)
# is what `normtune list` counts; every command `normtune --help` lists is in
# the README's command table; every exit code the CLI returns is in README.
#
# Needs NORMTUNE and NT_TMP; prints PASS/FAIL lines and "RESULT passed failed".
NAME=test_docs
. "$(dirname "$0")/lib.sh"
sweep=$root/lua/sweeps/rmsnorm_bwd.lua
total=$("$NORMTUNE" list --count "$sweep" | awk '$1 == "total" {print $NF}')
[ -n "$total" ] && ok list_counts || bad list_counts "no total from list --count"
for f in README.md docs/lua-api.md lua/sweeps/rmsnorm_bwd.lua; do
    n=$(grep -o '[0-9][0-9]* variants' "$root/$f" | head -1 | cut -d' ' -f1)
    [ "$n" = "$total" ] && ok "variant_count_$f" || bad "variant_count_$f" "says ${n:-nothing}, list counts $total"
done
t=$(awk '$1 == "total"' "$root/docs/lua-api.md" | awk '{print $NF}' | head -1)
[ "$t" = "$total" ] && ok lua_api_list_example_total || bad lua_api_list_example_total "example says $t, list counts $total"
for c in $("$NORMTUNE" --help | awk '/^commands:/ {on = 1; next} on && !NF {exit} on {print $1}'); do
    grep -q "^normtune $c " "$root/README.md" && ok "readme_has_$c" || bad "readme_has_$c" "README's command table lacks 'normtune $c'"
done
for code in $(grep -ho 'return NT_EXIT_[A-Z]*\|rc = [0-9][0-9]*;' "$root"/tuner/*.c | sort -u |
              sed 's/return NT_EXIT_OK/0/; s/return NT_EXIT_FAIL/1/; s/return NT_EXIT_USAGE/2/; s/rc = \([0-9]*\);/\1/' | sort -u); do
    case $code in 0|1|2) ;; *) [ "$code" -lt 64 ] && continue ;; esac
    grep -q "Exit codes:.*$code\|$code (" "$root/README.md" && ok "readme_exit_$code" || bad "readme_exit_$code" "README does not give exit code $code"
done
# every file of the tree the documents name exists (files move)
missing=""
for f in $(cd "$root" && grep -rhoE '(tuner|kernels|db|lua|search|tests)/[A-Za-z_/]+\.(c|h|cu|cuh|sh|lua|sql)' \
           README.md docs/*.md data/README.md tests/fuzz/README.md | sort -u); do
    [ -e "$root/$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && ok docs_name_existing_files || bad docs_name_existing_files "no such file:$missing"
finish
