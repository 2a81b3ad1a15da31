/*
 * The JSON of store records whose shape does not depend on the engine: the edge records
 * of workspaces, applications, publishable keys, subscriptions and signing keys. Every
 * backend builds them here, so the admin CLI's answers and the edge writer's copies of
 * one record cannot drift apart.
 */
#include <sodium.h>

#include "common/util.h"
#include "store/rules.h"

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
