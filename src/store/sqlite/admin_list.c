/*
 * `suggestd admin … list`: the operator's view of workspaces, applications, keys and
 * subscriptions. Key rows carry ids and metadata only: the digest column is never
 * selected, so no secret (nor its digest) can reach the output.
 */
#include <string.h>

#include "store/sqlite/sqlite_store.h"

/* One listing: fixed SQL (filters are bound parameters, never spliced in) and the JSON
 * name of each selected column. A column named "…At" is a timestamp; "origins" is JSON.
 * Ties within one second of createdAt keep insertion order (rowid), never the random id. */
typedef struct {
  const char *what;
  const char *sql;
  const char *cols[8];
} listing;

static const listing listings[] = {
    {"workspaces",
     "SELECT id, name, status, created_at FROM workspaces ORDER BY created_at, rowid",
     {"id", "name", "status", "createdAt"}},
    {"applications",
     "SELECT id, workspace_id, name, status, monthly_quota, created_at FROM applications"
     " WHERE (?3 IS NULL OR workspace_id = ?3) ORDER BY created_at, rowid",
     {"id", "workspaceId", "name", "status", "monthlyQuota", "createdAt"}},
    {"secret-keys",
     "SELECT k.id, k.application_id, a.workspace_id, k.status, k.created_at, k.revoked_at"
     " FROM secret_keys k JOIN applications a ON a.id = k.application_id"
     " WHERE (?1 IS NULL OR k.application_id = ?1) AND (?3 IS NULL OR a.workspace_id = ?3)"
     " ORDER BY k.created_at, k.rowid",
     {"id", "applicationId", "workspaceId", "status", "createdAt", "revokedAt"}},
    {"publishable-keys",
     "SELECT k.id, k.application_id, a.workspace_id, k.list_id, k.origins, k.status,"
     " k.created_at FROM publishable_keys k JOIN applications a ON a.id = k.application_id"
     " WHERE (?1 IS NULL OR k.application_id = ?1) AND (?2 IS NULL OR k.list_id = ?2)"
     " AND (?3 IS NULL OR a.workspace_id = ?3) ORDER BY k.created_at, k.rowid",
     {"id", "applicationId", "workspaceId", "listId", "origins", "status", "createdAt"}},
    {"subscriptions",
     "SELECT id, workspace_id, list_id, status, created_at FROM subscriptions"
     " WHERE (?2 IS NULL OR list_id = ?2) AND (?3 IS NULL OR workspace_id = ?3)"
     " ORDER BY created_at, rowid",
     {"id", "workspaceId", "listId", "status", "createdAt"}},
    {NULL, NULL, {NULL}},
};

static json_t *cell(sqlite3_stmt *s, int i, const char *name) {
  size_t n = strlen(name);
  if (n > 2 && strcmp(name + n - 2, "At") == 0) return sg__sq_ts(s, i);
  switch (sqlite3_column_type(s, i)) {
  case SQLITE_NULL: return json_null();
  case SQLITE_INTEGER: return json_integer((json_int_t)sqlite3_column_int64(s, i));
  default: break;
  }
  const char *t = sg__sq_col(s, i);
  if (strcmp(name, "origins") == 0) {
    json_t *v = json_loads(t ? t : "[]", 0, NULL);
    return v ? v : json_array();
  }
  return json_string(t ? t : "");
}

sg_err sg__sqlite_admin_list(sg_store *base, const char *what, const char *application_id,
                             const char *list_id, const char *workspace_id, json_t **out) {
  sg__sq *st = sg__sq_of(base);
  const listing *l = listings;
  while (l->what && strcmp(l->what, what) != 0) l++;
  if (!l->what) return SG_E_NOT_FOUND;
  sg_err rc = SG_E_INTERNAL;
  sg__sq *r = sg__sq_reader_acquire(st);
  sqlite3_stmt *s = sg__sq_prep(r, l->sql);
  if (!s) goto out;
  const char *params[3] = {application_id, list_id, workspace_id};
  for (int i = 1; i <= 3; i++) {
    /* Filters are ?1 application, ?2 list, ?3 workspace; a listing without one skips it.
     * Each is bound on every call (NULL for no filter): the statement is cached. */
    char name[3] = {'?', (char)('0' + i), 0};
    int at = sqlite3_bind_parameter_index(s, name);
    if (at) sg__sq_text(s, at, params[i - 1]);
  }
  json_t *data = json_array();
  int step;
  while ((step = sqlite3_step(s)) == SQLITE_ROW) {
    json_t *row = json_object();
    for (int i = 0; l->cols[i]; i++) json_object_set_new(row, l->cols[i], cell(s, i, l->cols[i]));
    json_array_append_new(data, row);
  }
  sqlite3_reset(s);
  if (step == SQLITE_DONE) {
    *out = data;
    rc = SG_E_OK;
  } else {
    json_decref(data);
  }
out:
  sg__sq_reader_release(r);
  return rc;
}
