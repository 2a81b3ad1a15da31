/*
 * Members of the workspace: list (every member), create, change role, remove (admins).
 * Only owners make, change or remove owners; the store keeps at least one active owner.
 */
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "dashboard/internal.h"

/* Sends the store's answer about a member: the record (stolen), or the error. */
static void send_member(sg_req *req, sg_resp *resp, sg_err e, json_t *rec) {
  if (e == SG_E_OK) {
    sg_resp_json(resp, 200, rec);
    return;
  }
  json_decref(rec);
  sg_resp_error(resp, req, e, NULL,
                e == SG_E_NOT_FOUND ? "No such member in this workspace." : NULL);
}

/* 403 unless the acting member may touch a member with role r (owners only for owners). */
static bool may_touch(const sg__dash_ctx *d, sg_role r, sg_req *req, sg_resp *resp) {
  if (r < SG_ROLE_OWNER || d->m.role >= SG_ROLE_OWNER) return true;
  json_t *det = json_pack("{s:s,s:s}", "role", sg_role_name(d->m.role), "requiredRole", "owner");
  sg_resp_error(resp, req, SG_E_INSUFFICIENT_ROLE, det,
                "Only owners can make, change or remove owners.");
  return false;
}

void sg__dh_members_index(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  json_t *arr = NULL;
  sg_err e = sg_store_member_list(c->cfg.store, d->m.workspace_id, &arr);
  sg__dash_send_rows(req, resp, e, arr);
}

void sg__dh_members_create(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  json_t *b = sg__body_object(req, resp);
  if (!b) return;
  static const char *const allowed[] = {"email", "role", "password", NULL};
  json_t *fields = NULL;
  sg__reject_unknown(b, allowed, "", &fields);
  const json_t *je = json_object_get(b, "email"), *jr = json_object_get(b, "role"),
               *jp = json_object_get(b, "password");
  char email[256];
  if (!json_is_string(je) || sg_email_normalize(json_string_value(je), email))
    sg_field_error(&fields, "email", "must be an email address");
  sg_role role = sg_role_parse(json_string_value(jr));
  if (role == SG_ROLE_NONE)
    sg_field_error(&fields, "role", "must be one of viewer, data_steward, admin, owner");
  const char *problem = NULL;
  if (jp)
    problem = json_is_string(jp)
                  ? sg_password_problem(json_string_value(jp), json_string_length(jp))
                  : "must be a string";
  if (problem) sg_field_error(&fields, "password", problem);
  if (fields) {
    json_decref(b);
    sg_resp_invalid_fields(resp, req, fields);
    return;
  }
  if (!may_touch(d, role, req, resp)) {
    json_decref(b);
    return;
  }
  /* Each invitation runs Argon2id (about 150 ms of a CPU and 64 MiB) and its answer says
   * whether the email is free: both are bounded per workspace, before any hashing, so an
   * admin can neither stall the process nor probe emails quickly. */
  int retry = 0;
  if (!sg_ratelimit_take_retry(sg__dash(c)->rl_invite, d->m.workspace_id, sg_mono_ms(), &retry)) {
    json_decref(b);
    sg__dash_rate_limited(req, resp, retry);
    return;
  }
  /* Without a password the server makes one and shows it once, for the admin to hand
   * over; the member changes it with POST /dashboard/api/me/password. */
  char generated[32] = "";
  const char *pw = jp ? json_string_value(jp) : NULL;
  size_t pwlen = jp ? json_string_length(jp) : 0;
  if (!pw) {
    sg_random_id("", generated, 23);
    pw = generated;
    pwlen = strlen(generated);
  }
  char hash[SG_PASSWORD_HASH_BYTES];
  int hrc = sg_password_hash(pw, pwlen, hash);
  json_decref(b);
  json_t *rec = NULL;
  sg_err e = hrc ? SG_E_INTERNAL
                 : sg_store_member_create(c->cfg.store, d->m.workspace_id, email, role, hash, &rec);
  if (e != SG_E_OK) {
    sodium_memzero(generated, sizeof generated);
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  snprintf(d->target, sizeof d->target, "%s", json_string_value(json_object_get(rec, "id")));
  d->details = json_pack("{s:s,s:s}", "email", email, "role", sg_role_name(role));
  if (generated[0]) json_object_set_new(rec, "temporaryPassword", json_string(generated));
  sodium_memzero(generated, sizeof generated);
  sg_resp_json(resp, 201, rec);
}

/* Loads the member named by params[0] in the acting member's workspace and checks that
 * the actor may touch it. NULL with resp filled otherwise. */
static json_t *target_member(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  json_t *cur = NULL;
  sg_err e = sg_store_member_get(c->cfg.store, d->m.workspace_id, req->params[0], &cur);
  if (e == SG_E_OK && strcmp(json_string_value(json_object_get(cur, "status")), "active") != 0)
    e = SG_E_NOT_FOUND;
  if (e != SG_E_OK) {
    send_member(req, resp, e, cur);
    return NULL;
  }
  if (!may_touch(d, sg_role_parse(json_string_value(json_object_get(cur, "role"))), req, resp)) {
    json_decref(cur);
    return NULL;
  }
  return cur;
}

void sg__dh_member_patch(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  json_t *b = sg__body_object(req, resp);
  if (!b) return;
  static const char *const allowed[] = {"role", NULL};
  json_t *fields = NULL;
  sg__reject_unknown(b, allowed, "", &fields);
  sg_role role = sg_role_parse(json_string_value(json_object_get(b, "role")));
  if (role == SG_ROLE_NONE)
    sg_field_error(&fields, "role", "must be one of viewer, data_steward, admin, owner");
  json_decref(b);
  if (fields) {
    sg_resp_invalid_fields(resp, req, fields);
    return;
  }
  json_t *cur = target_member(c, d, req, resp);
  if (!cur) return;
  const char *from = json_string_value(json_object_get(cur, "role"));
  d->details = json_pack("{s:s,s:s}", "from", from, "to", sg_role_name(role));
  json_decref(cur);
  if (!may_touch(d, role, req, resp)) return;
  json_t *rec = NULL;
  sg_err e = sg_store_member_set_role(c->cfg.store, d->m.workspace_id, req->params[0], role, &rec);
  send_member(req, resp, e, rec);
}

void sg__dh_member_delete(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  json_t *cur = target_member(c, d, req, resp);
  if (!cur) return;
  d->details = json_pack("{s:O}", "email", json_object_get(cur, "email"));
  json_decref(cur);
  json_t *rec = NULL;
  sg_err e = sg_store_member_disable(c->cfg.store, d->m.workspace_id, req->params[0], &rec);
  send_member(req, resp, e, rec);
}
