/* Access-token signing and strict verification. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "common/jwt.h"
#include "common/util.h"

static uint8_t pk1[32], sk1[64], pk2[32], sk2[64];

static bool lookup(const char *kid, uint8_t pk[32], void *ctx) {
  (void)ctx;
  if (strcmp(kid, "k1") == 0) {
    memcpy(pk, pk1, 32);
    return true;
  }
  if (strcmp(kid, "k2") == 0) {
    memcpy(pk, pk2, 32);
    return true;
  }
  return false;
}

static json_t *claims(int64_t iat, int64_t exp, const char *aud, const char *scope) {
  return json_pack("{s:s,s:s,s:s,s:I,s:I,s:s,s:s}", "iss", SG_JWT_ISSUER, "sub", "app_1", "aud",
                   aud, "iat", (json_int_t)iat, "exp", (json_int_t)exp, "jti", "tok_1", "scope",
                   scope);
}

static char *mint(const char *kid, const uint8_t *sk, int64_t iat, int64_t exp, const char *aud,
                  const char *scope) {
  json_t *c = claims(iat, exp, aud, scope);
  char *t = sg_jwt_sign(kid, sk, c);
  json_decref(c);
  assert_non_null(t);
  return t;
}

static sg_jwt_result verify(const char *t, int64_t now, sg_jwt_claims *out) {
  return sg_jwt_verify(t, strlen(t), lookup, NULL, now, out);
}

static void test_round_trip(void **state) {
  (void)state;
  char *t = mint("k1", sk1, 1000, 4600, SG_JWT_AUDIENCE, "query list:lst_a list:lst_b");
  sg_jwt_claims c;
  assert_int_equal(verify(t, 2000, &c), SG_JWT_OK);
  assert_string_equal(c.sub, "app_1");
  assert_string_equal(c.kid, "k1");
  assert_int_equal(c.nlists, 2);
  assert_true(sg_jwt_covers(&c, "lst_a"));
  assert_true(sg_jwt_covers(&c, "lst_b"));
  assert_false(sg_jwt_covers(&c, "lst_c"));
  free(t);
}

static void test_scope_without_query_covers_nothing(void **state) {
  (void)state;
  char *t = mint("k1", sk1, 1000, 4600, SG_JWT_AUDIENCE, "list:lst_a");
  sg_jwt_claims c;
  assert_int_equal(verify(t, 2000, &c), SG_JWT_OK);
  assert_false(sg_jwt_covers(&c, "lst_a"));
  free(t);
}

static void test_expiry_and_skew(void **state) {
  (void)state;
  char *t = mint("k1", sk1, 1000, 4600, SG_JWT_AUDIENCE, "query list:lst_a");
  sg_jwt_claims c;
  assert_int_equal(verify(t, 4600 + SG_JWT_SKEW_S - 1, &c), SG_JWT_OK);
  assert_int_equal(verify(t, 4600 + SG_JWT_SKEW_S, &c), SG_JWT_EXPIRED);
  assert_int_equal(verify(t, 1000 - SG_JWT_SKEW_S - 1, &c), SG_JWT_NOT_YET);
  free(t);
}

static void test_wrong_audience(void **state) {
  (void)state;
  char *t = mint("k1", sk1, 1000, 4600, "someone-else", "query list:lst_a");
  sg_jwt_claims c;
  assert_int_equal(verify(t, 2000, &c), SG_JWT_BAD_AUDIENCE);
  free(t);
}

static void test_tampered_signature_and_payload(void **state) {
  (void)state;
  char *t = mint("k1", sk1, 1000, 4600, SG_JWT_AUDIENCE, "query list:lst_a");
  sg_jwt_claims c;
  size_t n = strlen(t);
  char *bad = strdup(t);
  bad[n - 2] = bad[n - 2] == 'A' ? 'B' : 'A';
  assert_int_equal(verify(bad, 2000, &c), SG_JWT_BAD_SIGNATURE);
  /* Swap in claims signed by nobody: same header and signature, other payload. */
  char *other = mint("k1", sk1, 1000, 4600, SG_JWT_AUDIENCE, "query list:lst_zzz");
  char *d1 = strchr(t, '.'), *d2 = strrchr(t, '.');
  char *o1 = strchr(other, '.'), *o2 = strrchr(other, '.');
  char spliced[4096];
  snprintf(spliced, sizeof spliced, "%.*s%.*s%s", (int)(d1 - t), t, (int)(o2 - o1), o1, d2);
  assert_int_equal(verify(spliced, 2000, &c), SG_JWT_BAD_SIGNATURE);
  free(bad);
  free(other);
  free(t);
}

static void test_other_key_and_unknown_kid(void **state) {
  (void)state;
  /* Signed with k2's secret but claiming kid k1. */
  char *t = mint("k1", sk2, 1000, 4600, SG_JWT_AUDIENCE, "query list:lst_a");
  sg_jwt_claims c;
  assert_int_equal(verify(t, 2000, &c), SG_JWT_BAD_SIGNATURE);
  free(t);
  t = mint("k9", sk1, 1000, 4600, SG_JWT_AUDIENCE, "query list:lst_a");
  assert_int_equal(verify(t, 2000, &c), SG_JWT_UNKNOWN_KID);
  free(t);
}

static char *b64(const char *s) {
  size_t n = strlen(s);
  size_t cap = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  char *out = malloc(cap);
  sodium_bin2base64(out, cap, (const unsigned char *)s, n,
                    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  return out;
}

static void test_alg_none_and_hs256_rejected(void **state) {
  (void)state;
  const char *algs[] = {"{\"alg\":\"none\",\"kid\":\"k1\"}", "{\"alg\":\"HS256\",\"kid\":\"k1\"}",
                        "{\"alg\":\"eddsa\",\"kid\":\"k1\"}", "{\"kid\":\"k1\"}"};
  char *payload = b64("{\"iss\":\"suggestd\",\"sub\":\"app_1\",\"aud\":\"suggestd-runtime\","
                      "\"iat\":1000,\"exp\":4600,\"jti\":\"x\",\"scope\":\"query list:lst_a\"}");
  for (size_t i = 0; i < sizeof algs / sizeof algs[0]; i++) {
    char *h = b64(algs[i]);
    char tok[2048];
    snprintf(tok, sizeof tok, "%s.%s.", h, payload);
    sg_jwt_claims c;
    assert_int_equal(verify(tok, 2000, &c), SG_JWT_BAD_ALG);
    snprintf(tok, sizeof tok, "%s.%s.AAAA", h, payload);
    assert_int_equal(verify(tok, 2000, &c), SG_JWT_BAD_ALG);
    free(h);
  }
  free(payload);
}

static void test_malformed(void **state) {
  (void)state;
  const char *bad[] = {"",        ".",           "..",          "a.b.c",
                       "a.b.c.d", "e30.e30.e30", "!!!.###.$$$", "eyJhbGciOiJFZERTQSJ9"};
  sg_jwt_claims c;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_not_equal(verify(bad[i], 2000, &c), SG_JWT_OK);
  char *huge = malloc(SG_JWT_MAX_LEN + 10);
  memset(huge, 'a', SG_JWT_MAX_LEN + 9);
  huge[SG_JWT_MAX_LEN + 9] = '\0';
  assert_int_equal(verify(huge, 2000, &c), SG_JWT_MALFORMED);
  free(huge);
}

/* Claims at the ends of the integer range: the skew arithmetic must not overflow (UBSan
 * aborts the sanitizer build on a signed overflow), and the answers stay sensible. */
static void test_extreme_claims(void **state) {
  (void)state;
  sg_jwt_claims c;
  char *t = mint("k1", sk1, 1000, INT64_MAX, SG_JWT_AUDIENCE, "query list:lst_a");
  assert_int_equal(verify(t, 2000, &c), SG_JWT_OK);
  assert_int_equal(verify(t, INT64_MAX, &c), SG_JWT_OK);
  free(t);
  t = mint("k1", sk1, INT64_MIN, 4600, SG_JWT_AUDIENCE, "query list:lst_a");
  assert_int_equal(verify(t, 2000, &c), SG_JWT_OK);
  assert_int_equal(verify(t, INT64_MIN, &c), SG_JWT_OK);
  free(t);
  t = mint("k1", sk1, INT64_MAX, INT64_MIN, SG_JWT_AUDIENCE, "query list:lst_a");
  assert_int_equal(verify(t, 2000, &c), SG_JWT_EXPIRED);
  assert_int_equal(verify(t, INT64_MIN, &c), SG_JWT_NOT_YET);
  free(t);
  t = mint("k1", sk1, INT64_MAX - 59, INT64_MAX - 59, SG_JWT_AUDIENCE, "query list:lst_a");
  assert_int_equal(verify(t, INT64_MAX, &c), SG_JWT_OK);
  assert_int_equal(verify(t, 0, &c), SG_JWT_NOT_YET);
  free(t);
  t = mint("k1", sk1, INT64_MIN + 59, INT64_MIN + 59, SG_JWT_AUDIENCE, "query list:lst_a");
  assert_int_equal(verify(t, INT64_MIN, &c), SG_JWT_OK);
  assert_int_equal(verify(t, 0, &c), SG_JWT_EXPIRED);
  free(t);
  /* The shared check the runtime's token cache re-runs on a hit. */
  assert_int_equal(sg_jwt_check_time(INT64_MAX, INT64_MIN, 0), SG_JWT_OK);
  assert_int_equal(sg_jwt_check_time(INT64_MIN, INT64_MIN, 0), SG_JWT_EXPIRED);
  assert_int_equal(sg_jwt_check_time(INT64_MAX, INT64_MAX, 0), SG_JWT_NOT_YET);
  assert_int_equal(sg_jwt_check_time(100, 100, 159), SG_JWT_OK);
  assert_int_equal(sg_jwt_check_time(100, 100, 160), SG_JWT_EXPIRED);
  assert_int_equal(sg_jwt_check_time(100, 100, 40), SG_JWT_OK);
  assert_int_equal(sg_jwt_check_time(100, 100, 39), SG_JWT_NOT_YET);
}

int main(void) {
  if (sg_init()) return 1;
  crypto_sign_keypair(pk1, sk1);
  crypto_sign_keypair(pk2, sk2);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_scope_without_query_covers_nothing),
      cmocka_unit_test(test_expiry_and_skew),
      cmocka_unit_test(test_wrong_audience),
      cmocka_unit_test(test_tampered_signature_and_payload),
      cmocka_unit_test(test_other_key_and_unknown_kid),
      cmocka_unit_test(test_alg_none_and_hs256_rejected),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_extreme_claims),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
