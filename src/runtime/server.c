/*
 * The runtime's lifecycle: sg_runtime_start loads the first snapshot, binds the listener
 * and starts the workers (loop.c) and the loader (loader.c); sg_runtime_stop undoes it.
 * Responses are in respond.c, routing in route.c.
 */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/eventfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/metrics.h"
#include "common/util.h"
#include "http/common/listen.h"
#include "runtime/server.h"
#include "state/state.h"

/* How long a start waits for the control plane to confirm a guarded edge. */
#define CONFIRM_WAIT_MS 1500

#define MAX_CONNECTIONS 16384 /* default cap per process (cfg.max_connections) */

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "{\"error\":\"runtime: %s%s%s\"}\n", what, detail ? ": " : "",
          detail ? detail : "");
  return -1;
}

unsigned sg_runtime_port(const sg_runtime *rt) { return rt->port; }

static void runtime_free(sg_runtime *rt) {
  sg_metrics_remove_collector(sg__rt_metrics, rt);
  if (rt->listen_fd >= 0) close(rt->listen_fd);
  if (rt->wake_fd >= 0) close(rt->wake_fd);
  free(rt->workers);
  sg__snapshot_free(atomic_load(&rt->rcu.cur));
  sg__records_free(rt->records);
  sg_rt_state_close(rt->state); /* flushes the quota counters */
  sg_edge_close(rt->edge);
  pthread_mutex_destroy(&rt->stop_mu);
  pthread_cond_destroy(&rt->stop_cv);
  free(rt->state_dir);
  free(rt);
}

int sg_runtime_start(const sg_runtime_config *cfg, sg_runtime **out) {
  if (!cfg || !cfg->edge || !cfg->state_dir)
    return fail("edge and state directory are required", NULL);
  const char *addr = cfg->listen ? cfg->listen : "127.0.0.1:8081";
  sg_listen_addr la;
  char why[320];
  if (sg_listen_parse(addr, &la, why, sizeof why)) return fail(why, NULL);

  sg_runtime *rt = calloc(1, sizeof *rt);
  if (!rt) return fail("out of memory", NULL);
  rt->cfg = *cfg;
  rt->listen_fd = rt->wake_fd = -1;
  if (!rt->cfg.selection_rate) rt->cfg.selection_rate = 600;
  if (!rt->cfg.poll_ms) rt->cfg.poll_ms = 200;
  if (!rt->cfg.max_connections) rt->cfg.max_connections = MAX_CONNECTIONS;
  if (!rt->cfg.threads) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    rt->cfg.threads = n > 0 ? (unsigned)n : 1;
  }
  if (rt->cfg.threads > SG__RCU_SLOTS / 2) rt->cfg.threads = SG__RCU_SLOTS / 2;
  pthread_mutex_init(&rt->stop_mu, NULL);
  pthread_cond_init(&rt->stop_cv, NULL);
  rt->state_dir = strdup(cfg->state_dir);
  rt->cfg.state_dir = rt->state_dir;
  rt->cfg.listen = NULL;
  rt->cfg.edge = NULL;

  sg__rt_snapshot *first = NULL;
  if (!rt->state_dir || sg_mkdirs(rt->state_dir, 0755)) {
    fail("cannot create state directory", strerror(errno));
    goto err;
  }
  if (sg_edge_open(cfg->edge, &rt->edge)) {
    fail("cannot open edge store", strerror(errno));
    goto err;
  }
  /* A remote edge's artifacts are fetched into <state-dir>/artifacts (content-addressed,
   * verified on every load), so a restart reads them locally. */
  char cache[PATH_MAX];
  if (snprintf(cache, sizeof cache, "%s/artifacts", rt->state_dir) >= (int)sizeof cache ||
      sg_edge_set_cache_dir(rt->edge, cache)) {
    fail("cannot create the artifact cache", strerror(errno));
    goto err;
  }
  /* It says what failed. */
  /* A Redis edge holds the state the fleet shares as well; a directory edge keeps it
   * in the state directory, for this process alone. */
  sg_state_backend backend;
  const char *state = sg_state_backend_of(cfg->edge, &backend) == 0 && backend == SG_STATE_REDIS
                          ? cfg->edge
                          : rt->state_dir;
  /* The URL's options (?prefix=…) are the edge store's: the state open drops them. */
  if (sg_rt_state_open(state, rt->cfg.selection_rate, &rt->state)) goto err;
  /* Search analytics (docs/DESIGN.md §9), unless --analytics off. */
  if (!cfg->analytics_off && sg_rt_state_analytics_on(rt->state)) {
    fail("cannot start analytics", strerror(errno));
    goto err;
  }
  rt->started_ms = sg_mono_ms();
  sg__rt_stamp_restore(rt);
  /* A first read held back because the control plane is rewriting the edge (in `serve`,
   * its guard's first tick may be doing that right now) is tried again for a moment. */
  int first_rc;
  for (int64_t until = sg_mono_ms() + CONFIRM_WAIT_MS;;) {
    first_rc = sg__rt_edge_load(rt, NULL, false, &first);
    if (first_rc != 1 || sg_mono_ms() >= until) break;
    if (!rt->cfg.edge_confirm || rt->cfg.edge_confirm(rt->cfg.edge_confirm_ctx)) {
      struct timespec ts = {0, 50 * 1000000L};
      nanosleep(&ts, NULL);
    }
  }
  if (first_rc == 1) atomic_store(&rt->edge_synced_ms, sg_mono_ms());
  if (first_rc == 0) {
    atomic_store(&rt->edge_synced_ms, rt->started_ms);
    /* Learn the fleet's quota counts before the first query rather than a second later. */
    sg_rt_state_flush(rt->state, sg_now_s());
  } else {
    /* Serve anyway: /readyz answers 503 and /v1 calls artifact_unavailable until the
     * loader reads the edge store (it retries every poll period). */
    fprintf(stderr,
            "{\"level\":\"warn\",\"msg\":\"edge store not readable yet; not ready until "
            "it is\",\"detail\":\"%s\"}\n",
            first_rc == 1 ? "the control plane is rewriting it" : strerror(errno));
    if (!(first = calloc(1, sizeof *first))) {
      fail("out of memory", NULL);
      goto err;
    }
    first->unloaded = true;
  }
  /* On a guarded edge, what was just read is trusted once the control plane confirms
   * it: at most a heartbeat away (docs/EDGE.md, "The staleness guard"). Past that the
   * runtime starts anyway and answers 503 until it is confirmed. */
  if (first_rc == 0 && sg__rt_edge_confirm_wait(rt, CONFIRM_WAIT_MS))
    fprintf(stderr, "{\"level\":\"warn\",\"msg\":\"edge store not confirmed current by a "
                    "control plane; queries answer 503 until it is\"}\n");
  sg__rcu_init(&rt->rcu, first);
  sg__rt_routes_register(rt);
  sg__rt_metrics_start(rt);

  rt->listen_fd = socket(la.sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  if (rt->listen_fd < 0 || setsockopt(rt->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
      bind(rt->listen_fd, (const struct sockaddr *)&la.sa, la.sa_len) ||
      listen(rt->listen_fd, 1024)) {
    fail("cannot listen", addr);
    goto err;
  }
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  if (getsockname(rt->listen_fd, (struct sockaddr *)&ss, &sl) == 0)
    rt->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
  if ((rt->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
      !(rt->workers = calloc(rt->cfg.threads, sizeof *rt->workers))) {
    fail("cannot start workers", strerror(errno));
    goto err;
  }
  if (sg__rt_workers_start(rt)) {
    fail("cannot start workers", strerror(errno));
    goto err;
  }
  if (pthread_create(&rt->loader, NULL, sg__rt_loader_main, rt)) {
    sg__rt_workers_stop(rt);
    fail("cannot start loader thread", NULL);
    goto err;
  }
  fprintf(stderr,
          "{\"level\":\"info\",\"msg\":\"runtime listening\",\"url\":\"http://%s%s%s:%u\"}\n",
          la.v6 ? "[" : "", la.host, la.v6 ? "]" : "", rt->port);
  fflush(stderr);
  *out = rt;
  return 0;
err:
  runtime_free(rt);
  return -1;
}

void sg_runtime_stop(sg_runtime *rt) {
  if (!rt) return;
  sg__rt_workers_stop(rt);
  pthread_mutex_lock(&rt->stop_mu);
  atomic_store(&rt->stopping, true);
  pthread_cond_signal(&rt->stop_cv);
  pthread_mutex_unlock(&rt->stop_mu);
  pthread_join(rt->loader, NULL);
  sg__rt_stamp_final(rt);
  sg__rt_log_flush();
  sg_rt_state_sync(rt->state);
  runtime_free(rt);
}
