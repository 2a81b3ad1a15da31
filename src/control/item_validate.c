/*
 * Validation of an item body (POST /api/v1/lists/{id}/items), kept free of I/O so it is
 * unit-tested directly (tests/unit/control/test_item_validate.c).
 *
 * Limits (docs/DESIGN.md §2): value 1–1024 bytes; displayValue 1–512 bytes when given
 * (the default copies value, whatever its length); at most 32 aliases of 1–512 bytes;
 * rank an integer within ±(2^53−1) so every JSON client reads it exactly; displayOrder a
 * 32-bit integer; parentId a string (whether it names an item of the list is checked by
 * the store, in the insert's transaction); description (display only, never matched) 1–200
 * code points of well-formed UTF-8 when given, else absent (an empty string is refused
 * rather than stored, so "no description" has one spelling); locales an object of at most
 * 32 BCP-47 tags, each {displayValue?, aliases?, description?} with the same limits. null
 * counts as absent. The result always has "description" (the string, or null for none).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "control/internal.h"

#define VALUE_MAX 1024
#define TEXT_MAX 512
#define ALIASES_MAX 32
#define LOCALES_MAX 32
#define PARENT_ID_MAX 128
#define DESCRIPTION_MAX 200 /* code points */
#define SAFE_INT 9007199254740991LL

/* Checks a string of 1..max bytes; returns it, or NULL after recording the problem. */
static const json_t *text(const json_t *v, const char *path, size_t max, json_t **fields) {
  char reason[64];
  if (!json_is_string(v)) {
    sg_field_error(fields, path, "must be a string");
    return NULL;
  }
  size_t n = json_string_length(v);
  if (n < 1 || n > max) {
    snprintf(reason, sizeof reason, "must be 1 to %zu bytes", max);
    sg_field_error(fields, path, reason);
    return NULL;
  }
  return v;
}

/* Checks a description: well-formed UTF-8 of 1..DESCRIPTION_MAX code points. Returns it,
 * or NULL after recording the problem. */
static const json_t *description(const json_t *v, const char *path, json_t **fields) {
  if (!json_is_string(v)) {
    sg_field_error(fields, path, "must be a string");
    return NULL;
  }
  const char *s = json_string_value(v);
  size_t n = json_string_length(v);
  /* jansson only admits valid UTF-8 without NUL from the wire; checked again here so
   * every caller (imports, generated items) gets the same guarantee. */
  if (!sg_utf8_valid(s, n)) {
    sg_field_error(fields, path, "must be valid UTF-8");
    return NULL;
  }
  size_t cps = sg_utf8_count(s, n);
  if (cps < 1 || cps > DESCRIPTION_MAX) {
    sg_field_error(fields, path, "must be 1 to 200 characters (code points)");
    return NULL;
  }
  return v;
}

/* Validates an aliases array at path; returns a new array (a copy) or NULL. */
static json_t *aliases(const json_t *v, const char *path, json_t **fields) {
  if (!json_is_array(v) || json_array_size(v) > ALIASES_MAX) {
    sg_field_error(fields, path, "must be an array of at most 32 strings");
    return NULL;
  }
  bool ok = true;
  size_t i;
  const json_t *a;
  json_array_foreach(v, i, a) {
    char p[128];
    snprintf(p, sizeof p, "%s[%zu]", path, i);
    if (!text(a, p, TEXT_MAX, fields)) ok = false;
  }
  return ok ? json_copy((json_t *)v) : NULL;
}

static bool integer(const json_t *v, const char *path, json_int_t lo, json_int_t hi,
                    json_t **fields) {
  if (json_is_integer(v) && json_integer_value(v) >= lo && json_integer_value(v) <= hi) return true;
  char reason[96];
  snprintf(reason, sizeof reason, "must be an integer from %lld to %lld", (long long)lo,
           (long long)hi);
  sg_field_error(fields, path, reason);
  return false;
}

/* Validates the locales object; returns a new object or NULL. */
static json_t *locales(const json_t *v, json_t **fields) {
  if (!json_is_object(v) || json_object_size(v) > LOCALES_MAX) {
    sg_field_error(fields, "locales", "must be an object with at most 32 BCP-47 tags as keys");
    return NULL;
  }
  static const char *const allowed[] = {"displayValue", "aliases", "description", NULL};
  json_t *out = json_object();
  bool ok = true;
  const char *tag;
  json_t *lv;
  json_object_foreach((json_t *)v, tag, lv) {
    char path[160];
    snprintf(path, sizeof path, "locales.%.64s", tag);
    if (!sg__bcp47_valid(tag)) {
      sg_field_error(fields, path, "the key must be a BCP-47 tag");
      ok = false;
      continue;
    }
    const char *other;
    json_t *ov;
    bool dup = false;
    json_object_foreach((json_t *)v, other, ov) {
      if (other == tag || strcmp(other, tag) == 0) break;
      if (strcasecmp(other, tag) == 0) dup = true;
    }
    if (dup) {
      sg_field_error(fields, path, "duplicate locale (tags are case-insensitive)");
      ok = false;
      continue;
    }
    if (!json_is_object(lv)) {
      sg_field_error(fields, path, "must be an object {displayValue?, aliases?, description?}");
      ok = false;
      continue;
    }
    char prefix[168];
    snprintf(prefix, sizeof prefix, "%s.", path);
    json_t *before = *fields;
    size_t nbefore = before ? json_array_size(before) : 0;
    sg__reject_unknown(lv, allowed, prefix, fields);
    if (*fields && json_array_size(*fields) > nbefore) ok = false;
    json_t *entry = json_object();
    const json_t *dv = json_object_get(lv, "displayValue");
    if (dv && !json_is_null(dv)) {
      char p[192];
      snprintf(p, sizeof p, "%sdisplayValue", prefix);
      if (text(dv, p, TEXT_MAX, fields))
        json_object_set(entry, "displayValue", (json_t *)dv);
      else
        ok = false;
    }
    const json_t *al = json_object_get(lv, "aliases");
    if (al && !json_is_null(al)) {
      char p[192];
      snprintf(p, sizeof p, "%saliases", prefix);
      json_t *a = aliases(al, p, fields);
      if (a)
        json_object_set_new(entry, "aliases", a);
      else
        ok = false;
    }
    const json_t *ds = json_object_get(lv, "description");
    if (ds && !json_is_null(ds)) {
      char p[192];
      snprintf(p, sizeof p, "%sdescription", prefix);
      if (description(ds, p, fields))
        json_object_set(entry, "description", (json_t *)ds);
      else
        ok = false;
    }
    json_object_set_new(out, tag, entry);
  }
  if (!ok) {
    json_decref(out);
    return NULL;
  }
  return out;
}

json_t *sg__item_validate(const json_t *body, json_t **fields) {
  static const char *const allowed[] = {"value",   "displayValue", "description",
                                        "aliases", "rank",         "parentId",
                                        "locales", "displayOrder", NULL};
  json_t *errs = NULL;
  json_t *out = json_object();
  sg__reject_unknown(body, allowed, "", &errs);

  const json_t *v = json_object_get(body, "value");
  if (!v || json_is_null(v))
    sg_field_error(&errs, "value", "required");
  else if (text(v, "value", VALUE_MAX, &errs))
    json_object_set(out, "value", (json_t *)v);

  const json_t *dv = json_object_get(body, "displayValue");
  if (dv && !json_is_null(dv)) {
    if (text(dv, "displayValue", TEXT_MAX, &errs))
      json_object_set(out, "displayValue", (json_t *)dv);
  } else if (json_object_get(out, "value")) {
    json_object_set(out, "displayValue", json_object_get(out, "value"));
  }

  const json_t *ds = json_object_get(body, "description");
  if (ds && !json_is_null(ds)) {
    if (description(ds, "description", &errs)) json_object_set(out, "description", (json_t *)ds);
  } else {
    json_object_set_new(out, "description", json_null());
  }

  const json_t *al = json_object_get(body, "aliases");
  json_t *a = al && !json_is_null(al) ? aliases(al, "aliases", &errs) : json_array();
  if (a) json_object_set_new(out, "aliases", a);

  const json_t *rank = json_object_get(body, "rank");
  if (rank && !json_is_null(rank)) {
    if (integer(rank, "rank", -SAFE_INT, SAFE_INT, &errs))
      json_object_set(out, "rank", (json_t *)rank);
  } else {
    json_object_set_new(out, "rank", json_integer(0));
  }

  const json_t *parent = json_object_get(body, "parentId");
  if (parent && !json_is_null(parent)) {
    if (!json_is_string(parent) || json_string_length(parent) < 1 ||
        json_string_length(parent) > PARENT_ID_MAX)
      sg_field_error(&errs, "parentId", "must be the id of an item of this list");
    else
      json_object_set(out, "parentId", (json_t *)parent);
  } else {
    json_object_set_new(out, "parentId", json_null());
  }

  const json_t *loc = json_object_get(body, "locales");
  json_t *l = loc && !json_is_null(loc) ? locales(loc, &errs) : json_object();
  if (l) json_object_set_new(out, "locales", l);

  const json_t *order = json_object_get(body, "displayOrder");
  if (order && !json_is_null(order)) {
    if (integer(order, "displayOrder", -2147483648LL, 2147483647LL, &errs))
      json_object_set(out, "displayOrder", (json_t *)order);
  } else {
    json_object_set_new(out, "displayOrder", json_integer(0));
  }

  if (errs) {
    json_decref(out);
    if (*fields) {
      json_array_extend(*fields, errs);
      json_decref(errs);
    } else {
      *fields = errs;
    }
    return NULL;
  }
  return out;
}
