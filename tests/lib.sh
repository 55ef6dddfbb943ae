# lib.sh -- helpers the shell tests source: a scratch folder, PASS/FAIL
# bookkeeping, and `expect` for exit codes.  Set NAME before sourcing.
#
#   ok NAME / bad NAME [WHY]       count and print a PASS or FAIL line
#   expect NAME RC ARGS...         run $NORMTUNE ARGS (stdout in $T/out,
#                                  stderr in $T/err); the exit code must be RC
#   has NAME FILE TEXT             FILE contains TEXT (fixed string)
#   finish                         remove $T, print "RESULT passed failed"
#   need_sqlite3 WHAT              without the sqlite3 shell: SKIP WHAT, finish, exit
#   names FILE                     the -wal and -shm files beside FILE, if any
#   result_keys DB                 DB's results as (shape, family, params,
#                                  status) lines, sorted: what was measured,
#                                  not its time (needs sqlite3)
root=$(cd "$(dirname "$0")/.." && pwd)
T=${NT_TMP:-/tmp}/${NAME:-test}_sh.$$
mkdir -p "$T"
passed=0; failed=0
ok() { passed=$((passed + 1)); echo "PASS $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1${2:+: $2}"; }
# expect sets rc (the exit code) and nothing else the caller may use: its
# own variables start with _ so that a caller's loop variable survives it.
expect() {
    _ex_name=$1; _ex_want=$2; shift 2
    "$NORMTUNE" "$@" >"$T/out" 2>"$T/err"; rc=$?
    if [ "$rc" = "$_ex_want" ]; then ok "$_ex_name"
    else bad "$_ex_name" "exit $rc, want $_ex_want: $(head -c 300 "$T/err")"; fi
}
has() {
    if grep -qF -- "$3" "$2"; then ok "$1"; else bad "$1" "no '$3' in: $(head -c 400 "$2")"; fi
}
finish() {
    rm -rf "$T"
    echo "RESULT $passed $failed"
}
need_sqlite3() {
    command -v sqlite3 >/dev/null 2>&1 && return 0
    echo "SKIP $1: no sqlite3 command-line shell"
    finish
    exit 0
}
names() { ls "$1-wal" "$1-shm" 2>/dev/null; }
result_keys() {
    sqlite3 "$1" "select s.M, s.N, s.dtype, v.family, v.params, r.status from result r
        join variant v on v.id = r.variant_id join shape s on s.id = r.shape_id
        order by 1, 2, 3, 4, 5"
}
