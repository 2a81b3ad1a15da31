/*
 * GET /readyz on the control listener, and the control plane's metrics collector.
 *
 * Ready means a request could be served now: the store answers a query (the publish
 * queue count, one indexed read) and the edge store, where publishes and list changes
 * go, is usable. /healthz stays a bare liveness answer.
 */
#include <stdio.h>
#include <string.h>

#include "common/metrics.h"
#include "control/internal.h"
#include "edge/edge.h"

void sg__control_readyz(sg_control *c, sg_req *req, sg_resp *resp) {
  if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0) {
    sg_resp_header(resp, "Allow", "GET, HEAD");
    sg_resp_error(resp, req, SG_E_METHOD_NOT_ALLOWED, NULL, NULL);
    return;
  }
  int64_t depth;
  bool store_ok = sg_store_queue_depth(c->cfg.store, &depth) == SG_E_OK;
  bool edge_ok = sg_edge_check(c->cfg.edge) == 0;
  bool ready = store_ok && edge_ok;
  sg_resp_header(resp, "Cache-Control", "no-store");
  if (!ready) sg_resp_header(resp, "Retry-After", "1");
  sg_resp_json(resp, ready ? 200 : 503,
               json_pack("{s:s,s:{s:s,s:s}}", "status", ready ? "ready" : "not_ready", "checks",
                         "store", store_ok ? "ok" : "unavailable", "edge",
                         edge_ok ? "ok" : "unavailable"));
}

void sg__control_metrics(sg_buf *out, void *ctx) {
  sg_control *c = ctx;
  int64_t depth = 0;
  bool store_ok = sg_store_queue_depth(c->cfg.store, &depth) == SG_E_OK;
  sg_metrics_family(out, "suggestd_store_up", "gauge",
                    "1 when the relational store answered the last probe, else 0.");
  sg_buf_printf(out, "suggestd_store_up %d\n", store_ok ? 1 : 0);
  if (store_ok) {
    sg_metrics_family(out, "suggestd_publish_queue_depth", "gauge",
                      "Versions waiting for the publish pipeline (queued or staged).");
    sg_buf_printf(out, "suggestd_publish_queue_depth %lld\n", (long long)depth);
  }
}
