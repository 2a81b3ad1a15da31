/*
 * HTTP glue over libmicrohttpd for the control plane.
 *
 * By default the server reads the whole body (up to a hard cap), builds an sg_req and
 * calls one handler; the handler fills an sg_resp. A route may instead take its body as a
 * stream: the application's begin hook sees every request as soon as its headers have
 * arrived and may answer at once or hand back an sg_http_stream, whose callbacks then get
 * the body chunk by chunk (nothing is buffered by the server) and produce the response at
 * the end. A response body may also be produced on demand (sg_resp_stream) instead of
 * being built in memory. The access log line is written here, once per request, and never
 * contains a secret (no query string, no Authorization header).
 *
 * Connections are accepted by a front gate (gate.h) that hands them to libmicrohttpd
 * once their request head is complete; it bounds the head's size and arrival time and
 * the connections per client IP. Each connection carries one request.
 *
 * A request whose work blocks (password hashing, loading an artifact) runs on one of the
 * server's worker pools instead of the connection thread, which multiplexes many other
 * connections: the begin hook names the pool (req->pool), the connection is suspended
 * while a worker runs the handler and resumed to send the answer. A pool admits at most
 * threads + queue requests; past that the request is answered at once 503 internal_error
 * (reason server_busy) with Retry-After, and the other connections never wait for it.
 */
#ifndef SG_HTTP_HTTP_H
#define SG_HTTP_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/error.h"
#include "http/common/forwarded.h"
#include "http/common/request_id.h"

struct MHD_Connection;

#define SG_HTTP_MAX_PARAMS 4
#define SG_HTTP_MAX_HEADERS 16

typedef struct {
  const char *method;
  const char *path; /* URL path, without the query string */
  struct MHD_Connection *conn;
  const char *body; /* NUL-terminated; borrowed for the handler's duration */
  size_t body_len;
  bool body_too_large; /* the body passed the cap; body holds its first part only */
  char request_id[SG_HTTP_REQUEST_ID_MAX + 1]; /* echoed x-request-id or a generated one */
  char client_ip[64]; /* the peer's address, or behind a trusted proxy the client's it names
                         (http/common/forwarded.h) */
  char *params[SG_HTTP_MAX_PARAMS]; /* path parameters captured by the router */
  size_t nparams;
  const char *route;  /* the matched route template (set by the router), or NULL */
  unsigned pool;      /* set by the begin hook: 0 runs the handler on the connection's
                         thread, n on the config's pools[n - 1] */
  void *app;          /* the server's context pointer */
  void *auth;         /* set by the application's middleware */
  char scratch[1024]; /* the router's copy of the path that params point into */
} sg_req;

/* A response body produced on demand (large exports). read writes up to max bytes into
 * buf and returns how many (> 0), 0 at the end, or -1 on an error (the connection is then
 * cut, as the status line has long been sent). free releases ctx once, whatever happened.
 * Both run on the server's threads after the handler returned. */
typedef struct {
  long (*read)(void *ctx, char *buf, size_t max);
  void (*free)(void *ctx);
  void *ctx;
} sg_resp_stream;

typedef struct {
  int status;
  sg_buf body;
  const char *content_type;
  char *hname[SG_HTTP_MAX_HEADERS];
  char *hvalue[SG_HTTP_MAX_HEADERS];
  size_t nheaders;
  sg_resp_stream stream; /* when stream.read is set, it produces the body (body unused) */
} sg_resp;

typedef void (*sg_http_handler)(sg_req *req, sg_resp *resp);

/* A request body taken as a stream. on_data gets the body's chunks in order and returns 0
 * to go on or non-zero to stop (the rest is then read and dropped, so the client still
 * gets an answer). on_finish runs once after the last byte and fills the response; it is
 * not called when the body passed max_bytes (the server answers 413 payload_too_large)
 * nor when the client went away. on_free releases ctx exactly once, in every case. */
typedef struct {
  int (*on_data)(void *ctx, const char *data, size_t n);
  void (*on_finish)(void *ctx, sg_req *req, sg_resp *resp);
  void (*on_free)(void *ctx);
  void *ctx;
  uint64_t max_bytes;
} sg_http_stream;

typedef enum {
  SG_HTTP_BUFFER,  /* an ordinary route: buffer the body, then call the handler */
  SG_HTTP_STREAM,  /* *stream is filled: feed it the body */
  SG_HTTP_RESPOND, /* resp is filled: answer it (the body is not read, or read and dropped) */
} sg_http_begin;

/* Called once per request when its headers have arrived, before any body byte. The req's
 * fields are set except body; it lives until the request ends. */
typedef sg_http_begin (*sg_http_begin_fn)(sg_req *req, sg_resp *resp, sg_http_stream *stream);

typedef struct sg_http_server sg_http_server;

/* A worker pool for handlers that block (see the top of this file). */
#define SG_HTTP_MAX_POOLS 4
typedef struct {
  const char *name;  /* for the logs and metrics ("password", "artifact") */
  unsigned threads;  /* 0: the pool is not used */
  unsigned queue;    /* requests waiting beyond those running */
  int retry_after_s; /* the 503's Retry-After when it is full */
} sg_http_pool_config;

typedef struct {
  const char *listen; /* "127.0.0.1:8080"; port 0 picks a free port */
  size_t max_body;    /* bytes */
  unsigned threads;   /* worker threads */
  sg_http_handler handler;
  sg_http_begin_fn begin; /* optional: routes that stream their body */
  void *app;
  const char *log_name;     /* "control" or "runtime", written in each access log line */
  unsigned max_connections; /* open at once (0: SG_HTTP_DEFAULT_MAX_CONNECTIONS) */
  unsigned max_per_ip;      /* open at once per client address (0: no cap) */
  unsigned head_timeout_ms; /* accept to end of request head (0: 10 s) */
  /* --trusted-proxies: from these peers the client address is read from Forwarded /
   * X-Forwarded-For, and they are exempt from max_per_ip. NULL: none. Borrowed until
   * sg_http_stop. */
  const sg_trusted_proxies *trusted_proxies;
  sg_http_pool_config pools[SG_HTTP_MAX_POOLS]; /* req->pool n runs on pools[n - 1] */
} sg_http_config;

/* A request line plus headers over this many bytes, or with more header fields (each
 * cookie counting as one), is answered 431 headers_too_large. */
#define SG_HTTP_HEAD_MAX (16 * 1024)
#define SG_HTTP_MAX_HEADER_FIELDS 256
#define SG_HTTP_DEFAULT_MAX_CONNECTIONS 1024u

/* Starts listening. Returns 0 and *out, or -1 with a message in err. */
int sg_http_start(const sg_http_config *cfg, sg_http_server **out, char *err, size_t errsz);
/* The bound port (useful with port 0). */
unsigned sg_http_port(const sg_http_server *s);
void sg_http_stop(sg_http_server *s);
/* Counters of pool n (1-based) for the metrics; false when there is no such pool. */
bool sg_http_pool_stats(sg_http_server *s, unsigned n, const char **name, unsigned *threads,
                        unsigned *queue, unsigned *admitted, uint64_t *done, uint64_t *rejected);

/* Request accessors (values borrowed from libmicrohttpd for the request's lifetime). */
const char *sg_req_header(const sg_req *r, const char *name);
const char *sg_req_query(const sg_req *r, const char *name);

/* Response helpers. Header names/values are copied. */
void sg_resp_header(sg_resp *r, const char *name, const char *value);
/* Serialises body (compact, stable key order as inserted) and DECREFS it. */
void sg_resp_json(sg_resp *r, int status, json_t *body);
/* Control-plane error body {code, message, requestId, details, docsUrl, remediation}.
 * details is stolen (NULL gives {} or {"reason": …} from the error table). */
void sg_resp_error(sg_resp *r, const sg_req *req, sg_err e, json_t *details, const char *message);
/* 413 payload_too_large that states the limit: in the message and as details.limitBytes. */
void sg_resp_too_large(sg_resp *r, const sg_req *req, uint64_t limit);
/* What a client should do about e (the body's remediation; also on /docs/errors). */
const char *sg_resp_remediation(sg_err e);
/* invalid_request with details.fields = [{path, reason}] built from fields (stolen array). */
void sg_resp_invalid_fields(sg_resp *r, const sg_req *req, json_t *fields);
/* Appends {path, reason} to a fields array (creating it when *fields is NULL). */
void sg_field_error(json_t **fields, const char *path, const char *reason);

#endif
