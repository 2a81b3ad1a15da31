/*
 * PostgreSQL backend: search analytics shipments (the same contract as SQLite's,
 * store.h: sg_store_analytics_add, _read, _expire). Several control processes drain at
 * once: a q row first locks its list-hour row (the upsert below), so the Space-Saving
 * cap is applied by one transaction at a time per list-hour.
 */
#include <stdio.h>
#include <string.h>

#include "store/postgres/pg.h"

typedef struct {
  const char *id;
  int64_t now_hour;
  const sg_analytics_row *rows;
  size_t n;
} add_ctx;

static sg_err add_q(PGconn *c, const sg_analytics_row *r) {
  char hour[24], cnt[24], nr[24];
  const char *p[5] = {r->list_id, sg__pg_int(r->hour, hour), r->q, sg__pg_int(r->count, cnt),
                      sg__pg_int(r->no_result, nr)};
  PGresult *h = sg__pg_q(c,
                         "INSERT INTO analytics_hours(list_id, hour) VALUES($1, $2)"
                         " ON CONFLICT (list_id, hour) DO UPDATE SET distinct_q ="
                         " analytics_hours.distinct_q RETURNING distinct_q",
                         2, p);
  if (!h) return SG_E_INTERNAL;
  int cd = sg__pg_col(h, "distinct_q");
  int64_t distinct = cd >= 0 && PQntuples(h) == 1 ? sg__pg_i(h, 0, cd) : -1;
  PQclear(h);
  if (distinct < 0) return SG_E_INTERNAL;
  PGresult *u = sg__pg_q(c,
                         "UPDATE analytics_queries SET count = count + $4, no_result = no_result"
                         " + $5 WHERE list_id = $1 AND hour = $2 AND q = $3",
                         5, p);
  if (!u) return SG_E_INTERNAL;
  bool found = strcmp(PQcmdTuples(u), "0") != 0;
  PQclear(u);
  if (found) return SG_E_OK;
  int64_t base = 0, base_nr = 0;
  if (distinct >= SG_STORE_ANALYTICS_Q_CAP) {
    PGresult *m = sg__pg_q(c,
                           "DELETE FROM analytics_queries WHERE (list_id, hour, q) = (SELECT"
                           " list_id, hour, q FROM analytics_queries WHERE list_id = $1 AND"
                           " hour = $2 ORDER BY count ASC, q DESC LIMIT 1)"
                           " RETURNING count, no_result",
                           2, p);
    if (!m) return SG_E_INTERNAL;
    static const char *const names[] = {"count", "no_result"};
    int col[2];
    if (sg__pg_cols(m, names, col, 2)) {
      PQclear(m);
      return SG_E_INTERNAL;
    }
    if (PQntuples(m) == 1) {
      base = sg__pg_i(m, 0, col[0]);
      base_nr = sg__pg_i(m, 0, col[1]);
    }
    PQclear(m);
  } else if (sg__pg_x(c,
                      "UPDATE analytics_hours SET distinct_q = distinct_q + 1"
                      " WHERE list_id = $1 AND hour = $2",
                      2, p) < 0) {
    return SG_E_INTERNAL;
  }
  int64_t count = base + r->count, n = base_nr + r->no_result;
  char c2[24], n2[24];
  const char *q[5] = {r->list_id, hour, r->q, sg__pg_int(count, c2),
                      sg__pg_int(n < count ? n : count, n2)};
  return sg__pg_x(c,
                  "INSERT INTO analytics_queries(list_id, hour, q, count, no_result)"
                  " VALUES($1, $2, $3, $4, $5)",
                  5, q) < 0
             ? SG_E_INTERNAL
             : SG_E_OK;
}

static sg_err add_row(PGconn *c, const sg_analytics_row *r) {
  char hour[24], cnt[24], nr[24], pos[24];
  sg__pg_int(r->hour, hour);
  sg__pg_int(r->count, cnt);
  switch (r->kind) {
  case 'q': return add_q(c, r);
  case 'h': {
    const char *p[4] = {r->list_id, hour, cnt, sg__pg_int(r->no_result, nr)};
    return sg__pg_x(c,
                    "INSERT INTO analytics_hours(list_id, hour, queries, no_result)"
                    " VALUES($1, $2, $3, $4) ON CONFLICT (list_id, hour) DO UPDATE SET"
                    " queries = analytics_hours.queries + excluded.queries,"
                    " no_result = analytics_hours.no_result + excluded.no_result",
                    4, p) < 0
               ? SG_E_INTERNAL
               : SG_E_OK;
  }
  case 's': {
    const char *p[6] = {r->list_id, hour, r->q, r->item_id, sg__pg_int(r->position, pos), cnt};
    return sg__pg_x(c,
                    "INSERT INTO analytics_selections(list_id, hour, q, item_id, position,"
                    " selections) VALUES($1, $2, $3, $4, $5, $6)"
                    " ON CONFLICT (list_id, hour, q, item_id, position) DO UPDATE SET"
                    " selections = analytics_selections.selections + excluded.selections",
                    6, p) < 0
               ? SG_E_INTERNAL
               : SG_E_OK;
  }
  default: {
    const char *p[5] = {r->list_id, hour, r->q, r->raw, cnt};
    return sg__pg_x(c,
                    "INSERT INTO analytics_raw(list_id, hour, q, raw, count)"
                    " VALUES($1, $2, $3, $4, $5) ON CONFLICT (list_id, hour, q, raw)"
                    " DO UPDATE SET count = analytics_raw.count + excluded.count",
                    5, p) < 0
               ? SG_E_INTERNAL
               : SG_E_OK;
  }
  }
}

static sg_err add_tx(PGconn *c, void *vctx) {
  const add_ctx *a = vctx;
  char hour[24];
  const char *p[2] = {a->id, sg__pg_int(a->now_hour, hour)};
  PGresult *r = sg__pg_q(c,
                         "INSERT INTO analytics_shipments(id, hour) VALUES($1, $2)"
                         " ON CONFLICT (id) DO NOTHING RETURNING id",
                         2, p);
  if (!r) return SG_E_INTERNAL;
  bool fresh = PQntuples(r) == 1;
  PQclear(r);
  if (!fresh) return SG_E_OK; /* applied before */
  for (size_t i = 0; i < a->n; i++) {
    sg_err e = add_row(c, &a->rows[i]);
    if (e != SG_E_OK) return e;
  }
  return SG_E_OK;
}

sg_err sg__pg_analytics_add(sg_store *st, const char *shipment_id, int64_t now_hour,
                            const sg_analytics_row *rows, size_t n) {
  add_ctx a = {shipment_id, now_hour, rows, n};
  return sg__pg_tx(sg__pg_of(st), SG__PG_RC, add_tx, &a);
}

typedef struct {
  const char *list_id;
  int64_t from, to;
  size_t top;
  json_t *out;
} read_ctx;

static sg_err read_tx(PGconn *c, void *vctx) {
  read_ctx *x = vctx;
  static const char *const sql[5] = {
      "SELECT hour / 24 AS day, sum(queries) AS queries, sum(no_result) AS no_result"
      " FROM analytics_hours"
      " WHERE list_id = $1 AND hour >= $2 AND hour < $3 AND $4::bigint > 0 GROUP BY 1 ORDER BY 1",
      "SELECT hour / 24 AS day, sum(selections) AS selections FROM analytics_selections"
      " WHERE list_id = $1 AND hour >= $2 AND hour < $3 AND $4::bigint > 0 GROUP BY 1 ORDER BY 1",
      "SELECT t.q, t.c, coalesce((SELECT sum(selections) FROM analytics_selections s"
      " WHERE s.list_id = $1 AND s.hour >= $2 AND s.hour < $3 AND s.q = t.q), 0) AS selections"
      " FROM"
      " (SELECT q, sum(count) AS c FROM analytics_queries WHERE list_id = $1 AND hour >= $2"
      " AND hour < $3 GROUP BY q ORDER BY c DESC, q LIMIT $4) t ORDER BY t.c DESC, t.q",
      "SELECT q, sum(no_result) AS c FROM analytics_queries WHERE list_id = $1 AND hour >= $2"
      " AND hour < $3 GROUP BY q HAVING sum(no_result) > 0 ORDER BY c DESC, q LIMIT $4",
      "SELECT item_id, sum(selections) AS c, sum(selections * position) AS position_sum FROM"
      " analytics_selections WHERE list_id = $1 AND hour >= $2 AND hour < $3"
      " GROUP BY item_id ORDER BY c DESC, item_id LIMIT $4",
  };
  static const char *const qn[] = {"q", "count", "selections"};
  static const char *const nn[] = {"q", "count"};
  static const char *const in[] = {"itemId", "selections", "positionSum"};
  const char *const *names[5] = {NULL, NULL, qn, nn, in};
  const int ncols[5] = {3, 2, 3, 2, 3};
  /* The result columns each entry is read from, by name. */
  static const char *const cols[5][3] = {{"day", "queries", "no_result"},
                                         {"day", "selections"},
                                         {"q", "c", "selections"},
                                         {"q", "c"},
                                         {"item_id", "c", "position_sum"}};
  static const char *const keys[5] = {"days", "selectionDays", "topQueries", "topNoResultQueries",
                                      "topItems"};
  char f[24], t[24], top[24];
  const char *p[4] = {x->list_id, sg__pg_int(x->from, f), sg__pg_int(x->to, t),
                      sg__pg_int((int64_t)x->top, top)};
  json_decref(x->out);
  x->out = json_object();
  for (int i = 0; i < 5; i++) {
    PGresult *r = sg__pg_q(c, sql[i], 4, p);
    if (!r) return SG_E_INTERNAL;
    int cn[3];
    if (sg__pg_cols(r, cols[i], cn, (size_t)ncols[i])) {
      PQclear(r);
      return SG_E_INTERNAL;
    }
    json_t *arr = json_array();
    json_object_set_new(x->out, keys[i], arr);
    for (int row = 0; row < PQntuples(r); row++) {
      json_t *o = names[i] ? json_object() : json_array();
      for (int col = 0; col < ncols[i]; col++) {
        /* The text columns are the first of the top lists. */
        json_t *v = names[i] && col == 0 ? json_string(sg__pg_s(r, row, cn[col]))
                                         : json_integer(sg__pg_i(r, row, cn[col]));
        if (names[i])
          json_object_set_new(o, names[i][col], v);
        else
          json_array_append_new(o, v);
      }
      json_array_append_new(arr, o);
    }
    PQclear(r);
  }
  return SG_E_OK;
}

sg_err sg__pg_analytics_read(sg_store *st, const char *list_id, int64_t from_hour, int64_t to_hour,
                             size_t top, json_t **out) {
  read_ctx x = {list_id, from_hour, to_hour, top, NULL};
  sg_err rc = sg__pg_tx(sg__pg_of(st), SG__PG_RO, read_tx, &x);
  if (rc == SG_E_OK)
    *out = x.out;
  else
    json_decref(x.out);
  return rc;
}

typedef struct {
  int64_t before_hour, before_ms;
} expire_ctx;

static sg_err expire_tx(PGconn *c, void *vctx) {
  const expire_ctx *x = vctx;
  char h[24], ms[24];
  const char *ph[1] = {sg__pg_int(x->before_hour, h)};
  const char *pm[1] = {sg__pg_int(x->before_ms, ms)};
  static const char *const sql[] = {
      "DELETE FROM analytics_hours WHERE hour < $1",
      "DELETE FROM analytics_queries WHERE hour < $1",
      "DELETE FROM analytics_selections WHERE hour < $1",
      "DELETE FROM analytics_raw WHERE hour < $1",
      "DELETE FROM analytics_shipments WHERE hour < $1",
  };
  for (size_t i = 0; i < sizeof sql / sizeof *sql; i++)
    if (sg__pg_x(c, sql[i], 1, ph) < 0) return SG_E_INTERNAL;
  return sg__pg_x(c, "DELETE FROM selections WHERE ts_ms < $1", 1, pm) < 0 ? SG_E_INTERNAL
                                                                           : SG_E_OK;
}

sg_err sg__pg_analytics_expire(sg_store *st, int64_t before_hour, int64_t before_ms) {
  expire_ctx x = {before_hour, before_ms};
  return sg__pg_tx(sg__pg_of(st), SG__PG_RC, expire_tx, &x);
}

/* ---------------------------------------------------------------- suggestions ---- */

typedef struct {
  const char *list_id;
  int64_t from, to, min;
  json_t *out;
} suggest_ctx;

#define QUALIFYING                                                                                 \
  "SELECT q, sum(selections) AS selections FROM analytics_selections WHERE list_id = $1"           \
  " AND hour >= $2"                                                                                \
  " AND hour < $3 AND q <> '' GROUP BY q HAVING sum(selections) >= $4"

static sg_err suggest_tx(PGconn *c, void *vctx) {
  suggest_ctx *x = vctx;
  static const char *const sql[2] = {
      QUALIFYING,
      "SELECT q, raw, sum(count) AS count FROM analytics_raw WHERE list_id = $1 AND hour >= $2"
      " AND hour < $3 AND q IN (SELECT t.q FROM (" QUALIFYING ") t) GROUP BY q, raw",
  };
  static const char *const keys[2] = {"queries", "forms"};
  const int ntext[2] = {1, 2}; /* the leading text columns; then one integer */
  static const char *const cols[2][3] = {{"q", "selections"}, {"q", "raw", "count"}};
  char f[24], t[24], m[24];
  const char *p[4] = {x->list_id, sg__pg_int(x->from, f), sg__pg_int(x->to, t),
                      sg__pg_int(x->min, m)};
  json_decref(x->out);
  x->out = json_object();
  for (int i = 0; i < 2; i++) {
    PGresult *r = sg__pg_q(c, sql[i], 4, p);
    if (!r) return SG_E_INTERNAL;
    int cn[3];
    if (sg__pg_cols(r, cols[i], cn, (size_t)ntext[i] + 1)) {
      PQclear(r);
      return SG_E_INTERNAL;
    }
    json_t *arr = json_array();
    json_object_set_new(x->out, keys[i], arr);
    for (int row = 0; row < PQntuples(r); row++) {
      json_t *a = json_array();
      for (int col = 0; col < ntext[i]; col++)
        json_array_append_new(a, json_string(sg__pg_s(r, row, cn[col])));
      json_array_append_new(a, json_integer(sg__pg_i(r, row, cn[ntext[i]])));
      json_array_append_new(arr, a);
    }
    PQclear(r);
  }
  return SG_E_OK;
}

sg_err sg__pg_analytics_suggest(sg_store *st, const char *list_id, int64_t from_hour,
                                int64_t to_hour, int64_t min_selections, json_t **out) {
  suggest_ctx x = {list_id, from_hour, to_hour, min_selections, NULL};
  sg_err rc = sg__pg_tx(sg__pg_of(st), SG__PG_RO, suggest_tx, &x);
  if (rc == SG_E_OK)
    *out = x.out;
  else
    json_decref(x.out);
  return rc;
}
