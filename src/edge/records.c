/*
 * The edge record codec (records.h).
 */
#include "edge/records.h"

#include <sodium.h>
#include <string.h>

static const char *jstr(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  return json_is_string(v) ? json_string_value(v) : NULL;
}

static bool jstatus_is(const json_t *o, const char *want) {
  const char *s = jstr(o, "status");
  return s && strcmp(s, want) == 0;
}

/* ---------------------------------------------------------------- encoding ------- */

/* The list members the runtime serves (the rest stays in the control plane). */
static json_t *list_record(const json_t *list) {
  static const char *const copied[] = {
      "id",           "workspaceId",         "visibility",        "status", "queryPolicy",
      "localePolicy", "activeVersionNumber", "activeContentHash", NULL};
  json_t *rec = json_object();
  for (const char *const *k = copied; rec && *k; k++) {
    json_t *v = json_object_get(list, *k);
    json_object_set(rec, *k, v ? v : json_null());
  }
  return rec;
}

int sg_edge_record_encode(sg_edge_kind k, const json_t *src, int64_t now_s, char **json,
                          size_t *len) {
  json_t *rec;
  if (k == SG_EDGE_LIST) {
    rec = list_record(src);
  } else if (k == SG_EDGE_SIGNING_KEY) {
    int64_t retired = json_integer_value(json_object_get(src, "retiredAtUnix"));
    if (retired && retired + SG_EDGE_SIGNING_KEY_KEEP_S < now_s) return 1;
    rec = json_deep_copy(src);
    json_object_del(rec, "retiredAtUnix");
  } else {
    rec = json_deep_copy(src);
  }
  *json = rec ? json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
  json_decref(rec);
  if (!*json) return -1;
  *len = strlen(*json);
  return 0;
}

/* ---------------------------------------------------------------- decoding ------- */

/* queryPolicy.typoTolerance; absent or invalid members take the defaults (the control
 * plane validates them, so this only guards a hand-edited edge store). */
static sg_typo_policy typo_policy(const json_t *tt) {
  sg_typo_policy p = SG_TYPO_POLICY_DEFAULT;
  const json_t *en = json_object_get(tt, "enabled"), *one = json_object_get(tt, "minCharsOneTypo"),
               *two = json_object_get(tt, "minCharsTwoTypos");
  if (json_is_boolean(en)) p.enabled = json_is_true(en);
  json_int_t a = json_is_integer(one) ? json_integer_value(one) : p.min_one;
  json_int_t b = json_is_integer(two) ? json_integer_value(two) : p.min_two;
  if (a >= 1 && a <= 255 && b >= a && b <= 255) {
    p.min_one = (int)a;
    p.min_two = (int)b;
  }
  return p;
}

static int clamp_int(const json_t *v, int dflt, int lo, int hi) {
  if (!json_is_integer(v)) return dflt;
  json_int_t n = json_integer_value(v);
  return n < lo ? lo : n > hi ? hi : (int)n;
}

int sg_edge_list_decode(const json_t *o, const char *stored_id, sg_edge_list_rec *out) {
  memset(out, 0, sizeof *out);
  const char *status = jstr(o, "status");
  if (status && strcmp(status, "active") != 0 && strcmp(status, "archived") != 0)
    return 1; /* deleted or unknown: as if absent */
  out->id = jstr(o, "id");
  if (!out->id) out->id = stored_id;
  if (!out->id) return 1;
  out->archived = status && strcmp(status, "archived") == 0;
  out->workspace_id = jstr(o, "workspaceId");
  const char *vis = jstr(o, "visibility");
  out->visibility = !vis                         ? SG_EDGE_VIS_PRIVATE
                    : strcmp(vis, "public") == 0 ? SG_EDGE_VIS_PUBLIC
                    : strcmp(vis, "shared") == 0 ? SG_EDGE_VIS_SHARED
                                                 : SG_EDGE_VIS_PRIVATE;
  const json_t *qp = json_object_get(o, "queryPolicy");
  out->min_query_chars = clamp_int(json_object_get(qp, "minQueryChars"), 1, 1, 32);
  out->debounce_ms = clamp_int(json_object_get(qp, "debounceMs"), 150, 0, 5000);
  out->typo = typo_policy(json_object_get(qp, "typoTolerance"));
  out->content_hash = jstr(o, "activeContentHash");
  const json_t *lp = json_object_get(o, "localePolicy");
  out->default_locale = jstr(lp, "defaultLocale");
  if (!out->default_locale) out->default_locale = "en";
  const json_t *sup = json_object_get(lp, "supportedLocales");
  out->supported_locales = json_is_array(sup) ? sup : NULL;
  return 0;
}

int sg_edge_key_decode(const json_t *o, sg_edge_key_rec *out) {
  memset(out, 0, sizeof *out);
  out->id = jstr(o, "id");
  if (!out->id) out->id = "";
  out->application_id = jstr(o, "applicationId");
  out->list_id = jstr(o, "listId");
  const json_t *origins = json_object_get(o, "origins");
  out->origins = json_is_array(origins) ? origins : NULL;
  out->active = jstatus_is(o, "active");
  return 0;
}

int sg_edge_app_decode(const json_t *o, const char *stored_id, sg_edge_app_rec *out) {
  memset(out, 0, sizeof *out);
  out->id = jstr(o, "id");
  if (!out->id) out->id = stored_id;
  /* The id names the app's quota counter: it must be a valid record id. */
  if (!out->id || !sg_edge_id_valid(out->id)) return 1;
  out->workspace_id = jstr(o, "workspaceId");
  out->active = jstatus_is(o, "active");
  const json_t *mq = json_object_get(o, "monthlyQuota");
  out->limited = json_is_integer(mq);
  out->monthly_quota =
      out->limited && json_integer_value(mq) > 0 ? (uint64_t)json_integer_value(mq) : 0;
  return 0;
}

int sg_edge_workspace_decode(const json_t *o, const char *stored_id, sg_edge_workspace_rec *out) {
  out->id = jstr(o, "id");
  if (!out->id) out->id = stored_id;
  out->active = jstatus_is(o, "active");
  return out->id ? 0 : 1;
}

int sg_edge_subscription_decode(const json_t *o, sg_edge_subscription_rec *out) {
  out->workspace_id = jstr(o, "workspaceId");
  out->list_id = jstr(o, "listId");
  out->active = jstatus_is(o, "active");
  return out->workspace_id && out->list_id ? 0 : 1;
}

int sg_edge_signing_key_decode(const json_t *o, sg_edge_signing_key_rec *out) {
  out->kid = jstr(o, "kid");
  const char *pk = jstr(o, "publicKey");
  size_t bl;
  if (!out->kid || !pk ||
      sodium_base642bin(out->public_key, sizeof out->public_key, pk, strlen(pk), NULL, &bl, NULL,
                        sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
      bl != 32)
    return 1;
  return 0;
}
