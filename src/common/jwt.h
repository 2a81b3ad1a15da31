/*
 * Access tokens: compact JWS (JWT) signed with Ed25519 ("alg": "EdDSA").
 *
 * The control plane signs; the runtime verifies with public keys only. Verification is
 * strict: the header must name alg EdDSA (never "none" or an HMAC algorithm) and a kid;
 * the signature must verify; iss, aud, sub, exp, iat and scope must be present and well
 * formed. Sizes are bounded so a hostile token costs a bounded amount of work.
 */
#ifndef SG_COMMON_JWT_H
#define SG_COMMON_JWT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SG_JWT_ISSUER "suggestd"
#define SG_JWT_AUDIENCE "suggestd-runtime"
#define SG_JWT_MAX_LEN 4096
#define SG_JWT_MAX_LISTS 20
#define SG_JWT_SKEW_S 60 /* clock-skew allowance when checking exp and iat */

/* Signs claims (not stolen) with the 64-byte libsodium Ed25519 secret key; returns a
 * malloc'd token or NULL. */
char *sg_jwt_sign(const char *kid, const uint8_t sk[64], const json_t *claims);

typedef struct {
  char kid[64];
  char sub[64]; /* application id */
  char jti[64];
  int64_t exp, iat;
  size_t nlists; /* list ids from "list:<id>" scope entries */
  char lists[SG_JWT_MAX_LISTS][64];
  bool query_scope; /* the scope holds "query" */
} sg_jwt_claims;

/* Looks up the 32-byte public key of kid; returns false when unknown. */
typedef bool (*sg_jwt_key_lookup)(const char *kid, uint8_t pk[32], void *ctx);

typedef enum {
  SG_JWT_OK = 0,
  SG_JWT_MALFORMED, /* not three base64url parts, bad JSON, missing or ill-typed claims */
  SG_JWT_BAD_ALG,   /* alg is not EdDSA (including "none") */
  SG_JWT_UNKNOWN_KID,
  SG_JWT_BAD_SIGNATURE,
  SG_JWT_EXPIRED, /* exp + skew <= now */
  SG_JWT_NOT_YET, /* iat - skew > now */
  SG_JWT_BAD_AUDIENCE,
} sg_jwt_result;

/* Verifies token[0..len) at time now (Unix seconds) and fills *out. */
sg_jwt_result sg_jwt_verify(const char *token, size_t len, sg_jwt_key_lookup lookup, void *ctx,
                            int64_t now, sg_jwt_claims *out);

/* The exp and iat checks at time now with SG_JWT_SKEW_S of skew: SG_JWT_OK,
 * SG_JWT_EXPIRED or SG_JWT_NOT_YET. Defined for every int64 (no overflow). */
sg_jwt_result sg_jwt_check_time(int64_t exp, int64_t iat, int64_t now);

/* True when the claims cover list_id. */
bool sg_jwt_covers(const sg_jwt_claims *c, const char *list_id);

#endif
