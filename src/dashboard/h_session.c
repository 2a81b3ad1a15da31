/*
 * Sign-in, the current member, sign-out, sign out everywhere, and password change.
 *
 * POST /dashboard/api/session {email, password, workspaceId?} answers 200 with the session
 * cookie and the CSRF token, or 401 invalid_credentials, the same answer after the same
 * work for an unknown email and for a wrong password (an unknown email is verified against
 * a dummy Argon2id hash). An email may name members of several workspaces: the password is
 * verified against each, and when it opens more than one and no workspaceId chooses, the
 * answer is 409 workspace_required listing the workspaces it opened. Attempts are limited
 * per client IP and per email before any password is checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "dashboard/internal.h"

json_t *sg__dash_member_json(const sg_member *m) {
  return json_pack("{s:s,s:s,s:s,s:s}", "id", m->id, "email", m->email, "role",
                   sg_role_name(m->role), "workspaceId", m->workspace_id);
}

/* What the member's role allows, so a page can hide what the server would refuse. */
static json_t *capabilities(sg_role r) {
  return json_pack("{s:b,s:b,s:b,s:b,s:b,s:b,s:b}", "readLists", r >= SG_ROLE_VIEWER, "writeLists",
                   r >= SG_ROLE_DATA_STEWARD, "manageKeys", r >= SG_ROLE_ADMIN, "manageMembers",
                   r >= SG_ROLE_ADMIN, "readAudit", r >= SG_ROLE_ADMIN, "setQuotas",
                   r >= SG_ROLE_OWNER, "manageOwners", r >= SG_ROLE_OWNER);
}

static json_t *session_body(sg_control *c, const sg_member *m, const uint8_t digest[32],
                            const char *request_id) {
  char csrf[44];
  sg_csrf_token(sg__dash(c)->csrf_secret, digest, csrf);
  const char *rt = c->cfg.runtime_public_url;
  return json_pack("{s:o,s:s,s:I,s:o,s:o,s:s}", "member", sg__dash_member_json(m), "csrfToken",
                   csrf, "idleTimeoutSeconds", (json_int_t)(sg__dash(c)->idle_ms / 1000),
                   "capabilities", capabilities(m->role), "runtimeUrl",
                   rt ? json_string(rt) : json_null(), "requestId", request_id);
}

/* Secure when the operator says the dashboard is served over TLS, or when a proxy in
 * front says this request came over https (a client that fakes that header only makes
 * its own cookie stricter). */
static bool secure(sg_control *c, const sg_req *req) {
  const char *p = sg_req_header(req, "X-Forwarded-Proto");
  return c->cfg.secure_cookies || (p && strcasecmp(p, "https") == 0);
}

static void set_cookie(sg_control *c, const sg_req *req, sg_resp *resp, const char *value) {
  char h[192];
  snprintf(h, sizeof h, "%s=%s; Path=/dashboard; HttpOnly; SameSite=Strict%s%s",
           SG_SESSION_COOKIE_NAME, value, *value ? "" : "; Max-Age=0",
           secure(c, req) ? "; Secure" : "");
  sg_resp_header(resp, "Set-Cookie", h);
}

/* The device cookie: HMAC(secret, member id and password hash), so it names a member
 * and dies with a password change. Only a browser that signed in successfully has it. */
#define DEVICE_COOKIE "sg_device"

static void device_token(sg_control *c, const sg_member *m, const char *hash, char out[44]) {
  uint8_t mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, sg__dash(c)->csrf_secret, 32);
  crypto_auth_hmacsha256_update(&st, (const unsigned char *)"device:", 7);
  crypto_auth_hmacsha256_update(&st, (const unsigned char *)m->id, strlen(m->id) + 1);
  crypto_auth_hmacsha256_update(&st, (const unsigned char *)hash, strlen(hash));
  crypto_auth_hmacsha256_final(&st, mac);
  sodium_bin2base64(out, 44, mac, sizeof mac, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

static bool device_known(sg_control *c, const sg_req *req, const sg_member *m, const char *hash) {
  const char *h = sg_req_header(req, "Cookie");
  const char *p = h ? strstr(h, DEVICE_COOKIE "=") : NULL;
  if (!p || (p != h && p[-1] != ' ' && p[-1] != ';')) return false;
  p += sizeof DEVICE_COOKIE;
  if (strcspn(p, "; ") != 43) return false;
  char want[44];
  device_token(c, m, hash, want);
  return sg_ct_equal(want, p, 43);
}

static bool json_content_type(const sg_req *req) {
  const char *ct = sg_req_header(req, "Content-Type");
  return ct && strncasecmp(ct, "application/json", 16) == 0 &&
         (ct[16] == '\0' || ct[16] == ';' || ct[16] == ' ');
}

_Static_assert(sizeof((sg_signin_candidate *)0)->hash >= SG_PASSWORD_HASH_BYTES,
               "a candidate holds a whole Argon2id string");

/* The {workspaceId, name} of each candidate whose password matched: what the 409
 * workspace_required answer offers (never a workspace the password did not open). */
static json_t *unlocked_workspaces(const sg_signin_candidate *cand, const bool *ok, size_t n) {
  json_t *arr = json_array();
  for (size_t i = 0; i < n; i++) {
    if (!ok[i]) continue;
    const char *ws = cand[i].m.workspace_id;
    json_t *o = json_pack("{s:s,s:s}", "workspaceId", ws, "name", cand[i].workspace_name);
    /* A name that is not UTF-8 (an operator's typo) is no reason to hide the workspace. */
    if (!o) o = json_pack("{s:s,s:n}", "workspaceId", ws, "name");
    json_array_append_new(arr, o);
  }
  return arr;
}

static void signin_cleanup(sg_signin_candidate *cand, json_t *b) {
  sodium_memzero(cand, SG_MEMBERSHIPS_PER_EMAIL * sizeof *cand);
  free(cand);
  json_decref(b);
}

void sg__dh_signin(sg_control *c, sg_req *req, sg_resp *resp) {
  /* A form on another site can post to us but cannot send application/json without a
   * CORS preflight, which this server never approves: with the Origin check this stops
   * login CSRF (signing a victim into the attacker's account). */
  if (!json_content_type(req)) {
    sg_resp_error(resp, req, SG_E_UNSUPPORTED_MEDIA_TYPE, NULL, NULL);
    return;
  }
  int retry = 0;
  if (!sg_ratelimit_take_retry(sg__dash(c)->rl_signin_ip, req->client_ip, sg_mono_ms(), &retry)) {
    sg__dash_rate_limited(req, resp, retry);
    return;
  }
  json_t *b = sg__body_object(req, resp);
  if (!b) return;
  static const char *const allowed[] = {"email", "password", "workspaceId", NULL};
  json_t *fields = NULL;
  sg__reject_unknown(b, allowed, "", &fields);
  const json_t *je = json_object_get(b, "email"), *jp = json_object_get(b, "password"),
               *jw = json_object_get(b, "workspaceId");
  char email[256];
  if (!json_is_string(je) || sg_email_normalize(json_string_value(je), email))
    sg_field_error(&fields, "email", "must be an email address");
  if (!json_is_string(jp) || json_string_length(jp) < 1 ||
      json_string_length(jp) > SG_PASSWORD_MAX_BYTES)
    sg_field_error(&fields, "password", "must be a string of 1 to 1024 bytes");
  /* Optional: which workspace to open when the email and password open several. */
  const char *want = NULL;
  if (jw && (!json_is_string(jw) || json_string_length(jw) < 1 ||
             json_string_length(jw) >= sizeof((sg_member *)0)->workspace_id))
    sg_field_error(&fields, "workspaceId", "must be a workspace id from details.workspaces");
  else if (jw)
    want = json_string_value(jw);
  if (fields) {
    json_decref(b);
    sg_resp_invalid_fields(resp, req, fields);
    return;
  }
  /* The email may name a member in several workspaces (one password each). */
  sg_signin_candidate *cand = calloc(SG_MEMBERSHIPS_PER_EMAIL, sizeof *cand);
  size_t n = 0;
  sg_err e = cand ? sg_store_member_for_signin(c->cfg.store, email, cand, &n) : SG_E_INTERNAL;
  if (e != SG_E_OK) {
    signin_cleanup(cand, b);
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    return;
  }
  /* A browser that signed in as one of these members before (with its password) carries
   * its device cookie and draws from a bucket of its own, so guessing from elsewhere
   * cannot lock the member out of the browsers it uses. */
  bool known = false;
  for (size_t i = 0; i < n && !known; i++) known = device_known(c, req, &cand[i].m, cand[i].hash);
  char key[300];
  snprintf(key, sizeof key, "%s:%s", known ? "device" : "email", email);
  if (!sg_ratelimit_take_retry(sg__dash(c)->rl_signin_email, key, sg_mono_ms(), &retry)) {
    signin_cleanup(cand, b);
    sg__dash_rate_limited(req, resp, retry);
    return;
  }
  /* The same work for every candidate, whatever matched and whatever workspaceId says:
   * one Argon2id verification each, and one against a dummy hash for an unknown email. */
  bool ok[SG_MEMBERSHIPS_PER_EMAIL] = {false};
  size_t matched = 0, pick = n;
  const char *pw = json_string_value(jp);
  size_t pwlen = json_string_length(jp);
  if (n == 0) (void)sg_password_verify(NULL, pw, pwlen);
  for (size_t i = 0; i < n; i++) {
    ok[i] = sg_password_verify(cand[i].hash, pw, pwlen);
    if (!ok[i]) continue;
    matched++;
    if (want ? strcmp(want, cand[i].m.workspace_id) == 0 : pick == n) pick = i;
  }
  if (!want && matched > 1) {
    /* Several workspaces open with this password: the client picks one and signs in
     * again with its workspaceId. Only those the password opened are named. */
    json_t *list = unlocked_workspaces(cand, ok, n);
    signin_cleanup(cand, b);
    sg_resp_error(resp, req, SG_E_WORKSPACE_REQUIRED, json_pack("{s:o}", "workspaces", list), NULL);
    return;
  }
  sg__dash_ctx d;
  memset(&d, 0, sizeof d);
  if (pick == n) {
    /* Failures go to the log of each workspace whose member's password did not match;
     * an unknown email has no workspace to log to. */
    for (size_t i = 0; i < n; i++) {
      if (ok[i]) continue;
      d.m = cand[i].m;
      snprintf(d.target, sizeof d.target, "%s", cand[i].m.id);
      sg__dash_audit(c, &d, req, "session.sign_in_failed", 401);
    }
    signin_cleanup(cand, b);
    sg_resp_error(resp, req, SG_E_INVALID_CREDENTIALS, NULL, NULL);
    return;
  }
  sg_member m = cand[pick].m;
  char dev[44] = "";
  device_token(c, &m, cand[pick].hash, dev);
  signin_cleanup(cand, b);
  d.m = m;
  snprintf(d.target, sizeof d.target, "%s", m.id);
  char cookie[SG_SESSION_COOKIE_LEN + 1];
  uint8_t digest[32];
  sg_session_new(cookie, digest);
  int64_t now = sg_now_ms();
  if (sg_store_session_create(c->cfg.store, digest, m.id, now, now - sg__dash(c)->idle_ms) !=
      SG_E_OK) {
    sodium_memzero(cookie, sizeof cookie);
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    return;
  }
  set_cookie(c, req, resp, cookie);
  sodium_memzero(cookie, sizeof cookie);
  char h[200];
  snprintf(h, sizeof h,
           "%s=%s; Path=/dashboard/api/session; HttpOnly; SameSite=Strict; "
           "Max-Age=31536000%s",
           DEVICE_COOKIE, dev, secure(c, req) ? "; Secure" : "");
  sg_resp_header(resp, "Set-Cookie", h);
  sg__dash_audit(c, &d, req, "session.sign_in", 200);
  sg_resp_json(resp, 200, session_body(c, &m, digest, req->request_id));
}

void sg__dh_me(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  sg_resp_json(resp, 200, session_body(c, &d->m, d->session, req->request_id));
}

void sg__dh_signout(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  if (sg_store_session_delete(c->cfg.store, d->session) != SG_E_OK) {
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    return;
  }
  snprintf(d->target, sizeof d->target, "%s", d->m.id);
  set_cookie(c, req, resp, "");
  sg_resp_json(resp, 200, json_pack("{s:b,s:s}", "signedOut", 1, "requestId", req->request_id));
}

void sg__dh_revoke_all(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  int64_t n = 0;
  if (sg_store_session_delete_all(c->cfg.store, d->m.id, &n) != SG_E_OK) {
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    return;
  }
  snprintf(d->target, sizeof d->target, "%s", d->m.id);
  d->details = json_pack("{s:I}", "sessionsRevoked", (json_int_t)n);
  set_cookie(c, req, resp, "");
  sg_resp_json(
      resp, 200,
      json_pack("{s:I,s:s}", "sessionsRevoked", (json_int_t)n, "requestId", req->request_id));
}

void sg__dh_password(sg_control *c, sg__dash_ctx *d, sg_req *req, sg_resp *resp) {
  json_t *b = sg__body_object(req, resp);
  if (!b) return;
  static const char *const allowed[] = {"currentPassword", "newPassword", NULL};
  json_t *fields = NULL;
  sg__reject_unknown(b, allowed, "", &fields);
  const json_t *cur = json_object_get(b, "currentPassword"),
               *nw = json_object_get(b, "newPassword");
  if (!json_is_string(cur) || json_string_length(cur) > SG_PASSWORD_MAX_BYTES)
    sg_field_error(&fields, "currentPassword", "must be a string of at most 1024 bytes");
  const char *problem = json_is_string(nw)
                            ? sg_password_problem(json_string_value(nw), json_string_length(nw))
                            : "must be a string";
  if (problem) sg_field_error(&fields, "newPassword", problem);
  if (fields) {
    json_decref(b);
    sg_resp_invalid_fields(resp, req, fields);
    return;
  }
  /* The current password is guessed no faster here than at sign-in: a stolen session
   * must not become an unlimited password oracle. The bucket is the member's own (the
   * per-email sign-in limit), apart from sign-in's, so guesses at the sign-in form cannot
   * stop the member from changing the password. */
  char key[300];
  int retry = 0;
  snprintf(key, sizeof key, "password:%s", d->m.id);
  if (!sg_ratelimit_take_retry(sg__dash(c)->rl_signin_email, key, sg_mono_ms(), &retry)) {
    json_decref(b);
    sg__dash_rate_limited(req, resp, retry);
    return;
  }
  /* The member's own hash: its email may name members of other workspaces too. */
  sg_signin_candidate *cand = calloc(SG_MEMBERSHIPS_PER_EMAIL, sizeof *cand);
  size_t n = 0, i = 0;
  sg_err e = cand ? sg_store_member_for_signin(c->cfg.store, d->m.email, cand, &n) : SG_E_INTERNAL;
  while (i < n && strcmp(cand[i].m.id, d->m.id) != 0) i++;
  bool ok = e == SG_E_OK && i < n &&
            sg_password_verify(cand[i].hash, json_string_value(cur), json_string_length(cur));
  char fresh[SG_PASSWORD_HASH_BYTES];
  if (ok && sg_password_hash(json_string_value(nw), json_string_length(nw), fresh)) ok = false;
  if (cand) sodium_memzero(cand, SG_MEMBERSHIPS_PER_EMAIL * sizeof *cand);
  free(cand);
  json_decref(b);
  if (!ok) {
    sg_resp_error(resp, req, e == SG_E_INTERNAL ? SG_E_INTERNAL : SG_E_INVALID_CREDENTIALS, NULL,
                  NULL);
    return;
  }
  /* Every other session ends: a changed password is how a member locks out whoever
   * learned the old one. */
  e = sg_store_member_set_password(c->cfg.store, d->m.id, fresh, d->session);
  if (e != SG_E_OK) {
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  snprintf(d->target, sizeof d->target, "%s", d->m.id);
  sg_resp_json(resp, 200,
               json_pack("{s:b,s:s}", "passwordChanged", 1, "requestId", req->request_id));
}
