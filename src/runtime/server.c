/*
 * The runtime's HTTP server, loader thread and lifecycle.
 *
 * Worker threads (one per CPU by default) each run an epoll loop over one shared
 * listening socket (EPOLLEXCLUSIVE: one worker is woken per new connection) and the
 * connections they accepted; a connection stays on its worker for its life. Reads go to
 * the connection's sg__h1_conn (http1.c), which calls on_request for each complete
 * request; the answers accumulate in its output buffer and go out with one send per
 * batch. A connection idle for IDLE_MS is closed. Every response goes through
 * sg__rt_respond, which adds the common headers and writes one access-log line.
 *
 * Why not libmicrohttpd (the control plane keeps it): measured in bench/PROFILE.md, it
 * made ~17 allocations and a 16-32 KiB memset per request, which put the runtime at
 * 0.68-0.73x nginx `return 200`. Here a request allocates nothing.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/metrics.h"
#include "common/util.h"
#include "runtime/rt.h"
#include "runtime/state.h"

/* ================================================================ responses ====== */

static _Thread_local char tl_scratch[SG__RT_SCRATCH];

char *sg__rt_scratch(void) { return tl_scratch; }

static int64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Appends at most cap bytes of s, replacing what JSON would need to escape (the path is
 * client input, percent-decoded) so a log line stays one valid object. */
static char *put_safe(char *o, const char *s, size_t cap) {
  for (size_t i = 0; s[i] && i < cap; i++) {
    unsigned char c = (unsigned char)s[i];
    *o++ = (c < 0x20 || c == '"' || c == '\\' || c >= 0x7f) ? '?' : (char)c;
  }
  return o;
}

static char *put_lit(char *o, const char *s) {
  size_t n = strlen(s);
  memcpy(o, s, n);
  return o + n;
}

static char *put_int(char *o, int64_t v) {
  char tmp[24];
  size_t n = 0;
  uint64_t u = v < 0 ? 0 : (uint64_t)v;
  do {
    tmp[n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  while (n) *o++ = tmp[--n];
  return o;
}

/* Counts the answer in the metrics (per-thread counters: no lock, no allocation) and
 * writes its access-log line: {"ts":…,"level":"info","msg":"access","listener":"runtime",
 * "method":"…","route":"…","path":"…","status":…,"durationUs":…,"requestId":"…"}, the
 * control listener's field names. Formatted by hand (snprintf was ~2% of the runtime's
 * CPU under load). At most 16 + 40 + 160 + 128 bytes of variable text, inside the line. */
static void access_log(const sg__rt_req *r) {
  int64_t us = now_us() - r->t0_us;
  sg_metrics_http(r->route, r->status, us);
  if (!r->rt->cfg.access_log) return;
  char line[640], *o = line;
  o = put_int(put_lit(o, "{\"ts\":"), sg_now_ms());
  o = put_lit(o, ",\"level\":\"info\",\"msg\":\"access\",\"listener\":\"runtime\"");
  o = put_safe(put_lit(o, ",\"method\":\""), r->method, 15);
  o = put_safe(put_lit(o, "\",\"route\":\""), sg_metrics_route_label(r->route), 40);
  o = put_safe(put_lit(o, "\",\"path\":\""), r->path, 159);
  o = put_int(put_lit(o, "\",\"status\":"), r->status);
  o = put_int(put_lit(o, ",\"durationUs\":"), us);
  o = put_safe(put_lit(o, ",\"requestId\":\""), r->xrid, 128);
  o = put_lit(o, "\"}\n");
  sg__rt_log_line(line, (size_t)(o - line));
}

void sg__rt_respond(sg__rt_req *r, unsigned status, const char *body, size_t len,
                    const sg__rt_hdrs *h) {
  static const sg__rt_hdrs none = {0};
  if (!h) h = &none;
  sg__h1_conn *c = r->c;
  sg__h1_status(c, status);
  if (len || status != 304) sg__h1_header_n(c, "Content-Type", "application/json", 16);
  sg__h1_header(c, "x-request-id", r->xrid);
  sg__h1_header(c, "Cache-Control", h->cache_control ? h->cache_control : "no-store");
  if (h->etag) sg__h1_header(c, "ETag", h->etag);
  if (h->retry_after > 0) {
    char ra[16];
    snprintf(ra, sizeof ra, "%d", h->retry_after);
    sg__h1_header(c, "Retry-After", ra);
  }
  if (h->www_authenticate) sg__h1_header_n(c, "WWW-Authenticate", "Bearer", 6);
  if (h->allow) sg__h1_header(c, "Allow", h->allow);
  if (strncmp(r->path, "/v1/", 4) == 0) {
    sg__h1_header_n(c, "Vary", "Origin", 6);
    if (r->origin && r->cors) {
      sg__h1_header_n(c, "Access-Control-Allow-Origin", r->origin, r->origin_len);
      sg__h1_header(c, "Access-Control-Expose-Headers", "etag, retry-after, x-request-id");
    }
  }
  sg__h1_finish(c, r->req, body, len);
  r->status = status;
  access_log(r);
}

void sg__rt_error(sg__rt_req *r, sg_err e, const char *request_id, const sg__rt_hdrs *h) {
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
                   sg_err_code(e), r->message ? r->message : sg__rt_message(e), request_id);
  sg__rt_hdrs hh = h ? *h : (sg__rt_hdrs){0};
  if (e == SG_E_INVALID_TOKEN) hh.www_authenticate = true;
  if (e == SG_E_ARTIFACT_UNAVAILABLE && hh.retry_after <= 0) hh.retry_after = 1;
  sg__rt_respond(r, (unsigned)sg_err_status(e), body, (size_t)n, &hh);
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
  /* Before the edge store was first read no key is known: "try again", not invalid_key. */
  if (s->unloaded) return SG_E_ARTIFACT_UNAVAILABLE;
  if (!key || klen == 0 || klen > 256) {
    r->message = sg__rt_key_hint(key, klen);
    return SG_E_INVALID_KEY;
  }
  key_digest(key, klen, r->key_digest);
  const sg__rt_key *k = sg__snapshot_key(s, r->key_digest);
  if (!k || !k->valid) {
    r->message = sg__rt_key_hint(key, klen);
    return SG_E_INVALID_KEY;
  }
  if (r->origin && !k->any_origin &&
      !sg__origin_allowed(k->origins, k->n_origins, r->origin, r->origin_len)) {
    r->cors = false;
    return SG_E_ORIGIN_NOT_ALLOWED;
  }
  *out = k;
  return SG_E_OK;
}

bool sg__rt_inm_matches(const sg__rt_req *r, const char *etag) {
  const char *inm = r->req ? r->req->if_none_match.p : NULL;
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

static void preflight(sg__rt_req *r) {
  sg__h1_conn *c = r->c;
  sg__h1_status(c, 204);
  if (r->origin) sg__h1_header_n(c, "Access-Control-Allow-Origin", r->origin, r->origin_len);
  sg__h1_header_n(c, "Vary", "Origin", 6);
  sg__h1_header(c, "Access-Control-Allow-Methods", "GET, POST, OPTIONS");
  sg__h1_header(c, "Access-Control-Allow-Headers", "authorization, content-type, x-request-id");
  sg__h1_header(c, "Access-Control-Max-Age", "600");
  sg__h1_header(c, "x-request-id", r->xrid);
  sg__h1_finish(c, r->req, NULL, 0);
  r->status = 204;
  access_log(r);
}

typedef enum { R_NONE, R_QUERY, R_BOOTSTRAP, R_SELECTION, R_HEALTH, R_READY, R__N } route;

/* The path of each route, which is also its metrics label (R_NONE: "other"). */
static const char *const route_paths[R__N] = {
    [R_QUERY] = "/v1/query",   [R_BOOTSTRAP] = "/v1/bootstrap", [R_SELECTION] = "/v1/selection",
    [R_HEALTH] = "/healthz",   [R_READY] = "/readyz",
};

_Static_assert(R__N <= sizeof ((sg_runtime *)0)->route_ids / sizeof(int), "route_ids too small");

static route route_of(const char *path) {
  for (int i = R_QUERY; i < R__N; i++)
    if (strcmp(path, route_paths[i]) == 0) return (route)i;
  return R_NONE;
}

static bool rid_ok(const char *s) {
  size_t n = 0;
  for (; s[n]; n++)
    if (n >= 128 || s[n] < 0x21 || s[n] > 0x7e || s[n] == '"' || s[n] == '\\') return false;
  return n > 0;
}

static void method_not_allowed(sg__rt_req *r, const char *allow) {
  sg__rt_hdrs h = {.allow = allow};
  sg__rt_error(r, SG_E_METHOD_NOT_ALLOWED, NULL, &h);
}

/* sg__h1_handler: one complete request (req), or one that could not be framed (err). */
static void on_request(void *ctx, sg__h1_conn *c, const sg__h1_req *req, sg_err err) {
  sg__rt_req r;
  r.c = c;
  r.req = req;
  r.rt = ctx;
  r.method = req ? req->method : "-";
  r.path = req ? req->path : "-";
  r.t0_us = now_us();
  r.status = 0;
  r.cors = false;
  route which = req ? route_of(req->path) : R_NONE;
  r.route = r.rt->route_ids[which];
  r.message = NULL;
  const char *x = req ? req->xrid.p : NULL;
  r.xrid_generated = !(x && rid_ok(x));
  if (!r.xrid_generated)
    snprintf(r.xrid, sizeof r.xrid, "%s", x);
  else
    sg__reqid_random(r.xrid);
  r.origin = req ? req->origin.p : NULL;
  r.origin_len = req ? req->origin.n : 0;
  if (!req) {
    sg__rt_error(&r, err, NULL, NULL);
    return;
  }
  bool get = strcmp(req->method, "GET") == 0 || req->head;
  bool post = strcmp(req->method, "POST") == 0;
  bool options = strcmp(req->method, "OPTIONS") == 0;
  switch (which) {
  case R_QUERY:
    if (get) return sg__h_query(&r);
    if (options) return preflight(&r);
    return method_not_allowed(&r, "GET, HEAD, OPTIONS");
  case R_BOOTSTRAP:
    if (get) return sg__h_bootstrap(&r);
    if (options) return preflight(&r);
    return method_not_allowed(&r, "GET, HEAD, OPTIONS");
  case R_SELECTION:
    if (post) return sg__h_selection(&r);
    if (options) return preflight(&r);
    return method_not_allowed(&r, "POST, OPTIONS");
  case R_HEALTH:
    if (get) return sg__h_health(&r);
    return method_not_allowed(&r, "GET, HEAD");
  case R_READY:
    if (get) return sg__h_ready(&r);
    return method_not_allowed(&r, "GET, HEAD");
  case R_NONE:
  default: return sg__rt_error(&r, SG_E_NOT_FOUND, NULL, NULL);
  }
}

/* ================================================================ workers ======== */

#define IDLE_MS 30000 /* closed this long after its last answer byte went out (or its accept) */
#define LINGER_MAX (256 * 1024) /* after a refusal: input discarded before closing anyway */
#define MAX_CONNECTIONS 16384   /* default cap per process (cfg.max_connections) */
#define READS_PER_WAKE 4        /* fairness: at most this many reads per connection per wake */

typedef struct rt_conn {
  int fd;
  uint32_t events; /* what epoll watches: EPOLLIN or EPOLLOUT */
  bool eof;        /* the client closed its side */
  bool lingering;  /* refused and answered: our side is shut, input is discarded */
  size_t discarded;
  int64_t last_ms;             /* last accept or output progress, for IDLE_MS */
  struct rt_conn *prev, *next; /* the worker's connections, least recently active first */
  sg__h1_conn h;
} rt_conn;

typedef struct {
  sg_runtime *rt;
  int ep;
  rt_conn *head, *tail;
  int64_t now;                 /* sg_mono_ms() of the current wake */
  int64_t listen_paused_until; /* accept failed for lack of descriptors: retry then */
} worker;

static char listen_tag, wake_tag; /* epoll data.ptr of the listening socket and the eventfd */

static void unlink_conn(worker *w, rt_conn *c) {
  if (c->prev)
    c->prev->next = c->next;
  else
    w->head = c->next;
  if (c->next)
    c->next->prev = c->prev;
  else
    w->tail = c->prev;
  c->prev = c->next = NULL;
}

static void link_tail(worker *w, rt_conn *c) {
  c->prev = w->tail;
  if (w->tail)
    w->tail->next = c;
  else
    w->head = c;
  w->tail = c;
}

/* Activity on a connection (which is in the list): it moves to the most recent end. */
static void touch(worker *w, rt_conn *c, int64_t now) {
  c->last_ms = now;
  if (w->tail == c) return;
  unlink_conn(w, c);
  link_tail(w, c);
}

static void close_conn(worker *w, rt_conn *c) {
  unlink_conn(w, c);
  close(c->fd); /* also removes it from the epoll set */
  sg__h1_free(&c->h);
  free(c);
  atomic_fetch_sub(&w->rt->connections, 1);
}

/* EPOLLRDHUP is never asked for: level-triggered, it would report a half-closed peer on
 * every wait while we wait to write (a spin). recv() returning 0 is how EOF is seen. */
static void watch(worker *w, rt_conn *c, uint32_t events) {
  if (c->events == events) return;
  struct epoll_event ev = {.events = events, .data.ptr = c};
  if (epoll_ctl(w->ep, EPOLL_CTL_MOD, c->fd, &ev) == 0) c->events = events;
}

/* Writes what is pending, resuming a paused parse as output drains; then closes the
 * connection when it is done, or watches it for what it needs next. */
static void progress(worker *w, rt_conn *c) {
  for (;;) {
    sg__h1_conn *h = &c->h;
    while (sg__h1_pending(h)) {
      ssize_t n = send(c->fd, h->out.data + h->out_sent, h->out.len - h->out_sent,
                       MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        h->out_sent += (size_t)n;
        touch(w, c, w->now); /* only answers count as activity: a trickled request does not */
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        watch(w, c, EPOLLOUT);
        return;
      } else {
        close_conn(w, c);
        return;
      }
    }
    if (h->failed && !c->eof && !c->lingering) {
      /* Refused (400/413/431) with input possibly unread: closing now could reset the
       * connection and lose the answer at the client. Shut our side and discard what
       * still comes, until EOF, LINGER_MAX bytes or IDLE_MS. */
      shutdown(c->fd, SHUT_WR);
      c->lingering = true;
      watch(w, c, EPOLLIN);
      return;
    }
    if (c->lingering) return;
    if (h->close || (c->eof && !h->paused)) { /* paused: answer what was sent first */
      close_conn(w, c);
      return;
    }
    bool was_paused = h->paused;
    if (h->out.len) sg__h1_drained(h);
    if (!was_paused || !sg__h1_pending(h)) break;
  }
  watch(w, c, EPOLLIN);
}

static void discard_input(worker *w, rt_conn *c) {
  char sink[16384];
  for (int i = 0; i < READS_PER_WAKE; i++) {
    ssize_t n = recv(c->fd, sink, sizeof sink, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0 || (c->discarded += (size_t)n) >= LINGER_MAX) break;
  }
  close_conn(w, c);
}

static void on_readable(worker *w, rt_conn *c) {
  if (c->lingering) {
    discard_input(w, c);
    return;
  }
  for (int i = 0; i < READS_PER_WAKE; i++) {
    size_t room;
    char *p = sg__h1_rbuf(&c->h, &room);
    if (!room) break;
    ssize_t n = recv(c->fd, p, room, MSG_DONTWAIT);
    if (n == 0) {
      c->eof = true;
      break;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      close_conn(w, c);
      return;
    }
    sg__h1_feed(&c->h, (size_t)n);
    if ((size_t)n < room) break;
  }
  progress(w, c);
}

static void accept_some(worker *w, int64_t now) {
  sg_runtime *rt = w->rt;
  for (int i = 0; i < 64; i++) {
    int fd = accept4(rt->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        /* Out of descriptors: stop watching the socket for a while instead of spinning. */
        epoll_ctl(w->ep, EPOLL_CTL_DEL, rt->listen_fd, NULL);
        w->listen_paused_until = now + 100;
      }
      return; /* EAGAIN (another worker took it), or an aborted connection */
    }
    /* Over the cap (derived from the descriptor budget): accepted and closed at once. */
    if (atomic_fetch_add(&rt->connections, 1) >= rt->cfg.max_connections) {
      atomic_fetch_sub(&rt->connections, 1);
      close(fd);
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    rt_conn *c = malloc(sizeof *c);
    if (!c) {
      atomic_fetch_sub(&rt->connections, 1);
      close(fd);
      continue;
    }
    c->fd = fd;
    c->events = EPOLLIN;
    c->eof = c->lingering = false;
    c->discarded = 0;
    c->prev = c->next = NULL;
    sg__h1_init(&c->h, on_request, rt);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev)) {
      sg__h1_free(&c->h);
      free(c);
      close(fd);
      atomic_fetch_sub(&rt->connections, 1);
      continue;
    }
    c->last_ms = now;
    link_tail(w, c);
  }
}

static int watch_listener(worker *w) {
  struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = &listen_tag};
  return epoll_ctl(w->ep, EPOLL_CTL_ADD, w->rt->listen_fd, &ev);
}

static void *worker_main(void *arg) {
  worker *w = arg;
  struct epoll_event evs[64];
  while (!atomic_load(&w->rt->stopping)) {
    /* While the listener is parked (out of descriptors), wake in time to re-arm it. */
    int n = epoll_wait(w->ep, evs, 64, w->listen_paused_until ? 100 : 1000);
    int64_t now = w->now = sg_mono_ms();
    for (int i = 0; i < n; i++) {
      void *tag = evs[i].data.ptr;
      if (tag == &wake_tag) continue;
      if (tag == &listen_tag) {
        accept_some(w, now);
        continue;
      }
      rt_conn *c = tag;
      if (evs[i].events & EPOLLERR) {
        close_conn(w, c);
        continue;
      }
      /* One event per connection per wake: a close here cannot leave a stale pointer. */
      if (evs[i].events & EPOLLOUT)
        progress(w, c);
      else
        on_readable(w, c);
    }
    if (w->listen_paused_until && now >= w->listen_paused_until && watch_listener(w) == 0)
      w->listen_paused_until = 0;
    while (w->head && now - w->head->last_ms >= IDLE_MS) close_conn(w, w->head);
  }
  while (w->head) close_conn(w, w->head);
  close(w->ep);
  free(w);
  return NULL;
}

/* ================================================================ loader ========= */

static void *loader_main(void *arg) {
  sg_runtime *rt = arg;
  int64_t last_flush = sg_mono_ms(), last_retry = sg_mono_ms();
  /* A shared state is reconciled twice a second: a runtime learns what the others served
   * at most a second after they served it (their flush, then its own), which bounds a
   * fleet's quota overshoot to about a second of its traffic. */
  sg_rt_state_stats stats;
  sg_rt_state_stats_get(rt->state, &stats);
  const int64_t flush_ms = stats.shared ? 500 : 1000;
  bool failing = false;
  /* A list whose artifact is missing or damaged is retried on its own, every second at
   * first and less often while it stays bad (reading and hashing a large artifact is not
   * free); a new edge revision reloads at once. */
  int64_t retry_ms = 1000;
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
    /* A placeholder (the edge store was unreadable at start) is retried every period. */
    bool retry = (cur->missing_artifact && now - last_retry >= retry_ms) || cur->unloaded;
    bool synced = sg_edge_revision(rt->edge, &rev) == 0;
    if (synced && (rev != cur->revision || retry)) {
      sg__rt_snapshot *next;
      if (retry) last_retry = now;
      if (!retry)
        retry_ms = 1000;
      else if (!cur->unloaded && retry_ms < 30000)
        retry_ms *= 2;
      if (sg__snapshot_load(rt->edge, rt->state, cur, &rt->records, &next) == 0) {
        sg__snapshot_free(sg__rcu_publish(&rt->rcu, next));
      } else {
        synced = false;
        /* Once per failure spell, not every poll period. */
        if (!failing)
          fprintf(stderr, "{\"error\":\"edge reload failed: %s\"}\n", strerror(errno));
      }
    }
    failing = !synced;
    if (synced) atomic_store(&rt->edge_synced_ms, now);
    sg__rt_log_flush();
    if (now - last_flush >= flush_ms) {
      last_flush = now;
      if (sg_rt_state_flush(rt->state, sg_now_s()))
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

/* Wakes every worker, which closes its connections and exits; joins them. The loader is
 * stopped separately (stopping is set here first, so it also sees it). */
static void stop_workers(sg_runtime *rt) {
  atomic_store(&rt->stopping, true);
  uint64_t one = 1;
  if (rt->wake_fd >= 0 && write(rt->wake_fd, &one, sizeof one) < 0) { /* counter full: awake */
  }
  for (unsigned i = 0; i < rt->n_workers; i++) pthread_join(rt->workers[i], NULL);
  rt->n_workers = 0;
}

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
  char host[256], port[8];
  const char *addr = cfg->listen ? cfg->listen : "127.0.0.1:8081";
  if (split_listen(addr, host, sizeof host, port, sizeof port))
    return fail("bad listen address", addr);

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
  /* It says what failed. */
  /* A Redis edge holds the state the fleet shares as well; a directory edge keeps it
   * in the state directory, for this process alone. */
  const char *state = strncmp(cfg->edge, "redis://", 8) == 0 ? cfg->edge : rt->state_dir;
  if (sg_rt_state_open(state, rt->cfg.selection_rate, &rt->state)) goto err;
  rt->started_ms = sg_mono_ms();
  if (sg__snapshot_load(rt->edge, rt->state, NULL, &rt->records, &first) == 0) {
    atomic_store(&rt->edge_synced_ms, rt->started_ms);
    /* Learn the fleet's quota counts before the first query rather than a second later. */
    sg_rt_state_flush(rt->state, sg_now_s());
  } else {
    /* Serve anyway: /readyz answers 503 and /v1 calls artifact_unavailable until the
     * loader reads the edge store (it retries every poll period). */
    fprintf(stderr,
            "{\"level\":\"warn\",\"msg\":\"edge store not readable yet; not ready until "
            "it is\",\"detail\":\"%s\"}\n",
            strerror(errno));
    if (!(first = calloc(1, sizeof *first))) {
      fail("out of memory", NULL);
      goto err;
    }
    first->unloaded = true;
  }
  sg__rcu_init(&rt->rcu, first);
  for (int i = 0; i < R__N; i++)
    rt->route_ids[i] = sg_metrics_route(SG_LISTENER_RUNTIME, route_paths[i]);
  sg__rt_metrics_start(rt);

  struct addrinfo hints = {
      .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
  struct addrinfo *ai = NULL;
  int gai = getaddrinfo(host[0] ? host : "0.0.0.0", port, &hints, &ai);
  if (gai) {
    fail("cannot resolve listen address", gai_strerror(gai));
    goto err;
  }
  rt->listen_fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  if (rt->listen_fd < 0 || setsockopt(rt->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
      bind(rt->listen_fd, ai->ai_addr, ai->ai_addrlen) || listen(rt->listen_fd, 1024)) {
    freeaddrinfo(ai);
    fail("cannot listen", addr);
    goto err;
  }
  freeaddrinfo(ai);
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
  for (unsigned i = 0; i < rt->cfg.threads; i++) {
    worker *w = calloc(1, sizeof *w);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &wake_tag};
    if (w) {
      w->rt = rt;
      w->ep = epoll_create1(EPOLL_CLOEXEC);
    }
    if (!w || w->ep < 0 || watch_listener(w) || epoll_ctl(w->ep, EPOLL_CTL_ADD, rt->wake_fd, &ev) ||
        pthread_create(&rt->workers[i], NULL, worker_main, w)) {
      if (w && w->ep >= 0) close(w->ep);
      free(w);
      stop_workers(rt);
      fail("cannot start workers", strerror(errno));
      goto err;
    }
    rt->n_workers++;
  }
  if (pthread_create(&rt->loader, NULL, loader_main, rt)) {
    stop_workers(rt);
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
  stop_workers(rt);
  pthread_mutex_lock(&rt->stop_mu);
  atomic_store(&rt->stopping, true);
  pthread_cond_signal(&rt->stop_cv);
  pthread_mutex_unlock(&rt->stop_mu);
  pthread_join(rt->loader, NULL);
  sg__rt_log_flush();
  sg_rt_state_sync(rt->state);
  runtime_free(rt);
}
