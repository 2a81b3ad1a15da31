/* The runtime's snapshot loader (src/runtime/snapshot.c): incremental reloads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "edge/edge.h"
#include "runtime/rt.h"
#include "state/state.h"

static void put(sg_edge *e, sg_edge_kind k, const char *id, const char *json) {
  assert_int_equal(sg_edge_put(e, k, id, json, strlen(json), NULL), 0);
}

static bool key_valid(const sg__rt_snapshot *s, const char *key) {
  uint8_t d[32];
  sg_sha256(key, strlen(key), d);
  const sg__rt_key *k = sg__snapshot_key(s, d);
  return k && k->valid;
}

static void test_reload_reads_only_changes(void **state) {
  (void)state;
  char dir[] = "/tmp/sg-snapshot-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char p[128];
  snprintf(p, sizeof p, "%s/edge", dir);
  sg_edge *e;
  assert_int_equal(sg_edge_open(p, &e), 0);
  snprintf(p, sizeof p, "%s/state", dir);
  sg_rt_state *q;
  assert_int_equal(sg_rt_state_open(p, 600, &q), 0);

  char digest[65];
  sg_edge_key_digest("pk_test", 7, digest);
  put(e, SG_EDGE_WORKSPACE, "wsp_1", "{\"id\":\"wsp_1\",\"status\":\"active\"}");
  put(e, SG_EDGE_APP, "app_1",
      "{\"id\":\"app_1\",\"workspaceId\":\"wsp_1\",\"status\":\"active\",\"monthlyQuota\":null}");
  put(e, SG_EDGE_LIST, "lst_1",
      "{\"id\":\"lst_1\",\"workspaceId\":\"wsp_1\",\"status\":\"active\","
      "\"visibility\":\"private\",\"activeContentHash\":null}");
  put(e, SG_EDGE_KEY, digest,
      "{\"id\":\"pk_1\",\"applicationId\":\"app_1\",\"listId\":\"lst_1\",\"status\":\"active\"}");

  sg__rt_records *cache = NULL;
  sg__rt_snapshot *s1, *s2, *s3;
  assert_int_equal(sg__snapshot_load(e, q, NULL, &cache, &s1), 0);
  assert_true(key_valid(s1, "pk_test"));
  assert_int_equal(s1->n_lists, 1);

  /* The workspace file changes behind the store's back (no revision, no change log):
   * an incremental reload does not read it again, a full one would. */
  char wp[160];
  snprintf(wp, sizeof wp, "%s/edge/workspaces/wsp_1.json", dir);
  const char *disabled = "{\"id\":\"wsp_1\",\"status\":\"disabled\"}";
  assert_int_equal(sg_write_file_atomic(wp, disabled, strlen(disabled)), 0);
  /* A logged change: a second list, and the first one archived. */
  put(e, SG_EDGE_LIST, "lst_0",
      "{\"id\":\"lst_0\",\"workspaceId\":\"wsp_1\",\"status\":\"active\"}");
  put(e, SG_EDGE_LIST, "lst_1",
      "{\"id\":\"lst_1\",\"workspaceId\":\"wsp_1\",\"status\":\"archived\"}");
  assert_int_equal(sg__snapshot_load(e, q, s1, &cache, &s2), 0);
  assert_true(s2->revision > s1->revision);
  assert_int_equal(s2->n_lists, 2);
  assert_string_equal(s2->lists[0].id, "lst_0");
  assert_true(s2->lists[1].archived);
  assert_true(key_valid(s2, "pk_test")); /* the workspace was not re-read */

  /* A deleted record leaves the snapshot; then a cache that is ahead of the store (the
   * store was replaced) falls back to a full read, which sees the workspace. */
  assert_int_equal(sg_edge_delete(e, SG_EDGE_APP, "app_1", NULL), 0);
  assert_int_equal(sg__snapshot_load(e, q, s2, &cache, &s3), 0);
  assert_int_equal(s3->n_apps, 0);
  assert_false(key_valid(s3, "pk_test"));
  sg__snapshot_free(s3);
  sg__snapshot_free(s2);
  put(e, SG_EDGE_APP, "app_1",
      "{\"id\":\"app_1\",\"workspaceId\":\"wsp_1\",\"status\":\"active\",\"monthlyQuota\":null}");
  sg_edge_close(e);
  char cmd[512];
  snprintf(cmd, sizeof cmd,
           "mv %s/edge %s/old && mkdir %s/edge && cp -r %s/old/* %s/edge/ && "
           "rm %s/edge/CHANGES && echo 1 > %s/edge/REVISION",
           dir, dir, dir, dir, dir, dir, dir);
  assert_int_equal(system(cmd), 0);
  snprintf(p, sizeof p, "%s/edge", dir);
  assert_int_equal(sg_edge_open(p, &e), 0);
  assert_int_equal(sg__snapshot_load(e, q, s1, &cache, &s2), 0);
  assert_int_equal(s2->revision, 1);
  assert_int_equal(s2->n_apps, 1);
  assert_false(key_valid(s2, "pk_test")); /* the disabled workspace is seen now */

  sg__snapshot_free(s2);
  sg__snapshot_free(s1);
  sg__records_free(cache);
  sg_rt_state_close(q);
  sg_edge_close(e);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reload_reads_only_changes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
