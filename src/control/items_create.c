/* POST /api/v1/lists/{id}/items: validate the body, then insert (201). */
#include <stdio.h>

#include "control/internal.h"

void sg__h_items_create(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  json_t *body = sg__body_object(req, resp);
  if (!body) return;
  json_t *fields = NULL;
  json_t *item = sg__item_validate(body, &fields);
  json_decref(body);
  if (!item) {
    sg_resp_invalid_fields(resp, req, fields);
    return;
  }
  json_t *out = NULL;
  sg_err e = sg_store_item_create(c->cfg.store, who->workspace_id, req->params[0], item, &out);
  json_decref(item);
  if (e == SG_E_INVALID_REQUEST) {
    /* The store's only invalid_request: parentId names no item of this list. */
    fields = NULL;
    sg_field_error(&fields, "parentId", "must be the id of an item of this list");
    sg_resp_invalid_fields(resp, req, fields);
    return;
  }
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  char loc[192];
  snprintf(loc, sizeof loc, "/api/v1/lists/%s/items/%s", req->params[0],
           json_string_value(json_object_get(out, "id")));
  sg_resp_header(resp, "Location", loc);
  sg_resp_json(resp, 201, out);
}
