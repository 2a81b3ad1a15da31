#include "common/jwt.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#define B64 sodium_base64_VARIANT_URLSAFE_NO_PADDING

/* Appends base64url(data) to out at *pos (bounded by cap). */
static int b64_append(char *out, size_t cap, size_t *pos, const void *data, size_t n) {
  size_t need = sodium_base64_ENCODED_LEN(n, B64);
  if (*pos + need > cap) return -1;
  sodium_bin2base64(out + *pos, need, data, n, B64);
  *pos += need - 1;
  return 0;
}

char *sg_jwt_sign(const char *kid, const uint8_t sk[64], const json_t *claims) {
  json_t *hdr = json_pack("{s:s,s:s,s:s}", "alg", "EdDSA", "typ", "JWT", "kid", kid);
  char *h = json_dumps(hdr, JSON_COMPACT);
  char *c = json_dumps(claims, JSON_COMPACT);
  json_decref(hdr);
  char *out = NULL;
  if (!h || !c) goto done;
  size_t cap = (strlen(h) + strlen(c)) * 2 + 256;
  out = malloc(cap);
  if (!out) goto done;
  size_t pos = 0;
  uint8_t sig[crypto_sign_BYTES];
  if (b64_append(out, cap, &pos, h, strlen(h))) goto fail;
  out[pos++] = '.';
  if (b64_append(out, cap, &pos, c, strlen(c))) goto fail;
  crypto_sign_detached(sig, NULL, (const unsigned char *)out, pos, sk);
  out[pos++] = '.';
  if (b64_append(out, cap, &pos, sig, sizeof sig)) goto fail;
  out[pos] = '\0';
  goto done;
fail:
  free(out);
  out = NULL;
done:
  free(h);
  free(c);
  return out;
}

/* Decodes one base64url part into buf (cap bytes, NUL-terminated). Returns length or -1. */
static long decode_part(const char *p, size_t n, uint8_t *buf, size_t cap) {
  size_t len = 0;
  const char *end = NULL;
  if (n == 0 || sodium_base642bin(buf, cap - 1, p, n, NULL, &len, &end, B64) != 0 || end != p + n)
    return -1;
  buf[len] = '\0';
  return (long)len;
}

static bool copy_str(const json_t *v, char *out, size_t outsz) {
  if (!json_is_string(v)) return false;
  size_t n = json_string_length(v);
  if (n == 0 || n >= outsz) return false;
  memcpy(out, json_string_value(v), n + 1);
  return true;
}

static sg_jwt_result parse_claims(const uint8_t *buf, size_t n, int64_t now, sg_jwt_claims *out) {
  json_t *c = json_loadb((const char *)buf, n, JSON_REJECT_DUPLICATES, NULL);
  sg_jwt_result r = SG_JWT_MALFORMED;
  if (!json_is_object(c)) goto done;
  const json_t *iss = json_object_get(c, "iss"), *aud = json_object_get(c, "aud");
  const json_t *exp = json_object_get(c, "exp"), *iat = json_object_get(c, "iat");
  const json_t *scope = json_object_get(c, "scope");
  if (!json_is_string(iss) || strcmp(json_string_value(iss), SG_JWT_ISSUER) != 0) goto done;
  if (!copy_str(json_object_get(c, "sub"), out->sub, sizeof out->sub)) goto done;
  if (!copy_str(json_object_get(c, "jti"), out->jti, sizeof out->jti)) goto done;
  if (!json_is_integer(exp) || !json_is_integer(iat) || !json_is_string(scope)) goto done;
  out->exp = json_integer_value(exp);
  out->iat = json_integer_value(iat);
  /* scope: space-separated "query list:<id> …" (RFC 8693 style). */
  const char *s = json_string_value(scope);
  out->nlists = 0;
  out->query_scope = false;
  while (*s) {
    while (*s == ' ') s++;
    size_t w = strcspn(s, " ");
    if (w == 5 && strncmp(s, "query", 5) == 0) {
      out->query_scope = true;
    } else if (w > 5 && strncmp(s, "list:", 5) == 0) {
      if (out->nlists >= SG_JWT_MAX_LISTS || w - 5 >= sizeof out->lists[0]) goto done;
      memcpy(out->lists[out->nlists], s + 5, w - 5);
      out->lists[out->nlists][w - 5] = '\0';
      out->nlists++;
    }
    s += w;
  }
  if (!json_is_string(aud) || strcmp(json_string_value(aud), SG_JWT_AUDIENCE) != 0) {
    r = SG_JWT_BAD_AUDIENCE;
    goto done;
  }
  r = sg_jwt_check_time(out->exp, out->iat, now);
done:
  json_decref(c);
  return r;
}

sg_jwt_result sg_jwt_check_time(int64_t exp, int64_t iat, int64_t now) {
  /* exp + skew <= now and iat - skew > now, written so that no claim value overflows:
   * past the ends of the range the sum is beyond any now, so that test cannot hold. */
  if (exp <= INT64_MAX - SG_JWT_SKEW_S && exp + SG_JWT_SKEW_S <= now) return SG_JWT_EXPIRED;
  if (iat >= INT64_MIN + SG_JWT_SKEW_S && iat - SG_JWT_SKEW_S > now) return SG_JWT_NOT_YET;
  return SG_JWT_OK;
}

sg_jwt_result sg_jwt_verify(const char *token, size_t len, sg_jwt_key_lookup lookup, void *ctx,
                            int64_t now, sg_jwt_claims *out) {
  memset(out, 0, sizeof *out);
  if (len == 0 || len > SG_JWT_MAX_LEN) return SG_JWT_MALFORMED;
  const char *d1 = memchr(token, '.', len);
  if (!d1) return SG_JWT_MALFORMED;
  const char *d2 = memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - token));
  if (!d2 || memchr(d2 + 1, '.', len - (size_t)(d2 + 1 - token))) return SG_JWT_MALFORMED;
  uint8_t buf[SG_JWT_MAX_LEN];
  long hn = decode_part(token, (size_t)(d1 - token), buf, sizeof buf);
  if (hn < 0) return SG_JWT_MALFORMED;
  json_t *h = json_loadb((const char *)buf, (size_t)hn, JSON_REJECT_DUPLICATES, NULL);
  const json_t *alg = json_object_get(h, "alg");
  bool alg_ok = json_is_string(alg) && strcmp(json_string_value(alg), "EdDSA") == 0;
  bool kid_ok = copy_str(json_object_get(h, "kid"), out->kid, sizeof out->kid);
  bool obj = json_is_object(h);
  json_decref(h);
  if (!obj) return SG_JWT_MALFORMED;
  if (!alg_ok) return SG_JWT_BAD_ALG;
  if (!kid_ok) return SG_JWT_MALFORMED;
  uint8_t pk[32];
  if (!lookup(out->kid, pk, ctx)) return SG_JWT_UNKNOWN_KID;
  uint8_t sig[crypto_sign_BYTES + 1];
  if (decode_part(d2 + 1, len - (size_t)(d2 + 1 - token), sig, sizeof sig) != crypto_sign_BYTES)
    return SG_JWT_MALFORMED;
  if (crypto_sign_verify_detached(sig, (const unsigned char *)token, (size_t)(d2 - token), pk))
    return SG_JWT_BAD_SIGNATURE;
  long cn = decode_part(d1 + 1, (size_t)(d2 - d1 - 1), buf, sizeof buf);
  if (cn < 0) return SG_JWT_MALFORMED;
  return parse_claims(buf, (size_t)cn, now, out);
}

bool sg_jwt_covers(const sg_jwt_claims *c, const char *list_id) {
  if (!c->query_scope) return false;
  for (size_t i = 0; i < c->nlists; i++)
    if (strcmp(c->lists[i], list_id) == 0) return true;
  return false;
}
