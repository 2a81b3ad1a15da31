/*
 * The control plane: /api/v1 over the relational store, authenticated by secret keys.
 */
#ifndef SG_CONTROL_CONTROL_H
#define SG_CONTROL_CONTROL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "http/mhd/http.h"
#include "store/store.h"

typedef struct sg_control sg_control;

/* A part of the control listener served under a path prefix (the dashboard under
 * /dashboard), mounted by whoever starts the control plane, so that the control plane
 * never names it. The control plane starts it with its own state, hands it every
 * request for the prefix or a path below it before its own routes (begin as soon as the
 * headers are in, dispatch once the body is), and stops it when the listener is down. */
/* The control plane's own worker pool, for the reports that read many aggregate rows
 * (GET /api/v1/lists/{id}/analytics; a mount may run its report handlers there too): one
 * thread, so that a flood of reports takes at most one CPU from everyone else, and
 * --worker-queue waiting. A mount's own pools are 1 .. SG_CONTROL_POOL_REPORT - 1. */
#define SG_CONTROL_POOL_REPORT SG_HTTP_MAX_POOLS
#define SG_CONTROL_POOL_REPORT_THREADS 1

typedef struct {
  const char *prefix;          /* "/dashboard": no trailing slash */
  int (*start)(sg_control *c); /* 0, or -1 when the control plane cannot start */
  void (*stop)(sg_control *c); /* also after a failed start, or without one */
  sg_http_begin (*begin)(sg_control *c, sg_req *req, sg_resp *resp, sg_http_stream *stream);
  void (*dispatch)(sg_control *c, sg_req *req, sg_resp *resp);
  /* The worker pools its blocking handlers run on (req->pool n runs on pools[n - 1]; an
   * entry with no name is none); each waiting queue is the control plane's worker_queue. */
  sg_http_pool_config pools[SG_HTTP_MAX_POOLS];
} sg_control_mount;

typedef struct {
  const char *listen;          /* host:port */
  sg_store *store;             /* borrowed */
  struct sg_edge *edge;        /* borrowed; where list records and artifacts go */
  uint32_t rate_per_key;       /* requests per minute per secret key (0: off) */
  uint32_t rate_per_ip;        /* requests per minute per client IP (0: off) */
  uint64_t sync_publish_limit; /* lists with more items publish asynchronously */
  uint64_t import_max_bytes;   /* cap of one import body (0: the 512 MiB default) */
  unsigned max_connections;    /* open at once (0: the HTTP glue's default) */
  unsigned max_per_ip;         /* open at once per client IP (0: no cap) */
  unsigned head_timeout_s;     /* accept to end of request head (0: 10 s) */
  /* --trusted-proxies: peers whose Forwarded / X-Forwarded-For name the client (the
   * address per-IP limits and the access log see), or NULL. Borrowed while it runs. */
  const sg_trusted_proxies *trusted_proxies;
  uint32_t artifact_grace_s; /* unnamed artifacts are deleted after this (--artifact-grace) */
  uint32_t publish_lease_s;  /* a claimed version's lease (--publish-lease-seconds; 0: 30) */
  /* Active artifacts of an older format compiled again per minute by this process once
   * every live runtime reads the current one (--recompile-per-minute; 0: never). */
  uint32_t recompile_per_minute;
  /* The dashboard (docs/DESIGN.md §7, docs/DASHBOARD.md). */
  int64_t session_idle_s;         /* idle expiry of a dashboard session (0: 43200 = 12 h) */
  bool secure_cookies;            /* always mark the session cookie Secure (served over TLS) */
  uint32_t signin_rate_ip;        /* sign-in attempts per minute per client IP (0: off) */
  uint32_t signin_rate_email;     /* sign-in attempts per minute per email (0: off) */
  uint32_t invite_rate;           /* member invitations per minute per workspace (0: off) */
  uint32_t worker_queue;          /* requests waiting per worker pool (--worker-queue) */
  const char *runtime_public_url; /* the runtime's origin as browsers reach it (preview), or NULL */
  /* The runtimes' shared state as state/state.h names it (usage, selections), or NULL:
   * the runtime's state directory, or a fleet's redis:// URL (the URL of --edge), whose
   * selection events are drained into the store (control/drain.c). */
  const char *state;
  const sg_control_mount *mount; /* served under its prefix (the dashboard), or NULL */
  /* Analytics kept this many UTC days, then deleted (--analytics-retention-days; 0: 90). */
  uint32_t analytics_retention_days;
} sg_control_config;

int sg_control_start(const sg_control_config *cfg, sg_control **out, char *err, size_t errsz);
unsigned sg_control_port(const sg_control *c);
/* Runs one edge-guard tick now (control/edge_guard.h): 0 when the edge is current and a
 * heartbeat was written. ctx is the sg_control (a runtime's edge_confirm callback). */
int sg_control_edge_confirm(void *ctx);
void sg_control_stop(sg_control *c);

/* `suggestd control`: the control plane alone. */
int sg_cmd_control(int argc, char **argv);

#endif
