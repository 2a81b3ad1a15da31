/*
 * Runtime presence records on the edge (edge.h "runtime presence", docs/EDGE.md "Runtime
 * records"): the codec, the liveness rule, and put / walk / delete / expiry on each
 * backend (a temporary directory, then a throwaway Redis; SUGGESTD_TEST_EDGE names one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/redis_server.h"
#include "common/util.h"
#include "edge/edge.h"
#include "edge/edge_fixture.h"

static const char *g_spec;

typedef sgt_edge_fixture fixture;

static int setup(void **state) {
  *state = sgt_edge_fixture_new(g_spec, "rt-test");
  return 0;
}

static int teardown(void **state) { return sgt_edge_fixture_free(*state); }

/* ---- codec and liveness (no backend) ---- */

static void test_codec(void **state) {
  (void)state;
  sg_edge_runtime_rec r = {.formats = (1u << 5) | (1u << 6), .heartbeat_ms = 1000, .ttl_s = 30};
  snprintf(r.id, sizeof r.id, "rt_abc");
  snprintf(r.version, sizeof r.version, "0.3.0");
  char *json = NULL;
  size_t len = 0;
  assert_int_equal(sg_edge_runtime_encode(&r, &json, &len), 0);
  assert_string_equal(json, "{\"runtimeId\":\"rt_abc\",\"formats\":[5,6],\"version\":\"0.3.0\","
                            "\"heartbeatMs\":1000,\"ttlSeconds\":30}");
  sg_edge_runtime_rec d;
  assert_int_equal(sg_edge_runtime_decode(json, len, &d), 0);
  free(json);
  assert_string_equal(d.id, "rt_abc");
  assert_true(d.formats == ((1u << 5) | (1u << 6)));
  assert_int_equal(d.heartbeat_ms, 1000);
  assert_int_equal(d.ttl_s, 30);
  assert_string_equal(d.version, "0.3.0");

  /* Live strictly before heartbeat + ttl. */
  assert_true(sg_edge_runtime_live(&d, 1000));
  assert_true(sg_edge_runtime_live(&d, 30999));
  assert_false(sg_edge_runtime_live(&d, 31000));
  /* A ttl out of range is clamped; a missing one is the default. */
  const char *big =
      "{\"runtimeId\":\"x\",\"formats\":[5],\"heartbeatMs\":1,\"ttlSeconds\":99999999}";
  assert_int_equal(sg_edge_runtime_decode(big, strlen(big), &d), 0);
  assert_int_equal(d.ttl_s, SG_EDGE_RUNTIME_TTL_MAX);
  const char *none = "{\"runtimeId\":\"x\",\"formats\":[5]}";
  assert_int_equal(sg_edge_runtime_decode(none, strlen(none), &d), 0);
  assert_int_equal(d.ttl_s, SG_EDGE_RUNTIME_TTL_S);
  assert_false(sg_edge_runtime_live(&d, 0)); /* no heartbeat: never live */
  /* Unknown members and formats out of range are ignored; the known ones still count. */
  const char *odd = "{\"runtimeId\":\"x\",\"formats\":[0,5,64,\"6\",-1,63],\"extra\":1}";
  assert_int_equal(sg_edge_runtime_decode(odd, strlen(odd), &d), 0);
  assert_true(d.formats == (((uint64_t)1 << 5) | ((uint64_t)1 << 63)));

  /* Refused: no usable id, no format, not an object, duplicate keys, oversize. */
  const char *bad[] = {
      "{\"formats\":[5]}",
      "{\"runtimeId\":\"a/b\",\"formats\":[5]}",
      "{\"runtimeId\":\"x\",\"formats\":[]}",
      "{\"runtimeId\":\"x\",\"formats\":[0,64]}",
      "{\"runtimeId\":\"x\",\"formats\":5}",
      "[1]",
      "{\"runtimeId\":\"x\",\"runtimeId\":\"y\",\"formats\":[5]}",
      "{",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    assert_int_equal(sg_edge_runtime_decode(bad[i], strlen(bad[i]), &d), -1);
  char *huge = malloc(SG_EDGE_RUNTIME_MAX + 2);
  assert_non_null(huge);
  memset(huge, ' ', SG_EDGE_RUNTIME_MAX + 1);
  huge[SG_EDGE_RUNTIME_MAX + 1] = '\0';
  assert_int_equal(sg_edge_runtime_decode(huge, SG_EDGE_RUNTIME_MAX + 1, &d), -1);
  free(huge);
  /* Encode refuses a record that names no format or a bad id. */
  sg_edge_runtime_rec z = {.ttl_s = 1};
  snprintf(z.id, sizeof z.id, "ok");
  assert_int_equal(sg_edge_runtime_encode(&z, &json, &len), -1);
}

/* ---- backends ---- */

typedef struct {
  const char *prefix;
  int n;
  char ids[8][SG_EDGE_MAX_ID + 1];
  uint64_t formats[8];
} seen;

static int collect(const char *id, const char *json, size_t len, void *ctx) {
  seen *s = ctx;
  if (strncmp(id, s->prefix, strlen(s->prefix)) != 0) return 0; /* another test's */
  sg_edge_runtime_rec r;
  assert_int_equal(sg_edge_runtime_decode(json, len, &r), 0);
  assert_string_equal(r.id, id);
  assert_true(s->n < 8);
  snprintf(s->ids[s->n], sizeof s->ids[0], "%s", id);
  s->formats[s->n++] = r.formats;
  return 0;
}

static void put(fixture *f, const char *name, uint64_t formats, int64_t hb_ms, int64_t ttl) {
  sg_edge_runtime_rec r = {.formats = formats, .heartbeat_ms = hb_ms, .ttl_s = ttl};
  snprintf(r.id, sizeof r.id, "%s%s", f->prefix, name);
  char *json;
  size_t len;
  assert_int_equal(sg_edge_runtime_encode(&r, &json, &len), 0);
  assert_int_equal(sg_edge_runtime_put(f->e, r.id, json, len, ttl), 0);
  free(json);
}

static int find(const seen *s, const fixture *f, const char *name) {
  char id[SG_EDGE_MAX_ID + 1];
  snprintf(id, sizeof id, "%s%s", f->prefix, name);
  for (int i = 0; i < s->n; i++)
    if (strcmp(s->ids[i], id) == 0) return i;
  return -1;
}

static void test_put_walk_delete_expire(void **state) {
  fixture *f = *state;
  uint64_t rev0, rev1;
  assert_int_equal(sg_edge_revision(f->e, &rev0), 0);
  put(f, "new", (1u << 5) | (1u << 6), sg_now_ms(), 30);
  put(f, "old", 1u << 5, sg_now_ms(), 1);
  /* Heartbeats never bump the revision: a runtime must not reload because of them. */
  assert_int_equal(sg_edge_revision(f->e, &rev1), 0);
  assert_true(rev1 == rev0);
  seen s = {.prefix = f->prefix};
  assert_int_equal(sg_edge_runtimes(f->e, collect, &s), 0);
  assert_int_equal(s.n, 2);
  assert_true(s.formats[find(&s, f, "new")] == ((1u << 5) | (1u << 6)));
  assert_true(s.formats[find(&s, f, "old")] == (1u << 5));
  /* A refresh replaces the record. */
  put(f, "new", 1u << 6, sg_now_ms(), 30);
  s = (seen){.prefix = f->prefix};
  assert_int_equal(sg_edge_runtimes(f->e, collect, &s), 0);
  assert_true(s.formats[find(&s, f, "new")] == (1u << 6));
  /* The 1 s record stops counting once it expires (Redis: the key's TTL; directory: its
   * heartbeat plus ttl on this host's clock). */
  usleep(2100 * 1000);
  s = (seen){.prefix = f->prefix};
  assert_int_equal(sg_edge_runtimes(f->e, collect, &s), 0);
  assert_int_equal(s.n, 1);
  assert_true(find(&s, f, "old") < 0);
  /* A clean stop removes the record; removing an absent one is no error. */
  char id[SG_EDGE_MAX_ID + 1];
  snprintf(id, sizeof id, "%snew", f->prefix);
  assert_int_equal(sg_edge_runtime_delete(f->e, id), 0);
  assert_int_equal(sg_edge_runtime_delete(f->e, id), 0);
  s = (seen){.prefix = f->prefix};
  assert_int_equal(sg_edge_runtimes(f->e, collect, &s), 0);
  assert_int_equal(s.n, 0);
  /* Arguments are checked before any backend sees them. */
  assert_int_equal(sg_edge_runtime_put(f->e, "a/b", "{}", 2, 30), -1);
  assert_int_equal(sg_edge_runtime_put(f->e, "ok", "{}", 2, 0), -1);
  assert_int_equal(sg_edge_runtime_put(f->e, "ok", "{}", 2, SG_EDGE_RUNTIME_TTL_MAX + 1), -1);
  assert_int_equal(sg_edge_runtime_put(f->e, "ok", "{}", SG_EDGE_RUNTIME_MAX + 1, 30), -1);
}

/* A record that is not a valid one (written by hand, or by something else) is skipped by
 * the walk of a directory store, which judges liveness from the record itself. */
static void test_dir_ignores_garbage_and_stale(void **state) {
  fixture *f = *state;
  if (!f->root[0]) skip();
  char p[400];
  snprintf(p, sizeof p, "%s/edge/runtimes", f->root);
  assert_int_equal(sg_mkdirs(p, 0755), 0);
  snprintf(p, sizeof p, "%s/edge/runtimes/%sjunk.json", f->root, f->prefix);
  assert_int_equal(sg_write_file_atomic(p, "not json", 8), 0);
  /* An old runtime's record whose heartbeat is two minutes old with a 30 s ttl. */
  put(f, "stale", 1u << 5, sg_now_ms() - 120000, 30);
  put(f, "live", 1u << 5, sg_now_ms(), 30);
  seen s = {.prefix = f->prefix};
  assert_int_equal(sg_edge_runtimes(f->e, collect, &s), 0);
  assert_int_equal(s.n, 1);
  assert_true(find(&s, f, "live") == 0);
}

int main(void) {
  const struct CMUnitTest codec[] = {cmocka_unit_test(test_codec)};
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_put_walk_delete_expire, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dir_ignores_garbage_and_stale, setup, teardown),
  };
  int failed = cmocka_run_group_tests_name("runtime record codec", codec, NULL, NULL);
  const char *env = getenv("SUGGESTD_TEST_EDGE");
  if (env && *env) {
    g_spec = env;
    return failed + cmocka_run_group_tests(tests, NULL, NULL);
  }
  failed += cmocka_run_group_tests_name("runtime records on a directory", tests, NULL, NULL);
  sg_test_redis srv = {0};
  if (!sg_test_redis_start(&srv)) {
    if (getenv("CI")) {
      fprintf(stderr, "redis-server is missing; run scripts/deps.sh\n");
      return 1;
    }
    fprintf(stderr, "redis-server is missing: the Redis runtime-record tests are skipped\n");
    return failed;
  }
  g_spec = srv.url;
  failed += cmocka_run_group_tests_name("runtime records on Redis", tests, NULL, NULL);
  sg_test_redis_stop(&srv);
  return failed;
}
