/*
 * SQLite backend: items.
 *
 * Items are append-only rows numbered by seq; see migration 2 for why that makes
 * version snapshots free. aliases and locales are kept as the compact JSON the API
 * accepted (NULL when empty), display_value always holds the effective value.
 */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/sqlite/sqlite_store.h"

#define ITEM_COLS                                                                          \
  "id, value, display_value, aliases, rank, parent_id, locales, display_order, created_at"

/* Parses a stored JSON column, falling back to a fresh empty value of the given kind. */
static json_t *json_col(sqlite3_stmt *s, int col, bool object) {
  const char *t = sg__sq_col(s, col);
  json_t *v = t ? json_loads(t, 0, NULL) : NULL;
  if (!v) v = object ? json_object() : json_array();
  return v;
}

/* Builds the API representation of the item row under s (ITEM_COLS order). */
static json_t *row_to_item(sqlite3_stmt *s) {
  json_t *o = json_object();
  json_object_set_new(o, "id", json_string(sg__sq_col(s, 0)));
  json_object_set_new(o, "value", json_string(sg__sq_col(s, 1)));
  json_object_set_new(o, "displayValue", json_string(sg__sq_col(s, 2)));
  json_object_set_new(o, "aliases", json_col(s, 3, false));
  json_object_set_new(o, "rank", json_integer(sqlite3_column_int64(s, 4)));
  const char *p = sg__sq_col(s, 5);
  json_object_set_new(o, "parentId", p ? json_string(p) : json_null());
  json_object_set_new(o, "locales", json_col(s, 6, true));
  json_object_set_new(o, "displayOrder", json_integer(sqlite3_column_int64(s, 7)));
  json_object_set_new(o, "createdAt", sg__sq_ts(s, 8));
  return o;
}

/* Compact JSON text of v, or NULL when v is absent, null or empty (the stored form of
 * "none"). The caller frees the result. */
static char *json_text_or_null(const json_t *v) {
  if (!v || json_is_null(v)) return NULL;
  if (json_is_array(v) && json_array_size(v) == 0) return NULL;
  if (json_is_object(v) && json_object_size(v) == 0) return NULL;
  return json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
}

sg_err sg__sq_list_writable(sg_store *st, const char *workspace_id, const char *list_id) {
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

sg_err sg_store_item_create(sg_store *st, const char *workspace_id, const char *list_id,
                            const json_t *item, json_t **out) {
  static const char q_parent[] = "SELECT 1 FROM items WHERE id=? AND list_id=?";
  static const char q_ins[] =
      "INSERT INTO items(id, list_id, value, display_value, aliases, rank, parent_id, locales,"
      " display_order, created_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
  static const char q_get[] = "SELECT " ITEM_COLS " FROM items WHERE id=?";
  char id[32];
  sg_random_id("itm_", id, sizeof id);
  const char *parent = json_string_value(json_object_get(item, "parentId"));
  char *aliases = json_text_or_null(json_object_get(item, "aliases"));
  char *locales = json_text_or_null(json_object_get(item, "locales"));
  sg_err rc = SG_E_INTERNAL;
  sqlite3_stmt *s;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st)) goto out;
  rc = sg__sq_list_writable(st, workspace_id, list_id);
  if (rc != SG_E_OK) goto rollback;
  if (parent) {
    if (!(s = sg__sq_prep(st, q_parent))) goto fail;
    sg__sq_text(s, 1, parent);
    sg__sq_text(s, 2, list_id);
    int step = sqlite3_step(s);
    sqlite3_reset(s);
    if (step == SQLITE_DONE) {
      rc = SG_E_INVALID_REQUEST;
      goto rollback;
    }
    if (step != SQLITE_ROW) goto fail;
  }
  if (!(s = sg__sq_prep(st, q_ins))) goto fail;
  sg__sq_text(s, 1, id);
  sg__sq_text(s, 2, list_id);
  sg__sq_text(s, 3, json_string_value(json_object_get(item, "value")));
  sg__sq_text(s, 4, json_string_value(json_object_get(item, "displayValue")));
  sg__sq_text(s, 5, aliases);
  sqlite3_bind_int64(s, 6, json_integer_value(json_object_get(item, "rank")));
  sg__sq_text(s, 7, parent);
  sg__sq_text(s, 8, locales);
  sqlite3_bind_int64(s, 9, json_integer_value(json_object_get(item, "displayOrder")));
  sqlite3_bind_int64(s, 10, sg_now_s());
  int step = sqlite3_step(s);
  int ext = sqlite3_extended_errcode(st->db);
  sqlite3_reset(s);
  if (step != SQLITE_DONE) {
    /* The only UNIQUE constraints are the random id (131 bits) and (list_id, value). */
    rc = ext == SQLITE_CONSTRAINT_UNIQUE ? SG_E_DUPLICATE_VALUE : SG_E_INTERNAL;
    goto rollback;
  }
  if (!(s = sg__sq_prep(st, q_get))) goto fail;
  sg__sq_text(s, 1, id);
  if (sqlite3_step(s) != SQLITE_ROW) {
    sqlite3_reset(s);
    goto fail;
  }
  *out = row_to_item(s);
  sqlite3_reset(s);
  if (sg__sq_commit(st)) {
    json_decref(*out);
    *out = NULL;
    goto fail;
  }
  rc = SG_E_OK;
  goto out;
fail:
  rc = SG_E_INTERNAL;
rollback:
  sg__sq_rollback(st);
out:
  pthread_mutex_unlock(&st->mu);
  free(aliases);
  free(locales);
  return rc;
}

sg_err sg_store_item_page(sg_store *st, const char *workspace_id, const char *list_id,
                          size_t limit, const json_t *after, json_t **data, bool *more) {
  static const char q_list[] = "SELECT 1 FROM lists WHERE id=? AND workspace_id=?";
  static const char q_first[] = "SELECT " ITEM_COLS " FROM items WHERE list_id=?1"
                                " ORDER BY display_order, id LIMIT ?2";
  static const char q_after[] =
      "SELECT " ITEM_COLS " FROM items WHERE list_id=?1"
      " AND (display_order, id) > (?3, ?4) ORDER BY display_order, id LIMIT ?2";
  sg_err rc = SG_E_INTERNAL;
  json_t *arr = NULL;
  *more = false;
  pthread_mutex_lock(&st->mu);
  /* One read transaction so the existence check and the page agree. */
  if (sqlite3_exec(st->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) goto out;
  sqlite3_stmt *s = sg__sq_prep(st, q_list);
  if (!s) goto end;
  sg__sq_text(s, 1, list_id);
  sg__sq_text(s, 2, workspace_id);
  int step = sqlite3_step(s);
  sqlite3_reset(s);
  if (step != SQLITE_ROW) {
    rc = step == SQLITE_DONE ? SG_E_INVALID_LIST : SG_E_INTERNAL;
    goto end;
  }
  if (!(s = sg__sq_prep(st, after ? q_after : q_first))) goto end;
  sg__sq_text(s, 1, list_id);
  sqlite3_bind_int64(s, 2, (sqlite3_int64)limit + 1);
  if (after) {
    sqlite3_bind_int64(s, 3, json_integer_value(json_array_get(after, 0)));
    sg__sq_text(s, 4, json_string_value(json_array_get(after, 1)));
  }
  arr = json_array();
  while ((step = sqlite3_step(s)) == SQLITE_ROW) {
    if (json_array_size(arr) == limit) {
      *more = true;
      break;
    }
    json_array_append_new(arr, row_to_item(s));
  }
  sqlite3_reset(s);
  if (step == SQLITE_ROW || step == SQLITE_DONE) {
    *data = arr;
    arr = NULL;
    rc = SG_E_OK;
  }
end:
  sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
out:
  pthread_mutex_unlock(&st->mu);
  json_decref(arr);
  return rc;
}
