/*
 * PostgreSQL backend: the publish queue depth behind /readyz and the metrics (as
 * src/store/sqlite/health.c).
 */
#include "store/postgres/pg.h"

sg_err sg__pg_queue_depth(sg_store *base, int64_t *n) {
  sg_err rc;
  *n = 0;
  PGresult *r = sg__pg_read(sg__pg_of(base),
                            "SELECT count(*) FROM versions WHERE state IN ('queued', 'staged')", 0,
                            NULL, &rc);
  if (!r) return rc;
  *n = sg__pg_i(r, 0, 0);
  PQclear(r);
  return SG_E_OK;
}
