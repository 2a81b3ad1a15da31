/* Unit tests of the probe answers shared by every listener (src/http/common/health.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "http/common/health.h"

static void test_ready_body(void **state) {
  (void)state;
  const sg_health_check ok[] = {{"store", "ok"}, {"edge", "ok"}};
  char out[256];
  size_t n;
  assert_int_equal(sg_health_ready_body(true, ok, 2, NULL, out, sizeof out, &n), 200);
  assert_string_equal(out, "{\"status\":\"ready\",\"checks\":{\"store\":\"ok\",\"edge\":\"ok\"}}");
  assert_int_equal(n, strlen(out));
  const sg_health_check bad[] = {{"snapshot", "not_loaded"}};
  assert_int_equal(sg_health_ready_body(false, bad, 1, "\"revision\":0", out, sizeof out, &n), 503);
  assert_string_equal(
      out, "{\"status\":\"not_ready\",\"checks\":{\"snapshot\":\"not_loaded\"},\"revision\":0}");
  assert_int_equal(n, strlen(out));
}

static void test_small_buffer_keeps_the_status(void **state) {
  (void)state;
  const sg_health_check ok[] = {{"store", "ok"}, {"edge", "ok"}};
  char out[24];
  size_t n;
  assert_int_equal(sg_health_ready_body(false, ok, 2, NULL, out, sizeof out, &n), 503);
  assert_string_equal(out, "{\"status\":\"not_ready\"}");
  assert_int_equal(n, strlen(out));
  char tiny[4];
  assert_int_equal(sg_health_ready_body(true, ok, 2, NULL, tiny, sizeof tiny, &n), 200);
  assert_int_equal(n, 0);
  assert_string_equal(tiny, "");
}

static void test_methods(void **state) {
  (void)state;
  assert_true(sg_health_method_ok("GET"));
  assert_true(sg_health_method_ok("HEAD"));
  assert_false(sg_health_method_ok("POST"));
  assert_false(sg_health_method_ok("get"));
  assert_string_equal(sg_health_live_body, "{\"status\":\"ok\"}");
  assert_int_equal(sg_health_live_len, strlen(sg_health_live_body));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ready_body),
      cmocka_unit_test(test_small_buffer_keeps_the_status),
      cmocka_unit_test(test_methods),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
