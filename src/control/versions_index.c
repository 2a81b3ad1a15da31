/* GET /api/v1/lists/{id}/versions: the list's versions, newest first, paginated. */
#include <stdio.h>

#include "control/internal.h"

void sg__h_versions_index(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  char scope[96];
  snprintf(scope, sizeof scope, "versions:%.80s", req->params[0]);
  size_t limit;
  json_t *after;
  if (sg__page_params(c, req, resp, scope, "i", &limit, &after)) return;
  json_t *data = NULL;
  bool more = false;
  sg_err e = sg_store_version_page(c->cfg.store, who->workspace_id, req->params[0], limit, after,
                                   &data, &more);
  json_decref(after);
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  static const char *const key[] = {"versionNumber", NULL};
  sg__page_respond(c, req, resp, scope, data, sg__page_next_key(data, more, key));
}
