INSERT INTO device VALUES (1, 'NVIDIA H200', 9, 0, 132, 62914560, 1980000, 2619000, 6144,
    '570.86', '12.8', '13.0', NULL);
INSERT INTO sweep VALUES (1, '', '', 'x', NULL, 1, 'running', NULL, '', NULL);
INSERT INTO variant VALUES (1, 'rmsnorm_bwd.persistent', 'block=,chunks=2=3,stages,k=-0', 'mixed'),
    (2, 'rmsnorm_bwd.nosuch', 'nsplit=64,partial=f32,nsplit=32', 'zz');
INSERT INTO shape VALUES (1, 'rmsnorm_bwd', 'bf16', -1, 9223372036854775807),
    (2, 'other_op', 'f8', 'text', x'00ff');
WITH RECURSIVE c(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM c WHERE value < 50)
INSERT INTO result(id, sweep_id, variant_id, shape_id, device_id, warmup,
    min_samples, max_samples, rel_ci, status, message, median_us, p10_us, p90_us,
    n_samples, bytes, gbps, pct_copy, created)
  SELECT value, 1, 1 + value % 2, 1 + value % 2, 1, value, 0, 0, 0, 'ok', '', 1e308 * value,
    -1, NULL, -5, 0, 'inf', -1e308, '' FROM c;
