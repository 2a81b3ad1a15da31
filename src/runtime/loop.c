/*
 * The runtime's HTTP event loop.
 *
 * Worker threads (one per CPU by default) each run an epoll loop over one shared
 * listening socket (EPOLLEXCLUSIVE: one worker is woken per new connection) and the
 * connections they accepted; a connection stays on its worker for its life. Reads go to
 * the connection's sg__h1_conn (http1.c), which calls sg__rt_on_request (route.c) for
 * each complete request; the answers accumulate in its output buffer and go out with one
 * send per batch. A connection idle for IDLE_MS is closed. Every response goes through
 * sg__rt_respond (respond.c), which adds the common headers and writes one access-log
 * line.
 *
 * Why not libmicrohttpd (the control plane keeps it): measured in bench/PROFILE.md, it
 * made ~17 allocations and a 16-32 KiB memset per request, which put the runtime at
 * 0.68-0.73x nginx `return 200`. Here a request allocates nothing.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/server.h"

#define IDLE_MS 30000 /* closed this long after its last answer byte went out (or its accept) */
#define LINGER_MAX (256 * 1024) /* after a refusal: input discarded before closing anyway */
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
    sg__h1_init(&c->h, sg__rt_on_request, rt);
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

void sg__rt_workers_stop(sg_runtime *rt) {
  atomic_store(&rt->stopping, true);
  uint64_t one = 1;
  if (rt->wake_fd >= 0 && write(rt->wake_fd, &one, sizeof one) < 0) { /* counter full: awake */
  }
  for (unsigned i = 0; i < rt->n_workers; i++) pthread_join(rt->workers[i], NULL);
  rt->n_workers = 0;
}

int sg__rt_workers_start(sg_runtime *rt) {
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
      sg__rt_workers_stop(rt);
      return -1;
    }
    rt->n_workers++;
  }
  return 0;
}
