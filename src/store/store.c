/*
 * sg_store: the backend named by the spec, argument checks done once, and dispatch.
 *
 * Each sg_store_* function below checks what does not depend on the backend (a handle is
 * given, an id can name a record, a page size is in range) and calls the backend's
 * operation (store_internal.h). A new backend adds one line to sg_store_open.
 */
#include "store/store.h"

#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "store/members.h"
#include "store/store_internal.h"

bool sg__store_id_ok(const char *id) {
  if (!id || !*id) return false;
  size_t n = 0;
  for (const char *p = id; *p; p++, n++) {
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok || n >= SG_STORE_MAX_ID) return false;
  }
  return true;
}

bool sg__store_limit_ok(size_t limit) { return limit >= 1 && limit <= SG_STORE_MAX_PAGE; }

/* An operation a backend leaves out (NULL in its table) answers SG_E_INTERNAL with a log
 * line naming it, so a gap shows up as a clear error instead of a crash. */
static sg_err sg__store_missing(const sg_store_ops *ops, const char *op) {
  fprintf(stderr,
          "{\"level\":\"error\",\"msg\":\"store operation not implemented\","
          "\"backend\":\"%s\",\"op\":\"%s\"}\n",
          ops->name, op);
  return SG_E_INTERNAL;
}

static bool has_suffix(const char *s, size_t len, const char *suffix) {
  size_t n = strlen(suffix);
  return len > n && strcmp(s + len - n, suffix) == 0;
}

/* SQLite: spec is a data directory (the database is <dir>/suggestd.db), or names the
 * database file itself: "sqlite:///abs/path.db", "sqlite://rel/path.db", or a path ending
 * in .db/.sqlite/.sqlite3. The file's folder then holds the import scratch space. */
static int open_sqlite(const char *spec, sg_store **out, char *err, size_t errsz) {
  char dir[4096], path[4096];
  const char *p = strncmp(spec, "sqlite://", 9) == 0 ? spec + 9 : spec;
  size_t plen = strlen(p);
  if (plen == 0 || plen >= sizeof dir - 16) {
    snprintf(err, errsz, "bad database location '%s'", spec);
    return -1;
  }
  if (has_suffix(p, plen, ".db") || has_suffix(p, plen, ".sqlite") ||
      has_suffix(p, plen, ".sqlite3")) {
    snprintf(path, sizeof path, "%s", p);
    const char *slash = strrchr(p, '/');
    if (slash == p)
      snprintf(dir, sizeof dir, "/");
    else if (slash)
      snprintf(dir, sizeof dir, "%.*s", (int)(slash - p), p);
    else
      snprintf(dir, sizeof dir, ".");
  } else {
    snprintf(dir, sizeof dir, "%s", p);
    snprintf(path, sizeof path, "%s/suggestd.db", p);
  }
  if (sg_mkdirs(dir, 0700)) {
    snprintf(err, errsz, "cannot create data dir '%s'", dir);
    return -1;
  }
  return sg__sqlite_open(dir, path, out, err, errsz);
}

int sg_store_open(const char *spec, sg_store **out, char *err, size_t errsz) {
  char scratch[8];
  if (!err || errsz == 0) {
    err = scratch;
    errsz = sizeof scratch;
  }
  err[0] = '\0';
  if (!spec || !out) {
    snprintf(err, errsz, "no database location");
    return -1;
  }
  *out = NULL;
  int rc;
  if (strncmp(spec, "postgres://", 11) == 0 || strncmp(spec, "postgresql://", 13) == 0) {
    rc = sg__pg_open(spec, out, err, errsz);
  } else {
    /* Any other "scheme://" is a backend this build does not know; a plain path (which
     * may contain "://" only after a slash) is the SQLite data directory or file. */
    const char *colon = strstr(spec, "://");
    if (colon && strncmp(spec, "sqlite://", 9) != 0 && !memchr(spec, '/', (size_t)(colon - spec))) {
      snprintf(err, errsz, "unknown database scheme in '%s' (expected sqlite:// or a path)", spec);
      return -1;
    }
    rc = open_sqlite(spec, out, err, errsz);
  }
  if (rc == 0) {
    (*out)->limits = SG_STORE_LIMITS_DEFAULT;
    (*out)->keep_versions = SG_STORE_KEEP_VERSIONS_DEFAULT;
  }
  return rc;
}

void sg_store_set_limits(sg_store *st, const sg_store_limits *l) {
  if (st && l) st->limits = *l;
}

void sg_store_set_keep_versions(sg_store *st, int64_t n) {
  if (st && n >= 1) st->keep_versions = n;
}

/* ---- dispatch ------------------------------------------------------------------------ */
void sg_store_close(sg_store *st) {
  if (st) st->ops->close(st);
}

sg_err sg_store_workspace_create(sg_store *st, const char *name, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->workspace_create) return sg__store_missing(st->ops, "workspace_create");
  return st->ops->workspace_create(st, name, out);
}

sg_err sg_store_workspace_set_status(sg_store *st, const char *id, const char *status,
                                     json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->workspace_set_status) return sg__store_missing(st->ops, "workspace_set_status");
  return st->ops->workspace_set_status(st, id, status, out);
}

sg_err sg_store_application_create(sg_store *st, const char *workspace_id, const char *name,
                                   int64_t monthly_quota, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->application_create) return sg__store_missing(st->ops, "application_create");
  return st->ops->application_create(st, workspace_id, name, monthly_quota, out);
}

sg_err sg_store_application_set_status(sg_store *st, const char *id, const char *status,
                                       json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->application_set_status) return sg__store_missing(st->ops, "application_set_status");
  return st->ops->application_set_status(st, id, status, out);
}

sg_err sg_store_application_set_quota(sg_store *st, const char *id, int64_t monthly_quota,
                                      json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->application_set_quota) return sg__store_missing(st->ops, "application_set_quota");
  return st->ops->application_set_quota(st, id, monthly_quota, out);
}

sg_err sg_store_secret_key_create(sg_store *st, const char *application_id, const char *id,
                                  const uint8_t digest[32]) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->secret_key_create) return sg__store_missing(st->ops, "secret_key_create");
  return st->ops->secret_key_create(st, application_id, id, digest);
}

sg_err sg_store_secret_key_revoke(sg_store *st, const char *id, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->secret_key_revoke) return sg__store_missing(st->ops, "secret_key_revoke");
  return st->ops->secret_key_revoke(st, id, out);
}

sg_err sg_store_authenticate(sg_store *st, const char *key_id, const uint8_t digest[32],
                             sg_principal *out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->authenticate) return sg__store_missing(st->ops, "authenticate");
  return st->ops->authenticate(st, key_id, digest, out);
}

sg_err sg_store_application_get(sg_store *st, const char *id, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->application_get) return sg__store_missing(st->ops, "application_get");
  return st->ops->application_get(st, id, out);
}

sg_err sg_store_workspace_get(sg_store *st, const char *id, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->workspace_get) return sg__store_missing(st->ops, "workspace_get");
  return st->ops->workspace_get(st, id, out);
}

sg_err sg_store_publishable_key_create(sg_store *st, const char *id, const char *application_id,
                                       const char *list_id, const char *digest_hex,
                                       const json_t *origins, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->publishable_key_create) return sg__store_missing(st->ops, "publishable_key_create");
  return st->ops->publishable_key_create(st, id, application_id, list_id, digest_hex, origins, out);
}

sg_err sg_store_publishable_key_revoke(sg_store *st, const char *id, json_t **out,
                                       char digest_hex[65]) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->publishable_key_revoke) return sg__store_missing(st->ops, "publishable_key_revoke");
  return st->ops->publishable_key_revoke(st, id, out, digest_hex);
}

sg_err sg_store_subscription_create(sg_store *st, const char *workspace_id, const char *list_id,
                                    json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!st->ops->subscription_create) return sg__store_missing(st->ops, "subscription_create");
  return st->ops->subscription_create(st, workspace_id, list_id, out);
}

sg_err sg_store_subscription_cancel(sg_store *st, const char *id, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->subscription_cancel) return sg__store_missing(st->ops, "subscription_cancel");
  return st->ops->subscription_cancel(st, id, out);
}

sg_err sg_store_lists_mintable(sg_store *st, const char *workspace_id, const char *const *ids,
                               size_t n) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->lists_mintable) return sg__store_missing(st->ops, "lists_mintable");
  return st->ops->lists_mintable(st, workspace_id, ids, n);
}

sg_err sg_store_signing_key_add(sg_store *st, const char *kid, const uint8_t sk[64],
                                const uint8_t pk[32], int64_t now) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->signing_key_add) return sg__store_missing(st->ops, "signing_key_add");
  return st->ops->signing_key_add(st, kid, sk, pk, now);
}

sg_err sg_store_signing_key_current(sg_store *st, char kid[64], uint8_t sk[64]) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->signing_key_current) return sg__store_missing(st->ops, "signing_key_current");
  return st->ops->signing_key_current(st, kid, sk);
}

sg_err sg_store_signing_keys_public(sg_store *st, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->signing_keys_public) return sg__store_missing(st->ops, "signing_keys_public");
  return st->ops->signing_keys_public(st, out);
}

sg_err sg_store_list_create(sg_store *st, const char *workspace_id, const char *name,
                            const char *description, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->list_create) return sg__store_missing(st->ops, "list_create");
  return st->ops->list_create(st, workspace_id, name, description, out);
}

sg_err sg_store_list_get(sg_store *st, const char *workspace_id, const char *id, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->list_get) return sg__store_missing(st->ops, "list_get");
  return st->ops->list_get(st, workspace_id, id, out);
}

sg_err sg_store_list_page(sg_store *st, const char *workspace_id, size_t limit, const json_t *after,
                          json_t **data, bool *more) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_limit_ok(limit)) return SG_E_INTERNAL;
  if (!st->ops->list_page) return sg__store_missing(st->ops, "list_page");
  return st->ops->list_page(st, workspace_id, limit, after, data, more);
}

sg_err sg_store_list_patch(sg_store *st, const char *workspace_id, const char *id,
                           const json_t *changes, const char *if_match, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->list_patch) return sg__store_missing(st->ops, "list_patch");
  return st->ops->list_patch(st, workspace_id, id, changes, if_match, out);
}

sg_err sg_store_item_create(sg_store *st, const char *workspace_id, const char *list_id,
                            const json_t *item, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!st->ops->item_create) return sg__store_missing(st->ops, "item_create");
  return st->ops->item_create(st, workspace_id, list_id, item, out);
}

sg_err sg_store_item_page(sg_store *st, const char *workspace_id, const char *list_id, size_t limit,
                          const json_t *after, json_t **data, bool *more) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!sg__store_limit_ok(limit)) return SG_E_INTERNAL;
  if (!st->ops->item_page) return sg__store_missing(st->ops, "item_page");
  return st->ops->item_page(st, workspace_id, list_id, limit, after, data, more);
}

sg_err sg_store_item_get(sg_store *st, const char *workspace_id, const char *list_id,
                         const char *item_id, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!sg__store_id_ok(item_id)) return SG_E_INVALID_ITEM;
  if (!st->ops->item_get) return sg__store_missing(st->ops, "item_get");
  return st->ops->item_get(st, workspace_id, list_id, item_id, out);
}

sg_err sg_store_item_update(sg_store *st, const char *workspace_id, const char *list_id,
                            const char *item_id, const json_t *item, const char *if_match,
                            json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!sg__store_id_ok(item_id)) return SG_E_INVALID_ITEM;
  if (!st->ops->item_update) return sg__store_missing(st->ops, "item_update");
  return st->ops->item_update(st, workspace_id, list_id, item_id, item, if_match, out);
}

sg_err sg_store_item_delete(sg_store *st, const char *workspace_id, const char *list_id,
                            const char *item_id, const char *if_match, json_t **cur_out) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!sg__store_id_ok(item_id)) return SG_E_INVALID_ITEM;
  if (!st->ops->item_delete) return sg__store_missing(st->ops, "item_delete");
  return st->ops->item_delete(st, workspace_id, list_id, item_id, if_match, cur_out);
}

sg_err sg_store_items_prune(sg_store *st, const char *list_id, size_t max, size_t *n) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->items_prune) return sg__store_missing(st->ops, "items_prune");
  return st->ops->items_prune(st, list_id, max, n);
}

sg_err sg_store_import_begin(sg_store *st, sg_store_import **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->import_begin) return sg__store_missing(st->ops, "import_begin");
  return st->ops->import_begin(st, out);
}

sg_err sg_store_import_add(sg_store_import *imp, int64_t line, const json_t *item,
                           const char *parent_value) {
  if (!imp) return SG_E_INTERNAL;
  if (!imp->ops->import_add) return sg__store_missing(imp->ops, "import_add");
  return imp->ops->import_add(imp, line, item, parent_value);
}

sg_err sg_store_admin_list(sg_store *st, const char *what, const char *application_id,
                           const char *list_id, const char *workspace_id, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->admin_list) return sg__store_missing(st->ops, "admin_list");
  return st->ops->admin_list(st, what, application_id, list_id, workspace_id, out);
}

sg_err sg_store_import_line_of(sg_store_import *imp, const char *value, int64_t *line) {
  if (!imp) return SG_E_INTERNAL;
  if (!imp->ops->import_line_of) return sg__store_missing(imp->ops, "import_line_of");
  return imp->ops->import_line_of(imp, value, line);
}

sg_err sg_store_import_apply(sg_store *st, sg_store_import *imp, const char *workspace_id,
                             const char *list_id, bool replace, size_t max_bad,
                             sg_import_counts *counts, json_t **bad_lines, int64_t *n_bad) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!st->ops->import_apply) return sg__store_missing(st->ops, "import_apply");
  return st->ops->import_apply(st, imp, workspace_id, list_id, replace, max_bad, counts, bad_lines,
                               n_bad);
}

void sg_store_import_free(sg_store_import *imp) {
  if (imp) imp->ops->import_free(imp);
}

void sg_store_import_cleanup(sg_store *st) {
  if (st && st->ops->import_cleanup) st->ops->import_cleanup(st);
}

sg_err sg_store_export_open(sg_store *st, const char *workspace_id, const char *list_id,
                            sg_store_export **out) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!st->ops->export_open) return sg__store_missing(st->ops, "export_open");
  return st->ops->export_open(st, workspace_id, list_id, out);
}

sg_err sg_store_export_next(sg_store_export *x, json_t **out) {
  if (!x) return SG_E_INTERNAL;
  if (!x->ops->export_next) return sg__store_missing(x->ops, "export_next");
  return x->ops->export_next(x, out);
}

void sg_store_export_close(sg_store_export *x) {
  if (x) x->ops->export_close(x);
}

sg_err sg_store_version_create(sg_store *st, const char *workspace_id, const char *list_id,
                               json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!st->ops->version_create) return sg__store_missing(st->ops, "version_create");
  return st->ops->version_create(st, workspace_id, list_id, out);
}

sg_err sg_store_version_get(sg_store *st, const char *workspace_id, const char *list_id,
                            int64_t number, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!st->ops->version_get) return sg__store_missing(st->ops, "version_get");
  return st->ops->version_get(st, workspace_id, list_id, number, out);
}

sg_err sg_store_version_page(sg_store *st, const char *workspace_id, const char *list_id,
                             size_t limit, const json_t *after, json_t **data, bool *more) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!sg__store_limit_ok(limit)) return SG_E_INTERNAL;
  if (!st->ops->version_page) return sg__store_missing(st->ops, "version_page");
  return st->ops->version_page(st, workspace_id, list_id, limit, after, data, more);
}

sg_err sg_store_version_begin_run(sg_store *st, const char *list_id, int64_t number,
                                  sg_version_job *job) {
  /* A claim whose lease has already run out: the attempt is counted, nothing is held. */
  return sg_store_version_claim(st, list_id, number, 0, job);
}

sg_err sg_store_version_set_async(sg_store *st, const char *list_id, int64_t number) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!st->ops->version_set_async) return sg__store_missing(st->ops, "version_set_async");
  return st->ops->version_set_async(st, list_id, number);
}

sg_err sg_store_version_claim(sg_store *st, const char *list_id, int64_t number, int64_t lease_ms,
                              sg_version_job *job) {
  if (!st || !job || lease_ms < 0) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!st->ops->version_claim) return sg__store_missing(st->ops, "version_claim");
  return st->ops->version_claim(st, list_id, number, lease_ms, job);
}

sg_err sg_store_version_leases_renew(sg_store *st, int64_t lease_ms) {
  if (!st || lease_ms < 0) return SG_E_INTERNAL;
  if (!st->ops->version_leases_renew) return sg__store_missing(st->ops, "version_leases_renew");
  return st->ops->version_leases_renew(st, lease_ms);
}

sg_err sg_store_version_release(sg_store *st, const char *list_id, int64_t number) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!st->ops->version_release) return sg__store_missing(st->ops, "version_release");
  return st->ops->version_release(st, list_id, number);
}

sg_err sg_store_version_next(sg_store *st, const char *after_workspace, int64_t fresh_s,
                             sg_version_ref *out, bool *found) {
  if (!st || !out || !found) return SG_E_INTERNAL;
  if (!st->ops->version_next) return sg__store_missing(st->ops, "version_next");
  return st->ops->version_next(st, after_workspace, fresh_s, out, found);
}

sg_err sg_store_snapshot_items(sg_store *st, const char *list_id, int64_t snapshot_seq,
                               int64_t after_seq, size_t limit,
                               int (*cb)(const sg_store_item_row *row, void *ctx), void *ctx,
                               int64_t *last_seq, size_t *n) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->snapshot_items) return sg__store_missing(st->ops, "snapshot_items");
  return st->ops->snapshot_items(st, list_id, snapshot_seq, after_seq, limit, cb, ctx, last_seq, n);
}

sg_err sg_store_version_set_draft(sg_store *st, const char *list_id, int64_t number,
                                  const json_t *validation_errors) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->version_set_draft) return sg__store_missing(st->ops, "version_set_draft");
  return st->ops->version_set_draft(st, list_id, number, validation_errors);
}

sg_err sg_store_version_set_staged(sg_store *st, const char *list_id, int64_t number,
                                   const char *content_hash) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->version_set_staged) return sg__store_missing(st->ops, "version_set_staged");
  return st->ops->version_set_staged(st, list_id, number, content_hash);
}

sg_err sg_store_version_set_failed(sg_store *st, const char *list_id, int64_t number,
                                   const char *reason) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->version_set_failed) return sg__store_missing(st->ops, "version_set_failed");
  return st->ops->version_set_failed(st, list_id, number, reason);
}

sg_err sg_store_version_activate(sg_store *st, const char *workspace_id, const char *list_id,
                                 int64_t number, bool *activated, json_t **list_out) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!st->ops->version_activate) return sg__store_missing(st->ops, "version_activate");
  return st->ops->version_activate(st, workspace_id, list_id, number, activated, list_out);
}

sg_err sg_store_versions_pending(sg_store *st, const char *list_id, int64_t before,
                                 sg_version_ref *out, size_t max, size_t *n) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->versions_pending) return sg__store_missing(st->ops, "versions_pending");
  return st->ops->versions_pending(st, list_id, before, out, max, n);
}

sg_err sg_store_active_versions(sg_store *st, const char *after, sg_active_version *out, size_t max,
                                size_t *n) {
  if (!st || !out || !n) return SG_E_INTERNAL;
  *n = 0;
  if (!st->ops->active_versions) return sg__store_missing(st->ops, "active_versions");
  return st->ops->active_versions(st, after ? after : "", out, max, n);
}

sg_err sg_store_version_recompile(sg_store *st, const char *list_id, int64_t from, json_t **out) {
  if (!st || !list_id || !out) return SG_E_INTERNAL;
  *out = NULL;
  if (!st->ops->version_recompile) return sg__store_missing(st->ops, "version_recompile");
  return st->ops->version_recompile(st, list_id, from, out);
}

sg_err sg_store_artifacts_in_use(sg_store *st, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->artifacts_in_use) return sg__store_missing(st->ops, "artifacts_in_use");
  return st->ops->artifacts_in_use(st, out);
}

sg_err sg_store_idem_begin(sg_store *st, const char *workspace_id, const char *key,
                           const char *method, const char *path, const uint8_t body_hash[32],
                           sg_idem_state *state, int *status, char **body, char **headers) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->idem_begin) return sg__store_missing(st->ops, "idem_begin");
  return st->ops->idem_begin(st, workspace_id, key, method, path, body_hash, state, status, body,
                             headers);
}

sg_err sg_store_idem_finish(sg_store *st, const char *workspace_id, const char *key, int status,
                            const char *body, const char *headers) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->idem_finish) return sg__store_missing(st->ops, "idem_finish");
  return st->ops->idem_finish(st, workspace_id, key, status, body, headers);
}

sg_err sg_store_edge_dirty(sg_store *st, sg_edge_dirty *out, size_t max, size_t *n) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->edge_dirty) return sg__store_missing(st->ops, "edge_dirty");
  return st->ops->edge_dirty(st, out, max, n);
}

sg_err sg_store_edge_source(sg_store *st, const char *kind, const char *id, int64_t *gen,
                            json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->edge_source) return sg__store_missing(st->ops, "edge_source");
  return st->ops->edge_source(st, kind, id, gen, out);
}

sg_err sg_store_edge_done(sg_store *st, const char *kind, const char *id, int64_t gen,
                          int64_t revision) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->edge_done) return sg__store_missing(st->ops, "edge_done");
  return st->ops->edge_done(st, kind, id, gen, revision);
}

sg_err sg_store_edge_state(sg_store *st, const char *kind, const char *id, int64_t *want,
                           int64_t *done, int64_t *revision) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->edge_state) return sg__store_missing(st->ops, "edge_state");
  return st->ops->edge_state(st, kind, id, want, done, revision);
}

sg_err sg_store_backup(sg_store *st, const char *path, sg_store_artifact_fetch fetch, void *ctx,
                       json_t **summary, char *err, size_t errsz) {
  if (!st || !path || !*path || !fetch || !summary || !err || errsz == 0) return SG_E_INTERNAL;
  err[0] = '\0';
  *summary = NULL;
  if (!st->ops->backup) {
    snprintf(err, errsz,
             "this store is backed up with its own tools: pg_dump, then pg_restore and "
             "`suggestd admin edge rebuild` (docs/STORE.md, \"Backups\")");
    return SG_E_INVALID_REQUEST;
  }
  return st->ops->backup(st, path, fetch, ctx, summary, err, errsz);
}

sg_err sg_store_version_reactivate(sg_store *st, const char *workspace_id, const char *list_id,
                                   int64_t number, const char *if_match, bool *changed,
                                   json_t **list_out) {
  if (!st || !workspace_id || !list_id || !changed) return SG_E_INTERNAL;
  *changed = false;
  if (list_out) *list_out = NULL;
  if (number < 1) return SG_E_NOT_FOUND;
  if (!st->ops->version_reactivate) return sg__store_missing(st->ops, "version_reactivate");
  return st->ops->version_reactivate(st, workspace_id, list_id, number, if_match, changed,
                                     list_out);
}

sg_err sg_store_version_hash(sg_store *st, const char *workspace_id, const char *list_id,
                             int64_t number, char hash[80], char state[16]) {
  if (!st || !workspace_id || !list_id) return SG_E_INTERNAL;
  hash[0] = state[0] = '\0';
  if (number < 1) return SG_E_NOT_FOUND;
  if (!st->ops->version_hash) return sg__store_missing(st->ops, "version_hash");
  return st->ops->version_hash(st, workspace_id, list_id, number, hash, state);
}

sg_err sg_store_edge_guard_get(sg_store *st, sg_edge_guard *out) {
  if (!st || !out) return SG_E_INTERNAL;
  if (!st->ops->edge_guard_get) return sg__store_missing(st->ops, "edge_guard_get");
  return st->ops->edge_guard_get(st, out);
}

sg_err sg_store_edge_guard_begin(sg_store *st, uint64_t above, uint64_t *epoch) {
  if (!st || !epoch || above >= INT64_MAX) return SG_E_INTERNAL;
  if (!st->ops->edge_guard_begin) return sg__store_missing(st->ops, "edge_guard_begin");
  return st->ops->edge_guard_begin(st, above, epoch);
}

sg_err sg_store_edge_guard_beat(sg_store *st, uint64_t epoch, int64_t heartbeat_ms) {
  if (!st || epoch > INT64_MAX || heartbeat_ms < 0) return SG_E_INTERNAL;
  if (!st->ops->edge_guard_beat) return sg__store_missing(st->ops, "edge_guard_beat");
  return st->ops->edge_guard_beat(st, epoch, heartbeat_ms);
}

sg_err sg_store_checkpoint(sg_store *st) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->checkpoint) return sg__store_missing(st->ops, "checkpoint");
  return st->ops->checkpoint(st);
}

sg_err sg_store_secret(sg_store *st, const char *name, uint8_t out[32]) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->secret) return sg__store_missing(st->ops, "secret");
  return st->ops->secret(st, name, out);
}

sg_err sg_store_queue_depth(sg_store *st, int64_t *n) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->queue_depth) return sg__store_missing(st->ops, "queue_depth");
  return st->ops->queue_depth(st, n);
}

sg_err sg_store_member_create(sg_store *st, const char *workspace_id, const char *email,
                              sg_role role, const char *password_hash, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->member_create) return sg__store_missing(st->ops, "member_create");
  return st->ops->member_create(st, workspace_id, email, role, password_hash, out);
}

sg_err sg_store_member_for_signin(sg_store *st, const char *email,
                                  sg_signin_candidate out[SG_MEMBERSHIPS_PER_EMAIL], size_t *n) {
  *n = 0;
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->member_for_signin) return sg__store_missing(st->ops, "member_for_signin");
  return st->ops->member_for_signin(st, email, out, n);
}

sg_err sg_store_member_list(sg_store *st, const char *workspace_id, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->member_list) return sg__store_missing(st->ops, "member_list");
  return st->ops->member_list(st, workspace_id, out);
}

sg_err sg_store_member_get(sg_store *st, const char *workspace_id, const char *id, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->member_get) return sg__store_missing(st->ops, "member_get");
  return st->ops->member_get(st, workspace_id, id, out);
}

sg_err sg_store_member_set_role(sg_store *st, const char *workspace_id, const char *id,
                                sg_role role, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->member_set_role) return sg__store_missing(st->ops, "member_set_role");
  return st->ops->member_set_role(st, workspace_id, id, role, out);
}

sg_err sg_store_member_disable(sg_store *st, const char *workspace_id, const char *id,
                               json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->member_disable) return sg__store_missing(st->ops, "member_disable");
  return st->ops->member_disable(st, workspace_id, id, out);
}

sg_err sg_store_member_set_password(sg_store *st, const char *id, const char *password_hash,
                                    const uint8_t *keep_digest) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->member_set_password) return sg__store_missing(st->ops, "member_set_password");
  return st->ops->member_set_password(st, id, password_hash, keep_digest);
}

sg_err sg_store_session_create(sg_store *st, const uint8_t digest[32], const char *member_id,
                               int64_t now_ms, int64_t stale_ms) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->session_create) return sg__store_missing(st->ops, "session_create");
  return st->ops->session_create(st, digest, member_id, now_ms, stale_ms);
}

sg_err sg_store_session_lookup(sg_store *st, const uint8_t digest[32], int64_t now_ms,
                               int64_t idle_ms, sg_member *member, int64_t *last_seen_ms) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->session_lookup) return sg__store_missing(st->ops, "session_lookup");
  return st->ops->session_lookup(st, digest, now_ms, idle_ms, member, last_seen_ms);
}

sg_err sg_store_session_touch(sg_store *st, const uint8_t digest[32], int64_t now_ms) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->session_touch) return sg__store_missing(st->ops, "session_touch");
  return st->ops->session_touch(st, digest, now_ms);
}

sg_err sg_store_session_delete(sg_store *st, const uint8_t digest[32]) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->session_delete) return sg__store_missing(st->ops, "session_delete");
  return st->ops->session_delete(st, digest);
}

sg_err sg_store_session_delete_all(sg_store *st, const char *member_id, int64_t *n) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->session_delete_all) return sg__store_missing(st->ops, "session_delete_all");
  return st->ops->session_delete_all(st, member_id, n);
}

sg_err sg_store_audit_add(sg_store *st, const sg_audit_entry *e) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->audit_add) return sg__store_missing(st->ops, "audit_add");
  return st->ops->audit_add(st, e);
}

sg_err sg_store_audit_page(sg_store *st, const char *workspace_id, size_t limit,
                           const json_t *after, json_t **data, bool *more) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_limit_ok(limit)) return SG_E_INTERNAL;
  if (!st->ops->audit_page) return sg__store_missing(st->ops, "audit_page");
  return st->ops->audit_page(st, workspace_id, limit, after, data, more);
}

sg_err sg_store_application_list(sg_store *st, const char *workspace_id, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->application_list) return sg__store_missing(st->ops, "application_list");
  return st->ops->application_list(st, workspace_id, out);
}

sg_err sg_store_application_page(sg_store *st, const char *workspace_id, size_t limit,
                                 const json_t *after, json_t **data, bool *more) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_limit_ok(limit)) return SG_E_INTERNAL;
  if (!st->ops->application_page) return sg__store_missing(st->ops, "application_page");
  return st->ops->application_page(st, workspace_id, limit, after, data, more);
}

sg_err sg_store_application_in_workspace(sg_store *st, const char *workspace_id,
                                         const char *application_id) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->application_in_workspace)
    return sg__store_missing(st->ops, "application_in_workspace");
  return st->ops->application_in_workspace(st, workspace_id, application_id);
}

sg_err sg_store_secret_key_list(sg_store *st, const char *application_id, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->secret_key_list) return sg__store_missing(st->ops, "secret_key_list");
  return st->ops->secret_key_list(st, application_id, out);
}

sg_err sg_store_secret_key_workspace(sg_store *st, const char *key_id, char ws[64]) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->secret_key_workspace) return sg__store_missing(st->ops, "secret_key_workspace");
  return st->ops->secret_key_workspace(st, key_id, ws);
}

sg_err sg_store_publishable_key_workspace(sg_store *st, const char *key_id, char ws[64]) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->publishable_key_workspace)
    return sg__store_missing(st->ops, "publishable_key_workspace");
  return st->ops->publishable_key_workspace(st, key_id, ws);
}

sg_err sg_store_secret_key_touch(sg_store *st, const char *key_id, int64_t now_s) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->secret_key_touch) return sg__store_missing(st->ops, "secret_key_touch");
  return st->ops->secret_key_touch(st, key_id, now_s);
}

sg_err sg_store_publishable_key_list(sg_store *st, const char *application_id, json_t **out) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->publishable_key_list) return sg__store_missing(st->ops, "publishable_key_list");
  return st->ops->publishable_key_list(st, application_id, out);
}

sg_err sg_store_item_search(sg_store *st, const char *workspace_id, const char *list_id,
                            const char *prefix, size_t limit, const json_t *after, json_t **data,
                            bool *more) {
  if (!st) return SG_E_INTERNAL;
  if (!sg__store_id_ok(list_id)) return SG_E_INVALID_LIST;
  if (!sg__store_limit_ok(limit)) return SG_E_INTERNAL;
  if (!st->ops->item_search) return sg__store_missing(st->ops, "item_search");
  return st->ops->item_search(st, workspace_id, list_id, prefix, limit, after, data, more);
}

sg_err sg_store_selections_add(sg_store *st, const sg_selection_event *ev, size_t n) {
  if (!st || (n && !ev)) return SG_E_INTERNAL;
  if (n == 0) return SG_E_OK;
  if (!st->ops->selections_add) return sg__store_missing(st->ops, "selections_add");
  return st->ops->selections_add(st, ev, n);
}

sg_err sg_store_selection_stats(sg_store *st, const char *list_id, int64_t since_ms, size_t top,
                                json_t **out) {
  if (!st || !list_id || !out || top > SG_STORE_MAX_PAGE) return SG_E_INTERNAL;
  if (!st->ops->selection_stats) return sg__store_missing(st->ops, "selection_stats");
  return st->ops->selection_stats(st, list_id, since_ms, top, out);
}

bool sg_store_announces_work(const sg_store *st) { return st && st->ops->wait_work; }

sg_err sg_store_wait_work(sg_store *st, int timeout_ms) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->wait_work) return sg__store_missing(st->ops, "wait_work");
  return st->ops->wait_work(st, timeout_ms);
}

sg_err sg_store_edge_records(sg_store *st, const char *after_kind, const char *after_id,
                             sg_edge_dirty *out, size_t max, size_t *n) {
  *n = 0;
  if (!st || !after_kind || !after_id || !out || max == 0 || !st->ops->edge_records)
    return SG_E_INTERNAL;
  return st->ops->edge_records(st, after_kind, after_id, out, max, n);
}

/* ---- durable artifact copies --------------------------------------------------------- */
/* "sha256:" and 64 lower-case hex digits: the only names a copy can have. */
static bool content_hash_ok(const char *h) {
  if (!h || strncmp(h, "sha256:", 7) != 0 || strlen(h) != 71) return false;
  for (const char *p = h + 7; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return false;
  return true;
}

bool sg_store_keeps_artifacts(sg_store *st) { return st && st->ops->artifact_put; }

sg_err sg_store_artifact_put(sg_store *st, const char *content_hash, const void *data, size_t len) {
  if (!sg_store_keeps_artifacts(st) || !content_hash_ok(content_hash) || (!data && len))
    return SG_E_INTERNAL;
  return st->ops->artifact_put(st, content_hash, data, len);
}

sg_err sg_store_artifact_get(sg_store *st, const char *content_hash, uint64_t *size,
                             sg_store_chunk_cb cb, void *ctx) {
  if (!sg_store_keeps_artifacts(st) || !cb) return SG_E_INTERNAL;
  if (!content_hash_ok(content_hash)) return SG_E_NOT_FOUND;
  return st->ops->artifact_get(st, content_hash, size, cb, ctx);
}

sg_err sg_store_artifact_delete(sg_store *st, const char *content_hash) {
  if (!sg_store_keeps_artifacts(st)) return SG_E_INTERNAL;
  if (!content_hash_ok(content_hash)) return SG_E_NOT_FOUND;
  return st->ops->artifact_delete(st, content_hash);
}

sg_err sg_store_artifacts(sg_store *st, int (*cb)(const char *hex, int64_t written_at, void *ctx),
                          void *ctx) {
  if (!sg_store_keeps_artifacts(st) || !cb) return SG_E_INTERNAL;
  return st->ops->artifacts(st, cb, ctx);
}

sg_err sg_store_analytics_add(sg_store *st, const char *shipment_id, int64_t now_hour,
                              const sg_analytics_row *rows, size_t n) {
  if (!st || !shipment_id || !*shipment_id || (n && !rows)) return SG_E_INTERNAL;
  for (size_t i = 0; i < n; i++) {
    const sg_analytics_row *r = &rows[i];
    bool ok = r->list_id && r->count >= 0 && r->no_result >= 0 && r->hour >= 0;
    if (r->kind == 'q')
      ok = ok && r->q;
    else if (r->kind == 's')
      ok = ok && r->q && r->item_id && r->position >= 1;
    else if (r->kind == 'r')
      ok = ok && r->q && r->raw;
    else if (r->kind != 'h')
      ok = false;
    if (!ok) return SG_E_INVALID_REQUEST;
  }
  if (!st->ops->analytics_add) return sg__store_missing(st->ops, "analytics_add");
  return st->ops->analytics_add(st, shipment_id, now_hour, rows, n);
}

sg_err sg_store_analytics_read(sg_store *st, const char *list_id, int64_t from_hour,
                               int64_t to_hour, size_t top, json_t **out) {
  if (!st || !list_id || !out || top == 0 || top > SG_STORE_MAX_PAGE || from_hour > to_hour)
    return SG_E_INTERNAL;
  if (!st->ops->analytics_read) return sg__store_missing(st->ops, "analytics_read");
  return st->ops->analytics_read(st, list_id, from_hour, to_hour, top, out);
}

sg_err sg_store_analytics_expire(sg_store *st, int64_t before_hour, int64_t before_ms) {
  if (!st) return SG_E_INTERNAL;
  if (!st->ops->analytics_expire) return sg__store_missing(st->ops, "analytics_expire");
  return st->ops->analytics_expire(st, before_hour, before_ms);
}

sg_err sg_store_analytics_suggest(sg_store *st, const char *list_id, int64_t from_hour,
                                  int64_t to_hour, int64_t min_selections, json_t **out) {
  if (!st || !list_id || !out || from_hour > to_hour || min_selections < 1) return SG_E_INTERNAL;
  if (!st->ops->analytics_suggest) return sg__store_missing(st->ops, "analytics_suggest");
  return st->ops->analytics_suggest(st, list_id, from_hour, to_hour, min_selections, out);
}
