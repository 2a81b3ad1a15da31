/*
 * PostgreSQL backend: lists.
 *
 * A PATCH locks the list's row (SELECT … FOR UPDATE), compares If-Match with the ETag of
 * what it read, and writes with "UPDATE … WHERE row_version = <the version read>": the
 * lock makes a second writer wait and then read the first one's result, so two writers
 * holding the same ETag cannot both win, and the conditional UPDATE states the rule in
 * the statement itself.
 */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/postgres/pg.h"
#include "store/rules.h"

/* The columns of SG__STORE_LIST_COLS, read by name. */
static const char *const list_cols[] = {"id",
                                        "name",
                                        "description",
                                        "slug",
                                        "visibility",
                                        "status",
                                        "min_query_chars",
                                        "debounce_ms",
                                        "default_locale",
                                        "supported_locales",
                                        "display_order",
                                        "active_version_number",
                                        "created_at",
                                        "updated_at",
                                        "active_content_hash",
                                        "typo_enabled",
                                        "typo_min_one",
                                        "typo_min_two"};
enum { LIST_NCOLS = sizeof list_cols / sizeof list_cols[0] };

json_t *sg__pg_list_row(const PGresult *r, int i) {
  int c[LIST_NCOLS];
  if (sg__pg_cols(r, list_cols, c, LIST_NCOLS)) return NULL;
  sg__store_list_row row = {
      .id = sg__pg_s(r, i, c[0]),
      .name = sg__pg_s(r, i, c[1]),
      .description = sg__pg_s(r, i, c[2]),
      .slug = sg__pg_s(r, i, c[3]),
      .visibility = sg__pg_s(r, i, c[4]),
      .status = sg__pg_s(r, i, c[5]),
      .min_query_chars = sg__pg_i(r, i, c[6]),
      .debounce_ms = sg__pg_i(r, i, c[7]),
      .default_locale = sg__pg_s(r, i, c[8]),
      .supported_locales = sg__pg_s(r, i, c[9]),
      .display_order = sg__pg_i(r, i, c[10]),
      .has_active_version = !PQgetisnull(r, i, c[11]),
      .active_version_number = sg__pg_i(r, i, c[11]),
      .created_at = sg__pg_i(r, i, c[12]),
      .updated_at = sg__pg_i(r, i, c[13]),
      .active_content_hash = sg__pg_s(r, i, c[14]),
      .typo_enabled = sg__pg_i(r, i, c[15]) != 0,
      .typo_min_one = sg__pg_i(r, i, c[16]),
      .typo_min_two = sg__pg_i(r, i, c[17]),
  };
  return sg__store_list_record(&row);
}

json_t *sg__pg_page(const PGresult *r, size_t limit, json_t *(*row)(const PGresult *r, int i),
                    bool *more) {
  json_t *arr = json_array();
  int n = PQntuples(r);
  *more = (size_t)n > limit;
  for (int i = 0; arr && i < n && (size_t)i < limit; i++) {
    json_t *o = row(r, i);
    if (!o || json_array_append_new(arr, o)) {
      /* A row the reader could not build (a column missing: logged) fails the page. */
      json_decref(arr);
      arr = NULL;
    }
  }
  return arr;
}

sg_err sg__pg_row(PGconn *c, const char *sql, int n, const char *const *params,
                  json_t *(*row)(const PGresult *r, int i), sg_err absent, json_t **out) {
  PGresult *r = sg__pg_q(c, sql, n, params);
  if (!r) return SG_E_INTERNAL;
  sg_err rc = absent;
  if (PQntuples(r) == 1) {
    *out = row(r, 0);
    rc = *out ? SG_E_OK : SG_E_INTERNAL;
  }
  PQclear(r);
  return rc;
}

sg_err sg__pg_list_load(PGconn *c, const char *workspace_id, const char *id, bool lock,
                        json_t **out, int64_t *row_version) {
  const char *p[] = {id, workspace_id};
  PGresult *r = sg__pg_q(c,
                         lock ? "SELECT " SG__STORE_LIST_COLS ", row_version FROM lists WHERE id=$1"
                                " AND ($2::text IS NULL OR workspace_id=$2) FOR UPDATE"
                              : "SELECT " SG__STORE_LIST_COLS ", row_version FROM lists WHERE id=$1"
                                " AND ($2::text IS NULL OR workspace_id=$2)",
                         2, p);
  if (!r) return SG_E_INTERNAL;
  sg_err rc = SG_E_INVALID_LIST;
  if (PQntuples(r) == 1) {
    *out = sg__pg_list_row(r, 0);
    const char *ws = sg__pg_sn(r, 0, "workspace_id");
    if (!workspace_id && *out && ws) json_object_set_new(*out, "workspaceId", json_string(ws));
    if (row_version) *row_version = sg__pg_in(r, 0, "row_version");
    rc = *out ? SG_E_OK : SG_E_INTERNAL;
  }
  PQclear(r);
  return rc;
}

sg_err sg__pg_list_exists(PGconn *c, const char *workspace_id, const char *list_id) {
  const char *p[] = {list_id, workspace_id};
  PGresult *r = sg__pg_q(c, "SELECT 1 FROM lists WHERE id=$1 AND workspace_id=$2", 2, p);
  if (!r) return SG_E_INTERNAL;
  sg_err rc = PQntuples(r) == 1 ? SG_E_OK : SG_E_INVALID_LIST;
  PQclear(r);
  return rc;
}

sg_err sg__pg_list_writable(PGconn *c, const char *workspace_id, const char *list_id) {
  const char *p[] = {list_id, workspace_id};
  /* The lock serialises every item write of the list (as SQLite's single writer does):
   * the item clock, the If-Match check and the uniqueness of values follow from it. */
  PGresult *r =
      sg__pg_q(c, "SELECT status FROM lists WHERE id=$1 AND workspace_id=$2 FOR UPDATE", 2, p);
  if (!r) return SG_E_INTERNAL;
  sg_err rc = SG_E_INVALID_LIST;
  if (PQntuples(r) == 1) {
    const char *status = sg__pg_sn(r, 0, "status");
    rc = !status ? SG_E_INTERNAL : strcmp(status, "archived") == 0 ? SG_E_LIST_ARCHIVED : SG_E_OK;
  }
  PQclear(r);
  return rc;
}

typedef struct {
  const char *workspace_id, *name, *description, *id, *slug_base;
  int64_t max_lists;
  json_t *out;
} create_ctx;

static sg_err create_fn(PGconn *c, void *vctx) {
  create_ctx *x = vctx;
  char slug[80], now[24];
  sg__pg_int(sg_now_s(), now);
  /* The workspace row is locked against other list creates (in any process) until
   * commit, so the count below and the insert agree. */
  const char *pw[] = {x->workspace_id};
  PGresult *r = sg__pg_q(c, "SELECT 1 FROM workspaces WHERE id=$1 FOR NO KEY UPDATE", 1, pw);
  if (!r) return SG_E_INTERNAL;
  PQclear(r);
  int full = sg__pg_at_limit(c, "SELECT count(*) FROM lists WHERE workspace_id=$1", x->workspace_id,
                             x->max_lists);
  if (full != 0) return full > 0 ? SG_E_LIST_LIMIT : SG_E_INTERNAL;
  /* The slug is unique per workspace: try the candidates in order; ON CONFLICT keeps the
   * transaction usable when one is taken. */
  for (int attempt = 1; attempt <= SG_STORE_SLUG_ATTEMPTS; attempt++) {
    sg__store_slug_candidate(x->slug_base, attempt, slug, sizeof slug);
    const char *p[] = {x->id, x->workspace_id, x->name, x->description, slug, now};
    r = sg__pg_q(c,
                 "INSERT INTO lists(id, workspace_id, name, description, slug,"
                 " created_at, updated_at) VALUES($1, $2, $3, $4, $5, $6, $6)"
                 " ON CONFLICT (workspace_id, slug) DO NOTHING",
                 6, p);
    if (!r) return SG_E_INTERNAL;
    int64_t n = sg__pg_changed(r);
    PQclear(r);
    if (n == 1) return sg__pg_list_load(c, x->workspace_id, x->id, false, &x->out, NULL);
  }
  return SG_E_INTERNAL;
}

sg_err sg__pg_list_create(sg_store *base, const char *workspace_id, const char *name,
                          const char *description, json_t **out) {
  char id[32], slug_base[64];
  sg_random_id("lst_", id, sizeof id);
  sg__store_slug_base(name, slug_base, sizeof slug_base);
  create_ctx x = {workspace_id, name, description, id, slug_base, base->limits.lists_per_workspace,
                  NULL};
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RC, create_fn, &x);
  if (rc == SG_E_OK)
    *out = x.out;
  else
    json_decref(x.out);
  return rc;
}

typedef struct {
  const char *workspace_id, *id;
  json_t *out;
} get_ctx;

static sg_err get_fn(PGconn *c, void *vctx) {
  get_ctx *x = vctx;
  json_decref(x->out);
  x->out = NULL;
  return sg__pg_list_load(c, x->workspace_id, x->id, false, &x->out, NULL);
}

sg_err sg__pg_list_get(sg_store *base, const char *workspace_id, const char *id, json_t **out) {
  get_ctx x = {workspace_id, id, NULL};
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RC, get_fn, &x);
  if (rc == SG_E_OK)
    *out = x.out;
  else
    json_decref(x.out);
  return rc;
}

sg_err sg__pg_list_page(sg_store *base, const char *workspace_id, size_t limit, const json_t *after,
                        json_t **data, bool *more) {
  char lim[24], order[24];
  const char *p[] = {workspace_id, sg__pg_int((int64_t)limit + 1, lim),
                     after ? sg__pg_int(json_integer_value(json_array_get(after, 0)), order) : NULL,
                     json_string_value(json_array_get(after, 1)),
                     json_string_value(json_array_get(after, 2))};
  sg_err rc;
  PGresult *r =
      sg__pg_read(sg__pg_of(base),
                  after ? "SELECT " SG__STORE_LIST_COLS " FROM lists WHERE workspace_id=$1"
                          " AND (display_order, slug, id) > ($3::bigint, $4, $5)"
                          " ORDER BY display_order, slug, id LIMIT $2"
                        : "SELECT " SG__STORE_LIST_COLS " FROM lists WHERE workspace_id=$1"
                          " ORDER BY display_order, slug, id LIMIT $2",
                  after ? 5 : 2, p, &rc);
  if (!r) return rc;
  *data = sg__pg_page(r, limit, sg__pg_list_row, more);
  PQclear(r);
  return *data ? SG_E_OK : SG_E_INTERNAL;
}

typedef struct {
  const char *workspace_id, *id, *if_match;
  const json_t *changes;
  json_t *out; /* the patched list, or the current one for a 412 */
} patch_ctx;

/* A column and the JSON value to store in it (integers, booleans as 0/1, strings, and
 * anything else as compact JSON text). */
static int set_column(PGconn *c, const char *sql, const char *id, const json_t *v) {
  char num[24];
  char *enc = NULL;
  const char *val;
  if (json_is_integer(v))
    val = sg__pg_int(json_integer_value(v), num);
  else if (json_is_boolean(v))
    val = json_is_true(v) ? "1" : "0";
  else if (json_is_string(v))
    val = json_string_value(v);
  else
    val = enc = json_dumps(v, JSON_COMPACT);
  const char *p[] = {id, val};
  int rc = sg__pg_x(c, sql, 2, p);
  free(enc);
  return rc;
}

static sg_err patch_fn(PGconn *c, void *vctx) {
  patch_ctx *x = vctx;
  json_decref(x->out);
  x->out = NULL;
  json_t *cur = NULL;
  int64_t version = 0;
  sg_err rc = sg__pg_list_load(c, x->workspace_id, x->id, true, &cur, &version);
  if (rc != SG_E_OK) return rc;
  if (x->if_match) {
    char etag[48];
    sg_store_list_etag(cur, etag);
    if (!sg_etag_match(x->if_match, etag)) {
      x->out = cur;
      return SG_E_PRECONDITION_FAILED;
    }
  }
  json_decref(cur);
  const json_t *ch = x->changes;
  const json_t *qp = json_object_get(ch, "queryPolicy");
  const json_t *lp = json_object_get(ch, "localePolicy");
  const json_t *tt = json_object_get(qp, "typoTolerance");
  const struct {
    const char *sql;
    const json_t *v;
  } ups[] = {
      {"UPDATE lists SET name=$2 WHERE id=$1", json_object_get(ch, "name")},
      {"UPDATE lists SET visibility=$2 WHERE id=$1", json_object_get(ch, "visibility")},
      {"UPDATE lists SET status=$2 WHERE id=$1", json_object_get(ch, "status")},
      {"UPDATE lists SET display_order=$2::bigint WHERE id=$1",
       json_object_get(ch, "displayOrder")},
      {"UPDATE lists SET min_query_chars=$2::bigint WHERE id=$1",
       json_object_get(qp, "minQueryChars")},
      {"UPDATE lists SET debounce_ms=$2::bigint WHERE id=$1", json_object_get(qp, "debounceMs")},
      {"UPDATE lists SET typo_enabled=$2::bigint WHERE id=$1", json_object_get(tt, "enabled")},
      {"UPDATE lists SET typo_min_one=$2::bigint WHERE id=$1",
       json_object_get(tt, "minCharsOneTypo")},
      {"UPDATE lists SET typo_min_two=$2::bigint WHERE id=$1",
       json_object_get(tt, "minCharsTwoTypos")},
      {"UPDATE lists SET default_locale=$2 WHERE id=$1", json_object_get(lp, "defaultLocale")},
      {"UPDATE lists SET supported_locales=$2 WHERE id=$1",
       json_object_get(lp, "supportedLocales")},
  };
  for (size_t i = 0; i < sizeof ups / sizeof ups[0]; i++)
    if (ups[i].v && set_column(c, ups[i].sql, x->id, ups[i].v)) return SG_E_INTERNAL;
  char now[24], ver[24];
  const char *p[] = {x->id, sg__pg_int(sg_now_s(), now), sg__pg_int(version, ver)};
  PGresult *r = sg__pg_q(c,
                         "UPDATE lists SET updated_at=$2, row_version=row_version+1"
                         " WHERE id=$1 AND row_version=$3::bigint",
                         3, p);
  if (!r) return SG_E_INTERNAL;
  int64_t n = sg__pg_changed(r);
  PQclear(r);
  /* Unreachable while the row lock is held; should it ever happen the write is refused
   * rather than applied over another. */
  if (n != 1) return SG_E_PRECONDITION_FAILED;
  rc = sg__pg_list_load(c, x->workspace_id, x->id, false, &x->out, NULL);
  if (rc == SG_E_OK && !sg__store_list_policies_valid(x->out)) {
    json_decref(x->out);
    x->out = NULL;
    rc = SG_E_INVALID_REQUEST;
  }
  return rc;
}

sg_err sg__pg_list_patch(sg_store *base, const char *workspace_id, const char *id,
                         const json_t *changes, const char *if_match, json_t **out) {
  patch_ctx x = {workspace_id, id, if_match, changes, NULL};
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RC, patch_fn, &x);
  if (rc == SG_E_OK || (rc == SG_E_PRECONDITION_FAILED && x.out)) {
    *out = x.out;
    return rc;
  }
  json_decref(x.out);
  return rc;
}
