/* libFuzzer target: the runtime's HTTP/1.1 framing (src/runtime/http1.c) on any bytes.
 *
 * The input after its first 4 bytes is the byte stream a client sends; those 4 bytes give
 * a cycle of read sizes (1..256, or up to 32 KiB with the high bit). A fresh connection is
 * fed the stream read by read, the way loop.c does: into sg__h1_rbuf, never more than
 * its room, writing out and calling sg__h1_drained whenever reading stops while answers
 * wait (and after some reads anyway). The handler answers every request and reads every
 * field of it, including every argument and the body, checking the contract of http1.h.
 * The same stream is then fed in reads as large as the room allows: the requests the
 * handler sees (and the final error) must not depend on how the bytes were split. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/http1.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BIG (96 * 1024)
static char big[BIG];

typedef struct {
  uint64_t digest; /* running hash of every request (and error) the handler saw */
  size_t calls;
  bool errored; /* the handler got req == NULL: it must never be called again */
} run_state;

static void mix(run_state *s, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) s->digest = (s->digest ^ b[i]) * 1099511628211u;
  s->digest = (s->digest ^ n) * 1099511628211u;
}

static void check_str(run_state *s, sg__h1_str v) {
  if (!v.p) {
    if (v.n) __builtin_trap();
    mix(s, "-", 1);
    return;
  }
  if (v.p[v.n] != '\0') __builtin_trap();
  mix(s, v.p, v.n);
}

static void handler(void *ctx, sg__h1_conn *c, const sg__h1_req *req, sg_err err) {
  run_state *s = ctx;
  if (s->errored) __builtin_trap(); /* nothing after a framing error */
  s->calls++;
  if (!req) {
    if (err != SG_E_INVALID_REQUEST && err != SG_E_PAYLOAD_TOO_LARGE &&
        err != SG_E_HEADERS_TOO_LARGE)
      __builtin_trap();
    s->errored = true;
    mix(s, &err, sizeof err);
    char body[64];
    int n = snprintf(body, sizeof body, "{\"code\":%d}", (int)err);
    sg__h1_status(c, (unsigned)sg_err_status(err));
    sg__h1_header(c, "Content-Type", "application/json");
    sg__h1_finish(c, NULL, body, (size_t)n);
    return;
  }
  if (!req->method || !req->path) __builtin_trap();
  mix(s, req->method, strlen(req->method));
  mix(s, req->path, strlen(req->path));
  if (req->head != (strcmp(req->method, "HEAD") == 0)) __builtin_trap();
  if (req->n_args > SG__H1_MAX_ARGS) __builtin_trap();
  mix(s, &req->n_args, sizeof req->n_args);
  for (size_t i = 0; i < req->n_args; i++) {
    const sg__h1_arg *a = &req->args[i];
    if (!a->name || a->name[a->name_len] != '\0') __builtin_trap();
    mix(s, a->name, a->name_len);
    if (a->value) {
      if (a->value[a->value_len] != '\0') __builtin_trap();
      mix(s, a->value, a->value_len);
    } else if (a->value_len) {
      __builtin_trap();
    }
    size_t gl = 0;
    const char *g = sg__h1_arg_get(req, a->name, &gl);
    if (g && g[gl] != '\0') __builtin_trap();
  }
  check_str(s, req->origin);
  check_str(s, req->xrid);
  check_str(s, req->authorization);
  check_str(s, req->if_none_match);
  check_str(s, req->expect);
  if (req->body_len > SG__H1_BODY_MAX) __builtin_trap();
  if (req->body) {
    if (req->body[req->body_len] != '\0') __builtin_trap();
    mix(s, req->body, req->body_len);
  } else if (req->body_len) {
    __builtin_trap();
  }

  /* The answer: its shape depends on the path so every writing branch runs. */
  size_t pl = strlen(req->path);
  unsigned status = 200;
  const char *body = req->path;
  size_t blen = pl;
  if (pl > 1 && req->path[1] == 'b') {
    body = big;
    blen = BIG;
  } else if (pl > 1 && req->path[1] == 'n') {
    status = 304;
  } else if (pl > 1 && req->path[1] == 'o') {
    status = 204;
  } else if (pl > 1 && req->path[1] == 'e') {
    status = 404;
  }
  sg__h1_status(c, status);
  if (req->xrid.p) sg__h1_header_n(c, "x-request-id", req->xrid.p, req->xrid.n);
  sg__h1_header(c, "Content-Type", "text/plain");
  size_t before = c->out.len;
  sg__h1_finish(c, req, body, blen);
  if (c->out.len < before) __builtin_trap();
}

/* Feeds stream[0..n) with the read sizes of sizes[0..4); returns the state. */
static void run(const uint8_t *stream, size_t n, const uint8_t sizes[4], run_state *s) {
  memset(s, 0, sizeof *s);
  sg__h1_conn *c = malloc(sizeof *c);
  if (!c) return;
  sg__h1_init(c, handler, s);
  size_t off = 0, k = 0;
  for (int guard = 0; guard < 1000000; guard++) {
    size_t room = 0;
    char *p = sg__h1_rbuf(c, &room);
    if (c->failed && room) __builtin_trap();
    if (c->paused && room) __builtin_trap();
    if (c->out_sent > c->out.len) __builtin_trap();
    if (room == 0 || off == n) {
      if (!sg__h1_pending(c)) break; /* failed or closed with nothing to write, or done */
      c->out_sent = c->out.len;      /* the server wrote everything */
      sg__h1_drained(c);
      if (c->out_sent != 0) __builtin_trap();
      continue;
    }
    size_t want = sizes ? sizes[k % 4] : SIZE_MAX;
    if (sizes && (sizes[k % 4] & 0x80))
      want = (size_t)(sizes[k % 4] & 0x7f) * 256 + 1;
    else if (sizes)
      want = (size_t)sizes[k % 4] + 1;
    k++;
    if (want > n - off) want = n - off;
    if (want > room) want = room;
    memcpy(p, stream + off, want);
    sg__h1_feed(c, want);
    off += want;
    if (s->errored && (!c->close || !c->failed)) __builtin_trap();
    /* Sometimes the socket is writable between reads: a partial, then a full write. */
    if (sizes && (k & 3) == 1 && sg__h1_pending(c)) {
      c->out_sent += (c->out.len - c->out_sent) / 2;
      if (!sg__h1_pending(c) || (sizes[0] & 1)) {
        c->out_sent = c->out.len;
        sg__h1_drained(c);
      }
    }
  }
  sg__h1_feed(c, 0);
  sg__h1_free(c);
  free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!big[0]) memset(big, 'b', sizeof big);
  if (size < 4) return 0;
  run_state a, b;
  run(data + 4, size - 4, data, &a);
  run(data + 4, size - 4, NULL, &b);
  if (a.calls != b.calls || a.digest != b.digest || a.errored != b.errored) {
    fprintf(stderr, "chunking changed what the handler saw: %zu calls%s vs %zu calls%s\n", a.calls,
            a.errored ? " +error" : "", b.calls, b.errored ? " +error" : "");
    __builtin_trap();
  }
  return 0;
}
