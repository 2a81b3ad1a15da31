/*
 * Request ids. The requestId of a query response is derived from what determines the
 * body (key, normalised q, served locale, artifact hash, limit), so identical calls give
 * byte-identical bodies and caches can share them; it never depends on x-request-id.
 * The second half of the same digest tags the body for its ETag (h_query.c), so a query
 * hashes ~150 bytes once instead of also hashing its ~1 KB body.
 */
#include <sodium.h>
#include <string.h>

#include "common/util.h"
#include "runtime/rt.h"

void sg__reqid_derive(const char *key, size_t klen, const char *nq, size_t nqlen,
                      const char *locale, const char *content_hash, unsigned limit,
                      char out[SG__REQID_LEN + 1], uint8_t tag[16]) {
  sg__reqid_derive_within(key, klen, nq, nqlen, locale, content_hash, limit, NULL, 0, out, tag);
}

void sg__reqid_derive_within(const char *key, size_t klen, const char *nq, size_t nqlen,
                             const char *locale, const char *content_hash, unsigned limit,
                             const char *within, size_t wlen, char out[SG__REQID_LEN + 1],
                             uint8_t tag[16]) {
  static const unsigned char zero = 0;
  crypto_generichash_state st;
  unsigned char d[32];
  crypto_generichash_init(&st, NULL, 0, sizeof d);
  crypto_generichash_update(&st, (const unsigned char *)key, klen);
  crypto_generichash_update(&st, &zero, 1);
  crypto_generichash_update(&st, (const unsigned char *)nq, nqlen);
  crypto_generichash_update(&st, &zero, 1);
  if (locale) crypto_generichash_update(&st, (const unsigned char *)locale, strlen(locale));
  crypto_generichash_update(&st, &zero, 1);
  if (content_hash)
    crypto_generichash_update(&st, (const unsigned char *)content_hash, strlen(content_hash));
  /* The default limit (10) hashes as nothing, so a call without limit keeps the id it had
   * before the parameter existed. */
  if (limit != SG_BUCKET_ITEMS) {
    unsigned char lb[2] = {0, (unsigned char)limit};
    crypto_generichash_update(&st, lb, sizeof lb);
  }
  /* Likewise an absent within; 'w' is no limit (1..10), so the two never read alike. */
  if (within) {
    static const unsigned char wb[2] = {0, 'w'};
    crypto_generichash_update(&st, wb, sizeof wb);
    crypto_generichash_update(&st, (const unsigned char *)within, wlen);
  }
  crypto_generichash_final(&st, d, sizeof d);
  memcpy(out, "req_", 4);
  sg_hex(d, 16, out + 4);
  if (tag) memcpy(tag, d + 16, 16);
}

/* SplitMix64's finaliser: a bijection on 64 bits that scrambles a counter. */
static uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Unique ids without a system call or a hash per request: each thread draws 16 random
 * bytes from the OS once — a 64-bit prefix and a 64-bit offset — then numbers its
 * requests with mix64(counter + offset), which never repeats within the thread (a
 * bijection of a counter) and does not show the request count. Threads differ by their
 * random prefixes. Correlation ids need uniqueness, not secrecy. */
void sg__reqid_random(char out[SG__REQID_LEN + 1]) {
  static _Thread_local uint64_t seed[2];
  static _Thread_local uint64_t counter;
  static _Thread_local int seeded;
  if (!seeded) {
    sg_random_bytes(seed, sizeof seed);
    seeded = 1;
  }
  uint64_t v[2] = {seed[0], mix64(counter++ + seed[1])};
  memcpy(out, "req_", 4);
  sg_hex(v, sizeof v, out + 4);
}
