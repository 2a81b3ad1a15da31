/*
 * The control listener's front gate: it accepts connections itself and hands one to
 * libmicrohttpd only once its whole request head (request line and headers) is in.
 *
 * libmicrohttpd cannot be told either bound this gate enforces: its inactivity timeout
 * restarts on every byte, so a client trickling a head one byte at a time holds its
 * connection for ever, and a head larger than its memory pool gets its own HTML 431 page.
 * The gate looks at the head with MSG_PEEK (nothing is consumed, so libmicrohttpd still
 * reads the request from the first byte) and
 * - closes a connection whose head is not complete head_timeout_ms after its accept;
 * - answers a head over head_max bytes or head_max_fields fields itself (the too_large
 *   callback builds the JSON 431), then discards input for a short while and closes
 *   (libmicrohttpd keeps each header and each cookie in its per-connection memory pool,
 *   so many tiny ones would otherwise overflow it and get its HTML 431);
 * - caps the connections open at once, in total and per client IP, counting those it
 *   holds plus those handed over (libmicrohttpd reports them through sg__gate_opened and
 *   sg__gate_closed). A connection over a cap is closed right after its accept.
 */
#ifndef SG_HTTP_GATE_H
#define SG_HTTP_GATE_H

#include <stddef.h>
#include <sys/socket.h>

#include "http/common/forwarded.h"

typedef struct sg__gate sg__gate;

typedef struct {
  int listen_fd;            /* bound and listening; the gate owns it from now on */
  unsigned max_connections; /* open at once, gate and handed over together */
  unsigned max_per_ip;      /* the same per client address; 0: no per-IP cap */
  /* Peers exempt from max_per_ip (--trusted-proxies: a proxy carries many clients'
   * connections); NULL or empty: none. Borrowed for the gate's life. */
  const sg_trusted_proxies *trusted;
  unsigned head_timeout_ms; /* from accept to the end of the head */
  size_t head_max;          /* bytes of request line plus headers */
  size_t head_max_fields;   /* header fields, each cookie of a Cookie field counting one */
  /* Takes over fd (closing it on failure); returns 0 or -1. */
  int (*hand_over)(void *ctx, int fd, const struct sockaddr *sa, socklen_t sl);
  /* Writes a complete HTTP response for a head over head_max into buf; returns its
   * length (0: just close). */
  size_t (*too_large)(void *ctx, char *buf, size_t cap);
  void *ctx;
} sg__gate_config;

/* Starts the gate's thread. Returns 0, or -1 (listen_fd is then still the caller's). */
int sg__gate_start(const sg__gate_config *cfg, sg__gate **out);
/* Stops the thread and closes the listening socket and every connection still held.
 * The counts stay usable (the server reports its connections closing while it stops). */
void sg__gate_stop(sg__gate *g);
/* Stops (if still running) and frees the gate. */
void sg__gate_free(sg__gate *g);

/* A handed-over connection from sa was opened / closed by the HTTP server. */
void sg__gate_opened(sg__gate *g, const struct sockaddr *sa);
void sg__gate_closed(sg__gate *g, const struct sockaddr *sa);

#endif
