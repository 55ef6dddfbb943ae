#!/bin/sh
# test_docs.sh -- the documents say what the code does, where a number or a
# list can drift: the default sweep's variant count (README, docs/lua-api.md)
# is what `normtune list` counts; every command `normtune --help` lists is in
# the README's command table (and docs/lua-api.md's `list --count` example
# is list's output); every exit code the CLI returns is in README;
# every family and parameter `normtune families` prints has its row in
# docs/lua-api.md's parameter tables, with the same integer range, and
# every family its entry in docs/guide.md.
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
# every line of docs/lua-api.md's `list --count` examples of the default
# backward (the script's hash, the table's rows) is a line list prints
(cd "$root" && "$NORMTUNE" list --count lua/sweeps/rmsnorm_bwd.lua) > "$T/count.out"
awk '/^\$ normtune list --count lua\/sweeps\/rmsnorm_bwd.lua$/ {on = 1; next}
     on && /^```/ {on = 0} on && $0 != "..." {print}' "$root/docs/lua-api.md" > "$T/count.doc"
nl=$(wc -l < "$T/count.doc")
miss=$(grep -vxFf "$T/count.out" "$T/count.doc" | head -1)
[ "$nl" -ge 10 ] && [ -z "$miss" ] && ok lua_api_list_example_lines ||
    bad lua_api_list_example_lines "$nl example lines; not printed by list --count: '$miss'"
for c in $("$NORMTUNE" --help | awk '/^commands:/ {on = 1; next} on && !NF {exit} on {print $1}'); do
    grep -q "^normtune $c " "$root/README.md" && ok "readme_has_$c" || bad "readme_has_$c" "README's command table lacks 'normtune $c'"
done
for code in $(grep -ho 'return NT_EXIT_[A-Z]*\|rc = [0-9][0-9]*;' "$root"/tuner/*.c | sort -u |
              sed 's/return NT_EXIT_OK/0/; s/return NT_EXIT_FAIL/1/; s/return NT_EXIT_USAGE/2/; s/rc = \([0-9]*\);/\1/' | sort -u); do
    case $code in 0|1|2) ;; *) [ "$code" -lt 64 ] && continue ;; esac
    grep -q "Exit codes:.*$code\|$code (" "$root/README.md" && ok "readme_exit_$code" || bad "readme_exit_$code" "README does not give exit code $code"
done
# `normtune families`: every family of --help, by op, family or short name
nfam=$("$NORMTUNE" families | grep -c '^[a-z_0-9]*\.[a-z_0-9]*: ')
nhelp=$("$NORMTUNE" --help | awk '/^ops/ {on = 1; next} on && /;/ {sub(/;.*/, ""); print}' | tr ',' '\n' | grep -c .)
[ "$nfam" -gt 20 ] && [ "$nfam" = "$nhelp" ] && ok families_lists_every_family ||
    bad families_lists_every_family "families prints $nfam, --help names $nhelp"
got=$("$NORMTUNE" families tma | grep '^[a-z]' | cut -d: -f1 | tr '\n' ' ')
[ "$got" = "rmsnorm_bwd.tma rmsnorm_fwd.tma " ] && ok families_short_name || bad families_short_name "got '$got'"
got=$("$NORMTUNE" families rmsnorm_bwd.naive | sed -n 2p)
case $got in *nsplit*integer*"1 .. 4096"*"row slices"*) ok families_params ;; *) bad families_params "got '$got'" ;; esac
"$NORMTUNE" families rmsnorm_bwd.nope > "$T/fam.out" 2> "$T/fam.err"
rc=$?
[ $rc = 2 ] && [ ! -s "$T/fam.out" ] && grep -q "'rmsnorm_bwd.nope' is no op or family" "$T/fam.err" &&
    ok families_unknown_name || bad families_unknown_name "rc $rc: $(cat "$T/fam.err")"
# every family has its entry in docs/guide.md ("The kernels": **`op.family`**)
nodoc=""
for f in $("$NORMTUNE" families | sed -n 's/^\([a-z_0-9]*\.[a-z_0-9]*\): .*/\1/p'); do
    grep -q "\*\*\`$f\`\*\*" "$root/docs/guide.md" || nodoc="$nodoc $f"
done
[ -z "$nodoc" ] && ok guide_has_every_family || bad guide_has_every_family "no entry for:$nodoc"
# the parameter tables of docs/lua-api.md: a row for every family and
# parameter (or a row of the family saying "as `...`"), and where a row
# gives one parameter an integer range, the family's own
"$NORMTUNE" families | awk -v doc="$root/docs/lua-api.md" '
BEGIN {
    while ((getline line < doc) > 0) {
        if (line ~ /^Parameters of `/) { split(line, a, "`"); op = a[2]; continue }
        if (line ~ /^#/) op = ""
        if (op == "" || line !~ /^\|/) continue
        split(line, c, "|")
        fams = c[2]; par = c[3]; allowed = c[5]
        single = par ~ /^ *`[a-z_0-9]+` *$/
        while (match(fams, /`[a-z_0-9]+`/)) {
            f = op "." substr(fams, RSTART + 1, RLENGTH - 2)
            rows[f] = rows[f] "\n" par
            if (single) { p = par; gsub(/[ `]/, "", p); range[f, p] = allowed }
            fams = substr(fams, RSTART + RLENGTH)
        }
    }
}
/^[a-z_0-9]+\.[a-z_0-9]+: / {
    fam = substr($1, 1, length($1) - 1)
    if (!(fam in rows)) print "no row for " fam
    next
}
/^  [a-z_0-9]+ / {
    if (!(fam in rows)) next
    if (index(rows[fam], "`" $1 "`") == 0 && index(rows[fam], "as `") == 0)
        print "no row for " fam " " $1
    if ((fam, $1) in range && $2 == "integer" && match(range[fam, $1], /^ *[0-9]+ \.\. [0-9]+/)) {
        r = substr(range[fam, $1], RSTART, RLENGTH); sub(/^ */, "", r)
        if (r != $3 " .. " $5) print fam " " $1 ": the docs say " r ", the family " $3 " .. " $5
    }
}' > "$T/famdoc.txt"
[ ! -s "$T/famdoc.txt" ] && ok lua_api_family_params ||
    bad lua_api_family_params "$(tr '\n' ';' < "$T/famdoc.txt")"
# every file of the tree the documents name exists (files move)
missing=""
for f in $(cd "$root" && grep -rhoE '(tuner|kernels|db|lua|search|tests)/[A-Za-z_/]+\.(c|h|cu|cuh|sh|lua|sql)' \
           README.md docs/*.md data/README.md tests/fuzz/README.md | sort -u); do
    [ -e "$root/$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && ok docs_name_existing_files || bad docs_name_existing_files "no such file:$missing"
finish
