/*
 * DELETE /api/v1/lists/{id}/items/{itemId}: 204. If-Match (optional) is compared inside
 * the store's write transaction (412 with the current ETag). An item that other items
 * name as parent is not deleted: 409 invalid_request, reason item_has_children (no
 * cascade: deleting a subtree by accident is worse than one more request; a replace
 * import removes whole subtrees at once). The deletion is not served until the next
 * publish.
 */
#include "control/internal.h"

void sg__h_item_delete(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  json_t *cur = NULL;
  sg_err e = sg_store_item_delete(c->cfg.store, who->workspace_id, req->params[0], req->params[1],
                                  sg_req_header(req, "If-Match"), &cur);
  if (e == SG_E_PRECONDITION_FAILED && cur) {
    char etag[48];
    sg_store_item_etag(cur, etag);
    json_decref(cur);
    sg_resp_header(resp, "ETag", etag);
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  json_decref(cur);
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  resp->status = 204;
}
