/*
 * PostgreSQL backend: rollback to a superseded version (sg_store_version_reactivate and
 * sg_store_version_hash in store.h), the twin of src/store/sqlite/rollback.c.
 */
#include <string.h>

#include "common/util.h"
#include "store/postgres/pg.h"
#include "store/rules.h"

typedef struct {
  const char *workspace_id, *list_id, *if_match;
  int64_t number;
  char hash[80], state[16];
  bool changed;
  json_t *list;
} rb_ctx;

/* The version's state and hash (SG_E_NOT_FOUND when never allocated); lock: FOR UPDATE. */
static sg_err version_row(PGconn *c, rb_ctx *x, bool lock) {
  char num[24];
  const char *p[] = {x->list_id, sg__pg_int(x->number, num)};
  PGresult *r = sg__pg_q(c,
                         lock ? "SELECT state, content_hash FROM versions WHERE list_id=$1 AND"
                                " version_number=$2::bigint FOR UPDATE"
                              : "SELECT state, content_hash FROM versions WHERE list_id=$1 AND"
                                " version_number=$2::bigint",
                         2, p);
  if (!r) return SG_E_INTERNAL;
  static const char *const names[] = {"state", "content_hash"};
  int col[2];
  sg_err rc = sg__pg_cols(r, names, col, 2) ? SG_E_INTERNAL
              : PQntuples(r) == 1           ? SG_E_OK
                                            : SG_E_NOT_FOUND;
  if (rc == SG_E_OK) {
    snprintf(x->state, sizeof x->state, "%s", PQgetvalue(r, 0, col[0]));
    snprintf(x->hash, sizeof x->hash, "%s",
             PQgetisnull(r, 0, col[1]) ? "" : PQgetvalue(r, 0, col[1]));
  }
  PQclear(r);
  return rc;
}

static sg_err hash_fn(PGconn *c, void *ctx) {
  rb_ctx *x = ctx;
  sg_err rc = sg__pg_list_exists(c, x->workspace_id, x->list_id);
  return rc == SG_E_OK ? version_row(c, x, false) : rc;
}

sg_err sg__pg_version_hash(sg_store *base, const char *workspace_id, const char *list_id,
                           int64_t number, char hash[80], char state[16]) {
  rb_ctx x = {.workspace_id = workspace_id, .list_id = list_id, .number = number};
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RC, hash_fn, &x);
  snprintf(hash, 80, "%s", x.hash);
  snprintf(state, 16, "%s", x.state);
  return rc;
}

static sg_err reactivate_fn(PGconn *c, void *ctx) {
  rb_ctx *x = ctx;
  json_decref(x->list);
  x->list = NULL;
  x->changed = false;
  /* The list's row locked first: activations of one list run one at a time. */
  sg_err rc = sg__pg_list_load(c, x->workspace_id, x->list_id, true, &x->list, NULL);
  if (rc != SG_E_OK) return rc;
  if (x->if_match) {
    char etag[48];
    sg_store_list_etag(x->list, etag);
    if (!sg_etag_match(x->if_match, etag)) return SG_E_PRECONDITION_FAILED;
  }
  if ((rc = version_row(c, x, true)) != SG_E_OK) return rc;
  if (strcmp(x->state, SG_VERSION_ACTIVE) == 0) return SG_E_OK;
  if (strcmp(json_string_value(json_object_get(x->list, "status")), "archived") == 0)
    return SG_E_LIST_ARCHIVED;
  const char *p1[] = {x->list_id};
  PGresult *r = sg__pg_q(c,
                         "SELECT 1 FROM versions WHERE list_id=$1 AND state IN ('queued', 'staged')"
                         " LIMIT 1",
                         1, p1);
  if (!r) return SG_E_INTERNAL;
  bool busy = PQntuples(r) > 0;
  PQclear(r);
  if (busy) return SG_E_PUBLISH_IN_PROGRESS;
  if (strcmp(x->state, SG_VERSION_SUPERSEDED) != 0 || !x->hash[0])
    return SG_E_VERSION_NOT_ACTIVATABLE;
  char num[24], now[24];
  const char *p[] = {x->list_id, sg__pg_int(x->number, num), sg__pg_int(sg_now_s(), now), x->hash};
  if (sg__pg_make_active(c, p)) return SG_E_INTERNAL;
  x->changed = true;
  json_decref(x->list);
  x->list = NULL;
  return sg__pg_list_load(c, x->workspace_id, x->list_id, false, &x->list, NULL);
}

sg_err sg__pg_version_reactivate(sg_store *base, const char *workspace_id, const char *list_id,
                                 int64_t number, const char *if_match, bool *changed,
                                 json_t **list_out) {
  rb_ctx x = {
      .workspace_id = workspace_id, .list_id = list_id, .if_match = if_match, .number = number};
  sg_err rc = sg__pg_tx(sg__pg_of(base), SG__PG_RC, reactivate_fn, &x);
  *changed = rc == SG_E_OK && x.changed;
  if ((rc == SG_E_OK || rc == SG_E_PRECONDITION_FAILED) && list_out)
    *list_out = x.list;
  else
    json_decref(x.list);
  return rc;
}
