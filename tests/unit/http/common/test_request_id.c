/* Unit tests of the x-request-id rule shared by both listeners
 * (src/http/common/request_id.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "http/common/request_id.h"

static void test_length_boundary(void **state) {
  (void)state;
  char s[SG_HTTP_REQUEST_ID_MAX + 2];
  assert_int_equal(SG_HTTP_REQUEST_ID_MAX, 128);
  memset(s, 'a', sizeof s);
  s[SG_HTTP_REQUEST_ID_MAX] = '\0';
  assert_true(sg_http_request_id_ok(s)); /* 128: echoed */
  s[SG_HTTP_REQUEST_ID_MAX] = 'a';
  s[SG_HTTP_REQUEST_ID_MAX + 1] = '\0';
  assert_false(sg_http_request_id_ok(s)); /* 129: replaced */
  assert_true(sg_http_request_id_ok("a"));
  assert_false(sg_http_request_id_ok(""));
}

static void test_characters(void **state) {
  (void)state;
  assert_true(sg_http_request_id_ok("trace-42_ABC.x:y/z=~!#$%&'()*+,;<>?@[]^`{|}"));
  static const char *const bad[] = {"has\"quote", "back\\slash",  "sp ace", "tab\t",
                                    "del\x7f",    "utf8\xc3\xa9", "ctl\x01"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_false(sg_http_request_id_ok(bad[i]));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_length_boundary),
      cmocka_unit_test(test_characters),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
