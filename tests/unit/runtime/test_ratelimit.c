/* Per-key selection rate limit (src/runtime/ratelimit.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "runtime/rt.h"

static void test_window(void **state) {
  sg__ratelimit *rl = sg__ratelimit_new(3);
  uint8_t a[32] = {1, 2, 3}, b[32] = {9, 9, 9};
  int64_t t = 1000 * 60000LL + 10000; /* 10 s into a window */
  for (int i = 0; i < 3; i++) assert_int_equal(sg__ratelimit_hit(rl, a, t), 0);
  int retry = sg__ratelimit_hit(rl, a, t);
  assert_int_equal(retry, 50);
  assert_int_equal(sg__ratelimit_hit(rl, b, t), 0); /* other keys are independent */
  assert_int_equal(sg__ratelimit_hit(rl, a, t + 49999), 1);
  assert_int_equal(sg__ratelimit_hit(rl, a, t + 50000), 0); /* next window */
  sg__ratelimit_free(rl);
}

static void test_many_keys_bounded(void **state) {
  sg__ratelimit *rl = sg__ratelimit_new(1);
  uint8_t d[32];
  memset(d, 0, sizeof d);
  /* Far more keys than slots: the table evicts, never grows, never fails. */
  for (uint32_t i = 0; i < 100000; i++) {
    memcpy(d, &i, sizeof i);
    d[8] = (uint8_t)i;
    assert_int_equal(sg__ratelimit_hit(rl, d, 5000), 0);
  }
  /* The most recent key is still limited. */
  assert_true(sg__ratelimit_hit(rl, d, 5000) > 0);
  sg__ratelimit_free(rl);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_window),
      cmocka_unit_test(test_many_keys_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
