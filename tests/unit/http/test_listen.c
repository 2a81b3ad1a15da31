/* Unit tests of listen-address parsing (src/http/server.c, sg_parse_listen). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "http/http.h"

static void test_valid(void **state) {
  (void)state;
  char host[64];
  unsigned port = 1;
  assert_int_equal(sg_parse_listen("127.0.0.1:8080", host, sizeof host, &port), 0);
  assert_string_equal(host, "127.0.0.1");
  assert_int_equal(port, 8080);
  assert_int_equal(sg_parse_listen("[::1]:0", host, sizeof host, &port), 0);
  assert_string_equal(host, "::1");
  assert_int_equal(port, 0);
  assert_int_equal(sg_parse_listen("localhost:65535", host, sizeof host, &port), 0);
  assert_string_equal(host, "localhost");
  assert_int_equal(port, 65535);
}

static void test_invalid(void **state) {
  (void)state;
  char host[16];
  unsigned port;
  static const char *const bad[] = {
      "",     "host",  ":80",   "h:",    "h:65536",
      "h:-1", "h:abc", "h:80x", "h: 80", "averyveryverylonghostname:80",
      NULL};
  for (const char *const *p = bad; *p; p++)
    assert_int_equal(sg_parse_listen(*p, host, sizeof host, &port), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_valid),
      cmocka_unit_test(test_invalid),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
