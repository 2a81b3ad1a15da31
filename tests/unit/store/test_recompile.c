/* Unit tests of the store's side of the background recompile (docs/UPGRADING.md):
 * sg_store_active_versions and sg_store_version_recompile on every backend (SQLite, and
 * PostgreSQL with SUGGESTD_TEST_STORE, see store_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store_fixture.h"

typedef store_fixture fixture;

static void add_item(fixture *f, const char *value, char id_out[64]) {
  json_t *it = json_pack("{s:s,s:s,s:[],s:i,s:n,s:{},s:i}", "value", value, "displayValue", value,
                         "aliases", "rank", 0, "parentId", "locales", "displayOrder", 0);
  json_t *out = NULL;
  assert_int_equal(sg_store_item_create(f->st, f->ws, f->list, it, &out), SG_E_OK);
  if (id_out) snprintf(id_out, 64, "%s", json_string_value(json_object_get(out, "id")));
  json_decref(out);
  json_decref(it);
}

static void put_synonyms(fixture *f, const char *a, const char *b) {
  json_t *sets = json_pack("[{s:s,s:[s,s]}]", "type", "equivalent", "phrases", a, b), *out = NULL;
  assert_int_equal(sg_store_synonyms_put(f->st, f->ws, f->list, sets, NULL, &out), SG_E_OK);
  json_decref(out);
  json_decref(sets);
}

static int64_t number_of(json_t *v) {
  int64_t n = json_integer_value(json_object_get(v, "versionNumber"));
  json_decref(v);
  return n;
}

/* Runs version n through the pipeline's transitions to active with the given hash. */
static void activate(fixture *f, int64_t n, char hex_digit) {
  sg_version_job job;
  assert_int_equal(sg_store_version_begin_run(f->st, f->list, n, &job), SG_E_OK);
  sg_store_job_clear(&job);
  char hash[80] = "sha256:";
  memset(hash + 7, hex_digit, 64);
  hash[71] = '\0';
  assert_int_equal(sg_store_version_set_staged(f->st, f->list, n, hash), SG_E_OK);
  bool activated = false;
  assert_int_equal(sg_store_version_activate(f->st, f->ws, f->list, n, &activated, NULL), SG_E_OK);
  assert_true(activated);
}

static int count_row(const sg_store_item_row *row, void *ctx) {
  (void)row;
  (*(int *)ctx)++;
  return 0;
}

static int snapshot_count(fixture *f, int64_t seq) {
  int seen = 0;
  int64_t last;
  size_t got;
  assert_int_equal(
      sg_store_snapshot_items(f->st, f->list, seq, 0, 1000, count_row, &seen, &last, &got),
      SG_E_OK);
  return seen;
}

static void test_recompile_takes_the_active_snapshot(void **state) {
  fixture *f = *state;
  char first[64];
  add_item(f, "alpha", first);
  add_item(f, "beta", NULL);
  add_item(f, "gamma", NULL);
  put_synonyms(f, "alpha", "first");
  json_t *v = NULL;
  assert_int_equal(sg_store_version_create(f->st, f->ws, f->list, &v), SG_E_OK);
  int64_t v1 = number_of(v);
  activate(f, v1, 'a');
  sg_version_job j1;
  assert_int_equal(sg_store_version_begin_run(f->st, f->list, v1, &j1), SG_E_OK);

  /* The draft moves on after the publish: an item more, one deleted, other synonyms; the
   * history the active version reads survives pruning. */
  add_item(f, "delta", NULL);
  json_t *cur = NULL;
  assert_int_equal(sg_store_item_delete(f->st, f->ws, f->list, first, NULL, &cur), SG_E_OK);
  json_decref(cur);
  put_synonyms(f, "beta", "second");
  size_t pruned = 0;
  assert_int_equal(sg_store_items_prune(f->st, f->list, 1000, &pruned), SG_E_OK);
  assert_int_equal(pruned, 0);

  /* The active versions, in list order; this list's is v1. */
  sg_active_version act[4];
  size_t n = 0;
  assert_int_equal(sg_store_active_versions(f->st, "", act, 4, &n), SG_E_OK);
  assert_int_equal(n, 1);
  assert_string_equal(act[0].list_id, f->list);
  assert_string_equal(act[0].workspace_id, f->ws);
  assert_int_equal(act[0].number, v1);
  assert_string_equal(act[0].content_hash, j1.content_hash);
  assert_int_equal(sg_store_active_versions(f->st, f->list, act, 4, &n), SG_E_OK);
  assert_int_equal(n, 0);

  /* The recompile's version: queued, v1's snapshot, count and policy, not the draft's. */
  assert_int_equal(sg_store_version_recompile(f->st, f->list, v1, &v), SG_E_OK);
  assert_string_equal(json_string_value(json_object_get(v, "state")), "queued");
  assert_int_equal(json_integer_value(json_object_get(v, "itemCount")), 3);
  int64_t v2 = number_of(v);
  assert_int_equal(v2, v1 + 1);
  sg_version_job j2;
  assert_int_equal(sg_store_version_begin_run(f->st, f->list, v2, &j2), SG_E_OK);
  assert_int_equal(j2.snapshot_seq, j1.snapshot_seq);
  assert_int_equal(snapshot_count(f, j2.snapshot_seq), 3);
  json_t *syn = NULL;
  assert_int_equal(sg_store_snapshot_synonyms(f->st, f->list, j2.snapshot_seq, &syn), SG_E_OK);
  assert_string_equal(
      json_string_value(json_array_get(json_object_get(json_array_get(syn, 0), "phrases"), 0)),
      "alpha");
  json_decref(syn);
  assert_true(json_equal(j1.locale_policy, j2.locale_policy));
  sg_store_job_clear(&j1);
  sg_store_job_clear(&j2);

  /* Once: while v2 is unresolved, a second recompile (another process) is refused. */
  assert_int_equal(sg_store_version_recompile(f->st, f->list, v1, &v), SG_E_PUBLISH_IN_PROGRESS);
  assert_null(v);
  /* v2 active: v1 is no longer what is served, so there is nothing to recompile from it. */
  activate(f, v2, 'b');
  assert_int_equal(sg_store_version_recompile(f->st, f->list, v1, &v),
                   SG_E_VERSION_NOT_ACTIVATABLE);
  assert_int_equal(sg_store_active_versions(f->st, "", act, 4, &n), SG_E_OK);
  assert_int_equal(n, 1);
  assert_int_equal(act[0].number, v2);
  /* A version that never existed. */
  assert_int_equal(sg_store_version_recompile(f->st, f->list, 99, &v), SG_E_NOT_FOUND);
}

static void test_queued_publish_and_archived_list_refuse(void **state) {
  fixture *f = *state;
  add_item(f, "alpha", NULL);
  json_t *v = NULL;
  assert_int_equal(sg_store_version_create(f->st, f->ws, f->list, &v), SG_E_OK);
  int64_t v1 = number_of(v);
  activate(f, v1, 'c');
  /* A publish queued by a user: it will replace v1 anyway. */
  assert_int_equal(sg_store_version_create(f->st, f->ws, f->list, &v), SG_E_OK);
  int64_t v2 = number_of(v);
  assert_int_equal(sg_store_version_recompile(f->st, f->list, v1, &v), SG_E_PUBLISH_IN_PROGRESS);
  assert_int_equal(sg_store_version_set_failed(f->st, f->list, v2, "test"), SG_E_OK);
  /* Archived: not served, not recompiled, not listed. */
  json_t *patch = json_pack("{s:s}", "status", "archived"), *out = NULL;
  assert_int_equal(sg_store_list_patch(f->st, f->ws, f->list, patch, NULL, &out), SG_E_OK);
  json_decref(patch);
  json_decref(out);
  assert_int_equal(sg_store_version_recompile(f->st, f->list, v1, &v), SG_E_LIST_ARCHIVED);
  sg_active_version act[4];
  size_t n = 9;
  assert_int_equal(sg_store_active_versions(f->st, "", act, 4, &n), SG_E_OK);
  assert_int_equal(n, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_recompile_takes_the_active_snapshot, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_queued_publish_and_archived_list_refuse,
                                      store_fixture_setup, store_fixture_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
