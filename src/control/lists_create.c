/* POST /api/v1/lists: body {name, description?}. */
#include <string.h>

#include "control/internal.h"

void sg__h_lists_create(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  json_t *body = sg__body_object(req, resp);
  if (!body) return;
  static const char *const allowed[] = {"name", "description", NULL};
  json_t *fields = NULL;
  sg__reject_unknown(body, allowed, "", &fields);
  json_t *name = json_object_get(body, "name");
  json_t *desc = json_object_get(body, "description");
  if (!name)
    sg_field_error(&fields, "name", "required");
  else if (!json_is_string(name))
    sg_field_error(&fields, "name", "must be a string");
  else if (sg__cp_len(json_string_value(name)) < 1 || sg__cp_len(json_string_value(name)) > 200)
    sg_field_error(&fields, "name", "must be 1 to 200 characters");
  if (desc && !json_is_null(desc)) {
    if (!json_is_string(desc))
      sg_field_error(&fields, "description", "must be a string");
    else if (sg__cp_len(json_string_value(desc)) > 2000)
      sg_field_error(&fields, "description", "must be at most 2000 characters");
  }
  if (fields) {
    json_decref(body);
    sg_resp_invalid_fields(resp, req, fields);
    return;
  }
  json_t *list = NULL;
  sg_err e = sg_store_list_create(c->cfg.store, who->workspace_id, json_string_value(name),
                                  json_is_string(desc) ? json_string_value(desc) : NULL, &list);
  json_decref(body);
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  /* The runtime learns about the list now, so a key made for it before the first publish
   * answers list_not_published rather than invalid_key. */
  json_t *sync = sg__edge_sync_list(c, json_string_value(json_object_get(list, "id")));
  char loc[128];
  snprintf(loc, sizeof loc, "/api/v1/lists/%s", json_string_value(json_object_get(list, "id")));
  sg_resp_header(resp, "Location", loc);
  sg__send_list(req, resp, 201, list, sync);
}
