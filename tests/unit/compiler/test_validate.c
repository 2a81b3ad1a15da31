/* Publish validation: each reason, and a deterministic order of errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compiler/compiler.h"

static const char *const locs[] = {"en", "fr"};
static const sg_compile_opts opts = {"en", locs, 2, 0};

static sg_compile_item item(const char *id, const char *value, const char *parent) {
  sg_compile_item it = {0};
  it.id = id;
  it.value = value;
  it.display_value = value;
  it.parent_id = parent;
  return it;
}

static void expect_errors(const sg_compile_item *items, size_t n, const sg_compile_opts *o,
                          const char *const *want /* "itemId reason" pairs, NULL-ended */) {
  sg_validation_errors e = {0};
  long r = sg_validate(items, n, o, &e);
  size_t nw = 0;
  while (want[nw]) nw++;
  for (size_t i = 0; i < e.n; i++) {
    char got[160];
    snprintf(got, sizeof got, "%s %s", e.v[i].item_id ? e.v[i].item_id : "-", e.v[i].reason);
    if (i >= nw || strcmp(got, want[i]) != 0)
      fail_msg("error %zu: got '%s', want '%s'", i, got, i < nw ? want[i] : "(none)");
    assert_non_null(e.v[i].message);
    assert_non_null(e.v[i].path);
  }
  assert_int_equal(r, (long)nw);
  assert_int_equal(e.n, nw);
  sg_validation_errors_free(&e);
}

static void test_valid(void **s) {
  (void)s;
  sg_compile_item it[] = {item("itm_a", "A", NULL), item("itm_b", "B", "itm_a")};
  const char *want[] = {NULL};
  expect_errors(it, 2, &opts, want);
}

static void test_duplicate_value_exact_bytes(void **s) {
  (void)s;
  /* "Café" and "cafe" normalise alike but are different values: only exact bytes clash. */
  sg_compile_item it[] = {item("itm_c", "Café", NULL), item("itm_b", "Café", NULL),
                          item("itm_a", "cafe", NULL), item("itm_d", "Café", NULL)};
  const char *want[] = {"itm_c duplicate_value", "itm_d duplicate_value", NULL};
  expect_errors(it, 4, &opts, want);
}

static void test_parents(void **s) {
  (void)s;
  sg_compile_item it[] = {
      item("itm_1", "1", "itm_nope"),                              /* unknown */
      item("itm_2", "2", "itm_3"),                                 /* cycle 2 -> 3 -> 2 */
      item("itm_3", "3", "itm_2"),    item("itm_4", "4", "itm_4"), /* self cycle */
      item("itm_5", "5", "itm_2"),                                 /* leads into a cycle */
  };
  const char *want[] = {"itm_1 unknown_parent", "itm_2 parent_cycle", "itm_3 parent_cycle",
                        "itm_4 parent_cycle",   "itm_5 parent_cycle", NULL};
  expect_errors(it, 5, &opts, want);
}

static void test_depth(void **s) {
  (void)s;
  /* A chain of 18 levels: levels 17 and 18 are too deep. */
  sg_compile_item it[18];
  char ids[18][16], vals[18][16];
  for (int i = 0; i < 18; i++) {
    snprintf(ids[i], sizeof ids[i], "itm_%02d", i);
    snprintf(vals[i], sizeof vals[i], "v%d", i);
  }
  /* Reverse input order so the walk meets children before parents. */
  for (int i = 0; i < 18; i++) it[17 - i] = item(ids[i], vals[i], i ? ids[i - 1] : NULL);
  const char *want[] = {"itm_16 hierarchy_too_deep", "itm_17 hierarchy_too_deep", NULL};
  expect_errors(it, 18, &opts, want);
}

static void test_locales_and_limit(void **s) {
  (void)s;
  sg_item_locale l1[] = {{"fr", "B fr", NULL, 0, NULL}, {"de", "B de", NULL, 0, NULL}};
  sg_item_locale l2[] = {{"FR", "A fr", NULL, 0, NULL}};
  sg_compile_item it[] = {item("itm_b", "B", NULL), item("itm_a", "A", NULL)};
  it[0].locales = l1;
  it[0].n_locales = 2;
  it[1].locales = l2;
  it[1].n_locales = 1;
  sg_compile_opts o = opts;
  o.max_items = 1;
  const char *want[] = {"- too_many_items", "itm_b unsupported_locale", NULL};
  expect_errors(it, 2, &o, want);
}

static void test_order_independent(void **s) {
  (void)s;
  sg_compile_item a[] = {item("itm_x", "X", "itm_q"), item("itm_y", "X", NULL),
                         item("itm_z", "Z", "itm_z")};
  sg_compile_item b[] = {a[2], a[0], a[1]};
  const char *want[] = {"itm_x unknown_parent", "itm_y duplicate_value", "itm_z parent_cycle",
                        NULL};
  expect_errors(a, 3, &opts, want);
  expect_errors(b, 3, &opts, want);
}

static void test_invalid_text_and_duplicate_id(void **s) {
  (void)s;
  sg_compile_item it[] = {item("itm_a", "ok", NULL), item("itm_a", "bad\xff", NULL)};
  sg_validation_errors e = {0};
  long r = sg_validate(it, 2, &opts, &e);
  assert_true(r >= 2);
  int dup = 0, bad = 0;
  for (size_t i = 0; i < e.n; i++) {
    dup |= strcmp(e.v[i].reason, "duplicate_id") == 0;
    bad |= strcmp(e.v[i].reason, "invalid_text") == 0;
  }
  assert_true(dup && bad);
  sg_validation_errors_free(&e);
}

static void test_error_cap(void **s) {
  (void)s;
  size_t n = 2500;
  sg_compile_item *it = calloc(n, sizeof *it);
  char(*ids)[16] = calloc(n, 16);
  for (size_t i = 0; i < n; i++) {
    snprintf(ids[i], 16, "itm_%05zu", i);
    it[i] = item(ids[i], "same", NULL);
  }
  sg_validation_errors e = {0};
  assert_int_equal(sg_validate(it, n, &opts, &e), 1000);
  assert_int_equal(e.n, 1000);
  sg_validation_errors_free(&e);
  free(it);
  free(ids);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_valid),
      cmocka_unit_test(test_duplicate_value_exact_bytes),
      cmocka_unit_test(test_parents),
      cmocka_unit_test(test_depth),
      cmocka_unit_test(test_locales_and_limit),
      cmocka_unit_test(test_order_independent),
      cmocka_unit_test(test_invalid_text_and_duplicate_id),
      cmocka_unit_test(test_error_cap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
