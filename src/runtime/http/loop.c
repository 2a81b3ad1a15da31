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
 * At the connection cap a newcomer is not refused: the oldest connection that owes its
 * client nothing (idle between requests, or its request not fully arrived: no answer
 * waiting to be written) is closed to make room, so connections that trickle incomplete
 * heads cannot lock new clients out. A worker evicts only its own connections (they are
 * never touched by another thread), so the newcomer goes, through its inbox, to the
 * worker whose least recently active connection is the oldest of all (each publishes
 * that time as head_ns); if it cannot make room the newcomer is closed, and an acceptor
 * with nothing of its own to evict hands the newcomer to the worker holding the most
 * connections. Below the cap the same inbox evens out the load: a newcomer goes to the
 * worker with the fewest connections (least_loaded).
 *
 * Why not libmicrohttpd (the control plane keeps it): measured in bench/PROFILE.md, it
 * made ~17 allocations and a 16-32 KiB memset per request, which put the runtime at
 * 0.68-0.73x nginx `return 200`. Here a request allocates nothing.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "http/common/forwarded.h"
#include "runtime/server.h"

#define IDLE_MS 30000 /* closed this long after its last answer byte went out (or its accept) */
#define LINGER_MAX (256 * 1024) /* after a refusal: input discarded before closing anyway */
#define READS_PER_WAKE 4        /* fairness: at most this many reads per connection per wake */
#define EVICT_SCAN 64 /* at the cap: connections looked at, oldest first, for one to evict */
#define INBOX_CAP 64  /* newcomers handed over to a worker and not yet taken */

typedef struct rt_conn {
  int fd;
  uint32_t events; /* what epoll watches: EPOLLIN or EPOLLOUT */
  bool eof;        /* the client closed its side */
  bool lingering;  /* refused and answered: our side is shut, input is discarded */
  size_t discarded;
  int64_t last_ns; /* last accept or output progress (CLOCK_MONOTONIC ns): for IDLE_MS, and
                    * the order of activity across workers (two workers' answers often
                    * fall in the same ms) */
  struct rt_conn *prev, *next; /* the worker's connections, least recently active first */
  sg__h1_conn h;
} rt_conn;

/* A connection accepted by one worker for another: at the cap for that one to make room
 * for (slot false), or to even out the workers' loads (slot true: it holds its slot). */
typedef struct {
  int fd;
  bool slot;
} newcomer;

typedef struct {
  sg_runtime *rt;
  int ep;
  rt_conn *head, *tail;
  int64_t now_ns;              /* CLOCK_MONOTONIC of the current wake, in ns */
  int64_t listen_paused_until; /* accept failed for lack of descriptors: retry then */
  _Atomic unsigned n_conns;    /* connections in the list; read by other workers as a hint */
  _Atomic unsigned n_queued;   /* newcomers in the inbox, for the same hint */
  _Atomic int64_t head_ns;     /* last_ns of the list's head (INT64_MAX: none), a hint too */
  /* Newcomers another worker accepted for this one: their descriptors, owned by the inbox
   * until taken. inbox_fd (an eventfd) wakes the worker. */
  int inbox_fd;
  pthread_mutex_t inbox_mu;
  newcomer inbox[INBOX_CAP];
  unsigned inbox_n;
} worker;

/* Every worker of one runtime (rt->loop); w[0..n) is set before n counts it, and a worker
 * is freed only after every thread has stopped (sg__rt_workers_stop). */
struct sg__rt_loop {
  _Atomic unsigned n;
  worker *w[];
};

/* epoll data.ptr of the listening socket, the stop eventfd and a worker's inbox eventfd. */
static char listen_tag, wake_tag, inbox_tag;

/* Publishes when the worker's least recently active connection was last active, for the
 * other workers to find the oldest connection of all at the cap. */
static void head_hint(worker *w) {
  atomic_store_explicit(&w->head_ns, w->head ? w->head->last_ns : INT64_MAX, memory_order_relaxed);
}

static void unlink_conn(worker *w, rt_conn *c) {
  if (c->prev)
    c->prev->next = c->next;
  else
    w->head = c->next;
  if (c->next)
    c->next->prev = c->prev;
  else
    w->tail = c->prev;
  if (!c->prev) head_hint(w);
  c->prev = c->next = NULL;
}

static void link_tail(worker *w, rt_conn *c) {
  c->prev = w->tail;
  if (w->tail)
    w->tail->next = c;
  else
    w->head = c;
  w->tail = c;
  if (w->head == c) head_hint(w);
}

/* Activity on a connection (which is in the list): it moves to the most recent end. */
static void touch(worker *w, rt_conn *c) {
  c->last_ns = w->now_ns;
  if (w->tail == c) {
    if (w->head == c) head_hint(w);
    return;
  }
  unlink_conn(w, c);
  link_tail(w, c);
}

/* Closes c without giving back its slot under the cap: the caller hands the slot on. */
static void drop_conn(worker *w, rt_conn *c) {
  unlink_conn(w, c);
  close(c->fd); /* also removes it from the epoll set */
  sg__h1_free(&c->h);
  free(c);
  atomic_fetch_sub_explicit(&w->n_conns, 1, memory_order_relaxed);
}

static void close_conn(worker *w, rt_conn *c) {
  drop_conn(w, c);
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
        touch(w, c); /* only answers count as activity: a trickled request does not */
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

/* ================================================================ admission ====== */

/* A connection that owes its client nothing: no answer waits to be written. It is idle
 * between requests, its request has not fully arrived (head or body), or it was refused
 * and only lingers. Closing it loses no answer. */
static bool evictable(const rt_conn *c) { return !sg__h1_pending(&c->h); }

/* A free slot under the connection cap, or false at the cap. */
static bool free_slot(worker *w) {
  sg_runtime *rt = w->rt;
  if (atomic_fetch_add(&rt->connections, 1) < (long)rt->cfg.max_connections) return true;
  atomic_fetch_sub(&rt->connections, 1);
  return false;
}

/* The slot of this worker's oldest evictable connection (least recently active first, at
 * most EVICT_SCAN looked at), which is closed; false when there is none. */
static bool evict_slot(worker *w) {
  rt_conn *c = w->head;
  for (int i = 0; c && i < EVICT_SCAN && !evictable(c); i++) c = c->next;
  if (!c || !evictable(c)) return false;
  drop_conn(w, c); /* its slot goes to the newcomer */
  return true;
}

/* Takes a slot for a newcomer: a free one, or an evicted connection's. */
static bool take_slot(worker *w) { return free_slot(w) || evict_slot(w); }

/* Starts serving fd, which holds a slot. On failure closes fd and gives the slot back. */
static void start_conn(worker *w, int fd) {
  sg_runtime *rt = w->rt;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  rt_conn *c = malloc(sizeof *c);
  if (!c) {
    atomic_fetch_sub(&rt->connections, 1);
    close(fd);
    return;
  }
  c->fd = fd;
  c->events = EPOLLIN;
  c->eof = c->lingering = false;
  c->discarded = 0;
  c->prev = c->next = NULL;
  sg__h1_init(&c->h, sg__rt_on_request, rt);
  /* The peer, once per connection (a connection may have come from another worker's
   * accept, which passes only the descriptor). */
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0) {
    sg_ip ip = {{0}};
    bool ok = true;
    if (ss.ss_family == AF_INET) {
      ip.b[10] = ip.b[11] = 0xff;
      memcpy(ip.b + 12, &((struct sockaddr_in *)&ss)->sin_addr, 4);
    } else if (ss.ss_family == AF_INET6) {
      memcpy(ip.b, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
    } else {
      ok = false;
    }
    if (ok) {
      sg_ip_format(&ip, c->h.peer, sizeof c->h.peer);
      c->h.peer_ip = ip;
      c->h.peer_proxy =
          rt->cfg.trusted_proxies && sg_trusted_proxies_contains(rt->cfg.trusted_proxies, &ip);
    }
  }
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
  if (epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev)) {
    sg__h1_free(&c->h);
    free(c);
    close(fd);
    atomic_fetch_sub(&rt->connections, 1);
    return;
  }
  c->last_ns = w->now_ns;
  link_tail(w, c);
  atomic_fetch_add_explicit(&w->n_conns, 1, memory_order_relaxed);
}

/* Puts a newcomer in to's inbox and wakes it. False when the inbox is full; fd is then
 * still the caller's. */
static bool inbox_push(worker *to, int fd, bool slot) {
  pthread_mutex_lock(&to->inbox_mu);
  bool ok = to->inbox_n < INBOX_CAP;
  if (ok) {
    to->inbox[to->inbox_n++] = (newcomer){fd, slot};
    atomic_fetch_add_explicit(&to->n_queued, 1, memory_order_relaxed);
  }
  pthread_mutex_unlock(&to->inbox_mu);
  uint64_t one = 1;
  if (ok && write(to->inbox_fd, &one, sizeof one) < 0) { /* counter full: it is awake */
  }
  return ok;
}

static unsigned load_of(worker *o) {
  return atomic_load_explicit(&o->n_conns, memory_order_relaxed) +
         atomic_load_explicit(&o->n_queued, memory_order_relaxed);
}

/* At the cap with nothing to evict here: gives fd to the worker holding the most
 * connections, which makes room for it (inbox_take). False when there is none to give it
 * to or its inbox is full; fd is then still the caller's. */
static bool hand_over(worker *w, int fd) {
  struct sg__rt_loop *loop = w->rt->loop;
  unsigned n = atomic_load(&loop->n), most = 0;
  worker *to = NULL;
  for (unsigned i = 0; i < n; i++) {
    worker *o = loop->w[i];
    unsigned k = atomic_load_explicit(&o->n_conns, memory_order_relaxed);
    if (o != w && k > most) {
      most = k;
      to = o;
    }
  }
  return to && inbox_push(to, fd, false);
}

static int64_t load_score(worker *o) { return load_of(o); }
static int64_t age_score(worker *o) {
  return atomic_load_explicit(&o->head_ns, memory_order_relaxed);
}

/* The worker with the lowest score of all, w itself on a tie. */
static worker *lowest(worker *w, int64_t (*score)(worker *)) {
  struct sg__rt_loop *loop = w->rt->loop;
  unsigned n = atomic_load(&loop->n);
  int64_t best = score(w);
  worker *to = w;
  for (unsigned i = 0; i < n; i++) {
    worker *o = loop->w[i];
    int64_t k = o == w ? best : score(o);
    if (k < best) {
      best = k;
      to = o;
    }
  }
  return to;
}

/* The worker that should serve a connection w accepted: the one with the fewest
 * connections (queued newcomers included), w itself unless another has fewer. The
 * listener wakes whichever worker the kernel picks, and one wake can accept a whole
 * burst: without this, the 32 connections of a benchmark client all landed on one
 * worker while the other idled (measured with per-thread CPU times, /proc/PID/task). */
static worker *least_loaded(worker *w) { return lowest(w, load_score); }

/* The worker whose least recently active connection is the oldest of all (w on a tie). */
static worker *oldest_head(worker *w) { return lowest(w, age_score); }

/* Newcomers handed over by other workers: each gets a slot here or is closed (never
 * handed on again, so a descriptor cannot circle between workers). */
static void inbox_take(worker *w) {
  uint64_t v;
  if (read(w->inbox_fd, &v, sizeof v) < 0) { /* nothing to reset */
  }
  newcomer in[INBOX_CAP];
  pthread_mutex_lock(&w->inbox_mu);
  unsigned n = w->inbox_n;
  memcpy(in, w->inbox, n * sizeof *in);
  w->inbox_n = 0;
  pthread_mutex_unlock(&w->inbox_mu);
  for (unsigned i = 0; i < n; i++) {
    if (in[i].slot || take_slot(w))
      start_conn(w, in[i].fd); /* counts it in n_conns before n_queued drops */
    else
      close(in[i].fd);
    atomic_fetch_sub_explicit(&w->n_queued, 1, memory_order_relaxed);
  }
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
    /* The cap is derived from the descriptor budget. At it, an old connection that owes
     * its client nothing makes room: the worker whose least recently active connection
     * is the oldest of all evicts it (a worker only ever closes its own connections);
     * only when no worker has one is the newcomer closed. */
    if (free_slot(w)) {
      worker *to = least_loaded(w);
      if (to == w || !inbox_push(to, fd, true)) start_conn(w, fd);
      continue;
    }
    worker *to = oldest_head(w);
    if (to != w && inbox_push(to, fd, false)) continue;
    if (evict_slot(w))
      start_conn(w, fd);
    else if (!hand_over(w, fd))
      close(fd);
  }
}

static int watch_listener(worker *w) {
  struct epoll_event ev = {.events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = &listen_tag};
  return epoll_ctl(w->ep, EPOLL_CTL_ADD, w->rt->listen_fd, &ev);
}

static void *worker_main(void *arg) {
  worker *w = arg;
  struct epoll_event evs[64];
  sg__h_query_thread_init();
  while (!atomic_load(&w->rt->stopping)) {
    /* While the listener is parked (out of descriptors), wake in time to re-arm it. */
    int n = epoll_wait(w->ep, evs, 64, w->listen_paused_until ? 100 : 1000);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* sg_mono_ms's clock, once for both units */
    w->now_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    int64_t now = w->now_ns / 1000000;
    bool accept = false, inbox = false;
    for (int i = 0; i < n; i++) {
      void *tag = evs[i].data.ptr;
      if (tag == &wake_tag) continue;
      if (tag == &inbox_tag) {
        inbox = true;
        continue;
      }
      if (tag == &listen_tag) {
        accept = true;
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
    /* Newcomers last: at the cap, admitting one closes another connection, whose event
     * may have been further down this batch. */
    if (inbox) inbox_take(w);
    if (accept) accept_some(w, now);
    if (w->listen_paused_until && now >= w->listen_paused_until && watch_listener(w) == 0)
      w->listen_paused_until = 0;
    while (w->head && w->now_ns - w->head->last_ns >= (int64_t)IDLE_MS * 1000000)
      close_conn(w, w->head);
  }
  while (w->head) close_conn(w, w->head);
  return NULL;
}

/* Frees a worker whose thread has stopped (or never started), with any newcomers still
 * in its inbox. */
static void worker_free(worker *w) {
  for (unsigned i = 0; i < w->inbox_n; i++) { /* the runtime is stopping: slots are moot */
    close(w->inbox[i].fd);
  }
  if (w->ep >= 0) close(w->ep);
  if (w->inbox_fd >= 0) close(w->inbox_fd);
  pthread_mutex_destroy(&w->inbox_mu);
  free(w);
}

void sg__rt_workers_stop(sg_runtime *rt) {
  atomic_store(&rt->stopping, true);
  uint64_t one = 1;
  if (rt->wake_fd >= 0 && write(rt->wake_fd, &one, sizeof one) < 0) { /* counter full: awake */
  }
  for (unsigned i = 0; i < rt->n_workers; i++) pthread_join(rt->workers[i], NULL);
  rt->n_workers = 0;
  if (rt->loop) {
    for (unsigned i = 0; i < atomic_load(&rt->loop->n); i++) worker_free(rt->loop->w[i]);
    free(rt->loop);
    rt->loop = NULL;
  }
}

unsigned sg__rt_worker_connections(const sg_runtime *rt, unsigned *out, unsigned max) {
  if (!rt->loop) return 0;
  unsigned n = atomic_load(&rt->loop->n);
  for (unsigned i = 0; i < n && i < max; i++)
    out[i] = atomic_load_explicit(&rt->loop->w[i]->n_conns, memory_order_relaxed);
  return n;
}

/* A worker ready to run: its epoll set watches the listener, the stop eventfd and its
 * inbox. NULL on failure. */
static worker *worker_new(sg_runtime *rt) {
  worker *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->rt = rt;
  atomic_store(&w->head_ns, INT64_MAX);
  w->ep = epoll_create1(EPOLL_CLOEXEC);
  w->inbox_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  pthread_mutex_init(&w->inbox_mu, NULL);
  struct epoll_event wake = {.events = EPOLLIN, .data.ptr = &wake_tag};
  struct epoll_event inbox = {.events = EPOLLIN, .data.ptr = &inbox_tag};
  if (w->ep < 0 || w->inbox_fd < 0 || watch_listener(w) ||
      epoll_ctl(w->ep, EPOLL_CTL_ADD, rt->wake_fd, &wake) ||
      epoll_ctl(w->ep, EPOLL_CTL_ADD, w->inbox_fd, &inbox)) {
    worker_free(w);
    return NULL;
  }
  return w;
}

int sg__rt_workers_start(sg_runtime *rt) {
  rt->loop = calloc(1, sizeof *rt->loop + rt->cfg.threads * sizeof(worker *));
  if (!rt->loop) return -1;
  for (unsigned i = 0; i < rt->cfg.threads; i++) {
    worker *w = worker_new(rt);
    if (w) {
      rt->loop->w[i] = w;
      atomic_store(&rt->loop->n, i + 1); /* visible to hand_over from here on */
    }
    if (!w || pthread_create(&rt->workers[i], NULL, worker_main, w)) {
      sg__rt_workers_stop(rt); /* frees w too: it is counted in loop->n */
      return -1;
    }
    rt->n_workers++;
  }
  return 0;
}
