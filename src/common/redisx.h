/*
 * sg_redisx: a Redis URL with the edge store's options, and a shared hiredis handle.
 *
 * Shared by every Redis backend (the edge store, src/edge/redis; the runtime's shared
 * state, src/state), so they read the same URLs and behave alike when Redis goes
 * away: a command answers NULL (errno set) instead of blocking, the next command
 * reconnects, and while Redis stays down reconnects are spaced by a growing backoff
 * (100 ms doubling to 5 s) so a dead server costs one failed connect per backoff, not
 * one per call.
 *
 * URL: redis://[[user]:password@]host[:port][/db][?prefix=NAME&chunk=BYTES&changelog=N]
 *   host      a name, an IPv4 address or a bracketed IPv6 address; port default 6379
 *   db        0..15 (SELECT after connecting), default 0
 * The server part is read and connected to by common/redisurl.h (sg_redis_url_parse,
 * sg_redis_connect); this adds the options, reconnecting and scripts.
 *   prefix    namespace of the edge store's keys ([A-Za-z0-9_.-], 1..64 chars), default
 *             "sg" (keys "sg:edge:…", next to the runtime state's "sg:state:…")
 *   chunk     artifact chunk size for the edge store (64 KiB..256 MiB, default 32 MiB)
 *   changelog edge change-log entries kept (16..10000000, default 100000)
 * rediss:// (TLS) is refused: the hiredis this builds against has no TLS.
 *
 * A handle may be shared by threads: every command holds the handle's mutex for its one
 * round trip, so commands of several threads never interleave on the socket.
 */
#ifndef SG_COMMON_REDISX_H
#define SG_COMMON_REDISX_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/redisurl.h"

typedef struct {
  sg_redis_url server; /* host, port, user, password (never logged), db */
  char prefix[65];
  uint64_t chunk_bytes;
  uint64_t changelog;
} sg_redisx_url;

/* Parses url into *out. Returns 0, or -1 with a message (no password in it) in err. */
int sg_redisx_parse(const char *url, sg_redisx_url *out, char *err, size_t errsz);
/* Whether spec names Redis ("redis://" or "rediss://"), so callers can route it. */
bool sg_redisx_is_url(const char *spec);

typedef struct sg_redisx sg_redisx;

/* A handle on the server of u (copied). Connects now; a server that is down is not an
 * error here when lazy is true (the first command connects), else -1 with errno. Command
 * and connect timeouts are timeout_ms (0: 5000). */
int sg_redisx_open(const sg_redisx_url *u, int timeout_ms, bool lazy, sg_redisx **out);
void sg_redisx_close(sg_redisx *r);

/* One command (argv form: binary-safe). Returns the reply (the caller frees it with
 * freeReplyObject; an error reply is a reply, not NULL), or NULL with errno set when the
 * server cannot be reached (ECONNREFUSED while backing off, EIO/ETIMEDOUT on a broken
 * connection, which is dropped: the next command reconnects). */
redisReply *sg_redisx_argv(sg_redisx *r, int argc, const char **argv, const size_t *lens);
/* printf-style form of the above (hiredis format: %s, %b with a length, %d, %lld…). */
redisReply *sg_redisx_cmd(sg_redisx *r, const char *fmt, ...);

/* n commands pipelined: up to window of them on the wire at once, so the server keeps
 * sending while the client consumes (a bulk read of many GETRANGEs runs at the socket's
 * speed instead of one round trip each). build(i) fills command i (argv as for
 * sg_redisx_argv, at most 8 arguments, borrowed until it returns); take(i) gets reply i,
 * in order, borrowed until it returns (an error reply is a reply). Returns 0, or -1 with
 * errno: the connection failed (as sg_redisx_argv), or build or take returned non-zero
 * (their errno is kept; the connection, with replies still due, is dropped and the next
 * command reconnects). */
typedef int (*sg_redisx_pipe_build)(size_t i, int *argc, const char **argv, size_t *lens,
                                    void *ctx);
typedef int (*sg_redisx_pipe_take)(size_t i, const redisReply *rep, void *ctx);
int sg_redisx_pipeline(sg_redisx *r, size_t n, size_t window, sg_redisx_pipe_build build,
                       sg_redisx_pipe_take take, void *ctx);

/* A Lua script run by EVALSHA, falling back to EVAL when the server does not know it
 * (restarted, flushed). Define one per script with static storage. */
typedef struct {
  const char *src;
  char sha[41]; /* filled by the first successful EVAL/SCRIPT LOAD */
} sg_redisx_script;
/* Runs s with nkeys keys then args (argv[0..argc), lens as for sg_redisx_argv). */
redisReply *sg_redisx_eval(sg_redisx *r, sg_redisx_script *s, int nkeys, int argc,
                           const char **argv, const size_t *lens);

/* Whether the last command reached the server (false after a failure, until a command
 * succeeds again). */
bool sg_redisx_up(const sg_redisx *r);
/* The prefix of every key ("<prefix>:") and the parsed URL. */
const sg_redisx_url *sg_redisx_url_of(const sg_redisx *r);

#endif
