#!/bin/sh
# alone.sh -- from alone.lua's database: per shape, each variant's median
# timed back to back (the run) and alone after an L2 flush (the
# re-measure; '-' where it was more than 6% behind the pick in the run and
# not re-measured), and its alone time over persistent's.  Needs sqlite3.
#   sh data/pstage-h200/alone.sh alone.db
[ $# -eq 1 ] && [ -r "$1" ] || { echo "usage: sh alone.sh DB" >&2; exit 2; }
sqlite3 -separator '  ' "file:$1?mode=ro" "
with a as (
  select s.M, s.N, v.family f, v.params p, r.median_us chain, m.median_us alone
  from result r join variant v on v.id = r.variant_id join shape s on s.id = r.shape_id
  left join rematch m on m.result_id = r.id and m.method = 'alone'
  where r.status = 'ok'),
b as (select M, N, alone pa from a where f = 'rmsnorm_bwd.persistent')
select printf('%5d x %-6d', a.M, a.N), printf('%-22s', substr(a.f, 13)), printf('%-38s', a.p),
       printf('%8.2f', a.chain),
       case when a.alone is null then '       -' else printf('%8.2f', a.alone) end,
       case when a.alone is null then '     -' else printf('%6.3f', a.alone / b.pa) end
from a join b using (M, N) order by a.N, a.M, a.f, a.p;"
