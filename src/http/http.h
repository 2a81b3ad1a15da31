/*
 * HTTP glue over libmicrohttpd for the control plane.
 *
 * The server reads the whole body (up to a hard cap), builds an sg_req and calls one
 * handler; the handler fills an sg_resp. The access log line is written here, once per
 * request, and never contains a secret (no query string, no Authorization header).
 */
#ifndef SG_HTTP_HTTP_H
#define SG_HTTP_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/error.h"

struct MHD_Connection;

#define SG_HTTP_MAX_PARAMS 4
#define SG_HTTP_MAX_HEADERS 16

typedef struct {
  const char *method;
  const char *path;       /* URL path, without the query string */
  struct MHD_Connection *conn;
  const char *body;       /* NUL-terminated; borrowed for the handler's duration */
  size_t body_len;
  bool body_too_large;    /* the body passed the cap; body holds its first part only */
  char request_id[80];    /* echoed x-request-id (when sane) or a generated one */
  char client_ip[64];
  char *params[SG_HTTP_MAX_PARAMS];       /* path parameters captured by the router */
  size_t nparams;
  void *app;              /* the server's context pointer */
  void *auth;             /* set by the application's middleware */
} sg_req;

typedef struct {
  int status;
  sg_buf body;
  const char *content_type;
  char *hname[SG_HTTP_MAX_HEADERS];
  char *hvalue[SG_HTTP_MAX_HEADERS];
  size_t nheaders;
} sg_resp;

typedef void (*sg_http_handler)(sg_req *req, sg_resp *resp);

typedef struct sg_http_server sg_http_server;

typedef struct {
  const char *listen;     /* "127.0.0.1:8080"; port 0 picks a free port */
  size_t max_body;        /* bytes */
  unsigned threads;       /* worker threads */
  sg_http_handler handler;
  void *app;
  const char *log_name;   /* "control" or "runtime", written in each access log line */
} sg_http_config;

/* Starts listening. Returns 0 and *out, or -1 with a message in err. */
int sg_http_start(const sg_http_config *cfg, sg_http_server **out, char *err, size_t errsz);
/* The bound port (useful with port 0). */
unsigned sg_http_port(const sg_http_server *s);
void sg_http_stop(sg_http_server *s);

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
/* invalid_request with details.fields = [{path, reason}] built from fields (stolen array). */
void sg_resp_invalid_fields(sg_resp *r, const sg_req *req, json_t *fields);
/* Appends {path, reason} to a fields array (creating it when *fields is NULL). */
void sg_field_error(json_t **fields, const char *path, const char *reason);

/* Splits "host:port" into parts. Returns 0 or -1. */
int sg_parse_listen(const char *s, char *host, size_t hostsz, unsigned *port);

#endif
