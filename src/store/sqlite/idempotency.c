/*
 * SQLite backend: Idempotency-Key records (24 hours per workspace).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "store/sqlite/sqlite_store.h"

#define IDEM_TTL_S (24 * 3600)
/* An in-flight record older than this belongs to a process that died mid-request; a
 * retry may take it over rather than wait for ever. Only needed when the owner cannot be
 * checked (another host); on this host a dead owner is seen at once (sg__store_owner_dead). */
#define IDEM_STALE_S 300

sg_err sg__sqlite_idem_begin(sg_store *base, const char *workspace_id, const char *key,
                             const char *method, const char *path, const uint8_t body_hash[32],
                             sg_idem_state *state, int *status, char **body, char **headers) {
  sg__sq *st = sg__sq_of(base);
  static const char q_gc[] = "DELETE FROM idempotency WHERE workspace_id=? AND created_at<?";
  static const char q_get[] = "SELECT method, path, body_hash, state, status, body, headers,"
                              " created_at, owner FROM idempotency WHERE workspace_id=? AND key=?";
  static const char q_put[] =
      "INSERT OR REPLACE INTO idempotency(workspace_id, key, method, path, body_hash, state,"
      " created_at, owner) VALUES(?, ?, ?, ?, ?, 'in_flight', ?, ?)";
  sg_err rc = SG_E_INTERNAL;
  int64_t now = sg_now_s();
  *body = *headers = NULL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  sqlite3_stmt *s = sg__sq_prep(st, q_gc);
  if (!s) goto end;
  sg__sq_text(s, 1, workspace_id);
  sqlite3_bind_int64(s, 2, now - IDEM_TTL_S);
  if (sqlite3_step(s) != SQLITE_DONE) goto end;
  sqlite3_reset(s);

  s = sg__sq_prep(st, q_get);
  if (!s) goto end;
  sg__sq_text(s, 1, workspace_id);
  sg__sq_text(s, 2, key);
  int step = sqlite3_step(s);
  bool take = step == SQLITE_DONE;
  if (step == SQLITE_ROW) {
    bool same = strcmp(sg__sq_col(s, 0), method) == 0 && strcmp(sg__sq_col(s, 1), path) == 0 &&
                sqlite3_column_bytes(s, 2) == 32 &&
                memcmp(sqlite3_column_blob(s, 2), body_hash, 32) == 0;
    bool in_flight = strcmp(sg__sq_col(s, 3), "in_flight") == 0;
    int64_t created = sqlite3_column_int64(s, 7);
    if (in_flight && (created < now - IDEM_STALE_S || sg__store_owner_dead(sg__sq_col(s, 8)))) {
      take = true;
    } else if (!same) {
      *state = SG_IDEM_REUSED;
    } else if (in_flight) {
      *state = SG_IDEM_IN_FLIGHT;
    } else {
      *state = SG_IDEM_REPLAY;
      *status = sqlite3_column_int(s, 4);
      const char *b = sg__sq_col(s, 5), *h = sg__sq_col(s, 6);
      *body = strdup(b ? b : "");
      *headers = h ? strdup(h) : NULL;
    }
  } else if (step != SQLITE_DONE) {
    sqlite3_reset(s);
    goto end;
  }
  sqlite3_reset(s);
  if (take) {
    s = sg__sq_prep(st, q_put);
    if (!s) goto end;
    sg__sq_text(s, 1, workspace_id);
    sg__sq_text(s, 2, key);
    sg__sq_text(s, 3, method);
    sg__sq_text(s, 4, path);
    sqlite3_bind_blob(s, 5, body_hash, 32, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 6, now);
    sg__sq_text(s, 7, sg__store_self_owner());
    step = sqlite3_step(s);
    sqlite3_reset(s);
    if (step != SQLITE_DONE) goto end;
    *state = SG_IDEM_PROCEED;
  }
  rc = SG_E_OK;
end:
  if ((rc = sg__sq_end(st, rc)) != SG_E_OK) {
    free(*body);
    free(*headers);
    *body = *headers = NULL;
  }
out:
  pthread_mutex_unlock(&st->mu);
  return rc;
}

sg_err sg__sqlite_idem_finish(sg_store *base, const char *workspace_id, const char *key, int status,
                              const char *body, const char *headers) {
  sg__sq *st = sg__sq_of(base);
  static const char q_del[] = "DELETE FROM idempotency WHERE workspace_id=? AND key=?";
  static const char q_done[] = "UPDATE idempotency SET state='done', status=?3, body=?4,"
                               " headers=?5 WHERE workspace_id=?1 AND key=?2";
  bool forget = status >= 500 || status == 429;
  pthread_mutex_lock(&st->mu);
  sqlite3_stmt *s = sg__sq_prep(st, forget ? q_del : q_done);
  int step = SQLITE_ERROR;
  if (s) {
    sg__sq_text(s, 1, workspace_id);
    sg__sq_text(s, 2, key);
    if (!forget) {
      sqlite3_bind_int(s, 3, status);
      sg__sq_text(s, 4, body);
      sg__sq_text(s, 5, headers);
    }
    step = sqlite3_step(s);
    sqlite3_reset(s);
  }
  pthread_mutex_unlock(&st->mu);
  return step == SQLITE_DONE ? SG_E_OK : SG_E_INTERNAL;
}
