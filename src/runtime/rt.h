/*
 * Internals of the runtime shared across the files of src/runtime (not a public API).
 *
 * Threads: HTTP workers (one epoll loop each, http/loop.c; framing in http/http1.c), one loader
 * (loader.c: edge poll, snapshot swap, quota flush), one event writer (selection NDJSON). Request
 * threads never block on the loader: they read the current snapshot through sg__rcu_enter/leave.
 */
#ifndef SG_RUNTIME_RT_H
#define SG_RUNTIME_RT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/ratelimit.h"
#include "compiler/typo.h"
#include "edge/edge.h"
#include "http/common/request_id.h"
#include "runtime/http/http1.h"
#include "runtime/runtime.h"
#include "state/state.h"
#include "search/artifact.h"

/* ================================================================ origins ======== */

#define SG__ORIGIN_MAX 256

/* Canonical form of an allow-list entry or a request Origin: lower-case,
 * "scheme://host[:port]" with an optional single leading "*." label in the host of an
 * allow-list entry (allow_wildcard). Returns the length or -1 when malformed. */
long sg__origin_canon(const char *in, size_t len, bool allow_wildcard, char *out, size_t outsz);
/* True when the request origin (any case, as sent) matches one of the canonical
 * entries (n == 0: none matches; a key without origins is flagged any_origin instead). */
bool sg__origin_allowed(char *const *entries, size_t n, const char *origin, size_t len);

/* ================================================================ request ids ===== */

#define SG__REQID_LEN 36 /* "req_" + 32 hex */

/* Deterministic requestId of a query response: "req_" + hex of the first 16 bytes of
 * BLAKE2b-256(key 0x00 nq 0x00 locale 0x00 content_hash [0x00 limit, when not 10]
 * [0x00 'w' within, when given]).
 * Inputs are length-delimited by the NUL separators (none of them contains NUL). tag (may
 * be NULL) receives the other 16 bytes: with the answer's code and the query's typo budget
 * they determine the whole body (the key fixes the list, the content hash the items), so
 * they make its ETag without hashing it. */
void sg__reqid_derive(const char *key, size_t klen, const char *nq, size_t nqlen,
                      const char *locale, const char *content_hash, unsigned limit,
                      char out[SG__REQID_LEN + 1], uint8_t tag[16]);
/* The same with the `within` filter (docs/DESIGN.md §3.5) among the inputs: within NULL
 * hashes nothing more (the id of sg__reqid_derive), else [0x00 'w' within] follows. */
void sg__reqid_derive_within(const char *key, size_t klen, const char *nq, size_t nqlen,
                             const char *locale, const char *content_hash, unsigned limit,
                             const char *within, size_t wlen, char out[SG__REQID_LEN + 1],
                             uint8_t tag[16]);
/* A unique id of the same shape for x-request-id and error bodies (not derived). */
void sg__reqid_random(char out[SG__REQID_LEN + 1]);

/* ================================================================ rate limit ====== */

/* Selection reports are limited per publishable key by the shared token bucket of
 * common/ratelimit.h (rt->rl), keyed by the hex of the key digest's first 16 bytes. */

/* ================================================================ access log ===== */

/* Appends one complete JSON line to the calling thread's log buffer (see accesslog.c). */
void sg__rt_log_line(const char *line, size_t n);
/* Writes every thread's buffered lines to stderr; the loader calls it each poll period. */
void sg__rt_log_flush(void);

/* ================================================================ selection body == */

/* The quota slot, the selection report (sg__selection) and what recording one answers
 * (sg__ev_result) belong to the shared state's seam: state/state.h. */

/* Parses a selection report body[0..len). Returns SG_E_OK when the body is a JSON
 * object (the key may still be missing and bad_field may be set: the handler checks the
 * key and origin first), SG_E_PAYLOAD_TOO_LARGE over SG__SELECTION_MAX_BODY, or
 * SG_E_INVALID_REQUEST when it is not an object. Unknown fields are ignored. Call
 * sg__selection_free in every case. */
sg_err sg__selection_parse(const char *body, size_t len, sg__selection *s);
void sg__selection_free(sg__selection *s);

/* ================================================================ snapshot ======== */

typedef enum { SG__VIS_PRIVATE, SG__VIS_PUBLIC, SG__VIS_SHARED } sg__visibility;

typedef struct sg__rt_art {
  _Atomic long refs;
  sg_artifact *a;
  uint64_t bytes;     /* its size, for the metrics (read once, not on every scrape) */
  char hash[72];      /* "sha256:<hex>" */
  uint64_t cache_gen; /* the answer cache's generation for these bytes (answer_cache.h) */
  /* The loader's own (loader.c, settle_step): how far sg_artifact_settle has gone, the
   * ms it took, the steps that moved memory, those that failed and the first error. */
  size_t settled;
  int64_t settle_ms;
  unsigned settle_steps, settle_failed;
  int settle_err;
} sg__rt_art;

typedef struct {
  char *id;
  char *workspace_id;
  sg__visibility visibility;
  bool archived;
  bool published; /* has an active content hash and is not archived */
  int min_query_chars;
  sg_typo_policy typo; /* queryPolicy.typoTolerance, read with the list record */
  char *content_hash;  /* "sha256:<hex>" or NULL */
  sg__rt_art *art;     /* NULL when published but the artifact could not be opened */
  char *id_json;       /* the id as a JSON string literal, quotes included */
  char *bootstrap;     /* prebuilt bootstrap body */
  size_t bootstrap_len;
  char bootstrap_etag[40];
  /* The loader's own (set before the entry is published, never read by requests). */
  bool art_missing;   /* the wanted artifact could not be opened: retried */
  bool art_transient; /* ... because fetching it failed (I/O, Redis down) */
  uint64_t gen;       /* the build that made this entry */
  void *arena;        /* this entry's strings */
} sg__rt_list;

typedef struct {
  char *id;
  char *workspace_id;
  bool active;
  bool limited;
  uint64_t monthly_quota;
  sg__quota_slot *slot;
  void *arena;
} sg__rt_app;

typedef struct {
  uint8_t digest[32];
  bool valid; /* key, app, workspace, list and (cross-workspace) subscription ok */
  char *id;   /* "pk_…" record id */
  sg__rt_app *app;
  sg__rt_list *list;
  bool any_origin; /* created without origins: every Origin is accepted */
  char **origins;  /* canonical entries (malformed ones are dropped) */
  size_t n_origins;
  void *arena;
} sg__rt_key;

typedef struct {
  char *kid;
  uint8_t public_key[32];
} sg__rt_signing_key;

/* A snapshot's entries (lists, applications, keys, the signing-key block) are immutable
 * once published and shared between consecutive snapshots: a new revision rebuilds only
 * the entries its changes touch (and the keys that point at those). The loader owns them
 * (sg__rt_records); an entry a build replaces or drops is retired onto the snapshot it was
 * built from (prev), and freed with that snapshot, which the RCU scheme frees only once no
 * reader can hold it. So sg__snapshot_load's prev must be the last snapshot built from
 * the same cache, and every snapshot built before prev must already be freed (the loader
 * publishes each build and frees the one it replaced). */
typedef struct sg__rt_snapshot {
  uint64_t revision;
  bool unloaded;         /* a placeholder: the edge store could not be read yet (not ready) */
  bool missing_artifact; /* some published list has no openable artifact: retry */
  bool fetch_failed;     /* ... because it could not be fetched (I/O, Redis down): retry */
  bool ever_complete;    /* this or an earlier snapshot had every artifact it could fetch */
  sg__rt_key **keys;     /* open addressing on digest (NULL: empty); capacity key_mask + 1 */
  size_t key_mask;
  sg__rt_list **lists; /* sorted by id */
  size_t n_lists;
  sg__rt_app **apps; /* sorted by id */
  size_t n_apps;
  const sg__rt_signing_key *signing_keys;
  size_t n_signing_keys;
  sg__rt_art **arts; /* distinct; the lists hold the references */
  size_t n_arts;
  void *retired; /* entries the next build dropped: freed with this snapshot (loader only) */
} sg__rt_snapshot;

/* The edge records a loader decoded, and the entries built from them, kept between
 * snapshots (loader thread only). */
typedef struct sg__rt_records sg__rt_records;
void sg__records_free(sg__rt_records *c);
/* Builds a snapshot of the whole edge store. *cache (allocated when NULL) holds the
 * records and entries of the previous build: only the records changed since are re-read,
 * and only the entries they touch rebuilt; a full read (the first, after
 * sg__records_invalidate, or when the change log does not reach back) rebuilds every
 * entry. prev: see above (may be NULL when nothing built from cache is published).
 * Quota slots come from st. */
struct sg_rt_state;
int sg__snapshot_load(sg_edge *e, struct sg_rt_state *st, const sg__rt_snapshot *prev,
                      sg__rt_records **cache, sg__rt_snapshot **out);
/* Frees s and the entries retired onto it. */
void sg__snapshot_free(sg__rt_snapshot *s);
/* Makes the next sg__snapshot_load read every record (NULL is fine). */
void sg__records_invalidate(sg__rt_records *c);
/* loader.c: loads a snapshot the staleness guard allows. 0: *out is the new snapshot to
 * publish; 1: held (the edge went back, or a rewrite is under way: keep serving cur);
 * 2: nothing changed; -1: the edge store could not be read (errno). cur may be NULL (at
 * start). retry: reload even when the revision did not move. */
int sg__rt_edge_load(sg_runtime *rt, const sg__rt_snapshot *cur, bool retry, sg__rt_snapshot **out);
/* loader.c: until the snapshot loaded under a guard stamp is confirmed (the heartbeat
 * moved past that stamp; with cfg.edge_confirm, asked for at once) or wait_ms passed.
 * 0 when confirmed. Called at start, before the listener opens. */
int sg__rt_edge_confirm_wait(sg_runtime *rt, int64_t wait_ms);
/* loader.c: reads <state-dir>/edge-stamp into rt->saved (at start), and at stop accepts
 * and keeps the edge's stamp once more when it moved forward (a control plane that stopped
 * last wrote it). */
void sg__rt_stamp_restore(sg_runtime *rt);
void sg__rt_stamp_final(sg_runtime *rt);
/* The key entry of a digest, or NULL. Lock-free, allocation-free. */
const sg__rt_key *sg__snapshot_key(const sg__rt_snapshot *s, const uint8_t digest[32]);

/* ================================================================ rcu ============= */

#define SG__RCU_SLOTS 256

typedef struct {
  _Atomic uint64_t epoch; /* 0 = quiescent */
  char pad[56];
} sg__rcu_slot;

typedef struct {
  uint64_t id;
  _Atomic(sg__rt_snapshot *) cur;
  _Atomic uint64_t epoch;
  _Atomic unsigned nslots;
  _Atomic long overflow; /* readers without a slot (more than SG__RCU_SLOTS threads) */
  sg__rcu_slot slots[SG__RCU_SLOTS];
} sg__rcu;

void sg__rcu_init(sg__rcu *r, sg__rt_snapshot *first);
/* Readers: the current snapshot, valid until sg__rcu_leave. Not nestable. */
const sg__rt_snapshot *sg__rcu_enter(sg__rcu *r);
void sg__rcu_leave(sg__rcu *r);
/* Writer (one thread): installs s, waits until no reader can hold the old snapshot,
 * and returns the old one (caller frees it). */
sg__rt_snapshot *sg__rcu_publish(sg__rcu *r, sg__rt_snapshot *s);

/* ================================================================ token =========== */

/* Verifies `Authorization: Bearer <token>` (auth may be NULL) for key k's private list
 * against the snapshot's signing keys. Returns SG_E_OK or SG_E_INVALID_TOKEN. */
sg_err sg__token_verify(const sg__rt_snapshot *s, const char *auth, const sg__rt_key *k,
                        int64_t now_s);

/* ================================================================ server ========== */

struct sg_runtime {
  sg_runtime_config cfg;
  char *listen_copy, *state_dir;
  sg_edge *edge;
  sg__rt_records *records; /* the loader's decoded edge records */
  sg__rcu rcu;
  struct sg_rt_state *state; /* rate limits, quotas, selection dedupe and events */
  int listen_fd, wake_fd;    /* wake_fd: eventfd that stops the workers */
  pthread_t *workers;
  unsigned n_workers;
  struct sg__rt_loop *loop; /* http/loop.c's workers, which hand newcomers to each other */
  _Atomic long connections; /* open HTTP connections, for the cap */
  unsigned port;
  pthread_t loader;
  /* Observability (h_ready.c): metrics route ids by route, and when the loader last
   * found the snapshot in step with the edge store (sg_mono_ms; 0 = never). */
  int route_ids[8];
  _Atomic int64_t edge_synced_ms;
  int64_t started_ms;
  /* The staleness guard (loader.c; docs/EDGE.md, "The staleness guard"). stamp: the
   * highest guard stamp this runtime accepted (present: the edge is guarded, and a lower
   * or missing one means the edge went back); load_stamp: the stamp read before the
   * snapshot it serves was loaded; loaded_once: a snapshot was ever published. Loader
   * thread only. edge_verified: what it serves is confirmed current (false: requests
   * fail closed with 503); edge_behind: the edge went back and the runtime holds its
   * snapshot. */
  sg_edge_stamp stamp, load_stamp;
  /* saved: the stamp last accepted by this runtime, kept in <state-dir>/edge-stamp across
   * restarts: an edge that still carries exactly it is the edge this runtime last found
   * confirmed (a runtime restarted while no control plane runs serves again). */
  sg_edge_stamp saved;
  bool loaded_once;
  atomic_bool edge_verified, edge_behind;
  atomic_bool stopping;
  pthread_mutex_t stop_mu;
  pthread_cond_t stop_cv;
};

/* One request as the handlers see it. */
typedef struct {
  sg__h1_conn *c;
  const sg__h1_req *req; /* NULL for a request that could not be framed */
  sg_runtime *rt;
  const char *method, *path;
  int64_t t0_us;
  char xrid[SG_HTTP_REQUEST_ID_MAX + 1]; /* echoed x-request-id, or a generated one */
  bool xrid_generated; /* xrid is ours (may then double as the body's requestId) */
  const char *message; /* a constant, JSON-safe message more precise than the table's, or NULL */
  const char *field;   /* a 400's field (a constant, JSON-safe): details.fields, or NULL */
  const char *origin;  /* Origin header or NULL */
  size_t origin_len;
  bool cors;              /* echo Origin in Access-Control-Allow-Origin */
  uint8_t key_digest[32]; /* set by sg__rt_authorize */
  int route;              /* metrics route id */
  unsigned status;        /* for the access log */
  char client[48];        /* from a trusted proxy, the client its headers name; else "" */
} sg__rt_req;

typedef struct {
  const char *etag;          /* with quotes */
  const char *cache_control; /* default "no-store" */
  int retry_after;           /* > 0: retry-after header */
  bool www_authenticate;
  const char *allow; /* Allow header (405) */
} sg__rt_hdrs;

/* Writes a response with the common headers (x-request-id, CORS, Vary, content-type). */
void sg__rt_respond(sg__rt_req *r, unsigned status, const char *body, size_t len,
                    const sg__rt_hdrs *h);
/* Writes the runtime error body {code, message, requestId} for e. request_id NULL: the
 * generated x-request-id, or a fresh random id when the client sent its own (a body
 * never repeats client input). */
void sg__rt_error(sg__rt_req *r, sg_err e, const char *request_id, const sg__rt_hdrs *h);
/* hints.c: the message of a runtime error (r->message, when set, wins), and a precise
 * invalid_key message for a key of the wrong kind or a missing one (NULL otherwise). */
const char *sg__rt_message(sg_err e);
const char *sg__rt_key_hint(const char *key, size_t klen);
/* The invalid_token message for a private list: what to do when no token was sent (mint
 * one, or make the list public), or when the one sent does not serve. */
const char *sg__rt_token_hint(const char *authorization);
/* True for a control-plane path (/api/..., /dashboard...) of n bytes, which the runtime
 * answers 404 with sg__rt_control_port_hint, pointing at the control plane's port. */
bool sg__rt_control_path(const char *path, size_t n);
const char *sg__rt_control_port_hint(void);
/* The publishable key digest lookup + validity + origin check shared by the handlers.
 * Returns SG_E_OK with *out set, or the error to answer. Sets r->cors. */
sg_err sg__rt_authorize(sg__rt_req *r, const sg__rt_snapshot *s, const char *key, size_t klen,
                        const sg__rt_key **out);
/* True when the request's If-None-Match lists etag (weak comparison, or "*"). */
bool sg__rt_inm_matches(const sg__rt_req *r, const char *etag);
/* Per-thread scratch buffer of at least SG__RT_SCRATCH bytes. */
#define SG__RT_SCRATCH (64 * 1024)
char *sg__rt_scratch(void);

/* Handlers (one file each). */
void sg__h_query(sg__rt_req *r);
/* Called by each worker thread when it starts: allocates the process's answer cache
 * (answer_cache.h) once and makes it resident, so the runtime's memory is whole from its
 * start, not grown by its first distinct queries. */
void sg__h_query_thread_init(void);
void sg__h_bootstrap(sg__rt_req *r);
void sg__h_selection(sg__rt_req *r);
void sg__h_health(sg__rt_req *r);
void sg__h_ready(sg__rt_req *r);
/* The runtime's metrics collector (h_ready.c): snapshot state, edge revision, artifacts. */
void sg__rt_metrics(sg_buf *out, void *ctx);
/* Registers the runtime's metrics collector with common/metrics (h_ready.c). */
void sg__rt_metrics_start(sg_runtime *rt);

#endif
