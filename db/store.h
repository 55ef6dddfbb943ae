/* store.h -- the results database (SQLite), the only code that sees sqlite3.h.
 *
 * One file, WAL mode while written, versioned with PRAGMA user_version
 * (schema in db/schema.sql, embedded at build time).  Every write happens
 * inside a transaction, so a killed sweep leaves whole results or none.  A
 * file that is not a normtune database, one of a newer schema, or one that
 * fails SQLite's integrity check is refused and left untouched.  Functions
 * return 0 (STORE_OK) or -1 (STORE_ERR) with a message in err. */
#ifndef NT_STORE_H
#define NT_STORE_H

#include <stddef.h>
#include <stdint.h>
#include "../kernels/nt.h"

#define STORE_OK 0
#define STORE_ERR (-1)
#define STORE_SCHEMA_VERSION 7

typedef struct store store;

enum { STORE_READ = 0, STORE_WRITE = 1, STORE_CREATE = 2 };

/* Open path.  STORE_CREATE creates a new file (or opens an existing
 * normtune database); STORE_WRITE needs an existing one; STORE_READ opens
 * read-only, with a shared lock (a writer may be at work).  Every open runs
 * PRAGMA foreign_key_check and an integrity check and refuses a damaged
 * file: write opens the full PRAGMA integrity_check, STORE_READ the
 * PRAGMA quick_check (the same but for comparing indexes with their
 * tables; docs/schema.md, Integrity).  Write opens check first that the
 * file and its directory can be written (and take and release the write
 * lock), migrate an older schema forward (STORE_READ refuses an older
 * schema), checkpoint what a crashed writer left in the -wal file and mark
 * sweeps whose process died as interrupted.  A write open that fails
 * leaves the file's journal mode as it found it. */
int store_open(store **out, const char *path, int mode, char *err, size_t errlen);
/* Close; a write store first checkpoints the WAL into the main file, so the
 * file alone holds everything. */
void store_close(store *db);

/* Bring the database at path to this build's schema (normtune migrate):
 * check it in full (integrity_check, foreign_key_check) and, when its
 * schema is older, migrate it as a write open does.  A file already at
 * this schema is only read, so it stays byte-identical.  *from (may be
 * NULL) gets the schema it had. */
int store_migrate(const char *path, int *from, char *err, size_t errlen);

/* The source hash of family `family` ("<op>.<family>") in this build
 * (nt_family_hash), computed for every family once per process and kept;
 * NULL for a family this build does not have or whose sources are not
 * embedded.  The SQL function nt_current reads it. */
const char *store_family_hash(const char *family);
/* How many family source hashes this process has computed (for tests: one
 * per family, however many rows were asked about). */
int store_family_hashes(void);

/* Device models.  A device row is one GPU (its uuid); its model is its
 * (name, compute capability, SM count, memory clock), and the GPUs of one
 * model pool their results: a sweep reuses what any of them measured
 * (store_lookup), and the readers (store_best, store_report_*) rank the
 * results of all of them together.  The store resolves the GPUs of a model
 * once (a temporary table of their ids, read as `device_id IN (...)`) and
 * keeps them until a new device row is added.
 *
 * store_find_device resolves a device argument to a model: a name (any
 * case), a uuid or a uuid prefix of 8 or more characters names the model
 * of the GPUs it matches (an error when they are of several models: name
 * one by uuid); with name NULL, the one model with results, else the one
 * with ok results of the current family sources, else the one whose
 * current results cover every other's.  *id is a device id of the model
 * (its lowest), for store_report_shape.  A command resolves it once.
 * Errors name the candidate models with their GPUs' uuids. */
int store_find_device(store *db, const char *name, int64_t *id, char *err, size_t errlen);

/* The GPU that ran the newest sweep (the highest sweep id): its uuid, or
 * its name when it has none, into buf, for store_find_device.  STORE_OK,
 * or STORE_ERR with a message (no sweep, a read error). */
int store_newest_gpu(store *db, char *buf, size_t len, char *err, size_t errlen);

/* The number of GPUs (device rows) of the model of device id dev, this
 * one included, into *ngpus. */
int store_model_gpus(store *db, int64_t dev, int *ngpus, char *err, size_t errlen);

/* Record a device (matched by uuid, else by name) and return its id. */
int store_device(store *db, const nt_device *d, int64_t *id, char *err, size_t errlen);

/* The other runs of a script (its hash) writing into db now from this
 * host on GPUs of the model of device: sweeps still running whose process
 * is alive (another host's runs cannot be told from crashed ones, and are
 * not counted).  fn(ctx, pid, the GPU's uuid) for each; their number, or -1
 * with a message. */
typedef void (*store_peer_fn)(void *ctx, int64_t pid, const char *uuid);
int store_sweep_peers(store *db, int64_t device, const char *script_hash, store_peer_fn fn,
                      void *ctx, char *err, size_t errlen);

/* Start a sweep: script path and hash, device, copy bandwidth; the host and
 * process id are recorded too.  Status "running" until store_sweep_end sets
 * "done", "interrupted" or "failed"; a running sweep whose process (on this
 * host) is gone reads as "interrupted". */
int store_sweep_begin(store *db, int64_t device, const char *script,
                      const char *script_hash, double copy_gbps, int64_t *id,
                      char *err, size_t errlen);
int store_sweep_end(store *db, int64_t sweep, const char *status, char *err,
                    size_t errlen);

/* The key of a measurement: reused instead of re-measured when all match,
 * the device by its model (store_lookup).  A result is stored under the
 * GPU that measured it (the uuid and versions of its row are provenance). */
typedef struct store_key {
    int64_t device;           /* the GPU (store_device) */
    const char *family;       /* full family name "<op>.<family>" */
    const char *params;       /* canonical text, nt_params_canon */
    const char *src_hash;     /* the family's source hash (nt_family_hash) */
    const char *op, *dtype;   /* op name, canonical dtypes (nt_dtypes_canon) */
    nt_shape shape;
    nt_timing timing;
} store_key;

/* Is there a result for this key on a GPU of the model of k->device?
 * *found = 0 when none; 1 when k->device stored it; 2 when another GPU of
 * its model did (the newest of theirs).  *out (may be NULL) is filled,
 * samples included. */
int store_lookup(store *db, const store_key *k, int *found, nt_result *out,
                 char *err, size_t errlen);

/* Store one result with its samples in one transaction, under sweep. */
int store_put(store *db, int64_t sweep, const store_key *k, const nt_result *r,
              char *err, size_t errlen);

/* Claims: a writer takes the claim of a key before it measures it, so that
 * two writers of one database on this host (runs on GPUs of one model: run
 * --devices, two make tune) never measure the same thing.  The claim is of
 * the key with the device's model in place of the device, the key that
 * store_lookup reuses.  It is a lock, of one byte of a file in $TMPDIR
 * named after the database file (an open file description's lock, taken
 * on the store's own descriptor), held until store_release: the kernel
 * drops it when its process ends, however it ends, so no claim outlives
 * its writer.  (Writers of one SQLite file in WAL mode are on one host.)
 * store_claim never waits: *got 1 when the claim is now this store's, 0
 * when another writer holds it (its result is stored, or it failed, when
 * the claim is released: try again then).  A store holds one claim at a
 * time; taking another releases the one it held. */
int store_claim(store *db, const store_key *k, int *got, char *err, size_t errlen);
void store_release(store *db);

/* Re-measures (table rematch, db/schema.sql): the closest few results of a
 * problem measured again on one GPU, interleaved.  store_rematch_put
 * stores one, under sweep: the n (2..STORE_REMATCH_MAX) results stored
 * under keys ks (all of ks[0].device, each an ok result a lookup finds),
 * us[i] and ns[i] the median and sample count of ks[i]'s interleaved
 * samples, timed by method (STORE_CHAIN, or STORE_ALONE: each run alone
 * after an L2 flush); `best` then ranks them in that order (their
 * rank_us).  store_rematch_get finds the newest re-measure by ks[0].device
 * with that method whose results are exactly those of ks: *found 1 and
 * us[] in the keys' order, else *found 0 (also when a key has no result).
 * How a resumed sweep makes the same choice without measuring again. */
#define STORE_REMATCH_MAX NT_REMATCH_MAX
#define STORE_CHAIN 0
#define STORE_ALONE 1
int store_rematch_put(store *db, int64_t sweep, int method, int n, const store_key *ks,
                      const double *us, const int *ns, char *err, size_t errlen);
int store_rematch_get(store *db, int method, int n, const store_key *ks, int *found, double *us,
                      char *err, size_t errlen);

/* What a merge did, counted in results. */
typedef struct store_merge_counts {
    int64_t total;            /* results in out */
    int64_t from_a, from_b;   /* added from each input */
    int64_t same;             /* B's results whose key A had, same measurement */
    int64_t differ;           /* ... with another measurement: A's kept */
} store_merge_counts;

/* Fold databases a and b into a new file out (which must not exist):
 * devices, sweeps, variants, shapes, results and samples, without
 * duplicates (a result present in both is kept once, as A has it).  Each
 * input is checked and read in one read transaction (one snapshot, while a
 * writer may go on); inputs are left untouched.  counts (may be NULL) gets
 * what was added. */
int store_merge(const char *a, const char *b, const char *out,
                store_merge_counts *counts, char *err, size_t errlen);

/* What a merge took from one of its inputs, counted in results. */
typedef struct store_merge_input {
    int64_t added;            /* results new to the merge */
    int64_t same;             /* results whose key an input before it had, same
                                 measurement */
    int64_t differ;           /* ... with another measurement: the earlier kept */
} store_merge_input;

/* Fold n >= 1 databases in[0..n), in that order, into the new file out
 * (which must not exist), as store_merge does two: a result in several is
 * kept once, as the first that has it has it.  each[i] (each may be NULL)
 * gets what input i added; *total (may be NULL) the results in out. */
int store_merge_all(const char *const *in, int n, const char *out, store_merge_input *each,
                    int64_t *total, char *err, size_t errlen);

/* Best successful result per shape for one device model. */
typedef struct store_best_row {
    int64_t M, N;
    char op[32], dtype[128];   /* op and canonical dtypes ("x=bf16,w=f32,...") */
    char family[64];
    char params[160];         /* canonical */
    char src_hash[24];
    double median_us, gbps, pct_copy;
    double traffic_gbps;      /* the problem's yardstick (0 if none) */
    int64_t result_id;
    int64_t device_id;        /* the GPU of the model that measured it */
    int64_t sweep_id;         /* the sweep it was measured in */
} store_best_row;

#define STORE_MAX_FAMILIES 64
#define STORE_PROV_GPUS 16    /* GPUs a store_prov names */

/* Provenance of a model's best results, for the export banner. */
typedef struct store_prov {
    int64_t device_id;        /* the GPU that measured the most best rows (of
                                 the fewest, the smallest uuid) */
    char device[128];         /* the model's name; with cc_*, sms and
                                 mem_clock_khz the model */
    int cc_major, cc_minor;
    int sms, mem_clock_khz;
    char uuid[64];            /* that GPU's uuid ("none" if it has none) */
    char driver[32], runtime[32], nvrtc[32];   /* that GPU's versions */
    /* the GPUs whose results are among the best rows: how many, and the
     * first STORE_PROV_GPUS of them, most rows first (gpus[0] is the GPU
     * above); ngpus 0 (a provenance filled by hand) reads as one GPU,
     * uuid, with every row */
    int ngpus;
    struct store_prov_gpu {
        char uuid[64];
        int rows;
    } gpus[STORE_PROV_GPUS];
    char src_hash[24];        /* kernel source hash of the best results
                                 ("mixed" if they differ) */
    char last_finished[32];   /* newest result of the model, UTC ISO 8601 */
    int nsweeps;              /* sweeps contributing */
    /* the families with ok results of their current sources (nt_current)
     * on the model, by name: a family of this build missing here has no
     * measurement the export could use */
    char families[STORE_MAX_FAMILIES][64];
    int nfamilies;
} store_prov;

/* Best rows for a device model (device: a name or uuid as
 * store_find_device takes it; NULL: its default choice), sorted by (op,
 * dtypes, N, M): per problem the fastest ok result of any GPU of the model
 * whose every output error is within the tolerance its dtype asks for
 * (error.required; the rule of the view `best`), so that a config too
 * imprecise for an output dtype (an fp32 dw through bf16 partials) is
 * never exported for it.  Ties: the smaller (family, params, src_hash),
 * then the lower result id.  With current = 1 only results measured with
 * the current sources of their family (nt_family_hash) take part, so that
 * a family whose kernels changed is re-measured before it is exported
 * again, and the others are not (the export); with 0 every result does
 * (reports and plots of any database).  *rows is malloc'd, caller frees.
 * A model with no such result is an error. */
int store_best(store *db, const char *device, int current, store_best_row **rows, int *n,
               store_prov *prov, char *err, size_t errlen);

/* Canned reports for `normtune query`.  Each calls row() once with the
 * column names (header = 1) and then once per row; cells are texts. */
typedef void (*store_row_fn)(void *ctx, int header, int ncol, const char *const *cell);
/* best per (model, shape) over the pooled results of the model's GPUs
 * (device NULL: every model) */
int store_report_best(store *db, const char *device, store_row_fn row, void *ctx,
                      char *err, size_t errlen);
/* one shape's results on the GPUs of the model of device dev (an id of
 * store_find_device or store_prov), ranked, with % of the best and the
 * GPU of each */
/* every shape's ok results at once, as store_report_shape gives them (its
 * columns, its ranks): fn(ctx, M, N, header, ...) per row, a header first
 * at each shape, the shapes in order of M, then N (one query: the reports
 * of every shape, `report` and `plot`); rows: STORE_SHAPES_ALL every ok
 * result; STORE_SHAPES_FAMBEST only the first row of each family at each
 * shape, op and dtype (its best; the rank and % of best then among those);
 * STORE_SHAPES_POINTS every ok result in the same order, but only the
 * columns op, dtype, family, status, GB/s and % copy */
enum { STORE_SHAPES_ALL = 0, STORE_SHAPES_FAMBEST = 1, STORE_SHAPES_POINTS = 2 };
typedef void (*store_shape_fn)(void *ctx, int64_t M, int64_t N, int header, int ncol,
                               const char *const *cell);
int store_report_shapes(store *db, int64_t dev, int rows, store_shape_fn fn, void *ctx,
                        char *err, size_t errlen);
int store_report_shape(store *db, int64_t dev, int64_t M, int64_t N,
                       store_row_fn row, void *ctx, char *err, size_t errlen);
/* one result's raw samples */
int store_report_samples(store *db, int64_t result_id, store_row_fn row,
                         void *ctx, char *err, size_t errlen);
/* sweeps with device, status, copy GB/s and counts */
int store_report_sweeps(store *db, store_row_fn row, void *ctx, char *err,
                        size_t errlen);

#endif
