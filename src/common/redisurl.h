/*
 * Connecting to the Redis named by a redis:// URL (hiredis, blocking, with timeouts):
 * redis://[[user]:password@]host[:port][/db]. Used by the runtime's shared state and
 * the control plane's selection drain.
 */
#ifndef SG_COMMON_REDISURL_H
#define SG_COMMON_REDISURL_H

#include <hiredis/hiredis.h>

typedef struct {
  char host[256];
  int port;
  char user[128], password[256];
  int db;
} sg_redis_url;

/* Parses url; -1 (errno EINVAL) when it is not a redis:// URL of that shape. */
int sg_redis_url_parse(const char *url, sg_redis_url *out);
/* Connects, authenticates and selects the database. connect_ms bounds the connect,
 * io_ms every later command. NULL (errno set) on failure. */
redisContext *sg_redis_connect(const sg_redis_url *u, int connect_ms, int io_ms);

#endif
