/*
 * PATCH /api/v1/lists/{id}: any of name, visibility, status, queryPolicy, localePolicy,
 * displayOrder. Partial policy objects are merged into the current ones by the store,
 * inside its write transaction, which also re-checks that the default locale is still a
 * supported one. If-Match (an ETag or "*") is checked inside that same transaction, so
 * two racing writers cannot both pass it.
 */
#include <string.h>
#include <strings.h>

#include "control/internal.h"

static void check_int(json_t **fields, const json_t *v, const char *path, json_int_t lo,
                      json_int_t hi) {
  if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
    char reason[96];
    snprintf(reason, sizeof reason, "must be an integer from %lld to %lld", (long long)lo,
             (long long)hi);
    sg_field_error(fields, path, reason);
  }
}

static void check_enum(json_t **fields, const json_t *v, const char *path,
                       const char *const *values) {
  if (json_is_string(v))
    for (const char *const *a = values; *a; a++)
      if (strcmp(*a, json_string_value(v)) == 0) return;
  char reason[128] = "must be one of";
  for (const char *const *a = values; *a; a++) {
    strncat(reason, a == values ? " " : ", ", sizeof reason - strlen(reason) - 1);
    strncat(reason, *a, sizeof reason - strlen(reason) - 1);
  }
  sg_field_error(fields, path, reason);
}

/* queryPolicy.typoTolerance: enabled (boolean), minCharsOneTypo and minCharsTwoTypos
 * (1..255, one <= two once merged with the current values; the error names the member
 * that was sent, the first one when both were). */
static void check_typo(json_t **fields, const json_t *tt, const json_t *cur) {
  static const char *const allowed[] = {"enabled", "minCharsOneTypo", "minCharsTwoTypos", NULL};
  if (!json_is_object(tt)) {
    sg_field_error(fields, "queryPolicy.typoTolerance", "must be an object");
    return;
  }
  sg__reject_unknown(tt, allowed, "queryPolicy.typoTolerance.", fields);
  const json_t *en = json_object_get(tt, "enabled"), *one = json_object_get(tt, "minCharsOneTypo"),
               *two = json_object_get(tt, "minCharsTwoTypos");
  if (en && !json_is_boolean(en))
    sg_field_error(fields, "queryPolicy.typoTolerance.enabled", "must be a boolean");
  size_t before = json_array_size(*fields);
  if (one) check_int(fields, one, "queryPolicy.typoTolerance.minCharsOneTypo", 1, 255);
  if (two) check_int(fields, two, "queryPolicy.typoTolerance.minCharsTwoTypos", 1, 255);
  if (json_array_size(*fields) != before) return;
  json_int_t a = json_integer_value(one ? one : json_object_get(cur, "minCharsOneTypo"));
  json_int_t b = json_integer_value(two ? two : json_object_get(cur, "minCharsTwoTypos"));
  if (a > b)
    sg_field_error(fields,
                   one ? "queryPolicy.typoTolerance.minCharsOneTypo"
                       : "queryPolicy.typoTolerance.minCharsTwoTypos",
                   one ? "must not be greater than minCharsTwoTypos"
                       : "must not be less than minCharsOneTypo");
}

/* Validates body and builds the store's change set (policies merged with cur). */
static json_t *validate(const json_t *body, const json_t *cur, json_t **fields) {
  static const char *const allowed[] = {"name",         "visibility",   "status", "queryPolicy",
                                        "localePolicy", "displayOrder", NULL};
  static const char *const visibilities[] = {"private", "public", "shared", NULL};
  static const char *const statuses[] = {"active", "archived", NULL};
  sg__reject_unknown(body, allowed, "", fields);
  json_t *ch = json_object();
  const json_t *v;
  if ((v = json_object_get(body, "name"))) {
    if (!json_is_string(v) || sg__cp_len(json_string_value(v)) < 1 ||
        sg__cp_len(json_string_value(v)) > 200)
      sg_field_error(fields, "name", "must be a string of 1 to 200 characters");
    json_object_set(ch, "name", (json_t *)v);
  }
  if ((v = json_object_get(body, "visibility"))) {
    check_enum(fields, v, "visibility", visibilities);
    json_object_set(ch, "visibility", (json_t *)v);
  }
  if ((v = json_object_get(body, "status"))) {
    check_enum(fields, v, "status", statuses);
    json_object_set(ch, "status", (json_t *)v);
  }
  if ((v = json_object_get(body, "displayOrder"))) {
    check_int(fields, v, "displayOrder", -2147483648LL, 2147483647LL);
    json_object_set(ch, "displayOrder", (json_t *)v);
  }
  if ((v = json_object_get(body, "queryPolicy"))) {
    if (!json_is_object(v)) {
      sg_field_error(fields, "queryPolicy", "must be an object");
    } else {
      static const char *const qp_allowed[] = {"minQueryChars", "debounceMs", "typoTolerance",
                                               NULL};
      sg__reject_unknown(v, qp_allowed, "queryPolicy.", fields);
      json_t *qp = json_deep_copy(json_object_get(cur, "queryPolicy"));
      const json_t *m = json_object_get(v, "minQueryChars"), *d = json_object_get(v, "debounceMs");
      if (m)
        check_int(fields, m, "queryPolicy.minQueryChars", 1, 32),
            json_object_set(qp, "minQueryChars", (json_t *)m);
      if (d)
        check_int(fields, d, "queryPolicy.debounceMs", 0, 5000),
            json_object_set(qp, "debounceMs", (json_t *)d);
      const json_t *tt = json_object_get(v, "typoTolerance");
      if (tt)
        check_typo(fields, tt,
                   json_object_get(json_object_get(cur, "queryPolicy"), "typoTolerance"));
      /* qp (merged with the current list) is for validation only; the store gets just
       * the members sent and merges them inside its transaction, so a concurrent PATCH
       * of the other member is not reverted by this one. */
      json_decref(qp);
      json_object_set(ch, "queryPolicy", (json_t *)v);
    }
  }
  if ((v = json_object_get(body, "localePolicy"))) {
    if (!json_is_object(v)) {
      sg_field_error(fields, "localePolicy", "must be an object");
    } else {
      static const char *const lp_allowed[] = {"defaultLocale", "supportedLocales", NULL};
      sg__reject_unknown(v, lp_allowed, "localePolicy.", fields);
      json_t *lp = json_deep_copy(json_object_get(cur, "localePolicy"));
      const json_t *dl = json_object_get(v, "defaultLocale");
      const json_t *sl = json_object_get(v, "supportedLocales");
      if (dl) {
        if (!json_is_string(dl) || !sg__bcp47_valid(json_string_value(dl)))
          sg_field_error(fields, "localePolicy.defaultLocale", "must be a BCP-47 tag");
        json_object_set(lp, "defaultLocale", (json_t *)dl);
      }
      if (sl) {
        if (!json_is_array(sl) || json_array_size(sl) < 1 || json_array_size(sl) > 32) {
          sg_field_error(fields, "localePolicy.supportedLocales",
                         "must be an array of 1 to 32 BCP-47 tags");
        } else {
          size_t i;
          const json_t *t;
          json_array_foreach(sl, i, t) {
            char path[64];
            snprintf(path, sizeof path, "localePolicy.supportedLocales[%zu]", i);
            if (!json_is_string(t) || !sg__bcp47_valid(json_string_value(t))) {
              sg_field_error(fields, path, "must be a BCP-47 tag");
              continue;
            }
            for (size_t k = 0; k < i; k++)
              if (json_is_string(json_array_get(sl, k)) &&
                  strcasecmp(json_string_value(json_array_get(sl, k)), json_string_value(t)) == 0)
                sg_field_error(fields, path, "duplicate");
          }
        }
        json_object_set(lp, "supportedLocales", (json_t *)sl);
      }
      /* The default locale must be one of the supported ones. */
      const char *def = json_string_value(json_object_get(lp, "defaultLocale"));
      const json_t *sup = json_object_get(lp, "supportedLocales");
      bool in = false;
      size_t i;
      const json_t *t;
      json_array_foreach(sup, i, t) if (def && json_is_string(t) &&
                                        strcasecmp(def, json_string_value(t)) == 0) in = true;
      if (!in && json_is_array(sup))
        sg_field_error(fields, "localePolicy.defaultLocale", "must be one of supportedLocales");
      json_decref(lp);
      json_object_set(ch, "localePolicy", (json_t *)v); /* partial, as for queryPolicy */
    }
  }
  return ch;
}

/* True when a field the edge record serves differs between the list before (cur) and
 * after (list) the PATCH. */
static bool served_change(const json_t *cur, const json_t *list) {
  static const char *const served[] = {"visibility", "status", "queryPolicy", "localePolicy", NULL};
  for (const char *const *k = served; *k; k++)
    if (!json_equal(json_object_get(cur, *k), json_object_get(list, *k))) return true;
  return false;
}

void sg__h_list_patch(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  json_t *body = sg__body_object(req, resp);
  if (!body) return;
  json_t *cur = NULL, *fields = NULL, *list = NULL;
  sg_err e = sg_store_list_get(c->cfg.store, who->workspace_id, req->params[0], &cur);
  if (e != SG_E_OK) {
    json_decref(body);
    sg__store_error(req, resp, e);
    return;
  }
  json_t *changes = validate(body, cur, &fields);
  json_decref(body);
  if (fields) {
    json_decref(changes);
    json_decref(cur);
    sg_resp_invalid_fields(resp, req, fields);
    return;
  }
  e = sg_store_list_patch(c->cfg.store, who->workspace_id, req->params[0], changes,
                          sg_req_header(req, "If-Match"), &list);
  json_decref(changes);
  if (e == SG_E_PRECONDITION_FAILED) {
    char etag[48];
    sg_store_list_etag(list, etag);
    json_decref(list);
    json_decref(cur);
    sg_resp_header(resp, "ETag", etag);
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  if (e == SG_E_INVALID_REQUEST) {
    /* A concurrent PATCH changed the locale policy between our check and the write. */
    json_decref(cur);
    json_t *f = NULL;
    sg_field_error(&f, "localePolicy.defaultLocale", "must be one of supportedLocales");
    sg_resp_invalid_fields(resp, req, f);
    return;
  }
  if (e != SG_E_OK) {
    json_decref(cur);
    sg__store_error(req, resp, e);
    return;
  }
  /* The store marked the list's edge record dirty in the PATCH's transaction when a
   * served field changed; write it now (a failure stays pending for the reconciler). The
   * answer carries edgeSync only then (visibility, status, queryPolicy or the localePolicy
   * the edge record also carries): a PATCH of the name or displayOrder alone, or one that
   * sets the values already stored, changes nothing on the edge and says nothing of it. */
  bool served = served_change(cur, list);
  json_decref(cur);
  sg__send_list(req, resp, 200, list, served ? sg__edge_sync_list(c, req->params[0]) : NULL);
}
