/*
 * Request ids. The requestId of a query response is derived from what determines the
 * body (key, normalised q, served locale, artifact hash), so identical calls give
 * byte-identical bodies and caches can share them; it never depends on x-request-id.
 */
#include <sodium.h>
#include <string.h>

#include "common/util.h"
#include "runtime/rt.h"

void sg__reqid_derive(const char *key, size_t klen, const char *nq, size_t nqlen,
                      const char *locale, const char *content_hash, char out[SG__REQID_LEN + 1]) {
  static const unsigned char zero = 0;
  crypto_hash_sha256_state st;
  unsigned char d[32];
  crypto_hash_sha256_init(&st);
  crypto_hash_sha256_update(&st, (const unsigned char *)key, klen);
  crypto_hash_sha256_update(&st, &zero, 1);
  crypto_hash_sha256_update(&st, (const unsigned char *)nq, nqlen);
  crypto_hash_sha256_update(&st, &zero, 1);
  if (locale) crypto_hash_sha256_update(&st, (const unsigned char *)locale, strlen(locale));
  crypto_hash_sha256_update(&st, &zero, 1);
  if (content_hash)
    crypto_hash_sha256_update(&st, (const unsigned char *)content_hash, strlen(content_hash));
  crypto_hash_sha256_final(&st, d);
  memcpy(out, "req_", 4);
  sg_hex(d, 16, out + 4);
}

void sg__reqid_random(char out[SG__REQID_LEN + 1]) {
  uint8_t r[16];
  sg_random_bytes(r, sizeof r);
  memcpy(out, "req_", 4);
  sg_hex(r, sizeof r, out + 4);
}
