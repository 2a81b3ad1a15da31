/* GET /api/v1/lists/{id}: the list and its edgeSync state, so a client that changed a
 * served field can wait until the runtime serves the change ("synced"). */
#include "control/internal.h"

void sg__h_list_get(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  json_t *list = NULL;
  sg_err e = sg_store_list_get(c->cfg.store, who->workspace_id, req->params[0], &list);
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  sg__send_list(req, resp, 200, list, sg__edge_sync_state(c, "lists", req->params[0]));
}
