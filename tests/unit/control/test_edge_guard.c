/*
 * Unit tests of the edge guard (src/control/edge_guard.c; docs/EDGE.md, "The staleness
 * guard") on the store under test (store_fixture.h) and a directory edge: a fresh edge is
 * stamped, a current one gets a heartbeat, and an edge that went back — an older stamp, a
 * flushed one, a write that returned a lower revision — is rewritten in a new epoch, while
 * another process's rewrite is given its time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "control/edge_guard.h"
#include "control/edge_sync.h"
#include "store/store_fixture.h"

typedef struct {
  store_fixture *f;
  sg_edge *e;
  char edge[PATH_MAX];
} guard_fixture;

static int setup(void **state) {
  if (store_fixture_setup(state)) return -1;
  guard_fixture *g = calloc(1, sizeof *g);
  g->f = *state;
  snprintf(g->edge, sizeof g->edge, "%s/edge", g->f->dir);
  if (sg_edge_open(g->edge, &g->e)) return -1;
  *state = g;
  return 0;
}

static int teardown(void **state) {
  guard_fixture *g = *state;
  sg_edge_close(g->e);
  *state = g->f;
  free(g);
  return store_fixture_teardown(state);
}

static sg_edge_stamp stamp(guard_fixture *g) {
  sg_edge_stamp s;
  assert_int_equal(sg_edge_stamp_get(g->e, &s), 0);
  return s;
}

static bool list_on_edge(guard_fixture *g) {
  char *json = NULL;
  size_t len;
  int rc = sg_edge_get(g->e, SG_EDGE_LIST, g->f->list, &json, &len);
  free(json);
  return rc == 0;
}

static void test_guard(void **state) {
  guard_fixture *g = *state;
  sg_edge_guard_proc p = {0};
  /* Never guarded: rewritten (the list appears) in epoch 1, and stamped. */
  assert_false(list_on_edge(g));
  assert_int_equal(sg_edge_guard_tick(g->f->st, g->e, &p), SG_EDGE_GUARD_CURRENT);
  assert_true(list_on_edge(g));
  sg_edge_stamp s1 = stamp(g);
  assert_true(s1.present && s1.epoch == 1 && s1.heartbeat_ms > 0);
  assert_int_equal(atomic_load(&p.rewrites), 1);
  sg_edge_guard row;
  assert_int_equal(sg_store_edge_guard_get(g->f->st, &row), SG_E_OK);
  assert_int_equal(row.epoch, 1);
  assert_int_equal(row.heartbeat_ms, s1.heartbeat_ms);

  /* Current: a heartbeat, no rewrite. */
  assert_int_equal(sg_edge_guard_tick(g->f->st, g->e, &p), SG_EDGE_GUARD_CURRENT);
  sg_edge_stamp s2 = stamp(g);
  assert_int_equal(s2.epoch, 1);
  assert_true(s2.heartbeat_ms > s1.heartbeat_ms);
  assert_int_equal(atomic_load(&p.rewrites), 1);

  /* The edge's stamp put back to an older one (a restored copy): epoch 2. */
  char path[PATH_MAX + 128], text[72];
  snprintf(path, sizeof path, "%s/STAMP", g->edge);
  assert_int_equal(sg_edge_stamp_format(&s1, text), 0);
  assert_int_equal(sg_write_file_atomic(path, text, strlen(text)), 0);
  assert_int_equal(sg_edge_guard_tick(g->f->st, g->e, &p), SG_EDGE_GUARD_CURRENT);
  assert_int_equal(stamp(g).epoch, 2);
  assert_int_equal(atomic_load(&p.rewrites), 2);

  /* Emptied (stamp, revision and the list's record gone): rebuilt in epoch 3, its
   * revision above every one confirmed before. */
  uint64_t rev_before;
  assert_int_equal(sg_edge_revision(g->e, &rev_before), 0);
  unlink(path);
  snprintf(path, sizeof path, "%s/REVISION", g->edge);
  unlink(path);
  snprintf(path, sizeof path, "%s/lists/%s.json", g->edge, g->f->list);
  unlink(path);
  /* Found empty once: left for the next tick (a directory may only have blinked). */
  assert_int_equal(sg_edge_guard_tick(g->f->st, g->e, &p), SG_EDGE_GUARD_UNKNOWN);
  assert_false(stamp(g).present);
  assert_int_equal(sg_edge_guard_tick(g->f->st, g->e, &p), SG_EDGE_GUARD_CURRENT);
  assert_int_equal(stamp(g).epoch, 3);
  assert_true(list_on_edge(g));
  uint64_t rev;
  assert_int_equal(sg_edge_revision(g->e, &rev), 0);
  assert_true(rev > rev_before);

  /* Another process's rewrite under way (its epoch open on both sides): waited for, then
   * taken over once it stalls. */
  uint64_t other;
  assert_int_equal(sg_store_edge_guard_begin(g->f->st, 3, &other), SG_E_OK);
  assert_int_equal(other, 4);
  sg_edge_stamp open = {true, other, 0, 0};
  assert_int_equal(sg_edge_stamp_put(g->e, NULL, &open), 0);
  assert_int_equal(sg_edge_guard_tick(g->f->st, g->e, &p), SG_EDGE_GUARD_REPAIRING);
  assert_int_equal(stamp(g).epoch, 4);
  p.waiting_since -= SG_EDGE_GUARD_TAKEOVER_MS;
  assert_int_equal(sg_edge_guard_tick(g->f->st, g->e, &p), SG_EDGE_GUARD_CURRENT);
  sg_edge_stamp s5 = stamp(g);
  assert_true(s5.epoch == 5 && s5.heartbeat_ms > 0);

  /* A record write that returns a revision below one already seen (a failover that lost
   * writes): the next tick rewrites. */
  sg_edge_sync_observe(rev + 1000000);
  json_t *o = NULL, *ch = json_pack("{s:s}", "visibility", "public");
  assert_int_equal(sg_store_list_patch(g->f->st, g->f->ws, g->f->list, ch, NULL, &o), SG_E_OK);
  json_decref(ch);
  json_decref(o);
  assert_int_equal(sg_edge_sync_pending(g->f->st, g->e), 0);
  assert_int_equal(sg_edge_guard_tick(g->f->st, g->e, &p), SG_EDGE_GUARD_CURRENT);
  assert_int_equal(stamp(g).epoch, 6);
  /* And then it is current again. */
  assert_int_equal(sg_edge_guard_tick(g->f->st, g->e, &p), SG_EDGE_GUARD_CURRENT);
  assert_int_equal(stamp(g).epoch, 6);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_guard, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
