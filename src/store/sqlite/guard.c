/*
 * SQLite backend: the edge guard's row (migration 11; sg_store_edge_guard_* in store.h).
 * The database's clock is this host's: SQLite runs in the process. The row is created by
 * the first rewrite; until then the guard reads zeros.
 */
#include "store/sqlite/sqlite_store.h"

sg_err sg__sqlite_edge_guard_get(sg_store *base, sg_edge_guard *out) {
  static const char q[] = "SELECT COALESCE(g.epoch, 0), COALESCE(g.heartbeat_ms, 0),"
                          " (SELECT COALESCE(MAX(revision), 0) FROM edge_outbox),"
                          " CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"
                          " FROM (SELECT 1) LEFT JOIN edge_guard g ON g.id=1";
  sg__sq *r = sg__sq_reader_acquire(sg__sq_of(base));
  sqlite3_stmt *s = sg__sq_prep(r, q);
  sg_err rc = SG_E_INTERNAL;
  if (s && sqlite3_step(s) == SQLITE_ROW) {
    int64_t epoch = sqlite3_column_int64(s, 0);
    *out = (sg_edge_guard){.epoch = epoch > 0 ? (uint64_t)epoch : 0,
                           .heartbeat_ms = sqlite3_column_int64(s, 1),
                           .confirmed_revision = sqlite3_column_int64(s, 2),
                           .now_ms = sqlite3_column_int64(s, 3)};
    rc = SG_E_OK;
  }
  if (s) sqlite3_reset(s);
  sg__sq_reader_release(r);
  return rc;
}

sg_err sg__sqlite_edge_guard_begin(sg_store *base, uint64_t above, uint64_t *epoch) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "INSERT INTO edge_guard(id, epoch, heartbeat_ms) VALUES (1, ?1 + 1, 0)"
                          " ON CONFLICT(id) DO UPDATE SET epoch = MAX(epoch, ?1) + 1,"
                          " heartbeat_ms = 0 RETURNING epoch";
  pthread_mutex_lock(&st->mu);
  sqlite3_stmt *s = sg__sq_prep(st, q);
  sg_err rc = SG_E_INTERNAL;
  if (s) {
    sqlite3_bind_int64(s, 1, (sqlite3_int64)above);
    if (sqlite3_step(s) == SQLITE_ROW) {
      int64_t v = sqlite3_column_int64(s, 0);
      *epoch = v > 0 ? (uint64_t)v : 0;
      rc = SG_E_OK;
    }
    /* RETURNING: the update is done only once the statement has run to its end. */
    if (rc == SG_E_OK && sqlite3_step(s) != SQLITE_DONE) rc = SG_E_INTERNAL;
    sqlite3_reset(s);
  }
  pthread_mutex_unlock(&st->mu);
  return rc;
}

sg_err sg__sqlite_edge_guard_beat(sg_store *base, uint64_t epoch, int64_t heartbeat_ms) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "UPDATE edge_guard SET heartbeat_ms = MAX(heartbeat_ms, ?2)"
                          " WHERE id=1 AND epoch=?1";
  pthread_mutex_lock(&st->mu);
  sqlite3_stmt *s = sg__sq_prep(st, q);
  sg_err rc = SG_E_INTERNAL;
  if (s) {
    sqlite3_bind_int64(s, 1, (sqlite3_int64)epoch);
    sqlite3_bind_int64(s, 2, heartbeat_ms);
    if (sg__sq_run(st, s) >= 0) rc = SG_E_OK;
  }
  pthread_mutex_unlock(&st->mu);
  return rc;
}
