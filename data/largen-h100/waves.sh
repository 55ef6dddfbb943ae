#!/bin/sh
# waves.sh -- one config each of the large-N shapes below their goals, at M
# around them (waves_bwd.lua, waves_fwd.lua), then an Nsight Compute
# profile of the backward's persistent config at 4096 x 20480 with its dw
# column sum.  Logs and databases under $OUT.
#   here:  make build/normtune && mkdir -p .devbuild &&
#          tar -cJf .devbuild/bin.tar.xz -C build normtune
#   there: sh data/largen-h100/waves.sh .devbuild/bin.tar.xz
set -u
mkdir -p build && tar -xJf "$1" -C build || exit 1
nvidia-smi --query-gpu=name,uuid,clocks.max.memory --format=csv > $OUT/gpu.txt
for s in bwd fwd; do
  build/normtune run data/largen-h100/waves_$s.lua --db $OUT/waves_$s.db --settle 5 > $OUT/waves_$s.log 2>&1; echo "$s rc=$?"
done
NCU_KERNEL='^nt_(persist|colsum)' NCU_COUNT=2 timeout 90 sh tests/gpu/profile.sh rmsnorm_bwd persistent block=512,chunks=5,stages=2,k=1 4096 20480 > $OUT/ncu_bwd_persistent_4096x20480.txt 2>&1; echo "ncu rc=$?"
tar -cJf $OUT/waves.tar.xz -C $OUT waves_bwd.db waves_fwd.db waves_bwd.log waves_fwd.log && rm -f $OUT/waves_*
