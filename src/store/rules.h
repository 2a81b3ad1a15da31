/*
 * Store rules that do not depend on the engine, shared by every backend (above the seam).
 */
#ifndef SG_STORE_RULES_H
#define SG_STORE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* The base slug of a list name: ASCII letters and digits lower-cased (after the search
 * normalisation folds case and strips marks), every other run becomes '-', at most 60
 * characters; "list" when nothing is left. outsz >= 61. */
void sg__store_slug_base(const char *name, char *out, size_t outsz);
/* The attempt-th candidate slug for base (attempt 1: base itself, then base-2, … up to
 * attempt 100; past that base-<8 random hex>) into out (outsz >= 80). A backend tries
 * them in order until one is free in the workspace. */
#define SG_STORE_SLUG_ATTEMPTS 120
void sg__store_slug_candidate(const char *base, int attempt, char *out, size_t outsz);

/* The shared-list rule: workspace_id may use a list (name it in a publishable key or an
 * access token) when it owns the list (owner_workspace_id), or when the list's visibility
 * is "shared" and workspace_id holds an active subscription to it (subscribed). */
bool sg__store_list_usable(const char *workspace_id, const char *owner_workspace_id,
                           const char *visibility, bool subscribed);
/* A workspace may subscribe to a list that is "shared" and not its own. */
bool sg__store_list_subscribable(const char *workspace_id, const char *owner_workspace_id,
                                 const char *visibility);

/* The invariants of a list after a PATCH merged its policies: the default locale is one
 * of the supported ones, and minCharsOneTypo <= minCharsTwoTypos. */
bool sg__store_list_policies_valid(const json_t *list);
/* The LIKE pattern matching strings that start with prefix ('%', '_' and '\\' escaped
 * with '\\', then '%'); the caller frees it. NULL when out of memory. */
char *sg__store_like_prefix(const char *prefix);
/* Compact JSON text of v in its stored form, or NULL when v is absent, null or empty; the
 * caller frees it. Every backend stores aliases and locales this way, so an unchanged
 * item compares equal byte for byte. */
char *sg__store_json_text(const json_t *v);

/* ---- records (records.c): the JSON of edge records, the same from every backend ------ */
/* {id, status} (status omitted when NULL): a workspace, a secret key. */
json_t *sg__store_simple_record(const char *id, const char *status);
/* {id, workspaceId, status, monthlyQuota (null: unlimited)}. */
json_t *sg__store_app_record(const char *id, const char *workspace_id, const char *status,
                             bool has_quota, int64_t monthly_quota);
/* {id, applicationId, listId, origins, status}; takes the reference to origins (NULL: []). */
json_t *sg__store_key_record(const char *id, const char *application_id, const char *list_id,
                             json_t *origins, const char *status);
/* {id, workspaceId, listId, status}. */
json_t *sg__store_subscription_record(const char *id, const char *workspace_id, const char *list_id,
                                      const char *status);
/* {kid, alg, publicKey (base64url), createdAt, retiredAt|null, retiredAtUnix (0: none)}. */
json_t *sg__store_signing_key_record(const char *kid, const uint8_t public_key[32],
                                     int64_t created_at, bool retired, int64_t retired_at);

/* The list columns every backend selects, in the order sg__store_list_row is filled. */
#define SG__STORE_LIST_COLS                                                                        \
  "id, name, description, slug, visibility, status, min_query_chars, debounce_ms,"                 \
  " default_locale, supported_locales, display_order, active_version_number, created_at,"          \
  " updated_at, workspace_id, active_content_hash, typo_enabled, typo_min_one, typo_min_two"
/* The item columns, in the order sg__store_item_row is filled. */
#define SG__STORE_ITEM_COLS                                                                        \
  "id, value, display_value, aliases, rank, parent_id, locales, display_order, created_at,"        \
  " description"

/* A list row in plain C values (strings NULL for SQL NULL), as every backend selects it. */
typedef struct {
  const char *id, *name, *description, *slug, *visibility, *status, *default_locale,
      *supported_locales /* JSON text */, *active_content_hash;
  int64_t min_query_chars, debounce_ms, display_order, created_at, updated_at;
  bool typo_enabled;
  int64_t typo_min_one, typo_min_two;
  bool has_active_version;
  int64_t active_version_number;
} sg__store_list_row;
/* The API representation of a list (the same bytes from every backend). */
json_t *sg__store_list_record(const sg__store_list_row *r);

/* An item row: aliases and locales are the stored compact JSON texts (NULL: empty);
 * description is NULL when the item has none. */
typedef struct {
  const char *id, *value, *display_value, *aliases, *parent_id, *locales, *description;
  int64_t rank, display_order, created_at;
} sg__store_item_row;
/* The API representation of an item. */
json_t *sg__store_item_record(const sg__store_item_row *r);

/* The version columns, in the order sg__store_version_row is filled. */
#define SG__STORE_VERSION_COLS                                                                     \
  "version_number, state, content_hash, item_count, validation_errors, created_at,"                \
  " activated_at, failure_reason"
/* A version row (strings NULL for SQL NULL). */
typedef struct {
  int64_t number, item_count, created_at, activated_at;
  bool has_activated_at;
  const char *state, *content_hash, *validation_errors /* JSON text */, *failure_reason;
} sg__store_version_row;
/* The API representation of a version. */
json_t *sg__store_version_record(const sg__store_version_row *r);

/* {id, workspaceId, email, role, status, createdAt}: a dashboard member. */
json_t *sg__store_member_record(const char *id, const char *workspace_id, const char *email,
                                const char *role, const char *status, int64_t created_at);
/* An audit row (strings NULL for SQL NULL; status 0: an admin command). */
typedef struct {
  int64_t seq, at_ms;
  int status;
  const char *actor, *actor_email, *action, *target, *request_id, *details /* JSON text */;
} sg__store_audit_row;
json_t *sg__store_audit_record(const sg__store_audit_row *r);

#endif
