-- per shape: each timing method's best, and the other method's time of each pick over its best
-- sed s/OP/bwd/ compare.sql | sqlite3 -header -column chain_bwd.db   (beside alone_bwd.db; the same for fwd)
attach 'alone_OP.db' as a;
create temp view c as select s.M, s.N, v.family f, v.params p, r.median_us us from main.result r join main.variant v on v.id=r.variant_id join main.shape s on s.id=r.shape_id where r.status='ok';
create temp view al as select s.M, s.N, v.family f, v.params p, r.median_us us from a.result r join a.variant v on v.id=r.variant_id join a.shape s on s.id=r.shape_id where r.status='ok';
create temp table j as select c.M, c.N, c.f, c.p, c.us cus, al.us aus from c join al using (M, N, f, p);
select j.M, j.N,
 (select f||' '||p from j j2 where j2.M=j.M and j2.N=j.N order by cus limit 1) as chain_best,
 (select f||' '||p from j j2 where j2.M=j.M and j2.N=j.N order by aus limit 1) as alone_best,
 round((select aus from j j2 where j2.M=j.M and j2.N=j.N order by cus limit 1)/min(aus),3) as alone_loss,
 round((select cus from j j2 where j2.M=j.M and j2.N=j.N order by aus limit 1)/min(cus),3) as chain_loss,
 round(min(cus),2) cbest, round(min(aus),2) abest
 from j group by M, N;
