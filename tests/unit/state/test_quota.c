/* Monthly quota counters: take, flush, reload, month rollover (src/runtime/quota.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "state/internal.h"

static void test_month(void **state) {
  assert_int_equal(sg__utc_month(0), 1970 * 12);
  assert_int_equal(sg__utc_month(1795318024), 2026 * 12 + 10);     /* 2026-11 */
  assert_int_equal(sg__utc_month(1796083200 - 1), 2026 * 12 + 10); /* 2026-11-30T23:59:59Z */
  assert_int_equal(sg__utc_month(1796083200), 2026 * 12 + 11);     /* 2026-12-01T00:00:00Z */
}

static void test_take_flush_reload(void **state) {
  char dir[] = "/tmp/sg-quota-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[64];
  snprintf(path, sizeof path, "%s/quota.json", dir);
  int month = 2026 * 12 + 10;

  sg__quota *q;
  assert_int_equal(sg__quota_open(path, month, &q), 0);
  sg__quota_slot *a = sg__quota_slot_for(q, "app_a");
  sg__quota_slot *b = sg__quota_slot_for(q, "app_b");
  assert_ptr_equal(sg__quota_slot_for(q, "app_a"), a);
  assert_true(sg__quota_take(a, 2));
  assert_true(sg__quota_take(a, 2));
  assert_false(sg__quota_take(a, 2));
  assert_int_equal(atomic_load(&a->used), 2);
  assert_true(sg__quota_take(b, UINT64_MAX));
  assert_int_equal(sg__quota_flush(q, month), 0);
  sg__quota_close(q);

  /* Same month: the counts come back. */
  assert_int_equal(sg__quota_open(path, month, &q), 0);
  a = sg__quota_slot_for(q, "app_a");
  assert_int_equal(atomic_load(&a->used), 2);
  assert_false(sg__quota_take(a, 2));
  assert_int_equal(atomic_load(&sg__quota_slot_for(q, "app_b")->used), 1);
  /* The month turns: counters reset, and the file says so. */
  assert_int_equal(sg__quota_flush(q, month + 1), 0);
  assert_int_equal(atomic_load(&a->used), 0);
  assert_true(sg__quota_take(a, 2));
  assert_int_equal(sg__quota_flush(q, month + 1), 0);
  sg__quota_close(q);

  /* A file of another month is dropped. */
  assert_int_equal(sg__quota_open(path, month + 2, &q), 0);
  assert_int_equal(atomic_load(&sg__quota_slot_for(q, "app_a")->used), 0);
  sg__quota_close(q);
  assert_int_equal(sg__quota_open(path, month + 1, &q), 0);
  assert_int_equal(atomic_load(&sg__quota_slot_for(q, "app_a")->used), 1);
  sg__quota_close(q);

  unlink(path);
  rmdir(dir);
}

static void test_many_apps(void **state) {
  sg__quota *q;
  assert_int_equal(sg__quota_open("/nonexistent/quota.json", 0, &q), 0);
  sg__quota_slot *first = sg__quota_slot_for(q, "app_0");
  for (int i = 0; i < 5000; i++) {
    char id[32];
    snprintf(id, sizeof id, "app_%d", i);
    sg__quota_slot *s = sg__quota_slot_for(q, id);
    assert_non_null(s);
    assert_string_equal(s->app_id, id);
  }
  assert_ptr_equal(sg__quota_slot_for(q, "app_0"), first); /* stable across growth */
  assert_ptr_equal(sg__quota_slot_for(q, "app_4999"), sg__quota_slot_for(q, "app_4999"));
  sg__quota_close(q);
}

int main(void) {
  if (sg_init()) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_month),
      cmocka_unit_test(test_take_flush_reload),
      cmocka_unit_test(test_many_apps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
