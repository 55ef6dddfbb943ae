UPDATE variant SET params = printf('%.*c', 600, 'x') WHERE id = 1;
UPDATE shape SET M = 0, N = 0;
DELETE FROM device;
