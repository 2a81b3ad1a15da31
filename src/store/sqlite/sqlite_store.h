/* Internals shared by the SQLite backend's files. */
#ifndef SG_STORE_SQLITE_STORE_H
#define SG_STORE_SQLITE_STORE_H

#include <pthread.h>
#include <sqlite3.h>

#include "store/rules.h"
#include "store/store_internal.h"

extern const char *const sg__sqlite_migrations[];

/* Read-only connections per store (see "Readers" below). */
#define SG__SQ_READERS 4

/* The write connection's page cache, in KiB: SG__SQ_CACHE_KIB between imports, raised to
 * SG__SQ_IMPORT_CACHE_KIB for an import's apply (a million-row import touches index pages
 * all over the file) and cut back after it, which frees the pages above the bound. The
 * writer keeps every page it writes in its cache, so the cache follows the database's
 * growth up to this bound: a publish adds about half a KiB, and at 64 MiB the process
 * grew for a day of publishes before it levelled off. The readers keep SQLite's default
 * (2,000 KiB), and their caches are dropped whenever another connection commits. */
#define SG__SQ_CACHE_KIB 8192
#define SG__SQ_IMPORT_CACHE_KIB 65536

/* The SQLite handle behind an sg_store (and each of its readers). */
typedef struct sg__sq sg__sq;
struct sg__sq {
  sg_store base; /* first: sg__sq_of converts back */
  sqlite3 *db;
  char dir[4096];     /* the data directory: import staging files */
  char db_path[4096]; /* the database file, which export and the readers open again */
  /* One connection shared by the process's threads; the mutex makes each store call one
   * transaction. Other processes (admin CLI) coordinate through WAL + busy timeout. */
  pthread_mutex_t mu;
#define SG__STMT_CACHE 64
  const char *sql[SG__STMT_CACHE];
  sqlite3_stmt *stmt[SG__STMT_CACHE];
  /* The reader pool: NULL in a reader itself. next_reader spreads acquisitions. */
  sg__sq *readers[SG__SQ_READERS];
  unsigned next_reader;
};

static inline sg__sq *sg__sq_of(sg_store *st) { return (sg__sq *)st; }

/*
 * Readers.
 *
 * The write connection above is one connection behind one mutex, so a long write (an
 * import's apply holds it for ~10 s per million items) used to stall every other call,
 * authentication included. Pure reads therefore go to a small pool of read-only
 * connections on the same file. A reader is itself an sg__sq (its own sqlite3 opened
 * with SQLITE_OPEN_READONLY, its own mutex, its own statement cache, no readers of its
 * own), so the helpers below that take an sg__sq work on either kind unchanged.
 *
 * Why this is correct:
 * - The database is in WAL mode: a reader reads the last committed snapshot while the
 *   writer writes, and neither waits for the other (only checkpoints and WAL recovery
 *   interact, and the automatic checkpoint is PASSIVE: it never waits for readers).
 * - Read-after-write: every store call is a whole transaction, committed before it
 *   returns. A reader's read transaction begins at the first step of a statement, after
 *   the caller's earlier write returned, so it sees that write (WAL readers see every
 *   commit that completed before their transaction began). To keep that true a reader
 *   must never keep a read transaction open between calls: sg__sq_reader_release resets
 *   any statement left mid-step, so the next call takes a fresh snapshot.
 * - What stays on the writer: every read inside a write transaction (checks such as
 *   sg__sq_list_writable, the ETag compare of PATCH/DELETE, the reload of a record just
 *   written) because it must see the transaction's own uncommitted rows and decide under
 *   the write lock; and sg_store_secret, which creates the secret on first use.
 * - A read that spans several statements on a reader wraps them in BEGIN/COMMIT (a
 *   deferred read transaction) so they agree on one snapshot.
 */

/* Takes a reader of st and returns it locked (pass it where an sg__sq is expected).
 * Never touches st->mu: it tries each reader's mutex in turn and, when all are busy
 * (other readers, never the writer), waits for one. Pair with sg__sq_reader_release. */
sg__sq *sg__sq_reader_acquire(sg__sq *st);
/* Resets any statement of reader r still mid-step (ending its read transaction) and
 * unlocks it. */
void sg__sq_reader_release(sg__sq *r);

/* Returns the cached prepared statement for a static SQL string (keyed by its address),
 * reset and with bindings cleared. NULL on error. Call with st->mu held (st may be a
 * reader from sg__sq_reader_acquire). */
sqlite3_stmt *sg__sq_prep(sg__sq *st, const char *sql);
/* Sets the page cache bound of st's connection (KiB) with PRAGMA main.cache_size; 0 or -1. */
int sg__sq_cache_kib(sg__sq *st, int kib);
/* Runs BEGIN IMMEDIATE / COMMIT / ROLLBACK. */
int sg__sq_begin(sg__sq *st);
int sg__sq_commit(sg__sq *st);
void sg__sq_rollback(sg__sq *st);
/* Ends the write transaction begun by sg__sq_begin: commits when rc is SG_E_OK, else
 * rolls back. Returns rc, or SG_E_INTERNAL when the commit failed (then rolled back), so
 * a caller that built a result must drop it unless SG_E_OK comes back. */
sg_err sg__sq_end(sg__sq *st, sg_err rc);
/* Runs the prepared, bound write statement s to completion and resets it. Returns the
 * number of rows it changed, or -1 on error. */
int sg__sq_run(sg__sq *st, sqlite3_stmt *s);
/* Maps a count from sg__sq_run: SG_E_INTERNAL for -1, `none` for 0 (SG_E_NOT_FOUND for
 * "update one row by id"), SG_E_OK otherwise. */
sg_err sg__sq_changed(int changed, sg_err none);
/* Inside a write transaction: 1 when the rows counted by sql (a "SELECT count(*) … ?1"
 * bound to parent) are max or more, 0 when fewer, -1 on an error (sg_store_limits). */
int sg__sq_at_limit(sg__sq *st, const char *sql, const char *parent, int64_t max);
/* Whether the query sql ("SELECT 1 FROM … WHERE …") finds a row, with p1 bound to ?1 and
 * p2 to ?2 when sql has a second parameter: 1 yes, 0 no, -1 on error. */
int sg__sq_exists(sg__sq *st, const char *sql, const char *p1, const char *p2);
/* One page of a paginated read: steps s (bound with LIMIT limit + 1) and builds each of
 * the first `limit` rows with row(); *more tells whether a further row exists. Resets s.
 * Returns the array (caller owns it), or NULL on a step error. */
json_t *sg__sq_page_rows(sqlite3_stmt *s, size_t limit, json_t *(*row)(sqlite3_stmt *s),
                         bool *more);
/* Binds text (NULL binds SQL NULL). */
void sg__sq_text(sqlite3_stmt *s, int i, const char *v);
/* Column as a NUL-terminated string or NULL. */
const char *sg__sq_col(sqlite3_stmt *s, int i);

/* Loads list id of workspace_id in the API's shape into *out (caller owns it).
 * SG_E_INVALID_LIST when absent or another workspace's. With workspace_id NULL any
 * workspace's list is found and *out also carries "workspaceId". Call with st->mu held
 * (or on a reader). */
sg_err sg__sq_list_load(sg__sq *st, const char *workspace_id, const char *id, json_t **out);
/* SG_E_OK when list_id is a list of workspace_id (archived or not), else
 * SG_E_INVALID_LIST or SG_E_INTERNAL. Call with st->mu held (or on a reader). */
sg_err sg__sq_list_exists(sg__sq *st, const char *workspace_id, const char *list_id);
/* SG_E_OK when list_id is an active list of workspace_id, else SG_E_LIST_ARCHIVED,
 * SG_E_INVALID_LIST or SG_E_INTERNAL. Call with st->mu held. */
sg_err sg__sq_list_writable(sg__sq *st, const char *workspace_id, const char *list_id);
/* Takes the list's next item clock (see migration 3): every item change of one write
 * transaction is stamped with it. Call inside a write transaction with st->mu held.
 * Returns 0 and *clock, or -1. */
int sg__sq_item_clock_next(sg__sq *st, const char *list_id, int64_t *clock);
/* The item columns, in the order sg__sq_item_row reads them. */
/* SQLite's clock (the host's, read by SQLite itself) in ms since the epoch, as an SQL
 * expression. Publish leases are taken and checked against it rather than against the
 * service clock of the asking process, as the PostgreSQL backend uses the database's
 * clock: every process of one store sees the same time for a lease. */
#define SG__SQ_NOW_MS "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)"

#define SG__SQ_ITEM_COLS SG__STORE_ITEM_COLS
/* Builds the API representation of the item row under s (SG__SQ_ITEM_COLS first). */
json_t *sg__sq_item_row(sqlite3_stmt *s);
/* Compact JSON text of v in its stored form, or NULL when v is absent, null or empty
 * ("none"). The caller frees the result. Imports use it too, so an unchanged item
 * compares equal byte for byte. */
char *sg__sq_json_text(const json_t *v);
/* Binds an item body's stored fields to parameters at, at+1, … at+7 in the one order every
 * item statement uses: value, displayValue, aliases, rank, parent, locales, displayOrder,
 * description (NULL when the body has none).
 * aliases and locales are their JSON texts (sg__sq_json_text); parent is the parent's id
 * or, for import staging, its value. */
void sg__sq_bind_item(sqlite3_stmt *s, int at, const json_t *item, const char *aliases,
                      const char *parent, const char *locales);
/* The public record of the signing key under s (kid, public_key, created_at, retired_at):
 * {kid, alg, publicKey, createdAt, retiredAt, retiredAtUnix}; NULL for a malformed row. */
json_t *sg__sq_signing_key_row(sqlite3_stmt *s);
/* Formats a Unix time column as an RFC 3339 JSON string (JSON null for SQL NULL). */
json_t *sg__sq_ts(sqlite3_stmt *s, int col);

/* ---- the operations (ops.c collects them into sg__sqlite_store_ops) ---------------- */
void sg__sqlite_close(sg_store *st);
sg_err sg__sqlite_workspace_create(sg_store *st, const char *name, json_t **out);
sg_err sg__sqlite_workspace_set_status(sg_store *st, const char *id, const char *status,
                                       json_t **out);
sg_err sg__sqlite_application_create(sg_store *st, const char *workspace_id, const char *name,
                                     int64_t monthly_quota, json_t **out);
sg_err sg__sqlite_application_set_status(sg_store *st, const char *id, const char *status,
                                         json_t **out);
sg_err sg__sqlite_application_set_quota(sg_store *st, const char *id, int64_t monthly_quota,
                                        json_t **out);
sg_err sg__sqlite_secret_key_create(sg_store *st, const char *application_id, const char *id,
                                    const uint8_t digest[32]);
sg_err sg__sqlite_secret_key_revoke(sg_store *st, const char *id, json_t **out);
sg_err sg__sqlite_authenticate(sg_store *st, const char *key_id, const uint8_t digest[32],
                               sg_principal *out);
sg_err sg__sqlite_application_get(sg_store *st, const char *id, json_t **out);
sg_err sg__sqlite_workspace_get(sg_store *st, const char *id, json_t **out);
sg_err sg__sqlite_publishable_key_create(sg_store *st, const char *id, const char *application_id,
                                         const char *list_id, const char *digest_hex,
                                         const json_t *origins, json_t **out);
sg_err sg__sqlite_publishable_key_revoke(sg_store *st, const char *id, json_t **out,
                                         char digest_hex[65]);
sg_err sg__sqlite_subscription_create(sg_store *st, const char *workspace_id, const char *list_id,
                                      json_t **out);
sg_err sg__sqlite_subscription_cancel(sg_store *st, const char *id, json_t **out);
sg_err sg__sqlite_lists_mintable(sg_store *st, const char *workspace_id, const char *const *ids,
                                 size_t n);
sg_err sg__sqlite_signing_key_add(sg_store *st, const char *kid, const uint8_t sk[64],
                                  const uint8_t pk[32], int64_t now);
sg_err sg__sqlite_signing_key_current(sg_store *st, char kid[64], uint8_t sk[64]);
sg_err sg__sqlite_signing_keys_public(sg_store *st, json_t **out);
sg_err sg__sqlite_list_create(sg_store *st, const char *workspace_id, const char *name,
                              const char *description, json_t **out);
sg_err sg__sqlite_list_get(sg_store *st, const char *workspace_id, const char *id, json_t **out);
sg_err sg__sqlite_list_page(sg_store *st, const char *workspace_id, size_t limit,
                            const json_t *after, json_t **data, bool *more);
sg_err sg__sqlite_list_patch(sg_store *st, const char *workspace_id, const char *id,
                             const json_t *changes, const char *if_match, json_t **out);
sg_err sg__sqlite_item_create(sg_store *st, const char *workspace_id, const char *list_id,
                              const json_t *item, json_t **out);
sg_err sg__sqlite_item_page(sg_store *st, const char *workspace_id, const char *list_id,
                            size_t limit, const json_t *after, json_t **data, bool *more);
sg_err sg__sqlite_item_get(sg_store *st, const char *workspace_id, const char *list_id,
                           const char *item_id, json_t **out);
sg_err sg__sqlite_item_update(sg_store *st, const char *workspace_id, const char *list_id,
                              const char *item_id, const json_t *item, const char *if_match,
                              json_t **out);
sg_err sg__sqlite_item_delete(sg_store *st, const char *workspace_id, const char *list_id,
                              const char *item_id, const char *if_match, json_t **cur_out);
sg_err sg__sqlite_items_prune(sg_store *st, const char *list_id, size_t max, size_t *n);
sg_err sg__sqlite_import_begin(sg_store *st, sg_store_import **out);
sg_err sg__sqlite_import_add(sg_store_import *imp, int64_t line, const json_t *item,
                             const char *parent_value);
sg_err sg__sqlite_admin_list(sg_store *st, const char *what, const char *application_id,
                             const char *list_id, const char *workspace_id, json_t **out);
sg_err sg__sqlite_import_line_of(sg_store_import *imp, const char *value, int64_t *line);
sg_err sg__sqlite_import_apply(sg_store *st, sg_store_import *imp, const char *workspace_id,
                               const char *list_id, bool replace, size_t max_bad,
                               sg_import_counts *counts, json_t **bad_lines, int64_t *n_bad);
void sg__sqlite_import_free(sg_store_import *imp);
void sg__sqlite_import_cleanup(sg_store *st);
sg_err sg__sqlite_export_open(sg_store *st, const char *workspace_id, const char *list_id,
                              sg_store_export **out);
sg_err sg__sqlite_export_next(sg_store_export *x, json_t **out);
void sg__sqlite_export_close(sg_store_export *x);
sg_err sg__sqlite_version_create(sg_store *st, const char *workspace_id, const char *list_id,
                                 json_t **out);
sg_err sg__sqlite_version_get(sg_store *st, const char *workspace_id, const char *list_id,
                              int64_t number, json_t **out);
sg_err sg__sqlite_version_page(sg_store *st, const char *workspace_id, const char *list_id,
                               size_t limit, const json_t *after, json_t **data, bool *more);
sg_err sg__sqlite_version_set_async(sg_store *st, const char *list_id, int64_t number);
sg_err sg__sqlite_version_claim(sg_store *st, const char *list_id, int64_t number, int64_t lease_ms,
                                sg_version_job *job);
sg_err sg__sqlite_version_leases_renew(sg_store *st, int64_t lease_ms);
sg_err sg__sqlite_version_release(sg_store *st, const char *list_id, int64_t number);
sg_err sg__sqlite_version_next(sg_store *st, const char *after_workspace, int64_t fresh_s,
                               sg_version_ref *out, bool *found);
sg_err sg__sqlite_snapshot_items(sg_store *st, const char *list_id, int64_t snapshot_seq,
                                 int64_t after_seq, size_t limit,
                                 int (*cb)(const sg_store_item_row *row, void *ctx), void *ctx,
                                 int64_t *last_seq, size_t *n);
sg_err sg__sqlite_version_set_draft(sg_store *st, const char *list_id, int64_t number,
                                    const json_t *validation_errors);
sg_err sg__sqlite_version_set_staged(sg_store *st, const char *list_id, int64_t number,
                                     const char *content_hash);
sg_err sg__sqlite_version_set_failed(sg_store *st, const char *list_id, int64_t number,
                                     const char *reason);
sg_err sg__sqlite_version_activate(sg_store *st, const char *workspace_id, const char *list_id,
                                   int64_t number, bool *activated, json_t **list_out);
sg_err sg__sqlite_active_versions(sg_store *st, const char *after, sg_active_version *out,
                                  size_t max, size_t *n);
sg_err sg__sqlite_version_recompile(sg_store *st, const char *list_id, int64_t from, json_t **out);
sg_err sg__sqlite_versions_pending(sg_store *st, const char *list_id, int64_t before,
                                   sg_version_ref *out, size_t max, size_t *n);
sg_err sg__sqlite_artifacts_in_use(sg_store *st, json_t **out);
sg_err sg__sqlite_idem_begin(sg_store *st, const char *workspace_id, const char *key,
                             const char *method, const char *path, const uint8_t body_hash[32],
                             sg_idem_state *state, int *status, char **body, char **headers);
sg_err sg__sqlite_idem_finish(sg_store *st, const char *workspace_id, const char *key, int status,
                              const char *body, const char *headers);
sg_err sg__sqlite_edge_dirty(sg_store *st, sg_edge_dirty *out, size_t max, size_t *n);
sg_err sg__sqlite_edge_source(sg_store *st, const char *kind, const char *id, int64_t *gen,
                              json_t **out);
sg_err sg__sqlite_edge_done(sg_store *st, const char *kind, const char *id, int64_t gen,
                            int64_t revision);
sg_err sg__sqlite_edge_records(sg_store *st, const char *after_kind, const char *after_id,
                               sg_edge_dirty *out, size_t max, size_t *n);
sg_err sg__sqlite_edge_state(sg_store *st, const char *kind, const char *id, int64_t *want,
                             int64_t *done, int64_t *revision);
sg_err sg__sqlite_checkpoint(sg_store *st);
sg_err sg__sqlite_secret(sg_store *st, const char *name, uint8_t out[32]);
sg_err sg__sqlite_queue_depth(sg_store *st, int64_t *n);
sg_err sg__sqlite_selections_add(sg_store *st, const sg_selection_event *ev, size_t n);
/* analytics.c: search analytics (store.h). */
sg_err sg__sqlite_analytics_add(sg_store *st, const char *shipment_id, int64_t now_hour,
                                const sg_analytics_row *rows, size_t n);
sg_err sg__sqlite_analytics_read(sg_store *st, const char *list_id, int64_t from_hour,
                                 int64_t to_hour, size_t top, json_t **out);
sg_err sg__sqlite_analytics_expire(sg_store *st, int64_t before_hour, int64_t before_ms);
sg_err sg__sqlite_analytics_suggest(sg_store *st, const char *list_id, int64_t from_hour,
                                    int64_t to_hour, int64_t min_selections, json_t **out);
sg_err sg__sqlite_selection_stats(sg_store *st, const char *list_id, int64_t since_ms, size_t top,
                                  json_t **out);
sg_err sg__sqlite_member_create(sg_store *st, const char *workspace_id, const char *email,
                                sg_role role, const char *password_hash, json_t **out);
sg_err sg__sqlite_member_for_signin(sg_store *st, const char *email, sg_signin_candidate *out,
                                    size_t *n);
sg_err sg__sqlite_member_list(sg_store *st, const char *workspace_id, json_t **out);
sg_err sg__sqlite_member_get(sg_store *st, const char *workspace_id, const char *id, json_t **out);
sg_err sg__sqlite_member_set_role(sg_store *st, const char *workspace_id, const char *id,
                                  sg_role role, json_t **out);
sg_err sg__sqlite_member_disable(sg_store *st, const char *workspace_id, const char *id,
                                 json_t **out);
sg_err sg__sqlite_member_set_password(sg_store *st, const char *id, const char *password_hash,
                                      const uint8_t *keep_digest);
sg_err sg__sqlite_session_create(sg_store *st, const uint8_t digest[32], const char *member_id,
                                 int64_t now_ms, int64_t stale_ms);
sg_err sg__sqlite_session_lookup(sg_store *st, const uint8_t digest[32], int64_t now_ms,
                                 int64_t idle_ms, sg_member *member, int64_t *last_seen_ms);
sg_err sg__sqlite_session_touch(sg_store *st, const uint8_t digest[32], int64_t now_ms);
sg_err sg__sqlite_session_delete(sg_store *st, const uint8_t digest[32]);
sg_err sg__sqlite_session_delete_all(sg_store *st, const char *member_id, int64_t *n);
sg_err sg__sqlite_audit_add(sg_store *st, const sg_audit_entry *e);
sg_err sg__sqlite_audit_page(sg_store *st, const char *workspace_id, size_t limit,
                             const json_t *after, json_t **data, bool *more);
sg_err sg__sqlite_application_list(sg_store *st, const char *workspace_id, json_t **out);
sg_err sg__sqlite_application_page(sg_store *st, const char *workspace_id, size_t limit,
                                   const json_t *after, json_t **data, bool *more);
sg_err sg__sqlite_application_in_workspace(sg_store *st, const char *workspace_id,
                                           const char *application_id);
sg_err sg__sqlite_secret_key_list(sg_store *st, const char *application_id, json_t **out);
sg_err sg__sqlite_secret_key_workspace(sg_store *st, const char *key_id, char ws[64]);
sg_err sg__sqlite_publishable_key_workspace(sg_store *st, const char *key_id, char ws[64]);
sg_err sg__sqlite_secret_key_touch(sg_store *st, const char *key_id, int64_t now_s);
sg_err sg__sqlite_publishable_key_list(sg_store *st, const char *application_id, json_t **out);
sg_err sg__sqlite_synonyms_get(sg_store *st, const char *workspace_id, const char *list_id,
                               json_t **out);
sg_err sg__sqlite_synonyms_put(sg_store *st, const char *workspace_id, const char *list_id,
                               const char *sets_json, const char *if_match, json_t **out);
sg_err sg__sqlite_snapshot_synonyms(sg_store *st, const char *list_id, int64_t snapshot_seq,
                                    json_t **out);
sg_err sg__sqlite_item_search(sg_store *st, const char *workspace_id, const char *list_id,
                              const char *prefix, size_t limit, const json_t *after, json_t **data,
                              bool *more);
/* guard.c: the edge guard's row */
sg_err sg__sqlite_edge_guard_get(sg_store *st, sg_edge_guard *out);
sg_err sg__sqlite_edge_guard_begin(sg_store *st, uint64_t above, uint64_t *epoch);
sg_err sg__sqlite_edge_guard_beat(sg_store *st, uint64_t epoch, int64_t heartbeat_ms);

/* backup.c */
sg_err sg__sqlite_backup(sg_store *st, const char *path, sg_store_artifact_fetch fetch, void *ctx,
                         json_t **summary, char *err, size_t errsz);

/* versions.c: inside a write transaction, makes version number (artifact hash) of
 * list_id the active one: the active version superseded, this one active since now, the
 * list pointing at it. 0 or -1. Publishing and rollback share it. */
int sg__sq_make_active(sg__sq *st, const char *list_id, int64_t number, const char *hash,
                       int64_t now);
/* rollback.c */
sg_err sg__sqlite_version_reactivate(sg_store *st, const char *workspace_id, const char *list_id,
                                     int64_t number, const char *if_match, bool *changed,
                                     json_t **list_out);
sg_err sg__sqlite_version_hash(sg_store *st, const char *workspace_id, const char *list_id,
                               int64_t number, char hash[80], char state[16]);

/* The artifacts a store names (artifacts_in_use, backups): unresolved and active
 * versions, the ?1 - 1 most recently activated superseded versions of each list (what a
 * rollback may return to: --keep-versions), and whatever a list record points at. */
#define SG__SQ_IN_USE_SQL                                                                          \
  "SELECT content_hash FROM versions WHERE content_hash IS NOT NULL AND"                           \
  " state IN ('queued', 'staged', 'active')"                                                       \
  " UNION SELECT content_hash FROM (SELECT content_hash, ROW_NUMBER() OVER (PARTITION BY"          \
  " list_id ORDER BY activated_at DESC, version_number DESC) AS k FROM versions WHERE"             \
  " state='superseded' AND activated_at IS NOT NULL AND content_hash IS NOT NULL)"                 \
  " WHERE k < ?1"                                                                                  \
  " UNION SELECT active_content_hash FROM lists WHERE active_content_hash IS NOT NULL"

#endif
