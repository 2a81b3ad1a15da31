/* PostgreSQL backend: result columns are read by name, so a SELECT whose list is in
 * another order still fills every field from its own column; and sg_item_create, the
 * one-statement item create, finds its own earlier effect when it is sent again; and the
 * write halves of an edit and a delete (sg_item_replace, sg_item_end) refuse as the
 * statements they replace did.
 * Runs when SUGGESTD_TEST_STORE names a PostgreSQL server (make unit-pg), and skips
 * otherwise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/postgres/pg.h"
#include "store/rules.h"
#include "store/store.h"
#include "store/store_fixture.h"

/* Runs sql with n text parameters on one of the store's own connections. */
static PGresult *query(store_fixture *f, const char *sql, int n, const char *const *p) {
  sg__pg *st = sg__pg_of(f->st);
  PGconn *c = sg__pg_acquire(st);
  assert_non_null(c);
  PGresult *r = PQexecParams(c, sql, n, NULL, p, NULL, NULL, 0);
  sg__pg_release(st, c);
  return r;
}

static json_t *new_item(store_fixture *f, const char *value, const char *parent) {
  json_t *body = json_pack("{s:s,s:s,s:[s],s:i,s:{s:s},s:i,s:s}", "value", value, "displayValue",
                           value, "aliases", "alias", "rank", 7, "locales", "de", "Wert",
                           "displayOrder", 3, "description", "about it");
  if (parent) json_object_set_new(body, "parentId", json_string(parent));
  json_t *item = NULL;
  assert_int_equal(sg_store_item_create(f->st, f->ws, f->list, body, &item), SG_E_OK);
  json_decref(body);
  return item;
}

/* The item columns selected in the reverse of SG__STORE_ITEM_COLS' order build the same
 * item: every field comes from the column of its name. */
static void test_item_row_reads_columns_by_name(void **state) {
  store_fixture *f = *state;
  json_t *top = new_item(f, "top", NULL);
  json_t *item = new_item(f, "child", json_string_value(json_object_get(top, "id")));
  const char *p[] = {json_string_value(json_object_get(item, "id"))};
  PGresult *r = query(f,
                      "SELECT description, created_at, display_order, locales, parent_id, rank,"
                      " aliases, display_value, value, id FROM items WHERE id=$1"
                      " AND to_clock IS NULL",
                      1, p);
  assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
  assert_int_equal(PQntuples(r), 1);
  json_t *got = sg__pg_item_row(r, 0);
  PQclear(r);
  assert_non_null(got);
  assert_true(json_equal(got, item));
  json_decref(got);
  json_decref(item);
  json_decref(top);
}

/* The same for a list row, its workspace and row version read by list_load's names. */
static void test_list_row_reads_columns_by_name(void **state) {
  store_fixture *f = *state;
  json_t *list = NULL;
  assert_int_equal(sg_store_list_get(f->st, f->ws, f->list, &list), SG_E_OK);
  const char *p[] = {f->list};
  PGresult *r = query(f,
                      "SELECT typo_min_two, typo_min_one, typo_enabled, active_content_hash,"
                      " workspace_id, updated_at, created_at, active_version_number,"
                      " display_order, supported_locales, default_locale, debounce_ms,"
                      " min_query_chars, status, visibility, slug, description, name, id"
                      " FROM lists WHERE id=$1",
                      1, p);
  assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
  json_t *got = sg__pg_list_row(r, 0);
  PQclear(r);
  assert_non_null(got);
  assert_true(json_equal(got, list));
  json_decref(got);
  json_decref(list);
}

/* A result that lacks a column the reader needs builds nothing, rather than reading
 * another column in its place. */
static void test_missing_column_builds_nothing(void **state) {
  store_fixture *f = *state;
  json_t *item = new_item(f, "lonely", NULL);
  const char *p[] = {json_string_value(json_object_get(item, "id"))};
  PGresult *r = query(f,
                      "SELECT id, value, display_value, aliases, rank, parent_id, locales,"
                      " display_order, created_at FROM items WHERE id=$1",
                      1, p);
  assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
  assert_int_equal(sg__pg_col(r, "description"), -1);
  assert_null(sg__pg_item_row(r, 0));
  assert_null(sg__pg_sn(r, 0, "description"));
  PQclear(r);
  json_decref(item);
}

/* Sent again after a lost answer (p_retry true), sg_item_create returns the item its
 * first call made instead of refusing the value as taken; a first call (p_retry false)
 * with a taken value is refused with SG004, and a list of another workspace with SG001. */
static void test_item_create_call_sent_again_returns_its_item(void **state) {
  store_fixture *f = *state;
  json_t *item = new_item(f, "once", NULL);
  const char *id = json_string_value(json_object_get(item, "id"));
  char other[32];
  sg_random_id("itm_", other, sizeof other);
  const char *sql = "SELECT " SG__STORE_ITEM_COLS " FROM sg_item_create($1, $2, $3, $4, $4,"
                    " '[]', 0, NULL, '{}', 0, 0, NULL, $5::boolean)";
  const char *again[] = {f->ws, f->list, id, "once", "true"};
  PGresult *r = query(f, sql, 5, again);
  assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
  assert_int_equal(PQntuples(r), 1);
  json_t *got = sg__pg_item_row(r, 0);
  PQclear(r);
  assert_true(json_equal(got, item));
  json_decref(got);

  const char *first[] = {f->ws, f->list, other, "once", "false"};
  r = query(f, sql, 5, first);
  assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
  assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "SG004");
  PQclear(r);

  const char *elsewhere[] = {"ws_nobody", f->list, other, "fresh", "false"};
  r = query(f, sql, 5, elsewhere);
  assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
  assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), "SG001");
  PQclear(r);

  /* Neither refusal left a row or a clock step behind: the list has its one item. */
  json_t *data = NULL;
  bool more = false;
  assert_int_equal(sg_store_item_page(f->st, f->ws, f->list, 10, NULL, &data, &more), SG_E_OK);
  assert_int_equal(json_array_size(data), 1);
  json_decref(data);
  json_decref(item);
}

/* The SQLSTATE of sql (n parameters) on the store, which must fail. */
static void expect_refusal(store_fixture *f, const char *sql, int n, const char *const *p,
                           const char *state) {
  PGresult *r = query(f, sql, n, p);
  assert_int_equal(PQresultStatus(r), PGRES_FATAL_ERROR);
  assert_string_equal(PQresultErrorField(r, PG_DIAG_SQLSTATE), state);
  PQclear(r);
}

/* The write halves of an edit and a delete: a row that is no longer current is refused
 * with SG005 and a taken value with SG004, each leaving the rows as they were; on a
 * current row they end it (and replace it) under the next clock. */
static void test_item_replace_and_end(void **state) {
  store_fixture *f = *state;
  json_t *a = new_item(f, "alpha", NULL), *b = new_item(f, "beta", NULL);
  const char *pa[] = {json_string_value(json_object_get(a, "id"))};
  PGresult *r = query(f, "SELECT seq FROM items WHERE id=$1 AND to_clock IS NULL", 1, pa);
  assert_int_equal(PQntuples(r), 1);
  char seq[24];
  snprintf(seq, sizeof seq, "%s", PQgetvalue(r, 0, 0));
  PQclear(r);
  const char *replace = "SELECT " SG__STORE_ITEM_COLS " FROM sg_item_replace($1, $2::bigint,"
                        " $3, $3, '[]', 0, NULL, '{}', 0, NULL)";
  const char *taken[] = {f->list, seq, "beta"};
  expect_refusal(f, replace, 3, taken, "SG004");
  const char *renamed[] = {f->list, seq, "alpha two"};
  r = query(f, replace, 3, renamed);
  assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
  json_t *got = sg__pg_item_row(r, 0);
  PQclear(r);
  assert_string_equal(json_string_value(json_object_get(got, "id")), pa[0]);
  assert_string_equal(json_string_value(json_object_get(got, "value")), "alpha two");
  json_decref(got);
  /* seq is no longer current: neither half touches anything. */
  expect_refusal(f, replace, 3, renamed, "SG005");
  const char *end_old[] = {f->list, seq};
  expect_refusal(f, "SELECT sg_item_end($1, $2::bigint)", 2, end_old, "SG005");
  json_t *cur = NULL;
  assert_int_equal(sg_store_item_get(f->st, f->ws, f->list, pa[0], &cur), SG_E_OK);
  assert_string_equal(json_string_value(json_object_get(cur, "value")), "alpha two");
  json_decref(cur);
  json_t *data = NULL;
  bool more = false;
  assert_int_equal(sg_store_item_page(f->st, f->ws, f->list, 10, NULL, &data, &more), SG_E_OK);
  assert_int_equal(json_array_size(data), 2);
  json_decref(data);
  json_decref(a);
  json_decref(b);
}

static int setup(void **state) {
  if (!store_test_is_postgres()) {
    fprintf(stderr, "skipped: SUGGESTD_TEST_STORE does not name a PostgreSQL server\n");
    return 0;
  }
  return store_fixture_setup(state);
}

static int teardown(void **state) {
  return store_test_is_postgres() ? store_fixture_teardown(state) : 0;
}

#define PG_TEST(fn)                                                                                \
  static void fn##_or_skip(void **state) {                                                         \
    if (!store_test_is_postgres()) skip();                                                         \
    fn(state);                                                                                     \
  }
PG_TEST(test_item_row_reads_columns_by_name)
PG_TEST(test_list_row_reads_columns_by_name)
PG_TEST(test_missing_column_builds_nothing)
PG_TEST(test_item_create_call_sent_again_returns_its_item)
PG_TEST(test_item_replace_and_end)

int main(void) {
  if (sg_init()) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_item_row_reads_columns_by_name_or_skip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_list_row_reads_columns_by_name_or_skip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing_column_builds_nothing_or_skip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_item_create_call_sent_again_returns_its_item_or_skip,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(test_item_replace_and_end_or_skip, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
