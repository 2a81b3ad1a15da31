/*
 * HTTP/1.1 framing for the runtime listener (see http1.h for the contract).
 *
 * libhttp-parser does the grammar; this file keeps the request's bytes in c->buf and
 * remembers where its pieces are, as offsets:
 * - the URL and the header values stay where they arrived and are NUL-terminated in place
 *   once the parser has gone past them (the byte after each is a CR or a space the parser
 *   no longer reads);
 * - body bytes are moved down over the chunk framing as they arrive, starting one byte
 *   early (over the LF that ends the headers), so the body is contiguous and there is
 *   always a parsed byte after it for its NUL;
 * - after each feed, bytes nobody needs any more (finished requests, the method token,
 *   chunk framing) are dropped by moving the rest to the front.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "runtime/http/http1.h"

#include "common/util.h"
#include "http/common/percent.h"

#define UNSET SIZE_MAX

/* Headers before H_FIRST_LAST keep their first occurrence; Forwarded and X-Forwarded-For
 * their last, the line a proxy in front of us appended (http/common/forwarded.h). */
enum { H_ORIGIN, H_XRID, H_AUTH, H_INM, H_EXPECT, H_FWD, H_XFF, H__N };
#define H_FIRST_LAST H_FWD
_Static_assert(H__N == SG__H1_HDRS, "sg__h1_conn keeps one slot per header");
enum { LAST_NONE, LAST_FIELD, LAST_VALUE }; /* what the parser gave last in a header */

static const struct {
  const char *name;
  size_t len;
} hdr_names[H__N] = {
    [H_ORIGIN] = {"origin", 6},        [H_XRID] = {"x-request-id", 12},
    [H_AUTH] = {"authorization", 13},  [H_INM] = {"if-none-match", 13},
    [H_EXPECT] = {"expect", 6},        [H_FWD] = {"forwarded", 9},
    [H_XFF] = {"x-forwarded-for", 15},
};

/* ================================================================ output ========= */

/* Inline while the buffer has room (every answer after a connection's first): an answer
 * is some 25 pieces, and a call per piece was ~8% of a cached query's instructions. */
static inline void put(sg__h1_conn *c, const char *p, size_t n) {
  sg_buf *b = &c->out;
  if (n < b->cap - b->len && n <= b->limit - b->len) { /* n bytes and the NUL fit */
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return;
  }
  if (sg_buf_append(b, p, n)) c->failed = c->close = true; /* over SG__H1_OUT_LIMIT */
}

static const char *reason(unsigned status) {
  switch (status) {
  case 100: return "Continue";
  case 200: return "OK";
  case 204: return "No Content";
  case 304: return "Not Modified";
  case 400: return "Bad Request";
  case 401: return "Unauthorized";
  case 403: return "Forbidden";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 409: return "Conflict";
  case 413: return "Content Too Large";
  case 429: return "Too Many Requests";
  case 431: return "Request Header Fields Too Large";
  case 500: return "Internal Server Error";
  case 503: return "Service Unavailable";
  default: return "Unknown";
  }
}

void sg__h1_status(sg__h1_conn *c, unsigned status) {
  if (status < 100 || status > 999) status = 500;
  char line[64] = "HTTP/1.1 ";
  line[9] = (char)('0' + status / 100);
  line[10] = (char)('0' + status / 10 % 10);
  line[11] = (char)('0' + status % 10);
  line[12] = ' ';
  const char *r = reason(status);
  size_t rl = strlen(r);
  memcpy(line + 13, r, rl);
  memcpy(line + 13 + rl, "\r\n", 2);
  c->status = status;
  put(c, line, 15 + rl);
}

void sg__h1_header_n(sg__h1_conn *c, const char *name, const char *value, size_t n) {
  size_t nl = strlen(name);
  sg_buf *b = &c->out;
  if (nl < 256 && n < b->cap - b->len && nl + n + 4 < b->cap - b->len &&
      nl + n + 4 <= b->limit - b->len) { /* the line and the NUL fit: one check, four copies */
    char *o = b->data + b->len;
    memcpy(o, name, nl);
    o += nl;
    memcpy(o, ": ", 2);
    memcpy(o + 2, value, n);
    o += 2 + n;
    memcpy(o, "\r\n", 3);
    b->len += nl + n + 4;
    return;
  }
  put(c, name, nl);
  put(c, ": ", 2);
  put(c, value, n);
  put(c, "\r\n", 2);
}

void sg__h1_header(sg__h1_conn *c, const char *name, const char *value) {
  sg__h1_header_n(c, name, value, strlen(value));
}

/* "Date: <IMF-fixdate>\r\n", formatted once a second per thread. */
static const char *date_line(size_t *len) {
  static _Thread_local time_t last = -1;
  static _Thread_local char line[64];
  static _Thread_local size_t n;
  time_t now = time(NULL);
  if (now != last) {
    struct tm tm;
    gmtime_r(&now, &tm);
    n = strftime(line, sizeof line, "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &tm);
    last = now;
  }
  *len = n;
  return line;
}

void sg__h1_finish(sg__h1_conn *c, const sg__h1_req *req, const char *body, size_t len) {
  bool bodyless = c->status == 204 || c->status == 304 || c->status < 200;
  char tail[128];
  size_t n = 0;
  if (!bodyless) {
    memcpy(tail, "Content-Length: ", 16);
    n = 16 + sg_udec(len, tail + 16);
    memcpy(tail + n, "\r\n", 2);
    n += 2;
  }
  put(c, tail, n);
  size_t dl;
  const char *d = date_line(&dl);
  put(c, d, dl);
  if (c->close || !c->keep_alive)
    put(c, "Connection: close\r\n\r\n", 21);
  else if (req && req->http_minor == 0)
    put(c, "Connection: keep-alive\r\n\r\n", 26);
  else
    put(c, "\r\n", 2);
  if (!bodyless && !(req && req->head) && len) put(c, body, len);
}

/* ================================================================ parsing ======== */

static sg__h1_conn *C(http_parser *p) { return p->data; }
static size_t off_of(sg__h1_conn *c, const char *at) { return (size_t)(at - c->buf); }

/* A request begins: nothing of it seen yet (the parser's callback, and fast_request). */
static void begin_message(sg__h1_conn *c) {
  c->in_message = c->in_headers = true;
  c->hosts = 0;
  c->url_off = c->hf_off = c->hv_off = c->body_off = UNSET;
  c->url_len = c->hf_len = c->hv_len = c->body_len = 0;
  c->hlast = LAST_NONE;
  c->pending = SG_E_OK;
  memset(c->hdr_set, 0, sizeof c->hdr_set);
}

static int on_message_begin(http_parser *p) {
  begin_message(C(p));
  /* The parser keeps the version of the message before until it reads this one's (one
   * digit each), so a read that ends inside "HTTP/0." after an HTTP/1.9 request would
   * look like HTTP/0.9 to run()'s check and be refused early, while the same bytes in one
   * read are not: found by fuzz_http1. Cleared, 0.9 is only what was read. */
  p->http_major = 0;
  p->http_minor = 0;
  return 0;
}

static int on_url(http_parser *p, const char *at, size_t len) {
  sg__h1_conn *c = C(p);
  size_t off = off_of(c, at);
  if (c->url_off == UNSET) c->url_off = off;
  c->url_len = off + len - c->url_off; /* pieces of one URL are contiguous in buf */
  return 0;
}

/* ---------------------------------------------------------------- strictness ---- */
/* libhttp-parser (built lenient, as Debian ships it) lets a space into a header name, so
 * "Content-Length : 36" frames a body and "Transfer-Encoding : chunked" a chunked one
 * where a proxy in front may have seen neither; it takes a header without Host and an
 * HTTP/0.9 request line. RFC 9112 answers each with 400, and so do these checks. */

/* RFC 9110 §5.6.2: tchar. */
static bool is_tchar(unsigned char ch) {
  if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) return true;
  return ch && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

/* RFC 9112 §3.2 / RFC 3986: Host = uri-host [":" port], uri-host an IP literal in
 * brackets, an IPv4 address or a reg-name (unreserved, pct-encoded, sub-delims). The
 * value may be empty. The bytes allowed are checked, not the full grammar: enough to
 * refuse spaces, controls, '/', '@' and other bytes no host name holds. */
static bool host_ok(const char *v, size_t n) {
  /* Bit c of the 128-bit set: letters, digits and -._~%!$&'()*+,;=:[] (tested in
   * test_http1.c against that list). */
  static const uint64_t allowed[2] = {0x2fff7ff200000000ull, 0x47fffffeaffffffeull};
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)v[i];
    if (ch >= 128 || !(allowed[ch >> 6] >> (ch & 63) & 1)) return false;
  }
  return true;
}

/* A header is complete: keep it when it is the first of a name the runtime reads, and
 * count and check a Host. Returns -1 when a kept value holds a control character (it
 * could be echoed) or a Host value is not a host. */
static int end_header(sg__h1_conn *c) {
  if (c->hlast == LAST_NONE) return 0;
  const char *f = c->buf + c->hf_off;
  bool has_value = c->hlast == LAST_VALUE && c->hv_len > 0;
  c->hlast = LAST_NONE;
  if (c->hf_len == 4 && strncasecmp(f, "host", 4) == 0) {
    c->hosts++;
    size_t n = has_value ? c->hv_len : 0;
    while (n && (c->buf[c->hv_off + n - 1] == ' ' || c->buf[c->hv_off + n - 1] == '\t')) n--;
    if (!host_ok(c->buf + c->hv_off, n)) {
      c->pending = SG_E_INVALID_REQUEST;
      return -1;
    }
  }
  for (int i = 0; i < H__N; i++) {
    if (c->hf_len != hdr_names[i].len || strncasecmp(f, hdr_names[i].name, c->hf_len) != 0)
      continue;
    if (i < H_FIRST_LAST && c->hdr_set[i]) break; /* the first line counts */
    c->hdr_set[i] = true;
    /* An empty value is UNSET: with bare-LF line ends the parser reports it at the head's
     * last byte, which the body may be moved onto — no NUL is ever written there. */
    c->hdr_off[i] = has_value ? c->hv_off : UNSET;
    c->hdr_len[i] = has_value ? c->hv_len : 0;
    for (size_t j = 0; has_value && j < c->hv_len; j++) {
      unsigned char ch = (unsigned char)c->buf[c->hv_off + j];
      if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
        c->pending = SG_E_INVALID_REQUEST;
        return -1;
      }
    }
    break;
  }
  return 0;
}

static int on_header_field(http_parser *p, const char *at, size_t len) {
  sg__h1_conn *c = C(p);
  /* Every byte of a name (also a trailer's) is a token character: the parser's lenient
   * build passes a space, before the colon or inside the name. */
  for (size_t i = 0; i < len; i++)
    if (!is_tchar((unsigned char)at[i])) {
      c->pending = SG_E_INVALID_REQUEST;
      return -1;
    }
  if (!c->in_headers) return 0; /* a trailer after a chunked body: never a header */
  size_t off = off_of(c, at);
  if (c->hlast == LAST_FIELD && off == c->hf_off + c->hf_len) {
    c->hf_len += len; /* the same name, continued in the next read */
    return 0;
  }
  if (end_header(c)) return -1;
  c->hf_off = off;
  c->hf_len = len;
  c->hlast = LAST_FIELD;
  return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t len) {
  sg__h1_conn *c = C(p);
  if (!c->in_headers) return 0;
  size_t off = off_of(c, at);
  if (c->hlast == LAST_FIELD) {
    c->hv_off = off;
    c->hv_len = len;
  } else if (off == c->hv_off + c->hv_len) {
    c->hv_len += len; /* the same value, continued in the next read */
  } else {
    c->pending = SG_E_INVALID_REQUEST; /* obs-fold (RFC 9112 §5.2): refused */
    return -1;
  }
  c->hlast = LAST_VALUE;
  return 0;
}

static int on_headers_complete(http_parser *p) {
  sg__h1_conn *c = C(p);
  if (end_header(c)) return -1;
  /* HTTP/1.x only; an HTTP/1.1 request names exactly one Host, any request at most one
   * (RFC 9112 §3.2). */
  if (p->http_major != 1 || c->hosts > 1 || (p->http_minor >= 1 && c->hosts == 0)) {
    c->pending = SG_E_INVALID_REQUEST;
    return -1;
  }
  c->in_headers = false;
  c->keep_alive = http_should_keep_alive(p) != 0;
  bool has_len = (p->flags & F_CONTENTLENGTH) != 0;
  if (has_len && p->content_length > SG__H1_BODY_MAX) {
    c->pending = SG_E_PAYLOAD_TOO_LARGE;
    return -1;
  }
  bool body = (has_len && p->content_length > 0) || (p->flags & F_CHUNKED);
  if (body && c->hdr_set[H_EXPECT] && p->http_major == 1 && p->http_minor >= 1 &&
      c->hdr_len[H_EXPECT] == 12 &&
      strncasecmp(c->buf + c->hdr_off[H_EXPECT], "100-continue", 12) == 0)
    put(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
  return 0;
}

static int on_body(http_parser *p, const char *at, size_t len) {
  sg__h1_conn *c = C(p);
  if (c->body_off == UNSET) c->body_off = off_of(c, at) - 1; /* over the headers' final LF */
  if (len > SG__H1_BODY_MAX - c->body_len) {
    c->pending = SG_E_PAYLOAD_TOO_LARGE;
    return -1;
  }
  memmove(c->buf + c->body_off + c->body_len, at, len);
  c->body_len += len;
  return 0;
}

/* Splits and percent-decodes the query in place (http/common/percent.h). Every argument
 * is decoded, also those past SG__H1_MAX_ARGS, so a malformed escape is refused wherever
 * it sits, as the control listener does. Returns SG_E_OK or the decoder's error. */
static sg_err parse_query(sg__h1_req *r, char *q, size_t n) {
  r->n_args = 0;
  size_t i = 0;
  while (i < n) {
    size_t start = i;
    const char *amp = memchr(q + i, '&', n - i);
    i = amp ? (size_t)(amp - q) : n;
    size_t end = i++; /* [start, end) is one argument */
    if (end == start) continue;
    char *eq = memchr(q + start, '=', end - start);
    char *name = q + start;
    size_t name_raw = eq ? (size_t)(eq - name) : end - start, name_len, value_len = 0;
    size_t value_raw = eq ? (size_t)(q + end - (eq + 1)) : 0;
    if (sg_http_percent_decode(name, name_raw, SG_HTTP_PCT_QUERY, name, name_raw, &name_len) ||
        (eq && sg_http_percent_decode(eq + 1, value_raw, SG_HTTP_PCT_QUERY, eq + 1, value_raw,
                                      &value_len)))
      return SG_E_INVALID_REQUEST;
    if (r->n_args == SG__H1_MAX_ARGS) continue;
    sg__h1_arg *a = &r->args[r->n_args++];
    name[name_len] = '\0';
    a->name = name;
    a->name_len = name_len;
    if (eq) {
      eq[1 + value_len] = '\0';
      a->value = eq + 1;
      a->value_len = value_len;
    } else {
      a->value = NULL;
      a->value_len = 0;
    }
  }
  return SG_E_OK;
}

/* A request is complete: hands it to the handler (method, HTTP/1.<minor>, whether the
 * connection may stay open), then pauses p when the connection closes or too many
 * answers wait. Shared by the parser's callback and fast_request. */
static void deliver(sg__h1_conn *c, http_parser *p, enum http_method method, int minor,
                    bool keep_alive) {
  sg__h1_req r;
  memset(&r, 0, offsetof(sg__h1_req, args));
  r.method = http_method_str(method);
  r.head = method == HTTP_HEAD;
  r.http_minor = minor;
  /* URL: path and query, decoded in place. The URL always has at least one byte. */
  char *url = c->url_off == UNSET ? NULL : c->buf + c->url_off;
  size_t ul = url ? c->url_len : 0;
  sg_err url_err = SG_E_OK; /* a malformed escape: answered 400 by the handler */
  r.n_args = 0;
  if (url) {
    url[ul] = '\0';
    char *qm = memchr(url, '?', ul);
    size_t pl = qm ? (size_t)(qm - url) : ul;
    size_t dl = 0;
    url_err = sg_http_percent_decode(url, pl, SG_HTTP_PCT_PATH, url, pl, &dl);
    url[dl] = '\0';
    r.path = url_err ? "-" : url; /* a half-decoded path is nothing to log */
    if (qm && !url_err) url_err = parse_query(&r, qm + 1, ul - pl - 1);
  } else {
    r.path = "";
  }
  sg__h1_str *slots[H__N] = {&r.origin,    &r.xrid, &r.authorization, &r.if_none_match, &r.expect,
                             &r.forwarded, &r.xff};
  for (int i = 0; i < H__N; i++) {
    if (!c->hdr_set[i]) continue;
    if (c->hdr_off[i] == UNSET) {
      slots[i]->p = "";
      slots[i]->n = 0;
      continue;
    }
    char *v = c->buf + c->hdr_off[i];
    size_t n = c->hdr_len[i];
    while (n && (v[n - 1] == ' ' || v[n - 1] == '\t')) n--;
    v[n] = '\0';
    slots[i]->p = v;
    slots[i]->n = n;
  }
  if (c->body_off != UNSET) {
    c->buf[c->body_off + c->body_len] = '\0';
    r.body = c->buf + c->body_off;
    r.body_len = c->body_len;
  } else {
    r.body = "";
    r.body_len = 0;
  }
  c->keep_alive = keep_alive;
  if (!c->keep_alive) c->close = true;
  c->handler(c->ctx, c, &r, url_err);
  c->in_message = false;
  c->url_off = UNSET;
  c->body_off = UNSET;
  if (c->close || c->out.len - c->out_sent > SG__H1_OUT_PAUSE) {
    if (!c->close) c->paused = true;
    http_parser_pause(p, 1);
  }
}

static int on_message_complete(http_parser *p) {
  deliver(C(p), p, (enum http_method)p->method, p->http_minor,
          http_should_keep_alive(p) != 0 && !p->upgrade);
  return 0;
}

static const http_parser_settings settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/* ================================================================ fast path ====== */

/* The common request, framed here without libhttp-parser (whose byte-at-a-time state
 * machine was a quarter of a cached query's instructions): a complete head in the buffer
 * of at most FAST_HEAD_MAX bytes, "GET " or "HEAD ", a URL of '/' and visible ASCII
 * without '#', " HTTP/1.1" and CRLF line ends, header names of token characters, values
 * of visible ASCII, spaces and tabs, no header name starting with one of those that
 * frame a body or change the connection (Content-Length, Transfer-Encoding, Connection,
 * Proxy-Connection, Upgrade, Expect), and one Host. Each header goes through end_header
 * as the parser's callbacks send it, and the request through deliver, so the handler sees
 * what the parser would have given it. Anything else — other methods and versions,
 * obs-fold, bare LF, a byte the parser treats specially, an incomplete head — is left to
 * the parser from its first byte. Only tried between requests (the parser then sits at
 * the start of a message, and a request it had begun stays with it). Returns the bytes
 * of the request, 0 when it is left to the parser. */
#define FAST_HEAD_MAX 8192

/* True when the header name n[0..len) starts with lower, ignoring case: libhttp-parser
 * flags Transfer-Encoding as soon as a name starts with it ("Transfer-EncodingX" too), so
 * a prefix, not only the name, leaves a request to it. */
static bool name_starts(const char *n, size_t len, const char *lower) {
  size_t l = strlen(lower);
  return len >= l && strncasecmp(n, lower, l) == 0;
}

static size_t fast_request(sg__h1_conn *c) {
  const char *b = c->buf + c->parsed;
  size_t avail = c->len - c->parsed, i;
  if (avail > FAST_HEAD_MAX) avail = FAST_HEAD_MAX;
  enum http_method m;
  if (avail >= 4 && memcmp(b, "GET ", 4) == 0) {
    m = HTTP_GET;
    i = 4;
  } else if (avail >= 5 && memcmp(b, "HEAD ", 5) == 0) {
    m = HTTP_HEAD;
    i = 5;
  } else {
    return 0;
  }
  size_t url = i;
  if (i >= avail || b[i] != '/') return 0;
  for (; avail - i >= 8; i += 8) { /* the target: 0x21..0x7e but '#', eight bytes a step */
    uint64_t w;
    memcpy(&w, b + i, 8);
    if (sg_swar_below(w, 0x21) | sg_swar_high(w) | sg_swar_eq(w, 0x7f) | sg_swar_eq(w, '#')) break;
  }
  while (i < avail && b[i] > 0x20 && b[i] < 0x7f && b[i] != '#') i++;
  size_t url_len = i - url;
  if (avail - i < 11 || memcmp(b + i, " HTTP/1.1\r\n", 11) != 0) return 0;
  i += 11;
  /* on_message_begin's state, then header by header as the callbacks would leave it */
  begin_message(c);
  for (;;) {
    if (avail - i < 2) goto parser;
    if (b[i] == '\r') {
      if (b[i + 1] != '\n') goto parser;
      i += 2;
      break;
    }
    size_t name = i;
    while (i < avail && is_tchar((unsigned char)b[i])) i++;
    size_t name_len = i - name;
    if (!name_len || i >= avail || b[i] != ':') goto parser;
    i++;
    while (i < avail && (b[i] == ' ' || b[i] == '\t')) i++;
    size_t value = i;
    while (i < avail && ((b[i] >= 0x20 && b[i] < 0x7f) || b[i] == '\t')) i++;
    if (avail - i < 2 || b[i] != '\r' || b[i + 1] != '\n') goto parser;
    const char *n = b + name;
    if (name_starts(n, name_len, "content-length") ||
        name_starts(n, name_len, "transfer-encoding") || name_starts(n, name_len, "connection") ||
        name_starts(n, name_len, "proxy-connection") || name_starts(n, name_len, "upgrade") ||
        name_starts(n, name_len, "expect"))
      goto parser;
    c->hf_off = c->parsed + name;
    c->hf_len = name_len;
    c->hlast = LAST_FIELD;
    if (i > value) {
      c->hv_off = c->parsed + value;
      c->hv_len = i - value;
      c->hlast = LAST_VALUE;
    }
    if (end_header(c)) goto parser; /* the parser answers it, the same way */
    i += 2;
  }
  if (c->hosts != 1) goto parser;
  c->in_headers = false;
  c->url_off = c->parsed + url;
  c->url_len = url_len;
  c->fast++;
  deliver(c, &c->parser, m, 1, true);
  return i;
parser:
  c->in_message = c->in_headers = false;
  c->pending = SG_E_OK;
  return 0;
}

/* ================================================================ connection ===== */

/* The parser counts the bytes of each request line + headers itself, the same however
 * they arrive, and fails with HPE_HEADER_OVERFLOW (431) past this limit. The setting is
 * process-wide in libhttp-parser; only this file uses the library. */
static pthread_once_t limit_once = PTHREAD_ONCE_INIT;
static void set_limit(void) { http_parser_set_max_header_size(SG__H1_HEAD_MAX); }

void sg__h1_init(sg__h1_conn *c, sg__h1_handler handler, void *ctx) {
  pthread_once(&limit_once, set_limit);
  memset(c, 0, offsetof(sg__h1_conn, buf));
  http_parser_init(&c->parser, HTTP_REQUEST);
  c->parser.data = c;
  c->handler = handler;
  c->ctx = ctx;
  c->url_off = c->body_off = c->hf_off = c->hv_off = UNSET;
  c->keep_alive = true;
  sg_buf_init(&c->out, SG__H1_OUT_LIMIT);
}

void sg__h1_free(sg__h1_conn *c) { sg_buf_free(&c->out); }

static void fail(sg__h1_conn *c, sg_err e) {
  if (c->failed) return;
  c->failed = c->close = true;
  c->keep_alive = false;
  c->handler(c->ctx, c, NULL, e);
}

char *sg__h1_rbuf(sg__h1_conn *c, size_t *room) {
  *room = c->failed || c->paused || c->close ? 0 : sizeof c->buf - 1 - c->len;
  return c->buf + c->len;
}

/* Drops bytes no longer needed: everything before the current request's URL (or before
 * the unparsed bytes when no request is under way), and the chunk framing already
 * consumed after the body. Offsets move with the bytes. */
static void compact(sg__h1_conn *c) {
  if (c->in_message && !c->in_headers && c->body_off != UNSET) {
    size_t keep_to = c->body_off + c->body_len + 1; /* +1: room for the body's NUL */
    if (c->parsed > keep_to) {
      memmove(c->buf + keep_to, c->buf + c->parsed, c->len - c->parsed);
      c->len -= c->parsed - keep_to;
      c->parsed = keep_to;
    }
  }
  size_t keep = c->in_message && c->url_off != UNSET ? c->url_off : c->parsed;
  if (!keep) return;
  memmove(c->buf, c->buf + keep, c->len - keep);
  c->len -= keep;
  c->parsed -= keep;
  if (!c->in_message) return;
  size_t *offs[] = {&c->url_off, &c->hf_off, &c->hv_off, &c->body_off};
  for (size_t i = 0; i < sizeof offs / sizeof *offs; i++)
    if (*offs[i] != UNSET) *offs[i] -= keep;
  for (int i = 0; i < H__N; i++)
    if (c->hdr_set[i] && c->hdr_off[i] != UNSET) c->hdr_off[i] -= keep;
}

static void run(sg__h1_conn *c) {
  while (!c->failed && !c->paused && !c->close && c->parsed < c->len) {
    if (!c->in_message) {
      size_t used = fast_request(c);
      if (used) {
        c->parsed += used;
        continue;
      }
    }
    size_t want = c->len - c->parsed;
    size_t n = http_parser_execute(&c->parser, &settings, c->buf + c->parsed, want);
    c->parsed += n;
    enum http_errno e = HTTP_PARSER_ERRNO(&c->parser);
    if (e == HPE_PAUSED) break; /* closing or output-paused; resumed by sg__h1_drained */
    if (e != HPE_OK) {
      sg_err err = c->pending != SG_E_OK      ? c->pending
                   : e == HPE_HEADER_OVERFLOW ? SG_E_HEADERS_TOO_LARGE
                                              : SG_E_INVALID_REQUEST;
      fail(c, err);
      return;
    }
    /* An HTTP/0.9 request line ("GET /path" and a line end) has no headers, so it would
     * wait for a blank line that such a client never sends: refused as soon as the
     * parser has read it (it sets the version 0.9 then). */
    if (c->in_message && c->in_headers && c->parser.http_major == 0 && c->parser.http_minor == 9) {
      fail(c, SG_E_INVALID_REQUEST);
      return;
    }
    if (c->parser.upgrade) { /* the rest would be another protocol: answered, close */
      c->close = true;
      break;
    }
    if (n != want) {
      fail(c, SG_E_INVALID_REQUEST);
      return;
    }
  }
  if (c->failed) return;
  compact(c);
  if (c->len >= sizeof c->buf - 1 && !c->paused && !c->close) {
    /* Full and still inside one request: its head, or chunk framing around a body. */
    fail(c, c->in_headers ? SG_E_HEADERS_TOO_LARGE : SG_E_PAYLOAD_TOO_LARGE);
  }
}

void sg__h1_feed(sg__h1_conn *c, size_t n) {
  if (c->failed || c->close) return;
  if (n > sizeof c->buf - 1 - c->len) n = sizeof c->buf - 1 - c->len;
  c->len += n;
  run(c);
}

void sg__h1_drained(sg__h1_conn *c) {
  c->out_sent = 0;
  if (c->out.cap > 4 * SG__H1_OUT_PAUSE) {
    sg_buf_free(&c->out); /* a burst of pipelined answers: give the memory back */
    sg_buf_init(&c->out, SG__H1_OUT_LIMIT);
  } else {
    sg_buf_reset(&c->out);
  }
  if (c->paused && !c->failed && !c->close) {
    c->paused = false;
    http_parser_pause(&c->parser, 0);
    run(c);
  }
}

const char *sg__h1_arg_get(const sg__h1_req *req, const char *name, size_t *len) {
  size_t nl = strlen(name);
  for (size_t i = 0; i < req->n_args; i++) {
    const sg__h1_arg *a = &req->args[i];
    if (a->name_len == nl && memcmp(a->name, name, nl) == 0) {
      if (!a->value) break;
      if (len) *len = a->value_len;
      return a->value;
    }
  }
  if (len) *len = 0;
  return NULL;
}
