/*
 * Access-token check for private lists.
 *
 * Token verification (JWS signed with an Ed25519 key published to the edge store as a
 * signing-key record, checked against kid, exp, applicationId and the list scope) lands
 * in a later issue; it will replace the body of this function and nothing else. Until
 * then no token can be valid, so every private list answers 401 invalid_token.
 */
#include "runtime/rt.h"

sg_err sg__token_verify(const sg__rt_snapshot *s, const char *auth, const sg__rt_key *k,
                        int64_t now_s) {
  (void)s;
  (void)auth;
  (void)k;
  (void)now_s;
  return SG_E_INVALID_TOKEN;
}
