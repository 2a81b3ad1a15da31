/*
 * The body of POST /v1/selection: a JSON object (sent as application/json, or as
 * text/plain by navigator.sendBeacon) of at most 4 KiB.
 *
 *   key             string, 1..256 bytes             (checked by the handler: invalid_key)
 *   selectionId     UUID "8-4-4-4-12" hex, any case  (stored lower-case)
 *   queryRequestId  string, 1..256 bytes
 *   listId          string, 1..256 bytes
 *   itemId          string, 1..256 bytes
 *   position        JSON integer 1..1000000 (1.0, "1", 0, -1, missing: invalid)
 *   query           optional string (or null), at most 1024 bytes
 *
 * Unknown fields are ignored, so newer clients can add fields without breaking older
 * runtimes (the v1 API is additive). Duplicate member names are rejected.
 */
#include <jansson.h>
#include <string.h>

#include "runtime/rt.h"

static bool uuid_canon(const char *s, size_t n, char out[37]) {
  if (n != 36) return false;
  for (size_t i = 0; i < 36; i++) {
    char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (c >= '0' && c <= '9') {
    } else if (c >= 'a' && c <= 'f') {
    } else if (c >= 'A' && c <= 'F') {
      c = (char)(c - 'A' + 'a');
    } else {
      return false;
    }
    out[i] = c;
  }
  out[36] = '\0';
  return true;
}

/* A required bounded non-empty string member; NULL when invalid. */
static const char *str_field(json_t *root, const char *name, size_t max) {
  json_t *v = json_object_get(root, name);
  if (!json_is_string(v)) return NULL;
  size_t n = json_string_length(v);
  const char *s = json_string_value(v);
  if (n == 0 || n > max || memchr(s, '\0', n)) return NULL;
  return s;
}

sg_err sg__selection_parse(const char *body, size_t len, sg__selection *s) {
  memset(s, 0, sizeof *s);
  if (len > SG__SELECTION_MAX_BODY) return SG_E_PAYLOAD_TOO_LARGE;
  json_error_t jerr;
  json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
  if (!json_is_object(root)) {
    json_decref(root);
    return SG_E_INVALID_REQUEST;
  }
  s->root = root;

  json_t *k = json_object_get(root, "key");
  if (json_is_string(k) && json_string_length(k) > 0 && json_string_length(k) <= 256 &&
      !memchr(json_string_value(k), '\0', json_string_length(k))) {
    s->key = json_string_value(k);
    s->key_len = json_string_length(k);
  }

  json_t *sid = json_object_get(root, "selectionId");
  if (!json_is_string(sid) ||
      !uuid_canon(json_string_value(sid), json_string_length(sid), s->selection_id)) {
    s->bad_field = "selectionId";
    s->bad_message = "The field selectionId must be a UUID (8-4-4-4-12 hex digits), e.g. from "
                     "crypto.randomUUID().";
    return SG_E_OK;
  }
  if (!(s->query_request_id = str_field(root, "queryRequestId", SG__SELECTION_MAX_FIELD))) {
    s->bad_field = "queryRequestId";
    s->bad_message = "The field queryRequestId must be a string of 1 to 256 bytes: the requestId "
                     "of the query answer the user picked from.";
    return SG_E_OK;
  }
  if (!(s->list_id = str_field(root, "listId", SG__SELECTION_MAX_FIELD))) {
    s->bad_field = "listId";
    s->bad_message =
        "The field listId must be a string of 1 to 256 bytes: the listId of the query answer.";
    return SG_E_OK;
  }
  if (!(s->item_id = str_field(root, "itemId", SG__SELECTION_MAX_FIELD))) {
    s->bad_field = "itemId";
    s->bad_message =
        "The field itemId must be a string of 1 to 256 bytes: the id of the item the user picked.";
    return SG_E_OK;
  }
  json_t *pos = json_object_get(root, "position");
  if (!json_is_integer(pos) || json_integer_value(pos) < 1 ||
      json_integer_value(pos) > SG__SELECTION_MAX_POSITION) {
    s->bad_field = "position";
    s->bad_message = "The field position must be an integer from 1 to 1000000: the picked item's "
                     "place in the answer, counting from 1.";
    return SG_E_OK;
  }
  s->position = json_integer_value(pos);
  json_t *q = json_object_get(root, "query");
  if (q && !json_is_null(q)) {
    if (!json_is_string(q) || json_string_length(q) > SG__SELECTION_MAX_QUERY ||
        memchr(json_string_value(q), '\0', json_string_length(q))) {
      s->bad_field = "query";
      s->bad_message = "The field query must be a string of at most 1024 bytes, or null.";
      return SG_E_OK;
    }
    s->query = json_string_value(q);
  }
  return SG_E_OK;
}

void sg__selection_free(sg__selection *s) {
  if (s->root) json_decref((json_t *)s->root);
  memset(s, 0, sizeof *s);
}
