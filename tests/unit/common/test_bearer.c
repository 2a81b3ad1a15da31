/* The Bearer credential parser shared by both listeners. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "common/bearer.h"

static void accepts(const char *header, const char *want) {
  const char *tok = NULL;
  size_t len = 0;
  assert_true(sg_bearer_token(header, &tok, &len));
  assert_int_equal(len, strlen(want));
  assert_memory_equal(tok, want, len);
}

static void refuses(const char *header) {
  const char *tok = NULL;
  size_t len = 0;
  assert_false(sg_bearer_token(header, &tok, &len));
}

static void test_scheme_in_any_case(void **state) {
  (void)state;
  accepts("Bearer sk_a_b", "sk_a_b");
  accepts("bearer sk_a_b", "sk_a_b");
  accepts("BEARER sk_a_b", "sk_a_b");
  accepts("bEaReR eyJ.x-y_z.s~+/==", "eyJ.x-y_z.s~+/==");
}

static void test_spaces(void **state) {
  (void)state;
  accepts("Bearer   tok", "tok");   /* 1*SP */
  accepts("Bearer tok  \t", "tok"); /* trailing whitespace is not part of the value */
  refuses("Bearer\ttok");           /* the separator is a space */
  refuses("Bearertok");
  refuses(" Bearer tok");
}

static void test_refused(void **state) {
  (void)state;
  refuses(NULL);
  refuses("");
  refuses("Bearer");
  refuses("Bearer ");
  refuses("Bearer    ");
  refuses("Bearer =");     /* padding alone is no token */
  refuses("Bearer a b");   /* two words */
  refuses("Bearer a=b");   /* "=" only at the end */
  refuses("Bearer a\x01"); /* control character */
  refuses("Bearer \xc3\xa9");
  refuses("Basic dXNlcjpwYXNz");
  refuses("Bearers tok");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scheme_in_any_case),
      cmocka_unit_test(test_spaces),
      cmocka_unit_test(test_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
