/*
 * The JSON of store records whose shape does not depend on the engine: the edge records
 * of workspaces, applications, publishable keys, subscriptions and signing keys. Every
 * backend builds them here, so the admin CLI's answers and the edge writer's copies of
 * one record cannot drift apart. Lists and items are built here too, from plain C values,
 * so that every backend answers the API with the same bytes.
 */
#include <sodium.h>
#include <string.h>

#include "common/util.h"
#include "store/rules.h"
#include "store/store.h"

json_t *sg__store_simple_record(const char *id, const char *status) {
  json_t *o = json_object();
  json_object_set_new(o, "id", json_string(id));
  if (status) json_object_set_new(o, "status", json_string(status));
  return o;
}

json_t *sg__store_app_record(const char *id, const char *workspace_id, const char *status,
                             bool has_quota, int64_t monthly_quota) {
  return json_pack("{s:s,s:s,s:s,s:o}", "id", id, "workspaceId", workspace_id, "status", status,
                   "monthlyQuota", has_quota ? json_integer(monthly_quota) : json_null());
}

json_t *sg__store_key_record(const char *id, const char *application_id, const char *list_id,
                             json_t *origins, const char *status) {
  return json_pack("{s:s,s:s,s:s,s:o,s:s}", "id", id, "applicationId", application_id, "listId",
                   list_id, "origins", origins ? origins : json_array(), "status", status);
}

json_t *sg__store_subscription_record(const char *id, const char *workspace_id, const char *list_id,
                                      const char *status) {
  return json_pack("{s:s,s:s,s:s,s:s}", "id", id, "workspaceId", workspace_id, "listId", list_id,
                   "status", status);
}

json_t *sg__store_signing_key_record(const char *kid, const uint8_t public_key[32],
                                     int64_t created_at, bool retired, int64_t retired_at) {
  char b64[64], created[32], retired_s[32];
  sodium_bin2base64(b64, sizeof b64, public_key, 32, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  sg_rfc3339(created_at, created);
  if (retired) sg_rfc3339(retired_at, retired_s);
  return json_pack("{s:s,s:s,s:s,s:s,s:o,s:I}", "kid", kid, "alg", "EdDSA", "publicKey", b64,
                   "createdAt", created, "retiredAt",
                   retired ? json_string(retired_s) : json_null(), "retiredAtUnix",
                   (json_int_t)(retired ? retired_at : 0));
}

static json_t *ts_json(int64_t unix_s) {
  char buf[32];
  sg_rfc3339(unix_s, buf);
  return json_string(buf);
}

json_t *sg__store_list_record(const sg__store_list_row *r) {
  json_t *o = json_object();
  json_object_set_new(o, "id", json_string(r->id));
  json_object_set_new(o, "name", json_string(r->name));
  json_object_set_new(o, "description", r->description ? json_string(r->description) : json_null());
  json_object_set_new(o, "slug", json_string(r->slug));
  json_object_set_new(o, "visibility", json_string(r->visibility));
  json_object_set_new(o, "status", json_string(r->status));
  json_object_set_new(o, "queryPolicy",
                      json_pack("{s:I,s:I,s:{s:b,s:I,s:I}}", "minQueryChars",
                                (json_int_t)r->min_query_chars, "debounceMs",
                                (json_int_t)r->debounce_ms, "typoTolerance", "enabled",
                                r->typo_enabled, "minCharsOneTypo", (json_int_t)r->typo_min_one,
                                "minCharsTwoTypos", (json_int_t)r->typo_min_two));
  json_t *locales = r->supported_locales ? json_loads(r->supported_locales, 0, NULL) : NULL;
  json_object_set_new(o, "localePolicy",
                      json_pack("{s:s,s:o}", "defaultLocale", r->default_locale, "supportedLocales",
                                locales ? locales : json_array()));
  json_object_set_new(o, "displayOrder", json_integer(r->display_order));
  json_object_set_new(o, "activeVersionNumber",
                      r->has_active_version ? json_integer(r->active_version_number) : json_null());
  json_object_set_new(o, "activeContentHash",
                      r->active_content_hash ? json_string(r->active_content_hash) : json_null());
  json_object_set_new(o, "createdAt", ts_json(r->created_at));
  json_object_set_new(o, "updatedAt", ts_json(r->updated_at));
  return o;
}

/* Parses a stored JSON text, falling back to a fresh empty value of the given kind. */
static json_t *json_text(const char *t, bool object) {
  json_t *v = t ? json_loads(t, 0, NULL) : NULL;
  if (!v) v = object ? json_object() : json_array();
  return v;
}

json_t *sg__store_item_record(const sg__store_item_row *r) {
  json_t *o = json_object();
  json_object_set_new(o, "id", json_string(r->id));
  json_object_set_new(o, "value", json_string(r->value));
  json_object_set_new(o, "displayValue", json_string(r->display_value));
  /* Absent rather than empty or null (docs/DESIGN.md §2). */
  if (r->description) json_object_set_new(o, "description", json_string(r->description));
  json_object_set_new(o, "aliases", json_text(r->aliases, false));
  json_object_set_new(o, "rank", json_integer(r->rank));
  json_object_set_new(o, "parentId", r->parent_id ? json_string(r->parent_id) : json_null());
  json_object_set_new(o, "locales", json_text(r->locales, true));
  json_object_set_new(o, "displayOrder", json_integer(r->display_order));
  json_object_set_new(o, "createdAt", ts_json(r->created_at));
  return o;
}

static bool has_artifact(const char *state) {
  return strcmp(state, SG_VERSION_STAGED) == 0 || strcmp(state, SG_VERSION_ACTIVE) == 0 ||
         strcmp(state, SG_VERSION_SUPERSEDED) == 0;
}

json_t *sg__store_version_record(const sg__store_version_row *r) {
  json_t *o = json_object();
  json_object_set_new(o, "versionNumber", json_integer(r->number));
  json_object_set_new(o, "state", json_string(r->state));
  json_object_set_new(o, "contentHash",
                      r->content_hash && has_artifact(r->state) ? json_string(r->content_hash)
                                                                : json_null());
  json_object_set_new(o, "itemCount", json_integer(r->item_count));
  json_t *errs = r->validation_errors ? json_loads(r->validation_errors, 0, NULL) : NULL;
  if (errs) json_object_set_new(o, "validationErrors", errs);
  json_object_set_new(o, "createdAt", ts_json(r->created_at));
  json_object_set_new(o, "activatedAt",
                      r->has_activated_at ? ts_json(r->activated_at) : json_null());
  if (r->failure_reason && strcmp(r->state, SG_VERSION_FAILED) == 0)
    json_object_set_new(o, "failureReason", json_string(r->failure_reason));
  return o;
}

json_t *sg__store_member_record(const char *id, const char *workspace_id, const char *email,
                                const char *role, const char *status, int64_t created_at) {
  return json_pack("{s:s,s:s,s:s,s:s,s:s,s:o}", "id", id, "workspaceId", workspace_id, "email",
                   email, "role", role, "status", status, "createdAt", ts_json(created_at));
}

json_t *sg__store_audit_record(const sg__store_audit_row *r) {
  char at[32];
  sg_rfc3339(r->at_ms / 1000, at);
  json_t *details = r->details ? json_loads(r->details, 0, NULL) : NULL;
  json_t *o = json_object();
  json_object_set_new(o, "seq", json_integer(r->seq));
  json_object_set_new(o, "at", json_string(at));
  json_object_set_new(o, "actor", json_string(r->actor));
  json_object_set_new(o, "actorEmail", r->actor_email ? json_string(r->actor_email) : json_null());
  json_object_set_new(o, "action", json_string(r->action));
  json_object_set_new(o, "target", r->target ? json_string(r->target) : json_null());
  json_object_set_new(o, "requestId", r->request_id ? json_string(r->request_id) : json_null());
  json_object_set_new(o, "status", r->status ? json_integer(r->status) : json_null());
  json_object_set_new(o, "details", details ? details : json_object());
  return o;
}
