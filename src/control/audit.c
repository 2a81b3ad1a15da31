/*
 * The audit log of writes made with a secret key through /api/v1 (issue 27): every
 * successful write is one entry whose actor is the key's id (secret keys are never
 * logged), next to the dashboard's members and the admin CLI's rows (docs/DASHBOARD.md,
 * "Audit log").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/internal.h"
#include "store/members.h"

void sg__audit_target(const sg_req *req, const sg_resp *resp, char *out, size_t n) {
  out[0] = '\0';
  if (resp->body.len && resp->body.len < 65536) {
    json_t *b = json_loadb(resp->body.data, resp->body.len, 0, NULL);
    const char *id = json_string_value(json_object_get(b, "id"));
    json_t *vn = json_object_get(b, "versionNumber");
    if (id && req->nparams == 0)
      snprintf(out, n, "%s", id);
    else if (json_is_integer(vn) && req->nparams >= 1)
      snprintf(out, n, "%s/versions/%lld", req->params[0], (long long)json_integer_value(vn));
    else if (id && req->nparams == 1 && strncmp(id, "itm_", 4) == 0)
      snprintf(out, n, "%s/%s", req->params[0], id);
    json_decref(b);
    if (out[0]) return;
  }
  size_t o = 0;
  for (size_t i = 0; i < req->nparams && o < n; i++) {
    int w = snprintf(out + o, n - o, "%s%s", i ? "/" : "", req->params[i]);
    if (w < 0) break;
    o += (size_t)w;
  }
}

void sg__control_audit(sg_control *c, const char *workspace_id, const char *key_id,
                       const sg_req *req, const sg_resp *resp, const char *action) {
  if (!action || resp->status < 200 || resp->status >= 300) return;
  char target[256];
  sg__audit_target(req, resp, target, sizeof target);
  sg_audit_entry e = {
      .workspace_id = workspace_id,
      .actor = key_id,
      .action = action,
      .target = target[0] ? target : NULL,
      .request_id = req->request_id,
      .status = resp->status,
  };
  if (sg_store_audit_add(c->cfg.store, &e) != SG_E_OK)
    fprintf(stderr,
            "{\"level\":\"error\",\"msg\":\"audit entry not saved\",\"requestId\":\"%s\"}\n",
            req->request_id);
}

/* The streaming routes (the import): the entry is written when the answer is decided. */
typedef struct {
  sg_http_stream inner;
  sg_control *c;
  char workspace_id[64], key_id[64];
  const char *action;
} audited;

static int au_data(void *ctx, const char *data, size_t n) {
  audited *a = ctx;
  return a->inner.on_data(a->inner.ctx, data, n);
}

static void au_finish(void *ctx, sg_req *req, sg_resp *resp) {
  audited *a = ctx;
  a->inner.on_finish(a->inner.ctx, req, resp);
  sg__control_audit(a->c, a->workspace_id, a->key_id, req, resp, a->action);
}

static void au_free(void *ctx) {
  audited *a = ctx;
  if (a->inner.on_free) a->inner.on_free(a->inner.ctx);
  free(a);
}

sg_http_begin sg__control_audit_stream(sg_control *c, const sg_principal *who, const char *action,
                                       sg_req *req, sg_resp *resp, sg_http_stream *stream,
                                       sg__stream_handler fn) {
  audited *a = calloc(1, sizeof *a);
  if (!a) {
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    return SG_HTTP_RESPOND;
  }
  sg_http_begin kind = fn(c, who, req, resp, &a->inner);
  if (kind != SG_HTTP_STREAM) {
    free(a);
    return kind;
  }
  a->c = c;
  a->action = action;
  snprintf(a->workspace_id, sizeof a->workspace_id, "%s", who->workspace_id);
  snprintf(a->key_id, sizeof a->key_id, "%s", who->key_id);
  stream->on_data = au_data;
  stream->on_finish = au_finish;
  stream->on_free = au_free;
  stream->ctx = a;
  stream->max_bytes = a->inner.max_bytes;
  return SG_HTTP_STREAM;
}
