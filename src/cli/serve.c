/*
 * `suggestd serve` (control plane + runtime in one process; SQLite and an edge directory
 * by default, --database/--edge for PostgreSQL and Redis) and `suggestd control` (the
 * control plane alone).
 */
#include <ctype.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/args.h"
#include "common/fds.h"
#include "common/util.h"
#include "control/control.h"
#include "dashboard/dashboard.h"
#include "edge/edge.h"
#include "http/common/listen.h"
#include "http/mhd/metrics_http.h"
#include "runtime/runtime.h"
#include "state/state.h"
#include "store/store.h"

static const sg_flag_spec serve_flags[] = {
    {"data-dir", true, false},
    {"database", true, false},
    {"edge", true, false},
    {"control-listen", true, false},
    {"runtime-listen", true, false},
    {"control-rate-key", true, false},
    {"control-rate-ip", true, false},
    {"sync-publish-limit", true, false},
    {"selection-rate", true, false},
    {"import-max-bytes", true, false},
    {"metrics-listen", true, false},
    {"control-per-ip-connections", true, false},
    {"control-head-timeout", true, false},
    {"trusted-proxies", true, false},
    {"artifact-grace", true, false},
    {"publish-lease-seconds", true, false},
    {"recompile-per-minute", true, false},
    {"session-idle-seconds", true, false},
    {"dashboard-secure-cookies", false, false},
    {"signin-rate-ip", true, false},
    {"signin-rate-email", true, false},
    {"runtime-public-url", true, false},
    {"invite-rate", true, false},
    {"worker-queue", true, false},
    {"max-lists-per-workspace", true, false},
    {"keep-versions", true, false},
    {"max-members-per-workspace", true, false},
    {"max-publishable-keys-per-application", true, false},
    {"max-secret-keys-per-application", true, false},
    {"analytics", true, false},
    {"analytics-retention-days", true, false},
    {NULL, false, false},
};

int sg__cli_fail(const char *fmt, const char *arg) {
  /* fmt is always a literal with at most one %s (see cli.h). */
  char msg[1536];
  const char *pct = strstr(fmt, "%s");
  if (pct)
    snprintf(msg, sizeof msg, "%.*s%s%s", (int)(pct - fmt), fmt, arg ? arg : "", pct + 2);
  else
    snprintf(msg, sizeof msg, "%s", fmt);
  json_t *o = json_pack("{s:s}", "error", msg);
  char *s = json_dumps(o, JSON_COMPACT);
  fprintf(stderr, "%s\n", s ? s : "{\"error\":\"?\"}");
  free(s);
  json_decref(o);
  return 1;
}

/* The --max-* flags (docs/STORE.md "Limits"), each 1..1000000000. */
static int limit_flags(sg_args *a, sg_store_limits *l) {
  static const struct {
    const char *flag;
    size_t off;
  } f[] = {
      {"max-lists-per-workspace", offsetof(sg_store_limits, lists_per_workspace)},
      {"max-members-per-workspace", offsetof(sg_store_limits, members_per_workspace)},
      {"max-publishable-keys-per-application",
       offsetof(sg_store_limits, publishable_keys_per_application)},
      {"max-secret-keys-per-application", offsetof(sg_store_limits, secret_keys_per_application)},
  };
  *l = SG_STORE_LIMITS_DEFAULT;
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    const char *v = sg_args_get(a, f[i].flag);
    if (!v) continue;
    int64_t n;
    if (sg_parse_i64(v, 1, 1000000000, &n)) {
      char msg[128];
      snprintf(msg, sizeof msg, "--%s must be an integer from 1 to 1000000000", f[i].flag);
      return sg__cli_fail("%s", msg);
    }
    memcpy((char *)l + f[i].off, &n, sizeof n);
  }
  return 0;
}

int sg__cli_open(sg_args *a, sg_store **st, sg_edge **edge) {
  const char *dir = sg_args_get(a, "data-dir");
  const char *db = sg_args_get_or(a, "database", dir);
  char err[256];
  if (!db) return sg__cli_fail("--data-dir (or --database and --edge) is required", NULL);
  sg_store_limits limits;
  if (st && limit_flags(a, &limits)) return 1;
  if (st && sg_store_open(db, st, err, sizeof err)) return sg__cli_fail("%s", err);
  if (st) sg_store_set_limits(*st, &limits);
  const char *kv = sg_args_get(a, "keep-versions");
  int64_t keep = SG_STORE_KEEP_VERSIONS_DEFAULT;
  if (kv && sg_parse_i64(kv, 1, 1000, &keep)) {
    if (st) sg_store_close(*st);
    return sg__cli_fail("--keep-versions must be an integer from 1 to 1000", NULL);
  }
  if (st) sg_store_set_keep_versions(*st, keep);
  if (edge) {
    const char *e = sg_args_get(a, "edge");
    char path[4096];
    if (!e) {
      if (!dir) return sg__cli_fail("--edge is required with --database", NULL);
      snprintf(path, sizeof path, "%s/edge", dir);
      e = path;
    }
    if (sg_edge_open(e, edge)) {
      if (st) sg_store_close(*st);
      return sg__cli_fail("cannot open edge store '%s'", e);
    }
  }
  return 0;
}

static int u32_flag(sg_args *a, const char *name, const char *dflt, uint32_t *out) {
  int64_t v;
  const char *s = sg_args_get_or(a, name, dflt);
  if (sg_parse_i64(s, 0, 100000000, &v)) {
    char msg[128];
    snprintf(msg, sizeof msg, "--%s must be a non-negative integer", name);
    return sg__cli_fail("%s", msg);
  }
  *out = (uint32_t)v;
  return 0;
}

/* An origin the dashboard may name in its Content-Security-Policy and hand to the
 * browser: a scheme, a host and maybe a port, nothing that could end the header value or
 * add a source. */
static bool origin_ok(const char *u) {
  const char *h = strncmp(u, "http://", 7) == 0    ? u + 7
                  : strncmp(u, "https://", 8) == 0 ? u + 8
                                                   : NULL;
  if (!h || !*h || strlen(u) > 200) return false;
  for (; *h; h++)
    if (!isalnum((unsigned char)*h) && !strchr(".-:[]", *h)) return false;
  return true;
}

/* The runtime's URL as a browser reaches it, for the list page's live preview: the flag,
 * else (serve) http://<runtime-listen>, a wildcard address read as localhost. */
static int runtime_url_flag(sg_args *a, bool with_runtime, sg_control_config *cc) {
  static char url[256];
  const char *u = sg_args_get(a, "runtime-public-url");
  if (!u && with_runtime) {
    const char *l = sg_args_get_or(a, "runtime-listen", "127.0.0.1:8081");
    /* Read by the listen grammar itself, so that every spelling of "every interface"
     * (0.0.0.0:P, :P, [::]:P) is one; a bad address fails later, naming the flag. */
    sg_listen_addr la;
    char perr[160];
    bool any = false;
    if (sg_listen_parse(l, &la, perr, sizeof perr) == 0) {
      const struct sockaddr_in *v4 = (const struct sockaddr_in *)(const void *)&la.sa;
      const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)(const void *)&la.sa;
      any = la.v6 ? IN6_IS_ADDR_UNSPECIFIED(&v6->sin6_addr) : v4->sin_addr.s_addr == INADDR_ANY;
    }
    if (any)
      snprintf(url, sizeof url, "http://localhost:%u", la.port);
    else
      snprintf(url, sizeof url, "http://%s", l);
    u = url;
  }
  if (u && !origin_ok(u))
    return sg__cli_fail("--runtime-public-url must be an origin such as https://rt.example.com, "
                        "not '%s'",
                        u);
  cc->runtime_public_url = u;
  return 0;
}

/* The dashboard's flags (docs/DASHBOARD.md). The runtime's state directory, where usage
 * and selection events are read from, is <data-dir>/runtime as `serve` lays it out;
 * with a Redis edge they come from that Redis and the store instead. */
static int dashboard_flags(sg_args *a, bool with_runtime, sg_control_config *cc) {
  int64_t idle;
  if (sg_parse_i64(sg_args_get_or(a, "session-idle-seconds", "43200"), 1, 365LL * 86400, &idle))
    return sg__cli_fail("--session-idle-seconds must be an integer from 1 to 31536000", NULL);
  cc->session_idle_s = idle;
  const char *sc = sg_args_get(a, "dashboard-secure-cookies");
  cc->secure_cookies = sc && strcmp(sc, "0") != 0 && strcmp(sc, "false") != 0;
  if (u32_flag(a, "signin-rate-ip", "20", &cc->signin_rate_ip) ||
      u32_flag(a, "signin-rate-email", "10", &cc->signin_rate_email) ||
      u32_flag(a, "invite-rate", "10", &cc->invite_rate) ||
      u32_flag(a, "worker-queue", "32", &cc->worker_queue))
    return 1;
  if (cc->worker_queue > 4096)
    return sg__cli_fail("--worker-queue must be an integer in 0..4096", NULL);
  if (runtime_url_flag(a, with_runtime, cc)) return 1;
  static char state[4096];
  const char *dir = sg_args_get(a, "data-dir");
  const char *edge = sg_args_get(a, "edge");
  sg_state_backend b;
  if (edge && sg_state_backend_of(edge, &b) == 0 && b == SG_STATE_REDIS) {
    /* A fleet: the runtimes' state is in that Redis, not in a directory here. */
    cc->state = edge;
  } else if (dir) {
    snprintf(state, sizeof state, "%s/runtime", dir);
    cc->state = state;
  }
  return 0;
}

/* Blocks SIGINT/SIGTERM in every thread (the listeners inherit the mask) and returns the
 * set for sigwait in the main thread. */
static void block_signals(sigset_t *set) {
  sigemptyset(set);
  sigaddset(set, SIGINT);
  sigaddset(set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, set, NULL);
  signal(SIGPIPE, SIG_IGN);
}

static int run(int argc, char **argv, bool with_control, bool with_runtime) {
  sg_args a;
  char err[256];
  if (sg_args_parse(&a, argc, argv, serve_flags, err, sizeof err)) return sg__cli_fail("%s", err);
  sg_store *st = NULL;
  sg_edge *edge = NULL;
  sg_control_config cc = {0};
  if (u32_flag(&a, "control-rate-key", "60", &cc.rate_per_key) ||
      u32_flag(&a, "control-rate-ip", "120", &cc.rate_per_ip))
    return 1;
  uint32_t sync_limit, selection_rate;
  if (u32_flag(&a, "sync-publish-limit", "10000", &sync_limit) ||
      u32_flag(&a, "selection-rate", "600", &selection_rate))
    return 1;
  cc.sync_publish_limit = sync_limit;
  uint32_t per_ip, head_timeout;
  if (u32_flag(&a, "control-per-ip-connections", "64", &per_ip) ||
      u32_flag(&a, "control-head-timeout", "10", &head_timeout))
    return 1;
  if (head_timeout < 1 || head_timeout > 3600)
    return sg__cli_fail("--control-head-timeout must be an integer in 1..3600", NULL);
  cc.max_per_ip = per_ip;
  cc.head_timeout_s = head_timeout;
  /* Lives as long as the process: the listener borrows it. */
  static sg_trusted_proxies trusted;
  if (sg_trusted_proxies_parse(sg_args_get(&a, "trusted-proxies"), &trusted, err, sizeof err))
    return sg__cli_fail("%s", err);
  cc.trusted_proxies = trusted.n ? &trusted : NULL;
  if (u32_flag(&a, "artifact-grace", "60", &cc.artifact_grace_s)) return 1;
  /* Search analytics (docs/DESIGN.md §9): counted by the runtime unless --analytics off, kept
   * --analytics-retention-days by the control plane. */
  const char *an = sg_args_get_or(&a, "analytics", "on");
  if (strcmp(an, "on") != 0 && strcmp(an, "off") != 0)
    return sg__cli_fail("--analytics must be on or off", NULL);
  if (u32_flag(&a, "analytics-retention-days", "90", &cc.analytics_retention_days)) return 1;
  if (cc.analytics_retention_days < 1 || cc.analytics_retention_days > 3650)
    return sg__cli_fail("--analytics-retention-days must be an integer in 1..3650", NULL);
  /* The background recompile into the current artifact format (docs/UPGRADING.md). */
  if (u32_flag(&a, "recompile-per-minute", "10", &cc.recompile_per_minute)) return 1;
  if (cc.recompile_per_minute > 6000)
    return sg__cli_fail("--recompile-per-minute must be an integer in 0..6000", NULL);
  if (u32_flag(&a, "publish-lease-seconds", "30", &cc.publish_lease_s)) return 1;
  if (cc.publish_lease_s < 1 || cc.publish_lease_s > 3600)
    return sg__cli_fail("--publish-lease-seconds must be an integer in 1..3600", NULL);
  /* The cap of one import body; the 512 MiB default is what the API documents, a smaller
   * value exists for tests of the 413. */
  const char *imb = sg_args_get(&a, "import-max-bytes");
  if (imb) {
    int64_t v;
    if (sg_parse_i64(imb, 1, (int64_t)1 << 40, &v))
      return sg__cli_fail("--import-max-bytes must be a positive integer", NULL);
    cc.import_max_bytes = (uint64_t)v;
  }
  /* Before anything opens a file: the caps below depend on the raised limit. */
  sg_fd_budget fds;
  sg_fd_budget_for(sg_fd_raise_limit(), with_control, with_runtime, &fds);
  cc.max_connections = fds.control_conns;
  if (dashboard_flags(&a, with_runtime, &cc)) return 1;
  if (sg__cli_open(&a, with_control ? &st : NULL, &edge)) return 1;
  sigset_t set;
  block_signals(&set);

  sg_control *ctl = NULL;
  if (with_control) {
    cc.listen = sg_args_get_or(&a, "control-listen", "127.0.0.1:8080");
    cc.store = st;
    cc.edge = edge;
    cc.mount = &sg_dashboard_mount; /* the dashboard, under /dashboard */
    if (sg_control_start(&cc, &ctl, err, sizeof err)) {
      sg_store_close(st);
      sg_edge_close(edge);
      return sg__cli_fail("%s", err);
    }
    fprintf(stderr,
            "{\"level\":\"info\",\"msg\":\"control plane listening\",\"url\":\"http://%s\"}\n",
            cc.listen);
  }
  sg_runtime *rt = NULL;
  if (with_runtime) {
    const char *dir = sg_args_get(&a, "data-dir");
    const char *edge_spec = sg_args_get(&a, "edge");
    char edge_path[4096], state[4096];
    if (!edge_spec) {
      snprintf(edge_path, sizeof edge_path, "%s/edge", dir);
      edge_spec = edge_path;
    }
    snprintf(state, sizeof state, "%s/runtime", dir ? dir : ".");
    sg_runtime_config rc = {
        .listen = sg_args_get_or(&a, "runtime-listen", "127.0.0.1:8081"),
        .edge = edge_spec,
        .state_dir = state,
        .selection_rate = selection_rate,
        .access_log = true,
        .trusted_proxies = trusted.n ? &trusted : NULL,
        .max_connections = fds.runtime_conns,
        .analytics_off = strcmp(an, "off") == 0,
        /* The edge guard of this process confirms what the runtime loads at once. */
        .edge_confirm = ctl ? sg_control_edge_confirm : NULL,
        .edge_confirm_ctx = ctl,
    };
    if (sg_runtime_start(&rc, &rt)) {
      sg_control_stop(ctl);
      sg_store_close(st);
      sg_edge_close(edge);
      return 1;
    }
  }
  sg_http_server *metrics = NULL;
  const char *ml = sg_args_get(&a, "metrics-listen");
  if (ml && sg_metrics_http_start(ml, &metrics, err, sizeof err)) {
    sg_runtime_stop(rt);
    sg_control_stop(ctl);
    sg_store_close(st);
    sg_edge_close(edge);
    return sg__cli_fail("%s", err);
  }
  sg_fd_budget_log(&fds);
  fflush(stderr);
  int sig = 0;
  sigwait(&set, &sig);
  fprintf(stderr, "{\"level\":\"info\",\"msg\":\"shutting down\",\"signal\":%d}\n", sig);
  sg_http_stop(metrics);
  sg_runtime_stop(rt);
  sg_control_stop(ctl);
  sg_store_close(st);
  sg_edge_close(edge);
  return 0;
}

int sg_cmd_serve(int argc, char **argv) { return run(argc, argv, true, true); }
int sg_cmd_control(int argc, char **argv) { return run(argc, argv, true, false); }
