/* Unit tests of pagination cursors (src/control/cursor.c): a cursor round-trips, and any
 * cursor the server did not issue for this collection is rejected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "control/cursor.h"

static const uint8_t secret[32] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                   17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

static json_t *sample_key(void) { return json_pack("[i,s,s]", 7, "cities", "lst_abc"); }

static char *encode_sample(void) {
  json_t *k = sample_key();
  char *c = sg_cursor_encode(secret, "lists:wsp_1", k);
  json_decref(k);
  assert_non_null(c);
  return c;
}

static void test_round_trip(void **state) {
  (void)state;
  json_t *k = sample_key();
  char *c = sg_cursor_encode(secret, "lists:wsp_1", k);
  assert_non_null(c);
  /* URL-safe: nothing that needs escaping in a query string. */
  for (const char *p = c; *p; p++)
    assert_true((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
                *p == '-' || *p == '_' || *p == '.');
  json_t *back = sg_cursor_decode(secret, "lists:wsp_1", c);
  assert_non_null(back);
  assert_true(json_equal(back, k));
  json_decref(back);
  json_decref(k);
  free(c);
}

static void test_unicode_key_round_trip(void **state) {
  (void)state;
  json_t *k = json_pack("[i,s,s]", -5, "s\xc3\xa3o-paulo \"q\"", "lst_x");
  char *c = sg_cursor_encode(secret, "items:lst_1", k);
  assert_non_null(c);
  json_t *back = sg_cursor_decode(secret, "items:lst_1", c);
  assert_non_null(back);
  assert_true(json_equal(back, k));
  json_decref(back);
  json_decref(k);
  free(c);
}

static void test_tampered_payload(void **state) {
  (void)state;
  char *c = encode_sample();
  /* Flip one character of the payload part (before the dot) to another base64url char. */
  c[3] = c[3] == 'A' ? 'B' : 'A';
  assert_null(sg_cursor_decode(secret, "lists:wsp_1", c));
  free(c);
}

static void test_forged_payload_with_old_mac(void **state) {
  (void)state;
  char *c = encode_sample();
  json_t *k2 = json_pack("[i,s,s]", 0, "aaa", "lst_zzz");
  char *other = sg_cursor_encode(secret, "lists:wsp_1", k2);
  json_decref(k2);
  /* Splice other's payload with c's MAC. */
  const char *dot_c = strchr(c, '.'), *dot_o = strchr(other, '.');
  assert_non_null(dot_c);
  assert_non_null(dot_o);
  char forged[2048];
  snprintf(forged, sizeof forged, "%.*s%s", (int)(dot_o - other), other, dot_c);
  assert_null(sg_cursor_decode(secret, "lists:wsp_1", forged));
  free(other);
  free(c);
}

static void test_tampered_mac(void **state) {
  (void)state;
  char *c = encode_sample();
  size_t n = strlen(c);
  c[n - 2] = c[n - 2] == 'A' ? 'B' : 'A';
  assert_null(sg_cursor_decode(secret, "lists:wsp_1", c));
  free(c);
}

static void test_truncated_mac(void **state) {
  (void)state;
  char *c = encode_sample();
  c[strlen(c) - 3] = '\0';
  assert_null(sg_cursor_decode(secret, "lists:wsp_1", c));
  free(c);
}

static void test_wrong_secret(void **state) {
  (void)state;
  char *c = encode_sample();
  uint8_t other[32];
  memcpy(other, secret, 32);
  other[0] ^= 1;
  assert_null(sg_cursor_decode(other, "lists:wsp_1", c));
  free(c);
}

static void test_wrong_scope(void **state) {
  (void)state;
  char *c = encode_sample();
  assert_null(sg_cursor_decode(secret, "lists:wsp_2", c));
  assert_null(sg_cursor_decode(secret, "lists:wsp_", c));
  assert_null(sg_cursor_decode(secret, "items:wsp_1", c));
  assert_null(sg_cursor_decode(secret, "", c));
  free(c);
}

static void test_garbage(void **state) {
  (void)state;
  static const char *const bad[] = {
      "",
      ".",
      "abc",
      "abc.",
      ".abc",
      "!!!!.????",
      "a.b.c",
      "%00.%00",
      "\xff\xfe.x",
      "e30.e30",
      "W10.AAAAAAAAAAAAAAAAAAAAAA",
      "....",
      " ",
      "e30",
      NULL,
  };
  for (const char *const *p = bad; *p; p++)
    assert_null(sg_cursor_decode(secret, "lists:wsp_1", *p));
}

static void test_empty_key_round_trip(void **state) {
  (void)state;
  json_t *empty = json_array();
  char *c = sg_cursor_encode(secret, "lists:wsp_1", empty);
  assert_non_null(c);
  json_t *back = sg_cursor_decode(secret, "lists:wsp_1", c);
  assert_non_null(back);
  assert_int_equal(json_array_size(back), 0);
  json_decref(back);
  json_decref(empty);
  free(c);
}

/* Builds a cursor over an arbitrary payload with a correct MAC, as only the server could. */
static void sign_raw(const char *payload, char *out, size_t outsz) {
  uint8_t full[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_state st;
  crypto_auth_hmacsha256_init(&st, secret, 32);
  crypto_auth_hmacsha256_update(&st, (const unsigned char *)payload, strlen(payload));
  crypto_auth_hmacsha256_final(&st, full);
  sodium_bin2base64(out, outsz, (const unsigned char *)payload, strlen(payload),
                    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
  size_t l = strlen(out);
  out[l] = '.';
  sodium_bin2base64(out + l + 1, outsz - l - 1, full, 16, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

static void test_signed_but_malformed_payloads(void **state) {
  (void)state;
  char c[512];
  /* Sanity: the helper produces cursors the decoder accepts. */
  sign_raw("[\"lists:wsp_1\",1,\"a\",\"b\"]", c, sizeof c);
  json_t *ok = sg_cursor_decode(secret, "lists:wsp_1", c);
  assert_non_null(ok);
  json_decref(ok);
  static const char *const bad[] = {
      "{\"a\":1}",
      "\"lists:wsp_1\"",
      "[1,\"lists:wsp_1\"]",
      "[]",
      "not json",
      "[\"lists:wsp_1\"",
      "null",
      NULL,
  };
  for (const char *const *p = bad; *p; p++) {
    sign_raw(*p, c, sizeof c);
    assert_null(sg_cursor_decode(secret, "lists:wsp_1", c));
  }
}

static void test_overlong(void **state) {
  (void)state;
  /* A long but honestly signed key produces a cursor over the 1024-byte cap: refused. */
  char big[1200];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  json_t *k = json_pack("[i,s,s]", 1, big, "lst_1");
  char *c = sg_cursor_encode(secret, "lists:wsp_1", k);
  json_decref(k);
  assert_non_null(c);
  assert_true(strlen(c) > 1024);
  assert_null(sg_cursor_decode(secret, "lists:wsp_1", c));
  free(c);
  /* And a huge garbage string is refused without reading it all. */
  size_t n = 1 << 20;
  char *huge = malloc(n + 1);
  assert_non_null(huge);
  memset(huge, 'A', n);
  huge[n / 2] = '.';
  huge[n] = '\0';
  assert_null(sg_cursor_decode(secret, "lists:wsp_1", huge));
  free(huge);
}

int main(void) {
  assert_int_equal(sg_init(), 0);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_unicode_key_round_trip),
      cmocka_unit_test(test_tampered_payload),
      cmocka_unit_test(test_forged_payload_with_old_mac),
      cmocka_unit_test(test_tampered_mac),
      cmocka_unit_test(test_truncated_mac),
      cmocka_unit_test(test_wrong_secret),
      cmocka_unit_test(test_wrong_scope),
      cmocka_unit_test(test_garbage),
      cmocka_unit_test(test_empty_key_round_trip),
      cmocka_unit_test(test_signed_but_malformed_payloads),
      cmocka_unit_test(test_overlong),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
