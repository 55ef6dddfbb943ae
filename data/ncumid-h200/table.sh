#!/bin/sh
# table.sh -- one Markdown row per profiled kernel of prof.sh's (or
# tests/gpu/profile.sh's) ncu_*.txt files: the shape, the kernel and its
# grid x block, and what says where a memory-bound kernel's time goes:
# duration, DRAM throughput (% of peak), SM active cycles over elapsed
# cycles, issued warps per scheduler and cycle (issue slots busy), cycles
# with no eligible warp, active warps per scheduler, achieved and
# theoretical occupancy, registers a thread.
#   sh data/ncumid-h200/table.sh DIR/ncu_*.txt
[ $# -ge 1 ] || { echo "usage: sh table.sh NCU.txt ..." >&2; exit 2; }
echo "| shape | kernel | grid x block | us | DRAM % | SM active % | issued / scheduler | no eligible % | warps / scheduler | occupancy achieved / theoretical % | registers |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for f in "$@"; do
    awk -v f="$(basename "$f" .txt)" '
        function num(s) { gsub(/,/, "", s); return s + 0 }
        function flush() {
            if (k == "") return
            printf "| %s | %s | %s | %.2f | %.0f | %.0f | %.2f | %.0f | %.2f | %.0f / %.0f | %d |\n",
                   shape, k, gb, v["Duration"], v["DRAM Throughput"],
                   100 * v["SM Active Cycles"] / v["Elapsed Cycles"], v["Issued Warp Per Scheduler"],
                   v["No Eligible"], v["Active Warps Per Scheduler"], v["Achieved Occupancy"],
                   v["Theoretical Occupancy"], v["Registers Per Thread"]
            k = ""; delete v
        }
        BEGIN { shape = f; sub(/^ncu_/, "", shape)
                split("Duration|DRAM Throughput|SM Active Cycles|Elapsed Cycles|Issued Warp Per Scheduler|No Eligible|Active Warps Per Scheduler|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread", names, "|") }
        /^  [a-z].*\(nt_args\) \(/ {
            flush()
            k = $0; sub(/^  (void )?/, "", k); sub(/<.*/, "", k)
            gb = $0; sub(/.*\(nt_args\) /, "", gb); sub(/, Context.*/, "", gb)
            gsub(/, 1, 1\)/, ")", gb)
            next }
        k != "" {
            for (m in names) {
                n = names[m]
                if (index($0, "    " n " ") == 1 && !(n in v)) v[n] = num($NF)
            }
        }
        END { flush() }' "$f"
done
