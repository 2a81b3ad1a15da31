/* Selection events drained into the store, and the analytics read from them (any backend:
 * SUGGESTD_TEST_STORE picks it, see store_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <string.h>

#include "store_fixture.h"

#define DAY_MS (86400LL * 1000)
/* 2026-11-20T11:20:00Z */
#define T0 1795173600000LL

static sg_selection_event event(const char *sid, int64_t ts, const char *list, const char *item) {
  return (sg_selection_event){.selection_id = sid,
                              .query_request_id = "req_1",
                              .list_id = list,
                              .item_id = item,
                              .query = NULL,
                              .application_id = "app_1",
                              .key_id = "pk_1",
                              .ts_ms = ts,
                              .position = 1};
}

static void test_add_is_idempotent_and_counted(void **state) {
  store_fixture *f = *state;
  sg_selection_event ev[] = {
      event("00000000-0000-4000-8000-000000000001", T0, f->list, "itm_a"),
      event("00000000-0000-4000-8000-000000000002", T0 + 1, f->list, "itm_b"),
      event("00000000-0000-4000-8000-000000000003", T0 + DAY_MS, f->list, "itm_b"),
      event("00000000-0000-4000-8000-000000000004", T0, "lst_other", "itm_a"),
  };
  ev[0].query = "pa";
  assert_int_equal(sg_store_selections_add(f->st, ev, 4), SG_E_OK);
  /* The drain delivers a batch again after a crash: nothing doubles. */
  assert_int_equal(sg_store_selections_add(f->st, ev, 2), SG_E_OK);
  /* The same id after the 24-hour window is a new event. */
  sg_selection_event again =
      event("00000000-0000-4000-8000-000000000001", T0 + 2 * DAY_MS, f->list, "itm_b");
  assert_int_equal(sg_store_selections_add(f->st, &again, 1), SG_E_OK);
  assert_int_equal(sg_store_selections_add(f->st, NULL, 0), SG_E_OK);

  json_t *out = NULL;
  assert_int_equal(sg_store_selection_stats(f->st, f->list, T0 - DAY_MS, 10, &out), SG_E_OK);
  char *text = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
  assert_string_equal(text, "{\"perDay\":{\"2026-11-20\":2,\"2026-11-21\":1,\"2026-11-22\":1},"
                            "\"topItems\":[{\"itemId\":\"itm_b\",\"selections\":3},"
                            "{\"itemId\":\"itm_a\",\"selections\":1}]}");
  free(text);
  json_decref(out);
  /* since and top bound what is read. */
  assert_int_equal(sg_store_selection_stats(f->st, f->list, T0 + DAY_MS, 1, &out), SG_E_OK);
  text = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
  assert_string_equal(text, "{\"perDay\":{\"2026-11-21\":1,\"2026-11-22\":1},"
                            "\"topItems\":[{\"itemId\":\"itm_b\",\"selections\":2}]}");
  free(text);
  json_decref(out);
  assert_int_equal(sg_store_selection_stats(f->st, "lst_none", 0, 10, &out), SG_E_OK);
  text = json_dumps(out, JSON_COMPACT | JSON_SORT_KEYS);
  assert_string_equal(text, "{\"perDay\":{},\"topItems\":[]}");
  free(text);
  json_decref(out);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_add_is_idempotent_and_counted, store_fixture_setup,
                                      store_fixture_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
