/*
 * libmicrohttpd server: per-connection body accumulation with a hard cap (or, for
 * streaming routes, chunks handed straight to the route's callbacks), one handler call
 * per request, bodies produced on demand for large responses, JSON-lines access log on
 * stderr.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/metrics.h"
#include "common/util.h"
#include "common/workpool.h"
#include "http/common/listen.h"
#include "http/common/percent.h"
#include "http/mhd/gate.h"
#include "http/mhd/http.h"

struct sg_http_server {
  struct MHD_Daemon *d;
  sg__gate *gate; /* accepts connections and hands them over with their head complete */
  sg_http_config cfg;
  unsigned port;
  sg_listener listener;                  /* metrics label, from cfg.log_name */
  sg_workpool *pools[SG_HTTP_MAX_POOLS]; /* for handlers that block (req.pool) */
};

/* Everything one request needs between libmicrohttpd's calls; owned by the connection
 * and freed by on_completed. */
typedef struct {
  sg_req req;
  sg_buf body;
  bool too_large;
  int64_t t0_us;
  sg_http_begin kind;    /* what the begin hook decided */
  sg_resp early;         /* SG_HTTP_RESPOND: the answer decided before the body */
  sg_http_stream stream; /* SG_HTTP_STREAM: the route's callbacks */
  uint64_t received;     /* streamed body bytes so far */
  bool stopped;          /* the stream asked for no more data */
  /* A handler run on a worker pool: the connection is suspended from the moment the job
   * is queued until the worker (or a stopping pool) has filled pooled and resumed it. */
  enum { JOB_NONE, JOB_QUEUED, JOB_DONE } job;
  sg_resp pooled;
  sg_http_server *server;
} conn_state;

static int64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

const char *sg_req_header(const sg_req *r, const char *name) {
  return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *sg_req_query(const sg_req *r, const char *name) {
  return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

/* libmicrohttpd's unescape hook, for the path and (after its own '+' to space) each
 * query argument: the shared decoder (http/common/percent.h), in place. check_uri has
 * already checked the raw target under the path and query rules and refused one that
 * fails (an encoded '/' in the path among them), so here the rule is the one for
 * checked pieces, and a failure leaves s as it is, unused. */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s) {
  (void)cls;
  (void)c;
  size_t n = strlen(s), o;
  if (sg_http_percent_decode(s, n, SG_HTTP_PCT_CHECKED, s, n, &o)) return n;
  s[o] = '\0';
  return o;
}

/* *con_cls before the first on_request call of a request whose target failed decoding. */
static char bad_target;

/* libmicrohttpd's URI hook sees the raw target before any decoding: the one place where
 * the unescape hook's failure (which it cannot report) can be found and answered. */
static void *check_uri(void *cls, const char *uri, struct MHD_Connection *c) {
  (void)cls;
  (void)c;
  size_t n = strlen(uri), pl = strcspn(uri, "?"), o;
  char *t = malloc(n + 1);
  if (!t) return &bad_target;
  memcpy(t, uri, n + 1);
  bool ok = sg_http_percent_decode(t, pl, SG_HTTP_PCT_PATH, t, pl, &o) == SG_E_OK &&
            (pl == n || sg_http_percent_decode(t + pl + 1, n - pl - 1, SG_HTTP_PCT_QUERY,
                                               t + pl + 1, n - pl - 1, &o) == SG_E_OK);
  free(t);
  return ok ? NULL : &bad_target;
}

/* Every value of one header, joined with ',' (a list header may come in several
 * fields; their order is kept). Bounded by the request head's own cap. */
typedef struct {
  const char *name;
  sg_buf out;
} header_join;

static enum MHD_Result join_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value) {
  header_join *j = cls;
  if (!key || !value || strcasecmp(key, j->name) != 0) return MHD_YES;
  if (j->out.len) sg_buf_append(&j->out, ",", 1);
  sg_buf_append(&j->out, value, strlen(value));
  return MHD_YES;
}

/* The client's address: the peer's, or from a trusted proxy the one its Forwarded /
 * X-Forwarded-For headers name (http/common/forwarded.h). */
static void client_ip(const sg_http_server *s, struct MHD_Connection *c, char *out, size_t outsz) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  snprintf(out, outsz, "unknown");
  if (!ci || !ci->client_addr) return;
  const struct sockaddr *sa = ci->client_addr;
  sg_ip peer;
  memset(&peer, 0, sizeof peer);
  if (sa->sa_family == AF_INET) {
    peer.b[10] = peer.b[11] = 0xff;
    memcpy(peer.b + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
  } else if (sa->sa_family == AF_INET6) {
    memcpy(peer.b, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
  } else {
    return;
  }
  const sg_trusted_proxies *t = s->cfg.trusted_proxies;
  if (t && sg_trusted_proxies_contains(t, &peer)) {
    header_join fwd = {.name = "Forwarded"}, xff = {.name = "X-Forwarded-For"};
    sg_buf_init(&fwd.out, SG_HTTP_HEAD_MAX);
    sg_buf_init(&xff.out, SG_HTTP_HEAD_MAX);
    MHD_get_connection_values(c, MHD_HEADER_KIND, join_header, &fwd);
    MHD_get_connection_values(c, MHD_HEADER_KIND, join_header, &xff);
    peer = sg_forwarded_client(t, &peer, fwd.out.len ? fwd.out.data : NULL,
                               xff.out.len ? xff.out.data : NULL);
    sg_buf_free(&fwd.out);
    sg_buf_free(&xff.out);
  }
  sg_ip_format(&peer, out, outsz);
}

/* Appends s as a JSON string of at most cap bytes of content that is valid UTF-8: a
 * byte that does not start a well-formed sequence becomes '?', and the cap never cuts
 * a character in half. The path and method are client input (the path decoded by the
 * server), so without this one log line could be invalid JSON for a log pipeline. */
static void log_str(sg_buf *line, const char *s, size_t cap) {
  char out[600];
  if (cap > sizeof out) cap = sizeof out;
  size_t o = 0;
  for (size_t i = 0; s[i] && o < cap;) {
    unsigned char c = (unsigned char)s[i];
    size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    bool ok = len == 1 || (len > 1 && strnlen(s + i, len) == len && sg_utf8_valid(s + i, len));
    if (!ok) {
      out[o++] = '?';
      i++;
      continue;
    }
    if (o + len > cap) break; /* a whole character that does not fit: stop before it */
    memcpy(out + o, s + i, len);
    o += len;
    i += len;
  }
  sg_buf_json_str(line, out, o);
}

/* Counts the request in the metrics and writes its access-log line. The line has the
 * runtime listener's field names (docs/OBSERVABILITY.md): ts, level, msg, listener,
 * method, route, path, status, durationUs, requestId; the control listener adds clientIp
 * (the peer, or behind a trusted proxy the client it names). */
static void access_log(const sg_http_server *s, const sg_req *req, int status, int64_t us) {
  int route = sg_metrics_route(s->listener, req->route);
  sg_metrics_http(route, (unsigned)status, us);
  sg_buf line;
  sg_buf_init(&line, 4096);
  sg_buf_printf(&line,
                "{\"ts\":%lld,\"level\":\"info\",\"msg\":\"access\",\"listener\":\"%s\","
                "\"method\":",
                (long long)sg_now_ms(), sg_metrics_listener_name(s->listener));
  log_str(&line, req->method, 32);
  sg_buf_printf(&line, ",\"route\":\"%s\",\"path\":", sg_metrics_route_label(route));
  log_str(&line, req->path, 512);
  sg_buf_printf(&line, ",\"status\":%d,\"durationUs\":%lld,\"requestId\":\"%s\"", status,
                (long long)us, req->request_id);
  if (req->client_ip[0]) sg_buf_printf(&line, ",\"clientIp\":\"%s\"", req->client_ip);
  sg_buf_append(&line, "}\n", 2);
  if (line.data) fputs(line.data, stderr);
  sg_buf_free(&line);
}

static void resp_free(sg_resp *r) {
  sg_buf_free(&r->body);
  for (size_t i = 0; i < r->nheaders; i++) {
    free(r->hname[i]);
    free(r->hvalue[i]);
  }
  r->nheaders = 0; /* safe to call twice */
}

static void resp_init(sg_resp *r) {
  memset(r, 0, sizeof *r);
  sg_buf_init(&r->body, 0);
  r->status = 500;
}

/* Producer callback for sg_resp_stream bodies. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
  sg_resp_stream *rs = cls;
  long n = rs->read(rs->ctx, buf, max);
  if (n > 0) return (ssize_t)n;
  return n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_free(void *cls) {
  sg_resp_stream *rs = cls;
  if (rs->free) rs->free(rs->ctx);
  free(rs);
}

/* Queues resp (taking over a streamed body) and writes the access log line. */
static enum MHD_Result respond(sg_http_server *s, conn_state *st, sg_resp *resp) {
  struct MHD_Connection *c = st->req.conn;
  struct MHD_Response *mr = NULL;
  bool streamed = resp->stream.read != NULL;
  if (streamed) {
    sg_resp_stream *rs = malloc(sizeof *rs);
    if (rs) {
      *rs = resp->stream;
      mr = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, stream_read, rs,
                                             stream_free);
      if (!mr) stream_free(rs);
    } else if (resp->stream.free) {
      resp->stream.free(resp->stream.ctx);
    }
    memset(&resp->stream, 0, sizeof resp->stream);
  } else {
    size_t blen = resp->body.len;
    mr = MHD_create_response_from_buffer(blen, blen ? resp->body.data : (void *)"",
                                         MHD_RESPMEM_MUST_COPY);
  }
  enum MHD_Result ret = MHD_NO;
  if (mr) {
    MHD_add_response_header(mr, "x-request-id", st->req.request_id);
    if (resp->body.len || resp->content_type || streamed)
      MHD_add_response_header(mr, "Content-Type",
                              resp->content_type ? resp->content_type : "application/json");
    for (size_t i = 0; i < resp->nheaders; i++)
      MHD_add_response_header(mr, resp->hname[i], resp->hvalue[i]);
    /* One request per connection: every request head then passes the gate, which bounds
     * its size and the time it may take to arrive (libmicrohttpd can do neither). */
    MHD_add_response_header(mr, "Connection", "close");
    ret = MHD_queue_response(c, (unsigned)resp->status, mr);
    MHD_destroy_response(mr);
  }
  access_log(s, &st->req, resp->status, now_us() - st->t0_us);
  resp_free(resp);
  return ret;
}

/* A worker pool's job: runs the handler (or, when the pool stopped first, answers 503)
 * and resumes the connection, whose thread then sends the answer. Nothing touches st
 * after the resume: the connection may be finished and st freed at once. */
static void run_pooled(void *arg, bool run) {
  conn_state *st = arg;
  sg_http_server *s = st->server;
  if (run) {
    s->cfg.handler(&st->req, &st->pooled);
  } else {
    sg_resp_error(&st->pooled, &st->req, SG_E_BUSY, NULL, NULL);
    sg_resp_header(&st->pooled, "Retry-After", "1");
  }
  struct MHD_Connection *c = st->req.conn;
  st->job = JOB_DONE;
  MHD_resume_connection(c);
}

/* First call for a request: its headers are in. Builds the sg_req and lets the begin
 * hook decide how the body is taken. */
static enum MHD_Result on_headers(sg_http_server *s, struct MHD_Connection *c, const char *url,
                                  const char *method, void **con_cls) {
  bool bad = *con_cls == &bad_target;
  *con_cls = NULL;
  conn_state *st = calloc(1, sizeof *st);
  if (!st) return MHD_NO;
  sg_buf_init(&st->body, s->cfg.max_body);
  st->t0_us = now_us();
  sg_req *req = &st->req;
  req->method = method;
  req->path = url;
  req->conn = c;
  req->body = "";
  req->app = s->cfg.app;
  const char *rid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "x-request-id");
  if (rid && sg_http_request_id_ok(rid))
    snprintf(req->request_id, sizeof req->request_id, "%s", rid);
  else
    sg_random_id("req_", req->request_id, sizeof req->request_id);
  client_ip(s, c, req->client_ip, sizeof req->client_ip);
  *con_cls = st;
  st->kind = SG_HTTP_BUFFER;
  if (bad) {
    /* Answered like any early answer: before the body, which is read and dropped. */
    resp_init(&st->early);
    sg_resp_error(&st->early, req, SG_E_INVALID_REQUEST, NULL, SG_HTTP_PERCENT_MESSAGE);
    st->kind = SG_HTTP_RESPOND;
    return MHD_YES;
  }
  if (!s->cfg.begin) return MHD_YES;
  resp_init(&st->early);
  st->kind = s->cfg.begin(req, &st->early, &st->stream);
  if (st->kind == SG_HTTP_RESPOND) {
    /* A client that waits for "100 Continue" gets the final answer instead and never
     * sends the body; any other client's body is read and dropped first, so it is not
     * cut off mid-upload (which many clients report as a reset, not as our answer). */
    const char *expect = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Expect");
    if (expect && strcasecmp(expect, "100-continue") == 0) {
      st->kind = SG_HTTP_BUFFER; /* answered: nothing left to do at the end */
      st->stopped = true;
      return respond(s, st, &st->early);
    }
  }
  return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_size, void **con_cls) {
  sg_http_server *s = cls;
  conn_state *st = *con_cls;
  if (!st || *con_cls == &bad_target) return on_headers(s, c, url, method, con_cls);
  if (st->job == JOB_DONE) {
    /* Resumed by the worker that ran the handler: send its answer. */
    st->job = JOB_NONE;
    return respond(s, st, &st->pooled);
  }
  if (st->job == JOB_QUEUED) return MHD_YES; /* not reached: suspended until done */
  if (st->stopped && st->kind == SG_HTTP_BUFFER) {
    /* Answered early (Expect: 100-continue); drop whatever still arrives. */
    *upload_size = 0;
    return MHD_YES;
  }
  if (*upload_size) {
    size_t n = *upload_size;
    *upload_size = 0;
    if (st->kind == SG_HTTP_STREAM) {
      if (st->stopped || st->too_large) return MHD_YES;
      st->received += n;
      if (st->stream.max_bytes && st->received > st->stream.max_bytes)
        st->too_large = true;
      else if (st->stream.on_data(st->stream.ctx, upload_data, n))
        st->stopped = true;
      return MHD_YES;
    }
    /* Past the cap the rest of the body is read and dropped, so memory stays bounded and
     * the client still gets a typed 413 instead of a reset connection. An early answer
     * drops the body the same way. */
    if (st->kind == SG_HTTP_BUFFER && !st->too_large && sg_buf_append(&st->body, upload_data, n))
      st->too_large = true;
    return MHD_YES;
  }

  if (st->kind == SG_HTTP_RESPOND) {
    st->kind = SG_HTTP_BUFFER;
    st->stopped = true;
    return respond(s, st, &st->early);
  }
  sg_resp resp;
  resp_init(&resp);
  if (st->kind == SG_HTTP_STREAM) {
    if (st->too_large)
      sg_resp_too_large(&resp, &st->req, st->stream.max_bytes);
    else
      st->stream.on_finish(st->stream.ctx, &st->req, &resp);
  } else {
    st->req.body = st->body.data ? st->body.data : "";
    st->req.body_len = st->body.len;
    st->req.body_too_large = st->too_large;
    unsigned pn = st->req.pool;
    if (pn >= 1 && pn <= SG_HTTP_MAX_POOLS && s->pools[pn - 1]) {
      sg_workpool *p = s->pools[pn - 1];
      if (!sg_workpool_reserve(p)) {
        /* Full: answer now rather than queue without bound. */
        sg_resp_error(&resp, &st->req, SG_E_BUSY, NULL, NULL);
        char ra[16];
        snprintf(ra, sizeof ra, "%d",
                 s->cfg.pools[pn - 1].retry_after_s > 0 ? s->cfg.pools[pn - 1].retry_after_s : 1);
        sg_resp_header(&resp, "Retry-After", ra);
        return respond(s, st, &resp);
      }
      resp_free(&resp);
      resp_init(&st->pooled);
      st->job = JOB_QUEUED;
      st->server = s;
      /* Suspended before the job is queued: a worker may resume it at once. From here
       * the worker owns st until it resumes the connection. */
      MHD_suspend_connection(c);
      sg_workpool_push(p, run_pooled, st);
      return MHD_YES;
    }
    s->cfg.handler(&st->req, &resp);
  }
  return respond(s, st, &resp);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
  conn_state *st = *con_cls;
  if (!st || *con_cls == &bad_target) return;
  if (st->stream.on_free) st->stream.on_free(st->stream.ctx);
  resp_free(&st->early);
  resp_free(&st->pooled);
  sg_buf_free(&st->body);
  free(st);
  *con_cls = NULL;
}

/* The JSON 431 for a head over the gate's limit, as a complete HTTP response. */
static size_t too_large(void *ctx, char *buf, size_t cap) {
  sg_http_server *s = ctx;
  sg_req req;
  memset(&req, 0, sizeof req);
  req.method = "-";
  req.path = "-";
  sg_random_id("req_", req.request_id, sizeof req.request_id);
  sg_resp resp;
  resp_init(&resp);
  sg_resp_error(&resp, &req, SG_E_HEADERS_TOO_LARGE, NULL, NULL);
  int n = snprintf(buf, cap,
                   "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: "
                   "application/json\r\nContent-Length: %zu\r\nx-request-id: %s\r\n"
                   "Connection: close\r\n\r\n%s",
                   resp.body.len, req.request_id, resp.body.data ? resp.body.data : "");
  access_log(s, &req, 431, 0);
  resp_free(&resp);
  return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

static int hand_over(void *ctx, int fd, const struct sockaddr *sa, socklen_t sl) {
  sg_http_server *s = ctx;
  return MHD_add_connection(s->d, fd, sa, sl) == MHD_YES ? 0 : -1; /* closes fd on failure */
}

/* Connections the server opens and closes are counted by the gate's caps. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
  sg_http_server *s = cls;
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  const struct sockaddr *sa = ci ? ci->client_addr : NULL;
  if (code == MHD_CONNECTION_NOTIFY_STARTED)
    sg__gate_opened(s->gate, sa);
  else
    sg__gate_closed(s->gate, sa);
}

/* A listening socket on a parsed address; -1 with err. */
static int listen_on(const sg_listen_addr *a, char *err, size_t errsz) {
  int fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  /* SO_REUSEADDR only, never SO_REUSEPORT: that would let a second process bind the same
   * port and silently take half the requests. SO_REUSEADDR still allows a restart. */
  int one = 1;
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
      bind(fd, (const struct sockaddr *)&a->sa, a->sa_len) || listen(fd, 1024)) {
    if (fd >= 0) close(fd);
    snprintf(err, errsz, "cannot listen on %s%s%s:%u", a->v6 ? "[" : "", a->host, a->v6 ? "]" : "",
             a->port);
    return -1;
  }
  return fd;
}

int sg_http_start(const sg_http_config *cfg, sg_http_server **out, char *err, size_t errsz) {
  sg_listen_addr la;
  if (sg_listen_parse(cfg->listen, &la, err, errsz)) return -1;
  int lfd = listen_on(&la, err, errsz);
  if (lfd < 0) return -1;
  struct sockaddr_storage bound;
  socklen_t bl = sizeof bound;
  unsigned bound_port = la.port;
  if (getsockname(lfd, (struct sockaddr *)&bound, &bl) == 0)
    bound_port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                   : ((struct sockaddr_in *)&bound)->sin_port);
  sg_http_server *s = calloc(1, sizeof *s);
  if (!s) {
    close(lfd);
    snprintf(err, errsz, "out of memory");
    return -1;
  }
  s->cfg = *cfg;
  s->listener = sg_metrics_listener(cfg->log_name);
  s->port = bound_port;
  unsigned max_conns =
      cfg->max_connections ? cfg->max_connections : SG_HTTP_DEFAULT_MAX_CONNECTIONS;
  unsigned threads = cfg->threads ? cfg->threads : 4u;
  /* The gate enforces the real cap; libmicrohttpd's (split between its threads) is only
   * a backstop, with room for the moment between a hand-over and its count. */
  for (size_t i = 0; i < SG_HTTP_MAX_POOLS; i++) {
    const sg_http_pool_config *pc = &cfg->pools[i];
    if (!pc->threads) continue;
    s->pools[i] = sg_workpool_new(pc->name, pc->threads, pc->queue);
    if (!s->pools[i]) {
      for (size_t j = 0; j < i; j++) sg_workpool_free(s->pools[j]);
      close(lfd);
      free(s);
      snprintf(err, errsz, "cannot start the %s worker pool", pc->name ? pc->name : "");
      return -1;
    }
  }
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
                   MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME;
  s->d = MHD_start_daemon(
      flags, 0, NULL, NULL, on_request, s, MHD_OPTION_THREAD_POOL_SIZE, threads,
      MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
      MHD_OPTION_CONNECTION_LIMIT, max_conns + 64 * threads, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024, MHD_OPTION_UNESCAPE_CALLBACK, unescape,
      NULL, MHD_OPTION_URI_LOG_CALLBACK, check_uri, NULL, MHD_OPTION_END);
  sg__gate_config gc = {
      .listen_fd = lfd,
      .max_connections = max_conns,
      .max_per_ip = cfg->max_per_ip,
      .trusted = cfg->trusted_proxies,
      .head_timeout_ms = cfg->head_timeout_ms ? cfg->head_timeout_ms : 10000,
      .head_max = SG_HTTP_HEAD_MAX,
      .head_max_fields = SG_HTTP_MAX_HEADER_FIELDS,
      .hand_over = hand_over,
      .too_large = too_large,
      .ctx = s,
  };
  if (!s->d || sg__gate_start(&gc, &s->gate)) {
    snprintf(err, errsz, "cannot listen on %s", cfg->listen);
    if (s->d) MHD_stop_daemon(s->d);
    for (size_t i = 0; i < SG_HTTP_MAX_POOLS; i++) sg_workpool_free(s->pools[i]);
    close(lfd);
    free(s);
    return -1;
  }
  *out = s;
  return 0;
}

unsigned sg_http_port(const sg_http_server *s) { return s->port; }

void sg_http_stop(sg_http_server *s) {
  if (!s) return;
  sg__gate_stop(s->gate); /* no more hand-overs; the counts outlive the server's threads */
  /* Every suspended connection is resumed before the daemon stops: running jobs finish,
   * waiting ones are answered 503, and a request arriving now finds its pool refusing. */
  for (size_t i = 0; i < SG_HTTP_MAX_POOLS; i++) sg_workpool_stop(s->pools[i]);
  MHD_stop_daemon(s->d);
  for (size_t i = 0; i < SG_HTTP_MAX_POOLS; i++) sg_workpool_free(s->pools[i]);
  sg__gate_free(s->gate);
  free(s);
}

bool sg_http_pool_stats(sg_http_server *s, unsigned n, const char **name, unsigned *threads,
                        unsigned *queue, unsigned *admitted, uint64_t *done, uint64_t *rejected) {
  if (!s || n < 1 || n > SG_HTTP_MAX_POOLS || !s->pools[n - 1]) return false;
  sg_workpool_stats st;
  sg_workpool_get_stats(s->pools[n - 1], &st);
  *name = sg_workpool_name(s->pools[n - 1]);
  *threads = st.threads;
  *queue = st.queue;
  *admitted = st.admitted;
  *done = st.done;
  *rejected = st.rejected;
  return true;
}
