/*
 * The store's side of the dashboard (docs/DESIGN.md §7): members, sign-in sessions, the audit
 * log, and the reads the dashboard's applications area needs (applications and keys of a
 * workspace, never a secret). Same rules as store.h: each call is one transaction and
 * returns an sg_err; records come back in the API's shape (caller owns them).
 *
 * Secrets never reach the store in the clear: a member's password only as its Argon2id
 * string (libsodium crypto_pwhash_str), a session only as the SHA-256 of its cookie.
 */
#ifndef SG_STORE_MEMBERS_H
#define SG_STORE_MEMBERS_H

#include "store/store.h"

/* ---- members ---------------------------------------------------------------------------- */
/* Roles, weakest first; each includes the rights of the ones before it. */
typedef enum {
  SG_ROLE_NONE = 0,
  SG_ROLE_VIEWER,
  SG_ROLE_DATA_STEWARD,
  SG_ROLE_ADMIN,
  SG_ROLE_OWNER,
} sg_role;

/* "viewer" -> SG_ROLE_VIEWER …; SG_ROLE_NONE for anything else. */
sg_role sg_role_parse(const char *s);
/* The wire name of a role ("viewer", …); "none" for SG_ROLE_NONE. */
const char *sg_role_name(sg_role r);

/* A member as the session middleware sees it. */
typedef struct {
  char id[64];
  char workspace_id[64];
  char email[256];
  sg_role role;
} sg_member;

/* An email may name active members in at most this many workspaces (each with its own
 * password): sign-in verifies the password against every one of them. */
#define SG_MEMBERSHIPS_PER_EMAIL 20

/* Creates an active member. email must already be validated and lower-cased;
 * password_hash is a crypto_pwhash_str string. SG_E_NOT_FOUND for an unknown workspace,
 * SG_E_MEMBER_EXISTS when an active member of this workspace has this email (other
 * workspaces never matter, except that SG_E_EMAIL_MEMBERSHIP_LIMIT answers when the email
 * already names SG_MEMBERSHIPS_PER_EMAIL active members), SG_E_MEMBER_LIMIT past the
 * workspace's member limit. *out is the member record {id, workspaceId, email, role,
 * status, createdAt}. */
sg_err sg_store_member_create(sg_store *st, const char *workspace_id, const char *email,
                              sg_role role, const char *password_hash, json_t **out);

/* One member a sign-in may open, with its password hash (a crypto_pwhash_str string) and
 * its workspace's name (its first 100 characters). */
typedef struct {
  sg_member m;
  char hash[128];
  char workspace_name[404];
} sg_signin_candidate;

/* For sign-in: the active members with this (lower-cased) email in active workspaces,
 * oldest first, at most SG_MEMBERSHIPS_PER_EMAIL, into out; *n is how many (0: none, still
 * SG_E_OK). */
sg_err sg_store_member_for_signin(sg_store *st, const char *email,
                                  sg_signin_candidate out[SG_MEMBERSHIPS_PER_EMAIL], size_t *n);
/* A workspace's members (records as above), ordered by email; at most 1000. */
sg_err sg_store_member_list(sg_store *st, const char *workspace_id, json_t **out);
/* One member record of the workspace; SG_E_NOT_FOUND when absent or another's. */
sg_err sg_store_member_get(sg_store *st, const char *workspace_id, const char *id, json_t **out);
/* Sets a member's role. SG_E_NOT_FOUND as above; SG_E_LAST_OWNER when it would leave the
 * workspace without an active owner. *out is the updated record. */
sg_err sg_store_member_set_role(sg_store *st, const char *workspace_id, const char *id,
                                sg_role role, json_t **out);
/* Disables a member ("removed": it can no longer sign in) and deletes its sessions, in one
 * transaction. workspace_id NULL: any workspace (admin CLI). SG_E_LAST_OWNER as above. */
sg_err sg_store_member_disable(sg_store *st, const char *workspace_id, const char *id,
                               json_t **out);
/* Replaces a member's password hash and deletes its other sessions (all but keep_digest,
 * which may be NULL). */
sg_err sg_store_member_set_password(sg_store *st, const char *id, const char *password_hash,
                                    const uint8_t *keep_digest);

/* ---- sessions ------------------------------------------------------------------------------ */
/* Records a session under the SHA-256 of its cookie value, and deletes every session
 * last seen before stale_ms (idle-expired sessions nobody presents again). Times are Unix
 * milliseconds. */
sg_err sg_store_session_create(sg_store *st, const uint8_t digest[32], const char *member_id,
                               int64_t now_ms, int64_t stale_ms);
/* Resolves a session digest: SG_E_OK with *member filled and *last_seen_ms when the
 * session exists, its member is active and its workspace active, and it was seen within
 * idle_ms of now_ms; SG_E_NOT_FOUND otherwise (an idle-expired session is deleted). */
sg_err sg_store_session_lookup(sg_store *st, const uint8_t digest[32], int64_t now_ms,
                               int64_t idle_ms, sg_member *member, int64_t *last_seen_ms);
/* Moves the session's last-seen time forward (the sliding idle window). */
sg_err sg_store_session_touch(sg_store *st, const uint8_t digest[32], int64_t now_ms);
/* Deletes one session (sign-out). */
sg_err sg_store_session_delete(sg_store *st, const uint8_t digest[32]);
/* Deletes every session of a member (sign out everywhere); *n is how many went. */
sg_err sg_store_session_delete_all(sg_store *st, const char *member_id, int64_t *n);

/* ---- audit log ---------------------------------------------------------------------------- */
/* One audit entry. actor is "mbr_…" (with its email in actor_email), or "cli" for the admin
 * CLI; workspace_id may be NULL (an admin command that names none); target, request_id and
 * details (a JSON object, borrowed) may be NULL. Never pass a secret in any of them. */
typedef struct {
  const char *workspace_id;
  const char *actor;
  const char *actor_email;
  const char *action;
  const char *target;
  const char *request_id;
  int status;
  const json_t *details;
} sg_audit_entry;

sg_err sg_store_audit_add(sg_store *st, const sg_audit_entry *e);
/* Page of a workspace's audit log, newest first, strictly older than `after` (NULL: first
 * page; else a [seq] array). Records {seq, at, actor, actorEmail, action, target,
 * requestId, status, details}. */
sg_err sg_store_audit_page(sg_store *st, const char *workspace_id, size_t limit,
                           const json_t *after, json_t **data, bool *more);

/* ---- the applications area -------------------------------------------------------------- */
/* A workspace's applications {id, name, status, monthlyQuota, createdAt}, oldest first;
 * at most 1000. */
sg_err sg_store_application_list(sg_store *st, const char *workspace_id, json_t **out);
/* Page of a workspace's applications, oldest first, after the application named by
 * `after` (NULL: first page; else an [id] array; an id of no application of the workspace
 * gives an empty page). Records as sg_store_application_list's. */
sg_err sg_store_application_page(sg_store *st, const char *workspace_id, size_t limit,
                                 const json_t *after, json_t **data, bool *more);
/* SG_E_OK when application_id belongs to workspace_id, else SG_E_NOT_FOUND. */
sg_err sg_store_application_in_workspace(sg_store *st, const char *workspace_id,
                                         const char *application_id);
/* An application's secret keys {id, status, createdAt, lastUsedAt, revokedAt}, newest
 * first; never the digest. */
sg_err sg_store_secret_key_list(sg_store *st, const char *application_id, json_t **out);
/* The workspace owning a secret key / publishable key (into ws[64]); SG_E_NOT_FOUND. */
sg_err sg_store_secret_key_workspace(sg_store *st, const char *key_id, char ws[64]);
sg_err sg_store_publishable_key_workspace(sg_store *st, const char *key_id, char ws[64]);
/* Records a secret key's use (lastUsedAt, seconds). */
sg_err sg_store_secret_key_touch(sg_store *st, const char *key_id, int64_t now_s);
/* An application's publishable keys {id, listId, origins, status, createdAt}, newest
 * first; never the key or its digest. */
sg_err sg_store_publishable_key_list(sg_store *st, const char *application_id, json_t **out);

/* ---- item search ------------------------------------------------------------------------ */
/* A page of the list's current items whose value starts with prefix (ASCII letters in
 * either case), ordered by value (ASCII case ignored) then id, strictly after `after`
 * (NULL: the first page; else a [value, id] array). SG_E_INVALID_LIST as
 * sg_store_item_page. Uses an index, so it is fast on a list of millions of items. */
sg_err sg_store_item_search(sg_store *st, const char *workspace_id, const char *list_id,
                            const char *prefix, size_t limit, const json_t *after, json_t **data,
                            bool *more);

#endif
