/*
 * sg_redisx: Redis URLs and a shared hiredis connection with reconnect and backoff.
 */
#include "common/redisx.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 5000

struct sg_redisx {
  sg_redisx_url url;
  int timeout_ms;
  pthread_mutex_t mu;
  redisContext *c;  /* NULL while disconnected */
  int64_t retry_at; /* monotonic ms before which no reconnect is tried */
  int backoff_ms;   /* the next wait after a failed connect */
  _Atomic bool up;
};

/* ---------------------------------------------------------------- URLs ----------- */

bool sg_redisx_is_url(const char *spec) {
  return spec && (strncmp(spec, "redis://", 8) == 0 || strncmp(spec, "rediss://", 9) == 0);
}

static int fail(char *err, size_t errsz, const char *msg) {
  snprintf(err, errsz, "%s", msg);
  errno = EINVAL;
  return -1;
}

static int parse_u64(const char *s, size_t n, uint64_t min, uint64_t max, uint64_t *out) {
  char buf[24];
  int64_t v;
  if (n == 0 || n >= sizeof buf) return -1;
  memcpy(buf, s, n);
  buf[n] = '\0';
  if (sg_parse_i64(buf, (int64_t)min, (int64_t)max, &v)) return -1;
  *out = (uint64_t)v;
  return 0;
}

static bool prefix_ok(const char *p) {
  size_t n = strlen(p);
  return n >= 1 && n <= 64 &&
         strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

/* The options after '?': name=value pairs joined by '&'. */
static int parse_options(const char *p, sg_redisx_url *out, char *err, size_t errsz) {
  while (*p) {
    size_t n = strcspn(p, "&");
    const char *eq = memchr(p, '=', n);
    if (!eq) return fail(err, errsz, "Redis URL: an option is name=value");
    size_t kn = (size_t)(eq - p), vn = n - kn - 1;
    const char *v = eq + 1;
    if (kn == 6 && strncmp(p, "prefix", 6) == 0) {
      if (vn >= sizeof out->prefix) return fail(err, errsz, "Redis URL: bad prefix");
      memcpy(out->prefix, v, vn);
      out->prefix[vn] = '\0';
      if (!prefix_ok(out->prefix))
        return fail(err, errsz, "Redis URL: prefix is 1..64 of [A-Za-z0-9_.-]");
    } else if (kn == 5 && strncmp(p, "chunk", 5) == 0) {
      if (parse_u64(v, vn, 64u << 10, 256u << 20, &out->chunk_bytes))
        return fail(err, errsz, "Redis URL: chunk must be 65536..268435456 bytes");
    } else if (kn == 9 && strncmp(p, "changelog", 9) == 0) {
      if (parse_u64(v, vn, 16, 10000000, &out->changelog))
        return fail(err, errsz, "Redis URL: changelog must be 16..10000000");
    } else {
      return fail(err, errsz, "Redis URL: unknown option (prefix, chunk, changelog)");
    }
    p += n;
    if (*p == '&') p++;
  }
  return 0;
}

int sg_redisx_parse(const char *url, sg_redisx_url *out, char *err, size_t errsz) {
  memset(out, 0, sizeof *out);
  out->chunk_bytes = 32u << 20;
  out->changelog = 100000;
  snprintf(out->prefix, sizeof out->prefix, "sg");
  if (!url) return fail(err, errsz, "no Redis URL");
  if (strncmp(url, "rediss://", 9) == 0)
    return fail(err, errsz,
                "rediss:// (Redis over TLS) is not supported by this build: use redis:// "
                "on a trusted network or a TLS tunnel");
  if (strncmp(url, "redis://", 8) != 0) return fail(err, errsz, "a Redis URL starts with redis://");
  /* The server part is common/redisurl's; the options are the edge store's. */
  char base[1024];
  size_t n = strcspn(url, "?");
  if (n >= sizeof base) return fail(err, errsz, "Redis URL too long");
  memcpy(base, url, n);
  base[n] = '\0';
  int rc = sg_redis_url_parse(base, &out->server);
  explicit_bzero(base, sizeof base);
  if (rc || out->server.db > 15)
    return fail(err, errsz, "bad Redis URL: redis://[[user]:password@]host[:port][/db 0..15]");
  return url[n] == '?' ? parse_options(url + n + 1, out, err, errsz) : 0;
}

/* ---------------------------------------------------------------- connection ----- */

/* With the mutex held: a connected, authenticated context on the right db, or NULL
 * with errno (ECONNREFUSED while the backoff has not run out). */
static redisContext *connect_locked(sg_redisx *r) {
  if (r->c) return r->c;
  int64_t now = sg_mono_ms();
  if (now < r->retry_at) {
    errno = ECONNREFUSED;
    return NULL;
  }
  redisContext *c = sg_redis_connect(&r->url.server, r->timeout_ms, r->timeout_ms);
  if (!c) {
    int e = errno;
    r->retry_at = now + r->backoff_ms;
    r->backoff_ms = r->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : r->backoff_ms * 2;
    atomic_store(&r->up, false);
    errno = e;
    return NULL;
  }
  redisEnableKeepAlive(c);
  r->backoff_ms = BACKOFF_MIN_MS;
  r->c = c;
  return c;
}

/* With the mutex held: after a command on c answered rep (NULL: the connection broke). */
static redisReply *finish_locked(sg_redisx *r, redisReply *rep) {
  if (!rep) {
    int e = r->c->err == REDIS_ERR_IO && errno ? errno : EIO;
    redisFree(r->c);
    r->c = NULL;
    atomic_store(&r->up, false);
    /* The first reconnect after a working connection is immediate (a restarted server
     * is usually back); the backoff only grows while connects fail. */
    r->retry_at = 0;
    errno = e == EAGAIN ? ETIMEDOUT : e;
    return NULL;
  }
  atomic_store(&r->up, true);
  return rep;
}

int sg_redisx_open(const sg_redisx_url *u, int timeout_ms, bool lazy, sg_redisx **out) {
  sg_redisx *r = calloc(1, sizeof *r);
  if (!r) return -1;
  r->url = *u;
  r->timeout_ms = timeout_ms > 0 ? timeout_ms : 5000;
  r->backoff_ms = BACKOFF_MIN_MS;
  pthread_mutex_init(&r->mu, NULL);
  pthread_mutex_lock(&r->mu);
  redisContext *c = connect_locked(r);
  if (c) atomic_store(&r->up, true);
  pthread_mutex_unlock(&r->mu);
  if (!c && !lazy) {
    sg_redisx_close(r);
    errno = ECONNREFUSED;
    return -1;
  }
  *out = r;
  return 0;
}

void sg_redisx_close(sg_redisx *r) {
  if (!r) return;
  if (r->c) redisFree(r->c);
  pthread_mutex_destroy(&r->mu);
  explicit_bzero(&r->url.server, sizeof r->url.server);
  free(r);
}

redisReply *sg_redisx_argv(sg_redisx *r, int argc, const char **argv, const size_t *lens) {
  pthread_mutex_lock(&r->mu);
  redisReply *rep = NULL;
  redisContext *c = connect_locked(r);
  if (c) rep = finish_locked(r, redisCommandArgv(c, argc, argv, lens));
  int e = errno;
  pthread_mutex_unlock(&r->mu);
  errno = e;
  return rep;
}

/* With the mutex held: drops a connection that still owes replies. */
static void drop_locked(sg_redisx *r) {
  redisFree(r->c);
  r->c = NULL;
  r->retry_at = 0;
}

int sg_redisx_pipeline(sg_redisx *r, size_t n, size_t window, sg_redisx_pipe_build build,
                       sg_redisx_pipe_take take, void *ctx) {
  enum { MAX_ARGS = 8 };
  if (window == 0) window = 1;
  pthread_mutex_lock(&r->mu);
  int rc = 0;
  redisContext *c = connect_locked(r);
  if (!c) rc = -1;
  size_t sent = 0, got = 0;
  while (rc == 0 && got < n) {
    while (sent < n && sent - got < window) {
      const char *argv[MAX_ARGS];
      size_t lens[MAX_ARGS];
      int argc = 0;
      if (build(sent, &argc, argv, lens, ctx) || argc <= 0 || argc > MAX_ARGS) {
        if (argc > MAX_ARGS) errno = EINVAL;
        int e = errno;
        drop_locked(r);
        errno = e;
        rc = -1;
        break;
      }
      if (redisAppendCommandArgv(c, argc, argv, lens) != REDIS_OK) {
        int e = errno ? errno : ENOMEM;
        drop_locked(r);
        errno = e;
        rc = -1;
        break;
      }
      sent++;
    }
    if (rc) break;
    void *v = NULL;
    redisReply *rep = redisGetReply(c, &v) == REDIS_OK ? v : NULL;
    if (!rep) {
      finish_locked(r, NULL); /* sets errno, drops the connection */
      rc = -1;
      break;
    }
    int t = take(got, rep, ctx);
    int e = errno;
    freeReplyObject(rep);
    got++;
    if (t) {
      if (got < sent) drop_locked(r);
      errno = e;
      rc = -1;
    }
  }
  if (rc == 0) atomic_store(&r->up, true);
  int e = errno;
  pthread_mutex_unlock(&r->mu);
  errno = e;
  return rc;
}

redisReply *sg_redisx_cmd(sg_redisx *r, const char *fmt, ...) {
  pthread_mutex_lock(&r->mu);
  redisReply *rep = NULL;
  redisContext *c = connect_locked(r);
  if (c) {
    va_list ap;
    va_start(ap, fmt);
    rep = finish_locked(r, redisvCommand(c, fmt, ap));
    va_end(ap);
  }
  int e = errno;
  pthread_mutex_unlock(&r->mu);
  errno = e;
  return rep;
}

redisReply *sg_redisx_eval(sg_redisx *r, sg_redisx_script *s, int nkeys, int argc,
                           const char **argv, const size_t *lens) {
  enum { MAX_ARGS = 32 };
  if (argc < 0 || argc > MAX_ARGS - 3 || nkeys < 0 || nkeys > argc) {
    errno = EINVAL;
    return NULL;
  }
  const char *av[MAX_ARGS];
  size_t al[MAX_ARGS];
  char nk[16];
  snprintf(nk, sizeof nk, "%d", nkeys);
  av[2] = nk;
  al[2] = strlen(nk);
  for (int i = 0; i < argc; i++) {
    av[3 + i] = argv[i];
    al[3 + i] = lens ? lens[i] : strlen(argv[i]);
  }
  /* The script's SHA-1 is learnt from the server (SCRIPT LOAD) once; a server that
   * forgot it (restarted, SCRIPT FLUSH) answers NOSCRIPT and gets the source again. */
  pthread_mutex_lock(&r->mu);
  char sha[41];
  memcpy(sha, s->sha, sizeof sha);
  pthread_mutex_unlock(&r->mu);
  if (!sha[0]) {
    redisReply *rep = sg_redisx_cmd(r, "SCRIPT LOAD %s", s->src);
    if (!rep) return NULL;
    if (rep->type == REDIS_REPLY_STRING && rep->len == 40) {
      pthread_mutex_lock(&r->mu);
      memcpy(s->sha, rep->str, 40);
      s->sha[40] = '\0';
      memcpy(sha, s->sha, sizeof sha);
      pthread_mutex_unlock(&r->mu);
    }
    freeReplyObject(rep);
  }
  if (sha[0]) {
    av[0] = "EVALSHA";
    al[0] = 7;
    av[1] = sha;
    al[1] = 40;
    redisReply *rep = sg_redisx_argv(r, argc + 3, av, al);
    if (!rep || rep->type != REDIS_REPLY_ERROR || strncmp(rep->str, "NOSCRIPT", 8) != 0) return rep;
    freeReplyObject(rep);
  }
  av[0] = "EVAL";
  al[0] = 4;
  av[1] = s->src;
  al[1] = strlen(s->src);
  return sg_redisx_argv(r, argc + 3, av, al);
}

bool sg_redisx_up(const sg_redisx *r) { return atomic_load(&((sg_redisx *)r)->up); }

const sg_redisx_url *sg_redisx_url_of(const sg_redisx *r) { return &r->url; }
