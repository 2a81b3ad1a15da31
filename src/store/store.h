/*
 * The relational store behind the control plane and the admin CLI.
 *
 * One interface, several backends behind a seam (docs/STORE.md): sg_store_open picks the
 * backend from the spec; every sg_store_* function (store.c) checks its arguments once and
 * calls the backend's operation (store_internal.h: struct sg_store_ops): SQLite (the
 * embedded default, src/store/sqlite/) or PostgreSQL (src/store/postgres/). Rules that do not
 * depend on the engine (ETags, slugs, the shared-list rule, edge-record JSON) live above
 * the seam (rules.c, records.c). Every function is one atomic operation (its own
 * transaction) and returns an sg_err: SG_E_OK, a typed condition the caller maps to a
 * response (SG_E_INVALID_LIST, SG_E_PRECONDITION_FAILED, ...), or SG_E_INTERNAL.
 * Records come back as jansson objects in the API's shape (caller owns the reference).
 * The store is safe to call from several threads at once.
 */
#ifndef SG_STORE_STORE_H
#define SG_STORE_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef struct sg_store sg_store;

/* spec: a data directory (SQLite file <dir>/suggestd.db), "sqlite:///abs/x.db", a path
 * ending in .db/.sqlite/.sqlite3, or "postgres://…" / "postgresql://…" (a libpq URI).
 * Returns 0, or -1 with a sentence in err and *out NULL. */
int sg_store_open(const char *spec, sg_store **out, char *err, size_t errsz);
void sg_store_close(sg_store *st);

/* How many of each resource a parent may hold (issue 22, docs/STORE.md "Limits"). Each
 * create checks its limit inside its own write transaction, with the parent locked, so
 * two processes cannot both pass it: past it, list_create answers SG_E_LIST_LIMIT,
 * member_create SG_E_MEMBER_LIMIT, secret_key_create SG_E_SECRET_KEY_LIMIT and
 * publishable_key_create SG_E_PUBLISHABLE_KEY_LIMIT. Lists count whatever their status;
 * members and keys count while active (a revoked key or disabled member frees its place). */
typedef struct {
  int64_t lists_per_workspace;
  int64_t members_per_workspace;
  int64_t publishable_keys_per_application;
  int64_t secret_keys_per_application;
} sg_store_limits;
#define SG_STORE_LIMITS_DEFAULT ((sg_store_limits){10000, 1000, 100, 20})
/* How many of each list's most recently activated versions keep their artifacts (the
 * active one and n - 1 before it: what a rollback can return to; --keep-versions). */
#define SG_STORE_KEEP_VERSIONS_DEFAULT 2
void sg_store_set_keep_versions(sg_store *st, int64_t n);
/* Replaces the limits (a fresh handle has SG_STORE_LIMITS_DEFAULT). Call before sharing the
 * handle between threads. */
void sg_store_set_limits(sg_store *st, const sg_store_limits *l);

/* ---- workspaces, applications, keys (admin CLI) ------------------------------------ */
sg_err sg_store_workspace_create(sg_store *st, const char *name, json_t **out);
sg_err sg_store_workspace_set_status(sg_store *st, const char *id, const char *status,
                                     json_t **out);
/* monthly_quota < 0: unlimited. */
sg_err sg_store_application_create(sg_store *st, const char *workspace_id, const char *name,
                                   int64_t monthly_quota, json_t **out);
sg_err sg_store_application_set_status(sg_store *st, const char *id, const char *status,
                                       json_t **out);
sg_err sg_store_application_set_quota(sg_store *st, const char *id, int64_t monthly_quota,
                                      json_t **out);
/* Stores only the SHA-256 digest of the secret part; id is the key's public id. */
sg_err sg_store_secret_key_create(sg_store *st, const char *application_id, const char *id,
                                  const uint8_t digest[32]);
sg_err sg_store_secret_key_revoke(sg_store *st, const char *id, json_t **out);

/* The identity behind a secret key on a control-plane request. */
typedef struct {
  char key_id[64];
  char application_id[64];
  char workspace_id[64];
  int64_t key_last_used_s; /* when the key was last recorded as used (0: never) */
} sg_principal;

/* Looks the key up by id and compares digests in constant time. SG_E_INVALID_KEY when
 * the key is unknown, revoked, or its application or workspace is not active. */
sg_err sg_store_authenticate(sg_store *st, const char *key_id, const uint8_t digest[32],
                             sg_principal *out);

/* The edge record of an application {id, workspaceId, status, monthlyQuota} and of a
 * workspace {id, status}, as the admin CLI mirrors them to the edge store. */
sg_err sg_store_application_get(sg_store *st, const char *id, json_t **out);
sg_err sg_store_workspace_get(sg_store *st, const char *id, json_t **out);

/* Publishable keys: only the hex SHA-256 digest of the key is kept. The list must belong
 * to the application's workspace, or be "shared" with an active subscription of it
 * (SG_E_INVALID_LIST otherwise). *out is the edge record
 * {id, applicationId, listId, origins, status}. */
sg_err sg_store_publishable_key_create(sg_store *st, const char *id, const char *application_id,
                                       const char *list_id, const char *digest_hex,
                                       const json_t *origins, json_t **out);
/* Revokes; *out is the edge record with status "revoked" and *digest_hex (65 bytes) the
 * record's edge id. */
sg_err sg_store_publishable_key_revoke(sg_store *st, const char *id, json_t **out,
                                       char digest_hex[65]);

/* Subscriptions: another workspace's "shared" list, held by workspace_id.
 * SG_E_NOT_FOUND for an unknown workspace; SG_E_INVALID_LIST when the list is unknown,
 * not shared, or the workspace's own. *out is the edge record
 * {id, workspaceId, listId, status}. */
sg_err sg_store_subscription_create(sg_store *st, const char *workspace_id, const char *list_id,
                                    json_t **out);
sg_err sg_store_subscription_cancel(sg_store *st, const char *id, json_t **out);

/* Access-token minting: SG_E_OK when every list is owned by the workspace or is a shared
 * list under an active subscription of it; else SG_E_INVALID_LIST. */
sg_err sg_store_lists_mintable(sg_store *st, const char *workspace_id, const char *const *ids,
                               size_t n);

/* Signing keys (Ed25519, libsodium layout). Adding one retires the others (they stay
 * published for verification until every token they signed has expired). */
sg_err sg_store_signing_key_add(sg_store *st, const char *kid, const uint8_t sk[64],
                                const uint8_t pk[32], int64_t now);
/* The newest unretired key; SG_E_TOKEN_MINTING_UNAVAILABLE when there is none. */
sg_err sg_store_signing_key_current(sg_store *st, char kid[64], uint8_t sk[64]);
/* Every key's public record {kid, alg, publicKey (base64url), createdAt, retiredAt|null}
 * as a JSON array. */
sg_err sg_store_signing_keys_public(sg_store *st, json_t **out);

/* ---- lists --------------------------------------------------------------------------- */
sg_err sg_store_list_create(sg_store *st, const char *workspace_id, const char *name,
                            const char *description, json_t **out);
/* SG_E_INVALID_LIST when the list does not exist or belongs to another workspace. */
sg_err sg_store_list_get(sg_store *st, const char *workspace_id, const char *id, json_t **out);
/* Page of lists ordered by displayOrder, slug, id, strictly after `after` (NULL: first
 * page; else a [displayOrder, slug, id] array). *more tells whether another page exists. */
sg_err sg_store_list_page(sg_store *st, const char *workspace_id, size_t limit, const json_t *after,
                          json_t **data, bool *more);
/* Applies validated changes (keys: name, visibility, status, queryPolicy, localePolicy,
 * displayOrder) atomically. The two policies may be partial objects: only the members
 * given are written, merged with the current values inside the transaction, so
 * concurrent PATCHes of different members do not undo each other. When if_match is not
 * NULL it must equal the current ETag (or be "*") inside the same transaction, else
 * SG_E_PRECONDITION_FAILED with *out set to the current list. If the merged result's
 * defaultLocale is not one of its supportedLocales, nothing is written and
 * SG_E_INVALID_REQUEST is returned. */
sg_err sg_store_list_patch(sg_store *st, const char *workspace_id, const char *id,
                           const json_t *changes, const char *if_match, json_t **out);

/* The ETag of a list record (a strong tag over its whole representation) into out[48]. */
void sg_store_list_etag(const json_t *list, char out[48]);

/* ---- items ------------------------------------------------------------------------------ */
/* Creates an item in a list. item is the validated, defaulted item body (keys value,
 * displayValue, description (string or null), aliases, rank, parentId (string or null),
 * locales, displayOrder; see
 * sg__item_validate); the store generates id and createdAt. Errors: SG_E_INVALID_LIST
 * (unknown list or another workspace's), SG_E_LIST_ARCHIVED, SG_E_DUPLICATE_VALUE (the
 * value exists in the list), SG_E_INVALID_REQUEST (parentId names no item of this list).
 * *out is the item in the API's shape (caller owns it). */
sg_err sg_store_item_create(sg_store *st, const char *workspace_id, const char *list_id,
                            const json_t *item, json_t **out);
/* Page of a list's items ordered by displayOrder then id, strictly after `after` (NULL:
 * first page; else a [displayOrder, id] array). SG_E_INVALID_LIST as above. */
sg_err sg_store_item_page(sg_store *st, const char *workspace_id, const char *list_id, size_t limit,
                          const json_t *after, json_t **data, bool *more);

/* Item reads and edits (PATCH / DELETE /lists/{id}/items/{itemId}). SG_E_INVALID_LIST for
 * the list, SG_E_INVALID_ITEM when the list has no such current item. */
sg_err sg_store_item_get(sg_store *st, const char *workspace_id, const char *list_id,
                         const char *item_id, json_t **out);
/* The ETag of an item (a strong tag over its whole representation) into out[48]. */
void sg_store_item_etag(const json_t *item, char out[48]);
/* Replaces the item's fields with item (the validated, defaulted body, as for create) in
 * one transaction. if_match (may be NULL) is compared with the current ETag inside it:
 * SG_E_PRECONDITION_FAILED with *out the current item. Also SG_E_LIST_ARCHIVED,
 * SG_E_DUPLICATE_VALUE, SG_E_INVALID_REQUEST (parentId names no current item of the list,
 * or would make the item its own ancestor). The item keeps its id and createdAt; a
 * change is a new row under the next item clock, so versions taken before never see it.
 * An update that changes nothing writes nothing. */
sg_err sg_store_item_update(sg_store *st, const char *workspace_id, const char *list_id,
                            const char *item_id, const json_t *item, const char *if_match,
                            json_t **out);
/* Deletes the item (ends its current row). SG_E_ITEM_HAS_CHILDREN when a current item
 * names it as parent; SG_E_PRECONDITION_FAILED (with *cur_out the current item) as above. */
sg_err sg_store_item_delete(sg_store *st, const char *workspace_id, const char *list_id,
                            const char *item_id, const char *if_match, json_t **cur_out);
/* Removes up to max history rows of the list that no unresolved or active version can read
 * (ended at or before the oldest queued, staged or active snapshot). *n is how many went. */
sg_err sg_store_items_prune(sg_store *st, const char *list_id, size_t max, size_t *n);

/* ---- bulk import (src/store/sqlite/import.c) ---------------------------------------------
 * An import stages validated rows in a private scratch database (its own file and
 * connection, so staging never takes the store's lock), then applies them to the list in
 * ONE write transaction. Staging files live in <data-dir>/import-tmp/ and are removed when
 * the import ends; sg_store_import_cleanup removes those of a process that died. */
typedef struct sg_store_import sg_store_import;

typedef struct {
  int64_t created, updated, deleted, unchanged;
} sg_import_counts;

sg_err sg_store_import_begin(sg_store *st, sg_store_import **out);
/* Stages the item of line `line` (0-based): item as sg__item_validate returns it, with a
 * NULL parentId; parent_value (may be NULL) names the parent by value. Returns
 * SG_E_DUPLICATE_VALUE when an earlier line staged the same value. */
sg_err sg_store_import_add(sg_store_import *imp, int64_t line, const json_t *item,
                           const char *parent_value);
/* The line of the staged item whose value is `value` (the first holder of a value another
 * line repeated): SG_E_OK with *line set, SG_E_NOT_FOUND, or SG_E_INTERNAL. */
/* `admin … list`: "workspaces", "applications", "secret-keys", "publishable-keys" or
 * "subscriptions" as an array of records (ids and metadata; never a secret or a digest),
 * oldest first, filtered by whichever of application, list and workspace are not NULL and
 * apply. SG_E_NOT_FOUND for an unknown `what`. */
sg_err sg_store_admin_list(sg_store *st, const char *what, const char *application_id,
                           const char *list_id, const char *workspace_id, json_t **out);

sg_err sg_store_import_line_of(sg_store_import *imp, const char *value, int64_t *line);
/* Applies the staged rows to the list in one transaction under one new item clock:
 * items are matched by value (a matched item keeps its id and createdAt and is rewritten
 * only when a field differs); replace also deletes every current item whose value was not
 * imported. parentValue is resolved against the final set (replace: the imported items;
 * append: the imported items, then the list's other items). When some parentValue names
 * no item, nothing changes: SG_E_INVALID_REQUEST with *bad_lines a JSON array of at most
 * max_bad line numbers and *n_bad the total. Also SG_E_INVALID_LIST, SG_E_LIST_ARCHIVED. */
sg_err sg_store_import_apply(sg_store *st, sg_store_import *imp, const char *workspace_id,
                             const char *list_id, bool replace, size_t max_bad,
                             sg_import_counts *counts, json_t **bad_lines, int64_t *n_bad);
/* Ends the import (applied or not): closes and deletes the staging file. NULL is a no-op. */
void sg_store_import_free(sg_store_import *imp);
/* Deletes staging files left by a process that died (call at control-plane start). */
void sg_store_import_cleanup(sg_store *st);

/* ---- export ------------------------------------------------------------------------------
 * A cursor over a list's current items ordered by displayOrder then id: an exact snapshot,
 * copied at open in one short read into a scratch file of the export's own (in the import
 * staging folder), so a slow reader never holds a read transaction on the store (which
 * would keep the WAL from being checkpointed) and never blocks writers. */
typedef struct sg_store_export sg_store_export;
sg_err sg_store_export_open(sg_store *st, const char *workspace_id, const char *list_id,
                            sg_store_export **out);
/* The next item in the API's shape plus "parentValue" (null when none) into *out (caller
 * owns it); *out is NULL at the end. */
sg_err sg_store_export_next(sg_store_export *x, json_t **out);
void sg_store_export_close(sg_store_export *x);

/* ---- synonyms (docs/DESIGN.md §3.4, src/store/synonyms.c) ---------------------------------------
 * A list's synonym sets are one resource, part of its content like its items: a PUT stores
 * the whole array under the list's next item clock (the clock item writes take), so a
 * version's snapshot (its snapshot_seq) names exactly the sets stored when it was taken and
 * a later PUT changes nothing it compiles. The sets are validated above the store
 * (control/synonyms_put.c) and kept as the compact JSON text of the array. */
/* The list's current sets (a JSON array, [] when none were ever stored; caller owns it).
 * SG_E_INVALID_LIST for an unknown list or another workspace's. */
sg_err sg_store_synonyms_get(sg_store *st, const char *workspace_id, const char *list_id,
                             json_t **out);
/* Replaces the list's sets with `sets` (an array) in one transaction. if_match (may be
 * NULL) must name the current ETag (sg_store_synonyms_etag) or be "*", compared inside it:
 * SG_E_PRECONDITION_FAILED with *out the current sets. Also SG_E_INVALID_LIST,
 * SG_E_LIST_ARCHIVED. Sets equal to the current ones write nothing. *out is the stored
 * array. Sets no unresolved version can still read are removed on the way. */
sg_err sg_store_synonyms_put(sg_store *st, const char *workspace_id, const char *list_id,
                             const json_t *sets, const char *if_match, json_t **out);
/* The sets of the snapshot taken at clock snapshot_seq (the last stored at or before it;
 * [] when none): what the publish pipeline compiles. */
sg_err sg_store_snapshot_synonyms(sg_store *st, const char *list_id, int64_t snapshot_seq,
                                  json_t **out);
/* The ETag of the synonyms resource {"synonyms": sets} into out[48] (a strong tag over
 * its representation, like a list's). */
void sg_store_synonyms_etag(const json_t *sets, char out[48]);

/* ---- versions ---------------------------------------------------------------------------- */
/* Version states as stored; the API shows the same words. "queued" covers every version
 * whose publish has not resolved yet (waiting for the worker or being compiled). */
#define SG_VERSION_QUEUED "queued"
#define SG_VERSION_DRAFT "draft"
#define SG_VERSION_STAGED "staged"
#define SG_VERSION_ACTIVE "active"
#define SG_VERSION_SUPERSEDED "superseded"
#define SG_VERSION_FAILED "failed"

/* Allocates the list's next version number and records a version in state "queued"
 * whose content is the list's items as they are now (an immutable snapshot: the list's
 * item clock, under which later edits, deletes and imports stay invisible) and whose
 * locale policy is the list's current one. SG_E_INVALID_LIST, SG_E_LIST_ARCHIVED.
 * *out is the version in the API's shape (caller owns it). */
sg_err sg_store_version_create(sg_store *st, const char *workspace_id, const char *list_id,
                               json_t **out);
/* One version in the API's shape. SG_E_INVALID_LIST for the list; SG_E_NOT_FOUND when
 * the list never allocated that number. */
sg_err sg_store_version_get(sg_store *st, const char *workspace_id, const char *list_id,
                            int64_t number, json_t **out);
/* Page of versions, newest first, strictly older than `after` (NULL: first page; else a
 * [versionNumber] array). */
sg_err sg_store_version_page(sg_store *st, const char *workspace_id, const char *list_id,
                             size_t limit, const json_t *after, json_t **data, bool *more);

/* -- the publish pipeline's side (not API-shaped) -- */

/* A version that still has work to do, as the pipeline sees it. */
typedef struct {
  char list_id[64];
  char workspace_id[64];
  int64_t number;
  char state[16];       /* current state (see SG_VERSION_*) */
  int64_t snapshot_seq; /* the snapshot: the list's item clock when it was taken */
  uint64_t item_count;
  int attempts;          /* pipeline runs started, this one included */
  char content_hash[80]; /* set once staged */
  json_t *locale_policy; /* {defaultLocale, supportedLocales}; owned, free with
                            sg_store_job_clear */
} sg_version_job;

void sg_store_job_clear(sg_version_job *job);

/* Starts a pipeline run without holding a lease: sg_store_version_claim with a lease that
 * has already run out (the attempt is counted). The pipeline itself uses
 * sg_store_version_claim; this remains for callers that need no lease (tests, tools). */
sg_err sg_store_version_begin_run(sg_store *st, const char *list_id, int64_t number,
                                  sg_version_job *job);

/* One item row of a snapshot; every pointer is borrowed for the callback's duration.
 * aliases_json / locales_json / description are NULL when the item has none (a locale's
 * description lives in locales_json). */
typedef struct {
  int64_t seq;
  const char *id, *value, *display_value, *parent_id, *description;
  const char *aliases_json, *locales_json;
  int64_t rank;
} sg_store_item_row;

/* Calls cb for up to `limit` items of the list visible at clock snapshot_seq with
 * seq > after_seq (seq is the row key, not the clock), in
 * seq order, all read in one short transaction (so callers page through a large list
 * without holding the store for long; the snapshot is immutable, so the pages are
 * consistent). *last_seq gets the seq of the last row (after_seq when none) and *n the
 * number of rows. A non-zero return from cb stops the walk with SG_E_INTERNAL. */
sg_err sg_store_snapshot_items(sg_store *st, const char *list_id, int64_t snapshot_seq,
                               int64_t after_seq, size_t limit,
                               int (*cb)(const sg_store_item_row *row, void *ctx), void *ctx,
                               int64_t *last_seq, size_t *n);

/* Transitions; each applies only while the version is still unresolved (queued, or
 * staged for activate/fail) and answers SG_E_PRECONDITION_FAILED otherwise. */
/* queued -> draft, with validation_errors (a JSON array, borrowed). */
sg_err sg_store_version_set_draft(sg_store *st, const char *list_id, int64_t number,
                                  const json_t *validation_errors);
/* queued -> staged, naming the artifact (already durable in the edge store). */
sg_err sg_store_version_set_staged(sg_store *st, const char *list_id, int64_t number,
                                   const char *content_hash);
/* queued|staged -> failed, with a short machine-readable reason. */
sg_err sg_store_version_set_failed(sg_store *st, const char *list_id, int64_t number,
                                   const char *reason);
/* Rollback (docs/DESIGN.md §10): makes superseded version `number` of list_id active again, in
 * one transaction: the version that was active becomes superseded, this one gets
 * activatedAt now, and the list's active version and contentHash move to it (through the
 * edge outbox like any activation). if_match (may be NULL) is compared with the list's
 * ETag inside it. SG_E_INVALID_LIST (the list), SG_E_NOT_FOUND (the number was never
 * allocated), SG_E_PRECONDITION_FAILED (*list_out: the current list),
 * SG_E_LIST_ARCHIVED, SG_E_PUBLISH_IN_PROGRESS (a version of the list is queued or
 * staged), SG_E_VERSION_NOT_ACTIVATABLE (draft, queued, staged or failed). An active
 * version answers SG_E_OK with *changed false and nothing written. *content_hash gets the
 * version's artifact hash (the caller checks it is still kept first: this op does not
 * look at artifacts). *list_out (may be NULL) is the list after. */
sg_err sg_store_version_reactivate(sg_store *st, const char *workspace_id, const char *list_id,
                                   int64_t number, const char *if_match, bool *changed,
                                   json_t **list_out);
/* The content hash of version number of list_id ("" when it has none): for the artifact
 * check before a reactivation. Same errors as sg_store_version_get. */
sg_err sg_store_version_hash(sg_store *st, const char *workspace_id, const char *list_id,
                             int64_t number, char hash[80], char state[16]);
/* staged -> active in ONE transaction: the list's active pointer (activeVersionNumber,
 * activeContentHash) moves to this version, the previous active version becomes
 * superseded, this one gets activatedAt. A version older than the list's current active
 * one is never activated (it goes straight to superseded; *activated is false), so
 * pointers only move forward. *list_out (may be NULL) is the list after the change. */
sg_err sg_store_version_activate(sg_store *st, const char *workspace_id, const char *list_id,
                                 int64_t number, bool *activated, json_t **list_out);

/* A reference to a version that needs the pipeline. */
typedef struct {
  char list_id[64];
  char workspace_id[64];
  int64_t number;
} sg_version_ref;

/* The publish queue across processes (docs/PUBLISHING.md). A version is claimed with a
 * lease held by this process until lease_ms from now; the worker renews it. */
/* Marks a queued version whose POST answered 202: only such a version may be superseded
 * without a compile by a newer version of its list. */
sg_err sg_store_version_set_async(sg_store *st, const char *list_id, int64_t number);
/* Claims a version for one pipeline run, in one transaction: when it is unresolved and
 * not leased by another live process, takes the lease and counts the attempt. A queued
 * async version with a newer queued, staged or active version of the list goes straight
 * to superseded (job->state says so; no attempt). On SG_E_OK *job is filled (job->state
 * tells whether there is anything to do). SG_E_PUBLISH_IN_PROGRESS when another process
 * holds the lease; SG_E_NOT_FOUND when there is no such version. */
sg_err sg_store_version_claim(sg_store *st, const char *list_id, int64_t number, int64_t lease_ms,
                              sg_version_job *job);
/* Extends every lease this process holds to lease_ms from now. */
sg_err sg_store_version_leases_renew(sg_store *st, int64_t lease_ms);
/* Gives the version's lease back (after a run, whatever it reached). */
sg_err sg_store_version_release(sg_store *st, const char *list_id, int64_t number);
/* The next version the worker should claim, fairly: the oldest claimable version of the
 * first workspace after after_workspace (in id order, wrapping round), so one
 * workspace's backlog waits its turn. Claimable: unresolved, not leased by a live process,
 * and either async, staged, or older than fresh_s seconds (a synchronous publish is run
 * by its own request; the age rule picks it up if that process died). *found is false
 * when there is none. */
sg_err sg_store_version_next(sg_store *st, const char *after_workspace, int64_t fresh_s,
                             sg_version_ref *out, bool *found);

/* Up to max unresolved (queued or staged) versions, oldest first, into out; *n is how
 * many. list_id (may be NULL: every list) and before (> 0: only numbers below it) narrow
 * the search. */
sg_err sg_store_versions_pending(sg_store *st, const char *list_id, int64_t before,
                                 sg_version_ref *out, size_t max, size_t *n);

/* ---- the background recompile (docs/UPGRADING.md) ---- */
/* An active version as the recompile sees it. */
typedef struct {
  char list_id[64];
  char workspace_id[64];
  int64_t number;
  char content_hash[80]; /* its artifact, "sha256:<hex>" */
} sg_active_version;
/* Up to max active versions of lists that are not archived, in list id order, of lists
 * whose id sorts strictly after `after` ("" from the start), into out; *n is how many. */
sg_err sg_store_active_versions(sg_store *st, const char *after, sg_active_version *out, size_t max,
                                size_t *n);
/* Records a new queued version of list_id whose content is version `from`'s own snapshot
 * (its snapshot_seq, item count and locale policy), not the list's current items and
 * synonym sets: the same rules compiled again into the current artifact format. In one
 * transaction, and only while `from` is the list's active version and no version of the
 * list is unresolved, so that processes racing for the same list make one version:
 * SG_E_PUBLISH_IN_PROGRESS when a version is queued or staged, SG_E_VERSION_NOT_ACTIVATABLE
 * when `from` is not (or no longer) the active version, SG_E_LIST_ARCHIVED,
 * SG_E_VERSION_NOT_AVAILABLE when the snapshot can no longer be read whole (history that a
 * release before 0.3 pruned once nothing unresolved needed it: fewer items visible at it
 * than the version counted, or synonym sets stored since and none at or before it).
 * *out is the new version in the API's shape (caller owns it). */
sg_err sg_store_version_recompile(sg_store *st, const char *list_id, int64_t from, json_t **out);

/* The content hashes ("sha256:<hex>") every artifact that must be kept is named by: the
 * artifact of each unresolved or active version, and of each list's previous active
 * version (for rollback). *out is a JSON array of strings (caller owns it). */
sg_err sg_store_artifacts_in_use(sg_store *st, json_t **out);

/* ---- idempotency ----------------------------------------------------------------------- */
typedef enum {
  SG_IDEM_PROCEED,   /* first use: the caller runs the request, then calls _finish */
  SG_IDEM_REPLAY,    /* done before: *status and *body (caller frees) hold the answer */
  SG_IDEM_REUSED,    /* same key, different method/path/body */
  SG_IDEM_IN_FLIGHT, /* the first call is still running */
} sg_idem_state;

sg_err sg_store_idem_begin(sg_store *st, const char *workspace_id, const char *key,
                           const char *method, const char *path, const uint8_t body_hash[32],
                           sg_idem_state *state, int *status, char **body, char **headers);
/* Records the answer; a 5xx or 429 answer forgets the key instead. headers is a JSON
 * object of response headers to replay (may be NULL). */
sg_err sg_store_idem_finish(sg_store *st, const char *workspace_id, const char *key, int status,
                            const char *body, const char *headers);

/* ---- edge outbox ------------------------------------------------------------------------
 * Every change to something the edge store mirrors (a list's served fields or active
 * version, a workspace, application, publishable key, subscription or signing key) bumps
 * that edge record's generation `want` in the same transaction as the change, so the
 * store always knows which edge records may be stale. An edge writer reads the record
 * with sg_store_edge_source, writes it, then confirms with sg_store_edge_done; a record
 * is dirty ("pending") while want > done. kind is the edge folder name
 * (sg_edge_kind_name: "lists", "keys", …) and id the edge record id. */
typedef struct {
  char kind[24];
  char id[129];
  int64_t gen;
} sg_edge_dirty;

/* Up to max dirty records into out; *n is how many. */
sg_err sg_store_edge_dirty(sg_store *st, sg_edge_dirty *out, size_t max, size_t *n);
/* What the edge record (kind, id) should say, and the generation it answers for (read
 * first, in the same snapshot). SG_E_NOT_FOUND when the record should not exist. The
 * shapes: lists: the API list plus "workspaceId"; apps, workspaces, keys, subscriptions:
 * the edge record itself; signing-keys: the public record plus "retiredAtUnix". */
sg_err sg_store_edge_source(sg_store *st, const char *kind, const char *id, int64_t *gen,
                            json_t **out);
/* Confirms that the edge holds generation gen of (kind, id), written at edge revision
 * revision. Never moves backwards. */
sg_err sg_store_edge_done(sg_store *st, const char *kind, const char *id, int64_t gen,
                          int64_t revision);
/* The record's generations and its last confirmed edge revision (all 0 when unknown). */
sg_err sg_store_edge_state(sg_store *st, const char *kind, const char *id, int64_t *want,
                           int64_t *done, int64_t *revision);

/* ---- backups (docs/STORE.md, "Backups") -------------------------------------------------
 * A backup of an SQLite store is one file: a consistent online copy of the database (the
 * writes committed before it began; writers go on meanwhile) with the bytes of every
 * artifact that copy names embedded, since on SQLite the edge directory is their only
 * copy. fetch(hash, &data, &len, ctx) hands over an artifact's bytes (malloc'd; 0) or
 * fails (-1 with errno: the backup fails). path must not exist; it is written under a
 * temporary name and renamed when complete. *summary: {backup, bytes, artifacts,
 * artifactBytes, seconds}. SG_E_INVALID_REQUEST (with err) for a backend whose own tools
 * back it up (PostgreSQL: pg_dump) or a path that exists. */
typedef int (*sg_store_artifact_fetch)(const char *hash, void **data, size_t *len, void *ctx);
sg_err sg_store_backup(sg_store *st, const char *path, sg_store_artifact_fetch fetch, void *ctx,
                       json_t **summary, char *err, size_t errsz);
/* Restores a backup into data_dir, which must hold no store: each embedded artifact is
 * checked against its hash and handed to put (write it to the edge), then the database is
 * put in place (last, by rename). *summary: {restored, dataDir, artifacts}. */
typedef int (*sg_store_artifact_sink)(const char *hash, const void *data, size_t len, void *ctx);
sg_err sg_store_restore_sqlite(const char *from, const char *data_dir, sg_store_artifact_sink put,
                               void *ctx, json_t **summary, char *err, size_t errsz);

/* The edge guard (docs/EDGE.md, "The staleness guard"): one row the control plane's guard
 * keeps beside the outbox. epoch counts the full rewrites of the edge; heartbeat_ms is the
 * newest heartbeat written to the edge in that epoch (0 while its rewrite is under way);
 * confirmed_revision the highest edge revision any confirmed record write returned;
 * now_ms the database's clock (every host of a fleet reads one clock). */
typedef struct {
  uint64_t epoch;
  int64_t heartbeat_ms;
  int64_t confirmed_revision;
  int64_t now_ms;
} sg_edge_guard;
sg_err sg_store_edge_guard_get(sg_store *st, sg_edge_guard *out);
/* Starts a rewrite: epoch := max(epoch, above) + 1, heartbeat := 0, atomically, so two
 * processes that start one at once get two epochs. *epoch gets the new one. */
sg_err sg_store_edge_guard_begin(sg_store *st, uint64_t above, uint64_t *epoch);
/* Records that the edge carries a heartbeat of epoch at heartbeat_ms (never lowers it;
 * nothing happens when the epoch moved on meanwhile). */
sg_err sg_store_edge_guard_beat(sg_store *st, uint64_t epoch, int64_t heartbeat_ms);

/* Every record the edge outbox knows (each (kind, id) ever mirrored, whether dirty or
 * not) after the cursor (after_kind, after_id: "" for the first page), in (kind, id)
 * order, up to max into out; *n is how many (fewer than max: the last page). gen is the
 * record's `want` generation. `admin edge rebuild` walks them to rewrite the whole edge. */
sg_err sg_store_edge_records(sg_store *st, const char *after_kind, const char *after_id,
                             sg_edge_dirty *out, size_t max, size_t *n);

/* ---- durable artifact copies ------------------------------------------------------------
 * A backend that keeps its own copy of every artifact (PostgreSQL: the edge is then a
 * projection that `admin edge rebuild` can restore) implements these; for one that does
 * not (SQLite: the data dir's edge directory is the durable copy) sg_store_keeps_artifacts
 * is false and the calls answer SG_E_INTERNAL. content_hash is "sha256:<64 hex>". */
bool sg_store_keeps_artifacts(sg_store *st);
/* Stores the bytes durably (committed when this returns SG_E_OK). Idempotent: a copy
 * already stored under the hash is kept and its write time refreshed, so garbage
 * collection treats it as new (the publish pipeline calls this before the version can
 * go staged). */
sg_err sg_store_artifact_put(sg_store *st, const char *content_hash, const void *data, size_t len);
/* Streams a stored copy to cb in order, chunk by chunk (each valid only during the call;
 * a non-zero return stops the read: SG_E_INTERNAL). *size (may be NULL) gets the total
 * length first. SG_E_NOT_FOUND when no copy is stored. The bytes are as stored: the
 * caller verifies them against the hash before use. */
typedef int (*sg_store_chunk_cb)(const void *data, size_t len, void *ctx);
sg_err sg_store_artifact_get(sg_store *st, const char *content_hash, uint64_t *size,
                             sg_store_chunk_cb cb, void *ctx);
/* Deletes a stored copy (SG_E_NOT_FOUND when absent). The caller makes sure nothing names it. */
sg_err sg_store_artifact_delete(sg_store *st, const char *content_hash);
/* Calls cb with the bare hex hash and the write time (Unix seconds) of every stored copy,
 * as sg_edge_artifacts does for the edge (garbage collection). */
sg_err sg_store_artifacts(sg_store *st, int (*cb)(const char *hex, int64_t written_at, void *ctx),
                          void *ctx);

/* ---- maintenance ------------------------------------------------------------------------ */
/* Checkpoints the WAL into the database and truncates it, without waiting: when a reader
 * or writer is busy it does nothing (SG_E_OK) and the next call tries again. Call it
 * periodically; it keeps the WAL file small after bursts of writes. */
sg_err sg_store_checkpoint(sg_store *st);

/* ---- settings ---------------------------------------------------------------------------- */
/* A 32-byte secret created on first use and kept in the store (cursor signing). */
sg_err sg_store_secret(sg_store *st, const char *name, uint8_t out[32]);

/* ---- selection events (the fleet's drain, docs/STORE.md) -------------------------------- */
/* One selection report as a runtime recorded it (the event line of state/events.c).
 * query may be NULL; every other string is set. */
typedef struct {
  const char *selection_id, *query_request_id, *list_id, *item_id, *query, *application_id, *key_id;
  int64_t ts_ms, position;
} sg_selection_event;

/* Stores n events in one transaction. Idempotent: an event already stored (same
 * selectionId and tsMs, as when the drain delivers an event again after a crash) is
 * skipped, so the drain may acknowledge its batch once this returns SG_E_OK. */
sg_err sg_store_selections_add(sg_store *st, const sg_selection_event *ev, size_t n);
/* Selection analytics of one list since since_ms: *out = {"perDay": {"YYYY-MM-DD" (UTC):
 * count, …} (days without events absent), "topItems": [{"itemId", "selections"}, …]}
 * (at most `top`, most selected first, ties by itemId). */
sg_err sg_store_selection_stats(sg_store *st, const char *list_id, int64_t since_ms, size_t top,
                                json_t **out);

/* ---- health ------------------------------------------------------------------------------ */
/* The number of versions waiting for the publish pipeline (queued or staged). One cheap
 * indexed query: /readyz uses it to check that the store answers, /metrics as the publish
 * queue depth. */
sg_err sg_store_queue_depth(sg_store *st, int64_t *n);

/* Whether the backend announces publish work across processes (PostgreSQL's NOTIFY);
 * without it the publish worker polls. */
bool sg_store_announces_work(const sg_store *st);
/* Waits up to timeout_ms for an announcement of publish work: SG_E_OK when one came,
 * SG_E_NOT_FOUND at the timeout, SG_E_UNAVAILABLE when the database cannot be reached. */
sg_err sg_store_wait_work(sg_store *st, int timeout_ms);

/* ---- search analytics (docs/DESIGN.md §9; docs/ANALYTICS.md) ------------------------- */
/* One row of a runtime's analytics shipment (state/state.h, sg_analytics_collect): kind
 * 'h' (list, hour: count = queries, no_result), 'q' (list, hour, q: count, no_result),
 * 's' (list, hour, q or "", item_id, position: count = selections), 'r' (list, hour, q,
 * raw: count). hour = Unix seconds / 3600. Strings are borrowed. */
typedef struct {
  char kind;
  const char *list_id, *q, *item_id, *raw;
  int64_t hour, position, count, no_result;
} sg_analytics_row;
#define SG_STORE_ANALYTICS_Q_CAP 10000
/* Adds a shipment's rows in one transaction, once per shipment_id: a shipment delivered
 * again (a drain that died before acknowledging it) changes nothing. A q new to a list
 * and hour that already holds SG_STORE_ANALYTICS_Q_CAP distinct q takes the place of
 * the least counted one (ties: the bytewise greatest q) and starts at its counts plus
 * its own (weighted Space-Saving: over by at most hour total / cap). */
sg_err sg_store_analytics_add(sg_store *st, const char *shipment_id, int64_t now_hour,
                              const sg_analytics_row *rows, size_t n);
/* The analytics of list_id over hours [from_hour, to_hour): *out = {"days": [[day
 * (Unix days), queries, noResult]…], "selectionDays": [[day, selections]…],
 * "topQueries": [{"q","count","selections"}…], "topNoResultQueries": [{"q","count"}…],
 * "topItems": [{"itemId","selections","positionSum"}…]}: at most top entries each,
 * ordered as section 9 says (count descending, ties bytewise ascending). */
sg_err sg_store_analytics_read(sg_store *st, const char *list_id, int64_t from_hour,
                               int64_t to_hour, size_t top, json_t **out);
/* Retention: deletes analytics of hours before before_hour, shipment ids recorded
 * before it, and drained selection events before before_ms. */
sg_err sg_store_analytics_expire(sg_store *st, int64_t before_hour, int64_t before_ms);
/* Query suggestions (docs/DESIGN.md §9, control/query_suggestions.c): the normalised
 * queries (never "") of list_id's selection reports over hours [from_hour, to_hour) that
 * have at least min_selections (>= 1) selections there, and the raw forms reported with
 * them over the same hours: *out = {"queries": [[q, selections], ...], "forms": [[q, raw,
 * count], ...]} in no particular order (the caller sorts bytewise; owns *out). */
sg_err sg_store_analytics_suggest(sg_store *st, const char *list_id, int64_t from_hour,
                                  int64_t to_hour, int64_t min_selections, json_t **out);

#endif
