/*
 * Internals shared by the dashboard's files.
 */
#ifndef SG_DASHBOARD_INTERNAL_H
#define SG_DASHBOARD_INTERNAL_H

#include <pthread.h>

#include "common/ratelimit.h"
#include "control/internal.h"
#include "dashboard/auth.h"
#include "dashboard/dashboard.h"
#include "store/members.h"

/* The preview cache's bounds: at most this many artifacts and this many bytes (the most
 * recently used one is kept whatever its size). */
#define SG__PREVIEW_CACHE_ENTRIES 4
#define SG__PREVIEW_CACHE_BYTES ((size_t)512 * 1024 * 1024)
struct sg__preview_entry;

struct sg__dashboard {
  sg_ratelimit *rl_signin_ip;
  sg_ratelimit *rl_signin_email;
  sg_ratelimit *rl_invite; /* POST /members, per workspace (--invite-rate) */
  uint8_t csrf_secret[32];
  int64_t idle_ms;
  /* The live preview's artifacts (h_preview.c): the last few loaded and verified, by
   * content hash, least recently used first out. */
  pthread_mutex_t preview_mu;
  struct sg__preview_entry *preview[SG__PREVIEW_CACHE_ENTRIES];
  uint64_t preview_tick;
  size_t preview_bytes;
};

/* Releases the preview cache (router.c's stop). */
void sg__preview_cache_free(struct sg__dashboard *d);
/* The dashboard's state: the control plane keeps it for its mount (router.c sets it). */
static inline struct sg__dashboard *sg__dash(const sg_control *c) { return c->mount_state; }

/* The signed-in member behind a dashboard request. */
typedef struct {
  sg_member m;
  uint8_t session[32]; /* the session's digest */
  /* What the reused control-plane handlers see: the member's workspace, and the member
   * id where a secret key's id would be. */
  sg_principal who;
  /* Filled by handlers of writes for the audit log: what the action acted on (an id) and
   * a few non-secret facts about it. */
  char target[128];
  json_t *details; /* owned by the router; may stay NULL */
} sg__dash_ctx;

typedef void (*sg__dash_handler)(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);

/* Handlers (one file per area). */
void sg__dh_signin(sg_control *c, sg_req *req, sg_resp *resp);
void sg__dh_me(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_signout(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_revoke_all(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_password(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);

void sg__dh_members_index(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_members_create(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_member_patch(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_member_delete(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);

void sg__dh_apps_index(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_apps_create(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_app_patch(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_app_disable(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_secret_keys_index(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_secret_keys_create(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_secret_key_revoke(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_pub_keys_index(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_pub_keys_create(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_pub_key_revoke(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);

void sg__dh_items_search(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_usage(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_selections(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_analytics(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_audit(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);
void sg__dh_preview(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp);

/* The built-in pages (pages.c): true when req named one and resp holds it. */
bool sg__dashboard_page(sg_req *req, sg_resp *resp, const char *runtime_url);

/* Shared helpers (router.c). */
/* Sends a store read's rows as {data: [...], requestId} (steals data), or the error e. */
void sg__dash_send_rows(sg_req *req, sg_resp *resp, sg_err e, json_t *data);
/* A workspace's records read a page at a time by read() and answered {data, nextCursor}
 * like every paged list; the cursor is scoped to name:workspace and keyed on the records'
 * key_member ("seq", an integer, or "id", a string). */
typedef sg_err (*sg__dash_page_fn)(sg_store *st, const char *workspace_id, size_t limit,
                                   const json_t *after, json_t **data, bool *more);
void sg__dash_page(sg_control *c, const sg__dash_ctx *d, sg_req *req, sg_resp *resp,
                   const char *name, const char *key_member, sg__dash_page_fn read);
/* 429 rate_limited with retry-after set to the given seconds. */
void sg__dash_rate_limited(sg_req *req, sg_resp *resp, int retry_after);
/* True unless the request comes from another site (Origin, Sec-Fetch-Site). */
bool sg__dash_same_origin(const sg_req *req);
/* The member as the API shows it: {id, email, role, workspaceId}. */
json_t *sg__dash_member_json(const sg_member *m);
/* Records an audit entry for a dashboard action (status is the response's). */
void sg__dash_audit(sg_control *c, const sg__dash_ctx *d, const sg_req *req, const char *action,
                    int status);

#endif
