/*
 * PATCH /api/v1/lists/{id}/items/{itemId}: any of the fields POST …/items takes; the
 * members sent replace the current ones and null resets a field to its default (as in
 * POST). The merged item is validated exactly as a new one (sg__item_validate), so the
 * paths and reasons of errors are the same. A value already used by another item answers
 * 409 duplicate_value; a parentId that names no item of the list, or the item itself or
 * one of its descendants, answers 400 parentId.
 *
 * If-Match (an ETag from GET …/items/{itemId}, or "*") is compared inside the store's
 * write transaction. The merge itself is protected the same way: the update is applied
 * only if the item still has the ETag of the version that was merged, else the merge is
 * redone (so two PATCHes of different fields never lose one another's change), and with
 * an If-Match that no longer matches the answer is 412 with the current ETag.
 * Edits are not served until the list's next publish.
 */
#include <string.h>

#include "common/util.h"
#include "control/internal.h"

/* Merge attempts when the item changes between the read and the write. */
#define MERGE_TRIES 5

static void precondition_failed(sg_req *req, sg_resp *resp, json_t *cur) {
  char etag[48];
  sg_store_item_etag(cur, etag);
  json_decref(cur);
  sg_resp_header(resp, "ETag", etag);
  sg_resp_error(resp, req, SG_E_PRECONDITION_FAILED, NULL, NULL);
}

void sg__h_item_patch(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  json_t *body = sg__body_object(req, resp);
  if (!body) return;
  const char *if_match = sg_req_header(req, "If-Match");
  for (int attempt = 0; attempt < MERGE_TRIES; attempt++) {
    json_t *cur = NULL;
    sg_err e =
        sg_store_item_get(c->cfg.store, who->workspace_id, req->params[0], req->params[1], &cur);
    if (e != SG_E_OK) {
      json_decref(body);
      sg__store_error(req, resp, e);
      return;
    }
    char base[48];
    sg_store_item_etag(cur, base);
    if (if_match && !sg_etag_match(if_match, base)) {
      json_decref(body);
      precondition_failed(req, resp, cur);
      return;
    }
    json_t *merged = json_deep_copy(cur);
    json_object_del(merged, "id");
    json_object_del(merged, "createdAt");
    json_object_update(merged, body);
    json_decref(cur);
    json_t *fields = NULL;
    json_t *item = sg__item_validate(merged, &fields);
    json_decref(merged);
    if (!item) {
      json_decref(body);
      sg_resp_invalid_fields(resp, req, fields);
      return;
    }
    json_t *out = NULL;
    e = sg_store_item_update(c->cfg.store, who->workspace_id, req->params[0], req->params[1], item,
                             base, &out);
    json_decref(item);
    if (e == SG_E_PRECONDITION_FAILED) {
      /* Changed since the read: merge again onto the current item (whose ETag no longer
       * matches a specific If-Match, which then answers 412 above). */
      json_decref(out);
      continue;
    }
    json_decref(body);
    if (e == SG_E_INVALID_REQUEST) {
      fields = NULL;
      sg_field_error(&fields, "parentId",
                     "must be the id of another item of this list that is not a descendant");
      sg_resp_invalid_fields(resp, req, fields);
      return;
    }
    if (e != SG_E_OK) {
      sg__store_error(req, resp, e);
      return;
    }
    sg__send_item(req, resp, 200, out);
    return;
  }
  json_decref(body);
  sg_resp_error(resp, req, SG_E_IDEMPOTENCY_KEY_IN_FLIGHT, NULL,
                "The item is being changed by other requests; retry.");
}
