/*
 * GET /readyz on the runtime listener, and the runtime's metrics. The answer's shape,
 * methods and headers are the rule of every listener (http/common/health.h).
 *
 * Ready means the runtime can answer queries: it holds a snapshot read from the edge
 * store. A runtime whose edge store was unreadable at start answers 503 here (and
 * artifact_unavailable on /v1) until the loader reads it. Once loaded it stays ready when
 * the edge store becomes unreachable, because it keeps serving its last snapshot
 * (docs/DESIGN.md §6); the body then says "edge": "unavailable", and
 * suggestd_snapshot_age_seconds grows, which is what to alert on.
 *
 * The shared state (state/state.h) is the third check: "state" is "unavailable" while
 * the Redis holding a fleet's shared state is unreachable. The runtime stays ready then,
 * because queries go on (quotas counted here until Redis returns); only selection
 * reports answer 503. suggestd_shared_state_up and suggestd_quota_pending_queries say the
 * same in metrics.
 */
#include <stdio.h>
#include <sys/stat.h>

#include "common/metrics.h"
#include "common/util.h"
#include "http/common/health.h"
#include "runtime/rt.h"
#include "runtime/server.h"
#include "state/state.h"

/* The edge store counts as reachable when the loader read it this recently. */
#define EDGE_STALE_MS 5000

/* Seconds since the loader last found the snapshot in step with the edge store (since
 * the start when it never did), and whether that is recent. */
static double snapshot_age(const sg_runtime *rt, bool *edge_ok) {
  int64_t now = sg_mono_ms(), synced = atomic_load(&rt->edge_synced_ms);
  int64_t stale =
      EDGE_STALE_MS > 5 * (int64_t)rt->cfg.poll_ms ? EDGE_STALE_MS : 5 * (int64_t)rt->cfg.poll_ms;
  *edge_ok = synced > 0 && now - synced <= stale;
  return (double)(now - (synced > 0 ? synced : rt->started_ms)) / 1000.0;
}

void sg__h_ready(sg__rt_req *r) {
  const sg__rt_snapshot *s = sg__rcu_enter(&r->rt->rcu);
  /* A cold runtime is ready once it holds every artifact it could fetch, not as soon as
   * it read the records: a load balancer must not send it queries it cannot answer. */
  bool loaded = !s->unloaded && s->ever_complete, placeholder = s->unloaded;
  unsigned long long rev = (unsigned long long)s->revision;
  sg__rcu_leave(&r->rt->rcu);
  bool edge_ok;
  double age = snapshot_age(r->rt, &edge_ok);
  bool state_ok = sg_rt_state_check(r->rt->state) == 0;
  /* Not ready while what it holds is not confirmed current (queries answer 503): a load
   * balancer must send them elsewhere. An edge that went back under a confirmed snapshot
   * is reported but the runtime stays ready: it serves what was current. */
  bool verified = atomic_load(&r->rt->edge_verified), behind = atomic_load(&r->rt->edge_behind);
  if (!verified) loaded = false;
  const sg_health_check checks[] = {{"snapshot", loaded        ? "ok"
                                                 : placeholder ? "not_loaded"
                                                 : !verified   ? "unverified"
                                                               : "loading"},
                                    {"edge", !edge_ok ? "unavailable"
                                             : behind ? "behind"
                                                      : "ok"},
                                    {"state", state_ok ? "ok" : "unavailable"}};
  char extra[96], body[256];
  snprintf(extra, sizeof extra, "\"revision\":%llu,\"snapshotAgeSeconds\":%.1f", rev, age);
  size_t n;
  unsigned status = sg_health_ready_body(loaded, checks, 3, extra, body, sizeof body, &n);
  sg__rt_hdrs h = {.retry_after = loaded ? 0 : SG_HEALTH_RETRY_AFTER,
                   .cache_control = SG_HEALTH_CACHE_CONTROL};
  sg__rt_respond(r, status, body, n, &h);
}

void sg__rt_metrics(sg_buf *out, void *ctx) {
  sg_runtime *rt = ctx;
  const sg__rt_snapshot *s = sg__rcu_enter(&rt->rcu);
  bool loaded = !s->unloaded;
  unsigned long long rev = (unsigned long long)s->revision, bytes = 0;
  size_t n_arts = s->n_arts;
  for (size_t i = 0; i < s->n_arts; i++) bytes += (unsigned long long)s->arts[i]->bytes;
  sg__rcu_leave(&rt->rcu);
  bool edge_ok;
  double age = snapshot_age(rt, &edge_ok);

  sg_metrics_family(out, "suggestd_snapshot_loaded", "gauge",
                    "1 when the runtime holds a snapshot of the edge store (it is ready), else 0.");
  sg_buf_printf(out, "suggestd_snapshot_loaded %d\n", loaded ? 1 : 0);
  sg_metrics_family(out, "suggestd_edge_revision", "gauge",
                    "Edge store revision of the snapshot the runtime serves.");
  sg_buf_printf(out, "suggestd_edge_revision %llu\n", rev);
  sg_metrics_family(out, "suggestd_snapshot_age_seconds", "gauge",
                    "Seconds since the runtime last found its snapshot in step with the edge "
                    "store (stays under a second while the edge store is reachable).");
  sg_buf_printf(out, "suggestd_snapshot_age_seconds %.3f\n", age);
  sg_metrics_family(out, "suggestd_edge_up", "gauge",
                    "1 when the runtime read the edge store in the last 5 seconds, else 0.");
  sg_buf_printf(out, "suggestd_edge_up %d\n", edge_ok ? 1 : 0);
  sg_metrics_family(out, "suggestd_edge_verified", "gauge",
                    "1 when the served snapshot is confirmed current by the control plane's "
                    "guard (else queries answer 503).");
  sg_buf_printf(out, "suggestd_edge_verified %d\n", atomic_load(&rt->edge_verified) ? 1 : 0);
  sg_metrics_family(out, "suggestd_edge_behind", "gauge",
                    "1 while the edge store is behind what this runtime saw (it holds its "
                    "snapshot until the control plane rewrites the edge).");
  sg_buf_printf(out, "suggestd_edge_behind %d\n", atomic_load(&rt->edge_behind) ? 1 : 0);
  sg_metrics_family(out, "suggestd_artifacts", "gauge", "Artifacts held by the served snapshot.");
  sg_buf_printf(out, "suggestd_artifacts %zu\n", n_arts);
  sg_metrics_family(out, "suggestd_artifact_bytes", "gauge",
                    "Bytes of the artifacts held (memory-mapped) by the served snapshot.");
  sg_buf_printf(out, "suggestd_artifact_bytes %llu\n", bytes);
  sg_rt_state_stats st;
  sg_rt_state_stats_get(rt->state, &st);
  sg_metrics_family(out, "suggestd_shared_state_up", "gauge",
                    "1 when the runtime's state (Redis for a fleet, else its state directory) "
                    "is reachable; 0 means selection reports answer 503.");
  sg_buf_printf(out, "suggestd_shared_state_up %d\n", st.up ? 1 : 0);
  sg_metrics_family(out, "suggestd_quota_pending_queries", "gauge",
                    "Queries counted by this runtime but not yet added to the fleet's quota "
                    "counters (grows while Redis is unreachable).");
  sg_buf_printf(out, "suggestd_quota_pending_queries %llu\n", (unsigned long long)st.quota_pending);
  sg_rt_analytics_stats an;
  sg_rt_state_analytics_stats(rt->state, &an);
  sg_metrics_family(out, "suggestd_analytics_enabled", "gauge",
                    "1 when this runtime counts search analytics (--analytics on), else 0.");
  sg_buf_printf(out, "suggestd_analytics_enabled %d\n", an.on ? 1 : 0);
  sg_metrics_family(out, "suggestd_analytics_counted_total", "counter",
                    "Served queries and selection reports counted into analytics shipments.");
  sg_buf_printf(out,
                "suggestd_analytics_counted_total{what=\"queries\"} %llu\n"
                "suggestd_analytics_counted_total{what=\"selections\"} %llu\n",
                (unsigned long long)an.queries, (unsigned long long)an.selections);
  sg_metrics_family(out, "suggestd_analytics_dropped_keys_total", "counter",
                    "Analytics keys that could not be counted (a thread's table full between "
                    "shipments, or no memory).");
  sg_buf_printf(out, "suggestd_analytics_dropped_keys_total %llu\n",
                (unsigned long long)an.dropped_keys);
  sg_metrics_family(out, "suggestd_analytics_shipments_total", "counter",
                    "Analytics shipments the state backend took (shipped), and shipments "
                    "lost because it was unreachable for longer than 64 intervals (dropped).");
  sg_buf_printf(out,
                "suggestd_analytics_shipments_total{result=\"shipped\"} %llu\n"
                "suggestd_analytics_shipments_total{result=\"dropped\"} %llu\n",
                (unsigned long long)an.shipments, (unsigned long long)an.shipments_lost);
  sg_metrics_family(out, "suggestd_analytics_shipped_rows_total", "counter",
                    "Rows (aggregated keys) in the analytics shipments the backend took.");
  sg_buf_printf(out, "suggestd_analytics_shipped_rows_total %llu\n", (unsigned long long)an.rows);
  sg_metrics_family(out, "suggestd_analytics_pending_shipments", "gauge",
                    "Analytics shipments held in memory until the state backend takes them.");
  sg_buf_printf(out, "suggestd_analytics_pending_shipments %llu\n", (unsigned long long)an.pending);
  sg_metrics_family(out, "suggestd_runtime_connections", "gauge",
                    "Open connections on the runtime listener.");
  sg_buf_printf(out, "suggestd_runtime_connections %ld\n", atomic_load(&rt->connections));
  unsigned conns[SG__RCU_SLOTS / 2]; /* the most workers there can be (server.c) */
  unsigned nw = sg__rt_worker_connections(rt, conns, SG__RCU_SLOTS / 2);
  sg_metrics_family(out, "suggestd_runtime_worker_connections", "gauge",
                    "Connections each runtime worker thread serves (new connections go to "
                    "the worker with the fewest).");
  for (unsigned i = 0; i < nw && i < SG__RCU_SLOTS / 2; i++)
    sg_buf_printf(out, "suggestd_runtime_worker_connections{worker=\"%u\"} %u\n", i, conns[i]);
}

void sg__rt_metrics_start(sg_runtime *rt) { sg_metrics_add_collector(sg__rt_metrics, rt); }
