/*
 * redis:// URLs and blocking hiredis connections (common/redisurl.h).
 */
#include "common/redisurl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"

/* Copies s[0..n) into out (size cap) and returns 0, or -1 when it does not fit. */
static int copy_part(char *out, size_t cap, const char *s, size_t n) {
  if (n >= cap) return -1;
  memcpy(out, s, n);
  out[n] = '\0';
  return 0;
}

int sg_redis_url_parse(const char *url, sg_redis_url *out) {
  memset(out, 0, sizeof *out);
  out->port = 6379;
  if (!url || strncmp(url, "redis://", 8) != 0) goto bad;
  const char *p = url + 8, *end = p + strlen(p);
  const char *slash = strchr(p, '/');
  const char *hostend = slash ? slash : end;
  const char *at = memchr(p, '@', (size_t)(hostend - p));
  if (at) {
    const char *colon = memchr(p, ':', (size_t)(at - p));
    if (colon) {
      if (copy_part(out->user, sizeof out->user, p, (size_t)(colon - p)) ||
          copy_part(out->password, sizeof out->password, colon + 1, (size_t)(at - colon - 1)))
        goto bad;
    } else if (copy_part(out->password, sizeof out->password, p, (size_t)(at - p))) {
      goto bad; /* redis://password@host, as redis-cli reads it */
    }
    p = at + 1;
  }
  const char *colon = NULL;
  if (*p == '[') { /* [v6]:port */
    const char *rb = memchr(p, ']', (size_t)(hostend - p));
    if (!rb || copy_part(out->host, sizeof out->host, p + 1, (size_t)(rb - p - 1))) goto bad;
    if (rb + 1 < hostend) {
      if (rb[1] != ':') goto bad;
      colon = rb + 1;
    }
  } else {
    colon = memchr(p, ':', (size_t)(hostend - p));
    if (copy_part(out->host, sizeof out->host, p, (size_t)((colon ? colon : hostend) - p)))
      goto bad;
  }
  if (!out->host[0]) goto bad;
  if (colon) {
    char port[8];
    int64_t v;
    if (copy_part(port, sizeof port, colon + 1, (size_t)(hostend - colon - 1)) ||
        sg_parse_i64(port, 1, 65535, &v))
      goto bad;
    out->port = (int)v;
  }
  if (slash && slash[1]) {
    int64_t v;
    if (sg_parse_i64(slash + 1, 0, 1000000, &v)) goto bad;
    out->db = (int)v;
  }
  return 0;
bad:
  errno = EINVAL;
  return -1;
}

static struct timeval tv_ms(int ms) {
  return (struct timeval){.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
}

/* Runs one setup command; 0 when Redis answered without an error. */
static int setup_cmd(redisContext *c, redisReply *r) {
  int ok = r && r->type != REDIS_REPLY_ERROR;
  if (r) freeReplyObject(r);
  (void)c;
  return ok ? 0 : -1;
}

redisContext *sg_redis_connect(const sg_redis_url *u, int connect_ms, int io_ms) {
  redisContext *c = redisConnectWithTimeout(u->host, u->port, tv_ms(connect_ms));
  if (!c) {
    errno = ENOMEM;
    return NULL;
  }
  if (c->err || redisSetTimeout(c, tv_ms(io_ms)) != REDIS_OK) goto fail;
  if (u->password[0]) {
    redisReply *r = u->user[0] ? redisCommand(c, "AUTH %s %s", u->user, u->password)
                               : redisCommand(c, "AUTH %s", u->password);
    if (setup_cmd(c, r)) {
      redisFree(c);
      errno = EACCES;
      return NULL;
    }
  }
  if (u->db && setup_cmd(c, redisCommand(c, "SELECT %d", u->db))) goto fail;
  return c;
fail:
  redisFree(c);
  errno = ECONNREFUSED;
  return NULL;
}
