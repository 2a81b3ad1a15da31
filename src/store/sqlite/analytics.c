/*
 * SQLite backend: search analytics shipments from the runtimes (store.h,
 * sg_store_analytics_add), the analytics answer over them, and their retention.
 */
#include <stdio.h>

#include "store/sqlite/sqlite_store.h"

/* ---------------------------------------------------------------- add ------------ */

/* One 'q' row under the cap of SG_STORE_ANALYTICS_Q_CAP distinct q per list-hour. */
static sg_err add_q(sg__sq *st, const sg_analytics_row *r) {
  sqlite3_stmt *s = sg__sq_prep(st, "UPDATE analytics_queries SET count = count + ?4,"
                                    " no_result = no_result + ?5"
                                    " WHERE list_id = ?1 AND hour = ?2 AND q = ?3");
  if (!s) return SG_E_INTERNAL;
  sg__sq_text(s, 1, r->list_id);
  sqlite3_bind_int64(s, 2, r->hour);
  sg__sq_text(s, 3, r->q);
  sqlite3_bind_int64(s, 4, r->count);
  sqlite3_bind_int64(s, 5, r->no_result);
  int ch = sg__sq_run(st, s);
  if (ch != 0) return ch < 0 ? SG_E_INTERNAL : SG_E_OK;
  /* A new q of this list-hour. */
  s = sg__sq_prep(st, "INSERT INTO analytics_hours(list_id, hour) VALUES(?1, ?2)"
                      " ON CONFLICT(list_id, hour) DO NOTHING");
  if (!s) return SG_E_INTERNAL;
  sg__sq_text(s, 1, r->list_id);
  sqlite3_bind_int64(s, 2, r->hour);
  if (sg__sq_run(st, s) < 0) return SG_E_INTERNAL;
  s = sg__sq_prep(st, "SELECT distinct_q FROM analytics_hours WHERE list_id = ?1 AND hour = ?2");
  if (!s) return SG_E_INTERNAL;
  sg__sq_text(s, 1, r->list_id);
  sqlite3_bind_int64(s, 2, r->hour);
  int64_t distinct = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
  sqlite3_reset(s);
  if (distinct < 0) return SG_E_INTERNAL;
  int64_t base = 0, base_nr = 0;
  if (distinct >= SG_STORE_ANALYTICS_Q_CAP) {
    /* Space-Saving: the least counted q gives up its place. */
    s = sg__sq_prep(st, "DELETE FROM analytics_queries WHERE rowid = (SELECT rowid FROM"
                        " analytics_queries WHERE list_id = ?1 AND hour = ?2"
                        " ORDER BY count ASC, q DESC LIMIT 1) RETURNING count, no_result");
    if (!s) return SG_E_INTERNAL;
    sg__sq_text(s, 1, r->list_id);
    sqlite3_bind_int64(s, 2, r->hour);
    if (sqlite3_step(s) == SQLITE_ROW) {
      base = sqlite3_column_int64(s, 0);
      base_nr = sqlite3_column_int64(s, 1);
    }
    int step;
    while ((step = sqlite3_step(s)) == SQLITE_ROW) {}
    sqlite3_reset(s);
    if (step != SQLITE_DONE) return SG_E_INTERNAL;
  } else {
    s = sg__sq_prep(st, "UPDATE analytics_hours SET distinct_q = distinct_q + 1"
                        " WHERE list_id = ?1 AND hour = ?2");
    if (!s) return SG_E_INTERNAL;
    sg__sq_text(s, 1, r->list_id);
    sqlite3_bind_int64(s, 2, r->hour);
    if (sg__sq_run(st, s) < 0) return SG_E_INTERNAL;
  }
  int64_t count = base + r->count, nr = base_nr + r->no_result;
  s = sg__sq_prep(st, "INSERT INTO analytics_queries(list_id, hour, q, count, no_result)"
                      " VALUES(?1, ?2, ?3, ?4, ?5)");
  if (!s) return SG_E_INTERNAL;
  sg__sq_text(s, 1, r->list_id);
  sqlite3_bind_int64(s, 2, r->hour);
  sg__sq_text(s, 3, r->q);
  sqlite3_bind_int64(s, 4, count);
  sqlite3_bind_int64(s, 5, nr < count ? nr : count);
  return sg__sq_run(st, s) < 0 ? SG_E_INTERNAL : SG_E_OK;
}

static sg_err add_row(sg__sq *st, const sg_analytics_row *r) {
  sqlite3_stmt *s;
  switch (r->kind) {
  case 'q': return add_q(st, r);
  case 'h':
    s = sg__sq_prep(st, "INSERT INTO analytics_hours(list_id, hour, queries, no_result)"
                        " VALUES(?1, ?2, ?3, ?4) ON CONFLICT(list_id, hour) DO UPDATE SET"
                        " queries = queries + excluded.queries,"
                        " no_result = no_result + excluded.no_result");
    if (!s) return SG_E_INTERNAL;
    sg__sq_text(s, 1, r->list_id);
    sqlite3_bind_int64(s, 2, r->hour);
    sqlite3_bind_int64(s, 3, r->count);
    sqlite3_bind_int64(s, 4, r->no_result);
    break;
  case 's':
    s = sg__sq_prep(st, "INSERT INTO analytics_selections(list_id, hour, q, item_id, position,"
                        " selections) VALUES(?1, ?2, ?3, ?4, ?5, ?6)"
                        " ON CONFLICT(list_id, hour, q, item_id, position) DO UPDATE SET"
                        " selections = selections + excluded.selections");
    if (!s) return SG_E_INTERNAL;
    sg__sq_text(s, 1, r->list_id);
    sqlite3_bind_int64(s, 2, r->hour);
    sg__sq_text(s, 3, r->q);
    sg__sq_text(s, 4, r->item_id);
    sqlite3_bind_int64(s, 5, r->position);
    sqlite3_bind_int64(s, 6, r->count);
    break;
  default: /* 'r' */
    s = sg__sq_prep(st, "INSERT INTO analytics_raw(list_id, hour, q, raw, count)"
                        " VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(list_id, hour, q, raw)"
                        " DO UPDATE SET count = count + excluded.count");
    if (!s) return SG_E_INTERNAL;
    sg__sq_text(s, 1, r->list_id);
    sqlite3_bind_int64(s, 2, r->hour);
    sg__sq_text(s, 3, r->q);
    sg__sq_text(s, 4, r->raw);
    sqlite3_bind_int64(s, 5, r->count);
    break;
  }
  return sg__sq_run(st, s) < 0 ? SG_E_INTERNAL : SG_E_OK;
}

sg_err sg__sqlite_analytics_add(sg_store *base, const char *shipment_id, int64_t now_hour,
                                const sg_analytics_row *rows, size_t n) {
  sg__sq *st = sg__sq_of(base);
  sg_err rc = SG_E_INTERNAL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st) == 0) {
    sqlite3_stmt *s = sg__sq_prep(st, "INSERT INTO analytics_shipments(id, hour) VALUES(?1, ?2)"
                                      " ON CONFLICT(id) DO NOTHING");
    int ch = -1;
    if (s) {
      sg__sq_text(s, 1, shipment_id);
      sqlite3_bind_int64(s, 2, now_hour);
      ch = sg__sq_run(st, s);
    }
    rc = ch < 0 ? SG_E_INTERNAL : SG_E_OK;
    /* ch == 0: applied before; nothing more to do. */
    for (size_t i = 0; ch > 0 && i < n && rc == SG_E_OK; i++) rc = add_row(st, &rows[i]);
    rc = sg__sq_end(st, rc);
  }
  pthread_mutex_unlock(&st->mu);
  return rc;
}

/* ---------------------------------------------------------------- read ----------- */

/* Runs s (bound: ?1 list, ?2 from, ?3 to, ?4 top) and appends each row to arr as an
 * array of its columns (text or integer). */
static int rows_into(sqlite3_stmt *s, json_t *arr, const char *const *names, int ncols) {
  int step;
  while ((step = sqlite3_step(s)) == SQLITE_ROW) {
    json_t *o = names ? json_object() : json_array();
    for (int c = 0; c < ncols; c++) {
      json_t *v = sqlite3_column_type(s, c) == SQLITE_TEXT
                      ? json_string(sg__sq_col(s, c))
                      : json_integer(sqlite3_column_int64(s, c));
      if (names)
        json_object_set_new(o, names[c], v);
      else
        json_array_append_new(o, v);
    }
    json_array_append_new(arr, o);
  }
  sqlite3_reset(s);
  return step == SQLITE_DONE ? 0 : -1;
}

sg_err sg__sqlite_analytics_read(sg_store *base, const char *list_id, int64_t from_hour,
                                 int64_t to_hour, size_t top, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char *const sql[5] = {
      "SELECT hour / 24, sum(queries), sum(no_result) FROM analytics_hours"
      " WHERE list_id = ?1 AND hour >= ?2 AND hour < ?3 AND ?4 > 0 GROUP BY 1 ORDER BY 1",
      "SELECT hour / 24, sum(selections) FROM analytics_selections"
      " WHERE list_id = ?1 AND hour >= ?2 AND hour < ?3 AND ?4 > 0 GROUP BY 1 ORDER BY 1",
      "SELECT t.q, t.c, coalesce((SELECT sum(selections) FROM analytics_selections s"
      " WHERE s.list_id = ?1 AND s.hour >= ?2 AND s.hour < ?3 AND s.q = t.q), 0) FROM"
      " (SELECT q, sum(count) AS c FROM analytics_queries WHERE list_id = ?1 AND hour >= ?2"
      " AND hour < ?3 GROUP BY q ORDER BY c DESC, q LIMIT ?4) t ORDER BY t.c DESC, t.q",
      "SELECT q, sum(no_result) AS c FROM analytics_queries WHERE list_id = ?1 AND hour >= ?2"
      " AND hour < ?3 GROUP BY q HAVING c > 0 ORDER BY c DESC, q LIMIT ?4",
      "SELECT item_id, sum(selections) AS c, sum(selections * position) FROM"
      " analytics_selections WHERE list_id = ?1 AND hour >= ?2 AND hour < ?3"
      " GROUP BY item_id ORDER BY c DESC, item_id LIMIT ?4",
  };
  static const char *const qn[] = {"q", "count", "selections"};
  static const char *const nn[] = {"q", "count"};
  static const char *const in[] = {"itemId", "selections", "positionSum"};
  const char *const *names[5] = {NULL, NULL, qn, nn, in};
  const int ncols[5] = {3, 2, 3, 2, 3};
  static const char *const keys[5] = {"days", "selectionDays", "topQueries", "topNoResultQueries",
                                      "topItems"};
  json_t *o = json_object();
  sg_err rc = SG_E_OK;
  sg__sq *r = sg__sq_reader_acquire(st);
  for (int i = 0; i < 5 && rc == SG_E_OK; i++) {
    sqlite3_stmt *s = sg__sq_prep(r, sql[i]);
    json_t *arr = json_array();
    json_object_set_new(o, keys[i], arr);
    if (!s) {
      rc = SG_E_INTERNAL;
      break;
    }
    sg__sq_text(s, 1, list_id);
    sqlite3_bind_int64(s, 2, from_hour);
    sqlite3_bind_int64(s, 3, to_hour);
    sqlite3_bind_int64(s, 4, (sqlite3_int64)top);
    if (rows_into(s, arr, names[i], ncols[i])) rc = SG_E_INTERNAL;
  }
  sg__sq_reader_release(r);
  if (rc == SG_E_OK)
    *out = o;
  else
    json_decref(o);
  return rc;
}

/* ---------------------------------------------------------------- retention ------ */

sg_err sg__sqlite_analytics_expire(sg_store *base, int64_t before_hour, int64_t before_ms) {
  sg__sq *st = sg__sq_of(base);
  static const char *const sql[] = {
      "DELETE FROM analytics_hours WHERE hour < ?1",
      "DELETE FROM analytics_queries WHERE hour < ?1",
      "DELETE FROM analytics_selections WHERE hour < ?1",
      "DELETE FROM analytics_raw WHERE hour < ?1",
      "DELETE FROM analytics_shipments WHERE hour < ?1",
      "DELETE FROM selections WHERE ts_ms < ?2",
  };
  sg_err rc = SG_E_INTERNAL;
  pthread_mutex_lock(&st->mu);
  if (sg__sq_begin(st) == 0) {
    rc = SG_E_OK;
    for (size_t i = 0; i < sizeof sql / sizeof *sql && rc == SG_E_OK; i++) {
      sqlite3_stmt *s = sg__sq_prep(st, sql[i]);
      if (!s) {
        rc = SG_E_INTERNAL;
        break;
      }
      if (i < 5)
        sqlite3_bind_int64(s, 1, before_hour);
      else
        sqlite3_bind_int64(s, 2, before_ms);
      if (sg__sq_run(st, s) < 0) rc = SG_E_INTERNAL;
    }
    rc = sg__sq_end(st, rc);
  }
  pthread_mutex_unlock(&st->mu);
  return rc;
}

/* ---------------------------------------------------------------- suggestions ---- */

/* The qualifying queries, and the raw forms of those queries only, in one read. */
#define QUALIFYING                                                                                 \
  "SELECT q, sum(selections) FROM analytics_selections WHERE list_id = ?1 AND hour >= ?2"          \
  " AND hour < ?3 AND q <> '' GROUP BY q HAVING sum(selections) >= ?4"

sg_err sg__sqlite_analytics_suggest(sg_store *base, const char *list_id, int64_t from_hour,
                                    int64_t to_hour, int64_t min_selections, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  static const char *const sql[2] = {
      QUALIFYING,
      "SELECT q, raw, sum(count) FROM analytics_raw WHERE list_id = ?1 AND hour >= ?2"
      " AND hour < ?3 AND q IN (SELECT q FROM (" QUALIFYING ")) GROUP BY q, raw",
  };
  static const char *const keys[2] = {"queries", "forms"};
  const int ncols[2] = {2, 3};
  json_t *o = json_object();
  sg_err rc = SG_E_OK;
  sg__sq *r = sg__sq_reader_acquire(st);
  /* One read transaction, so both statements see the same shipments. */
  if (sqlite3_exec(r->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) rc = SG_E_INTERNAL;
  for (int i = 0; i < 2 && rc == SG_E_OK; i++) {
    sqlite3_stmt *s = sg__sq_prep(r, sql[i]);
    json_t *arr = json_array();
    json_object_set_new(o, keys[i], arr);
    if (!s) {
      rc = SG_E_INTERNAL;
      break;
    }
    sg__sq_text(s, 1, list_id);
    sqlite3_bind_int64(s, 2, from_hour);
    sqlite3_bind_int64(s, 3, to_hour);
    sqlite3_bind_int64(s, 4, min_selections);
    if (rows_into(s, arr, NULL, ncols[i])) rc = SG_E_INTERNAL;
  }
  sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
  sg__sq_reader_release(r);
  if (rc == SG_E_OK)
    *out = o;
  else
    json_decref(o);
  return rc;
}
