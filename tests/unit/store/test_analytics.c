/* Unit tests of the store's search analytics (sg_store_analytics_add, _read, _suggest):
 * a shipment's rows read back, each figure in its own place, against the backend under
 * test (store_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "store/store.h"
#include "store_fixture.h"

#define HOUR 480000 /* day 20000 */

static void add_shipment(store_fixture *f, const char *id) {
  const sg_analytics_row rows[] = {
      {.kind = 'h', .list_id = f->list, .hour = HOUR, .count = 10, .no_result = 3},
      {.kind = 'q', .list_id = f->list, .hour = HOUR, .q = "alpha", .count = 5, .no_result = 0},
      {.kind = 'q', .list_id = f->list, .hour = HOUR, .q = "beta", .count = 2, .no_result = 2},
      {.kind = 's',
       .list_id = f->list,
       .hour = HOUR,
       .q = "alpha",
       .item_id = "itm_1",
       .position = 2,
       .count = 4},
      {.kind = 'r', .list_id = f->list, .hour = HOUR, .q = "alpha", .raw = "Alpha", .count = 3},
  };
  assert_int_equal(sg_store_analytics_add(f->st, id, HOUR + 1, rows, sizeof rows / sizeof *rows),
                   SG_E_OK);
}

static void expect_json(json_t *got, const char *want_text) {
  json_t *want = json_loads(want_text, 0, NULL);
  assert_non_null(want);
  if (!json_equal(got, want)) {
    char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
    fail_msg("got %s, want %s", g, want_text);
  }
  json_decref(want);
}

/* Every figure of a shipment comes back where read and suggest put it; a shipment
 * delivered again changes nothing. */
static void test_read_and_suggest(void **state) {
  store_fixture *f = *state;
  add_shipment(f, "shp_1");
  add_shipment(f, "shp_1");
  json_t *out = NULL;
  assert_int_equal(sg_store_analytics_read(f->st, f->list, HOUR, HOUR + 1, 10, &out), SG_E_OK);
  expect_json(json_object_get(out, "days"), "[[20000, 10, 3]]");
  expect_json(json_object_get(out, "selectionDays"), "[[20000, 4]]");
  expect_json(json_object_get(out, "topQueries"),
              "[{\"q\": \"alpha\", \"count\": 5, \"selections\": 4},"
              " {\"q\": \"beta\", \"count\": 2, \"selections\": 0}]");
  expect_json(json_object_get(out, "topNoResultQueries"), "[{\"q\": \"beta\", \"count\": 2}]");
  expect_json(json_object_get(out, "topItems"),
              "[{\"itemId\": \"itm_1\", \"selections\": 4, \"positionSum\": 8}]");
  json_decref(out);
  out = NULL;
  assert_int_equal(sg_store_analytics_suggest(f->st, f->list, HOUR, HOUR + 1, 1, &out), SG_E_OK);
  expect_json(json_object_get(out, "queries"), "[[\"alpha\", 4]]");
  expect_json(json_object_get(out, "forms"), "[[\"alpha\", \"Alpha\", 3]]");
  json_decref(out);
  /* Outside the hours read: nothing. */
  out = NULL;
  assert_int_equal(sg_store_analytics_read(f->st, f->list, HOUR + 1, HOUR + 2, 10, &out), SG_E_OK);
  expect_json(json_object_get(out, "days"), "[]");
  expect_json(json_object_get(out, "topItems"), "[]");
  json_decref(out);
}

/* A q new to a full list-hour takes the place of the least counted one (ties: the
 * bytewise greatest) and starts at its counts plus its own. */
static void test_full_hour_replaces_least_counted(void **state) {
  store_fixture *f = *state;
  enum { N = SG_STORE_ANALYTICS_Q_CAP };
  static char names[N][16];
  static sg_analytics_row rows[N];
  for (int i = 0; i < N; i++) {
    snprintf(names[i], sizeof names[i], "q%05d", i);
    /* q09999 (the greatest) has count 3 and no_result 1; every other q count 4. */
    rows[i] = (sg_analytics_row){.kind = 'q',
                                 .list_id = f->list,
                                 .hour = HOUR,
                                 .q = names[i],
                                 .count = i == N - 1 ? 3 : 4,
                                 .no_result = i == N - 1 ? 1 : 0};
  }
  assert_int_equal(sg_store_analytics_add(f->st, "shp_full", HOUR + 1, rows, N), SG_E_OK);
  const sg_analytics_row late = {
      .kind = 'q', .list_id = f->list, .hour = HOUR, .q = "late", .count = 2, .no_result = 1};
  assert_int_equal(sg_store_analytics_add(f->st, "shp_late", HOUR + 1, &late, 1), SG_E_OK);
  json_t *out = NULL;
  assert_int_equal(sg_store_analytics_read(f->st, f->list, HOUR, HOUR + 1, 1, &out), SG_E_OK);
  /* late: count 3 + 2, no_result 1 + 1; q09999 is gone. */
  expect_json(json_object_get(out, "topQueries"),
              "[{\"q\": \"late\", \"count\": 5, \"selections\": 0}]");
  expect_json(json_object_get(out, "topNoResultQueries"), "[{\"q\": \"late\", \"count\": 2}]");
  json_decref(out);
}

int main(void) {
  if (sg_init()) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_full_hour_replaces_least_counted, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_read_and_suggest, store_fixture_setup,
                                      store_fixture_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
