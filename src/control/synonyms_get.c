/* GET /api/v1/lists/{id}/synonyms: the list's synonym sets {"synonyms":[…]} as last stored
 * (docs/DESIGN.md §3.4), with the ETag of this resource (its own, not the list's) for If-Match on
 * PUT. This is also how synonyms are exported; they are served only once published. */
#include "control/internal.h"

void sg__h_synonyms_get(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  json_t *sets = NULL;
  sg_err e = sg_store_synonyms_get(c->cfg.store, who->workspace_id, req->params[0], &sets);
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  sg__send_synonyms(resp, 200, sets);
}
