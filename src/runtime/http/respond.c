/*
 * The runtime's responses: the common headers of every answer, the error body, its
 * access-log line and metrics, and the checks shared by the handlers (publishable key,
 * If-None-Match). See loop.c for why the runtime has its own HTTP server.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/metrics.h"
#include "common/util.h"
#include "runtime/server.h"

static _Thread_local char tl_scratch[SG__RT_SCRATCH];

char *sg__rt_scratch(void) { return tl_scratch; }

int64_t sg__rt_now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Appends at most cap bytes of s, replacing what JSON would need to escape (the path is
 * client input, percent-decoded) so a log line stays one valid object. Runs of bytes that
 * need nothing (0x20..0x7e but '"' and '\\') are copied whole, found eight at a time. */
static bool log_safe(unsigned char c) {
  return (unsigned char)(c - 0x20) < 0x5f && c != '"' && c != '\\';
}

static char *put_safe(char *o, const char *s, size_t cap) {
  size_t n = strnlen(s, cap), i = 0;
  for (;;) {
    size_t run = i;
    for (; n - run >= 8; run += 8) {
      uint64_t w;
      memcpy(&w, s + run, 8);
      if (sg_swar_below(w, 0x20) | sg_swar_high(w) | sg_swar_eq(w, 0x7f) | sg_swar_eq(w, '"') |
          sg_swar_eq(w, '\\'))
        break;
    }
    while (run < n && log_safe((unsigned char)s[run])) run++;
    memcpy(o, s + i, run - i);
    o += run - i;
    if (run == n) return o;
    *o++ = '?';
    i = run + 1;
  }
}

/* A string literal, its length known at compile time. */
#define PUT_LIT(o, lit) (memcpy((o), (lit), sizeof(lit) - 1), (o) + sizeof(lit) - 1)

/* v in decimal (a negative v, which a clock step could give a duration, as 0). */
static char *put_int(char *o, int64_t v) { return o + sg_udec(v < 0 ? 0 : (uint64_t)v, o); }

/* The wall clock in ms as decimal text, formatted again only when the ms changes (a
 * busy worker logs tens of lines per ms). */
static char *put_ts(char *o) {
  static _Thread_local int64_t last = -1;
  static _Thread_local char text[24];
  static _Thread_local size_t len;
  int64_t now = sg_now_ms();
  if (now != last) {
    len = sg_udec(now < 0 ? 0 : (uint64_t)now, text);
    last = now;
  }
  memcpy(o, text, len);
  return o + len;
}

/* Counts the answer in the metrics (per-thread counters: no lock, no allocation) and
 * writes its access-log line: {"ts":…,"level":"info","msg":"access","listener":"runtime",
 * "method":"…","route":"…","path":"…","status":…,"durationUs":…,"requestId":"…",
 * "clientIp":"…"}, the control listener's field names (clientIp is the peer, or from a
 * --trusted-proxies peer the client its Forwarded / X-Forwarded-For name: the runtime
 * keys nothing else on client addresses). Formatted by
 * hand (snprintf was ~2% of the runtime's CPU under load). At most 16 + 40 + 160 + 128 +
 * 47 bytes of variable text, inside the line. */
void sg__rt_access_log(const sg__rt_req *r) {
  int64_t us = sg__rt_now_us() - r->t0_us;
  sg_metrics_http(r->route, r->status, us);
  if (!r->rt->cfg.access_log) return;
  char line[640], *o = line;
  o = put_ts(PUT_LIT(o, "{\"ts\":"));
  o = PUT_LIT(o, ",\"level\":\"info\",\"msg\":\"access\",\"listener\":\"runtime\"");
  o = put_safe(PUT_LIT(o, ",\"method\":\""), r->method, 15);
  o = put_safe(PUT_LIT(o, "\",\"route\":\""), sg_metrics_route_label(r->route), 40);
  o = put_safe(PUT_LIT(o, "\",\"path\":\""), r->path, 159);
  o = put_int(PUT_LIT(o, "\",\"status\":"), r->status);
  o = put_int(PUT_LIT(o, ",\"durationUs\":"), us);
  o = put_safe(PUT_LIT(o, ",\"requestId\":\""), r->xrid, 128);
  if (r->client[0])
    o = put_safe(PUT_LIT(o, "\",\"clientIp\":\""), r->client, 47);
  else if (r->c && r->c->peer[0])
    o = put_safe(PUT_LIT(o, "\",\"clientIp\":\""), r->c->peer, 47);
  o = PUT_LIT(o, "\"}\n");
  sg__rt_log_line(line, (size_t)(o - line));
}

void sg__rt_respond(sg__rt_req *r, unsigned status, const char *body, size_t len,
                    const sg__rt_hdrs *h) {
  static const sg__rt_hdrs none = {0};
  if (!h) h = &none;
  sg__h1_conn *c = r->c;
  sg__h1_status(c, status);
  if (len || status != 304) sg__h1_header_n(c, "Content-Type", "application/json", 16);
  sg__h1_header(c, "x-request-id", r->xrid);
  sg__h1_header(c, "Cache-Control", h->cache_control ? h->cache_control : "no-store");
  if (h->etag) sg__h1_header(c, "ETag", h->etag);
  if (h->retry_after > 0) {
    char ra[16];
    snprintf(ra, sizeof ra, "%d", h->retry_after);
    sg__h1_header(c, "Retry-After", ra);
  }
  if (h->www_authenticate) sg__h1_header_n(c, "WWW-Authenticate", "Bearer", 6);
  if (h->allow) sg__h1_header(c, "Allow", h->allow);
  if (strncmp(r->path, "/v1/", 4) == 0) {
    sg__h1_header_n(c, "Vary", "Origin", 6);
    if (r->origin && r->cors) {
      sg__h1_header_n(c, "Access-Control-Allow-Origin", r->origin, r->origin_len);
      sg__h1_header(c, "Access-Control-Expose-Headers", "etag, retry-after, x-request-id");
    }
  }
  sg__h1_finish(c, r->req, body, len);
  r->status = status;
  sg__rt_access_log(r);
}

void sg__rt_error(sg__rt_req *r, sg_err e, const char *request_id, const sg__rt_hdrs *h) {
  char rid[SG__REQID_LEN + 1];
  if (!request_id) {
    if (r->xrid_generated) {
      request_id = r->xrid;
    } else {
      sg__reqid_random(rid);
      request_id = rid;
    }
  }
  char body[640], details[96] = "";
  /* A 400 names its field (docs/DESIGN.md §4.1): field names are short constants. */
  if (r->field && strlen(r->field) < 48)
    snprintf(details, sizeof details, ",\"details\":{\"fields\":[\"%s\"]}", r->field);
  int n =
      snprintf(body, sizeof body, "{\"code\":\"%s\",\"message\":\"%s\",\"requestId\":\"%s\"%s}",
               sg_err_code(e), r->message ? r->message : sg__rt_message(e), request_id, details);
  sg__rt_hdrs hh = h ? *h : (sg__rt_hdrs){0};
  if (e == SG_E_INVALID_TOKEN) hh.www_authenticate = true;
  if ((e == SG_E_ARTIFACT_UNAVAILABLE || e == SG_E_UNAVAILABLE) && hh.retry_after <= 0)
    hh.retry_after = 1;
  sg__rt_respond(r, (unsigned)sg_err_status(e), body, (size_t)n, &hh);
}

/* SHA-256 of a publishable key, remembering the last key this thread saw: a runtime
 * thread mostly sees the same few keys (one per site), so this saves a hash per request.
 * Publishable keys are public, so the plain memcmp leaks nothing. */
static void key_digest(const char *key, size_t klen, uint8_t out[32]) {
  static _Thread_local char last[256];
  static _Thread_local size_t last_len;
  static _Thread_local uint8_t last_digest[32];
  if (klen != last_len || memcmp(key, last, klen) != 0) {
    sg_sha256(key, klen, last_digest);
    memcpy(last, key, klen);
    last_len = klen;
  }
  memcpy(out, last_digest, 32);
}

sg_err sg__rt_authorize(sg__rt_req *r, const sg__rt_snapshot *s, const char *key, size_t klen,
                        const sg__rt_key **out) {
  /* An invalid key still gets its typed error readable cross-origin. */
  r->cors = true;
  /* Before the edge store was first read no key is known: "try again", not invalid_key. */
  if (s->unloaded) return SG_E_ARTIFACT_UNAVAILABLE;
  /* Fail closed while the edge is not confirmed current (docs/EDGE.md, "The staleness
   * guard"): a record from an edge that went back could un-hide a private list or revive
   * a revoked key. */
  if (!atomic_load_explicit(&r->rt->edge_verified, memory_order_relaxed)) {
    r->message = "The edge store is not yet confirmed current by the control plane; retry "
                 "shortly.";
    return SG_E_ARTIFACT_UNAVAILABLE;
  }
  if (!key || klen == 0 || klen > 256) {
    r->message = sg__rt_key_hint(key, klen);
    return SG_E_INVALID_KEY;
  }
  key_digest(key, klen, r->key_digest);
  const sg__rt_key *k = sg__snapshot_key(s, r->key_digest);
  if (!k || !k->valid) {
    r->message = sg__rt_key_hint(key, klen);
    return SG_E_INVALID_KEY;
  }
  /* A refused Origin still gets its typed error readable (the header echoes the Origin):
   * otherwise the page sees only a network failure. The key is public, and the 403
   * carries nothing of the list. */
  if (r->origin && !k->any_origin &&
      !sg__origin_allowed(k->origins, k->n_origins, r->origin, r->origin_len))
    return SG_E_ORIGIN_NOT_ALLOWED;
  *out = k;
  return SG_E_OK;
}

bool sg__rt_inm_matches(const sg__rt_req *r, const char *etag) {
  const char *inm = r->req ? r->req->if_none_match.p : NULL;
  if (!inm) return false;
  size_t el = strlen(etag);
  for (const char *p = inm; *p;) {
    while (*p == ' ' || *p == ',' || *p == '\t') p++;
    if (*p == '*') return true;
    if (p[0] == 'W' && p[1] == '/') p += 2;
    const char *end = p;
    while (*end && *end != ',') end++;
    const char *te = end;
    while (te > p && (te[-1] == ' ' || te[-1] == '\t')) te--;
    if ((size_t)(te - p) == el && memcmp(p, etag, el) == 0) return true;
    p = end;
  }
  return false;
}
