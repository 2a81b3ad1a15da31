/* Origin allow-list matching (src/runtime/origin.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "runtime/rt.h"

static bool allowed(const char *const *entries, size_t n, const char *origin) {
  char canon[8][SG__ORIGIN_MAX + 1];
  char *ptrs[8];
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (sg__origin_canon(entries[i], strlen(entries[i]), true, canon[k], sizeof canon[k]) >= 0) {
      ptrs[k] = canon[k];
      k++;
    }
  return sg__origin_allowed(ptrs, k, origin, strlen(origin));
}

static void test_exact(void **state) {
  const char *e[] = {"https://shop.example", "http://localhost:3000"};
  assert_true(allowed(e, 2, "https://shop.example"));
  assert_true(allowed(e, 2, "HTTPS://SHOP.EXAMPLE"));
  assert_true(allowed(e, 2, "http://localhost:3000"));
  assert_false(allowed(e, 2, "http://localhost:3001"));
  assert_false(allowed(e, 2, "http://shop.example"));
  assert_false(allowed(e, 2, "https://shop.example.evil.com"));
  assert_false(allowed(e, 2, "https://evilshop.example"));
  assert_false(allowed(e, 2, "null"));
  assert_false(allowed(e, 2, ""));
}

static void test_wildcard(void **state) {
  const char *e[] = {"https://*.example.org"};
  assert_true(allowed(e, 1, "https://a.example.org"));
  assert_true(allowed(e, 1, "https://a.b.example.org"));
  assert_false(allowed(e, 1, "https://example.org"));
  assert_false(allowed(e, 1, "https://.example.org"));
  assert_false(allowed(e, 1, "http://a.example.org"));
  assert_false(allowed(e, 1, "https://a.example.org.evil.com"));
  assert_false(allowed(e, 1, "https://aexample.org"));
  assert_false(allowed(e, 1, "https://a.example.org:8443"));
  const char *p[] = {"https://*.example.org:8443"};
  assert_true(allowed(p, 1, "https://a.example.org:8443"));
  assert_false(allowed(p, 1, "https://a.example.org"));
}

static void test_canon_rejects(void **state) {
  char out[SG__ORIGIN_MAX + 1];
  assert_true(sg__origin_canon("https://a.example/", 18, false, out, sizeof out) > 0);
  assert_string_equal(out, "https://a.example");
  assert_int_equal(sg__origin_canon("https://*.a.example", 19, false, out, sizeof out), -1);
  assert_int_equal(sg__origin_canon("https://a.*.example", 19, true, out, sizeof out), -1);
  assert_int_equal(sg__origin_canon("https://a.example/path", 22, false, out, sizeof out), -1);
  assert_int_equal(sg__origin_canon("https://u@a.example", 19, false, out, sizeof out), -1);
  assert_int_equal(sg__origin_canon("a.example", 9, false, out, sizeof out), -1);
  assert_int_equal(sg__origin_canon("https://", 8, false, out, sizeof out), -1);
  /* Malformed entries never widen the list: none of them matches anything. */
  const char *bad[] = {"not an origin"};
  assert_false(allowed(bad, 1, "https://a.example"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_exact),
      cmocka_unit_test(test_wildcard),
      cmocka_unit_test(test_canon_rejects),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
