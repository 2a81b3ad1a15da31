/* GET /api/v1/lists/{id}/items/{itemId}: one item with its ETag (for If-Match). */
#include "control/internal.h"

void sg__h_item_get(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  json_t *item = NULL;
  sg_err e =
      sg_store_item_get(c->cfg.store, who->workspace_id, req->params[0], req->params[1], &item);
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  sg__send_item(req, resp, 200, item);
}
