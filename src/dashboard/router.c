/*
 * The dashboard's routes and middleware, mounted by the control plane's router under
 * /dashboard (sg_dashboard_mount, control/control.h: sg_control_mount). Routes are
 * matched by http/mhd/route.c and Idempotency-Keys handled by control/idempotency.c, the
 * helpers the control plane's own routes use; nothing here calls back into its router.
 * In this order for every request under /dashboard/api/:
 *
 *   route (404/405) -> same-origin check -> session cookie -> CSRF token (writes) ->
 *   role (the route's weakest allowed role) -> handler -> audit entry (writes) ->
 *   sliding idle window
 *
 * The route table below is the one place where the rights of each role are written
 * down (docs/DESIGN.md §7): viewer reads everything but keys; data_steward adds list content
 * and publishing (a secret key's rights); admin adds applications, keys, origins and
 * members; owner adds quotas and owners. Handlers that act on members also check the
 * owner rule for the member concerned (only owners make or unmake owners).
 *
 * The list, item and version routes run the control plane's own handlers with a
 * principal that carries the member's workspace, so /dashboard/api/lists/… answers
 * exactly what /api/v1/lists/… answers. The import alone adds to it: it takes the file
 * as the user has it (CSV, TSV, a JSON array or NDJSON) and converts it on the way in
 * (h_import.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "dashboard/internal.h"
#include "http/mhd/route.h"
#include "search/artifact.h"

typedef sg_http_begin (*stream_handler)(sg_control *c, const sg_principal *who, sg_req *req,
                                        sg_resp *resp, sg_http_stream *stream);

typedef struct {
  const char *method;
  const char *pattern;
  sg_role role;          /* the weakest role allowed */
  sg__handler control;   /* a control-plane handler, reused as is */
  sg__dash_handler fn;   /* or a dashboard handler */
  stream_handler stream; /* or a streaming control-plane handler (the import) */
  const char *action;    /* the audit log's name for a write; NULL for reads */
  bool idempotent;       /* takes an Idempotency-Key (as its /api/v1 twin does) */
} droute;

#define API "/dashboard/api"
#define V SG_ROLE_VIEWER
#define DS SG_ROLE_DATA_STEWARD
#define AD SG_ROLE_ADMIN
#define OW SG_ROLE_OWNER

static const droute routes[] = {
    /* Sessions: every member, for itself. (Sign-in is before the table: no session.) */
    {"GET", API "/me", V, NULL, sg__dh_me, NULL, NULL, false},
    {"POST", API "/me/password", V, NULL, sg__dh_password, NULL, "member.password", false},
    {"POST", API "/session/sign-out", V, NULL, sg__dh_signout, NULL, "session.sign_out", false},
    {"POST", API "/sessions/revoke-all", V, NULL, sg__dh_revoke_all, NULL, "session.revoke_all",
     false},
    /* Lists, items, versions: the control plane's handlers. */
    {"GET", API "/lists", V, sg__h_lists_index, NULL, NULL, NULL, false},
    {"POST", API "/lists", DS, sg__h_lists_create, NULL, NULL, "list.create", true},
    {"GET", API "/lists/{}", V, sg__h_list_get, NULL, NULL, NULL, false},
    {"PATCH", API "/lists/{}", DS, sg__h_list_patch, NULL, NULL, "list.update", false},
    {"GET", API "/lists/{}/items", V, sg__h_items_index, NULL, NULL, NULL, false},
    {"POST", API "/lists/{}/items", DS, sg__h_items_create, NULL, NULL, "item.create", true},
    {"POST", API "/lists/{}/items/import", DS, NULL, NULL, sg__dh_items_import, "items.import",
     true},
    {"GET", API "/lists/{}/items/export", V, sg__h_items_export, NULL, NULL, NULL, false},
    /* Before the {itemId} routes, which would otherwise take the word. */
    {"GET", API "/lists/{}/items/search", V, NULL, sg__dh_items_search, NULL, NULL, false},
    {"GET", API "/lists/{}/items/{}", V, sg__h_item_get, NULL, NULL, NULL, false},
    {"PATCH", API "/lists/{}/items/{}", DS, sg__h_item_patch, NULL, NULL, "item.update", false},
    {"DELETE", API "/lists/{}/items/{}", DS, sg__h_item_delete, NULL, NULL, "item.delete", false},
    {"GET", API "/lists/{}/synonyms", V, sg__h_synonyms_get, NULL, NULL, NULL, false},
    {"PUT", API "/lists/{}/synonyms", DS, NULL, NULL, sg__h_synonyms_put, "synonyms.replace",
     false},
    {"GET", API "/lists/{}/versions", V, sg__h_versions_index, NULL, NULL, NULL, false},
    {"POST", API "/lists/{}/versions", DS, sg__h_versions_create, NULL, NULL, "version.publish",
     true},
    {"GET", API "/lists/{}/versions/{}", V, sg__h_version_get, NULL, NULL, NULL, false},
    {"POST", API "/lists/{}/versions/{}/activate", DS, sg__h_version_activate, NULL, NULL,
     "version.activate", false},
    {"GET", API "/lists/{}/selections", V, NULL, sg__dh_selections, NULL, NULL, false},
    {"GET", API "/lists/{}/analytics", V, NULL, sg__dh_analytics, NULL, NULL, false},
    {"POST", API "/lists/{}/query-suggestions", DS, sg__h_query_suggestions, NULL, NULL,
     "list.query_suggestions", true},
    {"GET", API "/lists/{}/preview", V, NULL, sg__dh_preview, NULL, NULL, false},
    /* The applications area. Viewers see applications, never keys. */
    {"GET", API "/applications", V, NULL, sg__dh_apps_index, NULL, NULL, false},
    {"POST", API "/applications", AD, NULL, sg__dh_apps_create, NULL, "application.create", false},
    {"PATCH", API "/applications/{}", OW, NULL, sg__dh_app_patch, NULL, "application.set_quota",
     false},
    {"POST", API "/applications/{}/disable", AD, NULL, sg__dh_app_disable, NULL,
     "application.disable", false},
    {"GET", API "/applications/{}/secret-keys", AD, NULL, sg__dh_secret_keys_index, NULL, NULL,
     false},
    {"POST", API "/applications/{}/secret-keys", AD, NULL, sg__dh_secret_keys_create, NULL,
     "secret_key.create", false},
    {"POST", API "/secret-keys/{}/revoke", AD, NULL, sg__dh_secret_key_revoke, NULL,
     "secret_key.revoke", false},
    {"GET", API "/applications/{}/publishable-keys", AD, NULL, sg__dh_pub_keys_index, NULL, NULL,
     false},
    {"POST", API "/applications/{}/publishable-keys", AD, NULL, sg__dh_pub_keys_create, NULL,
     "publishable_key.create", false},
    {"POST", API "/publishable-keys/{}/revoke", AD, NULL, sg__dh_pub_key_revoke, NULL,
     "publishable_key.revoke", false},
    /* Members: everyone sees who is in the workspace; admins change it. */
    {"GET", API "/members", V, NULL, sg__dh_members_index, NULL, NULL, false},
    {"POST", API "/members", AD, NULL, sg__dh_members_create, NULL, "member.create", false},
    {"PATCH", API "/members/{}", AD, NULL, sg__dh_member_patch, NULL, "member.update", false},
    {"DELETE", API "/members/{}", AD, NULL, sg__dh_member_delete, NULL, "member.remove", false},
    /* Usage and the audit log. */
    {"GET", API "/usage", V, NULL, sg__dh_usage, NULL, NULL, false},
    {"GET", API "/audit", AD, NULL, sg__dh_audit, NULL, NULL, false},
    {NULL, NULL, SG_ROLE_NONE, NULL, NULL, NULL, NULL, false},
};

#define SIGNIN_PATH API "/session"

/* ---- lifecycle ------------------------------------------------------------------------ */

static int dashboard_start(sg_control *c) {
  struct sg__dashboard *d = calloc(1, sizeof *d);
  if (!d) return -1;
  c->mount_state = d;
  d->idle_ms = (c->cfg.session_idle_s > 0 ? c->cfg.session_idle_s : 43200) * 1000;
  pthread_mutex_init(&d->preview_mu, NULL);
  d->rl_signin_ip = sg_ratelimit_new(c->cfg.signin_rate_ip);
  d->rl_signin_email = sg_ratelimit_new(c->cfg.signin_rate_email);
  d->rl_invite = sg_ratelimit_new(c->cfg.invite_rate);
  if (!d->rl_signin_ip || !d->rl_signin_email || !d->rl_invite ||
      sg_store_secret(c->cfg.store, "csrf_secret", d->csrf_secret) != SG_E_OK)
    return -1;
  /* Builds the dummy hash that unknown emails are verified against now, so the first
   * such sign-in does not take longer than a wrong password. */
  sg_password_verify(NULL, "", 0);
  return 0;
}

static void dashboard_stop(sg_control *c) {
  struct sg__dashboard *d = c ? sg__dash(c) : NULL;
  if (!d) return;
  sg_ratelimit_free(d->rl_signin_ip);
  sg_ratelimit_free(d->rl_signin_email);
  sg_ratelimit_free(d->rl_invite);
  sodium_memzero(d->csrf_secret, sizeof d->csrf_secret);
  sg__preview_cache_free(d);
  pthread_mutex_destroy(&d->preview_mu);
  free(d);
  c->mount_state = NULL;
}

/* ---- shared helpers --------------------------------------------------------------------- */

void sg__dash_send_rows(sg_req *req, sg_resp *resp, sg_err e, json_t *data) {
  if (e != SG_E_OK) {
    json_decref(data);
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  sg_resp_json(resp, 200, json_pack("{s:o,s:s}", "data", data, "requestId", req->request_id));
}

void sg__dash_audit(sg_control *c, const sg__dash_ctx *d, const sg_req *req, const char *action,
                    int status) {
  sg_audit_entry e = {
      .workspace_id = d->m.workspace_id,
      .actor = d->m.id,
      .actor_email = d->m.email,
      .action = action,
      .target = d->target[0] ? d->target : NULL,
      .request_id = req->request_id,
      .status = status,
      .details = d->details,
  };
  if (sg_store_audit_add(c->cfg.store, &e) != SG_E_OK)
    fprintf(stderr,
            "{\"level\":\"error\",\"msg\":\"audit entry not saved\",\"requestId\":\"%s\"}\n",
            req->request_id);
}

/* The audit target of a write whose handler named none: the created record's id from
 * the response, else the path's parameters ("lst_…/itm_…"). */
static void default_target(sg__dash_ctx *d, const sg_req *req, const sg_resp *resp) {
  if (!d->target[0]) sg__audit_target(req, resp, d->target, sizeof d->target);
}

/* The member names of a PATCH body, for the audit entry: which settings changed, never
 * their values. NULL when the body is not an object. */
static json_t *changed_fields(const sg_req *req) {
  json_t *b = json_loadb(req->body, req->body_len, 0, NULL);
  if (!json_is_object(b)) {
    json_decref(b);
    return NULL;
  }
  json_t *names = json_array();
  const char *k;
  json_t *v;
  json_object_foreach(b, k, v) json_array_append_new(names, json_string(k));
  json_decref(b);
  return json_pack("{s:o}", "fields", names);
}

void sg__dash_page(sg_control *c, const sg__dash_ctx *d, sg_req *req, sg_resp *resp,
                   const char *name, const char *key_member, sg__dash_page_fn read) {
  char scope[96];
  snprintf(scope, sizeof scope, "%s:%s", name, d->m.workspace_id);
  /* The one-member keys of these pages: an integer seq or a string id. */
  const char *shape = strcmp(key_member, "seq") == 0 ? "i" : "s";
  size_t limit;
  json_t *after = NULL;
  if (sg__page_params(c, req, resp, scope, shape, &limit, &after)) return;
  json_t *data = NULL;
  bool more = false;
  sg_err e = read(c->cfg.store, d->m.workspace_id, limit, after, &data, &more);
  json_decref(after);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  const char *const key[] = {key_member, NULL};
  sg__page_respond(c, req, resp, scope, data, sg__page_next_key(data, more, key));
}

static void set_retry_after(sg_resp *resp, int seconds) {
  char v[16];
  snprintf(v, sizeof v, "%d", seconds);
  for (size_t i = 0; i < resp->nheaders; i++)
    if (strcasecmp(resp->hname[i], "retry-after") == 0) {
      free(resp->hvalue[i]);
      resp->hvalue[i] = strdup(v);
      return;
    }
  sg_resp_header(resp, "retry-after", v);
}

void sg__dash_rate_limited(sg_req *req, sg_resp *resp, int retry_after) {
  sg_resp_error(resp, req, SG_E_RATE_LIMITED, NULL, NULL);
  set_retry_after(resp, retry_after > 0 ? retry_after : 1);
}

/* ---- middleware ---------------------------------------------------------------------------- */

/* True unless the request comes from another site. Browsers send Origin on every
 * cross-origin request and on same-origin writes; a request without it (curl, a
 * same-origin GET) is not a cross-site one. The Origin's host[:port] must be the Host the
 * request was sent to (or the X-Forwarded-Host of a proxy in front, which a cross-site
 * page cannot set without a CORS preflight that this server never approves). */
bool sg__dash_same_origin(const sg_req *req) {
  const char *site = sg_req_header(req, "Sec-Fetch-Site");
  if (site && (strcasecmp(site, "cross-site") == 0 || strcasecmp(site, "same-site") == 0))
    return false;
  const char *o = sg_req_header(req, "Origin");
  if (!o) return true;
  const char *p = strstr(o, "://");
  if (!p) return false; /* "null" and anything else unparseable */
  const char *host = p + 3;
  if (!*host || strchr(host, '/')) return false;
  const char *h = sg_req_header(req, "Host");
  const char *xfh = sg_req_header(req, "X-Forwarded-Host");
  return (h && strcasecmp(host, h) == 0) || (xfh && strcasecmp(host, xfh) == 0);
}

static bool is_write(const char *method) {
  return strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0;
}

/* Origin, session, CSRF and role, in that order. True with *d filled, or false with resp
 * holding the refusal. */
static bool admit(sg_control *c, const droute *r, sg_req *req, sg_resp *resp, sg__dash_ctx *d) {
  memset(d, 0, sizeof *d);
  if (!sg__dash_same_origin(req)) {
    sg_resp_error(resp, req, SG_E_CROSS_ORIGIN, NULL, NULL);
    return false;
  }
  int64_t now = sg_now_ms(), seen = 0;
  sg_err e = SG_E_INVALID_SESSION;
  if (sg_session_from_header(sg_req_header(req, "Cookie"), d->session) == 0)
    e = sg_store_session_lookup(c->cfg.store, d->session, now, sg__dash(c)->idle_ms, &d->m, &seen);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req,
                  e == SG_E_NOT_FOUND || e == SG_E_INVALID_SESSION ? SG_E_INVALID_SESSION
                                                                   : SG_E_INTERNAL,
                  NULL, NULL);
    return false;
  }
  if (is_write(req->method) &&
      !sg_csrf_valid(sg__dash(c)->csrf_secret, d->session, sg_req_header(req, "X-CSRF-Token"))) {
    sg_resp_error(resp, req, SG_E_CSRF_TOKEN_INVALID, NULL, NULL);
    return false;
  }
  if (d->m.role < r->role) {
    json_t *det = json_pack("{s:s,s:s}", "role", sg_role_name(d->m.role), "requiredRole",
                            sg_role_name(r->role));
    sg_resp_error(resp, req, SG_E_INSUFFICIENT_ROLE, det, NULL);
    return false;
  }
  /* The idle window slides; the stored last-seen time moves at most once a minute (or a
   * quarter of the window, when it is shorter), so reading costs no write per request. */
  int64_t step = sg__dash(c)->idle_ms / 4 < 60000 ? sg__dash(c)->idle_ms / 4 : 60000;
  if (now - seen >= step) sg_store_session_touch(c->cfg.store, d->session, now);
  snprintf(d->who.key_id, sizeof d->who.key_id, "%s", d->m.id);
  snprintf(d->who.workspace_id, sizeof d->who.workspace_id, "%s", d->m.workspace_id);
  req->auth = &d->who;
  return true;
}

static void no_store(sg_resp *resp) {
  sg_resp_header(resp, "Cache-Control", "no-store");
  sg_resp_header(resp, "X-Content-Type-Options", "nosniff");
}

/* ---- the import stream, audited when it finishes ------------------------------------------- */

typedef struct {
  sg_http_stream inner;
  sg_control *c;
  sg__dash_ctx d;
  const char *action;
} audited_stream;

static int as_data(void *ctx, const char *data, size_t n) {
  audited_stream *a = ctx;
  return a->inner.on_data(a->inner.ctx, data, n);
}

static void as_finish(void *ctx, sg_req *req, sg_resp *resp) {
  audited_stream *a = ctx;
  a->inner.on_finish(a->inner.ctx, req, resp);
  if (resp->status >= 200 && resp->status < 300) {
    default_target(&a->d, req, resp);
    sg__dash_audit(a->c, &a->d, req, a->action, resp->status);
  }
  no_store(resp);
}

static void as_free(void *ctx) {
  audited_stream *a = ctx;
  if (a->inner.on_free) a->inner.on_free(a->inner.ctx);
  free(a);
}

/* The routes whose handlers block, and the worker pool each runs on (dashboard.h): the
 * Argon2id ones, the preview, which may load and hash an artifact, and the reports over
 * the analytics aggregates (the control plane's report pool). Everything else runs on
 * the connection's thread. */
static const struct {
  const char *method, *pattern;
  unsigned pool;
} pooled[] = {
    {"POST", SIGNIN_PATH, SG__POOL_PASSWORD},
    {"POST", API "/me/password", SG__POOL_PASSWORD},
    {"POST", API "/members", SG__POOL_PASSWORD},
    {"GET", API "/lists/{}/preview", SG__POOL_ARTIFACT},
    {"GET", API "/lists/{}/selections", SG_CONTROL_POOL_REPORT},
    {"GET", API "/lists/{}/analytics", SG_CONTROL_POOL_REPORT},
};

static unsigned pool_of(const sg_req *req) {
  sg_req tmp;
  for (size_t i = 0; i < sizeof pooled / sizeof pooled[0]; i++)
    if (strcmp(pooled[i].method, req->method) == 0 &&
        sg__route_match(pooled[i].pattern, req->path, tmp.scratch, sizeof tmp.scratch, &tmp))
      return pooled[i].pool;
  return 0;
}

static sg_http_begin dashboard_begin(sg_control *c, sg_req *req, sg_resp *resp,
                                     sg_http_stream *stream) {
  req->pool = pool_of(req);
  const droute *r = NULL;
  for (const droute *x = routes; x->method; x++)
    if (x->stream && strcmp(x->method, req->method) == 0 &&
        sg__route_match(x->pattern, req->path, req->scratch, sizeof req->scratch, req)) {
      r = x;
      break;
    }
  if (!r) return SG_HTTP_BUFFER;
  audited_stream *a = calloc(1, sizeof *a);
  if (!a) {
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    return SG_HTTP_RESPOND;
  }
  if (!admit(c, r, req, resp, &a->d)) {
    free(a);
    no_store(resp);
    return SG_HTTP_RESPOND;
  }
  sg_http_begin kind = r->stream(c, &a->d.who, req, resp, &a->inner);
  if (kind != SG_HTTP_STREAM) {
    free(a);
    no_store(resp);
    return kind;
  }
  a->c = c;
  a->action = r->action;
  stream->on_data = as_data;
  stream->on_finish = as_finish;
  stream->on_free = as_free;
  stream->ctx = a;
  stream->max_bytes = a->inner.max_bytes;
  return SG_HTTP_STREAM;
}

/* ---- dispatch ---------------------------------------------------------------------------- */

typedef struct {
  sg_control *c;
  const droute *r;
  sg__dash_ctx *d;
  sg_req *req;
} route_call;

static void run_route(void *arg, sg_resp *resp) {
  route_call *rc = arg;
  if (rc->r->control)
    rc->r->control(rc->c, &rc->d->who, rc->req, resp);
  else
    rc->r->fn(rc->c, rc->d, rc->req, resp);
}

static void dispatch(sg_control *c, sg_req *req, sg_resp *resp) {
  if (strncmp(req->path, API "/", sizeof API) != 0 &&
      sg__dashboard_page(req, resp, c->cfg.runtime_public_url))
    return;
  if (strcmp(req->path, SIGNIN_PATH) == 0) {
    if (strcmp(req->method, "POST") != 0) {
      sg_resp_header(resp, "Allow", "POST");
      sg_resp_error(resp, req, SG_E_METHOD_NOT_ALLOWED, NULL, NULL);
      return;
    }
    if (!sg__dash_same_origin(req)) {
      sg_resp_error(resp, req, SG_E_CROSS_ORIGIN, NULL, NULL);
      return;
    }
    sg__dh_signin(c, req, resp);
    return;
  }
  const droute *r = sg__route_find(req, resp, routes, sizeof routes[0]);
  if (!r) return;
  if (!r->control && !r->fn) {
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL); /* streams are decided at begin */
    return;
  }
  sg__dash_ctx d;
  if (!admit(c, r, req, resp, &d)) return;
  if (req->body_too_large) {
    sg_resp_error(resp, req, SG_E_PAYLOAD_TOO_LARGE, NULL, NULL);
    return;
  }
  route_call rc = {c, r, &d, req};
  if (r->idempotent) {
    uint8_t bh[32];
    sg_sha256(req->body, req->body_len, bh);
    sg__idempotent(c, &d.who, req, resp, bh, run_route, &rc);
  } else {
    run_route(&rc, resp);
  }
  if (r->action && resp->status >= 200 && resp->status < 300) {
    default_target(&d, req, resp);
    if (!d.details && strcmp(req->method, "PATCH") == 0) d.details = changed_fields(req);
    sg__dash_audit(c, &d, req, r->action, resp->status);
  }
  json_decref(d.details);
}

static void dashboard_dispatch(sg_control *c, sg_req *req, sg_resp *resp) {
  dispatch(c, req, resp);
  no_store(resp);
}

const sg_control_mount sg_dashboard_mount = {
    .prefix = "/dashboard",
    .start = dashboard_start,
    .stop = dashboard_stop,
    .begin = dashboard_begin,
    .dispatch = dashboard_dispatch,
    .pools = {[SG__POOL_PASSWORD - 1] = {"password", SG__POOL_PASSWORD_THREADS, 0, 1},
              [SG__POOL_ARTIFACT - 1] = {"artifact", SG__POOL_ARTIFACT_THREADS, 0, 1}},
};
