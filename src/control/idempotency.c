/*
 * The Idempotency-Key middleware (internal.h: sg__idempotent), shared by the control
 * plane's routes, its streamed import and the dashboard's routes that take the key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "control/internal.h"

bool sg__idem_key_valid(const char *k) {
  size_t n = 0;
  for (; k[n]; n++)
    if ((unsigned char)k[n] < 0x20 || (unsigned char)k[n] > 0x7e || n >= 255) return false;
  return n >= 1;
}

/* Response headers worth replaying with an idempotent answer. */
static char *headers_json(const sg_resp *resp) {
  json_t *h = json_object();
  for (size_t i = 0; i < resp->nheaders; i++)
    if (strcasecmp(resp->hname[i], "ETag") == 0 || strcasecmp(resp->hname[i], "Location") == 0)
      json_object_set_new(h, resp->hname[i], json_string(resp->hvalue[i]));
  char *s = json_dumps(h, JSON_COMPACT);
  json_decref(h);
  return s;
}

void sg__idempotent(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp,
                    const uint8_t body_hash[32], void (*run)(void *arg, sg_resp *resp), void *arg) {
  const char *key = sg_req_header(req, "Idempotency-Key");
  if (!key) {
    run(arg, resp);
    return;
  }
  if (!sg__idem_key_valid(key)) {
    json_t *f = NULL;
    sg_field_error(&f, "Idempotency-Key", "must be 1 to 255 printable ASCII characters");
    sg_resp_invalid_fields(resp, req, f);
    return;
  }
  sg_idem_state state;
  int status = 0;
  char *body = NULL, *hdrs = NULL;
  sg_err e = sg_store_idem_begin(c->cfg.store, who->workspace_id, key, req->method, req->path,
                                 body_hash, &state, &status, &body, &hdrs);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  switch (state) {
  case SG_IDEM_REUSED: sg_resp_error(resp, req, SG_E_IDEMPOTENCY_KEY_REUSED, NULL, NULL); break;
  case SG_IDEM_IN_FLIGHT:
    sg_resp_error(resp, req, SG_E_IDEMPOTENCY_KEY_IN_FLIGHT, NULL, NULL);
    break;
  case SG_IDEM_REPLAY: {
    resp->status = status;
    sg_buf_reset(&resp->body);
    sg_buf_puts(&resp->body, body);
    json_t *h = hdrs ? json_loads(hdrs, 0, NULL) : NULL;
    const char *name;
    json_t *v;
    json_object_foreach(h, name, v) sg_resp_header(resp, name, json_string_value(v));
    json_decref(h);
    sg_resp_header(resp, "Idempotent-Replayed", "true");
    break;
  }
  case SG_IDEM_PROCEED: {
    run(arg, resp);
    char *hj = headers_json(resp);
    if (sg_store_idem_finish(c->cfg.store, who->workspace_id, key, resp->status,
                             resp->body.data ? resp->body.data : "", hj) != SG_E_OK)
      fprintf(stderr,
              "{\"level\":\"error\",\"msg\":\"idempotency record not saved\","
              "\"requestId\":\"%s\"}\n",
              req->request_id);
    free(hj);
    break;
  }
  }
  free(body);
  free(hdrs);
}
