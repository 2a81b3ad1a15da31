/*
 * POST /api/v1/lists/{id}/items/import?mode=append|replace — an NDJSON body of items,
 * streamed (see docs/IMPORT.md).
 *
 * When the headers arrive (after the rate limits and authentication) the list, the
 * Content-Type, the mode and the Idempotency-Key's shape are checked, so a bad request is
 * refused before any of a large body is read. Then each chunk goes through the line
 * splitter (one line at most IMPORT_MAX_LINE bytes), each line through jansson and the
 * same item validation as POST /items, and each valid item into the import's staging file
 * (its own SQLite connection: the store stays free for other requests). The body is
 * hashed as it streams. At the end, under the Idempotency-Key when one was sent, either
 * the bad lines are reported (at most IMPORT_MAX_ERRORS; nothing changed) or the staged
 * rows are applied in one store transaction.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/ndjson.h"
#include "common/util.h"
#include "control/internal.h"

#define IMPORT_MAX_LINE (64 * 1024)
#define IMPORT_MAX_ERRORS 100
#define IMPORT_DEFAULT_MAX_BYTES ((uint64_t)512 << 20)

/* One import request's state, owned by the HTTP stream (freed by import_free). */
typedef struct {
  sg_control *c;
  sg_principal who;
  char list_id[64];
  bool replace;
  crypto_hash_sha256_state hash;
  sg_ndjson split;
  sg_store_import *imp; /* NULL once staging failed */
  json_t *fields;       /* at most IMPORT_MAX_ERRORS {path, reason} */
  json_t *dups;         /* at most IMPORT_MAX_ERRORS {value, line, firstLine} */
  int64_t n_errors;     /* every problem found, reported or not */
  int64_t n_items;      /* valid item lines */
  bool internal;        /* staging failed: answer 500 */
  int64_t t0_ms;        /* when the headers arrived, for the log line */
} import_ctx;

static void add_error(import_ctx *x, json_t *errs) {
  size_t i;
  json_t *e;
  json_array_foreach(errs, i, e) {
    x->n_errors++;
    if (!x->fields) x->fields = json_array();
    if (json_array_size(x->fields) < IMPORT_MAX_ERRORS) json_array_append(x->fields, e);
  }
  json_decref(errs);
  /* Nothing will be applied any more, but staging goes on: its UNIQUE(value) is what
   * reports the duplicate values of later lines. */
}

/* Remembers which earlier line holds the value that line `index` repeats, so the answer
 * can name the value and both lines (details.duplicates). */
static void note_duplicate(import_ctx *x, const json_t *item, size_t index) {
  if (x->dups && json_array_size(x->dups) >= IMPORT_MAX_ERRORS) return;
  const char *value = json_string_value(json_object_get(item, "value"));
  int64_t first;
  if (!value || sg_store_import_line_of(x->imp, value, &first) != SG_E_OK) return;
  if (!x->dups) x->dups = json_array();
  json_array_append_new(x->dups, json_pack("{s:s,s:I,s:I}", "value", value, "line",
                                           (json_int_t)index, "firstLine", (json_int_t)first));
}

static int on_line(void *ctx, size_t index, const char *line, size_t n, bool too_long) {
  import_ctx *x = ctx;
  json_t *errs = NULL;
  if (too_long) {
    char path[48];
    snprintf(path, sizeof path, "lines[%zu]", index);
    sg_field_error(&errs, path, "line_too_long");
    add_error(x, errs);
    return 0;
  }
  char *parent = NULL;
  json_t *item = sg__import_line(line, n, index, &parent, &errs);
  if (!item) {
    add_error(x, errs);
    return 0;
  }
  x->n_items++;
  if (x->imp) {
    sg_err e = sg_store_import_add(x->imp, (int64_t)index, item, parent);
    if (e == SG_E_DUPLICATE_VALUE) {
      char path[48];
      snprintf(path, sizeof path, "lines[%zu].value", index);
      sg_field_error(&errs, path, "duplicate_value");
      add_error(x, errs);
      note_duplicate(x, item, index);
    } else if (e != SG_E_OK) {
      x->internal = true;
      sg_store_import_free(x->imp);
      x->imp = NULL;
    }
  }
  json_decref(item);
  free(parent);
  return 0;
}

static int import_data(void *ctx, const char *data, size_t n) {
  import_ctx *x = ctx;
  crypto_hash_sha256_update(&x->hash, (const unsigned char *)data, n);
  sg_ndjson_feed(&x->split, data, n);
  return x->internal ? 1 : 0;
}

/* The answer once the whole body is in; runs under the Idempotency-Key. */
typedef struct {
  import_ctx *x;
  sg_req *req;
} finish_call;

static void import_apply(void *arg, sg_resp *resp) {
  finish_call *fc = arg;
  import_ctx *x = fc->x;
  sg_req *req = fc->req;
  if (x->internal || (!x->imp && !x->n_errors)) {
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, "The import could not be staged; retry it.");
    return;
  }
  if (x->n_errors) {
    json_t *d = json_object();
    json_object_set(d, "fields", x->fields);
    json_object_set_new(d, "errorCount", json_integer(x->n_errors));
    char msg[256] = "Some lines are invalid; nothing was imported.";
    json_t *first = json_array_get(x->dups, 0);
    if (first) {
      json_object_set(d, "duplicates", x->dups);
      /* At most 80 bytes of the value, cut on a character boundary (the message must stay
       * valid UTF-8); details.duplicates has it whole. */
      const char *v = json_string_value(json_object_get(first, "value"));
      size_t vn = strlen(v);
      if (vn > 80) {
        vn = 80;
        while (vn && ((unsigned char)v[vn] & 0xC0) == 0x80) vn--;
      }
      snprintf(msg, sizeof msg,
               "lines[%lld] repeats the value \"%.*s%s\" of lines[%lld]; nothing was imported.",
               (long long)json_integer_value(json_object_get(first, "line")), (int)vn, v,
               vn < strlen(v) ? "..." : "",
               (long long)json_integer_value(json_object_get(first, "firstLine")));
    }
    sg_resp_error(resp, req, SG_E_INVALID_REQUEST, d, msg);
    return;
  }
  if (x->n_items == 0) {
    /* An empty replace would empty the list; far more often that is a sync whose export
     * failed than an intent, so a body without a single item is refused (both modes). */
    json_t *f = NULL;
    sg_field_error(&f, "body", "empty: the body holds no item line");
    sg_resp_invalid_fields(resp, req, f);
    return;
  }
  sg_import_counts n;
  json_t *bad = NULL;
  int64_t n_bad = 0;
  int64_t t0 = sg_mono_ms();
  sg_err e = sg_store_import_apply(x->c->cfg.store, x->imp, x->who.workspace_id, x->list_id,
                                   x->replace, IMPORT_MAX_ERRORS, &n, &bad, &n_bad);
  /* The staging file goes now, before the answer, not when the connection is done. */
  sg_store_import_free(x->imp);
  x->imp = NULL;
  fprintf(stderr,
          "{\"level\":\"info\",\"msg\":\"import\",\"list\":\"%s\",\"items\":%lld,"
          "\"streamMs\":%lld,\"applyMs\":%lld,\"ok\":%s,\"requestId\":\"%s\"}\n",
          x->list_id, (long long)x->n_items, (long long)(t0 - x->t0_ms),
          (long long)(sg_mono_ms() - t0), e == SG_E_OK ? "true" : "false", req->request_id);
  if (e == SG_E_INVALID_REQUEST) {
    json_t *fields = json_array();
    size_t i;
    json_t *line;
    json_array_foreach(bad, i, line) {
      char path[64];
      snprintf(path, sizeof path, "lines[%lld].parentValue", (long long)json_integer_value(line));
      sg_field_error(&fields, path, "unknown_parent");
    }
    json_decref(bad);
    json_t *d = json_pack("{s:o,s:I}", "fields", fields, "errorCount", (json_int_t)n_bad);
    sg_resp_error(resp, req, SG_E_INVALID_REQUEST, d,
                  "Some parentValue names no item; nothing was imported.");
    return;
  }
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  sg_resp_json(resp, 200,
               json_pack("{s:s,s:I,s:I,s:I,s:I,s:I}", "mode", x->replace ? "replace" : "append",
                         "lines", (json_int_t)sg_ndjson_lines(&x->split), "created",
                         (json_int_t)n.created, "updated", (json_int_t)n.updated, "deleted",
                         (json_int_t)n.deleted, "unchanged", (json_int_t)n.unchanged));
}

static void import_finish(void *ctx, sg_req *req, sg_resp *resp) {
  import_ctx *x = ctx;
  sg_ndjson_finish(&x->split);
  uint8_t digest[32];
  crypto_hash_sha256_final(&x->hash, digest);
  req->auth = &x->who;
  finish_call fc = {x, req};
  sg__idempotent(x->c, &x->who, req, resp, digest, import_apply, &fc);
}

static void import_free(void *ctx) {
  import_ctx *x = ctx;
  sg_store_import_free(x->imp);
  sg_ndjson_free(&x->split);
  json_decref(x->fields);
  json_decref(x->dups);
  free(x);
}

/* True when the Content-Type is application/x-ndjson (parameters allowed). */
static bool ndjson_type(const char *ct) {
  static const char want[] = "application/x-ndjson";
  if (!ct || strncasecmp(ct, want, sizeof want - 1) != 0) return false;
  char next = ct[sizeof want - 1];
  return next == '\0' || next == ';' || next == ' ';
}

sg_http_begin sg__items_import_stream(sg_control *c, const sg_principal *who, sg_req *req,
                                      sg_resp *resp, sg_http_stream *stream, bool any_type) {
  const char *mode = sg_req_query(req, "mode");
  json_t *fields = NULL;
  if (mode && strcmp(mode, "append") != 0 && strcmp(mode, "replace") != 0)
    sg_field_error(&fields, "mode", "must be append or replace");
  const char *key = sg_req_header(req, "Idempotency-Key");
  if (key && !sg__idem_key_valid(key))
    sg_field_error(&fields, "Idempotency-Key", "must be 1 to 255 printable ASCII characters");
  if (fields) {
    sg_resp_invalid_fields(resp, req, fields);
    return SG_HTTP_RESPOND;
  }
  json_t *list = NULL;
  sg_err e = sg_store_list_get(c->cfg.store, who->workspace_id, req->params[0], &list);
  if (e == SG_E_OK && strcmp(json_string_value(json_object_get(list, "status")), "archived") == 0)
    e = SG_E_LIST_ARCHIVED;
  json_decref(list);
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return SG_HTTP_RESPOND;
  }
  uint64_t max = c->cfg.import_max_bytes ? c->cfg.import_max_bytes : IMPORT_DEFAULT_MAX_BYTES;
  /* A declared length over the cap is refused before the upload (the server's count
   * catches chunked bodies and lying lengths). */
  const char *cl = sg_req_header(req, "Content-Length");
  int64_t declared;
  if (cl && sg_parse_i64(cl, 0, INT64_MAX, &declared) == 0 && (uint64_t)declared > max) {
    sg_resp_too_large(resp, req, max);
    return SG_HTTP_RESPOND;
  }
  if (!any_type && !ndjson_type(sg_req_header(req, "Content-Type"))) {
    sg_resp_error(resp, req, SG_E_UNSUPPORTED_MEDIA_TYPE, NULL,
                  "Send the items as Content-Type: application/x-ndjson.");
    return SG_HTTP_RESPOND;
  }
  import_ctx *x = calloc(1, sizeof *x);
  if (!x) {
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    return SG_HTTP_RESPOND;
  }
  x->c = c;
  x->who = *who;
  x->t0_ms = sg_mono_ms();
  snprintf(x->list_id, sizeof x->list_id, "%s", req->params[0]);
  x->replace = mode && strcmp(mode, "replace") == 0;
  /* The mode is part of what the Idempotency-Key binds: the same file appended or
   * replacing is a different request. */
  crypto_hash_sha256_init(&x->hash);
  crypto_hash_sha256_update(
      &x->hash, (const unsigned char *)(x->replace ? "replace\n" : "append\n"), x->replace ? 8 : 7);
  sg_ndjson_init(&x->split, IMPORT_MAX_LINE, on_line, x);
  if (sg_store_import_begin(c->cfg.store, &x->imp) != SG_E_OK) {
    import_free(x);
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    return SG_HTTP_RESPOND;
  }
  *stream = (sg_http_stream){import_data, import_finish, import_free, x, max};
  return SG_HTTP_STREAM;
}

sg_http_begin sg__h_items_import(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp,
                                 sg_http_stream *stream) {
  return sg__items_import_stream(c, who, req, resp, stream, false);
}
