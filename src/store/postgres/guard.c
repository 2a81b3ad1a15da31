/*
 * PostgreSQL backend: the edge guard's row (sg_store_edge_guard_* in store.h). Times come
 * from the server's clock, so every host of a fleet reads the same one. The row is
 * created by the first rewrite; until then the guard reads zeros.
 */
#include "store/postgres/pg.h"

sg_err sg__pg_edge_guard_get(sg_store *base, sg_edge_guard *out) {
  sg_err rc;
  PGresult *r = sg__pg_read(sg__pg_of(base),
                            "SELECT COALESCE(g.epoch, 0) AS epoch,"
                            " COALESCE(g.heartbeat_ms, 0) AS heartbeat_ms,"
                            " (SELECT COALESCE(MAX(revision), 0) FROM edge_outbox) AS revision,"
                            " (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms"
                            " FROM (SELECT 1) one LEFT JOIN edge_guard g ON g.id=1",
                            0, NULL, &rc);
  if (!r) return rc;
  rc = SG_E_INTERNAL;
  static const char *const names[] = {"epoch", "heartbeat_ms", "revision", "now_ms"};
  int c[4];
  if (sg__pg_cols(r, names, c, 4) == 0 && PQntuples(r) == 1) {
    int64_t epoch = sg__pg_i(r, 0, c[0]);
    *out = (sg_edge_guard){.epoch = epoch > 0 ? (uint64_t)epoch : 0,
                           .heartbeat_ms = sg__pg_i(r, 0, c[1]),
                           .confirmed_revision = sg__pg_i(r, 0, c[2]),
                           .now_ms = sg__pg_i(r, 0, c[3])};
    rc = SG_E_OK;
  }
  PQclear(r);
  return rc;
}

sg_err sg__pg_edge_guard_begin(sg_store *base, uint64_t above, uint64_t *epoch) {
  char a[24];
  const char *p[] = {sg__pg_int((int64_t)above, a)};
  sg_err rc;
  PGresult *r = sg__pg_one(sg__pg_of(base),
                           "INSERT INTO edge_guard(id, epoch, heartbeat_ms)"
                           " VALUES (1, $1::bigint + 1, 0) ON CONFLICT (id) DO UPDATE SET"
                           " epoch = GREATEST(edge_guard.epoch, $1::bigint) + 1, heartbeat_ms = 0"
                           " RETURNING epoch",
                           1, p, &rc);
  if (!r) return rc;
  rc = SG_E_INTERNAL;
  if (PQntuples(r) == 1 && sg__pg_in(r, 0, "epoch") > 0) {
    *epoch = (uint64_t)sg__pg_in(r, 0, "epoch");
    rc = SG_E_OK;
  }
  PQclear(r);
  return rc;
}

sg_err sg__pg_edge_guard_beat(sg_store *base, uint64_t epoch, int64_t heartbeat_ms) {
  char e[24], h[24];
  const char *p[] = {sg__pg_int((int64_t)epoch, e), sg__pg_int(heartbeat_ms, h)};
  sg_err rc;
  PGresult *r = sg__pg_one(sg__pg_of(base),
                           "UPDATE edge_guard SET heartbeat_ms = GREATEST(heartbeat_ms, $2::bigint)"
                           " WHERE id=1 AND epoch=$1::bigint",
                           2, p, &rc);
  PQclear(r);
  return r ? SG_E_OK : rc;
}
