/*
 * Access-token check for private lists.
 *
 * `Authorization: Bearer <JWS>` signed with Ed25519 by the control plane (common/jwt.h).
 * The public halves come from the snapshot's signing-key records, so a rotated key is
 * trusted (and a removed one distrusted) at the next snapshot swap. A token is valid for
 * a query when its signature verifies under its kid, it is not expired (60 s skew), it
 * was minted for the key's application (sub), it holds the "query" scope and it covers
 * the key's list. Anything else — missing, malformed, alg other than EdDSA, unknown kid,
 * another application, another list — is invalid_token. No allocation beyond jansson's
 * parse of the token's JSON parts.
 */
#include <string.h>
#include <strings.h>

#include "common/jwt.h"
#include "runtime/rt.h"

static bool lookup(const char *kid, uint8_t pk[32], void *ctx) {
  const sg__rt_snapshot *s = ctx;
  for (size_t i = 0; i < s->n_signing_keys; i++)
    if (strcmp(s->signing_keys[i].kid, kid) == 0) {
      memcpy(pk, s->signing_keys[i].public_key, 32);
      return true;
    }
  return false;
}

sg_err sg__token_verify(const sg__rt_snapshot *s, const char *auth, const sg__rt_key *k,
                        int64_t now_s) {
  if (!auth || strncasecmp(auth, "Bearer ", 7) != 0) return SG_E_INVALID_TOKEN;
  const char *tok = auth + 7;
  while (*tok == ' ') tok++;
  size_t len = strlen(tok);
  while (len && tok[len - 1] == ' ') len--;
  if (len == 0 || len > SG_JWT_MAX_LEN) return SG_E_INVALID_TOKEN;
  sg_jwt_claims c;
  if (sg_jwt_verify(tok, len, lookup, (void *)s, now_s, &c) != SG_JWT_OK) return SG_E_INVALID_TOKEN;
  if (!c.query_scope || strcmp(c.sub, k->app->id) != 0 || !sg_jwt_covers(&c, k->list->id))
    return SG_E_INVALID_TOKEN;
  return SG_E_OK;
}
