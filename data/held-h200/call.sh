#!/bin/sh
# call.sh -- the fill that held's place in the default backward sweep waits
# for: the default backward at its problems of N = 1024 .. 16384 with held
# beside every other family, exhaustive (4402 variants), on one H200, so
# that held and persistent are ranked on one GPU's results.  Refuses any
# other GPU: results.db holds H200s.
#   here:  make build/normtune && mkdir -p .devbuild && tar -cJf .devbuild/bin.tar.xz -C build normtune
#   there: [HELD_BF16=1] [HELD_LIMIT=S] sh data/held-h200/call.sh .devbuild/bin.tar.xz [PART.db]
# (HELD_LIMIT: the fill's seconds, 570 by default; less where the same
# call runs more, as the H200 call in data/README.md does)
# then `normtune merge data/results.db $OUT/mid_all.db -o NEW.db`.  A run cut
# short by its limit resumes: give the database it left as PART.db (carried
# in an untracked folder) and only what is missing is measured.
set -u
mkdir -p build && tar -xJf "$1" -C build || exit 1
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > "$OUT/gpu.txt" 2>&1
case "$(cat "$OUT/gpu.txt")" in
*H200*) ;;
*) echo "call.sh: not an H200 (gpu.txt): no fill"; exit 1 ;;
esac
[ $# -lt 2 ] || cp "$2" "$OUT/mid_all.db" || exit 1
patch -s -o mid_all.lua lua/sweeps/rmsnorm_bwd.lua < data/held-h200/mid_all.patch || exit 1
# HELD_BF16=1: the bf16 problems only (2504 variants of the 4402), for a
# call that has less time: held joins the default sweep in bf16 first
if [ "${HELD_BF16:-0}" = 1 ]; then
    sed -i '/^    {x = "[a-z0-9]*",.* shapes = [a-z0-9]*},$/d' mid_all.lua || exit 1
fi
timeout "${HELD_LIMIT:-570}" build/normtune run mid_all.lua --db "$OUT/mid_all.db" > "$OUT/fill.log" 2>&1
echo "rc=$?" >> "$OUT/fill.log"
tail -n 5 "$OUT/fill.log"
