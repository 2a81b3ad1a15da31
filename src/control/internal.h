/*
 * Internals shared by the control plane's handler files.
 */
#ifndef SG_CONTROL_INTERNAL_H
#define SG_CONTROL_INTERNAL_H

#include "control/control.h"
#include "control/edge_guard.h"
#include "common/ratelimit.h"
#include "control/edge_sync.h"

/* Largest request body of an ordinary (non-streamed) route: past it, 413. */
#define SG__CONTROL_MAX_BODY ((size_t)1 << 20)

struct sg_control {
  sg_control_config cfg;
  sg_http_server *http;
  sg_ratelimit *rl_key;
  sg_ratelimit *rl_ip;
  uint8_t cursor_secret[32];
  struct sg__publisher *pub;          /* publish.c: per-list locks and the async worker */
  struct sg__artifact_gc *gc;         /* artifact_gc.c: artifacts waiting out their grace */
  struct sg__recompiler *recompile;   /* recompile.c: older artifact formats, compiled again */
  void *mount_state;                  /* cfg.mount's own state, set by its start (or NULL) */
  struct sg__drain *drain;            /* drain.c: the fleet's selection stream into the store */
  struct sg__analytics_drain *adrain; /* analytics_drain.c: shipments into the store */
  sg_edge_guard_proc guard;           /* edge_guard.c: ticked by publish.c's guard thread */
  pthread_mutex_t guard_mu;           /* one tick at a time (the thread, sg_control_edge_confirm) */
};

/* The selection drain (drain.c): a thread moving a fleet's selection events from the
 * shared state named by spec (a fleet's Redis) into store; a backend whose events stay in
 * it (a local directory) has nothing to drain (*out NULL). Start fails only on a bad
 * spec or no resources. */
typedef struct sg__drain sg__drain;
int sg__drain_start(sg_store *store, const char *spec, sg__drain **out);
/* As sg__drain_start, with the idle time (ms, > 0) after which another consumer's
 * unacknowledged entries are claimed instead of the default 30 s (tests shorten it). */
int sg__drain_start_claiming(sg_store *store, const char *spec, int claim_idle_ms, sg__drain **out);
/* Stops it (within about half a second) and frees it; NULL is fine. */
void sg__drain_stop(sg__drain *d);
/* Parses one event line of the stream (the runtime's JSON object, at most 8 KiB) into ev,
 * whose strings point into *json (the caller decrefs it, also on failure). 0, or -1 when
 * it is not a selection event. */
int sg__drain_event_parse(const char *line, size_t len, json_t **json, sg_selection_event *ev);

/* The analytics drain (analytics_drain.c): a thread moving the runtimes' analytics
 * shipments from the state named by spec (a directory or a fleet's Redis) into store,
 * and deleting analytics older than retention_days UTC days (0: 90) once a minute. */
typedef struct sg__analytics_drain sg__analytics_drain;
int sg__analytics_drain_start(sg_store *store, const char *spec, uint32_t retention_days,
                              sg__analytics_drain **out);
void sg__analytics_drain_stop(sg__analytics_drain *d);
/* What a drain did (for the metrics): shipments stored (a shipment delivered again
 * counts again, the store applies it once) and their rows, shipments dropped as invalid,
 * and store failures (the shipment is retried). d may be NULL (all zero). */
typedef struct {
  uint64_t stored, rows, invalid, failures;
} sg__analytics_drain_counts;
void sg__analytics_drain_stats(const sg__analytics_drain *d, sg__analytics_drain_counts *out);
/* Parses one shipment (state/state.h, sg_analytics_collect) into rows whose strings
 * point into *json (the caller frees *rows and decrefs *json, also on failure). */
int sg__analytics_parse(const char *doc, size_t len, json_t **json, const char **id,
                        sg_analytics_row **rows, size_t *n);
/* Deletes analytics before the first of the last `days` UTC days of now_s. */
int sg__analytics_expire(sg_store *store, uint32_t days, int64_t now_s);
/* GET /api/v1/lists/{id}/analytics and the dashboard's copy of it (analytics_get.c):
 * the section 9 answer for a list the caller may read, from the query string's from/to.
 * Fills resp (200, or 400 with field paths). */
void sg__analytics_answer(sg_store *store, const char *list_id, const char *from, const char *to,
                          const sg_req *req, sg_resp *resp);

/* Every handler: the request is authenticated (req->auth is an sg_principal) and the
 * rate limits and Idempotency-Key are already handled. */
typedef void (*sg__handler)(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);

/* Parses the request body as a JSON object. On failure fills resp with a 400 (or 413)
 * and returns NULL. */
json_t *sg__body_object(sg_req *req, sg_resp *resp);
/* Adds an "unknown_field" error for each member of obj not named in allowed (NULL-ended). */
void sg__reject_unknown(const json_t *obj, const char *const *allowed, const char *prefix,
                        json_t **fields);
/* Reads limit (1..100, default 50) and cursor from the query string; on error fills resp
 * and returns -1. *after is the decoded sort key (caller owns it) or NULL for the first
 * page. key_shape is the sort key's shape, one character per member: 'i' an integer, 's'
 * a string ("is" = [displayOrder, id]); a cursor of any other shape is refused on
 * "cursor" like a forged one. */
int sg__page_params(sg_control *c, sg_req *req, sg_resp *resp, const char *scope,
                    const char *key_shape, size_t *limit, json_t **after);
/* The next page's sort key: the members named by `members` (NULL-ended) of data's last
 * element, as an array (new reference), or NULL when !more. */
json_t *sg__page_next_key(const json_t *data, bool more, const char *const *members);
/* Sends {data, nextCursor, requestId}; next_key (stolen, may be NULL) is encoded. */
void sg__page_respond(sg_control *c, sg_req *req, sg_resp *resp, const char *scope, json_t *data,
                      json_t *next_key);
/* Maps a store error to the response (invalid_list, internal_error, ...). */
void sg__store_error(sg_req *req, sg_resp *resp, sg_err e);
/* Sends a list with its ETag header and, when edge_sync is not NULL, its edgeSync member.
 * Steals list and edge_sync. */
void sg__send_list(sg_req *req, sg_resp *resp, int status, json_t *list, json_t *edge_sync);
/* Sends an item with its ETag header. Steals item. */
void sg__send_item(sg_req *req, sg_resp *resp, int status, json_t *item);
/* Sends {"synonyms": sets} with the resource's ETag header. Steals sets. */
void sg__send_synonyms(sg_resp *resp, int status, json_t *sets);
/* Length of a UTF-8 string in code points. */
size_t sg__cp_len(const char *s);
/* True when t is a BCP-47 tag in its common shape: a 2–3 letter language, then 1–8
 * character alphanumeric subtags ("en", "fr-CA", "zh-Hant-TW"). */
bool sg__bcp47_valid(const char *t);
/* Sends a version with its ETag header (the quoted contentHash, when it has one) and a
 * Location header; req->params[0] is the list id. Steals version. */
void sg__send_version(sg_req *req, sg_resp *resp, int status, json_t *version);
/* The same for a version of list_id (a route whose path names another list). */
void sg__send_version_of(sg_req *req, sg_resp *resp, int status, const char *list_id,
                         json_t *version);
/* Publishes list_id's current items and answers as POST …/versions does (versions_create.c):
 * 200 with the resolved version, 202 with the queued one, or an error. */
void sg__publish_respond(sg_control *c, const sg_principal *who, const char *list_id, sg_req *req,
                         sg_resp *resp);

/* Validates a POST /lists/{id}/items body. On success returns a new object holding every
 * item field with its default applied (value, displayValue, aliases, rank, parentId,
 * locales, displayOrder) and leaves *fields untouched; otherwise appends one {path,
 * reason} per problem to *fields and returns NULL. body is borrowed. Pure: no I/O. */
json_t *sg__item_validate(const json_t *body, json_t **fields);

/* Parses and validates one NDJSON import line (import_line.c): the item as
 * sg__item_validate returns it (parentId null) and *parent_value (malloc'd, or NULL when
 * the line names no parent). On failure returns NULL and appends one {path, reason} per
 * problem to *fields with paths "lines[index]" / "lines[index].field". Pure: no I/O. */
json_t *sg__import_line(const char *line, size_t n, size_t index, char **parent_value,
                        json_t **fields);

/* Runs `run` under the request's Idempotency-Key (idempotency.c): without the header it
 * just runs; otherwise the key is checked, a finished request with the same method, path
 * and body_hash is replayed, a different one is refused, and a new one runs and its
 * answer is recorded (5xx and 429 are forgotten). */
void sg__idempotent(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp,
                    const uint8_t body_hash[32], void (*run)(void *arg, sg_resp *resp), void *arg);
/* True when an Idempotency-Key header value is acceptable (1–255 printable ASCII). */
bool sg__idem_key_valid(const char *k);

/* ---- publishing (publish.c) ---- */
/* Starts the background publish worker (it first resumes versions left unresolved by a
 * previous process). Returns 0 or -1. */
int sg__publish_start(sg_control *c);
/* Stops and joins the worker; a run in progress finishes first. Safe when never started. */
void sg__publish_stop(sg_control *c);
/* Wakes the worker: a queued version is waiting. */
void sg__publish_kick(sg_control *c);
/* Runs the publish pipeline for version `number` of list_id (snapshot -> validate ->
 * compile -> write artifact -> activate -> edge record), holding the list's publish
 * lock. Waits at most wait_ms for that lock (negative: for ever). Returns 0 when the
 * version is resolved (by this call or by whoever held the lock), 1 when the lock wait
 * timed out (the version stays queued for the worker), -1 on an internal error (the
 * version is marked failed when the store allows). */
int sg__publish_run(sg_control *c, const char *list_id, int64_t number, int64_t wait_ms);
/* The failureReason of a version whose compiled artifact the edge store (or the store's
 * own copy) did not take: an outage that passes, so a synchronous publish answers it
 * with 503 and Retry-After rather than 500 (versions_create.c). */
#define SG__WHY_ARTIFACT_WRITE "artifact_write_failed"

/* ---- artifact garbage collection (artifact_gc.c) ---- */
int sg__artifact_gc_init(sg_control *c);
void sg__artifact_gc_free(sg_control *c);
/* One collection pass: deletes the artifacts the store has not named for
 * --artifact-grace seconds (and not written within them). Runs on the publish worker. */
void sg__artifact_gc_run(sg_control *c);
/* Held (shared) by the pipeline from writing an artifact until the store names it, so a
 * collection never deletes an artifact between the two. */
void sg__artifact_gc_hold(sg_control *c);
void sg__artifact_gc_release(sg_control *c);

/* recompile.c (docs/UPGRADING.md): compiles active artifacts of an older format again, from
 * the active version's own snapshot, once every live runtime reads the current format.
 * The publish thread set calls the tick once a second. */
int sg__recompile_init(sg_control *c);
void sg__recompile_tick(sg_control *c);
void sg__recompile_free(sg_control *c);

/* Writes list_id's edge record from the store (edge_sync.h) and returns its edgeSync
 * member {revision, state}; a failed write stays "pending" and the reconciler retries it. */
json_t *sg__edge_sync_list(sg_control *c, const char *list_id);
/* audit.c: the audit entry of a /api/v1 write made with a secret key (actor: the key's
 * id), written for a 2xx answer when action is set; the target the entry names (the
 * created record's id from the answer, else the path's parameters), shared with the
 * dashboard; and the wrapper that audits a streaming route when its answer is decided. */
typedef sg_http_begin (*sg__stream_handler)(sg_control *c, const sg_principal *who, sg_req *req,
                                            sg_resp *resp, sg_http_stream *stream);
void sg__audit_target(const sg_req *req, const sg_resp *resp, char *out, size_t n);
void sg__control_audit(sg_control *c, const char *workspace_id, const char *key_id,
                       const sg_req *req, const sg_resp *resp, const char *action);
sg_http_begin sg__control_audit_stream(sg_control *c, const sg_principal *who, const char *action,
                                       sg_req *req, sg_resp *resp, sg_http_stream *stream,
                                       sg__stream_handler fn);
/* sg_edge_sync_state, "pending" while this process's edge guard is not current. */
json_t *sg__edge_sync_state(sg_control *c, const char *kind, const char *id);

/* GET /readyz (readyz.c): 200 when the store answers and the edge store is usable. */
void sg__control_readyz(sg_control *c, sg_req *req, sg_resp *resp);
/* GET /healthz (readyz.c): liveness. */
void sg__control_healthz(sg_req *req, sg_resp *resp);
/* The control plane's metrics collector (readyz.c): publish queue depth, store and edge
 * health. */
void sg__control_metrics(sg_buf *out, void *ctx);

/* Handlers, one per file. */
void sg__h_lists_index(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_lists_create(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_list_get(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_analytics_get(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_token(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_list_patch(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_items_index(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_items_create(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_versions_index(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_versions_create(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_version_get(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_version_activate(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_query_suggestions(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_item_get(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_item_patch(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_item_delete(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_items_export(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
void sg__h_synonyms_get(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp);
/* Streaming route: runs when the headers are in (after the middleware); answers at once
 * (SG_HTTP_RESPOND) or sets up the body stream (SG_HTTP_STREAM). */
sg_http_begin sg__h_items_import(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp,
                                 sg_http_stream *stream);
/* The same, for a caller that has checked the body's type itself and feeds the stream
 * NDJSON it made (the dashboard's import converts CSV, TSV and JSON arrays first):
 * any_type skips the Content-Type check, nothing else. */
sg_http_begin sg__items_import_stream(sg_control *c, const sg_principal *who, sg_req *req,
                                      sg_resp *resp, sg_http_stream *stream, bool any_type);
/* PUT …/synonyms streams its body (up to 4 MiB, past the ordinary routes' cap). */
sg_http_begin sg__h_synonyms_put(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp,
                                 sg_http_stream *stream);

#endif
