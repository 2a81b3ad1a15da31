/*
 * Error messages that tell a runtime caller what to change. The error table's messages
 * are shared with the control plane and stay generic; these name the runtime's own limits
 * and recognise the commonest mistake, a key of the wrong kind. Every string is a JSON-safe
 * constant (sg__rt_error copies it into the body as is).
 */
#include <string.h>

#include "runtime/http/http1.h"
#include "runtime/rt.h"

_Static_assert(SG__H1_BODY_MAX == 4096, "update the 413 message");
_Static_assert(SG__H1_HEAD_MAX == 16 * 1024, "update the 431 message");

const char *sg__rt_message(sg_err e) {
  switch (e) {
  case SG_E_PAYLOAD_TOO_LARGE:
    return "The request body is larger than the runtime accepts: at most 4096 bytes.";
  case SG_E_HEADERS_TOO_LARGE:
    return "The request line and headers are larger than the runtime accepts: at most 16 KiB.";
  default: return sg_err_message(e);
  }
}

/* The control plane's paths sent to the runtime's port: the commonest wrong turn (an
 * import or an API call with the runtime's URL). */
bool sg__rt_control_path(const char *path, size_t n) {
  return (n >= 5 && memcmp(path, "/api/", 5) == 0) ||
         (n >= 10 && memcmp(path, "/dashboard", 10) == 0 &&
          (n == 10 || path[10] == '/' || path[10] == '?'));
}

const char *sg__rt_control_port_hint(void) {
  return "This is the runtime's port, which serves /v1 only. The control plane (/api/v1, "
         "/dashboard, and suggestd import and export) listens on its own port: "
         "--control-listen, 127.0.0.1:8080 by default.";
}

const char *sg__rt_token_hint(const char *authorization) {
  if (!authorization || !*authorization)
    return "This list is private and no access token was sent. Your server mints one with "
           "POST /api/v1/token (secret key) and the page sends it as Authorization: Bearer; "
           "or make the list public (PATCH /api/v1/lists/{id} with visibility public) if "
           "anyone may read it.";
  return "The access token is invalid, expired, or does not cover this list: mint a new one "
         "with POST /api/v1/token for this list and send it as Authorization: Bearer.";
}

const char *sg__rt_key_hint(const char *key, size_t klen) {
  if (!key || klen == 0)
    return "No publishable key was sent: put one (pk_...) in the key query parameter, or in "
           "the key member of a selection body.";
  if (klen > 3 && memcmp(key, "sk_", 3) == 0)
    return "This is a secret key (sk_...), but the runtime takes a publishable key (pk_...). A "
           "secret key belongs on your server only: revoke this one if it reached a browser.";
  if (klen > 3 && memcmp(key, "eyJ", 3) == 0)
    return "This is an access token, but the key parameter takes a publishable key (pk_...). "
           "Send the token as Authorization: Bearer.";
  return NULL;
}
