/*
 * PUT /api/v1/lists/{id}/synonyms: replaces all of the list's synonym sets (docs/DESIGN.md §3.4)
 * with {"synonyms":[…]} and answers 200 with the stored sets, as sent and in order, and
 * the resource's new ETag. A set is {"type":"equivalent","phrases":[2-20]} or
 * {"type":"oneWay","input":I,"phrases":[1-20]}; a phrase (and an input) is 1-100 code
 * points once normalised as the runtime normalises queries, and the texts of one set must
 * not normalise equal; at most 10,000 sets. Every problem is a 400 with its field path
 * ("synonyms[3].phrases[1]"); nothing is stored unless the whole body is valid.
 *
 * The body may be up to 4 MiB, four times an ordinary route's, so the route streams it
 * into a buffer of its own with that cap (413 beyond). If-Match (an ETag from GET or PUT,
 * or "*") is compared inside the store's write transaction: 412 with the current ETag.
 * The change is served from the list's next publish on.
 */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/util.h"
#include "compiler/normalize.h"
#include "control/internal.h"

#define SYN_MAX_BODY ((uint64_t)4 << 20)
#define SYN_MAX_SETS 10000
#define SYN_MAX_PHRASES 20
#define SYN_MAX_CPS 100
/* Field errors reported at most (the first ones, in body order). */
#define SYN_MAX_ERRORS 100

static void field(json_t **fields, const char *path, const char *reason) {
  if (*fields && json_array_size(*fields) >= SYN_MAX_ERRORS) return;
  sg_field_error(fields, path, reason);
}

/* Normalises one text at path: *out (malloc'd) when it is a string of 1..100 code points
 * once normalised, else NULL after recording why. */
static char *phrase(const json_t *v, const char *path, json_t **fields) {
  if (!json_is_string(v)) {
    field(fields, path, "must be a string");
    return NULL;
  }
  char *t;
  size_t n;
  if (sg_normalize(json_string_value(v), json_string_length(v), &t, &n)) {
    field(fields, path, "must be valid text");
    return NULL;
  }
  size_t cps = sg_utf8_count(t, n);
  if (cps < 1 || cps > SYN_MAX_CPS) {
    free(t);
    field(fields, path,
          cps < 1 ? "must contain a letter or a digit (it normalises to nothing)"
                  : "must be at most 100 code points once normalised");
    return NULL;
  }
  return t;
}

/* Validates set i; records its problems. */
static void check_set(const json_t *set, size_t i, json_t **fields) {
  char path[96];
  snprintf(path, sizeof path, "synonyms[%zu]", i);
  if (!json_is_object(set)) {
    field(fields, path, "must be an object {type, phrases} or {type, input, phrases}");
    return;
  }
  char prefix[104];
  snprintf(prefix, sizeof prefix, "%s.", path);
  const char *type = json_string_value(json_object_get(set, "type"));
  bool one_way = type && strcmp(type, "oneWay") == 0;
  static const char *const eq_allowed[] = {"type", "phrases", NULL};
  static const char *const ow_allowed[] = {"type", "input", "phrases", NULL};
  json_t *unknown = NULL;
  sg__reject_unknown(set, one_way ? ow_allowed : eq_allowed, prefix, &unknown);
  for (size_t k = 0; k < json_array_size(unknown); k++) {
    const json_t *u = json_array_get(unknown, k);
    field(fields, json_string_value(json_object_get(u, "path")),
          json_string_value(json_object_get(u, "reason")));
  }
  json_decref(unknown);
  char p[160];
  if (!type || (!one_way && strcmp(type, "equivalent") != 0)) {
    snprintf(p, sizeof p, "%stype", prefix);
    field(fields, p, "must be \"equivalent\" or \"oneWay\"");
    return;
  }
  size_t min = one_way ? 1 : 2;
  const json_t *ph = json_object_get(set, "phrases");
  size_t np = json_array_size(ph);
  snprintf(p, sizeof p, "%sphrases", prefix);
  if (!json_is_array(ph) || np < min || np > SYN_MAX_PHRASES) {
    field(fields, p,
          one_way ? "must be an array of 1 to 20 phrases" : "must be an array of 2 to 20 phrases");
    return;
  }
  /* The texts of the set, normalised: the phrases, then the input. */
  char *norm[SYN_MAX_PHRASES + 1] = {NULL};
  for (size_t j = 0; j < np; j++) {
    snprintf(p, sizeof p, "%sphrases[%zu]", prefix, j);
    norm[j] = phrase(json_array_get(ph, j), p, fields);
  }
  if (one_way) {
    snprintf(p, sizeof p, "%sinput", prefix);
    const json_t *in = json_object_get(set, "input");
    if (!in)
      field(fields, p, "is required for a oneWay set");
    else
      norm[np] = phrase(in, p, fields);
  }
  for (size_t j = 0; j < np; j++) {
    if (!norm[j]) continue;
    for (size_t k = 0; k <= np; k++) {
      if (k == j || !norm[k] || strcmp(norm[j], norm[k]) != 0) continue;
      if (k > j && k < np) continue; /* reported at the later phrase */
      char why[96];
      if (k == np)
        snprintf(why, sizeof why, "normalises equal to the input");
      else
        snprintf(why, sizeof why, "normalises equal to phrases[%zu]", k);
      snprintf(p, sizeof p, "%sphrases[%zu]", prefix, j);
      field(fields, p, why);
      break;
    }
  }
  for (size_t j = 0; j <= np; j++) free(norm[j]);
}

/* Validates a PUT body; returns its sets array (borrowed from body) or NULL with *fields. */
static const json_t *check_body(const json_t *body, json_t **fields) {
  static const char *const allowed[] = {"synonyms", NULL};
  sg__reject_unknown(body, allowed, "", fields);
  const json_t *sets = json_object_get(body, "synonyms");
  if (!json_is_array(sets)) {
    field(fields, "synonyms", "must be an array of synonym sets");
    return NULL;
  }
  if (json_array_size(sets) > SYN_MAX_SETS) {
    field(fields, "synonyms", "must hold at most 10000 sets");
    return NULL;
  }
  size_t i;
  const json_t *set;
  json_array_foreach(sets, i, set) check_set(set, i, fields);
  return *fields ? NULL : sets;
}

typedef struct {
  sg_control *c;
  sg_principal who;
  char list_id[64];
  sg_buf body;
  bool lost; /* a chunk could not be kept (no memory): the body is incomplete */
} put_ctx;

static int put_data(void *ctx, const char *data, size_t n) {
  put_ctx *x = ctx;
  if (sg_buf_append(&x->body, data, n) == 0) return 0;
  x->lost = true;
  return -1;
}

static void put_finish(void *ctx, sg_req *req, sg_resp *resp) {
  put_ctx *x = ctx;
  /* The server answers 413 itself past max_bytes; the buffer's own cap is the same. */
  if (x->lost) {
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    return;
  }
  json_error_t jerr;
  json_t *body =
      json_loadb(x->body.data ? x->body.data : "", x->body.len, JSON_REJECT_DUPLICATES, &jerr);
  json_t *fields = NULL;
  if (!body || !json_is_object(body)) {
    sg_field_error(&fields, "body", body ? "must be a JSON object" : "malformed JSON");
    json_decref(body);
    sg_resp_invalid_fields(resp, req, fields);
    return;
  }
  const json_t *sets = check_body(body, &fields);
  if (!sets) {
    json_decref(body);
    sg_resp_invalid_fields(resp, req, fields);
    return;
  }
  json_t *out = NULL;
  sg_err e = sg_store_synonyms_put(x->c->cfg.store, x->who.workspace_id, x->list_id, sets,
                                   sg_req_header(req, "If-Match"), &out);
  json_decref(body);
  if (e == SG_E_PRECONDITION_FAILED) {
    char etag[48];
    sg_store_synonyms_etag(out, etag);
    json_decref(out);
    sg_resp_header(resp, "ETag", etag);
    sg_resp_error(resp, req, SG_E_PRECONDITION_FAILED, NULL, NULL);
    return;
  }
  if (e != SG_E_OK) {
    json_decref(out);
    sg__store_error(req, resp, e);
    return;
  }
  sg__send_synonyms(resp, 200, out);
}

static void put_free(void *ctx) {
  put_ctx *x = ctx;
  sg_buf_free(&x->body);
  free(x);
}

sg_http_begin sg__h_synonyms_put(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp,
                                 sg_http_stream *stream) {
  /* A declared length over the cap is refused before the upload (the server's count
   * catches chunked bodies and lying lengths). */
  const char *cl = sg_req_header(req, "Content-Length");
  int64_t declared;
  if (cl && sg_parse_i64(cl, 0, INT64_MAX, &declared) == 0 && (uint64_t)declared > SYN_MAX_BODY) {
    sg_resp_too_large(resp, req, SYN_MAX_BODY);
    return SG_HTTP_RESPOND;
  }
  if (strlen(req->params[0]) >= sizeof((put_ctx *)0)->list_id) {
    sg__store_error(req, resp, SG_E_INVALID_LIST); /* longer than any id */
    return SG_HTTP_RESPOND;
  }
  put_ctx *x = calloc(1, sizeof *x);
  if (!x) {
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    return SG_HTTP_RESPOND;
  }
  x->c = c;
  x->who = *who;
  snprintf(x->list_id, sizeof x->list_id, "%s", req->params[0]);
  sg_buf_init(&x->body, SYN_MAX_BODY);
  *stream = (sg_http_stream){put_data, put_finish, put_free, x, SYN_MAX_BODY};
  return SG_HTTP_STREAM;
}
