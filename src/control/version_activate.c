/*
 * POST /api/v1/lists/{id}/versions/{versionNumber}/activate: rollback (DESIGN §10,
 * docs/PUBLISHING.md "Rollback"). Makes a superseded version active again, through the
 * edge outbox like any activation: 200 with the version (activatedAt now) and edgeSync.
 * Already active: 200, nothing changes. 409 version_not_available when its artifact is no
 * longer kept (--keep-versions), version_not_activatable for a draft, queued, staged or
 * failed version, publish_in_progress while a publish of the list is queued or staged,
 * list_archived for an archived list; If-Match on the list is honoured (412 with the
 * list's ETag). A number the list never allocated is 400 naming "version", as on GET.
 */
#include <string.h>

#include "common/buf.h"
#include "common/util.h"
#include "control/internal.h"

static int collect(const void *data, size_t len, void *ctx) {
  return sg_buf_append(ctx, data, len);
}

/* Whether the artifact is on the edge, restoring it from the store's durable copy when
 * only that is left (PostgreSQL keeps one); checked against its hash before it is put. */
static bool artifact_kept(sg_control *c, const char *hash) {
  if (sg_edge_artifact_stat(c->cfg.edge, hash, NULL) == 0) return true;
  if (!sg_store_keeps_artifacts(c->cfg.store)) return false;
  sg_buf b;
  sg_buf_init(&b, (size_t)4 << 30);
  char got[72];
  bool ok = sg_store_artifact_get(c->cfg.store, hash, NULL, collect, &b) == SG_E_OK &&
            (sg_sha256_tagged(b.data, b.len, got), strcmp(got, hash) == 0) &&
            sg_edge_put_artifact(c->cfg.edge, hash, b.data, b.len) == 0;
  sg_buf_free(&b);
  return ok;
}

void sg__h_version_activate(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  const char *list_id = req->params[0];
  int64_t number;
  if (sg_parse_i64(req->params[1], 1, INT64_MAX, &number)) number = 0;
  char hash[80], state[16];
  sg_err e = sg_store_version_hash(c->cfg.store, who->workspace_id, list_id, number, hash, state);
  if (e == SG_E_NOT_FOUND) {
    json_t *f = NULL;
    sg_field_error(&f, "version", "not a version number this list allocated");
    sg_resp_invalid_fields(resp, req, f);
    return;
  }
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  /* The collector is held off from here until the store names the artifact again. */
  sg__artifact_gc_hold(c);
  bool superseded = strcmp(state, SG_VERSION_SUPERSEDED) == 0 && hash[0];
  if (superseded && !artifact_kept(c, hash)) {
    sg__artifact_gc_release(c);
    sg_resp_error(resp, req, SG_E_VERSION_NOT_AVAILABLE, NULL, NULL);
    return;
  }
  bool changed = false;
  json_t *list = NULL;
  e = sg_store_version_reactivate(c->cfg.store, who->workspace_id, list_id, number,
                                  sg_req_header(req, "If-Match"), &changed, &list);
  sg__artifact_gc_release(c);
  if (e == SG_E_PRECONDITION_FAILED) {
    char etag[48];
    sg_store_list_etag(list, etag);
    json_decref(list);
    sg_resp_header(resp, "ETag", etag);
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  json_decref(list);
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  if (changed)
    fprintf(stderr,
            "{\"level\":\"info\",\"msg\":\"version reactivated\",\"listId\":\"%s\","
            "\"versionNumber\":%lld}\n",
            list_id, (long long)number);
  json_t *v = NULL;
  e = sg_store_version_get(c->cfg.store, who->workspace_id, list_id, number, &v);
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  json_object_set_new(v, "edgeSync", sg__edge_sync_list(c, list_id));
  sg__send_version(req, resp, 200, v);
}
