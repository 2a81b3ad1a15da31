/*
 * SQLite backend: subscriptions, token-minting checks and signing keys.
 */
#include <sodium.h>
#include <string.h>

#include "common/util.h"
#include "store/rules.h"
#include "store/sqlite/sqlite_store.h"

sg_err sg__sqlite_subscription_create(sg_store *base, const char *workspace_id, const char *list_id,
                                      json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q_ws[] = "SELECT 1 FROM workspaces WHERE id=?";
  static const char q_list[] = "SELECT workspace_id, visibility FROM lists WHERE id=?";
  static const char q_ins[] = "INSERT INTO subscriptions(id, workspace_id, list_id, created_at)"
                              " VALUES(?, ?, ?, ?)";
  sg_err rc = SG_E_INTERNAL;
  char id[32];
  sg_random_id("sub_", id, sizeof id);
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  int ws_found = sg__sq_exists(st, q_ws, workspace_id, NULL);
  if (ws_found <= 0) {
    if (ws_found == 0) rc = SG_E_NOT_FOUND;
    goto end;
  }
  sqlite3_stmt *s = sg__sq_prep(st, q_list);
  if (!s) goto end;
  sg__sq_text(s, 1, list_id);
  bool ok = sqlite3_step(s) == SQLITE_ROW &&
            sg__store_list_subscribable(workspace_id, sg__sq_col(s, 0), sg__sq_col(s, 1));
  sqlite3_reset(s);
  if (!ok) {
    rc = SG_E_INVALID_LIST;
    goto end;
  }
  s = sg__sq_prep(st, q_ins);
  if (!s) goto end;
  sg__sq_text(s, 1, id);
  sg__sq_text(s, 2, workspace_id);
  sg__sq_text(s, 3, list_id);
  sqlite3_bind_int64(s, 4, sg_now_s());
  if (sg__sq_run(st, s) >= 0) rc = SG_E_OK;
end:
  rc = sg__sq_end(st, rc);
  if (rc == SG_E_OK) *out = sg__store_subscription_record(id, workspace_id, list_id, "active");
out:
  pthread_mutex_unlock(&st->mu);
  return rc;
}

sg_err sg__sqlite_subscription_cancel(sg_store *base, const char *id, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q_up[] = "UPDATE subscriptions SET status='cancelled' WHERE id=?";
  static const char q_get[] = "SELECT workspace_id, list_id FROM subscriptions WHERE id=?";
  sg_err rc = SG_E_INTERNAL;
  pthread_mutex_lock(&st->mu);
  sqlite3_stmt *s = sg__sq_prep(st, q_up);
  if (!s) goto out;
  sg__sq_text(s, 1, id);
  if (sg__sq_run(st, s) < 0) goto out;
  s = sg__sq_prep(st, q_get);
  if (!s) goto out;
  sg__sq_text(s, 1, id);
  if (sqlite3_step(s) == SQLITE_ROW) {
    *out = sg__store_subscription_record(id, sg__sq_col(s, 0), sg__sq_col(s, 1), "cancelled");
    rc = SG_E_OK;
  } else {
    rc = SG_E_NOT_FOUND;
  }
  sqlite3_reset(s);
out:
  pthread_mutex_unlock(&st->mu);
  return rc;
}

sg_err sg__sqlite_lists_mintable(sg_store *base, const char *workspace_id, const char *const *ids,
                                 size_t n) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] =
      "SELECT l.workspace_id, l.visibility, EXISTS(SELECT 1 FROM subscriptions s"
      " WHERE s.list_id=l.id AND s.workspace_id=?2 AND s.status='active')"
      " FROM lists l WHERE l.id=?1";
  sg_err rc = SG_E_OK;
  sg__sq *r = sg__sq_reader_acquire(st);
  /* One read transaction, so the statements below agree on one snapshot. */
  sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL);
  for (size_t i = 0; i < n && rc == SG_E_OK; i++) {
    sqlite3_stmt *s = sg__sq_prep(r, q);
    if (!s) {
      rc = SG_E_INTERNAL;
      break;
    }
    sg__sq_text(s, 1, ids[i]);
    sg__sq_text(s, 2, workspace_id);
    int step = sqlite3_step(s);
    if (step == SQLITE_DONE ||
        (step == SQLITE_ROW &&
         !sg__store_list_usable(workspace_id, sg__sq_col(s, 0), sg__sq_col(s, 1),
                                sqlite3_column_int(s, 2) != 0)))
      rc = SG_E_INVALID_LIST;
    else if (step != SQLITE_ROW)
      rc = SG_E_INTERNAL;
    sqlite3_reset(s);
  }
  sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
  sg__sq_reader_release(r);
  return rc;
}

sg_err sg__sqlite_signing_key_add(sg_store *base, const char *kid, const uint8_t sk[64],
                                  const uint8_t pk[32], int64_t now) {
  sg__sq *st = sg__sq_of(base);
  static const char q_retire[] = "UPDATE signing_keys SET retired_at=? WHERE retired_at IS NULL";
  static const char q_ins[] = "INSERT INTO signing_keys(kid, secret_key, public_key, created_at)"
                              " VALUES(?, ?, ?, ?)";
  sg_err rc = SG_E_INTERNAL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  sqlite3_stmt *s = sg__sq_prep(st, q_retire);
  if (!s) goto end;
  sqlite3_bind_int64(s, 1, now);
  if (sg__sq_run(st, s) < 0) goto end;
  s = sg__sq_prep(st, q_ins);
  if (!s) goto end;
  sg__sq_text(s, 1, kid);
  sqlite3_bind_blob(s, 2, sk, 64, SQLITE_TRANSIENT);
  sqlite3_bind_blob(s, 3, pk, 32, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 4, now);
  if (sg__sq_run(st, s) >= 0) rc = SG_E_OK;
end:
  rc = sg__sq_end(st, rc);
out:
  pthread_mutex_unlock(&st->mu);
  return rc;
}

sg_err sg__sqlite_signing_key_current(sg_store *base, char kid[64], uint8_t sk[64]) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "SELECT kid, secret_key FROM signing_keys WHERE retired_at IS NULL"
                          " ORDER BY created_at DESC, kid DESC LIMIT 1";
  sg_err rc = SG_E_TOKEN_MINTING_UNAVAILABLE;
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, q);
  if (!s) {
    rc = SG_E_INTERNAL;
    goto out;
  }
  int step = sqlite3_step(s);
  if (step == SQLITE_ROW && sqlite3_column_bytes(s, 1) == 64 && strlen(sg__sq_col(s, 0)) < 64) {
    snprintf(kid, 64, "%s", sg__sq_col(s, 0));
    memcpy(sk, sqlite3_column_blob(s, 1), 64);
    rc = SG_E_OK;
  } else if (step != SQLITE_ROW && step != SQLITE_DONE) {
    rc = SG_E_INTERNAL;
  }
  sqlite3_reset(s);
out:
  sg__sq_reader_release(r);
  return rc;
}

sg_err sg__sqlite_signing_keys_public(sg_store *base, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "SELECT kid, public_key, created_at, retired_at FROM signing_keys"
                          " ORDER BY created_at, kid";
  sg_err rc = SG_E_INTERNAL;
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, q);
  if (!s) goto out;
  json_t *arr = json_array();
  int step;
  while ((step = sqlite3_step(s)) == SQLITE_ROW) {
    json_t *k = sg__sq_signing_key_row(s);
    if (k) json_array_append_new(arr, k);
  }
  sqlite3_reset(s);
  if (step == SQLITE_DONE) {
    *out = arr;
    rc = SG_E_OK;
  } else {
    json_decref(arr);
  }
out:
  sg__sq_reader_release(r);
  return rc;
}
