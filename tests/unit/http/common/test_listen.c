/* Unit tests of the listen-address grammar shared by every listener
 * (src/http/common/listen.c, sg_listen_parse). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <string.h>

#include "http/common/listen.h"

static void test_valid(void **state) {
  (void)state;
  sg_listen_addr a;
  char err[256];
  assert_int_equal(sg_listen_parse("127.0.0.1:8080", &a, err, sizeof err), 0);
  assert_string_equal(a.host, "127.0.0.1");
  assert_int_equal(a.port, 8080);
  assert_false(a.v6);
  assert_int_equal(a.sa.ss_family, AF_INET);
  assert_int_equal(ntohs(((struct sockaddr_in *)&a.sa)->sin_port), 8080);
  assert_int_equal(sg_listen_parse("[::1]:0", &a, err, sizeof err), 0);
  assert_string_equal(a.host, "::1");
  assert_int_equal(a.port, 0);
  assert_true(a.v6);
  assert_int_equal(a.sa.ss_family, AF_INET6);
  assert_int_equal(sg_listen_parse("localhost:65535", &a, err, sizeof err), 0);
  assert_string_equal(a.host, "127.0.0.1");
  assert_int_equal(a.port, 65535);
  /* ":port" is every IPv4 interface on every listener (the control and metrics listeners
   * refused it while the runtime's accepted it). */
  assert_int_equal(sg_listen_parse(":9090", &a, err, sizeof err), 0);
  assert_string_equal(a.host, "0.0.0.0");
  assert_int_equal(a.port, 9090);
  assert_int_equal(sg_listen_parse("[::]:1", &a, err, sizeof err), 0);
  assert_string_equal(a.host, "::");
}

static void test_invalid(void **state) {
  (void)state;
  sg_listen_addr a;
  char err[256];
  /* Each with the reason its message must give. The runtime accepted "8080", "::1:80" and
   * host names; the control listener accepted "::1:80". */
  static const char *const bad[][2] = {
      {"", "missing port"},
      {"host", "missing port"},
      {"8080", "missing port"},
      {"[::1]", "missing port"},
      {"[::1", "unclosed"},
      {"h:", "port must be"},
      {"127.0.0.1:65536", "port must be"},
      {"127.0.0.1:-1", "port must be"},
      {"127.0.0.1:abc", "port must be"},
      {"127.0.0.1:80x", "port must be"},
      {"127.0.0.1: 80", "port must be"},
      {"::1:80", "needs brackets"},
      {"example.com:80", "numeric address"},
      {"[example.com]:80", "numeric IPv6"},
      {"[127.0.0.1]:80", "numeric IPv6"},
      {"averyveryveryveryveryveryveryveryveryveryveryveryverylonghostname:80", "too long"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err[0] = '\0';
    assert_int_equal(sg_listen_parse(bad[i][0], &a, err, sizeof err), -1);
    assert_non_null(strstr(err, "bad listen address"));
    if (!strstr(err, bad[i][1])) fail_msg("'%s': '%s' lacks '%s'", bad[i][0], err, bad[i][1]);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_valid),
      cmocka_unit_test(test_invalid),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
