/*
 * SQLite backend: rollback to a superseded version (sg_store_version_reactivate and
 * sg_store_version_hash in store.h; docs/DESIGN.md §10, docs/PUBLISHING.md).
 */
#include <string.h>

#include "common/util.h"
#include "store/rules.h"
#include "store/sqlite/sqlite_store.h"

sg_err sg__sqlite_version_hash(sg_store *base, const char *workspace_id, const char *list_id,
                               int64_t number, char hash[80], char state[16]) {
  static const char q[] = "SELECT state, content_hash FROM versions WHERE list_id=? AND"
                          " version_number=?";
  sg__sq *r = sg__sq_reader_acquire(sg__sq_of(base));
  sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL);
  sg_err rc = sg__sq_list_exists(r, workspace_id, list_id);
  sqlite3_stmt *s = rc == SG_E_OK ? sg__sq_prep(r, q) : NULL;
  if (s) {
    sg__sq_text(s, 1, list_id);
    sqlite3_bind_int64(s, 2, number);
    int step = sqlite3_step(s);
    if (step == SQLITE_ROW) {
      snprintf(state, 16, "%s", sg__sq_col(s, 0) ? sg__sq_col(s, 0) : "");
      snprintf(hash, 80, "%s", sg__sq_col(s, 1) ? sg__sq_col(s, 1) : "");
    }
    rc = step == SQLITE_ROW ? SG_E_OK : step == SQLITE_DONE ? SG_E_NOT_FOUND : SG_E_INTERNAL;
    sqlite3_reset(s);
  } else if (rc == SG_E_OK) {
    rc = SG_E_INTERNAL;
  }
  sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
  sg__sq_reader_release(r);
  return rc;
}

sg_err sg__sqlite_version_reactivate(sg_store *base, const char *workspace_id, const char *list_id,
                                     int64_t number, const char *if_match, bool *changed,
                                     json_t **list_out) {
  sg__sq *st = sg__sq_of(base);
  static const char q_ver[] =
      "SELECT state, content_hash FROM versions WHERE list_id=? AND version_number=?";
  static const char q_busy[] = "SELECT 1 FROM versions WHERE list_id=? AND"
                               " state IN ('queued', 'staged') LIMIT 1";
  json_t *cur = NULL;
  char state[16] = "", hash[80] = "";
  int64_t now = sg_now_s();
  pthread_mutex_lock(&st->mu);
  sg_err rc = SG_E_INTERNAL;
  if (sg__sq_begin(st)) goto out;
  if ((rc = sg__sq_list_load(st, workspace_id, list_id, &cur)) != SG_E_OK) goto end;
  rc = SG_E_INTERNAL;
  if (if_match) {
    char etag[48];
    sg_store_list_etag(cur, etag);
    if (!sg_etag_match(if_match, etag)) {
      rc = SG_E_PRECONDITION_FAILED;
      goto end;
    }
  }
  sqlite3_stmt *s = sg__sq_prep(st, q_ver);
  if (!s) goto end;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, number);
  int step = sqlite3_step(s);
  if (step == SQLITE_ROW) {
    snprintf(state, sizeof state, "%s", sg__sq_col(s, 0) ? sg__sq_col(s, 0) : "");
    snprintf(hash, sizeof hash, "%s", sg__sq_col(s, 1) ? sg__sq_col(s, 1) : "");
  }
  sqlite3_reset(s);
  if (step != SQLITE_ROW) {
    rc = step == SQLITE_DONE ? SG_E_NOT_FOUND : SG_E_INTERNAL;
    goto end;
  }
  if (strcmp(state, SG_VERSION_ACTIVE) == 0) {
    rc = SG_E_OK; /* nothing to do */
    goto end;
  }
  if (strcmp(json_string_value(json_object_get(cur, "status")), "archived") == 0) {
    rc = SG_E_LIST_ARCHIVED;
    goto end;
  }
  if (!(s = sg__sq_prep(st, q_busy))) goto end;
  sg__sq_text(s, 1, list_id);
  step = sqlite3_step(s);
  sqlite3_reset(s);
  if (step == SQLITE_ROW) {
    rc = SG_E_PUBLISH_IN_PROGRESS;
    goto end;
  }
  if (strcmp(state, SG_VERSION_SUPERSEDED) != 0 || !hash[0]) {
    rc = SG_E_VERSION_NOT_ACTIVATABLE;
    goto end;
  }
  if (sg__sq_make_active(st, list_id, number, hash, now)) goto end;
  *changed = true;
  json_decref(cur);
  cur = NULL;
  rc = sg__sq_list_load(st, workspace_id, list_id, &cur);
end:
  rc = sg__sq_end(st, rc);
out:
  pthread_mutex_unlock(&st->mu);
  if ((rc == SG_E_OK || rc == SG_E_PRECONDITION_FAILED) && list_out)
    *list_out = cur;
  else
    json_decref(cur);
  if (rc != SG_E_OK) *changed = false;
  return rc;
}
