/* The runtime's shared state through its seam (runtime/state.h), local backend. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "runtime/state.h"

static sg__selection selection(const char *uuid) {
  sg__selection s = {.query_request_id = "req_1",
                     .list_id = "lst_1",
                     .item_id = "itm_1",
                     .query = "pa",
                     .position = 0};
  snprintf(s.selection_id, sizeof s.selection_id, "%s", uuid);
  return s;
}

static void test_local_state(void **state) {
  (void)state;
  char dir[] = "/tmp/sg-rtstate-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char spec[64];
  snprintf(spec, sizeof spec, "%s/state", dir);
  sg_rt_state *st;
  assert_int_equal(sg_rt_state_open(spec, 2, &st), 0);
  assert_int_equal(sg_rt_state_check(st), 0);

  /* Rate limit: two a minute per key, then refused with a wait. */
  int retry = 0;
  int64_t now = sg_mono_ms();
  assert_true(sg_rt_state_rate_take(st, "k1", now, &retry));
  assert_true(sg_rt_state_rate_take(st, "k1", now, &retry));
  assert_false(sg_rt_state_rate_take(st, "k1", now, &retry));
  assert_true(retry >= 1);
  assert_true(sg_rt_state_rate_take(st, "k2", now, &retry));

  /* Quota: counted on the slot, persisted by flush. */
  sg__quota_slot *slot = sg_rt_state_quota_slot(st, "app_1");
  assert_non_null(slot);
  assert_ptr_equal(sg_rt_state_quota_slot(st, "app_1"), slot);
  assert_true(sg__quota_take(slot, 3));
  assert_true(sg__quota_take(slot, 3));
  assert_int_equal(sg_rt_state_flush(st, sg_now_s()), 0);

  /* Selection: accepted once, then a duplicate. */
  sg__selection s = selection("0e6e8f0c-5bd8-4a43-9b0e-3c1f6a0c2d11");
  assert_int_equal(sg_rt_state_selection_record(st, &s, "app_1", "pk_1", sg_now_ms()),
                   SG__EV_ACCEPTED);
  assert_int_equal(sg_rt_state_selection_record(st, &s, "app_1", "pk_1", sg_now_ms()),
                   SG__EV_DUPLICATE);
  sg_rt_state_sync(st);
  sg_rt_state_close(st);

  /* Reopened: the counters and the dedupe window survive. */
  assert_int_equal(sg_rt_state_open(spec, 2, &st), 0);
  slot = sg_rt_state_quota_slot(st, "app_1");
  assert_true(sg__quota_take(slot, 3));
  assert_false(sg__quota_take(slot, 3));
  assert_int_equal(sg_rt_state_selection_record(st, &s, "app_1", "pk_1", sg_now_ms()),
                   SG__EV_DUPLICATE);
  sg_rt_state_close(st);

  assert_int_equal(sg_rt_state_open("redis://localhost", 2, &st), -1);
  assert_int_equal(errno, ENOTSUP);
  assert_int_equal(sg_rt_state_open("", 2, &st), -1);
  assert_int_equal(errno, EINVAL);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_local_state),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
