/* Unit tests of the token-bucket rate limiter (src/common/ratelimit.c), driven by a
 * simulated clock: the limiter takes the time as an argument, so nothing sleeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <time.h>

#include "common/ratelimit.h"

static void test_burst_then_refused(void **state) {
  (void)state;
  sg_ratelimit *rl = sg_ratelimit_new(5);
  assert_non_null(rl);
  int64_t t = 1000000;
  for (int i = 0; i < 5; i++) assert_true(sg_ratelimit_take(rl, "k", t));
  assert_false(sg_ratelimit_take(rl, "k", t));
  assert_false(sg_ratelimit_take(rl, "k", t + 1));
  sg_ratelimit_free(rl);
}

static void test_refill_over_time(void **state) {
  (void)state;
  /* 60 per minute: one token per second. */
  sg_ratelimit *rl = sg_ratelimit_new(60);
  int64_t t = 5000;
  for (int i = 0; i < 60; i++) assert_true(sg_ratelimit_take(rl, "k", t));
  assert_false(sg_ratelimit_take(rl, "k", t));
  /* Just under one second: still empty. */
  assert_false(sg_ratelimit_take(rl, "k", t + 999));
  /* One second after the burst: exactly one more. */
  assert_true(sg_ratelimit_take(rl, "k", t + 1000));
  assert_false(sg_ratelimit_take(rl, "k", t + 1000));
  /* Ten seconds later: ten more, then refused. */
  for (int i = 0; i < 10; i++) assert_true(sg_ratelimit_take(rl, "k", t + 11000));
  assert_false(sg_ratelimit_take(rl, "k", t + 11000));
  /* An hour idle refills to the cap, not beyond it. */
  int64_t later = t + 3600 * 1000;
  for (int i = 0; i < 60; i++) assert_true(sg_ratelimit_take(rl, "k", later));
  assert_false(sg_ratelimit_take(rl, "k", later));
  sg_ratelimit_free(rl);
}

static void test_clock_going_backwards_gives_nothing(void **state) {
  (void)state;
  sg_ratelimit *rl = sg_ratelimit_new(2);
  assert_true(sg_ratelimit_take(rl, "k", 100000));
  assert_true(sg_ratelimit_take(rl, "k", 100000));
  assert_false(sg_ratelimit_take(rl, "k", 50000));
  assert_false(sg_ratelimit_take(rl, "k", 100000));
  sg_ratelimit_free(rl);
}

static void test_independent_keys(void **state) {
  (void)state;
  sg_ratelimit *rl = sg_ratelimit_new(3);
  int64_t t = 0;
  for (int i = 0; i < 3; i++) assert_true(sg_ratelimit_take(rl, "alice", t));
  assert_false(sg_ratelimit_take(rl, "alice", t));
  for (int i = 0; i < 3; i++) assert_true(sg_ratelimit_take(rl, "bob", t));
  assert_false(sg_ratelimit_take(rl, "bob", t));
  /* Keys that are prefixes of each other are still distinct. */
  for (int i = 0; i < 3; i++) assert_true(sg_ratelimit_take(rl, "ali", t));
  assert_false(sg_ratelimit_take(rl, "ali", t));
  assert_true(sg_ratelimit_take(rl, "", t));
  assert_int_equal(sg_ratelimit_size(rl), 4);
  sg_ratelimit_free(rl);
}

static void test_zero_disables(void **state) {
  (void)state;
  sg_ratelimit *rl = sg_ratelimit_new(0);
  for (int i = 0; i < 10000; i++) assert_true(sg_ratelimit_take(rl, "k", 0));
  sg_ratelimit_free(rl);
  assert_true(sg_ratelimit_take(NULL, "k", 0));
}

static void test_table_stays_bounded(void **state) {
  (void)state;
  /* 600 per minute: a bucket that spent one token is full again 100 ms later. Feed many
   * distinct keys (as a scan from many IPs would) with the clock moving 1 ms per key:
   * the table must not grow without bound. */
  sg_ratelimit *rl = sg_ratelimit_new(600);
  char key[32];
  size_t max_seen = 0;
  const int n = 350000;
  for (int i = 0; i < n; i++) {
    snprintf(key, sizeof key, "10.%d.%d.%d", (i >> 16) & 255, (i >> 8) & 255, i & 255);
    assert_true(sg_ratelimit_take(rl, key, (int64_t)i));
    size_t sz = sg_ratelimit_size(rl);
    if (sz > max_seen) max_seen = sz;
  }
  assert_true(max_seen <= 100001);
  assert_true(sg_ratelimit_size(rl) < (size_t)n);
  /* Limiting still works for a key seen after collection. */
  for (int i = 0; i < 600; i++) assert_true(sg_ratelimit_take(rl, "late", (int64_t)n));
  assert_false(sg_ratelimit_take(rl, "late", (int64_t)n));
  sg_ratelimit_free(rl);
}

static void test_collection_keeps_partly_spent_buckets(void **state) {
  (void)state;
  /* A client in the middle of a burst must not get a fresh allowance because the table
   * was collected: GC drops only buckets that have refilled completely. */
  sg_ratelimit *rl = sg_ratelimit_new(5);
  for (int i = 0; i < 5; i++) assert_true(sg_ratelimit_take(rl, "hot", 0));
  char key[32];
  for (int i = 0; i < 100050; i++) {
    snprintf(key, sizeof key, "k%d", i);
    sg_ratelimit_take(rl, key, 1); /* 1 ms later: "hot" is still nearly empty */
  }
  assert_false(sg_ratelimit_take(rl, "hot", 1));
  sg_ratelimit_free(rl);
}

static void test_retry_after_is_the_wait_for_one_token(void **state) {
  (void)state;
  /* 6 per minute: one token every 10 s. */
  sg_ratelimit *rl = sg_ratelimit_new(6);
  int retry = -1;
  for (int i = 0; i < 6; i++) {
    assert_true(sg_ratelimit_take_retry(rl, "k", 0, &retry));
    assert_int_equal(retry, 0);
  }
  assert_false(sg_ratelimit_take_retry(rl, "k", 0, &retry));
  assert_int_equal(retry, 10);
  assert_false(sg_ratelimit_take_retry(rl, "k", 7500, &retry));
  assert_int_equal(retry, 3); /* 2.5 s left, rounded up */
  assert_true(sg_ratelimit_take_retry(rl, "k", 10000, &retry));
  /* 600 per minute: never less than one second. */
  sg_ratelimit *fast = sg_ratelimit_new(600);
  for (int i = 0; i < 600; i++) assert_true(sg_ratelimit_take_retry(fast, "k", 0, &retry));
  assert_false(sg_ratelimit_take_retry(fast, "k", 0, &retry));
  assert_int_equal(retry, 1);
  sg_ratelimit_free(fast);
  sg_ratelimit_free(rl);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_new_keys_stay_cheap_when_nothing_is_collectible(void **state) {
  (void)state;
  /* 100k keys all within the same minute (a scan from many addresses): none can be
   * collected. Each further new key must not rescan the whole table under the lock;
   * 3000 of them used to take about 10 s, amortised collection takes milliseconds. */
  sg_ratelimit *rl = sg_ratelimit_new(120);
  char key[32];
  for (int i = 0; i < 100000; i++) {
    snprintf(key, sizeof key, "a%d", i);
    sg_ratelimit_take(rl, key, 0);
  }
  double t0 = now_s();
  for (int i = 0; i < 3000; i++) {
    snprintf(key, sizeof key, "b%d", i);
    assert_true(sg_ratelimit_take(rl, key, 10));
  }
  assert_true(now_s() - t0 < 2.0);
  /* Limiting is unaffected: an old, spent key is still limited. */
  for (int i = 0; i < 119; i++) assert_true(sg_ratelimit_take(rl, "a7", 20));
  assert_false(sg_ratelimit_take(rl, "a7", 20));
  /* Once the minute has passed everything is collectible again and the table shrinks. */
  for (int i = 0; i < 200000; i++) {
    snprintf(key, sizeof key, "c%d", i);
    sg_ratelimit_take(rl, key, 120000 + i);
  }
  assert_true(sg_ratelimit_size(rl) <= 210000);
  sg_ratelimit_free(rl);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_burst_then_refused),
      cmocka_unit_test(test_retry_after_is_the_wait_for_one_token),
      cmocka_unit_test(test_refill_over_time),
      cmocka_unit_test(test_clock_going_backwards_gives_nothing),
      cmocka_unit_test(test_independent_keys),
      cmocka_unit_test(test_zero_disables),
      cmocka_unit_test(test_table_stays_bounded),
      cmocka_unit_test(test_collection_keeps_partly_spent_buckets),
      cmocka_unit_test(test_new_keys_stay_cheap_when_nothing_is_collectible),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
