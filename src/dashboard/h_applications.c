/*
 * The applications area: applications (viewers see them; admins create and disable;
 * owners set quotas), secret keys (admins: issued and shown exactly once, then listed by
 * id, creation time and last use, revoked) and publishable keys with their allowed
 * origins (admins). Every record named in a path must belong to the member's workspace;
 * one that does not answers 404 exactly like one that does not exist.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/util.h"
#include "common/origin.h"
#include "control/edge_sync.h"
#include "control/keys.h"
#include "dashboard/internal.h"

#define MAX_ORIGINS 100

static void app_not_found(sg_req *req, sg_resp *resp) {
  sg_resp_error(resp, req, SG_E_NOT_FOUND, NULL, "No such application in this workspace.");
}

/* SG_E_OK when params[0] is an application of the member's workspace; else resp holds
 * the answer. */
static bool own_app(sg_control *c, const sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  sg_err e = sg_store_application_in_workspace(c->cfg.store, d->m.workspace_id, req->params[0]);
  if (e == SG_E_OK) return true;
  if (e == SG_E_NOT_FOUND)
    app_not_found(req, resp);
  else
    sg_resp_error(resp, req, e, NULL, NULL);
  return false;
}

/* Reads monthlyQuota: an integer >= 0 or null (unlimited) into *q (-1 for null). */
static void quota_field(const json_t *v, int64_t *q, json_t **fields) {
  *q = -1;
  if (json_is_null(v)) return;
  if (!json_is_integer(v) || json_integer_value(v) < 0)
    sg_field_error(fields, "monthlyQuota", "must be a non-negative integer or null");
  else
    *q = json_integer_value(v);
}

/* Sends the application's record as the list shows it, with status. */
static void send_app(sg_control *c, const sg__dash_ctx *d, sg_req *req, sg_resp *resp, int status,
                     const char *id) {
  json_t *all = NULL;
  if (sg_store_application_list(c->cfg.store, d->m.workspace_id, &all) == SG_E_OK) {
    size_t i;
    json_t *a;
    json_array_foreach(all, i,
                       a) if (strcmp(json_string_value(json_object_get(a, "id")), id) == 0) {
      sg_resp_json(resp, status, json_incref(a));
      json_decref(all);
      return;
    }
  }
  json_decref(all);
  sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
}

/* Paged like every list of the API (limit, cursor, nextCursor), oldest first, so the
 * page stays one page however many applications a workspace has. */
void sg__dh_apps_index(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  sg__dash_page(c, d, req, resp, "apps", "id", sg_store_application_page);
}

void sg__dh_apps_create(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  json_t *b = sg__body_object(req, resp);
  if (!b) return;
  static const char *const allowed[] = {"name", "monthlyQuota", NULL};
  json_t *fields = NULL;
  sg__reject_unknown(b, allowed, "", &fields);
  const json_t *jn = json_object_get(b, "name"), *jq = json_object_get(b, "monthlyQuota");
  if (!json_is_string(jn) || sg__cp_len(json_string_value(jn)) < 1 ||
      sg__cp_len(json_string_value(jn)) > 200)
    sg_field_error(&fields, "name", "must be a string of 1 to 200 characters");
  int64_t quota = -1;
  if (jq) quota_field(jq, &quota, &fields);
  if (fields) {
    json_decref(b);
    sg_resp_invalid_fields(resp, req, fields);
    return;
  }
  /* A quota is billing: owners only (docs/DESIGN.md §7). */
  if (quota >= 0 && d->m.role < SG_ROLE_OWNER) {
    json_decref(b);
    json_t *det = json_pack("{s:s,s:s}", "role", sg_role_name(d->m.role), "requiredRole", "owner");
    sg_resp_error(resp, req, SG_E_INSUFFICIENT_ROLE, det, "Only owners set quotas.");
    return;
  }
  json_t *rec = NULL;
  sg_err e = sg_store_application_create(c->cfg.store, d->m.workspace_id, json_string_value(jn),
                                         quota, &rec);
  json_decref(b);
  const char *id = rec ? json_string_value(json_object_get(rec, "id")) : NULL;
  /* The store marked the edge records; a failed write is left to the reconciler. */
  if (e == SG_E_OK) sg_edge_sync_pending(c->cfg.store, c->cfg.edge);
  if (e != SG_E_OK) {
    json_decref(rec);
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  snprintf(d->target, sizeof d->target, "%s", id);
  send_app(c, d, req, resp, 201, id);
  json_decref(rec);
}

void sg__dh_app_patch(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  json_t *b = sg__body_object(req, resp);
  if (!b) return;
  static const char *const allowed[] = {"monthlyQuota", NULL};
  json_t *fields = NULL;
  sg__reject_unknown(b, allowed, "", &fields);
  const json_t *jq = json_object_get(b, "monthlyQuota");
  int64_t quota = -1;
  if (!jq)
    sg_field_error(&fields, "monthlyQuota", "is required (an integer, or null for unlimited)");
  else
    quota_field(jq, &quota, &fields);
  json_decref(b);
  if (fields) {
    sg_resp_invalid_fields(resp, req, fields);
    return;
  }
  if (!own_app(c, d, req, resp)) return;
  json_t *rec = NULL;
  sg_err e = sg_store_application_set_quota(c->cfg.store, req->params[0], quota, &rec);
  json_decref(rec);
  if (e == SG_E_OK) sg_edge_sync_pending(c->cfg.store, c->cfg.edge);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  d->details = json_pack("{s:o}", "monthlyQuota", quota >= 0 ? json_integer(quota) : json_null());
  send_app(c, d, req, resp, 200, req->params[0]);
}

void sg__dh_app_disable(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  if (!own_app(c, d, req, resp)) return;
  json_t *rec = NULL;
  sg_err e = sg_store_application_set_status(c->cfg.store, req->params[0], "disabled", &rec);
  json_decref(rec);
  if (e == SG_E_OK) sg_edge_sync_pending(c->cfg.store, c->cfg.edge);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  send_app(c, d, req, resp, 200, req->params[0]);
}

/* ---- secret keys ----------------------------------------------------------------------- */

void sg__dh_secret_keys_index(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  if (!own_app(c, d, req, resp)) return;
  json_t *arr = NULL;
  sg_err e = sg_store_secret_key_list(c->cfg.store, req->params[0], &arr);
  sg__dash_send_rows(req, resp, e, arr);
}

void sg__dh_secret_keys_create(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  if (!own_app(c, d, req, resp)) return;
  char id[32], key[96];
  sg_err e = sg_secret_key_issue(c->cfg.store, req->params[0], id, key);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  snprintf(d->target, sizeof d->target, "%s", id);
  d->details = json_pack("{s:s}", "applicationId", req->params[0]);
  char now[32];
  sg_rfc3339(sg_now_s(), now);
  /* The only time the key exists outside the caller: the store has its digest alone. */
  sg_resp_json(resp, 201,
               json_pack("{s:s,s:s,s:s,s:s,s:s}", "id", id, "secretKey", key, "applicationId",
                         req->params[0], "status", "active", "createdAt", now));
  sodium_memzero(key, sizeof key);
}

void sg__dh_secret_key_revoke(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  char ws[64];
  sg_err e = sg_store_secret_key_workspace(c->cfg.store, req->params[0], ws);
  if (e == SG_E_OK && strcmp(ws, d->m.workspace_id) != 0) e = SG_E_NOT_FOUND;
  json_t *rec = NULL;
  if (e == SG_E_OK) e = sg_store_secret_key_revoke(c->cfg.store, req->params[0], &rec);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req, e, NULL,
                  e == SG_E_NOT_FOUND ? "No such secret key in this workspace." : NULL);
    return;
  }
  snprintf(d->target, sizeof d->target, "%s", req->params[0]);
  sg_resp_json(resp, 200, rec);
}

/* ---- publishable keys ---------------------------------------------------------------------- */

void sg__dh_pub_keys_index(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  if (!own_app(c, d, req, resp)) return;
  json_t *arr = NULL;
  sg_err e = sg_store_publishable_key_list(c->cfg.store, req->params[0], &arr);
  sg__dash_send_rows(req, resp, e, arr);
}

void sg__dh_pub_keys_create(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  json_t *b = sg__body_object(req, resp);
  if (!b) return;
  static const char *const allowed[] = {"listId", "origins", NULL};
  json_t *fields = NULL;
  sg__reject_unknown(b, allowed, "", &fields);
  const json_t *jl = json_object_get(b, "listId"), *jo = json_object_get(b, "origins");
  if (!json_is_string(jl) || json_string_length(jl) < 1 || json_string_length(jl) > 63)
    sg_field_error(&fields, "listId", "must be a list id");
  json_t *origins = json_array();
  if (jo && (!json_is_array(jo) || json_array_size(jo) > MAX_ORIGINS)) {
    sg_field_error(&fields, "origins", "must be an array of at most 100 origins");
  } else if (jo) {
    size_t i;
    json_t *o;
    json_array_foreach(jo, i, o) {
      /* The admin CLI's --origin rule, so both ways of issuing accept the same origins;
       * stored canonical (lower case, default port dropped) as the CLI stores them. */
      char canon[SG_ORIGIN_MAX + 1];
      const char *why = "must be a string";
      if (!json_is_string(o) || sg_origin_canon(json_string_value(o), json_string_length(o), true,
                                                canon, sizeof canon, &why) < 0) {
        char path[32], reason[160];
        snprintf(path, sizeof path, "origins[%zu]", i);
        snprintf(reason, sizeof reason, "%s (want http(s)://host[:port], optionally *.host)", why);
        sg_field_error(&fields, path, reason);
      } else {
        json_array_append_new(origins, json_string(canon));
      }
    }
  }
  if (fields) {
    json_decref(b);
    json_decref(origins);
    sg_resp_invalid_fields(resp, req, fields);
    return;
  }
  if (!own_app(c, d, req, resp)) {
    json_decref(b);
    json_decref(origins);
    return;
  }
  char id[32], key[96];
  sg_err e = sg_publishable_key_issue(c->cfg.store, c->cfg.edge, req->params[0],
                                      json_string_value(jl), origins, id, key, NULL);
  if (e != SG_E_OK) {
    json_decref(b);
    json_decref(origins);
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  snprintf(d->target, sizeof d->target, "%s", id);
  d->details =
      json_pack("{s:s,s:O,s:O}", "applicationId", req->params[0], "listId", jl, "origins", origins);
  char now[32];
  sg_rfc3339(sg_now_s(), now);
  sg_resp_json(resp, 201,
               json_pack("{s:s,s:s,s:s,s:O,s:o,s:s,s:s}", "id", id, "publishableKey", key,
                         "applicationId", req->params[0], "listId", jl, "origins", origins,
                         "status", "active", "createdAt", now));
  json_decref(b);
}

void sg__dh_pub_key_revoke(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  char ws[64];
  sg_err e = sg_store_publishable_key_workspace(c->cfg.store, req->params[0], ws);
  if (e == SG_E_OK && strcmp(ws, d->m.workspace_id) != 0) e = SG_E_NOT_FOUND;
  if (e == SG_E_OK) e = sg_publishable_key_retire(c->cfg.store, c->cfg.edge, req->params[0], NULL);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req, e, NULL,
                  e == SG_E_NOT_FOUND ? "No such publishable key in this workspace." : NULL);
    return;
  }
  snprintf(d->target, sizeof d->target, "%s", req->params[0]);
  sg_resp_json(resp, 200, json_pack("{s:s,s:s}", "id", req->params[0], "status", "revoked"));
}
