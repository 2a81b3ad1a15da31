/*
 * PostgreSQL backend: the `suggestd admin … list` listings (as src/store/sqlite/admin_list.c).
 */
#include <string.h>

#include "store/postgres/pg.h"

/* ---- `suggestd admin … list` ------------------------------------------------------------------
 */

/* As on SQLite: fixed SQL with the filters as parameters ($1 application, $2 list,
 * $3 workspace; each statement names all three), the JSON name of each column and the
 * result column it is read from (by name). The digest column is never selected. Ties
 * within one second keep insertion order (rseq). */
typedef struct {
  const char *what, *sql;
  const char *cols[8];
  const char *names[8];
} listing;

static const listing listings[] = {
    {"workspaces",
     "SELECT id, name, status, created_at FROM workspaces WHERE $1::text IS NULL OR"
     " $2::text IS NULL OR $3::text IS NULL OR true ORDER BY created_at, rseq",
     {"id", "name", "status", "createdAt"},
     {"id", "name", "status", "created_at"}},
    {"applications",
     "SELECT id, workspace_id, name, status, monthly_quota, created_at FROM applications"
     " WHERE ($3::text IS NULL OR workspace_id = $3) AND ($1::text IS NULL OR true)"
     " AND ($2::text IS NULL OR true) ORDER BY created_at, rseq",
     {"id", "workspaceId", "name", "status", "monthlyQuota", "createdAt"},
     {"id", "workspace_id", "name", "status", "monthly_quota", "created_at"}},
    {"secret-keys",
     "SELECT k.id, k.application_id, a.workspace_id, k.status, k.created_at, k.revoked_at"
     " FROM secret_keys k JOIN applications a ON a.id = k.application_id"
     " WHERE ($1::text IS NULL OR k.application_id = $1) AND ($3::text IS NULL OR"
     " a.workspace_id = $3) AND ($2::text IS NULL OR true) ORDER BY k.created_at, k.rseq",
     {"id", "applicationId", "workspaceId", "status", "createdAt", "revokedAt"},
     {"id", "application_id", "workspace_id", "status", "created_at", "revoked_at"}},
    {"publishable-keys",
     "SELECT k.id, k.application_id, a.workspace_id, k.list_id, k.origins, k.status,"
     " k.created_at FROM publishable_keys k JOIN applications a ON a.id = k.application_id"
     " WHERE ($1::text IS NULL OR k.application_id = $1) AND ($2::text IS NULL OR"
     " k.list_id = $2) AND ($3::text IS NULL OR a.workspace_id = $3)"
     " ORDER BY k.created_at, k.rseq",
     {"id", "applicationId", "workspaceId", "listId", "origins", "status", "createdAt"},
     {"id", "application_id", "workspace_id", "list_id", "origins", "status", "created_at"}},
    {"subscriptions",
     "SELECT id, workspace_id, list_id, status, created_at FROM subscriptions"
     " WHERE ($2::text IS NULL OR list_id = $2) AND ($3::text IS NULL OR workspace_id = $3)"
     " AND ($1::text IS NULL OR true) ORDER BY created_at, rseq",
     {"id", "workspaceId", "listId", "status", "createdAt"},
     {"id", "workspace_id", "list_id", "status", "created_at"}},
    {NULL, NULL, {NULL}, {NULL}},
};

/* The OID of int8, the type of every integer column of the schema. */
#define INT8_OID 20

static json_t *cell(const PGresult *r, int i, int col, const char *name) {
  size_t n = strlen(name);
  if (n > 2 && strcmp(name + n - 2, "At") == 0) return sg__pg_ts(r, i, col);
  if (PQgetisnull(r, i, col)) return json_null();
  if (PQftype(r, col) == INT8_OID) return json_integer(sg__pg_i(r, i, col));
  const char *t = PQgetvalue(r, i, col);
  if (strcmp(name, "origins") == 0) {
    json_t *v = json_loads(t, 0, NULL);
    return v ? v : json_array();
  }
  return json_string(t);
}

sg_err sg__pg_admin_list(sg_store *base, const char *what, const char *application_id,
                         const char *list_id, const char *workspace_id, json_t **out) {
  const listing *l = listings;
  while (l->what && strcmp(l->what, what) != 0) l++;
  if (!l->what) return SG_E_NOT_FOUND;
  const char *p[] = {application_id, list_id, workspace_id};
  sg_err rc;
  PGresult *r = sg__pg_one(sg__pg_of(base), l->sql, 3, p, &rc);
  if (!r) return rc;
  size_t n = 0;
  while (n < 8 && l->cols[n]) n++;
  int col[8];
  if (sg__pg_cols(r, l->names, col, n)) {
    PQclear(r);
    return SG_E_INTERNAL;
  }
  json_t *data = json_array();
  for (int i = 0; i < PQntuples(r); i++) {
    json_t *row = json_object();
    for (size_t c = 0; c < n; c++)
      json_object_set_new(row, l->cols[c], cell(r, i, col[c], l->cols[c]));
    json_array_append_new(data, row);
  }
  PQclear(r);
  *out = data;
  return SG_E_OK;
}
