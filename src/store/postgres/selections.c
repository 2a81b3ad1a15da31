/*
 * PostgreSQL backend: selection events drained from a fleet's Redis stream, and the
 * dashboard's selection analytics over them (the same contract as SQLite's, store.h).
 */
#include <stdio.h>

#include "store/postgres/pg.h"

typedef struct {
  const sg_selection_event *ev;
  size_t n;
} add_ctx;

static sg_err add_tx(PGconn *c, void *vctx) {
  const add_ctx *a = vctx;
  static const char q[] =
      "INSERT INTO selections(selection_id, ts_ms, application_id, key_id, list_id, item_id,"
      " query_request_id, position, query) VALUES($1, $2, $3, $4, $5, $6, $7, $8, $9)"
      " ON CONFLICT (selection_id, ts_ms) DO NOTHING";
  for (size_t i = 0; i < a->n; i++) {
    const sg_selection_event *e = &a->ev[i];
    char ts[24], pos[24];
    const char *p[9] = {e->selection_id,
                        sg__pg_int(e->ts_ms, ts),
                        e->application_id,
                        e->key_id,
                        e->list_id,
                        e->item_id,
                        e->query_request_id,
                        sg__pg_int(e->position, pos),
                        e->query};
    if (sg__pg_x(c, q, 9, p) < 0) return SG_E_INTERNAL;
  }
  return SG_E_OK;
}

sg_err sg__pg_selections_add(sg_store *st, const sg_selection_event *ev, size_t n) {
  add_ctx a = {ev, n};
  return sg__pg_tx(sg__pg_of(st), SG__PG_RC, add_tx, &a);
}

typedef struct {
  const char *list_id;
  int64_t since_ms;
  size_t top;
  json_t *out;
} stats_ctx;

static sg_err stats_tx(PGconn *c, void *vctx) {
  stats_ctx *s = vctx;
  char since[24], top[24];
  const char *p[3] = {s->list_id, sg__pg_int(s->since_ms, since), sg__pg_int((int64_t)s->top, top)};
  PGresult *days = sg__pg_q(c,
                            "SELECT to_char(to_timestamp(ts_ms / 1000.0) AT TIME ZONE 'UTC',"
                            " 'YYYY-MM-DD') AS day, count(*) AS n FROM selections"
                            " WHERE list_id = $1 AND ts_ms >= $2 GROUP BY 1",
                            2, p);
  if (!days) return SG_E_INTERNAL;
  PGresult *items = sg__pg_q(c,
                             "SELECT item_id, count(*) AS n FROM selections"
                             " WHERE list_id = $1 AND ts_ms >= $2"
                             " GROUP BY item_id ORDER BY n DESC, item_id LIMIT $3",
                             3, p);
  if (!items) {
    PQclear(days);
    return SG_E_INTERNAL;
  }
  static const char *const day_names[] = {"day", "n"}, *const item_names[] = {"item_id", "n"};
  int dc[2], ic[2];
  if (sg__pg_cols(days, day_names, dc, 2) || sg__pg_cols(items, item_names, ic, 2)) {
    PQclear(days);
    PQclear(items);
    return SG_E_INTERNAL;
  }
  json_t *per_day = json_object(), *top_items = json_array();
  for (int i = 0; i < PQntuples(days); i++)
    json_object_set_new(per_day, sg__pg_s(days, i, dc[0]), json_integer(sg__pg_i(days, i, dc[1])));
  for (int i = 0; i < PQntuples(items); i++)
    json_array_append_new(top_items,
                          json_pack("{s:s,s:I}", "itemId", sg__pg_s(items, i, ic[0]), "selections",
                                    (json_int_t)sg__pg_i(items, i, ic[1])));
  PQclear(days);
  PQclear(items);
  json_decref(s->out);
  s->out = json_pack("{s:o,s:o}", "perDay", per_day, "topItems", top_items);
  return SG_E_OK;
}

sg_err sg__pg_selection_stats(sg_store *st, const char *list_id, int64_t since_ms, size_t top,
                              json_t **out) {
  stats_ctx s = {list_id, since_ms, top, NULL};
  sg_err rc = sg__pg_tx(sg__pg_of(st), SG__PG_RO, stats_tx, &s);
  if (rc == SG_E_OK) {
    *out = s.out;
  } else {
    json_decref(s.out);
  }
  return rc;
}
