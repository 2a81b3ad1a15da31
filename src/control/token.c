/*
 * POST /api/v1/token: mints a one-hour access token (Ed25519 JWS) for the secret key's
 * application, covering 1 to 20 lists the workspace owns or holds under an active
 * subscription.
 */
#include <sodium.h>
#include <string.h>

#include "common/jwt.h"
#include "common/util.h"
#include "control/internal.h"

#define TOKEN_TTL_S 3600

void sg__h_token(sg_control *c, const sg_principal *who, sg_req *req, sg_resp *resp) {
  json_t *body = sg__body_object(req, resp);
  if (!body) return;
  static const char *const allowed[] = {"listIds", NULL};
  json_t *fields = NULL;
  sg__reject_unknown(body, allowed, "", &fields);
  const json_t *ids = json_object_get(body, "listIds");
  const char *list[SG_JWT_MAX_LISTS];
  size_t n = 0;
  if (!ids) {
    sg_field_error(&fields, "listIds", "required");
  } else if (!json_is_array(ids) || json_array_size(ids) < 1 ||
             json_array_size(ids) > SG_JWT_MAX_LISTS) {
    sg_field_error(&fields, "listIds", "must be an array of 1 to 20 list ids");
  } else {
    size_t i;
    const json_t *v;
    json_array_foreach(ids, i, v) {
      char path[32];
      snprintf(path, sizeof path, "listIds[%zu]", i);
      if (!json_is_string(v) || json_string_length(v) < 1 || json_string_length(v) > 63) {
        sg_field_error(&fields, path, "must be a list id string");
        continue;
      }
      bool dup = false;
      for (size_t k = 0; k < n; k++) dup = dup || strcmp(list[k], json_string_value(v)) == 0;
      if (!dup) list[n++] = json_string_value(v); /* a repeated id is covered once */
    }
  }
  if (fields) {
    json_decref(body);
    sg_resp_invalid_fields(resp, req, fields);
    return;
  }
  sg_err e = sg_store_lists_mintable(c->cfg.store, who->workspace_id, list, n);
  char kid[64];
  uint8_t sk[64];
  if (e == SG_E_OK) e = sg_store_signing_key_current(c->cfg.store, kid, sk);
  if (e != SG_E_OK) {
    json_decref(body);
    sg_resp_error(resp, req, e, NULL, NULL);
    return;
  }
  int64_t now = sg_now_s();
  char jti[32];
  sg_random_id("tok_", jti, sizeof jti);
  json_t *scope_arr = json_array();
  sg_buf scope;
  sg_buf_init(&scope, 0);
  sg_buf_puts(&scope, "query");
  json_array_append_new(scope_arr, json_string("query"));
  json_t *list_arr = json_array();
  for (size_t i = 0; i < n; i++) {
    char s[80];
    snprintf(s, sizeof s, "list:%s", list[i]);
    sg_buf_putc(&scope, ' ');
    sg_buf_puts(&scope, s);
    json_array_append_new(scope_arr, json_string(s));
    json_array_append_new(list_arr, json_string(list[i]));
  }
  json_t *claims =
      json_pack("{s:s,s:s,s:s,s:I,s:I,s:s,s:s}", "iss", SG_JWT_ISSUER, "sub", who->application_id,
                "aud", SG_JWT_AUDIENCE, "iat", (json_int_t)now, "exp",
                (json_int_t)(now + TOKEN_TTL_S), "jti", jti, "scope", scope.data);
  char *tok = sg_jwt_sign(kid, sk, claims);
  sodium_memzero(sk, sizeof sk);
  json_decref(claims);
  sg_buf_free(&scope);
  json_decref(body);
  if (!tok) {
    json_decref(scope_arr);
    json_decref(list_arr);
    sg_resp_error(resp, req, SG_E_INTERNAL, NULL, NULL);
    return;
  }
  json_t *out = json_pack("{s:s,s:s,s:i,s:I,s:s,s:o,s:o,s:s}", "accessToken", tok, "tokenType",
                          "Bearer", "expiresIn", TOKEN_TTL_S, "expiresAt",
                          (json_int_t)(now + TOKEN_TTL_S), "applicationId", who->application_id,
                          "listIds", list_arr, "scope", scope_arr, "requestId", req->request_id);
  sodium_memzero(tok, strlen(tok));
  free(tok);
  sg_resp_header(resp, "Cache-Control", "no-store");
  sg_resp_json(resp, 200, out);
}
