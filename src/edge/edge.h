/*
 * The edge store: everything the runtime needs, and nothing it must not see.
 *
 * The control plane and the admin CLI write here; the runtime only reads (it loads a
 * snapshot and reloads it when the revision changes). Record formats are in
 * docs/EDGE.md. Two backends share this interface: a directory (default, implemented in
 * dir/dir.c) and Redis ("redis://host:port[/db][?options]", redis/redis.c; the URL is
 * read by common/redisx.h; "rediss://" fails with ENOTSUP).
 *
 * Conventions for every call:
 *  - Returns 0 on success or -1 with errno set (EINVAL: bad id/hash/argument, ENOENT:
 *    no such record, EFBIG: record over SG_EDGE_MAX_RECORD, anything else: I/O).
 *  - Strings passed in are borrowed for the duration of the call.
 *  - A handle may be shared by threads; writers in several processes (serve, admin)
 *    may run at once: each write is serialised by an exclusive lock on the store and
 *    bumps the store-wide revision after the record is durable, so a reader that sees
 *    revision N sees every write that returned N or less.
 *  - Record ids become file names: 1..SG_EDGE_MAX_ID bytes of [A-Za-z0-9_-]
 *    (sg_edge_id_valid). A publishable key's record id is the lower-case hex SHA-256 of
 *    the key string (sg_edge_key_digest); the key itself is never stored.
 */
#ifndef SG_EDGE_EDGE_H
#define SG_EDGE_EDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
  SG_EDGE_LIST,         /* lists/<listId>.json */
  SG_EDGE_KEY,          /* keys/<sha256 hex of the publishable key>.json */
  SG_EDGE_APP,          /* apps/<applicationId>.json */
  SG_EDGE_WORKSPACE,    /* workspaces/<workspaceId>.json */
  SG_EDGE_SUBSCRIPTION, /* subscriptions/<subscriptionId>.json */
  SG_EDGE_SIGNING_KEY,  /* signing-keys/<kid>.json */
  SG_EDGE__KINDS
} sg_edge_kind;

#define SG_EDGE_MAX_ID 128
#define SG_EDGE_MAX_RECORD (1u << 20) /* bytes of one JSON record */

typedef struct sg_edge sg_edge;
typedef struct sg_artifact sg_artifact;

/* Opens (creating the layout if missing) the store named by spec: a directory path
 * (the conventional one is <data-dir>/edge) or a Redis URL. On success *out owns the
 * handle. A Redis store that is down is no error here: calls fail (ECONNREFUSED) until it
 * is back, and each reconnects (common/redisx.h). */
int sg_edge_open(const char *spec, sg_edge **out);
/* Where a remote backend keeps the artifacts sg_edge_artifact_load fetched (a local
 * content-addressed cache, <dir>/<hex>.sga, created if missing); without one it fetches
 * into a temporary file for each load. No-op for a directory store, whose artifacts are
 * local already. */
int sg_edge_set_cache_dir(sg_edge *e, const char *dir);
/* Removes from that cache the artifacts not named in keep[0..n) ("sha256:<hex>" or the
 * bare hex) and the temporary files of fetches that never finished, when last written more
 * than older_than_s seconds ago. *removed (may be NULL) gets how many went. No-op without
 * a cache. What a process has loaded lives in its own memory, so removing its file is
 * safe: it is fetched again if ever needed. */
int sg_edge_cache_prune(sg_edge *e, const char *const *keep, size_t n, int64_t older_than_s,
                        size_t *removed);
/* Convenience: opens <data_dir>/edge. */
int sg_edge_open_data_dir(const char *data_dir, sg_edge **out);
void sg_edge_close(sg_edge *e);

/* Stores artifact bytes under their content hash ("sha256:<64 hex>" or the bare hex),
 * durably (temp, fsync, rename, fsync dir). Idempotent: an existing artifact whose bytes
 * hash to its name is kept (and its write time refreshed, so garbage collection sees it
 * as new); a damaged one is replaced. Does not bump the revision: the list record that names the
 * hash does, so write the artifact first, then the list. */
int sg_edge_put_artifact(sg_edge *e, const char *content_hash, const void *data, size_t len);
/* Whether the artifact is stored: 0 with *size (may be NULL) its length in bytes, or -1
 * with errno ENOENT when absent. Neither reads nor verifies the bytes. */
int sg_edge_artifact_stat(sg_edge *e, const char *content_hash, uint64_t *size);
/* The artifact, read into this process's own sealed memory, checked against content_hash
 * and opened (sg_artifact_load_file): what the runtime serves from. The interface names
 * no local path, so a remote backend can fetch the bytes into a local cache first.
 * Returns 0, or -1 with errno ENOENT (absent), EBADMSG (the bytes do not hash to the
 * name), EINVAL (not an artifact) or an I/O error. */
int sg_edge_artifact_load(sg_edge *e, const char *content_hash, sg_artifact **out);

/* Calls cb with the bare hex hash and the last write time (Unix seconds) of every stored
 * artifact, in no particular order (artifact garbage collection). A non-zero return from
 * cb stops the walk and is returned. */
typedef int (*sg_edge_artifact_cb)(const char *hex, int64_t written_at, void *ctx);
int sg_edge_artifacts(sg_edge *e, sg_edge_artifact_cb cb, void *ctx);
/* Deletes an artifact (ENOENT when absent). The caller makes sure nothing names it. */
int sg_edge_delete_artifact(sg_edge *e, const char *content_hash);

/* Removes the temporary files of artifact writes that never finished (a process killed
 * mid-write leaves one, as large as the artifact) last written longer than older_than_s
 * seconds ago. *removed (may be NULL) gets how many went. */
int sg_edge_sweep_temp(sg_edge *e, int64_t older_than_s, size_t *removed);

/* Creates or replaces record (k, id) with json[0..len) (not validated here beyond the
 * size cap) and bumps the revision; *revision_out (may be NULL) gets the new one. */
int sg_edge_put(sg_edge *e, sg_edge_kind k, const char *id, const char *json, size_t len,
                uint64_t *revision_out);
/* Removes record (k, id) and bumps the revision. ENOENT (no bump) when absent. */
int sg_edge_delete(sg_edge *e, sg_edge_kind k, const char *id, uint64_t *revision_out);
/* Builds a record under the store's writer lock: returns 0 with *json (malloc'd, freed by
 * the caller of the callback) and *len set to write it, 1 to delete the record, -1 on an
 * error (nothing is written). *seq (0 when the callback leaves it) is the sequence of what
 * it built: when non-zero the write or delete is conditional on it, as with
 * sg_edge_put_if_newer. */
typedef int (*sg_edge_build_cb)(void *ctx, char **json, size_t *len, uint64_t *seq);
/* Writes or deletes record (k, id) with what build returns, calling build while holding
 * the store-wide writer lock, so two writers (in any processes) that each read the
 * record's source inside build can never store the older content last; the sequence
 * keeps that true for a backend that cannot hold a lock across processes while build
 * runs (SG_EDGE_STALE: a newer sequence is stored, nothing written). Deleting an absent
 * record succeeds without a bump. *revision_out (may be NULL) gets the revision. */
int sg_edge_update(sg_edge *e, sg_edge_kind k, const char *id, sg_edge_build_cb build, void *ctx,
                   uint64_t *revision_out);
/* What the conditional writes and the change log answer besides 0 and -1. */
enum {
  SG_EDGE_STALE = 1,   /* refused: the stored record carries a higher sequence */
  SG_EDGE_TOO_OLD = 2, /* the change log no longer reaches back that far: reload all */
};
/* Creates or replaces record (k, id) unless the store already holds it (or its deletion)
 * with a sequence higher than seq: then nothing is written, the revision is not bumped and
 * SG_EDGE_STALE is returned (not an error). Equal sequences are written, so a writer that
 * retries the same sequence after a failure succeeds. The sequence is the source's own
 * monotonic version of the record (the edge outbox's generation), so two writers that
 * read the source at different times can never store the older content last, without
 * holding any lock while they read it. */
int sg_edge_put_if_newer(sg_edge *e, sg_edge_kind k, const char *id, const char *json, size_t len,
                         uint64_t seq, uint64_t *revision_out);
/* Removes record (k, id) under the same rule, remembering seq so that an older put cannot
 * bring it back. An absent record is removed without a bump. */
int sg_edge_delete_if_newer(sg_edge *e, sg_edge_kind k, const char *id, uint64_t seq,
                            uint64_t *revision_out);

/* Calls cb for every record written or deleted after revision since, up to the revision
 * the call read (*upto), oldest first; a record may come more than once. cb reads the
 * record itself (sg_edge_get; ENOENT means deleted). Returns 0, SG_EDGE_TOO_OLD when the
 * change log cannot say what changed since then (compacted, damaged, a revision moved
 * without an entry, or a different store: read everything with sg_edge_foreach instead;
 * *upto is still set, and cb may have been called for some changes already), a non-zero
 * return of cb, or -1 with errno. */
typedef int (*sg_edge_change_cb)(sg_edge_kind k, const char *id, uint64_t revision, void *ctx);
int sg_edge_changes_since(sg_edge *e, uint64_t since, sg_edge_change_cb cb, void *ctx,
                          uint64_t *upto);

/* Reads record (k, id) into a malloc'd NUL-terminated buffer (caller frees *json). */
int sg_edge_get(sg_edge *e, sg_edge_kind k, const char *id, char **json, size_t *len);
/* The current store revision (0 for a fresh store). Cheap: the runtime polls it. */
int sg_edge_revision(sg_edge *e, uint64_t *rev);
/* Waits at most timeout_ms for a sign that the revision (or the stamp) may have moved, or
 * for stop_fd (may be -1) to become readable: 0 either way (a sign is a hint, never a
 * promise: the caller reads the revision). -1 with errno ENOTSUP when the backend gives no
 * such sign (the caller then waits its poll period), or another errno when it failed
 * (the caller may try again later). Not thread-safe: one waiter per handle. */
int sg_edge_wait(sg_edge *e, int stop_fd, int timeout_ms);

/* Calls cb for every record of kind k in ascending id order. json is NUL-terminated and
 * valid only during the call. A non-zero return from cb stops the walk and is returned.
 * Records that vanish during the walk are skipped. */
typedef int (*sg_edge_foreach_cb)(const char *id, const char *json, size_t len, void *ctx);
int sg_edge_foreach(sg_edge *e, sg_edge_kind k, sg_edge_foreach_cb cb, void *ctx);

/* The guard stamp (docs/EDGE.md, "The staleness guard"): how a reader tells an edge that
 * went back in time (a restored snapshot, a lagging replica, a flush) from a current one.
 * Only the control plane's guard writes it: `epoch` grows by one with every full rewrite
 * of the edge from the store, `heartbeat_ms` is the database's clock at the last time the
 * control plane confirmed that the edge holds everything the store confirmed (0 while a
 * rewrite is under way: nothing in that epoch may be trusted yet), `revision` the edge
 * revision it saw then. Stamps are ordered by (epoch, heartbeat_ms); a reader that ever
 * saw a stamp never accepts a lower one. */
typedef struct {
  bool present; /* false: the store holds no stamp (never guarded, or flushed) */
  uint64_t epoch;
  int64_t heartbeat_ms;
  uint64_t revision;
} sg_edge_stamp;
/* Reads the stamp (present = false when there is none). */
int sg_edge_stamp_get(sg_edge *e, sg_edge_stamp *out);
/* Writes s atomically. With expect, only while the stored stamp is present and equal to
 * *expect in epoch and heartbeat (a heartbeat must never paper over an edge that went
 * back since it was checked); without, only when s orders strictly above the stored stamp
 * or none is stored. Returns 0, SG_EDGE_STALE (the condition failed, nothing written), or
 * -1 with errno. */
int sg_edge_stamp_put(sg_edge *e, const sg_edge_stamp *expect, const sg_edge_stamp *s);
/* Raises the store revision to at least min, with no change-log entry (a reader that
 * follows the log then reads everything); *rev (may be NULL) gets the revision after. The
 * guard calls it before a full rewrite so that the revision never goes back for a reader
 * that saw a higher one before the edge lost it. */
int sg_edge_raise_revision(sg_edge *e, uint64_t min, uint64_t *rev);
/* Text form of a stamp, "<epoch> <heartbeat_ms> <revision>" (what both backends store),
 * and its parser (-1 on anything else). sg_edge_stamp_cmp orders by (epoch, heartbeat). */
int sg_edge_stamp_format(const sg_edge_stamp *s, char out[72]);
int sg_edge_stamp_parse(const char *text, size_t len, sg_edge_stamp *out);
int sg_edge_stamp_cmp(const sg_edge_stamp *a, const sg_edge_stamp *b);

/* ---- runtime presence (docs/EDGE.md "Runtime records") --------------------------------
 * Each runtime process publishes what it is able to serve: a small record under its own
 * id that it refreshes every SG_EDGE_RUNTIME_BEAT_S seconds and that stops counting
 * ttl_s seconds after its last refresh (a runtime that dies simply stops refreshing). The
 * control plane reads them before it recompiles artifacts into a newer format. These
 * records live beside the served records, not among them: writing one never bumps the
 * revision, so heartbeats never make a runtime reload. */
#define SG_EDGE_RUNTIME_BEAT_S 10
#define SG_EDGE_RUNTIME_TTL_S 30 /* default ttl: three missed heartbeats */
#define SG_EDGE_RUNTIME_TTL_MAX 3600
#define SG_EDGE_RUNTIME_MAX 4096 /* bytes of one runtime record */
/* Writes or refreshes runtime record id (json[0..len), at most SG_EDGE_RUNTIME_MAX bytes;
 * the record's own heartbeatMs and ttlSeconds are what the directory backend judges
 * liveness by, a Redis key expires after ttl_s, 1..SG_EDGE_RUNTIME_TTL_MAX). Idempotent. */
int sg_edge_runtime_put(sg_edge *e, const char *id, const char *json, size_t len, int64_t ttl_s);
/* Removes runtime record id (a runtime that stops cleanly); an absent one is no error. */
int sg_edge_runtime_delete(sg_edge *e, const char *id);
/* Calls cb for every live runtime record, in no particular order, with json valid during
 * the call only. Dead records are skipped (and a backend may remove them on the way). A non-zero
 * return from cb stops the walk and is returned. */
int sg_edge_runtimes(sg_edge *e, sg_edge_foreach_cb cb, void *ctx);

/* A runtime record, decoded (sg_edge_runtime_decode). formats has bit v set for each
 * artifact format v (1..63) the runtime reads. */
typedef struct {
  char id[SG_EDGE_MAX_ID + 1];
  uint64_t formats;
  int64_t heartbeat_ms; /* the writer's clock (Unix ms) at its last refresh */
  int64_t ttl_s;
  char version[32]; /* the writer's release, "" when absent */
} sg_edge_runtime_rec;
/* Builds this process's record: {"runtimeId","formats":[…],"version","heartbeatMs",
 * "ttlSeconds"} into a malloc'd string. -1 on a bad argument or out of memory. */
int sg_edge_runtime_encode(const sg_edge_runtime_rec *r, char **json, size_t *len);
/* Decodes a record (hostile input: any member may be missing or wrong). Returns 0, or -1
 * when it names no valid id or no format in 1..63 (such a record blocks nothing and is
 * ignored by callers that count formats: see docs/EDGE.md). */
int sg_edge_runtime_decode(const char *json, size_t len, sg_edge_runtime_rec *out);
/* Whether r is live at now_ms by its own fields: now_ms < heartbeat_ms + ttl_s seconds
 * (ttl_s clamped to 1..SG_EDGE_RUNTIME_TTL_MAX). A writer whose clock runs ahead counts a
 * little longer, which holds a recompile back rather than lets one through. The directory
 * backend judges by this (its writers share the host's clock); Redis by the key's expiry,
 * on the server's clock. */
bool sg_edge_runtime_live(const sg_edge_runtime_rec *r, int64_t now_ms);

/* Whether the store can be used now: its revision reads, and for a directory backend the
 * root and every record folder are directories this process may read and write. The
 * readiness probes (/readyz) call it. Returns 0 or -1 with errno set. */
int sg_edge_check(sg_edge *e);

/* Helpers. */
bool sg_edge_id_valid(const char *id);
const char *sg_edge_kind_name(sg_edge_kind k); /* "lists", "keys", … (the folder) */
/* Lower-case hex SHA-256 of a publishable key string: its SG_EDGE_KEY record id. */
void sg_edge_key_digest(const char *publishable_key, size_t len, char out[65]);

#endif
