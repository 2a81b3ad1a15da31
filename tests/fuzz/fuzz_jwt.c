/*
 * libFuzzer target: access-token verification, past the signature check.
 *
 * Random bytes almost never carry a valid Ed25519 signature, so fuzzing raw tokens alone
 * reaches only the signature check. Here most inputs are the token's header and claims
 * JSON, which the target signs with a fixed test key before verifying, so the claim
 * parsing and the time, audience and scope checks see every mutation. Input layout:
 *
 *   byte 0 = F: F & 0x80  the rest is a raw token (so is any input starting "eyJ");
 *               F & 0x07  picks `now` from a table (ordinary, 0 and the int64 ends);
 *   then      header JSON, NUL, claims JSON   (no NUL: a standard header, all claims).
 *
 * A custom mutator also mutates the claims as JSON (a claim removed, retyped, or set to
 * an extreme value), which byte flips rarely produce while keeping the JSON valid.
 * Whatever verifies must satisfy the documented checks, or the target traps.
 */
#include <jansson.h>
#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/jwt.h"

#define B64 sodium_base64_VARIANT_URLSAFE_NO_PADDING
#define STD_HEADER "{\"alg\":\"EdDSA\",\"typ\":\"JWT\",\"kid\":\"k1\"}"

static uint8_t pk[32], sk[64];

static const int64_t NOW[8] = {2000, 0, INT64_MAX, INT64_MIN, 1700000000, -1, 59, -60};

static bool lookup(const char *kid, uint8_t out[32], void *ctx) {
  (void)ctx;
  if (strcmp(kid, "k1") != 0) return false;
  memcpy(out, pk, 32);
  return true;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  if (sodium_init() < 0) return 1;
  /* A fixed key so that crashes reproduce. */
  uint8_t seed[32] = {1, 2, 3};
  crypto_sign_seed_keypair(pk, sk, seed);
  return 0;
}

/* Appends base64url(p[0..n)) at out + *pos; false when it does not fit in cap. */
static bool b64(char *out, size_t cap, size_t *pos, const void *p, size_t n) {
  size_t need = sodium_base64_ENCODED_LEN(n, B64);
  if (*pos + need > cap) return false;
  sodium_bin2base64(out + *pos, need, p, n, B64);
  *pos += need - 1;
  return true;
}

static void check(const char *tok, size_t len, int64_t now) {
  sg_jwt_claims c;
  sg_jwt_result r = sg_jwt_verify(tok, len, lookup, NULL, now, &c);
  if (r != SG_JWT_OK) return;
  /* What verified must hold everything verification promises. */
  if (strcmp(c.kid, "k1") != 0 || c.sub[0] == '\0' || c.jti[0] == '\0') __builtin_trap();
  if (sg_jwt_check_time(c.exp, c.iat, now) != SG_JWT_OK) __builtin_trap();
  if (c.nlists > SG_JWT_MAX_LISTS) __builtin_trap();
  for (size_t i = 0; i < c.nlists; i++)
    if (c.lists[i][0] == '\0' || strlen(c.lists[i]) >= sizeof c.lists[i]) __builtin_trap();
  (void)sg_jwt_covers(&c, "lst_a");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size >= 3 && memcmp(data, "eyJ", 3) == 0) {
    check((const char *)data, size, NOW[0]);
    return 0;
  }
  if (size == 0) return 0;
  uint8_t flags = data[0];
  int64_t now = NOW[flags & 7];
  const char *rest = (const char *)data + 1;
  size_t rn = size - 1;
  if (flags & 0x80) {
    check(rest, rn, now);
    return 0;
  }
  const char *hdr = STD_HEADER, *claims = rest;
  size_t hn = strlen(STD_HEADER), cn = rn;
  const char *nul = memchr(rest, '\0', rn);
  if (nul) {
    hdr = rest;
    hn = (size_t)(nul - rest);
    claims = nul + 1;
    cn = rn - hn - 1;
  }
  char tok[2 * SG_JWT_MAX_LEN];
  size_t pos = 0;
  if (!b64(tok, sizeof tok, &pos, hdr, hn)) return 0;
  tok[pos++] = '.';
  if (!b64(tok, sizeof tok, &pos, claims, cn)) return 0;
  uint8_t sig[crypto_sign_BYTES];
  crypto_sign_detached(sig, NULL, (const unsigned char *)tok, pos, sk);
  if (pos + 1 >= sizeof tok) return 0;
  tok[pos++] = '.';
  if (!b64(tok, sizeof tok, &pos, sig, sizeof sig)) return 0;
  check(tok, pos, now);
  return 0;
}

/* ---------------------------------------------------------------- mutator ------ */

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static const char *const CLAIMS[] = {"iss", "aud", "sub", "jti", "exp", "iat", "scope"};

static json_t *odd_value(unsigned r) {
  switch (r % 16) {
  case 0: return json_integer(INT64_MAX);
  case 1: return json_integer(INT64_MIN);
  case 2: return json_integer(INT64_MAX - 59);
  case 3: return json_integer(INT64_MIN + 59);
  case 4: return json_integer(0);
  case 5: return json_integer(-1);
  case 6: return json_real(1e300);
  case 7: return json_string("");
  case 8: return json_string(SG_JWT_ISSUER);
  case 9: return json_string(SG_JWT_AUDIENCE);
  case 10: return json_string("query list:lst_a list:lst_b");
  case 11: return json_string("query list: list:lst_a  query");
  case 12: return json_null();
  case 13: return json_true();
  case 14: return json_pack("[s]", "query");
  default: return json_pack("{s:i}", "exp", 1);
  }
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  srand(seed);
  /* Half the time, and on raw tokens, the byte-level mutations. */
  if (size < 2 || (data[0] & 0x80) || rand() % 2) return LLVMFuzzerMutate(data, size, max_size);
  const char *rest = (const char *)data + 1;
  size_t rn = size - 1;
  const char *nul = memchr(rest, '\0', rn);
  size_t off = nul ? (size_t)(nul - rest) + 1 : 0; /* where the claims start in rest */
  json_t *c = json_loadb(rest + off, rn - off, 0, NULL);
  if (!json_is_object(c)) {
    json_decref(c);
    return LLVMFuzzerMutate(data, size, max_size);
  }
  const char *name = CLAIMS[(unsigned)rand() % (sizeof CLAIMS / sizeof CLAIMS[0])];
  if (rand() % 4 == 0)
    json_object_del(c, name);
  else
    json_object_set_new(c, name, odd_value((unsigned)rand()));
  char *s = json_dumps(c, JSON_COMPACT);
  json_decref(c);
  size_t out = size;
  if (s && 1 + off + strlen(s) <= max_size) {
    memcpy(data + 1 + off, s, strlen(s));
    out = 1 + off + strlen(s);
    data[0] = (uint8_t)((data[0] & 0x78) | ((unsigned)rand() & 7)); /* another `now` */
  }
  free(s);
  return out;
}
