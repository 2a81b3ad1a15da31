/*
 * The selection drain (control/drain.c) against a real Redis 7 and the store under test:
 * events recorded by a runtime's Redis state reach the store once, and the stream is
 * emptied behind them; an entry that is no event is dropped, not retried forever; the
 * entries a dead consumer left unacknowledged are claimed and stored once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../store/store_fixture.h"
#include "common/redis_server.h"
#include "state/keys.h"
#include "common/util.h"
#include "control/internal.h"
#include "state/state.h"

#define P "sg:"

static long long cli_int(const sg_test_redis *srv, const char *args) {
  char out[256];
  sg_test_redis_cli(srv, args, out, sizeof out);
  return atoll(out);
}

/* The list's total from the store's analytics (since the epoch). */
static long long stored(sg_store *st, const char *list) {
  json_t *out = NULL;
  assert_int_equal(sg_store_selection_stats(st, list, 0, 10, &out), SG_E_OK);
  long long n = 0;
  const char *day;
  json_t *v;
  json_object_foreach(json_object_get(out, "perDay"), day, v) n += json_integer_value(v);
  json_decref(out);
  return n;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Records a selection as a runtime's client would: a BUSY answer (the state's 250 ms
 * timeout, which a loaded machine's fsync can exceed) is retried for up to 10 s. For a
 * new selection id, a DUPLICATE after a BUSY means the timed-out call had stored it. */
static sg__ev_result record(sg_rt_state *rt, const sg__selection *s, bool fresh) {
  int retry;
  bool was_busy = false;
  int64_t until = sg_mono_ms() + 10000;
  sg__ev_result res;
  while ((res = sg_rt_state_selection_record(rt, s, "app_1", "pk_1", "kk", sg_now_ms(), &retry)) ==
             SG__EV_BUSY &&
         sg_mono_ms() < until) {
    was_busy = true;
    sleep_ms(100);
  }
  if (fresh && was_busy && res == SG__EV_DUPLICATE) res = SG__EV_ACCEPTED;
  return res;
}

static void test_drain_moves_events_once(void **state) {
  (void)state;
  sg_test_redis srv = {0};
  if (!sg_test_redis_start(&srv)) {
    if (getenv("CI")) fail_msg("redis-server is missing; run scripts/deps.sh");
    skip();
  }
  char dir[] = "/tmp/sg-drain-XXXXXX";
  assert_non_null(mkdtemp(dir));
  sg_store *st;
  assert_int_equal(store_test_open(dir, &st), 0);
  sg_rt_state *rt;
  assert_int_equal(sg_rt_state_open(srv.url, 1000, &rt), 0);

  /* Two runtimes' worth of events recorded before any drain runs, one of them twice. */
  for (int i = 0; i < 300; i++) {
    sg__selection s = {
        .query_request_id = "req_1", .list_id = "lst_d", .item_id = "itm_1", .position = i};
    snprintf(s.selection_id, sizeof s.selection_id, "00000000-0000-4000-8000-%012d", i % 1000);
    assert_int_equal(record(rt, &s, true), SG__EV_ACCEPTED);
  }
  sg__selection dup = {.query_request_id = "r", .list_id = "lst_d", .item_id = "itm_1"};
  snprintf(dup.selection_id, sizeof dup.selection_id, "00000000-0000-4000-8000-000000000007");
  assert_int_equal(record(rt, &dup, false), SG__EV_DUPLICATE);
  char out[128];
  sg_test_redis_cli(&srv, "xadd " P SG_STATE_KEY_STREAM " '*' e not-json", out, sizeof out);
  assert_int_equal(cli_int(&srv, "xlen " P SG_STATE_KEY_STREAM), 301);

  /* Two control processes' drains share the stream. */
  sg__drain *d1, *d2;
  assert_int_equal(sg__drain_start(st, srv.url, &d1), 0);
  assert_int_equal(sg__drain_start(st, srv.url, &d2), 0);
  for (int i = 0; i < 100 && cli_int(&srv, "xlen " P SG_STATE_KEY_STREAM) > 0; i++) sleep_ms(50);
  assert_int_equal(cli_int(&srv, "xlen " P SG_STATE_KEY_STREAM), 0);
  assert_int_equal(stored(st, "lst_d"), 300);
  char cmd[160];
  snprintf(cmd, sizeof cmd, "xpending " P SG_STATE_KEY_STREAM " " SG_STATE_STREAM_GROUP);
  assert_int_equal(cli_int(&srv, cmd), 0);

  /* Redis restarted under a running drain: it carries on. */
  sg_test_redis_pause(&srv);
  sleep_ms(300);
  sg_test_redis_resume(&srv);
  sg__selection late = {.query_request_id = "r", .list_id = "lst_d", .item_id = "itm_2"};
  snprintf(late.selection_id, sizeof late.selection_id, "10000000-0000-4000-8000-000000000001");
  /* A call that timed out while Redis was still loading may have run its script: the
   * client's retry with the same selection id is then a duplicate, and counted once. */
  assert_int_equal(record(rt, &late, true), SG__EV_ACCEPTED);
  int64_t until = sg_mono_ms() + 8000;
  while (stored(st, "lst_d") < 301 && sg_mono_ms() < until) sleep_ms(50);
  assert_int_equal(stored(st, "lst_d"), 301);

  sg__drain_stop(d1);
  sg__drain_stop(d2);
  sg_rt_state_close(rt);
  sg_store_close(st);
  sg_test_redis_stop(&srv);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* A consumer that read entries and died without acknowledging them: once they have been
 * idle for the claim time (on Redis's clock), a running drain claims them (XAUTOCLAIM),
 * stores each once and acknowledges them; before that they are left to their consumer. */
static void test_drain_claims_a_dead_consumers_entries(void **state) {
  (void)state;
  sg_test_redis srv = {0};
  if (!sg_test_redis_start(&srv)) {
    if (getenv("CI")) fail_msg("redis-server is missing; run scripts/deps.sh");
    skip();
  }
  char dir[] = "/tmp/sg-drain-XXXXXX";
  assert_non_null(mkdtemp(dir));
  sg_store *st;
  assert_int_equal(store_test_open(dir, &st), 0);
  sg_rt_state *rt;
  assert_int_equal(sg_rt_state_open(srv.url, 1000, &rt), 0);
  enum { N = 300 }; /* more than one claim batch (256) */
  for (int i = 0; i < N; i++) {
    sg__selection s = {
        .query_request_id = "req_1", .list_id = "lst_c", .item_id = "itm_1", .position = i};
    snprintf(s.selection_id, sizeof s.selection_id, "20000000-0000-4000-8000-%012d", i);
    assert_int_equal(record(rt, &s, true), SG__EV_ACCEPTED);
  }
  char out[256], cmd[200];
  /* The dead consumer: joins the group, reads every entry, never acknowledges. */
  sg_test_redis_cli(&srv, "xgroup create " P SG_STATE_KEY_STREAM " " SG_STATE_STREAM_GROUP " 0",
                    out, sizeof out);
  sg_test_redis_cli(&srv,
                    "xreadgroup group " SG_STATE_STREAM_GROUP
                    " dead count 1000 streams " P SG_STATE_KEY_STREAM " '>'",
                    out, sizeof out);
  int64_t read_at = sg_mono_ms();
  snprintf(cmd, sizeof cmd, "xpending " P SG_STATE_KEY_STREAM " " SG_STATE_STREAM_GROUP);
  assert_int_equal(cli_int(&srv, cmd), N);

  const int idle_ms = 3000;
  sg__drain *d;
  assert_int_equal(sg__drain_start_claiming(st, srv.url, idle_ms, &d), 0);
  sleep_ms(700);
  /* Not idle long enough yet (checked only when this machine kept up): nothing taken. */
  if (sg_mono_ms() - read_at < idle_ms - 500) {
    assert_int_equal(stored(st, "lst_c"), 0);
    assert_int_equal(cli_int(&srv, cmd), N);
  }
  int64_t until = sg_mono_ms() + 20000;
  while ((stored(st, "lst_c") < N || cli_int(&srv, cmd) > 0) && sg_mono_ms() < until) sleep_ms(100);
  assert_true(sg_mono_ms() - read_at >= idle_ms);
  assert_int_equal(stored(st, "lst_c"), N);
  assert_int_equal(cli_int(&srv, cmd), 0);
  assert_int_equal(cli_int(&srv, "xlen " P SG_STATE_KEY_STREAM), 0);
  /* Another claim round later, still each event once. */
  sleep_ms(800);
  assert_int_equal(stored(st, "lst_c"), N);

  sg__drain_stop(d);
  sg_rt_state_close(rt);
  sg_store_close(st);
  sg_test_redis_stop(&srv);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_drain_moves_events_once),
      cmocka_unit_test(test_drain_claims_a_dead_consumers_entries),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
