/* store.c -- the results database: open, record, resume, merge, report.
 *
 * The only code that includes sqlite3.h.  A store is one SQLite file in WAL
 * mode whose schema (db/schema.sql, embedded as store_schema_texts[0]) is
 * versioned with PRAGMA user_version and marked as normtune's with
 * PRAGMA application_id.  Opening inspects a file read-only before anything
 * is written: a file that is not SQLite, a SQLite database of another
 * program, or one written by a newer normtune is refused and left as it was.
 * An older schema is migrated forward one step at a time (migrations[]).
 *
 * Every open runs an integrity check and PRAGMA foreign_key_check and
 * refuses a damaged file, so a damaged file is never read as empty: writers
 * and merges the full PRAGMA integrity_check, read-only opens PRAGMA
 * quick_check (all but the comparison of indexes with their tables).
 * Read-only opens are plain shared-lock opens (never immutable: a writer
 * may be at work).  A write open checks that the file and its directory
 * are writable and takes and releases the write lock before it returns, so
 * a writer learns at once that it cannot write; it then checkpoints what a
 * crashed writer left in the -wal file and marks sweeps whose process died
 * as interrupted; one that fails leaves the journal mode it found.  Closing
 * a write store checkpoints the WAL into the main file and, when it is the
 * last connection, leaves the file in rollback mode: the file alone then
 * holds everything, and it can be read in a directory the reader cannot
 * write.
 *
 * Every statement a store runs is listed in q_sql[], prepared once on first
 * use and cached in the store, bound by name, stepped and reset.  Each write
 * is one transaction (BEGIN IMMEDIATE ... COMMIT, ROLLBACK on error), so a
 * killed sweep leaves whole results or none.  Merging attaches the inputs
 * read-only and copies their rows into a new file, mapping ids through
 * temporary tables, each input inside one read transaction.  The
 * store_report_* functions turn canned queries into rows of formatted text
 * for `normtune query`.  What is fixed for a process or a command is
 * computed once: the families' source hashes (store_family_hash, read by
 * the SQL function nt_current for every row it is asked about) and the
 * device model a command reads or a sweep resumes from (store_find_device,
 * the lookups): the GPUs of one name, compute capability, SM count and
 * memory clock pool their results, and the ids of the model's GPUs are
 * resolved once into a temporary table that every query reads as
 * `device_id IN temp.nt_gpus`. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <pthread.h>

#include <sqlite3.h>

#include "db/store.h"

extern const char *const store_schema_texts[]; /* generated: db/schema.sql */

#define APP_ID 0x4e544442          /* "NTDB": PRAGMA application_id */
#define BUSY_MS 10000              /* wait this long for another writer */
#define CLOSE_BUSY_MS 2000         /* ... and this long to checkpoint at close */
#define WAL_RETRY_MS 10            /* the switch to WAL mode tried again after this */
#define MAX_CHECK_ERRS 5           /* integrity_check lines in a message */
#define MAX_COLS 24                /* columns of a canned report */

/* Migration steps: migrations[v] turns schema version v into v + 1 (run in
 * one transaction, after which user_version is set to v + 1).  Entry 0 is
 * unused: a new file gets schema.sql, which is always the newest schema. */
static const char *const migrations[STORE_SCHEMA_VERSION] = {
    NULL,                          /* 0 -> 1: a new file, see new_schema() */
    /* 1 -> 2: timing samples average `reps` back-to-back runs (NULL: 1) */
    "ALTER TABLE result ADD COLUMN reps INTEGER;",
    /* 2 -> 3: the sweep's process id, to tell a dead sweep from a running one */
    "ALTER TABLE sweep ADD COLUMN pid INTEGER;",
    /* 3 -> 4: errors become named rows of their own table (the err_<tensor>
     * columns move there: err_columns_to_rows); the tolerance of an older
     * result is unknown (NULL) */
    "CREATE TABLE error (result_id INTEGER NOT NULL REFERENCES result(id) "
    "ON DELETE CASCADE, tensor TEXT NOT NULL, value REAL NOT NULL, tolerance REAL, "
    "PRIMARY KEY (result_id, tensor)) WITHOUT ROWID;",
    /* 4 -> 5: a problem's dtypes are a slot list ("x=bf16,w=bf16,dw=f32"),
     * older files name one dtype ("bf16": the first slot's, the others the
     * op's defaults, which is what the tuner measured); every error row
     * records the tolerance its output's dtype asks for; `best` keeps only
     * results within it (nt_dtypes_of and nt_required: see fn_dtypes_of);
     * results record their problem's yardstick (traffic_gbps) */
    "UPDATE shape SET dtype = nt_dtypes_of(op, dtype);"
    "ALTER TABLE result ADD COLUMN traffic_gbps REAL;"
    "ALTER TABLE error ADD COLUMN required REAL;"
    "UPDATE error SET required = (SELECT nt_required(s.op, s.dtype, error.tensor) "
    "FROM result r JOIN shape s ON s.id = r.shape_id WHERE r.id = error.result_id);"
    "DROP VIEW best;",        /* ... and the view of schema.sql (view_sql) */
    /* 5 -> 6: re-measures (table rematch); `best` ranks by them */
    "CREATE TABLE rematch (id INTEGER PRIMARY KEY, grp INTEGER NOT NULL, "
    "sweep_id INTEGER NOT NULL REFERENCES sweep(id), "
    "device_id INTEGER NOT NULL REFERENCES device(id), "
    "result_id INTEGER NOT NULL REFERENCES result(id) ON DELETE CASCADE, "
    "median_us REAL NOT NULL, n_samples INTEGER NOT NULL, rank_us REAL NOT NULL, "
    "created TEXT NOT NULL);"
    "CREATE INDEX rematch_result ON rematch (result_id);"
    "DROP VIEW best;",
    /* 6 -> 7: how a re-measure was timed (chains back to back, or each
     * alone after an L2 flush); the older ones were chains */
    "ALTER TABLE rematch ADD COLUMN method TEXT NOT NULL DEFAULT 'chain' "
    "CHECK (method IN ('chain', 'alone'));",
};

/* Every statement of the store, prepared lazily and cached per store. */
enum {
    Q_BEGIN, Q_COMMIT, Q_ROLLBACK,
    Q_DEV_UUID, Q_DEV_NAME, Q_DEV_INS, Q_DEV_UPD, Q_DEV_GET, Q_DEV_NEWEST,
    Q_MODEL_OF, Q_MODEL_SIZE, Q_MODEL_FIND, Q_MODEL_ALL, Q_MODEL_WITH_RESULTS,
    Q_MODEL_WITH_CURRENT, Q_MODEL_COMPLETE, Q_MODEL_GPUS, Q_GPUS_CLEAR, Q_GPUS_SET,
    Q_SWEEP_INS, Q_SWEEP_END, Q_SWEEP_DEAD,
    Q_VAR_INS, Q_VAR_GET, Q_SHAPE_INS, Q_SHAPE_GET,
    Q_RES_DEL, Q_RES_INS, Q_SAMPLE_INS, Q_ERR_INS, Q_LOOKUP, Q_SAMPLES, Q_ERRS,
    Q_BEST, Q_BEST_ALL, Q_LAST_CREATED, Q_FAM_CURRENT,
    Q_REP_BEST, Q_REP_BEST_ALL, Q_REP_SHAPE, Q_REP_SHAPES, Q_REP_FAMBEST, Q_REP_POINTS, Q_PEERS, Q_REP_RESULT, Q_REP_SAMPLES, Q_REP_SWEEPS,
    Q_RM_INS, Q_RM_GRP, Q_RM_GRPS, Q_RM_ROWS,
    Q_COUNT
};

#define DEV_COLS "name, cc_major, cc_minor, sms, l2_bytes, sm_clock_khz, " \
    "mem_clock_khz, mem_bus_bits, driver, runtime, nvrtc, uuid"
#define RES_KEY "device_id = :dev AND variant_id = :var AND shape_id = :shape " \
    "AND warmup = :warmup AND min_samples = :min AND max_samples = :max " \
    "AND rel_ci = :rel_ci"
/* First line of a message, at most 60 characters. */
#define SHORT_MSG "substr(CASE WHEN instr(r.message, char(10)) > 0 " \
    "THEN substr(r.message, 1, instr(r.message, char(10)) - 1) " \
    "ELSE r.message END, 1, 60)"

/* The results of one shape (PART and ORDER empty, WHERE naming it) or of
 * every shape (PART "M, N, ", ORDER ending in M, N) of the model
 * (temp.nt_gpus), ranked per op and dtype as `best` ranks (a result's
 * newest re-measure, else its median: db/schema.sql), with % of the best
 * and the GPU of each. */
#define REP_SHAPE_SQL(PART, WHERE, LAST) REP_SHAPE_SQL_IN(PART, "", WHERE, "", LAST)
/* OPEN and CLOSE wrap the results' select (Q_REP_FAMBEST keeps each
 * family's first) */
#define REP_SHAPE_SQL_IN(PART, OPEN, WHERE, CLOSE, LAST) \
        "SELECT CASE WHEN status = 'ok' THEN row_number() OVER (" \
        "PARTITION BY " PART "op, dtype ORDER BY status <> 'ok', rank_us, family, " \
        "params, id) END, op, dtype, family, params, status, median_us, rm_us, rm_by, " \
        "p10_us, p90_us, n_samples, gbps, pct_copy, 100.0 * gbps / traffic_gbps, " \
        "CASE WHEN status = 'ok' THEN " \
        "100.0 * (min(CASE WHEN status = 'ok' THEN rank_us END) OVER " \
        "(PARTITION BY " PART "op, dtype)) / rank_us END, gpu, id, msg" LAST " FROM (" OPEN \
        "SELECT r.id, s.M, s.N, s.op, s.dtype, v.family, v.params, r.status, r.median_us, " \
        "m.median_us AS rm_us, m.method AS rm_by, coalesce(m.rank_us, r.median_us) AS rank_us, " \
        "r.p10_us, r.p90_us, r.n_samples, r.gbps, r.pct_copy, r.traffic_gbps, " \
        "substr(d.uuid, 1, 12) AS gpu, " \
        SHORT_MSG " AS msg " \
        /* the shape first, then the GPUs of the model (temp.nt_gpus), then \
         * the results of each through the index result_shape (device_id, \
         * shape_id, status) (CROSS JOIN keeps SQLite from reading every \
         * result of the model for each shape, or indexing them anew) */ \
        "FROM shape s CROSS JOIN temp.nt_gpus g CROSS JOIN result r " \
        "JOIN variant v ON v.id = r.variant_id JOIN device d ON d.id = r.device_id " \
        /* its newest re-measure, if any */ \
        "LEFT JOIN rematch m ON m.id = (SELECT max(x.id) FROM rematch x " \
        "WHERE x.result_id = r.id) " \
        "WHERE " WHERE " r.shape_id = s.id AND r.device_id = g.dev" CLOSE ") " \
        "ORDER BY " PART "op, dtype, status <> 'ok', rank_us, family, params, id"

static const char *const q_sql[Q_COUNT] = {
    [Q_BEGIN] = "BEGIN IMMEDIATE",
    [Q_COMMIT] = "COMMIT",
    [Q_ROLLBACK] = "ROLLBACK",
    [Q_DEV_UUID] = "SELECT id FROM device WHERE uuid = :uuid",
    [Q_DEV_NAME] = "SELECT id FROM device WHERE uuid IS NULL AND name = :name "
                   "ORDER BY id LIMIT 1",
    [Q_DEV_INS] = "INSERT INTO device(" DEV_COLS ") VALUES (:name, :cc_major, "
                  ":cc_minor, :sms, :l2_bytes, :sm_clock_khz, :mem_clock_khz, "
                  ":mem_bus_bits, :driver, :runtime, :nvrtc, :uuid)",
    [Q_DEV_UPD] = "UPDATE device SET name = :name, cc_major = :cc_major, "
                  "cc_minor = :cc_minor, sms = :sms, l2_bytes = :l2_bytes, "
                  "sm_clock_khz = :sm_clock_khz, mem_clock_khz = :mem_clock_khz, "
                  "mem_bus_bits = :mem_bus_bits, driver = :driver, "
                  "runtime = :runtime, nvrtc = :nvrtc WHERE id = :id AND "
                  "uuid IS :uuid",
    [Q_DEV_NEWEST] = "SELECT d.uuid, d.name FROM sweep s JOIN device d ON d.id = s.device_id "
                     "ORDER BY s.id DESC LIMIT 1",
    [Q_DEV_GET] = "SELECT name, coalesce(uuid, 'none'), cc_major, cc_minor, "
                  "driver, runtime, nvrtc, sms, mem_clock_khz FROM device WHERE id = :id",
    /* Device models (see models_load): temp.nt_model maps every device
     * to its model's id (the lowest device id of the model), and
     * temp.nt_gpus holds the devices of the model a command reads. */
    [Q_MODEL_OF] = "SELECT mid FROM temp.nt_model WHERE dev = :dev",
    [Q_MODEL_SIZE] = "SELECT count(*) FROM temp.nt_model WHERE mid = "
                     "(SELECT mid FROM temp.nt_model WHERE dev = :dev)",
    /* the models of the GPUs a device argument names */
    [Q_MODEL_FIND] = "SELECT DISTINCT m.mid FROM device d JOIN temp.nt_model m ON m.dev = d.id "
                     "WHERE d.name = :name COLLATE NOCASE OR d.uuid = :name COLLATE NOCASE OR "
                     "(length(:name) >= 8 AND "
                     "substr(d.uuid, 1, length(:name)) = :name COLLATE NOCASE) ORDER BY m.mid",
    [Q_MODEL_ALL] = "SELECT DISTINCT mid FROM temp.nt_model ORDER BY mid",
    [Q_MODEL_WITH_RESULTS] = "SELECT DISTINCT m.mid FROM temp.nt_model m "
                             "WHERE EXISTS (SELECT 1 FROM result r WHERE "
                             "r.device_id = m.dev) ORDER BY m.mid",
    /* ... with ok results of the current family sources (store_best) */
    [Q_MODEL_WITH_CURRENT] = "SELECT DISTINCT m.mid FROM temp.nt_model m "
                             "WHERE EXISTS (SELECT 1 FROM result r JOIN variant v ON "
                             "v.id = r.variant_id WHERE r.device_id = m.dev AND "
                             "r.status = 'ok' AND nt_current(v.family, v.src_hash)) "
                             "ORDER BY m.mid",
    /* ... whose ok current results cover every (family, problem) that any
     * model's ok current results cover */
    [Q_MODEL_COMPLETE] = "WITH cur AS (SELECT DISTINCT m.mid AS mid, "
                         "v.family AS fam, r.shape_id AS sh FROM result r JOIN variant v ON "
                         "v.id = r.variant_id JOIN temp.nt_model m ON m.dev = r.device_id "
                         "WHERE r.status = 'ok' AND nt_current(v.family, v.src_hash)) "
                         "SELECT DISTINCT c.mid FROM cur c WHERE NOT EXISTS "
                         "(SELECT 1 FROM cur a WHERE NOT EXISTS (SELECT 1 FROM cur b WHERE "
                         "b.mid = c.mid AND b.fam = a.fam AND b.sh = a.sh)) ORDER BY c.mid",
    /* a model's GPUs, for messages */
    [Q_MODEL_GPUS] = "SELECT d.name, d.cc_major, d.cc_minor, d.sms, d.mem_clock_khz, "
                     "coalesce(d.uuid, 'none') FROM temp.nt_model m JOIN device d ON "
                     "d.id = m.dev WHERE m.mid = :mid ORDER BY d.id",
    [Q_GPUS_CLEAR] = "DELETE FROM temp.nt_gpus",
    [Q_GPUS_SET] = "INSERT INTO temp.nt_gpus SELECT dev FROM temp.nt_model WHERE mid = :mid",
    [Q_SWEEP_INS] = "INSERT INTO sweep(script, script_hash, started, device_id, "
                    "status, copy_gbps, host, pid) VALUES (:script, :hash, :now, "
                    ":dev, 'running', :copy, :host, :pid)",
    [Q_SWEEP_END] = "UPDATE sweep SET status = :status, finished = :now WHERE id = :id",
    /* running sweeps whose process is gone; finished: their last result */
    [Q_SWEEP_DEAD] = "UPDATE sweep SET status = 'interrupted', finished = (SELECT "
                     "max(r.created) FROM result r WHERE r.sweep_id = sweep.id) "
                     "WHERE status = 'running' AND NOT nt_alive(host, pid, started)",
    [Q_VAR_INS] = "INSERT OR IGNORE INTO variant(family, params, src_hash) "
                  "VALUES (:family, :params, :src)",
    [Q_VAR_GET] = "SELECT id FROM variant WHERE family = :family AND "
                  "params = :params AND src_hash = :src",
    [Q_SHAPE_INS] = "INSERT OR IGNORE INTO shape(op, dtype, M, N) "
                    "VALUES (:op, :dtype, :M, :N)",
    [Q_SHAPE_GET] = "SELECT id FROM shape WHERE op = :op AND dtype = :dtype "
                    "AND M = :M AND N = :N",
    [Q_RES_DEL] = "DELETE FROM result WHERE " RES_KEY,
    [Q_RES_INS] = "INSERT INTO result(sweep_id, variant_id, shape_id, device_id, "
                  "warmup, min_samples, max_samples, rel_ci, status, message, "
                  "median_us, p10_us, p90_us, n_samples, bytes, gbps, pct_copy, "
                  "traffic_gbps, regs, spill, smem, grid, reps, created) VALUES "
                  "(:sweep, :var, :shape, :dev, :warmup, :min, :max, :rel_ci, "
                  ":status, :msg, :median, :p10, :p90, :n, :bytes, :gbps, :pct, "
                  ":traffic, :regs, :spill, :smem, :grid, :reps, :now)",
    [Q_SAMPLE_INS] = "INSERT INTO sample(result_id, idx, us) VALUES (:res, :idx, :us)",
    [Q_ERR_INS] = "INSERT INTO error(result_id, tensor, value, tolerance, required) "
                  "VALUES (:res, :tensor, :value, :tol, :req)",
    /* the resume key on any GPU of the model (temp.nt_gpus): the GPU's own
     * result first, else the newest */
    [Q_LOOKUP] = "SELECT r.id, r.status, r.message, r.median_us, r.p10_us, "
                 "r.p90_us, r.n_samples, r.bytes, r.gbps, r.pct_copy, "
                 "r.regs, r.spill, r.smem, r.grid, r.reps, r.traffic_gbps, r.device_id "
                 "FROM result r "
                 "JOIN variant v ON v.id = r.variant_id "
                 "JOIN shape s ON s.id = r.shape_id "
                 "WHERE r.device_id IN temp.nt_gpus AND v.family = :family AND "
                 "v.params = :params AND v.src_hash = :src AND s.op = :op AND "
                 "s.dtype = :dtype AND s.M = :M AND s.N = :N AND "
                 "r.warmup = :warmup AND r.min_samples = :min AND "
                 "r.max_samples = :max AND r.rel_ci = :rel_ci "
                 "ORDER BY r.device_id = :dev DESC, r.id DESC LIMIT 1",
    [Q_SAMPLES] = "SELECT us FROM sample WHERE result_id = :res ORDER BY idx",
    [Q_ERRS] = "SELECT tensor, value, coalesce(tolerance, 0), coalesce(required, 0) FROM error "
               "WHERE result_id = :res ORDER BY tensor",
    /* the view `best` for the GPUs of one model (temp.nt_gpus) ranked
     * together, among the results of the current family sources or all of
     * them (temp.best_model_current, temp.best_model: see model_views) */
    [Q_BEST] = "SELECT M, N, op, dtype, family, params, src_hash, median_us, "
               "gbps, pct_copy, result_id, traffic_gbps, device_id, sweep_id FROM "
               "temp.best_model_current ORDER BY op, dtype, N, M",
    [Q_BEST_ALL] = "SELECT M, N, op, dtype, family, params, src_hash, median_us, "
                   "gbps, pct_copy, result_id, traffic_gbps, device_id, sweep_id FROM "
                   "temp.best_model ORDER BY op, dtype, N, M",
    [Q_LAST_CREATED] = "SELECT max(created) FROM result WHERE device_id IN temp.nt_gpus",
    /* the families with ok results of their current sources on a model */
    [Q_FAM_CURRENT] = "SELECT DISTINCT v.family FROM result r JOIN variant v ON "
                      "v.id = r.variant_id WHERE r.device_id IN temp.nt_gpus AND "
                      "r.status = 'ok' AND nt_current(v.family, v.src_hash) ORDER BY v.family",
    [Q_REP_BEST] = "SELECT device, op, dtype, N, M, family, params, median_us, "
                   "gbps, pct_copy, result_id FROM temp.best_model "
                   "ORDER BY N, M, op, dtype",
    /* every model: ordered by model, then shape */
    [Q_REP_BEST_ALL] = "SELECT b.device, b.op, b.dtype, b.N, b.M, b.family, b.params, "
                       "b.median_us, b.gbps, b.pct_copy, b.result_id FROM temp.best_models b "
                       "JOIN device d ON d.id = b.device_id ORDER BY b.device, d.cc_major, "
                       "d.cc_minor, d.sms, d.mem_clock_khz, b.N, b.M, b.op, b.dtype",
    /* ranked as `best` ranks (a result's newest re-measure, else its
     * median: db/schema.sql) */
    [Q_REP_SHAPE] = REP_SHAPE_SQL("", "s.M = :M AND s.N = :N AND", ""),
    /* every shape of the model at once, its ok results as Q_REP_SHAPE ranks
     * them, with M and N last (store_report_shapes) */
    [Q_REP_SHAPES] = REP_SHAPE_SQL("M, N, ", "r.status = 'ok' AND", ", M, N"),
    /* the same, each family's first alone (per shape, op and dtype: its
     * best as Q_REP_SHAPES ranks them; `report` reads no other), the ranks
     * and % of best among those */
    [Q_REP_FAMBEST] = REP_SHAPE_SQL_IN("M, N, ", "SELECT * FROM (SELECT *, row_number() OVER "
                                       "(PARTITION BY M, N, op, dtype, family ORDER BY rank_us, "
                                       "params, id) AS fam_rk FROM (", "r.status = 'ok' AND",
                                       ")) WHERE fam_rk = 1", ", M, N"),
    /* every ok result's GB/s and % copy alone, in Q_REP_SHAPES' order (the
     * spread plot: no ranks, no times) */
    [Q_REP_POINTS] = "SELECT s.op, s.dtype, v.family, r.status, r.gbps, r.pct_copy, s.M, s.N "
                     "FROM shape s CROSS JOIN temp.nt_gpus g CROSS JOIN result r "
                     "JOIN variant v ON v.id = r.variant_id "
                     "LEFT JOIN rematch m ON m.id = (SELECT max(x.id) FROM rematch x "
                     "WHERE x.result_id = r.id) "
                     "WHERE r.status = 'ok' AND r.shape_id = s.id AND r.device_id = g.dev "
                     "ORDER BY s.M, s.N, s.op, s.dtype, coalesce(m.rank_us, r.median_us), "
                     "v.family, v.params, r.id",
    /* other live runs of a script on this host on the GPUs of a model */
    [Q_PEERS] = "SELECT s.pid, d.uuid FROM sweep s JOIN device d ON d.id = s.device_id "
                "WHERE s.status = 'running' AND s.script_hash = :hash AND s.host = :host AND "
                "s.pid <> :pid AND s.device_id IN temp.nt_gpus AND "
                "nt_alive(s.host, s.pid, s.started) ORDER BY s.id",
    [Q_REP_RESULT] = "SELECT n_samples FROM result WHERE id = :res",
    [Q_REP_SAMPLES] = "SELECT idx, us FROM sample WHERE result_id = :res ORDER BY idx",
    [Q_REP_SWEEPS] = "SELECT s.id, d.name, s.script, s.started, s.finished, "
                     "CASE WHEN s.status = 'running' AND NOT nt_alive(s.host, "
                     "s.pid, s.started) THEN 'interrupted' ELSE s.status END, s.copy_gbps,  (SELECT count(*) FROM result r "
                     "WHERE r.sweep_id = s.id), (SELECT count(*) FROM result r "
                     "WHERE r.sweep_id = s.id AND r.status = 'ok') FROM sweep s "
                     "JOIN device d ON d.id = s.device_id ORDER BY s.started, s.id",
    [Q_RM_INS] = "INSERT INTO rematch(grp, sweep_id, device_id, result_id, median_us, "
                 "n_samples, rank_us, created, method) VALUES (coalesce(:grp, 0), :sweep, "
                 ":dev, :res, :median, :n, :rank, :now, :method)",
    [Q_RM_GRP] = "UPDATE rematch SET grp = id WHERE id = :id",
    /* the re-measures by a GPU that hold a result, newest first */
    [Q_RM_GRPS] = "SELECT DISTINCT grp FROM rematch WHERE result_id = :res AND "
                  "device_id = :dev AND method = :method ORDER BY grp DESC",
    [Q_RM_ROWS] = "SELECT result_id, median_us FROM rematch WHERE grp = :grp",
};

struct store {
    sqlite3 *db;
    int mode;                      /* STORE_READ / WRITE / CREATE */
    char *path;                    /* as given, for messages (owned) */
    int had_wal;                   /* a -wal file was there before the open */
    int ready;                     /* a write store that opened fully */
    int set_wal;                   /* this open put a rollback-mode file in WAL mode */
    int64_t found;                 /* the schema version the open found */
    sqlite3_stmt *q[Q_COUNT];      /* cached statements, NULL until used */
    int has_views;                 /* the temp views of model_views exist */
    int has_models;                /* temp.nt_model holds every device (models_load) */
    int64_t gpus_mid;              /* the model temp.nt_gpus holds (0: none) */
    int64_t gpus_dev;              /* the device last resolved to it (0: none) */
    int claim_fd;                  /* the claims' lock file, open (fd + 1; 0: not) */
    off_t claim_at;                /* the byte whose lock is held (-1: none) */
    int64_t claim_dev;             /* the device claim_model is of (0: none) */
    char claim_model[160];         /* its model: name, capability, SMs, memory clock */
};

/* ---- small helpers ------------------------------------------------------ */

/* Write a message into err (if there is room); returns STORE_ERR. */
static int seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int seterr(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return STORE_ERR;
}

/* A failed SQLite call: "<path>: <what>: <sqlite message>". */
static int dberr(store *db, char *err, size_t errlen, const char *what) {
    return seterr(err, errlen, "%s: %s: %s", db->path, what, sqlite3_errmsg(db->db));
}

/* Current UTC time as ISO 8601 with milliseconds, into buf (>= 32 bytes). */
static void utc_now(char *buf, size_t len) {
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

/* A URI for path ("file:" + percent-encoded path + "?" + query) so that any
 * file name works with SQLITE_OPEN_URI.  Returns a malloc'd string. */
static char *make_uri(const char *path, const char *query) {
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(path), qn = query ? strlen(query) : 0;
    char *u = malloc(5 + 3 * n + 2 + qn + 1), *p = u;
    if (!u) return NULL;
    memcpy(p, "file:", 5);
    p += 5;
    for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
        if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
            (*s >= '0' && *s <= '9') || strchr("/._~-", *s)) {
            *p++ = (char)*s;
        } else {
            *p++ = '%';
            *p++ = hex[*s >> 4];
            *p++ = hex[*s & 15];
        }
    }
    if (qn) {
        *p++ = '?';
        memcpy(p, query, qn);
        p += qn;
    }
    *p = 0;
    return u;
}

/* 1 if path + suffix exists. */
static int exists_with(const char *path, const char *suffix) {
    char p[4096];
    struct stat st;
    snprintf(p, sizeof p, "%s%s", path, suffix);
    return stat(p, &st) == 0;
}

/* The directory of path into buf ("." for a bare name). */
static void dir_of(const char *path, char *buf, size_t len) {
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(buf, len, ".");
    else if (slash == path) snprintf(buf, len, "/");
    else snprintf(buf, len, "%.*s", (int)(slash - path), path);
}

/* Open path read-only through a URI, with SQLite's usual shared lock (no
 * immutable: another process may be writing it); returns an SQLite code,
 * *out set.  A file in WAL mode gets -wal/-shm files beside it when the
 * directory allows; ro_cleanup removes them again. */
static int open_ro(const char *path, sqlite3 **out) {
    char *uri = make_uri(path, "mode=ro");
    if (!uri) return SQLITE_NOMEM;
    int rc = sqlite3_open_v2(uri, out, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    free(uri);
    if (rc == SQLITE_OK) sqlite3_busy_timeout(*out, BUSY_MS);   /* a writer commits */
    return rc;
}

/* After a read of path that found no -wal file: SQLite (in WAL mode) may
 * have created empty -wal/-shm files it cannot remove from a read-only
 * connection.  A read-write open and close removes them when it is the last
 * connection, the way SQLite always does (nothing else is written: the WAL
 * is empty unless a writer is at work, and then they are left alone). */
static void ro_cleanup(const char *path, int had_wal) {
    char dir[4096];
    sqlite3 *db = NULL;
    if (had_wal || !exists_with(path, "-wal")) return;
    dir_of(path, dir, sizeof dir);
    if (access(path, W_OK) != 0 || access(dir, W_OK) != 0) return;
    char *uri = make_uri(path, NULL);
    if (uri && sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, NULL) ==
                   SQLITE_OK) {
        sqlite3_busy_timeout(db, 0);
        sqlite3_exec(db, "PRAGMA schema_version", NULL, NULL, NULL);
    }
    sqlite3_close(db);
    free(uri);
}

/* Run a query returning one integer; returns SQLite's code. */
static int one_int(sqlite3 *db, const char *sql, int64_t *v) {
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *v = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        rc = SQLITE_ERROR;
    }
    sqlite3_finalize(st);
    return rc;
}

/* The cached statement id, prepared on first use, reset and with its
 * bindings cleared.  Returns NULL with err set on failure.  The store owns
 * the statement; callers reset it when done (stmt_done). */
static sqlite3_stmt *stmt(store *db, int id, char *err, size_t errlen) {
    if (!db->q[id]) {
        if (sqlite3_prepare_v3(db->db, q_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
                               &db->q[id], NULL) != SQLITE_OK) {
            dberr(db, err, errlen, "prepare");
            return NULL;
        }
    }
    sqlite3_reset(db->q[id]);
    sqlite3_clear_bindings(db->q[id]);
    return db->q[id];
}

static void stmt_done(sqlite3_stmt *st) {
    if (st) sqlite3_reset(st);
}

/* Bind by name; each returns SQLite's code (SQLITE_RANGE: no such name). */
static int bind_i(sqlite3_stmt *st, const char *name, int64_t v) {
    int i = sqlite3_bind_parameter_index(st, name);
    return i ? sqlite3_bind_int64(st, i, v) : SQLITE_RANGE;
}
static int bind_d(sqlite3_stmt *st, const char *name, double v) {
    int i = sqlite3_bind_parameter_index(st, name);
    return i ? sqlite3_bind_double(st, i, v) : SQLITE_RANGE;
}
static int bind_t(sqlite3_stmt *st, const char *name, const char *v) {
    int i = sqlite3_bind_parameter_index(st, name);
    if (!i) return SQLITE_RANGE;
    return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}
static int bind_null(sqlite3_stmt *st, const char *name) {
    int i = sqlite3_bind_parameter_index(st, name);
    return i ? sqlite3_bind_null(st, i) : SQLITE_RANGE;
}

/* Step a write statement to completion; returns STORE_OK or STORE_ERR. */
static int step_done(store *db, sqlite3_stmt *st, const char *what, char *err,
                     size_t errlen) {
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? STORE_OK : dberr(db, err, errlen, what);
}

/* Run one of Q_BEGIN / Q_COMMIT / Q_ROLLBACK. */
static int tx(store *db, int id, char *err, size_t errlen) {
    sqlite3_stmt *st = stmt(db, id, err, errlen);
    return st ? step_done(db, st, q_sql[id], err, errlen) : STORE_ERR;
}

/* Copy src into a fixed buffer; STORE_ERR if it does not fit. */
static int copy_str(char *dst, size_t len, const unsigned char *src) {
    const char *s = src ? (const char *)src : "";
    size_t n = strlen(s);
    if (n >= len) return STORE_ERR;
    memcpy(dst, s, n + 1);
    return STORE_OK;
}

/* ---- dead sweeps ---------------------------------------------------------- */

/* This host's name into buf ("" if unknown). */
static void host_name(char *buf, size_t len) {
    if (gethostname(buf, len - 1) != 0) buf[0] = 0;
    buf[len - 1] = 0;
}

/* When process pid started, in seconds since the epoch (from /proc); -1 if
 * unknown. */
static double proc_start(long pid) {
    char p[64], buf[1024], *save = NULL;
    unsigned long long ticks = 0, btime = 0;
    size_t n;
    int field = 2, found = 0;
    FILE *f;

    snprintf(p, sizeof p, "/proc/%ld/stat", pid);
    if (!(f = fopen(p, "r"))) return -1;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *s = strrchr(buf, ')');               /* the name may hold blanks */
    if (!s) return -1;
    for (char *t = strtok_r(s + 1, " ", &save); t; t = strtok_r(NULL, " ", &save))
        if (++field == 22) {                   /* starttime, clock ticks after boot */
            ticks = strtoull(t, NULL, 10);
            found = 1;
            break;
        }
    if (!found || !(f = fopen("/proc/stat", "r"))) return -1;
    while (fgets(buf, sizeof buf, f))
        if (sscanf(buf, "btime %llu", &btime) == 1) break;
    fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    return btime && hz > 0 ? (double)btime + (double)ticks / (double)hz : -1;
}

/* A UTC ISO 8601 time as seconds since the epoch; -1 if it does not parse. */
static double iso_time(const char *s) {
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    if (!s || sscanf(s, "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                     &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (double)timegm(&tm);
}

/* The problem of an op named op with dtypes text dt: canonical
 * "slot=dtype,..." or, as schema 4 and older stored it, one dtype name (the
 * first slot's).  0, or -1 when the op or the text is unknown. */
static int problem_of(const char *op, const char *dt, nt_problem *p) {
    const nt_op *o = op ? nt_op_find(op) : NULL;
    char text[160], e[128];
    if (!o || !dt) return -1;
    nt_problem_init(p, o, 1, 8);
    if (!strchr(dt, '=')) {
        snprintf(text, sizeof text, "%s=%s", o->slots[0].name, dt);
        dt = text;
    }
    return nt_dtypes_parse(p, dt, e, sizeof e);
}

/* SQL function nt_dtypes_of(op, dtype): the canonical dtypes text of a
 * stored shape (see problem_of); the text itself when it is not understood
 * (an op this build does not know). */
static void fn_dtypes_of(sqlite3_context *c, int argc, sqlite3_value **v) {
    const char *op = (const char *)sqlite3_value_text(v[0]);
    const char *dt = (const char *)sqlite3_value_text(v[1]);
    nt_problem p;
    char out[160];
    (void)argc;
    if (!problem_of(op, dt, &p) && !nt_dtypes_canon(&p, out, sizeof out))
        sqlite3_result_text(c, out, -1, SQLITE_TRANSIENT);
    else
        sqlite3_result_value(c, v[1]);
}

/* SQL function nt_required(op, dtype, tensor): the relative error the dtype
 * of output `tensor` of that problem allows; NULL when unknown. */
static void fn_required(sqlite3_context *c, int argc, sqlite3_value **v) {
    const char *t = (const char *)sqlite3_value_text(v[2]);
    nt_problem p;
    (void)argc;
    if (t && !problem_of((const char *)sqlite3_value_text(v[0]),
                         (const char *)sqlite3_value_text(v[1]), &p))
        for (int i = 0; i < p.op->ntensors; i++)
            if (!strcmp(p.op->tensors[i].name, t)) {
                sqlite3_result_double(c, nt_dtypes[nt_tensor_dtype(&p, i)].tol);
                return;
            }
    sqlite3_result_null(c);
}

/* The source hash of every family of this build, computed once per process
 * (famhash_fill, through pthread_once): nt_current reads it for every row it
 * is asked about, and hashing a family's sources costs their whole text. */
static struct famhash {
    const nt_family *f;
    char hash[17];
    int ok;                        /* 0: a source is not embedded */
} famhash[STORE_MAX_FAMILIES];
static int nfamhash;               /* entries of famhash[] */
static int nhashed;                /* nt_family_hash calls (store_family_hashes) */
static pthread_once_t famhash_once = PTHREAD_ONCE_INIT;

static void famhash_fill(void) {
    const nt_family *const *all = nt_all_families();
    for (int i = 0; all[i] && nfamhash < STORE_MAX_FAMILIES; i++) {
        struct famhash *e = &famhash[nfamhash++];
        e->f = all[i];
        e->ok = !nt_family_hash(all[i], e->hash);
        nhashed++;
    }
}

/* See store.h. */
const char *store_family_hash(const char *family) {
    pthread_once(&famhash_once, famhash_fill);
    for (int i = 0; family && i < nfamhash; i++)
        if (!strcmp(famhash[i].f->name, family)) return famhash[i].ok ? famhash[i].hash : NULL;
    return NULL;
}

int store_family_hashes(void) {
    pthread_once(&famhash_once, famhash_fill);
    return nhashed;
}

/* SQL function nt_current(family, src_hash): 1 when src_hash is the
 * family's source hash in this build (store_family_hash), else 0 (another
 * version of its kernels, or a family this build does not have). */
static void fn_current(sqlite3_context *c, int argc, sqlite3_value **v) {
    const char *cur = store_family_hash((const char *)sqlite3_value_text(v[0]));
    const char *h = (const char *)sqlite3_value_text(v[1]);
    (void)argc;
    sqlite3_result_int(c, cur && h && !strcmp(cur, h));
}

/* SQL function nt_alive(host, pid, started): 0 when the sweep's process is
 * known to be gone: it ran on this host and its pid is no longer alive, or
 * the pid now belongs to a process that started after the sweep did.  1
 * otherwise (another host, no pid recorded: it cannot be told). */
static void fn_alive(sqlite3_context *c, int argc, sqlite3_value **v) {
    char me[256];
    const char *host = (const char *)sqlite3_value_text(v[0]);
    long pid = (long)sqlite3_value_int64(v[1]);
    int alive = 1;
    (void)argc;
    host_name(me, sizeof me);
    if (host && *me && !strcmp(host, me) && sqlite3_value_type(v[1]) != SQLITE_NULL &&
        pid > 0) {
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
            alive = 0;
        } else {
            double ps = proc_start(pid), st = iso_time((const char *)sqlite3_value_text(v[2]));
            if (ps > 0 && st > 0 && ps > st + 2) alive = 0;   /* pid reused */
        }
    }
    sqlite3_result_int(c, alive);
}

/* ---- opening ------------------------------------------------------------- */

/* 1 if an SQLite code says the file's content is broken. */
static int is_corrupt(int rc) {
    return (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB;
}

/* The message for a damaged file; returns STORE_ERR. */
static int damaged(const char *path, const char *check, const char *detail, char *err,
                   size_t errlen) {
    return seterr(err, errlen, "%s: database is damaged (%s: %s); restore it from a copy",
                  path, check, detail);
}

/* A check statement st stepped to an error: finalize it and return the
 * message, "damaged" when SQLite says the content is broken.  STORE_ERR. */
static int check_failed(sqlite3 *db, sqlite3_stmt *st, const char *path, const char *check,
                        char *err, size_t errlen) {
    char msg[512];
    int code = sqlite3_extended_errcode(db);
    snprintf(msg, sizeof msg, "%s", sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return is_corrupt(code) ? damaged(path, check, msg, err, errlen)
                            : seterr(err, errlen, "%s: %s: %s", path, check, msg);
}

/* Check the database schema ("main" or an attached name) of db with
 * PRAGMA integrity_check (every page, record and index entry; full = 1) or
 * PRAGMA quick_check (the same but for comparing each index with its table
 * and checking UNIQUE constraints: what a reader needs to tell a damaged
 * file, at a fraction of the time), and then PRAGMA foreign_key_check
 * (every id names an existing row: a table read as empty is caught here
 * when quick_check passes it).  Returns STORE_OK, or STORE_ERR with a
 * message naming path and the first problems. */
static int check_integrity(sqlite3 *db, const char *schema, int full, const char *path,
                           char *err, size_t errlen) {
    const char *check = full ? "integrity_check" : "quick_check";
    char sql[96], msg[400] = "";
    sqlite3_stmt *st = NULL;
    size_t n = 0;
    int rc, nrow = 0, ok = 0;

    snprintf(sql, sizeof sql, "PRAGMA %s.%s(%d)", schema, check, MAX_CHECK_ERRS);
    rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    while (rc == SQLITE_OK || rc == SQLITE_ROW) {
        if ((rc = sqlite3_step(st)) != SQLITE_ROW) break;
        const char *t = (const char *)sqlite3_column_text(st, 0);
        if (++nrow == 1 && t && !strcmp(t, "ok")) ok = 1;
        else if (n < sizeof msg)
            n += (size_t)snprintf(msg + n, sizeof msg - n, "%s%s", n ? "; " : "", t ? t : "");
    }
    if (rc != SQLITE_DONE) return check_failed(db, st, path, check, err, errlen);
    sqlite3_finalize(st);
    if (!ok) {
        for (char *c = msg; *c; c++)
            if (*c == '\n') *c = ' ';
        return damaged(path, check, msg, err, errlen);
    }

    snprintf(sql, sizeof sql, "PRAGMA %s.foreign_key_check", schema);
    rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        snprintf(msg, sizeof msg, "%s row %lld names a %s row that is missing",
                 (const char *)sqlite3_column_text(st, 0),
                 (long long)sqlite3_column_int64(st, 1),
                 (const char *)sqlite3_column_text(st, 2));
        sqlite3_finalize(st);
        return damaged(path, "foreign_key_check", msg, err, errlen);
    }
    if (rc != SQLITE_DONE) return check_failed(db, st, path, "foreign_key_check", err, errlen);
    sqlite3_finalize(st);
    return STORE_OK;
}

/* A writer's checks before SQLite opens anything: the file (if it exists)
 * and its directory (where SQLite keeps the -wal and -shm files) must be
 * writable.  Returns STORE_OK or STORE_ERR with err set. */
static int check_writable(const char *path, int exists, char *err, size_t errlen) {
    char dir[4096];
    dir_of(path, dir, sizeof dir);
    if (exists && access(path, W_OK) != 0)
        return seterr(err, errlen, "%s: cannot write it (%s); this command writes the "
                      "database", path, strerror(errno));
    if (access(dir, W_OK | X_OK) != 0)
        return seterr(err, errlen, "%s: cannot write its directory %s (%s); SQLite keeps "
                      "%s-wal and %s-shm beside a database it writes", path, dir,
                      strerror(errno), path, path);
    return STORE_OK;
}

/* The message for a read-only open that failed; returns STORE_ERR. */
static int ro_failed(const char *path, sqlite3 *db, int rc, char *err, size_t errlen) {
    const char *m = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    if (is_corrupt(rc)) return damaged(path, "reading it", m, err, errlen);
    if (((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN) &&
        !exists_with(path, "-wal"))
        return seterr(err, errlen, "%s: cannot read it here (%s): it is in WAL mode and "
                      "SQLite must create %s-wal and -shm beside it, in a directory you "
                      "cannot write; copy the file to one you can (with no -wal file "
                      "beside it, the file alone is complete)", path, m, path);
    return seterr(err, errlen, "%s: cannot read it as SQLite: %s", path, m);
}

/* Decide what an existing, non-empty file is, reading it read-only.  Sets
 * *version to its user_version and *blank to 1 for an SQLite database with
 * no tables and no application id (it may be given the schema).  Refuses
 * anything else that is not a normtune database of a schema this build
 * knows.  Returns STORE_OK or STORE_ERR with err set. */
static int inspect(const char *path, int64_t *version, int *blank, char *err,
                   size_t errlen) {
    unsigned char hdr[100];
    int fd = open(path, O_RDONLY);
    if (fd < 0) return seterr(err, errlen, "%s: %s", path, strerror(errno));
    ssize_t n = read(fd, hdr, sizeof hdr);
    close(fd);
    if (n < (ssize_t)sizeof hdr || memcmp(hdr, "SQLite format 3", 16) != 0)
        return seterr(err, errlen, "%s: not an SQLite database (left untouched)", path);

    sqlite3 *db = NULL;
    int64_t app = 0, nobj = 0;
    int rc = open_ro(path, &db);
    if (rc == SQLITE_OK) sqlite3_extended_result_codes(db, 1);
    if (rc == SQLITE_OK) rc = one_int(db, "PRAGMA application_id", &app);
    if (rc == SQLITE_OK) rc = one_int(db, "PRAGMA user_version", version);
    if (rc == SQLITE_OK) rc = one_int(db, "SELECT count(*) FROM sqlite_master", &nobj);
    if (rc != SQLITE_OK) {
        ro_failed(path, db, rc, err, errlen);
        sqlite3_close(db);
        return STORE_ERR;
    }
    sqlite3_close(db);
    *blank = 0;
    if (app == 0 && *version == 0 && nobj == 0) {
        *blank = 1;
        return STORE_OK;
    }
    if (app != APP_ID)
        return seterr(err, errlen, "%s: an SQLite database of another program, "
                      "not a normtune database (application_id 0x%llx); left "
                      "untouched", path, (unsigned long long)app);
    if (*version > STORE_SCHEMA_VERSION)
        return seterr(err, errlen, "%s: written by a newer normtune (schema %lld, "
                      "this build knows %d)", path, (long long)*version,
                      STORE_SCHEMA_VERSION);
    if (*version < 0)         /* user_version is signed; migrations[] is not */
        return seterr(err, errlen, "%s: schema %lld is not a schema version (a damaged "
                      "file?); left untouched", path, (long long)*version);
    return STORE_OK;
}

/* Give a new or blank database the schema, in one transaction.  Skips it if
 * another process did it first.  Returns STORE_OK or STORE_ERR. */
static int new_schema(store *db, char *err, size_t errlen) {
    int64_t v = 0, nobj = 0;
    if (tx(db, Q_BEGIN, err, errlen)) return STORE_ERR;
    if (one_int(db->db, "PRAGMA user_version", &v) != SQLITE_OK ||
        one_int(db->db, "SELECT count(*) FROM sqlite_master", &nobj) != SQLITE_OK)
        goto fail;
    if (v == 0 && nobj == 0) {
        if (sqlite3_exec(db->db, store_schema_texts[0], NULL, NULL, NULL) != SQLITE_OK)
            goto fail;
        if (one_int(db->db, "PRAGMA user_version", &v) != SQLITE_OK) goto fail;
        if (v != STORE_SCHEMA_VERSION) {
            seterr(err, errlen, "internal: schema.sql sets version %lld, this build "
                   "is %d", (long long)v, STORE_SCHEMA_VERSION);
            tx(db, Q_ROLLBACK, NULL, 0);
            return STORE_ERR;
        }
    }
    return tx(db, Q_COMMIT, err, errlen);
fail:
    dberr(db, err, errlen, "creating the schema");
    tx(db, Q_ROLLBACK, NULL, 0);
    return STORE_ERR;
}

/* The CREATE VIEW statement of `name` in db/schema.sql, into buf: a
 * migration that changes a view re-creates it from the one text.  0, or -1
 * when schema.sql has no such view. */
static int view_sql(const char *name, char *buf, size_t len) {
    char head[64];
    snprintf(head, sizeof head, "CREATE VIEW %s AS", name);
    const char *a = strstr(store_schema_texts[0], head), *b = a ? strstr(a, ";\n") : NULL;
    if (!b || (size_t)(b - a) + 2 > len) return -1;
    memcpy(buf, a, (size_t)(b - a) + 1);
    buf[b - a + 1] = 0;
    return 0;
}

/* Views each migration step re-creates from schema.sql after its SQL. */
static const char *const migration_views[STORE_SCHEMA_VERSION] = {[4] = "best", [5] = "best"};

/* Step 3 -> 4, after its SQL: every column err_<tensor> of table result (a
 * schema 3 file kept one per output) becomes rows (result, <tensor>, value)
 * of table error, and is dropped.  The columns are found in the file, so
 * the step names no tensor.  0, or -1 (an SQLite error: the caller rolls
 * back). */
static int err_columns_to_rows(store *db) {
    char names[16][64], sql[512];
    int n = 0, rc;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->db, "SELECT name FROM pragma_table_info('result') "
                           "WHERE name LIKE 'err\\_%' ESCAPE '\\' ORDER BY cid",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && n < 16) {
        const char *c = (const char *)sqlite3_column_text(st, 0);
        /* identifiers only: the names go into SQL text */
        if (!c || strlen(c) >= sizeof names[0] || strspn(c, "abcdefghijklmnopqrstuvwxyz"
                                                             "0123456789_") != strlen(c))
            continue;
        snprintf(names[n++], sizeof names[0], "%s", c);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) return -1;
    for (int i = 0; i < n; i++) {
        snprintf(sql, sizeof sql, "INSERT INTO error(result_id, tensor, value) SELECT id, '%s', "
                 "%s FROM result WHERE %s IS NOT NULL; ALTER TABLE result DROP COLUMN %s;",
                 names[i] + 4, names[i], names[i], names[i]);
        if (sqlite3_exec(db->db, sql, NULL, NULL, NULL) != SQLITE_OK) return -1;
    }
    return 0;
}

/* C steps that run after a migration step's SQL. */
static int (*const migration_fns[STORE_SCHEMA_VERSION])(store *db) = {[3] = err_columns_to_rows};

/* Migrate from version v to STORE_SCHEMA_VERSION, one transaction a step. */
static int migrate(store *db, int64_t v, char *err, size_t errlen) {
    char sql[64], view[4096];
    for (; v < STORE_SCHEMA_VERSION; v++) {
        if (!migrations[v])
            return seterr(err, errlen, "%s: no migration from schema %lld", db->path,
                          (long long)v);
        snprintf(sql, sizeof sql, "PRAGMA user_version = %lld", (long long)v + 1);
        if (tx(db, Q_BEGIN, err, errlen)) return STORE_ERR;
        if (migration_views[v] && view_sql(migration_views[v], view, sizeof view))
            return seterr(err, errlen, "internal: schema.sql has no view %s", migration_views[v]);
        if (sqlite3_exec(db->db, migrations[v], NULL, NULL, NULL) != SQLITE_OK ||
            (migration_fns[v] && migration_fns[v](db)) ||
            (migration_views[v] && sqlite3_exec(db->db, view, NULL, NULL, NULL) != SQLITE_OK) ||
            sqlite3_exec(db->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
            dberr(db, err, errlen, "migrating the schema");
            tx(db, Q_ROLLBACK, NULL, 0);
            return STORE_ERR;
        }
        if (tx(db, Q_COMMIT, err, errlen)) return STORE_ERR;
    }
    return STORE_OK;
}

/* Put a write connection in WAL mode (readers and one writer at once);
 * db->set_wal records that the file was in rollback mode before, so that
 * an open that fails later can put it back (store_close).  The switch
 * needs the file to itself for a moment, and SQLite answers busy at once
 * rather than call the busy handler when another connection is opening or
 * closing (two writers started together, run --devices' processes): it is
 * tried again every WAL_RETRY_MS for up to BUSY_MS. */
static int set_wal(store *db, char *err, size_t errlen) {
    sqlite3_stmt *st = NULL;
    int wal = 0, was = 0, rc = SQLITE_OK;
    if (sqlite3_prepare_v2(db->db, "PRAGMA journal_mode", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        was = !strcmp((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    for (int waited = 0; !wal; waited += WAL_RETRY_MS) {
        st = NULL;
        rc = sqlite3_prepare_v2(db->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
        if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
            wal = !strcmp((const char *)sqlite3_column_text(st, 0), "wal");
        sqlite3_finalize(st);
        if (wal || (rc != SQLITE_BUSY && rc != SQLITE_LOCKED && rc != SQLITE_ROW) ||
            waited >= BUSY_MS)
            break;
        nanosleep(&(struct timespec){0, WAL_RETRY_MS * 1000000L}, NULL);
    }
    if (!wal) return dberr(db, err, errlen, "cannot switch it to WAL mode");
    db->set_wal = !was;
    if (sqlite3_exec(db->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK)
        return dberr(db, err, errlen, "PRAGMA synchronous");
    return STORE_OK;
}

/* Open path as a store (see store_open), checking it with integrity_check
 * (full = 1) or quick_check.  *out is a new store the caller closes with
 * store_close; NULL on error.  A refused file is left as it was. */
static int open_store(store **out, const char *path, int mode, int full, char *err,
                      size_t errlen) {
    struct stat st;
    int64_t version = 0, v2 = 0, app = 0;
    int blank = 0, isnew = 0, rc, had_wal, exists;
    store *db = NULL;
    char *uri = NULL;

    *out = NULL;
    if (mode != STORE_READ && mode != STORE_WRITE && mode != STORE_CREATE)
        return seterr(err, errlen, "store_open: bad mode %d", mode);
    had_wal = exists_with(path, "-wal");
    exists = stat(path, &st) == 0;
    if (!exists) {
        if (errno != ENOENT || mode != STORE_CREATE)
            return seterr(err, errlen, "%s: %s", path, strerror(errno));
        isnew = 1;
    } else if (!S_ISREG(st.st_mode)) {
        return seterr(err, errlen, "%s: not a regular file", path);
    } else if (st.st_size == 0) {
        if (mode == STORE_READ)
            return seterr(err, errlen, "%s: empty file, not a normtune database", path);
        isnew = 1;
    }
    if (mode != STORE_READ && check_writable(path, exists, err, errlen)) return STORE_ERR;
    if (!isnew) {
        if (inspect(path, &version, &blank, err, errlen)) goto refused;
        if (blank && mode == STORE_READ) {
            seterr(err, errlen, "%s: an empty SQLite database, not a normtune database", path);
            goto refused;
        }
        for (int64_t v = version; v < STORE_SCHEMA_VERSION && !blank; v++)
            if (!migrations[v]) {               /* check before writing anything */
                seterr(err, errlen, "%s: schema %lld, and this build has no migration "
                       "from it; left untouched", path, (long long)v);
                goto refused;
            }
        if (version < STORE_SCHEMA_VERSION && !blank && mode == STORE_READ) {
            seterr(err, errlen, "%s: schema %lld is older than this build's (%d); "
                   "migrate it first: normtune migrate --db %s", path, (long long)version,
                   STORE_SCHEMA_VERSION, path);
            goto refused;
        }
    }

    db = calloc(1, sizeof *db);
    if (!db || !(db->path = strdup(path))) goto oom;
    db->claim_at = -1;
    db->mode = mode;
    db->had_wal = had_wal;
    if (mode == STORE_READ) {
        rc = open_ro(path, &db->db);
    } else {
        if (!(uri = make_uri(path, NULL))) goto oom;
        rc = sqlite3_open_v2(uri, &db->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI |
                             (isnew ? SQLITE_OPEN_CREATE : 0), NULL);
        free(uri);
    }
    if (rc != SQLITE_OK) {
        dberr(db, err, errlen, "open");
        goto fail;
    }
    if (mode != STORE_READ && sqlite3_db_readonly(db->db, "main") == 1) {
        seterr(err, errlen, "%s: SQLite can open it read-only only (a read-only file "
               "system?); this command writes the database", path);
        goto fail;
    }
    sqlite3_busy_timeout(db->db, BUSY_MS);
    sqlite3_extended_result_codes(db->db, 1);
    if (sqlite3_exec(db->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK) {
        dberr(db, err, errlen, "PRAGMA foreign_keys");
        goto fail;
    }
    /* the reports sort every result of a model (store_report_shapes): in
     * memory, with room to, rather than through temporary files */
    sqlite3_exec(db->db, "PRAGMA temp_store = MEMORY; PRAGMA cache_size = -65536", NULL, NULL,
                 NULL);
    if (sqlite3_create_function(db->db, "nt_alive", 3, SQLITE_UTF8, NULL, fn_alive, NULL,
                                NULL) != SQLITE_OK ||
        sqlite3_create_function(db->db, "nt_dtypes_of", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                NULL, fn_dtypes_of, NULL, NULL) != SQLITE_OK ||
        sqlite3_create_function(db->db, "nt_required", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                NULL, fn_required, NULL, NULL) != SQLITE_OK ||
        sqlite3_create_function(db->db, "nt_current", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                NULL, fn_current, NULL, NULL) != SQLITE_OK) {
        dberr(db, err, errlen, "registering the SQL functions");
        goto fail;
    }
    if (mode != STORE_READ && (isnew || blank) &&
        (set_wal(db, err, errlen) || new_schema(db, err, errlen)))
        goto fail;
    /* Check again through the connection itself (another process may have
     * changed the file since inspect()). */
    if ((rc = one_int(db->db, "PRAGMA application_id", &app)) != SQLITE_OK ||
        (rc = one_int(db->db, "PRAGMA user_version", &v2)) != SQLITE_OK) {
        if (is_corrupt(sqlite3_extended_errcode(db->db)))
            damaged(path, "reading the schema version", sqlite3_errmsg(db->db), err, errlen);
        else
            dberr(db, err, errlen, "reading the schema version");
        goto fail;
    }
    if (app != APP_ID || v2 > STORE_SCHEMA_VERSION) {
        seterr(err, errlen, "%s: changed while being opened, no longer a normtune "
               "database of schema %d or older", path, STORE_SCHEMA_VERSION);
        goto fail;
    }
    db->found = v2;
    if (check_integrity(db->db, "main", full, path, err, errlen)) goto fail;
    if (mode != STORE_READ) {
        sqlite3_stmt *q;
        if (!(isnew || blank) && set_wal(db, err, errlen)) goto fail;
        /* take and release the write lock: a writer learns now, not later */
        if (tx(db, Q_BEGIN, err, errlen) || tx(db, Q_ROLLBACK, err, errlen)) goto fail;
        if (v2 < STORE_SCHEMA_VERSION && migrate(db, v2, err, errlen)) goto fail;
        if (!(q = stmt(db, Q_SWEEP_DEAD, err, errlen)) ||
            step_done(db, q, "marking dead sweeps interrupted", err, errlen))
            goto fail;
        /* what a crashed writer left in the -wal goes into the file now */
        sqlite3_exec(db->db, "PRAGMA wal_checkpoint(PASSIVE)", NULL, NULL, NULL);
        db->ready = 1;
    }
    *out = db;
    return STORE_OK;
oom:
    seterr(err, errlen, "%s: out of memory", path);
fail:
    store_close(db);
refused:
    ro_cleanup(path, had_wal);
    return STORE_ERR;
}

/* Open path as a store; see store.h. */
int store_open(store **out, const char *path, int mode, char *err, size_t errlen) {
    return open_store(out, path, mode, mode != STORE_READ, err, errlen);
}

/* 1 if the header of the file at path says it is in rollback mode (file
 * format read and write versions 1, bytes 18 and 19; WAL mode is 2). */
static int rollback_mode(const char *path) {
    unsigned char hdr[20];
    int fd = open(path, O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, hdr, sizeof hdr);
    if (fd >= 0) close(fd);
    return n == (ssize_t)sizeof hdr && hdr[18] == 1 && hdr[19] == 1;
}

/* Bring path to this build's schema; see store.h.  A file at this schema
 * in rollback mode with no -wal beside it is checked through a read-only
 * connection and left as it is: a write open would rewrite its header (WAL
 * mode and back) even with nothing to change.  Anything else goes through
 * a write open, which migrates, checkpoints a crashed writer's -wal, leaves
 * the file in rollback mode and gives the messages for what it refuses. */
int store_migrate(const char *path, int *from, char *err, size_t errlen) {
    struct stat st;
    store *db = NULL;
    int64_t version = 0;
    int blank = 0;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        !exists_with(path, "-wal") && rollback_mode(path)) {
        if (check_writable(path, 1, err, errlen)) return STORE_ERR;
        if (inspect(path, &version, &blank, err, errlen)) {
            ro_cleanup(path, 0);
            return STORE_ERR;
        }
        if (!blank && version == STORE_SCHEMA_VERSION) {
            if (open_store(&db, path, STORE_READ, 1, err, errlen)) return STORE_ERR;
            store_close(db);
            if (from) *from = (int)version;
            return STORE_OK;
        }
    }
    if (open_store(&db, path, STORE_WRITE, 1, err, errlen)) return STORE_ERR;
    if (from) *from = (int)db->found;
    store_close(db);
    return STORE_OK;
}

/* Finalize every cached statement and close the connection.  A write store
 * that opened fully first checkpoints the WAL into the main file and, when
 * no other connection is open, switches the file back to rollback mode
 * (which also removes the -wal and -shm files), so that the file alone is
 * the whole database and can be read where its directory is not writable.
 * A write open that failed after it put a rollback-mode file in WAL mode
 * does the same: the file keeps the journal mode it had. */
void store_close(store *db) {
    if (!db) return;
    store_release(db);
    if (db->claim_fd) close(db->claim_fd - 1);
    for (int i = 0; i < Q_COUNT; i++) sqlite3_finalize(db->q[i]);
    if (db->db && (db->ready || db->set_wal)) {
        sqlite3_busy_timeout(db->db, CLOSE_BUSY_MS);
        sqlite3_exec(db->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
        sqlite3_busy_timeout(db->db, 0);
        sqlite3_exec(db->db, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
    }
    sqlite3_close(db->db);
    if (db->mode == STORE_READ && db->db) ro_cleanup(db->path, db->had_wal);
    free(db->path);
    free(db);
}

/* ---- claims ------------------------------------------------------------- */

static int key_ok(const store_key *k, char *err, size_t errlen);

/* FNV-1a over a string and its terminating zero. */
static uint64_t fnv_str(uint64_t h, const char *x) {
    do {
        h ^= (unsigned char)*x;
        h *= 0x100000001b3ull;
    } while (*x++);
    return h;
}

/* The lock file of the claims of this database: in $TMPDIR (or /tmp),
 * named after the file's device and inode, so that every writer of the
 * file on this host opens the same one. */
static int claim_file(store *db, char *err, size_t errlen) {
    struct stat sb;
    char p[4096];
    const char *tmp = getenv("TMPDIR");
    if (db->claim_fd) return STORE_OK;
    if (stat(db->path, &sb))
        return seterr(err, errlen, "%s: %s", db->path, strerror(errno));
    if (!tmp || !*tmp) tmp = "/tmp";
    snprintf(p, sizeof p, "%s/normtune-claims-%llx-%llx.lock", tmp,
             (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino);
    int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return seterr(err, errlen, "%s: the claims' lock file: %s", p, strerror(errno));
    db->claim_fd = fd + 1;
    return STORE_OK;
}

/* One byte's lock (F_WRLCK) or its release (F_UNLCK) on the claims' file:
 * 0, or -1 with errno (EAGAIN, EACCES: another description holds it). */
static int claim_lock(store *db, off_t at, short type) {
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = at, .l_len = 1};
    return fcntl(db->claim_fd - 1, F_OFD_SETLK, &fl);
}

void store_release(store *db) {
    if (!db || db->claim_at < 0) return;
    claim_lock(db, db->claim_at, F_UNLCK);
    db->claim_at = -1;
}

/* Take k's claim; see store.h.  The byte is the FNV-1a hash of the key
 * with the model in place of the device, below 2^62: two keys that share
 * a byte only wait for each other. */
int store_claim(store *db, const store_key *k, int *got, char *err, size_t errlen) {
    *got = 0;
    store_release(db);
    if (key_ok(k, err, errlen) || claim_file(db, err, errlen)) return STORE_ERR;
    if (db->claim_dev != k->device) {
        sqlite3_stmt *st = stmt(db, Q_DEV_GET, err, errlen);
        if (!st) return STORE_ERR;
        if (bind_i(st, ":id", k->device)) {
            stmt_done(st);
            return dberr(db, err, errlen, "binding the device");
        }
        if (sqlite3_step(st) != SQLITE_ROW) {
            stmt_done(st);
            return seterr(err, errlen, "%s: no device %lld", db->path, (long long)k->device);
        }
        snprintf(db->claim_model, sizeof db->claim_model, "%s|%d.%d|%d|%lld",
                 (const char *)sqlite3_column_text(st, 0), sqlite3_column_int(st, 2),
                 sqlite3_column_int(st, 3), sqlite3_column_int(st, 7),
                 (long long)sqlite3_column_int64(st, 8));
        stmt_done(st);
        db->claim_dev = k->device;
    }
    char num[160];
    uint64_t h = 0xcbf29ce484222325ull;
    h = fnv_str(h, db->claim_model);
    h = fnv_str(h, k->family);
    h = fnv_str(h, k->params);
    h = fnv_str(h, k->src_hash);
    h = fnv_str(h, k->op);
    h = fnv_str(h, k->dtype);
    snprintf(num, sizeof num, "%lld %lld %d %d %d %.17g", (long long)k->shape.M,
             (long long)k->shape.N, k->timing.warmup, k->timing.min_samples,
             k->timing.max_samples, k->timing.rel_ci);
    h = fnv_str(h, num);
    off_t at = (off_t)(h >> 2);
    if (claim_lock(db, at, F_WRLCK) == 0) {
        db->claim_at = at;
        *got = 1;
        return STORE_OK;
    }
    if (errno == EAGAIN || errno == EACCES) return STORE_OK;
    return seterr(err, errlen, "%s: taking a claim: %s", db->path, strerror(errno));
}

/* ---- devices and sweeps ------------------------------------------------- */

/* A device's uuid as stored: NULL when it has none. */
static const char *dev_uuid(const nt_device *d) {
    return d->uuid[0] && strcmp(d->uuid, "none") ? d->uuid : NULL;
}

static int bind_device(sqlite3_stmt *st, const nt_device *d) {
    return bind_t(st, ":name", d->name) | bind_i(st, ":cc_major", d->cc_major) |
           bind_i(st, ":cc_minor", d->cc_minor) | bind_i(st, ":sms", d->sms) |
           bind_i(st, ":l2_bytes", d->l2_bytes) |
           bind_i(st, ":sm_clock_khz", d->sm_clock_khz) |
           bind_i(st, ":mem_clock_khz", d->mem_clock_khz) |
           bind_i(st, ":mem_bus_bits", d->mem_bus_bits) |
           bind_t(st, ":driver", d->driver) | bind_t(st, ":runtime", d->runtime) |
           bind_t(st, ":nvrtc", d->nvrtc) | bind_t(st, ":uuid", dev_uuid(d));
}

/* Record d: the row with its uuid (or, without one, its name) is updated
 * with the latest versions, else a new row is added.  *id is its id. */
int store_device(store *db, const nt_device *d, int64_t *id, char *err, size_t errlen) {
    const char *uuid = dev_uuid(d);
    sqlite3_stmt *st;
    int rc;

    if (tx(db, Q_BEGIN, err, errlen)) return STORE_ERR;
    st = stmt(db, uuid ? Q_DEV_UUID : Q_DEV_NAME, err, errlen);
    if (!st) goto fail;
    if (uuid ? bind_t(st, ":uuid", uuid) : bind_t(st, ":name", d->name)) goto bindfail;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        stmt_done(st);
        if (!(st = stmt(db, Q_DEV_UPD, err, errlen))) goto fail;
        if (bind_device(st, d) | bind_i(st, ":id", *id)) goto bindfail;
        if (step_done(db, st, "updating the device", err, errlen)) goto fail;
    } else if (rc == SQLITE_DONE) {
        stmt_done(st);
        if (!(st = stmt(db, Q_DEV_INS, err, errlen))) goto fail;
        if (bind_device(st, d)) goto bindfail;
        if (step_done(db, st, "adding the device", err, errlen)) goto fail;
        *id = sqlite3_last_insert_rowid(db->db);
    } else {
        stmt_done(st);
        dberr(db, err, errlen, "finding the device");
        goto fail;
    }
    db->has_models = 0;           /* a device row changed: models_load again */
    return tx(db, Q_COMMIT, err, errlen);
bindfail:
    stmt_done(st);
    dberr(db, err, errlen, "binding the device");
fail:
    tx(db, Q_ROLLBACK, NULL, 0);
    return STORE_ERR;
}

/* Add a sweep row with status "running", the current time, this host and
 * this process id. */
int store_sweep_begin(store *db, int64_t device, const char *script,
                      const char *script_hash, double copy_gbps, int64_t *id,
                      char *err, size_t errlen) {
    char now[32], host[256] = "";
    sqlite3_stmt *st = stmt(db, Q_SWEEP_INS, err, errlen);
    if (!st) return STORE_ERR;
    utc_now(now, sizeof now);
    host_name(host, sizeof host);
    if (bind_t(st, ":script", script ? script : "") |
        bind_t(st, ":hash", script_hash ? script_hash : "") | bind_t(st, ":now", now) |
        bind_i(st, ":dev", device) | bind_t(st, ":host", host) |
        bind_i(st, ":pid", (int64_t)getpid()) |
        (copy_gbps > 0 ? bind_d(st, ":copy", copy_gbps) : bind_null(st, ":copy"))) {
        stmt_done(st);
        return dberr(db, err, errlen, "binding the sweep");
    }
    if (step_done(db, st, "adding the sweep", err, errlen)) return STORE_ERR;
    *id = sqlite3_last_insert_rowid(db->db);
    return STORE_OK;
}

static int use_model_of(store *db, int64_t dev, char *err, size_t errlen);  /* models */

int store_sweep_peers(store *db, int64_t device, const char *script_hash, store_peer_fn fn,
                      void *ctx, char *err, size_t errlen) {
    char host[256] = "";
    sqlite3_stmt *st;
    int rc, n = 0;
    host_name(host, sizeof host);
    if (use_model_of(db, device, err, errlen)) return STORE_ERR;
    if (!(st = stmt(db, Q_PEERS, err, errlen))) return STORE_ERR;
    if (bind_t(st, ":hash", script_hash ? script_hash : "") | bind_t(st, ":host", host) |
        bind_i(st, ":pid", (int64_t)getpid())) {
        stmt_done(st);
        return dberr(db, err, errlen, "binding the sweep");
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        fn(ctx, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1));
        n++;
    }
    stmt_done(st);
    if (rc != SQLITE_DONE) return dberr(db, err, errlen, "reading the running sweeps");
    return n;
}

/* Set a sweep's final status ("done", "interrupted", "failed") and time. */
int store_sweep_end(store *db, int64_t sweep, const char *status, char *err,
                    size_t errlen) {
    static const char *const ok[] = {"done", "interrupted", "failed"};
    char now[32];
    size_t i;
    for (i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (status && !strcmp(status, ok[i])) break;
    if (i == sizeof ok / sizeof ok[0])
        return seterr(err, errlen, "sweep status '%s': expected done, interrupted "
                      "or failed", status ? status : "(null)");
    sqlite3_stmt *st = stmt(db, Q_SWEEP_END, err, errlen);
    if (!st) return STORE_ERR;
    utc_now(now, sizeof now);
    if (bind_t(st, ":status", status) | bind_t(st, ":now", now) | bind_i(st, ":id", sweep)) {
        stmt_done(st);
        return dberr(db, err, errlen, "binding the sweep");
    }
    if (step_done(db, st, "ending the sweep", err, errlen)) return STORE_ERR;
    if (sqlite3_changes(db->db) != 1)
        return seterr(err, errlen, "%s: no sweep %lld", db->path, (long long)sweep);
    return STORE_OK;
}

/* ---- results ------------------------------------------------------------- */

/* Insert-or-find a row through (ins, get) with bind(); *id is its id. */
static int upsert(store *db, int ins, int get, const store_key *k,
                  int (*bind)(sqlite3_stmt *, const store_key *), int64_t *id,
                  const char *what, char *err, size_t errlen) {
    sqlite3_stmt *st = stmt(db, ins, err, errlen);
    if (!st) return STORE_ERR;
    if (bind(st, k)) {
        stmt_done(st);
        return dberr(db, err, errlen, what);
    }
    if (step_done(db, st, what, err, errlen)) return STORE_ERR;
    if (!(st = stmt(db, get, err, errlen))) return STORE_ERR;
    if (bind(st, k) || sqlite3_step(st) != SQLITE_ROW) {
        stmt_done(st);
        return dberr(db, err, errlen, what);
    }
    *id = sqlite3_column_int64(st, 0);
    stmt_done(st);
    return STORE_OK;
}

static int bind_variant(sqlite3_stmt *st, const store_key *k) {
    return bind_t(st, ":family", k->family) | bind_t(st, ":params", k->params) |
           bind_t(st, ":src", k->src_hash);
}

static int bind_shape(sqlite3_stmt *st, const store_key *k) {
    return bind_t(st, ":op", k->op) | bind_t(st, ":dtype", k->dtype) |
           bind_i(st, ":M", k->shape.M) | bind_i(st, ":N", k->shape.N);
}

static int bind_timing(sqlite3_stmt *st, const nt_timing *t) {
    return bind_i(st, ":warmup", t->warmup) | bind_i(st, ":min", t->min_samples) |
           bind_i(st, ":max", t->max_samples) | bind_d(st, ":rel_ci", t->rel_ci);
}

static int key_ok(const store_key *k, char *err, size_t errlen) {
    if (!k->family || !k->params || !k->src_hash || !k->op || !k->dtype)
        return seterr(err, errlen, "store key: family, params, src_hash, op and dtype "
                      "are required");
    return STORE_OK;
}

/* Bind a timing number; a failed result's zeros are stored as NULL. */
static int bind_num(sqlite3_stmt *st, const char *name, double v, int ok) {
    return ok || v != 0 ? bind_d(st, name, v) : bind_null(st, name);
}

/* Store r and its samples under key k in one transaction.  A result already
 * stored under the same key is replaced (its samples with it). */
int store_put(store *db, int64_t sweep, const store_key *k, const nt_result *r,
              char *err, size_t errlen) {
    int64_t var, shape, res;
    char now[32];
    const char *status = nt_status_name(r->status);
    sqlite3_stmt *st = NULL;
    int ok = r->status == NT_OK;

    if (key_ok(k, err, errlen)) return STORE_ERR;
    if (!strcmp(status, "?"))
        return seterr(err, errlen, "store_put: unknown status %d", r->status);
    if (r->nsamples < 0 || r->nsamples > NT_MAX_SAMPLES)
        return seterr(err, errlen, "store_put: %d samples (0..%d)", r->nsamples,
                      NT_MAX_SAMPLES);
    if (r->nerr < 0 || r->nerr > NT_MAX_ERRS)
        return seterr(err, errlen, "store_put: %d errors (0..%d)", r->nerr, NT_MAX_ERRS);
    for (int i = 0; i < r->nerr; i++)
        if (!memchr(r->errs[i].tensor, 0, sizeof r->errs[i].tensor) || !r->errs[i].tensor[0])
            return seterr(err, errlen, "store_put: error %d has no tensor name", i);
    utc_now(now, sizeof now);
    if (tx(db, Q_BEGIN, err, errlen)) return STORE_ERR;
    if (upsert(db, Q_VAR_INS, Q_VAR_GET, k, bind_variant, &var, "recording the variant",
               err, errlen) ||
        upsert(db, Q_SHAPE_INS, Q_SHAPE_GET, k, bind_shape, &shape,
               "recording the shape", err, errlen))
        goto fail;

    if (!(st = stmt(db, Q_RES_DEL, err, errlen))) goto fail;
    if (bind_i(st, ":dev", k->device) | bind_i(st, ":var", var) |
        bind_i(st, ":shape", shape) | bind_timing(st, &k->timing))
        goto bindfail;
    if (step_done(db, st, "replacing the result", err, errlen)) goto fail;

    if (!(st = stmt(db, Q_RES_INS, err, errlen))) goto fail;
    if (bind_i(st, ":sweep", sweep) | bind_i(st, ":var", var) |
        bind_i(st, ":shape", shape) | bind_i(st, ":dev", k->device) |
        bind_timing(st, &k->timing) | bind_t(st, ":status", status) |
        bind_t(st, ":msg", r->msg) | bind_num(st, ":median", r->median_us, ok) |
        bind_num(st, ":p10", r->p10_us, ok) | bind_num(st, ":p90", r->p90_us, ok) |
        bind_i(st, ":n", r->nsamples) | bind_num(st, ":bytes", r->bytes, ok) |
        bind_num(st, ":gbps", r->gbps, ok) | bind_num(st, ":pct", r->pct_copy, ok) |
        (r->traffic_gbps > 0 ? bind_d(st, ":traffic", r->traffic_gbps)
                             : bind_null(st, ":traffic")) |
        bind_i(st, ":regs", r->regs) | bind_i(st, ":spill", r->spill) |
        bind_i(st, ":smem", r->smem) | bind_i(st, ":grid", r->grid) | bind_i(st, ":reps", r->reps) |
        bind_t(st, ":now", now))
        goto bindfail;
    if (step_done(db, st, "storing the result", err, errlen)) goto fail;
    res = sqlite3_last_insert_rowid(db->db);

    if (!(st = stmt(db, Q_SAMPLE_INS, err, errlen))) goto fail;
    for (int i = 0; i < r->nsamples; i++) {
        if (bind_i(st, ":res", res) | bind_i(st, ":idx", i) | bind_d(st, ":us", r->samples[i]))
            goto bindfail;
        if (step_done(db, st, "storing a sample", err, errlen)) goto fail;
    }
    if (!(st = stmt(db, Q_ERR_INS, err, errlen))) goto fail;
    for (int i = 0; i < r->nerr; i++) {
        const nt_error *e = &r->errs[i];
        if (bind_i(st, ":res", res) | bind_t(st, ":tensor", e->tensor) |
            bind_d(st, ":value", e->value) |
            (e->tol > 0 ? bind_d(st, ":tol", e->tol) : bind_null(st, ":tol")) |
            (e->required > 0 ? bind_d(st, ":req", e->required) : bind_null(st, ":req")))
            goto bindfail;
        if (step_done(db, st, "storing an error", err, errlen)) goto fail;
    }
    return tx(db, Q_COMMIT, err, errlen) ? (tx(db, Q_ROLLBACK, NULL, 0), STORE_ERR)
                                         : STORE_OK;
bindfail:
    stmt_done(st);
    dberr(db, err, errlen, "binding the result");
fail:
    tx(db, Q_ROLLBACK, NULL, 0);
    return STORE_ERR;
}

/* Q_LOOKUP bound to key k on the GPUs of its device's model, ready to
 * step (the caller resets it), or NULL with a message. */
static sqlite3_stmt *lookup_stmt(store *db, const store_key *k, char *err, size_t errlen) {
    sqlite3_stmt *st;
    if (key_ok(k, err, errlen) || use_model_of(db, k->device, err, errlen)) return NULL;
    if (!(st = stmt(db, Q_LOOKUP, err, errlen))) return NULL;
    if (bind_i(st, ":dev", k->device) | bind_variant(st, k) | bind_shape(st, k) |
        bind_timing(st, &k->timing)) {
        stmt_done(st);
        dberr(db, err, errlen, "binding the lookup");
        return NULL;
    }
    return st;
}

/* Find the result stored under k on a GPU of its device's model: *found 0
 * if none, 1 the device's own, 2 another GPU's (the newest).  out
 * (optional) gets every field and the samples. */
int store_lookup(store *db, const store_key *k, int *found, nt_result *out,
                 char *err, size_t errlen) {
    sqlite3_stmt *st;
    int64_t res;
    int rc;

    *found = 0;
    if (!(st = lookup_stmt(db, k, err, errlen))) return STORE_ERR;
    rc = sqlite3_step(st);
    if (rc == SQLITE_DONE) {
        stmt_done(st);
        return STORE_OK;
    }
    if (rc != SQLITE_ROW) {
        stmt_done(st);
        return dberr(db, err, errlen, "looking up the result");
    }
    *found = sqlite3_column_int64(st, 16) == k->device ? 1 : 2;
    if (!out) {
        stmt_done(st);
        return STORE_OK;
    }
    memset(out, 0, sizeof *out);
    res = sqlite3_column_int64(st, 0);
    out->status = nt_status_parse((const char *)sqlite3_column_text(st, 1));
    snprintf(out->msg, sizeof out->msg, "%s", (const char *)sqlite3_column_text(st, 2));
    out->median_us = sqlite3_column_double(st, 3);
    out->p10_us = sqlite3_column_double(st, 4);
    out->p90_us = sqlite3_column_double(st, 5);
    out->bytes = sqlite3_column_double(st, 7);
    out->gbps = sqlite3_column_double(st, 8);
    out->pct_copy = sqlite3_column_double(st, 9);
    out->regs = sqlite3_column_int(st, 10);
    out->spill = sqlite3_column_int(st, 11);
    out->smem = sqlite3_column_int(st, 12);
    out->grid = sqlite3_column_int(st, 13);
    out->reps = sqlite3_column_int(st, 14);
    out->traffic_gbps = sqlite3_column_double(st, 15);
    stmt_done(st);

    if (!(st = stmt(db, Q_SAMPLES, err, errlen))) return STORE_ERR;
    if (bind_i(st, ":res", res)) {
        stmt_done(st);
        return dberr(db, err, errlen, "binding the samples");
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && out->nsamples < NT_MAX_SAMPLES)
        out->samples[out->nsamples++] = sqlite3_column_double(st, 0);
    stmt_done(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return dberr(db, err, errlen, "reading samples");

    if (!(st = stmt(db, Q_ERRS, err, errlen))) return STORE_ERR;
    if (bind_i(st, ":res", res)) {
        stmt_done(st);
        return dberr(db, err, errlen, "binding the errors");
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && out->nerr < NT_MAX_ERRS) {
        nt_error *e = &out->errs[out->nerr++];
        const unsigned char *t = sqlite3_column_text(st, 0);
        snprintf(e->tensor, sizeof e->tensor, "%s", t ? (const char *)t : ""); /* cut if long */
        e->value = sqlite3_column_double(st, 1);
        e->tol = sqlite3_column_double(st, 2);
        e->required = sqlite3_column_double(st, 3);
    }
    stmt_done(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return dberr(db, err, errlen, "reading errors");
    return STORE_OK;
}

/* ---- merge ---------------------------------------------------------------- */

/* Temporary id maps of the merge: input id -> output id per table. */
static const char merge_setup[] =
    "CREATE TEMP TABLE map_dev(src INTEGER PRIMARY KEY, dst INTEGER NOT NULL);"
    "CREATE TEMP TABLE map_sweep(src INTEGER PRIMARY KEY, dst INTEGER NOT NULL);"
    "CREATE TEMP TABLE map_var(src INTEGER PRIMARY KEY, dst INTEGER NOT NULL);"
    "CREATE TEMP TABLE map_shape(src INTEGER PRIMARY KEY, dst INTEGER NOT NULL);"
    "CREATE TEMP TABLE new_res(src INTEGER PRIMARY KEY);"
    "CREATE TEMP TABLE map_res(src INTEGER PRIMARY KEY, dst INTEGER NOT NULL);"
    "CREATE TEMP TABLE map_grp(src INTEGER PRIMARY KEY, dst INTEGER NOT NULL);";

/* Copy the database attached as "src" into main, in one transaction run by
 * the caller.  Devices match by uuid (by name when they have none), sweeps
 * by (device, script, hash, start time, host), variants and shapes by their
 * unique keys; results whose key is already in main are skipped, and the
 * samples and errors of the inserted ones follow them. */
static const char merge_copy[] =
    "DELETE FROM temp.map_dev; DELETE FROM temp.map_sweep; DELETE FROM temp.map_var;"
    "DELETE FROM temp.map_shape; DELETE FROM temp.new_res; DELETE FROM temp.map_res;"
    /* devices */
    "INSERT OR IGNORE INTO main.device(" DEV_COLS ") SELECT " DEV_COLS
    " FROM src.device WHERE uuid IS NOT NULL ORDER BY id;"
    "INSERT INTO main.device(" DEV_COLS ") SELECT " DEV_COLS " FROM src.device d"
    " WHERE d.uuid IS NULL AND d.id = (SELECT min(id) FROM src.device x"
    "   WHERE x.uuid IS NULL AND x.name = d.name)"
    " AND NOT EXISTS (SELECT 1 FROM main.device m WHERE m.uuid IS NULL AND"
    "   m.name = d.name) ORDER BY d.id;"
    "INSERT INTO temp.map_dev SELECT d.id, (SELECT m.id FROM main.device m WHERE"
    " (d.uuid IS NOT NULL AND m.uuid = d.uuid) OR (d.uuid IS NULL AND m.uuid IS NULL"
    " AND m.name = d.name) ORDER BY m.id LIMIT 1) FROM src.device d;"
    /* sweeps */
    "INSERT INTO main.sweep(script, script_hash, started, finished, device_id,"
    " status, copy_gbps, host, pid) SELECT s.script, s.script_hash, s.started,"
    " s.finished, md.dst, CASE WHEN s.status = 'running' AND NOT nt_alive(s.host,"
    " s.pid, s.started) THEN 'interrupted' ELSE s.status END, s.copy_gbps, s.host,"
    " s.pid FROM src.sweep s"
    " JOIN temp.map_dev md ON md.src = s.device_id WHERE NOT EXISTS (SELECT 1"
    " FROM main.sweep m WHERE m.device_id = md.dst AND m.script = s.script AND"
    " m.script_hash = s.script_hash AND m.started = s.started AND m.host = s.host)"
    " ORDER BY s.id;"
    "INSERT INTO temp.map_sweep SELECT s.id, (SELECT m.id FROM main.sweep m WHERE"
    " m.device_id = md.dst AND m.script = s.script AND m.script_hash = s.script_hash"
    " AND m.started = s.started AND m.host = s.host ORDER BY m.id LIMIT 1)"
    " FROM src.sweep s JOIN temp.map_dev md ON md.src = s.device_id;"
    /* variants and shapes */
    "INSERT OR IGNORE INTO main.variant(family, params, src_hash) SELECT family,"
    " params, src_hash FROM src.variant ORDER BY id;"
    "INSERT INTO temp.map_var SELECT v.id, m.id FROM src.variant v JOIN main.variant m"
    " ON m.family = v.family AND m.params = v.params AND m.src_hash = v.src_hash;"
    "INSERT OR IGNORE INTO main.shape(op, dtype, M, N) SELECT op, dtype, M, N"
    " FROM src.shape ORDER BY id;"
    "INSERT INTO temp.map_shape SELECT s.id, m.id FROM src.shape s JOIN main.shape m"
    " ON m.op = s.op AND m.dtype = s.dtype AND m.M = s.M AND m.N = s.N;"
    /* results not yet in main, then their new ids, then their samples */
    "INSERT INTO temp.new_res SELECT r.id FROM src.result r"
    " JOIN temp.map_dev d ON d.src = r.device_id JOIN temp.map_var v ON v.src = r.variant_id"
    " JOIN temp.map_shape s ON s.src = r.shape_id WHERE NOT EXISTS (SELECT 1"
    " FROM main.result m WHERE m.device_id = d.dst AND m.variant_id = v.dst AND"
    " m.shape_id = s.dst AND m.warmup = r.warmup AND m.min_samples = r.min_samples"
    " AND m.max_samples = r.max_samples AND m.rel_ci = r.rel_ci);"
    "INSERT INTO main.result(sweep_id, variant_id, shape_id, device_id, warmup,"
    " min_samples, max_samples, rel_ci, status, message, median_us, p10_us, p90_us,"
    " n_samples, bytes, gbps, pct_copy, traffic_gbps, regs, spill, smem, grid, reps,"
    " created) SELECT w.dst, v.dst, s.dst, d.dst, r.warmup, r.min_samples,"
    " r.max_samples, r.rel_ci, r.status, r.message, r.median_us, r.p10_us, r.p90_us,"
    " r.n_samples, r.bytes, r.gbps, r.pct_copy, r.traffic_gbps, r.regs, r.spill,"
    " r.smem, r.grid, r.reps, r.created FROM src.result r JOIN temp.new_res n ON n.src = r.id"
    " JOIN temp.map_sweep w ON w.src = r.sweep_id JOIN temp.map_dev d ON d.src = r.device_id"
    " JOIN temp.map_var v ON v.src = r.variant_id JOIN temp.map_shape s ON s.src = r.shape_id"
    " ORDER BY r.id;"
    "INSERT INTO temp.map_res SELECT r.id, m.id FROM src.result r"
    " JOIN temp.new_res n ON n.src = r.id JOIN temp.map_dev d ON d.src = r.device_id"
    " JOIN temp.map_var v ON v.src = r.variant_id JOIN temp.map_shape s ON s.src = r.shape_id"
    " JOIN main.result m ON m.device_id = d.dst AND m.variant_id = v.dst AND"
    " m.shape_id = s.dst AND m.warmup = r.warmup AND m.min_samples = r.min_samples"
    " AND m.max_samples = r.max_samples AND m.rel_ci = r.rel_ci;"
    "INSERT INTO main.sample(result_id, idx, us) SELECT mr.dst, x.idx, x.us"
    " FROM src.sample x JOIN temp.map_res mr ON mr.src = x.result_id;"
    "INSERT INTO main.error(result_id, tensor, value, tolerance, required) SELECT mr.dst,"
    " x.tensor, x.value, x.tolerance, x.required"
    " FROM src.error x JOIN temp.map_res mr ON mr.src = x.result_id;"
    /* the re-measures of the inserted results (a re-measure keeps the rows
     * of its results that were inserted), each named again by its first
     * row: its grp negated while it is copied */
    "INSERT INTO main.rematch(grp, sweep_id, device_id, result_id, median_us, n_samples,"
    " rank_us, created, method) SELECT -x.grp, w.dst, d.dst, mr.dst, x.median_us,"
    " x.n_samples, x.rank_us, x.created, x.method FROM src.rematch x JOIN temp.map_res mr ON mr.src = x.result_id"
    " JOIN temp.map_sweep w ON w.src = x.sweep_id JOIN temp.map_dev d ON d.src = x.device_id"
    " ORDER BY x.id;"
    "DELETE FROM temp.map_grp;"
    "INSERT INTO temp.map_grp SELECT grp, min(id) FROM main.rematch WHERE grp < 0 GROUP BY grp;"
    "UPDATE main.rematch SET grp = (SELECT m.dst FROM temp.map_grp m WHERE"
    " m.src = main.rematch.grp) WHERE grp < 0;";

/* Results of src whose key main already had (run after merge_copy, in its
 * transaction): how many, and how many of them hold the same measurement
 * (status, message, median, p10, p90, sample count). */
static const char merge_overlap[] =
    "SELECT count(*), coalesce(sum(m.status IS r.status AND m.message IS r.message"
    " AND m.median_us IS r.median_us AND m.p10_us IS r.p10_us AND m.p90_us IS r.p90_us"
    " AND m.n_samples IS r.n_samples), 0) FROM src.result r"
    " JOIN temp.map_dev d ON d.src = r.device_id JOIN temp.map_var v ON v.src = r.variant_id"
    " JOIN temp.map_shape s ON s.src = r.shape_id"
    " JOIN main.result m ON m.device_id = d.dst AND m.variant_id = v.dst AND"
    " m.shape_id = s.dst AND m.warmup = r.warmup AND m.min_samples = r.min_samples"
    " AND m.max_samples = r.max_samples AND m.rel_ci = r.rel_ci"
    " WHERE r.id NOT IN (SELECT src FROM temp.new_res)";

/* Attach path read-only as "src" and copy it into out's main, in one
 * transaction: SQLite holds one read transaction on src for all of it, so
 * the copy is one consistent snapshot while a writer goes on.  The
 * snapshot is checked (normtune's, schema, integrity) before it is copied.
 * *added gets the results copied, *same and *differ those whose key main
 * had already (same or another measurement).  Detaches at the end. */
static int merge_one(store *out, const char *path, int64_t *added, int64_t *same,
                     int64_t *differ, char *err, size_t errlen) {
    sqlite3_stmt *st = NULL;
    char *uri = make_uri(path, "mode=ro");
    int64_t app = 0, ver = 0, n = 0;
    int rc;

    if (!uri) return seterr(err, errlen, "out of memory");
    rc = sqlite3_prepare_v2(out->db, "ATTACH DATABASE ?1 AS src", -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, uri, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK) rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    sqlite3_finalize(st);
    free(uri);
    if (rc != SQLITE_OK)
        return seterr(err, errlen, "%s: cannot attach: %s", path, sqlite3_errmsg(out->db));
    if (tx(out, Q_BEGIN, err, errlen)) goto detach;
    if (one_int(out->db, "PRAGMA src.application_id", &app) != SQLITE_OK ||
        one_int(out->db, "PRAGMA src.user_version", &ver) != SQLITE_OK) {
        if (is_corrupt(sqlite3_extended_errcode(out->db)))
            damaged(path, "reading it", sqlite3_errmsg(out->db), err, errlen);
        else
            seterr(err, errlen, "%s: %s", path, sqlite3_errmsg(out->db));
        goto rollback;
    }
    if (app != APP_ID || ver != STORE_SCHEMA_VERSION) {
        seterr(err, errlen, "%s: changed while being merged, no longer a normtune "
               "database of schema %d", path, STORE_SCHEMA_VERSION);
        goto rollback;
    }
    if (check_integrity(out->db, "src", 1, path, err, errlen)) goto rollback;
    if (sqlite3_exec(out->db, merge_copy, NULL, NULL, NULL) != SQLITE_OK ||
        one_int(out->db, "SELECT count(*) FROM temp.new_res", &n) != SQLITE_OK) {
        seterr(err, errlen, "merging %s: %s", path, sqlite3_errmsg(out->db));
        goto rollback;
    }
    *added = n;
    rc = sqlite3_prepare_v2(out->db, merge_overlap, -1, &st, NULL);
    if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        *same = sqlite3_column_int64(st, 1);
        *differ = sqlite3_column_int64(st, 0) - *same;
    } else {
        seterr(err, errlen, "merging %s: %s", path, sqlite3_errmsg(out->db));
        sqlite3_finalize(st);
        goto rollback;
    }
    sqlite3_finalize(st);
    if (tx(out, Q_COMMIT, err, errlen)) goto rollback;
    return sqlite3_exec(out->db, "DETACH DATABASE src", NULL, NULL, NULL) == SQLITE_OK
               ? STORE_OK
               : dberr(out, err, errlen, "detach");
rollback:
    tx(out, Q_ROLLBACK, NULL, 0);
detach:
    sqlite3_exec(out->db, "DETACH DATABASE src", NULL, NULL, NULL);
    return STORE_ERR;
}

/* Remove a half-made output file and its WAL companions. */
static void remove_db(const char *path) {
    char p[4096];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

/* Fold in[0..n) into the new file out (see store.h).  Inputs are checked
 * with store_open(STORE_READ) and attached read-only; on failure out is
 * removed. */
int store_merge_all(const char *const *in, int n, const char *out, store_merge_input *each,
                    int64_t *total, char *err, size_t errlen) {
    store *s = NULL;
    int fd, rc = STORE_ERR, nchecked = 0;
    int64_t tot = 0;
    int *had_wal = calloc((size_t)(n > 0 ? n : 1), sizeof *had_wal);

    if (each) memset(each, 0, (size_t)(n > 0 ? n : 0) * sizeof *each);
    if (total) *total = 0;
    if (!had_wal) return seterr(err, errlen, "out of memory");
    if (n < 1) {
        free(had_wal);
        return seterr(err, errlen, "no database to merge");
    }
    for (; nchecked < n; nchecked++) {
        had_wal[nchecked] = exists_with(in[nchecked], "-wal");
        if (store_open(&s, in[nchecked], STORE_READ, err, errlen)) goto cleanup;
        store_close(s);
        s = NULL;
    }
    fd = open(out, O_WRONLY | O_CREAT | O_EXCL, 0644);   /* claim the name */
    if (fd < 0) {
        if (errno == EEXIST)
            seterr(err, errlen, "%s: already exists; merge writes a new file", out);
        else
            seterr(err, errlen, "%s: %s", out, strerror(errno));
        goto cleanup;
    }
    close(fd);
    if (store_open(&s, out, STORE_CREATE, err, errlen)) goto done;
    if (sqlite3_exec(s->db, merge_setup, NULL, NULL, NULL) != SQLITE_OK) {
        dberr(s, err, errlen, "merge setup");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        store_merge_input m = {0, 0, 0};
        if (merge_one(s, in[i], &m.added, &m.same, &m.differ, err, errlen)) goto done;
        if (each) each[i] = m;
    }
    if (one_int(s->db, "SELECT count(*) FROM result", &tot) != SQLITE_OK) {
        dberr(s, err, errlen, "counting results");
        goto done;
    }
    if (total) *total = tot;
    rc = STORE_OK;
done:
    store_close(s);
    if (rc != STORE_OK) remove_db(out);
cleanup:
    for (int i = 0; i < nchecked + (nchecked < n); i++) ro_cleanup(in[i], had_wal[i]);
    free(had_wal);
    return rc;
}

int store_merge(const char *a, const char *b, const char *out,
                store_merge_counts *counts, char *err, size_t errlen) {
    const char *in[2] = {a, b};
    store_merge_input m[2];
    int64_t total = 0;
    int rc = store_merge_all(in, 2, out, m, &total, err, errlen);
    if (counts) {
        memset(counts, 0, sizeof *counts);
        if (rc == STORE_OK) {
            counts->total = total;
            counts->from_a = m[0].added;
            counts->from_b = m[1].added;
            counts->same = m[1].same;
            counts->differ = m[1].differ;
        }
    }
    return rc;
}

/* ---- device models -------------------------------------------------------- */

/* The GPUs of one model pool their results.  temp.nt_model maps every
 * device row to its model's id, the lowest id of the devices with its name,
 * compute capability, SM count and memory clock; it is read once per
 * store (models_load) and again only after store_device changed the
 * device table.  temp.nt_gpus holds the devices of the model a command
 * reads (use_model), which every query of a model reads as
 * `device_id IN temp.nt_gpus`: nothing is recomputed per row. */
static const char models_sql[] =
    "CREATE TEMP TABLE IF NOT EXISTS nt_model(dev INTEGER PRIMARY KEY, mid INTEGER NOT NULL);"
    "CREATE TEMP TABLE IF NOT EXISTS nt_gpus(dev INTEGER PRIMARY KEY);"
    "DELETE FROM temp.nt_model; DELETE FROM temp.nt_gpus;"
    "INSERT INTO temp.nt_model SELECT d.id, (SELECT min(x.id) FROM device x WHERE "
    "x.name = d.name AND x.cc_major = d.cc_major AND x.cc_minor = d.cc_minor AND "
    "x.sms = d.sms AND x.mem_clock_khz = d.mem_clock_khz) FROM device d;";

/* Fill temp.nt_model, once.  0 or -1. */
static int models_load(store *db, char *err, size_t errlen) {
    if (db->has_models) return STORE_OK;
    db->gpus_mid = db->gpus_dev = 0;
    if (sqlite3_exec(db->db, models_sql, NULL, NULL, NULL) != SQLITE_OK)
        return dberr(db, err, errlen, "reading the device models");
    db->has_models = 1;
    return STORE_OK;
}

/* Make temp.nt_gpus the devices of model mid (a no-op when it already
 * is).  0 or -1. */
static int use_model(store *db, int64_t mid, char *err, size_t errlen) {
    sqlite3_stmt *st;
    if (models_load(db, err, errlen)) return STORE_ERR;
    if (db->gpus_mid == mid) return STORE_OK;
    db->gpus_mid = db->gpus_dev = 0;
    if (!(st = stmt(db, Q_GPUS_CLEAR, err, errlen)) ||
        step_done(db, st, "choosing the device model", err, errlen))
        return STORE_ERR;
    if (!(st = stmt(db, Q_GPUS_SET, err, errlen))) return STORE_ERR;
    if (bind_i(st, ":mid", mid)) {
        stmt_done(st);
        return dberr(db, err, errlen, "binding the device model");
    }
    if (step_done(db, st, "choosing the device model", err, errlen)) return STORE_ERR;
    db->gpus_mid = mid;
    return STORE_OK;
}

/* The model of device dev into *mid.  0 or -1 (no such device). */
static int model_of(store *db, int64_t dev, int64_t *mid, char *err, size_t errlen) {
    sqlite3_stmt *st;
    int rc;
    if (models_load(db, err, errlen) || !(st = stmt(db, Q_MODEL_OF, err, errlen)))
        return STORE_ERR;
    if (bind_i(st, ":dev", dev)) {
        stmt_done(st);
        return dberr(db, err, errlen, "binding the device");
    }
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *mid = sqlite3_column_int64(st, 0);
    stmt_done(st);
    if (rc == SQLITE_DONE) return seterr(err, errlen, "%s: no device %lld", db->path, (long long)dev);
    return rc == SQLITE_ROW ? STORE_OK : dberr(db, err, errlen, "finding the device model");
}

/* Make temp.nt_gpus the GPUs of the model of device dev.  0 or -1. */
static int use_model_of(store *db, int64_t dev, char *err, size_t errlen) {
    int64_t mid = 0;
    if (db->has_models && db->gpus_mid && db->gpus_dev == dev) return STORE_OK;
    if (model_of(db, dev, &mid, err, errlen) || use_model(db, mid, err, errlen)) return STORE_ERR;
    db->gpus_dev = dev;
    return STORE_OK;
}

int store_model_gpus(store *db, int64_t dev, int *ngpus, char *err, size_t errlen) {
    sqlite3_stmt *st;
    int rc;
    if (models_load(db, err, errlen) || !(st = stmt(db, Q_MODEL_SIZE, err, errlen)))
        return STORE_ERR;
    if (bind_i(st, ":dev", dev)) {
        stmt_done(st);
        return dberr(db, err, errlen, "binding the device");
    }
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) *ngpus = sqlite3_column_int(st, 0);
    stmt_done(st);
    return rc == SQLITE_ROW ? STORE_OK : dberr(db, err, errlen, "counting the model's GPUs");
}

/* Append to buf (of len, holding n characters) model mid as "NAME (cc
 * X.Y, S SMs, memory clock K kHz: UUID, UUID)"; returns the new length. */
static size_t model_text(store *db, int64_t mid, char *buf, size_t len, size_t n) {
    sqlite3_stmt *st = stmt(db, Q_MODEL_GPUS, NULL, 0);
    int k = 0;
    if (!st || bind_i(st, ":mid", mid)) {
        stmt_done(st);
        return n;
    }
    while (n < len && sqlite3_step(st) == SQLITE_ROW) {
        int w = k++ ? snprintf(buf + n, len - n, ", %s", (const char *)sqlite3_column_text(st, 5))
                    : snprintf(buf + n, len - n, "%s (cc %d.%d, %d SMs, memory clock %d kHz: %s",
                               (const char *)sqlite3_column_text(st, 0),
                               sqlite3_column_int(st, 1), sqlite3_column_int(st, 2),
                               sqlite3_column_int(st, 3), sqlite3_column_int(st, 4),
                               (const char *)sqlite3_column_text(st, 5));
        if (w < 0) break;
        n += (size_t)w;
    }
    stmt_done(st);
    if (k && n < len) n += (size_t)snprintf(buf + n, len - n, ")");
    return n < len ? n : len - 1;
}

/* Every model of the rows (model ids) of st into buf, "; " between. */
static void list_models(store *db, sqlite3_stmt *st, char *buf, size_t len) {
    size_t n = 0;
    buf[0] = 0;
    while (n + 1 < len && sqlite3_step(st) == SQLITE_ROW) {
        int64_t mid = sqlite3_column_int64(st, 0);
        if (n) n += (size_t)snprintf(buf + n, len - n, "; ");
        if (n + 1 < len) n = model_text(db, mid, buf, len, n);
    }
    stmt_done(st);
}

/* Run model query q (with :name bound to name, if set): the number of
 * rows, the first row's model id in *mid, and in *st the statement, reset
 * with its binding kept, for list_models; -1 with a message on an
 * error. */
static int model_count(store *db, int q, const char *name, int64_t *mid, sqlite3_stmt **st,
                       char *err, size_t errlen) {
    int n = 0, rc;
    if (!(*st = stmt(db, q, err, errlen))) return -1;
    if (name && bind_t(*st, ":name", name)) {
        stmt_done(*st);
        dberr(db, err, errlen, "binding the device");
        return -1;
    }
    while ((rc = sqlite3_step(*st)) == SQLITE_ROW) {
        if (!n) *mid = sqlite3_column_int64(*st, 0);
        n++;
    }
    stmt_done(*st);
    if (rc != SQLITE_DONE) {
        dberr(db, err, errlen, "finding the device");
        return -1;
    }
    return n;
}

/* Resolve a device argument to a model (see store.h) and make it the one
 * the store reads.  A name matches ignoring case, a uuid by its first 8 or
 * more characters, as `run --device` picks a GPU (tuner/runner.c); either
 * names the model of the GPUs it matches.  With no name, when several
 * models have results: the one model with ok results of the current
 * family sources, if only one has them, so that a database that also
 * holds older sweeps of other GPUs reports, plots and exports the model
 * that ran the current kernels; when several have such results, the one
 * whose cover every (family, problem) that any model's cover, if only one
 * does (after a family changed and both ops were swept again on another
 * model, the first still holds current results of the unchanged
 * families).  *id: the model's id, its lowest device id. */
int store_find_device(store *db, const char *name, int64_t *id, char *err, size_t errlen) {
    char names[2048];
    sqlite3_stmt *st;
    int64_t mid = 0;
    int n;
    if (models_load(db, err, errlen)) return STORE_ERR;
    if (!name) {
        if ((n = model_count(db, Q_MODEL_WITH_CURRENT, NULL, &mid, &st, err, errlen)) < 0)
            return STORE_ERR;
        if (n > 1 && (n = model_count(db, Q_MODEL_COMPLETE, NULL, &mid, &st, err, errlen)) < 0)
            return STORE_ERR;
        if (n == 1) return use_model(db, mid, err, errlen) ? STORE_ERR : (*id = mid, STORE_OK);
    }
    if ((n = model_count(db, name ? Q_MODEL_FIND : Q_MODEL_WITH_RESULTS, name, &mid, &st, err,
                         errlen)) < 0)
        return STORE_ERR;
    if (n == 1) return use_model(db, mid, err, errlen) ? STORE_ERR : (*id = mid, STORE_OK);
    if (n > 1) {
        list_models(db, st, names, sizeof names);
        return name ? seterr(err, errlen, "%s: device '%s' is ambiguous: it names GPUs of "
                             "several models: %s; name one by uuid", db->path, name, names)
                    : seterr(err, errlen, "%s: several device models have results: %s; "
                             "name one (by name or uuid)", db->path, names);
    }
    if (!name) return seterr(err, errlen, "%s: no results in the database", db->path);
    if (!(st = stmt(db, Q_MODEL_ALL, err, errlen))) return STORE_ERR;
    list_models(db, st, names, sizeof names);
    return seterr(err, errlen, "%s: no device '%s' in the database (devices: %s)",
                  db->path, name, names[0] ? names : "none");
}

int store_newest_gpu(store *db, char *buf, size_t len, char *err, size_t errlen) {
    sqlite3_stmt *st = stmt(db, Q_DEV_NEWEST, err, errlen);
    if (!st) return STORE_ERR;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const unsigned char *u = sqlite3_column_text(st, 0);
        copy_str(buf, len, u ? u : sqlite3_column_text(st, 1));
    }
    stmt_done(st);
    if (rc == SQLITE_DONE) return seterr(err, errlen, "%s: no sweep in the database", db->path);
    if (rc != SQLITE_ROW) {
        dberr(db, err, errlen, "finding the newest sweep");
        return STORE_ERR;
    }
    return STORE_OK;
}

/* ---- re-measures -------------------------------------------------------- */

/* The id and median of the ok result stored under k on a GPU of its
 * device's model (the device's own first, as store_lookup): 0 with *id,
 * or 0 with *id = 0 when there is none; -1 with a message on an error. */
static int result_of(store *db, const store_key *k, int64_t *id, double *median, char *err,
                     size_t errlen) {
    sqlite3_stmt *st;
    int rc;
    *id = 0;
    if (!(st = lookup_stmt(db, k, err, errlen))) return STORE_ERR;
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *status = sqlite3_column_text(st, 1);
        *median = sqlite3_column_double(st, 3);
        if (status && !strcmp((const char *)status, "ok") && *median > 0)
            *id = sqlite3_column_int64(st, 0);
    }
    stmt_done(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return dberr(db, err, errlen, "looking up a result");
    return STORE_OK;
}

/* The method column's text of a re-measure (db/schema.sql). */
static const char *method_name(int method) {
    return method == STORE_ALONE ? "alone" : "chain";
}

int store_rematch_put(store *db, int64_t sweep, int method, int n, const store_key *ks,
                      const double *us, const int *ns, char *err, size_t errlen) {
    int64_t id[STORE_REMATCH_MAX], grp = 0;
    double med[STORE_REMATCH_MAX], lo_med = INFINITY, lo_us = INFINITY;
    char now[32];
    sqlite3_stmt *st;
    if (n < 2 || n > STORE_REMATCH_MAX)
        return seterr(err, errlen, "store_rematch_put: %d results (2..%d)", n, STORE_REMATCH_MAX);
    for (int i = 0; i < n; i++) {
        if (!(us[i] > 0) || !isfinite(us[i]) || ns[i] < 1)
            return seterr(err, errlen, "store_rematch_put: result %d: median %g us of %d "
                          "samples", i, us[i], ns[i]);
        if (ks[i].device != ks[0].device)
            return seterr(err, errlen, "store_rematch_put: the results of one device only");
        if (result_of(db, &ks[i], &id[i], &med[i], err, errlen)) return STORE_ERR;
        if (!id[i])
            return seterr(err, errlen, "re-measure: no ok result of %s %s at %s M=%lld N=%lld "
                          "is stored", ks[i].family, ks[i].params, ks[i].dtype,
                          (long long)ks[i].shape.M, (long long)ks[i].shape.N);
        for (int j = 0; j < i; j++)
            if (id[j] == id[i])
                return seterr(err, errlen, "store_rematch_put: result %lld twice", (long long)id[i]);
        if (med[i] < lo_med) lo_med = med[i];
        if (us[i] < lo_us) lo_us = us[i];
    }
    utc_now(now, sizeof now);
    if (tx(db, Q_BEGIN, err, errlen)) return STORE_ERR;
    for (int i = 0; i < n; i++) {
        if (!(st = stmt(db, Q_RM_INS, err, errlen))) goto fail;
        if ((grp ? bind_i(st, ":grp", grp) : bind_null(st, ":grp")) | bind_i(st, ":sweep", sweep) |
            bind_i(st, ":dev", ks[0].device) | bind_i(st, ":res", id[i]) |
            bind_d(st, ":median", us[i]) | bind_i(st, ":n", ns[i]) |
            bind_d(st, ":rank", lo_med * (us[i] / lo_us)) | bind_t(st, ":now", now) |
            bind_t(st, ":method", method_name(method))) {
            stmt_done(st);
            dberr(db, err, errlen, "binding a re-measure");
            goto fail;
        }
        if (step_done(db, st, "storing a re-measure", err, errlen)) goto fail;
        if (!grp) {             /* the first row's id names the re-measure */
            grp = sqlite3_last_insert_rowid(db->db);
            if (!(st = stmt(db, Q_RM_GRP, err, errlen))) goto fail;
            if (bind_i(st, ":id", grp)) {
                stmt_done(st);
                dberr(db, err, errlen, "binding a re-measure");
                goto fail;
            }
            if (step_done(db, st, "storing a re-measure", err, errlen)) goto fail;
        }
    }
    return tx(db, Q_COMMIT, err, errlen) ? (tx(db, Q_ROLLBACK, NULL, 0), STORE_ERR) : STORE_OK;
fail:
    tx(db, Q_ROLLBACK, NULL, 0);
    return STORE_ERR;
}

int store_rematch_get(store *db, int method, int n, const store_key *ks, int *found, double *us,
                      char *err, size_t errlen) {
    int64_t id[STORE_REMATCH_MAX], grps[64];
    double med;
    int ng = 0, rc;
    sqlite3_stmt *st;
    *found = 0;
    if (n < 2 || n > STORE_REMATCH_MAX)
        return seterr(err, errlen, "store_rematch_get: %d results (2..%d)", n, STORE_REMATCH_MAX);
    for (int i = 0; i < n; i++) {
        if (result_of(db, &ks[i], &id[i], &med, err, errlen)) return STORE_ERR;
        if (!id[i]) return STORE_OK;        /* a result not stored: none */
    }
    if (!(st = stmt(db, Q_RM_GRPS, err, errlen))) return STORE_ERR;
    if (bind_i(st, ":res", id[0]) | bind_i(st, ":dev", ks[0].device) |
        bind_t(st, ":method", method_name(method))) {
        stmt_done(st);
        return dberr(db, err, errlen, "binding a re-measure");
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW && ng < 64) grps[ng++] = sqlite3_column_int64(st, 0);
    stmt_done(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return dberr(db, err, errlen, "reading re-measures");
    for (int g = 0; g < ng && !*found; g++) {     /* the newest with exactly these results */
        int rows = 0, match = 1;
        double got[STORE_REMATCH_MAX];
        if (!(st = stmt(db, Q_RM_ROWS, err, errlen))) return STORE_ERR;
        if (bind_i(st, ":grp", grps[g])) {
            stmt_done(st);
            return dberr(db, err, errlen, "binding a re-measure");
        }
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t r = sqlite3_column_int64(st, 0);
            int i = 0;
            while (i < n && id[i] != r) i++;
            if (i == n) match = 0;
            else got[i] = sqlite3_column_double(st, 1);
            rows++;
        }
        stmt_done(st);
        if (rc != SQLITE_DONE) return dberr(db, err, errlen, "reading a re-measure");
        if (match && rows == n) {
            memcpy(us, got, (size_t)n * sizeof *us);
            *found = 1;
        }
    }
    return STORE_OK;
}

/* ---- best results and provenance ---------------------------------------- */

/* Fill prov for the model in temp.nt_gpus from its best rows: the GPUs
 * that measured them, most rows first (ties: the smaller uuid), the first
 * one's versions, and the model's results. */
static int fill_prov(store *db, const store_best_row *rows, int n,
                     store_prov *prov, char *err, size_t errlen) {
    struct gpu { int64_t id; int rows; char uuid[64]; } *g = calloc((size_t)n + 1, sizeof *g);
    sqlite3_stmt *st;
    int ng = 0, rc;
    memset(prov, 0, sizeof *prov);
    if (!g) return seterr(err, errlen, "out of memory");
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < ng && g[k].id != rows[i].device_id) k++;
        if (k == ng) g[ng++].id = rows[i].device_id;
        g[k].rows++;
    }
    for (int k = 0; k < ng; k++) {       /* each GPU's uuid, then the order */
        if (!(st = stmt(db, Q_DEV_GET, err, errlen))) goto fail;
        if (bind_i(st, ":id", g[k].id) || sqlite3_step(st) != SQLITE_ROW) {
            stmt_done(st);
            dberr(db, err, errlen, "reading the device");
            goto fail;
        }
        copy_str(g[k].uuid, sizeof g[k].uuid, sqlite3_column_text(st, 1));
        stmt_done(st);
    }
    for (int a = 1; a < ng; a++)
        for (int b = a; b > 0 && (g[b].rows > g[b - 1].rows ||
                                  (g[b].rows == g[b - 1].rows &&
                                   strcmp(g[b].uuid, g[b - 1].uuid) < 0)); b--) {
            struct gpu t = g[b];
            g[b] = g[b - 1];
            g[b - 1] = t;
        }
    prov->ngpus = ng;
    for (int k = 0; k < ng && k < STORE_PROV_GPUS; k++) {
        memcpy(prov->gpus[k].uuid, g[k].uuid, sizeof prov->gpus[k].uuid);
        prov->gpus[k].rows = g[k].rows;
    }
    prov->device_id = ng ? g[0].id : db->gpus_mid;
    free(g);
    g = NULL;

    if (!(st = stmt(db, Q_DEV_GET, err, errlen))) return STORE_ERR;
    if (bind_i(st, ":id", prov->device_id) || sqlite3_step(st) != SQLITE_ROW) {
        stmt_done(st);
        return dberr(db, err, errlen, "reading the device");
    }
    copy_str(prov->device, sizeof prov->device, sqlite3_column_text(st, 0));
    copy_str(prov->uuid, sizeof prov->uuid, sqlite3_column_text(st, 1));
    prov->cc_major = sqlite3_column_int(st, 2);
    prov->cc_minor = sqlite3_column_int(st, 3);
    copy_str(prov->driver, sizeof prov->driver, sqlite3_column_text(st, 4));
    copy_str(prov->runtime, sizeof prov->runtime, sqlite3_column_text(st, 5));
    copy_str(prov->nvrtc, sizeof prov->nvrtc, sqlite3_column_text(st, 6));
    prov->sms = sqlite3_column_int(st, 7);
    prov->mem_clock_khz = sqlite3_column_int(st, 8);
    stmt_done(st);

    snprintf(prov->src_hash, sizeof prov->src_hash, "%s", n ? rows[0].src_hash : "");
    for (int i = 1; i < n; i++)
        if (strcmp(rows[i].src_hash, rows[0].src_hash)) {
            snprintf(prov->src_hash, sizeof prov->src_hash, "mixed");
            break;
        }

    if (!(st = stmt(db, Q_LAST_CREATED, err, errlen))) return STORE_ERR;
    if (sqlite3_step(st) != SQLITE_ROW) {
        stmt_done(st);
        return dberr(db, err, errlen, "reading the result times");
    }
    copy_str(prov->last_finished, sizeof prov->last_finished, sqlite3_column_text(st, 0));
    stmt_done(st);

    /* the sweeps of the rows (read with them: the view is not ranked again) */
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = rows[j].sweep_id == rows[i].sweep_id;
        prov->nsweeps += !seen;
    }

    if (!(st = stmt(db, Q_FAM_CURRENT, err, errlen))) return STORE_ERR;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (prov->nfamilies < STORE_MAX_FAMILIES &&
            !copy_str(prov->families[prov->nfamilies], sizeof prov->families[0],
                      sqlite3_column_text(st, 0)))
            prov->nfamilies++;
    stmt_done(st);
    if (rc != SQLITE_DONE) return dberr(db, err, errlen, "listing the measured families");
    return STORE_OK;
fail:
    free(g);
    return STORE_ERR;
}

/* A copy of text into buf with the first `from` replaced by `to`; -1 when
 * text has no `from` or buf is too small. */
static int replace1(const char *text, const char *from, const char *to, char *buf, size_t len) {
    const char *at = strstr(text, from);
    if (!at) return -1;
    int w = snprintf(buf, len, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    return w < 0 || (size_t)w >= len ? -1 : 0;
}

/* Create on this connection the temporary views of the view `best` of
 * db/schema.sql (one text, so that the rule of what is eligible and of
 * ties is written once), each ranking the results of a model together
 * instead of a device's:
 *   best_model          the GPUs of temp.nt_gpus (the model a command reads)
 *   best_model_current  ... measured with the current family sources
 *   best_models         every model (partitioned by the model's columns)
 * 0 or -1. */
static int model_views(store *db, char *err, size_t errlen) {
    static const char head[] = "CREATE VIEW best AS", part[] = "PARTITION BY r.device_id, r.shape_id",
                      where[] = "WHERE r.status = 'ok'";
    static const struct {
        const char *name, *part, *where;
    } v[] = {
        {"best_model", "PARTITION BY r.shape_id",
         "WHERE r.device_id IN temp.nt_gpus AND r.status = 'ok'"},
        {"best_model_current", "PARTITION BY r.shape_id",
         "WHERE r.device_id IN temp.nt_gpus AND nt_current(v.family, v.src_hash) AND "
         "r.status = 'ok'"},
        {"best_models", "PARTITION BY d.name, d.cc_major, d.cc_minor, d.sms, d.mem_clock_khz, "
         "r.shape_id", where},
    };
    char view[4096], a[4608], b[4608], sql[4608], h[64];
    if (db->has_views) return STORE_OK;
    if (models_load(db, err, errlen)) return STORE_ERR;
    if (view_sql("best", view, sizeof view))
        return seterr(err, errlen, "internal: schema.sql has no view best");
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        snprintf(h, sizeof h, "CREATE TEMP VIEW %s AS", v[i].name);
        if (replace1(view, head, h, a, sizeof a) || replace1(a, part, v[i].part, b, sizeof b) ||
            replace1(b, where, v[i].where, sql, sizeof sql))
            return seterr(err, errlen, "internal: schema.sql's view best has no \"%s\" or "
                          "\"%s\"", part, where);
        if (sqlite3_exec(db->db, sql, NULL, NULL, NULL) != SQLITE_OK)
            return dberr(db, err, errlen, "creating the views of a device model");
    }
    db->has_views = 1;
    return STORE_OK;
}

/* Best rows of a model; see store.h.  *rows is malloc'd (caller frees),
 * NULL on error. */
int store_best(store *db, const char *device, int current, store_best_row **rows, int *n,
               store_prov *prov, char *err, size_t errlen) {
    int64_t dev;
    int cap = 0, rc;
    store_best_row *v = NULL, *r;
    sqlite3_stmt *st;

    *rows = NULL;
    *n = 0;
    if (store_find_device(db, device, &dev, err, errlen) || model_views(db, err, errlen))
        return STORE_ERR;
    if (!(st = stmt(db, current ? Q_BEST : Q_BEST_ALL, err, errlen))) return STORE_ERR;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            store_best_row *nv = realloc(v, (size_t)cap * sizeof *v);
            if (!nv) {
                seterr(err, errlen, "out of memory");
                goto fail;
            }
            v = nv;
        }
        r = &v[*n];
        memset(r, 0, sizeof *r);
        r->M = sqlite3_column_int64(st, 0);
        r->N = sqlite3_column_int64(st, 1);
        if (copy_str(r->op, sizeof r->op, sqlite3_column_text(st, 2)) ||
            copy_str(r->dtype, sizeof r->dtype, sqlite3_column_text(st, 3)) ||
            copy_str(r->family, sizeof r->family, sqlite3_column_text(st, 4)) ||
            copy_str(r->params, sizeof r->params, sqlite3_column_text(st, 5)) ||
            copy_str(r->src_hash, sizeof r->src_hash, sqlite3_column_text(st, 6))) {
            seterr(err, errlen, "%s: result %lld: a name or params text is too long",
                   db->path, (long long)sqlite3_column_int64(st, 10));
            goto fail;
        }
        r->median_us = sqlite3_column_double(st, 7);
        r->gbps = sqlite3_column_double(st, 8);
        r->pct_copy = sqlite3_column_double(st, 9);
        r->result_id = sqlite3_column_int64(st, 10);
        r->traffic_gbps = sqlite3_column_double(st, 11);
        r->device_id = sqlite3_column_int64(st, 12);
        r->sweep_id = sqlite3_column_int64(st, 13);
        (*n)++;
    }
    if (rc != SQLITE_DONE) {
        dberr(db, err, errlen, "reading the best results");
        goto fail;
    }
    stmt_done(st);
    if (*n == 0) {
        seterr(err, errlen, "%s: no successful result%s within its dtypes' tolerances for "
               "device %s", db->path, current ? " of the current kernel sources" : "",
               device ? device : "(the only one)");
        goto fail2;
    }
    if (prov && fill_prov(db, v, *n, prov, err, errlen)) goto fail2;
    *rows = v;
    return STORE_OK;
fail:
    stmt_done(st);
fail2:
    free(v);
    *n = 0;
    return STORE_ERR;
}

/* ---- canned reports --------------------------------------------------------- */

/* A report column: its header and how its value is written. */
typedef struct col {
    const char *name;
    char fmt;                      /* 's' text, 'i' integer, '1'/'2' decimals */
} col;

/* Feed the header and every row of st to row(); cells of NULL are "-".
 * Returns the number of rows, or -1 on an SQLite error (err set). */
static int emit(store *db, sqlite3_stmt *st, const col *cols, int ncol,
                store_row_fn row, void *ctx, char *err, size_t errlen) {
    const char *cell[MAX_COLS];
    char num[MAX_COLS][48];
    int nrow = 0, rc;

    for (int i = 0; i < ncol; i++) cell[i] = cols[i].name;
    row(ctx, 1, ncol, cell);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < ncol; i++) {
            cell[i] = num[i];
            if (sqlite3_column_type(st, i) == SQLITE_NULL) {
                cell[i] = "-";
            } else if (cols[i].fmt == 's') {
                cell[i] = (const char *)sqlite3_column_text(st, i);
            } else if (cols[i].fmt == 'i') {
                snprintf(num[i], sizeof num[i], "%lld",
                         (long long)sqlite3_column_int64(st, i));
            } else {
                snprintf(num[i], sizeof num[i], "%.*f", cols[i].fmt - '0',
                         sqlite3_column_double(st, i));
            }
        }
        row(ctx, 0, ncol, cell);
        nrow++;
    }
    stmt_done(st);
    if (rc != SQLITE_DONE) {
        dberr(db, err, errlen, "report");
        return -1;
    }
    return nrow;
}

/* Best result per (model, shape); device NULL = every model. */
int store_report_best(store *db, const char *device, store_row_fn row, void *ctx,
                      char *err, size_t errlen) {
    static const col cols[] = {
        {"device", 's'}, {"op", 's'}, {"dtype", 's'}, {"N", 'i'}, {"M", 'i'},
        {"family", 's'}, {"params", 's'}, {"us", '2'}, {"GB/s", '1'},
        {"% copy", '1'}, {"result", 'i'},
    };
    int64_t dev = 0;
    sqlite3_stmt *st;
    if ((device && store_find_device(db, device, &dev, err, errlen)) ||
        model_views(db, err, errlen))
        return STORE_ERR;
    if (!(st = stmt(db, device ? Q_REP_BEST : Q_REP_BEST_ALL, err, errlen))) return STORE_ERR;
    return emit(db, st, cols, (int)(sizeof cols / sizeof cols[0]), row, ctx, err,
                errlen) < 0 ? STORE_ERR : STORE_OK;
}

/* Every result of one shape (M, N) on the GPUs of the model of device dev,
 * the successful ones ranked by median time with their % of the best,
 * then the failed ones; each with the first 12 characters of its GPU's
 * uuid. */
/* The columns of store_report_shape (and of store_report_shapes, with M
 * and N after them). */
#define REP_SHAPE_COLS                                                                  \
    {"rank", 'i'}, {"op", 's'}, {"dtype", 's'}, {"family", 's'}, {"params", 's'},       \
        {"status", 's'}, {"us", '2'}, {"rematch us", '2'}, {"rematch by", 's'},         \
        {"p10 us", '2'}, {"p90 us", '2'}, {"n", 'i'}, {"GB/s", '1'}, {"% copy", '1'},   \
        {"% op", '1'}, {"% of best", '1'}, {"gpu", 's'}, {"result", 'i'},               \
        {"message", 's'}

/* store_report_shapes: the rows of every shape through emit, split into
 * one table per shape (a header each) for the caller's fn. */
typedef struct shapes_ctx {
    store_shape_fn fn;
    void *ctx;
    int ncol;                  /* the table's columns (M and N not counted) */
    const char *head[MAX_COLS];
    int64_t M, N;              /* the shape of the rows so far, -1: none yet */
} shapes_ctx;

static void shapes_row(void *ctx, int header, int ncol, const char *const *cell) {
    shapes_ctx *c = ctx;
    if (header) {             /* column names: kept for each shape's header */
        c->ncol = ncol - 2;
        for (int i = 0; i < c->ncol; i++) c->head[i] = cell[i];
        return;
    }
    int64_t M = strtoll(cell[ncol - 2], NULL, 10), N = strtoll(cell[ncol - 1], NULL, 10);
    if (M != c->M || N != c->N) {
        c->M = M;
        c->N = N;
        c->fn(c->ctx, M, N, 1, c->ncol, c->head);
    }
    c->fn(c->ctx, M, N, 0, c->ncol, cell);
}

int store_report_shapes(store *db, int64_t dev, int rows, store_shape_fn fn, void *ctx,
                        char *err, size_t errlen) {
    static const col cols[] = {REP_SHAPE_COLS, {"M", 'i'}, {"N", 'i'}};
    static const col points[] = {{"op", 's'}, {"dtype", 's'}, {"family", 's'}, {"status", 's'},
                                 {"GB/s", '1'}, {"% copy", '1'}, {"M", 'i'}, {"N", 'i'}};
    shapes_ctx c = {fn, ctx, 0, {0}, -1, -1};
    sqlite3_stmt *st;
    int q = rows == STORE_SHAPES_FAMBEST ? Q_REP_FAMBEST
          : rows == STORE_SHAPES_POINTS ? Q_REP_POINTS : Q_REP_SHAPES;
    const col *cs = q == Q_REP_POINTS ? points : cols;
    int ncol = q == Q_REP_POINTS ? (int)(sizeof points / sizeof points[0])
                                 : (int)(sizeof cols / sizeof cols[0]);
    if (use_model_of(db, dev, err, errlen)) return STORE_ERR;
    if (!(st = stmt(db, q, err, errlen))) return STORE_ERR;
    return emit(db, st, cs, ncol, shapes_row, &c, err, errlen) < 0 ? STORE_ERR : STORE_OK;
}

int store_report_shape(store *db, int64_t dev, int64_t M, int64_t N,
                       store_row_fn row, void *ctx, char *err, size_t errlen) {
    static const col cols[] = {REP_SHAPE_COLS};
    int nrow;
    sqlite3_stmt *st;
    if (use_model_of(db, dev, err, errlen)) return STORE_ERR;
    if (!(st = stmt(db, Q_REP_SHAPE, err, errlen))) return STORE_ERR;
    if (bind_i(st, ":M", M) | bind_i(st, ":N", N)) {
        stmt_done(st);
        return dberr(db, err, errlen, "binding the shape");
    }
    nrow = emit(db, st, cols, (int)(sizeof cols / sizeof cols[0]), row, ctx, err, errlen);
    if (nrow < 0) return STORE_ERR;
    if (nrow == 0)
        return seterr(err, errlen, "%s: no results for M=%lld N=%lld", db->path,
                      (long long)M, (long long)N);
    return STORE_OK;
}

/* The raw samples of one result, in the order they were taken. */
int store_report_samples(store *db, int64_t result_id, store_row_fn row,
                         void *ctx, char *err, size_t errlen) {
    static const col cols[] = {{"idx", 'i'}, {"us", '2'}};
    sqlite3_stmt *st = stmt(db, Q_REP_RESULT, err, errlen);
    int rc;
    if (!st) return STORE_ERR;
    if (bind_i(st, ":res", result_id)) {
        stmt_done(st);
        return dberr(db, err, errlen, "binding the result");
    }
    rc = sqlite3_step(st);
    stmt_done(st);
    if (rc == SQLITE_DONE)
        return seterr(err, errlen, "%s: no result %lld", db->path, (long long)result_id);
    if (rc != SQLITE_ROW) return dberr(db, err, errlen, "finding the result");
    if (!(st = stmt(db, Q_REP_SAMPLES, err, errlen))) return STORE_ERR;
    if (bind_i(st, ":res", result_id)) {
        stmt_done(st);
        return dberr(db, err, errlen, "binding the result");
    }
    return emit(db, st, cols, 2, row, ctx, err, errlen) < 0 ? STORE_ERR : STORE_OK;
}

/* Every sweep, oldest first, with its device, status, copy bandwidth and
 * how many results (and successful ones) it stored. */
int store_report_sweeps(store *db, store_row_fn row, void *ctx, char *err,
                        size_t errlen) {
    static const col cols[] = {
        {"sweep", 'i'}, {"device", 's'}, {"script", 's'}, {"started", 's'},
        {"finished", 's'}, {"status", 's'}, {"copy GB/s", '1'}, {"results", 'i'},
        {"ok", 'i'},
    };
    sqlite3_stmt *st = stmt(db, Q_REP_SWEEPS, err, errlen);
    if (!st) return STORE_ERR;
    return emit(db, st, cols, (int)(sizeof cols / sizeof cols[0]), row, ctx, err,
                errlen) < 0 ? STORE_ERR : STORE_OK;
}

/* The connection, for the other files of db/ (db/history.h). */
void *store_handle(store *db) {
    return db ? db->db : NULL;
}
