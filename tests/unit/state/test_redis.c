/*
 * The runtime's shared state, Redis backend, against a real Redis 7: two state handles
 * stand for two runtimes of one fleet.
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
#include <time.h>

#include "common/redis_server.h"
#include "state/keys.h"

/* The default key prefix of a redis:// URL (common/redisx.h). */
#define P "sg:"
#include "common/util.h"
#include "state/internal.h"

static sg_test_redis srv;

static int setup(void **state) {
  (void)state;
  if (!sg_test_redis_start(&srv)) {
    if (getenv("CI")) fail_msg("redis-server is missing; run scripts/deps.sh");
    return 0;
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  if (srv.port) sg_test_redis_stop(&srv);
  return 0;
}

#define NEED_REDIS()                                                                               \
  do {                                                                                             \
    if (!srv.port) skip();                                                                         \
  } while (0)

static sg__selection selection(const char *uuid) {
  sg__selection s = {.query_request_id = "req_1",
                     .list_id = "lst_1",
                     .item_id = "itm_1",
                     .query = "pa\"ris",
                     .position = 2};
  snprintf(s.selection_id, sizeof s.selection_id, "%s", uuid);
  return s;
}

static long long cli_int(const char *args) {
  char out[256];
  sg_test_redis_cli(&srv, args, out, sizeof out);
  return atoll(out);
}

/* The fleet's counter of app this UTC month (at now). */
static long long quota_in_redis(const char *app, int64_t now) {
  char args[160];
  time_t t = (time_t)now;
  struct tm tm;
  gmtime_r(&t, &tm);
  snprintf(args, sizeof args, "get " P SG_STATE_KEY_QUOTA "%04d-%02d:%s", tm.tm_year + 1900,
           tm.tm_mon + 1, app);
  return cli_int(args);
}

static void test_selection_across_runtimes(void **state) {
  (void)state;
  NEED_REDIS();
  sg_rt_state *a, *b;
  assert_int_equal(sg_rt_state_open(srv.url, 3, &a), 0);
  assert_int_equal(sg_rt_state_open(srv.url, 3, &b), 0);
  assert_int_equal(sg_rt_state_check(a), 0);
  int retry = 0;
  sg__selection s1 = selection("0e6e8f0c-5bd8-4a43-9b0e-3c1f6a0c2d11");
  sg__selection s2 = selection("1e6e8f0c-5bd8-4a43-9b0e-3c1f6a0c2d11");
  long long before = cli_int("xlen " P SG_STATE_KEY_STREAM);
  /* The same selectionId through both runtimes: recorded once, appended once. */
  assert_int_equal(sg_rt_state_selection_record(a, &s1, "app_1", "pk_1", "kA", sg_now_ms(), &retry),
                   SG__EV_ACCEPTED);
  assert_int_equal(sg_rt_state_selection_record(b, &s1, "app_1", "pk_1", "kA", sg_now_ms(), &retry),
                   SG__EV_DUPLICATE);
  assert_int_equal(cli_int("xlen " P SG_STATE_KEY_STREAM), before + 1);
  /* The bucket (3 a minute) is shared: the third token was the duplicate's. */
  assert_int_equal(sg_rt_state_selection_record(a, &s2, "app_1", "pk_1", "kA", sg_now_ms(), &retry),
                   SG__EV_ACCEPTED);
  retry = 0;
  sg__selection s3 = selection("2e6e8f0c-5bd8-4a43-9b0e-3c1f6a0c2d11");
  assert_int_equal(sg_rt_state_selection_record(b, &s3, "app_1", "pk_1", "kA", sg_now_ms(), &retry),
                   SG__EV_RATE_LIMITED);
  assert_true(retry >= 1 && retry <= 20);
  assert_int_equal(cli_int("xlen " P SG_STATE_KEY_STREAM), before + 2);
  /* A refused report did not set its id: accepted under another key's bucket. */
  assert_int_equal(sg_rt_state_selection_record(b, &s3, "app_1", "pk_1", "kB", sg_now_ms(), &retry),
                   SG__EV_ACCEPTED);
  /* The dedupe key expires after 24 hours. */
  long long ttl = cli_int("ttl " P SG_STATE_KEY_SEEN "0e6e8f0c-5bd8-4a43-9b0e-3c1f6a0c2d11");
  assert_true(ttl > 86000 && ttl <= 86400);
  sg_rt_state_close(a);
  sg_rt_state_close(b);
}

static void test_event_line_is_json(void **state) {
  (void)state;
  NEED_REDIS();
  sg_rt_state *a;
  assert_int_equal(sg_rt_state_open(srv.url, 100, &a), 0);
  int retry = 0;
  sg__selection s = selection("3e6e8f0c-5bd8-4a43-9b0e-3c1f6a0c2d11");
  assert_int_equal(
      sg_rt_state_selection_record(a, &s, "app_9", "pk_9", "kC", 1700000000123, &retry),
      SG__EV_ACCEPTED);
  sg_rt_state_close(a);
  char cmd[256], line[1024] = "";
  snprintf(cmd, sizeof cmd,
           "redis-cli -p %d --raw xrevrange " P SG_STATE_KEY_STREAM " + - count 1 | sed -n 3p",
           srv.port);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  assert_non_null(fgets(line, sizeof line, p));
  pclose(p);
  assert_string_equal(line,
                      "{\"tsMs\":1700000000123,\"ts\":\"2023-11-14T22:13:20Z\",\"selectionId\":"
                      "\"3e6e8f0c-5bd8-4a43-9b0e-3c1f6a0c2d11\",\"queryRequestId\":\"req_1\","
                      "\"listId\":\"lst_1\",\"itemId\":\"itm_1\",\"position\":2,\"query\":"
                      "\"pa\\\"ris\",\"applicationId\":\"app_9\",\"keyId\":\"pk_9\"}\n");
}

static void test_quota_across_runtimes(void **state) {
  (void)state;
  NEED_REDIS();
  sg_rt_state *a, *b;
  assert_int_equal(sg_rt_state_open(srv.url, 10, &a), 0);
  assert_int_equal(sg_rt_state_open(srv.url, 10, &b), 0);
  int64_t now = sg_now_s();
  sg__quota_slot *qa = sg_rt_state_quota_slot(a, "app_q");
  sg__quota_slot *qb = sg_rt_state_quota_slot(b, "app_q");
  assert_int_equal(sg_rt_state_flush(a, now), 0);
  assert_int_equal(sg_rt_state_flush(b, now), 0);
  for (int i = 0; i < 3; i++) assert_true(sg__quota_take(qa, 5));
  for (int i = 0; i < 2; i++) assert_true(sg__quota_take(qb, 5));
  sg_rt_state_stats st;
  sg_rt_state_stats_get(a, &st);
  assert_true(st.shared && st.up);
  assert_int_equal(sg_rt_state_flush(a, now), 0);
  assert_int_equal(sg_rt_state_flush(b, now), 0);
  assert_int_equal(sg_rt_state_flush(a, now), 0);
  /* Both see the fleet's 5: the quota of 5 is used up everywhere. */
  assert_int_equal(atomic_load(&qa->used), 5);
  assert_int_equal(atomic_load(&qb->used), 5);
  assert_false(sg__quota_take(qa, 5));
  assert_false(sg__quota_take(qb, 5));
  sg_rt_state_stats_get(b, &st);
  assert_int_equal(st.quota_pending, 0);
  assert_int_equal(quota_in_redis("app_q", now), 5);
  /* A new UTC month starts from what the fleet counted there (nothing yet). */
  assert_int_equal(sg_rt_state_flush(a, now + 32LL * 86400), 0);
  assert_int_equal(atomic_load(&qa->used), 0);
  assert_true(sg__quota_take(qa, 5));
  sg_rt_state_close(a);
  sg_rt_state_close(b);
}

static void test_redis_down_and_back(void **state) {
  (void)state;
  NEED_REDIS();
  sg_rt_state *a;
  assert_int_equal(sg_rt_state_open(srv.url, 100, &a), 0);
  int64_t now = sg_now_s();
  sg__quota_slot *q = sg_rt_state_quota_slot(a, "app_down");
  assert_int_equal(sg_rt_state_flush(a, now), 0);
  assert_true(sg__quota_take(q, 1000));
  assert_int_equal(sg_rt_state_flush(a, now), 0);

  sg_test_redis_pause(&srv);
  /* Queries go on being counted (and limited) here; selections are refused, unrecorded. */
  for (int i = 0; i < 4; i++) assert_true(sg__quota_take(q, 1000));
  assert_int_equal(sg_rt_state_flush(a, now), -1);
  assert_int_equal(sg_rt_state_check(a), -1);
  sg_rt_state_stats st;
  sg_rt_state_stats_get(a, &st);
  assert_false(st.up);
  assert_int_equal(st.quota_pending, 4);
  int retry = 0;
  sg__selection s = selection("4e6e8f0c-5bd8-4a43-9b0e-3c1f6a0c2d11");
  assert_int_equal(sg_rt_state_selection_record(a, &s, "app_1", "pk_1", "kD", sg_now_ms(), &retry),
                   SG__EV_BUSY);
  assert_true(sg__quota_take(q, 1000));
  assert_int_equal(sg_rt_state_flush(a, now), -1);

  sg_test_redis_resume(&srv);
  /* The kept deltas arrive once, summed (after the reconnect back-off, at most 5 s);
   * the refused selection is accepted now. */
  int64_t until = sg_mono_ms() + 8000;
  while (sg_rt_state_flush(a, now) != 0 && sg_mono_ms() < until) {
    struct timespec ts = {0, 100 * 1000000L};
    nanosleep(&ts, NULL);
  }
  assert_int_equal(sg_rt_state_check(a), 0);
  assert_int_equal(atomic_load(&q->used), 6);
  assert_int_equal(quota_in_redis("app_down", now), 6);
  sg__ev_result res;
  while ((res = sg_rt_state_selection_record(a, &s, "app_1", "pk_1", "kD", sg_now_ms(), &retry)) ==
             SG__EV_BUSY &&
         sg_mono_ms() < until) {
    struct timespec ts = {0, 100 * 1000000L};
    nanosleep(&ts, NULL);
  }
  assert_int_equal(res, SG__EV_ACCEPTED);
  sg_rt_state_close(a);
}

static void test_bad_urls(void **state) {
  (void)state;
  sg_rt_state *a;
  const char *bad[] = {"redis://",    "redis://:6379", "redis://h:0",  "redis://h:99999",
                       "redis://h/x", "redis://[::1",  "redis://h:12x"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    errno = 0;
    assert_int_equal(sg_rt_state_open(bad[i], 10, &a), -1);
    assert_int_equal(errno, EINVAL);
  }
  /* Nothing listens there: opened all the same (queries do not need Redis), not up. */
  assert_int_equal(sg_rt_state_open("redis://127.0.0.1:1/2", 10, &a), 0);
  assert_int_equal(sg_rt_state_check(a), -1);
  sg_rt_state_close(a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_selection_across_runtimes),
      cmocka_unit_test(test_event_line_is_json),
      cmocka_unit_test(test_quota_across_runtimes),
      cmocka_unit_test(test_redis_down_and_back),
      cmocka_unit_test(test_bad_urls),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
