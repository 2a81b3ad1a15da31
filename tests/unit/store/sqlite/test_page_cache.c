/* Unit tests of the SQLite store's page cache bound (src/store/sqlite/core.c, import.c):
 * the write connection keeps every page it writes, so its cache follows the database's
 * growth up to its bound; between imports that bound is SG__SQ_CACHE_KIB, and an import's
 * apply, which runs with SG__SQ_IMPORT_CACHE_KIB, gives the difference back when it ends.
 * The test reaches into the backend's internals (sqlite_store.h) to write through the
 * writer's connection and to read its cache's size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/sqlite_store.h"

static char root[256];

/* Pages beyond the bound are what this test looks for: the bound itself, plus SQLite's
 * per-page headers (under 10 % of a 4 KiB page) and a little slack. */
#define BOUND_BYTES ((int64_t)SG__SQ_CACHE_KIB * 1024 * 12 / 10)
/* More than three times the bound is written, so a cache that is not held to it shows. */
#define WRITE_BYTES ((int64_t)SG__SQ_CACHE_KIB * 1024 * 3)

static int setup(void **state) {
  snprintf(root, sizeof root, "/tmp/sg-pcache-test-XXXXXX");
  if (!mkdtemp(root)) return -1;
  sg_store *st = NULL;
  char err[256];
  if (sg_store_open(root, &st, err, sizeof err)) return -1;
  *state = st;
  return 0;
}

static int teardown(void **state) {
  sg_store_close(*state);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  return system(cmd) == 0 ? 0 : -1;
}

/* The bytes the writer's page cache holds now. */
static int64_t cache_used(sg__sq *sq) {
  int cur = 0, hi = 0;
  assert_int_equal(sqlite3_db_status(sq->db, SQLITE_DBSTATUS_CACHE_USED, &cur, &hi, 0), SQLITE_OK);
  return cur;
}

/* The writer's cache_size as SQLite reports it (negative: KiB). */
static int64_t cache_size(sg__sq *sq) {
  sqlite3_stmt *s = NULL;
  assert_int_equal(sqlite3_prepare_v2(sq->db, "PRAGMA main.cache_size", -1, &s, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(s), SQLITE_ROW);
  int64_t v = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return v;
}

/* Writes `bytes` of new rows through the writer, in transactions of about 1 MiB, as a
 * day of publishes adds rows a little at a time. */
static void write_rows(sg__sq *sq, int64_t bytes) {
  assert_int_equal(
      sqlite3_exec(sq->db, "CREATE TABLE IF NOT EXISTS filler(b BLOB)", NULL, NULL, NULL),
      SQLITE_OK);
  for (int64_t done = 0; done < bytes; done += 256 * 4000) {
    assert_int_equal(sqlite3_exec(sq->db,
                                  "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c"
                                  " WHERE i < 256) INSERT INTO filler SELECT randomblob(4000)"
                                  " FROM c",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
  }
}

/* Written pages stay cached up to the writer's bound and no further: a process that
 * publishes for a day levels off at SG__SQ_CACHE_KIB, not at 64 MiB. */
static void test_writer_cache_is_bounded(void **state) {
  sg__sq *sq = sg__sq_of(*state);
  write_rows(sq, WRITE_BYTES);
  int64_t used = cache_used(sq);
  /* The cache did fill (the bound is what holds it, not an empty cache)... */
  assert_true(used > (int64_t)SG__SQ_CACHE_KIB * 1024 / 2);
  /* ...and stopped at the bound. */
  if (used > BOUND_BYTES)
    fail_msg("writer page cache %lld bytes after writing %lld, bound %lld", (long long)used,
             (long long)WRITE_BYTES, (long long)BOUND_BYTES);
  assert_int_equal(cache_size(sq), -SG__SQ_CACHE_KIB);
}

/* A workspace and a list to import into; ws and list receive their ids. */
static void make_list(sg_store *st, char ws[64], char list[64]) {
  json_t *o = NULL;
  assert_int_equal(sg_store_workspace_create(st, "W", &o), SG_E_OK);
  snprintf(ws, 64, "%s", json_string_value(json_object_get(o, "id")));
  json_decref(o);
  assert_int_equal(sg_store_list_create(st, ws, "L", NULL, &o), SG_E_OK);
  snprintf(list, 64, "%s", json_string_value(json_object_get(o, "id")));
  json_decref(o);
}

/* An import's apply runs with the larger bound and hands the writer back its own: the
 * cache_size is restored and what the apply cached above the bound is freed, also when
 * the cache was full before the import began. */
static void test_import_restores_the_bound(void **state) {
  sg_store *st = *state;
  sg__sq *sq = sg__sq_of(st);
  char ws[64], list[64];
  make_list(st, ws, list);
  write_rows(sq, WRITE_BYTES);
  sg_store_import *imp = NULL;
  assert_int_equal(sg_store_import_begin(st, &imp), SG_E_OK);
  /* Items with long descriptions: more pages than the bound holds. */
  char desc[1001];
  memset(desc, 'd', sizeof desc - 1);
  desc[sizeof desc - 1] = '\0';
  int n = (int)(WRITE_BYTES / 1000);
  for (int i = 0; i < n; i++) {
    char value[32];
    snprintf(value, sizeof value, "item %06d", i);
    json_t *it = json_pack("{s:s,s:s,s:[],s:i,s:n,s:{},s:i,s:s}", "value", value, "displayValue",
                           value, "aliases", "rank", i, "parentId", "locales", "displayOrder", 0,
                           "description", desc);
    assert_non_null(it);
    assert_int_equal(sg_store_import_add(imp, i, it, NULL), SG_E_OK);
    json_decref(it);
  }
  sg_import_counts counts;
  json_t *bad = NULL;
  int64_t n_bad = 0;
  assert_int_equal(sg_store_import_apply(st, imp, ws, list, true, 10, &counts, &bad, &n_bad),
                   SG_E_OK);
  json_decref(bad);
  sg_store_import_free(imp);
  assert_int_equal(counts.created, n);
  int64_t used = cache_used(sq);
  if (used > BOUND_BYTES)
    fail_msg("writer page cache %lld bytes after an import, bound %lld", (long long)used,
             (long long)BOUND_BYTES);
  assert_int_equal(cache_size(sq), -SG__SQ_CACHE_KIB);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_writer_cache_is_bounded, setup, teardown),
      cmocka_unit_test_setup_teardown(test_import_restores_the_bound, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
