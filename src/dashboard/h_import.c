/*
 * POST /dashboard/api/lists/{id}/items/import — the dashboard's file import, by the
 * rules of `suggestd import` (docs/IMPORT.md, docs/DASHBOARD.md).
 *
 * The browser sends the user's file as it is. Its format is the `format` query parameter
 * (ndjson, json, csv, tsv) or else the Content-Type (application/x-ndjson,
 * application/json, text/csv, text/tab-separated-values). The body streams through the
 * CLI's converter (client/convert.h) into the control plane's own import stream, which
 * validates, stages and applies exactly as POST /api/v1/lists/{id}/items/import does.
 *
 * What the answer adds to that route's: a 400 keeps details.fields (paths `lines[N]…` of
 * the converted NDJSON, 0-based) and gives each of those entries the 1-based `line` of the
 * user's file it came from, details.duplicates their `fileLine` and `firstFileLine`, and
 * details.problems the same as sentences ("line 3: rank: must be an integer …"); the
 * message names the first one. A file the converter refuses (a quote never closed, a row
 * with too many fields) is a 400 whose message is the converter's sentence, with its line.
 * A CSV header column that maps to no item field is ignored, and the answer (200 or 400)
 * says so in `ignoredColumns` and `note`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client/convert.h"
#include "dashboard/internal.h"

typedef struct {
  sg_http_stream inner; /* the control plane's NDJSON import */
  sg_convert conv;
  sg_buf out;  /* NDJSON converted from the last chunk */
  bool failed; /* the converter refused the file: conv.err says where */
  bool inner_stopped;
} convert_stream;

static int cs_pass(convert_stream *s) {
  int rc = 0;
  if (s->out.len && !s->inner_stopped) rc = s->inner.on_data(s->inner.ctx, s->out.data, s->out.len);
  sg_buf_reset(&s->out);
  if (rc) s->inner_stopped = true;
  return rc;
}

static int cs_data(void *ctx, const char *data, size_t n) {
  convert_stream *s = ctx;
  if (s->failed) return 1;
  if (sg_convert_feed(&s->conv, data, n, &s->out)) {
    s->failed = true;
    return 1;
  }
  return cs_pass(s);
}

/* The header's columns that map to no item field, as an array of names. */
static json_t *ignored_columns(const sg_convert *c) {
  json_t *a = json_array();
  for (size_t i = 0; i < c->nheader; i++) {
    bool used = false;
    for (size_t f = 0; f < sizeof c->col / sizeof c->col[0]; f++)
      used = used || c->col[f] == (int)i;
    json_t *name = used ? NULL : json_string(c->header[i]);
    if (name) json_array_append_new(a, name); /* a name that is not UTF-8 is left out */
  }
  return a;
}

/* Adds ignoredColumns and a note to an answer object when the CSV header had any. */
static void add_note(const sg_convert *c, json_t *o) {
  json_t *cols = ignored_columns(c);
  if (json_array_size(cols) == 0) {
    json_decref(cols);
    return;
  }
  char names[512];
  sg_convert_unused_columns(c, names, sizeof names);
  char note[768];
  snprintf(note, sizeof note,
           "Ignored CSV column%s: %s (the columns read are value, displayValue, rank, "
           "aliases, parentValue, displayOrder and description).",
           json_array_size(cols) == 1 ? "" : "s", names);
  json_object_set_new(o, "ignoredColumns", cols);
  json_t *n = json_string(note);
  if (n) json_object_set_new(o, "note", n);
}

/* Rewrites the control plane's 400 so that it names the lines of the user's file. */
static void map_lines(const sg_convert *c, json_t *body) {
  json_t *d = json_object_get(body, "details");
  if (!json_is_object(d)) return;
  size_t i;
  json_t *e;
  json_array_foreach(json_object_get(d, "fields"), i, e) {
    const char *path = json_string_value(json_object_get(e, "path"));
    long long idx;
    if (path && sscanf(path, "lines[%lld]", &idx) == 1)
      json_object_set_new(e, "line", json_integer(sg_convert_source_line(c, idx)));
  }
  json_array_foreach(json_object_get(d, "duplicates"), i, e) {
    json_object_set_new(
        e, "fileLine",
        json_integer(sg_convert_source_line(c, json_integer_value(json_object_get(e, "line")))));
    json_object_set_new(e, "firstFileLine",
                        json_integer(sg_convert_source_line(
                            c, json_integer_value(json_object_get(e, "firstLine")))));
  }
  json_t *problems = sg_convert_problems(c, d);
  const char *first = json_string_value(json_array_get(problems, 0));
  if (first) {
    char msg[512];
    size_t more = json_array_size(problems) - 1;
    json_int_t total = json_integer_value(json_object_get(d, "errorCount"));
    if ((json_int_t)more + 1 < total) more = (size_t)(total - 1);
    if (more)
      snprintf(msg, sizeof msg, "%.400s (and %zu more); nothing was imported.", first, more);
    else
      snprintf(msg, sizeof msg, "%.400s; nothing was imported.", first);
    json_t *m = json_string(msg);
    if (m) json_object_set_new(body, "message", m);
  }
  json_object_set_new(d, "problems", problems);
}

static void cs_finish(void *ctx, sg_req *req, sg_resp *resp) {
  convert_stream *s = ctx;
  if (!s->failed && sg_convert_finish(&s->conv, &s->out)) s->failed = true;
  if (s->failed) {
    /* The converter's hint names the CLI's flag; the dashboard has no column mapping. */
    char *hint = strstr(s->conv.err, "; name the column that holds");
    if (hint)
      snprintf(hint, sizeof s->conv.err - (size_t)(hint - s->conv.err),
               "; rename the column that holds the values to value");
    json_t *f = NULL;
    sg_field_error(&f, "file", s->conv.err);
    json_t *d = json_pack("{s:o}", "fields", f);
    add_note(&s->conv, d);
    char msg[320];
    snprintf(msg, sizeof msg, "%s; nothing was imported.", s->conv.err);
    sg_resp_error(resp, req, SG_E_INVALID_REQUEST, d, msg);
    return;
  }
  cs_pass(s);
  s->inner.on_finish(s->inner.ctx, req, resp);
  if (resp->status != 200 && resp->status != 400) return;
  json_t *body = json_loadb(resp->body.data, resp->body.len, 0, NULL);
  if (!json_is_object(body)) {
    json_decref(body);
    return;
  }
  if (resp->status == 400) {
    map_lines(&s->conv, body);
    json_t *d = json_object_get(body, "details");
    if (json_is_object(d)) add_note(&s->conv, d);
  } else {
    add_note(&s->conv, body);
  }
  sg_resp_json(resp, resp->status, body);
}

static void cs_free(void *ctx) {
  convert_stream *s = ctx;
  if (s->inner.on_free) s->inner.on_free(s->inner.ctx);
  sg_convert_free(&s->conv);
  sg_buf_free(&s->out);
  free(s);
}

/* The media type of a Content-Type, without parameters, compared case-insensitively. */
static bool media_is(const char *ct, const char *want) {
  size_t n = strlen(want);
  if (!ct || strncasecmp(ct, want, n) != 0) return false;
  return ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ';
}

sg_http_begin sg__dh_items_import(sg_control *c, const sg_principal *who, sg_req *req,
                                  sg_resp *resp, sg_http_stream *stream) {
  sg_import_format fmt;
  sg_csv_map map = {0};
  const char *f = sg_req_query(req, "format");
  if (f) {
    if (sg_convert_parse_format(f, &fmt, &map.delimiter)) {
      json_t *fields = NULL;
      sg_field_error(&fields, "format", "must be ndjson, json, csv or tsv");
      sg_resp_invalid_fields(resp, req, fields);
      return SG_HTTP_RESPOND;
    }
  } else {
    const char *ct = sg_req_header(req, "Content-Type");
    if (media_is(ct, "application/x-ndjson"))
      fmt = SG_FMT_NDJSON;
    else if (media_is(ct, "application/json"))
      fmt = SG_FMT_JSON;
    else if (media_is(ct, "text/csv"))
      fmt = SG_FMT_CSV;
    else if (media_is(ct, "text/tab-separated-values")) {
      fmt = SG_FMT_CSV;
      map.delimiter = '\t';
    } else {
      sg_resp_error(resp, req, SG_E_UNSUPPORTED_MEDIA_TYPE, NULL,
                    "Send the file as Content-Type: text/csv, text/tab-separated-values, "
                    "application/json (an array of items) or application/x-ndjson, or name "
                    "its format with ?format=csv|tsv|json|ndjson.");
      return SG_HTTP_RESPOND;
    }
  }
  convert_stream *s = calloc(1, sizeof *s);
  if (!s) {
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    return SG_HTTP_RESPOND;
  }
  sg_http_begin kind = sg__items_import_stream(c, who, req, resp, &s->inner, true);
  if (kind != SG_HTTP_STREAM) {
    free(s);
    return kind;
  }
  sg_convert_init(&s->conv, fmt, &map);
  sg_buf_init(&s->out, 0);
  *stream = (sg_http_stream){cs_data, cs_finish, cs_free, s, s->inner.max_bytes};
  return SG_HTTP_STREAM;
}
