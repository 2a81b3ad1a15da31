/*
 * PostgreSQL backend: the publish queue depth behind /readyz and the metrics (as
 * src/store/sqlite/health.c).
 */
#include "store/postgres/pg.h"

sg_err sg__pg_queue_depth(sg_store *base, int64_t *n) {
  sg_err rc;
  *n = 0;
  PGresult *r = sg__pg_read(
      sg__pg_of(base), "SELECT count(*) AS n FROM versions WHERE state IN ('queued', 'staged')", 0,
      NULL, &rc);
  if (!r) return rc;
  int col = sg__pg_col(r, "n");
  if (col >= 0) *n = sg__pg_i(r, 0, col);
  PQclear(r);
  return col >= 0 ? SG_E_OK : SG_E_INTERNAL;
}
