/* The descriptor budget (src/common/fds.c): the caps never spend the reserve. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/resource.h>

#include "common/fds.h"

static unsigned long spent(const sg_fd_budget *b) {
  return b->reserve + (unsigned long)b->control_conns * SG_FDS_PER_CONTROL_CONN + b->runtime_conns;
}

static void test_caps_fit_the_limit(void **state) {
  (void)state;
  const unsigned long limits[] = {256, 1024, 4096, 65536, 1048576};
  for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
    sg_fd_budget b;
    sg_fd_budget_for(limits[i], true, true, &b);
    assert_true(spent(&b) <= limits[i]);
    assert_true(b.reserve >= 64);
    assert_true(b.control_conns >= 8 && b.control_conns <= SG_FDS_MAX_CONTROL_CONNS);
    assert_true(b.runtime_conns >= 8 && b.runtime_conns <= SG_FDS_MAX_RUNTIME_CONNS);
    sg_fd_budget_for(limits[i], true, false, &b);
    assert_int_equal(b.runtime_conns, 0);
    assert_true(spent(&b) <= limits[i]);
    sg_fd_budget_for(limits[i], false, true, &b);
    assert_int_equal(b.control_conns, 0);
    assert_true(spent(&b) <= limits[i]);
  }
}

static void test_1024(void **state) {
  (void)state;
  sg_fd_budget b;
  sg_fd_budget_for(1024, true, true, &b);
  assert_int_equal(b.reserve, 256);
  assert_int_equal(b.control_conns, 96);
  assert_int_equal(b.runtime_conns, 384);
}

static void test_raise_reaches_the_hard_limit(void **state) {
  (void)state;
  struct rlimit rl;
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
  unsigned long got = sg_fd_raise_limit();
  assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
  assert_true(rl.rlim_cur == rl.rlim_max || rl.rlim_cur == (1u << 20));
  assert_true(got == (unsigned long)rl.rlim_cur || rl.rlim_cur == RLIM_INFINITY);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_caps_fit_the_limit),
      cmocka_unit_test(test_1024),
      cmocka_unit_test(test_raise_reaches_the_hard_limit),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
