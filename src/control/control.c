/*
 * Control-plane lifecycle: start the HTTP listener with the control plane's handler.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/metrics.h"
#include "control/internal.h"

void sg__control_dispatch(sg_req *req, sg_resp *resp);
sg_http_begin sg__control_begin(sg_req *req, sg_resp *resp, sg_http_stream *stream);

/* The worker pools' counters (docs/DASHBOARD.md "Worker pools"). */
static void pool_metrics(sg_buf *out, void *ctx) {
  sg_control *c = ctx;
  static const struct {
    const char *name, *type, *help;
  } fam[] = {
      {"suggestd_worker_pool_admitted", "gauge",
       "Requests a control worker pool is running or holding waiting."},
      {"suggestd_worker_pool_done_total", "counter",
       "Requests a control worker pool finished (run, or answered 503 at a stop)."},
      {"suggestd_worker_pool_rejected_total", "counter",
       "Requests answered 503 server_busy because their worker pool was full."},
  };
  for (size_t f = 0; f < sizeof fam / sizeof fam[0]; f++) {
    sg_metrics_family(out, fam[f].name, fam[f].type, fam[f].help);
    for (unsigned n = 1; n <= SG_HTTP_MAX_POOLS; n++) {
      const char *name;
      unsigned threads, queue, admitted;
      uint64_t done, rejected;
      if (!sg_http_pool_stats(c->http, n, &name, &threads, &queue, &admitted, &done, &rejected))
        continue;
      unsigned long long v = f == 0 ? admitted : f == 1 ? done : rejected;
      sg_buf_printf(out, "%s{pool=\"%s\"} %llu\n", fam[f].name, name, v);
    }
  }
}

int sg_control_start(const sg_control_config *cfg, sg_control **out, char *err, size_t errsz) {
  sg_control *c = calloc(1, sizeof *c);
  if (!c) return -1;
  c->cfg = *cfg;
  pthread_mutex_init(&c->guard_mu, NULL);
  c->rl_key = sg_ratelimit_new(cfg->rate_per_key);
  c->rl_ip = sg_ratelimit_new(cfg->rate_per_ip);
  if (!c->rl_key || !c->rl_ip ||
      sg_store_secret(cfg->store, "cursor_secret", c->cursor_secret) != SG_E_OK ||
      (cfg->mount && cfg->mount->start(c)) || sg__publish_start(c) ||
      (cfg->state && sg__drain_start(cfg->store, cfg->state, &c->drain)) ||
      (cfg->state && sg__analytics_drain_start(cfg->store, cfg->state,
                                               cfg->analytics_retention_days, &c->adrain))) {
    snprintf(err, errsz, "cannot initialise the control plane");
    sg_control_stop(c);
    return -1;
  }
  /* Staging files of imports that a previous process did not finish. */
  sg_store_import_cleanup(cfg->store);
  sg_http_config hc = {
      .listen = cfg->listen,
      .max_body = SG__CONTROL_MAX_BODY,
      .threads = 8,
      .handler = sg__control_dispatch,
      .begin = sg__control_begin,
      .app = c,
      .log_name = "control",
      .max_connections = cfg->max_connections,
      .max_per_ip = cfg->max_per_ip,
      .head_timeout_ms = cfg->head_timeout_s * 1000u,
      .trusted_proxies = cfg->trusted_proxies,
  };
  /* The mount's worker pools (the dashboard's Argon2id and artifact-loading handlers). */
  for (size_t i = 0; cfg->mount && i + 1 < SG_CONTROL_POOL_REPORT; i++)
    if (cfg->mount->pools[i].name) {
      hc.pools[i] = cfg->mount->pools[i];
      hc.pools[i].queue = cfg->worker_queue;
    }
  hc.pools[SG_CONTROL_POOL_REPORT - 1] =
      (sg_http_pool_config){"report", SG_CONTROL_POOL_REPORT_THREADS, cfg->worker_queue, 1};
  if (sg_http_start(&hc, &c->http, err, errsz)) {
    sg_control_stop(c);
    return -1;
  }
  sg_metrics_add_collector(sg__control_metrics, c);
  sg_metrics_add_collector(pool_metrics, c);
  *out = c;
  return 0;
}

unsigned sg_control_port(const sg_control *c) { return sg_http_port(c->http); }

int sg_control_edge_confirm(void *ctx) {
  sg_control *c = ctx;
  pthread_mutex_lock(&c->guard_mu);
  sg_edge_guard_state st = sg_edge_guard_tick(c->cfg.store, c->cfg.edge, &c->guard);
  pthread_mutex_unlock(&c->guard_mu);
  return st == SG_EDGE_GUARD_CURRENT ? 0 : -1;
}

void sg_control_stop(sg_control *c) {
  if (!c) return;
  sg_metrics_remove_collector(sg__control_metrics, c);
  sg_metrics_remove_collector(pool_metrics, c);
  sg_http_stop(c->http);
  sg__publish_stop(c); /* after the listener: no request holds a publish lock any more */
  sg__drain_stop(c->drain);
  sg__analytics_drain_stop(c->adrain);
  sg_ratelimit_free(c->rl_key);
  sg_ratelimit_free(c->rl_ip);
  if (c->cfg.mount) c->cfg.mount->stop(c);
  pthread_mutex_destroy(&c->guard_mu);
  free(c);
}
