/* libFuzzer target: access-token parsing and verification on arbitrary bytes. */
#include <sodium.h>
#include <stdint.h>
#include <string.h>

#include "common/jwt.h"

static uint8_t pk[32], sk[64];

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sg_jwt_claims c;
  sg_jwt_result r = sg_jwt_verify((const char *)data, size, lookup, NULL, 2000, &c);
  if (r == SG_JWT_OK) (void)sg_jwt_covers(&c, "lst_a");
  return 0;
}
