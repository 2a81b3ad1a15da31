/*
 * SQLite backend: items.
 *
 * An item is a chain of row versions stamped with the list's item clock (migration 3):
 * the current row has to_clock NULL; an edit ends it and inserts the new row, a delete
 * only ends it. Version snapshots read "the rows visible at clock S". aliases and locales
 * are kept as the compact JSON the API accepted (NULL when empty), display_value always
 * holds the effective value.
 */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/rules.h"
#include "store/sqlite/sqlite_store.h"

#define ITEM_COLS SG__SQ_ITEM_COLS

json_t *sg__sq_item_row(sqlite3_stmt *s) {
  sg__store_item_row r = {
      .id = sg__sq_col(s, 0),
      .value = sg__sq_col(s, 1),
      .display_value = sg__sq_col(s, 2),
      .aliases = sg__sq_col(s, 3),
      .rank = sqlite3_column_int64(s, 4),
      .parent_id = sg__sq_col(s, 5),
      .locales = sg__sq_col(s, 6),
      .display_order = sqlite3_column_int64(s, 7),
      .created_at = sqlite3_column_int64(s, 8),
      .description = sg__sq_col(s, 9),
  };
  return sg__store_item_record(&r);
}

char *sg__sq_json_text(const json_t *v) { return sg__store_json_text(v); }

int sg__sq_item_clock_next(sg__sq *st, const char *list_id, int64_t *clock) {
  static const char q[] =
      "UPDATE lists SET item_clock=item_clock+1 WHERE id=? RETURNING item_clock";
  sqlite3_stmt *s = sg__sq_prep(st, q);
  if (!s) return -1;
  sg__sq_text(s, 1, list_id);
  int step = sqlite3_step(s);
  if (step == SQLITE_ROW) *clock = sqlite3_column_int64(s, 0);
  while (step == SQLITE_ROW) step = sqlite3_step(s);
  sqlite3_reset(s);
  return step == SQLITE_DONE ? 0 : -1;
}

sg_err sg__sq_list_writable(sg__sq *st, const char *workspace_id, const char *list_id) {
  static const char q[] = "SELECT status FROM lists WHERE id=? AND workspace_id=?";
  sqlite3_stmt *s = sg__sq_prep(st, q);
  if (!s) return SG_E_INTERNAL;
  sg__sq_text(s, 1, list_id);
  sg__sq_text(s, 2, workspace_id);
  int step = sqlite3_step(s);
  sg_err rc = SG_E_INTERNAL;
  if (step == SQLITE_ROW)
    rc = strcmp(sg__sq_col(s, 0), "archived") == 0 ? SG_E_LIST_ARCHIVED : SG_E_OK;
  else if (step == SQLITE_DONE)
    rc = SG_E_INVALID_LIST;
  sqlite3_reset(s);
  return rc;
}

sg_err sg__sqlite_item_create(sg_store *base, const char *workspace_id, const char *list_id,
                              const json_t *item, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q_parent[] =
      "SELECT 1 FROM items WHERE id=? AND list_id=? AND to_clock IS NULL";
  static const char q_ins[] =
      "INSERT INTO items(id, list_id, value, display_value, aliases, rank, parent_id, locales,"
      " display_order, description, created_at, from_clock)"
      " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  static const char q_get[] = "SELECT " ITEM_COLS " FROM items WHERE id=? AND to_clock IS NULL";
  char id[32];
  sg_random_id("itm_", id, sizeof id);
  const char *parent = json_string_value(json_object_get(item, "parentId"));
  char *aliases = sg__sq_json_text(json_object_get(item, "aliases"));
  char *locales = sg__sq_json_text(json_object_get(item, "locales"));
  sg_err rc = SG_E_INTERNAL;
  json_t *created = NULL;
  sqlite3_stmt *s;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  rc = sg__sq_list_writable(st, workspace_id, list_id);
  if (rc != SG_E_OK) goto end;
  if (parent) {
    int found = sg__sq_exists(st, q_parent, parent, list_id);
    if (found == 0) {
      rc = SG_E_INVALID_REQUEST;
      goto end;
    }
    if (found < 0) goto fail;
  }
  int64_t clock;
  if (sg__sq_item_clock_next(st, list_id, &clock)) goto fail;
  if (!(s = sg__sq_prep(st, q_ins))) goto fail;
  sg__sq_text(s, 1, id);
  sg__sq_text(s, 2, list_id);
  sg__sq_bind_item(s, 3, item, aliases, parent, locales);
  sqlite3_bind_int64(s, 11, sg_now_s());
  sqlite3_bind_int64(s, 12, clock);
  int step = sqlite3_step(s);
  int ext = sqlite3_extended_errcode(st->db);
  sqlite3_reset(s);
  if (step != SQLITE_DONE) {
    /* The only UNIQUE indexes are the random id (131 bits) and (list_id, value), both
     * among current rows. */
    rc = ext == SQLITE_CONSTRAINT_UNIQUE ? SG_E_DUPLICATE_VALUE : SG_E_INTERNAL;
    goto end;
  }
  if (!(s = sg__sq_prep(st, q_get))) goto fail;
  sg__sq_text(s, 1, id);
  if (sqlite3_step(s) != SQLITE_ROW) {
    sqlite3_reset(s);
    goto fail;
  }
  created = sg__sq_item_row(s);
  sqlite3_reset(s);
  rc = SG_E_OK;
  goto end;
fail:
  rc = SG_E_INTERNAL;
end:
  if ((rc = sg__sq_end(st, rc)) == SG_E_OK)
    *out = created;
  else
    json_decref(created);
out:
  pthread_mutex_unlock(&st->mu);
  free(aliases);
  free(locales);
  return rc;
}

sg_err sg__sqlite_item_page(sg_store *base, const char *workspace_id, const char *list_id,
                            size_t limit, const json_t *after, json_t **data, bool *more) {
  sg__sq *st = sg__sq_of(base);
  static const char q_first[] = "SELECT " ITEM_COLS " FROM items WHERE list_id=?1"
                                " AND to_clock IS NULL ORDER BY display_order, id LIMIT ?2";
  static const char q_after[] =
      "SELECT " ITEM_COLS " FROM items WHERE list_id=?1 AND to_clock IS NULL"
      " AND (display_order, id) > (?3, ?4) ORDER BY display_order, id LIMIT ?2";
  sg_err rc = SG_E_INTERNAL;
  *more = false;
  sg__sq *r = sg__sq_reader_acquire(st);
  /* One read transaction so the existence check and the page agree. */
  if (sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) goto out;
  if ((rc = sg__sq_list_exists(r, workspace_id, list_id)) != SG_E_OK) goto end;
  rc = SG_E_INTERNAL;
  sqlite3_stmt *s = sg__sq_prep(r, after ? q_after : q_first);
  if (!s) goto end;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, (sqlite3_int64)limit + 1);
  if (after) {
    sqlite3_bind_int64(s, 3, json_integer_value(json_array_get(after, 0)));
    sg__sq_text(s, 4, json_string_value(json_array_get(after, 1)));
  }
  json_t *arr = sg__sq_page_rows(s, limit, sg__sq_item_row, more);
  if (arr) {
    *data = arr;
    rc = SG_E_OK;
  }
end:
  sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
out:
  sg__sq_reader_release(r);
  return rc;
}

/* ---- single-item reads and edits ------------------------------------------------------- */

/* Loads the current row of item_id in list_id (under the lock) into *out and its seq.
 * SG_E_INVALID_ITEM when there is none. */
static sg_err load_item(sg__sq *st, const char *list_id, const char *item_id, json_t **out,
                        int64_t *seq) {
  static const char q[] = "SELECT " ITEM_COLS ", seq FROM items WHERE id=? AND list_id=?"
                          " AND to_clock IS NULL";
  sqlite3_stmt *s = sg__sq_prep(st, q);
  if (!s) return SG_E_INTERNAL;
  sg__sq_text(s, 1, item_id);
  sg__sq_text(s, 2, list_id);
  int step = sqlite3_step(s);
  sg_err rc = step == SQLITE_DONE ? SG_E_INVALID_ITEM : SG_E_INTERNAL;
  if (step == SQLITE_ROW) {
    *out = sg__sq_item_row(s);
    if (seq) *seq = sqlite3_column_int64(s, 10);
    rc = SG_E_OK;
  }
  sqlite3_reset(s);
  return rc;
}

sg_err sg__sqlite_item_get(sg_store *base, const char *workspace_id, const char *list_id,
                           const char *item_id, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  sg__sq *r = sg__sq_reader_acquire(st);
  /* One read transaction, so the statements below agree on one snapshot. */
  sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL);
  sg_err rc = sg__sq_list_exists(r, workspace_id, list_id);
  if (rc == SG_E_OK) rc = load_item(r, list_id, item_id, out, NULL);
  sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
  sg__sq_reader_release(r);
  return rc;
}

/* Begins a write on one item: the list must be writable, the item current, and if_match
 * (when not NULL) must name its ETag; on a mismatch *cur is left set for the 412. */
static sg_err begin_item_write(sg__sq *st, const char *workspace_id, const char *list_id,
                               const char *item_id, const char *if_match, json_t **cur,
                               int64_t *seq) {
  sg_err rc = sg__sq_list_writable(st, workspace_id, list_id);
  if (rc != SG_E_OK) return rc;
  if ((rc = load_item(st, list_id, item_id, cur, seq)) != SG_E_OK) return rc;
  if (if_match) {
    char etag[48];
    sg_store_item_etag(*cur, etag);
    if (!sg_etag_match(if_match, etag)) return SG_E_PRECONDITION_FAILED;
  }
  return SG_E_OK;
}

/* Ends the current row `seq` at clock (the row stays for older snapshots). */
static int end_row(sg__sq *st, int64_t seq, int64_t clock) {
  static const char q[] = "UPDATE items SET to_clock=?2 WHERE seq=?1 AND to_clock IS NULL";
  sqlite3_stmt *s = sg__sq_prep(st, q);
  if (!s) return -1;
  sqlite3_bind_int64(s, 1, seq);
  sqlite3_bind_int64(s, 2, clock);
  return sg__sq_run(st, s) == 1 ? 0 : -1;
}

/* Depth bound of the parent walk that refuses cycles; deeper chains are left to publish
 * validation, which checks the whole list anyway. */
#define PARENT_WALK_MAX 4096

/* SG_E_OK when parent is a current item of the list and making it item_id's parent does
 * not close a cycle; SG_E_INVALID_REQUEST otherwise. */
static sg_err check_parent(sg__sq *st, const char *list_id, const char *item_id,
                           const char *parent) {
  static const char q[] =
      "SELECT parent_id FROM items WHERE id=? AND list_id=? AND to_clock IS NULL";
  char cur[160];
  snprintf(cur, sizeof cur, "%s", parent);
  for (int depth = 0; depth < PARENT_WALK_MAX; depth++) {
    if (strcmp(cur, item_id) == 0) return SG_E_INVALID_REQUEST;
    sqlite3_stmt *s = sg__sq_prep(st, q);
    if (!s) return SG_E_INTERNAL;
    sg__sq_text(s, 1, cur);
    sg__sq_text(s, 2, list_id);
    int step = sqlite3_step(s);
    if (step != SQLITE_ROW) {
      sqlite3_reset(s);
      /* The first hop must exist; a dangling id further up is publish validation's. */
      return step == SQLITE_DONE ? (depth == 0 ? SG_E_INVALID_REQUEST : SG_E_OK) : SG_E_INTERNAL;
    }
    const char *up = sg__sq_col(s, 0);
    bool top = up == NULL;
    if (!top) snprintf(cur, sizeof cur, "%s", up);
    sqlite3_reset(s);
    if (top) return SG_E_OK;
  }
  return SG_E_OK;
}

sg_err sg__sqlite_item_update(sg_store *base, const char *workspace_id, const char *list_id,
                              const char *item_id, const json_t *item, const char *if_match,
                              json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char q_ins[] =
      "INSERT INTO items(id, list_id, value, display_value, aliases, rank, parent_id, locales,"
      " display_order, description, created_at, from_clock) SELECT id, list_id, ?2, ?3, ?4,"
      " ?5, ?6, ?7, ?8, ?9, created_at, ?10 FROM items WHERE seq=?1";
  const char *parent = json_string_value(json_object_get(item, "parentId"));
  char *aliases = sg__sq_json_text(json_object_get(item, "aliases"));
  char *locales = sg__sq_json_text(json_object_get(item, "locales"));
  json_t *cur = NULL, *updated = NULL;
  int64_t seq = 0, clock = 0;
  *out = NULL;
  pthread_mutex_lock(&st->mu);
  sg_err rc = SG_E_INTERNAL;
  if (sg__sq_begin(st)) goto out;
  rc = begin_item_write(st, workspace_id, list_id, item_id, if_match, &cur, &seq);
  if (rc != SG_E_OK) goto end;
  if (parent && (rc = check_parent(st, list_id, item_id, parent)) != SG_E_OK) goto end;
  rc = SG_E_INTERNAL;
  /* An edit that changes nothing writes nothing: the ETag and history stay as they are. */
  json_t *next = json_deep_copy(cur);
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)item, k, v) {
    /* The record has no description rather than a null one. */
    if (json_is_null(v) && strcmp(k, "description") == 0)
      json_object_del(next, k);
    else
      json_object_set(next, k, v);
  }
  if (json_equal(next, cur)) {
    json_decref(next);
    updated = cur;
    cur = NULL;
    rc = SG_E_OK;
    goto end;
  }
  json_decref(next);
  if (sg__sq_item_clock_next(st, list_id, &clock) || end_row(st, seq, clock)) goto end;
  sqlite3_stmt *s = sg__sq_prep(st, q_ins);
  if (!s) goto end;
  sqlite3_bind_int64(s, 1, seq);
  sg__sq_bind_item(s, 2, item, aliases, parent, locales);
  sqlite3_bind_int64(s, 10, clock);
  int step = sqlite3_step(s);
  int ext = sqlite3_extended_errcode(st->db);
  sqlite3_reset(s);
  if (step != SQLITE_DONE) {
    rc = ext == SQLITE_CONSTRAINT_UNIQUE ? SG_E_DUPLICATE_VALUE : SG_E_INTERNAL;
    goto end;
  }
  if (load_item(st, list_id, item_id, &updated, NULL) == SG_E_OK) rc = SG_E_OK;
end:
  rc = sg__sq_end(st, rc);
  if (rc == SG_E_OK) {
    *out = updated;
    updated = NULL;
  } else if (rc == SG_E_PRECONDITION_FAILED) {
    *out = cur;
    cur = NULL;
  }
out:
  pthread_mutex_unlock(&st->mu);
  json_decref(cur);
  json_decref(updated);
  free(aliases);
  free(locales);
  return rc;
}

sg_err sg__sqlite_item_delete(sg_store *base, const char *workspace_id, const char *list_id,
                              const char *item_id, const char *if_match, json_t **cur_out) {
  sg__sq *st = sg__sq_of(base);
  static const char q_kids[] = "SELECT 1 FROM items WHERE list_id=? AND parent_id=?"
                               " AND to_clock IS NULL LIMIT 1";
  json_t *cur = NULL;
  int64_t seq = 0, clock = 0;
  *cur_out = NULL;
  pthread_mutex_lock(&st->mu);
  sg_err rc = SG_E_INTERNAL;
  if (sg__sq_begin(st)) goto out;
  rc = begin_item_write(st, workspace_id, list_id, item_id, if_match, &cur, &seq);
  if (rc != SG_E_OK) goto end;
  rc = SG_E_INTERNAL;
  int kids = sg__sq_exists(st, q_kids, list_id, item_id);
  if (kids > 0) {
    rc = SG_E_ITEM_HAS_CHILDREN;
    goto end;
  }
  if (kids < 0) goto end;
  if (sg__sq_item_clock_next(st, list_id, &clock) == 0 && end_row(st, seq, clock) == 0)
    rc = SG_E_OK;
end:
  if ((rc = sg__sq_end(st, rc)) == SG_E_PRECONDITION_FAILED) {
    *cur_out = cur;
    cur = NULL;
  }
out:
  pthread_mutex_unlock(&st->mu);
  json_decref(cur);
  return rc;
}

/* ---- history pruning ---------------------------------------------------------------------- */

sg_err sg__sqlite_items_prune(sg_store *base, const char *list_id, size_t max, size_t *n) {
  sg__sq *st = sg__sq_of(base);
  /* A row ended at clock T is visible only to snapshots S < T; once no unresolved or
   * active version has such a snapshot, nobody can read it again (the active version's
   * snapshot stays whole: the background recompile compiles it again, docs/UPGRADING.md). */
  static const char q[] =
      "DELETE FROM items WHERE seq IN (SELECT seq FROM items WHERE list_id=?1"
      " AND to_clock IS NOT NULL AND to_clock <= COALESCE((SELECT MIN(snapshot_seq)"
      " FROM versions WHERE list_id=?1 AND state IN ('queued', 'staged', 'active')),"
      " 9223372036854775807) LIMIT ?2)";
  *n = 0;
  pthread_mutex_lock(&st->mu);
  sg_err rc = SG_E_INTERNAL;
  sqlite3_stmt *s = sg__sq_prep(st, q);
  if (s) {
    sg__sq_text(s, 1, list_id);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)max);
    if (sqlite3_step(s) == SQLITE_DONE) {
      *n = (size_t)sqlite3_changes(st->db);
      rc = SG_E_OK;
    }
    sqlite3_reset(s);
  }
  pthread_mutex_unlock(&st->mu);
  return rc;
}
