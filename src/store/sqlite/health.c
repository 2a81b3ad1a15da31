/*
 * SQLite backend: the health probe behind /readyz and the publish queue depth.
 */
#include "store/sqlite/sqlite_store.h"

sg_err sg__sqlite_queue_depth(sg_store *base, int64_t *n) {
  sg__sq *st = sg__sq_of(base);
  /* Served by the versions_pending partial index: it holds only these rows. */
  static const char q[] = "SELECT count(*) FROM versions WHERE state IN ('queued', 'staged')";
  *n = 0;
  sg__sq *r = sg__sq_reader_acquire(st);
  sg_err rc = SG_E_INTERNAL;
  sqlite3_stmt *s = sg__sq_prep(r, q);
  if (s) {
    if (sqlite3_step(s) == SQLITE_ROW) {
      *n = sqlite3_column_int64(s, 0);
      rc = SG_E_OK;
    }
    sqlite3_reset(s);
  }
  sg__sq_reader_release(r);
  return rc;
}
