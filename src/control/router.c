/*
 * The control listener's one router: /healthz, /readyz and /docs/errors, then the mount
 * (the dashboard, sg_control_mount: every request under its prefix goes to it), then the
 * /api/v1 routes with their middleware: rate limits, secret-key authentication,
 * Idempotency-Key (idempotency.c), then one handler per route. Route matching is
 * http/mhd/route.c, shared with the dashboard's routes.
 *
 * Streaming routes (the NDJSON import) run the same middleware as soon as the request's
 * headers arrive (sg__control_begin), before any body byte is read, then hand the body to
 * the route's stream; their Idempotency-Key decision is taken at the end, over a hash of
 * the body computed as it streamed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bearer.h"
#include "common/util.h"
#include "control/internal.h"
#include "http/mhd/route.h"
#include "store/members.h"

typedef struct {
  const char *method;
  const char *pattern; /* segments; "{}" captures one path parameter */
  sg__handler fn;
  bool idempotent;           /* takes an Idempotency-Key */
  sg__stream_handler stream; /* set instead of fn: the body is streamed */
  const char *action;        /* a write's audit action (the dashboard's names), or NULL */
} route;

static const route routes[] = {
    /* Not idempotent on purpose: a replay would have to persist the bearer token. */
    {"POST", "/api/v1/token", sg__h_token, false, NULL, NULL},
    {"GET", "/api/v1/lists", sg__h_lists_index, false, NULL, NULL},
    {"POST", "/api/v1/lists", sg__h_lists_create, true, NULL, "list.create"},
    {"GET", "/api/v1/lists/{}", sg__h_list_get, false, NULL, NULL},
    {"PATCH", "/api/v1/lists/{}", sg__h_list_patch, false, NULL, "list.update"},
    {"GET", "/api/v1/lists/{}/analytics", sg__h_analytics_get, false, NULL, NULL},
    {"POST", "/api/v1/lists/{}/query-suggestions", sg__h_query_suggestions, true, NULL,
     "list.query_suggestions"},
    {"GET", "/api/v1/lists/{}/items", sg__h_items_index, false, NULL, NULL},
    {"POST", "/api/v1/lists/{}/items", sg__h_items_create, true, NULL, "item.create"},
    /* Before the {itemId} routes, which would otherwise take these two words. */
    {"POST", "/api/v1/lists/{}/items/import", NULL, true, sg__h_items_import, "items.import"},
    {"GET", "/api/v1/lists/{}/items/export", sg__h_items_export, false, NULL, NULL},
    {"GET", "/api/v1/lists/{}/items/{}", sg__h_item_get, false, NULL, NULL},
    {"PATCH", "/api/v1/lists/{}/items/{}", sg__h_item_patch, false, NULL, "item.update"},
    {"DELETE", "/api/v1/lists/{}/items/{}", sg__h_item_delete, false, NULL, "item.delete"},
    {"GET", "/api/v1/lists/{}/synonyms", sg__h_synonyms_get, false, NULL, NULL},
    {"PUT", "/api/v1/lists/{}/synonyms", NULL, false, sg__h_synonyms_put, "synonyms.replace"},
    {"GET", "/api/v1/lists/{}/versions", sg__h_versions_index, false, NULL, NULL},
    {"POST", "/api/v1/lists/{}/versions", sg__h_versions_create, true, NULL, "version.publish"},
    {"GET", "/api/v1/lists/{}/versions/{}", sg__h_version_get, false, NULL, NULL},
    {"POST", "/api/v1/lists/{}/versions/{}/activate", sg__h_version_activate, false, NULL,
     "version.activate"},
    {NULL, NULL, NULL, false, NULL, NULL},
};

/* Parses "Bearer sk_<id>_<secret>" into the key id and the digest of the secret. */
static bool parse_secret_key(const char *auth, char key_id[64], uint8_t digest[32]) {
  const char *k;
  size_t n;
  if (!sg_bearer_token(auth, &k, &n)) return false;
  if (n < 10 || n >= 256 || strncmp(k, "sk_", 3) != 0) return false;
  const char *us = memchr(k + 3, '_', n - 3);
  if (!us || (size_t)(us - k) >= 64 || us + 1 == k + n) return false;
  memcpy(key_id, k, (size_t)(us - k));
  key_id[us - k] = '\0';
  sg_sha256(us + 1, (size_t)(k + n - us - 1), digest);
  return true;
}

/* A message for a credential that is not a secret key at all, naming what was sent
 * instead; NULL (the table's message) for a malformed or unknown secret key. */
static const char *key_hint(const char *auth) {
  if (!auth) return "No secret key was sent: send Authorization: Bearer sk_...";
  const char *k = strncmp(auth, "Bearer ", 7) == 0 ? auth + 7 : auth;
  while (*k == ' ') k++;
  if (strncmp(k, "pk_", 3) == 0)
    return "This is a publishable key (pk_...), but the control plane takes a secret key "
           "(sk_...) in Authorization: Bearer. Publishable keys are for the runtime (/v1).";
  if (strncmp(k, "eyJ", 3) == 0)
    return "This is an access token, but the control plane takes a secret key (sk_...) in "
           "Authorization: Bearer. Access tokens are for the runtime (/v1).";
  if (k == auth) return "Send the secret key as Authorization: Bearer sk_...";
  return NULL;
}

/* An ordinary route's handler call, as sg__idempotent runs it. */
typedef struct {
  sg_control *c;
  const route *r;
  const sg_principal *who;
  sg_req *req;
} route_call;

static void run_route(void *arg, sg_resp *resp) {
  route_call *rc = arg;
  rc->r->fn(rc->c, rc->who, rc->req, resp);
  /* Here, not after sg__idempotent: a replayed answer is no second write. */
  sg__control_audit(rc->c, rc->who->workspace_id, rc->who->key_id, rc->req, resp, rc->r->action);
}

/* The middleware in its documented order: per-IP rate limit, secret key, per-key rate
 * limit. Returns true with *who filled, or false with resp holding the answer. */
static bool authenticate(sg_control *c, sg_req *req, sg_resp *resp, sg_principal *who) {
  int64_t now = sg_mono_ms();
  if (!sg_ratelimit_take(c->rl_ip, req->client_ip, now)) {
    sg_resp_error(resp, req, SG_E_RATE_LIMITED, NULL, NULL);
    return false;
  }
  char key_id[64];
  uint8_t digest[32];
  const char *auth = sg_req_header(req, "Authorization");
  if (!parse_secret_key(auth, key_id, digest)) {
    sg_resp_error(resp, req, SG_E_INVALID_KEY, NULL, key_hint(auth));
    return false;
  }
  sg_err e = sg_store_authenticate(c->cfg.store, key_id, digest, who);
  memset(digest, 0, sizeof digest);
  if (e != SG_E_OK) {
    /* An unreachable store is a 503 with retry-after, not a refused key. */
    sg_resp_error(resp, req, e == SG_E_INVALID_KEY || e == SG_E_UNAVAILABLE ? e : SG_E_INTERNAL,
                  NULL, NULL);
    return false;
  }
  if (!sg_ratelimit_take(c->rl_key, who->key_id, now)) {
    sg_resp_error(resp, req, SG_E_RATE_LIMITED, NULL, NULL);
    return false;
  }
  /* The dashboard lists each key's last use; recording it at most once a minute keeps it
   * from costing a write per request. */
  int64_t now_s = sg_now_s();
  if (now_s - who->key_last_used_s >= 60)
    sg_store_secret_key_touch(c->cfg.store, who->key_id, now_s);
  return true;
}

/* True when path is the mount's prefix or a path below it. */
static bool mounted(const sg_control *c, const char *path) {
  const sg_control_mount *m = c->cfg.mount;
  if (!m) return false;
  size_t n = strlen(m->prefix);
  return strncmp(path, m->prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

sg_http_begin sg__control_begin(sg_req *req, sg_resp *resp, sg_http_stream *stream);
sg_http_begin sg__control_begin(sg_req *req, sg_resp *resp, sg_http_stream *stream) {
  sg_control *c = req->app;
  if (mounted(c, req->path)) return c->cfg.mount->begin(c, req, resp, stream);
  /* The analytics report reads many aggregate rows: on the report pool (control.h). */
  sg_req tmp;
  if (strcmp(req->method, "GET") == 0 && sg__route_match("/api/v1/lists/{}/analytics", req->path,
                                                         tmp.scratch, sizeof tmp.scratch, &tmp))
    req->pool = SG_CONTROL_POOL_REPORT;
  /* Only streaming routes are decided here; everything else (404/405 included) is
   * answered by the dispatcher once the body is in, exactly as before. */
  const route *r = NULL;
  for (const route *x = routes; x->method; x++)
    if (x->stream && strcmp(x->method, req->method) == 0 &&
        sg__route_match(x->pattern, req->path, req->scratch, sizeof req->scratch, req)) {
      r = x;
      break;
    }
  if (!r) return SG_HTTP_BUFFER;
  req->route = r->pattern;
  sg_principal who;
  if (!authenticate(c, req, resp, &who)) return SG_HTTP_RESPOND;
  return sg__control_audit_stream(c, &who, r->action, req, resp, stream, r->stream);
}

void sg__control_dispatch(sg_req *req, sg_resp *resp);
void sg__control_dispatch(sg_req *req, sg_resp *resp) {
  sg_control *c = req->app;
  if (strcmp(req->path, "/healthz") == 0) {
    req->route = "/healthz";
    sg__control_healthz(req, resp);
    return;
  }
  if (strcmp(req->path, "/readyz") == 0) {
    req->route = "/readyz";
    sg__control_readyz(c, req, resp);
    return;
  }
  if (strcmp(req->path, "/docs/errors") == 0) {
    req->route = "/docs/errors";
    extern void sg__h_docs_errors(sg_req *, sg_resp *);
    sg__h_docs_errors(req, resp);
    return;
  }
  if (mounted(c, req->path)) {
    c->cfg.mount->dispatch(c, req, resp);
    return;
  }
  const route *found = sg__route_find(req, resp, routes, sizeof routes[0]);
  if (!found) return;
  if (!found->fn) {
    /* A streaming route is always decided by sg__control_begin. */
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    return;
  }
  sg_principal who;
  if (!authenticate(c, req, resp, &who)) return;
  req->auth = &who;
  if (req->body_too_large) {
    sg_resp_too_large(resp, req, SG__CONTROL_MAX_BODY);
    return;
  }
  if (found->idempotent) {
    uint8_t bh[32];
    sg_sha256(req->body, req->body_len, bh);
    route_call rc = {c, found, &who, req};
    sg__idempotent(c, &who, req, resp, bh, run_route, &rc);
  } else {
    found->fn(c, &who, req, resp);
    sg__control_audit(c, who.workspace_id, who.key_id, req, resp, found->action);
  }
}
