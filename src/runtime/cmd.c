/*
 * `suggestd runtime`: the runtime listener alone, on an edge store.
 *
 *   suggestd runtime (--edge DIR|URL | --data-dir DIR) [--runtime-listen 127.0.0.1:8081]
 *                    [--selection-rate 600] [--state-dir DIR] [--threads N] [--quiet]
 *                    [--analytics on|off] [--trusted-proxies CIDR,...]
 *                    [--metrics-listen 127.0.0.1:9464]
 *
 * --data-dir D means --edge D/edge and --state-dir D/runtime. With --edge alone the
 * state (quota counters, selection events) goes to <edge>/runtime-state unless
 * --state-dir says otherwise; a Redis edge (redis://…) needs --data-dir or --state-dir, where
 * its artifacts are cached (<state-dir>/artifacts). Runs until SIGTERM or SIGINT, then shuts down
 * gracefully.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/args.h"
#include "common/fds.h"
#include "common/util.h"
#include "http/mhd/metrics_http.h"
#include "runtime/runtime.h"
#include "state/state.h"

static const sg_flag_spec flags[] = {
    {"edge", true, false},
    {"data-dir", true, false},
    {"runtime-listen", true, false},
    {"selection-rate", true, false},
    {"state-dir", true, false},
    {"threads", true, false},
    {"quiet", false, false},
    {"metrics-listen", true, false},
    {"analytics", true, false},
    {"trusted-proxies", true, false},
    {NULL, false, false},
};

static int usage_error(const char *msg) {
  fprintf(stderr, "{\"error\":\"%s\"}\n", msg);
  return 2;
}

int sg_cmd_runtime(int argc, char **argv) {
  sg_args a;
  char err[256];
  if (sg_args_parse(&a, argc, argv, flags, err, sizeof err)) return usage_error(err);
  if (a.npos) return usage_error("runtime takes no positional arguments");
  const char *data_dir = sg_args_get(&a, "data-dir");
  const char *edge = sg_args_get(&a, "edge");
  const char *state = sg_args_get(&a, "state-dir");
  char edge_buf[4096], state_buf[4096 + 32];
  sg_state_backend backend;
  if (!edge && !data_dir) return usage_error("--edge DIR or --data-dir DIR is required");
  if (!edge) {
    if (strlen(data_dir) > 4000) return usage_error("--data-dir is too long");
    snprintf(edge_buf, sizeof edge_buf, "%s/edge", data_dir);
    edge = edge_buf;
  }
  if (strlen(edge) > 4000 || (data_dir && strlen(data_dir) > 4000))
    return usage_error("path too long");
  if (!state) {
    if (data_dir)
      snprintf(state_buf, sizeof state_buf, "%s/runtime", data_dir);
    else if (sg_state_backend_of(edge, &backend) ? errno == ENOTSUP : backend == SG_STATE_REDIS)
      return usage_error("--state-dir DIR is required with a Redis edge store");
    else
      snprintf(state_buf, sizeof state_buf, "%s/runtime-state", edge);
    state = state_buf;
  }
  int64_t rate = 600, threads = 0;
  const char *v;
  if ((v = sg_args_get(&a, "selection-rate")) && sg_parse_i64(v, 1, 1000000, &rate))
    return usage_error("--selection-rate must be an integer in 1..1000000");
  if ((v = sg_args_get(&a, "threads")) && sg_parse_i64(v, 0, 128, &threads))
    return usage_error("--threads must be an integer in 0..128");

  const char *an = sg_args_get_or(&a, "analytics", "on");
  if (strcmp(an, "on") != 0 && strcmp(an, "off") != 0)
    return usage_error("--analytics must be on or off");

  static sg_trusted_proxies trusted;
  if (sg_trusted_proxies_parse(sg_args_get(&a, "trusted-proxies"), &trusted, err, sizeof err))
    return sg__cli_fail("%s", err);

  sg_runtime_config cfg = {
      .trusted_proxies = trusted.n ? &trusted : NULL,
      .analytics_off = strcmp(an, "off") == 0,
      .listen = sg_args_get_or(&a, "runtime-listen", "127.0.0.1:8081"),
      .edge = edge,
      .state_dir = state,
      .selection_rate = (unsigned)rate,
      .threads = (unsigned)threads,
      .access_log = !sg_args_has(&a, "quiet"),
  };
  sg_fd_budget fds;
  sg_fd_budget_for(sg_fd_raise_limit(), false, true, &fds);
  cfg.max_connections = fds.runtime_conns;
  sg_fd_budget_log(&fds);

  /* Block the stop signals in every thread; this one waits for them. */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  signal(SIGPIPE, SIG_IGN);

  sg_runtime *rt;
  if (sg_runtime_start(&cfg, &rt)) return 1;
  sg_http_server *metrics = NULL;
  const char *ml = sg_args_get(&a, "metrics-listen");
  if (ml && sg_metrics_http_start(ml, &metrics, err, sizeof err)) {
    sg_runtime_stop(rt);
    return sg__cli_fail("%s", err); /* the message quotes the address: JSON-encoded */
  }
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {}
  fprintf(stderr, "{\"level\":\"info\",\"msg\":\"shutting down\",\"signal\":%d}\n", sig);
  sg_http_stop(metrics);
  sg_runtime_stop(rt);
  return 0;
}
