/*
 * SQLite backend: opening, migrations, the statement cache and small helpers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/sqlite/sqlite_store.h"

sqlite3_stmt *sg__sq_prep(sg__sq *st, const char *sql) {
  size_t free_slot = SG__STMT_CACHE;
  for (size_t i = 0; i < SG__STMT_CACHE; i++) {
    if (st->sql[i] == sql) {
      sqlite3_reset(st->stmt[i]);
      sqlite3_clear_bindings(st->stmt[i]);
      return st->stmt[i];
    }
    if (!st->sql[i] && free_slot == SG__STMT_CACHE) free_slot = i;
  }
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK) {
    fprintf(stderr, "{\"level\":\"error\",\"msg\":\"sqlite prepare\",\"detail\":\"%s\"}\n",
            sqlite3_errmsg(st->db));
    return NULL;
  }
  if (free_slot < SG__STMT_CACHE) {
    st->sql[free_slot] = sql;
    st->stmt[free_slot] = s;
  }
  /* With a full cache the statement still works; it is finalised at close via
   * sqlite3_next_stmt. */
  return s;
}

int sg__sq_cache_kib(sg__sq *st, int kib) {
  /* A negative cache_size is a bound in KiB (a bound, not an allocation); lowering it
   * frees the cached pages above the new bound at once. */
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA main.cache_size=%d", -kib);
  return sqlite3_exec(st->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

int sg__sq_begin(sg__sq *st) {
  return sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

int sg__sq_commit(sg__sq *st) {
  return sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

void sg__sq_rollback(sg__sq *st) { sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL); }

sg_err sg__sq_end(sg__sq *st, sg_err rc) {
  if (rc == SG_E_OK && sg__sq_commit(st) == 0) return SG_E_OK;
  sg__sq_rollback(st);
  return rc == SG_E_OK ? SG_E_INTERNAL : rc;
}

int sg__sq_run(sg__sq *st, sqlite3_stmt *s) {
  int step = sqlite3_step(s);
  sqlite3_reset(s);
  return step == SQLITE_DONE ? sqlite3_changes(st->db) : -1;
}

sg_err sg__sq_changed(int changed, sg_err none) {
  return changed < 0 ? SG_E_INTERNAL : changed == 0 ? none : SG_E_OK;
}

int sg__sq_exists(sg__sq *st, const char *sql, const char *p1, const char *p2) {
  sqlite3_stmt *s = sg__sq_prep(st, sql);
  if (!s) return -1;
  sg__sq_text(s, 1, p1);
  if (sqlite3_bind_parameter_count(s) >= 2) sg__sq_text(s, 2, p2);
  int step = sqlite3_step(s);
  sqlite3_reset(s);
  return step == SQLITE_ROW ? 1 : step == SQLITE_DONE ? 0 : -1;
}

int sg__sq_at_limit(sg__sq *st, const char *sql, const char *parent, int64_t max) {
  sqlite3_stmt *s = sg__sq_prep(st, sql);
  if (!s) return -1;
  sg__sq_text(s, 1, parent);
  int rc = -1;
  if (sqlite3_step(s) == SQLITE_ROW) rc = sqlite3_column_int64(s, 0) >= max ? 1 : 0;
  sqlite3_reset(s);
  return rc;
}

json_t *sg__sq_page_rows(sqlite3_stmt *s, size_t limit, json_t *(*row)(sqlite3_stmt *s),
                         bool *more) {
  json_t *arr = json_array();
  *more = false;
  int step;
  while ((step = sqlite3_step(s)) == SQLITE_ROW) {
    if (json_array_size(arr) == limit) {
      *more = true;
      break;
    }
    json_array_append_new(arr, row(s));
  }
  sqlite3_reset(s);
  if (step != SQLITE_ROW && step != SQLITE_DONE) {
    json_decref(arr);
    return NULL;
  }
  return arr;
}

void sg__sq_text(sqlite3_stmt *s, int i, const char *v) {
  if (v)
    sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null(s, i);
}

const char *sg__sq_col(sqlite3_stmt *s, int i) { return (const char *)sqlite3_column_text(s, i); }

static int migrate(sqlite3 *db, char *err, size_t errsz) {
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL) != SQLITE_OK) return -1;
  int version = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
  sqlite3_finalize(s);
  int n = 0;
  while (sg__sqlite_migrations[n]) n++;
  if (version > n) {
    snprintf(err, errsz, "database schema %d is newer than this binary (%d)", version, n);
    return -1;
  }
  for (int v = version; v < n; v++) {
    char *msg = NULL;
    char pragma[64];
    snprintf(pragma, sizeof pragma, "PRAGMA user_version=%d;", v + 1);
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(db, sg__sqlite_migrations[v], NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(db, pragma, NULL, NULL, &msg) != SQLITE_OK ||
        sqlite3_exec(db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
      snprintf(err, errsz, "migration %d failed: %s", v + 1, msg ? msg : "?");
      sqlite3_free(msg);
      sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
      return -1;
    }
  }
  return 0;
}

/* ---- the reader pool ------------------------------------------------------------------- */

/* Frees one handle (writer or reader): statements, connection, mutex. */
static void handle_free(sg__sq *h) {
  if (!h) return;
  sqlite3_stmt *s;
  while ((s = sqlite3_next_stmt(h->db, NULL))) sqlite3_finalize(s);
  sqlite3_close(h->db);
  pthread_mutex_destroy(&h->mu);
  free(h);
}

/* Opens a read-only handle on path (called once the writer has set WAL mode and migrated,
 * so the -wal and -shm files exist). NULL on failure, with err set. */
static sg__sq *reader_open(const char *path, const char *dir, char *err, size_t errsz) {
  sg__sq *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  if (sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_FULLMUTEX, NULL) !=
      SQLITE_OK) {
    snprintf(err, errsz, "cannot open reader on %s: %s", path, sqlite3_errmsg(r->db));
    sqlite3_close(r->db);
    free(r);
    return NULL;
  }
  snprintf(r->dir, sizeof r->dir, "%s", dir);
  snprintf(r->db_path, sizeof r->db_path, "%s", path);
  /* A WAL reader waits only while another connection runs WAL recovery. */
  sqlite3_busy_timeout(r->db, 10000);
  pthread_mutex_init(&r->mu, NULL);
  return r;
}

sg__sq *sg__sq_reader_acquire(sg__sq *st) {
  unsigned start = __atomic_fetch_add(&st->next_reader, 1, __ATOMIC_RELAXED);
  for (unsigned i = 0; i < SG__SQ_READERS; i++) {
    sg__sq *r = st->readers[(start + i) % SG__SQ_READERS];
    if (pthread_mutex_trylock(&r->mu) == 0) return r;
  }
  /* Every reader is busy with another read: wait for one (reads are short). */
  sg__sq *r = st->readers[start % SG__SQ_READERS];
  pthread_mutex_lock(&r->mu);
  return r;
}

void sg__sq_reader_release(sg__sq *r) {
  /* A statement left after SQLITE_ROW keeps its read transaction, and with it an old
   * snapshot that the next call would see; end it. */
  for (sqlite3_stmt *s = sqlite3_next_stmt(r->db, NULL); s; s = sqlite3_next_stmt(r->db, s))
    if (sqlite3_stmt_busy(s)) sqlite3_reset(s);
  if (!sqlite3_get_autocommit(r->db)) sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
  pthread_mutex_unlock(&r->mu);
}

int sg__sqlite_open(const char *dir, const char *path, sg_store **out, char *err, size_t errsz) {
  sg__sq *st = calloc(1, sizeof *st);
  if (!st) return -1;
  if (sqlite3_open_v2(path, &st->db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      NULL) != SQLITE_OK) {
    snprintf(err, errsz, "cannot open %s: %s", path, sqlite3_errmsg(st->db));
    sqlite3_close(st->db);
    free(st);
    return -1;
  }
  snprintf(st->dir, sizeof st->dir, "%s", dir);
  snprintf(st->db_path, sizeof st->db_path, "%s", path);
  sqlite3_busy_timeout(st->db, 10000);
  /* WAL for concurrent readers and the admin CLI; synchronous=FULL so that an
   * acknowledged write survives kill -9 and power loss. */
  char *msg = NULL;
  snprintf(err, errsz, "cannot configure database");
  if (sqlite3_exec(st->db,
                   "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;"
                   /* After a checkpoint resets the WAL, the file is cut back to 64 MiB:
                    * one large import must not leave a GB-sized WAL behind for ever. */
                   "PRAGMA journal_size_limit=67108864;",
                   NULL, NULL, &msg) != SQLITE_OK ||
      sg__sq_cache_kib(st, SG__SQ_CACHE_KIB) || migrate(st->db, err, errsz)) {
    if (msg) snprintf(err, errsz, "cannot configure database: %s", msg);
    sqlite3_free(msg);
    sqlite3_close(st->db);
    free(st);
    return -1;
  }
  pthread_mutex_init(&st->mu, NULL);
  for (size_t i = 0; i < SG__SQ_READERS; i++) {
    if (!(st->readers[i] = reader_open(path, dir, err, errsz))) {
      sg__sqlite_close(&st->base);
      return -1;
    }
  }
  st->base.ops = &sg__sqlite_store_ops;
  *out = &st->base;
  return 0;
}

void sg__sqlite_close(sg_store *base) {
  sg__sq *st = sg__sq_of(base);
  if (!st) return;
  for (size_t i = 0; i < SG__SQ_READERS; i++) handle_free(st->readers[i]);
  handle_free(st);
}

sg_err sg__sqlite_checkpoint(sg_store *base) {
  sg__sq *st = sg__sq_of(base);
  pthread_mutex_lock(&st->mu);
  /* No busy wait: a TRUNCATE checkpoint waits for readers to leave, and the writer's
   * mutex must not be held that long. */
  sqlite3_busy_timeout(st->db, 0);
  int rc = sqlite3_wal_checkpoint_v2(st->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
  sqlite3_busy_timeout(st->db, 10000);
  pthread_mutex_unlock(&st->mu);
  return rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? SG_E_OK : SG_E_INTERNAL;
}

sg_err sg__sqlite_secret(sg_store *base, const char *name, uint8_t out[32]) {
  sg__sq *st = sg__sq_of(base);
  static const char q_get[] = "SELECT value FROM meta WHERE name=?";
  static const char q_put[] = "INSERT OR IGNORE INTO meta(name, value) VALUES(?, ?)";
  sg_err rc = SG_E_INTERNAL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  uint8_t fresh[32];
  sg_random_bytes(fresh, sizeof fresh);
  sqlite3_stmt *s = sg__sq_prep(st, q_put);
  if (!s) goto end;
  sg__sq_text(s, 1, name);
  sqlite3_bind_blob(s, 2, fresh, sizeof fresh, SQLITE_TRANSIENT);
  if (sqlite3_step(s) != SQLITE_DONE) goto end;
  s = sg__sq_prep(st, q_get);
  if (!s) goto end;
  sg__sq_text(s, 1, name);
  if (sqlite3_step(s) != SQLITE_ROW || sqlite3_column_bytes(s, 0) != 32) goto end;
  memcpy(out, sqlite3_column_blob(s, 0), 32);
  sqlite3_reset(s);
  rc = SG_E_OK;
end:
  rc = sg__sq_end(st, rc);
out:
  pthread_mutex_unlock(&st->mu);
  return rc;
}

json_t *sg__sq_ts(sqlite3_stmt *s, int col) {
  if (sqlite3_column_type(s, col) == SQLITE_NULL) return json_null();
  char buf[32];
  sg_rfc3339(sqlite3_column_int64(s, col), buf);
  return json_string(buf);
}

void sg__sq_bind_item(sqlite3_stmt *s, int at, const json_t *item, const char *aliases,
                      const char *parent, const char *locales) {
  sg__sq_text(s, at, json_string_value(json_object_get(item, "value")));
  sg__sq_text(s, at + 1, json_string_value(json_object_get(item, "displayValue")));
  sg__sq_text(s, at + 2, aliases);
  sqlite3_bind_int64(s, at + 3, json_integer_value(json_object_get(item, "rank")));
  sg__sq_text(s, at + 4, parent);
  sg__sq_text(s, at + 5, locales);
  sqlite3_bind_int64(s, at + 6, json_integer_value(json_object_get(item, "displayOrder")));
  sg__sq_text(s, at + 7, json_string_value(json_object_get(item, "description")));
}
