/* The runtime's analytics aggregator (state/analytics.c): counts from several threads
 * merge exactly into one shipment, and a shipment takes everything counted so far. */
#include <jansson.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "state/state.h"

#define THREADS 4
#define PER 2500

static void *worker(void *arg) {
  sg_analytics *a = arg;
  for (int i = 0; i < PER; i++) {
    sg_analytics_query(a, "lst_1", 7200, "par", 3, false);
    sg_analytics_query(a, "lst_1", 7200, "zzz", 3, true);
    sg_analytics_query(a, "lst_2", 3600, "par", 3, false);
    if (i % 5 == 0) sg_analytics_selection(a, "lst_1", 7200, "par", 3, "Par", 3, "itm_1", 2);
  }
  return NULL;
}

static json_t *row(json_t *rows, const char *kind, const char *list, const char *k3) {
  size_t i;
  json_t *r;
  json_array_foreach(rows, i, r) {
    if (strcmp(json_string_value(json_array_get(r, 0)), kind) == 0 &&
        strcmp(json_string_value(json_array_get(r, 1)), list) == 0 &&
        (!k3 || strcmp(json_string_value(json_array_get(r, 3)), k3) == 0))
      return r;
  }
  return NULL;
}

static void test_threads_merge_exactly(void **s) {
  (void)s;
  sg_analytics *a;
  assert_int_equal(sg_analytics_new(&a), 0);
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, a);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  sg_buf b;
  sg_buf_init(&b, 0);
  size_t n;
  assert_int_equal(sg_analytics_collect(a, &b, &n), 0);
  json_t *doc = json_loadb(b.data, b.len, 0, NULL);
  assert_non_null(doc);
  assert_non_null(strstr(json_string_value(json_object_get(doc, "id")), "shp_"));
  json_t *rows = json_object_get(doc, "rows");
  assert_int_equal(n, json_array_size(rows));
  json_t *h = row(rows, "h", "lst_1", NULL);
  assert_int_equal(json_integer_value(json_array_get(h, 2)), 2); /* hour 7200 / 3600 */
  assert_int_equal(json_integer_value(json_array_get(h, 3)), 2 * THREADS * PER);
  assert_int_equal(json_integer_value(json_array_get(h, 4)), THREADS * PER);
  json_t *z = row(rows, "q", "lst_1", "zzz");
  assert_int_equal(json_integer_value(json_array_get(z, 4)), THREADS * PER);
  assert_int_equal(json_integer_value(json_array_get(z, 5)), THREADS * PER);
  json_t *p2 = row(rows, "q", "lst_2", "par");
  assert_int_equal(json_integer_value(json_array_get(p2, 5)), 0);
  json_t *sel = row(rows, "s", "lst_1", "par");
  assert_string_equal(json_string_value(json_array_get(sel, 4)), "itm_1");
  assert_int_equal(json_integer_value(json_array_get(sel, 5)), 2);
  assert_int_equal(json_integer_value(json_array_get(sel, 6)), THREADS * PER / 5);
  json_t *raw = row(rows, "r", "lst_1", "par");
  assert_string_equal(json_string_value(json_array_get(raw, 4)), "Par");
  assert_int_equal(json_integer_value(json_array_get(raw, 5)), THREADS * PER / 5);
  json_decref(doc);
  /* Everything was taken: the next shipment is empty. */
  sg_buf_free(&b);
  sg_buf_init(&b, 0);
  assert_int_equal(sg_analytics_collect(a, &b, &n), 0);
  assert_int_equal(n, 0);
  assert_int_equal(sg_analytics_dropped(a), 0);
  sg_buf_free(&b);
  sg_analytics_free(a);
}

/* The 'h' value of the row (h, list, hour) in one shipment, or -1 when it has none. */
static long long h_count(json_t *rows, const char *list, long long hour) {
  size_t i;
  json_t *r;
  json_array_foreach(rows, i, r) {
    if (strcmp(json_string_value(json_array_get(r, 0)), "h") == 0 &&
        strcmp(json_string_value(json_array_get(r, 1)), list) == 0 &&
        json_integer_value(json_array_get(r, 2)) == hour)
      return json_integer_value(json_array_get(r, 3));
  }
  return -1;
}

static json_t *ship(sg_analytics *a) {
  sg_buf b;
  sg_buf_init(&b, 0);
  size_t n;
  assert_int_equal(sg_analytics_collect(a, &b, &n), 0);
  json_t *doc = json_loadb(b.data, b.len, 0, NULL);
  sg_buf_free(&b);
  assert_non_null(doc);
  return doc;
}

/* A thread finds its last (list, hour) cell again without a lookup (analytics.c): it must
 * follow the list (ids that share a prefix too), the hour, and a shipment taking the
 * table (the cell is freed with it: ASan would see a stale one). */
static void test_hour_cell_follows_list_hour_and_shipment(void **s) {
  (void)s;
  sg_analytics *a;
  assert_int_equal(sg_analytics_new(&a), 0);
  for (int i = 0; i < 3; i++) sg_analytics_query(a, "lst_1", 7200, "par", 3, false);
  sg_analytics_query(a, "lst_10", 7200, "par", 3, false);
  sg_analytics_query(a, "lst_1", 7200 + 3599, "par", 3, false); /* the same hour */
  sg_analytics_query(a, "lst_1", 10800, "par", 3, false);       /* the next one */
  sg_analytics_query(a, "lst_1", 7200, "par", 3, false);        /* back again */
  json_t *doc = ship(a);
  json_t *rows = json_object_get(doc, "rows");
  assert_int_equal(h_count(rows, "lst_1", 2), 5);
  assert_int_equal(h_count(rows, "lst_10", 2), 1);
  assert_int_equal(h_count(rows, "lst_1", 3), 1);
  json_decref(doc);
  /* After the shipment the same list and hour count into a new table. */
  sg_analytics_query(a, "lst_1", 7200, "par", 3, false);
  sg_analytics_query(a, "lst_1", 7200, "pa", 2, true);
  doc = ship(a);
  rows = json_object_get(doc, "rows");
  assert_int_equal(h_count(rows, "lst_1", 2), 2);
  assert_int_equal(h_count(rows, "lst_10", 2), -1);
  json_decref(doc);
  assert_int_equal(sg_analytics_dropped(a), 0);
  sg_analytics_free(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_threads_merge_exactly),
      cmocka_unit_test(test_hour_cell_follows_list_hour_and_shipment)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
