/*
 * PostgreSQL backend: items (the row-version chains of SQLite's migration 3, see
 * src/store/sqlite/items.c), item search and history pruning.
 *
 * Every item write first locks its list's row (sg__pg_list_writable), so the writes of
 * one list run one at a time as on SQLite: the clock, the uniqueness of values and the
 * If-Match check follow. The end of the current row is itself conditional ("… WHERE
 * seq = <the row read> AND to_clock IS NULL"), so an edit based on a row that another
 * transaction already replaced changes nothing and is refused.
 */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/postgres/pg.h"
#include "store/rules.h"

/* The columns of SG__STORE_ITEM_COLS, read by name. */
static const char *const item_cols[] = {
    "id",        "value",   "display_value", "aliases",    "rank",
    "parent_id", "locales", "display_order", "created_at", "description"};
enum { ITEM_NCOLS = sizeof item_cols / sizeof item_cols[0] };

json_t *sg__pg_item_row(const PGresult *r, int i) {
  int c[ITEM_NCOLS];
  if (sg__pg_cols(r, item_cols, c, ITEM_NCOLS)) return NULL;
  sg__store_item_row row = {
      .id = sg__pg_s(r, i, c[0]),
      .value = sg__pg_s(r, i, c[1]),
      .display_value = sg__pg_s(r, i, c[2]),
      .aliases = sg__pg_s(r, i, c[3]),
      .rank = sg__pg_i(r, i, c[4]),
      .parent_id = sg__pg_s(r, i, c[5]),
      .locales = sg__pg_s(r, i, c[6]),
      .display_order = sg__pg_i(r, i, c[7]),
      .created_at = sg__pg_i(r, i, c[8]),
      .description = sg__pg_s(r, i, c[9]),
  };
  return sg__store_item_record(&row);
}

int sg__pg_item_clock_next(PGconn *c, const char *list_id, int64_t *clock) {
  const char *p[] = {list_id};
  PGresult *r = sg__pg_q(
      c, "UPDATE lists SET item_clock=item_clock+1 WHERE id=$1 RETURNING item_clock", 1, p);
  if (!r) return -1;
  int ok = PQntuples(r) == 1;
  if (ok) *clock = sg__pg_in(r, 0, "item_clock");
  PQclear(r);
  return ok ? 0 : -1;
}

/* The stored fields of an item body as text parameters, in the order every item
 * statement uses: value, displayValue, aliases, rank, parent, locales, displayOrder,
 * description (NULL when none). */
typedef struct {
  char *aliases, *locales;
  char rank[24], order[24];
  const char *v[8];
} item_params;

static void item_params_init(item_params *ip, const json_t *item) {
  ip->aliases = sg__store_json_text(json_object_get(item, "aliases"));
  ip->locales = sg__store_json_text(json_object_get(item, "locales"));
  ip->v[0] = json_string_value(json_object_get(item, "value"));
  ip->v[1] = json_string_value(json_object_get(item, "displayValue"));
  ip->v[2] = ip->aliases;
  ip->v[3] = sg__pg_int(json_integer_value(json_object_get(item, "rank")), ip->rank);
  ip->v[4] = json_string_value(json_object_get(item, "parentId"));
  ip->v[5] = ip->locales;
  ip->v[6] = sg__pg_int(json_integer_value(json_object_get(item, "displayOrder")), ip->order);
  ip->v[7] = json_string_value(json_object_get(item, "description"));
}

static void item_params_free(item_params *ip) {
  free(ip->aliases);
  free(ip->locales);
}

typedef struct {
  const char *workspace_id, *list_id, *item_id, *if_match;
  const json_t *item;
  item_params ip;
  json_t *out; /* the result, or the current item for a 412 */
} item_ctx;

static sg_err item_result(sg_err rc, item_ctx *x, json_t **out) {
  if (rc == SG_E_OK || (rc == SG_E_PRECONDITION_FAILED && x->out)) {
    *out = x->out;
  } else {
    json_decref(x->out);
  }
  item_params_free(&x->ip);
  return rc;
}

/* The answer for a failed sg_item_create call (schema.c): its refusals by SQLSTATE. */
static sg_err create_refusal(sg_err rc) {
  const char *state = sg__pg_failed();
  if (rc != SG_E_INTERNAL) return rc;
  if (strcmp(state, "SG001") == 0) return SG_E_INVALID_LIST;
  if (strcmp(state, "SG002") == 0) return SG_E_LIST_ARCHIVED;
  if (strcmp(state, "SG003") == 0) return SG_E_INVALID_REQUEST;
  if (strcmp(state, "SG004") == 0) return SG_E_DUPLICATE_VALUE;
  return rc;
}

sg_err sg__pg_item_create(sg_store *base, const char *workspace_id, const char *list_id,
                          const json_t *item, json_t **out) {
  char id[32];
  sg_random_id("itm_", id, sizeof id);
  item_params ip;
  item_params_init(&ip, item);
  char now[24];
  /* One statement, one round trip, one commit: the list's lock, the parent check, the
   * clock and the insert run inside sg_item_create (schema.c), as create_fn's five
   * statements between BEGIN and COMMIT did. */
  const char *p[] = {workspace_id,
                     list_id,
                     id,
                     ip.v[0],
                     ip.v[1],
                     ip.v[2],
                     ip.v[3],
                     ip.v[4],
                     ip.v[5],
                     ip.v[6],
                     sg__pg_int(sg_now_s(), now),
                     ip.v[7],
                     "false"};
  sg_err rc;
  PGresult *r = sg__pg_one_again(sg__pg_of(base),
                                 "SELECT " SG__STORE_ITEM_COLS " FROM sg_item_create($1, $2, $3,"
                                 " $4, $5, $6, $7::bigint, $8, $9, $10::bigint, $11::bigint, $12,"
                                 " $13::boolean)",
                                 13, p, 12, &rc);
  item_params_free(&ip);
  if (!r) return create_refusal(rc);
  json_t *o = PQntuples(r) == 1 ? sg__pg_item_row(r, 0) : NULL;
  PQclear(r);
  if (!o) return SG_E_INTERNAL;
  *out = o;
  return SG_E_OK;
}

typedef struct {
  const char *workspace_id, *list_id;
  const char *sql;
  int n;
  const char *const *params;
  size_t limit;
  json_t *data;
  bool *more;
} page_ctx;

static sg_err page_fn(PGconn *c, void *vctx) {
  page_ctx *x = vctx;
  json_decref(x->data);
  x->data = NULL;
  sg_err rc = sg__pg_list_exists(c, x->workspace_id, x->list_id);
  if (rc != SG_E_OK) return rc;
  PGresult *r = sg__pg_q(c, x->sql, x->n, x->params);
  if (!r) return SG_E_INTERNAL;
  x->data = sg__pg_page(r, x->limit, sg__pg_item_row, x->more);
  PQclear(r);
  return x->data ? SG_E_OK : SG_E_INTERNAL;
}

/* Runs a page query of a list's items after checking, in the same snapshot, that the
 * list is the workspace's. */
static sg_err item_page_run(sg__pg *st, page_ctx *x, json_t **data) {
  *x->more = false;
  sg_err rc = sg__pg_tx(st, SG__PG_RO, page_fn, x);
  if (rc == SG_E_OK)
    *data = x->data;
  else
    json_decref(x->data);
  return rc;
}

sg_err sg__pg_item_page(sg_store *base, const char *workspace_id, const char *list_id, size_t limit,
                        const json_t *after, json_t **data, bool *more) {
  char lim[24], order[24];
  const char *p[] = {list_id, sg__pg_int((int64_t)limit + 1, lim),
                     after ? sg__pg_int(json_integer_value(json_array_get(after, 0)), order) : NULL,
                     json_string_value(json_array_get(after, 1))};
  page_ctx x = {workspace_id,
                list_id,
                after ? "SELECT " SG__STORE_ITEM_COLS " FROM items WHERE list_id=$1 AND"
                        " to_clock IS NULL AND (display_order, id) > ($3::bigint, $4)"
                        " ORDER BY display_order, id LIMIT $2"
                      : "SELECT " SG__STORE_ITEM_COLS " FROM items WHERE list_id=$1 AND"
                        " to_clock IS NULL ORDER BY display_order, id LIMIT $2",
                after ? 4 : 2,
                p,
                limit,
                NULL,
                more};
  return item_page_run(sg__pg_of(base), &x, data);
}

#define FOLD "translate(value, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"

sg_err sg__pg_item_search(sg_store *base, const char *workspace_id, const char *list_id,
                          const char *prefix, size_t limit, const json_t *after, json_t **data,
                          bool *more) {
  /* As on SQLite: ASCII case is ignored (the fold below is the index's expression), the
   * order is the folded value then id, and the cursor is [value, id]. */
  char lim[24];
  char *like = sg__store_like_prefix(prefix);
  if (!like) return SG_E_INTERNAL;
  const char *p[] = {list_id, sg__pg_int((int64_t)limit + 1, lim), like,
                     json_string_value(json_array_get(after, 0)),
                     json_string_value(json_array_get(after, 1))};
  page_ctx x = {
      workspace_id,
      list_id,
      after ? "SELECT " SG__STORE_ITEM_COLS " FROM items WHERE list_id=$1 AND to_clock IS NULL"
              " AND " FOLD " LIKE translate($3, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',"
              " 'abcdefghijklmnopqrstuvwxyz') AND (" FOLD ", id) > (translate($4,"
              " 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'), $5)"
              " ORDER BY " FOLD ", id LIMIT $2"
            : "SELECT " SG__STORE_ITEM_COLS " FROM items WHERE list_id=$1 AND to_clock IS NULL"
              " AND " FOLD " LIKE translate($3, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',"
              " 'abcdefghijklmnopqrstuvwxyz') ORDER BY " FOLD ", id LIMIT $2",
      after ? 5 : 3,
      p,
      limit,
      NULL,
      more};
  sg_err rc = item_page_run(sg__pg_of(base), &x, data);
  free(like);
  return rc;
}

sg_err sg__pg_item_get(sg_store *base, const char *workspace_id, const char *list_id,
                       const char *item_id, json_t **out) {
  /* One statement (one snapshot, one round trip): no row when the list is not the
   * workspace's, a row without an item when the item is not a current one of it. */
  const char *p[] = {item_id, list_id, workspace_id};
  sg_err rc;
  PGresult *r = sg__pg_read(sg__pg_of(base),
                            "SELECT i.id, i.value, i.display_value, i.aliases, i.rank,"
                            " i.parent_id, i.locales, i.display_order, i.created_at,"
                            " i.description, i.seq FROM lists l LEFT JOIN items i"
                            " ON i.list_id=l.id AND i.id=$1 AND i.to_clock IS NULL"
                            " WHERE l.id=$2 AND l.workspace_id=$3",
                            3, p, &rc);
  if (!r) return rc;
  int seq = sg__pg_col(r, "seq");
  if (seq < 0)
    rc = SG_E_INTERNAL;
  else if (PQntuples(r) != 1)
    rc = SG_E_INVALID_LIST;
  else if (PQgetisnull(r, 0, seq))
    rc = SG_E_INVALID_ITEM;
  else
    rc = (*out = sg__pg_item_row(r, 0)) ? SG_E_OK : SG_E_INTERNAL;
  PQclear(r);
  return rc;
}

/* Begins a write on one item in one round trip (the BEGIN of an SG__PG_PIPED transaction,
 * the list's row locked, the item's current row and, for a delete, whether it has
 * children): the list writable, the item current, and if_match (when not NULL) its ETag;
 * on a mismatch x->out is the current item. *kids (may be NULL: not asked) tells whether
 * a current item has the item as its parent. */
static sg_err begin_item_write(PGconn *c, item_ctx *x, json_t **cur, int64_t *seq, bool *kids) {
  const char *pl[] = {x->list_id, x->workspace_id};
  const char *pi[] = {x->item_id, x->list_id};
  const char *pk[] = {x->list_id, x->item_id};
  const sg__pg_stmt q[] = {
      {"SELECT status FROM lists WHERE id=$1 AND workspace_id=$2 FOR UPDATE", 2, pl},
      {"SELECT " SG__STORE_ITEM_COLS ", seq FROM items WHERE id=$1 AND list_id=$2"
       " AND to_clock IS NULL",
       2, pi},
      {"SELECT EXISTS(SELECT 1 FROM items WHERE list_id=$1 AND parent_id=$2"
       " AND to_clock IS NULL) AS kids",
       2, pk},
  };
  int n = kids ? 3 : 2;
  PGresult *r[3];
  if (sg__pg_pipe(c, q, n, r, false)) return SG_E_INTERNAL;
  sg_err rc = SG_E_INVALID_LIST;
  if (PQntuples(r[0]) == 1) {
    const char *status = sg__pg_sn(r[0], 0, "status");
    rc = !status ? SG_E_INTERNAL : strcmp(status, "archived") == 0 ? SG_E_LIST_ARCHIVED : SG_E_OK;
  }
  if (rc == SG_E_OK && PQntuples(r[1]) != 1) rc = SG_E_INVALID_ITEM;
  if (rc == SG_E_OK) {
    *cur = sg__pg_item_row(r[1], 0);
    *seq = sg__pg_in(r[1], 0, "seq");
    if (!*cur) rc = SG_E_INTERNAL;
  }
  if (rc == SG_E_OK && kids) {
    const char *k = sg__pg_sn(r[2], 0, "kids");
    if (!k)
      rc = SG_E_INTERNAL;
    else
      *kids = strcmp(k, "t") == 0;
  }
  for (int i = 0; i < n; i++) PQclear(r[i]);
  if (rc != SG_E_OK) return rc;
  if (x->if_match) {
    char etag[48];
    sg_store_item_etag(*cur, etag);
    if (!sg_etag_match(x->if_match, etag)) {
      x->out = *cur;
      *cur = NULL;
      return SG_E_PRECONDITION_FAILED;
    }
  }
  return SG_E_OK;
}

/* The answer for a failed sg_item_replace or sg_item_end call (schema.c). */
static sg_err write_refusal(void) {
  const char *state = sg__pg_failed();
  if (strcmp(state, "SG004") == 0) return SG_E_DUPLICATE_VALUE;
  if (strcmp(state, "SG005") == 0) return SG_E_PRECONDITION_FAILED;
  return SG_E_INTERNAL;
}

/* Depth bound of the parent walk that refuses cycles (as on SQLite). */
#define PARENT_WALK_MAX 4096

static sg_err check_parent(PGconn *c, const char *list_id, const char *item_id,
                           const char *parent) {
  char cur[160];
  snprintf(cur, sizeof cur, "%s", parent);
  for (int depth = 0; depth < PARENT_WALK_MAX; depth++) {
    if (strcmp(cur, item_id) == 0) return SG_E_INVALID_REQUEST;
    const char *p[] = {cur, list_id};
    PGresult *r = sg__pg_q(
        c, "SELECT parent_id FROM items WHERE id=$1 AND list_id=$2 AND to_clock IS NULL", 2, p);
    if (!r) return SG_E_INTERNAL;
    if (PQntuples(r) != 1) {
      PQclear(r);
      /* The first hop must exist; a dangling id further up is publish validation's. */
      return depth == 0 ? SG_E_INVALID_REQUEST : SG_E_OK;
    }
    const char *up = sg__pg_sn(r, 0, "parent_id");
    bool top = up == NULL;
    if (!top) snprintf(cur, sizeof cur, "%s", up);
    PQclear(r);
    if (top) return SG_E_OK;
  }
  return SG_E_OK;
}

static sg_err update_fn(PGconn *c, void *vctx) {
  item_ctx *x = vctx;
  json_decref(x->out);
  x->out = NULL;
  json_t *cur = NULL;
  int64_t seq = 0;
  sg_err rc = begin_item_write(c, x, &cur, &seq, NULL);
  if (rc != SG_E_OK) goto out;
  const char *parent = x->ip.v[4];
  if (parent && (rc = check_parent(c, x->list_id, x->item_id, parent)) != SG_E_OK) goto out;
  /* An edit that changes nothing writes nothing: the ETag and history stay. */
  json_t *next = json_deep_copy(cur);
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)x->item, k, v) {
    /* The record has no description rather than a null one. */
    if (json_is_null(v) && strcmp(k, "description") == 0)
      json_object_del(next, k);
    else
      json_object_set(next, k, v);
  }
  bool same = json_equal(next, cur);
  json_decref(next);
  if (same) {
    x->out = cur;
    return SG_E_OK;
  }
  /* The clock, the end of the current row, the new row and the COMMIT: one round trip
   * (sg_item_replace, schema.c). */
  char s[24];
  const char *p[] = {x->list_id, sg__pg_int(seq, s), x->ip.v[0], x->ip.v[1], x->ip.v[2],
                     x->ip.v[3], x->ip.v[4],         x->ip.v[5], x->ip.v[6], x->ip.v[7]};
  const sg__pg_stmt q[] = {{"SELECT " SG__STORE_ITEM_COLS " FROM sg_item_replace($1,"
                            " $2::bigint, $3, $4, $5, $6::bigint, $7, $8, $9::bigint, $10)",
                            10, p}};
  PGresult *r;
  if (sg__pg_pipe(c, q, 1, &r, true)) {
    rc = write_refusal();
    goto out;
  }
  x->out = PQntuples(r) == 1 ? sg__pg_item_row(r, 0) : NULL;
  PQclear(r);
  rc = x->out ? SG_E_OK : SG_E_INTERNAL;
out:
  json_decref(cur);
  return rc;
}

sg_err sg__pg_item_update(sg_store *base, const char *workspace_id, const char *list_id,
                          const char *item_id, const json_t *item, const char *if_match,
                          json_t **out) {
  item_ctx x = {workspace_id, list_id, item_id, if_match, item, {0}, NULL};
  item_params_init(&x.ip, item);
  *out = NULL;
  return item_result(sg__pg_tx(sg__pg_of(base), SG__PG_RC | SG__PG_PIPED, update_fn, &x), &x, out);
}

static sg_err delete_fn(PGconn *c, void *vctx) {
  item_ctx *x = vctx;
  json_decref(x->out);
  x->out = NULL;
  json_t *cur = NULL;
  int64_t seq = 0;
  bool kids = false;
  sg_err rc = begin_item_write(c, x, &cur, &seq, &kids);
  json_decref(cur);
  if (rc != SG_E_OK) return rc;
  if (kids) return SG_E_ITEM_HAS_CHILDREN;
  /* The clock, the end of the row and the COMMIT: one round trip (sg_item_end). */
  char s[24];
  const char *p[] = {x->list_id, sg__pg_int(seq, s)};
  const sg__pg_stmt q[] = {{"SELECT sg_item_end($1, $2::bigint)", 2, p}};
  PGresult *r;
  if (sg__pg_pipe(c, q, 1, &r, true)) return write_refusal();
  PQclear(r);
  return SG_E_OK;
}

sg_err sg__pg_item_delete(sg_store *base, const char *workspace_id, const char *list_id,
                          const char *item_id, const char *if_match, json_t **cur_out) {
  item_ctx x = {workspace_id, list_id, item_id, if_match, NULL, {0}, NULL};
  *cur_out = NULL;
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RC | SG__PG_PIPED, delete_fn, &x);
  if (rc == SG_E_PRECONDITION_FAILED && x.out)
    *cur_out = x.out;
  else
    json_decref(x.out);
  return rc;
}

sg_err sg__pg_items_prune(sg_store *base, const char *list_id, size_t max, size_t *n) {
  /* A row ended at clock T is visible only to snapshots S < T; once no unresolved or
   * active version has such a snapshot, nobody can read it again (SQLite's says why). */
  char lim[24];
  const char *p[] = {list_id, sg__pg_int((int64_t)max, lim)};
  sg_err rc;
  *n = 0;
  PGresult *r = sg__pg_one(sg__pg_of(base),
                           "DELETE FROM items WHERE seq IN (SELECT seq FROM items WHERE"
                           " list_id=$1 AND to_clock IS NOT NULL AND to_clock <="
                           " COALESCE((SELECT MIN(snapshot_seq) FROM versions WHERE list_id=$1"
                           " AND state IN ('queued', 'staged', 'active')), 9223372036854775807)"
                           " LIMIT $2::bigint)",
                           2, p, &rc);
  if (!r) return rc;
  *n = (size_t)sg__pg_changed(r);
  PQclear(r);
  return SG_E_OK;
}
