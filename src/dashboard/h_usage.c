/*
 * Usage against quota, selection analytics and the audit log.
 *
 * Query counts and selection events are the runtime's, not the relational store's: they
 * are read through the shared state's reader (state/state.h) on the spec the control
 * plane was given (cfg.state): the runtime's state directory for `suggestd serve` (and
 * `suggestd control --data-dir D`), a fleet's Redis for --edge redis://…. Without one,
 * usage answers with "used": null. A fleet's selection events are not counted in the
 * state: every control process's drain (control/drain.c) moves them into the store,
 * which answers the counts (SG_STATE_IN_STORE).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/util.h"
#include "dashboard/internal.h"
#include "state/state.h"

#define READ_TIMEOUT_MS 1000

/* A reader of the runtimes' state for one request, or NULL without one. */
static sg_state_reader *state_reader(sg_control *c) {
  sg_state_reader *r = NULL;
  if (c->cfg.state && sg_state_reader_open(c->cfg.state, READ_TIMEOUT_MS, &r)) r = NULL;
  return r;
}

static void month_of(int64_t unix_s, char out[40]) {
  time_t t = (time_t)unix_s;
  struct tm tm;
  gmtime_r(&t, &tm);
  snprintf(out, 40, "%04d-%02d", tm.tm_year + 1900, tm.tm_mon + 1);
}

void sg__dh_usage(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  json_t *apps = NULL;
  sg_err e = sg_store_application_list(c->cfg.store, d->m.workspace_id, &apps);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  int64_t now = sg_now_s();
  char month[40];
  month_of(now, month);
  size_t n = json_array_size(apps);
  const char **ids = calloc(n ? n : 1, sizeof *ids);
  int64_t *used = calloc(n ? n : 1, sizeof *used);
  /* Unreadable (Redis down): "used" is null and usageAvailable false, as without a
   * runtime. */
  bool available = false;
  sg_state_reader *r = ids && used ? state_reader(c) : NULL;
  if (r) {
    for (size_t i = 0; i < n; i++)
      ids[i] = json_string_value(json_object_get(json_array_get(apps, i), "id"));
    available = sg_state_read_usage(r, now, ids, n, used) == 0;
  }
  sg_state_reader_close(r);
  size_t i;
  json_t *a;
  json_array_foreach(apps, i, a) {
    json_object_set_new(a, "used", available ? json_integer(used[i]) : json_null());
  }
  free(ids);
  free(used);
  sg_resp_json(resp, 200,
               json_pack("{s:s,s:b,s:o,s:s}", "month", month, "usageAvailable", available,
                         "applications", apps, "requestId", req->request_id));
}

/* ---- selections ---------------------------------------------------------------------------- */

void sg__dh_selections(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  json_t *list = NULL;
  sg_err e = sg_store_list_get(c->cfg.store, d->m.workspace_id, req->params[0], &list);
  json_decref(list);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  int64_t days = 7;
  const char *q = sg_req_query(req, "days");
  if (q && sg_parse_i64(q, 1, SG_STATE_MAX_DAYS, &days)) {
    json_t *f = NULL;
    sg_field_error(&f, "days", "must be an integer from 1 to 90");
    sg_resp_invalid_fields(resp, req, f);
    return;
  }
  /* From the analytics aggregates in the store (docs/DESIGN.md §9), per list: the raw events are
   * no longer scanned, so another list's traffic cannot hide this one's. */
  int64_t now = sg_now_s(), today = now / 86400, d0 = today - days + 1;
  json_t *stored = NULL;
  e = sg_store_analytics_read(c->cfg.store, req->params[0], d0 * 24, (today + 1) * 24,
                              SG_STATE_TOP_ITEMS, &stored);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  int64_t per[SG_STATE_MAX_DAYS] = {0};
  size_t i;
  json_t *v;
  json_array_foreach(json_object_get(stored, "selectionDays"), i, v) {
    int64_t k = json_integer_value(json_array_get(v, 0)) - d0;
    if (k >= 0 && k < days) per[k] += json_integer_value(json_array_get(v, 1));
  }
  json_t *per_day = json_array();
  int64_t total = 0;
  for (int64_t k = 0; k < days; k++) {
    time_t t = (time_t)((d0 + k) * 86400);
    struct tm tm;
    gmtime_r(&t, &tm);
    char date[40];
    snprintf(date, sizeof date, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
    total += per[k];
    json_array_append_new(per_day,
                          json_pack("{s:s,s:I}", "date", date, "selections", (json_int_t)per[k]));
  }
  json_t *top = json_array();
  json_array_foreach(json_object_get(stored, "topItems"), i, v) {
    json_t *item = NULL;
    const char *item_id = json_string_value(json_object_get(v, "itemId"));
    json_t *o =
        json_pack("{s:s,s:O}", "itemId", item_id, "selections", json_object_get(v, "selections"));
    /* The item as it is now (it may have been deleted since). */
    if (sg_store_item_get(c->cfg.store, d->m.workspace_id, req->params[0], item_id, &item) ==
        SG_E_OK) {
      json_object_set(o, "value", json_object_get(item, "value"));
      json_object_set(o, "displayValue", json_object_get(item, "displayValue"));
    } else {
      json_object_set_new(o, "value", json_null());
      json_object_set_new(o, "displayValue", json_null());
    }
    json_decref(item);
    json_array_append_new(top, o);
  }
  json_decref(stored);
  sg_resp_json(resp, 200,
               json_pack("{s:s,s:I,s:I,s:b,s:o,s:o,s:s}", "listId", req->params[0], "days",
                         (json_int_t)days, "total", (json_int_t)total, "eventsAvailable",
                         c->cfg.state != NULL, "perDay", per_day, "topItems", top, "requestId",
                         req->request_id));
}

/* ---- analytics ------------------------------------------------------------------------------ */

/* GET /dashboard/api/lists/{id}/analytics?from=&to=: the /api/v1 answer (docs/DESIGN.md §9). */
void sg__dh_analytics(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  json_t *list = NULL;
  sg_err e = sg_store_list_get(c->cfg.store, d->m.workspace_id, req->params[0], &list);
  json_decref(list);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  sg__analytics_answer(c->cfg.store, req->params[0], sg_req_query(req, "from"),
                       sg_req_query(req, "to"), req, resp);
}

/* ---- the audit log ----------------------------------------------------------------------------
 */

void sg__dh_audit(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  sg__dash_page(c, d, req, resp, "audit", "seq", sg_store_audit_page);
}
