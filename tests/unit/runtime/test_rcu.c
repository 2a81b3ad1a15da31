/*
 * Snapshot publication (src/runtime/rcu.c) under concurrent readers: a snapshot the
 * writer has replaced and reclaimed is never seen by a reader still inside
 * sg__rcu_enter/leave. The writer poisons each replaced snapshot's revision before it
 * frees it, so a reader that could still hold it sees the poison (and ThreadSanitizer,
 * `make unit-tsan`, reports the unordered write and free).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "runtime/rt.h"

#define READERS 4
#define PUBLISHES 10000
#define POISON UINT64_MAX

typedef struct {
  sg__rcu *rcu;
  atomic_bool *stop;
  atomic_int *reading; /* readers that have read once: the writer starts after all have */
  long reads;
  long bad; /* snapshots seen poisoned or going backwards */
} reader_arg;

static sg__rt_snapshot *snap(uint64_t revision) {
  sg__rt_snapshot *s = calloc(1, sizeof *s);
  assert_non_null(s);
  s->revision = revision;
  return s;
}

/* Until n readers are reading (on a busy machine they may start after the writer ends). */
static void wait_reading(atomic_int *reading, int n) {
  const struct timespec nap = {0, 1000 * 1000};
  while (atomic_load(reading) < n) nanosleep(&nap, NULL);
}

static void *reader(void *p) {
  reader_arg *a = p;
  uint64_t last = 0;
  while (!atomic_load(a->stop)) {
    const sg__rt_snapshot *s = sg__rcu_enter(a->rcu);
    uint64_t r1 = s->revision;
    /* Hold it a little, as a query does, and read it again. */
    for (volatile int i = 0; i < 50; i++) {}
    uint64_t r2 = s->revision;
    sg__rcu_leave(a->rcu);
    if (r1 == POISON || r2 != r1 || r1 < last) a->bad++;
    last = r1;
    if (a->reads++ == 0) atomic_fetch_add(a->reading, 1);
  }
  return NULL;
}

static void test_readers_never_see_a_reclaimed_snapshot(void **state) {
  sg__rcu *rcu = calloc(1, sizeof *rcu); /* large: slots on their own cache lines */
  assert_non_null(rcu);
  sg__rcu_init(rcu, snap(1));
  atomic_bool stop = false;
  atomic_int reading = 0;
  pthread_t th[READERS];
  reader_arg args[READERS];
  for (int i = 0; i < READERS; i++) {
    args[i] = (reader_arg){.rcu = rcu, .stop = &stop, .reading = &reading};
    assert_int_equal(pthread_create(&th[i], NULL, reader, &args[i]), 0);
  }
  wait_reading(&reading, READERS);
  for (uint64_t rev = 2; rev <= PUBLISHES + 1; rev++) {
    sg__rt_snapshot *old = sg__rcu_publish(rcu, snap(rev));
    old->revision = POISON; /* no reader may hold it any more */
    free(old);
  }
  atomic_store(&stop, true);
  long reads = 0;
  for (int i = 0; i < READERS; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(args[i].bad, 0);
    reads += args[i].reads;
  }
  assert_true(reads > 0);
  /* The last snapshot is the current one. */
  const sg__rt_snapshot *cur = sg__rcu_enter(rcu);
  assert_int_equal(cur->revision, PUBLISHES + 1);
  sg__rcu_leave(rcu);
  free(sg__rcu_publish(rcu, snap(0)));
  free(atomic_load(&rcu->cur));
  free(rcu);
}

/* A reader thread past the last slot: the writer waits for the overflow count instead. */
static void test_more_readers_than_slots(void **state) {
  sg__rcu *rcu = calloc(1, sizeof *rcu);
  assert_non_null(rcu);
  sg__rcu_init(rcu, snap(1));
  /* Use up every slot as if SG__RCU_SLOTS threads had come and gone. */
  atomic_store(&rcu->nslots, SG__RCU_SLOTS);
  atomic_bool stop = false;
  atomic_int reading = 0;
  pthread_t th[1];
  reader_arg args[1];
  for (int i = 0; i < 1; i++) {
    args[i] = (reader_arg){.rcu = rcu, .stop = &stop, .reading = &reading};
    assert_int_equal(pthread_create(&th[i], NULL, reader, &args[i]), 0);
  }
  wait_reading(&reading, 1);
  for (uint64_t rev = 2; rev <= 200; rev++) {
    sg__rt_snapshot *old = sg__rcu_publish(rcu, snap(rev));
    old->revision = POISON;
    free(old);
  }
  atomic_store(&stop, true);
  for (int i = 0; i < 1; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(args[i].bad, 0);
  }
  free(atomic_load(&rcu->cur));
  free(rcu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_readers_never_see_a_reclaimed_snapshot),
      cmocka_unit_test(test_more_readers_than_slots),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
