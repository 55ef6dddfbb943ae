#!/bin/sh
# best.sh DB[.xz] -- per shape, the best of each (family, tpr) of a
# database of fwd_tpr.lua or bwd_tpr.lua, and its time over the shape's
# best of tpr 4 to 32 (below 1: a tpr of 1 or 2 is faster).
set -u
[ $# -eq 1 ] && [ -r "$1" ] || { echo "usage: sh best.sh DB[.xz]" >&2; exit 2; }
db=$1
case "$db" in *.xz) t=$(mktemp) && xz -dc "$db" > "$t" && db=$t ;; esac
sqlite3 -header -column "$db" "
with b as (
  select s.M, s.N, v.family, cast(substr(v.params, 5, instr(v.params, ',') - 5) as int) as tpr,
         min(r.median_us) as us
  from result r join variant v on v.id = r.variant_id join shape s on s.id = r.shape_id
  where r.status = 'ok' group by s.M, s.N, v.family, tpr),
w as (select M, N, min(us) as us4 from b where tpr >= 4 group by M, N)
select b.N, b.M, b.family, b.tpr, round(b.us, 2) as us, round(b.us / w.us4, 3) as over_tpr4
from b join w using (M, N) order by b.N, b.M, b.family, b.tpr;"
[ "$db" = "$1" ] || rm -f "$db"
