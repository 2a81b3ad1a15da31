/* Origin canonicalisation and the wildcard rule (src/common/origin.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "common/origin.h"

static void canon_is(const char *in, const char *want) {
  char out[SG_ORIGIN_MAX + 1];
  const char *why = NULL;
  long n = sg_origin_canon(in, strlen(in), true, out, sizeof out, &why);
  if (n < 0) fail_msg("'%s' refused: %s", in, why);
  assert_string_equal(out, want);
  assert_int_equal(n, strlen(want));
}

static void refused(const char *in) {
  char out[SG_ORIGIN_MAX + 1];
  const char *why = NULL;
  if (sg_origin_canon(in, strlen(in), true, out, sizeof out, &why) >= 0)
    fail_msg("'%s' accepted as '%s'", in, out);
  assert_non_null(why);
}

static void test_case_and_default_ports(void **state) {
  (void)state;
  canon_is("https://Shop.Example.COM", "https://shop.example.com");
  canon_is("HTTPS://SHOP.EXAMPLE.COM/", "https://shop.example.com");
  canon_is("https://shop.example.com:443", "https://shop.example.com");
  canon_is("http://shop.example.com:80", "http://shop.example.com");
  canon_is("http://localhost:3000", "http://localhost:3000");
  canon_is("https://shop.example.com:80", "https://shop.example.com:80");
  canon_is("http://127.0.0.1:8080", "http://127.0.0.1:8080");
  canon_is("http://[::1]:8080", "http://[::1]:8080");
  canon_is("https://[2001:DB8::1]", "https://[2001:db8::1]");
  canon_is("http://my_host.internal", "http://my_host.internal");
}

static void test_ports(void **state) {
  (void)state;
  canon_is("https://a.example.com:1", "https://a.example.com:1");
  canon_is("https://a.example.com:65535", "https://a.example.com:65535");
  refused("https://a.example.com:0");
  refused("https://a.example.com:65536");
  refused("https://a.example.com:99999");
  refused("https://a.example.com:123456");
  refused("https://a.example.com:");
  refused("https://a.example.com:-1");
  refused("https://a.example.com:8a");
}

static void test_shape(void **state) {
  (void)state;
  refused("ftp://a.example.com");
  refused("chrome-extension://abc");
  refused("a.example.com");
  refused("https://");
  refused("https://a.example.com/path");
  refused("https://a.example.com//");
  refused("https://a.example.com?q=1");
  refused("https://a.example.com#f");
  refused("https://user@a.example.com");
  refused("https://a..example.com");
  refused("https://.example.com");
  refused("https://example.com.");
  refused("https://-a.example.com");
  refused("https://a-.example.com");
  refused("https://a b.example.com");
  refused("https://[::1");
  refused("https://[zz::1]");
  refused("https://[fe80::1%eth0]");
  /* A NUL inside the brackets must not end the address early (found by fuzz_origin). */
  char out[SG_ORIGIN_MAX + 1];
  static const char nul[] = "http://[::\0\0001]:8080";
  assert_int_equal(sg_origin_canon(nul, sizeof nul - 1, true, out, sizeof out, NULL), -1);
  refused("https://a.*.example.com");
  refused("null");
  refused("");
}

static void test_wildcards(void **state) {
  (void)state;
  canon_is("https://*.Example.com", "https://*.example.com");
  canon_is("https://*.shop.example.co.uk", "https://*.shop.example.co.uk");
  canon_is("https://*.example.co.uk", "https://*.example.co.uk");
  canon_is("https://*.example.io:8443", "https://*.example.io:8443");
  refused("https://*.com");
  refused("https://*.co.uk");
  refused("https://*.com.au");
  refused("https://*.co.jp");
  refused("https://*.gov.br");
  refused("https://*.localhost");
  refused("https://*.0.1");
  refused("https://*.[::1]");
  refused("https://*");
  refused("https://*.");
  refused("https://**.example.com");
  /* Not where wildcards are allowed (a request Origin). */
  char out[SG_ORIGIN_MAX + 1];
  assert_int_equal(sg_origin_canon("https://*.example.com", 21, false, out, sizeof out, NULL), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_case_and_default_ports),
      cmocka_unit_test(test_ports),
      cmocka_unit_test(test_shape),
      cmocka_unit_test(test_wildcards),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
