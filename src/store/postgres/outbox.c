/*
 * PostgreSQL backend: the edge outbox (the PL/pgSQL triggers of migration 1 mark records
 * in the transaction of each change; see sg_store_edge_* in store.h).
 */
#include <string.h>

#include "common/util.h"
#include "store/postgres/pg.h"
#include "store/rules.h"

/* The outbox rows one query selects, (kind, id, want), into out. A row too long for the
 * struct names no edge record (ids are at most 128 bytes) and is passed over. */
static sg_err outbox_rows(sg_store *base, const char *sql, int np, const char *const *p,
                          sg_edge_dirty *out, size_t max, size_t *n) {
  *n = 0;
  sg_err rc;
  PGresult *r = sg__pg_read(sg__pg_of(base), sql, np, p, &rc);
  if (!r) return rc;
  static const char *const names[] = {"kind", "id", "want"};
  int col[3];
  if (sg__pg_cols(r, names, col, 3)) {
    PQclear(r);
    return SG_E_INTERNAL;
  }
  for (int i = 0; i < PQntuples(r) && *n < max; i++) {
    sg_edge_dirty *d = &out[*n];
    const char *kind = PQgetvalue(r, i, col[0]), *id = PQgetvalue(r, i, col[1]);
    if (strlen(kind) >= sizeof d->kind || strlen(id) >= sizeof d->id) continue;
    snprintf(d->kind, sizeof d->kind, "%s", kind);
    snprintf(d->id, sizeof d->id, "%s", id);
    d->gen = sg__pg_i(r, i, col[2]);
    (*n)++;
  }
  PQclear(r);
  return SG_E_OK;
}

sg_err sg__pg_edge_dirty(sg_store *base, sg_edge_dirty *out, size_t max, size_t *n) {
  char lim[24];
  const char *p[] = {sg__pg_int((int64_t)max, lim)};
  return outbox_rows(base,
                     "SELECT kind, id, want FROM edge_outbox WHERE want > done"
                     " ORDER BY kind, id LIMIT $1::bigint",
                     1, p, out, max, n);
}

/* Every record after (after_kind, after_id), for admin edge rebuild. */
sg_err sg__pg_edge_records(sg_store *st, const char *after_kind, const char *after_id,
                           sg_edge_dirty *out, size_t max, size_t *n) {
  char lim[24];
  const char *p[] = {after_kind, after_id, sg__pg_int((int64_t)max, lim)};
  return outbox_rows(st,
                     "SELECT kind, id, want FROM edge_outbox WHERE (kind, id) > ($1, $2)"
                     " ORDER BY kind, id LIMIT $3",
                     3, p, out, max, n);
}

sg_err sg__pg_edge_state(sg_store *base, const char *kind, const char *id, int64_t *want,
                         int64_t *done, int64_t *revision) {
  const char *p[] = {kind, id};
  *want = *done = *revision = 0;
  sg_err rc;
  PGresult *r = sg__pg_read(sg__pg_of(base),
                            "SELECT want, done, revision FROM edge_outbox WHERE kind=$1 AND id=$2",
                            2, p, &rc);
  if (!r) return rc;
  static const char *const names[] = {"want", "done", "revision"};
  int col[3];
  if (sg__pg_cols(r, names, col, 3)) {
    PQclear(r);
    return SG_E_INTERNAL;
  }
  if (PQntuples(r) == 1) {
    *want = sg__pg_i(r, 0, col[0]);
    *done = sg__pg_i(r, 0, col[1]);
    *revision = sg__pg_i(r, 0, col[2]);
  }
  PQclear(r);
  return SG_E_OK;
}

sg_err sg__pg_edge_done(sg_store *base, const char *kind, const char *id, int64_t gen,
                        int64_t revision) {
  char g[24], rev[24];
  const char *p[] = {kind, id, sg__pg_int(gen, g), sg__pg_int(revision, rev)};
  /* Never lowers done: a slow writer that read an older generation confirms nothing
   * newer than what it wrote. */
  sg_err rc;
  PGresult *r = sg__pg_one(sg__pg_of(base),
                           "UPDATE edge_outbox SET done=GREATEST(done, $3::bigint),"
                           " revision=GREATEST(revision, $4::bigint) WHERE kind=$1 AND id=$2",
                           4, p, &rc);
  PQclear(r);
  return r ? SG_E_OK : rc;
}

typedef struct {
  const char *kind, *id;
  int64_t gen;
  json_t *out;
} source_ctx;

/* Runs sql ($1 = id) and builds the record from its single row; SG_E_NOT_FOUND without. */
static sg_err record_of(PGconn *c, const char *sql, const char *id, const char *kind,
                        json_t **out) {
  const char *p[] = {id};
  PGresult *r = sg__pg_q(c, sql, 1, p);
  if (!r) return SG_E_INTERNAL;
  sg_err rc = SG_E_NOT_FOUND;
  /* Each kind's columns by name, in the order its record function takes them. */
  static const char *const key_cols[] = {"id", "application_id", "list_id", "origins", "status"};
  static const char *const sub_cols[] = {"id", "workspace_id", "list_id", "status"};
  static const char *const sig_cols[] = {"kid", "public_key", "created_at", "retired_at"};
  static const char *const app_cols[] = {"id", "workspace_id", "status", "monthly_quota"};
  static const char *const ws_cols[] = {"id", "status"};
  bool keys = strcmp(kind, "keys") == 0, subs = strcmp(kind, "subscriptions") == 0,
       sigs = strcmp(kind, "signing-keys") == 0, apps = strcmp(kind, "apps") == 0;
  const char *const *names = keys   ? key_cols
                             : subs ? sub_cols
                             : sigs ? sig_cols
                             : apps ? app_cols
                                    : ws_cols;
  size_t nc = keys ? 5 : subs || sigs || apps ? 4 : 2;
  int col[5];
  if (sg__pg_cols(r, names, col, nc)) {
    rc = SG_E_INTERNAL;
  } else if (PQntuples(r) == 1) {
    rc = SG_E_OK;
    if (keys) {
      *out = sg__store_key_record(
          PQgetvalue(r, 0, col[0]), PQgetvalue(r, 0, col[1]), PQgetvalue(r, 0, col[2]),
          json_loads(PQgetvalue(r, 0, col[3]), 0, NULL), PQgetvalue(r, 0, col[4]));
    } else if (subs) {
      *out = sg__store_subscription_record(PQgetvalue(r, 0, col[0]), PQgetvalue(r, 0, col[1]),
                                           PQgetvalue(r, 0, col[2]), PQgetvalue(r, 0, col[3]));
    } else if (sigs) {
      uint8_t pk[32];
      if (sg__pg_bytes(r, 0, col[1], pk, 32) == 0)
        *out = sg__store_signing_key_record(PQgetvalue(r, 0, col[0]), pk, sg__pg_i(r, 0, col[2]),
                                            !PQgetisnull(r, 0, col[3]), sg__pg_i(r, 0, col[3]));
      else
        rc = SG_E_INTERNAL;
    } else if (apps) {
      *out = sg__store_app_record(PQgetvalue(r, 0, col[0]), PQgetvalue(r, 0, col[1]),
                                  PQgetvalue(r, 0, col[2]), !PQgetisnull(r, 0, col[3]),
                                  sg__pg_i(r, 0, col[3]));
    } else {
      *out = sg__store_simple_record(PQgetvalue(r, 0, col[0]), PQgetvalue(r, 0, col[1]));
    }
  }
  PQclear(r);
  return rc;
}

static sg_err source_fn(PGconn *c, void *vctx) {
  source_ctx *x = vctx;
  json_decref(x->out);
  x->out = NULL;
  x->gen = 0;
  const char *p[] = {x->kind, x->id};
  PGresult *r = sg__pg_q(c, "SELECT want FROM edge_outbox WHERE kind=$1 AND id=$2", 2, p);
  if (!r) return SG_E_INTERNAL;
  if (PQntuples(r) == 1) x->gen = sg__pg_in(r, 0, "want");
  PQclear(r);
  static const struct {
    const char *kind, *sql;
  } sources[] = {
      {"keys", "SELECT id, application_id, list_id, origins, status FROM publishable_keys"
               " WHERE digest=$1"},
      {"subscriptions", "SELECT id, workspace_id, list_id, status FROM subscriptions WHERE id=$1"},
      {"signing-keys", "SELECT kid, public_key, created_at, retired_at FROM signing_keys"
                       " WHERE kid=$1"},
      {"apps", "SELECT id, workspace_id, status, monthly_quota FROM applications WHERE id=$1"},
      {"workspaces", "SELECT id, status FROM workspaces WHERE id=$1"},
  };
  if (strcmp(x->kind, "lists") == 0) {
    sg_err rc = sg__pg_list_load(c, NULL, x->id, false, &x->out, NULL);
    return rc == SG_E_INVALID_LIST ? SG_E_NOT_FOUND : rc;
  }
  for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++)
    if (strcmp(x->kind, sources[i].kind) == 0)
      return record_of(c, sources[i].sql, x->id, x->kind, &x->out);
  return SG_E_NOT_FOUND;
}

sg_err sg__pg_edge_source(sg_store *base, const char *kind, const char *id, int64_t *gen,
                          json_t **out) {
  source_ctx x = {kind, id, 0, NULL};
  /* One snapshot: the record holds at least every change its generation counts. */
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RO, source_fn, &x);
  *gen = x.gen;
  *out = NULL;
  if (rc == SG_E_OK)
    *out = x.out;
  else
    json_decref(x.out);
  return rc;
}
