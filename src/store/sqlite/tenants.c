/*
 * SQLite backend: workspaces, applications and secret keys.
 */
#include <string.h>

#include "common/util.h"
#include "store/rules.h"
#include "store/sqlite/sqlite_store.h"

/* Runs one write statement with text parameters under the lock; returns the number of
 * changed rows or -1. */
static int exec_write(sg__sq *st, const char *sql, const char *const *args, size_t nargs,
                      const int64_t *i64, int i64_at) {
  int changed = -1;
  pthread_mutex_lock(&st->mu);
  sqlite3_stmt *s = sg__sq_prep(st, sql);
  if (s) {
    for (size_t i = 0; i < nargs; i++) sg__sq_text(s, (int)i + 1, args[i]);
    if (i64_at > 0) {
      if (*i64 >= 0)
        sqlite3_bind_int64(s, i64_at, *i64);
      else
        sqlite3_bind_null(s, i64_at);
    }
    changed = sg__sq_run(st, s);
  }
  pthread_mutex_unlock(&st->mu);
  return changed;
}

sg_err sg__sqlite_workspace_create(sg_store *base, const char *name, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "INSERT INTO workspaces(id, name, created_at) VALUES(?, ?, ?)";
  char id[32];
  sg_random_id("wsp_", id, sizeof id);
  char now[24];
  snprintf(now, sizeof now, "%lld", (long long)sg_now_s());
  const char *args[] = {id, name, now};
  if (exec_write(st, q, args, 3, NULL, 0) != 1) return SG_E_INTERNAL;
  *out = sg__store_simple_record(id, "active");
  return SG_E_OK;
}

/* Runs "UPDATE … SET status=?2 WHERE id=?1"; *out is {id, status}. SG_E_NOT_FOUND when
 * no row has that id. */
static sg_err set_status(sg__sq *st, const char *sql, const char *id, const char *status,
                         json_t **out) {
  const char *args[] = {id, status};
  sg_err rc = sg__sq_changed(exec_write(st, sql, args, 2, NULL, 0), SG_E_NOT_FOUND);
  if (rc == SG_E_OK) *out = sg__store_simple_record(id, status);
  return rc;
}

sg_err sg__sqlite_workspace_set_status(sg_store *base, const char *id, const char *status,
                                       json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "UPDATE workspaces SET status=?2 WHERE id=?1";
  return set_status(st, q, id, status, out);
}

sg_err sg__sqlite_application_create(sg_store *base, const char *workspace_id, const char *name,
                                     int64_t monthly_quota, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q_ws[] = "SELECT 1 FROM workspaces WHERE id=?";
  static const char q[] = "INSERT INTO applications(id, workspace_id, name, created_at,"
                          " monthly_quota) VALUES(?, ?, ?, ?, ?)";
  pthread_mutex_lock(&st->mu);
  int found = sg__sq_exists(st, q_ws, workspace_id, NULL);
  pthread_mutex_unlock(&st->mu);
  if (found <= 0) return found == 0 ? SG_E_NOT_FOUND : SG_E_INTERNAL;
  char id[32], now[24];
  sg_random_id("app_", id, sizeof id);
  snprintf(now, sizeof now, "%lld", (long long)sg_now_s());
  const char *args[] = {id, workspace_id, name, now};
  if (exec_write(st, q, args, 4, &monthly_quota, 5) != 1) return SG_E_INTERNAL;
  *out = sg__store_simple_record(id, "active");
  json_object_set_new(*out, "workspaceId", json_string(workspace_id));
  json_object_set_new(*out, "monthlyQuota",
                      monthly_quota >= 0 ? json_integer(monthly_quota) : json_null());
  return SG_E_OK;
}

sg_err sg__sqlite_application_set_status(sg_store *base, const char *id, const char *status,
                                         json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "UPDATE applications SET status=?2 WHERE id=?1";
  return set_status(st, q, id, status, out);
}

sg_err sg__sqlite_application_set_quota(sg_store *base, const char *id, int64_t monthly_quota,
                                        json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "UPDATE applications SET monthly_quota=?2 WHERE id=?1";
  const char *args[] = {id};
  sg_err rc = sg__sq_changed(exec_write(st, q, args, 1, &monthly_quota, 2), SG_E_NOT_FOUND);
  if (rc != SG_E_OK) return rc;
  *out = sg__store_simple_record(id, NULL);
  json_object_set_new(*out, "monthlyQuota",
                      monthly_quota >= 0 ? json_integer(monthly_quota) : json_null());
  return SG_E_OK;
}

sg_err sg__sqlite_secret_key_create(sg_store *base, const char *application_id, const char *id,
                                    const uint8_t digest[32]) {
  sg__sq *st = sg__sq_of(base);
  static const char q_app[] = "SELECT 1 FROM applications WHERE id=?";
  static const char q[] = "INSERT INTO secret_keys(id, application_id, digest, created_at)"
                          " VALUES(?, ?, ?, ?)";
  static const char q_count[] =
      "SELECT count(*) FROM secret_keys WHERE application_id=?1 AND status='active'";
  sg_err rc = SG_E_INTERNAL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  int found = sg__sq_exists(st, q_app, application_id, NULL);
  if (found <= 0) {
    if (found == 0) rc = SG_E_NOT_FOUND;
    goto end;
  }
  int full = sg__sq_at_limit(st, q_count, application_id, base->limits.secret_keys_per_application);
  if (full != 0) {
    if (full > 0) rc = SG_E_SECRET_KEY_LIMIT;
    goto end;
  }
  sqlite3_stmt *s = sg__sq_prep(st, q);
  if (!s) goto end;
  sg__sq_text(s, 1, id);
  sg__sq_text(s, 2, application_id);
  sqlite3_bind_blob(s, 3, digest, 32, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 4, sg_now_s());
  if (sqlite3_step(s) == SQLITE_DONE) rc = SG_E_OK;
  sqlite3_reset(s);
end:
  rc = sg__sq_end(st, rc);
out:
  pthread_mutex_unlock(&st->mu);
  return rc;
}

sg_err sg__sqlite_secret_key_revoke(sg_store *base, const char *id, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "UPDATE secret_keys SET status='revoked', revoked_at=?2 WHERE id=?1";
  char now[24];
  snprintf(now, sizeof now, "%lld", (long long)sg_now_s());
  const char *args[] = {id, now};
  sg_err rc = sg__sq_changed(exec_write(st, q, args, 2, NULL, 0), SG_E_NOT_FOUND);
  if (rc != SG_E_OK) return rc;
  *out = sg__store_simple_record(id, "revoked");
  return SG_E_OK;
}

sg_err sg__sqlite_authenticate(sg_store *base, const char *key_id, const uint8_t digest[32],
                               sg_principal *out) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] =
      "SELECT k.digest, k.status, a.id, a.status, w.id, w.status, k.last_used_at FROM secret_keys k"
      " JOIN applications a ON a.id = k.application_id"
      " JOIN workspaces w ON w.id = a.workspace_id WHERE k.id=?";
  sg_err rc = SG_E_INVALID_KEY;
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, q);
  if (!s) {
    rc = SG_E_INTERNAL;
    goto out;
  }
  sg__sq_text(s, 1, key_id);
  int step = sqlite3_step(s);
  if (step == SQLITE_ROW) {
    bool match =
        sqlite3_column_bytes(s, 0) == 32 && sg_ct_equal(sqlite3_column_blob(s, 0), digest, 32);
    bool active = strcmp(sg__sq_col(s, 1), "active") == 0 &&
                  strcmp(sg__sq_col(s, 3), "active") == 0 &&
                  strcmp(sg__sq_col(s, 5), "active") == 0;
    if (match && active) {
      snprintf(out->key_id, sizeof out->key_id, "%s", key_id);
      snprintf(out->application_id, sizeof out->application_id, "%s", sg__sq_col(s, 2));
      snprintf(out->workspace_id, sizeof out->workspace_id, "%s", sg__sq_col(s, 4));
      out->key_last_used_s = sqlite3_column_int64(s, 6);
      rc = SG_E_OK;
    }
  } else if (step != SQLITE_DONE) {
    rc = SG_E_INTERNAL;
  }
  sqlite3_reset(s);
out:
  sg__sq_reader_release(r);
  return rc;
}

sg_err sg__sqlite_application_get(sg_store *base, const char *id, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "SELECT id, workspace_id, status, monthly_quota FROM applications"
                          " WHERE id=?";
  sg_err rc = SG_E_NOT_FOUND;
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, q);
  if (!s) {
    rc = SG_E_INTERNAL;
    goto out;
  }
  sg__sq_text(s, 1, id);
  if (sqlite3_step(s) == SQLITE_ROW) {
    *out =
        sg__store_app_record(sg__sq_col(s, 0), sg__sq_col(s, 1), sg__sq_col(s, 2),
                             sqlite3_column_type(s, 3) != SQLITE_NULL, sqlite3_column_int64(s, 3));
    rc = SG_E_OK;
  }
  sqlite3_reset(s);
out:
  sg__sq_reader_release(r);
  return rc;
}

sg_err sg__sqlite_workspace_get(sg_store *base, const char *id, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "SELECT id, status FROM workspaces WHERE id=?";
  sg_err rc = SG_E_NOT_FOUND;
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, q);
  if (!s) {
    rc = SG_E_INTERNAL;
    goto out;
  }
  sg__sq_text(s, 1, id);
  if (sqlite3_step(s) == SQLITE_ROW) {
    *out = sg__store_simple_record(sg__sq_col(s, 0), sg__sq_col(s, 1));
    rc = SG_E_OK;
  }
  sqlite3_reset(s);
out:
  sg__sq_reader_release(r);
  return rc;
}

sg_err sg__sqlite_publishable_key_create(sg_store *base, const char *id, const char *application_id,
                                         const char *list_id, const char *digest_hex,
                                         const json_t *origins, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q_check[] =
      "SELECT a.workspace_id, l.workspace_id, l.visibility,"
      " EXISTS(SELECT 1 FROM subscriptions s WHERE s.workspace_id=a.workspace_id"
      "        AND s.list_id=l.id AND s.status='active')"
      " FROM applications a, lists l WHERE a.id=?1 AND l.id=?2";
  static const char q_app[] = "SELECT 1 FROM applications WHERE id=?";
  static const char q_ins[] = "INSERT INTO publishable_keys(id, application_id, list_id, digest,"
                              " origins, created_at) VALUES(?, ?, ?, ?, ?, ?)";
  sg_err rc = SG_E_INTERNAL;
  char *enc = json_dumps(origins, JSON_COMPACT);
  pthread_mutex_lock(&st->mu);
  if (!enc || sg__sq_begin(st)) goto out;
  int app_found = sg__sq_exists(st, q_app, application_id, NULL);
  if (app_found <= 0) {
    if (app_found == 0) rc = SG_E_NOT_FOUND;
    goto end;
  }
  sqlite3_stmt *s = sg__sq_prep(st, q_check);
  if (!s) goto end;
  sg__sq_text(s, 1, application_id);
  sg__sq_text(s, 2, list_id);
  bool ok = false;
  if (sqlite3_step(s) == SQLITE_ROW) {
    ok = sg__store_list_usable(sg__sq_col(s, 0), sg__sq_col(s, 1), sg__sq_col(s, 2),
                               sqlite3_column_int(s, 3) != 0);
  }
  sqlite3_reset(s);
  if (!ok) {
    rc = SG_E_INVALID_LIST;
    goto end;
  }
  static const char q_count[] =
      "SELECT count(*) FROM publishable_keys WHERE application_id=?1 AND status='active'";
  int full =
      sg__sq_at_limit(st, q_count, application_id, base->limits.publishable_keys_per_application);
  if (full != 0) {
    if (full > 0) rc = SG_E_PUBLISHABLE_KEY_LIMIT;
    goto end;
  }
  s = sg__sq_prep(st, q_ins);
  if (!s) goto end;
  sg__sq_text(s, 1, id);
  sg__sq_text(s, 2, application_id);
  sg__sq_text(s, 3, list_id);
  sg__sq_text(s, 4, digest_hex);
  sg__sq_text(s, 5, enc);
  sqlite3_bind_int64(s, 6, sg_now_s());
  if (sg__sq_run(st, s) >= 0) rc = SG_E_OK;
end:
  rc = sg__sq_end(st, rc);
  if (rc == SG_E_OK)
    *out = sg__store_key_record(id, application_id, list_id, json_deep_copy(origins), "active");
out:
  pthread_mutex_unlock(&st->mu);
  free(enc);
  return rc;
}

sg_err sg__sqlite_publishable_key_revoke(sg_store *base, const char *id, json_t **out,
                                         char digest_hex[65]) {
  sg__sq *st = sg__sq_of(base);
  static const char q_up[] = "UPDATE publishable_keys SET status='revoked' WHERE id=?";
  static const char q_get[] = "SELECT application_id, list_id, digest, origins FROM"
                              " publishable_keys WHERE id=?";
  sg_err rc = SG_E_INTERNAL;
  json_t *rec = NULL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  sqlite3_stmt *s = sg__sq_prep(st, q_up);
  if (!s) goto end;
  sg__sq_text(s, 1, id);
  if (sqlite3_step(s) != SQLITE_DONE) {
    sqlite3_reset(s);
    goto end;
  }
  sqlite3_reset(s);
  s = sg__sq_prep(st, q_get);
  if (!s) goto end;
  sg__sq_text(s, 1, id);
  if (sqlite3_step(s) != SQLITE_ROW) {
    sqlite3_reset(s);
    rc = SG_E_NOT_FOUND;
    goto end;
  }
  snprintf(digest_hex, 65, "%s", sg__sq_col(s, 2));
  rec = sg__store_key_record(id, sg__sq_col(s, 0), sg__sq_col(s, 1),
                             json_loads(sg__sq_col(s, 3), 0, NULL), "revoked");
  sqlite3_reset(s);
  rc = SG_E_OK;
end:
  if ((rc = sg__sq_end(st, rc)) == SG_E_OK)
    *out = rec;
  else
    json_decref(rec);
out:
  pthread_mutex_unlock(&st->mu);
  return rc;
}
