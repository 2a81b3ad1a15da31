/*
 * Engine-independent store rules: ETags, slugs, version jobs, member roles.
 */
#include "store/rules.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "compiler/normalize.h"
#include "store/members.h"
#include "store/store.h"

void sg_store_list_etag(const json_t *list, char out[48]) {
  char *s = json_dumps(list, JSON_COMPACT | JSON_SORT_KEYS);
  uint8_t d[32];
  sg_sha256(s ? s : "", s ? strlen(s) : 0, d);
  free(s);
  out[0] = '"';
  sg_hex(d, 16, out + 1);
  out[33] = '"';
  out[34] = '\0';
}

void sg_store_item_etag(const json_t *item, char out[48]) {
  /* The same strong tag as a list's: a digest of the whole representation. */
  sg_store_list_etag(item, out);
}

void sg__store_slug_base(const char *name, char *out, size_t outsz) {
  size_t n = 0;
  bool dash = false;
  /* The search normalisation folds case and strips marks first, so "São Paulo" becomes
   * "sao-paulo" rather than "s-o-paulo". */
  char *folded = NULL;
  size_t flen;
  if (sg_normalize(name, strlen(name), &folded, &flen) == 0) name = folded;
  for (const unsigned char *p = (const unsigned char *)name; *p && n + 1 < outsz && n < 60; p++) {
    if (isalnum(*p) && *p < 0x80) {
      if (dash && n) out[n++] = '-';
      dash = false;
      out[n++] = (char)tolower(*p);
    } else {
      dash = true;
    }
  }
  out[n] = '\0';
  free(folded);
  if (n == 0) snprintf(out, outsz, "list");
}

void sg__store_slug_candidate(const char *base, int attempt, char *out, size_t outsz) {
  /* The first free of base, base-2, … base-100; past that (a workspace with a hundred
   * lists of one name) a random suffix, so a valid create never fails for want of a slug
   * and never probes thousands of rows. */
  if (attempt <= 1) {
    snprintf(out, outsz, "%s", base);
  } else if (attempt <= 100) {
    snprintf(out, outsz, "%s-%d", base, attempt);
  } else {
    char rnd[32];
    sg_random_id("", rnd, sizeof rnd);
    for (char *p = rnd; *p; p++) *p = (char)tolower((unsigned char)*p);
    snprintf(out, outsz, "%s-%.8s", base, rnd);
  }
}

static bool is_shared(const char *visibility) {
  return visibility && strcmp(visibility, "shared") == 0;
}

bool sg__store_list_usable(const char *workspace_id, const char *owner_workspace_id,
                           const char *visibility, bool subscribed) {
  if (!workspace_id || !owner_workspace_id) return false;
  return strcmp(workspace_id, owner_workspace_id) == 0 || (is_shared(visibility) && subscribed);
}

bool sg__store_list_subscribable(const char *workspace_id, const char *owner_workspace_id,
                                 const char *visibility) {
  if (!workspace_id || !owner_workspace_id) return false;
  return strcmp(workspace_id, owner_workspace_id) != 0 && is_shared(visibility);
}

void sg_store_job_clear(sg_version_job *job) {
  json_decref(job->locale_policy);
  memset(job, 0, sizeof *job);
}

static const char *const role_names[] = {"none", "viewer", "data_steward", "admin", "owner"};

sg_role sg_role_parse(const char *s) {
  if (!s) return SG_ROLE_NONE;
  for (int r = SG_ROLE_VIEWER; r <= SG_ROLE_OWNER; r++)
    if (strcmp(s, role_names[r]) == 0) return (sg_role)r;
  return SG_ROLE_NONE;
}

const char *sg_role_name(sg_role r) {
  return r >= SG_ROLE_VIEWER && r <= SG_ROLE_OWNER ? role_names[r] : role_names[0];
}

bool sg__store_list_policies_valid(const json_t *list) {
  const json_t *lp = json_object_get(list, "localePolicy");
  const json_t *tt = json_object_get(json_object_get(list, "queryPolicy"), "typoTolerance");
  if (json_integer_value(json_object_get(tt, "minCharsOneTypo")) >
      json_integer_value(json_object_get(tt, "minCharsTwoTypos")))
    return false;
  const char *def = json_string_value(json_object_get(lp, "defaultLocale"));
  size_t i;
  const json_t *t;
  json_array_foreach(json_object_get(lp, "supportedLocales"), i, t) {
    if (def && json_is_string(t) && strcasecmp(def, json_string_value(t)) == 0) return true;
  }
  return false;
}

char *sg__store_like_prefix(const char *prefix) {
  size_t n = strlen(prefix);
  char *p = malloc(2 * n + 2);
  if (!p) return NULL;
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (prefix[i] == '%' || prefix[i] == '_' || prefix[i] == '\\') p[o++] = '\\';
    p[o++] = prefix[i];
  }
  p[o++] = '%';
  p[o] = '\0';
  return p;
}

char *sg__store_json_text(const json_t *v) {
  if (!v || json_is_null(v)) return NULL;
  if (json_is_array(v) && json_array_size(v) == 0) return NULL;
  if (json_is_object(v) && json_object_size(v) == 0) return NULL;
  return json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
}
