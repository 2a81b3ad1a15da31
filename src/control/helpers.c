/*
 * Shared pieces of the control plane's handlers: body parsing, field errors,
 * pagination, list responses.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "control/cursor.h"
#include "control/internal.h"

size_t sg__cp_len(const char *s) { return sg_utf8_count(s, strlen(s)); }

bool sg__bcp47_valid(const char *t) {
  size_t n = strlen(t);
  if (n < 2 || n > 35) return false;
  size_t seg = 0, first = 0;
  bool in_first = true;
  for (size_t i = 0; i <= n; i++) {
    if (i == n || t[i] == '-') {
      if (seg == 0 || seg > 8) return false;
      if (in_first && (first < 2 || first > 3)) return false;
      in_first = false;
      seg = 0;
      continue;
    }
    if (!isalnum((unsigned char)t[i])) return false;
    if (in_first) {
      if (!isalpha((unsigned char)t[i])) return false;
      first++;
    }
    seg++;
  }
  return true;
}

json_t *sg__body_object(sg_req *req, sg_resp *resp) {
  if (req->body_too_large) {
    sg_resp_error(resp, req, SG_E_PAYLOAD_TOO_LARGE, NULL, NULL);
    return NULL;
  }
  json_error_t jerr;
  /* jansson rejects invalid UTF-8 and caps nesting depth, so hostile bodies fail here
   * with a typed error rather than deeper down. */
  json_t *o = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
  if (!o || !json_is_object(o)) {
    json_decref(o);
    json_t *f = NULL;
    sg_field_error(&f, "body", o ? "must be a JSON object" : "malformed JSON");
    sg_resp_invalid_fields(resp, req, f);
    return NULL;
  }
  return o;
}

void sg__reject_unknown(const json_t *obj, const char *const *allowed, const char *prefix,
                        json_t **fields) {
  const char *k;
  json_t *v;
  json_object_foreach((json_t *)obj, k, v) {
    bool ok = false;
    for (const char *const *a = allowed; *a && !ok; a++) ok = strcmp(*a, k) == 0;
    if (ok) continue;
    char path[256];
    snprintf(path, sizeof path, "%s%s", prefix, k);
    sg_field_error(fields, path, "unknown_field");
  }
}

/* True when key is an array of exactly strlen(shape) members, shape[i] naming the kind of
 * member i: 'i' an integer, 's' a string. */
static bool key_has_shape(const json_t *key, const char *shape) {
  if (!json_is_array(key) || json_array_size(key) != strlen(shape)) return false;
  for (size_t i = 0; shape[i]; i++) {
    const json_t *m = json_array_get(key, i);
    if (shape[i] == 'i' ? !json_is_integer(m) : !json_is_string(m)) return false;
  }
  return true;
}

int sg__page_params(sg_control *c, sg_req *req, sg_resp *resp, const char *scope,
                    const char *key_shape, size_t *limit, json_t **after) {
  *after = NULL;
  *limit = 50;
  const char *l = sg_req_query(req, "limit");
  if (l) {
    int64_t v;
    if (sg_parse_i64(l, 1, 100, &v)) {
      json_t *f = NULL;
      sg_field_error(&f, "limit", "must be an integer from 1 to 100");
      sg_resp_invalid_fields(resp, req, f);
      return -1;
    }
    *limit = (size_t)v;
  }
  const char *cur = sg_req_query(req, "cursor");
  if (cur) {
    /* A cursor is signed, so a bad shape means an older format or a bug; both are
     * refused as not issued for this collection rather than read half-way. */
    *after = sg_cursor_decode(c->cursor_secret, scope, cur);
    if (!*after || !key_has_shape(*after, key_shape)) {
      json_decref(*after);
      *after = NULL;
      json_t *f = NULL;
      sg_field_error(&f, "cursor", "malformed or not issued for this collection");
      sg_resp_invalid_fields(resp, req, f);
      return -1;
    }
  }
  return 0;
}

json_t *sg__page_next_key(const json_t *data, bool more, const char *const *members) {
  if (!more || json_array_size(data) == 0) return NULL;
  const json_t *last = json_array_get(data, json_array_size(data) - 1);
  json_t *key = json_array();
  for (size_t i = 0; members[i]; i++) json_array_append(key, json_object_get(last, members[i]));
  return key;
}

void sg__page_respond(sg_control *c, sg_req *req, sg_resp *resp, const char *scope, json_t *data,
                      json_t *next_key) {
  json_t *b = json_object();
  json_object_set_new(b, "data", data);
  char *nc = next_key ? sg_cursor_encode(c->cursor_secret, scope, next_key) : NULL;
  json_object_set_new(b, "nextCursor", nc ? json_string(nc) : json_null());
  free(nc);
  json_decref(next_key);
  json_object_set_new(b, "requestId", json_string(req->request_id));
  sg_resp_json(resp, 200, b);
}

void sg__store_error(sg_req *req, sg_resp *resp, sg_err e) {
  sg_resp_error(resp, req, e, NULL, NULL);
}

void sg__send_list(sg_req *req, sg_resp *resp, int status, json_t *list, json_t *edge_sync) {
  char etag[48];
  sg_store_list_etag(list, etag);
  sg_resp_header(resp, "ETag", etag);
  /* edgeSync is the state of the list's copy on the edge, not part of the list: it is
   * added after the ETag is taken, so the ETag changes only when the list does. */
  if (edge_sync) json_object_set_new(list, "edgeSync", edge_sync);
  sg_resp_json(resp, status, list);
}

void sg__send_version(sg_req *req, sg_resp *resp, int status, json_t *version) {
  sg__send_version_of(req, resp, status, req->params[0], version);
}

void sg__send_version_of(sg_req *req, sg_resp *resp, int status, const char *list_id,
                         json_t *version) {
  const char *hash = json_string_value(json_object_get(version, "contentHash"));
  if (hash) {
    /* RFC 7232 entity tags are quoted; the hash itself has no quote to escape. */
    char etag[96];
    snprintf(etag, sizeof etag, "\"%s\"", hash);
    sg_resp_header(resp, "ETag", etag);
  }
  char loc[192];
  snprintf(loc, sizeof loc, "/api/v1/lists/%s/versions/%lld", list_id,
           (long long)json_integer_value(json_object_get(version, "versionNumber")));
  sg_resp_header(resp, "Location", loc);
  sg_resp_json(resp, status, version);
}

void sg__send_item(sg_req *req, sg_resp *resp, int status, json_t *item) {
  char etag[48];
  sg_store_item_etag(item, etag);
  sg_resp_header(resp, "ETag", etag);
  sg_resp_json(resp, status, item);
}
