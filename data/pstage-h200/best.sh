#!/bin/sh
# best.sh -- from a database of pstage.lua or ppersist.lua (call.sh): per
# shape, the best of the plain family (stage, persistent) and the best of
# the prefetching one at each pf, with its time over the plain best
# (below 1: faster).  Needs sqlite3.
#   sh data/pstage-h200/best.sh pstage.db   (or ppersist.db)
[ $# -eq 1 ] && [ -r "$1" ] || { echo "usage: sh best.sh DB" >&2; exit 2; }
sqlite3 -separator '  ' "file:$1?mode=ro" "
with r as (
  select s.M, s.N, v.family f, v.params p, min(r.median_us) us,
         case when v.params like '%pf=%' then cast(substr(v.params, instr(v.params, 'pf=') + 3) as int)
              else -1 end pf
  from result r join variant v on v.id = r.variant_id join shape s on s.id = r.shape_id
  where r.status = 'ok' group by s.M, s.N, v.family, v.params),
plain as (select M, N, min(us) b from r where pf < 0 group by M, N),
best as (select M, N, pf, min(us) us from r group by M, N, pf)
select printf('%6d x %-6d', best.M, best.N),
       case when best.pf < 0 then 'plain  ' else printf('pf=%d   ', best.pf) end,
       printf('%9.2f us', best.us), printf('%6.3f', best.us / plain.b),
       (select f || ' ' || p from r where r.M = best.M and r.N = best.N and r.pf = best.pf
          and r.us = best.us limit 1)
from best join plain using (M, N) order by best.N, best.M, best.pf;"
