/* Internals shared by the PostgreSQL backend's files (docs/STORE.md, "PostgreSQL"). */
#ifndef SG_STORE_POSTGRES_PG_H
#define SG_STORE_POSTGRES_PG_H

#include <pthread.h>
#include <stdbool.h>

#include <libpq-fe.h>

#include "store/store_internal.h"

/* Connections per store: enough for the control plane's worker threads; a caller past the
 * bound waits (SG__PG_WAIT_MS at most, then 503) instead of opening more. */
#define SG__PG_POOL 16
#define SG__PG_WAIT_MS 10000
/* Attempts of one transaction that hits a serialization failure, a deadlock or a lost
 * connection before the caller gets SG_E_UNAVAILABLE. */
#define SG__PG_ATTEMPTS 5

extern const char *const sg__pg_migrations[];

/* The database server's clock in ms since the epoch, as an SQL expression. Every lease
 * (a claimed version, an in-flight idempotency record) is taken, renewed and checked
 * against it, never against the clock of the process that asks: the processes of a fleet
 * run on hosts whose clocks drift apart, the database is the one clock they share. */
#define SG__PG_NOW_MS "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::bigint"

typedef struct sg__pg sg__pg;
struct sg__pg {
  sg_store base;  /* first: sg__pg_of converts back */
  char *conninfo; /* the URL with target_session_attrs and connect_timeout added */
  /* This store as the owner of a lease (publish queue, in-flight idempotency records):
   * "<host> <pid> <random>". A lease ends by expiry, so an owner on any host that dies
   * is replaced once its lease runs out. */
  char owner[320];
  pthread_mutex_t mu;
  pthread_cond_t cv;
  PGconn *conns[SG__PG_POOL];
  bool busy[SG__PG_POOL];
  bool opening[SG__PG_POOL]; /* a slot reserved while its connection is being made */
  /* The connection that LISTENs for sg_publish (wait_work), outside the pool. */
  pthread_mutex_t listen_mu;
  PGconn *listen;
};

static inline sg__pg *sg__pg_of(sg_store *st) { return (sg__pg *)st; }

/* Takes a connection from the pool (connecting or resetting a broken one as needed);
 * NULL when the database cannot be reached or the pool stays exhausted. */
PGconn *sg__pg_acquire(sg__pg *st);
/* Returns c to the pool; a connection that is broken or left inside a transaction is
 * closed instead of reused. */
void sg__pg_release(sg__pg *st, PGconn *c);

/* Runs sql with text parameters (NULL: SQL NULL) and returns the result, or NULL after an
 * error (then recorded for sg__pg_tx: see sg__pg_failed). The caller PQclear()s it. */
PGresult *sg__pg_q(PGconn *c, const char *sql, int n, const char *const *params);
/* As sg__pg_q for a statement whose result is not needed; 0 or -1. */
int sg__pg_x(PGconn *c, const char *sql, int n, const char *const *params);
/* The SQLSTATE of the last failed sg__pg_q/sg__pg_x on this thread ("" when none), so a
 * caller can tell a unique violation ("23505") from other failures. */
const char *sg__pg_failed(void);
/* The affected-row count of a command result. */
int64_t sg__pg_changed(const PGresult *r);
/* Inside a transaction that locked the parent row against other creates: 1 when the rows
 * counted by sql (a "SELECT count(*) … $1" bound to parent) are max or more, 0 when fewer,
 * -1 on an error (sg_store_limits). */
int sg__pg_at_limit(PGconn *c, const char *sql, const char *parent, int64_t max);

/* A transaction body: runs its statements on c and returns SG_E_OK to commit, or an error
 * to roll back. It may run more than once (see sg__pg_tx), so it must (re)set its outputs
 * on every run and free what it built when it fails. */
typedef sg_err (*sg__pg_fn)(PGconn *c, void *ctx);
enum { SG__PG_RC = 0, SG__PG_RR = 1, SG__PG_RO = 2 };
/* Runs fn in one transaction (SG__PG_RC read committed, SG__PG_RR repeatable read,
 * SG__PG_RO repeatable read, read only). A serialization failure (40001), a deadlock
 * (40P01) or a connection lost before COMMIT was sent retries the whole transaction, up
 * to SG__PG_ATTEMPTS times with jittered backoff; then, or when the database cannot be
 * reached, or when the connection is lost during COMMIT (the outcome is unknown), the
 * answer is SG_E_UNAVAILABLE. */
sg_err sg__pg_tx(sg__pg *st, int mode, sg__pg_fn fn, void *ctx);
/* A mode bit for sg__pg_tx: the body talks to the database only through sg__pg_pipe,
 * whose first call sends the BEGIN with the body's first statements (one round trip),
 * and whose last call may carry the COMMIT (commit true). Then a connection lost after
 * that COMMIT went out leaves the outcome unknown: SG_E_UNAVAILABLE, no retry. A body
 * that returns SG_E_OK without having sent COMMIT is committed by sg__pg_tx. */
enum { SG__PG_PIPED = 8 };

/* One statement of a pipeline: sql with n text parameters. */
typedef struct {
  const char *sql;
  int n;
  const char *const *params;
} sg__pg_stmt;
/* Sends s[0..n) to the server at once in libpq's pipeline mode (preceded by the pending
 * BEGIN of an SG__PG_PIPED transaction, followed by COMMIT when commit) and reads every
 * answer: one round trip. 0 with res[i] the result of s[i] (caller PQclear()s each), or
 * -1 when any statement failed (the first failure noted as sg__pg_q notes it; a statement
 * after a failed one is not run) with every res[i] NULL. */
int sg__pg_pipe(PGconn *c, const sg__pg_stmt *s, int n, PGresult **res, bool commit);

/* Runs one statement as its own transaction, sent without BEGIN/COMMIT (one round trip;
 * its implicit transaction commits when it succeeds), and returns its result (caller
 * PQclear()s it), or NULL with *rc set: SG_E_UNAVAILABLE, or SG_E_INTERNAL
 * (sg__pg_failed() tells the SQLSTATE). Retried as sg__pg_tx retries, except that a
 * connection lost with no error from the server leaves the outcome unknown: then
 * SG_E_UNAVAILABLE at once. sg__pg_read is the same for a statement that changes
 * nothing, which is run again in that case too. */
PGresult *sg__pg_one(sg__pg *st, const char *sql, int n, const char *const *params, sg_err *rc);
PGresult *sg__pg_read(sg__pg *st, const char *sql, int n, const char *const *params, sg_err *rc);
/* sg__pg_one for a write that can tell a retry from a first try: params[retry] is "false"
 * on the first try and set to "true" before the statement is sent again after a
 * connection lost with an unknown outcome; the statement then finds its own earlier
 * effect, if any, instead of applying it twice (sg_item_create, schema.c). */
PGresult *sg__pg_one_again(sg__pg *st, const char *sql, int n, const char **params, int retry,
                           sg_err *rc);

/* Column helpers: the text of (row, col) or NULL for SQL NULL; as int64 (0 for NULL). */
const char *sg__pg_s(const PGresult *r, int row, int col);
int64_t sg__pg_i(const PGresult *r, int row, int col);
/* Result columns by name, so that the order of a SELECT list cannot swap fields:
 * sg__pg_col is the number of column name in r, or -1 (logged: the statement and its
 * reader disagree) when r has none; sg__pg_cols fills cols[0..n) for names[0..n), -1
 * when any is missing. sg__pg_sn and sg__pg_in read (row, name) as sg__pg_s and
 * sg__pg_i read (row, col), NULL and 0 for a missing column. A loop over many rows
 * looks its columns up once (sg__pg_cols). */
int sg__pg_col(const PGresult *r, const char *name);
int sg__pg_cols(const PGresult *r, const char *const *names, int *cols, size_t n);
const char *sg__pg_sn(const PGresult *r, int row, const char *name);
int64_t sg__pg_in(const PGresult *r, int row, const char *name);
/* A bytea column in hex output ("\x…") decoded into out (exactly n bytes); 0 or -1. */
int sg__pg_bytes(const PGresult *r, int row, int col, uint8_t *out, size_t n);
/* A bytea parameter: "\x" + hex of p[0..n) into buf (size 2n + 3). */
const char *sg__pg_bytea(const uint8_t *p, size_t n, char *buf);
/* A Unix-seconds column as an RFC 3339 string, or JSON null for SQL NULL (members.c). */
json_t *sg__pg_ts(const PGresult *r, int row, int col);
/* int64 as decimal text into buf[24]. */
const char *sg__pg_int(int64_t v, char buf[24]);

/* ---- shared by the backend's files -------------------------------------------------------- */
/* The API representation of row i of a result that selected SG__STORE_LIST_COLS /
 * SG__STORE_ITEM_COLS first. */
json_t *sg__pg_list_row(const PGresult *r, int i);
json_t *sg__pg_item_row(const PGresult *r, int i);
/* The first `limit` rows of r (selected with LIMIT limit + 1) built with row();
 * *more tells whether a further row exists. */
json_t *sg__pg_page(const PGresult *r, size_t limit, json_t *(*row)(const PGresult *r, int i),
                    bool *more);
/* Runs sql (n text params) on c and, when it finds exactly one row, sets *out to
 * row(r, 0): SG_E_OK, absent when it finds none, SG_E_INTERNAL when the query fails. */
sg_err sg__pg_row(PGconn *c, const char *sql, int n, const char *const *params,
                  json_t *(*row)(const PGresult *r, int i), sg_err absent, json_t **out);
/* Loads list id of workspace_id (any workspace's when NULL; *out then carries
 * "workspaceId"), locking its row FOR UPDATE when lock; *row_version (may be NULL) gets
 * its row version. SG_E_INVALID_LIST when absent. */
sg_err sg__pg_list_load(PGconn *c, const char *workspace_id, const char *id, bool lock,
                        json_t **out, int64_t *row_version);
/* SG_E_OK when list_id is a list of workspace_id, else SG_E_INVALID_LIST. */
sg_err sg__pg_list_exists(PGconn *c, const char *workspace_id, const char *list_id);
/* Locks the list's row and answers SG_E_OK when it is an active list of workspace_id,
 * else SG_E_LIST_ARCHIVED or SG_E_INVALID_LIST. */
sg_err sg__pg_list_writable(PGconn *c, const char *workspace_id, const char *list_id);
/* Takes the list's next item clock (locks the list's row); 0 or -1. */
int sg__pg_item_clock_next(PGconn *c, const char *list_id, int64_t *clock);

/* ---- the operations (ops.c collects them into sg__pg_store_ops) ---------------------- */
extern const sg_store_ops sg__pg_store_ops;
void sg__pg_close(sg_store *st);
sg_err sg__pg_workspace_create(sg_store *st, const char *name, json_t **out);
sg_err sg__pg_workspace_set_status(sg_store *st, const char *id, const char *status, json_t **out);
sg_err sg__pg_application_create(sg_store *st, const char *workspace_id, const char *name,
                                 int64_t monthly_quota, json_t **out);
sg_err sg__pg_application_set_status(sg_store *st, const char *id, const char *status,
                                     json_t **out);
sg_err sg__pg_application_set_quota(sg_store *st, const char *id, int64_t monthly_quota,
                                    json_t **out);
sg_err sg__pg_secret_key_create(sg_store *st, const char *application_id, const char *id,
                                const uint8_t digest[32]);
sg_err sg__pg_secret_key_revoke(sg_store *st, const char *id, json_t **out);
sg_err sg__pg_authenticate(sg_store *st, const char *key_id, const uint8_t digest[32],
                           sg_principal *out);
sg_err sg__pg_application_get(sg_store *st, const char *id, json_t **out);
sg_err sg__pg_workspace_get(sg_store *st, const char *id, json_t **out);
sg_err sg__pg_publishable_key_create(sg_store *st, const char *id, const char *application_id,
                                     const char *list_id, const char *digest_hex,
                                     const json_t *origins, json_t **out);
sg_err sg__pg_publishable_key_revoke(sg_store *st, const char *id, json_t **out,
                                     char digest_hex[65]);
sg_err sg__pg_subscription_create(sg_store *st, const char *workspace_id, const char *list_id,
                                  json_t **out);
sg_err sg__pg_subscription_cancel(sg_store *st, const char *id, json_t **out);
sg_err sg__pg_lists_mintable(sg_store *st, const char *workspace_id, const char *const *ids,
                             size_t n);
sg_err sg__pg_signing_key_add(sg_store *st, const char *kid, const uint8_t sk[64],
                              const uint8_t pk[32], int64_t now);
sg_err sg__pg_signing_key_current(sg_store *st, char kid[64], uint8_t sk[64]);
sg_err sg__pg_signing_keys_public(sg_store *st, json_t **out);
sg_err sg__pg_list_create(sg_store *st, const char *workspace_id, const char *name,
                          const char *description, json_t **out);
sg_err sg__pg_list_get(sg_store *st, const char *workspace_id, const char *id, json_t **out);
sg_err sg__pg_list_page(sg_store *st, const char *workspace_id, size_t limit, const json_t *after,
                        json_t **data, bool *more);
sg_err sg__pg_list_patch(sg_store *st, const char *workspace_id, const char *id,
                         const json_t *changes, const char *if_match, json_t **out);
sg_err sg__pg_item_create(sg_store *st, const char *workspace_id, const char *list_id,
                          const json_t *item, json_t **out);
sg_err sg__pg_item_page(sg_store *st, const char *workspace_id, const char *list_id, size_t limit,
                        const json_t *after, json_t **data, bool *more);
sg_err sg__pg_item_get(sg_store *st, const char *workspace_id, const char *list_id,
                       const char *item_id, json_t **out);
sg_err sg__pg_item_update(sg_store *st, const char *workspace_id, const char *list_id,
                          const char *item_id, const json_t *item, const char *if_match,
                          json_t **out);
sg_err sg__pg_item_delete(sg_store *st, const char *workspace_id, const char *list_id,
                          const char *item_id, const char *if_match, json_t **cur_out);
sg_err sg__pg_items_prune(sg_store *st, const char *list_id, size_t max, size_t *n);
sg_err sg__pg_import_begin(sg_store *st, sg_store_import **out);
sg_err sg__pg_import_add(sg_store_import *imp, int64_t line, const json_t *item,
                         const char *parent_value);
sg_err sg__pg_admin_list(sg_store *st, const char *what, const char *application_id,
                         const char *list_id, const char *workspace_id, json_t **out);
sg_err sg__pg_import_line_of(sg_store_import *imp, const char *value, int64_t *line);
sg_err sg__pg_import_apply(sg_store *st, sg_store_import *imp, const char *workspace_id,
                           const char *list_id, bool replace, size_t max_bad,
                           sg_import_counts *counts, json_t **bad_lines, int64_t *n_bad);
void sg__pg_import_free(sg_store_import *imp);
void sg__pg_import_cleanup(sg_store *st);
sg_err sg__pg_export_open(sg_store *st, const char *workspace_id, const char *list_id,
                          sg_store_export **out);
sg_err sg__pg_export_next(sg_store_export *x, json_t **out);
void sg__pg_export_close(sg_store_export *x);
sg_err sg__pg_version_create(sg_store *st, const char *workspace_id, const char *list_id,
                             json_t **out);
sg_err sg__pg_version_get(sg_store *st, const char *workspace_id, const char *list_id,
                          int64_t number, json_t **out);
sg_err sg__pg_version_page(sg_store *st, const char *workspace_id, const char *list_id,
                           size_t limit, const json_t *after, json_t **data, bool *more);
sg_err sg__pg_version_set_async(sg_store *st, const char *list_id, int64_t number);
sg_err sg__pg_version_claim(sg_store *st, const char *list_id, int64_t number, int64_t lease_ms,
                            sg_version_job *job);
sg_err sg__pg_version_leases_renew(sg_store *st, int64_t lease_ms);
sg_err sg__pg_version_release(sg_store *st, const char *list_id, int64_t number);
sg_err sg__pg_version_next(sg_store *st, const char *after_workspace, int64_t fresh_s,
                           sg_version_ref *out, bool *found);
sg_err sg__pg_snapshot_items(sg_store *st, const char *list_id, int64_t snapshot_seq,
                             int64_t after_seq, size_t limit,
                             int (*cb)(const sg_store_item_row *row, void *ctx), void *ctx,
                             int64_t *last_seq, size_t *n);
sg_err sg__pg_version_set_draft(sg_store *st, const char *list_id, int64_t number,
                                const json_t *validation_errors);
sg_err sg__pg_version_set_staged(sg_store *st, const char *list_id, int64_t number,
                                 const char *content_hash);
sg_err sg__pg_version_set_failed(sg_store *st, const char *list_id, int64_t number,
                                 const char *reason);
sg_err sg__pg_version_activate(sg_store *st, const char *workspace_id, const char *list_id,
                               int64_t number, bool *activated, json_t **list_out);
sg_err sg__pg_active_versions(sg_store *st, const char *after, sg_active_version *out, size_t max,
                              size_t *n);
sg_err sg__pg_version_recompile(sg_store *st, const char *list_id, int64_t from, json_t **out);
sg_err sg__pg_versions_pending(sg_store *st, const char *list_id, int64_t before,
                               sg_version_ref *out, size_t max, size_t *n);
sg_err sg__pg_artifacts_in_use(sg_store *st, json_t **out);
sg_err sg__pg_idem_begin(sg_store *st, const char *workspace_id, const char *key,
                         const char *method, const char *path, const uint8_t body_hash[32],
                         sg_idem_state *state, int *status, char **body, char **headers);
sg_err sg__pg_idem_finish(sg_store *st, const char *workspace_id, const char *key, int status,
                          const char *body, const char *headers);
sg_err sg__pg_edge_dirty(sg_store *st, sg_edge_dirty *out, size_t max, size_t *n);
sg_err sg__pg_edge_source(sg_store *st, const char *kind, const char *id, int64_t *gen,
                          json_t **out);
sg_err sg__pg_edge_done(sg_store *st, const char *kind, const char *id, int64_t gen,
                        int64_t revision);
sg_err sg__pg_edge_state(sg_store *st, const char *kind, const char *id, int64_t *want,
                         int64_t *done, int64_t *revision);
sg_err sg__pg_checkpoint(sg_store *st);
sg_err sg__pg_wait_work(sg_store *st, int timeout_ms);
sg_err sg__pg_secret(sg_store *st, const char *name, uint8_t out[32]);
sg_err sg__pg_queue_depth(sg_store *st, int64_t *n);
sg_err sg__pg_member_create(sg_store *st, const char *workspace_id, const char *email, sg_role role,
                            const char *password_hash, json_t **out);
sg_err sg__pg_member_for_signin(sg_store *st, const char *email, sg_signin_candidate *out,
                                size_t *n);
sg_err sg__pg_member_list(sg_store *st, const char *workspace_id, json_t **out);
sg_err sg__pg_member_get(sg_store *st, const char *workspace_id, const char *id, json_t **out);
sg_err sg__pg_member_set_role(sg_store *st, const char *workspace_id, const char *id, sg_role role,
                              json_t **out);
sg_err sg__pg_member_disable(sg_store *st, const char *workspace_id, const char *id, json_t **out);
sg_err sg__pg_member_set_password(sg_store *st, const char *id, const char *password_hash,
                                  const uint8_t *keep_digest);
sg_err sg__pg_session_create(sg_store *st, const uint8_t digest[32], const char *member_id,
                             int64_t now_ms, int64_t stale_ms);
sg_err sg__pg_session_lookup(sg_store *st, const uint8_t digest[32], int64_t now_ms,
                             int64_t idle_ms, sg_member *member, int64_t *last_seen_ms);
sg_err sg__pg_session_touch(sg_store *st, const uint8_t digest[32], int64_t now_ms);
sg_err sg__pg_session_delete(sg_store *st, const uint8_t digest[32]);
sg_err sg__pg_session_delete_all(sg_store *st, const char *member_id, int64_t *n);
sg_err sg__pg_audit_add(sg_store *st, const sg_audit_entry *e);
sg_err sg__pg_audit_page(sg_store *st, const char *workspace_id, size_t limit, const json_t *after,
                         json_t **data, bool *more);
sg_err sg__pg_application_list(sg_store *st, const char *workspace_id, json_t **out);
sg_err sg__pg_application_in_workspace(sg_store *st, const char *workspace_id,
                                       const char *application_id);
sg_err sg__pg_secret_key_list(sg_store *st, const char *application_id, json_t **out);
sg_err sg__pg_secret_key_workspace(sg_store *st, const char *key_id, char ws[64]);
sg_err sg__pg_publishable_key_workspace(sg_store *st, const char *key_id, char ws[64]);
sg_err sg__pg_secret_key_touch(sg_store *st, const char *key_id, int64_t now_s);
sg_err sg__pg_publishable_key_list(sg_store *st, const char *application_id, json_t **out);
sg_err sg__pg_synonyms_get(sg_store *st, const char *workspace_id, const char *list_id,
                           json_t **out);
sg_err sg__pg_synonyms_put(sg_store *st, const char *workspace_id, const char *list_id,
                           const char *sets_json, const char *if_match, json_t **out);
sg_err sg__pg_snapshot_synonyms(sg_store *st, const char *list_id, int64_t snapshot_seq,
                                json_t **out);
sg_err sg__pg_item_search(sg_store *st, const char *workspace_id, const char *list_id,
                          const char *prefix, size_t limit, const json_t *after, json_t **data,
                          bool *more);

/* artifacts.c: durable artifact copies and the edge outbox walk (pg-ops). */
sg_err sg__pg_artifact_put(sg_store *st, const char *content_hash, const void *data, size_t len);
sg_err sg__pg_artifact_get(sg_store *st, const char *content_hash, uint64_t *size,
                           sg_store_chunk_cb cb, void *ctx);
sg_err sg__pg_artifact_delete(sg_store *st, const char *content_hash);
sg_err sg__pg_artifacts(sg_store *st, int (*cb)(const char *hex, int64_t written_at, void *ctx),
                        void *ctx);
sg_err sg__pg_edge_records(sg_store *st, const char *after_kind, const char *after_id,
                           sg_edge_dirty *out, size_t max, size_t *n);

/* selections.c: selection events drained from a fleet's Redis stream. */
sg_err sg__pg_selections_add(sg_store *st, const sg_selection_event *ev, size_t n);
/* analytics.c: search analytics (store.h). */
sg_err sg__pg_analytics_add(sg_store *st, const char *shipment_id, int64_t now_hour,
                            const sg_analytics_row *rows, size_t n);
sg_err sg__pg_analytics_read(sg_store *st, const char *list_id, int64_t from_hour, int64_t to_hour,
                             size_t top, json_t **out);
sg_err sg__pg_analytics_expire(sg_store *st, int64_t before_hour, int64_t before_ms);
sg_err sg__pg_analytics_suggest(sg_store *st, const char *list_id, int64_t from_hour,
                                int64_t to_hour, int64_t min_selections, json_t **out);
sg_err sg__pg_selection_stats(sg_store *st, const char *list_id, int64_t since_ms, size_t top,
                              json_t **out);
sg_err sg__pg_application_page(sg_store *st, const char *workspace_id, size_t limit,
                               const json_t *after, json_t **data, bool *more);

/* guard.c: the edge guard's row */
sg_err sg__pg_edge_guard_get(sg_store *st, sg_edge_guard *out);
sg_err sg__pg_edge_guard_begin(sg_store *st, uint64_t above, uint64_t *epoch);
sg_err sg__pg_edge_guard_beat(sg_store *st, uint64_t epoch, int64_t heartbeat_ms);

/* versions.c: inside a transaction, makes a version the active one: p = {list_id, version
 * number, now (Unix seconds), content hash}; the active one superseded, this one active
 * since now, the list pointing at it. 0 or -1. Publishing and rollback share it. */
int sg__pg_make_active(PGconn *c, const char *const p[4]);
/* rollback.c */
sg_err sg__pg_version_reactivate(sg_store *st, const char *workspace_id, const char *list_id,
                                 int64_t number, const char *if_match, bool *changed,
                                 json_t **list_out);
sg_err sg__pg_version_hash(sg_store *st, const char *workspace_id, const char *list_id,
                           int64_t number, char hash[80], char state[16]);

#endif
