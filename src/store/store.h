/*
 * The relational store behind the control plane and the admin CLI.
 *
 * One interface, two backends: SQLite (embedded default, src/store/sqlite/) and
 * PostgreSQL (scale-out, later). Every function is one atomic operation (its own
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

/* spec: a data directory (SQLite file <dir>/suggestd.db) or "postgres://…" (later). */
int sg_store_open(const char *spec, sg_store **out, char *err, size_t errsz);
void sg_store_close(sg_store *st);

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

/* ---- lists --------------------------------------------------------------------------- */
sg_err sg_store_list_create(sg_store *st, const char *workspace_id, const char *name,
                            const char *description, json_t **out);
/* SG_E_INVALID_LIST when the list does not exist or belongs to another workspace. */
sg_err sg_store_list_get(sg_store *st, const char *workspace_id, const char *id, json_t **out);
/* Page of lists ordered by displayOrder, slug, id, strictly after `after` (NULL: first
 * page; else a [displayOrder, slug, id] array). *more tells whether another page exists. */
sg_err sg_store_list_page(sg_store *st, const char *workspace_id, size_t limit,
                          const json_t *after, json_t **data, bool *more);
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

/* ---- settings ---------------------------------------------------------------------------- */
/* A 32-byte secret created on first use and kept in the store (cursor signing). */
sg_err sg_store_secret(sg_store *st, const char *name, uint8_t out[32]);

#endif
