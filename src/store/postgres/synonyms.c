/*
 * PostgreSQL backend: a list's synonym sets (the rows of SQLite's migration 12, see
 * src/store/sqlite/synonyms.c). A PUT locks the list's row (sg__pg_list_writable) and takes
 * its next item clock, so it is ordered with the list's item writes and version creates.
 */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/postgres/pg.h"

/* The newest row of list_id at or before clock (NULL: the current one) as a JSON array
 * into *out; [] when there is none. */
static sg_err load_sets(PGconn *c, const char *list_id, const char *clock, json_t **out) {
  const char *p[] = {list_id, clock};
  PGresult *r =
      clock ? sg__pg_q(c,
                       "SELECT sets FROM synonyms WHERE list_id=$1 AND clock<=$2::bigint"
                       " ORDER BY clock DESC LIMIT 1",
                       2, p)
            : sg__pg_q(c, "SELECT sets FROM synonyms WHERE list_id=$1 ORDER BY clock DESC LIMIT 1",
                       1, p);
  if (!r) return SG_E_INTERNAL;
  int col = sg__pg_col(r, "sets");
  json_t *sets = col < 0             ? NULL
                 : PQntuples(r) == 1 ? json_loads(sg__pg_s(r, 0, col), 0, NULL)
                                     : json_array();
  PQclear(r);
  if (!json_is_array(sets)) {
    json_decref(sets);
    return SG_E_INTERNAL;
  }
  *out = sets;
  return SG_E_OK;
}

typedef struct {
  const char *workspace_id, *list_id, *sets_json, *if_match;
  json_t *out; /* the stored sets, or the current ones for a 412 */
} syn_ctx;

static sg_err get_fn(PGconn *c, void *vctx) {
  syn_ctx *x = vctx;
  json_decref(x->out);
  x->out = NULL;
  sg_err rc = sg__pg_list_exists(c, x->workspace_id, x->list_id);
  return rc == SG_E_OK ? load_sets(c, x->list_id, NULL, &x->out) : rc;
}

sg_err sg__pg_synonyms_get(sg_store *base, const char *workspace_id, const char *list_id,
                           json_t **out) {
  syn_ctx x = {workspace_id, list_id, NULL, NULL, NULL};
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RO, get_fn, &x);
  if (rc == SG_E_OK)
    *out = x.out;
  else
    json_decref(x.out);
  return rc;
}

static sg_err put_fn(PGconn *c, void *vctx) {
  syn_ctx *x = vctx;
  json_decref(x->out);
  x->out = NULL;
  sg_err rc = sg__pg_list_writable(c, x->workspace_id, x->list_id);
  if (rc != SG_E_OK) return rc;
  json_t *cur = NULL;
  if ((rc = load_sets(c, x->list_id, NULL, &cur)) != SG_E_OK) return rc;
  if (x->if_match) {
    char etag[48];
    sg_store_synonyms_etag(cur, etag);
    if (!sg_etag_match(x->if_match, etag)) {
      x->out = cur;
      return SG_E_PRECONDITION_FAILED;
    }
  }
  json_t *sent = json_loads(x->sets_json, 0, NULL);
  if (!json_is_array(sent)) {
    json_decref(sent);
    json_decref(cur);
    return SG_E_INTERNAL;
  }
  bool same = json_equal(cur, sent);
  json_decref(cur);
  x->out = sent;
  if (same) return SG_E_OK; /* unchanged: nothing to write */
  int64_t clock;
  if (sg__pg_item_clock_next(c, x->list_id, &clock)) return SG_E_INTERNAL;
  char clk[24];
  const char *p[] = {x->list_id, sg__pg_int(clock, clk), x->sets_json};
  if (sg__pg_x(c, "INSERT INTO synonyms(list_id, clock, sets) VALUES($1, $2::bigint, $3)", 3, p))
    return SG_E_INTERNAL;
  /* Keeps the newest row at or before the oldest unresolved or active version's snapshot
   * (the sets that version compiles, or compiles again) and everything after it. */
  if (sg__pg_x(c,
               "DELETE FROM synonyms WHERE list_id=$1 AND clock < (SELECT COALESCE(MAX(clock), 0)"
               " FROM synonyms WHERE list_id=$1 AND clock <= COALESCE((SELECT MIN(snapshot_seq)"
               " FROM versions WHERE list_id=$1 AND state IN ('queued', 'staged', 'active')),"
               " $2::bigint))",
               2, p))
    return SG_E_INTERNAL;
  return SG_E_OK;
}

sg_err sg__pg_synonyms_put(sg_store *base, const char *workspace_id, const char *list_id,
                           const char *sets_json, const char *if_match, json_t **out) {
  syn_ctx x = {workspace_id, list_id, sets_json, if_match, NULL};
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RC, put_fn, &x);
  if (rc == SG_E_OK || (rc == SG_E_PRECONDITION_FAILED && x.out))
    *out = x.out;
  else
    json_decref(x.out);
  return rc;
}

typedef struct {
  const char *list_id;
  int64_t clock;
  json_t *out;
} snap_ctx;

static sg_err snap_fn(PGconn *c, void *vctx) {
  snap_ctx *x = vctx;
  json_decref(x->out);
  x->out = NULL;
  char clk[24];
  return load_sets(c, x->list_id, sg__pg_int(x->clock, clk), &x->out);
}

sg_err sg__pg_snapshot_synonyms(sg_store *base, const char *list_id, int64_t snapshot_seq,
                                json_t **out) {
  snap_ctx x = {list_id, snapshot_seq, NULL};
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RO, snap_fn, &x);
  if (rc == SG_E_OK)
    *out = x.out;
  else
    json_decref(x.out);
  return rc;
}
