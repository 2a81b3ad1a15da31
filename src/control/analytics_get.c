/*
 * GET /api/v1/lists/{id}/analytics?from=YYYY-MM-DD&to=YYYY-MM-DD (docs/DESIGN.md §9):
 * a list's search analytics over whole UTC days, from the store's aggregates (the
 * runtimes' shipments, control/analytics_drain.c). The dashboard answers the same
 * through sg__analytics_answer (dashboard/h_analytics.c).
 *
 * Both days are required, inclusive, at most SG__ANALYTICS_MAX_DAYS apart; a bad one is
 * 400 invalid_request with details.fields naming "from" or "to".
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "control/internal.h"

#define SG__ANALYTICS_MAX_DAYS 92
#define TOP 100

/* "YYYY-MM-DD" of a real calendar day into Unix days; -1 when it is not one. */
static int64_t parse_day(const char *s) {
  if (!s || strlen(s) != 10 || s[4] != '-' || s[7] != '-') return -1;
  for (int i = 0; i < 10; i++)
    if (i != 4 && i != 7 && (s[i] < '0' || s[i] > '9')) return -1;
  int y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
  int m = (s[5] - '0') * 10 + (s[6] - '0'), d = (s[8] - '0') * 10 + (s[9] - '0');
  if (y < 1970 || m < 1 || m > 12 || d < 1) return -1;
  static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > mdays[m - 1] + (m == 2 && leap)) return -1;
  struct tm tm = {.tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d};
  return (int64_t)timegm(&tm) / 86400;
}

static void day_text(int64_t day, char out[40]) {
  time_t t = (time_t)(day * 86400);
  struct tm tm;
  gmtime_r(&t, &tm);
  snprintf(out, 40, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

static double round4(double x) { return round(x * 10000.0) / 10000.0; }

static int64_t int_at(json_t *a, size_t i) { return json_integer_value(json_array_get(a, i)); }

void sg__analytics_answer(sg_store *store, const char *list_id, const char *from, const char *to,
                          const sg_req *req, sg_resp *resp) {
  json_t *f = NULL;
  int64_t d0 = parse_day(from), d1 = parse_day(to);
  if (!from)
    sg_field_error(&f, "from", "required: a UTC day, YYYY-MM-DD");
  else if (d0 < 0)
    sg_field_error(&f, "from", "must be a UTC day, YYYY-MM-DD");
  if (!to)
    sg_field_error(&f, "to", "required: a UTC day, YYYY-MM-DD");
  else if (d1 < 0)
    sg_field_error(&f, "to", "must be a UTC day, YYYY-MM-DD");
  if (!f && d0 > d1) sg_field_error(&f, "from", "must not be after to");
  if (!f && d1 - d0 + 1 > SG__ANALYTICS_MAX_DAYS)
    sg_field_error(&f, "to", "must be at most 92 days from from (inclusive)");
  if (f) {
    sg_resp_invalid_fields(resp, req, f);
    return;
  }
  json_t *raw = NULL;
  sg_err e = sg_store_analytics_read(store, list_id, d0 * 24, (d1 + 1) * 24, TOP, &raw);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  int64_t ndays = d1 - d0 + 1;
  int64_t q[SG__ANALYTICS_MAX_DAYS] = {0}, nr[SG__ANALYTICS_MAX_DAYS] = {0},
          sel[SG__ANALYTICS_MAX_DAYS] = {0};
  int64_t tq = 0, tnr = 0, tsel = 0;
  size_t i;
  json_t *v;
  json_array_foreach(json_object_get(raw, "days"), i, v) {
    int64_t k = int_at(v, 0) - d0;
    if (k < 0 || k >= ndays) continue;
    q[k] += int_at(v, 1);
    nr[k] += int_at(v, 2);
  }
  json_array_foreach(json_object_get(raw, "selectionDays"), i, v) {
    int64_t k = int_at(v, 0) - d0;
    if (k >= 0 && k < ndays) sel[k] += int_at(v, 1);
  }
  json_t *by_day = json_array();
  for (int64_t k = 0; k < ndays; k++) {
    char day[40];
    day_text(d0 + k, day);
    json_array_append_new(by_day, json_pack("{s:s,s:I,s:I,s:I}", "day", day, "queries",
                                            (json_int_t)q[k], "noResultQueries", (json_int_t)nr[k],
                                            "selections", (json_int_t)sel[k]));
    tq += q[k];
    tnr += nr[k];
    tsel += sel[k];
  }
  json_t *items = json_array();
  json_array_foreach(json_object_get(raw, "topItems"), i, v) {
    json_int_t n = json_integer_value(json_object_get(v, "selections"));
    json_int_t ps = json_integer_value(json_object_get(v, "positionSum"));
    json_array_append_new(items, json_pack("{s:O,s:I,s:f}", "itemId", json_object_get(v, "itemId"),
                                           "selections", n, "meanPosition",
                                           n > 0 ? round4((double)ps / (double)n) : 0.0));
  }
  json_t *body =
      json_pack("{s:I,s:I,s:I,s:f,s:o,s:O,s:O,s:o}", "queries", (json_int_t)tq, "noResultQueries",
                (json_int_t)tnr, "selections", (json_int_t)tsel, "clickThroughRate",
                tq > 0 ? round4((double)tsel / (double)tq) : 0.0, "byDay", by_day, "topQueries",
                json_object_get(raw, "topQueries"), "topNoResultQueries",
                json_object_get(raw, "topNoResultQueries"), "topItems", items);
  json_decref(raw);
  sg_resp_json(resp, 200, body);
}

void sg__h_analytics_get(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  /* The list must be the caller's workspace's (404 otherwise, as every list route). */
  json_t *list = NULL;
  sg_err e = sg_store_list_get(c->cfg.store, who->workspace_id, req->params[0], &list);
  if (e != SG_E_OK) {
    sg__store_error(req, resp, e);
    return;
  }
  json_decref(list);
  sg__analytics_answer(c->cfg.store, req->params[0], sg_req_query(req, "from"),
                       sg_req_query(req, "to"), req, resp);
}
