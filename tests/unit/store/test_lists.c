/* Unit tests of list records in the store (src/store/sqlite/lists.c), against a
 * real database in a temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/store.h"
#include "store_fixture.h"

static char root[256];
static char WA[64], WB[64]; /* two real workspaces (lists reference them) */

static void make_workspace(sg_store *st, char out[64]) {
  json_t *w = NULL;
  assert_int_equal(sg_store_workspace_create(st, "W", &w), SG_E_OK);
  snprintf(out, 64, "%s", json_string_value(json_object_get(w, "id")));
  json_decref(w);
}

static int setup(void **state) {
  snprintf(root, sizeof root, "/tmp/sg-lists-test-XXXXXX");
  if (!mkdtemp(root)) return -1;
  sg_store *st = NULL;
  if (store_test_open(root, &st)) return -1;
  make_workspace(st, WA);
  make_workspace(st, WB);
  *state = st;
  return 0;
}

static int teardown(void **state) {
  sg_store_close(*state);
  if (store_test_drop(root)) return -1;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  return system(cmd) == 0 ? 0 : -1;
}

static json_t *create(sg_store *st, const char *ws, const char *name) {
  json_t *l = NULL;
  assert_int_equal(sg_store_list_create(st, ws, name, NULL, &l), SG_E_OK);
  assert_non_null(l);
  return l;
}

static const char *id_of(const json_t *l) { return json_string_value(json_object_get(l, "id")); }

static sg_err patch(sg_store *st, const char *ws, const char *id, const char *changes_json,
                    const char *if_match, json_t **out) {
  json_t *ch = json_loads(changes_json, 0, NULL);
  assert_non_null(ch);
  *out = NULL;
  sg_err e = sg_store_list_patch(st, ws, id, ch, if_match, out);
  json_decref(ch);
  return e;
}

static json_int_t qp(const json_t *l, const char *k) {
  return json_integer_value(json_object_get(json_object_get(l, "queryPolicy"), k));
}

static void test_partial_policies_merge_in_the_store(void **state) {
  sg_store *st = *state;
  json_t *l = create(st, WA, "Cities"), *out;
  /* Two PATCHes of different queryPolicy members, each sending only its member (as the
   * handler does): the second must not undo the first. */
  assert_int_equal(patch(st, WA, id_of(l), "{\"queryPolicy\":{\"minQueryChars\":5}}", NULL, &out),
                   SG_E_OK);
  json_decref(out);
  assert_int_equal(patch(st, WA, id_of(l), "{\"queryPolicy\":{\"debounceMs\":10}}", NULL, &out),
                   SG_E_OK);
  assert_int_equal(qp(out, "minQueryChars"), 5);
  assert_int_equal(qp(out, "debounceMs"), 10);
  json_decref(out);
  /* Same for localePolicy: supportedLocales alone keeps the default. */
  assert_int_equal(patch(st, WA, id_of(l),
                         "{\"localePolicy\":{\"supportedLocales\":[\"en\",\"fr\"]}}", NULL, &out),
                   SG_E_OK);
  assert_string_equal(
      json_string_value(json_object_get(json_object_get(out, "localePolicy"), "defaultLocale")),
      "en");
  json_decref(out);
  json_decref(l);
}

static void test_default_locale_invariant_is_enforced_atomically(void **state) {
  sg_store *st = *state;
  json_t *l = create(st, WA, "Cities"), *out, *before;
  assert_int_equal(patch(st, WA, id_of(l),
                         "{\"localePolicy\":{\"supportedLocales\":[\"en\",\"fr\"],"
                         "\"defaultLocale\":\"fr\"}}",
                         NULL, &out),
                   SG_E_OK);
  json_decref(out);
  assert_int_equal(sg_store_list_get(st, WA, id_of(l), &before), SG_E_OK);
  /* A writer that validated against a stale default ("en") drops "fr": refused whole,
   * including the other change it carried. */
  assert_int_equal(patch(st, WA, id_of(l),
                         "{\"name\":\"X\",\"localePolicy\":{\"supportedLocales\":[\"en\"]}}", NULL,
                         &out),
                   SG_E_INVALID_REQUEST);
  assert_null(out);
  json_t *after;
  assert_int_equal(sg_store_list_get(st, WA, id_of(l), &after), SG_E_OK);
  assert_true(json_equal(before, after));
  /* Case-insensitive match is accepted. */
  assert_int_equal(
      patch(st, WA, id_of(l), "{\"localePolicy\":{\"supportedLocales\":[\"FR\"]}}", NULL, &out),
      SG_E_OK);
  json_decref(out);
  json_decref(after);
  json_decref(before);
  json_decref(l);
}

static void test_if_match(void **state) {
  sg_store *st = *state;
  json_t *l = create(st, WA, "Cities"), *out;
  char etag[48], etag2[48];
  sg_store_list_etag(l, etag);
  assert_int_equal(etag[0], '"');
  assert_int_equal(patch(st, WA, id_of(l), "{\"name\":\"A\"}", etag, &out), SG_E_OK);
  sg_store_list_etag(out, etag2);
  assert_string_not_equal(etag, etag2);
  json_decref(out);
  assert_int_equal(patch(st, WA, id_of(l), "{\"name\":\"B\"}", etag, &out),
                   SG_E_PRECONDITION_FAILED);
  assert_non_null(out); /* the current list, for its ETag */
  assert_string_equal(json_string_value(json_object_get(out, "name")), "A");
  json_decref(out);
  assert_int_equal(patch(st, WA, id_of(l), "{\"name\":\"C\"}", "*", &out), SG_E_OK);
  json_decref(out);
  json_decref(l);
}

static void test_other_workspace_is_invalid_list(void **state) {
  sg_store *st = *state;
  json_t *l = create(st, WA, "Mine"), *out = NULL;
  assert_int_equal(sg_store_list_get(st, WB, id_of(l), &out), SG_E_INVALID_LIST);
  assert_int_equal(patch(st, WB, id_of(l), "{\"name\":\"stolen\"}", NULL, &out), SG_E_INVALID_LIST);
  assert_int_equal(patch(st, WB, id_of(l), "{\"name\":\"stolen\"}", "*", &out), SG_E_INVALID_LIST);
  assert_int_equal(sg_store_list_get(st, WA, id_of(l), &out), SG_E_OK);
  assert_string_equal(json_string_value(json_object_get(out, "name")), "Mine");
  json_decref(out);
  json_decref(l);
}

static void test_slugs_and_page_order(void **state) {
  sg_store *st = *state;
  json_t *a = create(st, WA, "Same"), *b = create(st, WA, "Same"), *c = create(st, WA, "Other"),
         *d = create(st, WB, "Same");
  assert_string_equal(json_string_value(json_object_get(a, "slug")), "same");
  assert_string_equal(json_string_value(json_object_get(b, "slug")), "same-2");
  assert_string_equal(json_string_value(json_object_get(d, "slug")), "same");
  json_t *out;
  assert_int_equal(patch(st, WA, id_of(a), "{\"displayOrder\":-1}", NULL, &out), SG_E_OK);
  json_decref(out);
  /* Expected order: a (-1), then displayOrder 0 by slug: "other", "same-2". */
  const char *want[] = {id_of(a), id_of(c), id_of(b)};
  json_t *after = NULL;
  for (int i = 0; i < 3; i++) {
    json_t *data = NULL;
    bool more = true;
    assert_int_equal(sg_store_list_page(st, WA, 1, after, &data, &more), SG_E_OK);
    assert_int_equal(json_array_size(data), 1);
    json_t *row = json_array_get(data, 0);
    assert_string_equal(id_of(row), want[i]);
    assert_int_equal(more, i < 2);
    json_decref(after);
    after = json_pack("[O,O,O]", json_object_get(row, "displayOrder"), json_object_get(row, "slug"),
                      json_object_get(row, "id"));
    json_decref(data);
  }
  json_decref(after);
  json_decref(a);
  json_decref(b);
  json_decref(c);
  json_decref(d);
}

int main(void) {
  assert_int_equal(sg_init(), 0);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_partial_policies_merge_in_the_store, setup, teardown),
      cmocka_unit_test_setup_teardown(test_default_locale_invariant_is_enforced_atomically, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(test_if_match, setup, teardown),
      cmocka_unit_test_setup_teardown(test_other_workspace_is_invalid_list, setup, teardown),
      cmocka_unit_test_setup_teardown(test_slugs_and_page_order, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
