/*
 * SQLite backend: a list's synonym sets (store.h, "synonyms"; migration 12). Each PUT is
 * a row stamped with the list's next item clock; the current sets are the newest row, a
 * snapshot's the newest row at or before its clock.
 */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/sqlite/sqlite_store.h"

/* The sets text of the newest row of list_id at or before clock (INT64_MAX: the current
 * ones) as a JSON array into *out; [] when there is none. */
static sg_err load_sets(sg__sq *st, const char *list_id, int64_t clock, json_t **out) {
  static const char q[] =
      "SELECT sets FROM synonyms WHERE list_id=?1 AND clock<=?2 ORDER BY clock DESC LIMIT 1";
  sqlite3_stmt *s = sg__sq_prep(st, q);
  if (!s) return SG_E_INTERNAL;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, clock);
  int step = sqlite3_step(s);
  sg_err rc = SG_E_INTERNAL;
  json_t *sets = NULL;
  if (step == SQLITE_DONE)
    sets = json_array();
  else if (step == SQLITE_ROW)
    sets = json_loads(sg__sq_col(s, 0), 0, NULL);
  sqlite3_reset(s);
  if (json_is_array(sets)) {
    *out = sets;
    rc = SG_E_OK;
  } else {
    json_decref(sets);
  }
  return rc;
}

sg_err sg__sqlite_synonyms_get(sg_store *base, const char *workspace_id, const char *list_id,
                               json_t **out) {
  sg__sq *st = sg__sq_of(base);
  sg__sq *r = sg__sq_reader_acquire(st);
  /* One read transaction, so the statements below agree on one snapshot. */
  sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL);
  sg_err rc = sg__sq_list_exists(r, workspace_id, list_id);
  if (rc == SG_E_OK) rc = load_sets(r, list_id, INT64_MAX, out);
  sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
  sg__sq_reader_release(r);
  return rc;
}

sg_err sg__sqlite_synonyms_put(sg_store *base, const char *workspace_id, const char *list_id,
                               const char *sets_json, const char *if_match, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q_ins[] = "INSERT INTO synonyms(list_id, clock, sets) VALUES(?1, ?2, ?3)";
  /* Keeps the newest row at or before the oldest unresolved or active version's snapshot
   * (the sets that version compiles, or compiles again: docs/UPGRADING.md) and everything
   * after it. */
  static const char q_prune[] =
      "DELETE FROM synonyms WHERE list_id=?1 AND clock < (SELECT COALESCE(MAX(clock), 0)"
      " FROM synonyms WHERE list_id=?1 AND clock <= COALESCE((SELECT MIN(snapshot_seq) FROM"
      " versions WHERE list_id=?1 AND state IN ('queued', 'staged', 'active')), ?2))";
  json_t *cur = NULL, *sent = json_loads(sets_json, 0, NULL);
  if (!json_is_array(sent)) {
    json_decref(sent);
    return SG_E_INTERNAL;
  }
  sg_err rc = SG_E_INTERNAL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  rc = sg__sq_list_writable(st, workspace_id, list_id);
  if (rc != SG_E_OK) goto end;
  if ((rc = load_sets(st, list_id, INT64_MAX, &cur)) != SG_E_OK) goto end;
  if (if_match) {
    char etag[48];
    sg_store_synonyms_etag(cur, etag);
    if (!sg_etag_match(if_match, etag)) {
      rc = SG_E_PRECONDITION_FAILED;
      goto end;
    }
  }
  if (json_equal(cur, sent)) goto end; /* unchanged: nothing to write */
  rc = SG_E_INTERNAL;
  int64_t clock;
  if (sg__sq_item_clock_next(st, list_id, &clock)) goto end;
  sqlite3_stmt *s = sg__sq_prep(st, q_ins);
  if (!s) goto end;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, clock);
  sg__sq_text(s, 3, sets_json);
  if (sg__sq_run(st, s) != 1) goto end;
  if (!(s = sg__sq_prep(st, q_prune))) goto end;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, clock);
  if (sg__sq_run(st, s) < 0) goto end;
  rc = SG_E_OK;
end:
  rc = sg__sq_end(st, rc);
out:
  pthread_mutex_unlock(&st->mu);
  if (rc == SG_E_OK) {
    *out = sent;
    json_decref(cur);
  } else if (rc == SG_E_PRECONDITION_FAILED) {
    *out = cur;
    json_decref(sent);
  } else {
    json_decref(cur);
    json_decref(sent);
  }
  return rc;
}

sg_err sg__sqlite_snapshot_synonyms(sg_store *base, const char *list_id, int64_t snapshot_seq,
                                    json_t **out) {
  sg__sq *st = sg__sq_of(base);
  sg__sq *r = sg__sq_reader_acquire(st);
  sg_err rc = load_sets(r, list_id, snapshot_seq, out);
  sg__sq_reader_release(r);
  return rc;
}
