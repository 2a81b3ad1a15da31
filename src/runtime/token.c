/*
 * Access-token check for private lists.
 *
 * `Authorization: Bearer <JWS>` signed with Ed25519 by the control plane (common/jwt.h).
 * The public halves come from the snapshot's signing-key records, so a rotated key is
 * trusted (and a removed one distrusted) at the next snapshot swap. A token is valid for
 * a query when its signature verifies under its kid, it is not expired (60 s skew), it
 * was minted for the key's application (sub), it holds the "query" scope and it covers
 * the key's list. Anything else — missing, malformed, alg other than EdDSA, unknown kid,
 * another application, another list — is invalid_token.
 *
 * Verified tokens are cached per thread for their lifetime, keyed by a BLAKE2b digest of
 * the token bytes: a browser sends the same token on every keystroke, so the common case
 * is one hash and a table probe — no signature check, no JSON parse, no allocation. A hit
 * still checks expiry against the clock and that the signing key is still published, so
 * removing a key from the edge store distrusts its tokens at the next snapshot swap.
 */
#include <sodium.h>
#include <string.h>

#include "common/bearer.h"
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

#define CACHE_SLOTS 64 /* per thread; direct-mapped */

typedef struct {
  uint8_t digest[16];
  bool used;
  sg_jwt_claims claims;
} cache_entry;

static _Thread_local cache_entry cache[CACHE_SLOTS];

/* Verifies tok[0..len) through the thread's cache. */
static bool verified_claims(const sg__rt_snapshot *s, const char *tok, size_t len, int64_t now_s,
                            sg_jwt_claims *out) {
  uint8_t d[16];
  crypto_generichash(d, sizeof d, (const unsigned char *)tok, len, NULL, 0);
  uint32_t slot;
  memcpy(&slot, d, sizeof slot);
  cache_entry *e = &cache[slot % CACHE_SLOTS];
  uint8_t pk[32];
  if (e->used && memcmp(e->digest, d, sizeof d) == 0) {
    if (sg_jwt_check_time(e->claims.exp, e->claims.iat, now_s) == SG_JWT_OK &&
        lookup(e->claims.kid, pk, (void *)s)) {
      *out = e->claims;
      return true;
    }
    e->used = false; /* expired or its key withdrawn: verify afresh (and fail) */
  }
  if (sg_jwt_verify(tok, len, lookup, (void *)s, now_s, out) != SG_JWT_OK) return false;
  memcpy(e->digest, d, sizeof d);
  e->claims = *out;
  e->used = true;
  return true;
}

sg_err sg__token_verify(const sg__rt_snapshot *s, const char *auth, const sg__rt_key *k,
                        int64_t now_s) {
  const char *tok;
  size_t len;
  if (!sg_bearer_token(auth, &tok, &len) || len > SG_JWT_MAX_LEN) return SG_E_INVALID_TOKEN;
  sg_jwt_claims c;
  if (!verified_claims(s, tok, len, now_s, &c)) return SG_E_INVALID_TOKEN;
  if (!c.query_scope || strcmp(c.sub, k->app->id) != 0 || !sg_jwt_covers(&c, k->list->id))
    return SG_E_INVALID_TOKEN;
  return SG_E_OK;
}
