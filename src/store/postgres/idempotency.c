/*
 * PostgreSQL backend: Idempotency-Key records.
 *
 * The first request inserts its record with INSERT … ON CONFLICT DO NOTHING, so of two
 * requests racing with one key exactly one inserts; the other locks the existing row
 * (FOR UPDATE) and decides from it. An in-flight record belongs to its store's owner id
 * under a lease (IDEM_LEASE_MS): the SQLite backend can ask whether the owning process
 * still runs, but here the owner may be on another host, so once the lease has run out
 * the record is taken over by the next request with the same key. The lease is taken and
 * checked on the database's clock (SG__PG_NOW_MS), not on the clocks of the hosts, which
 * may drift apart: a host whose clock runs ahead cannot take a live record over.
 */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/postgres/pg.h"

/* How long a record is kept (as on SQLite) and how long an in-flight record's owner
 * keeps it (SQLite's stale age). */
#define IDEM_TTL_S (24 * 3600)
#define IDEM_LEASE_MS (300 * 1000)

typedef struct {
  const char *workspace_id, *key, *method, *path, *owner;
  const uint8_t *body_hash;
  sg_idem_state *state;
  int *status;
  char **body, **headers;
} begin_ctx;

static sg_err begin_fn(PGconn *c, void *vctx) {
  begin_ctx *x = vctx;
  free(*x->body);
  free(*x->headers);
  *x->body = *x->headers = NULL;
  int64_t now = sg_now_s();
  char old[24], nows[24], lease[24], hex[68];
  const char *pg[] = {x->workspace_id, sg__pg_int(now - IDEM_TTL_S, old)};
  if (sg__pg_x(c, "DELETE FROM idempotency WHERE workspace_id=$1 AND created_at<$2::bigint", 2, pg))
    return SG_E_INTERNAL;
  const char *p[] = {x->workspace_id,
                     x->key,
                     x->method,
                     x->path,
                     sg__pg_bytea(x->body_hash, 32, hex),
                     sg__pg_int(now, nows),
                     x->owner,
                     sg__pg_int(IDEM_LEASE_MS, lease)};
  PGresult *r = sg__pg_q(c,
                         "INSERT INTO idempotency(workspace_id, key, method, path, body_hash,"
                         " state, created_at, owner, lease_until_ms) VALUES($1, $2, $3, $4,"
                         " $5::bytea, 'in_flight', $6::bigint, $7, " SG__PG_NOW_MS "+$8::bigint)"
                         " ON CONFLICT DO NOTHING",
                         8, p);
  if (!r) return SG_E_INTERNAL;
  int64_t inserted = sg__pg_changed(r);
  PQclear(r);
  if (inserted == 1) {
    *x->state = SG_IDEM_PROCEED;
    return SG_E_OK;
  }
  r = sg__pg_q(c,
               "SELECT method, path, body_hash, state, status, body, headers,"
               " state='in_flight' AND COALESCE(lease_until_ms, 0) < " SG__PG_NOW_MS
               " AS expired, owner FROM idempotency WHERE workspace_id=$1 AND key=$2"
               " FOR UPDATE",
               2, p);
  if (!r) return SG_E_INTERNAL;
  static const char *const names[] = {"method", "path",    "body_hash", "state", "status",
                                      "body",   "headers", "expired",   "owner"};
  int col[9];
  if (sg__pg_cols(r, names, col, 9)) {
    PQclear(r);
    return SG_E_INTERNAL;
  }
  if (PQntuples(r) != 1) {
    /* Deleted between the insert and the select: the transaction sees no row; going
     * round again inserts it. */
    PQclear(r);
    return SG_E_INTERNAL;
  }
  uint8_t have[32];
  bool same = strcmp(PQgetvalue(r, 0, col[0]), x->method) == 0 &&
              strcmp(PQgetvalue(r, 0, col[1]), x->path) == 0 &&
              sg__pg_bytes(r, 0, col[2], have, 32) == 0 && memcmp(have, x->body_hash, 32) == 0;
  bool in_flight = strcmp(PQgetvalue(r, 0, col[3]), "in_flight") == 0;
  /* The lease ran out, or its owner is a dead process of this host (seen at once). */
  bool expired = strcmp(PQgetvalue(r, 0, col[7]), "t") == 0 ||
                 (in_flight && sg__store_owner_dead(sg__pg_s(r, 0, col[8])));
  sg_err rc = SG_E_OK;
  if (expired) {
    /* The owner died (or ran past its lease): this request takes the key over. */
    PQclear(r);
    if (sg__pg_x(c,
                 "UPDATE idempotency SET method=$3, path=$4, body_hash=$5::bytea,"
                 " state='in_flight', status=NULL, body=NULL, headers=NULL,"
                 " created_at=$6::bigint, owner=$7, lease_until_ms=" SG__PG_NOW_MS "+$8::bigint"
                 " WHERE workspace_id=$1 AND key=$2",
                 8, p))
      return SG_E_INTERNAL;
    *x->state = SG_IDEM_PROCEED;
    return SG_E_OK;
  }
  if (!same) {
    *x->state = SG_IDEM_REUSED;
  } else if (in_flight) {
    *x->state = SG_IDEM_IN_FLIGHT;
  } else {
    *x->state = SG_IDEM_REPLAY;
    *x->status = (int)sg__pg_i(r, 0, col[4]);
    const char *b = sg__pg_s(r, 0, col[5]), *h = sg__pg_s(r, 0, col[6]);
    *x->body = strdup(b ? b : "");
    *x->headers = h ? strdup(h) : NULL;
    if (!*x->body) rc = SG_E_INTERNAL;
  }
  PQclear(r);
  return rc;
}

sg_err sg__pg_idem_begin(sg_store *base, const char *workspace_id, const char *key,
                         const char *method, const char *path, const uint8_t body_hash[32],
                         sg_idem_state *state, int *status, char **body, char **headers) {
  sg__pg *st = sg__pg_of(base);
  *body = *headers = NULL;
  begin_ctx x = {workspace_id, key,   method, path, st->owner,
                 body_hash,    state, status, body, headers};
  sg_err rc = sg__pg_tx(st, SG__PG_RC, begin_fn, &x);
  if (rc != SG_E_OK) {
    free(*body);
    free(*headers);
    *body = *headers = NULL;
  }
  return rc;
}

sg_err sg__pg_idem_finish(sg_store *base, const char *workspace_id, const char *key, int status,
                          const char *body, const char *headers) {
  /* A 5xx or 429 answer forgets the key (store.h): a retry runs the request again. */
  bool forget = status >= 500 || status == 429;
  char s[24];
  const char *p[] = {workspace_id, key, sg__pg_int(status, s), body, headers};
  sg_err rc;
  PGresult *r = sg__pg_one(sg__pg_of(base),
                           forget ? "DELETE FROM idempotency WHERE workspace_id=$1 AND key=$2"
                                  : "UPDATE idempotency SET state='done', status=$3::bigint,"
                                    " body=$4, headers=$5, owner=NULL, lease_until_ms=NULL"
                                    " WHERE workspace_id=$1 AND key=$2",
                           forget ? 2 : 5, p, &rc);
  PQclear(r);
  return r ? SG_E_OK : rc;
}
