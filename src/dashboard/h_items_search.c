/*
 * GET /dashboard/api/lists/{id}/items/search?q=…&limit=&cursor=: the items whose value
 * starts with q (ASCII letters in either case), by value then id, paginated like the
 * item list; without q (or q empty) every item, by value: the dashboard's items table.
 * Served from an index, so it stays fast on a list of a million items.
 */
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "dashboard/internal.h"

void sg__dh_items_search(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  const char *q = sg_req_query(req, "q");
  if (!q) q = "";
  size_t n = strlen(q);
  if (n > 1024 || !sg_utf8_valid(q, n)) {
    json_t *f = NULL;
    sg_field_error(&f, "q", "must be at most 1024 bytes of UTF-8");
    sg_resp_invalid_fields(resp, req, f);
    return;
  }
  /* The cursor is scoped to the list and the query: another search's cursor is refused. */
  char scope[128], qd[72];
  sg_sha256_tagged(q, n, qd);
  snprintf(scope, sizeof scope, "search:%.40s:%.16s", req->params[0], qd + 7);
  size_t limit;
  json_t *after;
  if (sg__page_params(c, req, resp, scope, "ss", &limit, &after)) return;
  json_t *data = NULL;
  bool more = false;
  sg_err e = sg_store_item_search(c->cfg.store, d->m.workspace_id, req->params[0], q, limit, after,
                                  &data, &more);
  json_decref(after);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  static const char *const key[] = {"value", "id", NULL};
  sg__page_respond(c, req, resp, scope, data, sg__page_next_key(data, more, key));
}
