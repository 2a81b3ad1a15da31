/* The runtime's shared state through its seam (state/state.h), local backend. */
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
#include "state/internal.h"

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

  /* Rate limit: two a minute per key (a duplicate takes a token too), then refused
   * with a wait, and nothing recorded. */
  int retry = 0;
  sg__selection r1 = selection("1e6e8f0c-5bd8-4a43-9b0e-3c1f6a0c2d11");
  sg__selection r2 = selection("2e6e8f0c-5bd8-4a43-9b0e-3c1f6a0c2d11");
  assert_int_equal(
      sg_rt_state_selection_record(st, &r1, "app_1", "pk_1", "k1", sg_now_ms(), &retry),
      SG__EV_ACCEPTED);
  assert_int_equal(
      sg_rt_state_selection_record(st, &r1, "app_1", "pk_1", "k1", sg_now_ms(), &retry),
      SG__EV_DUPLICATE);
  assert_int_equal(
      sg_rt_state_selection_record(st, &r2, "app_1", "pk_1", "k1", sg_now_ms(), &retry),
      SG__EV_RATE_LIMITED);
  assert_true(retry >= 1);
  assert_int_equal(
      sg_rt_state_selection_record(st, &r2, "app_1", "pk_1", "k2", sg_now_ms(), &retry),
      SG__EV_ACCEPTED);

  /* Quota: counted on the slot, persisted by flush. */
  sg__quota_slot *slot = sg_rt_state_quota_slot(st, "app_1");
  assert_non_null(slot);
  assert_ptr_equal(sg_rt_state_quota_slot(st, "app_1"), slot);
  assert_true(sg__quota_take(slot, 3));
  assert_true(sg__quota_take(slot, 3));
  assert_int_equal(sg_rt_state_flush(st, sg_now_s()), 0);

  /* Selection: accepted once, then a duplicate. */
  sg__selection s = selection("0e6e8f0c-5bd8-4a43-9b0e-3c1f6a0c2d11");
  assert_int_equal(sg_rt_state_selection_record(st, &s, "app_1", "pk_1", "k3", sg_now_ms(), &retry),
                   SG__EV_ACCEPTED);
  assert_int_equal(sg_rt_state_selection_record(st, &s, "app_1", "pk_1", "k3", sg_now_ms(), &retry),
                   SG__EV_DUPLICATE);
  sg_rt_state_sync(st);
  sg_rt_state_close(st);

  /* Reopened: the counters and the dedupe window survive. */
  assert_int_equal(sg_rt_state_open(spec, 2, &st), 0);
  slot = sg_rt_state_quota_slot(st, "app_1");
  assert_true(sg__quota_take(slot, 3));
  assert_false(sg__quota_take(slot, 3));
  assert_int_equal(sg_rt_state_selection_record(st, &s, "app_1", "pk_1", "k4", sg_now_ms(), &retry),
                   SG__EV_DUPLICATE);
  sg_rt_state_close(st);

  assert_int_equal(sg_rt_state_open("redis://", 2, &st), -1);
  assert_int_equal(errno, EINVAL);
  assert_int_equal(sg_rt_state_open("rediss://localhost", 2, &st), -1);
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
