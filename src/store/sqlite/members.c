/*
 * SQLite backend: dashboard members, sign-in sessions and the audit log (docs/DESIGN.md §7).
 */
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "store/members.h"
#include "store/sqlite/sqlite_store.h"

#define MEMBER_COLS "id, workspace_id, email, role, status, created_at"

static json_t *member_row(sqlite3_stmt *s) {
  return sg__store_member_record(sg__sq_col(s, 0), sg__sq_col(s, 1), sg__sq_col(s, 2),
                                 sg__sq_col(s, 3), sg__sq_col(s, 4), sqlite3_column_int64(s, 5));
}

/* Loads one member record of the workspace (NULL: any) with st->mu held. */
static sg_err member_load(sg__sq *st, const char *workspace_id, const char *id, json_t **out) {
  static const char q[] = "SELECT " MEMBER_COLS " FROM members WHERE id=?1"
                          " AND (?2 IS NULL OR workspace_id=?2)";
  sqlite3_stmt *s = sg__sq_prep(st, q);
  if (!s) return SG_E_INTERNAL;
  sg__sq_text(s, 1, id);
  sg__sq_text(s, 2, workspace_id);
  int step = sqlite3_step(s);
  sg_err rc = step == SQLITE_ROW ? SG_E_OK : step == SQLITE_DONE ? SG_E_NOT_FOUND : SG_E_INTERNAL;
  if (rc == SG_E_OK) *out = member_row(s);
  sqlite3_reset(s);
  return rc;
}

sg_err sg__sqlite_member_create(sg_store *base, const char *workspace_id, const char *email,
                                sg_role role, const char *password_hash, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q_ws[] = "SELECT 1 FROM workspaces WHERE id=?";
  static const char q_dup[] =
      "SELECT 1 FROM members WHERE workspace_id=?1 AND email=?2 AND status='active'";
  static const char q_emails[] = "SELECT count(*) FROM members WHERE email=?1 AND status='active'";
  static const char q_ins[] = "INSERT INTO members(id, workspace_id, email, role, password_hash,"
                              " created_at, updated_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?6)";
  *out = NULL;
  if (role == SG_ROLE_NONE) return SG_E_INVALID_REQUEST;
  char id[32];
  sg_random_id("mbr_", id, sizeof id);
  sg_err rc = SG_E_INTERNAL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  int found = sg__sq_exists(st, q_ws, workspace_id, NULL);
  if (found <= 0) {
    if (found == 0) rc = SG_E_NOT_FOUND;
    goto end;
  }
  /* Only this workspace's members decide member_exists; other workspaces matter only
   * through the per-email cap, checked last. */
  int dup = sg__sq_exists(st, q_dup, workspace_id, email);
  if (dup != 0) {
    if (dup == 1) rc = SG_E_MEMBER_EXISTS;
    goto end;
  }
  static const char q_count[] =
      "SELECT count(*) FROM members WHERE workspace_id=?1 AND status='active'";
  int full = sg__sq_at_limit(st, q_count, workspace_id, base->limits.members_per_workspace);
  if (full != 0) {
    if (full > 0) rc = SG_E_MEMBER_LIMIT;
    goto end;
  }
  full = sg__sq_at_limit(st, q_emails, email, SG_MEMBERSHIPS_PER_EMAIL);
  if (full != 0) {
    if (full > 0) rc = SG_E_EMAIL_MEMBERSHIP_LIMIT;
    goto end;
  }
  sqlite3_stmt *s = sg__sq_prep(st, q_ins);
  if (!s) goto end;
  sg__sq_text(s, 1, id);
  sg__sq_text(s, 2, workspace_id);
  sg__sq_text(s, 3, email);
  sg__sq_text(s, 4, sg_role_name(role));
  sg__sq_text(s, 5, password_hash);
  sqlite3_bind_int64(s, 6, sg_now_s());
  if (sg__sq_run(st, s) != 1) goto end;
  rc = member_load(st, NULL, id, out);
end:
  rc = sg__sq_end(st, rc);
  if (rc != SG_E_OK && *out) {
    json_decref(*out);
    *out = NULL;
  }
out:
  pthread_mutex_unlock(&st->mu);
  return rc;
}

sg_err sg__sqlite_member_for_signin(sg_store *base, const char *email, sg_signin_candidate *out,
                                    size_t *n) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "SELECT m.id, m.workspace_id, m.email, m.role, m.password_hash,"
                          " substr(w.name, 1, 100)"
                          " FROM members m JOIN workspaces w ON w.id=m.workspace_id"
                          " WHERE m.email=?1 AND m.status='active' AND w.status='active'"
                          " ORDER BY m.created_at, m.id LIMIT ?2";
  sg_err rc = SG_E_OK;
  *n = 0;
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, q);
  if (!s) {
    rc = SG_E_INTERNAL;
    goto out;
  }
  sg__sq_text(s, 1, email);
  sqlite3_bind_int64(s, 2, SG_MEMBERSHIPS_PER_EMAIL);
  int step = SQLITE_DONE;
  while (*n < SG_MEMBERSHIPS_PER_EMAIL && (step = sqlite3_step(s)) == SQLITE_ROW) {
    sg_signin_candidate *c = &out[*n];
    snprintf(c->m.id, sizeof c->m.id, "%s", sg__sq_col(s, 0));
    snprintf(c->m.workspace_id, sizeof c->m.workspace_id, "%s", sg__sq_col(s, 1));
    snprintf(c->m.email, sizeof c->m.email, "%s", sg__sq_col(s, 2));
    c->m.role = sg_role_parse(sg__sq_col(s, 3));
    snprintf(c->hash, sizeof c->hash, "%s", sg__sq_col(s, 4));
    snprintf(c->workspace_name, sizeof c->workspace_name, "%s", sg__sq_col(s, 5));
    if (c->m.role == SG_ROLE_NONE) rc = SG_E_INTERNAL;
    (*n)++;
  }
  if (*n < SG_MEMBERSHIPS_PER_EMAIL && step != SQLITE_DONE) rc = SG_E_INTERNAL;
  sqlite3_reset(s);
out:
  sg__sq_reader_release(r);
  if (rc != SG_E_OK) *n = 0;
  return rc;
}

/* Runs a read of rows bound to one text parameter and builds each with row(); at most
 * 1000 rows. */
static sg_err read_rows(sg__sq *st, const char *sql, const char *p1,
                        json_t *(*row)(sqlite3_stmt *s), json_t **out) {
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, sql);
  bool more;
  json_t *arr = NULL;
  if (s) {
    sg__sq_text(s, 1, p1);
    arr = sg__sq_page_rows(s, 1000, row, &more);
  }
  sg__sq_reader_release(r);
  if (!arr) return SG_E_INTERNAL;
  *out = arr;
  return SG_E_OK;
}

sg_err sg__sqlite_member_list(sg_store *base, const char *workspace_id, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "SELECT " MEMBER_COLS " FROM members WHERE workspace_id=?"
                          " AND status='active' ORDER BY email, id LIMIT 1001";
  return read_rows(st, q, workspace_id, member_row, out);
}

sg_err sg__sqlite_member_get(sg_store *base, const char *workspace_id, const char *id,
                             json_t **out) {
  sg__sq *st = sg__sq_of(base);
  sg__sq *r = sg__sq_reader_acquire(st);
  sg_err rc = member_load(r, workspace_id, id, out);
  sg__sq_reader_release(r);
  return rc;
}

/* Whether the workspace keeps an active owner other than member id: 1 yes, 0 no, -1 error. */
static int other_owner(sg__sq *st, const char *workspace_id, const char *id) {
  static const char q[] = "SELECT 1 FROM members WHERE workspace_id=?1 AND id<>?2"
                          " AND role='owner' AND status='active'";
  return sg__sq_exists(st, q, workspace_id, id);
}

/* The member's workspace and whether it is an active owner, with st->mu held. */
static sg_err member_state(sg__sq *st, const char *workspace_id, const char *id, char ws[64],
                           bool *is_owner) {
  static const char q[] = "SELECT workspace_id, role FROM members WHERE id=?1"
                          " AND status='active' AND (?2 IS NULL OR workspace_id=?2)";
  sqlite3_stmt *s = sg__sq_prep(st, q);
  if (!s) return SG_E_INTERNAL;
  sg__sq_text(s, 1, id);
  sg__sq_text(s, 2, workspace_id);
  int step = sqlite3_step(s);
  sg_err rc = step == SQLITE_ROW ? SG_E_OK : step == SQLITE_DONE ? SG_E_NOT_FOUND : SG_E_INTERNAL;
  if (rc == SG_E_OK) {
    snprintf(ws, 64, "%s", sg__sq_col(s, 0));
    *is_owner = strcmp(sg__sq_col(s, 1), "owner") == 0;
  }
  sqlite3_reset(s);
  return rc;
}

/* Sets a member's role, or (role SG_ROLE_NONE) disables it and deletes its sessions, in
 * one transaction that keeps the workspace's last active owner. */
static sg_err member_change(sg__sq *st, const char *workspace_id, const char *id, sg_role role,
                            json_t **out) {
  static const char q_role[] = "UPDATE members SET role=?2, updated_at=?3 WHERE id=?1";
  static const char q_off[] = "UPDATE members SET status='disabled', updated_at=?3 WHERE id=?1";
  static const char q_del[] = "DELETE FROM sessions WHERE member_id=?";
  sg_err rc = SG_E_INTERNAL;
  *out = NULL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  char ws[64];
  bool is_owner = false;
  if ((rc = member_state(st, workspace_id, id, ws, &is_owner)) != SG_E_OK) goto end;
  rc = SG_E_INTERNAL;
  if (is_owner && role != SG_ROLE_OWNER) {
    int others = other_owner(st, ws, id);
    if (others <= 0) {
      if (others == 0) rc = SG_E_LAST_OWNER;
      goto end;
    }
  }
  sqlite3_stmt *s = sg__sq_prep(st, role != SG_ROLE_NONE ? q_role : q_off);
  if (!s) goto end;
  sg__sq_text(s, 1, id);
  if (role != SG_ROLE_NONE) sg__sq_text(s, 2, sg_role_name(role));
  sqlite3_bind_int64(s, 3, sg_now_s());
  if (sg__sq_run(st, s) != 1) goto end;
  if (role == SG_ROLE_NONE) {
    if (!(s = sg__sq_prep(st, q_del))) goto end;
    sg__sq_text(s, 1, id);
    if (sg__sq_run(st, s) < 0) goto end;
  }
  rc = member_load(st, NULL, id, out);
end:
  rc = sg__sq_end(st, rc);
  if (rc != SG_E_OK && *out) {
    json_decref(*out);
    *out = NULL;
  }
out:
  pthread_mutex_unlock(&st->mu);
  return rc;
}

sg_err sg__sqlite_member_set_role(sg_store *base, const char *workspace_id, const char *id,
                                  sg_role role, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  if (role == SG_ROLE_NONE) return SG_E_INVALID_REQUEST;
  return member_change(st, workspace_id, id, role, out);
}

sg_err sg__sqlite_member_disable(sg_store *base, const char *workspace_id, const char *id,
                                 json_t **out) {
  sg__sq *st = sg__sq_of(base);
  return member_change(st, workspace_id, id, SG_ROLE_NONE, out);
}

sg_err sg__sqlite_member_set_password(sg_store *base, const char *id, const char *password_hash,
                                      const uint8_t *keep_digest) {
  sg__sq *st = sg__sq_of(base);
  static const char q_up[] = "UPDATE members SET password_hash=?2, updated_at=?3 WHERE id=?1"
                             " AND status='active'";
  static const char q_del[] = "DELETE FROM sessions WHERE member_id=?1"
                              " AND (?2 IS NULL OR digest<>?2)";
  sg_err rc = SG_E_INTERNAL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  sqlite3_stmt *s = sg__sq_prep(st, q_up);
  if (!s) goto end;
  sg__sq_text(s, 1, id);
  sg__sq_text(s, 2, password_hash);
  sqlite3_bind_int64(s, 3, sg_now_s());
  if ((rc = sg__sq_changed(sg__sq_run(st, s), SG_E_NOT_FOUND)) != SG_E_OK) goto end;
  rc = SG_E_INTERNAL;
  if (!(s = sg__sq_prep(st, q_del))) goto end;
  sg__sq_text(s, 1, id);
  if (keep_digest) sqlite3_bind_blob(s, 2, keep_digest, 32, SQLITE_TRANSIENT);
  if (sg__sq_run(st, s) >= 0) rc = SG_E_OK;
end:
  rc = sg__sq_end(st, rc);
out:
  pthread_mutex_unlock(&st->mu);
  return rc;
}

/* ---- sessions --------------------------------------------------------------------------- */

sg_err sg__sqlite_session_create(sg_store *base, const uint8_t digest[32], const char *member_id,
                                 int64_t now_ms, int64_t stale_ms) {
  sg__sq *st = sg__sq_of(base);
  static const char q_gc[] = "DELETE FROM sessions WHERE last_seen_ms<?";
  static const char q[] = "INSERT INTO sessions(digest, member_id, created_ms, last_seen_ms)"
                          " VALUES(?1, ?2, ?3, ?3)";
  pthread_mutex_lock(&st->mu);
  sg_err rc = SG_E_INTERNAL;
  if (sg__sq_begin(st)) goto out;
  sqlite3_stmt *s = sg__sq_prep(st, q_gc);
  if (!s) goto end;
  sqlite3_bind_int64(s, 1, stale_ms);
  if (sg__sq_run(st, s) < 0) goto end;
  if (!(s = sg__sq_prep(st, q))) goto end;
  sqlite3_bind_blob(s, 1, digest, 32, SQLITE_TRANSIENT);
  sg__sq_text(s, 2, member_id);
  sqlite3_bind_int64(s, 3, now_ms);
  if (sg__sq_run(st, s) == 1) rc = SG_E_OK;
end:
  rc = sg__sq_end(st, rc);
out:
  pthread_mutex_unlock(&st->mu);
  return rc;
}

/* Runs a one-blob-parameter write (?1 = digest) under the lock; rows changed or -1. */
static int digest_write(sg__sq *st, const char *sql, const uint8_t digest[32], int64_t now_ms) {
  pthread_mutex_lock(&st->mu);
  int changed = -1;
  sqlite3_stmt *s = sg__sq_prep(st, sql);
  if (s) {
    sqlite3_bind_blob(s, 1, digest, 32, SQLITE_TRANSIENT);
    if (sqlite3_bind_parameter_count(s) >= 2) sqlite3_bind_int64(s, 2, now_ms);
    changed = sg__sq_run(st, s);
  }
  pthread_mutex_unlock(&st->mu);
  return changed;
}

sg_err sg__sqlite_session_lookup(sg_store *base, const uint8_t digest[32], int64_t now_ms,
                                 int64_t idle_ms, sg_member *member, int64_t *last_seen_ms) {
  sg__sq *st = sg__sq_of(base);
  /* The lookup is by the digest itself (the primary key): there is no secret to compare
   * byte by byte, and what a timing difference could reveal is only whether some stored
   * digest shares a prefix with the digest of a guessed cookie, which says nothing about
   * any cookie. */
  static const char q[] = "SELECT m.id, m.workspace_id, m.email, m.role, s.last_seen_ms"
                          " FROM sessions s JOIN members m ON m.id=s.member_id"
                          " JOIN workspaces w ON w.id=m.workspace_id"
                          " WHERE s.digest=? AND m.status='active' AND w.status='active'";
  static const char q_del[] = "DELETE FROM sessions WHERE digest=?";
  sg_err rc = SG_E_NOT_FOUND;
  bool expired = false;
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, q);
  if (!s) {
    rc = SG_E_INTERNAL;
    goto out;
  }
  sqlite3_bind_blob(s, 1, digest, 32, SQLITE_TRANSIENT);
  int step = sqlite3_step(s);
  if (step == SQLITE_ROW) {
    int64_t seen = sqlite3_column_int64(s, 4);
    if (now_ms - seen >= idle_ms) {
      expired = true;
    } else {
      snprintf(member->id, sizeof member->id, "%s", sg__sq_col(s, 0));
      snprintf(member->workspace_id, sizeof member->workspace_id, "%s", sg__sq_col(s, 1));
      snprintf(member->email, sizeof member->email, "%s", sg__sq_col(s, 2));
      member->role = sg_role_parse(sg__sq_col(s, 3));
      *last_seen_ms = seen;
      rc = member->role == SG_ROLE_NONE ? SG_E_INTERNAL : SG_E_OK;
    }
  } else if (step != SQLITE_DONE) {
    rc = SG_E_INTERNAL;
  }
  sqlite3_reset(s);
out:
  sg__sq_reader_release(r);
  if (expired) digest_write(st, q_del, digest, 0);
  return rc;
}

sg_err sg__sqlite_session_touch(sg_store *base, const uint8_t digest[32], int64_t now_ms) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "UPDATE sessions SET last_seen_ms=?2 WHERE digest=?1"
                          " AND last_seen_ms<?2";
  return digest_write(st, q, digest, now_ms) < 0 ? SG_E_INTERNAL : SG_E_OK;
}

sg_err sg__sqlite_session_delete(sg_store *base, const uint8_t digest[32]) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "DELETE FROM sessions WHERE digest=?";
  return digest_write(st, q, digest, 0) < 0 ? SG_E_INTERNAL : SG_E_OK;
}

sg_err sg__sqlite_session_delete_all(sg_store *base, const char *member_id, int64_t *n) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "DELETE FROM sessions WHERE member_id=?";
  pthread_mutex_lock(&st->mu);
  int changed = -1;
  sqlite3_stmt *s = sg__sq_prep(st, q);
  if (s) {
    sg__sq_text(s, 1, member_id);
    changed = sg__sq_run(st, s);
  }
  pthread_mutex_unlock(&st->mu);
  if (changed < 0) return SG_E_INTERNAL;
  *n = changed;
  return SG_E_OK;
}

/* ---- audit log ------------------------------------------------------------------------- */

sg_err sg__sqlite_audit_add(sg_store *base, const sg_audit_entry *e) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "INSERT INTO audit(workspace_id, actor, actor_email, action, target,"
                          " request_id, status, details, at_ms) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)";
  char *details = e->details ? json_dumps(e->details, JSON_COMPACT) : NULL;
  pthread_mutex_lock(&st->mu);
  sg_err rc = SG_E_INTERNAL;
  sqlite3_stmt *s = sg__sq_prep(st, q);
  if (s) {
    sg__sq_text(s, 1, e->workspace_id);
    sg__sq_text(s, 2, e->actor);
    sg__sq_text(s, 3, e->actor_email);
    sg__sq_text(s, 4, e->action);
    sg__sq_text(s, 5, e->target);
    sg__sq_text(s, 6, e->request_id);
    sqlite3_bind_int(s, 7, e->status);
    sg__sq_text(s, 8, details);
    sqlite3_bind_int64(s, 9, sg_now_ms());
    if (sg__sq_run(st, s) == 1) rc = SG_E_OK;
  }
  pthread_mutex_unlock(&st->mu);
  free(details);
  return rc;
}

static json_t *audit_row(sqlite3_stmt *s) {
  sg__store_audit_row r = {
      .seq = sqlite3_column_int64(s, 0),
      .actor = sg__sq_col(s, 1),
      .actor_email = sg__sq_col(s, 2),
      .action = sg__sq_col(s, 3),
      .target = sg__sq_col(s, 4),
      .request_id = sg__sq_col(s, 5),
      .status = sqlite3_column_int(s, 6),
      .details = sg__sq_col(s, 7),
      .at_ms = sqlite3_column_int64(s, 8),
  };
  return sg__store_audit_record(&r);
}

sg_err sg__sqlite_audit_page(sg_store *base, const char *workspace_id, size_t limit,
                             const json_t *after, json_t **data, bool *more) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "SELECT seq, actor, actor_email, action, target, request_id, status,"
                          " details, at_ms FROM audit WHERE workspace_id=?1 AND seq<?2"
                          " ORDER BY seq DESC LIMIT ?3";
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, q);
  json_t *arr = NULL;
  if (s) {
    sg__sq_text(s, 1, workspace_id);
    sqlite3_bind_int64(s, 2, after ? json_integer_value(json_array_get(after, 0)) : INT64_MAX);
    sqlite3_bind_int64(s, 3, (int64_t)limit + 1);
    arr = sg__sq_page_rows(s, limit, audit_row, more);
  }
  sg__sq_reader_release(r);
  if (!arr) return SG_E_INTERNAL;
  *data = arr;
  return SG_E_OK;
}

/* ---- the applications area -------------------------------------------------------------- */

static json_t *app_row(sqlite3_stmt *s) {
  return json_pack("{s:s,s:s,s:s,s:o,s:o}", "id", sg__sq_col(s, 0), "name", sg__sq_col(s, 1),
                   "status", sg__sq_col(s, 2), "monthlyQuota",
                   sqlite3_column_type(s, 3) == SQLITE_NULL
                       ? json_null()
                       : json_integer(sqlite3_column_int64(s, 3)),
                   "createdAt", sg__sq_ts(s, 4));
}

sg_err sg__sqlite_application_list(sg_store *base, const char *workspace_id, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "SELECT id, name, status, monthly_quota, created_at FROM applications"
                          " WHERE workspace_id=? ORDER BY created_at, id LIMIT 1001";
  return read_rows(st, q, workspace_id, app_row, out);
}

sg_err sg__sqlite_application_page(sg_store *base, const char *workspace_id, size_t limit,
                                   const json_t *after, json_t **data, bool *more) {
  sg__sq *st = sg__sq_of(base);
  static const char q_first[] = "SELECT id, name, status, monthly_quota, created_at FROM"
                                " applications WHERE workspace_id=?1 ORDER BY created_at, id"
                                " LIMIT ?2";
  /* The cursor names the page's last application; its (created_at, id) is the key. */
  static const char q_after[] =
      "SELECT a.id, a.name, a.status, a.monthly_quota, a.created_at FROM applications a,"
      " applications k WHERE k.id=?3 AND k.workspace_id=?1 AND a.workspace_id=?1 AND"
      " (a.created_at, a.id) > (k.created_at, k.id) ORDER BY a.created_at, a.id LIMIT ?2";
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, after ? q_after : q_first);
  json_t *arr = NULL;
  if (s) {
    sg__sq_text(s, 1, workspace_id);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)limit + 1);
    if (after) sg__sq_text(s, 3, json_string_value(json_array_get(after, 0)));
    arr = sg__sq_page_rows(s, limit, app_row, more);
  }
  sg__sq_reader_release(r);
  if (!arr) return SG_E_INTERNAL;
  *data = arr;
  return SG_E_OK;
}

/* Whether a row of sql (?1 = id, ?2 = workspace) exists, on a reader. */
static sg_err exists_on_reader(sg__sq *st, const char *sql, const char *a, const char *b) {
  sg__sq *r = sg__sq_reader_acquire(st);
  int found = sg__sq_exists(r, sql, a, b);
  sg__sq_reader_release(r);
  return found < 0 ? SG_E_INTERNAL : found ? SG_E_OK : SG_E_NOT_FOUND;
}

sg_err sg__sqlite_application_in_workspace(sg_store *base, const char *workspace_id,
                                           const char *application_id) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "SELECT 1 FROM applications WHERE id=?1 AND workspace_id=?2";
  return exists_on_reader(st, q, application_id, workspace_id);
}

static json_t *secret_key_row(sqlite3_stmt *s) {
  return json_pack("{s:s,s:s,s:o,s:o,s:o}", "id", sg__sq_col(s, 0), "status", sg__sq_col(s, 1),
                   "createdAt", sg__sq_ts(s, 2), "lastUsedAt", sg__sq_ts(s, 3), "revokedAt",
                   sg__sq_ts(s, 4));
}

sg_err sg__sqlite_secret_key_list(sg_store *base, const char *application_id, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "SELECT id, status, created_at, last_used_at, revoked_at FROM"
                          " secret_keys WHERE application_id=? ORDER BY created_at DESC, id"
                          " LIMIT 1001";
  return read_rows(st, q, application_id, secret_key_row, out);
}

/* The workspace of the key row found by sql (?1 = key id) into ws[64]. */
static sg_err key_workspace(sg__sq *st, const char *sql, const char *key_id, char ws[64]) {
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, sql);
  sg_err rc = SG_E_INTERNAL;
  if (s) {
    sg__sq_text(s, 1, key_id);
    int step = sqlite3_step(s);
    rc = step == SQLITE_ROW ? SG_E_OK : step == SQLITE_DONE ? SG_E_NOT_FOUND : SG_E_INTERNAL;
    if (rc == SG_E_OK) snprintf(ws, 64, "%s", sg__sq_col(s, 0));
    sqlite3_reset(s);
  }
  sg__sq_reader_release(r);
  return rc;
}

sg_err sg__sqlite_secret_key_workspace(sg_store *base, const char *key_id, char ws[64]) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "SELECT a.workspace_id FROM secret_keys k JOIN applications a"
                          " ON a.id=k.application_id WHERE k.id=?";
  return key_workspace(st, q, key_id, ws);
}

sg_err sg__sqlite_publishable_key_workspace(sg_store *base, const char *key_id, char ws[64]) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "SELECT a.workspace_id FROM publishable_keys k JOIN applications a"
                          " ON a.id=k.application_id WHERE k.id=?";
  return key_workspace(st, q, key_id, ws);
}

sg_err sg__sqlite_secret_key_touch(sg_store *base, const char *key_id, int64_t now_s) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "UPDATE secret_keys SET last_used_at=?2 WHERE id=?1";
  pthread_mutex_lock(&st->mu);
  int changed = -1;
  sqlite3_stmt *s = sg__sq_prep(st, q);
  if (s) {
    sg__sq_text(s, 1, key_id);
    sqlite3_bind_int64(s, 2, now_s);
    changed = sg__sq_run(st, s);
  }
  pthread_mutex_unlock(&st->mu);
  return changed < 0 ? SG_E_INTERNAL : SG_E_OK;
}

static json_t *pk_row(sqlite3_stmt *s) {
  json_t *origins = json_loads(sg__sq_col(s, 2), 0, NULL);
  return json_pack("{s:s,s:s,s:o,s:s,s:o}", "id", sg__sq_col(s, 0), "listId", sg__sq_col(s, 1),
                   "origins", origins ? origins : json_array(), "status", sg__sq_col(s, 3),
                   "createdAt", sg__sq_ts(s, 4));
}

sg_err sg__sqlite_publishable_key_list(sg_store *base, const char *application_id, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "SELECT id, list_id, origins, status, created_at FROM publishable_keys"
                          " WHERE application_id=? ORDER BY created_at DESC, id LIMIT 1001";
  return read_rows(st, q, application_id, pk_row, out);
}
