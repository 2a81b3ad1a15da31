/* Unit tests of the edge outbox in the store (src/store/sqlite/outbox.c and the
 * triggers of migration 4): every change the edge mirrors is marked in its own
 * transaction, only those changes are, and a confirmation clears exactly what it read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "common/util.h"
#include "store_fixture.h"

/* True when (kind, id) is among the dirty records. */
static bool dirty(store_fixture *f, const char *kind, const char *id) {
  sg_edge_dirty d[64];
  size_t n = 0;
  assert_int_equal(sg_store_edge_dirty(f->st, d, 64, &n), SG_E_OK);
  for (size_t i = 0; i < n; i++)
    if (strcmp(d[i].kind, kind) == 0 && strcmp(d[i].id, id) == 0) return true;
  return false;
}

/* Confirms what sg_store_edge_source says (kind, id) should be, as an edge writer does. */
static void confirm(store_fixture *f, const char *kind, const char *id) {
  int64_t gen;
  json_t *src = NULL;
  sg_err e = sg_store_edge_source(f->st, kind, id, &gen, &src);
  assert_true(e == SG_E_OK || e == SG_E_NOT_FOUND);
  json_decref(src);
  assert_int_equal(sg_store_edge_done(f->st, kind, id, gen, 1), SG_E_OK);
}

static void test_list_changes(void **state) {
  store_fixture *f = *state;
  assert_true(dirty(f, "lists", f->list)); /* created */
  json_t *src = NULL;
  int64_t gen;
  assert_int_equal(sg_store_edge_source(f->st, "lists", f->list, &gen, &src), SG_E_OK);
  assert_true(gen >= 1);
  assert_string_equal(json_string_value(json_object_get(src, "workspaceId")), f->ws);
  assert_string_equal(json_string_value(json_object_get(src, "visibility")), "private");
  json_decref(src);
  confirm(f, "lists", f->list);
  assert_false(dirty(f, "lists", f->list));

  /* A rename is not served: nothing to write. */
  json_t *out = NULL, *ch = json_pack("{s:s}", "name", "Renamed");
  assert_int_equal(sg_store_list_patch(f->st, f->ws, f->list, ch, NULL, &out), SG_E_OK);
  json_decref(ch);
  json_decref(out);
  assert_false(dirty(f, "lists", f->list));

  /* Visibility is: marked in the PATCH's transaction. */
  ch = json_pack("{s:s}", "visibility", "public");
  assert_int_equal(sg_store_list_patch(f->st, f->ws, f->list, ch, NULL, &out), SG_E_OK);
  json_decref(ch);
  json_decref(out);
  assert_true(dirty(f, "lists", f->list));

  /* A writer that read an older generation confirms nothing newer. */
  int64_t want, done, rev;
  assert_int_equal(sg_store_edge_state(f->st, "lists", f->list, &want, &done, &rev), SG_E_OK);
  assert_int_equal(sg_store_edge_done(f->st, "lists", f->list, want - 1, 9), SG_E_OK);
  assert_true(dirty(f, "lists", f->list));
  assert_int_equal(sg_store_edge_done(f->st, "lists", f->list, want, 10), SG_E_OK);
  assert_false(dirty(f, "lists", f->list));
  assert_int_equal(sg_store_edge_done(f->st, "lists", f->list, want - 1, 3), SG_E_OK);
  assert_int_equal(sg_store_edge_state(f->st, "lists", f->list, &want, &done, &rev), SG_E_OK);
  assert_true(done == want && rev == 10); /* never backwards */
}

static void test_tenant_records(void **state) {
  store_fixture *f = *state;
  assert_true(dirty(f, "workspaces", f->ws));
  confirm(f, "workspaces", f->ws);
  json_t *o = NULL;
  assert_int_equal(sg_store_workspace_set_status(f->st, f->ws, "disabled", &o), SG_E_OK);
  json_decref(o);
  assert_true(dirty(f, "workspaces", f->ws));

  assert_int_equal(sg_store_application_create(f->st, f->ws, "A", -1, &o), SG_E_OK);
  char app[64];
  snprintf(app, sizeof app, "%s", json_string_value(json_object_get(o, "id")));
  json_decref(o);
  assert_true(dirty(f, "apps", app));
  json_t *src = NULL;
  int64_t gen;
  assert_int_equal(sg_store_edge_source(f->st, "apps", app, &gen, &src), SG_E_OK);
  assert_string_equal(json_string_value(json_object_get(src, "workspaceId")), f->ws);
  json_decref(src);

  /* A publishable key's record id is its digest. */
  const char *digest = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  json_t *origins = json_array();
  assert_int_equal(
      sg_store_publishable_key_create(f->st, "pub_1", app, f->list, digest, origins, &o), SG_E_OK);
  json_decref(origins);
  json_decref(o);
  assert_true(dirty(f, "keys", digest));
  assert_int_equal(sg_store_edge_source(f->st, "keys", digest, &gen, &src), SG_E_OK);
  assert_string_equal(json_string_value(json_object_get(src, "listId")), f->list);
  json_decref(src);

  /* A rotation marks every signing key, old ones included. */
  uint8_t sk[64] = {0}, pk[32] = {0};
  assert_int_equal(sg_store_signing_key_add(f->st, "kid_1", sk, pk, 1000), SG_E_OK);
  confirm(f, "signing-keys", "kid_1");
  assert_int_equal(sg_store_signing_key_add(f->st, "kid_2", sk, pk, 2000), SG_E_OK);
  assert_true(dirty(f, "signing-keys", "kid_1") && dirty(f, "signing-keys", "kid_2"));
  assert_int_equal(sg_store_edge_source(f->st, "signing-keys", "kid_1", &gen, &src), SG_E_OK);
  assert_int_equal(json_integer_value(json_object_get(src, "retiredAtUnix")), 2000);
  json_decref(src);

  assert_int_equal(sg_store_edge_source(f->st, "subscriptions", "sub_none", &gen, &src),
                   SG_E_NOT_FOUND);
  assert_int_equal(sg_store_edge_source(f->st, "nonsense", "x", &gen, &src), SG_E_NOT_FOUND);
}

/* The edge guard's row (sg_store_edge_guard_*): epochs only grow, one per rewrite even
 * when two start at once; a heartbeat never lowers and counts only for its own epoch; the
 * confirmed revision is the outbox's highest; the clock is the database's. */
static void test_guard_row(void **state) {
  store_fixture *f = *state;
  sg_edge_guard g;
  int64_t t0 = sg_now_ms();
  assert_int_equal(sg_store_edge_guard_get(f->st, &g), SG_E_OK);
  assert_int_equal(g.epoch, 0);
  assert_int_equal(g.heartbeat_ms, 0);
  assert_true(g.now_ms >= t0 - 5000 && g.now_ms <= t0 + 5000);
  uint64_t e1, e2, e3;
  assert_int_equal(sg_store_edge_guard_begin(f->st, 0, &e1), SG_E_OK);
  assert_int_equal(sg_store_edge_guard_begin(f->st, 0, &e2), SG_E_OK);
  assert_int_equal(e1, 1);
  assert_int_equal(e2, 2);
  assert_int_equal(sg_store_edge_guard_begin(f->st, 9, &e3), SG_E_OK);
  assert_int_equal(e3, 10);
  assert_int_equal(sg_store_edge_guard_beat(f->st, 2, 500), SG_E_OK); /* an old epoch */
  assert_int_equal(sg_store_edge_guard_get(f->st, &g), SG_E_OK);
  assert_int_equal(g.heartbeat_ms, 0);
  assert_int_equal(sg_store_edge_guard_beat(f->st, 10, 500), SG_E_OK);
  assert_int_equal(sg_store_edge_guard_beat(f->st, 10, 400), SG_E_OK);
  assert_int_equal(sg_store_edge_guard_get(f->st, &g), SG_E_OK);
  assert_int_equal(g.epoch, 10);
  assert_int_equal(g.heartbeat_ms, 500);
  assert_int_equal(sg_store_edge_done(f->st, "lists", f->list, 1, 77), SG_E_OK);
  assert_int_equal(sg_store_edge_guard_get(f->st, &g), SG_E_OK);
  assert_int_equal(g.confirmed_revision, 77);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_list_changes, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_tenant_records, store_fixture_setup,
                                      store_fixture_teardown),
      cmocka_unit_test_setup_teardown(test_guard_row, store_fixture_setup, store_fixture_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
