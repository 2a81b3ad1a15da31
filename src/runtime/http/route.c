/*
 * The runtime's routing: turns one framed request (http1.c) into a call of its handler
 * (h_*.c), a CORS preflight answer, or a typed error (404, 405, or the framing error).
 */
#include <stdio.h>
#include <string.h>

#include "common/metrics.h"
#include "http/common/health.h"
#include "http/common/percent.h"
#include "http/common/request_id.h"
#include "runtime/server.h"

static void preflight(sg__rt_req *r) {
  sg__h1_conn *c = r->c;
  sg__h1_status(c, 204);
  if (r->origin) sg__h1_header_n(c, "Access-Control-Allow-Origin", r->origin, r->origin_len);
  sg__h1_header_n(c, "Vary", "Origin", 6);
  sg__h1_header(c, "Access-Control-Allow-Methods", "GET, POST, OPTIONS");
  sg__h1_header(c, "Access-Control-Allow-Headers", "authorization, content-type, x-request-id");
  sg__h1_header(c, "Access-Control-Max-Age", "600");
  sg__h1_header(c, "x-request-id", r->xrid);
  sg__h1_finish(c, r->req, NULL, 0);
  r->status = 204;
  sg__rt_access_log(r);
}

typedef enum { R_NONE, R_QUERY, R_BOOTSTRAP, R_SELECTION, R_HEALTH, R_READY, R__N } route;

/* The path of each route, which is also its metrics label (R_NONE: "other"). */
static const char *const route_paths[R__N] = {
    [R_QUERY] = "/v1/query", [R_BOOTSTRAP] = "/v1/bootstrap", [R_SELECTION] = "/v1/selection",
    [R_HEALTH] = "/healthz", [R_READY] = "/readyz",
};

_Static_assert(R__N <= sizeof((sg_runtime *)0)->route_ids / sizeof(int), "route_ids too small");

static route route_of(const char *path) {
  for (int i = R_QUERY; i < R__N; i++)
    if (strcmp(path, route_paths[i]) == 0) return (route)i;
  return R_NONE;
}

static void method_not_allowed(sg__rt_req *r, const char *allow) {
  sg__rt_hdrs h = {.allow = allow};
  sg__rt_error(r, SG_E_METHOD_NOT_ALLOWED, NULL, &h);
}

/* sg__h1_handler: one complete request (req), or one that could not be framed (err). */
void sg__rt_on_request(void *ctx, sg__h1_conn *c, const sg__h1_req *req, sg_err err) {
  sg__rt_req r;
  r.c = c;
  r.req = req;
  r.rt = ctx;
  r.method = req ? req->method : "-";
  r.path = req ? req->path : "-";
  r.t0_us = sg__rt_now_us();
  r.status = 0;
  r.cors = false;
  r.field = NULL;
  route which = req && !err ? route_of(req->path) : R_NONE;
  r.route = r.rt->route_ids[which];
  r.message = NULL;
  const char *x = req ? req->xrid.p : NULL;
  r.xrid_generated = !(x && sg_http_request_id_ok(x));
  if (!r.xrid_generated)
    snprintf(r.xrid, sizeof r.xrid, "%s", x);
  else
    sg__reqid_random(r.xrid);
  r.client[0] = '\0';
  if (req && c && c->peer_proxy && (req->forwarded.p || req->xff.p)) {
    sg_ip ip =
        sg_forwarded_client(r.rt->cfg.trusted_proxies, &c->peer_ip, req->forwarded.p, req->xff.p);
    sg_ip_format(&ip, r.client, sizeof r.client);
  }
  r.origin = req ? req->origin.p : NULL;
  r.origin_len = req ? req->origin.n : 0;
  /* A body too large for the runtime, sent to a control-plane path (an import aimed at
   * the wrong port): the useful answer is where to send it, not the runtime's 4 KiB cap. */
  if (!req && err == SG_E_PAYLOAD_TOO_LARGE && c && c->url_len && c->url_off < sizeof c->buf &&
      c->url_len <= sizeof c->buf - c->url_off &&
      sg__rt_control_path(c->buf + c->url_off, c->url_len)) {
    err = SG_E_NOT_FOUND;
    r.message = sg__rt_control_port_hint();
    r.path = "-";
  }
  if (!req || err) {
    if (req) r.message = SG_HTTP_PERCENT_MESSAGE; /* the only error of a framed request */
    sg__rt_error(&r, err, NULL, NULL);
    return;
  }
  bool get = strcmp(req->method, "GET") == 0 || req->head;
  bool post = strcmp(req->method, "POST") == 0;
  bool options = strcmp(req->method, "OPTIONS") == 0;
  switch (which) {
  case R_QUERY:
    if (get) return sg__h_query(&r);
    if (options) return preflight(&r);
    return method_not_allowed(&r, "GET, HEAD, OPTIONS");
  case R_BOOTSTRAP:
    if (get) return sg__h_bootstrap(&r);
    if (options) return preflight(&r);
    return method_not_allowed(&r, "GET, HEAD, OPTIONS");
  case R_SELECTION:
    if (post) return sg__h_selection(&r);
    if (options) return preflight(&r);
    return method_not_allowed(&r, "POST, OPTIONS");
  case R_HEALTH:
    if (get) return sg__h_health(&r);
    return method_not_allowed(&r, SG_HEALTH_ALLOW);
  case R_READY:
    if (get) return sg__h_ready(&r);
    return method_not_allowed(&r, SG_HEALTH_ALLOW);
  case R_NONE:
  default:
    if (sg__rt_control_path(req->path, strlen(req->path))) r.message = sg__rt_control_port_hint();
    return sg__rt_error(&r, SG_E_NOT_FOUND, NULL, NULL);
  }
}

void sg__rt_routes_register(sg_runtime *rt) {
  for (int i = 0; i < R__N; i++)
    rt->route_ids[i] = sg_metrics_route(SG_LISTENER_RUNTIME, route_paths[i]);
}
