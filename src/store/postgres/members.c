/*
 * PostgreSQL backend: dashboard members, sessions, the audit log, the dashboard's
 * application and key listings, and `suggestd admin … list` (docs/DESIGN.md §7; the SQLite
 * files members.c and admin_list.c say what each one promises).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/members.h"
#include "store/postgres/pg.h"
#include "store/rules.h"

#define MEMBER_COLS "id, workspace_id, email, role, status, created_at"

static const char *const member_cols[] = {"id",   "workspace_id", "email",
                                          "role", "status",       "created_at"};

static json_t *member_row(const PGresult *r, int i) {
  int c[6];
  if (sg__pg_cols(r, member_cols, c, 6)) return NULL;
  return sg__store_member_record(PQgetvalue(r, i, c[0]), PQgetvalue(r, i, c[1]),
                                 PQgetvalue(r, i, c[2]), PQgetvalue(r, i, c[3]),
                                 PQgetvalue(r, i, c[4]), sg__pg_i(r, i, c[5]));
}

static sg_err member_load(PGconn *c, const char *workspace_id, const char *id, json_t **out) {
  const char *p[] = {id, workspace_id};
  return sg__pg_row(c,
                    "SELECT " MEMBER_COLS " FROM members WHERE id=$1"
                    " AND ($2::text IS NULL OR workspace_id=$2)",
                    2, p, member_row, SG_E_NOT_FOUND, out);
}

typedef struct {
  const char *workspace_id, *id, *email, *hash;
  sg_role role;
  json_t *out;
  int64_t max_members; /* member_create only */
} member_ctx;

static sg_err member_result(sg_err rc, member_ctx *x, json_t **out) {
  if (rc == SG_E_OK)
    *out = x->out;
  else
    json_decref(x->out);
  return rc;
}

static sg_err create_fn(PGconn *c, void *vctx) {
  member_ctx *x = vctx;
  json_decref(x->out);
  x->out = NULL;
  const char *pw[] = {x->workspace_id};
  /* Locked against other member creates of the workspace, so the count below holds. */
  PGresult *r = sg__pg_q(c, "SELECT 1 FROM workspaces WHERE id=$1 FOR NO KEY UPDATE", 1, pw);
  if (!r) return SG_E_INTERNAL;
  bool found = PQntuples(r) == 1;
  PQclear(r);
  if (!found) return SG_E_NOT_FOUND;
  /* Creates of this email in other workspaces wait for each other, so the per-email cap
   * below holds (a two-key advisory lock: its own space, apart from the one-key locks). */
  const char *pe[] = {x->email};
  if (sg__pg_x(c, "SELECT pg_advisory_xact_lock(7430298, hashtext($1))", 1, pe))
    return SG_E_INTERNAL;
  /* Only this workspace's members decide member_exists (the unique index on
   * (workspace_id, email) of active members settles a race with the insert below). */
  const char *pd[] = {x->workspace_id, x->email};
  r = sg__pg_q(c, "SELECT 1 FROM members WHERE workspace_id=$1 AND email=$2 AND status='active'", 2,
               pd);
  if (!r) return SG_E_INTERNAL;
  bool dup = PQntuples(r) > 0;
  PQclear(r);
  if (dup) return SG_E_MEMBER_EXISTS;
  int full =
      sg__pg_at_limit(c, "SELECT count(*) FROM members WHERE workspace_id=$1 AND status='active'",
                      x->workspace_id, x->max_members);
  if (full != 0) return full > 0 ? SG_E_MEMBER_LIMIT : SG_E_INTERNAL;
  full = sg__pg_at_limit(c, "SELECT count(*) FROM members WHERE email=$1 AND status='active'",
                         x->email, SG_MEMBERSHIPS_PER_EMAIL);
  if (full != 0) return full > 0 ? SG_E_EMAIL_MEMBERSHIP_LIMIT : SG_E_INTERNAL;
  char now[24];
  const char *p[] = {x->id,    x->workspace_id,
                     x->email, sg_role_name(x->role),
                     x->hash,  sg__pg_int(sg_now_s(), now)};
  r = sg__pg_q(c,
               "INSERT INTO members(id, workspace_id, email, role, password_hash, created_at,"
               " updated_at) VALUES($1, $2, $3, $4, $5, $6::bigint, $6::bigint)"
               " ON CONFLICT DO NOTHING",
               6, p);
  if (!r) return SG_E_INTERNAL;
  int64_t n = sg__pg_changed(r);
  PQclear(r);
  if (n != 1) return SG_E_MEMBER_EXISTS;
  return member_load(c, NULL, x->id, &x->out);
}

sg_err sg__pg_member_create(sg_store *base, const char *workspace_id, const char *email,
                            sg_role role, const char *password_hash, json_t **out) {
  *out = NULL;
  if (role == SG_ROLE_NONE) return SG_E_INVALID_REQUEST;
  char id[32];
  sg_random_id("mbr_", id, sizeof id);
  member_ctx x = {
      workspace_id, id, email, password_hash, role, NULL, base->limits.members_per_workspace};
  return member_result(sg__pg_tx(sg__pg_of(base), SG__PG_RC, create_fn, &x), &x, out);
}

sg_err sg__pg_member_for_signin(sg_store *base, const char *email, sg_signin_candidate *out,
                                size_t *n) {
  char lim[24];
  const char *p[] = {email, sg__pg_int(SG_MEMBERSHIPS_PER_EMAIL, lim)};
  sg_err rc;
  *n = 0;
  PGresult *r = sg__pg_read(sg__pg_of(base),
                            "SELECT m.id, m.workspace_id, m.email, m.role, m.password_hash,"
                            " substr(w.name, 1, 100) AS workspace_name"
                            " FROM members m JOIN workspaces w ON w.id=m.workspace_id"
                            " WHERE m.email=$1 AND m.status='active' AND w.status='active'"
                            " ORDER BY m.created_at, m.id LIMIT $2::bigint",
                            2, p, &rc);
  if (!r) return rc;
  static const char *const names[] = {"id",   "workspace_id",  "email",
                                      "role", "password_hash", "workspace_name"};
  int col[6];
  rc = sg__pg_cols(r, names, col, 6) ? SG_E_INTERNAL : SG_E_OK;
  int rows = rc == SG_E_OK ? PQntuples(r) : 0;
  for (int i = 0; i < rows && *n < SG_MEMBERSHIPS_PER_EMAIL; i++) {
    sg_signin_candidate *c = &out[*n];
    snprintf(c->m.id, sizeof c->m.id, "%s", PQgetvalue(r, i, col[0]));
    snprintf(c->m.workspace_id, sizeof c->m.workspace_id, "%s", PQgetvalue(r, i, col[1]));
    snprintf(c->m.email, sizeof c->m.email, "%s", PQgetvalue(r, i, col[2]));
    c->m.role = sg_role_parse(PQgetvalue(r, i, col[3]));
    snprintf(c->hash, sizeof c->hash, "%s", PQgetvalue(r, i, col[4]));
    snprintf(c->workspace_name, sizeof c->workspace_name, "%s", PQgetvalue(r, i, col[5]));
    if (c->m.role == SG_ROLE_NONE) rc = SG_E_INTERNAL;
    (*n)++;
  }
  PQclear(r);
  if (rc != SG_E_OK) *n = 0;
  return rc;
}

/* Runs a read bound to one text parameter and builds each row (at most 1000). */
static sg_err read_rows(sg__pg *st, const char *sql, const char *p1,
                        json_t *(*row)(const PGresult *r, int i), json_t **out) {
  const char *p[] = {p1};
  sg_err rc;
  PGresult *r = sg__pg_one(st, sql, 1, p, &rc);
  if (!r) return rc;
  bool more;
  *out = sg__pg_page(r, 1000, row, &more);
  PQclear(r);
  return *out ? SG_E_OK : SG_E_INTERNAL;
}

sg_err sg__pg_member_list(sg_store *base, const char *workspace_id, json_t **out) {
  return read_rows(sg__pg_of(base),
                   "SELECT " MEMBER_COLS " FROM members WHERE workspace_id=$1"
                   " AND status='active' ORDER BY email, id LIMIT 1001",
                   workspace_id, member_row, out);
}

typedef struct {
  const char *workspace_id, *id;
  json_t *out;
} get_ctx;

static sg_err get_fn(PGconn *c, void *vctx) {
  get_ctx *x = vctx;
  json_decref(x->out);
  x->out = NULL;
  return member_load(c, x->workspace_id, x->id, &x->out);
}

sg_err sg__pg_member_get(sg_store *base, const char *workspace_id, const char *id, json_t **out) {
  get_ctx x = {workspace_id, id, NULL};
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RO, get_fn, &x);
  if (rc == SG_E_OK)
    *out = x.out;
  else
    json_decref(x.out);
  return rc;
}

/* Sets a member's role, or (SG_ROLE_NONE) disables it and deletes its sessions, keeping
 * the workspace's last active owner. The owners of the workspace are locked first, so
 * two demotions of the last two owners cannot both pass the check. */
static sg_err change_fn(PGconn *c, void *vctx) {
  member_ctx *x = vctx;
  json_decref(x->out);
  x->out = NULL;
  const char *p[] = {x->id, x->workspace_id};
  PGresult *r = sg__pg_q(c,
                         "SELECT workspace_id, role FROM members WHERE id=$1 AND status='active'"
                         " AND ($2::text IS NULL OR workspace_id=$2)",
                         2, p);
  if (!r) return SG_E_INTERNAL;
  static const char *const names[] = {"workspace_id", "role"};
  int col[2];
  if (sg__pg_cols(r, names, col, 2)) {
    PQclear(r);
    return SG_E_INTERNAL;
  }
  if (PQntuples(r) != 1) {
    PQclear(r);
    return SG_E_NOT_FOUND;
  }
  char ws[64];
  snprintf(ws, sizeof ws, "%s", PQgetvalue(r, 0, col[0]));
  bool is_owner = strcmp(PQgetvalue(r, 0, col[1]), "owner") == 0;
  PQclear(r);
  if (is_owner && x->role != SG_ROLE_OWNER) {
    const char *po[] = {ws, x->id};
    r = sg__pg_q(c,
                 "SELECT id FROM members WHERE workspace_id=$1 AND role='owner' AND"
                 " status='active' ORDER BY id FOR UPDATE",
                 1, po);
    if (!r) return SG_E_INTERNAL;
    int ci = sg__pg_col(r, "id");
    bool others = false;
    for (int i = 0; ci >= 0 && i < PQntuples(r); i++)
      if (strcmp(PQgetvalue(r, i, ci), x->id) != 0) others = true;
    PQclear(r);
    if (ci < 0) return SG_E_INTERNAL;
    if (!others) return SG_E_LAST_OWNER;
  }
  char now[24];
  const char *pu[] = {x->id, x->role != SG_ROLE_NONE ? sg_role_name(x->role) : NULL,
                      sg__pg_int(sg_now_s(), now)};
  if (x->role != SG_ROLE_NONE) {
    if (sg__pg_x(c, "UPDATE members SET role=$2, updated_at=$3::bigint WHERE id=$1", 3, pu))
      return SG_E_INTERNAL;
  } else {
    const char *pd[] = {x->id, pu[2]};
    if (sg__pg_x(c, "UPDATE members SET status='disabled', updated_at=$2::bigint WHERE id=$1", 2,
                 pd) ||
        sg__pg_x(c, "DELETE FROM sessions WHERE member_id=$1", 1, pd))
      return SG_E_INTERNAL;
  }
  return member_load(c, NULL, x->id, &x->out);
}

sg_err sg__pg_member_set_role(sg_store *base, const char *workspace_id, const char *id,
                              sg_role role, json_t **out) {
  *out = NULL;
  if (role == SG_ROLE_NONE) return SG_E_INVALID_REQUEST;
  member_ctx x = {workspace_id, id, NULL, NULL, role, NULL, 0};
  return member_result(sg__pg_tx(sg__pg_of(base), SG__PG_RC, change_fn, &x), &x, out);
}

sg_err sg__pg_member_disable(sg_store *base, const char *workspace_id, const char *id,
                             json_t **out) {
  *out = NULL;
  member_ctx x = {workspace_id, id, NULL, NULL, SG_ROLE_NONE, NULL, 0};
  return member_result(sg__pg_tx(sg__pg_of(base), SG__PG_RC, change_fn, &x), &x, out);
}

typedef struct {
  const char *id, *hash;
  const uint8_t *keep;
} password_ctx;

static sg_err password_fn(PGconn *c, void *vctx) {
  password_ctx *x = vctx;
  char now[24], hex[68];
  const char *p[] = {x->id, x->hash, sg__pg_int(sg_now_s(), now)};
  PGresult *r = sg__pg_q(c,
                         "UPDATE members SET password_hash=$2, updated_at=$3::bigint WHERE id=$1"
                         " AND status='active'",
                         3, p);
  if (!r) return SG_E_INTERNAL;
  int64_t n = sg__pg_changed(r);
  PQclear(r);
  if (n != 1) return SG_E_NOT_FOUND;
  const char *pd[] = {x->id, x->keep ? sg__pg_bytea(x->keep, 32, hex) : NULL};
  return sg__pg_x(c,
                  "DELETE FROM sessions WHERE member_id=$1 AND ($2::bytea IS NULL OR digest<>$2)",
                  2, pd)
             ? SG_E_INTERNAL
             : SG_E_OK;
}

sg_err sg__pg_member_set_password(sg_store *base, const char *id, const char *password_hash,
                                  const uint8_t *keep_digest) {
  password_ctx x = {id, password_hash, keep_digest};
  return sg__pg_tx(sg__pg_of(base), SG__PG_RC, password_fn, &x);
}

/* ---- sessions ------------------------------------------------------------------------------ */

typedef struct {
  const char *digest, *member_id, *now, *stale;
} session_ctx;

static sg_err session_create_fn(PGconn *c, void *vctx) {
  session_ctx *x = vctx;
  const char *pg[] = {x->stale};
  const char *p[] = {x->digest, x->member_id, x->now};
  if (sg__pg_x(c, "DELETE FROM sessions WHERE last_seen_ms<$1::bigint", 1, pg) ||
      sg__pg_x(c,
               "INSERT INTO sessions(digest, member_id, created_ms, last_seen_ms)"
               " VALUES($1::bytea, $2, $3::bigint, $3::bigint)",
               3, p))
    return SG_E_INTERNAL;
  return SG_E_OK;
}

sg_err sg__pg_session_create(sg_store *base, const uint8_t digest[32], const char *member_id,
                             int64_t now_ms, int64_t stale_ms) {
  char hex[68], now[24], stale[24];
  session_ctx x = {sg__pg_bytea(digest, 32, hex), member_id, sg__pg_int(now_ms, now),
                   sg__pg_int(stale_ms, stale)};
  return sg__pg_tx(sg__pg_of(base), SG__PG_RC, session_create_fn, &x);
}

/* Runs a write whose $1 is the digest (and $2 a time when given). */
static sg_err digest_write(sg__pg *st, const char *sql, const uint8_t digest[32],
                           const int64_t *ms) {
  char hex[68], t[24];
  const char *p[] = {sg__pg_bytea(digest, 32, hex), ms ? sg__pg_int(*ms, t) : NULL};
  sg_err rc;
  PGresult *r = sg__pg_one(st, sql, ms ? 2 : 1, p, &rc);
  PQclear(r);
  return r ? SG_E_OK : rc;
}

sg_err sg__pg_session_lookup(sg_store *base, const uint8_t digest[32], int64_t now_ms,
                             int64_t idle_ms, sg_member *member, int64_t *last_seen_ms) {
  sg__pg *st = sg__pg_of(base);
  char hex[68];
  const char *p[] = {sg__pg_bytea(digest, 32, hex)};
  sg_err rc;
  /* By the digest itself, the primary key (see the SQLite backend for why no
   * constant-time compare is needed). */
  PGresult *r = sg__pg_read(st,
                            "SELECT m.id, m.workspace_id, m.email, m.role, s.last_seen_ms"
                            " FROM sessions s JOIN members m ON m.id=s.member_id"
                            " JOIN workspaces w ON w.id=m.workspace_id WHERE s.digest=$1::bytea"
                            " AND m.status='active' AND w.status='active'",
                            1, p, &rc);
  if (!r) return rc;
  static const char *const names[] = {"id", "workspace_id", "email", "role", "last_seen_ms"};
  int col[5];
  rc = SG_E_NOT_FOUND;
  bool expired = false;
  if (sg__pg_cols(r, names, col, 5)) {
    rc = SG_E_INTERNAL;
  } else if (PQntuples(r) == 1) {
    int64_t seen = sg__pg_i(r, 0, col[4]);
    if (now_ms - seen >= idle_ms) {
      expired = true;
    } else {
      snprintf(member->id, sizeof member->id, "%s", PQgetvalue(r, 0, col[0]));
      snprintf(member->workspace_id, sizeof member->workspace_id, "%s", PQgetvalue(r, 0, col[1]));
      snprintf(member->email, sizeof member->email, "%s", PQgetvalue(r, 0, col[2]));
      member->role = sg_role_parse(PQgetvalue(r, 0, col[3]));
      *last_seen_ms = seen;
      rc = member->role == SG_ROLE_NONE ? SG_E_INTERNAL : SG_E_OK;
    }
  }
  PQclear(r);
  if (expired) digest_write(st, "DELETE FROM sessions WHERE digest=$1::bytea", digest, NULL);
  return rc;
}

sg_err sg__pg_session_touch(sg_store *base, const uint8_t digest[32], int64_t now_ms) {
  return digest_write(sg__pg_of(base),
                      "UPDATE sessions SET last_seen_ms=$2::bigint WHERE digest=$1::bytea"
                      " AND last_seen_ms<$2::bigint",
                      digest, &now_ms);
}

sg_err sg__pg_session_delete(sg_store *base, const uint8_t digest[32]) {
  return digest_write(sg__pg_of(base), "DELETE FROM sessions WHERE digest=$1::bytea", digest, NULL);
}

sg_err sg__pg_session_delete_all(sg_store *base, const char *member_id, int64_t *n) {
  const char *p[] = {member_id};
  sg_err rc;
  PGresult *r = sg__pg_one(sg__pg_of(base), "DELETE FROM sessions WHERE member_id=$1", 1, p, &rc);
  if (!r) return rc;
  *n = sg__pg_changed(r);
  PQclear(r);
  return SG_E_OK;
}

/* ---- audit log ------------------------------------------------------------------------------ */

sg_err sg__pg_audit_add(sg_store *base, const sg_audit_entry *e) {
  char *details = e->details ? json_dumps(e->details, JSON_COMPACT) : NULL;
  char status[24], at[24];
  const char *p[] = {e->workspace_id,
                     e->actor,
                     e->actor_email,
                     e->action,
                     e->target,
                     e->request_id,
                     sg__pg_int(e->status, status),
                     details,
                     sg__pg_int(sg_now_ms(), at)};
  sg_err rc;
  PGresult *r = sg__pg_one(sg__pg_of(base),
                           "INSERT INTO audit(workspace_id, actor, actor_email, action, target,"
                           " request_id, status, details, at_ms) VALUES($1, $2, $3, $4, $5, $6,"
                           " $7::bigint, $8, $9::bigint)",
                           9, p, &rc);
  PQclear(r);
  free(details);
  return r ? SG_E_OK : rc;
}

static const char *const audit_cols[] = {"seq",        "actor",  "actor_email", "action", "target",
                                         "request_id", "status", "details",     "at_ms"};

static json_t *audit_row(const PGresult *r, int i) {
  int c[9];
  if (sg__pg_cols(r, audit_cols, c, 9)) return NULL;
  sg__store_audit_row row = {
      .seq = sg__pg_i(r, i, c[0]),
      .actor = sg__pg_s(r, i, c[1]),
      .actor_email = sg__pg_s(r, i, c[2]),
      .action = sg__pg_s(r, i, c[3]),
      .target = sg__pg_s(r, i, c[4]),
      .request_id = sg__pg_s(r, i, c[5]),
      .status = (int)sg__pg_i(r, i, c[6]),
      .details = sg__pg_s(r, i, c[7]),
      .at_ms = sg__pg_i(r, i, c[8]),
  };
  return sg__store_audit_record(&row);
}

sg_err sg__pg_audit_page(sg_store *base, const char *workspace_id, size_t limit,
                         const json_t *after, json_t **data, bool *more) {
  char before[24], lim[24];
  const char *p[] = {
      workspace_id,
      sg__pg_int(after ? json_integer_value(json_array_get(after, 0)) : INT64_MAX, before),
      sg__pg_int((int64_t)limit + 1, lim)};
  sg_err rc;
  PGresult *r = sg__pg_read(sg__pg_of(base),
                            "SELECT seq, actor, actor_email, action, target, request_id, status,"
                            " details, at_ms FROM audit WHERE workspace_id=$1 AND seq<$2::bigint"
                            " ORDER BY seq DESC LIMIT $3::bigint",
                            3, p, &rc);
  if (!r) return rc;
  *data = sg__pg_page(r, limit, audit_row, more);
  PQclear(r);
  return *data ? SG_E_OK : SG_E_INTERNAL;
}

/* ---- the applications area ------------------------------------------------------------------ */

json_t *sg__pg_ts(const PGresult *r, int i, int col) {
  if (PQgetisnull(r, i, col)) return json_null();
  char buf[32];
  sg_rfc3339(sg__pg_i(r, i, col), buf);
  return json_string(buf);
}

static json_t *app_row(const PGresult *r, int i) {
  static const char *const names[] = {"id", "name", "status", "monthly_quota", "created_at"};
  int c[5];
  if (sg__pg_cols(r, names, c, 5)) return NULL;
  return json_pack("{s:s,s:s,s:s,s:o,s:o}", "id", PQgetvalue(r, i, c[0]), "name",
                   PQgetvalue(r, i, c[1]), "status", PQgetvalue(r, i, c[2]), "monthlyQuota",
                   PQgetisnull(r, i, c[3]) ? json_null() : json_integer(sg__pg_i(r, i, c[3])),
                   "createdAt", sg__pg_ts(r, i, c[4]));
}

sg_err sg__pg_application_list(sg_store *base, const char *workspace_id, json_t **out) {
  return read_rows(sg__pg_of(base),
                   "SELECT id, name, status, monthly_quota, created_at FROM applications"
                   " WHERE workspace_id=$1 ORDER BY created_at, id LIMIT 1001",
                   workspace_id, app_row, out);
}

sg_err sg__pg_application_page(sg_store *base, const char *workspace_id, size_t limit,
                               const json_t *after, json_t **data, bool *more) {
  /* The cursor names the page's last application; its (created_at, id) is the key. */
  char lim[24];
  const char *p[] = {workspace_id, sg__pg_int((int64_t)limit + 1, lim),
                     after ? json_string_value(json_array_get(after, 0)) : NULL};
  sg_err rc;
  PGresult *r = sg__pg_read(
      sg__pg_of(base),
      after ? "SELECT a.id, a.name, a.status, a.monthly_quota, a.created_at FROM applications a"
              " JOIN applications k ON k.id=$3 AND k.workspace_id=$1 WHERE a.workspace_id=$1"
              " AND (a.created_at, a.id) > (k.created_at, k.id)"
              " ORDER BY a.created_at, a.id LIMIT $2::bigint"
            : "SELECT id, name, status, monthly_quota, created_at FROM applications"
              " WHERE workspace_id=$1 ORDER BY created_at, id LIMIT $2::bigint",
      after ? 3 : 2, p, &rc);
  if (!r) return rc;
  *data = sg__pg_page(r, limit, app_row, more);
  PQclear(r);
  return *data ? SG_E_OK : SG_E_INTERNAL;
}

/* SG_E_OK when sql ($1, $2) finds a row, SG_E_NOT_FOUND when not. */
static sg_err exists2(sg__pg *st, const char *sql, const char *a, const char *b) {
  const char *p[] = {a, b};
  sg_err rc;
  PGresult *r = sg__pg_one(st, sql, 2, p, &rc);
  if (!r) return rc;
  rc = PQntuples(r) > 0 ? SG_E_OK : SG_E_NOT_FOUND;
  PQclear(r);
  return rc;
}

sg_err sg__pg_application_in_workspace(sg_store *base, const char *workspace_id,
                                       const char *application_id) {
  return exists2(sg__pg_of(base), "SELECT 1 FROM applications WHERE id=$1 AND workspace_id=$2",
                 application_id, workspace_id);
}

static json_t *secret_key_row(const PGresult *r, int i) {
  static const char *const names[] = {"id", "status", "created_at", "last_used_at", "revoked_at"};
  int c[5];
  if (sg__pg_cols(r, names, c, 5)) return NULL;
  return json_pack("{s:s,s:s,s:o,s:o,s:o}", "id", PQgetvalue(r, i, c[0]), "status",
                   PQgetvalue(r, i, c[1]), "createdAt", sg__pg_ts(r, i, c[2]), "lastUsedAt",
                   sg__pg_ts(r, i, c[3]), "revokedAt", sg__pg_ts(r, i, c[4]));
}

sg_err sg__pg_secret_key_list(sg_store *base, const char *application_id, json_t **out) {
  return read_rows(sg__pg_of(base),
                   "SELECT id, status, created_at, last_used_at, revoked_at FROM secret_keys"
                   " WHERE application_id=$1 ORDER BY created_at DESC, id LIMIT 1001",
                   application_id, secret_key_row, out);
}

static sg_err key_workspace(sg__pg *st, const char *sql, const char *key_id, char ws[64]) {
  const char *p[] = {key_id};
  sg_err rc;
  PGresult *r = sg__pg_one(st, sql, 1, p, &rc);
  if (!r) return rc;
  int col = sg__pg_col(r, "workspace_id");
  rc = col < 0 ? SG_E_INTERNAL : SG_E_NOT_FOUND;
  if (col >= 0 && PQntuples(r) == 1) {
    snprintf(ws, 64, "%s", PQgetvalue(r, 0, col));
    rc = SG_E_OK;
  }
  PQclear(r);
  return rc;
}

sg_err sg__pg_secret_key_workspace(sg_store *base, const char *key_id, char ws[64]) {
  return key_workspace(sg__pg_of(base),
                       "SELECT a.workspace_id FROM secret_keys k JOIN applications a"
                       " ON a.id=k.application_id WHERE k.id=$1",
                       key_id, ws);
}

sg_err sg__pg_publishable_key_workspace(sg_store *base, const char *key_id, char ws[64]) {
  return key_workspace(sg__pg_of(base),
                       "SELECT a.workspace_id FROM publishable_keys k JOIN applications a"
                       " ON a.id=k.application_id WHERE k.id=$1",
                       key_id, ws);
}

sg_err sg__pg_secret_key_touch(sg_store *base, const char *key_id, int64_t now_s) {
  char now[24];
  const char *p[] = {key_id, sg__pg_int(now_s, now)};
  sg_err rc;
  PGresult *r = sg__pg_one(sg__pg_of(base),
                           "UPDATE secret_keys SET last_used_at=$2::bigint WHERE id=$1", 2, p, &rc);
  PQclear(r);
  return r ? SG_E_OK : rc;
}

static json_t *pk_row(const PGresult *r, int i) {
  static const char *const names[] = {"id", "list_id", "origins", "status", "created_at"};
  int c[5];
  if (sg__pg_cols(r, names, c, 5)) return NULL;
  json_t *origins = json_loads(PQgetvalue(r, i, c[2]), 0, NULL);
  return json_pack("{s:s,s:s,s:o,s:s,s:o}", "id", PQgetvalue(r, i, c[0]), "listId",
                   PQgetvalue(r, i, c[1]), "origins", origins ? origins : json_array(), "status",
                   PQgetvalue(r, i, c[3]), "createdAt", sg__pg_ts(r, i, c[4]));
}

sg_err sg__pg_publishable_key_list(sg_store *base, const char *application_id, json_t **out) {
  return read_rows(sg__pg_of(base),
                   "SELECT id, list_id, origins, status, created_at FROM publishable_keys"
                   " WHERE application_id=$1 ORDER BY created_at DESC, id LIMIT 1001",
                   application_id, pk_row, out);
}
