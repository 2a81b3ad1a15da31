/*
 * PostgreSQL backend: workspaces, applications, secret and publishable keys,
 * subscriptions, token-minting checks and signing keys.
 */
#include <string.h>

#include "common/util.h"
#include "store/postgres/pg.h"
#include "store/rules.h"

/* Runs one write and maps its row count: SG_E_NOT_FOUND when it changed no row. */
static sg_err write_one(sg__pg *st, const char *sql, int n, const char *const *p) {
  sg_err rc;
  PGresult *r = sg__pg_one(st, sql, n, p, &rc);
  if (!r) return rc;
  rc = sg__pg_changed(r) > 0 ? SG_E_OK : SG_E_NOT_FOUND;
  PQclear(r);
  return rc;
}

sg_err sg__pg_workspace_create(sg_store *base, const char *name, json_t **out) {
  char id[32], now[24];
  sg_random_id("wsp_", id, sizeof id);
  const char *p[] = {id, name, sg__pg_int(sg_now_s(), now)};
  sg_err rc = write_one(sg__pg_of(base),
                        "INSERT INTO workspaces(id, name, created_at) VALUES($1, $2, $3)", 3, p);
  if (rc != SG_E_OK) return rc == SG_E_NOT_FOUND ? SG_E_INTERNAL : rc;
  *out = sg__store_simple_record(id, "active");
  return SG_E_OK;
}

static sg_err set_status(sg__pg *st, const char *sql, const char *id, const char *status,
                         json_t **out) {
  const char *p[] = {id, status};
  sg_err rc = write_one(st, sql, 2, p);
  if (rc == SG_E_OK) *out = sg__store_simple_record(id, status);
  return rc;
}

sg_err sg__pg_workspace_set_status(sg_store *base, const char *id, const char *status,
                                   json_t **out) {
  return set_status(sg__pg_of(base), "UPDATE workspaces SET status=$2 WHERE id=$1", id, status,
                    out);
}

sg_err sg__pg_application_create(sg_store *base, const char *workspace_id, const char *name,
                                 int64_t monthly_quota, json_t **out) {
  char id[32], now[24], quota[24];
  sg_random_id("app_", id, sizeof id);
  const char *p[] = {id, workspace_id, name, sg__pg_int(sg_now_s(), now),
                     monthly_quota >= 0 ? sg__pg_int(monthly_quota, quota) : NULL};
  /* INSERT … SELECT finds the workspace and inserts in one statement: no row means no
   * workspace. */
  sg_err rc = write_one(sg__pg_of(base),
                        "INSERT INTO applications(id, workspace_id, name, created_at,"
                        " monthly_quota) SELECT $1, id, $3, $4, $5::bigint FROM workspaces"
                        " WHERE id=$2",
                        5, p);
  if (rc != SG_E_OK) return rc;
  *out = sg__store_simple_record(id, "active");
  json_object_set_new(*out, "workspaceId", json_string(workspace_id));
  json_object_set_new(*out, "monthlyQuota",
                      monthly_quota >= 0 ? json_integer(monthly_quota) : json_null());
  return SG_E_OK;
}

sg_err sg__pg_application_set_status(sg_store *base, const char *id, const char *status,
                                     json_t **out) {
  return set_status(sg__pg_of(base), "UPDATE applications SET status=$2 WHERE id=$1", id, status,
                    out);
}

sg_err sg__pg_application_set_quota(sg_store *base, const char *id, int64_t monthly_quota,
                                    json_t **out) {
  char quota[24];
  const char *p[] = {id, monthly_quota >= 0 ? sg__pg_int(monthly_quota, quota) : NULL};
  sg_err rc = write_one(sg__pg_of(base),
                        "UPDATE applications SET monthly_quota=$2::bigint WHERE id=$1", 2, p);
  if (rc != SG_E_OK) return rc;
  *out = sg__store_simple_record(id, NULL);
  json_object_set_new(*out, "monthlyQuota",
                      monthly_quota >= 0 ? json_integer(monthly_quota) : json_null());
  return SG_E_OK;
}

typedef struct {
  const char *id, *application_id;
  const uint8_t *digest;
  int64_t max;
} skey_ctx;

static sg_err skey_create_fn(PGconn *c, void *vctx) {
  skey_ctx *x = vctx;
  /* The application row is locked against other key creates until commit, so the count
   * and the insert agree across processes. */
  const char *pa[] = {x->application_id};
  PGresult *r = sg__pg_q(c, "SELECT 1 FROM applications WHERE id=$1 FOR NO KEY UPDATE", 1, pa);
  if (!r) return SG_E_INTERNAL;
  bool found = PQntuples(r) == 1;
  PQclear(r);
  if (!found) return SG_E_NOT_FOUND;
  int full = sg__pg_at_limit(
      c, "SELECT count(*) FROM secret_keys WHERE application_id=$1 AND status='active'",
      x->application_id, x->max);
  if (full != 0) return full > 0 ? SG_E_SECRET_KEY_LIMIT : SG_E_INTERNAL;
  char hex[68], now[24];
  const char *p[] = {x->id, x->application_id, sg__pg_bytea(x->digest, 32, hex),
                     sg__pg_int(sg_now_s(), now)};
  return sg__pg_x(c,
                  "INSERT INTO secret_keys(id, application_id, digest, created_at)"
                  " VALUES($1, $2, $3::bytea, $4)",
                  4, p)
             ? SG_E_INTERNAL
             : SG_E_OK;
}

sg_err sg__pg_secret_key_create(sg_store *base, const char *application_id, const char *id,
                                const uint8_t digest[32]) {
  skey_ctx x = {id, application_id, digest, base->limits.secret_keys_per_application};
  return sg__pg_tx(sg__pg_of(base), SG__PG_RC, skey_create_fn, &x);
}

sg_err sg__pg_secret_key_revoke(sg_store *base, const char *id, json_t **out) {
  char now[24];
  const char *p[] = {id, sg__pg_int(sg_now_s(), now)};
  sg_err rc = write_one(sg__pg_of(base),
                        "UPDATE secret_keys SET status='revoked', revoked_at=$2 WHERE id=$1", 2, p);
  if (rc == SG_E_OK) *out = sg__store_simple_record(id, "revoked");
  return rc;
}

sg_err sg__pg_authenticate(sg_store *base, const char *key_id, const uint8_t digest[32],
                           sg_principal *out) {
  const char *p[] = {key_id};
  sg_err rc;
  PGresult *r = sg__pg_read(sg__pg_of(base),
                            "SELECT k.digest, k.status AS key_status, a.id AS application_id,"
                            " a.status AS application_status, w.id AS workspace_id,"
                            " w.status AS workspace_status, k.last_used_at"
                            " FROM secret_keys k JOIN applications a ON a.id = k.application_id"
                            " JOIN workspaces w ON w.id = a.workspace_id WHERE k.id=$1",
                            1, p, &rc);
  if (!r) return rc;
  rc = SG_E_INVALID_KEY;
  uint8_t have[32];
  static const char *const names[] = {
      "digest",       "key_status",       "application_id", "application_status",
      "workspace_id", "workspace_status", "last_used_at"};
  int col[7];
  if (sg__pg_cols(r, names, col, 7)) {
    rc = SG_E_INTERNAL;
  } else if (PQntuples(r) == 1 && sg__pg_bytes(r, 0, col[0], have, 32) == 0) {
    bool match = sg_ct_equal(have, digest, 32);
    bool active = strcmp(PQgetvalue(r, 0, col[1]), "active") == 0 &&
                  strcmp(PQgetvalue(r, 0, col[3]), "active") == 0 &&
                  strcmp(PQgetvalue(r, 0, col[5]), "active") == 0;
    if (match && active) {
      snprintf(out->key_id, sizeof out->key_id, "%s", key_id);
      snprintf(out->application_id, sizeof out->application_id, "%s", PQgetvalue(r, 0, col[2]));
      snprintf(out->workspace_id, sizeof out->workspace_id, "%s", PQgetvalue(r, 0, col[4]));
      out->key_last_used_s = sg__pg_i(r, 0, col[6]);
      rc = SG_E_OK;
    }
  }
  PQclear(r);
  return rc;
}

sg_err sg__pg_application_get(sg_store *base, const char *id, json_t **out) {
  const char *p[] = {id};
  sg_err rc;
  PGresult *r = sg__pg_read(sg__pg_of(base),
                            "SELECT id, workspace_id, status, monthly_quota FROM applications"
                            " WHERE id=$1",
                            1, p, &rc);
  if (!r) return rc;
  rc = SG_E_NOT_FOUND;
  static const char *const names[] = {"id", "workspace_id", "status", "monthly_quota"};
  int col[4];
  if (sg__pg_cols(r, names, col, 4)) {
    rc = SG_E_INTERNAL;
  } else if (PQntuples(r) == 1) {
    *out = sg__store_app_record(PQgetvalue(r, 0, col[0]), PQgetvalue(r, 0, col[1]),
                                PQgetvalue(r, 0, col[2]), !PQgetisnull(r, 0, col[3]),
                                sg__pg_i(r, 0, col[3]));
    rc = SG_E_OK;
  }
  PQclear(r);
  return rc;
}

sg_err sg__pg_workspace_get(sg_store *base, const char *id, json_t **out) {
  const char *p[] = {id};
  sg_err rc;
  PGresult *r =
      sg__pg_read(sg__pg_of(base), "SELECT id, status FROM workspaces WHERE id=$1", 1, p, &rc);
  if (!r) return rc;
  rc = SG_E_NOT_FOUND;
  static const char *const names[] = {"id", "status"};
  int col[2];
  if (sg__pg_cols(r, names, col, 2)) {
    rc = SG_E_INTERNAL;
  } else if (PQntuples(r) == 1) {
    *out = sg__store_simple_record(PQgetvalue(r, 0, col[0]), PQgetvalue(r, 0, col[1]));
    rc = SG_E_OK;
  }
  PQclear(r);
  return rc;
}

typedef struct {
  const char *id, *application_id, *list_id, *digest_hex, *origins;
  int64_t max;
} pkey_ctx;

static sg_err pkey_create_fn(PGconn *c, void *vctx) {
  pkey_ctx *x = vctx;
  const char *p[] = {x->application_id, x->list_id};
  /* The application row is locked so that the shared-list check, the count of its keys
   * and the insert agree (and against other key creates of the application). */
  PGresult *r =
      sg__pg_q(c, "SELECT workspace_id FROM applications WHERE id=$1 FOR NO KEY UPDATE", 1, p);
  if (!r) return SG_E_INTERNAL;
  bool found = PQntuples(r) == 1;
  PQclear(r);
  if (!found) return SG_E_NOT_FOUND;
  r = sg__pg_q(c,
               "SELECT a.workspace_id AS app_workspace_id, l.workspace_id AS list_workspace_id,"
               " l.visibility, EXISTS(SELECT 1 FROM subscriptions s"
               "        WHERE s.workspace_id=a.workspace_id"
               "        AND s.list_id=l.id AND s.status='active') AS subscribed"
               " FROM applications a, lists l WHERE a.id=$1 AND l.id=$2 FOR SHARE OF l",
               2, p);
  if (!r) return SG_E_INTERNAL;
  static const char *const names[] = {"app_workspace_id", "list_workspace_id", "visibility",
                                      "subscribed"};
  int col[4];
  if (sg__pg_cols(r, names, col, 4)) {
    PQclear(r);
    return SG_E_INTERNAL;
  }
  bool ok =
      PQntuples(r) == 1 &&
      sg__store_list_usable(PQgetvalue(r, 0, col[0]), PQgetvalue(r, 0, col[1]),
                            PQgetvalue(r, 0, col[2]), strcmp(PQgetvalue(r, 0, col[3]), "t") == 0);
  PQclear(r);
  if (!ok) return SG_E_INVALID_LIST;
  int full = sg__pg_at_limit(
      c, "SELECT count(*) FROM publishable_keys WHERE application_id=$1 AND status='active'",
      x->application_id, x->max);
  if (full != 0) return full > 0 ? SG_E_PUBLISHABLE_KEY_LIMIT : SG_E_INTERNAL;
  char now[24];
  const char *pi[] = {x->id,         x->application_id, x->list_id,
                      x->digest_hex, x->origins,        sg__pg_int(sg_now_s(), now)};
  return sg__pg_x(c,
                  "INSERT INTO publishable_keys(id, application_id, list_id, digest, origins,"
                  " created_at) VALUES($1, $2, $3, $4, $5, $6)",
                  6, pi)
             ? SG_E_INTERNAL
             : SG_E_OK;
}

sg_err sg__pg_publishable_key_create(sg_store *base, const char *id, const char *application_id,
                                     const char *list_id, const char *digest_hex,
                                     const json_t *origins, json_t **out) {
  char *enc = json_dumps(origins, JSON_COMPACT);
  if (!enc) return SG_E_INTERNAL;
  pkey_ctx x = {
      id, application_id, list_id, digest_hex, enc, base->limits.publishable_keys_per_application};
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RC, pkey_create_fn, &x);
  free(enc);
  if (rc == SG_E_OK)
    *out = sg__store_key_record(id, application_id, list_id, json_deep_copy(origins), "active");
  return rc;
}

sg_err sg__pg_publishable_key_revoke(sg_store *base, const char *id, json_t **out,
                                     char digest_hex[65]) {
  const char *p[] = {id};
  sg_err rc;
  PGresult *r = sg__pg_one(sg__pg_of(base),
                           "UPDATE publishable_keys SET status='revoked' WHERE id=$1"
                           " RETURNING application_id, list_id, digest, origins",
                           1, p, &rc);
  if (!r) return rc;
  rc = SG_E_NOT_FOUND;
  static const char *const names[] = {"application_id", "list_id", "digest", "origins"};
  int col[4];
  if (sg__pg_cols(r, names, col, 4)) {
    rc = SG_E_INTERNAL;
  } else if (PQntuples(r) == 1) {
    snprintf(digest_hex, 65, "%s", PQgetvalue(r, 0, col[2]));
    *out = sg__store_key_record(id, PQgetvalue(r, 0, col[0]), PQgetvalue(r, 0, col[1]),
                                json_loads(PQgetvalue(r, 0, col[3]), 0, NULL), "revoked");
    rc = SG_E_OK;
  }
  PQclear(r);
  return rc;
}

typedef struct {
  const char *id, *workspace_id, *list_id;
} sub_ctx;

static sg_err sub_create_fn(PGconn *c, void *vctx) {
  sub_ctx *x = vctx;
  const char *p[] = {x->workspace_id, x->list_id};
  PGresult *r = sg__pg_q(c, "SELECT 1 FROM workspaces WHERE id=$1 FOR SHARE", 1, p);
  if (!r) return SG_E_INTERNAL;
  bool found = PQntuples(r) == 1;
  PQclear(r);
  if (!found) return SG_E_NOT_FOUND;
  r = sg__pg_q(c, "SELECT workspace_id, visibility FROM lists WHERE id=$1 FOR SHARE", 1, p + 1);
  if (!r) return SG_E_INTERNAL;
  int cw = sg__pg_col(r, "workspace_id"), cv = sg__pg_col(r, "visibility");
  bool ok =
      cw >= 0 && cv >= 0 && PQntuples(r) == 1 &&
      sg__store_list_subscribable(x->workspace_id, PQgetvalue(r, 0, cw), PQgetvalue(r, 0, cv));
  PQclear(r);
  if (!ok) return SG_E_INVALID_LIST;
  char now[24];
  const char *pi[] = {x->id, x->workspace_id, x->list_id, sg__pg_int(sg_now_s(), now)};
  return sg__pg_x(c,
                  "INSERT INTO subscriptions(id, workspace_id, list_id, created_at)"
                  " VALUES($1, $2, $3, $4)",
                  4, pi)
             ? SG_E_INTERNAL
             : SG_E_OK;
}

sg_err sg__pg_subscription_create(sg_store *base, const char *workspace_id, const char *list_id,
                                  json_t **out) {
  char id[32];
  sg_random_id("sub_", id, sizeof id);
  sub_ctx x = {id, workspace_id, list_id};
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RC, sub_create_fn, &x);
  if (rc == SG_E_OK) *out = sg__store_subscription_record(id, workspace_id, list_id, "active");
  return rc;
}

sg_err sg__pg_subscription_cancel(sg_store *base, const char *id, json_t **out) {
  const char *p[] = {id};
  sg_err rc;
  PGresult *r = sg__pg_one(sg__pg_of(base),
                           "UPDATE subscriptions SET status='cancelled' WHERE id=$1"
                           " RETURNING workspace_id, list_id",
                           1, p, &rc);
  if (!r) return rc;
  rc = SG_E_NOT_FOUND;
  int cw = sg__pg_col(r, "workspace_id"), cl = sg__pg_col(r, "list_id");
  if (cw < 0 || cl < 0) {
    rc = SG_E_INTERNAL;
  } else if (PQntuples(r) == 1) {
    *out =
        sg__store_subscription_record(id, PQgetvalue(r, 0, cw), PQgetvalue(r, 0, cl), "cancelled");
    rc = SG_E_OK;
  }
  PQclear(r);
  return rc;
}

typedef struct {
  const char *workspace_id;
  const char *const *ids;
  size_t n;
} mintable_ctx;

static sg_err mintable_fn(PGconn *c, void *vctx) {
  mintable_ctx *x = vctx;
  for (size_t i = 0; i < x->n; i++) {
    const char *p[] = {x->ids[i], x->workspace_id};
    PGresult *r = sg__pg_q(c,
                           "SELECT l.workspace_id, l.visibility, EXISTS(SELECT 1 FROM"
                           " subscriptions s WHERE s.list_id=l.id AND s.workspace_id=$2 AND"
                           " s.status='active') AS subscribed FROM lists l WHERE l.id=$1",
                           2, p);
    if (!r) return SG_E_INTERNAL;
    static const char *const names[] = {"workspace_id", "visibility", "subscribed"};
    int col[3];
    bool ok =
        sg__pg_cols(r, names, col, 3) == 0 && PQntuples(r) == 1 &&
        sg__store_list_usable(x->workspace_id, PQgetvalue(r, 0, col[0]), PQgetvalue(r, 0, col[1]),
                              strcmp(PQgetvalue(r, 0, col[2]), "t") == 0);
    PQclear(r);
    if (!ok) return SG_E_INVALID_LIST;
  }
  return SG_E_OK;
}

sg_err sg__pg_lists_mintable(sg_store *base, const char *workspace_id, const char *const *ids,
                             size_t n) {
  mintable_ctx x = {workspace_id, ids, n};
  /* One snapshot for all the lists, as on SQLite. */
  return sg__pg_tx(sg__pg_of(base), SG__PG_RO, mintable_fn, &x);
}

typedef struct {
  const char *kid;
  const uint8_t *sk, *pk;
  int64_t now;
} sigkey_ctx;

static sg_err sigkey_add_fn(PGconn *c, void *vctx) {
  sigkey_ctx *x = vctx;
  char now[24], skhex[140], pkhex[68];
  const char *p[] = {sg__pg_int(x->now, now), x->kid, sg__pg_bytea(x->sk, 64, skhex),
                     sg__pg_bytea(x->pk, 32, pkhex)};
  if (sg__pg_x(c, "UPDATE signing_keys SET retired_at=$1 WHERE retired_at IS NULL", 1, p) ||
      sg__pg_x(c,
               "INSERT INTO signing_keys(kid, secret_key, public_key, created_at)"
               " VALUES($2, $3::bytea, $4::bytea, $1)",
               4, p))
    return SG_E_INTERNAL;
  return SG_E_OK;
}

sg_err sg__pg_signing_key_add(sg_store *base, const char *kid, const uint8_t sk[64],
                              const uint8_t pk[32], int64_t now) {
  sigkey_ctx x = {kid, sk, pk, now};
  return sg__pg_tx(sg__pg_of(base), SG__PG_RC, sigkey_add_fn, &x);
}

sg_err sg__pg_signing_key_current(sg_store *base, char kid[64], uint8_t sk[64]) {
  sg_err rc;
  PGresult *r = sg__pg_read(sg__pg_of(base),
                            "SELECT kid, secret_key FROM signing_keys WHERE retired_at IS NULL"
                            " ORDER BY created_at DESC, kid DESC LIMIT 1",
                            0, NULL, &rc);
  if (!r) return rc;
  rc = SG_E_TOKEN_MINTING_UNAVAILABLE;
  int ck = sg__pg_col(r, "kid"), cs = sg__pg_col(r, "secret_key");
  if (ck < 0 || cs < 0) {
    rc = SG_E_INTERNAL;
  } else if (PQntuples(r) == 1 && strlen(PQgetvalue(r, 0, ck)) < 64 &&
             sg__pg_bytes(r, 0, cs, sk, 64) == 0) {
    snprintf(kid, 64, "%s", PQgetvalue(r, 0, ck));
    rc = SG_E_OK;
  }
  PQclear(r);
  return rc;
}

sg_err sg__pg_signing_keys_public(sg_store *base, json_t **out) {
  sg_err rc;
  PGresult *r = sg__pg_read(sg__pg_of(base),
                            "SELECT kid, public_key, created_at, retired_at FROM signing_keys"
                            " ORDER BY created_at, kid",
                            0, NULL, &rc);
  if (!r) return rc;
  static const char *const names[] = {"kid", "public_key", "created_at", "retired_at"};
  int col[4];
  if (sg__pg_cols(r, names, col, 4)) {
    PQclear(r);
    return SG_E_INTERNAL;
  }
  json_t *arr = json_array();
  for (int i = 0; i < PQntuples(r); i++) {
    uint8_t pk[32];
    if (sg__pg_bytes(r, i, col[1], pk, 32)) continue;
    json_array_append_new(
        arr, sg__store_signing_key_record(PQgetvalue(r, i, col[0]), pk, sg__pg_i(r, i, col[2]),
                                          !PQgetisnull(r, i, col[3]), sg__pg_i(r, i, col[3])));
  }
  PQclear(r);
  *out = arr;
  return SG_E_OK;
}
