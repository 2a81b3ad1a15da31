/*
 * SQLite backend: selection events drained from a fleet's Redis stream, and the
 * dashboard's selection analytics over them.
 */
#include <stdio.h>

#include "store/sqlite/sqlite_store.h"

sg_err sg__sqlite_selections_add(sg_store *base, const sg_selection_event *ev, size_t n) {
  sg__sq *st = sg__sq_of(base);
  static const char q[] =
      "INSERT INTO selections(selection_id, ts_ms, application_id, key_id, list_id, item_id,"
      " query_request_id, position, query) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
      " ON CONFLICT(selection_id, ts_ms) DO NOTHING";
  sg_err rc = SG_E_INTERNAL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st) == 0) {
    rc = SG_E_OK;
    for (size_t i = 0; i < n && rc == SG_E_OK; i++) {
      sqlite3_stmt *s = sg__sq_prep(st, q);
      if (!s) {
        rc = SG_E_INTERNAL;
        break;
      }
      sg__sq_text(s, 1, ev[i].selection_id);
      sqlite3_bind_int64(s, 2, ev[i].ts_ms);
      sg__sq_text(s, 3, ev[i].application_id);
      sg__sq_text(s, 4, ev[i].key_id);
      sg__sq_text(s, 5, ev[i].list_id);
      sg__sq_text(s, 6, ev[i].item_id);
      sg__sq_text(s, 7, ev[i].query_request_id);
      sqlite3_bind_int64(s, 8, ev[i].position);
      sg__sq_text(s, 9, ev[i].query);
      if (sg__sq_run(st, s) < 0) rc = SG_E_INTERNAL;
    }
    rc = sg__sq_end(st, rc);
  }
  pthread_mutex_unlock(&st->mu);
  return rc;
}

sg_err sg__sqlite_selection_stats(sg_store *base, const char *list_id, int64_t since_ms, size_t top,
                                  json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char days[] =
      "SELECT strftime('%Y-%m-%d', ts_ms / 1000, 'unixepoch'), count(*) FROM selections"
      " WHERE list_id = ?1 AND ts_ms >= ?2 GROUP BY 1";
  static const char items[] =
      "SELECT item_id, count(*) AS n FROM selections WHERE list_id = ?1 AND ts_ms >= ?2"
      " GROUP BY item_id ORDER BY n DESC, item_id LIMIT ?3";
  json_t *per_day = json_object(), *top_items = json_array();
  sg_err rc = SG_E_INTERNAL;
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, days);
  int step = SQLITE_ERROR;
  if (s) {
    sg__sq_text(s, 1, list_id);
    sqlite3_bind_int64(s, 2, since_ms);
    while ((step = sqlite3_step(s)) == SQLITE_ROW)
      json_object_set_new(per_day, sg__sq_col(s, 0), json_integer(sqlite3_column_int64(s, 1)));
    sqlite3_reset(s);
  }
  if (step == SQLITE_DONE && (s = sg__sq_prep(r, items))) {
    sg__sq_text(s, 1, list_id);
    sqlite3_bind_int64(s, 2, since_ms);
    sqlite3_bind_int64(s, 3, (sqlite3_int64)top);
    while ((step = sqlite3_step(s)) == SQLITE_ROW)
      json_array_append_new(top_items,
                            json_pack("{s:s,s:I}", "itemId", sg__sq_col(s, 0), "selections",
                                      (json_int_t)sqlite3_column_int64(s, 1)));
    sqlite3_reset(s);
    if (step == SQLITE_DONE) rc = SG_E_OK;
  }
  sg__sq_reader_release(r);
  if (rc == SG_E_OK) {
    *out = json_pack("{s:o,s:o}", "perDay", per_day, "topItems", top_items);
  } else {
    json_decref(per_day);
    json_decref(top_items);
  }
  return rc;
}
