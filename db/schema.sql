-- schema.sql -- the normtune results database, schema version 7.
--
-- Embedded into the binary at build time (store_schema_texts[0]) and run
-- by db/store.c, inside one transaction, on a new or empty file.  A later
-- version changes this file to the newest schema and adds a migration step
-- (version v -> v+1) to the table in db/store.c; user_version below must
-- equal STORE_SCHEMA_VERSION in db/store.h.  docs/schema.md describes every
-- table and column.
--
-- Times are UTC ISO 8601 texts ("2025-01-31T12:34:56.789Z"); durations are
-- microseconds; bandwidths GB/s (1e9 bytes per second).

PRAGMA application_id = 1314145346;   -- 0x4e544442, "NTDB": a normtune file
PRAGMA user_version = 7;              -- STORE_SCHEMA_VERSION

-- A GPU.  Identified by its uuid; a device without one (uuid NULL) by name.
CREATE TABLE device (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL,          -- "NVIDIA H200"
    cc_major      INTEGER NOT NULL,          -- compute capability
    cc_minor      INTEGER NOT NULL,
    sms           INTEGER NOT NULL,          -- multiprocessors
    l2_bytes      INTEGER NOT NULL,
    sm_clock_khz  INTEGER NOT NULL,
    mem_clock_khz INTEGER NOT NULL,
    mem_bus_bits  INTEGER NOT NULL,
    driver        TEXT    NOT NULL,          -- driver version, latest seen
    runtime       TEXT    NOT NULL,          -- CUDA runtime version
    nvrtc         TEXT    NOT NULL,          -- NVRTC version
    uuid          TEXT    UNIQUE             -- "GPU-...", NULL if none
);

-- One run of a sweep script on one device.
CREATE TABLE sweep (
    id          INTEGER PRIMARY KEY,
    script      TEXT    NOT NULL,            -- script path as given
    script_hash TEXT    NOT NULL,            -- hash of the script text
    started     TEXT    NOT NULL,            -- UTC ISO 8601
    finished    TEXT,                        -- NULL while running
    device_id   INTEGER NOT NULL REFERENCES device(id),
    status      TEXT    NOT NULL DEFAULT 'running'
                CHECK (status IN ('running', 'done', 'interrupted', 'failed')),
    copy_gbps   REAL,                        -- measured D2D copy bandwidth
    host        TEXT    NOT NULL DEFAULT '', -- machine the sweep ran on
    pid         INTEGER                      -- its process id (NULL before schema 3)
);

-- A kernel configuration: family, canonical params, kernel source hash.
CREATE TABLE variant (
    id       INTEGER PRIMARY KEY,
    family   TEXT NOT NULL,                  -- "<op>.<family>"
    params   TEXT NOT NULL,                  -- "block=256,chunks=2,stages=2,k=0"
    src_hash TEXT NOT NULL,                  -- hash of the kernel sources
    UNIQUE (family, params, src_hash)
);

-- A problem: op, element type, M rows of N elements.
CREATE TABLE shape (
    id    INTEGER PRIMARY KEY,
    op    TEXT    NOT NULL,                  -- the op's name
    dtype TEXT    NOT NULL,                  -- its dtypes: "x=bf16,w=f32,dw=f32"
    M     INTEGER NOT NULL,
    N     INTEGER NOT NULL,
    UNIQUE (op, dtype, M, N)
);

-- One measurement of a variant on a shape and device, under timing settings.
-- The unique key is the resume key: a sweep that finds it skips the work.
CREATE TABLE result (
    id          INTEGER PRIMARY KEY,
    sweep_id    INTEGER NOT NULL REFERENCES sweep(id),
    variant_id  INTEGER NOT NULL REFERENCES variant(id),
    shape_id    INTEGER NOT NULL REFERENCES shape(id),
    device_id   INTEGER NOT NULL REFERENCES device(id),
    warmup      INTEGER NOT NULL,            -- timing settings (part of the key)
    min_samples INTEGER NOT NULL,
    max_samples INTEGER NOT NULL,
    rel_ci      REAL    NOT NULL,
    status      TEXT    NOT NULL,            -- "ok", "compile_error", "wrong", ...
    message     TEXT    NOT NULL DEFAULT '', -- why it failed, or a note
    median_us   REAL,                        -- over the samples; NULL if none
    p10_us      REAL,
    p90_us      REAL,
    n_samples   INTEGER NOT NULL DEFAULT 0,
    bytes       REAL,                        -- minimum bytes the op moves
    gbps        REAL,                        -- bytes / median
    pct_copy    REAL,                        -- gbps / sweep copy_gbps, in %
    traffic_gbps REAL,                       -- the problem's yardstick in the same
                                             -- run: a kernel with the op's own
                                             -- traffic (NULL before schema 5)
    regs        INTEGER,                     -- registers per thread (max)
    spill       INTEGER,                     -- spill store bytes (max)
    smem        INTEGER,                     -- shared bytes per block (max)
    grid        INTEGER,                     -- blocks of the main kernel
    reps        INTEGER,                     -- chain runs averaged per sample
    created     TEXT    NOT NULL,            -- UTC ISO 8601, when stored
    UNIQUE (device_id, variant_id, shape_id, warmup, min_samples, max_samples, rel_ci)
);
CREATE INDEX result_shape ON result (device_id, shape_id, status);
CREATE INDEX result_sweep ON result (sweep_id);

-- Raw timing samples of a result, in the order they were taken.
CREATE TABLE sample (
    result_id INTEGER NOT NULL REFERENCES result(id) ON DELETE CASCADE,
    idx       INTEGER NOT NULL,              -- 0, 1, ...
    us        REAL    NOT NULL,
    PRIMARY KEY (result_id, idx)
) WITHOUT ROWID;

-- Named errors of a result: per output tensor, its relative L2 error
-- against the float64 reference, the tolerance it was checked against
-- (the plan's; NULL for results stored before schema 4) and the tolerance
-- the output's dtype asks for (required; a result with value > required is
-- not eligible for `best`: an fp32 output computed through bf16).
CREATE TABLE error (
    result_id INTEGER NOT NULL REFERENCES result(id) ON DELETE CASCADE,
    tensor    TEXT    NOT NULL,              -- output name in the op's table
    value     REAL    NOT NULL,              -- relative L2 error
    tolerance REAL,
    required  REAL,
    PRIMARY KEY (result_id, tensor)
) WITHOUT ROWID;

-- Re-measures (schema 6): a search's closest few results at a problem,
-- measured again on one GPU in alternation (rounds of samples, each
-- result in turn), so that what drifts while a sweep runs (clocks, heat)
-- touches them alike.  One re-measure is the rows of one `grp`; a row's
-- `rank_us` is the re-measure's fastest stored median times the result's
-- interleaved median over the fastest interleaved one: the results keep
-- the best median among them and take the re-measure's order.  `best`
-- ranks a result by the rank_us of its newest row, else by its median.  A
-- result stored again (the same key) drops its rows.  A resumed search
-- reuses a re-measure of the method it asks for only.
CREATE TABLE rematch (
    id        INTEGER PRIMARY KEY,
    grp       INTEGER NOT NULL,              -- the re-measure (its first row's id)
    sweep_id  INTEGER NOT NULL REFERENCES sweep(id),
    device_id INTEGER NOT NULL REFERENCES device(id), -- the GPU that re-measured
    result_id INTEGER NOT NULL REFERENCES result(id) ON DELETE CASCADE,
    median_us REAL    NOT NULL,              -- median of its interleaved samples
    n_samples INTEGER NOT NULL,
    rank_us   REAL    NOT NULL,              -- what `best` ranks it by
    created   TEXT    NOT NULL,
    method    TEXT    NOT NULL DEFAULT 'chain'   -- 'chain': timed back to back as the
              CHECK (method IN ('chain', 'alone')) -- results; 'alone': each run alone
                                                   -- after an L2 flush (schema 7)
);
CREATE INDEX rematch_result ON rematch (result_id);

-- The fastest eligible result per (device, problem): status ok, and every
-- output within the tolerance its dtype asks for (an fp32 dw computed
-- through bf16 partials is not eligible), ranked by its newest re-measure's
-- rank_us where it has one, else by its median.  Ties go to the smaller
-- (family, params, src_hash), so the choice depends on content only.  The
-- migrations to schemas 5 and 6 (db/store.c) re-create the view from this
-- text.
CREATE VIEW best AS
SELECT device_id, device, op, dtype, M, N, family, params, src_hash,
       median_us, gbps, pct_copy, traffic_gbps, result_id, sweep_id, created
FROM (
    SELECT r.device_id, d.name AS device, s.op, s.dtype, s.M, s.N,
           v.family, v.params, v.src_hash, r.median_us, r.gbps, r.pct_copy, r.traffic_gbps,
           r.id AS result_id, r.sweep_id, r.created,
           row_number() OVER (PARTITION BY r.device_id, r.shape_id
                              ORDER BY coalesce((SELECT m.rank_us FROM rematch m
                                                 WHERE m.result_id = r.id
                                                 ORDER BY m.id DESC LIMIT 1),
                                                r.median_us),
                                       v.family, v.params, v.src_hash, r.id) AS rank
    FROM result r
    JOIN variant v ON v.id = r.variant_id
    JOIN shape s ON s.id = r.shape_id
    JOIN device d ON d.id = r.device_id
    WHERE r.status = 'ok' AND r.median_us IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM error e WHERE e.result_id = r.id
                      AND e.required IS NOT NULL AND e.value > e.required)
)
WHERE rank = 1;
