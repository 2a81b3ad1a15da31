/*
 * GET /readyz on the control listener, and the control plane's metrics collector.
 *
 * Ready means a request could be served now: the store answers a query (the publish
 * queue count, one indexed read) and the edge store, where publishes and list changes
 * go, is usable. /healthz stays a bare liveness answer. Methods, headers and the body's
 * shape are the rule of every listener (http/common/health.h).
 */
#include <stdio.h>
#include <string.h>

#include "common/metrics.h"
#include "control/internal.h"
#include "edge/edge.h"
#include "http/common/health.h"

/* A probe answers GET and HEAD only, never from a cache (http/common/health.h). */
static bool probe_method(sg_req *req, sg_resp *resp) {
  sg_resp_header(resp, "Cache-Control", SG_HEALTH_CACHE_CONTROL);
  if (sg_health_method_ok(req->method)) return true;
  sg_resp_header(resp, "Allow", SG_HEALTH_ALLOW);
  sg_resp_error(resp, req, SG_E_METHOD_NOT_ALLOWED, NULL, NULL);
  return false;
}

void sg__control_healthz(sg_req *req, sg_resp *resp) {
  if (!probe_method(req, resp)) return;
  resp->status = 200;
  sg_buf_reset(&resp->body);
  sg_buf_append(&resp->body, sg_health_live_body, sg_health_live_len);
}

void sg__control_readyz(sg_control *c, sg_req *req, sg_resp *resp) {
  if (!probe_method(req, resp)) return;
  int64_t depth;
  bool store_ok = sg_store_queue_depth(c->cfg.store, &depth) == SG_E_OK;
  bool edge_ok = sg_edge_check(c->cfg.edge) == 0;
  /* An edge the guard found behind the store is being rewritten: not ready until the
   * runtimes can trust it again (docs/EDGE.md, "The staleness guard"). */
  int guard = atomic_load(&c->guard.state);
  bool guard_ok = guard != SG_EDGE_GUARD_REPAIRING;
  bool ready = store_ok && edge_ok && guard_ok;
  const sg_health_check checks[] = {{"store", store_ok ? "ok" : "unavailable"},
                                    {"edge", !edge_ok    ? "unavailable"
                                             : !guard_ok ? "behind"
                                                         : "ok"}};
  char body[256];
  size_t n;
  resp->status = (int)sg_health_ready_body(ready, checks, 2, NULL, body, sizeof body, &n);
  if (!ready) {
    char ra[16];
    snprintf(ra, sizeof ra, "%d", SG_HEALTH_RETRY_AFTER);
    sg_resp_header(resp, "Retry-After", ra);
  }
  sg_buf_reset(&resp->body);
  sg_buf_append(&resp->body, body, n);
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
  sg_metrics_family(out, "suggestd_edge_guard_state", "gauge",
                    "The edge guard's last tick: 0 current (heartbeat written), 1 behind or "
                    "being rewritten, 2 the store or the edge could not be read.");
  sg_buf_printf(out, "suggestd_edge_guard_state %d\n", atomic_load(&c->guard.state));
  sg_metrics_family(out, "suggestd_edge_rewrites_total", "counter",
                    "Full rewrites of the edge from the store this process completed (an edge "
                    "found behind the store, or never guarded).");
  sg_buf_printf(out, "suggestd_edge_rewrites_total %llu\n",
                (unsigned long long)atomic_load(&c->guard.rewrites));
  if (!c->adrain) return;
  sg__analytics_drain_counts an;
  sg__analytics_drain_stats(c->adrain, &an);
  sg_metrics_family(out, "suggestd_analytics_drained_shipments_total", "counter",
                    "Runtime analytics shipments this process handled: stored (committed to "
                    "the store), invalid (not a shipment, dropped), failed (the store refused; "
                    "retried).");
  sg_buf_printf(out,
                "suggestd_analytics_drained_shipments_total{result=\"stored\"} %llu\n"
                "suggestd_analytics_drained_shipments_total{result=\"invalid\"} %llu\n"
                "suggestd_analytics_drained_shipments_total{result=\"failed\"} %llu\n",
                (unsigned long long)an.stored, (unsigned long long)an.invalid,
                (unsigned long long)an.failures);
  sg_metrics_family(out, "suggestd_analytics_drained_rows_total", "counter",
                    "Rows of the analytics shipments this process stored.");
  sg_buf_printf(out, "suggestd_analytics_drained_rows_total %llu\n", (unsigned long long)an.rows);
}
