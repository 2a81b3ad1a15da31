/* Unit tests of the dashboard's credentials (src/dashboard/auth.c): emails, the password
 * rule, Argon2id hashing, session cookies and CSRF tokens. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "dashboard/auth.h"

static void test_email_normalize(void **state) {
  (void)state;
  char out[256];
  assert_int_equal(sg_email_normalize("Owner@Example.COM", out), 0);
  assert_string_equal(out, "owner@example.com");
  assert_int_equal(sg_email_normalize("owner@localhost", out), 0);
  assert_int_equal(sg_email_normalize("first.last+tag@sub.example.org", out), 0);
  static const char *const bad[] = {
      "",         "a",          "@example.com",  "owner@",  "owner",    "a@b",
      "a@@b.co",  "a@b@c.co",   "a b@c.co",      "a@b..co", "a@.b.co",  "a@b.co.",
      "a@b_c.co", "\"a\"@b.co", "a@b.c\xc3\xa9", "é@b.co",  "a\n@b.co", NULL};
  for (const char *const *b = bad; *b; b++) {
    if (sg_email_normalize(*b, out) == 0) fail_msg("accepted '%s'", *b);
  }
  char longmail[300];
  memset(longmail, 'a', sizeof longmail);
  memcpy(longmail + 250, "@b.co", 6); /* 255 bytes */
  assert_int_equal(sg_email_normalize(longmail, out), -1);
  memcpy(longmail + 249, "@b.co", 6); /* 254 bytes */
  assert_int_equal(sg_email_normalize(longmail, out), 0);
}

static void test_password_rule(void **state) {
  (void)state;
  assert_null(sg_password_problem("twelve chars", 12));
  assert_non_null(sg_password_problem("eleven char", 11));
  /* Twelve code points, more bytes. */
  const char *accents = "éééééééééééé";
  assert_null(sg_password_problem(accents, strlen(accents)));
  assert_non_null(sg_password_problem("abcdefghijk\x01", 12));
  assert_non_null(sg_password_problem("abcdefghijk\xff", 12));
  char big[1100];
  memset(big, 'x', sizeof big);
  assert_null(sg_password_problem(big, 1024));
  assert_non_null(sg_password_problem(big, 1025));
  /* An embedded NUL is a control character, not the end of the password. */
  assert_non_null(sg_password_problem("abcdefgh\0ijklmn", 15));
}

static void test_hash_and_verify(void **state) {
  (void)state;
  char h[SG_PASSWORD_HASH_BYTES];
  assert_int_equal(sg_password_hash("correct horse", 13, h), 0);
  assert_memory_equal(h, "$argon2id$", 10);
  assert_true(sg_password_verify(h, "correct horse", 13));
  assert_false(sg_password_verify(h, "correct horsf", 13));
  assert_false(sg_password_verify(h, "correct hors", 12));
  /* No hash (unknown email): always false, after a real verification. */
  assert_false(sg_password_verify(NULL, "correct horse", 13));
  assert_false(sg_password_verify("not a hash", "correct horse", 13));
  /* Salted: the same password twice gives two hashes. */
  char h2[SG_PASSWORD_HASH_BYTES];
  assert_int_equal(sg_password_hash("correct horse", 13, h2), 0);
  assert_string_not_equal(h, h2);
}

static void test_session_cookie(void **state) {
  (void)state;
  char c[SG_SESSION_COOKIE_LEN + 1];
  uint8_t d[32], d2[32];
  sg_session_new(c, d);
  assert_int_equal(strlen(c), 43);
  char hdr[200];
  snprintf(hdr, sizeof hdr, "theme=dark; sg_session=%s; other=1", c);
  assert_int_equal(sg_session_from_header(hdr, d2), 0);
  assert_memory_equal(d, d2, 32);
  snprintf(hdr, sizeof hdr, "sg_session=%s", c);
  assert_int_equal(sg_session_from_header(hdr, d2), 0);
  assert_memory_equal(d, d2, 32);
  /* The digest is SHA-256 of the cookie value. */
  uint8_t want[32];
  sg_sha256(c, 43, want);
  assert_memory_equal(d, want, 32);
  /* Another session, never the same value. */
  char c2[SG_SESSION_COOKIE_LEN + 1];
  sg_session_new(c2, d2);
  assert_string_not_equal(c, c2);
  static const char *const bad[] = {NULL,
                                    "",
                                    "sg_session=",
                                    "sg_session=abc",
                                    "xsg_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                                    "sg_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA!",
                                    "sg_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                                    "other=1",
                                    ";;;",
                                    NULL};
  assert_int_equal(sg_session_from_header(NULL, d2), -1);
  for (size_t i = 1; bad[i]; i++)
    if (sg_session_from_header(bad[i], d2) == 0) fail_msg("accepted '%s'", bad[i]);
}

static void test_csrf_token(void **state) {
  (void)state;
  uint8_t secret[32], other[32], d[32], d2[32];
  sg_random_bytes(secret, 32);
  sg_random_bytes(other, 32);
  char c[SG_SESSION_COOKIE_LEN + 1], tok[44], tok2[44];
  sg_session_new(c, d);
  sg_session_new(c, d2);
  sg_csrf_token(secret, d, tok);
  assert_int_equal(strlen(tok), 43);
  assert_true(sg_csrf_valid(secret, d, tok));
  sg_csrf_token(secret, d, tok2);
  assert_string_equal(tok, tok2);               /* derived: the same session gives the same token */
  assert_false(sg_csrf_valid(secret, d2, tok)); /* another session */
  assert_false(sg_csrf_valid(other, d, tok));   /* another server secret */
  assert_false(sg_csrf_valid(secret, d, NULL));
  assert_false(sg_csrf_valid(secret, d, ""));
  tok2[42] = tok2[42] == 'A' ? 'B' : 'A';
  assert_false(sg_csrf_valid(secret, d, tok2));
  char longer[60];
  snprintf(longer, sizeof longer, "%sX", tok);
  assert_false(sg_csrf_valid(secret, d, longer));
}

int main(void) {
  if (sg_init()) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_email_normalize), cmocka_unit_test(test_password_rule),
      cmocka_unit_test(test_hash_and_verify), cmocka_unit_test(test_session_cookie),
      cmocka_unit_test(test_csrf_token),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
