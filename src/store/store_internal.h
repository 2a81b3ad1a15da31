/*
 * The store's seam (internal to src/store): one table of operations per backend.
 *
 * store.c checks arguments once and dispatches to st->ops; a backend (src/store/sqlite/)
 * translates each operation into its engine's terms and nothing more. Every operation
 * has the signature and the contract of its sg_store_* function in store.h / members.h.
 * Rules that do not depend on the engine (ETags, slugs, the shared-list rule) are in
 * store/rules.h and are used by every backend.
 */
#ifndef SG_STORE_STORE_INTERNAL_H
#define SG_STORE_STORE_INTERNAL_H

#include "store/members.h"
#include "store/store.h"

typedef struct sg_store_ops sg_store_ops;

struct sg_store_ops {
  const char *name; /* "sqlite", … (logs and tests) */
  void (*close)(sg_store *st);
  sg_err (*workspace_create)(sg_store *st, const char *name, json_t **out);
  sg_err (*workspace_set_status)(sg_store *st, const char *id, const char *status, json_t **out);
  sg_err (*application_create)(sg_store *st, const char *workspace_id, const char *name,
                               int64_t monthly_quota, json_t **out);
  sg_err (*application_set_status)(sg_store *st, const char *id, const char *status, json_t **out);
  sg_err (*application_set_quota)(sg_store *st, const char *id, int64_t monthly_quota,
                                  json_t **out);
  sg_err (*secret_key_create)(sg_store *st, const char *application_id, const char *id,
                              const uint8_t digest[32]);
  sg_err (*secret_key_revoke)(sg_store *st, const char *id, json_t **out);
  sg_err (*authenticate)(sg_store *st, const char *key_id, const uint8_t digest[32],
                         sg_principal *out);
  sg_err (*application_get)(sg_store *st, const char *id, json_t **out);
  sg_err (*workspace_get)(sg_store *st, const char *id, json_t **out);
  sg_err (*publishable_key_create)(sg_store *st, const char *id, const char *application_id,
                                   const char *list_id, const char *digest_hex,
                                   const json_t *origins, json_t **out);
  sg_err (*publishable_key_revoke)(sg_store *st, const char *id, json_t **out, char digest_hex[65]);
  sg_err (*subscription_create)(sg_store *st, const char *workspace_id, const char *list_id,
                                json_t **out);
  sg_err (*subscription_cancel)(sg_store *st, const char *id, json_t **out);
  sg_err (*lists_mintable)(sg_store *st, const char *workspace_id, const char *const *ids,
                           size_t n);
  sg_err (*signing_key_add)(sg_store *st, const char *kid, const uint8_t sk[64],
                            const uint8_t pk[32], int64_t now);
  sg_err (*signing_key_current)(sg_store *st, char kid[64], uint8_t sk[64]);
  sg_err (*signing_keys_public)(sg_store *st, json_t **out);
  sg_err (*list_create)(sg_store *st, const char *workspace_id, const char *name,
                        const char *description, json_t **out);
  sg_err (*list_get)(sg_store *st, const char *workspace_id, const char *id, json_t **out);
  sg_err (*list_page)(sg_store *st, const char *workspace_id, size_t limit, const json_t *after,
                      json_t **data, bool *more);
  sg_err (*list_patch)(sg_store *st, const char *workspace_id, const char *id,
                       const json_t *changes, const char *if_match, json_t **out);
  sg_err (*item_create)(sg_store *st, const char *workspace_id, const char *list_id,
                        const json_t *item, json_t **out);
  sg_err (*item_page)(sg_store *st, const char *workspace_id, const char *list_id, size_t limit,
                      const json_t *after, json_t **data, bool *more);
  sg_err (*item_get)(sg_store *st, const char *workspace_id, const char *list_id,
                     const char *item_id, json_t **out);
  sg_err (*item_update)(sg_store *st, const char *workspace_id, const char *list_id,
                        const char *item_id, const json_t *item, const char *if_match,
                        json_t **out);
  sg_err (*item_delete)(sg_store *st, const char *workspace_id, const char *list_id,
                        const char *item_id, const char *if_match, json_t **cur_out);
  sg_err (*items_prune)(sg_store *st, const char *list_id, size_t max, size_t *n);
  sg_err (*import_begin)(sg_store *st, sg_store_import **out);
  sg_err (*import_add)(sg_store_import *imp, int64_t line, const json_t *item,
                       const char *parent_value);
  sg_err (*admin_list)(sg_store *st, const char *what, const char *application_id,
                       const char *list_id, const char *workspace_id, json_t **out);
  sg_err (*import_line_of)(sg_store_import *imp, const char *value, int64_t *line);
  sg_err (*import_apply)(sg_store *st, sg_store_import *imp, const char *workspace_id,
                         const char *list_id, bool replace, size_t max_bad,
                         sg_import_counts *counts, json_t **bad_lines, int64_t *n_bad);
  void (*import_free)(sg_store_import *imp);
  void (*import_cleanup)(sg_store *st);
  sg_err (*export_open)(sg_store *st, const char *workspace_id, const char *list_id,
                        sg_store_export **out);
  sg_err (*export_next)(sg_store_export *x, json_t **out);
  void (*export_close)(sg_store_export *x);
  sg_err (*version_create)(sg_store *st, const char *workspace_id, const char *list_id,
                           json_t **out);
  sg_err (*version_get)(sg_store *st, const char *workspace_id, const char *list_id, int64_t number,
                        json_t **out);
  sg_err (*version_page)(sg_store *st, const char *workspace_id, const char *list_id, size_t limit,
                         const json_t *after, json_t **data, bool *more);
  sg_err (*version_set_async)(sg_store *st, const char *list_id, int64_t number);
  sg_err (*version_claim)(sg_store *st, const char *list_id, int64_t number, int64_t lease_ms,
                          sg_version_job *job);
  sg_err (*version_leases_renew)(sg_store *st, int64_t lease_ms);
  sg_err (*version_release)(sg_store *st, const char *list_id, int64_t number);
  sg_err (*version_next)(sg_store *st, const char *after_workspace, int64_t fresh_s,
                         sg_version_ref *out, bool *found);
  sg_err (*snapshot_items)(sg_store *st, const char *list_id, int64_t snapshot_seq,
                           int64_t after_seq, size_t limit,
                           int (*cb)(const sg_store_item_row *row, void *ctx), void *ctx,
                           int64_t *last_seq, size_t *n);
  sg_err (*version_set_draft)(sg_store *st, const char *list_id, int64_t number,
                              const json_t *validation_errors);
  sg_err (*version_set_staged)(sg_store *st, const char *list_id, int64_t number,
                               const char *content_hash);
  sg_err (*version_set_failed)(sg_store *st, const char *list_id, int64_t number,
                               const char *reason);
  sg_err (*version_reactivate)(sg_store *st, const char *workspace_id, const char *list_id,
                               int64_t number, const char *if_match, bool *changed,
                               json_t **list_out);
  sg_err (*version_hash)(sg_store *st, const char *workspace_id, const char *list_id,
                         int64_t number, char hash[80], char state[16]);
  sg_err (*version_activate)(sg_store *st, const char *workspace_id, const char *list_id,
                             int64_t number, bool *activated, json_t **list_out);
  sg_err (*active_versions)(sg_store *st, const char *after, sg_active_version *out, size_t max,
                            size_t *n);
  sg_err (*version_recompile)(sg_store *st, const char *list_id, int64_t from, json_t **out);
  sg_err (*versions_pending)(sg_store *st, const char *list_id, int64_t before, sg_version_ref *out,
                             size_t max, size_t *n);
  sg_err (*artifacts_in_use)(sg_store *st, json_t **out);
  sg_err (*idem_begin)(sg_store *st, const char *workspace_id, const char *key, const char *method,
                       const char *path, const uint8_t body_hash[32], sg_idem_state *state,
                       int *status, char **body, char **headers);
  sg_err (*idem_finish)(sg_store *st, const char *workspace_id, const char *key, int status,
                        const char *body, const char *headers);
  sg_err (*edge_dirty)(sg_store *st, sg_edge_dirty *out, size_t max, size_t *n);
  sg_err (*edge_source)(sg_store *st, const char *kind, const char *id, int64_t *gen, json_t **out);
  sg_err (*edge_done)(sg_store *st, const char *kind, const char *id, int64_t gen,
                      int64_t revision);
  sg_err (*edge_state)(sg_store *st, const char *kind, const char *id, int64_t *want, int64_t *done,
                       int64_t *revision);
  sg_err (*checkpoint)(sg_store *st);
  sg_err (*secret)(sg_store *st, const char *name, uint8_t out[32]);
  sg_err (*queue_depth)(sg_store *st, int64_t *n);
  sg_err (*member_create)(sg_store *st, const char *workspace_id, const char *email, sg_role role,
                          const char *password_hash, json_t **out);
  sg_err (*member_for_signin)(sg_store *st, const char *email, sg_signin_candidate *out, size_t *n);
  sg_err (*member_list)(sg_store *st, const char *workspace_id, json_t **out);
  sg_err (*member_get)(sg_store *st, const char *workspace_id, const char *id, json_t **out);
  sg_err (*member_set_role)(sg_store *st, const char *workspace_id, const char *id, sg_role role,
                            json_t **out);
  sg_err (*member_disable)(sg_store *st, const char *workspace_id, const char *id, json_t **out);
  sg_err (*member_set_password)(sg_store *st, const char *id, const char *password_hash,
                                const uint8_t *keep_digest);
  sg_err (*session_create)(sg_store *st, const uint8_t digest[32], const char *member_id,
                           int64_t now_ms, int64_t stale_ms);
  sg_err (*session_lookup)(sg_store *st, const uint8_t digest[32], int64_t now_ms, int64_t idle_ms,
                           sg_member *member, int64_t *last_seen_ms);
  sg_err (*session_touch)(sg_store *st, const uint8_t digest[32], int64_t now_ms);
  sg_err (*session_delete)(sg_store *st, const uint8_t digest[32]);
  sg_err (*session_delete_all)(sg_store *st, const char *member_id, int64_t *n);
  sg_err (*audit_add)(sg_store *st, const sg_audit_entry *e);
  sg_err (*audit_page)(sg_store *st, const char *workspace_id, size_t limit, const json_t *after,
                       json_t **data, bool *more);
  sg_err (*application_list)(sg_store *st, const char *workspace_id, json_t **out);
  sg_err (*application_page)(sg_store *st, const char *workspace_id, size_t limit,
                             const json_t *after, json_t **data, bool *more);
  sg_err (*application_in_workspace)(sg_store *st, const char *workspace_id,
                                     const char *application_id);
  sg_err (*secret_key_list)(sg_store *st, const char *application_id, json_t **out);
  sg_err (*secret_key_workspace)(sg_store *st, const char *key_id, char ws[64]);
  sg_err (*publishable_key_workspace)(sg_store *st, const char *key_id, char ws[64]);
  sg_err (*secret_key_touch)(sg_store *st, const char *key_id, int64_t now_s);
  sg_err (*publishable_key_list)(sg_store *st, const char *application_id, json_t **out);
  sg_err (*item_search)(sg_store *st, const char *workspace_id, const char *list_id,
                        const char *prefix, size_t limit, const json_t *after, json_t **data,
                        bool *more);
  sg_err (*selections_add)(sg_store *st, const sg_selection_event *ev, size_t n);
  sg_err (*analytics_add)(sg_store *st, const char *shipment_id, int64_t now_hour,
                          const sg_analytics_row *rows, size_t n);
  sg_err (*analytics_read)(sg_store *st, const char *list_id, int64_t from_hour, int64_t to_hour,
                           size_t top, json_t **out);
  sg_err (*analytics_expire)(sg_store *st, int64_t before_hour, int64_t before_ms);
  sg_err (*analytics_suggest)(sg_store *st, const char *list_id, int64_t from_hour, int64_t to_hour,
                              int64_t min_selections, json_t **out);
  sg_err (*selection_stats)(sg_store *st, const char *list_id, int64_t since_ms, size_t top,
                            json_t **out);
  /* Optional (NULL: the caller polls): waits up to timeout_ms for another process to
   * announce publish work; SG_E_OK when one did, SG_E_NOT_FOUND at the timeout. */
  sg_err (*wait_work)(sg_store *st, int timeout_ms);
  sg_err (*edge_records)(sg_store *st, const char *after_kind, const char *after_id,
                         sg_edge_dirty *out, size_t max, size_t *n);
  sg_err (*backup)(sg_store *st, const char *path, sg_store_artifact_fetch fetch, void *ctx,
                   json_t **summary, char *err, size_t errsz);
  sg_err (*edge_guard_get)(sg_store *st, sg_edge_guard *out);
  sg_err (*edge_guard_begin)(sg_store *st, uint64_t above, uint64_t *epoch);
  sg_err (*edge_guard_beat)(sg_store *st, uint64_t epoch, int64_t heartbeat_ms);
  sg_err (*synonyms_get)(sg_store *st, const char *workspace_id, const char *list_id, json_t **out);
  sg_err (*synonyms_put)(sg_store *st, const char *workspace_id, const char *list_id,
                         const char *sets_json, const char *if_match, json_t **out);
  sg_err (*snapshot_synonyms)(sg_store *st, const char *list_id, int64_t snapshot_seq,
                              json_t **out);
  /* Durable artifact copies: all four NULL for a backend that keeps none. */
  sg_err (*artifact_put)(sg_store *st, const char *content_hash, const void *data, size_t len);
  sg_err (*artifact_get)(sg_store *st, const char *content_hash, uint64_t *size,
                         sg_store_chunk_cb cb, void *ctx);
  sg_err (*artifact_delete)(sg_store *st, const char *content_hash);
  sg_err (*artifacts)(sg_store *st, int (*cb)(const char *hex, int64_t written_at, void *ctx),
                      void *ctx);
};

/* Every backend handle begins with the generic part: a backend's own struct embeds it as
 * its first member and converts a pointer back with a cast. */
struct sg_store {
  const sg_store_ops *ops;
  sg_store_limits limits; /* set by sg_store_open, read by the backends' creates */
  int64_t keep_versions;  /* versions whose artifacts are in use per list (>= 1; default 2) */
};
struct sg_store_import {
  const sg_store_ops *ops;
};
struct sg_store_export {
  const sg_store_ops *ops;
};

/* Backends, found by sg_store_open from the spec. */
extern const sg_store_ops sg__sqlite_store_ops;
/* Opens the SQLite database at db_path; dir holds its import scratch space. */
int sg__sqlite_open(const char *dir, const char *db_path, sg_store **out, char *err, size_t errsz);
/* Opens the PostgreSQL database at the libpq URL url (postgres:// or postgresql://,
 * several hosts allowed), migrating its schema (src/store/postgres/). */
int sg__pg_open(const char *url, sg_store **out, char *err, size_t errsz);

/* This process as the owner of an in-flight record or a lease: "<host> <pid> <start>"
 * (store/owner.c, above the seam: every backend uses it). */
const char *sg__store_self_owner(void);
/* True when owner (which may carry more words after "<host> <pid> <start>") names a
 * process of this host that is no longer running; false for other hosts. */
bool sg__store_owner_dead(const char *owner);

/* Whether id can name a record: 1..SG_STORE_MAX_ID bytes of [A-Za-z0-9_-]. An id that
 * fails this names nothing in any backend, so the generic layer answers "not found"
 * (the same typed error the backend would give) without asking it. */
#define SG_STORE_MAX_ID 63
bool sg__store_id_ok(const char *id);
/* Whether a page size is one a caller may ask for (1..SG_STORE_MAX_PAGE). */
#define SG_STORE_MAX_PAGE 1000
bool sg__store_limit_ok(size_t limit);

#endif
