/* Unit tests of the bounded worker pool (src/common/workpool.c): admission is bounded by
 * threads + queue, jobs run off the caller's thread, and a stop cancels what waits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>

#include "common/workpool.h"

/* A job that blocks until the test opens the gate, then records how it ended. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool open_gate;
static int ran, cancelled, running;
static pthread_t caller;
static bool on_caller;

static void blocking_job(void *arg, bool run) {
  (void)arg;
  pthread_mutex_lock(&mu);
  if (pthread_equal(pthread_self(), caller)) on_caller = true;
  if (run) {
    running++;
    pthread_cond_broadcast(&cv);
    while (!open_gate) pthread_cond_wait(&cv, &mu);
    running--;
    ran++;
  } else {
    cancelled++;
  }
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

static void reset(void) {
  open_gate = false;
  ran = cancelled = running = 0;
  on_caller = false;
  caller = pthread_self();
}

static void wait_running(int n) {
  pthread_mutex_lock(&mu);
  while (running < n) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
}

static void release_all(void) {
  pthread_mutex_lock(&mu);
  open_gate = true;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
}

static void test_admission_is_bounded(void **state) {
  (void)state;
  reset();
  sg_workpool *p = sg_workpool_new("t", 2, 3);
  assert_non_null(p);
  for (int i = 0; i < 5; i++) {
    assert_true(sg_workpool_reserve(p));
    sg_workpool_push(p, blocking_job, NULL);
  }
  wait_running(2);
  /* 2 running + 3 waiting: the sixth is refused, not queued. */
  assert_false(sg_workpool_reserve(p));
  sg_workpool_stats st;
  sg_workpool_get_stats(p, &st);
  assert_int_equal(st.admitted, 5);
  assert_int_equal(st.rejected, 1);
  release_all();
  do sg_workpool_get_stats(p, &st);
  while (st.done < 5);
  sg_workpool_stop(p);
  assert_int_equal(ran, 5);
  assert_int_equal(cancelled, 0);
  assert_false(on_caller);
  sg_workpool_get_stats(p, &st);
  assert_int_equal(st.admitted, 0);
  assert_int_equal(st.done, 5);
  sg_workpool_free(p);
}

static void test_places_come_back(void **state) {
  (void)state;
  reset();
  open_gate = true;
  sg_workpool *p = sg_workpool_new("t", 1, 0);
  assert_non_null(p);
  for (int i = 0; i < 50; i++) {
    while (!sg_workpool_reserve(p)) {}
    sg_workpool_push(p, blocking_job, NULL);
  }
  /* Each place came back when its job finished: with one thread and no queue, fifty jobs
   * ran one after the other. */
  sg_workpool_stats st;
  do sg_workpool_get_stats(p, &st);
  while (st.done < 50);
  assert_int_equal(st.admitted, 0);
  assert_true(sg_workpool_reserve(p));
  sg_workpool_unreserve(p);
  sg_workpool_free(p);
  assert_int_equal(ran, 50);
}

static void *stopper(void *p) {
  sg_workpool_stop(p);
  return NULL;
}

static void test_stop_cancels_waiting_jobs(void **state) {
  (void)state;
  reset();
  sg_workpool *p = sg_workpool_new("t", 1, 8); /* room left: a refusal means stopping */
  assert_non_null(p);
  for (int i = 0; i < 4; i++) {
    assert_true(sg_workpool_reserve(p));
    sg_workpool_push(p, blocking_job, NULL);
  }
  wait_running(1);
  /* A place reserved before the stop and pushed after it is cancelled too. */
  assert_true(sg_workpool_reserve(p));
  pthread_t t;
  /* Stop in another thread: it waits for the running job, which waits for the gate. */
  assert_int_equal(pthread_create(&t, NULL, stopper, p), 0);
  for (;;) {
    /* Once stopping, no new place is given. */
    if (!sg_workpool_reserve(p)) break;
    sg_workpool_unreserve(p);
  }
  release_all();
  pthread_join(t, NULL);
  sg_workpool_push(p, blocking_job, NULL);
  assert_int_equal(ran, 1);
  assert_int_equal(cancelled, 4);
  sg_workpool_free(p);
}

static void test_bad_sizes(void **state) {
  (void)state;
  assert_null(sg_workpool_new("t", 0, 1));
  assert_null(sg_workpool_new("t", 65, 1));
  sg_workpool_stop(NULL);
  sg_workpool_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_admission_is_bounded),
      cmocka_unit_test(test_places_come_back),
      cmocka_unit_test(test_stop_cancels_waiting_jobs),
      cmocka_unit_test(test_bad_sizes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
