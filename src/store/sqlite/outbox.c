/*
 * SQLite backend: the edge outbox (migration 4).
 *
 * Triggers bump a record's `want` generation in the transaction of every change the
 * edge mirrors; this file lets the edge writer find dirty records, read what a record
 * should say, and confirm a write. See sg_store_edge_* in store.h.
 */
#include <string.h>

#include "common/util.h"
#include "store/rules.h"
#include "store/sqlite/sqlite_store.h"

/* Outbox rows (kind, id, want) of q into out, up to max; q's LIMIT is its last parameter
 * and after_kind/after_id (when not NULL) its first two. */
static sg_err outbox_rows(sg__sq *st, const char *q, const char *after_kind, const char *after_id,
                          sg_edge_dirty *out, size_t max, size_t *n) {
  *n = 0;
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, q);
  sg_err rc = SG_E_INTERNAL;
  if (s) {
    int p = 1;
    if (after_kind) {
      sg__sq_text(s, p++, after_kind);
      sg__sq_text(s, p++, after_id);
    }
    sqlite3_bind_int64(s, p, (sqlite3_int64)max);
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW && *n < max) {
      sg_edge_dirty *d = &out[*n];
      const char *kind = sg__sq_col(s, 0), *id = sg__sq_col(s, 1);
      /* A row too long for the struct names no edge record (ids are at most 128 bytes). */
      if (!kind || !id || strlen(kind) >= sizeof d->kind || strlen(id) >= sizeof d->id) continue;
      snprintf(d->kind, sizeof d->kind, "%s", kind);
      snprintf(d->id, sizeof d->id, "%s", id);
      d->gen = sqlite3_column_int64(s, 2);
      (*n)++;
    }
    sqlite3_reset(s);
    if (step == SQLITE_ROW || step == SQLITE_DONE) rc = SG_E_OK;
  }
  sg__sq_reader_release(r);
  return rc;
}

sg_err sg__sqlite_edge_dirty(sg_store *base, sg_edge_dirty *out, size_t max, size_t *n) {
  static const char q[] = "SELECT kind, id, want FROM edge_outbox WHERE want > done"
                          " ORDER BY kind, id LIMIT ?";
  return outbox_rows(sg__sq_of(base), q, NULL, NULL, out, max, n);
}

sg_err sg__sqlite_edge_records(sg_store *base, const char *after_kind, const char *after_id,
                               sg_edge_dirty *out, size_t max, size_t *n) {
  static const char q[] = "SELECT kind, id, want FROM edge_outbox WHERE (kind, id) > (?, ?)"
                          " ORDER BY kind, id LIMIT ?";
  return outbox_rows(sg__sq_of(base), q, after_kind, after_id, out, max, n);
}

sg_err sg__sqlite_edge_state(sg_store *base, const char *kind, const char *id, int64_t *want,
                             int64_t *done, int64_t *revision) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] = "SELECT want, done, revision FROM edge_outbox WHERE kind=? AND id=?";
  *want = *done = *revision = 0;
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, q);
  sg_err rc = SG_E_INTERNAL;
  if (s) {
    sg__sq_text(s, 1, kind);
    sg__sq_text(s, 2, id);
    int step = sqlite3_step(s);
    if (step == SQLITE_ROW) {
      *want = sqlite3_column_int64(s, 0);
      *done = sqlite3_column_int64(s, 1);
      *revision = sqlite3_column_int64(s, 2);
    }
    sqlite3_reset(s);
    if (step == SQLITE_ROW || step == SQLITE_DONE) rc = SG_E_OK;
  }
  sg__sq_reader_release(r);
  return rc;
}

sg_err sg__sqlite_edge_done(sg_store *base, const char *kind, const char *id, int64_t gen,
                            int64_t revision) {
  sg__sq *st = sg__sq_of(base);
  /* Never lowers done: a slow writer that read an older generation confirms nothing
   * newer than what it wrote. */
  static const char q[] = "UPDATE edge_outbox SET done=MAX(done, ?3), revision=MAX(revision, ?4)"
                          " WHERE kind=?1 AND id=?2";
  pthread_mutex_lock(&st->mu);
  sqlite3_stmt *s = sg__sq_prep(st, q);
  sg_err rc = SG_E_INTERNAL;
  if (s) {
    sg__sq_text(s, 1, kind);
    sg__sq_text(s, 2, id);
    sqlite3_bind_int64(s, 3, gen);
    sqlite3_bind_int64(s, 4, revision);
    if (sg__sq_run(st, s) >= 0) rc = SG_E_OK;
  }
  pthread_mutex_unlock(&st->mu);
  return rc;
}

/* ---- what each record should say ---------------------------------------------------- */

/* Runs q (one text parameter) on reader r and builds *out from its row with build.
 * SG_E_NOT_FOUND when there is no row. */
static sg_err one_row(sg__sq *r, const char *q, const char *id, json_t *(*build)(sqlite3_stmt *),
                      json_t **out) {
  sqlite3_stmt *s = sg__sq_prep(r, q);
  if (!s) return SG_E_INTERNAL;
  sg__sq_text(s, 1, id);
  int step = sqlite3_step(s);
  sg_err rc = step == SQLITE_ROW ? SG_E_OK : step == SQLITE_DONE ? SG_E_NOT_FOUND : SG_E_INTERNAL;
  if (rc == SG_E_OK && !(*out = build(s))) rc = SG_E_INTERNAL;
  sqlite3_reset(s);
  return rc;
}

static json_t *key_row(sqlite3_stmt *s) {
  return sg__store_key_record(sg__sq_col(s, 0), sg__sq_col(s, 1), sg__sq_col(s, 2),
                              json_loads(sg__sq_col(s, 3), 0, NULL), sg__sq_col(s, 4));
}

static json_t *sub_row(sqlite3_stmt *s) {
  return sg__store_subscription_record(sg__sq_col(s, 0), sg__sq_col(s, 1), sg__sq_col(s, 2),
                                       sg__sq_col(s, 3));
}

json_t *sg__sq_signing_key_row(sqlite3_stmt *s) {
  if (sqlite3_column_bytes(s, 1) != 32) return NULL;
  return sg__store_signing_key_record(
      sg__sq_col(s, 0), sqlite3_column_blob(s, 1), sqlite3_column_int64(s, 2),
      sqlite3_column_type(s, 3) != SQLITE_NULL, sqlite3_column_int64(s, 3));
}

sg_err sg__sqlite_edge_source(sg_store *base, const char *kind, const char *id, int64_t *gen,
                              json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q_gen[] = "SELECT want FROM edge_outbox WHERE kind=? AND id=?";
  static const char q_key[] = "SELECT id, application_id, list_id, origins, status"
                              " FROM publishable_keys WHERE digest=?";
  static const char q_sub[] = "SELECT id, workspace_id, list_id, status FROM subscriptions"
                              " WHERE id=?";
  static const char q_sig[] = "SELECT kid, public_key, created_at, retired_at FROM signing_keys"
                              " WHERE kid=?";
  *out = NULL;
  *gen = 0;
  sg__sq *r = sg__sq_reader_acquire(st);
  /* One read transaction: the generation and the record come from one snapshot, so the
   * record holds at least every change that generation counts. */
  sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL);
  sg_err rc = SG_E_INTERNAL;
  sqlite3_stmt *s = sg__sq_prep(r, q_gen);
  if (!s) goto out;
  sg__sq_text(s, 1, kind);
  sg__sq_text(s, 2, id);
  int step = sqlite3_step(s);
  if (step == SQLITE_ROW) *gen = sqlite3_column_int64(s, 0);
  sqlite3_reset(s);
  if (step != SQLITE_ROW && step != SQLITE_DONE) goto out;
  if (strcmp(kind, "lists") == 0) {
    rc = sg__sq_list_load(r, NULL, id, out);
    if (rc == SG_E_INVALID_LIST) rc = SG_E_NOT_FOUND;
  } else if (strcmp(kind, "keys") == 0) {
    rc = one_row(r, q_key, id, key_row, out);
  } else if (strcmp(kind, "subscriptions") == 0) {
    rc = one_row(r, q_sub, id, sub_row, out);
  } else if (strcmp(kind, "signing-keys") == 0) {
    rc = one_row(r, q_sig, id, sg__sq_signing_key_row, out);
  } else if (strcmp(kind, "apps") == 0 || strcmp(kind, "workspaces") == 0) {
    /* These two getters take a reader of their own; the generation read above is still
     * no newer than what they see (a later commit only adds changes). */
    sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
    sg__sq_reader_release(r);
    return strcmp(kind, "apps") == 0 ? sg__sqlite_application_get(&st->base, id, out)
                                     : sg__sqlite_workspace_get(&st->base, id, out);
  } else {
    rc = SG_E_NOT_FOUND;
  }
out:
  sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
  sg__sq_reader_release(r);
  return rc;
}
