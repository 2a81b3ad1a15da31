/*
 * The runtime's HTTP server, loader thread and lifecycle.
 *
 * libmicrohttpd runs a pool of worker threads (one per CPU), each with its own epoll
 * loop. A GET is answered on the first callback; a POST body (selection only, 4 KiB at
 * most) is collected into a per-connection buffer first. Every response goes through
 * sg__rt_respond, which adds the common headers and writes one access-log line.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/util.h"
#include "runtime/rt.h"

/* ================================================================ responses ====== */

static _Thread_local char tl_scratch[SG__RT_SCRATCH];

char *sg__rt_scratch(void) { return tl_scratch; }

static int64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Copies at most cap-1 bytes of s into out, replacing what JSON would need to escape
 * (the path is client input, decoded by MHD) so a log line stays one valid object. */
static void log_safe(const char *s, char *out, size_t cap) {
  size_t i = 0;
  for (; s[i] && i + 1 < cap; i++) {
    unsigned char c = (unsigned char)s[i];
    out[i] = (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f) ? '?' : (char)c;
  }
  out[i] = '\0';
}

static void access_log(const sg__rt_req *r) {
  char line[512], method[16], path[160];
  log_safe(r->method, method, sizeof method);
  log_safe(r->path, path, sizeof path);
  int n = snprintf(line, sizeof line,
                   "{\"ts\":%lld,\"method\":\"%s\",\"path\":\"%s\",\"status\":%u,\"us\":%lld,"
                   "\"requestId\":\"%s\"}\n",
                   (long long)sg_now_ms(), method, path, r->status,
                   (long long)(now_us() - r->t0_us), r->xrid);
  if (n > 0 && (size_t)n < sizeof line) sg__rt_log_line(line, (size_t)n);
}

enum MHD_Result sg__rt_respond(sg__rt_req *r, unsigned status, const char *body, size_t len,
                               const sg__rt_hdrs *h) {
  static const sg__rt_hdrs none = {0};
  if (!h) h = &none;
  struct MHD_Response *resp =
      MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
  if (!resp) return MHD_NO;
  if (len || status != 304)
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  MHD_add_response_header(resp, "x-request-id", r->xrid);
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
                          h->cache_control ? h->cache_control : "no-store");
  if (h->etag) MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, h->etag);
  if (h->retry_after > 0) {
    char ra[16];
    snprintf(ra, sizeof ra, "%d", h->retry_after);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, ra);
  }
  if (h->www_authenticate)
    MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
  if (strncmp(r->path, "/v1/", 4) == 0) {
    MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Origin");
    if (r->origin && r->cors) {
      MHD_add_response_header(resp, MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_ORIGIN, r->origin);
      MHD_add_response_header(resp, "Access-Control-Expose-Headers",
                              "etag, retry-after, x-request-id");
    }
  }
  enum MHD_Result ret = MHD_queue_response(r->conn, status, resp);
  MHD_destroy_response(resp);
  r->status = status;
  if (r->rt->cfg.access_log) access_log(r);
  return ret;
}

enum MHD_Result sg__rt_error(sg__rt_req *r, sg_err e, const char *request_id,
                             const sg__rt_hdrs *h) {
  char rid[SG__REQID_LEN + 1];
  if (!request_id) {
    if (r->xrid_generated) {
      request_id = r->xrid;
    } else {
      sg__reqid_random(rid);
      request_id = rid;
    }
  }
  char body[512];
  int n = snprintf(body, sizeof body, "{\"code\":\"%s\",\"message\":\"%s\",\"requestId\":\"%s\"}",
                   sg_err_code(e), sg_err_message(e), request_id);
  sg__rt_hdrs hh = h ? *h : (sg__rt_hdrs){0};
  if (e == SG_E_INVALID_TOKEN) hh.www_authenticate = true;
  if (e == SG_E_ARTIFACT_UNAVAILABLE && hh.retry_after <= 0) hh.retry_after = 1;
  return sg__rt_respond(r, (unsigned)sg_err_status(e), body, (size_t)n, &hh);
}

/* SHA-256 of a publishable key, remembering the last key this thread saw: a runtime
 * thread mostly sees the same few keys (one per site), so this saves a hash per request.
 * Publishable keys are public, so the plain memcmp leaks nothing. */
static void key_digest(const char *key, size_t klen, uint8_t out[32]) {
  static _Thread_local char last[256];
  static _Thread_local size_t last_len;
  static _Thread_local uint8_t last_digest[32];
  if (klen != last_len || memcmp(key, last, klen) != 0) {
    sg_sha256(key, klen, last_digest);
    memcpy(last, key, klen);
    last_len = klen;
  }
  memcpy(out, last_digest, 32);
}

sg_err sg__rt_authorize(sg__rt_req *r, const sg__rt_snapshot *s, const char *key, size_t klen,
                        const sg__rt_key **out) {
  /* An invalid key still gets its typed error readable cross-origin. */
  r->cors = true;
  if (!key || klen == 0 || klen > 256) return SG_E_INVALID_KEY;
  key_digest(key, klen, r->key_digest);
  const sg__rt_key *k = sg__snapshot_key(s, r->key_digest);
  if (!k || !k->valid) return SG_E_INVALID_KEY;
  if (r->origin && !k->any_origin &&
      !sg__origin_allowed(k->origins, k->n_origins, r->origin, r->origin_len)) {
    r->cors = false;
    return SG_E_ORIGIN_NOT_ALLOWED;
  }
  *out = k;
  return SG_E_OK;
}

bool sg__rt_inm_matches(const sg__rt_req *r, const char *etag) {
  const char *inm =
      MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
  if (!inm) return false;
  size_t el = strlen(etag);
  for (const char *p = inm; *p;) {
    while (*p == ' ' || *p == ',' || *p == '\t') p++;
    if (*p == '*') return true;
    if (p[0] == 'W' && p[1] == '/') p += 2;
    const char *end = p;
    while (*end && *end != ',') end++;
    const char *te = end;
    while (te > p && (te[-1] == ' ' || te[-1] == '\t')) te--;
    if ((size_t)(te - p) == el && memcmp(p, etag, el) == 0) return true;
    p = end;
  }
  return false;
}

/* ================================================================ dispatch ======= */

static enum MHD_Result preflight(sg__rt_req *r) {
  struct MHD_Response *resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
  if (!resp) return MHD_NO;
  if (r->origin) {
    MHD_add_response_header(resp, MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_ORIGIN, r->origin);
  }
  MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Origin");
  MHD_add_response_header(resp, "Access-Control-Allow-Methods", "GET, POST, OPTIONS");
  MHD_add_response_header(resp, "Access-Control-Allow-Headers",
                          "authorization, content-type, x-request-id");
  MHD_add_response_header(resp, "Access-Control-Max-Age", "600");
  MHD_add_response_header(resp, "x-request-id", r->xrid);
  enum MHD_Result ret = MHD_queue_response(r->conn, MHD_HTTP_NO_CONTENT, resp);
  MHD_destroy_response(resp);
  r->status = MHD_HTTP_NO_CONTENT;
  if (r->rt->cfg.access_log) access_log(r);
  return ret;
}

/* *con_cls of a request other than a selection POST (which owns a malloc'd sg__rt_req). */
static int answered_marker;

typedef enum { R_NONE, R_QUERY, R_BOOTSTRAP, R_SELECTION, R_HEALTH } route;

static route route_of(const char *path) {
  if (strcmp(path, "/v1/query") == 0) return R_QUERY;
  if (strcmp(path, "/v1/bootstrap") == 0) return R_BOOTSTRAP;
  if (strcmp(path, "/v1/selection") == 0) return R_SELECTION;
  if (strcmp(path, "/healthz") == 0) return R_HEALTH;
  return R_NONE;
}

static bool rid_ok(const char *s) {
  size_t n = 0;
  for (; s[n]; n++)
    if (n >= 128 || s[n] < 0x21 || s[n] > 0x7e || s[n] == '"' || s[n] == '\\') return false;
  return n > 0;
}

static void req_init(sg__rt_req *r, sg_runtime *rt, struct MHD_Connection *conn, const char *method,
                     const char *url) {
  r->conn = conn;
  r->rt = rt;
  r->method = method;
  r->path = url;
  r->t0_us = now_us();
  r->status = 0;
  r->cors = false;
  r->body_len = 0;
  r->body_too_big = false;
  const char *x = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "x-request-id");
  r->xrid_generated = !(x && rid_ok(x));
  if (!r->xrid_generated)
    snprintf(r->xrid, sizeof r->xrid, "%s", x);
  else
    sg__reqid_random(r->xrid);
  const char *o = NULL;
  size_t ol = 0;
  if (MHD_lookup_connection_value_n(conn, MHD_HEADER_KIND, "Origin", 6, &o, &ol) == MHD_YES && o) {
    r->origin = o;
    r->origin_len = ol;
  } else {
    r->origin = NULL;
    r->origin_len = 0;
  }
}

static enum MHD_Result method_not_allowed(sg__rt_req *r, const char *allow) {
  struct MHD_Response *resp;
  char body[256];
  char rid[SG__REQID_LEN + 1];
  if (!r->xrid_generated) sg__reqid_random(rid);
  int n = snprintf(body, sizeof body, "{\"code\":\"%s\",\"message\":\"%s\",\"requestId\":\"%s\"}",
                   sg_err_code(SG_E_METHOD_NOT_ALLOWED), sg_err_message(SG_E_METHOD_NOT_ALLOWED),
                   r->xrid_generated ? r->xrid : rid);
  resp = MHD_create_response_from_buffer((size_t)n, body, MHD_RESPMEM_MUST_COPY);
  if (!resp) return MHD_NO;
  MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  MHD_add_response_header(resp, "x-request-id", r->xrid);
  enum MHD_Result ret = MHD_queue_response(r->conn, MHD_HTTP_METHOD_NOT_ALLOWED, resp);
  MHD_destroy_response(resp);
  r->status = MHD_HTTP_METHOD_NOT_ALLOWED;
  if (r->rt->cfg.access_log) access_log(r);
  return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls) {
  sg_runtime *rt = cls;
  route rte = route_of(url);
  bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
  bool post = strcmp(method, "POST") == 0;
  bool options = strcmp(method, "OPTIONS") == 0;

  if (rte == R_SELECTION && post) {
    sg__rt_req *r = *con_cls;
    if (!r) {
      r = malloc(sizeof *r);
      if (!r) return MHD_NO;
      req_init(r, rt, conn, method, url);
      *con_cls = r;
      const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
      int64_t v;
      if (cl && sg_parse_i64(cl, 0, INT64_MAX, &v) == 0 && v > SG__SELECTION_MAX_BODY) {
        r->body_too_big = true;
        return sg__rt_error(r, SG_E_PAYLOAD_TOO_LARGE, NULL, NULL);
      }
      return MHD_YES;
    }
    if (r->status) { /* answered early: discard the rest */
      *upload_data_size = 0;
      return MHD_YES;
    }
    if (*upload_data_size) {
      size_t n = *upload_data_size;
      if (r->body_too_big || n > SG__SELECTION_MAX_BODY - r->body_len) {
        r->body_too_big = true;
      } else {
        memcpy(r->body + r->body_len, upload_data, n);
        r->body_len += n;
      }
      *upload_data_size = 0;
      return MHD_YES;
    }
    r->body[r->body_len] = '\0';
    if (r->body_too_big) return sg__rt_error(r, SG_E_PAYLOAD_TOO_LARGE, NULL, NULL);
    return sg__h_selection(r);
  }

  /* Everything else is answered once the request is complete: MHD closes the connection
   * after a response queued on the first call (it cannot know the body was read), so
   * the first call only marks the request and a body, if any, is discarded. */
  if (!*con_cls) {
    *con_cls = &answered_marker;
    return MHD_YES;
  }
  if (*upload_data_size) {
    *upload_data_size = 0;
    return MHD_YES;
  }
  sg__rt_req r;
  req_init(&r, rt, conn, method, url);
  switch (rte) {
  case R_QUERY:
    if (get) return sg__h_query(&r);
    if (options) return preflight(&r);
    return method_not_allowed(&r, "GET, HEAD, OPTIONS");
  case R_BOOTSTRAP:
    if (get) return sg__h_bootstrap(&r);
    if (options) return preflight(&r);
    return method_not_allowed(&r, "GET, HEAD, OPTIONS");
  case R_SELECTION:
    if (options) return preflight(&r);
    return method_not_allowed(&r, "POST, OPTIONS");
  case R_HEALTH:
    if (get) return sg__h_health(&r);
    return method_not_allowed(&r, "GET, HEAD");
  case R_NONE:
  default: return sg__rt_error(&r, SG_E_NOT_FOUND, NULL, NULL);
  }
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
  if (*con_cls && *con_cls != &answered_marker) free(*con_cls);
  *con_cls = NULL;
}

/* ================================================================ loader ========= */

static void *loader_main(void *arg) {
  sg_runtime *rt = arg;
  int64_t last_flush = sg_mono_ms(), last_retry = sg_mono_ms();
  pthread_mutex_lock(&rt->stop_mu);
  while (!atomic_load(&rt->stopping)) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += (long)rt->cfg.poll_ms * 1000000L;
    while (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&rt->stop_cv, &rt->stop_mu, &ts);
    if (atomic_load(&rt->stopping)) break;
    pthread_mutex_unlock(&rt->stop_mu);

    /* The loader is the only writer of rcu.cur, so it may read it without entering. */
    sg__rt_snapshot *cur = atomic_load(&rt->rcu.cur);
    uint64_t rev;
    int64_t now = sg_mono_ms();
    bool retry = cur->missing_artifact && now - last_retry >= 1000;
    if (sg_edge_revision(rt->edge, &rev) == 0 && (rev != cur->revision || retry)) {
      sg__rt_snapshot *next;
      if (retry) last_retry = now;
      if (sg__snapshot_load(rt->edge, rt->quota, cur, &next) == 0)
        sg__snapshot_free(sg__rcu_publish(&rt->rcu, next));
      else
        fprintf(stderr, "{\"error\":\"edge reload failed: %s\"}\n", strerror(errno));
    }
    sg__rt_log_flush();
    if (now - last_flush >= 1000) {
      last_flush = now;
      if (sg__quota_flush(rt->quota, sg__utc_month(sg_now_s())))
        fprintf(stderr, "{\"error\":\"quota flush failed: %s\"}\n", strerror(errno));
    }
    pthread_mutex_lock(&rt->stop_mu);
  }
  pthread_mutex_unlock(&rt->stop_mu);
  return NULL;
}

/* ================================================================ lifecycle ====== */

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "{\"error\":\"runtime: %s%s%s\"}\n", what, detail ? ": " : "",
          detail ? detail : "");
  return -1;
}

/* Splits "host:port", "[v6]:port", ":port" or "port". host is "" for any address. */
static int split_listen(const char *s, char *host, size_t hsz, char *port, size_t psz) {
  const char *colon;
  if (s[0] == '[') {
    const char *end = strchr(s, ']');
    if (!end || end[1] != ':') return -1;
    if ((size_t)(end - s - 1) >= hsz) return -1;
    memcpy(host, s + 1, (size_t)(end - s - 1));
    host[end - s - 1] = '\0';
    colon = end + 1;
  } else {
    colon = strrchr(s, ':');
    if (!colon) {
      host[0] = '\0';
      colon = s - 1;
    } else {
      if ((size_t)(colon - s) >= hsz) return -1;
      memcpy(host, s, (size_t)(colon - s));
      host[colon - s] = '\0';
    }
  }
  int64_t p;
  if (sg_parse_i64(colon + 1, 0, 65535, &p)) return -1;
  snprintf(port, psz, "%lld", (long long)p);
  return 0;
}

unsigned sg_runtime_port(const sg_runtime *rt) { return rt->port; }

static void runtime_free(sg_runtime *rt) {
  sg__snapshot_free(atomic_load(&rt->rcu.cur));
  if (rt->quota) sg__quota_flush(rt->quota, sg__utc_month(sg_now_s()));
  sg__quota_close(rt->quota);
  sg__events_close(rt->events);
  sg_ratelimit_free(rt->rl);
  sg_edge_close(rt->edge);
  pthread_mutex_destroy(&rt->stop_mu);
  pthread_cond_destroy(&rt->stop_cv);
  free(rt->state_dir);
  free(rt);
}

int sg_runtime_start(const sg_runtime_config *cfg, sg_runtime **out) {
  if (!cfg || !cfg->edge || !cfg->state_dir)
    return fail("edge and state directory are required", NULL);
  char host[256], port[8];
  const char *listen = cfg->listen ? cfg->listen : "127.0.0.1:8081";
  if (split_listen(listen, host, sizeof host, port, sizeof port))
    return fail("bad listen address", listen);

  sg_runtime *rt = calloc(1, sizeof *rt);
  if (!rt) return fail("out of memory", NULL);
  rt->cfg = *cfg;
  if (!rt->cfg.selection_rate) rt->cfg.selection_rate = 600;
  if (!rt->cfg.poll_ms) rt->cfg.poll_ms = 200;
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

  char path[4096];
  sg__rt_snapshot *first = NULL;
  if (!rt->state_dir || sg_mkdirs(rt->state_dir, 0755)) {
    fail("cannot create state directory", strerror(errno));
    goto err;
  }
  if (sg_edge_open(cfg->edge, &rt->edge)) {
    fail("cannot open edge store", strerror(errno));
    goto err;
  }
  snprintf(path, sizeof path, "%s/quota.json", rt->state_dir);
  if (sg__quota_open(path, sg__utc_month(sg_now_s()), &rt->quota)) {
    fail("cannot open quota counters", strerror(errno));
    goto err;
  }
  snprintf(path, sizeof path, "%s/events", rt->state_dir);
  if (sg__events_open(path, &rt->events)) {
    fail("cannot open selection events", strerror(errno));
    goto err;
  }
  if (!(rt->rl = sg_ratelimit_new(rt->cfg.selection_rate))) {
    fail("out of memory", NULL);
    goto err;
  }
  if (sg__snapshot_load(rt->edge, rt->quota, NULL, &first)) {
    fail("cannot load edge store", strerror(errno));
    goto err;
  }
  sg__rcu_init(&rt->rcu, first);

  struct addrinfo hints = {
      .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
  struct addrinfo *ai = NULL;
  int gai = getaddrinfo(host[0] ? host : "0.0.0.0", port, &hints, &ai);
  if (gai) {
    fail("cannot resolve listen address", gai_strerror(gai));
    goto err;
  }
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_TURBO;
  if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
  rt->mhd = MHD_start_daemon(
      flags, 0, NULL, NULL, on_request, rt, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
      MHD_OPTION_THREAD_POOL_SIZE, rt->cfg.threads, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
      /* MHD zeroes a connection's whole memory pool after every
       * request (memset of 32 KiB by default, ~6% of the CPU under
       * load). 16 KiB still holds a request of ~12 KiB of headers
       * (larger: 431), far above what the runtime's requests carry. */
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(16 * 1024), MHD_OPTION_LISTEN_BACKLOG_SIZE,
      (unsigned)1024, MHD_OPTION_NOTIFY_COMPLETED, on_completed, rt, MHD_OPTION_END);
  freeaddrinfo(ai);
  if (!rt->mhd) {
    fail("cannot listen", listen);
    goto err;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(rt->mhd, MHD_DAEMON_INFO_BIND_PORT);
  rt->port = info ? info->port : 0;
  if (pthread_create(&rt->loader, NULL, loader_main, rt)) {
    MHD_stop_daemon(rt->mhd);
    fail("cannot start loader thread", NULL);
    goto err;
  }
  bool v6 = strchr(host, ':') != NULL;
  fprintf(stderr,
          "{\"level\":\"info\",\"msg\":\"runtime listening\",\"url\":\"http://%s%s%s:%u\"}\n",
          v6 ? "[" : "", host[0] ? host : "0.0.0.0", v6 ? "]" : "", rt->port);
  fflush(stderr);
  *out = rt;
  return 0;
err:
  runtime_free(rt);
  return -1;
}

void sg_runtime_stop(sg_runtime *rt) {
  if (!rt) return;
  MHD_stop_daemon(rt->mhd); /* waits for the worker threads */
  pthread_mutex_lock(&rt->stop_mu);
  atomic_store(&rt->stopping, true);
  pthread_cond_signal(&rt->stop_cv);
  pthread_mutex_unlock(&rt->stop_mu);
  pthread_join(rt->loader, NULL);
  sg__rt_log_flush();
  sg__events_sync(rt->events);
  runtime_free(rt);
}
