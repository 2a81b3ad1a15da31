/* GET /api/v1/lists: the workspace's own lists, by displayOrder then slug. */
#include "control/internal.h"

void sg__h_lists_index(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  char scope[96];
  snprintf(scope, sizeof scope, "lists:%s", who->workspace_id);
  size_t limit;
  json_t *after;
  if (sg__page_params(c, req, resp, scope, &limit, &after)) return;
  if (after && !(json_array_size(after) == 3 && json_is_integer(json_array_get(after, 0)) &&
                 json_is_string(json_array_get(after, 1)) &&
                 json_is_string(json_array_get(after, 2)))) {
    json_decref(after);
    json_t *f = NULL;
    sg_field_error(&f, "cursor", "malformed or not issued for this collection");
    sg_resp_invalid_fields(resp, req, f);
    return;
  }
  json_t *data = NULL;
  bool more = false;
  sg_err e = sg_store_list_page(c->cfg.store, who->workspace_id, limit, after, &data, &more);
  json_decref(after);
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  json_t *next = NULL;
  if (more) {
    json_t *last = json_array_get(data, json_array_size(data) - 1);
    next = json_pack("[O,O,O]", json_object_get(last, "displayOrder"),
                     json_object_get(last, "slug"), json_object_get(last, "id"));
  }
  sg__page_respond(c, req, resp, scope, data, next);
}
