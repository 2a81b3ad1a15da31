/*
 * Unit tests of the shared state's seam (src/state/state.h) that hold for every backend:
 * what the runtime writes through sg_rt_state is what the control plane reads through
 * sg_state_reader.
 *
 * The backend comes from SUGGESTD_TEST_STATE (a spec: a directory or a redis:// URL);
 * without it every test runs twice: on a fresh temporary directory, then on a throwaway
 * Redis (skipped when redis-server is missing, except under CI=true). Ids (applications,
 * lists, rate keys, selection ids) are random per test, so a shared backend (one Redis
 * database) can run them too. Tests of one backend's own layout are test_local.c,
 * test_quota.c, test_events.c (directory) and test_redis.c (Redis).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/redis_server.h"
#include "common/util.h"
#include "state/state.h"

/* The backend under test: a spec, or NULL for a fresh directory per test. */
static const char *g_spec;

typedef struct {
  char root[256]; /* the temporary directory, when the test made one */
  char spec[300];
  char tag[16]; /* random, in every id of the test */
  sg_state_backend backend;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  assert_non_null(f);
  if (g_spec) {
    snprintf(f->spec, sizeof f->spec, "%s", g_spec);
  } else {
    snprintf(f->root, sizeof f->root, "/tmp/sg-state-test-XXXXXX");
    assert_non_null(mkdtemp(f->root));
    snprintf(f->spec, sizeof f->spec, "%s/state", f->root);
  }
  assert_int_equal(sg_state_backend_of(f->spec, &f->backend), 0);
  uint8_t r[4];
  sg_random_bytes(r, sizeof r);
  sg_hex(r, sizeof r, f->tag);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  int rc = 0;
  if (f->root[0]) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->root);
    rc = system(cmd) == 0 ? 0 : -1;
  }
  free(f);
  return rc;
}

/* A selection of item at position in list, with a fresh selectionId. */
static sg__selection selection(const char *list, const char *item, int64_t position) {
  sg__selection s = {.query_request_id = "req_1",
                     .list_id = list,
                     .item_id = item,
                     .query = "pa",
                     .position = position};
  uint8_t b[16];
  char h[33];
  sg_random_bytes(b, sizeof b);
  sg_hex(b, sizeof b, h);
  snprintf(s.selection_id, sizeof s.selection_id, "%.8s-%.4s-4%.3s-8%.3s-%.12s", h, h + 8, h + 12,
           h + 15, h + 18);
  return s;
}

static void name(const fixture *f, const char *what, char *out, size_t outsz) {
  snprintf(out, outsz, "%s_%s", what, f->tag);
}

static void test_backend_of(void **state) {
  fixture *f = *state;
  sg_state_backend b = SG_STATE_LOCAL;
  assert_int_equal(sg_state_backend_of("redis://localhost:6379/0?prefix=x", &b), 0);
  assert_int_equal(b, SG_STATE_REDIS);
  assert_int_equal(sg_state_backend_of("/var/lib/suggestd/runtime", &b), 0);
  assert_int_equal(b, SG_STATE_LOCAL);
  assert_int_equal(sg_state_backend_of("redisdata", &b), 0); /* a directory */
  assert_int_equal(b, SG_STATE_LOCAL);
  assert_int_equal(sg_state_backend_of("rediss://localhost", &b), -1);
  assert_int_equal(errno, ENOTSUP);
  assert_int_equal(sg_state_backend_of("", &b), -1);
  assert_int_equal(errno, EINVAL);
  assert_int_equal(sg_state_backend_of(NULL, &b), -1);
  assert_int_equal(errno, EINVAL);
  sg_rt_state *w;
  sg_state_reader *r;
  assert_int_equal(sg_rt_state_open("rediss://localhost", 2, &w), -1);
  assert_int_equal(errno, ENOTSUP);
  assert_int_equal(sg_state_reader_open("rediss://localhost", 1000, &r), -1);
  assert_int_equal(errno, ENOTSUP);
  assert_int_equal(sg_state_reader_open(f->spec, 0, &r), -1);
  assert_int_equal(errno, EINVAL);
  assert_int_equal(sg_state_reader_open("redis://", 1000, &r), -1);
  assert_int_equal(errno, EINVAL);
}

/* A selectionId is recorded once; the bucket of a rate key refuses with a wait; a refused
 * report leaves its id unset. */
static void test_selection_dedupe_and_rate(void **state) {
  fixture *f = *state;
  char list[32], k1[32], k2[32];
  name(f, "lst", list, sizeof list);
  name(f, "k1", k1, sizeof k1);
  name(f, "k2", k2, sizeof k2);
  sg_rt_state *a, *b;
  assert_int_equal(sg_rt_state_open(f->spec, 2, &a), 0);
  assert_int_equal(sg_rt_state_check(a), 0);
  int retry = 0;
  sg__selection s1 = selection(list, "itm_1", 0), s2 = selection(list, "itm_2", 1);
  int64_t now = sg_now_ms();
  assert_int_equal(sg_rt_state_selection_record(a, &s1, "app_1", "pk_1", k1, now, &retry),
                   SG__EV_ACCEPTED);
  assert_int_equal(sg_rt_state_selection_record(a, &s1, "app_1", "pk_1", k1, now, &retry),
                   SG__EV_DUPLICATE);
  assert_int_equal(sg_rt_state_selection_record(a, &s2, "app_1", "pk_1", k1, now, &retry),
                   SG__EV_RATE_LIMITED);
  assert_true(retry >= 1 && retry <= 60);
  assert_int_equal(sg_rt_state_selection_record(a, &s2, "app_1", "pk_1", k2, now, &retry),
                   SG__EV_ACCEPTED);
  sg_rt_state_sync(a);
  sg_rt_state_close(a);
  /* Another handle on the same state (a restart, or another runtime of the fleet) still
   * knows both ids. */
  assert_int_equal(sg_rt_state_open(f->spec, 2, &b), 0);
  sg__selection again = s2;
  char k3[32];
  name(f, "k3", k3, sizeof k3);
  assert_int_equal(sg_rt_state_selection_record(b, &again, "app_1", "pk_1", k3, now, &retry),
                   SG__EV_DUPLICATE);
  sg_rt_state_close(b);
}

/* Queries counted by the writer are what the reader's usage answers, once flushed. */
static void test_usage(void **state) {
  fixture *f = *state;
  char app[32], other[32];
  name(f, "app", app, sizeof app);
  name(f, "none", other, sizeof other);
  sg_rt_state *w;
  assert_int_equal(sg_rt_state_open(f->spec, 10, &w), 0);
  sg__quota_slot *slot = sg_rt_state_quota_slot(w, app);
  assert_non_null(slot);
  for (int i = 0; i < 3; i++) assert_true(sg__quota_take(slot, 100));
  int64_t now = sg_now_s();
  assert_int_equal(sg_rt_state_flush(w, now), 0);
  sg_state_reader *r;
  assert_int_equal(sg_state_reader_open(f->spec, 1000, &r), 0);
  const char *apps[] = {app, other, NULL};
  int64_t used[3] = {-1, -1, -1};
  assert_int_equal(sg_state_read_usage(r, now, apps, 3, used), 0);
  assert_int_equal(used[0], 3);
  assert_int_equal(used[1], 0); /* not counted yet */
  assert_int_equal(used[2], 0);
  assert_int_equal(sg_state_read_usage(r, now, apps, 0, used), 0);
  /* Next month nothing is used yet. */
  assert_int_equal(sg_state_read_usage(r, now + 32 * 86400, apps, 1, used), 0);
  assert_int_equal(used[0], 0);
  assert_true(sg__quota_take(slot, 100));
  assert_int_equal(sg_rt_state_flush(w, now), 0);
  assert_int_equal(sg_state_read_usage(r, now, apps, 1, used), 0);
  assert_int_equal(used[0], 4);
  sg_state_reader_close(r);
  /* A Redis URL's options belong to the edge: a reader given the edge's URL with
   * ?prefix=… reads the same counters the writer wrote (docs/RUNTIME.md). */
  if (strncmp(f->spec, "redis://", 8) == 0) {
    char with[600];
    snprintf(with, sizeof with, "%s%sprefix=other", f->spec, strchr(f->spec, '?') ? "&" : "?");
    assert_int_equal(sg_state_reader_open(with, 1000, &r), 0);
    assert_int_equal(sg_state_read_usage(r, now, apps, 1, used), 0);
    assert_int_equal(used[0], 4);
    sg_state_reader_close(r);
  }
  sg_rt_state_close(w);
}

typedef struct {
  int64_t n;
  int64_t per_item[3];
} seen_events;

/* Reads the stream as one consumer until it has nothing new, counting list's events. */
static void drain_list(sg_state_reader *r, const char *consumer, const char *list,
                       seen_events *seen) {
  sg_state_event ev[SG_STATE_EVENTS_MAX];
  int empty = 0;
  for (int round = 0; round < 200 && empty < 3; round++) {
    size_t n = 99;
    assert_int_equal(sg_state_events_next(r, consumer, 100, ev, &n), 0);
    assert_true(n <= SG_STATE_EVENTS_MAX);
    empty = n ? 0 : empty + 1;
    for (size_t i = 0; i < n; i++) {
      assert_non_null(ev[i].id);
      if (!ev[i].line || !memmem(ev[i].line, ev[i].len, list, strlen(list))) continue;
      seen->n++;
      for (int k = 0; k < 3; k++) {
        char want[32];
        snprintf(want, sizeof want, "\"itemId\":\"itm_%d\"", k);
        if (memmem(ev[i].line, ev[i].len, want, strlen(want))) seen->per_item[k]++;
      }
    }
    assert_int_equal(sg_state_events_ack(r, ev, n), 0);
  }
}

/* Every accepted selection is readable once: counted by the reader (a backend that
 * keeps its events), or delivered by its event stream to be drained into the store. */
static void test_selections(void **state) {
  fixture *f = *state;
  char list[32], other[32], key[32];
  name(f, "lst", list, sizeof list);
  name(f, "other", other, sizeof other);
  name(f, "key", key, sizeof key);
  sg_rt_state *w;
  assert_int_equal(sg_rt_state_open(f->spec, 1000, &w), 0);
  int retry = 0;
  int64_t now_ms = sg_now_ms();
  const int per_item[3] = {1, 3, 2};
  for (int k = 0; k < 3; k++) {
    char item[16];
    snprintf(item, sizeof item, "itm_%d", k);
    for (int i = 0; i < per_item[k]; i++) {
      sg__selection s = selection(list, item, k);
      assert_int_equal(sg_rt_state_selection_record(w, &s, "app_1", "pk_1", key, now_ms, &retry),
                       SG__EV_ACCEPTED);
    }
  }
  sg__selection o = selection(other, "itm_0", 0);
  assert_int_equal(sg_rt_state_selection_record(w, &o, "app_1", "pk_1", key, now_ms, &retry),
                   SG__EV_ACCEPTED);
  sg_rt_state_sync(w);
  sg_rt_state_close(w);

  sg_state_reader *r;
  assert_int_equal(sg_state_reader_open(f->spec, 2000, &r), 0);
  sg_state_selections sel;
  assert_int_equal(sg_state_read_selections(r, list, now_ms / 1000, 0, &sel), -1);
  assert_int_equal(errno, EINVAL);
  assert_int_equal(sg_state_read_selections(r, list, now_ms / 1000, SG_STATE_MAX_DAYS + 1, &sel),
                   -1);
  int rc = sg_state_read_selections(r, list, now_ms / 1000, 7, &sel);
  if (rc == 0) {
    assert_false(sg_state_has_events(r));
    assert_int_equal(sel.days, 7);
    assert_int_equal(sel.per_day[6], 6); /* today */
    for (int d = 0; d < 6; d++) assert_int_equal(sel.per_day[d], 0);
    assert_int_equal(sel.total, 6);
    assert_int_equal(sel.ntop, 3);
    assert_string_equal(sel.top[0].item_id, "itm_1");
    assert_int_equal(sel.top[0].selections, 3);
    assert_string_equal(sel.top[1].item_id, "itm_2");
    assert_int_equal(sel.top[1].selections, 2);
    assert_string_equal(sel.top[2].item_id, "itm_0");
    assert_int_equal(sel.top[2].selections, 1);
    /* Yesterday's window holds none of today's. */
    assert_int_equal(sg_state_read_selections(r, list, now_ms / 1000 - 86400, 1, &sel), 0);
    assert_int_equal(sel.total, 0);
  } else {
    assert_int_equal(rc, SG_STATE_IN_STORE);
    assert_true(sg_state_has_events(r));
    seen_events seen = {0};
    char consumer[32];
    name(f, "consumer", consumer, sizeof consumer);
    drain_list(r, consumer, list, &seen);
    assert_int_equal(seen.n, 6);
    for (int k = 0; k < 3; k++) assert_int_equal(seen.per_item[k], per_item[k]);
    /* Acknowledged: another consumer, or this one again, gets none of them. */
    seen_events again = {0};
    drain_list(r, "another", list, &again);
    assert_int_equal(again.n, 0);
  }
  sg_state_reader_close(r);
}

/* A batch the consumer could not handle is delivered again, to it, until acknowledged. */
static void test_events_again(void **state) {
  fixture *f = *state;
  char list[32], key[32], consumer[32];
  name(f, "lst", list, sizeof list);
  name(f, "key", key, sizeof key);
  name(f, "consumer", consumer, sizeof consumer);
  sg_state_reader *r;
  assert_int_equal(sg_state_reader_open(f->spec, 2000, &r), 0);
  if (!sg_state_has_events(r)) { /* events stay in the state: counted where they are */
    sg_state_reader_close(r);
    return;
  }
  /* Catch up with what other tests left, so the next reads are this test's. */
  seen_events none = {0};
  drain_list(r, consumer, list, &none);
  sg_rt_state *w;
  assert_int_equal(sg_rt_state_open(f->spec, 1000, &w), 0);
  int retry = 0;
  sg__selection s = selection(list, "itm_0", 0);
  assert_int_equal(sg_rt_state_selection_record(w, &s, "app_1", "pk_1", key, sg_now_ms(), &retry),
                   SG__EV_ACCEPTED);
  sg_rt_state_close(w);
  sg_state_event ev[SG_STATE_EVENTS_MAX];
  size_t n = 0;
  for (int i = 0; i < 20 && n == 0; i++)
    assert_int_equal(sg_state_events_next(r, consumer, 100, ev, &n), 0);
  assert_int_equal(n, 1);
  assert_non_null(memmem(ev[0].line, ev[0].len, s.selection_id, 36));
  char id[64];
  snprintf(id, sizeof id, "%s", ev[0].id);
  sg_state_events_again(r); /* not stored: not acknowledged */
  n = 0;
  assert_int_equal(sg_state_events_next(r, consumer, 100, ev, &n), 0);
  assert_int_equal(n, 1);
  assert_string_equal(ev[0].id, id);
  assert_int_equal(sg_state_events_ack(r, ev, n), 0);
  seen_events after = {0};
  drain_list(r, consumer, list, &after);
  assert_int_equal(after.n, 0);
  sg_state_reader_close(r);
}

/* A reader of a state with nothing behind it: a directory nothing wrote (it stays
 * uncreated), or a Redis nobody listens on (unreadable, not an error at open). */
static void test_reader_of_nothing(void **state) {
  fixture *f = *state;
  char spec[320];
  if (f->backend == SG_STATE_LOCAL)
    snprintf(spec, sizeof spec, "%s.missing", f->spec);
  else
    snprintf(spec, sizeof spec, "redis://127.0.0.1:1/0");
  sg_state_reader *r;
  assert_int_equal(sg_state_reader_open(spec, 200, &r), 0);
  const char *apps[] = {"app_1"};
  int64_t used[1] = {-1};
  int rc = sg_state_read_usage(r, sg_now_s(), apps, 1, used);
  sg_state_selections sel;
  int src = sg_state_read_selections(r, "lst_1", sg_now_s(), 3, &sel);
  if (f->backend == SG_STATE_LOCAL) {
    assert_int_equal(rc, 0);
    assert_int_equal(used[0], 0);
    assert_int_equal(src, 0);
    assert_int_equal(sel.total, 0);
    assert_int_equal(sel.ntop, 0);
    struct stat sb;
    assert_int_equal(stat(spec, &sb), -1); /* a reader creates nothing */
  } else {
    assert_int_equal(rc, -1);
    assert_int_equal(src, SG_STATE_IN_STORE); /* no round trip needed to say so */
    sg_state_event ev[SG_STATE_EVENTS_MAX];
    size_t n = 9;
    assert_int_equal(sg_state_events_next(r, "c", 50, ev, &n), -1);
    assert_int_equal(n, 0);
  }
  sg_state_reader_close(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_backend_of, setup, teardown),
      cmocka_unit_test_setup_teardown(test_selection_dedupe_and_rate, setup, teardown),
      cmocka_unit_test_setup_teardown(test_usage, setup, teardown),
      cmocka_unit_test_setup_teardown(test_selections, setup, teardown),
      cmocka_unit_test_setup_teardown(test_events_again, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reader_of_nothing, setup, teardown),
  };
  const char *env = getenv("SUGGESTD_TEST_STATE");
  if (env && *env) {
    g_spec = env;
    return cmocka_run_group_tests(tests, NULL, NULL);
  }
  int failed = cmocka_run_group_tests_name("state on a directory", tests, NULL, NULL);
  sg_test_redis srv = {0};
  if (!sg_test_redis_start(&srv)) {
    if (getenv("CI")) {
      fprintf(stderr, "redis-server is missing; run scripts/deps.sh\n");
      return 1;
    }
    fprintf(stderr, "redis-server is missing: the Redis state tests are skipped\n");
    return failed;
  }
  g_spec = srv.url;
  failed += cmocka_run_group_tests_name("state on Redis", tests, NULL, NULL);
  sg_test_redis_stop(&srv);
  return failed;
}
