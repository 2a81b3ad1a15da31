/* Unit tests of the store's synonym sets (store.h "synonyms"; src/store/sqlite/synonyms.c and its
 * PostgreSQL twin), run unchanged against each backend: current sets and their ETag, If-Match
 * inside the write, and the snapshot rule (a version compiles the sets stored when it was created,
 * however often they are replaced before its compile; rows it needs are never pruned). */
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

typedef store_fixture fixture;

static json_t *sets_of(const char *phrase) {
  return json_pack("[{s:s,s:[s,s]}]", "type", "equivalent", "phrases", phrase, "other");
}

static void put_ok(fixture *f, json_t *sets) {
  json_t *out = NULL;
  assert_int_equal(sg_store_synonyms_put(f->st, f->ws, f->list, sets, NULL, &out), SG_E_OK);
  assert_true(json_equal(out, sets));
  json_decref(out);
  json_decref(sets);
}

static int64_t new_version(fixture *f) {
  json_t *v = NULL;
  assert_int_equal(sg_store_version_create(f->st, f->ws, f->list, &v), SG_E_OK);
  int64_t n = json_integer_value(json_object_get(v, "versionNumber"));
  json_decref(v);
  return n;
}

/* The first phrase of the first set the version's snapshot holds ("" when none). */
static const char *snapshot_phrase(fixture *f, int64_t n, char buf[32]) {
  sg_version_job job;
  assert_int_equal(sg_store_version_begin_run(f->st, f->list, n, &job), SG_E_OK);
  json_t *sets = NULL;
  assert_int_equal(sg_store_snapshot_synonyms(f->st, f->list, job.snapshot_seq, &sets), SG_E_OK);
  const char *p =
      json_string_value(json_array_get(json_object_get(json_array_get(sets, 0), "phrases"), 0));
  snprintf(buf, 32, "%s", p ? p : "");
  json_decref(sets);
  sg_store_job_clear(&job);
  return buf;
}

static void test_get_put_etag_if_match(void **state) {
  fixture *f = *state;
  json_t *cur = NULL;
  assert_int_equal(sg_store_synonyms_get(f->st, f->ws, f->list, &cur), SG_E_OK);
  assert_true(json_is_array(cur) && json_array_size(cur) == 0);
  char empty[48], tag[48];
  sg_store_synonyms_etag(cur, empty);
  json_decref(cur);
  put_ok(f, sets_of("a"));
  assert_int_equal(sg_store_synonyms_get(f->st, f->ws, f->list, &cur), SG_E_OK);
  sg_store_synonyms_etag(cur, tag);
  assert_string_not_equal(tag, empty);
  json_decref(cur);
  /* A stale If-Match: nothing written, the current sets handed back. */
  json_t *b = sets_of("b"), *out = NULL;
  assert_int_equal(sg_store_synonyms_put(f->st, f->ws, f->list, b, empty, &out),
                   SG_E_PRECONDITION_FAILED);
  char got[48];
  sg_store_synonyms_etag(out, got);
  assert_string_equal(got, tag);
  json_decref(out);
  assert_int_equal(sg_store_synonyms_put(f->st, f->ws, f->list, b, tag, &out), SG_E_OK);
  json_decref(out);
  assert_int_equal(sg_store_synonyms_put(f->st, f->ws, f->list, b, "*", &out), SG_E_OK);
  json_decref(out);
  json_decref(b);
  /* Unknown list, another workspace. */
  assert_int_equal(sg_store_synonyms_get(f->st, f->ws, "lst_nope", &cur), SG_E_INVALID_LIST);
  assert_int_equal(sg_store_synonyms_get(f->st, "ws_other", f->list, &cur), SG_E_INVALID_LIST);
}

static void test_versions_keep_the_sets_of_their_snapshot(void **state) {
  fixture *f = *state;
  char buf[32];
  int64_t v0 = new_version(f); /* before any PUT: no sets */
  put_ok(f, sets_of("first"));
  int64_t v1 = new_version(f);
  put_ok(f, sets_of("second"));
  put_ok(f, sets_of("third")); /* prunes rows no queued version reads */
  int64_t v3 = new_version(f);
  put_ok(f, sets_of("fourth"));
  assert_string_equal(snapshot_phrase(f, v0, buf), "");
  assert_string_equal(snapshot_phrase(f, v1, buf), "first");
  assert_string_equal(snapshot_phrase(f, v3, buf), "third");
  json_t *cur = NULL;
  assert_int_equal(sg_store_synonyms_get(f->st, f->ws, f->list, &cur), SG_E_OK);
  assert_string_equal(
      json_string_value(json_array_get(json_object_get(json_array_get(cur, 0), "phrases"), 0)),
      "fourth");
  json_decref(cur);
}

static void test_archived_list_refuses(void **state) {
  fixture *f = *state;
  json_t *changes = json_pack("{s:s}", "status", "archived"), *list = NULL;
  assert_int_equal(sg_store_list_patch(f->st, f->ws, f->list, changes, NULL, &list), SG_E_OK);
  json_decref(changes);
  json_decref(list);
  json_t *sets = sets_of("x"), *out = NULL;
  assert_int_equal(sg_store_synonyms_put(f->st, f->ws, f->list, sets, NULL, &out),
                   SG_E_LIST_ARCHIVED);
  json_decref(sets);
}

int main(void) {
  if (sg_init()) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_get_put_etag_if_match, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_versions_keep_the_sets_of_their_snapshot,
                                      store_fixture_setup, store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_archived_list_refuses, store_fixture_setup,
                                      store_fixture_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
