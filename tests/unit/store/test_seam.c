/* Unit tests of the store's seam (src/store/store.c, src/store/rules.c): which backend a
 * spec opens, the checks done once above the backends, and the engine-independent rules
 * (slugs, ETags, the shared-list rule), run against the backend under test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/util.h"
#include "store/rules.h"
#include "store/store.h"
#include "store_fixture.h"

/* ---- the dispatcher ------------------------------------------------------------------ */

static void expect_refused(const char *spec, const char *needle) {
  sg_store *st = (sg_store *)1; /* must come back NULL */
  char err[256] = "";
  assert_int_equal(sg_store_open(spec, &st, err, sizeof err), -1);
  assert_null(st);
  if (!strstr(err, needle)) fail_msg("spec '%s': error '%s' lacks '%s'", spec, err, needle);
}

static void test_postgres_urls_go_to_postgres(void **state) {
  (void)state;
  /* Both schemes reach libpq: nothing listens on port 1, and a malformed URL is refused
   * before any connection is tried. */
  expect_refused("postgres://u@127.0.0.1:1/db", "cannot connect to PostgreSQL");
  expect_refused("postgresql://127.0.0.1:1/db", "cannot connect to PostgreSQL");
  expect_refused("postgres://u@127.0.0.1:1/db?nosuchoption=1", "bad PostgreSQL URL");
  /* No SQLite file or folder named after the URL was made on the way. */
  struct stat sb;
  assert_int_not_equal(stat("postgres:", &sb), 0);
  assert_int_not_equal(stat("postgresql:", &sb), 0);
}

static void test_bad_specs_refused(void **state) {
  (void)state;
  expect_refused("", "bad database location");
  expect_refused("sqlite://", "bad database location");
  expect_refused("mysql://localhost/db", "unknown database scheme");
  expect_refused("redis://localhost", "unknown database scheme");
  char err[64];
  sg_store *st = NULL;
  assert_int_equal(sg_store_open(NULL, &st, err, sizeof err), -1);
  assert_int_equal(sg_store_open("/tmp/x", NULL, err, sizeof err), -1);
  /* A too-long location is refused, not truncated into another path. */
  char *longp = malloc(5000);
  assert_non_null(longp);
  memset(longp, 'a', 4999);
  longp[0] = '/';
  longp[4999] = '\0';
  expect_refused(longp, "bad database location");
  free(longp);
}

/* Opens spec, checks the store answers, closes it. */
static void expect_opens(const char *spec) {
  sg_store *st = NULL;
  char err[256] = "";
  if (sg_store_open(spec, &st, err, sizeof err)) fail_msg("spec '%s': %s", spec, err);
  int64_t n = -1;
  assert_int_equal(sg_store_queue_depth(st, &n), SG_E_OK);
  assert_int_equal(n, 0);
  sg_store_close(st);
}

static void test_sqlite_forms_accepted(void **state) {
  (void)state;
  char dir[] = "/tmp/sg-seam-test-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char spec[512], path[512];
  struct stat sb;
  /* A data directory: the database is <dir>/suggestd.db. */
  snprintf(spec, sizeof spec, "%s/data", dir);
  expect_opens(spec);
  snprintf(path, sizeof path, "%s/data/suggestd.db", dir);
  assert_int_equal(stat(path, &sb), 0);
  /* sqlite:///abs/file.db names the file itself. */
  snprintf(spec, sizeof spec, "sqlite://%s/one.db", dir);
  expect_opens(spec);
  snprintf(path, sizeof path, "%s/one.db", dir);
  assert_int_equal(stat(path, &sb), 0);
  /* A bare path ending in .db, .sqlite or .sqlite3 is a file too. */
  snprintf(spec, sizeof spec, "%s/sub/two.sqlite3", dir);
  expect_opens(spec);
  snprintf(path, sizeof path, "%s/sub/two.sqlite3", dir);
  assert_int_equal(stat(path, &sb), 0);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* ---- checks done once above the backends ------------------------------------------------ */

static void test_argument_checks(void **state) {
  store_fixture *f = *state;
  json_t *o = NULL;
  bool more = false;
  /* Ids that cannot name a record get the backend's "not found" answer without a query. */
  assert_int_equal(sg_store_item_page(f->st, f->ws, "", 10, NULL, &o, &more), SG_E_INVALID_LIST);
  assert_int_equal(sg_store_item_page(f->st, f->ws, NULL, 10, NULL, &o, &more), SG_E_INVALID_LIST);
  assert_int_equal(sg_store_item_page(f->st, f->ws, "lst_'; DROP", 10, NULL, &o, &more),
                   SG_E_INVALID_LIST);
  char longid[80];
  memset(longid, 'a', sizeof longid - 1);
  longid[sizeof longid - 1] = '\0';
  assert_int_equal(sg_store_version_create(f->st, f->ws, longid, &o), SG_E_INVALID_LIST);
  assert_int_equal(sg_store_item_get(f->st, f->ws, f->list, "itm x", &o), SG_E_INVALID_ITEM);
  assert_null(o);
  /* Page sizes outside 1..SG_STORE_MAX_PAGE and a missing handle are caller bugs. */
  assert_int_equal(sg_store_item_page(f->st, f->ws, f->list, 0, NULL, &o, &more), SG_E_INTERNAL);
  assert_int_equal(sg_store_list_page(f->st, f->ws, 100000, NULL, &o, &more), SG_E_INTERNAL);
  assert_int_equal(sg_store_list_get(NULL, f->ws, f->list, &o), SG_E_INTERNAL);
  /* The real list still answers through the same wrappers. */
  assert_int_equal(sg_store_item_page(f->st, f->ws, f->list, 10, NULL, &o, &more), SG_E_OK);
  assert_int_equal(json_array_size(o), 0);
  json_decref(o);
  sg_store_close(NULL);
  sg_store_import_free(NULL);
  sg_store_export_close(NULL);
}

/* ---- the engine-independent rules -------------------------------------------------------- */

static void test_slugs(void **state) {
  store_fixture *f = *state;
  char b[64], c[80];
  sg__store_slug_base("São Paulo", b, sizeof b);
  assert_string_equal(b, "sao-paulo");
  sg__store_slug_base("  Top  10: Cities!! ", b, sizeof b);
  assert_string_equal(b, "top-10-cities");
  sg__store_slug_base("!!!", b, sizeof b);
  assert_string_equal(b, "list");
  char longname[200];
  memset(longname, 'x', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  sg__store_slug_base(longname, b, sizeof b);
  assert_int_equal(strlen(b), 60);
  sg__store_slug_candidate("a", 1, c, sizeof c);
  assert_string_equal(c, "a");
  sg__store_slug_candidate("a", 2, c, sizeof c);
  assert_string_equal(c, "a-2");
  sg__store_slug_candidate("a", 100, c, sizeof c);
  assert_string_equal(c, "a-100");
  sg__store_slug_candidate("a", 101, c, sizeof c);
  assert_int_equal(strlen(c), 10);
  assert_memory_equal(c, "a-", 2);
  /* The backend applies them: three lists of one name get three slugs. */
  const char *want[] = {"sao-paulo", "sao-paulo-2", "sao-paulo-3"};
  for (int i = 0; i < 3; i++) {
    json_t *l = NULL;
    assert_int_equal(sg_store_list_create(f->st, f->ws, "São Paulo", NULL, &l), SG_E_OK);
    assert_string_equal(json_string_value(json_object_get(l, "slug")), want[i]);
    json_decref(l);
  }
}

static void test_etags(void **state) {
  store_fixture *f = *state;
  char a[48], b[48];
  json_t *x = json_pack("{s:s,s:i}", "id", "lst_1", "n", 1);
  json_t *y = json_pack("{s:i,s:s}", "n", 1, "id", "lst_1");
  sg_store_list_etag(x, a);
  sg_store_list_etag(y, b);
  /* A strong tag: quoted, 32 hex digits, independent of key order. */
  assert_int_equal(strlen(a), 34);
  assert_true(a[0] == '"' && a[33] == '"');
  assert_string_equal(a, b);
  json_object_set_new(y, "n", json_integer(2));
  sg_store_list_etag(y, b);
  assert_string_not_equal(a, b);
  sg_store_item_etag(x, b);
  assert_string_equal(a, b);
  json_decref(x);
  json_decref(y);
  /* The backend's precondition check uses the same tag. */
  json_t *l = NULL, *out = NULL;
  assert_int_equal(sg_store_list_get(f->st, f->ws, f->list, &l), SG_E_OK);
  sg_store_list_etag(l, a);
  json_t *ch = json_pack("{s:s}", "name", "Renamed");
  assert_int_equal(sg_store_list_patch(f->st, f->ws, f->list, ch, "\"0000\"", &out),
                   SG_E_PRECONDITION_FAILED);
  json_decref(out);
  assert_int_equal(sg_store_list_patch(f->st, f->ws, f->list, ch, a, &out), SG_E_OK);
  json_decref(out);
  json_decref(ch);
  json_decref(l);
}

static void test_shared_list_rule(void **state) {
  store_fixture *f = *state;
  /* The pure rule. */
  assert_true(sg__store_list_usable("w1", "w1", "private", false));
  assert_true(sg__store_list_usable("w1", "w2", "shared", true));
  assert_false(sg__store_list_usable("w1", "w2", "shared", false));
  assert_false(sg__store_list_usable("w1", "w2", "public", true));
  assert_false(sg__store_list_usable(NULL, "w2", "shared", true));
  assert_true(sg__store_list_subscribable("w1", "w2", "shared"));
  assert_false(sg__store_list_subscribable("w1", "w1", "shared"));
  assert_false(sg__store_list_subscribable("w1", "w2", "private"));
  assert_false(sg__store_list_subscribable("w1", "w2", NULL));

  /* Each place the backend applies it: subscribe, mint, publishable key. */
  json_t *o = NULL;
  assert_int_equal(sg_store_workspace_create(f->st, "Other", &o), SG_E_OK);
  char other[64];
  snprintf(other, sizeof other, "%s", json_string_value(json_object_get(o, "id")));
  json_decref(o);
  assert_int_equal(sg_store_application_create(f->st, other, "App", -1, &o), SG_E_OK);
  char app[64];
  snprintf(app, sizeof app, "%s", json_string_value(json_object_get(o, "id")));
  json_decref(o);
  const char *ids[] = {f->list};
  json_t *origins = json_array();
  char digest[65];
  memset(digest, 'a', 64);
  digest[64] = '\0';

  /* Private list: no subscription, no minting, no key. */
  assert_int_equal(sg_store_subscription_create(f->st, other, f->list, &o), SG_E_INVALID_LIST);
  assert_int_equal(sg_store_lists_mintable(f->st, other, ids, 1), SG_E_INVALID_LIST);
  assert_int_equal(sg_store_lists_mintable(f->st, f->ws, ids, 1), SG_E_OK);
  assert_int_equal(
      sg_store_publishable_key_create(f->st, "pk_1", app, f->list, digest, origins, &o),
      SG_E_INVALID_LIST);

  /* Shared, but not yet subscribed: subscribable, not usable. */
  json_t *ch = json_pack("{s:s}", "visibility", "shared");
  assert_int_equal(sg_store_list_patch(f->st, f->ws, f->list, ch, NULL, &o), SG_E_OK);
  json_decref(o);
  json_decref(ch);
  assert_int_equal(sg_store_lists_mintable(f->st, other, ids, 1), SG_E_INVALID_LIST);
  assert_int_equal(sg_store_subscription_create(f->st, f->ws, f->list, &o), SG_E_INVALID_LIST);
  assert_int_equal(sg_store_subscription_create(f->st, other, f->list, &o), SG_E_OK);
  char sub[64];
  snprintf(sub, sizeof sub, "%s", json_string_value(json_object_get(o, "id")));
  json_decref(o);

  /* Subscribed: usable. */
  assert_int_equal(sg_store_lists_mintable(f->st, other, ids, 1), SG_E_OK);
  assert_int_equal(
      sg_store_publishable_key_create(f->st, "pk_2", app, f->list, digest, origins, &o), SG_E_OK);
  json_decref(o);

  /* Cancelled: not usable any more. */
  assert_int_equal(sg_store_subscription_cancel(f->st, sub, &o), SG_E_OK);
  json_decref(o);
  assert_int_equal(sg_store_lists_mintable(f->st, other, ids, 1), SG_E_INVALID_LIST);
  digest[0] = 'b';
  assert_int_equal(
      sg_store_publishable_key_create(f->st, "pk_3", app, f->list, digest, origins, &o),
      SG_E_INVALID_LIST);
  json_decref(origins);
}

/* A named secret is made once and read back the same on every later call (by a store
 * opened again too); another name has its own. */
static void test_secret_kept(void **state) {
  store_fixture *f = *state;
  uint8_t a[32], again[32], b[32], zero[32] = {0};
  memset(a, 0, sizeof a);
  assert_int_equal(sg_store_secret(f->st, "cursor", a), SG_E_OK);
  assert_memory_not_equal(a, zero, 32);
  assert_int_equal(sg_store_secret(f->st, "cursor", again), SG_E_OK);
  assert_memory_equal(a, again, 32);
  assert_int_equal(sg_store_secret(f->st, "other", b), SG_E_OK);
  assert_memory_not_equal(a, b, 32);
  sg_store_close(f->st);
  f->st = NULL;
  assert_int_equal(store_test_open(f->dir, &f->st), 0);
  memset(again, 0, sizeof again);
  assert_int_equal(sg_store_secret(f->st, "cursor", again), SG_E_OK);
  assert_memory_equal(a, again, 32);
}

int main(void) {
  assert_int_equal(sg_init(), 0);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_postgres_urls_go_to_postgres),
      cmocka_unit_test(test_bad_specs_refused),
      cmocka_unit_test(test_sqlite_forms_accepted),
      cmocka_unit_test_setup_teardown(test_argument_checks, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_slugs, store_fixture_setup, store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_etags, store_fixture_setup, store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_shared_list_rule, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_secret_kept, store_fixture_setup,
                                      store_fixture_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
