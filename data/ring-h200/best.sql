-- each family's best per shape (median us), and stage's over it
WITH b AS (SELECT s.M, s.N, v.family f, v.params, r.median_us us,
                  row_number() OVER (PARTITION BY s.M, s.N, v.family ORDER BY r.median_us) k
           FROM result r JOIN variant v ON v.id = r.variant_id JOIN shape s ON s.id = r.shape_id
           WHERE r.status = 'ok')
SELECT b.M, b.N, substr(b.f, 13) AS family, b.params, printf('%.2f', b.us) AS us,
       printf('%.3f', p.us / b.us) AS stage_over_it
FROM b JOIN b p ON p.M = b.M AND p.N = b.N AND p.f = 'rmsnorm_fwd.stage' AND p.k = 1
WHERE b.k = 1 ORDER BY b.N, b.M, b.us;
