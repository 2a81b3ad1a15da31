/*
 * The control listener's front gate (see gate.h for what it enforces and why).
 *
 * One thread runs an epoll loop over the listening socket and the connections whose head
 * has not arrived yet. Those are watched edge-triggered: a peek consumes nothing, so a
 * level-triggered watch would report the same bytes again on every wait. Each new arrival
 * is one event, and the peek then sees everything received so far. Connections are kept
 * in accept order, which is also deadline order, so expiring them is a look at the head
 * of a list. The counts of connections per client address are shared with the HTTP
 * server's threads (which report handed-over connections closing) under one mutex.
 */
#include "http/mhd/gate.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/util.h"

#define IP_BUCKETS 1024
#define LINGER_MS 2000          /* after a 431: how long input is still discarded */
#define LINGER_MAX (256 * 1024) /* … and how much of it */

typedef struct ip_count {
  uint8_t addr[16];
  unsigned n;
  struct ip_count *next;
} ip_count;

typedef struct gconn {
  int fd;
  struct sockaddr_storage sa;
  socklen_t sl;
  int64_t deadline; /* sg_mono_ms() */
  size_t scanned;   /* head bytes already searched for the blank line */
  size_t lines;     /* line feeds among those bytes */
  size_t discarded; /* lingering: input dropped so far */
  bool lingering;
  struct gconn *prev, *next;
} gconn;

typedef struct {
  gconn *head, *tail;
} glist;

struct sg__gate {
  sg__gate_config cfg;
  pthread_t thread;
  bool running;
  int ep, wake_fd;
  atomic_bool stopping;
  glist waiting;   /* head not complete yet, oldest first */
  glist lingering; /* answered 431, discarding input, oldest first */
  int64_t listen_paused_until;
  char *peek; /* head_max + 1 bytes */
  pthread_mutex_t mu;
  unsigned total;
  ip_count *buckets[IP_BUCKETS];
};

static char listen_tag, wake_tag;

/* ---------------------------------------------------------------- counts ------- */

/* The client address as 16 bytes (IPv4 as v4-mapped IPv6); other families share one
 * all-zero key. */
static void addr_key(const struct sockaddr *sa, uint8_t key[16]) {
  memset(key, 0, 16);
  if (!sa) return;
  if (sa->sa_family == AF_INET) {
    key[10] = key[11] = 0xff;
    memcpy(key + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
  } else if (sa->sa_family == AF_INET6) {
    memcpy(key, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
  }
}

static ip_count **bucket_of(sg__gate *g, const uint8_t key[16]) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (int i = 0; i < 16; i++) h = (h ^ key[i]) * 16777619u;
  return &g->buckets[h % IP_BUCKETS];
}

/* Counts one more connection from sa; when check is set, only if it stays within the
 * caps. Returns false when refused (or out of memory). */
static bool count_add(sg__gate *g, const struct sockaddr *sa, bool check) {
  uint8_t key[16];
  addr_key(sa, key);
  bool ok = false;
  pthread_mutex_lock(&g->mu);
  ip_count **b = bucket_of(g, key), *e = *b;
  while (e && memcmp(e->addr, key, 16) != 0) e = e->next;
  if (check && g->total >= g->cfg.max_connections) goto done;
  if (check && e && g->cfg.max_per_ip && e->n >= g->cfg.max_per_ip &&
      !sg_trusted_proxies_contains(g->cfg.trusted, (const sg_ip *)(const void *)key))
    goto done;
  if (!e) {
    if (!(e = calloc(1, sizeof *e))) goto done;
    memcpy(e->addr, key, 16);
    e->next = *b;
    *b = e;
  }
  e->n++;
  g->total++;
  ok = true;
done:
  pthread_mutex_unlock(&g->mu);
  return ok;
}

static void count_del(sg__gate *g, const struct sockaddr *sa) {
  uint8_t key[16];
  addr_key(sa, key);
  pthread_mutex_lock(&g->mu);
  ip_count **p = bucket_of(g, key);
  while (*p && memcmp((*p)->addr, key, 16) != 0) p = &(*p)->next;
  if (*p) {
    ip_count *e = *p;
    if (g->total) g->total--;
    if (--e->n == 0) {
      *p = e->next;
      free(e);
    }
  }
  pthread_mutex_unlock(&g->mu);
}

void sg__gate_opened(sg__gate *g, const struct sockaddr *sa) {
  if (g) count_add(g, sa, false);
}

void sg__gate_closed(sg__gate *g, const struct sockaddr *sa) {
  if (g) count_del(g, sa);
}

/* ---------------------------------------------------------------- connections -- */

static void list_push(glist *l, gconn *c) {
  c->next = NULL;
  c->prev = l->tail;
  if (l->tail)
    l->tail->next = c;
  else
    l->head = c;
  l->tail = c;
}

static void list_del(glist *l, gconn *c) {
  if (c->prev)
    c->prev->next = c->next;
  else
    l->head = c->next;
  if (c->next)
    c->next->prev = c->prev;
  else
    l->tail = c->prev;
  c->prev = c->next = NULL;
}

static void drop(sg__gate *g, gconn *c) {
  list_del(c->lingering ? &g->lingering : &g->waiting, c);
  close(c->fd); /* also leaves the epoll set */
  count_del(g, (struct sockaddr *)&c->sa);
  free(c);
}

static void hand_over(sg__gate *g, gconn *c) {
  list_del(&g->waiting, c);
  epoll_ctl(g->ep, EPOLL_CTL_DEL, c->fd, NULL);
  /* Uncounted here; the server counts it again once it has opened it (a connection the
   * server drops before that is never counted twice, nor leaked). */
  count_del(g, (struct sockaddr *)&c->sa);
  g->cfg.hand_over(g->cfg.ctx, c->fd, (struct sockaddr *)&c->sa, c->sl);
  free(c);
}

static void discard_input(sg__gate *g, gconn *c) {
  char sink[16384];
  for (;;) {
    ssize_t n = recv(c->fd, sink, sizeof sink, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0 || (c->discarded += (size_t)n) >= LINGER_MAX) break;
  }
  drop(g, c);
}

/* Answers a head over head_max, shuts the sending side and lingers: closing with input
 * unread would reset the connection and could lose the answer at the client. */
static void refuse_too_large(sg__gate *g, gconn *c, int64_t now) {
  char out[2048];
  size_t n = g->cfg.too_large ? g->cfg.too_large(g->cfg.ctx, out, sizeof out) : 0;
  if (n && send(c->fd, out, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
    drop(g, c);
    return;
  }
  shutdown(c->fd, SHUT_WR);
  list_del(&g->waiting, c);
  c->lingering = true;
  c->deadline = now + LINGER_MS;
  list_push(&g->lingering, c);
  discard_input(g, c);
}

/* The end of the head: the first empty line ("\n\n" or "\n\r\n"). Returns the head's
 * length, or 0 while it is not in buf[0..n). */
static size_t head_end(const char *buf, size_t n, size_t from) {
  for (size_t i = from; i < n; i++) {
    if (buf[i] != '\n') continue;
    if (i + 1 < n && buf[i + 1] == '\n') return i + 2;
    if (i + 2 < n && buf[i + 1] == '\r' && buf[i + 2] == '\n') return i + 3;
  }
  return 0;
}

/* The header fields of a complete head h[0..end), each cookie of a Cookie field counted
 * as one more: libmicrohttpd stores every header and every cookie as an entry. */
static size_t head_fields(const char *h, size_t end) {
  size_t fields = 0;
  const char *p = memchr(h, '\n', end), *stop = h + end;
  while (p && ++p < stop) {
    const char *eol = memchr(p, '\n', (size_t)(stop - p));
    if (!eol) break;
    size_t len = (size_t)(eol - p);
    if (len > 1 || (len == 1 && *p != '\r')) {
      fields++;
      if (len > 7 && strncasecmp(p, "cookie:", 7) == 0)
        for (const char *q = p; q < eol; q++) fields += *q == ';';
    }
    p = eol;
  }
  return fields;
}

static void on_event(sg__gate *g, gconn *c, uint32_t ev, int64_t now) {
  if (c->lingering) {
    discard_input(g, c);
    return;
  }
  if (ev & EPOLLERR) {
    drop(g, c);
    return;
  }
  size_t cap = g->cfg.head_max + 1;
  ssize_t n;
  do { n = recv(c->fd, g->peek, cap, MSG_PEEK | MSG_DONTWAIT); } while (n < 0 && errno == EINTR);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
    drop(g, c); /* gone before its head was complete */
    return;
  }
  if (n > 0) {
    /* Empty lines before the request line are skipped (RFC 9112 §2.2), as the server
     * does: taken for the end of the head, they would let the real head bypass the gate. */
    size_t lead = 0;
    while (lead < (size_t)n && (g->peek[lead] == '\r' || g->peek[lead] == '\n')) lead++;
    size_t from = c->scanned > 2 ? c->scanned - 2 : 0;
    size_t end = head_end(g->peek, (size_t)n, from > lead ? from : lead);
    for (size_t i = c->scanned; i < (size_t)n; i++) c->lines += g->peek[i] == '\n';
    c->scanned = (size_t)n;
    /* Until the head is complete, every line but the request line may be a field. */
    size_t fields = end ? head_fields(g->peek + lead, end - lead) : c->lines ? c->lines - 1 : 0;
    if (end && end <= g->cfg.head_max && fields <= g->cfg.head_max_fields) {
      hand_over(g, c);
      return;
    }
    if (end || (size_t)n > g->cfg.head_max || fields > g->cfg.head_max_fields) {
      refuse_too_large(g, c, now);
      return;
    }
  }
  /* The client shut its side with the head incomplete: it can never complete. */
  if (ev & (EPOLLRDHUP | EPOLLHUP)) drop(g, c);
}

static void accept_some(sg__gate *g, int64_t now) {
  for (int i = 0; i < 64; i++) {
    gconn tmp;
    tmp.sl = sizeof tmp.sa;
    int fd = accept4(g->cfg.listen_fd, (struct sockaddr *)&tmp.sa, &tmp.sl,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        /* Out of descriptors: leave the listener alone for a while instead of spinning. */
        epoll_ctl(g->ep, EPOLL_CTL_DEL, g->cfg.listen_fd, NULL);
        g->listen_paused_until = now + 100;
      }
      return;
    }
    if (!count_add(g, (struct sockaddr *)&tmp.sa, true)) {
      close(fd); /* over the total or the per-IP cap */
      continue;
    }
    gconn *c = malloc(sizeof *c);
    if (c) {
      *c = tmp;
      c->fd = fd;
      c->deadline = now + g->cfg.head_timeout_ms;
      c->scanned = c->discarded = c->lines = 0;
      c->lingering = false;
      struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.ptr = c};
      if (epoll_ctl(g->ep, EPOLL_CTL_ADD, fd, &ev) == 0) {
        list_push(&g->waiting, c);
        continue;
      }
      free(c);
    }
    close(fd);
    count_del(g, (struct sockaddr *)&tmp.sa);
  }
}

static int watch_listener(sg__gate *g) {
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &listen_tag};
  return epoll_ctl(g->ep, EPOLL_CTL_ADD, g->cfg.listen_fd, &ev);
}

static void *gate_main(void *arg) {
  sg__gate *g = arg;
  struct epoll_event evs[64];
  while (!atomic_load(&g->stopping)) {
    int n = epoll_wait(g->ep, evs, 64, g->listen_paused_until ? 100 : 250);
    int64_t now = sg_mono_ms();
    for (int i = 0; i < n; i++) {
      void *tag = evs[i].data.ptr;
      if (tag == &wake_tag) continue;
      if (tag == &listen_tag)
        accept_some(g, now);
      else
        on_event(g, tag, evs[i].events, now); /* one event per connection per wait */
    }
    while (g->waiting.head && g->waiting.head->deadline <= now) drop(g, g->waiting.head);
    while (g->lingering.head && g->lingering.head->deadline <= now) drop(g, g->lingering.head);
    if (g->listen_paused_until && now >= g->listen_paused_until && watch_listener(g) == 0)
      g->listen_paused_until = 0;
  }
  return NULL;
}

/* ---------------------------------------------------------------- lifecycle ---- */

static void gate_free(sg__gate *g) {
  while (g->waiting.head) drop(g, g->waiting.head);
  while (g->lingering.head) drop(g, g->lingering.head);
  if (g->ep >= 0) close(g->ep);
  if (g->wake_fd >= 0) close(g->wake_fd);
  for (size_t i = 0; i < IP_BUCKETS; i++)
    while (g->buckets[i]) {
      ip_count *e = g->buckets[i];
      g->buckets[i] = e->next;
      free(e);
    }
  pthread_mutex_destroy(&g->mu);
  free(g->peek);
  free(g);
}

int sg__gate_start(const sg__gate_config *cfg, sg__gate **out) {
  sg__gate *g = calloc(1, sizeof *g);
  if (!g) return -1;
  g->cfg = *cfg;
  g->ep = g->wake_fd = -1;
  pthread_mutex_init(&g->mu, NULL);
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &wake_tag};
  /* *out is set before the thread starts: the server's callbacks may count a handed-over
   * connection through it as soon as the first one is accepted. */
  *out = g;
  g->running = true;
  if (!(g->peek = malloc(cfg->head_max + 1)) || (g->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
      (g->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0 ||
      epoll_ctl(g->ep, EPOLL_CTL_ADD, g->wake_fd, &ev) || watch_listener(g) ||
      pthread_create(&g->thread, NULL, gate_main, g)) {
    *out = NULL;
    g->running = false;
    gate_free(g);
    return -1;
  }
  return 0;
}

void sg__gate_stop(sg__gate *g) {
  if (!g || !g->running) return;
  atomic_store(&g->stopping, true);
  uint64_t one = 1;
  if (write(g->wake_fd, &one, sizeof one) < 0) { /* the counter is full: it is awake */
  }
  pthread_join(g->thread, NULL);
  g->running = false;
  close(g->cfg.listen_fd);
  g->cfg.listen_fd = -1;
  while (g->waiting.head) drop(g, g->waiting.head);
  while (g->lingering.head) drop(g, g->lingering.head);
}

void sg__gate_free(sg__gate *g) {
  if (!g) return;
  sg__gate_stop(g);
  gate_free(g);
}
