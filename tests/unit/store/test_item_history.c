/* Unit tests of mutable items in the store (src/store/sqlite/items.c, import.c,
 * migration 3): a version's snapshot is unaffected by later edits, deletes and imports;
 * uniqueness holds among current rows only; import matches by value and keeps ids;
 * history that no pending version can read is pruned. */
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

typedef store_fixture fixture;

static json_t *item(const char *value, int rank) {
  return json_pack("{s:s,s:s,s:[],s:i,s:n,s:{},s:i}", "value", value, "displayValue", value,
                   "aliases", "rank", rank, "parentId", "locales", "displayOrder", 0);
}

static void add(fixture *f, const char *value, char id[64]) {
  json_t *it = item(value, 0), *out = NULL;
  assert_int_equal(sg_store_item_create(f->st, f->ws, f->list, it, &out), SG_E_OK);
  snprintf(id, 64, "%s", json_string_value(json_object_get(out, "id")));
  json_decref(out);
  json_decref(it);
}

/* The snapshot of version n as "value:rank " tokens in value order (the walk is in row
 * order, which imports choose). */
typedef struct {
  char text[1024];
} dump;

static int dump_row(const sg_store_item_row *row, void *ctx) {
  dump *d = ctx;
  char one[128];
  snprintf(one, sizeof one, "%s:%lld ", row->value, (long long)row->rank);
  strncat(d->text, one, sizeof d->text - strlen(d->text) - 1);
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *snapshot(fixture *f, int64_t n, dump *d) {
  sg_version_job job;
  memset(d, 0, sizeof *d);
  assert_int_equal(sg_store_version_begin_run(f->st, f->list, n, &job), SG_E_OK);
  int64_t last;
  size_t got;
  assert_int_equal(
      sg_store_snapshot_items(f->st, f->list, job.snapshot_seq, 0, 1000, dump_row, d, &last, &got),
      SG_E_OK);
  sg_store_job_clear(&job);
  char *tok[64];
  size_t nt = 0;
  char copy[1024];
  snprintf(copy, sizeof copy, "%s", d->text);
  for (char *t = strtok(copy, " "); t && nt < 64; t = strtok(NULL, " ")) tok[nt++] = t;
  qsort(tok, nt, sizeof *tok, cmp_str);
  d->text[0] = '\0';
  for (size_t i = 0; i < nt; i++) {
    strncat(d->text, tok[i], sizeof d->text - strlen(d->text) - 1);
    strncat(d->text, " ", sizeof d->text - strlen(d->text) - 1);
  }
  return d->text;
}

static int64_t version(fixture *f) {
  json_t *v = NULL;
  assert_int_equal(sg_store_version_create(f->st, f->ws, f->list, &v), SG_E_OK);
  int64_t n = json_integer_value(json_object_get(v, "versionNumber"));
  json_decref(v);
  return n;
}

static void test_snapshot_survives_edits(void **state) {
  fixture *f = *state;
  char a[64], b[64];
  add(f, "a", a);
  add(f, "b", b);
  int64_t v1 = version(f);
  /* Edit a, delete b, then reuse b's value: all invisible to v1. */
  json_t *it = item("a", 5), *out = NULL;
  assert_int_equal(sg_store_item_update(f->st, f->ws, f->list, a, it, NULL, &out), SG_E_OK);
  assert_string_equal(json_string_value(json_object_get(out, "id")), a);
  json_decref(out);
  json_decref(it);
  assert_int_equal(sg_store_item_delete(f->st, f->ws, f->list, b, NULL, &out), SG_E_OK);
  char b2[64];
  add(f, "b", b2);
  assert_string_not_equal(b, b2);
  int64_t v2 = version(f);
  dump d;
  assert_string_equal(snapshot(f, v1, &d), "a:0 b:0 ");
  assert_string_equal(snapshot(f, v2, &d), "a:5 b:0 ");
  /* A stale If-Match fails inside the transaction and hands back the current item. */
  it = item("a", 6);
  assert_int_equal(sg_store_item_update(f->st, f->ws, f->list, a, it, "\"stale\"", &out),
                   SG_E_PRECONDITION_FAILED);
  assert_int_equal(json_integer_value(json_object_get(out, "rank")), 5);
  json_decref(out);
  json_decref(it);
  /* Uniqueness among current rows: renaming a onto b is a duplicate. */
  it = item("b", 0);
  assert_int_equal(sg_store_item_update(f->st, f->ws, f->list, a, it, NULL, &out),
                   SG_E_DUPLICATE_VALUE);
  json_decref(it);
  assert_int_equal(sg_store_item_delete(f->st, f->ws, f->list, b, NULL, &out), SG_E_INVALID_ITEM);
}

static sg_err import(fixture *f, const char *const *values, const int *ranks, size_t n,
                     bool replace, sg_import_counts *c) {
  sg_store_import *imp;
  assert_int_equal(sg_store_import_begin(f->st, &imp), SG_E_OK);
  for (size_t i = 0; i < n; i++) {
    json_t *it = item(values[i], ranks[i]);
    assert_int_equal(sg_store_import_add(imp, (int64_t)i, it, NULL), SG_E_OK);
    json_decref(it);
  }
  json_t *bad = NULL;
  int64_t nbad = 0;
  sg_err e = sg_store_import_apply(f->st, imp, f->ws, f->list, replace, 100, c, &bad, &nbad);
  json_decref(bad);
  sg_store_import_free(imp);
  return e;
}

static void test_import_and_prune(void **state) {
  fixture *f = *state;
  char a[64];
  add(f, "a", a);
  add(f, "x", (char[64]){0});
  int64_t v1 = version(f);
  static const char *const vals[] = {"a", "b", "c"};
  static const int ranks[] = {1, 0, 0};
  sg_import_counts c;
  assert_int_equal(import(f, vals, ranks, 3, true, &c), SG_E_OK);
  assert_int_equal(c.created, 2);
  assert_int_equal(c.updated, 1);
  assert_int_equal(c.deleted, 1);
  assert_int_equal(c.unchanged, 0);
  json_t *out = NULL;
  assert_int_equal(sg_store_item_get(f->st, f->ws, f->list, a, &out), SG_E_OK);
  assert_int_equal(json_integer_value(json_object_get(out, "rank")), 1);
  json_decref(out);
  /* The same import again changes nothing. */
  assert_int_equal(import(f, vals, ranks, 3, true, &c), SG_E_OK);
  assert_int_equal(c.unchanged, 3);
  int64_t v2 = version(f);
  dump d;
  assert_string_equal(snapshot(f, v1, &d), "a:0 x:0 ");
  assert_string_equal(snapshot(f, v2, &d), "a:1 b:0 c:0 ");
  /* v1 is still queued: its rows must stay. */
  size_t n = 0;
  assert_int_equal(sg_store_items_prune(f->st, f->list, 100, &n), SG_E_OK);
  assert_int_equal(n, 0);
  assert_int_equal(sg_store_version_set_failed(f->st, f->list, v1, "test"), SG_E_OK);
  assert_int_equal(sg_store_items_prune(f->st, f->list, 100, &n), SG_E_OK);
  assert_int_equal(n, 2); /* a's old row and x */
  assert_string_equal(snapshot(f, v2, &d), "a:1 b:0 c:0 ");
}
/* An import whose parentValue names no item changes nothing and reports the lines that
 * name one (at most max_bad of them, and how many in all). */
static void test_import_bad_parent_lines(void **state) {
  fixture *f = *state;
  sg_store_import *imp;
  assert_int_equal(sg_store_import_begin(f->st, &imp), SG_E_OK);
  static const char *const vals[] = {"p", "c1", "c2", "c3"};
  static const char *const parents[] = {NULL, "nope", "p", "none"};
  static const int64_t lines[] = {3, 7, 8, 12};
  for (size_t i = 0; i < 4; i++) {
    json_t *it = item(vals[i], 0);
    assert_int_equal(sg_store_import_add(imp, lines[i], it, parents[i]), SG_E_OK);
    json_decref(it);
  }
  json_t *bad = NULL;
  int64_t nbad = 0;
  sg_import_counts c;
  assert_int_equal(sg_store_import_apply(f->st, imp, f->ws, f->list, false, 1, &c, &bad, &nbad),
                   SG_E_INVALID_REQUEST);
  sg_store_import_free(imp);
  assert_int_equal(nbad, 2);
  assert_int_equal(json_array_size(bad), 1);
  assert_int_equal(json_integer_value(json_array_get(bad, 0)), 7);
  json_decref(bad);
  json_t *page = NULL;
  bool more;
  assert_int_equal(sg_store_item_page(f->st, f->ws, f->list, 10, NULL, &page, &more), SG_E_OK);
  assert_int_equal(json_array_size(page), 0);
  json_decref(page);
}

/* The snapshot rows' descriptions as "value=description " (or "value=- ") in value order. */
static int desc_row(const sg_store_item_row *row, void *ctx) {
  dump *d = ctx;
  char one[160];
  snprintf(one, sizeof one, "%s=%s ", row->value, row->description ? row->description : "-");
  strncat(d->text, one, sizeof d->text - strlen(d->text) - 1);
  return 0;
}

static const char *descriptions(fixture *f, int64_t n, dump *d) {
  sg_version_job job;
  memset(d, 0, sizeof *d);
  assert_int_equal(sg_store_version_begin_run(f->st, f->list, n, &job), SG_E_OK);
  int64_t last;
  size_t got;
  assert_int_equal(
      sg_store_snapshot_items(f->st, f->list, job.snapshot_seq, 0, 1000, desc_row, d, &last, &got),
      SG_E_OK);
  sg_store_job_clear(&job);
  return d->text;
}

/* An item's description: stored, absent from the record when unset, removed by null (not
 * mistaken for "no change"), and each version's snapshot keeps the one it saw. */
static void test_description_history(void **state) {
  fixture *f = *state;
  json_t *it = item("a", 0), *out = NULL;
  json_object_set_new(it, "description", json_string("Texas"));
  assert_int_equal(sg_store_item_create(f->st, f->ws, f->list, it, &out), SG_E_OK);
  assert_string_equal(json_string_value(json_object_get(out, "description")), "Texas");
  char a[64];
  snprintf(a, sizeof a, "%s", json_string_value(json_object_get(out, "id")));
  char etag[48];
  sg_store_item_etag(out, etag);
  json_decref(out);
  char b[64];
  add(f, "b", b);
  assert_int_equal(sg_store_item_get(f->st, f->ws, f->list, b, &out), SG_E_OK);
  assert_null(json_object_get(out, "description"));
  json_decref(out);
  int64_t v1 = version(f);
  /* The same description again writes nothing: the ETag stays. */
  assert_int_equal(sg_store_item_update(f->st, f->ws, f->list, a, it, NULL, &out), SG_E_OK);
  char same[48];
  sg_store_item_etag(out, same);
  assert_string_equal(same, etag);
  json_decref(out);
  /* null removes it. */
  json_object_set_new(it, "description", json_null());
  assert_int_equal(sg_store_item_update(f->st, f->ws, f->list, a, it, NULL, &out), SG_E_OK);
  assert_null(json_object_get(out, "description"));
  json_decref(out);
  json_decref(it);
  assert_int_equal(sg_store_item_get(f->st, f->ws, f->list, a, &out), SG_E_OK);
  assert_null(json_object_get(out, "description"));
  json_decref(out);
  it = item("b", 0);
  json_object_set_new(it, "description", json_string("Kentucky"));
  assert_int_equal(sg_store_item_update(f->st, f->ws, f->list, b, it, NULL, &out), SG_E_OK);
  json_decref(out);
  json_decref(it);
  int64_t v2 = version(f);
  dump d;
  assert_string_equal(descriptions(f, v1, &d), "a=Texas b=- ");
  assert_string_equal(descriptions(f, v2, &d), "a=- b=Kentucky ");
}

int main(void) {
  sg_init();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_snapshot_survives_edits, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_import_and_prune, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_import_bad_parent_lines, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_description_history, store_fixture_setup,
                                      store_fixture_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
