INSERT INTO device VALUES (1, 'NVIDIA H200', 9, 0, 132, 62914560, 1980000, 2619000, 6144,
    '570.86', '12.8', '13.0', 'GPU-1');
INSERT INTO sweep VALUES (1, 'sweeps/x.lua', 'h1', '2025-01-01T00:00:00.000Z',
    '2025-01-01T01:00:00.000Z', 1, 'done', 4000.0, 'host-1', NULL);
INSERT INTO variant VALUES (1, 'rmsnorm_bwd.naive', 'nsplit=64,partial=f32', '0123456789abcdef'),
    (2, 'rmsnorm_bwd.persistent', 'block=256,chunks=2,stages=2,k=0', '0123456789abcdef'),
    (3, 'rmsnorm_bwd.persistent', 'block=64,chunks=8,stages=1,k=0', '0123456789abcdef');
INSERT INTO shape VALUES (1, 'rmsnorm_bwd', 'bf16', 2048, 4096), (2, 'rmsnorm_bwd', 'bf16', 64, 1024);
INSERT INTO result(id, sweep_id, variant_id, shape_id, device_id, warmup,
    min_samples, max_samples, rel_ci, status, message, median_us, p10_us, p90_us,
    n_samples, bytes, gbps, pct_copy, created) VALUES
  (1, 1, 1, 1, 1, 10, 20, 200, 0.01, 'ok', '', 40.0, 39.0, 41.0, 0, 33554432,
   838.86, 20.97, '2025-01-01T00:10:00.000Z'),
  (2, 1, 2, 1, 1, 10, 20, 200, 0.01, 'ok', '', 20.0, 19.5, 20.5, 3, 33554432,
   1677.72, 41.94, '2025-01-01T00:20:00.000Z'),
  (3, 1, 3, 1, 1, 10, 20, 200, 0.01, 'wrong', 'dw error 3e-2', 10.0, 9.9, 10.1, 0,
   33554432, 3355.44, 83.89, '2025-01-01T00:30:00.000Z'),
  (4, 1, 2, 2, 1, 10, 20, 200, 0.01, 'ok', '', 5.0, 4.9, 5.1, 0, 262144,
   52.4, 1.3, '2025-01-01T00:40:00.000Z');
INSERT INTO sample VALUES (2, 0, 20.0), (2, 1, 19.91), (2, 2, 20.123);
INSERT INTO error VALUES (1, 'dw', 2e-7, 1e-5), (1, 'dx', 3e-3, NULL), (3, 'dw', 3e-2, 1e-5);
