/*
 * HTTP/1.1 framing for the runtime listener: request parsing (libhttp-parser) and
 * response writing into a per-connection output buffer. No I/O here — loop.c owns the
 * sockets and the epoll loops — so this file is unit-tested and fuzzed on plain bytes.
 *
 * One sg__h1_conn per TCP connection. The server reads into sg__h1_rbuf and calls
 * sg__h1_feed; every complete request (pipelined ones in order) is handed to the
 * handler, which answers it with sg__h1_status / sg__h1_header / sg__h1_finish before
 * returning. The server then writes c->out[c->out_sent..len) to the socket.
 *
 * Limits (every byte is hostile): the request line and headers fit in SG__H1_HEAD_MAX
 * bytes, counted by the parser the same however they arrive, else 431; a body is at most
 * SG__H1_BODY_MAX bytes, else 413 — answered as soon as Content-Length says so, without reading the
 * body; a malformed request is 400. libhttp-parser is lenient where RFC 9112 is not, so http1.c
 * checks around it (docs/DECISIONS.md "HTTP/1.1 parsing"): a header name must be a token (no
 * space before the colon, none inside), an HTTP/1.1 request needs exactly one valid Host
 * header (an HTTP/1.0 one at most one), and only HTTP/1.x is served (HTTP/0.9's bare request
 * line is refused as soon as it ends). Each of these calls the handler once with req == NULL and
 * the error, then the connection is closed once the answer is written (c->close). While more than
 * SG__H1_OUT_PAUSE bytes of answers wait to be written (a client pipelining without reading),
 * parsing pauses until sg__h1_drained.
 *
 * Steady state allocates nothing: the request lives in c->buf, and c->out keeps its
 * capacity between requests.
 */
#ifndef SG_RUNTIME_HTTP1_H
#define SG_RUNTIME_HTTP1_H

#include <http_parser.h>
#include <stdbool.h>
#include <stddef.h>

#include "http/common/forwarded.h"

#include "common/buf.h"
#include "common/error.h"

#define SG__H1_HEAD_MAX (16 * 1024)
#define SG__H1_BODY_MAX 4096
#define SG__H1_OUT_PAUSE (256 * 1024)
#define SG__H1_OUT_LIMIT (64 * 1024 * 1024)
#define SG__H1_MAX_ARGS 32

/* Headers the parser keeps (http1.c's H_*). */
#define SG__H1_HDRS 7

typedef struct {
  const char *p; /* NUL-terminated; NULL when absent */
  size_t n;
} sg__h1_str;

typedef struct {
  const char *name, *value; /* percent-decoded ('+' is a space), NUL-terminated; value is
                               NULL for an argument without '=' */
  size_t name_len, value_len;
} sg__h1_arg;

typedef struct {
  const char *method; /* "GET", "POST", … */
  bool head;          /* HEAD: answered like GET, without the body */
  int http_minor;     /* HTTP/1.<minor> */
  const char *path;   /* percent-decoded, NUL-terminated, without the query */
  /* The first occurrence of each header the runtime reads (names matched ignoring case);
   * of Forwarded and X-Forwarded-For the last (the line the nearest proxy appended). */
  sg__h1_str origin, xrid, authorization, if_none_match, expect, forwarded, xff;
  sg__h1_arg args[SG__H1_MAX_ARGS]; /* the query string, in order; extra args are dropped */
  size_t n_args;
  const char *body; /* the request body (chunked bodies reassembled), NUL-terminated */
  size_t body_len;
} sg__h1_req;

typedef struct sg__h1_conn sg__h1_conn;

/* Called once per request. req == NULL: the request could not be framed and err (400
 * invalid_request, 413 payload_too_large, 431 headers_too_large) is to be answered; the
 * connection closes after it. req set with err != SG_E_OK: the request was framed but its
 * path or query string failed percent-decoding (http/common/percent.h); err is answered
 * and the connection stays usable. */
typedef void (*sg__h1_handler)(void *ctx, sg__h1_conn *c, const sg__h1_req *req, sg_err err);

struct sg__h1_conn {
  http_parser parser;
  sg__h1_handler handler;
  void *ctx;
  sg_buf out;       /* answers waiting to be written */
  size_t out_sent;  /* bytes of out already written */
  bool close;       /* close once out is written (error, Connection: close, HTTP/1.0) */
  bool failed;      /* a framing error was answered: feed nothing more */
  bool paused;      /* parsing stopped at SG__H1_OUT_PAUSE; resumed by sg__h1_drained */
  bool in_message;  /* between message begin and complete */
  bool in_headers;  /* before headers complete */
  bool keep_alive;  /* of the request being answered */
  unsigned status;  /* status of the answer being written (sg__h1_status) */
  size_t len;       /* bytes in buf */
  size_t parsed;    /* bytes of buf given to the parser */
  size_t msg_start; /* offset of the current request in buf */
  /* Offsets into buf of the current request's pieces (relative to buf). */
  size_t url_off, url_len;
  size_t hf_off, hf_len, hv_off, hv_len; /* header field/value being collected */
  int hlast;                             /* which of them the parser gave last */
  sg_err pending;                        /* error found inside a parser callback */
  size_t hdr_off[SG__H1_HDRS], hdr_len[SG__H1_HDRS];
  bool hdr_set[SG__H1_HDRS];
  unsigned hosts; /* Host header lines of the current request */
  size_t body_off, body_len;
  size_t fast;     /* requests framed without the parser (http1.c, fast_request) */
  char peer[48];   /* the peer's address as text, for the access log ("" when unknown) */
  bool peer_proxy; /* the peer is a --trusted-proxies proxy: its headers name the client */
  sg_ip peer_ip;
  char buf[SG__H1_HEAD_MAX + SG__H1_BODY_MAX + 64];
};

void sg__h1_init(sg__h1_conn *c, sg__h1_handler handler, void *ctx);
void sg__h1_free(sg__h1_conn *c);
/* Where to read next and how many bytes fit (0: do not read now — paused or failed). */
char *sg__h1_rbuf(sg__h1_conn *c, size_t *room);
/* Processes n bytes just read into sg__h1_rbuf (n == 0 is allowed and does nothing). */
void sg__h1_feed(sg__h1_conn *c, size_t n);
/* The server wrote all of out: resets it and resumes a paused parse (may answer more). */
void sg__h1_drained(sg__h1_conn *c);
/* True when out holds bytes not yet written. */
static inline bool sg__h1_pending(const sg__h1_conn *c) { return c->out_sent < c->out.len; }

/* Writing an answer, from the handler: status, then any headers, then finish. finish
 * adds Content-Length, Date and Connection as needed, and the body unless the request
 * was HEAD or the status is 204 or 304. req may be NULL (framing errors). */
void sg__h1_status(sg__h1_conn *c, unsigned status);
void sg__h1_header(sg__h1_conn *c, const char *name, const char *value);
void sg__h1_header_n(sg__h1_conn *c, const char *name, const char *value, size_t n);
void sg__h1_finish(sg__h1_conn *c, const sg__h1_req *req, const char *body, size_t len);

/* The decoded value of the first query argument called name, or NULL. */
const char *sg__h1_arg_get(const sg__h1_req *req, const char *name, size_t *len);

#endif
