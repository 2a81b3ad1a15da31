/*
 * One line of an NDJSON import: parse with jansson, then the same validation as
 * POST /lists/{id}/items (sg__item_validate), with every error path prefixed by
 * "lines[N]." (N is the 0-based line index). Pure: no I/O, so the fuzz target
 * (tests/fuzz/fuzz_ndjson.c) drives it together with the line splitter.
 *
 * On top of an item body a line may carry:
 *   parentValue  the parent's value (string 1–1024 bytes or null); imports link parents by
 *                value because ids of items created by the same import are not known;
 *   id, createdAt  read-only fields that an export writes; ignored, so an exported file
 *                imports unchanged (items are matched by value, never by id);
 *   parentId     also written by an export; ignored when parentValue is given, otherwise a
 *                non-null parentId is an error (it would silently lose the parent).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/internal.h"

#define PARENT_VALUE_MAX 1024

/* Appends {path: "lines[index]<sep><path>", reason} for each entry of errs (stolen). */
static void prefix_errors(json_t *errs, size_t index, json_t **fields) {
  size_t i;
  json_t *e;
  json_array_foreach(errs, i, e) {
    char path[320];
    const char *p = json_string_value(json_object_get(e, "path"));
    snprintf(path, sizeof path, "lines[%zu]%s%.256s", index, p && *p ? "." : "", p ? p : "");
    sg_field_error(fields, path, json_string_value(json_object_get(e, "reason")));
  }
  json_decref(errs);
}

json_t *sg__import_line(const char *line, size_t n, size_t index, char **parent_value,
                        json_t **fields) {
  *parent_value = NULL;
  json_t *errs = NULL;
  json_error_t jerr;
  /* jansson rejects invalid UTF-8 and caps nesting depth. */
  json_t *o = json_loadb(line, n, JSON_REJECT_DUPLICATES, &jerr);
  if (!o || !json_is_object(o)) {
    sg_field_error(&errs, "", o ? "must be a JSON object" : "malformed JSON");
    json_decref(o);
    prefix_errors(errs, index, fields);
    return NULL;
  }
  const json_t *pv = json_object_get(o, "parentValue");
  bool has_pv = pv && !json_is_null(pv);
  if (has_pv && (!json_is_string(pv) || json_string_length(pv) < 1 ||
                 json_string_length(pv) > PARENT_VALUE_MAX)) {
    sg_field_error(&errs, "parentValue", "must be the value of an item of the imported list");
    has_pv = false;
  }
  const json_t *pid = json_object_get(o, "parentId");
  if (!has_pv && pid && !json_is_null(pid) && !errs)
    sg_field_error(&errs, "parentId", "imports name parents by parentValue");
  if (has_pv) *parent_value = strdup(json_string_value(pv));
  json_object_del(o, "parentValue");
  json_object_del(o, "parentId");
  json_object_del(o, "id");
  json_object_del(o, "createdAt");
  json_t *item = sg__item_validate(o, &errs);
  json_decref(o);
  if (errs) {
    json_decref(item);
    free(*parent_value);
    *parent_value = NULL;
    prefix_errors(errs, index, fields);
    return NULL;
  }
  return item;
}
