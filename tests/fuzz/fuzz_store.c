/* fuzz_store.c -- libFuzzer harness for opening and reading a results
 * database (db/store.c) and exporting a dispatch header from it.
 *
 * An input that starts with the SQLite header ("SQLite format 3") is a
 * database file: it is written to disk as it is (a damaged or hostile
 * file).  Any other input is SQL: it runs on a fresh, valid normtune
 * database (made once with store_open) to fill it with hostile content --
 * texts in integer columns, huge or negative shapes, NULLs, odd params
 * texts, thousands of rows.  The SQL may only read and change rows (an
 * authorizer refuses ATTACH, PRAGMA, schema changes, VACUUM), is capped at
 * 1e6 VM steps and at 1 MB per value.
 *
 * The file is then opened with store_open(STORE_READ) and read the ways the
 * commands read it: store_report_sweeps, store_report_best, store_best
 * (the view best, which filters by table error) followed by nt_export_write (which parses the params texts), and
 * store_report_shape and store_report_samples on the first best row; then
 * opened with STORE_WRITE (which migrates an older schema).  A function
 * that fails must leave a message.  Seeds: tests/fuzz/seeds/store/ (a small
 * fixture database and SQL scripts); dictionary tests/fuzz/store.dict. */
#include "tests/fuzz/fuzz.h"

#include <sqlite3.h>

#include "db/store.h"
#include "tuner/export.h"

static unsigned char *tmpl;   /* a fresh database's bytes */
static size_t ntmpl;

/* Reading every cell: a bad pointer or a missing NUL shows up here. */
static void row(void *ctx, int header, int ncol, const char *const *cell) {
    size_t *sum = ctx;
    (void)header;
    for (int i = 0; i < ncol; i++)
        if (cell[i]) *sum += strlen(cell[i]);
}

static void need_msg(int rc, const char *err, const char *what) {
    if (rc && !err[0]) {
        fprintf(stderr, "%s failed with an empty message\n", what);
        abort();
    }
}

/* Make the template once: store_open(STORE_CREATE) on a new file. */
static void make_template(void) {
    store *db;
    char err[512];
    const char *path = fz_file("x.db", NULL, 0);
    unlink(path);
    if (store_open(&db, path, STORE_CREATE, err, sizeof err)) {
        fprintf(stderr, "template: %s\n", err);
        exit(2);
    }
    store_close(db);
    FILE *f = fopen(path, "rb");
    if (!f || fseek(f, 0, SEEK_END) || (ntmpl = (size_t)ftell(f)) == 0 ||
        fseek(f, 0, SEEK_SET) || !(tmpl = malloc(ntmpl)) || fread(tmpl, 1, ntmpl, f) != ntmpl) {
        fprintf(stderr, "template: cannot read %s back\n", path);
        exit(2);
    }
    fclose(f);
}

/* Only row reads and writes (and transactions) are allowed. */
static int authorize(void *ud, int code, const char *a, const char *b, const char *c,
                     const char *d) {
    static const int allowed[] = {SQLITE_INSERT, SQLITE_UPDATE, SQLITE_DELETE, SQLITE_READ,
                                  SQLITE_SELECT, SQLITE_FUNCTION, SQLITE_TRANSACTION,
                                  SQLITE_RECURSIVE, SQLITE_SAVEPOINT};
    (void)ud, (void)a, (void)b, (void)c, (void)d;
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
        if (code == allowed[i]) return SQLITE_OK;
    return SQLITE_DENY;
}

static int progress(void *ud) { return ++*(int *)ud > 1000; }

/* Run the SQL text on a copy of the template at path; errors are ignored. */
static void run_sql(const char *path, const uint8_t *data, size_t size) {
    sqlite3 *db;
    char *sql = malloc(size + 1);
    int steps = 0;
    if (!sql) return;
    memcpy(sql, data, size);
    sql[size] = 0;
    for (size_t i = 0; i + 6 <= size; i++)     /* VACUUM INTO writes a file */
        if (!strncasecmp(sql + i, "vacuum", 6)) {
            free(sql);
            return;
        }
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
        sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
        sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
        sqlite3_set_authorizer(db, authorize, NULL);
        sqlite3_progress_handler(db, 1000, progress, &steps);
        sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    sqlite3_close(db);
    free(sql);
}

/* Every read the commands do, on an open database. */
static void reads(store *db) {
    char err[1024];
    size_t sum = 0;
    int rc, n = 0;
    store_best_row *rows = NULL;
    store_prov prov;
    err[0] = 0;
    rc = store_report_sweeps(db, row, &sum, err, sizeof err);
    need_msg(rc, err, "store_report_sweeps");
    err[0] = 0;
    rc = store_report_best(db, NULL, row, &sum, err, sizeof err);
    need_msg(rc, err, "store_report_best");
    err[0] = 0;
    rc = store_best(db, NULL, 1, &rows, &n, &prov, err, sizeof err);
    need_msg(rc, err, "store_best (current)");
    free(rows);
    rows = NULL;
    err[0] = 0;
    rc = store_best(db, NULL, 0, &rows, &n, &prov, err, sizeof err);
    need_msg(rc, err, "store_best");
    if (rc == 0) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (f) {
            err[0] = 0;
            rc = nt_export_write(f, rows, n, &prov, err, sizeof err);
            need_msg(rc, err, "nt_export_write");
            fclose(f);
            free(text);
        }
        if (n > 0) {
            err[0] = 0;
            rc = store_report_shape(db, prov.device_id, rows[0].M, rows[0].N, row, &sum, err,
                                    sizeof err);
            need_msg(rc, err, "store_report_shape");
            err[0] = 0;
            rc = store_report_samples(db, rows[0].result_id, row, &sum, err, sizeof err);
            need_msg(rc, err, "store_report_samples");
        }
        free(rows);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char magic[] = "SQLite format 3";
    const char *path;
    store *db;
    char err[1024];
    if (!tmpl) make_template();
    if (size >= sizeof magic && !memcmp(data, magic, sizeof magic)) {
        path = fz_file("in", data, size);
    } else {
        path = fz_file("in", tmpl, ntmpl);
        run_sql(path, data, size);
    }
    for (int mode = STORE_READ; mode <= STORE_WRITE; mode++) {
        err[0] = 0;
        int rc = store_open(&db, path, mode, err, sizeof err);
        need_msg(rc, err, "store_open");
        if (rc) continue;
        reads(db);
        store_close(db);
    }
    return 0;
}
